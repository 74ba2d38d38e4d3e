// The fluency measure of a variant (docs/method.md, "Fluency"): the mean per-token log-likelihood
// of a neutral text, and its perplexity, against the unablated model's. The text's paragraphs are
// log-likelihood requests of the profile job (prompts/fluencyText.ts); each source of scores (the
// baseline, each variant) holds their summed log-probabilities and token counts. The threshold's
// default and why: config/abilities.ts, DEFAULT_MAX_PERPLEXITY_RATIO.
import { FLUENCY_ID_PREFIX } from "../prompts/fluencyText";
import type { RunnerScores } from "./items";
import type { ModelFluency, VariantFluency } from "./schema";

/** Mean per-token log-likelihood and perplexity over the fluency items of `scores`; undefined when it has none. */
export function fluencyOf(scores: RunnerScores): { tokens: number; loglik_per_token: number; perplexity: number } | undefined {
  let logprob = 0;
  let tokens = 0;
  for (const [id, score] of scores) {
    if (!id.startsWith(FLUENCY_ID_PREFIX) || !Array.isArray(score)) continue;
    for (const choice of score) {
      logprob += choice.logprob;
      tokens += choice.tokens;
    }
  }
  if (tokens === 0) return undefined;
  const mean = logprob / tokens;
  return { tokens, loglik_per_token: mean, perplexity: Math.exp(-mean) };
}

/** A variant's fluency against the model's: its perplexity's ratio to the model's, and whether it stays within `maxRatio`. */
export function variantFluency(model: ModelFluency, scores: RunnerScores): VariantFluency | undefined {
  const own = fluencyOf(scores);
  if (!own) return undefined;
  const ratio = own.perplexity / model.perplexity;
  return {
    loglik_per_token: own.loglik_per_token,
    perplexity: own.perplexity,
    perplexity_ratio: ratio,
    fluent: ratio <= model.max_perplexity_ratio,
  };
}
