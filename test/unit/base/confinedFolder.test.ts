// A run folder that came with a repository: every write through ConfinedFolder lands inside it as
// a file bprof made now, and a link or a special file where a file or folder goes is refused by
// name, its target untouched.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { ConfinedFolder, foreignEntry, UnsafeFolderError } from "../../../src/core/base/confinedFolder";

let scratch: string;
let victim: string;

before(async () => {
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-confined-"));
  victim = path.join(scratch, "victim.sh");
});
after(() => fs.rm(scratch, { recursive: true, force: true }));

/** A run folder with models/m/, and the user's file outside it. */
async function runFolder(name: string): Promise<ConfinedFolder> {
  const dir = path.join(scratch, name);
  await fs.mkdir(path.join(dir, "models", "m"), { recursive: true });
  await fs.writeFile(victim, "# the user's shell start-up file\n");
  return ConfinedFolder.at(dir, "the run folder");
}

const refused = (pattern: RegExp) => (e: unknown) =>
  e instanceof UnsafeFolderError && e.code === "run_folder_unsafe" && pattern.test(e.message);

test("a log is never appended to through a link planted where it goes, and its target is untouched", async () => {
  const files = await runFolder("log-link");
  await fs.symlink(victim, path.join(files.root, "models", "m", "events.jsonl"));
  await assert.rejects(files.openLog("models/m/events.jsonl", { keep: true }), refused(/models\/m\/events\.jsonl .* is a link/));
  await assert.rejects(files.openLog("models/m/events.jsonl", { keep: false }), refused(/is a link/));
  assert.equal(await fs.readFile(victim, "utf8"), "# the user's shell start-up file\n");
});

test("a resumed log is a new file holding the old lines, not the old file appended to", async () => {
  const files = await runFolder("log-keep");
  const log = path.join(files.root, "models", "m", "events.jsonl");
  await fs.writeFile(log, '{"type":"start"}\n');
  const before = (await fs.stat(log)).ino;
  const handle = await files.openLog("models/m/events.jsonl", { keep: true });
  await handle.write('{"type":"summary"}\n');
  await handle.close();
  assert.equal(await fs.readFile(log, "utf8"), '{"type":"start"}\n{"type":"summary"}\n');
  assert.notEqual((await fs.stat(log)).ino, before, "a new file");
});

test("a folder on the way that is a link is refused, and nothing is made where it points", async () => {
  const files = await runFolder("folder-link");
  const elsewhere = path.join(scratch, "elsewhere");
  await fs.mkdir(elsewhere, { recursive: true });
  await fs.symlink(elsewhere, path.join(files.root, "models", "m", "runner"));
  await assert.rejects(files.writeFile("models/m/runner/variants/x.jsonl", "{}\n"), refused(/models\/m\/runner .* is a link/));
  await assert.rejects(files.folder("models/m/runner/rankings"), refused(/is a link/));
  assert.deepEqual(await fs.readdir(elsewhere), []);
});

test("a link where a file goes is refused rather than written through or replaced", async () => {
  const files = await runFolder("file-link");
  await fs.symlink(victim, path.join(files.root, "results.json"));
  await assert.rejects(files.writeJson("results.json", { schema: "bprof.results" }), refused(/results\.json .* is a link/));
  assert.equal(await fs.readFile(victim, "utf8"), "# the user's shell start-up file\n");
  assert.ok((await fs.lstat(path.join(files.root, "results.json"))).isSymbolicLink());
});

test("a FIFO where a file goes is refused, not opened (which would wait for a reader) nor replaced", async () => {
  const files = await runFolder("fifo");
  const fifo = path.join(files.root, "models", "m", "job.json");
  execFileSync("mkfifo", [fifo]);
  await assert.rejects(files.writeFile(fifo, "{}"), refused(/device, FIFO or socket/));
  await assert.rejects(files.openLog(fifo, { keep: true }), refused(/device, FIFO or socket/));
  assert.ok((await fs.lstat(fifo)).isFIFO());
});

test("paths out of the folder are refused before anything is made", async () => {
  const files = await runFolder("outside");
  await assert.rejects(files.writeFile("../escaped.txt", "x"), refused(/leads out of the run folder/));
  await assert.rejects(files.writeFile(path.join(scratch, "escaped.txt"), "x"), refused(/leads out of/));
  await assert.rejects(fs.access(path.join(scratch, "escaped.txt")));
});

test("the folder itself may not be a link", async () => {
  const real = await runFolder("real");
  const link = path.join(scratch, "linked-run");
  await fs.symlink(real.root, link);
  await assert.rejects(ConfinedFolder.at(link, "the run folder"), refused(/the run folder .*linked-run is a link/));
});

test("ordinary writes make their folders level by level and replace regular files whole", async () => {
  const files = await runFolder("ordinary");
  await files.writeFile("models/m/runner/rankings/a.bin", "1");
  await files.writeFile("models/m/runner/rankings/a.bin", "22");
  assert.equal(await fs.readFile(path.join(files.root, "models/m/runner/rankings/a.bin"), "utf8"), "22");
  assert.deepEqual(await fs.readdir(path.join(files.root, "models/m/runner/rankings")), ["a.bin"], "no temporary left");
});

test("foreignEntry finds a link or a special file anywhere under a folder, and nothing in a clean one", async () => {
  const files = await runFolder("scan");
  await fs.mkdir(path.join(files.root, "models", "m", "runner", "variants"), { recursive: true });
  await fs.writeFile(path.join(files.root, "models", "m", "runner", "variants", "a.jsonl"), "{}\n");
  assert.equal(await foreignEntry(files.root), undefined);
  const deep = path.join(files.root, "models", "m", "runner", "variants", "b.jsonl");
  await fs.symlink(victim, deep);
  assert.equal(await foreignEntry(files.root), deep);
  await fs.rm(deep);
  execFileSync("mkfifo", [deep]);
  assert.equal(await foreignEntry(files.root), deep);
});
