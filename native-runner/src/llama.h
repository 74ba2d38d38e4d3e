// Llama-family decoder on libtorch (ATen only), numerically the same as Hugging Face's
// LlamaForCausalLM in eager mode. Weights keep their Hugging Face names when loaded.
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

struct LlamaLayer {
  at::Tensor input_norm;                  // [H]
  at::Tensor q_proj, k_proj, v_proj;      // [heads*hd, H], [kv*hd, H], [kv*hd, H]
  at::Tensor q_bias, k_bias, v_bias;      // undefined unless config.qkv_bias
  at::Tensor o_proj, o_bias;              // [H, heads*hd]; bias undefined unless config.o_bias
  at::Tensor post_attention_norm;         // [H]
  at::Tensor gate_proj, up_proj;          // [I, H]
  at::Tensor down_proj;                   // [H, I]
  at::Tensor gate_bias, up_bias, down_bias;  // undefined unless config.mlp_bias
};

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
  std::function<bool()> cancelled;                             // polled between tensors
  std::function<void(const std::string&)> warning;
};

// Loads and checks every weight the config calls for. Throws RunnerError(bad_model) naming a
// missing, mis-shaped or non-float tensor, RunnerError(cancelled) when asked to stop.
LlamaWeights load_llama_weights(const ModelConfig& config, const Checkpoint& checkpoint, const LoadOptions& options);

class LlamaModel {
 public:
  LlamaModel(const ModelConfig& config, LlamaWeights weights);

  // tokens: [B, L] int64 on the weights' device. Returns the hidden states after the final norm,
  // [B, L, H]. Every position attends to itself and earlier positions only, so right padding
  // never changes the states of the real tokens before it.
  at::Tensor hidden_states(const at::Tensor& tokens) const;
  // [..., H] -> [..., V] in the compute dtype.
  at::Tensor logits(const at::Tensor& hidden) const;
  at::Tensor forward(const at::Tensor& tokens) const { return logits(hidden_states(tokens)); }

  const ModelConfig& config() const { return config_; }
  const LlamaWeights& weights() const { return weights_; }

 private:
  struct Positions {  // per forward pass, shared by all layers
    at::Tensor cos, sin;  // [L, hd] RoPE tables in the compute dtype
    at::Tensor future;    // [L, L] bool, true where key position > query position
  };
  at::Tensor attention(const LlamaLayer& layer, const at::Tensor& x, const Positions& pos) const;
  at::Tensor mlp(const LlamaLayer& layer, const at::Tensor& x) const;

  ModelConfig config_;
  LlamaWeights weights_;
  at::Tensor inv_freq_;  // [hd/2] float32 on the weights' device
};

// RoPE inverse frequencies in float32, scaled as the config says (exposed for tests).
at::Tensor rope_inv_freq(const ModelConfig& config, at::Device device);

}  // namespace bprof
