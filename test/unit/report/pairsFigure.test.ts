// The interference heatmap of the Pairs tab: a row per pair, a column per benchmark, each cell the
// pair's interference on the diverging scale, its interval in the tooltip, n/a where undefined.
import assert from "node:assert/strict";
import { test } from "node:test";
import { interferenceHeatmap } from "../../../src/core/report/pairsFigure";
import type { PairReport } from "../../../src/core/report/types";

const cell = (benchmark: string, interference: number | null, ci: [number, number] | null): PairReport["cells"][number] => ({
  benchmark,
  ais: interference === null ? null : 0.5,
  ci: null,
  interference,
  interferenceCi: ci ? { low: ci[0], high: ci[1], confidence: 0.95 } : null,
  significant: ci !== null && (ci[0] > 0 || ci[1] < 0),
});

test("interference heatmap: pairs down, benchmarks across, the value and its interval per cell", () => {
  const pairs: PairReport[] = [
    { abilities: ["A", "B"], n: 120, cells: [cell("arc", 0.25, [0.1, 0.4]), cell("gsm", -0.05, [-0.2, 0.1])] },
    { abilities: ["A", "C"], n: 110, cells: [cell("arc", null, null), cell("gsm", -0.5, [-0.7, -0.3])] },
  ];
  const h = interferenceHeatmap(pairs, ["arc", "gsm"], 0.95, 0.01)!;
  assert.deepEqual(h.rows, ["A + B", "A + C"]);
  assert.deepEqual(h.columns, ["arc", "gsm"]);
  assert.deepEqual(
    h.cells.map((c) => [c.row, c.column, c.value, c.label, c.significant]),
    [
      [0, 0, 0.25, "+0.25*", true],
      [0, 1, -0.05, "−0.05", false],
      [1, 0, null, "n/a", false],
      [1, 1, -0.5, "−0.50*", true],
    ],
  );
  // the scale is symmetric around 0 and holds the largest interference
  assert.ok(h.scale.limit >= 0.5);
  assert.match(h.cells[0]!.tooltip[0]!, /AIS\(A\+B\) − AIS\(A\) − AIS\(B\) \+0\.250 {2}\(95% CI \+0\.100 to \+0\.400\)/);
  assert.match(h.cells[2]!.tooltip.join(" "), /undefined/);
  // positive and negative interference take the two ends of the diverging scale
  assert.notEqual(h.cells[0]!.fill, h.cells[3]!.fill);
  assert.equal(interferenceHeatmap([], ["arc"], 0.95, 0.01), null);
});
