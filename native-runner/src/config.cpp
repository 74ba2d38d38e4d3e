#include "config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "errors.h"
#include "json_util.h"

namespace bprof {

using json = nlohmann::json;

namespace {

// Typed field access: a field that is absent or null takes its default; a field of the wrong type
// is an error naming it, never a silent conversion (a float where an integer belongs is a bad file).
class Fields {
 public:
  Fields(const json& obj, const std::string& source) : obj_(obj), source_(source) {}
  // The top-level object of a file: errors name the line of the key they are about, and a key the
  // family needs and the file lacks the line of model_type (top_level_key_lines).
  Fields(const json& obj, const std::string& source, std::map<std::string, int> lines)
      : obj_(obj), source_(source), lines_(std::move(lines)) {}

  bool has(const char* key) const {
    auto it = obj_.find(key);
    return it != obj_.end() && !it->is_null();
  }
  // present with the value null (for the few fields where HF gives null its own meaning)
  bool is_null(const char* key) const {
    auto it = obj_.find(key);
    return it != obj_.end() && it->is_null();
  }
  const std::string& source() const { return source_; }
  // The source with the line of a top-level key where it is known ("config.json:12"), for the
  // errors of the object under that key.
  std::string source_at(const std::string& key) const {
    auto line = lines_.find(key);
    return line == lines_.end() ? source_ : source_ + ":" + std::to_string(line->second);
  }
  RunnerError error(const std::string& key, const std::string& what) const {
    auto line = lines_.find(key);
    if (line != lines_.end())
      return RunnerError(ErrorCode::bad_model, source_ + ":" + std::to_string(line->second) + ": '" + key + "' " + what);
    auto type = lines_.find("model_type");
    if (type != lines_.end() && has("model_type") && obj_.at("model_type").is_string())
      return RunnerError(ErrorCode::bad_model, source_ + ":" + std::to_string(type->second) + ": '" + key + "' " + what + " (model_type '" +
                                                   obj_.at("model_type").get<std::string>() + "' on this line reads it)");
    return RunnerError(ErrorCode::bad_model, source_ + ": '" + key + "' " + what);
  }
  int64_t positive_int(const char* key) const {
    if (!has(key)) throw error(key, "is missing");
    const json& v = obj_.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() <= 0) throw error(key, "must be a positive integer, got " + describe_json(v));
    return v.get<int64_t>();
  }
  int64_t positive_int(const char* key, int64_t fallback) const { return has(key) ? positive_int(key) : fallback; }
  int64_t non_negative_int(const char* key, int64_t fallback) const {
    if (!has(key)) return fallback;
    const json& v = obj_.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < 0) throw error(key, "must be a non-negative integer, got " + describe_json(v));
    return v.get<int64_t>();
  }
  // A window size: a positive integer, null for none (0 here), `fallback` when absent.
  int64_t window(const char* key, int64_t fallback) const {
    auto it = obj_.find(key);
    if (it == obj_.end()) return fallback;
    if (it->is_null()) return 0;
    if (!it->is_number_integer() || it->get<int64_t>() <= 0)
      throw error(key, "must be a positive integer or null, got " + describe_json(*it));
    return it->get<int64_t>();
  }
  double positive_number(const char* key, double fallback) const {
    if (!has(key)) return fallback;
    const json& v = obj_.at(key);
    if (!v.is_number() || !(v.get<double>() > 0)) throw error(key, "must be a positive number, got " + describe_json(v));
    return v.get<double>();
  }
  bool boolean(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    const json& v = obj_.at(key);
    if (!v.is_boolean()) throw error(key, "must be true or false, got " + describe_json(v));
    return v.get<bool>();
  }
  std::string string(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    const json& v = obj_.at(key);
    if (!v.is_string()) throw error(key, "must be a string, got " + describe_json(v));
    return v.get<std::string>();
  }

 private:
  const json& obj_;
  std::string source_;
  std::map<std::string, int> lines_;  // top-level key -> its 1-based line; empty: no lines
};

// The line (1-based) of each key of a JSON text's top-level object, where a key is a string at
// depth 1 followed by a colon. The text has parsed already, so it is well formed.
std::map<std::string, int> top_level_key_lines(const std::string& text) {
  std::map<std::string, int> lines;
  int line = 1, depth = 0;
  for (size_t i = 0; i < text.size(); i++) {
    const char ch = text[i];
    if (ch == '\n') {
      line++;
    } else if (ch == '{' || ch == '[') {
      depth++;
    } else if (ch == '}' || ch == ']') {
      depth--;
    } else if (ch == '"') {
      const int start = line;
      std::string str;
      for (i++; i < text.size() && text[i] != '"'; i++) {
        if (text[i] == '\\') i++;  // an escaped character, never the closing quote (keys are plain in practice)
        if (i < text.size()) str += text[i];
      }
      size_t next = i + 1;
      while (next < text.size() && std::isspace(static_cast<unsigned char>(text[next]))) next++;
      if (depth == 1 && next < text.size() && text[next] == ':' && !lines.count(str)) lines[str] = start;
    }
  }
  return lines;
}

// rope_scaling (transformers 4.x) or rope_parameters (5.x): {"rope_type" or "type": ..., factor, ...};
// `where` names the object in errors ("config.json:12 rope_parameters").
RopeScaling parse_rope_scaling(const json& obj, const std::string& where) {
  RopeScaling rs;
  if (obj.is_null()) return rs;
  if (!obj.is_object()) throw RunnerError(ErrorCode::bad_model, where + " must be an object or null");
  Fields f(obj, where);
  std::string type = f.has("rope_type") ? f.string("rope_type", "default") : f.string("type", "default");
  if (type == "default") return rs;
  if (type == "linear") {
    rs.type = RopeType::linear;
    rs.factor = f.positive_number("factor", 0);
    if (rs.factor <= 0) throw f.error("factor", "is missing");
    return rs;
  }
  if (type == "llama3") {
    rs.type = RopeType::llama3;
    rs.factor = f.positive_number("factor", 0);
    rs.low_freq_factor = f.positive_number("low_freq_factor", 0);
    rs.high_freq_factor = f.positive_number("high_freq_factor", 0);
    rs.original_max_position_embeddings = f.positive_int("original_max_position_embeddings");
    if (rs.factor <= 0) throw f.error("factor", "is missing");
    if (rs.low_freq_factor <= 0) throw f.error("low_freq_factor", "is missing");
    if (rs.high_freq_factor <= rs.low_freq_factor) throw f.error("high_freq_factor", "must be greater than low_freq_factor");
    return rs;
  }
  throw RunnerError(ErrorCode::bad_model,
                    where + ": rope scaling type '" + type + "' is not supported (supported: default, linear, llama3)");
}

