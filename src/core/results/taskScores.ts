// The per-document scores of tasks that score themselves in Python (lm-eval's process_results, or
// a `!function` metric such as humaneval's pass@k): one Python process per benchmark for every
// source of a run (the baseline and all variants) together, after the runner. Each document's
// score stands in for its correctness in accuracy, AIS and the bootstrap (analysis/ais.ts).
import type { ResolvedBenchmark } from "../config/load";
import { isGenerated, type BenchmarkItem } from "../analysis/generation";
import { HelperError, runScorer, type ScorerInput } from "../lmeval/helpers";
import type { ItemRef } from "../plan/job";
import { scoredItems, type Decoder, type FilteredAnswers, type RunnerScores, type TaskScore, type TaskScores } from "./items";

/**
 * The own scores of the benchmarks whose task has a Python scorer, for every source; undefined
 * when none has one. The first source also gets each document's chance. A scorer that fails
 * throws HelperError, with what Python said.
 */
export async function pythonTaskScores(
  refs: readonly ItemRef[],
  benchmarks: readonly ResolvedBenchmark[],
  sources: ReadonlyMap<string, RunnerScores>,
  decode: Decoder,
  filtered?: FilteredAnswers,
): Promise<TaskScores | undefined> {
  const scored = benchmarks.filter((b) => b.task.scorer !== undefined);
  if (scored.length === 0) return undefined;
  const out = new Map<string, Map<string, TaskScore>>([...sources.keys()].map((source) => [source, new Map()]));
  for (const benchmark of scored) {
    const own = refs.filter((r) => r.benchmark === benchmark.name);
    const entries: { source: string; id: string; input: ScorerInput }[] = [];
    [...sources].forEach(([source, scores], s) => {
      const answers = filtered?.get(source);
      const items = scoredItems(own, [benchmark], scores, source, decode, answers ? { filtered: answers } : {});
      items.forEach((item, i) => entries.push({ source, id: own[i]!.id, input: scorerInput(benchmark, item, s === 0) }));
    });
    const { values, chance } = await runScorer(
      benchmark.task.scorer!,
      entries.map((e) => e.input),
    );
    entries.forEach((e, i) => {
      const score = values[i]!;
      if (!(score >= 0 && score <= 1)) {
        throw new HelperError(`${benchmark.task.scorer!.ref.name} scored ${e.id} ${score}; AIS compares scores in [0, 1]`, "score");
      }
      out.get(e.source)!.set(e.id, { score, ...(typeof chance[i] === "number" ? { chance: chance[i] } : {}) });
    });
  }
  return out;
}

/**
 * What the scorer reads of one document, as lm-eval hands it over: process_results gets the
 * document and each choice's (log-likelihood, is_greedy), or the generation's filtered answer;
 * a metric gets the target and the answer (a list when the first pipeline ends in Python, whose
 * filters give lists, as humaneval's custom filter does).
 */
function scorerInput(benchmark: ResolvedBenchmark, item: BenchmarkItem, withChance: boolean): ScorerInput {
  const { task } = benchmark;
  const doc = task.documents?.[item.index] ?? {};
  if (!isGenerated(item)) return { doc, results: item.choices.map((c) => [c.logprob, c.greedy]), ...(withChance ? { chance: true } : {}) };
  const endsInPython = task.filters[0]?.steps.at(-1)?.function === "python";
  const prediction = endsInPython ? [item.answer] : item.answer;
  return task.scorer!.kind === "process_results" ? { doc, results: [prediction] } : { reference: item.target, prediction };
}
