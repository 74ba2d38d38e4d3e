// The ability half of a config: `abilities` (each a diagnostic dataset), `ablation` (the k sweep
// and the selections), checked against the files they name and the models they will ablate.
import * as path from "node:path";
import { nearMissAbility, PAPER_ABILITIES } from "../diagnostic/paperAbilities";
import { resolvePairs } from "./pairs";
import type { DiagnosticDatasetCheck } from "../diagnostic/dataset";
import type { DiagnosticItem } from "../diagnostic/item";
import { loadReviewOf, type LoadedReview } from "../diagnostic/review/reviewFile";
import { reviewedItems, type ReviewRecord } from "../diagnostic/review/forRun";
import { labelAccuracy, type LabelAccuracy } from "../analysis/labelAccuracy";
import type { ItemReview } from "../diagnostic/review/states";
import { errorsOf, type Problem } from "../base/problems";
import { isFile } from "../base/fsutil";
import { candidateCount, readParameterCount, selectedCount } from "../model/parameters";
import type { YamlSource } from "../base/yamlSource";
import type { ProfileInputs, ResolvedBenchmark } from "./resolved";
import type { AbilitySpec, AblationSpec, CandidateSet, CandidateSetSpec, ImportanceMethod, ProfileConfig, Selection } from "./types";
import { BUILT_IN_FLUENCY_TEXT, fluencyParagraphs } from "../prompts/fluencyText";

export interface ResolvedAbility {
  name: string;
  /** Absolute paths of its diagnostic datasets, in config order. */
  files: string[];
  /** Its items (those whose `ability` is `name`, or `of` for a second set), in file order, `limit` applied. */
  items: DiagnosticItem[];
  /** A second diagnostic set of this ability (the config's `of`). */
  of?: string;
  /** How its datasets' reviews chose and corrected its items; absent when none has a review file, or with `review: ignore`. */
  review?: AbilityReview;
}

/** What a run records of the reviews behind an ability's items (results.json's `abilities[].review`). */
export interface AbilityReview {
  use: "accepted" | "not_rejected";
  /** The review files read, absolute, with the SHA-256 of each one's text. */
  files: { file: string; sha256: string }[];
  /** Items of the ability the review left out (rejected; with `accepted`, also those not accepted). */
  leftOut: number;
  /** Items used with a reviewer's answer instead of the dataset's. */
  corrected: number;
  /** The share of its reviewed labels found right (in the review's sample where it has one), before `limit`. */
  accuracy: LabelAccuracy;
  /** Some file's review has a random sample, and the accuracy is measured on it. */
  sampled: boolean;
}

export interface ResolvedAblation {
  /** Ascending and distinct. */
  k: number[];
  selections: Selection[];
  /** The importance rules, in the config's order (one or both); each gets its own rankings and variants. */
  methods: ImportanceMethod[];
  frontRemoval: number;
  backRemoval: number;
  batchSize: number;
  /**
   * Present when the config sets `ablation.batch_size`, which is then kept; without it, on the
   * config's `gpu` the job's batch is the largest that fits (plan/compile.ts).
   */
  batchSizeSet?: true;
  /** Rank each ability's top sets from two seeded halves of its items too (docs/method.md, "Ranking stability"). */
  stability: boolean;
  /**
   * Independent random sets per k and candidate set (`ablation.random_draws`, the random control's
   * spread); present only when more than 1 and `random` is selected: absent, the one draw of every run.
   */
  randomDraws?: number;
  /** Two abilities ablated together (names, each pair once); absent without `ablation.pairs`. */
  pairs?: [string, string][];
  /** The candidate sets (`ablation.candidates`), in the config's order; each is ranked by every rule. Absent: the MLP's. */
  candidates?: CandidateSet[];
  /** Per candidate set ranked by some rules only (`{set, method}` in `ablation.candidates`), those rules; absent: every rule. */
  candidateMethods?: Partial<Record<CandidateSet, ImportanceMethod[]>>;
  /** The fluency measure's text and threshold (docs/method.md, "Fluency"); the config always has one, a job built without it scores none. */
  fluency?: ResolvedFluency;
}