// ----------------------------------------------------------------------------
// The families: what each model_type adds to the shared Llama layout, as transformers'
// configuration and modeling files of that family decide it.

// GraniteAttention / GraniteMLP: Llama's biases (the table's); and four multipliers (GraniteConfig, all 1.0 by
// default): GraniteModel multiplies the embeddings by embedding_multiplier, each decoder layer adds
// residual_multiplier times the attention's and the MLP's output, the attention scales its scores
// by attention_multiplier (in place of 1/sqrt(head_dim)), GraniteForCausalLM divides the logits by
// logits_scaling.
void granite_switches(ModelConfig& c, const Fields& f, const json&) {
  c.embedding_multiplier = f.positive_number("embedding_multiplier", 1.0);
  c.residual_multiplier = f.positive_number("residual_multiplier", 1.0);
  c.attention_multiplier = f.positive_number("attention_multiplier", 1.0);
  c.logits_scaling = f.positive_number("logits_scaling", 1.0);
}

// MistralAttention and MistralMLP have no biases (an attention_bias field is not read).
// sliding_window: default 4096 (Mistral 7B v0.1); null (v0.2 on) turns it off. Every layer uses
// it. The mask is HF's current one, key j visible to query i when i - window < j <= i, i.e.
// `window` keys including the query's own (some transformers 4.3x versions built the eager mask
// with one key more).
void mistral_switches(ModelConfig& c, const Fields& f, const json&) { c.sliding_window = f.window("sliding_window", 4096); }

// Sliding window (Qwen2Config / Qwen3Config): only when use_sliding_window is true (default
// false), the config then keeps sliding_window (default 4096; null: none), otherwise sets it to
// None. Which layers use it: layer_types[i] == "sliding_attention" when config.json lists
// layer_types (transformers >= 4.53 writes it); otherwise HF derives layer_types as
// "sliding_attention" for i >= max_window_layers (default 28), i.e. the layers from
// max_window_layers on slide and the ones below attend fully, whatever the docstring's "bottom
// layers use SWA" suggests. (Older transformers applied that same layer rule in the
// flash-attention path only.)
// The layers config.json's layer_types marks "sliding_attention" (transformers >= 4.53 writes the
// list); empty when it has none.
std::vector<bool> sliding_layer_types(const ModelConfig& c, const Fields& f, const json& root) {
  std::vector<bool> sliding;
  if (!f.has("layer_types")) return sliding;
  const json& types = root.at("layer_types");
  if (!types.is_array() || static_cast<int64_t>(types.size()) != c.num_hidden_layers)
    throw f.error("layer_types",
                  "must be a list of num_hidden_layers (" + std::to_string(c.num_hidden_layers) + ") strings, got " + describe_json(types));
  sliding.resize(types.size());
  for (size_t i = 0; i < types.size(); i++) {
    const json& t = types[i];
    if (t == "sliding_attention")
      sliding[i] = true;
    else if (t != "full_attention")
      throw f.error("layer_types",
                    "[" + std::to_string(i) + "] must be \"full_attention\" or \"sliding_attention\", got " + describe_json(t));
  }
  return sliding;
}

void qwen_window(ModelConfig& c, const Fields& f, const json& root) {
  const bool use_sliding_window = f.boolean("use_sliding_window", false);
  const int64_t window = f.window("sliding_window", 4096);
  const int64_t max_window_layers = f.non_negative_int("max_window_layers", 28);
  std::vector<bool> sliding = sliding_layer_types(c, f, root);
  if (sliding.empty()) {
    sliding.resize(static_cast<size_t>(c.num_hidden_layers));
    for (int64_t i = max_window_layers; i < c.num_hidden_layers; i++) sliding[static_cast<size_t>(i)] = true;
  }
  if (use_sliding_window && window > 0 && std::find(sliding.begin(), sliding.end(), true) != sliding.end()) {
    c.sliding_window = window;
    c.sliding_layers = std::move(sliding);
  }
}

// Qwen2 and Qwen3 (Qwen2Attention: bias on q/k/v, none on o_proj; Qwen3Attention: all four
// biased by attention_bias, and q_norm/k_norm, RMSNorm over head_dim, eps rms_norm_eps, on each
// head of q and k before RoPE; their MLPs none: the table's switches) differ here in the window only.
void qwen_switches(ModelConfig& c, const Fields& f, const json& root) { qwen_window(c, f, root); }

// Phi-3 (Phi3Attention, Phi3MLP): one qkv_proj (rows: q, k, v) and one gate_up_proj (rows: gate,
// then up), no biases; sliding_window (default None) in every layer, as Mistral's. A partial
// rotary factor (Phi-4-mini's 0.75) is not supported.
void phi3_switches(ModelConfig& c, const Fields& f, const json& root) {
  c.sliding_window = f.window("sliding_window", 0);
  auto partial = [&](const json& obj, const std::string& where) {
    if (!obj.is_object() || !obj.contains("partial_rotary_factor") || obj.at("partial_rotary_factor").is_null()) return;
    const json& v = obj.at("partial_rotary_factor");
    if (!v.is_number() || v.get<double>() != 1.0)
      throw f.error(where + "partial_rotary_factor", "is " + describe_json(v) + ": only 1.0 (RoPE on the whole head) is supported");
  };
  partial(root, "");
  if (root.contains("rope_parameters")) partial(root.at("rope_parameters"), "rope_parameters.");
}

