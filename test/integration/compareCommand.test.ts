// bprof compare as a user runs it: two run folders (or two models of one, run:model) in, the
// comparison on stdout or in a file, and a clear error with exit code 2 for what does not compare.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { bprof, cliPath } from "../support/cli";
import { CAUSAL, MODEL, writeFixtureRun } from "../support/reportFixture";

test("bprof compare: Markdown on stdout, JSON to a file, run:model, and bad input named", async () => {
  const a = await writeFixtureRun();
  const b = await writeFixtureRun();
  const md = await bprof(["compare", a, `${b}:${MODEL}`]);
  assert.equal(md.exitCode, 0, md.stderr);
  assert.match(md.stdout, /^# Two profiles compared/);
  assert.match(md.stdout, /k = 0\.01, top selection/);
  assert.ok(md.stdout.includes("| Commonsense & Causal Reasoning | +0.00"), md.stdout);

  const out = path.join(path.dirname(a), "comparison.json");
  const json = await bprof(["compare", a, b, "--format", "json", "--out", out, "--k", "0.001"]);
  assert.equal(json.exitCode, 0, json.stderr);
  assert.equal(json.stdout.trim(), out);
  const written = JSON.parse(await fs.readFile(out, "utf8")) as { schema: string; k: number; cells: { ability: string }[] };
  assert.equal(written.schema, "bprof.comparison");
  assert.equal(written.k, 0.001);
  assert.ok(written.cells.some((c) => c.ability === CAUSAL));

  const noModel = await bprof(["compare", `${a}:nope`, b]);
  assert.equal(noModel.exitCode, 2);
  assert.match(noModel.stderr, /has no model `nope`/);
  const noRun = await bprof(["compare", a, path.join(a, "missing")]);
  assert.equal(noRun.exitCode, 2);
  assert.match(noRun.stderr, /no run folder/);
  const badFormat = await bprof(["compare", a, b, "--format", "pdf"]);
  assert.equal(badFormat.exitCode, 2);
  assert.match(badFormat.stderr, /unknown comparison format `pdf` \(formats: html, md, csv, json, latex\)/);

  // The formats of the profile reports: one page with the difference heatmap, a booktabs table.
  const html = await bprof(["compare", a, b, "--format", "html", "--out", "-"]);
  assert.equal(html.exitCode, 0, html.stderr);
  assert.match(html.stdout, /^<!DOCTYPE html>/);
  assert.match(html.stdout, /<canvas id="comparison"/);
  const bundle = await fs.readFile(path.join(path.dirname(cliPath), "report.js"), "utf8");
  assert.ok(html.stdout.length > bundle.length, "the heatmap bundle is inlined");
  const latex = await bprof(["compare", a, b, "--format", "latex"]);
  assert.equal(latex.exitCode, 0, latex.stderr);
  assert.match(latex.stdout, /\\begin\{tabular\}\{lrr\}/);
  assert.match(latex.stdout, /^Commonsense \\& Causal Reasoning & \$\+?0\.00\$/m);
});
