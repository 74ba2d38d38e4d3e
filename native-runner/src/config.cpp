#include "config.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

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

  bool has(const char* key) const {
    auto it = obj_.find(key);
    return it != obj_.end() && !it->is_null();
  }
  RunnerError error(const std::string& key, const std::string& what) const {
    return RunnerError(ErrorCode::bad_model, source_ + ": '" + key + "' " + what);
  }
  int64_t positive_int(const char* key) const {
    if (!has(key)) throw error(key, "is missing");
    const json& v = obj_.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() <= 0) throw error(key, "must be a positive integer, got " + describe_json(v));
    return v.get<int64_t>();
  }
  int64_t positive_int(const char* key, int64_t fallback) const { return has(key) ? positive_int(key) : fallback; }
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
};

// rope_scaling (transformers 4.x) or rope_parameters (5.x): {"rope_type" or "type": ..., factor, ...}
RopeScaling parse_rope_scaling(const json& obj, const std::string& source) {
  RopeScaling rs;
  if (obj.is_null()) return rs;
  if (!obj.is_object()) throw RunnerError(ErrorCode::bad_model, source + ": 'rope_scaling' must be an object or null");
  Fields f(obj, source + " rope_scaling");
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
    if (rs.high_freq_factor <= rs.low_freq_factor)
      throw f.error("high_freq_factor", "must be greater than low_freq_factor");
    return rs;
  }
  throw RunnerError(ErrorCode::bad_model, source + ": rope scaling type '" + type +
                                              "' is not supported (supported: default, linear, llama3)");
}

}  // namespace

ModelConfig parse_model_config(const std::string& text, const std::string& source) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    throw RunnerError(ErrorCode::bad_model, source + ": not valid JSON: " + e.what());
  }
  if (!root.is_object()) throw RunnerError(ErrorCode::bad_model, source + ": not a JSON object");
  Fields f(root, source);

  ModelConfig c;
  c.model_type = f.string("model_type", "");
  if (c.model_type.empty()) throw f.error("model_type", "is missing");
  if (c.model_type != "llama")
    throw RunnerError(ErrorCode::bad_model,
                      source + ": model_type '" + c.model_type + "' is not supported (supported: llama)");

  c.vocab_size = f.positive_int("vocab_size");
  c.hidden_size = f.positive_int("hidden_size");
  c.intermediate_size = f.positive_int("intermediate_size");
  c.num_hidden_layers = f.positive_int("num_hidden_layers");
  c.num_attention_heads = f.positive_int("num_attention_heads");
  c.num_key_value_heads = f.positive_int("num_key_value_heads", c.num_attention_heads);
  c.head_dim = f.positive_int("head_dim", c.hidden_size / c.num_attention_heads);
  c.rms_norm_eps = f.positive_number("rms_norm_eps", 1e-6);
  c.tie_word_embeddings = f.boolean("tie_word_embeddings", false);
  c.max_position_embeddings = f.has("max_position_embeddings") ? f.positive_int("max_position_embeddings") : 0;

  if (c.head_dim <= 0) throw f.error("hidden_size", "is smaller than num_attention_heads");
  if (c.head_dim % 2 != 0) throw f.error("head_dim", "must be even for rotary embeddings, got " + std::to_string(c.head_dim));
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    throw f.error("num_key_value_heads", "must divide num_attention_heads (" + std::to_string(c.num_attention_heads) + ")");

  std::string act = f.string("hidden_act", "silu");
  if (act != "silu") throw f.error("hidden_act", "'" + act + "' is not supported (supported: silu)");

  // RoPE: theta and scaling live at the top level (transformers 4.x) or in rope_parameters (5.x).
  c.rope_theta = f.positive_number("rope_theta", 10000.0);
  if (f.has("rope_parameters")) {
    const json& rp = root.at("rope_parameters");
    if (rp.is_object()) c.rope_theta = Fields(rp, source + " rope_parameters").positive_number("rope_theta", c.rope_theta);
    c.rope_scaling = parse_rope_scaling(rp, source);
  } else if (f.has("rope_scaling")) {
    c.rope_scaling = parse_rope_scaling(root.at("rope_scaling"), source);
  }

  // Llama's attention_bias puts a bias on all four attention projections.
  bool attention_bias = f.boolean("attention_bias", false);
  c.qkv_bias = attention_bias;
  c.o_bias = attention_bias;
  c.mlp_bias = f.boolean("mlp_bias", false);
  return c;
}

ModelConfig load_model_config(const std::string& dir) {
  const std::string path = dir + "/config.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RunnerError(ErrorCode::bad_model, path + ": cannot read (missing?)");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_model_config(ss.str(), path);
}

}  // namespace bprof
