// Model configuration read from a Hugging Face config.json. Torch-free.
//
// Four decoder families share one forward pass: llama, mistral, qwen2, qwen3 (model_type). They
// differ only in the switches below the shared fields, which the parser sets per model_type the
// way transformers' configuration and modeling files do (config.cpp says where each comes from).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bprof {

enum class RopeType {
  standard,  // inv_freq[i] = 1 / theta^(2i/hd)
  linear,    // inv_freq / factor (position interpolation)
  llama3,    // Llama 3.1: low frequencies divided by factor, a smooth blend in between
};

struct RopeScaling {
  RopeType type = RopeType::standard;
  double factor = 1.0;
  double low_freq_factor = 1.0;                  // llama3
  double high_freq_factor = 4.0;                 // llama3
  int64_t original_max_position_embeddings = 0;  // llama3
};

struct ModelConfig {
  std::string model_type;
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;  // grouped-query attention; absent: the family's default
  int64_t head_dim = 0;             // absent: hidden_size / num_attention_heads (Qwen3: 128)
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  bool tie_word_embeddings = false;
  int64_t max_position_embeddings = 0;  // 0: not given; only used to warn about long sequences

  // Family switches (all off for a plain Llama checkpoint).
  bool qkv_bias = false;  // bias on q/k/v projections (Llama/Qwen3 attention_bias; Qwen2 always)
  bool o_bias = false;    // bias on o_proj (Llama/Qwen3 attention_bias; Qwen2 never)
  bool mlp_bias = false;  // bias on gate/up/down (Llama mlp_bias)
  bool qk_norm = false;   // Qwen3: RMSNorm over head_dim on each head of q and k, before RoPE
  // Sliding-window attention: a query at position i sees key j only when i - window < j <= i.
  int64_t sliding_window = 0;        // 0: full causal attention in every layer
  std::vector<bool> sliding_layers;  // the layers that use the window; empty: all of them

  // The window of one layer, 0 for full causal attention.
  int64_t window_of_layer(int64_t layer) const {
    if (sliding_window <= 0) return 0;
    if (sliding_layers.empty()) return sliding_window;
    return layer >= 0 && layer < static_cast<int64_t>(sliding_layers.size()) && sliding_layers[layer] ? sliding_window : 0;
  }
};

// Parses config.json text; `source` names the file in error messages.
// Throws RunnerError(bad_model) naming the field that is missing, mistyped or unsupported.
ModelConfig parse_model_config(const std::string& text, const std::string& source);

// Reads <dir>/config.json.
ModelConfig load_model_config(const std::string& dir);

}  // namespace bprof
