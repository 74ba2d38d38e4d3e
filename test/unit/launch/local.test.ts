import assert from "node:assert/strict";
import { test } from "node:test";
import { GOMP_SPIN_BEFORE_SLEEP, openMpWaits } from "../../../src/core/launch/local";

test("a local runner's OpenMP threads spin briefly, then sleep, unless the environment sets their waits", () => {
  assert.deepEqual(openMpWaits({}), { GOMP_SPINCOUNT: String(GOMP_SPIN_BEFORE_SLEEP) });
  assert.deepEqual(openMpWaits({ OMP_WAIT_POLICY: "ACTIVE" }), {}, "the user's policy stands");
  assert.deepEqual(openMpWaits({ OMP_WAIT_POLICY: "PASSIVE" }), {});
  assert.deepEqual(openMpWaits({ GOMP_SPINCOUNT: "infinite" }), {}, "the user's spin stands");
});
