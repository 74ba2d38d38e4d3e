// Diagnostic items drafted by a local instruction model, as the paper drafted its sets: one
// few-shot prompt per draft (diagnostic/draft/prompt.ts), greedy decoding through the runner's generation (a
// `score` job of generate items, one line each), each output parsed and checked as a dataset line
// is, together with the dataset it joins and the examples (so a copied example or a repeat is
// caught). What passes is returned unreviewed, with the model and its prompt under `meta.draft`;
// what does not, with the reason.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { runLocal } from "../launch/local";
import type { RunnerEvent } from "../launch/events";
import { resolveMaxLength } from "../model/modelSettings";
import { generateSpec } from "../plan/job";
import { inputTokens, loadTokenizer } from "../prompts/tokenize";
import { readRunnerScores } from "../results/items";
import { cutAtStop } from "../analysis/generation";
import { diskFiles, isFile } from "../base/fsutil";
import { errorsOf, formatProblem } from "../base/problems";
import { checkDiagnosticDataset, loadDiagnosticDataset } from "../diagnostic/dataset";
import { findGenerator, generateItems } from "../diagnostic/generators/index";
import type { DiagnosticItem, DiagnosticItemFields } from "../diagnostic/item";
import { reviewedItems } from "../diagnostic/review/forRun";
import { loadReviewOf } from "../diagnostic/review/reviewFile";
import { DRAFT_TEMPLATE, draftPrompts, parseDraft, promptHash } from "../diagnostic/draft/prompt";

/** Problems of a draft's line that keep it out: errors, and a repeat of an item or a benchmark's text. */
const REJECTING_WARNINGS = new Set(["diag.duplicate", "diag.near-duplicate", "diag.contamination", "diag.unknown-field"]);

export interface DraftRequest {
  /** A Hugging Face model folder with a tokenizer.json. */
  modelDir: string;
  ability: string;
  n: number;
  seed: number;
  /** Examples per prompt. */
  shots: number;
  /** The items the prompts draw their examples from (the user's accepted items, or a generator's). */
  examples: readonly DiagnosticItemFields[];
  /** The dataset the drafts join, checked with them (duplicate ids and questions). */
  existing: readonly DiagnosticItemFields[];
  /** The id prefix of the drafts: `<prefix>-<seed>-<i>`. */
  idPrefix: string;
  maxTokens: number;
  runnerPath: string;
  /** An empty folder for the job and the runner's output. */
  workDir: string;
  threads?: number;
  onEvent?: (event: RunnerEvent) => void;
  signal?: AbortSignal;
}

export interface DraftOutcome {
  drafts: DiagnosticItemFields[];
  /** Drafts that did not parse or pass the checks: which (0-based), what the model wrote, why. */
  rejected: { index: number; output: string; reason: string }[];
}

export async function draftItems(request: DraftRequest): Promise<DraftOutcome> {
  const tokenizer = await loadTokenizer(request.modelDir);
  const maxLength = await resolveMaxLength(request.modelDir);
  const prompts = draftPrompts(request.ability, request.examples, request.n, request.shots, request.seed);
  const spec = generateSpec(tokenizer, ["\n"], request.maxTokens);
  const items = prompts.map((prompt, i) => {
    const context = inputTokens(tokenizer, prompt, "generation");
    if (context.length + request.maxTokens > maxLength.value)
      throw new RangeError(
        `the prompt of draft ${i + 1} is ${context.length} tokens, and with ${request.maxTokens} to write it passes the model's ${maxLength.value} (${maxLength.from}): use fewer examples (--shots) or fewer tokens (--max-tokens)`,
      );
    return { id: `d${i}`, context, generate: spec };
  });
  const job = {
    protocol: 1,
    subcommand: "score",
    model: { path: path.resolve(request.modelDir), dtype: "float32", max_length: maxLength.value },
    device: "cpu",
    items,
  };
  const jobFile = path.join(request.workDir, "job.json");
  const outDir = path.join(request.workDir, "out");
  await fs.mkdir(outDir, { recursive: true });
  await fs.writeFile(jobFile, JSON.stringify(job));
  await runLocal({
    runnerPath: request.runnerPath,
    subcommand: "score",
    jobFile,
    outDir,
    ...(request.threads !== undefined ? { threads: request.threads } : {}),
    ...(request.onEvent ? { onEvent: request.onEvent } : {}),
    ...(request.signal ? { signal: request.signal } : {}),
  });
  const scores = await readRunnerScores(path.join(outDir, "scores.jsonl"));
  const outputs = items.map((item) => {
    const row = scores.get(item.id);
    return row && "generated" in row ? cutAtStop(tokenizer.decode(row.generated), ["\n"]) : "";
  });
  return checkedDrafts(request, prompts, outputs);
}

