// Quick fixes, chosen by a problem's code and built from its data (never from its message): the
// nearest key or name, an answer inside the choices, a duplicate removed, a fresh id, a k that
// fits the model, answer positions rebalanced. Each fix is a list of edits the editor applies as
// one undoable change; creating a missing dataset is a command of its own (it writes a file).
import { applyEdits, findNodeAtLocation, modify, parseTree } from "jsonc-parser";
import { tooDeepOffset } from "../base/jsonNesting";
import { findGenerator } from "../diagnostic/generators/index";
import { jsonlLines } from "../diagnostic/jsonl";
import { convertedLine } from "../diagnostic/authorsFormat";
import { answerRebalance } from "../diagnostic/rebalance";
import type { Problem } from "../base/problems";
import { deleteLine, problemRange, range, type Range, type TextEdit } from "./text";

export interface Fix {
  title: string;
  edits: TextEdit[];
  /** The fix a user most likely wants (the editor offers it first, and for "fix all"). */
  preferred?: boolean;
  /** A command instead of edits: create `file` with generated items of `ability`. */
  createDataset?: { file: string; ability: string };
}

/** The fixes of `problem`, given the text of its file as the editor holds it. */
export function fixesFor(problem: Problem, text: string): Fix[] {
  const suggestion = problem.data?.suggestion;
  switch (problem.code) {
    case "config.unknown-key":
    case "config.ability-near-miss":
    case "config.ability-near-twin":
    case "config.unknown-label":
    case "config.unknown-expected-ability":
    case "config.unknown-of-ability":
    case "config.unknown-pair-ability":
    case "config.k-too-large":
    case "config.k-selects-nothing":
    case "config.k-out-of-range":
      return suggestion === undefined ? [] : [replaceYamlScalar(problem, text, suggestion)];
    case "config.dataset-not-found": {
      const { file, ability } = problem.data ?? {};
      if (!file || !ability || "error" in findGenerator(ability)) return [];
      return [
        {
          title: `Create ${baseName(file)} with items of the built-in ${ability} generator`,
          edits: [],
          createDataset: { file, ability },
          preferred: true,
        },
      ];
    }
    case "diag.authors-format":
      return authorsFormatFixes(problem, text);
    case "diag.unknown-field":
      return suggestion === undefined
        ? []
        : [
            {
              title: `Change to \`${suggestion}\``,
              edits: [{ file: problem.file, range: problemRange(problem), newText: JSON.stringify(suggestion) }],
              preferred: true,
            },
          ];
    case "diag.unknown-ability":
      return suggestion === undefined ? [] : [renameAbility(problem, text, suggestion)];
    case "diag.answer-out-of-range":
    case "diag.answer-not-index":
      return answerFixes(problem, text);
    case "diag.duplicate":
    case "diag.near-duplicate":
      return [
        {
          title: `Remove this item (${problem.code === "diag.duplicate" ? "a duplicate" : "a near duplicate"} of line ${problem.data?.otherLine})`,
          edits: [deleteLine(problem.file, jsonlLines(text), problem.line - 1)],
          preferred: problem.code === "diag.duplicate",
        },
      ];
    case "diag.duplicate-id":
      return [newIdFix(problem, text, "replace")];
    case "diag.missing-field":
      return problem.data?.field === "id" ? [newIdFix(problem, text, "insert")] : [];
    case "diag.answer-position-bias":
      return rebalanceFix(problem, text);
    default:
      return [];
  }
}

function baseName(file: string): string {
  return file.split(/[\\/]/).pop()!;
}

/** The text of a range on one line. */
function textIn(lines: readonly string[], r: Range): string {
  return r.start.line === r.end.line ? lines[r.start.line]!.slice(r.start.character, r.end.character) : "";
}

/** A YAML scalar (key or value) replaced by `value`, quoted as the old one was, or when plain YAML would misread it. */
function replaceYamlScalar(problem: Problem, text: string, value: string): Fix {
  const r = problemRange(problem);
  const old = textIn(text.split("\n"), r);
  const newText = old.startsWith('"') ? JSON.stringify(value) : old.startsWith("'") ? `'${value.replace(/'/g, "''")}'` : plainYaml(value);
  return { title: `Change to \`${value}\``, edits: [{ file: problem.file, range: r, newText }], preferred: true };
}

