// The profiling config after parsing: paths are still as the user wrote them; `resolveConfig`
// makes them absolute against the config file's folder.

export type Dtype = "float32" | "bfloat16" | "float16";

export interface ModelSpec {
  path: string;
  name?: string;
  dtype?: Dtype;
}

export interface BenchmarkSpec {
  task: string;
  name?: string;
  limit?: number;
  num_fewshot?: number;
}

export interface AbilitySpec {
  name: string;
  /** One diagnostic dataset (*.diag.jsonl) or several. */
  data: string | string[];
  limit?: number;
}

export type Selection = "top" | "bottom" | "random";

export interface AblationSpec {
  k: number[];
  selections?: Selection[];
  front_removal?: number;
  back_removal?: number;
  batch_size?: number;
}

export interface BootstrapSpec {
  resamples?: number;
  confidence?: number;
}

export interface ProfileConfig {
  models: ModelSpec[];
  benchmarks: BenchmarkSpec[];
  output?: string;
  device?: string;
  threads?: number;
  abilities?: AbilitySpec[];
  ablation?: AblationSpec;
  seed?: number;
  bootstrap?: BootstrapSpec;
}