/** The rankings each ability gets: every candidate set under its rules (its own where `candidates` names them, else every rule of `method`). */
export function rankingRuleCount(ablation: Pick<ResolvedAblation, "methods" | "candidates" | "candidateMethods">): number {
  return (ablation.candidates ?? ["mlp"]).reduce((n, set) => n + (ablation.candidateMethods?.[set] ?? ablation.methods).length, 0);
}

export interface ResolvedFluency {
  /** `built-in`, or the absolute path of the config's `ablation.fluency.text`. */
  source: string;
  text: string;
  maxPerplexityRatio: number;
}

export const DEFAULT_SELECTIONS: readonly Selection[] = ["top", "random"];
export const DEFAULT_BATCH_SIZE = 8;
export const DEFAULT_SEED = 1;
/** The most `ablation.random_draws` a config may ask for (the schema's maximum; the runner's too). */
export const MAX_RANDOM_DRAWS = 100;

/** The random control's draws per k and candidate set: 1 unless `random_draws` asks for more. */
export function randomDrawsOf(ablation: Pick<ResolvedAblation, "randomDraws">): number {
  return ablation.randomDraws ?? 1;
}
/**
 * A variant whose perplexity of the text is more than this many times the model's is marked as
 * having lost its fluency. Twice the perplexity is a mean log-likelihood ln 2 = 0.69 nats per
 * token lower: the model finds ordinary prose as surprising as if every token were a coin flip
 * harder to guess. The paper's MLP-only ablations at its k stay far below this; zeroing the same
 * share of all weights (attention included) goes far past it (its Table 4).
 */
export const DEFAULT_MAX_PERPLEXITY_RATIO = 2;

/** What the checks need to know about the resolved models and benchmarks. */
export interface AbilityCheckContext {
  root: string;
  models: readonly { name: string; path: string }[];
  /** The benchmarks, whose documents the diagnostic datasets' contamination check reads. */
  benchmarks: readonly ResolvedBenchmark[];
  inputs: ProfileInputs;
}

export interface AbilitySection {
  abilities: ResolvedAbility[];
  ablation?: ResolvedAblation;
  problems: Problem[];
}

export async function checkAbilitySection(
  config: ProfileConfig,
  source: YamlSource,
  context: AbilityCheckContext,
): Promise<AbilitySection> {
  const problems: Problem[] = [];
  const specs = config.abilities ?? [];
  if (specs.length === 0) {
    if (config.ablation)
      problems.push(
        source.at(["ablation"], "config.no-effect", "`ablation` has no effect without `abilities`: the run only scores the benchmarks", {
          on: "key",
        }),
      );
    if (config.bootstrap)
      problems.push(
        source.at(
          ["bootstrap"],
          "config.no-effect",
          "`bootstrap` has no effect without `abilities`: there is no AIS to put an interval on",
          { on: "key" },
        ),
      );
    return { abilities: [], problems };
  }
  const abilities = await loadAbilities(config, source, context, problems);
  if (!config.ablation) {
    problems.push(
      source.at(
        ["abilities"],
        "config.ablation-missing",
        "`abilities` need `ablation` with the fractions k of parameters to zero, e.g. `ablation: {k: [0.01024]}` (the paper's main result)",
        { on: "key" },
      ),
    );
    return { abilities, problems };
  }
  const fluency = await resolveFluency(config.ablation.fluency, source, context, problems);
  const pairs = resolvePairs(config, source, problems);
  const ablation = { ...resolveAblation(config.ablation), fluency, ...(pairs.length > 0 ? { pairs } : {}) };
  problems.push(...candidateSetProblems(config, source));
  problems.push(...randomDrawsProblems(config, source, ablation));
  if (ablation.candidates?.includes("all") && ablation.stability)
    problems.push(
      source.at(
        ["ablation", "candidates"],
        "config.invalid-value",
        "`candidates: all` cannot go with `stability: true`: the ranking's stability is measured on the MLP candidates only",
      ),
    );
  problems.push(...(await ablationProblems(config, source, context, ablation)));
  return { abilities, ablation, problems };
}