/** The outputs read as items and checked with the dataset and the examples; each one kept or rejected with its reason. */
export function checkedDrafts(
  request: Pick<DraftRequest, "ability" | "seed" | "idPrefix" | "modelDir" | "examples" | "existing">,
  prompts: readonly string[],
  outputs: readonly string[],
): DraftOutcome {
  const rejected: DraftOutcome["rejected"] = [];
  const parsed: { index: number; item: DiagnosticItemFields }[] = [];
  outputs.forEach((output, index) => {
    const draft = parseDraft(output, request.ability, `${request.idPrefix}-${request.seed}-${index + 1}`);
    if ("reason" in draft) rejected.push({ index, output, reason: draft.reason });
    else parsed.push({ index, item: draft.item });
  });
  // the dataset and the examples first, then the drafts: a check marks the later of two lines
  const ids = new Set(request.existing.map((i) => i.id));
  const before = [...request.existing, ...request.examples.filter((e) => !ids.has(e.id))];
  const lines = [...before, ...parsed.map((p) => p.item)].map((item) => JSON.stringify(item));
  const { problems } = checkDiagnosticDataset("drafts.diag.jsonl", lines.join("\n") + "\n");
  const drafts: DiagnosticItemFields[] = [];
  for (const [j, p] of parsed.entries()) {
    const line = before.length + j + 1;
    const against = problems.filter((x) => x.line === line && (x.severity === "error" || REJECTING_WARNINGS.has(x.code)));
    if (against.length > 0) {
      rejected.push({ index: p.index, output: outputs[p.index]!, reason: against.map((x) => x.message).join("; ") });
      continue;
    }
    const prompt = prompts[p.index]!;
    drafts.push({
      ...p.item,
      meta: {
        draft: {
          model: path.resolve(request.modelDir),
          template: DRAFT_TEMPLATE,
          decoding: "greedy",
          prompt_sha256: promptHash(prompt),
          prompt,
        },
      },
    });
  }
  rejected.sort((a, b) => a.index - b.index);
  return { drafts, rejected };
}

/** Input a draft cannot start from: a dataset with errors, an ability with no examples. */
export class DraftInputError extends Error {}

/**
 * The prompts' examples: a dataset's items of the ability (only its accepted and corrected ones,
 * corrections applied, when it has a review), else the built-in generator's first 20.
 */
export async function draftExamples(dataset: string | undefined, ability: string): Promise<DiagnosticItemFields[]> {
  if (dataset && (await isFile(dataset))) {
    const items = (await draftDatasetItems(dataset)).filter((i) => i.ability === ability);
    const review = await loadReviewOf(dataset, diskFiles);
    const chosen = review ? reviewedItems(items, review.review, "accepted", review.file).items : items;
    if (chosen.length > 0) return chosen.map(withoutLine);
  }
  const found = findGenerator(ability);
  if ("error" in found)
    throw new DraftInputError(
      `${found.error}; without a built-in generator, name a dataset with items of ${ability} to take the examples from`,
    );
  return generateItems(found.generator, { n: 20, seed: 1 });
}

/** A dataset's items; one with errors is refused (drafts joining it would be checked against a broken file). */
export async function draftDatasetItems(file: string): Promise<DiagnosticItem[]> {
  const { items, problems } = await loadDiagnosticDataset(file);
  const errors = errorsOf(problems);
  if (errors.length > 0)
    throw new DraftInputError(`${errors.map(formatProblem).join("\n")}\n${path.basename(file)} has errors: fix them first`);
  return items;
}

export function withoutLine({ line: _line, ...item }: DiagnosticItem): DiagnosticItemFields {
  return item;
}