/** `value` as a YAML plain scalar when it reads back as the same string, else double-quoted. */
function plainYaml(value: string): string {
  const safe = value !== "" && !/^[\s\-?:,[\]{}#&*!|>'"%@`]|: | #|\s$/.test(value) && !/^(true|false|null|~|[-+.\d].*)$/i.test(value);
  return safe || /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(value) ? value : JSON.stringify(value);
}

/** Every item of the file with the misspelt ability gets the suggested one. */
function renameAbility(problem: Problem, text: string, suggestion: string): Fix {
  const lines = jsonlLines(text);
  const misspelt = abilityOnLine(lines[problem.line - 1] ?? "")?.value;
  const edits: TextEdit[] = [];
  lines.forEach((line, l) => {
    const found = abilityOnLine(line);
    if (found && found.value === misspelt)
      edits.push({
        file: problem.file,
        range: range(l, found.offset, l, found.offset + found.length),
        newText: JSON.stringify(suggestion),
      });
  });
  return {
    title: `Change \`${misspelt}\` to \`${suggestion}\` in ${edits.length} item${edits.length === 1 ? "" : "s"}`,
    edits,
    preferred: true,
  };
}

function abilityOnLine(line: string): { value: unknown; offset: number; length: number } | undefined {
  // a line nested too deep is refused by the check (base/jsonNesting.ts), and parseTree would overflow on it
  if (!line.includes('"ability"') || tooDeepOffset(line) !== undefined) return undefined;
  const node = findNodeAtLocation(parseTree(line) ?? { type: "null", offset: 0, length: 0 }, ["ability"]);
  return node ? { value: node.value, offset: node.offset, length: node.length } : undefined;
}

/** One fix per choice: the answer set to its index. A string answer that names a choice (or its letter) is preferred. */
function answerFixes(problem: Problem, text: string): Fix[] {
  const line = jsonlLines(text)[problem.line - 1] ?? "";
  let value: { choices?: unknown; answer?: unknown };
  try {
    value = JSON.parse(line) as typeof value;
  } catch {
    return [];
  }
  if (!Array.isArray(value.choices)) return [];
  const choices = value.choices.map(String);
  const meant = typeof value.answer === "string" ? meantChoice(value.answer, choices) : -1;
  return choices.map((choice, i) => ({
    title: `Set answer to ${i} (${JSON.stringify(choice.length > 40 ? `${choice.slice(0, 40)}…` : choice)})`,
    edits: [{ file: problem.file, range: problemRange(problem), newText: String(i) }],
    ...(i === meant ? { preferred: true } : {}),
  }));
}

/** The choice a string answer names: its text, or its letter (A, B, ...). */
function meantChoice(answer: string, choices: readonly string[]): number {
  const byText = choices.findIndex((c) => c.trim().toLowerCase() === answer.trim().toLowerCase());
  if (byText >= 0) return byText;
  return /^[A-Za-z]$/.test(answer.trim()) ? answer.trim().toUpperCase().charCodeAt(0) - 65 : -1;
}

/** An id no other item of the file has: the ability's first word and the first free number. */
function newIdFix(problem: Problem, text: string, how: "replace" | "insert"): Fix {
  const lines = jsonlLines(text);
  const used = new Set<string>();
  for (const m of text.matchAll(/"id"\s*:\s*"((?:[^"\\]|\\.)*)"/g)) used.add(JSON.parse(`"${m[1]!}"`) as string);
  const ability = /"ability"\s*:\s*"([^"\\]*)"/.exec(lines[problem.line - 1] ?? "")?.[1];
  const base =
    (ability ?? "item")
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .find((w) => w !== "") ?? "item";
  let n = problem.line;
  while (used.has(`${base}-${n}`)) n++;
  const id = `${base}-${n}`;
  if (how === "replace")
    return {
      title: `Give this item the new id \`${id}\``,
      edits: [{ file: problem.file, range: problemRange(problem), newText: JSON.stringify(id) }],
      preferred: true,
    };
  const line = lines[problem.line - 1] ?? "";
  const brace = line.indexOf("{");
  const empty = /^\{\s*\}$/.test(line.trim());
  return {
    title: `Add the id \`${id}\``,
    edits: [
      {
        file: problem.file,
        range: range(problem.line - 1, brace + 1, problem.line - 1, brace + 1),
        newText: `"id": ${JSON.stringify(id)}${empty ? "" : ", "}`,
      },
    ],
    preferred: true,
  };
}

/** Swaps the choices of the fewest items so every answer position holds its share. */
function rebalanceFix(problem: Problem, text: string): Fix[] {
  const lines = jsonlLines(text);
  const items: { line: number; ability: string; choices: string[]; answer: number; raw: string }[] = [];
  lines.forEach((raw, l) => {
    try {
      const v = JSON.parse(raw) as { ability?: unknown; choices?: unknown; answer?: unknown };
      if (Array.isArray(v.choices) && Number.isInteger(v.answer) && (v.answer as number) >= 0 && (v.answer as number) < v.choices.length) {
        items.push({ line: l + 1, ability: String(v.ability), choices: v.choices.map(String), answer: v.answer as number, raw });
      }
    } catch {
      // a line with errors of its own takes no part
    }
  });
  const moves = answerRebalance(items);
  if (moves.length === 0) return [];
  const byLine = new Map(items.map((it) => [it.line, it]));
  const edits = moves.map(({ line, from, to }): TextEdit => {
    const item = byLine.get(line)!;
    const format = { formattingOptions: { insertSpaces: true, tabSize: 0, eol: "" } };
    let updated = item.raw;
    updated = applyEdits(updated, modify(updated, ["choices", from], item.choices[to], format));
    updated = applyEdits(updated, modify(updated, ["choices", to], item.choices[from], format));
    updated = applyEdits(updated, modify(updated, ["answer"], to, format));
    return { file: problem.file, range: range(line - 1, 0, line - 1, item.raw.length), newText: updated };
  });
  return [
    {
      title: `Rebalance answer positions: reorder the choices of ${moves.length} item${moves.length === 1 ? "" : "s"}`,
      edits,
      preferred: true,
    },
  ];
}

/** The item converted from the released code's format, and every such item of the file at once. */
function authorsFormatFixes(problem: Problem, text: string): Fix[] {
  const lines = jsonlLines(text);
  const at = problem.line - 1;
  const one = convertedLine(lines[at] ?? "", problem.line);
  if (one === undefined) return [];
  const all = lines.flatMap((raw, i) => {
    const converted = convertedLine(raw, i + 1);
    return converted === undefined ? [] : [{ file: problem.file, range: range(i, 0, i, raw.length), newText: converted }];
  });
  return [
    {
      title: "Convert this item from the released code's format",
      edits: [{ file: problem.file, range: range(at, 0, at, lines[at]!.length), newText: one }],
      ...(all.length <= 1 ? { preferred: true } : {}),
    },
    ...(all.length > 1
      ? [{ title: `Convert the ${all.length} items of the file in the released code's format`, edits: all, preferred: true }]
      : []),
  ];
}
