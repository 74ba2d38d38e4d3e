// Compile a profile into runner jobs: text becomes tokens here, so the runner never sees text.
//
// What lm-eval's Hugging Face backend does between a request and the model is done here too, so
// the runner reads exactly the tokens lm-eval's model would:
// - the chat template, when the model's config entry asks for it (prompts/chatPrompt.ts);
// - left truncation to the model's max length L (config `max_length`, else config.json's window):
//   a generation context keeps its last L - max_gen_toks tokens (generate_until's
//   left_truncate_len; max_gen_toks >= L is an error, as lm-eval's assertion); a multiple-choice
//   choice is scored on (context + continuation)[-(L + 1):], so the context keeps its last
//   L + 1 - len(continuation) tokens, which depends on the choice. The runner scores the choices
//   of an item on one shared context, so an item whose choices keep different amounts of context
//   is sent as one job item per amount (`<id>#<part>`, the choices that share it), and the scores
//   are put back together in choice order (ItemRef.parts). A continuation longer than L is an
//   error (lm-eval asserts it). A document in lm-eval's multiple-input form (a context per
//   choice, one continuation) is sent the same way, one job item per choice;
// - generation stops at the `until` strings, the tokenizer's EOS and generation_config.json's
//   eos_token_id (one id or a list), as Hugging Face's generate() does.
import { reviewRecord } from "../config/abilities";
import type { ReviewRecord } from "../diagnostic/review/forRun";
import { existsSync, readFileSync } from "node:fs";
import type { ResolvedAbility, ResolvedAblation } from "../config/abilities";
import type { ResolvedBenchmark, ResolvedModel } from "../config/resolved";
import type { CandidateSet, ImportanceMethod, Selection } from "../config/types";
import type { DiagnosticItem } from "../diagnostic/item";
import { itemContexts } from "../lmeval/render";
import type { MultipleChoiceItem, TaskItem } from "../lmeval/task";
import { formatProblem, problemAt, type Problem } from "../base/problems";
import { benchmarkChatContext, multipleInputChatContexts } from "../prompts/chatPrompt";
import { diagnosticSequence } from "../prompts/diagnosticText";
import { FLUENCY_BENCHMARK, fluencyItems } from "../prompts/fluencyText";
import { inputTokens, tokenizeChoices, type ModelTokenizer } from "../prompts/tokenize";
import { TokenizerPatternError } from "../prompts/tokenizerPatterns";

/** The version of native-runner/PROTOCOL.md the jobs here are written in. */
export const JOB_PROTOCOL = 1;

/** The job file of native-runner/PROTOCOL.md, protocol 1. */
export interface ScoreJob {
  protocol: 1;
  subcommand: "score";
  /** max_length: the longest sequence the runner may read (it refuses the job otherwise). */
  model: { path: string; dtype: string; max_length?: number };
  device: string;
  items: JobItem[];
}

/** A multiple-choice item: every choice's continuation is scored given the context. */
export interface ChoiceJobItem {
  id: string;
  context: number[];
  choices: number[][];
}

/** A generate_until item: greedy decoding after the context (PROTOCOL.md, `items[].generate`). */
export interface GenerateJobItem {
  id: string;
  context: number[];
  generate: GenerateSpec;
}

export interface GenerateSpec {
  /** lm-eval's max_gen_toks. */
  max_tokens: number;
  /** Token sequences that end the generation once the generated tokens end with one of them. */
  stop: number[][];
}

export type JobItem = ChoiceJobItem | GenerateJobItem;

/** Where each job item came from, to map the runner's scores back to benchmark documents. */
export interface ItemRef {
  id: string;
  benchmark: string;
  index: number;
  /**
   * A multiple-choice document sent as several job items, because left truncation keeps different
   * amounts of context for its choices or because each choice has a context of its own (lm-eval's
   * multiple-input form): each part's job item id and the choice indices it scores, in the order of
   * its `choices`. Absent when the document is the one job item `id`.
   */
  parts?: { id: string; choices: number[] }[];
}

export function itemId(benchmark: string, index: number): string {
  return `${benchmark}/${index}`;
}

