// Llama-family decoder on libtorch (ATen only), numerically the same as Hugging Face's
// LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, GraniteForCausalLM,
// Olmo2ForCausalLM, Phi3ForCausalLM, Gemma2ForCausalLM, Gemma3ForCausalLM, MixtralForCausalLM and
// Qwen3MoeForCausalLM in eager mode (the families differ only in ModelConfig's switches). Weights
// keep their Hugging Face names when loaded.
//
// One of the few translation units that include libtorch headers: only ATen/core/Tensor.h here,
// and individual operator headers in llama.cpp, which compile far faster than <torch/torch.h>.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "config.h"
#include "safetensors.h"

namespace bprof {

// One expert of a mixture-of-experts layer: a SwiGLU MLP without biases.
struct ExpertWeights {
  at::Tensor gate_proj, up_proj;  // [I, H] (Mixtral's w1, w3)
  at::Tensor down_proj;           // [H, I] (w2)
};

struct LlamaLayer {
  at::Tensor input_norm;                     // [H]
  at::Tensor q_proj, k_proj, v_proj;         // [heads*hd, H], [kv*hd, H], [kv*hd, H]; undefined when fused
  at::Tensor qkv_proj;                       // Phi-3: [(heads + 2 kv)*hd, H]; undefined unless config.fused_qkv
  at::Tensor q_bias, k_bias, v_bias;         // undefined unless config.qkv_bias
  at::Tensor o_proj, o_bias;                 // [H, heads*hd]; bias undefined unless config.o_bias
  at::Tensor q_norm, k_norm;                 // [hd] (Qwen3), [heads*hd], [kv*hd] (OLMo 2); undefined unless config.qk_norm
  at::Tensor post_attention_norm;            // [H]; before the MLP, or after attention when config.post_norms
  at::Tensor pre_feedforward_norm;           // [H]; Gemma 2 only (config.pre_norms and config.post_norms)
  at::Tensor post_feedforward_norm;          // [H]; only with config.post_norms (OLMo 2 has no input_norm)
  at::Tensor gate_proj, up_proj;             // [I, H]; Phi-3: gate_proj the fused [2I, H], up_proj undefined
  at::Tensor down_proj;                      // [H, I]
  at::Tensor gate_bias, up_bias, down_bias;  // undefined unless config.mlp_bias
  at::Tensor router;                         // [E, H]; a mixture of experts only (config.num_experts)
  std::vector<ExpertWeights> experts;        // in place of gate/up/down_proj there
};

// The member of LlamaLayer that keeps a table tensor (config.h, layer_tensors); an expert's
// tensor grows the layer's experts to hold it.
at::Tensor& layer_slot(LlamaLayer& layer, const LayerTensor& tensor);
const at::Tensor& layer_slot(const LlamaLayer& layer, const LayerTensor& tensor);

struct LlamaWeights {
  at::Tensor embed_tokens;  // [V, H]
  std::vector<LlamaLayer> layers;
  at::Tensor norm;     // [H]
  at::Tensor lm_head;  // [V, H]; the same tensor as embed_tokens when tied
};

struct LoadOptions {
  at::ScalarType dtype = at::kFloat;  // compute dtype: weights are converted on load
  at::Device device = at::kCPU;
  std::function<void(int64_t done, int64_t total)> progress;  // after each tensor
  std::function<bool()> cancelled;                            // polled between tensors
  std::function<void(const std::string&)> warning;
  // Checks every tensor's name, shape and dtype but reads no weight: the tensors are on the meta
  // device (shapes, no storage). Enough for the model's sizes, nothing that computes.
  bool shapes_only = false;
};

// Loads and checks every weight the config calls for. Throws RunnerError(bad_model) naming a
// missing, mis-shaped or non-float tensor, RunnerError(cancelled) when asked to stop.
LlamaWeights load_llama_weights(const ModelConfig& config, const Checkpoint& checkpoint, const LoadOptions& options);

// Keys and values of every layer from a forward pass over contexts, for continuations that attend
// to them without reading the contexts again.
struct KVCache {
  std::vector<at::Tensor> keys, values;  // per layer [B, kv_heads, L, hd]; keys after q/k norm and RoPE
};

// Float32 sums of dL/dW for the MLP weights of one layer (undefined: that layer is not tapped).
// The `part` sums, when defined, add only the contribution of the batch rows listed in `part_rows`
// ([R] int64 on the device, set before each forward pass), out of the same backward pass: the
// gradient of one part of the items, with the same batches and weights as the whole.
// A mixture of experts' layer keeps one entry per expert in `experts` (their part_rows unused:
// each expert's part is found from the layer's), the expert's gradient summed over the tokens
// routed to it.
struct MlpGradientSums {
  at::Tensor gate, up, down;
  at::Tensor gate_part, up_part, down_part;
  at::Tensor part_rows;
  std::vector<MlpGradientSums> experts;
};

class LlamaModel {
 public:
  LlamaModel(const ModelConfig& config, LlamaWeights weights);

