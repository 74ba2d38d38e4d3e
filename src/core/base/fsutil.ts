import { createHash, randomBytes } from "node:crypto";
import { constants as fsConstants, promises as fs } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import * as path from "node:path";

/**
 * A new, empty temporary file beside `file`, open for writing. Its name is random and it is
 * created exclusively (O_EXCL, O_NOFOLLOW): a folder can be the user's repository, and a symlink
 * planted at a name bprof would pick is never followed, nor a file there reused. The name ends
 * in .tmp, which readers of run folders skip.
 */
export async function createTemporarySibling(
  file: string,
  options: { append?: boolean } = {},
): Promise<{ path: string; handle: FileHandle }> {
  const flags =
    fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW | (options.append ? fsConstants.O_APPEND : 0);
  for (let attempt = 0; ; attempt++) {
    const tmp = `${file}.${randomBytes(8).toString("hex")}.tmp`;
    try {
      return { path: tmp, handle: await fs.open(tmp, flags, 0o666) };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST" || attempt >= 8) throw e;
    }
  }
}

/** A random, unused name beside `file` for a temporary that another call creates (a link, a copy). */
export function temporarySiblingName(file: string): string {
  return `${file}.${randomBytes(8).toString("hex")}.tmp`;
}

/**
 * Writes `file` whole: through a temporary sibling and a rename, so readers never see a
 * half-written file. Replacement is for regular files only: where `file` is (or links to) a
 * device, a FIFO or a socket (`--out /dev/null`, `/dev/stdout`, a pipe), the data is written into
 * it, since renaming over such a path would replace the device itself; a folder is refused.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  const kind = await existingKind(file);
  if (kind === "special") return writeInto(file, data);
  if (kind === "directory")
    throw Object.assign(new Error(`${file} is a folder, not a file: choose a file to write`), { code: "EISDIR", path: file });
  await fs.mkdir(path.dirname(file), { recursive: true });
  await replaceWhole(file, data);
}

/** What stands at `file`: nothing (or a file or link to one, which a rename replaces), a folder, or a special file written into. */
async function existingKind(file: string): Promise<"replaceable" | "directory" | "special"> {
  const target = await fs.stat(file).catch(() => undefined);
  if (target === undefined || target.isFile()) return "replaceable";
  return target.isDirectory() ? "directory" : "special";
}

/** Writes into a device, FIFO or socket as it is: opened without creating or truncating it. */
async function writeInto(file: string, data: string | Uint8Array): Promise<void> {
  const handle = await fs.open(file, fsConstants.O_WRONLY);
  try {
    await handle.writeFile(data);
  } finally {
    await handle.close();
  }
}

/** A new file with `data` renamed over `file` (whose folder exists): the old file stays whole until the rename. */
export async function replaceWhole(file: string, data: string | Uint8Array): Promise<void> {
  const { path: tmp, handle } = await createTemporarySibling(file);
  try {
    try {
      await handle.writeFile(data);
    } finally {
      await handle.close();
    }
    // A rename replaces a link at `file` itself; it never writes through one.
    await fs.rename(tmp, file);
  } catch (e) {
    // A full disk or a folder gone: the old file stays as it was, and no temporary is left beside it.
    await fs.rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  }
}

export async function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  await writeFileAtomic(file, JSON.stringify(value, null, 2) + "\n");
}

/** A file a folder's own files name (a run folder's results.json, its items_file) that leads out of that folder. */
export class OutsideFolderError extends Error {
  override name = "OutsideFolderError";
}

/** Whether `inner` is `folder` or lies under it, as paths (links not followed). */
export function isWithinFolder(folder: string, inner: string): boolean {
  const relative = path.relative(folder, inner);
  return relative === "" || (relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

/**
 * `file` (relative to `folder`, or absolute) as it may be read: its real path, or the path itself
 * when it does not exist (its reader says so). OutsideFolderError where it leads out of the
 * folder through .., an absolute path or a link: a run folder can come with a repository the
 * user opened, and the paths its files hold must not make bprof read, or show, files elsewhere.
 */
export async function pathWithinFolder(folder: string, file: string, folderWords = "the folder"): Promise<string> {
  const resolved = path.resolve(folder, file);
  const refused = () => new OutsideFolderError(`${file} leads out of ${folderWords} ${folder}: it is not read`);
  if (!isWithinFolder(path.resolve(folder), resolved)) throw refused();
  const realFolder = await fs.realpath(folder).catch(() => path.resolve(folder));
  const real = await fs.realpath(resolved).catch((e: NodeJS.ErrnoException) => {
    if (e.code === "ENOENT" || e.code === "ENOTDIR") return undefined;
    throw e;
  });
  if (real !== undefined && !isWithinFolder(realFolder, real)) throw refused();
  return real ?? resolved;
}

/** The SHA-256 of a file's bytes, hex; undefined when it cannot be read. */
export async function fileSha256(file: string): Promise<string | undefined> {
  return fs.readFile(file).then(
    (bytes) => createHash("sha256").update(bytes).digest("hex"),
    () => undefined,
  );
}

export async function isFile(p: string): Promise<boolean> {
  return fs.stat(p).then(
    (s) => s.isFile(),
    () => false,
  );
}

export async function isDirectory(p: string): Promise<boolean> {
  return fs.stat(p).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

/**
 * Where the checks read the text of a file a user edits (a config, a task, a dataset, a data
 * file): the disk for the CLI; for the editor, the unsaved buffer where the file is open.
 */
export interface TextFiles {
  /** The file's text; rejects as fs.readFile does when it cannot be read. */
  read(file: string): Promise<string>;
}

export const diskFiles: TextFiles = { read: async (file) => utf8Text(await fs.readFile(file)) };

/** A file whose bytes are not UTF-8; where the first bad bytes are (1-based line and column). */
export class NotUtf8Error extends Error {
  constructor(
    readonly line: number,
    readonly column: number,
  ) {
    super(`the bytes at line ${line}, column ${column} are not UTF-8: save the file as UTF-8`);
    this.name = "NotUtf8Error";
  }
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The text of a file's bytes; NotUtf8Error where they are not UTF-8. Decoding leniently would turn
 * the bytes into U+FFFD silently, and the model would be scored on text nobody wrote.
 */
export function utf8Text(bytes: Uint8Array): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    let start = 0;
    for (let line = 1; ; line++) {
      const end = bytes.indexOf(0x0a, start);
      const lineBytes = bytes.subarray(start, end < 0 ? bytes.length : end);
      try {
        strictUtf8.decode(lineBytes);
      } catch {
        const lenient = new TextDecoder("utf-8").decode(lineBytes);
        throw new NotUtf8Error(line, Math.max(0, lenient.indexOf("\uFFFD")) + 1);
      }
      if (end < 0) throw new NotUtf8Error(line, 1);
      start = end + 1;
    }
  }
}

/** The last `bytes` of a growing text file (an events log), from its first whole line. */
export async function readTail(file: string, bytes: number): Promise<string> {
  const handle = await fs.open(file, "r");
  try {
    const { size } = await handle.stat();
    const start = Math.max(0, size - bytes);
    const buffer = Buffer.alloc(size - start);
    await handle.read(buffer, 0, buffer.length, start);
    const text = buffer.toString("utf8");
    // A partial first line of the tail is not an event.
    return start > 0 ? text.slice(text.indexOf("\n") + 1) : text;
  } finally {
    await handle.close();
  }
}