// The tanh soft-capping of a Gemma 2 config: a positive number, or null for none.
double softcap(const Fields& f, const char* key, double fallback) {
  if (f.is_null(key)) return 0.0;
  return f.positive_number(key, fallback);
}

// What Gemma 2 and Gemma 3 share (Gemma2Model / Gemma3TextModel and their layers): the embeddings
// times sqrt(hidden_size) (a float32 buffer, so rounded to float32 first); every RMSNorm scales by
// 1 + weight; a norm before and after both attention and MLP (input_layernorm, then
// post_attention_layernorm on attention's output; pre_feedforward_layernorm, then
// post_feedforward_layernorm on the MLP's); GeGLU with gelu_pytorch_tanh (hidden_activation); the
// scores scaled by query_pre_attn_scalar^-0.5 (default 256); the logits soft-capped by
// final_logit_softcapping (null: none); attention_bias on all four projections; sliding_window
// (default 4096) in the layers layer_types marks, `sliding` where config.json has no layer_types.
void gemma_switches(ModelConfig& c, const Fields& f, const json& root, double logits_softcap, const std::function<bool(int64_t)>& sliding) {
  c.embedding_multiplier = static_cast<float>(std::sqrt(static_cast<double>(c.hidden_size)));
  c.embedding_multiplier_in_dtype = true;
  c.norm_weight_offset = 1.0;
  const std::string act = f.string("hidden_activation", "gelu_pytorch_tanh");
  if (act != "gelu_pytorch_tanh") throw f.error("hidden_activation", "'" + act + "' is not supported (supported: gelu_pytorch_tanh)");
  c.activation = Activation::gelu_tanh;
  c.attention_multiplier = std::pow(f.positive_number("query_pre_attn_scalar", 256.0), -0.5);
  c.logits_softcap = softcap(f, "final_logit_softcapping", logits_softcap);
  if (f.boolean("use_bidirectional_attention", false))
    throw f.error("use_bidirectional_attention", "is true: only causal attention is supported (a decoder that scores continuations)");
  c.sliding_window = f.window("sliding_window", 4096);
  c.sliding_layers = sliding_layer_types(c, f, root);
  if (c.sliding_layers.empty())
    for (int64_t i = 0; i < c.num_hidden_layers; i++) c.sliding_layers.push_back(sliding(i));
}

// Gemma 2: Gemma's layout; the attention scores soft-capped by attn_logit_softcapping (default
// 50), the logits by final_logit_softcapping (default 30); without layer_types every other layer
// slides, from the first (Gemma2Config).
void gemma2_switches(ModelConfig& c, const Fields& f, const json& root) {
  gemma_switches(c, f, root, 30.0, [](int64_t i) { return i % 2 == 0; });
  c.attention_softcap = softcap(f, "attn_logit_softcapping", 50.0);
}

// One layer type's RoPE in Gemma 3's rope_parameters ({"full_attention": {...}, "sliding_attention":
// {...}}): its rope_theta (else `theta`) and scaling.
void gemma3_rope(const json& rp, const char* type, const std::string& source, double& theta, RopeScaling& scaling) {
  if (!rp.is_object() || !rp.contains(type) || rp.at(type).is_null()) return;
  const std::string where = source + " rope_parameters." + type;
  if (!rp.at(type).is_object()) throw RunnerError(ErrorCode::bad_model, where + " must be an object");
  theta = Fields(rp.at(type), where).positive_number("rope_theta", theta);
  scaling = parse_rope_scaling(rp.at(type), where);
}

// Gemma 3 (Gemma3TextModel, Gemma3Attention): Gemma's layout with q_norm / k_norm over each head
// (1 + weight, before RoPE, as Qwen3's); no soft-capping by default, and Gemma3Attention never
// passes attn_logit_softcapping to the attention (transformers 5.18), so neither does the runner;
// without layer_types every sliding_window_pattern-th layer (default 6) attends fully, the others
// slide. Full-attention layers use rope_parameters.full_attention (rope_theta, default 1e6, and
// rope_scaling), sliding ones rope_parameters.sliding_attention (rope_local_base_freq, default
// 1e4): transformers 5 writes the nested form, 4.x the flat fields.
void gemma3_switches(ModelConfig& c, const Fields& f, const json& root) {
  const int64_t pattern = f.positive_int("sliding_window_pattern", 6);
  gemma_switches(c, f, root, 0.0, [pattern](int64_t i) { return (i + 1) % pattern != 0; });
  c.rope_theta = f.positive_number("rope_theta", 1e6);
  c.local_rope_theta = f.positive_number("rope_local_base_freq", 1e4);
  c.local_rope_scaling = RopeScaling{};
  if (f.has("rope_parameters")) {
    const json& rp = root.at("rope_parameters");
    if (rp.is_object() && (rp.contains("full_attention") || rp.contains("sliding_attention"))) {
      c.rope_scaling = RopeScaling{};
      gemma3_rope(rp, "full_attention", f.source_at("rope_parameters"), c.rope_theta, c.rope_scaling);
      gemma3_rope(rp, "sliding_attention", f.source_at("rope_parameters"), c.local_rope_theta, c.local_rope_scaling);
    }
  }
}

void check_experts_per_token(const ModelConfig& c, const Fields& f) {
  if (c.experts_per_token > c.num_experts)
    throw f.error("num_experts_per_tok", "(" + std::to_string(c.experts_per_token) + ") must not exceed the number of experts (" +
                                             std::to_string(c.num_experts) + ")");
}

