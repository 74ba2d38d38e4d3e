// What the editor's notification of a failed run says (what failed, then the error) and which file
// it offers as the run's log.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { failureSummary, latestEventsFile, runAllows, runOfFolder, type RunRow, type RunStatus } from "../../../src/core/results/runs";

test("a failed run's notification names the model and phase it was in, then the error's code and message", () => {
  assert.equal(
    failureSummary(
      { code: "resources", message: "out of memory" },
      { model: "llama", phase: "importance", ability: "Quantitative Reasoning" },
    ),
    "Profile failed in model llama, importance (Quantitative Reasoning): resources: out of memory",
  );
  assert.equal(
    failureSummary({ code: "bad_input", message: "no config.json" }, { model: "m", phase: "baseline" }),
    "Profile failed in model m, baseline: bad_input: no config.json",
  );
  assert.equal(failureSummary({ message: "ENOSPC" }), "Profile failed: ENOSPC", "before any progress: only the error");
});

test("the log a failed run offers is the events file written last in its folder", async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-notify-"));
  try {
    assert.equal(await latestEventsFile(dir), undefined, "a folder without models has no log");
    for (const model of ["a", "b"]) await fs.mkdir(path.join(dir, "models", model), { recursive: true });
    await fs.writeFile(path.join(dir, "models", "a", "events.jsonl"), "{}\n");
    await fs.writeFile(path.join(dir, "models", "b", "events.jsonl"), "{}\n");
    const old = new Date(Date.now() - 60_000);
    await fs.utimes(path.join(dir, "models", "a", "events.jsonl"), old, old);
    assert.equal(await latestEventsFile(dir), path.join(dir, "models", "b", "events.jsonl"));
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});

function row(id: string, status: RunStatus): RunRow {
  const dir = path.join(os.tmpdir(), "ws", ".bprof", "runs", id);
  return { id, dir, configFile: path.join(os.tmpdir(), "ws", "a.bprof.yaml"), finished: status.state === "finished", status };
}

test("a run's folder finds its row as read now, however the folder is spelled; a folder gone finds none", () => {
  const rows = [row("20260101-000000-aaaa", { state: "finished" }), row("20260101-000001-bbbb", { state: "running", pid: 7 })];
  const second = rows[1]!;
  assert.equal(runOfFolder(rows, second.dir), second);
  assert.equal(runOfFolder(rows, `${second.dir}${path.sep}`), second, "a trailing separator is the same folder");
  assert.equal(runOfFolder(rows, path.join(second.dir, "..", path.basename(second.dir))), second);
  assert.equal(runOfFolder(rows, path.join(path.dirname(second.dir), "20260101-000002-cccc")), undefined);
  assert.equal(runOfFolder([], second.dir), undefined);
});

test("each action of the Runs view applies to the runs in its states only", () => {
  const states: Record<string, RunStatus> = {
    finished: { state: "finished" },
    running: { state: "running", pid: 7 },
    cancelled: { state: "failed", code: "cancelled", message: "cancelled", resumable: true },
    broken: { state: "failed", code: "bad_input", message: "no config.json", resumable: false },
    interrupted: { state: "interrupted" },
  };
  const allowed = (action: Parameters<typeof runAllows>[1]) =>
    Object.entries(states)
      .filter(([, status]) => runAllows(row("20260101-000000-aaaa", status), action))
      .map(([name]) => name);
  assert.deepEqual(allowed("open"), ["finished"]);
  assert.deepEqual(allowed("resume"), ["cancelled", "interrupted"]);
  assert.deepEqual(allowed("cancel"), ["running"]);
  assert.deepEqual(allowed("delete"), ["finished", "cancelled", "broken", "interrupted"]);
  assert.deepEqual(allowed("reveal"), Object.keys(states));
});
