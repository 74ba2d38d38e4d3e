// `bprof generate`: diagnostic items from the built-in generators, as `*.diag.jsonl`.
import * as path from "node:path";
import { writeFileAtomic } from "../core/base/fsutil";
import {
  ALL_GENERATORS,
  findGenerator,
  generateAbilities,
  GeneratorCapacityError,
  toJsonl,
  type AbilityGenerator,
} from "../core/diagnostic/generators/index";

export const GENERATE_USAGE = `  generate [--ability NAME] [--n N] [--seed S] [--out FILE]
                                 diagnostic items made by the built-in generators, one JSON object
                                 a line (*.diag.jsonl), answers computed so every label is right:
    --ability NAME               one ability, by the paper's name or its short name (default: all
                                 ten, one after the other):
${wrapped(ALL_GENERATORS.map((g) => g.slug).join(", "), 33, 62)}
    --n N                        items per ability (default 2000, the paper's size)
    --seed S                     seed of the draws (default 1); the same seed gives the same items
    --out FILE                   where to write them (default: stdout)
`;

/** `text` cut at spaces into lines of at most `width` characters, each indented by `indent`. */
function wrapped(text: string, indent: number, width: number): string {
  const lines: string[] = [];
  for (const word of text.split(" ")) {
    const last = lines[lines.length - 1];
    if (last !== undefined && last.length + 1 + word.length <= width) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines.map((l) => " ".repeat(indent) + l).join("\n");
}

export interface GenerateArgs {
  ability?: string;
  n?: string;
  seed?: string;
  out?: string;
}

/** Runs the command; returns the exit code (0 ok, 2 bad input) after writing any message to stderr. */
export async function generateCommand(args: GenerateArgs): Promise<number> {
  const fail = (message: string) => {
    process.stderr.write(`bprof generate: ${message}\n`);
    return 2;
  };
  const n = parseCount(args.n, 2000);
  if (n === undefined) return fail(`--n must be a positive integer, got \`${args.n}\``);
  const seed = parseCount(args.seed, 1, 0);
  if (seed === undefined) return fail(`--seed must be a non-negative integer, got \`${args.seed}\``);
  let generators: readonly AbilityGenerator[] = ALL_GENERATORS;
  if (args.ability !== undefined) {
    const found = findGenerator(args.ability);
    if ("error" in found) return fail(found.error);
    generators = [found.generator];
  }
  let text: string;
  try {
    text = toJsonl(generateAbilities(generators, { n, seed }));
  } catch (e) {
    if (e instanceof GeneratorCapacityError) return fail(e.message);
    throw e;
  }
  if (args.out === undefined || args.out === "-") {
    await new Promise<void>((resolve, reject) => process.stdout.write(text, (e) => (e ? reject(e) : resolve())));
    return 0;
  }
  const file = path.resolve(args.out);
  await writeFileAtomic(file, text);
  process.stderr.write(`${generators.length * n} items (${generators.map((g) => g.slug).join(", ")}) -> ${file}\n`);
  return 0;
}

/** A decimal integer >= min, or the default when absent; undefined when malformed. */
function parseCount(text: string | undefined, fallback: number, min = 1): number | undefined {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text.trim())) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) && value >= min ? value : undefined;
}