// Mixtral (MixtralConfig, MixtralSparseMoeBlock): Mistral's attention without biases, sliding_window
// default null (none), rope_theta default 1e6 (the table's); every layer's MLP is
// num_local_experts (default 8) SwiGLU experts of intermediate_size, a router gate.weight [E, H]:
// softmax over the experts in float32, the top num_experts_per_tok (default 2), always
// renormalised to sum 1, kept in float32 for the product with each expert's output.
// router_jitter_noise acts in training only.
void mixtral_switches(ModelConfig& c, const Fields& f, const json&) {
  c.sliding_window = f.window("sliding_window", 0);
  c.norm_topk_prob = true;
  c.routing_weights_in_dtype = false;
  check_experts_per_token(c, f);
}

// Qwen3-MoE (Qwen3MoeConfig, Qwen3MoeSparseMoeBlock): Qwen3's attention (attention_bias, q/k norms
// over each head), a sliding window in every layer when use_sliding_window (default false,
// window 4096); the MLP of a layer is num_experts (default 128) experts of moe_intermediate_size
// (default 768) and a router; top num_experts_per_tok (default 8) of the float32 softmax,
// renormalised only when norm_topk_prob (default false), then cast to the compute dtype. Layers
// with a dense MLP (in mlp_only_layers, or off the decoder_sparse_step) and shared experts
// (Qwen2-MoE's, not in this family) are refused.
void qwen3_moe_switches(ModelConfig& c, const Fields& f, const json& root) {
  if (f.boolean("use_sliding_window", false)) c.sliding_window = f.window("sliding_window", 4096);
  c.norm_topk_prob = f.boolean("norm_topk_prob", false);
  c.routing_weights_in_dtype = true;
  check_experts_per_token(c, f);
  const int64_t step = f.positive_int("decoder_sparse_step", 1);
  if (step != 1 && c.num_hidden_layers > 0)
    throw f.error(
        "decoder_sparse_step",
        "is " + std::to_string(step) + ": layers with a dense MLP between the sparse ones are not supported (only 1, every layer sparse)");
  if (f.has("mlp_only_layers")) {
    const json& dense = root.at("mlp_only_layers");
    if (!dense.is_array()) throw f.error("mlp_only_layers", "must be a list of layer indices, got " + describe_json(dense));
    if (!dense.empty())
      throw f.error("mlp_only_layers",
                    "lists " + describe_json(dense) + ": layers with a dense MLP are not supported (only [], every layer sparse)");
  }
  if (f.has("shared_expert_intermediate_size") && root.at("shared_expert_intermediate_size") != 0)
    throw f.error("shared_expert_intermediate_size", "is set: shared experts are not supported");
}

// A switch of a family's tensors: fixed, or config.json's boolean `key` (false when absent).
struct Switch {
  const char* key;
  bool fallback;
};
constexpr Switch fixed(bool value) { return {nullptr, value}; }
constexpr Switch read_key(const char* key) { return {key, false}; }
constexpr Switch kAttentionBias = read_key("attention_bias");

// A count of a mixture of experts: config.json's `key`, else its `alias` (transformers'
// attribute_map aliases num_experts and num_local_experts in both MoE families, and save_pretrained
// writes the one the class does not declare), else `fallback` (0: the key is required).
struct CountKey {
  const char* key = nullptr;
  const char* alias = nullptr;
  int64_t fallback = 0;
};

// A mixture of experts' sizes (all keys null: a dense MLP).
struct Experts {
  CountKey count, intermediate, per_token;
};

// The fixed switches of a family's layers (ModelConfig's fields of the same names).
enum Layout : unsigned {
  kQkNorm = 1,
  kQkNormWhole = 2,
  kFusedQkv = 4,
  kFusedGateUp = 8,
  kNoPreNorms = 16,
  kPostNorms = 32,
  kMixtralNames = 64,
};

struct Family {
  const char* type;  // config.json's model_type
  // Class defaults for a size config.json leaves out (0: derived). num_key_value_heads: absent
  // means the class default (null always means num_attention_heads); head_dim: absent means
  // hidden_size / num_attention_heads unless the class has its own.
  int64_t kv_heads;
  int64_t head_dim;
  double rms_norm_eps;
  bool tie_word_embeddings;  // the class default
  // The tensors' switches: biases (q/k/v, o_proj, the MLP's), the fixed layout, the experts.
  Switch qkv_bias, o_bias, mlp_bias;
  unsigned layout;
  Experts experts;
  // What else the family reads (windows, RoPE, multipliers, routing), none: nothing.
  void (*switches)(ModelConfig& c, const Fields& f, const json& root);
  double rope_theta = 10000.0;  // the class's default_theta
};

