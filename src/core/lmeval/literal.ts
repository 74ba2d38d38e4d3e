// lm-eval renders `doc_to_choice` templates to text and reads them back with Python's
// ast.literal_eval; this reads the same list literals (JSON or Python quoting).

export function parseListLiteral(text: string): string[] | undefined {
  const trimmed = text.trim();
  try {
    const value: unknown = JSON.parse(trimmed);
    return Array.isArray(value) ? value.map(String) : undefined;
  } catch {
    return parsePythonStringList(trimmed);
  }
}

function parsePythonStringList(text: string): string[] | undefined {
  if (!text.startsWith("[") || !text.endsWith("]")) return undefined;
  const items: string[] = [];
  let i = 1;
  const skipSpace = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  skipSpace();
  while (i < text.length - 1) {
    const quote = text[i];
    if (quote !== "'" && quote !== '"') return undefined;
    let value = "";
    i++;
    while (i < text.length && text[i] !== quote) {
      if (text[i] === "\\" && i + 1 < text.length) {
        const next = text[i + 1]!;
        value += next === "n" ? "\n" : next === "t" ? "\t" : next;
        i += 2;
      } else {
        value += text[i++];
      }
    }
    if (text[i] !== quote) return undefined;
    i++;
    items.push(value);
    skipSpace();
    if (text[i] === ",") i++;
    else if (i !== text.length - 1) return undefined;
    skipSpace();
  }
  return items;
}
