// Python's str.strip / lstrip / rstrip without arguments, which lm-eval calls where JavaScript's
// trim would differ: Python's whitespace (str.isspace) includes the separators \x1c-\x1f and NEL
// (\x85) and leaves out the byte-order mark (\ufeff), which JavaScript's \s includes.
const PYTHON_SPACE = "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const LEADING = new RegExp(`^[${PYTHON_SPACE}]+`);
const TRAILING = new RegExp(`[${PYTHON_SPACE}]+$`);

export function pyLstrip(text: string): string {
  return text.replace(LEADING, "");
}

export function pyRstrip(text: string): string {
  return text.replace(TRAILING, "");
}

export function pyStrip(text: string): string {
  return pyRstrip(pyLstrip(text));
}