/** The config's fluency text (the built-in one when it names none, or when its file cannot be read: a problem says so). */
async function resolveFluency(
  spec: AblationSpec["fluency"],
  source: YamlSource,
  context: AbilityCheckContext,
  problems: Problem[],
): Promise<ResolvedFluency> {
  const maxPerplexityRatio = spec?.max_perplexity_ratio ?? DEFAULT_MAX_PERPLEXITY_RATIO;
  const builtIn = { source: "built-in", text: BUILT_IN_FLUENCY_TEXT, maxPerplexityRatio };
  if (spec?.text === undefined) return builtIn;
  const file = path.resolve(context.root, spec.text);
  const field = ["ablation", "fluency", "text"];
  let text: string;
  try {
    text = await context.inputs.files.read(file);
  } catch (e) {
    problems.push(source.at(field, "config.invalid-value", `cannot read the fluency text ${file}: ${(e as Error).message}`));
    return builtIn;
  }
  if (fluencyParagraphs(text).length === 0) {
    problems.push(source.at(field, "config.invalid-value", `the fluency text ${file} holds no text to score`));
    return builtIn;
  }
  return { source: file, text, maxPerplexityRatio };
}

function resolveAblation(spec: NonNullable<ProfileConfig["ablation"]>): Omit<ResolvedAblation, "fluency"> {
  const selections = spec.selections ?? [...DEFAULT_SELECTIONS];
  return {
    k: [...spec.k].sort((a, b) => a - b),
    selections,
    methods: Array.isArray(spec.method) ? [...spec.method] : [spec.method ?? "paper"],
    frontRemoval: spec.front_removal ?? 0,
    backRemoval: spec.back_removal ?? 0,
    batchSize: spec.batch_size ?? DEFAULT_BATCH_SIZE,
    ...(spec.batch_size !== undefined ? { batchSizeSet: true as const } : {}),
    stability: spec.stability ?? false,
    ...randomDrawsOfSpec(spec, selections),
    candidates: Array.isArray(spec.candidates) ? spec.candidates.map(setName) : [spec.candidates ?? "mlp"],
    ...candidateMethodsOf(spec),
  };
}

/** `random_draws` where it draws: more than 1 (and a whole number the schema allows), with `random` selected. */
function randomDrawsOfSpec(spec: AblationSpec, selections: readonly Selection[]): Pick<ResolvedAblation, "randomDraws"> {
  const draws = spec.random_draws;
  const usable = draws !== undefined && Number.isInteger(draws) && draws > 1 && draws <= MAX_RANDOM_DRAWS;
  return usable && selections.includes("random") ? { randomDraws: draws } : {};
}

/** `random_draws` draws the random control again: without `random` among the selections there is none to draw. */
function randomDrawsProblems(config: ProfileConfig, source: YamlSource, ablation: ResolvedAblation): Problem[] {
  const draws = config.ablation?.random_draws;
  if (draws === undefined || !(draws > 1) || ablation.selections.includes("random")) return [];
  return [
    source.at(
      ["ablation", "random_draws"],
      "config.no-effect",
      `\`random_draws: ${draws}\` has no effect without \`random\` in \`selections\`: it draws the random control ${draws} times, and there is none (add \`random\` to \`selections\`)`,
      { on: "key" },
    ),
  ];
}

/** `ablation.candidates` as a list: each set once, and a set's own rules among `method`'s. */
function candidateSetProblems(config: ProfileConfig, source: YamlSource): Problem[] {
  const list = config.ablation?.candidates;
  if (!Array.isArray(list)) return [];
  const methods = Array.isArray(config.ablation!.method) ? config.ablation!.method : [config.ablation!.method ?? "paper"];
  const problems: Problem[] = [];
  list.forEach((entry, i) => {
    const set = setName(entry);
    if (list.findIndex((e) => setName(e) === set) !== i)
      problems.push(source.at(["ablation", "candidates", i], "config.invalid-value", `\`${set}\` is named twice in \`candidates\``));
    if (typeof entry === "string") return;
    for (const m of Array.isArray(entry.method) ? entry.method : [entry.method])
      if (!methods.includes(m))
        problems.push(
          source.at(
            ["ablation", "candidates", i, "method"],
            "config.invalid-value",
            `\`${m}\` is not a rule of \`ablation.method\` (${methods.join(", ")}): a candidate set is ranked by the config's rules only`,
          ),
        );
  });
  return problems;
}

