// A hand-made run folder for report tests: results.json (schema 1) with concrete cells and the
// per-item files behind them. One model (its name needs CSV quoting), three abilities (one with
// "&", one with Markdown and LaTeX specials), two benchmarks, k = 0.001 and 0.01, top + random.
//
// At k = 0.01, metric acc:
//   Commonsense & Causal Reasoning: arc_easy AIS 0.5 [0.2, 0.8] significant (document 0 right -> wrong),
//                                   logiqa  AIS -1 [-2, 0] (document 13 wrong -> right)
//   Quantitative_Reasoning|50%:     arc_easy AIS 0.25 [-0.1, 0.6], logiqa 0 [0, 0]
//   Spatial Reasoning:              arc_easy 0, logiqa 0
//   random control:                 0 everywhere
// Under acc_norm, logiqa's baseline is at chance: AIS n/a with the reason below. At k = 0.001
// every AIS is 0 with CI [0, 0].
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { scoreItem, type ScoredItem } from "../../src/core/analysis/accuracy";
import { profilesOf, type CellMetric, type Results, type VariantResult } from "../../src/core/results/schema";
import { SATURATED_REASON } from "../../src/core/results/significance";

export const MODEL = 'tiny "m", v1';
export const MODEL_FOLDER = "tiny_m_v1";
export const CAUSAL = "Commonsense & Causal Reasoning";
export const QUANT = "Quantitative_Reasoning|50%";
export const SPATIAL = "Spatial Reasoning";
export const AT_CHANCE =
  "AIS is undefined: the baseline score 0.5000 is at chance (0.5000), so there is no above-chance performance for an ablation to remove.";

const CHOICES4 = ["a", "bb", "ccc", "dddd"];
const CHOICES2 = ["yes", "no"];

/** An item answered `predicted` (log-likelihood -1; the others -3, -4, ...). */
function item(benchmark: string, index: number, target: number, predicted: number, choices: string[]): ScoredItem {
  const logprobs = choices.map((_, i) => (i === predicted ? -1 : -3 - i));
  return scoreItem(
    benchmark,
    index,
    target,
    choices,
    logprobs.map((logprob) => ({ logprob, tokens: 1, greedy: false })),
  );
}

/** arc_easy: documents 0-3, targets 0-3, documents 0-2 right. logiqa: documents 10-13, 10-12 right. */
export function baselineItems(): ScoredItem[] {
  return [
    item("arc_easy", 0, 0, 0, CHOICES4),
    item("arc_easy", 1, 1, 1, CHOICES4),
    item("arc_easy", 2, 2, 2, CHOICES4),
    item("arc_easy", 3, 3, 0, CHOICES4),
    item("logiqa", 10, 0, 0, CHOICES2),
    item("logiqa", 11, 1, 1, CHOICES2),
    item("logiqa", 12, 0, 0, CHOICES2),
    item("logiqa", 13, 1, 0, CHOICES2),
  ];
}

/** The causal ability's top set at k = 0.01: document 0 turns wrong, document 13 turns right. */
export function causalItems(): ScoredItem[] {
  return baselineItems().map((i) =>
    i.index === 0 ? item("arc_easy", 0, 0, 1, CHOICES4) : i.index === 13 ? item("logiqa", 13, 1, 1, CHOICES2) : i,
  );
}

function cell(over: Partial<CellMetric> & Pick<CellMetric, "baseline" | "ablated" | "chance">): CellMetric {
  return {
    ais: 0,
    ci: { low: 0, high: 0, confidence: 0.95 },
    significant: false,
    undefined_resamples: 0,
    flips: { right_to_wrong: 0, wrong_to_right: 0 },
    ...over,
  };
}

function undefinedCell(ablated: number): CellMetric {
  return {
    baseline: 0.5,
    ablated,
    chance: 0.5,
    ais: null,
    reason: AT_CHANCE,
    ci: null,
    significant: false,
    undefined_resamples: 0,
    flips: { right_to_wrong: 0, wrong_to_right: 0 },
  };
}

const zeroSpecificity = { value: 0, ci: { low: 0, high: 0, confidence: 0.95 }, significant: false };

function variant(
  ability: string | null,
  id: string | null,
  selection: "top" | "random",
  ki: number,
  arc: CellMetric,
  logiqa: CellMetric,
): VariantResult {
  const k = [0.001, 0.01][ki]!;
  const name = id === null ? `random.k${ki}` : `${id}.${selection}.k${ki}`;
  return {
    ability,
    ability_id: id,
    selection,
    k,
    n: Math.floor(k * 100000),
    ...(id === null ? {} : { lowering: Math.floor(k * 100000 * 0.5) + ki }),
    scores_file: `runner/variants/${name}.jsonl`,
    items_file: `variants/${name}.items.jsonl`,
    benchmarks: [
      { name: "arc_easy", acc: arc, acc_norm: cell({ baseline: 0.75, ablated: 0.75, chance: 0.25 }) },
      { name: "logiqa", acc: logiqa, acc_norm: undefinedCell(0.5) },
    ],
  };
}

