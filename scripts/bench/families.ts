// `--families`: rows 1, 3a and 3c again on a Gemma 2 and a mixture of experts of the Llama's size,
// the Llama run again beside them in the same invocation, so that each family's figures are a ratio
// measured side by side. Each model is its own `bprof-runner bench` process (a bench job has one
// scoring model) with rows matmul, scoring and importance, so each MFU is over the peak its own
// process measured; the models alternate round by round (llama, gemma2, moe, llama, ...), so that a
// busy moment of the machine falls on all of them rather than on one.
import * as path from "node:path";
import type { FamiliesResult, FamilyBench } from "./format";
import { REFERENCE_MODEL, runnerBench } from "./runner";

/**
 * The models, all with the Llama's hidden size, layers, heads (8 query, 4 key-value, head_dim 64)
 * and vocabulary. Gemma 2 keeps its family's other traits (tied embeddings, GeGLU, four norms a
 * layer, soft-capping, every other layer sliding): its window is Gemma 2's own 4096, longer than
 * every sequence here, so no key is masked (the runner's FLOPs count a window's keys where one
 * is shorter). The mixture of experts is a Mixtral (its attention is the Llama's, so the ratio is the
 * routed MLP's): 8 experts, top 2, each of intermediate 704 = 1408 / 2, so a token's active MLP
 * weights are the Llama's MLP's (plus the router's 8 x 512).
 */
export const FAMILY_MODELS: readonly Omit<FamilyBench, "rounds">[] = [
  { name: "llama", label: "Llama", config: { ...REFERENCE_MODEL } },
  {
    name: "gemma2",
    label: "Gemma 2",
    config: {
      model_type: "gemma2",
      vocab_size: REFERENCE_MODEL.vocab_size,
      hidden_size: REFERENCE_MODEL.hidden_size,
      intermediate_size: REFERENCE_MODEL.intermediate_size,
      num_hidden_layers: REFERENCE_MODEL.num_hidden_layers,
      num_attention_heads: REFERENCE_MODEL.num_attention_heads,
      num_key_value_heads: REFERENCE_MODEL.num_key_value_heads,
      head_dim: REFERENCE_MODEL.hidden_size / REFERENCE_MODEL.num_attention_heads,
      query_pre_attn_scalar: REFERENCE_MODEL.hidden_size / REFERENCE_MODEL.num_attention_heads,
      sliding_window: 4096,
      max_position_embeddings: REFERENCE_MODEL.max_position_embeddings,
      tie_word_embeddings: true,
    },
  },
  {
    name: "moe",
    label: "Mixtral",
    config: {
      model_type: "mixtral",
      vocab_size: REFERENCE_MODEL.vocab_size,
      hidden_size: REFERENCE_MODEL.hidden_size,
      intermediate_size: REFERENCE_MODEL.intermediate_size / 2,
      num_hidden_layers: REFERENCE_MODEL.num_hidden_layers,
      num_attention_heads: REFERENCE_MODEL.num_attention_heads,
      num_key_value_heads: REFERENCE_MODEL.num_key_value_heads,
      num_local_experts: 8,
      num_experts_per_tok: 2,
      max_position_embeddings: REFERENCE_MODEL.max_position_embeddings,
      tie_word_embeddings: false,
    },
  },
];

/** The bench job's sizes the family runs share with rows 1-3 (the profile row is not run). */
export interface FamilySizes {
  matmul?: object;
  scoring?: object;
  importance?: object;
}

/**
 * Every model's runner bench, `rounds` times, the models alternating within each round; each by
 * its own `runner` build where it names one, else by `runner`.
 */
export async function benchFamilies(
  runner: string,
  sizes: FamilySizes,
  dir: string,
  threads: number,
  rounds: number,
  say: (line: string) => void,
  models: readonly Omit<FamilyBench, "rounds">[] = FAMILY_MODELS,
): Promise<FamiliesResult> {
  const families: FamilyBench[] = models.map((f) => ({ ...f, rounds: [] }));
  for (let round = 0; round < rounds; round++) {
    for (const family of families) {
      const fields = {
        ...(sizes.matmul ? { matmul: sizes.matmul } : {}),
        ...(sizes.scoring ? { scoring: sizes.scoring } : {}),
        ...(sizes.importance ? { importance: sizes.importance } : {}),
        rows: ["matmul", "scoring", "importance"],
        scoring_model: family.config,
      };
      const bench = await runnerBench(family.runner ?? runner, fields, path.join(dir, `${family.name}-${round}`), threads);
      family.rounds.push(bench);
      say(
        `  ${family.name}, round ${round + 1}/${rounds}: ${bench.scoring?.kv_cache.items_per_second.toFixed(1) ?? "?"} items/s, importance ${bench.importance?.tokens_per_second.toFixed(0) ?? "?"} tokens/s`,
      );
    }
  }
  return { rounds, families };
}
