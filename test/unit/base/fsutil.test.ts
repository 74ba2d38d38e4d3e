// writeFileAtomic replaces regular files only: a device, a FIFO or a link to one is written into,
// since renaming over it would replace the device (run as root, `--out /dev/null` once turned the
// machine's /dev/null into a regular file). The devices here are copies made in a scratch folder.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { writeFileAtomic } from "../../../src/core/base/fsutil";

let scratch: string;

before(async () => {
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-fsutil-"));
});
after(() => fs.rm(scratch, { recursive: true, force: true }));

const isRoot = process.getuid?.() === 0;

test("a character device is written into and stays a device", { skip: !isRoot && "making a device node needs root" }, async () => {
  // a copy of /dev/null (major 1, minor 3), so that a failure harms nothing else
  const device = path.join(scratch, "null");
  execFileSync("mknod", [device, "c", "1", "3"]);
  await writeFileAtomic(device, "a report\n");
  assert.ok((await fs.lstat(device)).isCharacterDevice(), "still a character device");
  assert.deepEqual(
    (await fs.readdir(scratch)).filter((n) => n.endsWith(".tmp")),
    [],
    "no temporary left",
  );
});

test("a link to a device (as /dev/stdout is) is written through, and stays a link", async () => {
  const link = path.join(scratch, "stdout-like");
  await fs.symlink("/dev/null", link);
  await writeFileAtomic(link, "a report\n");
  assert.ok((await fs.lstat(link)).isSymbolicLink(), "still a link");
  assert.ok((await fs.stat("/dev/null")).isCharacterDevice());
});

test("a FIFO is written into for its reader, not replaced", async () => {
  const fifo = path.join(scratch, "pipe");
  execFileSync("mkfifo", [fifo]);
  const reader = spawn("cat", [fifo]);
  let read = "";
  reader.stdout.on("data", (chunk: Buffer) => (read += chunk.toString()));
  const ended = new Promise((resolve) => reader.on("close", resolve));
  await writeFileAtomic(fifo, "through the pipe\n");
  await ended;
  assert.equal(read, "through the pipe\n");
  assert.ok((await fs.lstat(fifo)).isFIFO(), "still a FIFO");
});

test("a folder is refused with its name, and a regular file is replaced whole", async () => {
  const dir = path.join(scratch, "a-folder");
  await fs.mkdir(dir);
  await assert.rejects(writeFileAtomic(dir, "x"), /a-folder is a folder, not a file/);
  const file = path.join(scratch, "report.md");
  await fs.writeFile(file, "old\n");
  const before = (await fs.stat(file)).ino;
  await writeFileAtomic(file, "new\n");
  assert.equal(await fs.readFile(file, "utf8"), "new\n");
  assert.notEqual((await fs.stat(file)).ino, before, "replaced by a new file, never written into");
});
