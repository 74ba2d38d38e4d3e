import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import * as path from "node:path";

/** Writes through a temporary sibling and a rename, so readers never see a half-written file. */
export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, data);
  await fs.rename(tmp, file);
}

export async function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  await writeFileAtomic(file, JSON.stringify(value, null, 2) + "\n");
}

/** The SHA-256 of a file's bytes, hex; undefined when it cannot be read. */
export async function fileSha256(file: string): Promise<string | undefined> {
  return fs.readFile(file).then((bytes) => createHash("sha256").update(bytes).digest("hex"), () => undefined);
}

export async function isFile(p: string): Promise<boolean> {
  return fs.stat(p).then((s) => s.isFile(), () => false);
}

export async function isDirectory(p: string): Promise<boolean> {
  return fs.stat(p).then((s) => s.isDirectory(), () => false);
}

/**
 * Where the checks read the text of a file a user edits (a config, a task, a dataset, a data
 * file): the disk for the CLI; for the editor, the unsaved buffer where the file is open.
 */
export interface TextFiles {
  /** The file's text; rejects as fs.readFile does when it cannot be read. */
  read(file: string): Promise<string>;
}

export const diskFiles: TextFiles = { read: (file) => fs.readFile(file, "utf8") };
