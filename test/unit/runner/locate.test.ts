// In a source checkout, the runner `npm run setup` built is the one an installed extension runs,
// when the checkout's runner sources are the bundled ones and none changed after the build.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { checkoutBuildOf } from "../../../src/core/runner/locate";
import { runnerSources } from "../../../src/core/runner/sources";

const REPO = path.join(import.meta.dirname, "..", "..", "..");

/** A checkout's native-runner: the repository's runner sources, copied, and (`built`) a build of them. */
async function checkout(built: boolean): Promise<string> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-checkout-"));
  const dir = path.join(root, "native-runner");
  await fs.mkdir(dir);
  for (const name of ["CMakeLists.txt", "build-runner.sh", "src"])
    await fs.cp(path.join(REPO, "native-runner", name), path.join(dir, name), { recursive: true });
  if (built) {
    await fs.mkdir(path.join(dir, "build"));
    // the build is the newest file of the checkout, as after `npm run setup`
    await fs.writeFile(path.join(dir, "build", "bprof-runner"), "#!/bin/sh\n", { mode: 0o755 });
    const later = new Date(Date.now() + 5_000);
    await fs.utimes(path.join(dir, "build", "bprof-runner"), later, later);
  }
  return root;
}

test("a checkout's build of the bundled sources is used; a stale, different or missing one is not", async (t) => {
  const bundled = await runnerSources(path.join(REPO, "native-runner"));
  assert.ok(bundled, "the repository has the runner's sources");

  const same = await checkout(true);
  t.after(() => fs.rm(same, { recursive: true, force: true }));
  assert.equal(await checkoutBuildOf(same, bundled), path.join(same, "native-runner", "build", "bprof-runner"));

  // a source saved after the build, even with the same bytes: the build may not be of it
  const stale = await checkout(true);
  t.after(() => fs.rm(stale, { recursive: true, force: true }));
  const later = new Date(Date.now() + 60_000);
  await fs.utimes(path.join(stale, "native-runner", "src", "events.cpp"), later, later);
  assert.equal(await checkoutBuildOf(stale, bundled), undefined);

  // other sources (a checkout at another commit): the extension builds its own
  const other = await checkout(true);
  t.after(() => fs.rm(other, { recursive: true, force: true }));
  await fs.appendFile(path.join(other, "native-runner", "src", "events.cpp"), "\n// another version\n");
  const built = path.join(other, "native-runner", "build", "bprof-runner");
  const after = new Date(Date.now() + 120_000);
  await fs.utimes(built, after, after);
  assert.equal(await checkoutBuildOf(other, bundled), undefined);

  const unbuilt = await checkout(false);
  t.after(() => fs.rm(unbuilt, { recursive: true, force: true }));
  assert.equal(await checkoutBuildOf(unbuilt, bundled), undefined);
  assert.equal(await checkoutBuildOf(path.join(os.tmpdir(), "no-such-checkout"), bundled), undefined);
});