// The table: transformers' configuration and modeling files of each family. Adding a family: its
// entry here (a new kind of tensor: its template in kLayerTemplates and its switch in ModelConfig),
// a golden model in test/support/transformersGolden.py, and `npm run families` for the editor.
const Family kFamilies[] = {
    // LlamaConfig: no kv default (num_attention_heads); LlamaAttention: attention_bias on all four
    // projections; LlamaMLP: mlp_bias
    {"llama", 0, 0, 1e-6, false, kAttentionBias, kAttentionBias, read_key("mlp_bias"), 0, {}, nullptr},
    // MistralConfig: num_key_value_heads=8; MistralAttention and MistralMLP have no biases (an
    // attention_bias field is not read)
    {"mistral", 8, 0, 1e-6, false, fixed(false), fixed(false), fixed(false), 0, {}, mistral_switches},
    // Qwen2Config: num_key_value_heads=32; Qwen2Attention: bias on q/k/v, none on o_proj
    {"qwen2", 32, 0, 1e-6, false, fixed(true), fixed(false), fixed(false), 0, {}, qwen_switches},
    // Qwen3Config: num_key_value_heads=32, head_dim=128; q/k norms over each head
    {"qwen3", 32, 128, 1e-6, false, kAttentionBias, kAttentionBias, fixed(false), kQkNorm, {}, qwen_switches},
    // GraniteConfig: no kv default; Llama's biases
    {"granite", 0, 0, 1e-6, false, kAttentionBias, kAttentionBias, read_key("mlp_bias"), 0, {}, granite_switches},
    // Olmo2Config: no kv default, rms_norm_eps=1e-5. Olmo2Attention: attention_bias on all four; q_norm
    // and k_norm over the whole q and k projections (num_heads * head_dim, num_kv_heads * head_dim)
    // before the split into heads and RoPE; no input_layernorm: the attention's and the MLP's
    // outputs go through post_attention_layernorm and post_feedforward_layernorm before each
    // residual add. Olmo2MLP has no bias.
    {"olmo2",
     0,
     0,
     1e-5,
     false,
     kAttentionBias,
     kAttentionBias,
     fixed(false),
     kQkNorm | kQkNormWhole | kNoPreNorms | kPostNorms,
     {},
     nullptr},
    // Phi3Config: no kv default, rms_norm_eps=1e-5; one qkv_proj (rows: q, k, v) and one gate_up_proj
    // (rows: gate, then up), no biases
    {"phi3", 0, 0, 1e-5, false, fixed(false), fixed(false), fixed(false), kFusedQkv | kFusedGateUp, {}, phi3_switches},
    // Gemma2Config: num_key_value_heads=4, head_dim=256, tied embeddings; attention_bias on all four,
    // no MLP bias, a norm before and after both attention and MLP
    {"gemma2", 4, 256, 1e-6, true, kAttentionBias, kAttentionBias, fixed(false), kPostNorms, {}, gemma2_switches},
    // Gemma3TextConfig: the same, and q/k norms over each head
    {"gemma3_text", 4, 256, 1e-6, true, kAttentionBias, kAttentionBias, fixed(false), kQkNorm | kPostNorms, {}, gemma3_switches},
    // MixtralConfig: num_key_value_heads=8, rms_norm_eps=1e-5, default_theta 1e6; no biases;
    // num_local_experts (default 8) experts of intermediate_size, num_experts_per_tok default 2
    {"mixtral", 8, 0, 1e-5, false, fixed(false), fixed(false), fixed(false), kMixtralNames,
     Experts{{"num_local_experts", "num_experts", 8}, {"intermediate_size", nullptr, 0}, {"num_experts_per_tok", nullptr, 2}},
     mixtral_switches, 1e6},
    // Qwen3MoeConfig: num_key_value_heads=4, head_dim from the sizes; Qwen3's attention; num_experts
    // (default 128) experts of moe_intermediate_size (default 768), num_experts_per_tok default 8
    {"qwen3_moe", 4, 0, 1e-6, false, kAttentionBias, kAttentionBias, fixed(false), kQkNorm,
     Experts{{"num_experts", "num_local_experts", 128}, {"moe_intermediate_size", nullptr, 768}, {"num_experts_per_tok", nullptr, 8}},
     qwen3_moe_switches},
};

const Family* find_family(const std::string& type) {
  for (const Family& family : kFamilies)
    if (type == family.type) return &family;
  return nullptr;
}

bool read_switch(const Fields& f, const Switch& s) { return s.key ? f.boolean(s.key, s.fallback) : s.fallback; }

int64_t read_count(const Fields& f, const CountKey& k) {
  if (k.alias && !f.has(k.key)) return f.positive_int(k.alias, k.fallback);
  return k.fallback > 0 ? f.positive_int(k.key, k.fallback) : f.positive_int(k.key);
}

// The family's tensor switches from its table entry and config.json.
void apply_layout(ModelConfig& c, const Fields& f, const Family& family) {
  c.qkv_bias = read_switch(f, family.qkv_bias);
  c.o_bias = read_switch(f, family.o_bias);
  c.mlp_bias = read_switch(f, family.mlp_bias);
  c.qk_norm = family.layout & kQkNorm;
  c.qk_norm_whole = family.layout & kQkNormWhole;
  c.fused_qkv = family.layout & kFusedQkv;
  c.fused_gate_up = family.layout & kFusedGateUp;
  c.pre_norms = !(family.layout & kNoPreNorms);
  c.post_norms = family.layout & kPostNorms;
  c.mixtral_names = family.layout & kMixtralNames;
  if (family.experts.count.key) {
    c.num_experts = read_count(f, family.experts.count);
    c.expert_intermediate_size = read_count(f, family.experts.intermediate);
    c.experts_per_token = read_count(f, family.experts.per_token);
  }
}

// ----------------------------------------------------------------------------
// The tensors, as templates over the config: a shape's dimensions are sums of products of sizes
// (size_value) and integers, a template is there when each of its `when` switches (switch_value;
// "!name": off) holds; a per-expert template is there once per expert, "{e}" in its name the
// expert's number.

struct TensorTemplate {
  const char* name;
  std::vector<const char*> shape;
  TensorRole role;
  LayerSlot slot;
  std::vector<const char*> when;
  bool per_expert = false;
};

constexpr const char* kQ = "num_attention_heads*head_dim";
constexpr const char* kKv = "num_key_value_heads*head_dim";