export function fixtureResults(): Results {
  const neutralArc = () => cell({ baseline: 0.75, ablated: 0.75, chance: 0.25, specificity: zeroSpecificity });
  const neutralLogiqa = () => cell({ baseline: 0.75, ablated: 0.75, chance: 0.5, specificity: zeroSpecificity });
  const variants: VariantResult[] = [];
  for (const [ability, id] of [
    [CAUSAL, "commonsense-and-causal-reasoning"],
    [QUANT, "quantitative-reasoning-50"],
    [SPATIAL, "spatial-reasoning"],
  ] as const) {
    variants.push(variant(ability, id, "top", 0, neutralArc(), neutralLogiqa()));
    if (ability === CAUSAL) {
      variants.push(
        variant(
          ability,
          id,
          "top",
          1,
          cell({
            baseline: 0.75,
            ablated: 0.5,
            chance: 0.25,
            ais: 0.5,
            ci: { low: 0.2, high: 0.8, confidence: 0.95 },
            significant: true,
            flips: { right_to_wrong: 1, wrong_to_right: 0 },
            specificity: { value: 0.5, ci: { low: 0.2, high: 0.8, confidence: 0.95 }, significant: true },
          }),
          cell({
            baseline: 0.75,
            ablated: 1,
            chance: 0.5,
            ais: -1,
            ci: { low: -2, high: 0, confidence: 0.95 },
            significant: false,
            flips: { right_to_wrong: 0, wrong_to_right: 1 },
            specificity: { value: -1, ci: { low: -2, high: 0, confidence: 0.95 }, significant: false },
          }),
        ),
      );
    } else if (ability === QUANT) {
      variants.push(
        variant(
          ability,
          id,
          "top",
          1,
          cell({
            baseline: 0.75,
            ablated: 0.625,
            chance: 0.25,
            ais: 0.25,
            ci: { low: -0.1, high: 0.6, confidence: 0.95 },
            significant: false,
            specificity: { value: 0.25, ci: null, significant: false },
          }),
          neutralLogiqa(),
        ),
      );
    } else {
      variants.push(variant(ability, id, "top", 1, neutralArc(), neutralLogiqa()));
    }
  }
  variants.push(
    variant(
      null,
      null,
      "random",
      0,
      cell({ baseline: 0.75, ablated: 0.75, chance: 0.25 }),
      cell({ baseline: 0.75, ablated: 0.75, chance: 0.5 }),
    ),
  );
  variants.push(
    variant(
      null,
      null,
      "random",
      1,
      cell({ baseline: 0.75, ablated: 0.75, chance: 0.25 }),
      cell({ baseline: 0.75, ablated: 0.75, chance: 0.5 }),
    ),
  );
  return {
    schema: "bprof.results",
    schema_version: 1,
    run_id: "20260101-120000-abcd",
    created: "2026-01-01T12:00:00.000Z",
    config_file: "/work/project/profile.bprof.yaml",
    runner_version: "0.1.0",
    models: [
      {
        name: MODEL,
        path: "/work/project/model",
        dtype: "float32",
        benchmarks: [
          { name: "arc_easy", task_file: "/work/project/tasks/arc_easy.yaml", items: 4, acc: 0.75, acc_norm: 0.75, chance: 0.25 },
          { name: "logiqa", task_file: "/work/project/tasks/logiqa.yaml", items: 4, acc: 0.75, acc_norm: 0.5, chance: 0.5 },
        ],
        profile: {
          parameters: 100000,
          candidates: 40000,
          k: [0.001, 0.01],
          selections: ["top", "random"],
          method: "paper",
          seed: 3,
          bootstrap: { resamples: 1000, confidence: 0.95, seed: 3 },
          abilities: [
            { name: CAUSAL, id: "commonsense-and-causal-reasoning", sequences: 12 },
            { name: QUANT, id: "quantitative-reasoning-50", sequences: 10 },
            { name: SPATIAL, id: "spatial-reasoning", sequences: 8 },
          ],
          variants,
          overlap: [0.001, 0.01].map((k) => {
            const n = Math.floor(k * 100000);
            const shared = k === 0.01 ? 250 : 20;
            const intersections = [
              [n, shared, 0],
              [shared, n, 10],
              [0, 10, n],
            ];
            return {
              k,
              n,
              abilities: [CAUSAL, QUANT, SPATIAL],
              intersections,
              jaccard: intersections.map((row) => row.map((x) => x / (2 * n - x))),
            };
          }),
        },
      },
    ],
  };
}

