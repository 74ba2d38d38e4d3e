// The Hugging Face names a task file gives: `dataset_path` (a Hub repo id) and `dataset_name` (a
// config of it). Both become folders of this machine's caches (hubCache.ts), and a task file comes
// with a repository as much as the rest of it: `dataset_name: ../../x` would have the cache read
// from outside itself. So a name is checked as the Hub and the `datasets` library check it, before
// any path is made of it.

/**
 * What makes `id` no Hub repo id (huggingface_hub's validate_repo_id), or undefined: `[namespace/]name`,
 * each of letters, digits, `-`, `_` and `.`, beginning and ending with a letter, digit or `_`, at most
 * 96 characters; no `--` or `..` (the caches' own separators and the parent folder), no `.git` at the end.
 */
export function repoIdFault(id: string): string | undefined {
  const parts = id.split("/");
  if (parts.length > 2) return "a Hugging Face dataset is `name` or `namespace/name`, with one `/` at most";
  for (const part of parts) {
    if (part.length === 0 || part.length > 96) return "each part of a Hugging Face dataset id has 1 to 96 characters";
    if (!/^[A-Za-z0-9_.-]+$/.test(part)) return "a Hugging Face dataset id has only letters, digits, `-`, `_` and `.`";
    if (!/^\w/.test(part) || !/\w$/.test(part))
      return "each part of a Hugging Face dataset id begins and ends with a letter, a digit or `_`";
  }
  if (id.includes("--") || id.includes("..")) return "a Hugging Face dataset id has no `--` or `..`";
  if (id.endsWith(".git")) return "a Hugging Face dataset id does not end in `.git`";
  return undefined;
}

/**
 * What makes `name` no dataset config name, or undefined: 1 to 255 characters, none of the
 * characters the `datasets` library refuses in one (`<>:/\|?*`) or a control character, and no `..`.
 */
export function configNameFault(name: string): string | undefined {
  if (name.length === 0 || name.length > 255) return "a dataset config name has 1 to 255 characters";
  // eslint-disable-next-line no-control-regex -- control characters are among those refused
  if (/[<>:/\\|?*\u0000-\u001f\u007f]/.test(name)) return "a dataset config name has no `/`, `\\`, `<>:|?*` or control characters";
  if (name.includes("..")) return "a dataset config name has no `..`";
  return undefined;
}