/** A `profile` job (PROTOCOL.md, "The `profile` subcommand"): a score job plus abilities and ablation. */
export interface ProfileJob extends Omit<ScoreJob, "subcommand"> {
  subcommand: "profile";
  abilities: { id: string; sequences: number[][] }[];
  ablation: {
    k: number[];
    selections: Selection[];
    /** A name when the config has one rule (the bytes jobs always had), a list when several. */
    method: ImportanceMethod | ImportanceMethod[];
    front_removal: number;
    back_removal: number;
    batch_size: number;
    seed: number;
    /**
     * The random control's draws per k and candidate set, present only when more than 1 (and
     * `random` selected): a job of one draw is the same bytes as before the key existed.
     */
    random_draws?: number;
    /** Present (true) only when asked for: a job without it is the same bytes as before it existed. */
    stability?: true;
    /** Absent for the MLP's (the bytes jobs always had); "all" for the attention projections' too; a list for several sets. */
    candidates?: CandidateSet | (CandidateSet | { set: CandidateSet; method: ImportanceMethod[] })[];
    /** Two abilities ablated together, by id; absent without pairs. */
    pairs?: [string, string][];
  };
}

/** An ability as the runner knows it: `id` names its files and events, `name` is the user's. */
export interface AbilityRef {
  id: string;
  name: string;
  sequences: number;
  /** A second diagnostic set of this ability (the config's `of`). */
  of?: string;
  /** The reviews behind its items, as results.json records them. */
  review?: ReviewRecord;
}

/** What the runner accepts as an ability id (PROTOCOL.md); "random" names the random control. */
export const ABILITY_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const RESERVED_IDS = new Set(["random"]);
const MAX_ID_LENGTH = 64;

/**
 * File-safe, unique runner ids for ability names, in order: lower case, accents dropped, "&" read
 * as "and", every other run of non-alphanumerics a single "-" ("Commonsense & Causal Reasoning"
 * -> "commonsense-and-causal-reasoning"). A name with nothing left becomes "ability"; a repeat,
 * or the reserved "random", gets "-2", "-3", ... Dots never appear, so `<id>.<selection>.k<i>`
 * file names split unambiguously.
 */
export function abilityIds(names: readonly string[]): string[] {
  const used = new Set<string>();
  return names.map((name) => {
    const base = slug(name) || "ability";
    let id = base;
    for (let n = 2; used.has(id) || RESERVED_IDS.has(id); n++) id = `${base}-${n}`;
    used.add(id);
    return id;
  });
}

function slug(name: string): string {
  return name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/&/g, " and ")
    .replace(/[^a-z0-9]+/g, "-")
    .slice(0, MAX_ID_LENGTH)
    .replace(/^-+|-+$/g, "");
}

export interface ProfilePlan {
  abilities: readonly ResolvedAbility[];
  ablation: ResolvedAblation;
  seed: number;
}

/**
 * The `profile` job of one model: the benchmark items exactly as `score` gets them, one token
 * sequence per diagnostic item (diagnosticText.ts), k ascending.
 */
export function compileProfileJob(
  model: ResolvedModel,
  benchmarks: ResolvedBenchmark[],
  plan: ProfilePlan,
  tokenizer: ModelTokenizer,
  device: string,
): { job: ProfileJob; refs: ItemRef[]; abilities: AbilityRef[] } {
  if (plan.abilities.length === 0) throw new Error("a profile job needs at least one ability");
  const { job: score, refs } = compileScoreJob(model, benchmarks, tokenizer, device);
  const ids = abilityIds(plan.abilities.map((a) => a.name));
  const idOf = (name: string) => ids[plan.abilities.findIndex((a) => a.name === name)]!;
  const abilities = plan.abilities.map((ability, i) => {
    if (ability.items.length === 0) throw new Error(`ability ${ability.name} has no diagnostic items`);
    return {
      id: ids[i]!,
      sequences: ability.items.map((item) =>
        fittingSequence(diagnosticSequence(tokenizer, item, model.chat?.template), ability, item, model.maxLength),
      ),
    };
  });
  const k = [...plan.ablation.k].sort((a, b) => a - b);
  k.forEach((value, i) => {
    if (!(value > 0 && value < 1)) throw new RangeError(`k = ${value} is not in (0, 1)`);
    if (i > 0 && !(value > k[i - 1]!)) throw new RangeError(`k = ${value} appears twice`);
  });
  const fluency = plan.ablation.fluency;
  if (fluency && benchmarks.some((b) => b.name === FLUENCY_BENCHMARK))
    throw new Error(`a benchmark is named \`${FLUENCY_BENCHMARK}\`, the name of the fluency text's items: rename it`);
  const job: ProfileJob = {
    ...score,
    // the fluency text is scored in the same pass as the benchmarks, by the baseline and every variant
    ...(fluency ? { items: [...score.items, ...fluencyItems(tokenizer, fluency.text, model.maxLength)] } : {}),
    subcommand: "profile",
    abilities,
    ablation: {
      k,
      selections: [...plan.ablation.selections],
      method: plan.ablation.methods.length === 1 ? plan.ablation.methods[0]! : [...plan.ablation.methods],
      front_removal: plan.ablation.frontRemoval,
      back_removal: plan.ablation.backRemoval,
      batch_size: plan.ablation.batchSize,
      seed: plan.seed,
      ...(plan.ablation.randomDraws !== undefined && plan.ablation.randomDraws > 1 && plan.ablation.selections.includes("random")
        ? { random_draws: plan.ablation.randomDraws }
        : {}),
      ...(plan.ablation.stability ? { stability: true as const } : {}),
      ...candidatesOfJob(plan.ablation.candidates ?? ["mlp"], plan.ablation.candidateMethods),
      ...(plan.ablation.pairs?.length ? { pairs: plan.ablation.pairs.map(([a, b]) => [idOf(a), idOf(b)] as [string, string]) } : {}),
    },
  };
  const abilityRefs = plan.abilities.map((a, i) => ({
    id: ids[i]!,
    name: a.name,
    sequences: abilities[i]!.sequences.length,
    ...(a.of !== undefined ? { of: a.of } : {}),
    ...(a.review !== undefined ? { review: reviewRecord(a.review) } : {}),
  }));
  return { job, refs, abilities: abilityRefs };
}