// One decoder layer, in the order of the model's state_dict.
const std::vector<TensorTemplate>& layer_templates() {
  using R = TensorRole;
  using S = LayerSlot;
  static const std::vector<TensorTemplate> table = {
      {"self_attn.o_proj.weight", {"hidden_size", kQ}, R::attention, S::o_proj, {"fused_qkv"}},  // Phi3Attention declares o_proj first
      {"self_attn.qkv_proj.weight",
       {"num_attention_heads*head_dim+2*num_key_value_heads*head_dim", "hidden_size"},
       R::attention,
       S::qkv_proj,
       {"fused_qkv"}},
      {"self_attn.q_proj.weight", {kQ, "hidden_size"}, R::attention, S::q_proj, {"!fused_qkv"}},
      {"self_attn.q_proj.bias", {kQ}, R::bias, S::q_bias, {"!fused_qkv", "qkv_bias"}},
      {"self_attn.k_proj.weight", {kKv, "hidden_size"}, R::attention, S::k_proj, {"!fused_qkv"}},
      {"self_attn.k_proj.bias", {kKv}, R::bias, S::k_bias, {"!fused_qkv", "qkv_bias"}},
      {"self_attn.v_proj.weight", {kKv, "hidden_size"}, R::attention, S::v_proj, {"!fused_qkv"}},
      {"self_attn.v_proj.bias", {kKv}, R::bias, S::v_bias, {"!fused_qkv", "qkv_bias"}},
      {"self_attn.o_proj.weight", {"hidden_size", kQ}, R::attention, S::o_proj, {"!fused_qkv"}},
      {"self_attn.o_proj.bias", {"hidden_size"}, R::bias, S::o_bias, {"o_bias"}},
      {"self_attn.q_norm.weight", {"head_dim"}, R::norm, S::q_norm, {"qk_norm", "!qk_norm_whole"}},
      {"self_attn.q_norm.weight", {kQ}, R::norm, S::q_norm, {"qk_norm", "qk_norm_whole"}},
      {"self_attn.k_norm.weight", {"head_dim"}, R::norm, S::k_norm, {"qk_norm", "!qk_norm_whole"}},
      {"self_attn.k_norm.weight", {kKv}, R::norm, S::k_norm, {"qk_norm", "qk_norm_whole"}},
      {"block_sparse_moe.gate.weight", {"num_experts", "hidden_size"}, R::router, S::router, {"experts", "mixtral_names"}},
      {"mlp.gate.weight", {"num_experts", "hidden_size"}, R::router, S::router, {"experts", "!mixtral_names"}},
      {"block_sparse_moe.experts.{e}.w1.weight",
       {"expert_intermediate_size", "hidden_size"},
       R::mlp_weight,
       S::expert_gate,
       {"experts", "mixtral_names"},
       true},
      {"block_sparse_moe.experts.{e}.w3.weight",
       {"expert_intermediate_size", "hidden_size"},
       R::mlp_weight,
       S::expert_up,
       {"experts", "mixtral_names"},
       true},
      {"block_sparse_moe.experts.{e}.w2.weight",
       {"hidden_size", "expert_intermediate_size"},
       R::mlp_weight,
       S::expert_down,
       {"experts", "mixtral_names"},
       true},
      {"mlp.experts.{e}.gate_proj.weight",
       {"expert_intermediate_size", "hidden_size"},
       R::mlp_weight,
       S::expert_gate,
       {"experts", "!mixtral_names"},
       true},
      {"mlp.experts.{e}.up_proj.weight",
       {"expert_intermediate_size", "hidden_size"},
       R::mlp_weight,
       S::expert_up,
       {"experts", "!mixtral_names"},
       true},
      {"mlp.experts.{e}.down_proj.weight",
       {"hidden_size", "expert_intermediate_size"},
       R::mlp_weight,
       S::expert_down,
       {"experts", "!mixtral_names"},
       true},
      {"mlp.gate_up_proj.weight", {"2*intermediate_size", "hidden_size"}, R::mlp_weight, S::gate_up_proj, {"!experts", "fused_gate_up"}},
      {"mlp.gate_proj.weight", {"intermediate_size", "hidden_size"}, R::mlp_weight, S::gate_proj, {"!experts", "!fused_gate_up"}},
      {"mlp.gate_proj.bias", {"intermediate_size"}, R::bias, S::gate_bias, {"!fused_gate_up", "mlp_bias"}},
      {"mlp.up_proj.weight", {"intermediate_size", "hidden_size"}, R::mlp_weight, S::up_proj, {"!experts", "!fused_gate_up"}},
      {"mlp.up_proj.bias", {"intermediate_size"}, R::bias, S::up_bias, {"!fused_gate_up", "mlp_bias"}},
      {"mlp.down_proj.weight", {"hidden_size", "intermediate_size"}, R::mlp_weight, S::down_proj, {"!experts"}},
      {"mlp.down_proj.bias", {"hidden_size"}, R::bias, S::down_bias, {"mlp_bias"}},
      {"input_layernorm.weight", {"hidden_size"}, R::norm, S::input_norm, {"pre_norms"}},
      // before the MLP where a family has pre-norms only (HF's name), after attention otherwise
      {"post_attention_layernorm.weight", {"hidden_size"}, R::norm, S::post_attention_norm, {}},
      {"pre_feedforward_layernorm.weight", {"hidden_size"}, R::norm, S::pre_feedforward_norm, {"pre_norms", "post_norms"}},
      {"post_feedforward_layernorm.weight", {"hidden_size"}, R::norm, S::post_feedforward_norm, {"post_norms"}},
  };
  return table;
}

// The tensors outside the layers: the embedding (before them), the final norm and the LM head (after).
const std::vector<TensorTemplate>& model_templates() {
  static const std::vector<TensorTemplate> table = {
      {"model.embed_tokens.weight", {"vocab_size", "hidden_size"}, TensorRole::embedding, LayerSlot::input_norm, {}},
      {"model.norm.weight", {"hidden_size"}, TensorRole::norm, LayerSlot::input_norm, {}},
      {"lm_head.weight", {"vocab_size", "hidden_size"}, TensorRole::lm_head, LayerSlot::input_norm, {"!tie_word_embeddings"}},
  };
  return table;
}

// The sizes a shape may name, and the switches a template may need: ModelConfig's fields.
const std::vector<std::pair<const char*, int64_t ModelConfig::*>>& size_fields() {
  static const std::vector<std::pair<const char*, int64_t ModelConfig::*>> sizes = {
      {"vocab_size", &ModelConfig::vocab_size},
      {"hidden_size", &ModelConfig::hidden_size},
      {"intermediate_size", &ModelConfig::intermediate_size},
      {"num_attention_heads", &ModelConfig::num_attention_heads},
      {"num_key_value_heads", &ModelConfig::num_key_value_heads},
      {"head_dim", &ModelConfig::head_dim},
      {"num_experts", &ModelConfig::num_experts},
      {"expert_intermediate_size", &ModelConfig::expert_intermediate_size},
      {"experts_per_token", &ModelConfig::experts_per_token},
  };
  return sizes;
}