  // tokens: [B, L] int64 on the weights' device. Returns the hidden states after the final norm,
  // [B, L, H]. Every position attends to itself and earlier positions only, so right padding
  // never changes the states of the real tokens before it.
  at::Tensor hidden_states(const at::Tensor& tokens) const { return hidden_states(tokens, nullptr); }
  // The same, and keeps every layer's keys and values in `cache` when it is not null.
  at::Tensor hidden_states(const at::Tensor& tokens, KVCache* cache) const;
  // Continuations of cached rows. tokens: [R, Lq] int64, right-padded; row r continues cache row
  // cache_rows[r] ([R] int64), whose first context_lengths[r] ([R] int64) positions are real (the
  // rest is padding, never attended to). Token t of row r sits at position context_lengths[r] + t
  // (RoPE, sliding window) and attends to the real cached positions and causally to its own row.
  // Returns [R, Lq, H] after the final norm: what hidden_states would give for those tokens on
  // the unpadded context ++ row.
  //
  // `own`, when given, caches the rows' own earlier tokens for step-by-step decoding: it holds the
  // keys and values of each row's first T continuation tokens (T = 0 when empty, all real), the new
  // tokens sit at positions context_lengths[r] + T + t and see all of them, and their keys and
  // values are appended to it.
  at::Tensor continuation_hidden_states(const at::Tensor& tokens, const KVCache& cache, const at::Tensor& cache_rows,
                                        const at::Tensor& context_lengths, KVCache* own = nullptr) const;
  // Rows that share a prefix, packed (multiple-choice scoring without a cache): tokens [B, L]
  // int64, each with its RoPE position and its branch ([B, L] int64 both). Branch 0 is the shared
  // prefix, branches 1, 2, ... continue it side by side in one row, each starting at the position
  // after the prefix. A token sees a key of its row when the key's position is not after its own
  // and the key is in branch 0 or in the token's own branch (and, in sliding-window layers, fewer
  // than `window` positions back): a branch token gets exactly the state it would have in the
  // sequence prefix ++ branch, a prefix token the state it has in the prefix alone. Padding is a
  // branch of its own (e.g. -1) after the real tokens, whose states nothing reads. Returns
  // [B, L, H] after the final norm.
  at::Tensor tree_hidden_states(const at::Tensor& tokens, const at::Tensor& positions, const at::Tensor& branches) const;
  // [..., H] -> [..., V] in the compute dtype.
  at::Tensor logits(const at::Tensor& hidden) const;
  at::Tensor forward(const at::Tensor& tokens) const { return logits(hidden_states(tokens)); }

  // Gradient taps for the importance pass (importance.cpp). While `sums` is set (one entry per
  // layer), every forward pass hooks the outputs Y = X W^T of the tapped MLP projections, and the
  // backward pass adds dL/dW = dL/dY^T X into the sums as it goes. The weights need no
  // requires_grad and never get a .grad: the sums are the only gradient memory. Some tensor before
  // the tapped layers must require grad, or no backward graph is built. nullptr: taps off.
  void set_mlp_gradient_sums(std::vector<MlpGradientSums>* sums) const { gradient_sums_ = sums; }

  const ModelConfig& config() const { return config_; }
  const LlamaWeights& weights() const { return weights_; }
  LlamaWeights& weights() { return weights_; }  // in-place edits (ablation); shapes must not change

 private:
  struct Pass;                                       // what the layers of one forward pass share (llama.cpp)
  at::Tensor embed(const at::Tensor& tokens) const;  // [B, L] -> [B, L, H]
  at::Tensor run_layers(at::Tensor x, const Pass& pass) const;
  at::Tensor attention(int64_t layer_index, const LlamaLayer& layer, const at::Tensor& x, const Pass& pass) const;
  at::Tensor mlp(size_t layer_index, const LlamaLayer& layer, const at::Tensor& x) const;
  at::Tensor experts_mlp(const LlamaLayer& layer, const at::Tensor& x, const MlpGradientSums& sums) const;
  at::Tensor activate(const at::Tensor& gate) const;
  void set_rope(Pass& pass, const at::Tensor& positions, int64_t heads_dim, at::ScalarType dtype) const;

  ModelConfig config_;
  LlamaWeights weights_;
  at::Tensor inv_freq_;        // [hd/2] float32 on the weights' device
  at::Tensor inv_freq_local_;  // the sliding-window layers' (Gemma 3); undefined unless config.local_rope_theta
  mutable std::vector<MlpGradientSums>* gradient_sums_ = nullptr;
};

// What the embeddings are multiplied by in the compute dtype (exposed for tests).
double embedding_scale(const ModelConfig& config, at::ScalarType dtype);

// RoPE inverse frequencies in float32, scaled as the config says (exposed for tests).
at::Tensor rope_inv_freq(const ModelConfig& config, at::Device device);

}  // namespace bprof