function setName(entry: CandidateSet | CandidateSetSpec): CandidateSet {
  return typeof entry === "string" ? entry : entry.set;
}

/** The rules of the candidate sets that name theirs (`{set, method}`), in `method`'s order. */
function candidateMethodsOf(spec: NonNullable<ProfileConfig["ablation"]>): Pick<ResolvedAblation, "candidateMethods"> {
  if (!Array.isArray(spec.candidates)) return {};
  const methods = Array.isArray(spec.method) ? spec.method : [spec.method ?? "paper"];
  const named = spec.candidates.flatMap((c) => (typeof c === "string" ? [] : [c]));
  if (named.length === 0) return {};
  const only = (c: CandidateSetSpec) => methods.filter((m) => (Array.isArray(c.method) ? c.method : [c.method]).includes(m));
  return { candidateMethods: Object.fromEntries(named.map((c) => [c.set, only(c)])) };
}

async function loadAbilities(
  config: ProfileConfig,
  source: YamlSource,
  context: AbilityCheckContext,
  problems: Problem[],
): Promise<ResolvedAbility[]> {
  const specs = config.abilities ?? [];
  const declared = specs.map((a) => a.name);
  const declaredSet = new Set(declared);
  const seenNames = new Map<string, number>();
  const datasets = new Map<string, Promise<DiagnosticDatasetCheck>>();
  const benchmarkIndex = context.inputs.benchmarkIndex(context.benchmarks);
  const load = (file: string) => {
    let loaded = datasets.get(file);
    if (!loaded) {
      loaded = context.inputs.dataset(file, { abilities: declared, ...(benchmarkIndex ? { benchmarkIndex } : {}) });
      datasets.set(file, loaded);
    }
    return loaded;
  };
  const reviews = new Map<string, Promise<LoadedReview | undefined>>();
  const loadReview = (file: string) => {
    let loaded = reviews.get(file);
    if (!loaded) {
      loaded = loadReviewOf(file, context.inputs.files);
      reviews.set(file, loaded);
    }
    return loaded;
  };
  const reported = new Set<string>();
  const abilities: ResolvedAbility[] = [];

  for (const [i, spec] of specs.entries()) {
    const first = seenNames.get(spec.name);
    if (first !== undefined) {
      problems.push(
        source.at(
          ["abilities", i, "name"],
          "config.ability-declared-twice",
          `ability \`${spec.name}\` is declared twice (first as abilities[${first}]): list its datasets under one entry's \`data\``,
        ),
      );
    } else {
      seenNames.set(spec.name, i);
    }
    // A second set's name is its own label ("Spatial Reasoning (set B)"): it is meant to be near its ability's.
    const suggestion = spec.of === undefined ? nearMissAbility(spec.name, PAPER_ABILITIES) : undefined;
    const earlier = declared.slice(0, i).filter((name) => name !== spec.name);
    const twin = suggestion === undefined && spec.of === undefined ? nearMissAbility(spec.name, earlier) : undefined;
    if (spec.of !== undefined) problems.push(...ofProblems(specs, i, source));
    if (suggestion !== undefined) {
      problems.push(
        source.at(
          ["abilities", i, "name"],
          "config.ability-near-miss",
          `ability \`${spec.name}\` is not one of the paper's abilities: did you mean \`${suggestion}\`? (a new ability is fine; a misspelt one does not match the items of \`${suggestion}\`)`,
          { data: { suggestion } },
        ),
      );
    } else if (twin !== undefined) {
      problems.push(
        source.at(
          ["abilities", i, "name"],
          "config.ability-near-twin",
          `ability \`${spec.name}\` is almost the name of \`${twin}\`, declared above: if they are one ability, declare it once with both datasets under \`data\``,
          { data: { suggestion: twin } },
        ),
      );
    }

    const entries =
      typeof spec.data === "string"
        ? [{ file: spec.data, at: ["abilities", i, "data"] }]
        : spec.data.map((file, j) => ({ file, at: ["abilities", i, "data", j] }));
    const separate = spec.sets === "separate";
    if (separate) problems.push(...separateSetsProblems(spec, i, source));
    // `sets: separate`: each file a set of its own, the first the ability's, the others second sets of it.
    const groups = separate && entries.length > 1 ? entries.map((entry) => [entry]) : [entries];
    for (const [g, group] of groups.entries()) {
      const files: string[] = [];
      const items: DiagnosticItem[] = [];
      const abilitiesInFiles = new Set<string>();
      const review = new ReviewTally(spec.review === "accepted" ? "accepted" : "not_rejected");
      let usable = true;
      for (const entry of group) {
        const file = path.resolve(context.root, entry.file);
        files.push(file);
        if (!(await isFile(file))) {
          problems.push(
            source.at(entry.at, "config.dataset-not-found", `diagnostic dataset not found: ${file}`, {
              data: { file, ability: spec.name },
            }),
          );
          usable = false;
          continue;
        }
        const loaded = await load(file);
        if (!reported.has(file)) {
          reported.add(file);
          problems.push(...datasetProblems(loaded, file, entry.at, declaredSet, source));
        }
        if (errorsOf(loaded.problems).length > 0) usable = false;
        const byAbility = itemsByAbility(loaded);
        for (const name of byAbility.keys()) abilitiesInFiles.add(name);
        const ofAbility = byAbility.get(spec.of ?? spec.name) ?? [];
        if (spec.review === "ignore") {
          items.push(...ofAbility);
          continue;
        }
        const reviewed = await loadReview(file);
        if (reviewed && !reported.has(reviewed.file)) {
          reported.add(reviewed.file);
          problems.push(...reviewed.problems);
        }
        if (!reviewed && spec.review === "accepted") {
          problems.push(
            source.at(
              ["abilities", i, "review"],
              "config.review-missing",
              `\`review: accepted\` uses only reviewed items, and ${path.basename(file)} has no review file (${path.basename(file).replace(/\.diag\.jsonl$|\.jsonl$/, "")}.review.jsonl): review it in the editor (Benchmark Profiler: Review Dataset), or use \`review: not_rejected\``,
            ),
          );
          usable = false;
          continue;
        }
        if (!reviewed) {
          if (spec.review === "not_rejected")
            problems.push(
              source.at(
                ["abilities", i, "review"],
                "config.no-effect",
                `\`review: not_rejected\` has no effect on ${path.basename(file)}: it has no review file yet, so every item is used`,
                { on: "key" },
              ),
            );
          items.push(...ofAbility);
          continue;
        }
        const chosen = reviewedItems(ofAbility, reviewed.review, review.use, reviewed.file);
        problems.push(...chosen.problems);
        if (errorsOf(chosen.problems).length > 0) usable = false;
        review.add(reviewed, chosen);
        items.push(...chosen.items);
      }
      if (usable && items.length === 0) {
        const found =
          abilitiesInFiles.size > 0 ? `its items are for ${[...abilitiesInFiles].map((a) => `\`${a}\``).join(", ")}` : "it has no items";
        problems.push(
          source.at(
            groups.length > 1 ? group[0]!.at : ["abilities", i, "data"],
            "config.ability-no-items",
            `no diagnostic item has \`"ability": "${spec.of ?? spec.name}"\`${groups.length > 1 ? " in this set" : ""}: ${found}`,
          ),
        );
      }
      const of = g > 0 ? spec.name : spec.of;
      const name = g > 0 ? separateSetName(spec.name, g) : spec.name;
      abilities.push({
        name,
        files,
        items: spec.limit !== undefined ? items.slice(0, spec.limit) : items,
        ...(of !== undefined ? { of } : {}),
        ...review.resolved(name),
      });
    }
  }
  return abilities;
}

