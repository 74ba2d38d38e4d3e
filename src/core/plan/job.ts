// Compile a profile into runner jobs: text becomes tokens here, so the runner never sees text.
import type { ResolvedBenchmark, ResolvedModel } from "../config/load";
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
