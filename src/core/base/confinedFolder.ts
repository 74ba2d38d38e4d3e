// A folder bprof writes into that may have come with a repository the user opened: a run folder
// of a cloned project, resumed or reported on. Every file written through it lands inside it, as
// a file bprof creates now: no folder on the way may be a link, nothing is written through a link
// or into a file already there (a write is a new file renamed into place; a log is a new file,
// which on resume first gets the old one's lines), and a link, device or FIFO where a file goes is
// refused by name. Folders it makes are made one level at a time, never through a link.
import { constants as fsConstants, promises as fs, type Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import * as path from "node:path";
import { createTemporarySibling, isWithinFolder, replaceWhole } from "./fsutil";
import { RunnerError } from "./runnerError";

/** A folder of the run's that is not as bprof writes it (a link, a device): nothing is written there. */
export class UnsafeFolderError extends RunnerError {
  constructor(message: string) {
    super("run_folder_unsafe", message, 2);
    this.name = "UnsafeFolderError";
  }
}

export class ConfinedFolder {
  private constructor(
    readonly root: string,
    private readonly words: string,
  ) {}

  /**
   * The folder at `root`, which must be a folder and not a link (`words` names it in errors: "the
   * run folder"); with `create`, made when missing (its parent must exist or be made by the caller).
   */
  static async at(root: string, words: string, options: { create?: boolean } = {}): Promise<ConfinedFolder> {
    const folder = new ConfinedFolder(path.resolve(root), words);
    const stat = await lstatOrMissing(folder.root);
    if (stat === undefined && options.create) await fs.mkdir(folder.root);
    else if (stat === undefined) throw new UnsafeFolderError(`${words} ${folder.root} does not exist`);
    else if (!stat.isDirectory()) throw folder.refusal(folder.root, stat);
    return folder;
  }

  /** `relative`'s absolute path; throws where it leaves the folder (`..`, an absolute path). */
  resolve(relative: string): string {
    const file = path.resolve(this.root, relative);
    if (!isWithinFolder(this.root, file) || file === this.root)
      throw new UnsafeFolderError(`${relative} leads out of ${this.words} ${this.root}: nothing is written there`);
    return file;
  }

  /** The folder at `relative`, made where missing, each level a real folder (never a link). */
  async folder(relative: string): Promise<string> {
    const dir = path.resolve(this.root, relative);
    if (dir === this.root) return dir;
    this.resolve(relative);
    let current = this.root;
    for (const part of path.relative(this.root, dir).split(path.sep)) {
      current = path.join(current, part);
      const stat = await lstatOrMissing(current);
      if (stat === undefined) await fs.mkdir(current).catch(ignoreExisting);
      else if (!stat.isDirectory()) throw this.refusal(current, stat);
    }
    // made by another writer meanwhile: it must be a folder too
    const made = await fs.lstat(dir);
    if (!made.isDirectory()) throw this.refusal(dir, made);
    return dir;
  }

  /** Writes `relative` whole: a new file renamed into place, where nothing but a regular file (or nothing) stands. */
  async writeFile(relative: string, data: string | Uint8Array): Promise<string> {
    const file = await this.placeFor(relative);
    await replaceWhole(file, data);
    return file;
  }

  async writeJson(relative: string, value: unknown): Promise<string> {
    return this.writeFile(relative, JSON.stringify(value, null, 2) + "\n");
  }

  /**
   * A log this process appends to (an events.jsonl): always a file it creates now, so nothing
   * planted is appended to. With `keep`, the new file starts with the lines of the one it
   * replaces (read without following a link).
   */
  async openLog(relative: string, options: { keep: boolean }): Promise<FileHandle> {
    const file = await this.placeFor(relative);
    const kept = options.keep ? await this.readKept(file) : undefined;
    const { path: tmp, handle } = await createTemporarySibling(file, { append: true });
    try {
      if (kept !== undefined) await handle.writeFile(kept);
      await fs.rename(tmp, file);
      return handle;
    } catch (e) {
      await handle.close().catch(() => undefined);
      await fs.rm(tmp, { force: true }).catch(() => undefined);
      throw e;
    }
  }

  /**
   * Where `relative` may be written: its folder made or checked, and what stands there a regular
   * file or nothing. A link there is refused rather than replaced: a folder bprof wrote holds none.
   */
  private async placeFor(relative: string): Promise<string> {
    const file = this.resolve(relative);
    await this.folder(path.relative(this.root, path.dirname(file)));
    const stat = await lstatOrMissing(file);
    if (stat !== undefined && !stat.isFile()) throw this.refusal(file, stat);
    return file;
  }

  /** A file's bytes through a descriptor that does not follow a link; undefined when there is none. */
  private async readKept(file: string): Promise<Buffer | undefined> {
    let handle: FileHandle;
    try {
      handle = await fs.open(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      if ((e as NodeJS.ErrnoException).code === "ELOOP") throw new UnsafeFolderError(this.linkMessage(file));
      throw e;
    }
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) throw this.refusal(file, stat);
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  }

  private refusal(file: string, stat: Stats): UnsafeFolderError {
    if (stat.isSymbolicLink()) return new UnsafeFolderError(this.linkMessage(file));
    const what = stat.isDirectory() ? "a folder" : stat.isFile() ? "a file" : "a device, FIFO or socket";
    const wanted = file === this.root || stat.isFile() ? "a folder" : "a file";
    return new UnsafeFolderError(
      `${this.named(file)} is ${what} where ${wanted} of ${this.words} belongs: nothing is written there (a folder bprof wrote holds none)`,
    );
  }

  private linkMessage(file: string): string {
    return `${this.named(file)} is a link: bprof writes nothing through links in ${this.words} ${this.root} (a folder bprof wrote holds none; it may have come with a repository)`;
  }

  private named(file: string): string {
    return file === this.root ? `${this.words} ${file}` : `${path.relative(this.root, file)} in ${this.words} ${this.root}`;
  }
}

/**
 * The first entry under `root` that a folder bprof writes never holds: a link, a device, a FIFO
 * or a socket; undefined when there is none. The runner writes into such a folder itself (a
 * resumed run's), so it is looked over before the runner starts.
 */
export async function foreignEntry(root: string): Promise<string | undefined> {
  const entries = await fs.readdir(root, { withFileTypes: true });
  for (const entry of entries) {
    const inner = path.join(root, entry.name);
    if (entry.isDirectory()) {
      const found = await foreignEntry(inner);
      if (found !== undefined) return found;
    } else if (!entry.isFile()) return inner;
  }
  return undefined;
}

async function lstatOrMissing(file: string): Promise<Stats | undefined> {
  return fs.lstat(file).catch((e: NodeJS.ErrnoException) => {
    if (e.code === "ENOENT") return undefined;
    throw e;
  });
}

function ignoreExisting(e: NodeJS.ErrnoException): void {
  if (e.code !== "EEXIST") throw e;
}
