// The profiling config after parsing: paths are still as the user wrote them; `resolveConfig`
// makes them absolute against the config file's folder.

export type Dtype = "float32" | "bfloat16" | "float16";

export interface ModelSpec {
  path: string;
  name?: string;
  dtype?: Dtype;
  /** Apply the model's chat template: true for its (default) template, a name for a named one. */
  chat_template?: boolean | string;
  fewshot_as_multiturn?: boolean;
  max_length?: number;
  add_bos_token?: boolean;
  /** Where the model folder is on an ssh or slurm target (absolute or ~/...); default: `path`. */
  remote_path?: string;
}

export interface BenchmarkSpec {
  /** An lm-eval task file, or the task's keys inline. */
  task: string | Record<string, unknown>;
  name?: string;
  limit?: number;
  num_fewshot?: number;
  /** The ability the benchmark is labelled as measuring (one of `abilities`). */
  ability?: string;
  /**
   * The abilities an expert expects the benchmark to need (each one of `abilities`): a list, or a
   * weight per ability (how much it is expected to matter); reports set them against the profile.
   */
  expects?: string[] | Record<string, number>;
  /** Where the task's data is, instead of its dataset_path: a file for its test split, or split -> file. */
  data?: string | Record<string, string>;
}

export interface AbilitySpec {
  name: string;
  /**
   * A second diagnostic set of another ability: its items are that ability's (`"ability": of`),
   * ranked and ablated on their own under `name`, and reports compare the two AIS rows.
   */
  of?: string;
  /** One diagnostic dataset (*.diag.jsonl) or several. */
  data: string | string[];
  limit?: number;
  /** How the run uses each dataset's review file (diagnostic/review/forRun.ts); default `not_rejected` where one exists. */
  review?: "accepted" | "not_rejected" | "ignore";
  /** Several files of `data`: one diagnostic set (`merged`, the default) or each a set of its own (`separate`). */
  sets?: "merged" | "separate";
}

/**
 * Which weights a variant zeroes (docs/method.md, step 3): `top_chunked` is the top set as the
 * authors' released code selects it, chunk by chunk along the candidates.
 */
export type Selection = "top" | "top_chunked" | "bottom" | "random";

/**
 * How an ability's importance is read off its summed gradient g (PROTOCOL.md): `paper`, |theta x g|
 * as the authors' code does; `signed`, -theta x g, the first-order rise of the ability's loss when
 * the weight is zeroed.
 */
export type ImportanceMethod = "paper" | "signed";

/** `mlp`: the MLP's weight matrices; `all`: the attention projections' too (docs/method.md). */
export type CandidateSet = "mlp" | "all";

/** A candidate set ranked by some of `ablation.method`'s rules only: `{set: all, method: paper}`. */
export interface CandidateSetSpec {
  set: CandidateSet;
  method: ImportanceMethod | ImportanceMethod[];
}

export interface AblationSpec {
  k: number[];
  selections?: Selection[];
  /** One rule, or several profiled side by side from one gradient pass. */
  method?: ImportanceMethod | ImportanceMethod[];
  front_removal?: number;
  back_removal?: number;
  batch_size?: number;
  /** Independent random sets per k and candidate set (the random control's spread); default 1. */
  random_draws?: number;
  stability?: boolean;
  /** Two abilities ablated together: pairs of ability names, or `all` (every two). */
  pairs?: [string, string][] | "all";
  /** Which weights can be ablated: the MLP's (the paper's method) or every layer weight matrix; a list profiles each from one gradient pass. */
  candidates?: CandidateSet | (CandidateSet | CandidateSetSpec)[];
  /** The fluency measure's text (a file; default the built-in one) and threshold. */
  fluency?: { text?: string; max_perplexity_ratio?: number };
}

/** A GPU of config/gpu.ts's KNOWN_GPUS by name, or one given by its memory and dense bf16 peak. */
export type GpuSpec = string | { memory_gib: number; bf16_tflops: number; name?: string };

export interface BootstrapSpec {
  resamples?: number;
  confidence?: number;
}

export interface StatsSpec {
  correction?: "bh" | "holm" | "none";
  fdr?: number;
  min_effect?: number;
}

export interface SshConnectionSpec {
  host: string;
  port?: number;
  user?: string;
  identity_file?: string;
  options?: Record<string, string | number | boolean>;
}

/** Where the runner and its output live on a target other than this machine. */
export interface TargetPlacementSpec {
  runner?: string;
  workdir?: string;
}

export interface SlurmSpec extends TargetPlacementSpec {
  partition?: string;
  time?: string;
  gpus?: number;
  cpus_per_task?: number;
  mem?: string;
  account?: string;
  sbatch_args?: string[];
  poll_seconds?: number;
  /** Shards of whole abilities per model's profile: a Slurm array, then a merge job. */
  shards?: number;
  /** Submit on this login node over SSH instead of on this machine. */
  ssh?: SshConnectionSpec;
}

export type TargetSpec = "local" | { ssh: SshConnectionSpec & TargetPlacementSpec } | { slurm: SlurmSpec };

export interface ProfileConfig {
  models: ModelSpec[];
  benchmarks: BenchmarkSpec[];
  output?: string;
  /** Folders searched for tasks, groups and tags named by name (lm-eval's --include_path). */
  task_paths?: string[];
  device?: string;
  /** The GPU of `device: cuda`: a known name (h100, ...) or its figures; `bprof validate` says the job's peak memory and time on it. */
  gpu?: GpuSpec;
  threads?: number;
  /** Shards of whole abilities per model's profile, run side by side (docs/targets.md, "Shards"). */
  shards?: number | "auto";
  /** One shard per device, instead of `device`. */
  devices?: string[];
  target?: TargetSpec;
  abilities?: AbilitySpec[];
  ablation?: AblationSpec;
  seed?: number;
  bootstrap?: BootstrapSpec;
  stats?: StatsSpec;
}