/**
 * The results with `top_chunked` selected: per ability and k a chunked set of n + 3 weights with
 * the cells of the ability's top variant; Causal's shares n - 100 with its exact top n, the others all n.
 */
export function withChunkedTopSets(results: Results): Results {
  const profile = results.models[0]!.profile!;
  profile.selections = ["top", "top_chunked", "random"];
  for (const top of profile.variants.filter((v) => v.selection === "top")) {
    const n = top.n + 3;
    const shared = top.ability === CAUSAL ? top.n - 100 : top.n;
    const name = `${top.ability_id}.top_chunked.k${top.k === 0.001 ? 0 : 1}`;
    profile.variants.push({
      ...structuredClone(top),
      selection: "top_chunked",
      n,
      exact_top: { n: top.n, shared, jaccard: shared / (n + top.n - shared) },
      scores_file: `runner/variants/${name}.jsonl`,
      items_file: `variants/${name}.items.jsonl`,
    });
  }
  return results;
}

/**
 * The results of a run with `ablation.stability`: Causal's halves (6 + 6 items) share 40 of their
 * top 100 and 700 of their top 1,000; Quant's 10 and 100; Spatial, with one item, has none.
 */
export function withStability(results: Results): Results {
  const profile = results.models[0]!.profile!;
  const byK = (shared: [number, number]) =>
    [0.001, 0.01].map((k, i) => {
      const n = Math.floor(k * 100000);
      return { k, n, shared: shared[i]!, jaccard: shared[i]! / (2 * n - shared[i]!) };
    });
  profile.stability = [
    { ability: CAUSAL, ability_id: "commonsense-and-causal-reasoning", halves: [6, 6], by_k: byK([40, 700]) },
    { ability: QUANT, ability_id: "quantitative-reasoning-50", halves: [5, 5], by_k: byK([10, 100]) },
  ];
  return results;
}

const jsonl = (rows: readonly unknown[]) => rows.map((r) => JSON.stringify(r)).join("\n") + "\n";

/** Writes the run folder into a new temporary directory and returns its path. */
/**
 * The fixture ranked by both rules: the signed rule's top sets are the paper's, but for the
 * causal ability's at k = 0.01, which hurts no benchmark (its items the baseline's), in files of
 * their own; the random control is shared.
 */
export function withSignedRule(results: Results): Results {
  const out = structuredClone(results);
  const model = out.models[0]!;
  const signed = structuredClone(model.profile!);
  signed.method = "signed";
  signed.variants = signed.variants.map((v) => {
    if (v.ability === null) return v;
    const renamed = { ...v, items_file: v.items_file.replace(/\.jsonl$/, ".signed.jsonl"), lowering: 0 };
    if (v.ability !== CAUSAL || v.k !== 0.01) return renamed;
    return {
      ...renamed,
      benchmarks: renamed.benchmarks.map((b) => ({
        ...b,
        ...(b.acc
          ? { acc: { ...b.acc, ablated: b.acc.baseline, ais: 0, ci: { low: 0, high: 0, confidence: 0.95 }, significant: false } }
          : {}),
      })),
    };
  });
  model.other_methods = [signed];
  return out;
}

export async function writeFixtureRun(results: Results = fixtureResults()): Promise<string> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-report-"));
  const dir = path.join(root, "runs", results.run_id);
  const modelDir = path.join(dir, "models", MODEL_FOLDER);
  await fs.mkdir(path.join(modelDir, "variants"), { recursive: true });
  await fs.writeFile(path.join(dir, "results.json"), JSON.stringify(results, null, 2));
  await fs.writeFile(path.join(modelDir, "items.jsonl"), jsonl(baselineItems()));
  for (const v of profilesOf(results.models[0]!).flatMap((p) => p.variants)) {
    // the causal top set at k = 0.01 flips documents, unless a rule's cells say it changed nothing
    const hurts = v.ability === CAUSAL && v.k === 0.01 && v.benchmarks.some((b) => (b.acc?.ais ?? 0) !== 0);
    const items = hurts ? causalItems() : baselineItems();
    await fs.writeFile(path.join(modelDir, v.items_file), jsonl(items));
  }
  return dir;
}

/** The reason results.json gives a difference made of a saturated cell. */
export const SATURATED = SATURATED_REASON;

