// What tests compare folders by: every file under a folder, by its path relative to it.
import { promises as fs } from "node:fs";
import * as path from "node:path";

/** Every file under `dir`, relative path -> text. */
export async function filesUnder(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const entry of await fs.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    out.set(path.relative(dir, file), await fs.readFile(file, "utf8"));
  }
  return out;
}