bool switch_value(const ModelConfig& c, const std::string& name) {
  static const std::map<std::string, bool ModelConfig::*> switches = {
      {"qkv_bias", &ModelConfig::qkv_bias},
      {"o_bias", &ModelConfig::o_bias},
      {"mlp_bias", &ModelConfig::mlp_bias},
      {"qk_norm", &ModelConfig::qk_norm},
      {"qk_norm_whole", &ModelConfig::qk_norm_whole},
      {"fused_qkv", &ModelConfig::fused_qkv},
      {"fused_gate_up", &ModelConfig::fused_gate_up},
      {"pre_norms", &ModelConfig::pre_norms},
      {"post_norms", &ModelConfig::post_norms},
      {"mixtral_names", &ModelConfig::mixtral_names},
      {"tie_word_embeddings", &ModelConfig::tie_word_embeddings},
  };
  if (name == "experts") return c.num_experts > 0;
  auto it = switches.find(name);
  if (it == switches.end()) throw std::logic_error("family table: unknown switch '" + name + "'");
  return c.*(it->second);
}

int64_t size_value(const ModelConfig& c, const std::string& name) {
  for (const auto& [size, field] : size_fields())
    if (name == size) return c.*field;
  throw std::logic_error("family table: unknown size '" + name + "'");
}

// A dimension: terms joined by '+', each factors joined by '*', each an integer or a size.
int64_t dimension(const ModelConfig& c, const std::string& formula) {
  int64_t sum = 0;
  std::stringstream terms(formula);
  for (std::string term; std::getline(terms, term, '+');) {
    int64_t product = 1;
    std::stringstream factors(term);
    for (std::string factor; std::getline(factors, factor, '*');)
      product *= std::isdigit(static_cast<unsigned char>(factor[0])) ? std::stoll(factor) : size_value(c, factor);
    sum += product;
  }
  return sum;
}

bool applies(const ModelConfig& c, const TensorTemplate& t) {
  for (const std::string when : t.when)
    if (when[0] == '!' ? switch_value(c, when.substr(1)) : !switch_value(c, when)) return false;
  return true;
}

LayerTensor tensor_of(const ModelConfig& c, const TensorTemplate& t, int64_t expert) {
  std::string name = t.name;
  const size_t e = name.find("{e}");
  if (e != std::string::npos) name.replace(e, 3, std::to_string(expert));
  std::vector<int64_t> shape;
  for (const char* d : t.shape) shape.push_back(dimension(c, d));
  return {name, shape, t.role, t.slot, expert};
}

const char* role_name(TensorRole role) {
  switch (role) {
    case TensorRole::embedding:
      return "embedding";
    case TensorRole::norm:
      return "norm";
    case TensorRole::attention:
      return "attention";
    case TensorRole::mlp_weight:
      return "mlp_weight";
    case TensorRole::bias:
      return "bias";
    case TensorRole::lm_head:
      return "lm_head";
    case TensorRole::router:
      return "router";
  }
  return "?";
}

nlohmann::ordered_json templates_json(const std::vector<TensorTemplate>& templates) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const TensorTemplate& t : templates) {
    nlohmann::ordered_json entry = {{"name", t.name}, {"role", role_name(t.role)}, {"shape", t.shape}, {"when", t.when}};
    if (t.per_expert) entry["per_expert"] = true;
    out.push_back(entry);
  }
  return out;
}

nlohmann::ordered_json switch_json(const Switch& s) {
  if (!s.key) return s.fallback;
  return {{"key", s.key}, {"default", s.fallback}};
}

nlohmann::ordered_json count_json(const CountKey& k) {
  nlohmann::ordered_json out = {{"key", k.key}};
  if (k.alias) out["alias"] = k.alias;
  out["default"] = k.fallback > 0 ? nlohmann::ordered_json(k.fallback) : nlohmann::ordered_json(nullptr);
  return out;
}

}  // namespace

std::string supported_model_types() {
  std::string out;
  for (const Family& family : kFamilies) out += (out.empty() ? "" : ", ") + std::string(family.type);
  return out;
}

std::vector<LayerTensor> layer_tensors(const ModelConfig& c) {
  std::vector<LayerTensor> out;
  const std::vector<TensorTemplate>& table = layer_templates();
  for (size_t i = 0; i < table.size(); i++) {
    if (!table[i].per_expert) {
      if (applies(c, table[i])) out.push_back(tensor_of(c, table[i], -1));
      continue;
    }
    // a run of per-expert templates: expert by expert, each expert's in the run's order
    size_t end = i;
    while (end < table.size() && table[end].per_expert) end++;
    for (int64_t e = 0; e < c.num_experts; e++)
      for (size_t j = i; j < end; j++)
        if (applies(c, table[j])) out.push_back(tensor_of(c, table[j], e));
    i = end - 1;
  }
  return out;
}

std::vector<LayerTensor> model_tensors(const ModelConfig& c) {
  std::vector<LayerTensor> out;
  for (const TensorTemplate& t : model_templates())
    if (applies(c, t)) out.push_back(tensor_of(c, t, -1));
  return out;
}