/**
 * The fixture as a run with the tests writes it (`stats`: Benjamini-Hochberg at 0.05): every
 * defined cell has a McNemar p and a q (0.5 and 0.8; Causal's arc_easy at k = 0.01 0.003 and
 * 0.0123, starred, with a random null of 19 draws), and its interval's verdict. At k = 0.01
 * Quantitative's arc_easy cell is saturated (ablated 0.25, its chance; AIS 1) and so
 * results.json stars it (q 0.001), its specificity not defined; the random control is drawn
 * 19 times. The benchmarks' noise at k = 0.01 (acc): logiqa snr 4, arc_easy 0.625 (noise); at
 * k = 0.001: arc_easy 2, logiqa 0.5. A pair of Causal and Quantitative at k = 0.01: its
 * interference on arc_easy not defined (Quantitative is saturated there), on logiqa 0.1 [-0.2, 0.4].
 */
export function withTests(results: Results): Results {
  const out = structuredClone(results);
  const profile = out.models[0]!.profile!;
  profile.stats = { correction: "bh", threshold: 0.05, min_effect: 0.1 };
  for (const v of profile.variants)
    for (const b of v.benchmarks)
      for (const cell of [b.acc, b.acc_norm]) {
        if (!cell) continue;
        cell.interval_excludes_0 = cell.ais !== null && cell.significant;
        cell.test = "mcnemar";
        cell.p = cell.ais === null ? null : 0.5;
        cell.q = cell.ais === null ? null : 0.8;
        if (cell.specificity) {
          cell.specificity.test = "mcnemar";
          cell.specificity.p = cell.specificity.value === null ? null : 0.5;
          cell.specificity.q = cell.specificity.value === null ? null : 0.8;
        }
      }
  const at = (ability: string | null, benchmark: string) =>
    profile.variants.find((v) => v.ability === ability && v.k === 0.01)!.benchmarks.find((b) => b.name === benchmark)!.acc!;
  Object.assign(at(CAUSAL, "arc_easy").specificity!, { p: 0.004, q: 0.016 });
  Object.assign(at(CAUSAL, "arc_easy"), {
    p: 0.003,
    q: 0.0123,
    random_null: { draws: 19, mean: 0.02, sd: 0.1, p: 0.05, margin: 4.8 },
  });
  Object.assign(at(QUANT, "arc_easy"), {
    ablated: 0.25,
    ais: 1,
    ci: { low: 0.8, high: 1.2, confidence: 0.95 },
    significant: true,
    interval_excludes_0: true,
    p: 0.0002,
    q: 0.001,
    saturated: true,
    specificity: { value: null, reason: SATURATED, ci: null, significant: false, p: null, test: "mcnemar", q: null },
  });
  profile.random_draws = Array.from({ length: 18 }, (_, i) => ({
    k: 0.01,
    draw: i + 1,
    n: 1000,
    scores_file: `runner/variants/random.k1.d${i + 1}.jsonl`,
    items_file: `variants/random.k1.d${i + 1}.items.jsonl`,
    benchmarks: [
      { name: "arc_easy", acc: { ablated: 0.75, ais: 0 } },
      { name: "logiqa", acc: { ablated: 0.75, ais: 0 } },
    ],
  }));
  profile.noise = [
    { k: 0.001, metric: "acc", benchmark: "arc_easy", signal: 0.2, noise: 0.1, snr: 2 },
    { k: 0.001, metric: "acc", benchmark: "logiqa", signal: 0.05, noise: 0.1, snr: 0.5 },
    { k: 0.01, metric: "acc", benchmark: "arc_easy", signal: 0.25, noise: 0.4, snr: 0.625 },
    { k: 0.01, metric: "acc", benchmark: "logiqa", signal: 0.8, noise: 0.2, snr: 4 },
  ];
  profile.pairs = [
    {
      abilities: [CAUSAL, QUANT],
      ability_ids: ["commonsense-and-causal-reasoning", "quantitative-reasoning-50"],
      k: 0.01,
      n: 1750,
      scores_file: "runner/variants/pair.k1.jsonl",
      items_file: "variants/pair.k1.items.jsonl",
      benchmarks: [
        {
          name: "arc_easy",
          acc: {
            ais: 1,
            ci: { low: 0.9, high: 1.1, confidence: 0.95 },
            interference: null,
            interference_ci: null,
            reason: SATURATED,
            p: null,
            q: null,
            significant: false,
          },
        },
        {
          name: "logiqa",
          acc: {
            ais: -0.9,
            ci: { low: -1.5, high: -0.3, confidence: 0.95 },
            interference: 0.1,
            interference_ci: { low: -0.2, high: 0.4, confidence: 0.95 },
            p: 0.4,
            q: 0.6,
            significant: false,
          },
        },
      ],
    },
  ];
  return out;
}
