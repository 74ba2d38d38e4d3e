// What bprof prints to a terminal from a stranger's files, through the CLI as a user runs it: a
// config whose `expects` quotes terminal escapes back in a problem, and a run folder whose ability
// names and run_id hold them, through validate, compare and report to stdout. No ESC, BEL or other
// control character of theirs reaches stdout or stderr; each shows as an escape instead.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { bprof } from "../support/cli";
import { makeProfileProject } from "../support/profileProject";
import { CAUSAL, fixtureResults, writeFixtureRun } from "../support/reportFixture";
import type { Results } from "../../src/core/results/schema";

/** A clipboard write (OSC 52, ended by BEL) and a screen clear. */
const HOSTILE = "\x1b]52;c;SGVsbG8=\x07\x1b[2J";
/** What a terminal would act on: C0 controls but tab and line breaks (CSV's are CRLF), DEL, C1. */
// eslint-disable-next-line no-control-regex -- the control characters are what is looked for
const RAW_CONTROL = /\r(?!\n)|[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

let scratch: string;

before(async () => {
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-terminal-"));
});
after(() => fs.rm(scratch, { recursive: true, force: true }));

function assertNoControls(r: { stdout: string; stderr: string }, what: string): void {
  assert.doesNotMatch(r.stdout, RAW_CONTROL, `${what}: stdout holds a raw control character`);
  assert.doesNotMatch(r.stderr, RAW_CONTROL, `${what}: stderr holds a raw control character`);
}

/** The report fixture with an ability name and a run_id that hold terminal escapes. */
function hostileResults(): Results {
  const json = JSON.stringify(fixtureResults()).replaceAll(
    JSON.stringify(CAUSAL).slice(1, -1),
    JSON.stringify(`Causal${HOSTILE}`).slice(1, -1),
  );
  const results = JSON.parse(json) as Results;
  results.run_id = `20260101-120000-${HOSTILE}`;
  return results;
}

test("bprof validate quotes an `expects` entry with terminal escapes back as escapes", async () => {
  const root = path.join(scratch, "project");
  await makeProfileProject({ root });
  const config = path.join(root, "profile.bprof.yaml");
  const text = await fs.readFile(config, "utf8");
  await fs.writeFile(
    config,
    text.replace("  - task: ./tasks/tiny_yes.yaml\n", `  - task: ./tasks/tiny_yes.yaml\n    expects: ["\\e]52;c;SGVsbG8=\\a\\e[2J"]\n`),
  );
  const r = await bprof(["validate", config]);
  assert.equal(r.exitCode, 2, r.stderr);
  assert.match(
    r.stderr,
    /`\\u001b\]52;c;SGVsbG8=\\u0007\\u001b\[2J` is not one of this config's abilities.*\[config\.unknown-expected-ability\]$/m,
  );
  assertNoControls(r, "validate");
});

test("bprof report --out - and bprof compare print a run folder's hostile names without their controls", async () => {
  const a = await writeFixtureRun(hostileResults());
  const b = await writeFixtureRun(hostileResults());
  for (const format of ["latex", "csv", "md", "json"]) {
    const r = await bprof(["report", a, "--format", format, "--out", "-"]);
    assert.equal(r.exitCode, 0, r.stderr);
    assertNoControls(r, `report --format ${format}`);
    if (format === "json") assert.ok(JSON.parse(r.stdout), "the JSON report still parses");
  }
  for (const format of ["md", "csv", "latex"]) {
    const r = await bprof(["compare", a, b, "--format", format]);
    assert.equal(r.exitCode, 0, r.stderr);
    assertNoControls(r, `compare --format ${format}`);
  }
  // a run folder that is refused is named in the refusal: that line too
  const refused = await bprof(["report", path.join(a, `missing${HOSTILE}`)]);
  assert.equal(refused.exitCode, 2);
  assert.match(refused.stderr, /missing\\u001b\]52/);
  assertNoControls(refused, "a refused run folder");
});
