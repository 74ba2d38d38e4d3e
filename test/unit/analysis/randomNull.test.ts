// A top cell against R random draws, and a benchmark's noise, by hand.
import assert from "node:assert/strict";
import { test } from "node:test";
import { againstRandomDraws, sampleSd } from "../../../src/core/analysis/randomNull";
import { benchmarkNoise } from "../../../src/core/analysis/noise";

test("the empirical p counts the draws at or above the top cell, with the +1 of both sides", () => {
  const draws = [0.1, 0.3, 0.2, 0.5, null];
  const placed = againstRandomDraws(0.3, draws)!;
  assert.equal(placed.draws, 4);
  assert.equal(placed.p, (1 + 2) / (4 + 1));
  assert.ok(Math.abs(placed.mean - 0.275) < 1e-15);
  const sd = Math.sqrt(((0.1 - 0.275) ** 2 + (0.3 - 0.275) ** 2 + (0.2 - 0.275) ** 2 + (0.5 - 0.275) ** 2) / 3);
  assert.ok(Math.abs(placed.sd! - sd) < 1e-15);
  assert.ok(Math.abs(placed.margin! - (0.3 - 0.275) / sd) < 1e-12);
  // above every draw: the smallest p R draws can give
  assert.equal(againstRandomDraws(0.9, [0.1, 0.2, 0.3])!.p, 1 / 4);
  // one draw: no spread, and p is at least 1/2
  const one = againstRandomDraws(0.9, [0.1])!;
  assert.equal(one.sd, null);
  assert.equal(one.margin, null);
  assert.equal(one.p, 1 / 2);
  assert.equal(againstRandomDraws(0.5, [null]), null);
  assert.equal(sampleSd([1]), null);
});

test("noise: the abilities' spread over the root of the mean bootstrap variance plus the draws' variance", () => {
  const cells = [
    { ais: 0.9, sd: 0.1 },
    { ais: 0.1, sd: 0.2 },
    { ais: 0.5, sd: 0.2 },
    { ais: null, sd: null },
  ];
  const draws = [0.0, 0.1, -0.1];
  const signal = Math.sqrt(((0.9 - 0.5) ** 2 + (0.1 - 0.5) ** 2 + 0) / 2);
  const noise = Math.sqrt((0.01 + 0.04 + 0.04) / 3 + 0.01);
  const measured = benchmarkNoise(cells, draws)!;
  assert.ok(Math.abs(measured.signal - signal) < 1e-15);
  assert.ok(Math.abs(measured.noise - noise) < 1e-15);
  assert.ok(Math.abs(measured.snr! - signal / noise) < 1e-12);
  // no random spread known (one draw): the bootstrap alone
  assert.ok(Math.abs(benchmarkNoise(cells, [])!.noise - Math.sqrt(0.09 / 3)) < 1e-15);
  // fewer than two abilities: no spread to speak of
  assert.equal(benchmarkNoise([{ ais: 0.4, sd: 0.1 }], draws), null);
  assert.equal(
    benchmarkNoise(
      [
        { ais: 0.4, sd: 0 },
        { ais: 0.4, sd: 0 },
      ],
      [],
    )!.snr,
    null,
  );
});
