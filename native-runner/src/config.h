// Model configuration read from a Hugging Face config.json. Torch-free.
//
// Eleven decoder families share one forward pass: llama, mistral, qwen2, qwen3, granite, olmo2, phi3,
// gemma2, gemma3_text, and the mixtures of experts mixtral and qwen3_moe (model_type).
// They differ only in the switches below the shared fields, which the parser sets per model_type
// from its entry in the family table (config.cpp, kFamilies) the way transformers' configuration
// and modeling files do; layer_tensors lists each family's tensors.
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

// The MLP's gating activation: down(act(gate(x)) * up(x)).
enum class Activation {
  silu,       // SwiGLU (Llama and most families)
  gelu_tanh,  // GeGLU with GELU's tanh approximation (Gemma's gelu_pytorch_tanh)
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
  // Gemma 3: the sliding-window layers' own RoPE ("local"), 0: theirs is the others'.
  double local_rope_theta = 0.0;
  RopeScaling local_rope_scaling;
  bool tie_word_embeddings = false;
  int64_t max_position_embeddings = 0;  // 0: not given; only used to warn about long sequences

  // Family switches (all off for a plain Llama checkpoint).
  bool qkv_bias = false;            // bias on q/k/v projections (Llama/Qwen3 attention_bias; Qwen2 always)
  bool o_bias = false;              // bias on o_proj (Llama/Qwen3 attention_bias; Qwen2 never)
  bool mlp_bias = false;            // bias on gate/up/down (Llama mlp_bias)
  bool qk_norm = false;             // Qwen3: RMSNorm over head_dim on each head of q and k, before RoPE
  bool qk_norm_whole = false;       // OLMo 2: q_norm / k_norm over the whole q and k projections instead
  bool fused_qkv = false;           // Phi-3: one qkv_proj, rows q, then k, then v
  bool fused_gate_up = false;       // Phi-3: one gate_up_proj, rows gate, then up (one candidate tensor)
  bool pre_norms = true;            // a norm before attention and before the MLP (all but OLMo 2)
  bool post_norms = false;          // OLMo 2, Gemma 2: a norm after attention and after the MLP (before the residual add)
  double norm_weight_offset = 0.0;  // Gemma: every RMSNorm scales by (offset + weight), 1 + weight there
  Activation activation = Activation::silu;
  // Granite's multipliers (neutral in every other family).
  double embedding_multiplier = 1.0;  // the embeddings times this
  // Gemma: the multiplier is a tensor of the compute dtype (HF's embed_scale buffer cast to the
  // weights' dtype), so in bfloat16 sqrt(3584) = 59.87 multiplies as 59.75; Granite's is a Python float.
  bool embedding_multiplier_in_dtype = false;
  double residual_multiplier = 1.0;   // attention's and the MLP's outputs times this before each residual add
  double attention_multiplier = 0.0;  // the attention scores' scale; 0: 1 / sqrt(head_dim)
  double logits_scaling = 1.0;        // the logits divided by this
  // Gemma 2's tanh soft-capping, s -> cap * tanh(s / cap) (0: none): of the attention scores
  // (scaled, before the mask) and of the final logits.
  double attention_softcap = 0.0;
  double logits_softcap = 0.0;
  // Sliding-window attention: a query at position i sees key j only when i - window < j <= i.
  int64_t sliding_window = 0;        // 0: full causal attention in every layer
  std::vector<bool> sliding_layers;  // the layers that use the window; empty: all of them

  // Mixture of experts (Mixtral, Qwen3-MoE): every layer's MLP is num_experts SwiGLU experts of
  // expert_intermediate_size and a router (gate.weight, [num_experts, H]); each token goes to the
  // experts_per_token experts of highest softmax probability, weighted by those probabilities,
  // renormalised to sum 1 when norm_topk_prob. 0 experts: a dense MLP.
  int64_t num_experts = 0;
  int64_t experts_per_token = 0;
  int64_t expert_intermediate_size = 0;
  bool norm_topk_prob = true;
  bool routing_weights_in_dtype = false;  // Qwen3-MoE casts the weights to the compute dtype, Mixtral keeps float32
  bool mixtral_names = false;             // block_sparse_moe.experts.M.w1/w3/w2 (else mlp.experts.M.gate/up/down_proj)