/** An ability's review as results.json records it. */
export function reviewRecord(review: AbilityReview): ReviewRecord {
  const a = review.accuracy.accuracy;
  return {
    use: review.use,
    files: review.files,
    left_out: review.leftOut,
    corrected: review.corrected,
    label_accuracy: { right: a.k, reviewed: a.n, low: a.low, high: a.high, sample: review.sampled },
  };
}

/** The reviews behind one ability's items, summed over its files. */
class ReviewTally {
  private readonly files: { file: string; sha256: string }[] = [];
  private readonly reviews: ItemReview[] = [];
  private leftOut = 0;
  private corrected = 0;
  private sampled = false;

  constructor(readonly use: "accepted" | "not_rejected") {}

  add(review: LoadedReview, chosen: ReturnType<typeof reviewedItems>): void {
    this.files.push({ file: review.file, sha256: review.sha256 });
    this.reviews.push(...chosen.reviews.filter((r) => r.sampled));
    this.leftOut += chosen.leftOut;
    this.corrected += chosen.corrected;
    if (review.review.sample) this.sampled = true;
  }

  resolved(ability: string): Pick<ResolvedAbility, "review"> {
    if (this.files.length === 0) return {};
    return {
      review: {
        use: this.use,
        files: this.files,
        leftOut: this.leftOut,
        corrected: this.corrected,
        accuracy: labelAccuracy(ability, this.reviews),
        sampled: this.sampled,
      },
    };
  }
}

