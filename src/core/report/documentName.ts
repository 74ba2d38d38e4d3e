// How a benchmark document is named to the user: by its own id (a data row's `id` field, as the
// demo's `deductive-2-6`) when it has one, and by its line in the data file, the two things a user
// can find it by. Its index in the test split is the runner's bookkeeping and is shown only when
// neither is known (Parquet has no lines); the id is read by lmeval/documents.ts (documentId).
// Free of Node so that the results page can use it.

/** "deductive-2-6 (line 6)", "line 6", or "document 5" when the document has neither id nor line. */
export function documentName(d: { index: number; id?: string; line?: number }): string {
  if (d.id !== undefined) return d.line !== undefined ? `${d.id} (line ${d.line})` : d.id;
  return d.line !== undefined ? `line ${d.line}` : `document ${d.index}`;
}