/**
 * A diagnostic item the model's window cannot hold: refused here, at its line, before the runner
 * would allocate activations for all of it (a 10 MB item asks for gigabytes).
 */
function fittingSequence(sequence: number[], ability: ResolvedAbility, item: DiagnosticItem, maxLength: number | undefined): number[] {
  if (maxLength === undefined || sequence.length <= maxLength) return sequence;
  throw new JobCompileError(
    problemAt(
      { file: datasetFileOf(ability, item), line: item.line, column: 1 },
      "diag.too-long",
      `ability \`${ability.name}\`, item ${item.id}: ${sequence.length} tokens, more than the model's max length (${maxLength}): shorten the item, or raise the model's \`max_length\``,
    ),
  );
}

/** Which of an ability's datasets holds `item` (read again: this is only for a message). */
function datasetFileOf(ability: ResolvedAbility, item: DiagnosticItem): string {
  const holds = (file: string) => {
    const line = readFileSync(file, "utf8").split("\n")[item.line - 1] ?? "";
    return line.includes(JSON.stringify(item.id));
  };
  return ability.files.find((file) => existsSync(file) && holds(file)) ?? ability.files[0]!;
}

/**
 * A benchmark document the job cannot hold (a choice longer than the model's window, a chat
 * template that refuses it), with where it is: the data file and the document's line.
 */
export class JobCompileError extends Error {
  override name = "JobCompileError";
  constructor(readonly problem: Problem) {
    super(formatProblem(problem));
  }
}

export function compileScoreJob(
  model: ResolvedModel,
  benchmarks: ResolvedBenchmark[],
  tokenizer: ModelTokenizer,
  device: string,
): { job: ScoreJob; refs: ItemRef[] } {
  const items: JobItem[] = [];
  const refs: ItemRef[] = [];
  for (const benchmark of benchmarks) {
    const { task } = benchmark;
    const generation = task.generation;
    const generate = generation ? generateSpec(tokenizer, generation.until, generation.maxGenToks) : undefined;
    for (const item of task.items) {
      try {
        const compiled = compileBenchmarkItem(model, benchmark, item, tokenizer, generate);
        items.push(...compiled.items);
        refs.push(compiled.ref);
      } catch (e) {
        // a tokenizer pattern that ran too long is the model folder's fault, at its pattern
        if (e instanceof TokenizerPatternError) throw new JobCompileError(e.problem);
        throw new JobCompileError(
          problemAt({ file: task.dataFile, line: item.line ?? 1, column: 1 }, "task.document", (e as Error).message),
        );
      }
    }
  }
  const limit = model.maxLength === undefined ? {} : { max_length: model.maxLength };
  return { job: { protocol: 1, subcommand: "score", model: { path: model.path, dtype: model.dtype, ...limit }, device, items }, refs };
}