/** The name of the `g`-th set (from 0) of an ability whose files are separate sets: `Spatial Reasoning (set 2)`. */
export function separateSetName(ability: string, g: number): string {
  return `${ability} (set ${g + 1})`;
}

/** `sets: separate` needs two files or more, and an ability of its own (not a second set). */
function separateSetsProblems(spec: AbilitySpec, i: number, source: YamlSource): Problem[] {
  const files = typeof spec.data === "string" ? 1 : spec.data.length;
  if (spec.of !== undefined)
    return [
      source.at(
        ["abilities", i, "sets"],
        "config.invalid-value",
        `\`sets: separate\` cannot go with \`of\`: this entry is already a second set of \`${spec.of}\`; list the sets under \`${spec.of}\`'s \`data\``,
      ),
    ];
  if (files < 2)
    return [
      source.at(
        ["abilities", i, "sets"],
        "config.no-effect",
        "`sets: separate` has no effect with one file in `data`: list the diagnostic sets to compare, `data: [a.diag.jsonl, b.diag.jsonl]`",
        { on: "key" },
      ),
    ];
  return [];
}

/** What a diagnostic dataset's check found, and the config's word on it, at the entry that names the file. */
function datasetProblems(
  loaded: DiagnosticDatasetCheck,
  file: string,
  at: (string | number)[],
  declared: ReadonlySet<string>,
  source: YamlSource,
): Problem[] {
  const problems = [...loaded.problems];
  if (errorsOf(loaded.problems).length > 0) {
    problems.push(
      source.at(at, "config.dataset-has-errors", `the diagnostic dataset ${path.basename(file)} has errors (see ${file})`, {
        data: { file },
      }),
    );
  }
  const undeclared = [...itemsByAbility(loaded)].filter(([name]) => !declared.has(name));
  if (undeclared.length > 0) {
    const list = undeclared.map(([name, its]) => `\`${name}\` (${its.length})`).join(", ");
    problems.push(
      source.at(
        at,
        "config.dataset-undeclared-abilities",
        `${path.basename(file)} has items of abilities not declared in \`abilities\`, which are not used: ${list}`,
      ),
    );
  }
  return problems;
}

/** A second set's `of` must name another ability of the config that is not itself a second set. */
function ofProblems(specs: readonly AbilitySpec[], i: number, source: YamlSource): Problem[] {
  const of = specs[i]!.of!;
  const candidates = specs.filter((s, j) => j !== i && s.of === undefined).map((s) => s.name);
  if (candidates.includes(of)) return [];
  const secondSet = specs.some((s, j) => j !== i && s.name === of);
  if (secondSet || of === specs[i]!.name) {
    return [
      source.at(
        ["abilities", i, "of"],
        "config.unknown-of-ability",
        of === specs[i]!.name
          ? `\`of: ${of}\` names this entry itself: name the ability this set is a second set of`
          : `\`${of}\` is itself a second set (it has \`of\`): name the ability it is a set of`,
      ),
    ];
  }
  const guess = nearMissAbility(of, candidates);
  return [
    source.at(
      ["abilities", i, "of"],
      "config.unknown-of-ability",
      `\`${of}\` is not one of this config's abilities${guess ? `: did you mean \`${guess}\`?` : candidates.length > 0 ? ` (${candidates.map((a) => `\`${a}\``).join(", ")})` : ""}`,
      guess ? { data: { suggestion: guess } } : {},
    ),
  ];
}