  // The window of one layer, 0 for full causal attention.
  int64_t window_of_layer(int64_t layer) const {
    if (sliding_window <= 0) return 0;
    if (sliding_layers.empty()) return sliding_window;
    return layer >= 0 && layer < static_cast<int64_t>(sliding_layers.size()) && sliding_layers[layer] ? sliding_window : 0;
  }
};

// ----------------------------------------------------------------------------
// The families' tensors: one table the loader, the forward pass's weights, the parameter count,
// the candidates, checkpoints and training all read.

// What a tensor is for (the MLP weights, every expert's included, are the ranking's candidates; a
// mixture of experts' router is not: docs/method.md).
enum class TensorRole { embedding, norm, attention, mlp_weight, bias, lm_head, router };

// Where LlamaLayer keeps a layer's tensor (llama.h maps each to its member).
enum class LayerSlot {
  q_proj,
  q_bias,
  k_proj,
  k_bias,
  v_proj,
  v_bias,
  o_proj,
  o_bias,
  q_norm,
  k_norm,
  gate_proj,
  gate_bias,
  up_proj,
  up_bias,
  down_proj,
  down_bias,
  qkv_proj,      // Phi-3's fused q/k/v
  gate_up_proj,  // Phi-3's fused gate/up: LlamaLayer keeps it in gate_proj (up_proj undefined)
  input_norm,
  post_attention_norm,   // before the MLP where a family has pre-norms only (HF's name), after attention otherwise
  pre_feedforward_norm,  // Gemma 2: before the MLP, when post_attention_norm is after attention
  post_feedforward_norm,
  router,       // a mixture of experts' gate.weight [E, H]
  expert_gate,  // expert LayerTensor::expert's gate [I, H] (Mixtral's w1)
  expert_up,    // its up [I, H] (w3)
  expert_down,  // its down [H, I] (w2)
};

struct LayerTensor {
  std::string name;  // Hugging Face name after "model.layers.N."
  std::vector<int64_t> shape;
  TensorRole role;
  LayerSlot slot;
  int64_t expert = -1;  // the expert of an expert_* slot
};

// Every tensor of one decoder layer of the config's family (its biases and norms as the family and
// the config's switches say), in the order of the model's state_dict. The MLP weights among them,
// in this order (gate, up, down; a mixture of experts: each expert's gate, up, down, expert by
// expert), are the layer's candidates.
std::vector<LayerTensor> layer_tensors(const ModelConfig& config);

// The model's tensors outside its layers, full names: the embedding (first, before the layers),
// the final norm and, unless tied, the LM head (after them). Their slot means nothing.
std::vector<LayerTensor> model_tensors(const ModelConfig& config);

// The model types config.json may name, in the table's order ("llama, mistral, ...").
std::string supported_model_types();

// The family table as data, JSON text (`bprof-runner --families`): each family's defaults and the
// config.json keys its tensor switches read, the model's and a layer's tensor templates (Hugging
// Face name, role, shape as formulas over the config's sizes, the switches it needs). The editor
// counts parameters from this (src/core/model/families.json is its copy, regenerated by
// `npm run families`), so the two counts cannot drift apart.
std::string families_table_json();

// Parses config.json text; `source` names the file in error messages.
// Throws RunnerError(bad_model) naming the field that is missing, mistyped or unsupported.
ModelConfig parse_model_config(const std::string& text, const std::string& source);

// Reads <dir>/config.json.
ModelConfig load_model_config(const std::string& dir);

}  // namespace bprof