/** The runner items of one benchmark document (several when truncation splits its choices) and its ref. */
function compileBenchmarkItem(
  model: ResolvedModel,
  benchmark: ResolvedBenchmark,
  item: TaskItem,
  tokenizer: ModelTokenizer,
  generate: GenerateSpec | undefined,
): { items: JobItem[]; ref: ItemRef } {
  const id = itemId(benchmark.name, item.index);
  const where = `benchmark \`${benchmark.name}\`, document ${item.index}`;
  if (item.kind === "multiple_choice" && item.multipleInput)
    return multipleInputItems(model, benchmark, item, item.multipleInput.targetText, tokenizer, id, where);
  const context = contextText(model, benchmark, item, where);
  if (item.kind === "generate_until") {
    if (!generate) throw new Error(`${where}: a generate_until item in a task without generation settings`);
    const tokens = generationContext(tokenizer, context);
    return {
      items: [{ id, context: truncateGenerationContext(tokens, model.maxLength, generate.max_tokens, where), generate }],
      ref: { id, benchmark: benchmark.name, index: item.index },
    };
  }
  // lm-eval drops target_delimiter when a chat template is applied: the choices follow the
  // assistant header as they are. The context tokens depend on the context text alone, so
  // every choice shares them, exactly as lm-eval scores context_enc + continuation_enc.
  const continuations = model.chat ? item.choices : item.continuations;
  const requests = tokenizeChoices(tokenizer, context, continuations);
  const parts = truncatedChoices(
    requests[0]!.context,
    requests.map((r) => r.continuation),
    model.maxLength,
    where,
  );
  if (parts.length === 1) {
    return {
      items: [{ id, context: parts[0]!.context, choices: parts[0]!.choices.map((c) => requests[c]!.continuation) }],
      ref: { id, benchmark: benchmark.name, index: item.index },
    };
  }
  const items = parts.map((part, p) => ({
    id: `${id}#${p}`,
    context: part.context,
    choices: part.choices.map((c) => requests[c]!.continuation),
  }));
  return {
    items,
    ref: { id, benchmark: benchmark.name, index: item.index, parts: items.map((part, p) => ({ id: part.id, choices: parts[p]!.choices })) },
  };
}

/**
 * A document in lm-eval's multiple-input form (lmeval/task.ts): each choice is a context of its
 * own and every choice is scored on the same continuation, so each choice is one job item
 * (`<id>#<choice>`, one continuation) and the scores come back in choice order through
 * ItemRef.parts, as a document split by truncation does. Truncation cuts each context on its own:
 * (context_i + continuation)[-(L + 1):].
 */
function multipleInputItems(
  model: ResolvedModel,
  benchmark: ResolvedBenchmark,
  item: MultipleChoiceItem,
  targetText: string,
  tokenizer: ModelTokenizer,
  id: string,
  where: string,
): { items: JobItem[]; ref: ItemRef } {
  let contexts: string[];
  try {
    contexts = model.chat ? multipleInputChatContexts(item.prompt, item.choices, benchmark.task, model.chat) : itemContexts(item);
  } catch (e) {
    throw new Error(`${where}: ${(e as Error).message}`);
  }
  // As for the usual form, lm-eval drops target_delimiter when a chat template is applied.
  const continuation = model.chat ? targetText : item.continuations[0]!;
  const items = contexts.map((context, c): ChoiceJobItem => {
    const [request] = tokenizeChoices(tokenizer, context, [continuation]);
    if (model.maxLength !== undefined && request!.continuation.length > model.maxLength) {
      throw new Error(
        `${where}: the continuation (doc_to_target) is ${request!.continuation.length} tokens long, more than the model's max length (${model.maxLength}): raise the model's \`max_length\` or leave the document out`,
      );
    }
    const [part] = truncatedChoices(request!.context, [request!.continuation], model.maxLength, where);
    return { id: `${id}#${c}`, context: part!.context, choices: [request!.continuation] };
  });
  return {
    items,
    ref: { id, benchmark: benchmark.name, index: item.index, parts: items.map((part, c) => ({ id: part.id, choices: [c] })) },
  };
}

/** The text a document's context is: the plain context, or its conversation through the model's chat template. */
function contextText(model: ResolvedModel, benchmark: ResolvedBenchmark, item: TaskItem, where: string): string {
  if (!model.chat) return item.context;
  try {
    return benchmarkChatContext(item.prompt, benchmark.task, model.chat);
  } catch (e) {
    throw new Error(`${where}: ${(e as Error).message}`);
  }
}