const groupedItems = new WeakMap<DiagnosticDatasetCheck, Map<string, DiagnosticItem[]>>();

/** A dataset's items by ability, in file order: grouped once per check (an editor re-checks a config often). */
function itemsByAbility(dataset: DiagnosticDatasetCheck): Map<string, DiagnosticItem[]> {
  let groups = groupedItems.get(dataset);
  if (!groups) {
    groups = new Map();
    for (const item of dataset.items) {
      const group = groups.get(item.ability);
      if (group) group.push(item);
      else groups.set(item.ability, [item]);
    }
    groupedItems.set(dataset, groups);
  }
  return groups;
}

/**
 * k against each model whose config.json is readable: n = floor(k x P) must not exceed the MLP
 * candidates of the included layers (the runner refuses such a job), and an n of 0 ablates
 * nothing. Layer removal must leave a layer.
 */
async function ablationProblems(
  config: ProfileConfig,
  source: YamlSource,
  context: AbilityCheckContext,
  ablation: ResolvedAblation,
): Promise<Problem[]> {
  const problems: Problem[] = [];
  const k = config.ablation!.k;
  // Where each value sits in the file: the runner sees them sorted, the user as written.
  const kIndex = (value: number) => k.indexOf(value);
  for (const model of context.models) {
    const count = await readParameterCount(model.path);
    if (!count) continue;
    const { frontRemoval, backRemoval } = ablation;
    if (frontRemoval + backRemoval >= count.layers) {
      const at = frontRemoval > 0 ? "front_removal" : "back_removal";
      problems.push(
        source.at(
          ["ablation", at],
          "config.layers-excluded",
          `front_removal + back_removal = ${frontRemoval + backRemoval} excludes every layer of model \`${model.name}\` (${count.layers} layers): no candidate is left`,
        ),
      );
      continue;
    }
    // k must fit every candidate set; the MLP's is the smaller when both are asked for
    const set = ablation.candidates?.includes("all") && !ablation.candidates.includes("mlp") ? "all" : "mlp";
    const candidates = candidateCount(count, frontRemoval, backRemoval, set);
    const share = candidates / count.total;
    const layers = frontRemoval + backRemoval > 0 ? ` of layers ${frontRemoval}..${count.layers - backRemoval - 1}` : "";
    for (const value of ablation.k) {
      const n = selectedCount(value, count.total);
      const at = ["ablation", "k", kIndex(value)];
      if (n > candidates) {
        problems.push(
          source.at(
            at,
            "config.k-too-large",
            `k = ${value} selects floor(k x ${count.total}) = ${n} parameters of model \`${model.name}\`, more than its ${candidates} ${set === "all" ? "attention and MLP" : "MLP"} candidates${layers} ` +
              `(${(100 * share).toFixed(2)}% of its parameters): k must be at most ${candidates} / ${count.total} = ${share.toPrecision(4)}`,
            { data: { suggestion: String(significantDigits(share, 4, "down")) } },
          ),
        );
      } else if (n === 0) {
        problems.push(
          source.at(
            at,
            "config.k-selects-nothing",
            `k = ${value} selects floor(k x ${count.total}) = 0 parameters of model \`${model.name}\`: its variants are the unmodified model`,
            { data: { suggestion: String(significantDigits(1 / count.total, 2, "up")) } },
          ),
        );
      }
    }
  }
  return problems;
}

/** `x` to `digits` significant digits, rounded towards `direction`, so a suggested k stays on the right side of a bound. */
export function significantDigits(x: number, digits: number, direction: "up" | "down"): number {
  const scale = 10 ** (digits - 1 - Math.floor(Math.log10(x)));
  const scaled = x * scale;
  // Guard against x * scale landing a hair off an integer through floating point.
  const nearest = Math.round(scaled);
  const rounded = Math.abs(scaled - nearest) < 1e-9 ? nearest : direction === "down" ? Math.floor(scaled) : Math.ceil(scaled);
  return Number((rounded / scale).toPrecision(digits));
}
