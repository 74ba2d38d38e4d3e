// Model configuration read from a Hugging Face config.json. Torch-free.
//
// Only the Llama family is accepted today. The switches below the Llama fields are where the next
// families plug in (Qwen2: attention bias on q/k/v; Qwen3: q/k norm; Mistral: sliding window):
// the forward pass reads them, and the parser sets them per model_type.
#pragma once

#include <cstdint>
#include <string>

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
  int64_t num_key_value_heads = 0;  // default: num_attention_heads (plain multi-head attention)
  int64_t head_dim = 0;             // default: hidden_size / num_attention_heads
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  bool tie_word_embeddings = false;
  int64_t max_position_embeddings = 0;  // 0: not given; only used to warn about long sequences

  // Family switches (all off for a plain Llama checkpoint).
  bool qkv_bias = false;     // bias on q/k/v projections (Llama attention_bias; Qwen2 always)
  bool o_bias = false;       // bias on o_proj (Llama attention_bias; Qwen2 never)
  bool mlp_bias = false;     // bias on gate/up/down (Llama mlp_bias)
  bool qk_norm = false;      // Qwen3: RMSNorm per head on q and k before RoPE (not implemented yet)
  int64_t sliding_window = 0;  // 0: full causal attention (sliding window not implemented yet)
};

// Parses config.json text; `source` names the file in error messages.
// Throws RunnerError(bad_model) naming the field that is missing, mistyped or unsupported.
ModelConfig parse_model_config(const std::string& text, const std::string& source);

// Reads <dir>/config.json.
ModelConfig load_model_config(const std::string& dir);

}  // namespace bprof
