// `bprof generate --model PATH`: diagnostic items drafted by a local instruction model (core:
// diagnostic/draft), few-shot from the user's accepted items of the ability or the built-in
// generator's; the drafts that parse and pass the checks are written unreviewed, the others are
// reported with the reason.
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LOCAL_HOST } from "../core/base/host";
import { isFile, writeFileAtomic } from "../core/base/fsutil";
import { RunnerError } from "../core/base/runnerError";
import { draftDatasetItems, draftExamples, DraftInputError, draftItems, withoutLine } from "../core/run/draftItems";
import { findGenerator, toJsonl } from "../core/diagnostic/generators/index";
import { runnerOn } from "../core/runner/locate";
import { runnerSpec } from "./runner";

export const DRAFT_USAGE = `  generate --model DIR --ability NAME --n N [--out FILE]
                                 items drafted by a local instruction model (a Hugging Face folder)
                                 through the runner's greedy generation, each prompt a few examples
                                 of the ability: --examples FILE's items, else the --out dataset's
                                 (a reviewed one's accepted items only), else the built-in
                                 generator's; what parses and passes the dataset checks is
                                 appended to FILE (default: stdout) unreviewed, the rest reported
    --shots K                    examples per prompt (default 3)
    --max-tokens M               the longest draft, in tokens (default 256)
    --examples FILE              a dataset to take the examples from
`;

export interface DraftArgs {
  model: string;
  ability?: string;
  n?: string;
  seed?: string;
  out?: string;
  shots?: string;
  "max-tokens"?: string;
  examples?: string;
  runner?: string;
}

/** Runs the command; 0 when some draft was written, 1 when none passed, 2 bad input. */
export async function draftCommand(args: DraftArgs): Promise<number> {
  try {
    return await draft(args);
  } catch (e) {
    if (e instanceof DraftInputError || e instanceof RangeError) {
      process.stderr.write(`bprof generate: ${e.message}\n`);
      return 2;
    }
    if (e instanceof RunnerError) {
      process.stderr.write(`bprof generate: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}

async function draft(args: DraftArgs): Promise<number> {
  if (args.ability === undefined) throw new DraftInputError("--model needs --ability, the ability to draft items of");
  const found = findGenerator(args.ability);
  const ability = "error" in found ? args.ability : found.generator.ability;
  const n = count(args.n, "--n", 1) ?? 20;
  const seed = count(args.seed, "--seed", 0) ?? 1;
  const shots = count(args.shots, "--shots", 1) ?? 3;
  const maxTokens = count(args["max-tokens"], "--max-tokens", 1) ?? 256;
  const modelDir = path.resolve(args.model);
  if (!(await isFile(path.join(modelDir, "tokenizer.json"))))
    throw new DraftInputError(`${modelDir} has no tokenizer.json: name a Hugging Face model folder`);
  const out = args.out !== undefined && args.out !== "-" ? path.resolve(args.out) : undefined;
  const existing = out && (await isFile(out)) ? (await draftDatasetItems(out)).map(withoutLine) : [];
  const examples = await draftExamples(args.examples ? path.resolve(args.examples) : out, ability);
  const runnerPath = await runnerOn(LOCAL_HOST, runnerSpec(args.runner));
  const workDir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-draft-"));
  try {
    process.stderr.write(`drafting ${n} items of ${ability} with ${modelDir} (${examples.length} examples, ${shots} a prompt)\n`);
    const slug = "error" in found ? "draft" : found.generator.slug;
    const outcome = await draftItems({
      modelDir,
      ability,
      n,
      seed,
      shots,
      examples,
      existing,
      idPrefix: `${slug}-draft`,
      maxTokens,
      runnerPath,
      workDir,
    });
    for (const r of outcome.rejected)
      process.stderr.write(
        `draft ${r.index + 1}: not written: ${r.reason} (it wrote: ${JSON.stringify(r.output.slice(0, 120))}${r.output.length > 120 ? "..." : ""})\n`,
      );
    if (outcome.drafts.length === 0) {
      process.stderr.write(`bprof generate: none of the ${n} drafts passed; nothing written\n`);
      return 1;
    }
    const text = toJsonl(outcome.drafts);
    if (!out) await new Promise<void>((resolve, reject) => process.stdout.write(text, (e) => (e ? reject(e) : resolve())));
    else {
      const before = (await isFile(out)) ? await fs.readFile(out, "utf8") : "";
      await writeFileAtomic(out, before + (before === "" || before.endsWith("\n") ? "" : "\n") + text);
    }
    process.stderr.write(
      `${outcome.drafts.length} of ${n} drafts passed the checks${out ? ` -> ${out}` : ""} (unreviewed: review them in the editor)\n`,
    );
    return 0;
  } finally {
    await fs.rm(workDir, { recursive: true, force: true });
  }
}

function count(text: string | undefined, flag: string, min: number): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < min)
    throw new DraftInputError(`${flag} must be a whole number of at least ${min}, got \`${text}\``);
  return value;
}
