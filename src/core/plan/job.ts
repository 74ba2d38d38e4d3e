// Compile a profile into runner jobs: text becomes tokens here, so the runner never sees text.
import type { ResolvedAbility, ResolvedAblation, ResolvedBenchmark, ResolvedModel } from "../config/load";
import type { Selection } from "../config/types";
import { diagnosticSequence } from "../prompts/diagnosticText";
import { tokenizeRequest, type ModelTokenizer } from "../prompts/tokenize";

/** The job file of native-runner/PROTOCOL.md, protocol 1. */
export interface ScoreJob {
  protocol: 1;
  subcommand: "score";
  model: { path: string; dtype: string };
  device: string;
  items: JobItem[];
}

export interface JobItem {
  id: string;
  context: number[];
  choices: number[][];
}

/** Where each job item came from, to map the runner's scores back to benchmark documents. */
export interface ItemRef {
  id: string;
  benchmark: string;
  index: number;
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
    front_removal: number;
    back_removal: number;
    batch_size: number;
    seed: number;
  };
}

/** An ability as the runner knows it: `id` names its files and events, `name` is the user's. */
export interface AbilityRef {
  id: string;
  name: string;
  sequences: number;
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
  const abilities = plan.abilities.map((ability, i) => {
    if (ability.items.length === 0) throw new Error(`ability ${ability.name} has no diagnostic items`);
    return { id: ids[i]!, sequences: ability.items.map((item) => diagnosticSequence(tokenizer, item)) };
  });
  const k = [...plan.ablation.k].sort((a, b) => a - b);
  k.forEach((value, i) => {
    if (!(value > 0 && value < 1)) throw new RangeError(`k = ${value} is not in (0, 1)`);
    if (i > 0 && !(value > k[i - 1]!)) throw new RangeError(`k = ${value} appears twice`);
  });
  const job: ProfileJob = {
    ...score,
    subcommand: "profile",
    abilities,
    ablation: {
      k,
      selections: [...plan.ablation.selections],
      front_removal: plan.ablation.frontRemoval,
      back_removal: plan.ablation.backRemoval,
      batch_size: plan.ablation.batchSize,
      seed: plan.seed,
    },
  };
  const abilityRefs = plan.abilities.map((a, i) => ({ id: ids[i]!, name: a.name, sequences: abilities[i]!.sequences.length }));
  return { job, refs, abilities: abilityRefs };
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
    for (const item of benchmark.task.items) {
      if (item.kind !== "multiple_choice") throw new Error(`${benchmark.name}: only multiple_choice items can be scored by this runner version`);
      const id = itemId(benchmark.name, item.index);
      // The context tokens depend on the context text alone, so every choice shares them,
      // exactly as lm-eval scores context_enc + continuation_enc.
      const requests = item.continuations.map((c) => tokenizeRequest(tokenizer, item.context, c));
      items.push({ id, context: requests[0]!.context, choices: requests.map((r) => r.continuation) });
      refs.push({ id, benchmark: benchmark.name, index: item.index });
    }
  }
  return { job: { protocol: 1, subcommand: "score", model: { path: model.path, dtype: model.dtype }, device, items }, refs };
}