/**
 * lm-eval's generate_until truncation: the context keeps its last max_length - max_gen_toks
 * tokens (left_truncate_len), so the context and the generation fit the model's window.
 */
export function truncateGenerationContext(
  context: number[],
  maxLength: number | undefined,
  maxGenToks: number,
  where = "a generation item",
): number[] {
  if (maxLength === undefined) return context;
  const room = maxLength - maxGenToks;
  if (room <= 0) throw new Error(`${where}: max_gen_toks (${maxGenToks}) must be less than the model's max length (${maxLength})`);
  return context.length > room ? context.slice(-room) : context;
}

/**
 * lm-eval's multiple-choice truncation: choice c is scored on (context + continuation_c)[-(L + 1):]
 * (its last token only predicted), so the context keeps its last L + 1 - len(continuation_c)
 * tokens. The choices are grouped by the context they keep, in order of first appearance; one
 * group when nothing is cut, or when the cut is the same for every choice.
 */
export function truncatedChoices(
  context: number[],
  continuations: number[][],
  maxLength: number | undefined,
  where = "a multiple-choice item",
): { context: number[]; choices: number[] }[] {
  if (maxLength === undefined) return [{ context, choices: continuations.map((_, c) => c) }];
  const groups = new Map<number, number[]>();
  continuations.forEach((continuation, c) => {
    if (continuation.length > maxLength) {
      throw new Error(
        `${where}: choice ${c} is ${continuation.length} tokens long, more than the model's max length (${maxLength}): raise the model's \`max_length\` or leave the document out`,
      );
    }
    const start = Math.max(0, context.length + continuation.length - (maxLength + 1));
    groups.set(start, [...(groups.get(start) ?? []), c]);
  });
  return [...groups].map(([start, choices]) => ({ context: context.slice(start), choices }));
}

/**
 * The context of a generation request: the whole rendered context with its special tokens, as
 * lm-eval's generate_until encodes it (`tok_batch_encode`; its trailing whitespace stays: there is
 * no continuation to move it to); the prefix token stands in for an empty context, as for
 * multiple choice.
 */
export function generationContext(tokenizer: ModelTokenizer, context: string): number[] {
  const tokens = context === "" ? [] : inputTokens(tokenizer, context, "generation");
  return tokens.length > 0 ? tokens : [tokenizer.prefixTokenId];
}

/**
 * `generate` of a task's items: at most max_gen_toks tokens; the stop sequences are the `until`
 * strings encoded without special tokens (as continuations are; an empty string stops nothing and
 * is left out), then the tokenizer's EOS, then the other ids of generation_config.json's
 * eos_token_id, each sequence once. The runner's check is token-level;
 * the text-level cut at the first `until` string (analysis/generation.ts) defines the answer, so a
 * stop string that tokenizes differently inside the text only costs time.
 */
export function generateSpec(tokenizer: ModelTokenizer, until: readonly string[], maxGenToks: number): GenerateSpec {
  if (!Number.isInteger(maxGenToks) || maxGenToks < 1) throw new RangeError(`max_gen_toks must be a positive integer, got ${maxGenToks}`);
  const stop: number[][] = [];
  const seen = new Set<string>();
  const add = (tokens: number[]) => {
    const key = tokens.join(",");
    if (tokens.length === 0 || seen.has(key)) return;
    seen.add(key);
    stop.push(tokens);
  };
  for (const text of until) if (text !== "") add(tokenizer.encode(text));
  if (tokenizer.eosTokenId !== undefined) add([tokenizer.eosTokenId]);
  for (const eos of tokenizer.extraEosTokenIds ?? []) add([eos]);
  return { max_tokens: maxGenToks, stop };
}

/** The job's `candidates`: absent for the MLP's alone, so such a job keeps the bytes it always had. */
function candidatesOfJob(
  sets: readonly CandidateSet[],
  only: ResolvedAblation["candidateMethods"],
): { candidates?: CandidateSet | (CandidateSet | { set: CandidateSet; method: ImportanceMethod[] })[] } {
  if (sets.length > 1) return { candidates: sets.map((set) => (only?.[set] ? { set, method: [...only[set]] } : set)) };
  return sets[0] === "all" ? { candidates: "all" } : {};
}