std::string families_table_json() {
  using ojson = nlohmann::ordered_json;
  ojson families = ojson::array();
  for (const Family& f : kFamilies) {
    ojson defaults = {{"num_key_value_heads", f.kv_heads > 0 ? ojson(f.kv_heads) : ojson(nullptr)},
                      {"head_dim", f.head_dim > 0 ? ojson(f.head_dim) : ojson(nullptr)},
                      {"tie_word_embeddings", f.tie_word_embeddings}};
    ojson switches = {
        {"qkv_bias", switch_json(f.qkv_bias)},
        {"o_bias", switch_json(f.o_bias)},
        {"mlp_bias", switch_json(f.mlp_bias)},
        {"qk_norm", bool(f.layout & kQkNorm)},
        {"qk_norm_whole", bool(f.layout & kQkNormWhole)},
        {"fused_qkv", bool(f.layout & kFusedQkv)},
        {"fused_gate_up", bool(f.layout & kFusedGateUp)},
        {"pre_norms", !(f.layout & kNoPreNorms)},
        {"post_norms", bool(f.layout & kPostNorms)},
        {"mixtral_names", bool(f.layout & kMixtralNames)},
    };
    ojson experts = nullptr;
    if (f.experts.count.key)
      experts = {{"num_experts", count_json(f.experts.count)},
                 {"expert_intermediate_size", count_json(f.experts.intermediate)},
                 {"experts_per_token", count_json(f.experts.per_token)}};
    families.push_back({{"model_type", f.type}, {"defaults", defaults}, {"switches", switches}, {"experts", experts}});
  }
  ojson table = {
      {"about",
       "The runner's family table (native-runner/src/config.cpp), written by `bprof-runner --families`; regenerate with `npm run "
       "families`, never by hand."},
      {"families", families},
      {"model_tensors", templates_json(model_templates())},
      {"layer_tensors", templates_json(layer_templates())},
  };
  return table.dump(2) + "\n";
}

namespace {

ModelConfig parse_config(const std::string& text, const std::string& source, bool with_lines) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    throw RunnerError(ErrorCode::bad_model, source + ": not valid JSON: " + e.what());
  }
  if (!root.is_object()) throw RunnerError(ErrorCode::bad_model, source + ": not a JSON object");
  Fields f = with_lines ? Fields(root, source, top_level_key_lines(text)) : Fields(root, source);

  ModelConfig c;
  c.model_type = f.string("model_type", "");
  if (c.model_type.empty()) throw f.error("model_type", "is missing");
  const Family* family = find_family(c.model_type);
  if (!family)
    throw f.error("model_type", "is '" + c.model_type + "', which the runner does not load (supported: " + supported_model_types() + ")");

  // Defaults below are those of transformers' LlamaConfig, MistralConfig, Qwen2Config and
  // Qwen3Config for a field that config.json leaves out (save_pretrained writes every field the
  // base PretrainedConfig lacks, so real checkpoints rarely rely on them). The sizes themselves
  // have no sensible default and are required.
  c.vocab_size = f.positive_int("vocab_size");
  c.hidden_size = f.positive_int("hidden_size");
  c.intermediate_size = f.positive_int("intermediate_size");
  c.num_hidden_layers = f.positive_int("num_hidden_layers");
  c.num_attention_heads = f.positive_int("num_attention_heads");
  // num_key_value_heads: null means num_attention_heads in every family (`if num_key_value_heads is
  // None`); absent means the class default: Llama none (so num_attention_heads), Mistral 8, Qwen 32.
  const int64_t kv_default = family->kv_heads > 0 ? family->kv_heads : c.num_attention_heads;
  const bool kv_defaulted = !f.has("num_key_value_heads") && !f.is_null("num_key_value_heads");
  c.num_key_value_heads = f.is_null("num_key_value_heads") ? c.num_attention_heads : f.positive_int("num_key_value_heads", kv_default);
  // head_dim: hidden_size / num_attention_heads unless given (Llama, Mistral, Qwen2 read an explicit
  // head_dim the same way); Qwen3Config's own default is 128, independent of hidden_size.
  c.head_dim = f.positive_int("head_dim", family->head_dim > 0 ? family->head_dim : c.hidden_size / c.num_attention_heads);
  c.rms_norm_eps = f.positive_number("rms_norm_eps", family->rms_norm_eps);
  c.tie_word_embeddings = f.boolean("tie_word_embeddings", family->tie_word_embeddings);
  c.max_position_embeddings = f.has("max_position_embeddings") ? f.positive_int("max_position_embeddings") : 0;

  if (c.head_dim <= 0) throw f.error("hidden_size", "is smaller than num_attention_heads");
  if (c.head_dim % 2 != 0) throw f.error("head_dim", "must be even for rotary embeddings, got " + std::to_string(c.head_dim));
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    throw f.error("num_key_value_heads",
                  (kv_defaulted ? "is missing, and " + c.model_type + "'s default " + std::to_string(kv_default) + " does not divide"
                                : std::string("must divide")) +
                      " num_attention_heads (" + std::to_string(c.num_attention_heads) + ")");

  // RoPE: theta and scaling live at the top level (transformers 4.x) or in rope_parameters (5.x).
  // The four families compute RoPE the same way (rotate-half, the same scaling types), and theta
  // defaults to 10000 in all four classes.
  c.rope_theta = f.positive_number("rope_theta", family->rope_theta);
  if (f.has("rope_parameters")) {
    const json& rp = root.at("rope_parameters");
    const std::string where = f.source_at("rope_parameters") + " rope_parameters";
    if (rp.is_object()) c.rope_theta = Fields(rp, where).positive_number("rope_theta", c.rope_theta);
    c.rope_scaling = parse_rope_scaling(rp, where);
  } else if (f.has("rope_scaling")) {
    c.rope_scaling = parse_rope_scaling(root.at("rope_scaling"), f.source_at("rope_scaling") + " rope_scaling");
  }

  apply_layout(c, f, *family);
  if (family->switches) family->switches(c, f, root);
  // hidden_act names the activation of every SwiGLU family (Gemma's switches read their own
  // hidden_activation, and Gemma 2 checkpoints carry a hidden_act its config class ignores)
  if (c.activation == Activation::silu) {
    const std::string act = f.string("hidden_act", "silu");
    if (act != "silu") throw f.error("hidden_act", "'" + act + "' is not supported (supported: silu)");
  }
  return c;
}

}  // namespace

ModelConfig parse_model_config(const std::string& text, const std::string& source) { return parse_config(text, source, false); }

ModelConfig load_model_config(const std::string& dir) {
  const std::string path = dir + "/config.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RunnerError(ErrorCode::bad_model, path + ": cannot read (missing?)");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_config(ss.str(), path, true);
}

}  // namespace bprof
