// config.json and job file parsing: defaults, and errors that say which field or item is wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "config.h"
#include "errors.h"
#include "job.h"
#include "support.h"

namespace bprof {
namespace {

using json = nlohmann::json;

json llama_config() { return test::tiny_llama_config(test::TinyLlamaSpec{}); }

// Runs `f`, expects a RunnerError with `code` whose message contains every fragment.
template <class F>
void expect_error(F f, ErrorCode code, std::initializer_list<std::string> fragments) {
  try {
    f();
    FAIL() << "no error";
  } catch (const RunnerError& e) {
    EXPECT_EQ(error_code_name(e.code()), std::string(error_code_name(code))) << e.what();
    for (const auto& frag : fragments) EXPECT_NE(std::string(e.what()).find(frag), std::string::npos) << e.what();
  }
}

// --- config ---------------------------------------------------------------

TEST(Config, ReadsLlamaFieldsAndDefaults) {
  json j = llama_config();
  j.erase("num_key_value_heads");
  j.erase("rope_theta");
  j.erase("tie_word_embeddings");
  j["head_dim"] = nullptr;  // null counts as absent, as in many HF configs
  ModelConfig c = parse_model_config(j.dump(), "config.json");
  EXPECT_EQ(c.vocab_size, 258);
  EXPECT_EQ(c.num_key_value_heads, c.num_attention_heads);
  EXPECT_EQ(c.head_dim, 32 / 4);
  EXPECT_DOUBLE_EQ(c.rope_theta, 10000.0);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_EQ(c.rope_scaling.type, RopeType::standard);
  EXPECT_FALSE(c.qkv_bias || c.o_bias || c.mlp_bias || c.qk_norm);
}

TEST(Config, RefusesOtherModelTypesByName) {
  json j = llama_config();
  j["model_type"] = "gpt2";
  expect_error([&] { parse_model_config(j.dump(), "config.json"); }, ErrorCode::bad_model,
               {"config.json", "'gpt2'", "llama, mistral, qwen2, qwen3, granite"});
}

// Read from a folder, config.json's errors name a line: that of the key they are about, and for a
// key the family needs and the file lacks, that of model_type; a model type not in the table is
// refused naming the table's types.
TEST(Config, ErrorsFromAFileNameTheirLine) {
  test::TempDir dir;
  auto error_of = [&](const json& j) {
    test::write_file(dir.path() + "/config.json", j.dump(2));
    try {
      load_model_config(dir.path());
    } catch (const RunnerError& e) {
      EXPECT_EQ(e.code(), ErrorCode::bad_model);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  json j = llama_config();
  j["model_type"] = "gemma2";
  const json gemma = j;
  auto line_of = [](const json& obj, const std::string& key) {  // the line of the top-level key in dump(2)
    const std::string text = obj.dump(2);
    const size_t at = text.find("\n  \"" + key + "\":");
    return std::to_string(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at) + 1, '\n') + 1);
  };
  j.erase("hidden_size");
  const std::string path = dir.path() + "/config.json:";
  EXPECT_NE(error_of(j).find(path + line_of(j, "model_type") + ": 'hidden_size' is missing (model_type 'gemma2'"), std::string::npos)
      << error_of(j);
  j = gemma;
  j["query_pre_attn_scalar"] = "256";
  EXPECT_NE(error_of(j).find(path + line_of(j, "query_pre_attn_scalar") + ": 'query_pre_attn_scalar' must be a positive number"),
            std::string::npos)
      << error_of(j);
  j = gemma;
  j["model_type"] = "gpt_neox";
  const std::string refused = error_of(j);
  EXPECT_NE(refused.find(path + line_of(j, "model_type") + ": 'model_type' is 'gpt_neox'"), std::string::npos) << refused;
  EXPECT_NE(refused.find("llama, mistral, qwen2, qwen3, granite, olmo2, phi3, gemma2, gemma3_text"), std::string::npos) << refused;
  // within an object, the line of its top-level key
  j = gemma;
  j["model_type"] = "llama";
  j["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  EXPECT_NE(error_of(j).find(path + line_of(j, "rope_scaling") + " rope_scaling: rope scaling type 'yarn'"), std::string::npos)
      << error_of(j);
}

json family_config(const std::string& type) {
  test::TinyLlamaSpec spec;
  spec.model_type = type;
  return test::tiny_llama_config(spec);
}

ModelConfig parse(const json& j) { return parse_model_config(j.dump(), "config.json"); }

// Granite: Llama's layout and biases, its four multipliers (GraniteConfig: all 1.0 when absent,
// the attention's scale 1.0 too, not 1/sqrt(head_dim)); neutral in the other families.
TEST(Config, GraniteReadsItsMultipliers) {
  json j = family_config("granite");
  j["attention_bias"] = true;
  ModelConfig absent = parse(j);
  EXPECT_TRUE(absent.qkv_bias && absent.o_bias);
  EXPECT_DOUBLE_EQ(absent.embedding_multiplier, 1.0);
  EXPECT_DOUBLE_EQ(absent.attention_multiplier, 1.0);
  j["embedding_multiplier"] = 12;
  j["residual_multiplier"] = 0.22;
  j["attention_multiplier"] = 0.0078125;
  j["logits_scaling"] = 8.0;
  ModelConfig c = parse(j);
  EXPECT_DOUBLE_EQ(c.embedding_multiplier, 12.0);
  EXPECT_DOUBLE_EQ(c.residual_multiplier, 0.22);
  EXPECT_DOUBLE_EQ(c.attention_multiplier, 0.0078125);
  EXPECT_DOUBLE_EQ(c.logits_scaling, 8.0);
  j["logits_scaling"] = 0;
  expect_error([&] { parse(j); }, ErrorCode::bad_model, {"config.json", "'logits_scaling'", "positive number"});
  ModelConfig llama = parse(family_config("llama"));
  EXPECT_DOUBLE_EQ(llama.attention_multiplier, 0.0);
  EXPECT_DOUBLE_EQ(llama.residual_multiplier, 1.0);
}

// OLMo 2's layer in the family table: no input norm, a norm after the MLP, q/k norms the size of
// the q and k projections; Olmo2Config's rms_norm_eps default 1e-5.
// Phi-3's fused tensors in the table (its gate_up_proj one candidate), its window in every layer,
// and a partial rotary factor refused by name.
TEST(Config, Phi3FusedTensorsAndItsRefusals) {
  json j = family_config("phi3");
  j["sliding_window"] = 16;
  const ModelConfig c = parse(j);
  EXPECT_EQ(c.window_of_layer(0), 16);
  std::vector<std::string> names, candidates;
  for (const LayerTensor& t : layer_tensors(c)) {
    names.push_back(t.name);
    if (t.role == TensorRole::mlp_weight) candidates.push_back(t.name);
  }
  EXPECT_EQ(candidates, (std::vector<std::string>{"mlp.gate_up_proj.weight", "mlp.down_proj.weight"}));
  EXPECT_NE(std::find(names.begin(), names.end(), "self_attn.qkv_proj.weight"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "self_attn.q_proj.weight"), names.end());
  j["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 10000.0}, {"partial_rotary_factor", 0.75}};
  expect_error([&] { parse(j); }, ErrorCode::bad_model, {"config.json", "rope_parameters.partial_rotary_factor", "0.75"});
}

// Mixtral and Qwen3-MoE from the table: the experts' counts, sizes and routing from each class's
// defaults or either name of the expert count; every expert's gate/up/down are MLP weights
// (candidates, expert by expert), the router its own role; the options the runner does not compute
// refused by their field.
TEST(Config, MixturesOfExpertsReadTheirExpertsAndRefuseDenseLayers) {
  json j = family_config("mixtral");
  for (const char* key : {"num_key_value_heads", "rope_theta", "rope_parameters"}) j.erase(key);
  j["num_attention_heads"] = 8;
  ModelConfig c = parse(j);
  EXPECT_EQ(c.num_experts, 8);  // MixtralConfig: num_local_experts 8, num_experts_per_tok 2, kv heads 8, theta 1e6
  EXPECT_EQ(c.experts_per_token, 2);
  EXPECT_EQ(c.num_key_value_heads, 8);
  EXPECT_DOUBLE_EQ(c.rope_theta, 1e6);
  EXPECT_EQ(c.expert_intermediate_size, c.intermediate_size);
  EXPECT_TRUE(c.norm_topk_prob);
  EXPECT_EQ(c.sliding_window, 0);
  j["num_experts"] = 3;  // the attribute_map's alias
  c = parse(j);
  EXPECT_EQ(c.num_experts, 3);
  std::vector<std::string> candidates, routers;
  for (const LayerTensor& t : layer_tensors(c)) {
    if (t.role == TensorRole::mlp_weight) candidates.push_back(t.name);
    if (t.role == TensorRole::router) routers.push_back(t.name);
  }
  EXPECT_EQ(routers, std::vector<std::string>{"block_sparse_moe.gate.weight"});
  ASSERT_EQ(candidates.size(), 9u);
  EXPECT_EQ(candidates[0], "block_sparse_moe.experts.0.w1.weight");
  EXPECT_EQ(candidates[1], "block_sparse_moe.experts.0.w3.weight");
  EXPECT_EQ(candidates[2], "block_sparse_moe.experts.0.w2.weight");
  EXPECT_EQ(candidates[8], "block_sparse_moe.experts.2.w2.weight");
  j["num_experts_per_tok"] = 4;
  expect_error([&] { parse(j); }, ErrorCode::bad_model, {"num_experts_per_tok", "must not exceed", "(3)"});

  json q = family_config("qwen3_moe");
  for (const char* key : {"num_key_value_heads", "head_dim"}) q.erase(key);
  c = parse(q);
  EXPECT_EQ(c.num_experts, 128);  // Qwen3MoeConfig: 128 experts of 768, 8 per token, not renormalised
  EXPECT_EQ(c.experts_per_token, 8);
  EXPECT_EQ(c.expert_intermediate_size, 768);
  EXPECT_FALSE(c.norm_topk_prob);
  EXPECT_TRUE(c.qk_norm);
  EXPECT_EQ(c.num_key_value_heads, 4);
  EXPECT_EQ(c.head_dim, c.hidden_size / c.num_attention_heads);
  q["num_local_experts"] = 4;  // what save_pretrained writes
  q["num_experts_per_tok"] = 2;
  q["moe_intermediate_size"] = 16;
  q["norm_topk_prob"] = true;
  c = parse(q);
  EXPECT_EQ(c.num_experts, 4);
  EXPECT_TRUE(c.norm_topk_prob);
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const LayerTensor& t : layer_tensors(c)) shapes[t.name] = t.shape;
  EXPECT_EQ(shapes.at("mlp.gate.weight"), (std::vector<int64_t>{4, c.hidden_size}));
  EXPECT_EQ(shapes.at("mlp.experts.3.down_proj.weight"), (std::vector<int64_t>{c.hidden_size, 16}));
  EXPECT_EQ(shapes.count("mlp.gate_proj.weight"), 0u);
  q["mlp_only_layers"] = json::array({0});
  expect_error([&] { parse(q); }, ErrorCode::bad_model, {"mlp_only_layers", "dense MLP"});
  q["mlp_only_layers"] = json::array();
  q["decoder_sparse_step"] = 2;
  expect_error([&] { parse(q); }, ErrorCode::bad_model, {"decoder_sparse_step", "dense MLP"});
  q.erase("decoder_sparse_step");
  q["shared_expert_intermediate_size"] = 32;
  expect_error([&] { parse(q); }, ErrorCode::bad_model, {"shared_expert_intermediate_size", "shared experts"});
}

TEST(Config, Olmo2LayerTensorsFollowTheTable) {
  json j = family_config("olmo2");
  j.erase("rms_norm_eps");
  const ModelConfig c = parse(j);
  EXPECT_DOUBLE_EQ(c.rms_norm_eps, 1e-5);
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const LayerTensor& t : layer_tensors(c)) shapes[t.name] = t.shape;
  EXPECT_EQ(shapes.count("input_layernorm.weight"), 0u);
  EXPECT_EQ(shapes.at("post_feedforward_layernorm.weight"), std::vector<int64_t>{c.hidden_size});
  EXPECT_EQ(shapes.at("self_attn.q_norm.weight"), std::vector<int64_t>{c.num_attention_heads * c.head_dim});
  EXPECT_EQ(shapes.at("self_attn.k_norm.weight"), std::vector<int64_t>{c.num_key_value_heads * c.head_dim});
  std::vector<std::string> candidates;
  for (const LayerTensor& t : layer_tensors(c))
    if (t.role == TensorRole::mlp_weight) candidates.push_back(t.name);
  EXPECT_EQ(candidates, (std::vector<std::string>{"mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight"}));
}

// Gemma 2 from the table: Gemma2Config's defaults (kv heads 4, head_dim 256, tied, both soft-caps,
// query_pre_attn_scalar 256, every other layer sliding from the first), a norm before and after
// attention and MLP in the layer's tensors, GeGLU; null turns a soft-cap off, and what the runner
// cannot compute is refused by its field.
TEST(Config, Gemma2DefaultsAndLayerTensors) {
  json j = family_config("gemma2");
  for (const char* key : {"num_key_value_heads", "head_dim", "tie_word_embeddings", "hidden_act"}) j.erase(key);
  j["num_hidden_layers"] = 3;
  const ModelConfig c = parse(j);
  EXPECT_EQ(c.num_key_value_heads, 4);
  EXPECT_EQ(c.head_dim, 256);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.activation, Activation::gelu_tanh);
  EXPECT_DOUBLE_EQ(c.norm_weight_offset, 1.0);
  EXPECT_EQ(c.embedding_multiplier, static_cast<double>(static_cast<float>(std::sqrt(32.0))));  // HF's float32 buffer
  EXPECT_DOUBLE_EQ(c.attention_multiplier, 1.0 / 16.0);
  EXPECT_DOUBLE_EQ(c.attention_softcap, 50.0);
  EXPECT_DOUBLE_EQ(c.logits_softcap, 30.0);
  EXPECT_EQ(c.window_of_layer(0), 4096);
  EXPECT_EQ(c.window_of_layer(1), 0);
  EXPECT_EQ(c.window_of_layer(2), 4096);
  std::vector<std::string> norms;
  for (const LayerTensor& t : layer_tensors(c))
    if (t.role == TensorRole::norm) norms.push_back(t.name);
  EXPECT_EQ(norms, (std::vector<std::string>{"input_layernorm.weight", "post_attention_layernorm.weight",
                                             "pre_feedforward_layernorm.weight", "post_feedforward_layernorm.weight"}));

  j["final_logit_softcapping"] = nullptr;
  j["layer_types"] = {"full_attention", "sliding_attention", "full_attention"};
  j["sliding_window"] = 8;
  j["hidden_act"] = "gelu_pytorch_tanh";  // what Gemma 2 checkpoints carry; Gemma2Config reads hidden_activation
  const ModelConfig d = parse(j);
  EXPECT_DOUBLE_EQ(d.logits_softcap, 0.0);
  EXPECT_EQ(d.window_of_layer(0), 0);
  EXPECT_EQ(d.window_of_layer(1), 8);
  j["hidden_activation"] = "gelu";
  expect_error([&] { parse(j); }, ErrorCode::bad_model, {"config.json", "'hidden_activation'", "'gelu'", "gelu_pytorch_tanh"});
  j.erase("hidden_activation");
  j["use_bidirectional_attention"] = true;
  expect_error([&] { parse(j); }, ErrorCode::bad_model, {"config.json", "'use_bidirectional_attention'"});
}

// Gemma 3's RoPE per layer type: transformers 5's nested rope_parameters (full_attention with its
// scaling, sliding_attention with its own theta), 4.x's flat rope_theta / rope_local_base_freq /
// rope_scaling; q/k norms per head; every sliding_window_pattern-th layer full without layer_types.
TEST(Config, Gemma3RopePerLayerType) {
  json j = family_config("gemma3_text");
  j.erase("rope_theta");
  j["num_hidden_layers"] = 4;
  j["sliding_window_pattern"] = 2;
  const ModelConfig flat = parse(j);
  EXPECT_DOUBLE_EQ(flat.rope_theta, 1e6);
  EXPECT_DOUBLE_EQ(flat.local_rope_theta, 1e4);
  EXPECT_TRUE(flat.qk_norm && !flat.qk_norm_whole);
  EXPECT_DOUBLE_EQ(flat.attention_softcap, 0.0);
  EXPECT_DOUBLE_EQ(flat.logits_softcap, 0.0);
  EXPECT_EQ(flat.window_of_layer(0), 4096);
  EXPECT_EQ(flat.window_of_layer(1), 0);
  EXPECT_EQ(flat.window_of_layer(3), 0);
  j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 8.0}};
  j["rope_local_base_freq"] = 20000.0;
  const ModelConfig old = parse(j);
  EXPECT_EQ(old.rope_scaling.type, RopeType::linear);
  EXPECT_EQ(old.local_rope_scaling.type, RopeType::standard);
  EXPECT_DOUBLE_EQ(old.local_rope_theta, 20000.0);
  j.erase("rope_scaling");
  j["rope_parameters"] = {{"full_attention", {{"rope_type", "linear"}, {"factor", 4.0}, {"rope_theta", 5e5}}},
                          {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 1234.0}}}};
  const ModelConfig nested = parse(j);
  EXPECT_DOUBLE_EQ(nested.rope_theta, 5e5);
  EXPECT_EQ(nested.rope_scaling.type, RopeType::linear);
  EXPECT_DOUBLE_EQ(nested.rope_scaling.factor, 4.0);
  EXPECT_DOUBLE_EQ(nested.local_rope_theta, 1234.0);
  EXPECT_EQ(nested.local_rope_scaling.type, RopeType::standard);
  j["rope_parameters"]["sliding_attention"] = {{"rope_type", "yarn"}};
  expect_error([&] { parse(j); }, ErrorCode::bad_model, {"config.json rope_parameters.sliding_attention", "'yarn'"});
}

TEST(Config, LlamaIgnoresWindowFieldsAndReadsItsBiases) {
  json j = llama_config();
  j["sliding_window"] = 4;  // not a LlamaConfig field
  j["use_sliding_window"] = true;
  j["attention_bias"] = true;
  ModelConfig c = parse(j);
  EXPECT_EQ(c.sliding_window, 0);
  EXPECT_TRUE(c.qkv_bias && c.o_bias);
  EXPECT_FALSE(c.mlp_bias || c.qk_norm);
  EXPECT_DOUBLE_EQ(c.rms_norm_eps, 1e-5);  // as written
  j.erase("rms_norm_eps");
  EXPECT_DOUBLE_EQ(parse(j).rms_norm_eps, 1e-6);
}

TEST(Config, MistralDefaults) {
  json j = family_config("mistral");
  ModelConfig c = parse(j);  // sliding_window: null
  EXPECT_EQ(c.model_type, "mistral");
  EXPECT_EQ(c.sliding_window, 0);
  EXPECT_FALSE(c.qkv_bias || c.o_bias || c.mlp_bias || c.qk_norm);
  j["attention_bias"] = true;  // MistralAttention has no bias whatever the config says
  j["mlp_bias"] = true;
  j["sliding_window"] = 4096;
  c = parse(j);
  EXPECT_FALSE(c.qkv_bias || c.o_bias || c.mlp_bias);
  EXPECT_EQ(c.sliding_window, 4096);
  EXPECT_TRUE(c.sliding_layers.empty());  // every layer
  EXPECT_EQ(c.window_of_layer(0), 4096);
  EXPECT_EQ(c.window_of_layer(1), 4096);
  j.erase("sliding_window");  // MistralConfig's default: 4096
  EXPECT_EQ(parse(j).sliding_window, 4096);
  j.erase("rope_theta");
  j.erase("rms_norm_eps");
  j.erase("tie_word_embeddings");
  c = parse(j);
  EXPECT_DOUBLE_EQ(c.rope_theta, 10000.0);
  EXPECT_DOUBLE_EQ(c.rms_norm_eps, 1e-6);
  EXPECT_FALSE(c.tie_word_embeddings);
  // num_key_value_heads: absent is MistralConfig's 8, null is num_attention_heads
  j["num_attention_heads"] = 16;
  j["hidden_size"] = 64;
  j.erase("num_key_value_heads");
  EXPECT_EQ(parse(j).num_key_value_heads, 8);
  j["num_key_value_heads"] = nullptr;
  EXPECT_EQ(parse(j).num_key_value_heads, 16);
}

TEST(Config, Qwen2Defaults) {
  json j = family_config("qwen2");
  ModelConfig c = parse(j);
  EXPECT_TRUE(c.qkv_bias);  // q/k/v always biased, o_proj never
  EXPECT_FALSE(c.o_bias || c.mlp_bias || c.qk_norm);
  EXPECT_EQ(c.head_dim, 8);
  j["attention_bias"] = false;  // not a Qwen2 field
  EXPECT_TRUE(parse(j).qkv_bias);

  // the window needs use_sliding_window, and then applies from layer max_window_layers on
  j["sliding_window"] = 16;
  j["max_window_layers"] = 1;
  EXPECT_EQ(parse(j).sliding_window, 0);
  j["use_sliding_window"] = true;
  c = parse(j);
  EXPECT_EQ(c.sliding_window, 16);
  EXPECT_EQ(c.window_of_layer(0), 0);
  EXPECT_EQ(c.window_of_layer(1), 16);
  j["max_window_layers"] = 0;
  c = parse(j);
  EXPECT_EQ(c.window_of_layer(0), 16);
  EXPECT_EQ(c.window_of_layer(1), 16);
  j.erase("max_window_layers");  // default 28: none of the 2 layers
  EXPECT_EQ(parse(j).sliding_window, 0);
  j["sliding_window"] = nullptr;
  j["max_window_layers"] = 0;
  EXPECT_EQ(parse(j).sliding_window, 0);
  j.erase("sliding_window");  // default 4096
  EXPECT_EQ(parse(j).sliding_window, 4096);

  // layer_types (transformers >= 4.53) decide which layers slide when present
  j["layer_types"] = {"sliding_attention", "full_attention"};
  c = parse(j);
  EXPECT_EQ(c.window_of_layer(0), 4096);
  EXPECT_EQ(c.window_of_layer(1), 0);
  j["layer_types"] = {"sliding_attention", "chunked_attention"};
  expect_error([&] { parse(j); }, ErrorCode::bad_model, {"'layer_types'", "chunked_attention"});
  j["layer_types"] = {"sliding_attention"};
  expect_error([&] { parse(j); }, ErrorCode::bad_model, {"'layer_types'", "num_hidden_layers"});

  // num_key_value_heads absent: Qwen2Config's 32, which 4 heads cannot use
  j = family_config("qwen2");
  j.erase("num_key_value_heads");
  expect_error([&] { parse(j); }, ErrorCode::bad_model, {"'num_key_value_heads'", "default 32"});
  j["num_attention_heads"] = 32;
  j["hidden_size"] = 256;
  EXPECT_EQ(parse(j).num_key_value_heads, 32);
}

TEST(Config, Qwen3Defaults) {
  json j = family_config("qwen3");
  ModelConfig c = parse(j);
  EXPECT_TRUE(c.qk_norm);
  EXPECT_FALSE(c.qkv_bias || c.o_bias || c.mlp_bias);
  EXPECT_EQ(c.sliding_window, 0);
  j["attention_bias"] = true;
  c = parse(j);
  EXPECT_TRUE(c.qkv_bias && c.o_bias);
  j.erase("head_dim");  // Qwen3Config's default, not hidden_size / num_attention_heads
  EXPECT_EQ(parse(j).head_dim, 128);
  j["head_dim"] = 16;
  EXPECT_EQ(parse(j).head_dim, 16);
  j.erase("rms_norm_eps");
  EXPECT_DOUBLE_EQ(parse(j).rms_norm_eps, 1e-6);
  j["use_sliding_window"] = true;
  j["sliding_window"] = 8;
  j["max_window_layers"] = 1;
  c = parse(j);
  EXPECT_EQ(c.window_of_layer(0), 0);
  EXPECT_EQ(c.window_of_layer(1), 8);
}

TEST(Config, EveryFamilyReadsRopeScaling) {
  for (const char* type : {"mistral", "qwen2", "qwen3"}) {
    json j = family_config(type);
    j["rope_theta"] = 500000.0;
    j["rope_scaling"] = {{"rope_type", "llama3"},
                         {"factor", 8.0},
                         {"low_freq_factor", 1.0},
                         {"high_freq_factor", 4.0},
                         {"original_max_position_embeddings", 8192}};
    ModelConfig c = parse(j);
    EXPECT_DOUBLE_EQ(c.rope_theta, 500000.0) << type;
    EXPECT_EQ(c.rope_scaling.type, RopeType::llama3) << type;
    j["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}};
    expect_error([&] { parse(j); }, ErrorCode::bad_model, {"'yarn'"});
  }
}

TEST(Config, BadWindowFieldsAreNamed) {
  for (const char* type : {"mistral", "qwen2", "qwen3"}) {
    for (json bad : {json("4096"), json(0), json(-1), json(4096.5), json(true), json::array({4096})}) {
      json j = family_config(type);
      j["sliding_window"] = bad;
      expect_error([&] { parse(j); }, ErrorCode::bad_model, {"'sliding_window'", "positive integer or null"});
    }
  }
  json j = family_config("qwen2");
  j["max_window_layers"] = -1;
  expect_error([&] { parse(j); }, ErrorCode::bad_model, {"'max_window_layers'"});
  j = family_config("qwen3");
  j["use_sliding_window"] = "yes";
  expect_error([&] { parse(j); }, ErrorCode::bad_model, {"'use_sliding_window'"});
}

TEST(Config, NamesMissingAndMistypedFields) {
  json j = llama_config();
  j.erase("vocab_size");
  expect_error([&] { parse_model_config(j.dump(), "config.json"); }, ErrorCode::bad_model, {"'vocab_size'", "missing"});
  j = llama_config();
  j["hidden_size"] = 32.5;
  expect_error([&] { parse_model_config(j.dump(), "config.json"); }, ErrorCode::bad_model, {"'hidden_size'"});
  j = llama_config();
  j["hidden_act"] = "gelu";
  expect_error([&] { parse_model_config(j.dump(), "config.json"); }, ErrorCode::bad_model, {"'hidden_act'", "gelu"});
  j = llama_config();
  j["num_key_value_heads"] = 3;
  expect_error([&] { parse_model_config(j.dump(), "config.json"); }, ErrorCode::bad_model, {"'num_key_value_heads'"});
  expect_error([&] { parse_model_config("{not json", "config.json"); }, ErrorCode::bad_model, {"not valid JSON"});
}

TEST(Config, ReadsLlama3RopeScalingAndRefusesUnknownTypes) {
  json j = llama_config();
  j["rope_scaling"] = {{"rope_type", "llama3"},
                       {"factor", 8.0},
                       {"low_freq_factor", 1.0},
                       {"high_freq_factor", 4.0},
                       {"original_max_position_embeddings", 8192}};
  ModelConfig c = parse_model_config(j.dump(), "config.json");
  EXPECT_EQ(c.rope_scaling.type, RopeType::llama3);
  EXPECT_EQ(c.rope_scaling.original_max_position_embeddings, 8192);
  j["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}};
  expect_error([&] { parse_model_config(j.dump(), "config.json"); }, ErrorCode::bad_model, {"'yarn'"});
}

// The family table as the editor gets it (`bprof-runner --families`, families_table_json), walked
// as src/core/model/parameters.ts walks it, gives every family's layer and model tensors as the
// runner's own parse and layer_tensors do, with each switch's key turned both ways.
namespace table_walk {

int64_t dimension(const std::string& formula, const std::map<std::string, int64_t>& sizes) {
  int64_t sum = 0;
  std::stringstream terms(formula);
  for (std::string term; std::getline(terms, term, '+');) {
    int64_t product = 1;
    std::stringstream factors(term);
    for (std::string factor; std::getline(factors, factor, '*');)
      product *= std::isdigit(static_cast<unsigned char>(factor[0])) ? std::stoll(factor) : sizes.at(factor);
    sum += product;
  }
  return sum;
}

int64_t count(const json& raw, const json& k) {
  if (k.contains("alias") && !raw.contains(k["key"].get<std::string>()))
    return raw.value(k["alias"].get<std::string>(), k["default"].get<int64_t>());
  return k["default"].is_null() ? raw.at(k["key"].get<std::string>()).get<int64_t>()
                                : raw.value(k["key"].get<std::string>(), k["default"].get<int64_t>());
}

// name -> shape of the table's tensors for config.json `raw` (its sizes all given or the family's defaults)
std::map<std::string, std::vector<int64_t>> tensors(const json& table, const json& raw, bool layer) {
  const std::string type = raw["model_type"];
  const json* family = nullptr;
  for (const json& f : table["families"])
    if (f["model_type"] == type) family = &f;
  EXPECT_NE(family, nullptr) << type;
  const json& d = (*family)["defaults"];
  const int64_t heads = raw["num_attention_heads"];
  std::map<std::string, int64_t> sizes = {
      {"vocab_size", raw["vocab_size"]},
      {"hidden_size", raw["hidden_size"]},
      {"intermediate_size", raw["intermediate_size"]},
      {"num_attention_heads", heads},
      {"num_key_value_heads",
       raw.value("num_key_value_heads", d["num_key_value_heads"].is_null() ? heads : d["num_key_value_heads"].get<int64_t>())},
      {"head_dim",
       raw.value("head_dim", d["head_dim"].is_null() ? raw["hidden_size"].get<int64_t>() / heads : d["head_dim"].get<int64_t>())},
      {"num_experts", 0}};
  std::map<std::string, bool> on = {{"tie_word_embeddings", raw.value("tie_word_embeddings", d["tie_word_embeddings"].get<bool>())},
                                    {"experts", !(*family)["experts"].is_null()}};
  for (const auto& [name, value] : (*family)["switches"].items())
    on[name] = value.is_boolean() ? value.get<bool>() : raw.value(value["key"].get<std::string>(), value["default"].get<bool>());
  if (on["experts"]) {
    sizes["num_experts"] = count(raw, (*family)["experts"]["num_experts"]);
    sizes["expert_intermediate_size"] = count(raw, (*family)["experts"]["expert_intermediate_size"]);
  }
  std::map<std::string, std::vector<int64_t>> out;
  for (const json& t : table[layer ? "layer_tensors" : "model_tensors"]) {
    bool there = true;
    for (const std::string when : t["when"]) there = there && (when[0] == '!' ? !on.at(when.substr(1)) : on.at(when));
    if (!there) continue;
    std::vector<int64_t> shape;
    for (const std::string d : t["shape"]) shape.push_back(dimension(d, sizes));
    std::string name = t["name"];
    const size_t e = name.find("{e}");
    if (e == std::string::npos) out[name] = shape;
    for (int64_t x = 0; e != std::string::npos && x < sizes["num_experts"]; x++)
      out[std::string(name).replace(e, 3, std::to_string(x))] = shape;
  }
  return out;
}

}  // namespace table_walk

TEST(Config, TheFamilyTableAsDataGivesTheRunnersTensors) {
  const json table = json::parse(families_table_json());
  std::string types;
  for (const json& f : table["families"]) types += (types.empty() ? "" : ", ") + f["model_type"].get<std::string>();
  EXPECT_EQ(types, supported_model_types());
  for (const json& f : table["families"]) {
    for (int variant = 0; variant < 4; variant++) {
      json raw = family_config(f["model_type"]);
      raw.erase("num_key_value_heads");  // the family's default, which divides 32
      raw["num_attention_heads"] = 32;
      raw["hidden_size"] = 64;
      if (variant & 1) raw.update({{"attention_bias", true}, {"mlp_bias", true}, {"head_dim", 8}});
      if (variant & 2)
        raw.update({{"tie_word_embeddings", !f["defaults"]["tie_word_embeddings"].get<bool>()},
                    {"num_experts", 3},
                    {"moe_intermediate_size", 8},
                    {"num_experts_per_tok", 2}});
      const ModelConfig c = parse(raw);
      std::map<std::string, std::vector<int64_t>> layer, model;
      for (const LayerTensor& t : layer_tensors(c)) layer[t.name] = t.shape;
      for (const LayerTensor& t : model_tensors(c)) model[t.name] = t.shape;
      EXPECT_EQ(table_walk::tensors(table, raw, true), layer) << raw.dump();
      EXPECT_EQ(table_walk::tensors(table, raw, false), model) << raw.dump();
    }
  }
}

TEST(Config, MissingConfigFileIsBadModel) {
  expect_error([] { load_model_config("/nonexistent-model-dir"); }, ErrorCode::bad_model, {"config.json"});
}

// --- job ------------------------------------------------------------------

json good_job() {
  return {{"protocol", 1},
          {"subcommand", "score"},
          {"model", {{"path", "/models/tiny"}, {"dtype", "float32"}}},
          {"device", "cpu"},
          {"items", {{{"id", "q1"}, {"context", {256, 72, 105}}, {"choices", {{32, 65}, {32, 66, 67}}}}}}};
}

TEST(Job, ParsesTheProtocolExample) {
  Job job = parse_job(good_job().dump(), "job.json");
  EXPECT_EQ(job.subcommand, "score");
  EXPECT_EQ(job.model_path, "/models/tiny");
  ASSERT_EQ(job.items.size(), 1u);
  EXPECT_EQ(job.items[0].context, (std::vector<int64_t>{256, 72, 105}));
  EXPECT_EQ(job.items[0].choices[1], (std::vector<int64_t>{32, 66, 67}));
  EXPECT_EQ(input_length(job.items[0], 1), 5);
}

TEST(Job, DefaultsDtypeAndDevice) {
  json j = good_job();
  j["model"].erase("dtype");
  j.erase("device");
  Job job = parse_job(j.dump(), "job.json");
  EXPECT_EQ(job.dtype, "float32");
  EXPECT_EQ(job.device, "cpu");
}

TEST(Job, SaysWhichItemAndFieldIsWrong) {
  auto with = [](const std::function<void(json&)>& edit) {
    json j = good_job();
    edit(j);
    return j.dump();
  };
  expect_error([&] { parse_job(with([](json& j) { j["items"][0]["context"] = json::array(); }), "job.json"); }, ErrorCode::bad_job,
               {"items[0]", "'q1'", "context", "empty"});
  expect_error([&] { parse_job(with([](json& j) { j["items"][0]["choices"][1][0] = -3; }), "job.json"); }, ErrorCode::bad_job,
               {"items[0]", "choices[1][0]"});
  expect_error([&] { parse_job(with([](json& j) { j["items"][0]["choices"][0][1] = 1.5; }), "job.json"); }, ErrorCode::bad_job,
               {"choices[0][1]"});
  expect_error([&] { parse_job(with([](json& j) { j["items"][0]["choices"] = json::array(); }), "job.json"); }, ErrorCode::bad_job,
               {"'choices'"});
  expect_error([&] { parse_job(with([](json& j) { j["items"][0].erase("id"); }), "job.json"); }, ErrorCode::bad_job, {"items[0]", "'id'"});
  expect_error([&] { parse_job(with([](json& j) { j["items"].push_back(j["items"][0]); }), "job.json"); }, ErrorCode::bad_job,
               {"items[1]", "earlier item"});
  expect_error([&] { parse_job(with([](json& j) { j.erase("model"); }), "job.json"); }, ErrorCode::bad_job, {"'model'"});
  expect_error([&] { parse_job(with([](json& j) { j["model"]["dtype"] = "int8"; }), "job.json"); }, ErrorCode::bad_job,
               {"'model.dtype'", "int8"});
  expect_error([&] { parse_job(with([](json& j) { j["protocol"] = 2; }), "job.json"); }, ErrorCode::bad_job, {"'protocol'"});
  expect_error([&] { parse_job(with([](json& j) { j.erase("items"); }), "job.json"); }, ErrorCode::bad_job, {"'items'"});
  expect_error([&] { parse_job("[]", "job.json"); }, ErrorCode::bad_job, {"not a JSON object"});
}

TEST(Job, DeeplyNestedTokensAreAnErrorNotAStackOverflow) {
  std::string text = good_job().dump();
  const std::string context = "[256,72,105]";
  const size_t depth = 500000;
  text.replace(text.find(context), context.size(), "[" + std::string(depth, '[') + std::string(depth, ']') + "]");
  expect_error([&] { parse_job(text, "job.json"); }, ErrorCode::bad_job, {"context[0]", "not a token id"});
}

TEST(Job, SequencesPastTheMaxLengthAreRefusedAsTheJobIsRead) {
  json j = good_job();
  j["model"]["max_length"] = 5;  // q1 reads 3 + 3 - 1 = 5 tokens for its longest choice: it fits
  EXPECT_EQ(parse_job(j.dump(), "job.json").max_length, 5);
  j["model"]["max_length"] = 4;
  expect_error([&] { parse_job(j.dump(), "job.json"); }, ErrorCode::bad_job,
               {"items[0]", "'q1'", "choices[1]", "5 tokens", "'model.max_length' (4)"});
  j["model"]["max_length"] = 1;
  expect_error([&] { parse_job(j.dump(), "job.json"); }, ErrorCode::bad_job, {"'model.max_length'", "at least 2"});
  j["model"].erase("max_length");  // not given: no limit here (the runner warns past max_position_embeddings)
  EXPECT_EQ(parse_job(j.dump(), "job.json").max_length, 0);
}

TEST(Job, ReadsAShardKeyAndSaysWhatIsWrongWithIt) {
  json j = good_job();
  j["subcommand"] = "profile";
  j["abilities"] = json::array({{{"id", "quant"}, {"sequences", {{256, 72}}}}});
  j["ablation"] = {{"k", {0.01}}, {"selections", {"top", "random"}}};
  EXPECT_FALSE(parse_job(j.dump(), "job.json").shard.present);
  j["shard"] = {{"of", "abc"}, {"index", 1}, {"count", 3}, {"baseline", false}, {"random", true}};
  const Job job = parse_job(j.dump(), "job.json");
  EXPECT_TRUE(job.shard.present);
  EXPECT_EQ(job.shard.of, "abc");
  EXPECT_EQ(job.shard.index, 1);
  EXPECT_EQ(job.shard.count, 3);
  EXPECT_FALSE(job.shard.baseline);
  EXPECT_TRUE(job.shard.random);
  j["abilities"] = json::array();  // the shard of the baseline and the random control alone
  EXPECT_EQ(parse_job(j.dump(), "job.json").abilities.size(), 0u);
  auto with = [&](const std::function<void(json&)>& edit) {
    json copy = j;
    edit(copy);
    return copy.dump();
  };
  expect_error([&] { parse_job(with([](json& v) { v["shard"]["index"] = 3; }), "job.json"); }, ErrorCode::bad_job,
               {"'shard.index'", "0 to shard.count - 1 (2)"});
  expect_error([&] { parse_job(with([](json& v) { v["shard"]["count"] = 0; }), "job.json"); }, ErrorCode::bad_job, {"'shard.count'"});
  expect_error([&] { parse_job(with([](json& v) { v["shard"].erase("of"); }), "job.json"); }, ErrorCode::bad_job, {"'shard.of'"});
  expect_error([&] { parse_job(with([](json& v) { v["shard"]["random"] = 1; }), "job.json"); }, ErrorCode::bad_job, {"'shard.random'"});
  expect_error([&] { parse_job(with([](json& v) { v.erase("shard"); }), "job.json"); }, ErrorCode::bad_job, {"'abilities'", "non-empty"});
  json score = good_job();
  score["shard"] = j["shard"];
  expect_error([&] { parse_job(score.dump(), "job.json"); }, ErrorCode::bad_job, {"'shard'", "profile jobs only"});
}

TEST(Job, TokenIdsMustBeInTheVocabulary) {
  json j = good_job();
  j["items"][0]["choices"][1][2] = 258;
  Job job = parse_job(j.dump(), "job.json");
  EXPECT_NO_THROW(check_token_ids(job, 259));
  expect_error([&] { check_token_ids(job, 258); }, ErrorCode::bad_job, {"items[0]", "'q1'", "choices[1][2]", "258"});
}

TEST(Job, BatchesNeverSplitAnItemAndRespectTheBudget) {
  std::vector<Item> items(5);
  for (size_t i = 0; i < items.size(); i++) {
    items[i].id = std::to_string(i);
    items[i].context.assign(i == 2 ? 40 : 4, 1);  // item 2 is long: one packed row of 40 + 1 + 1 = 42
    items[i].choices = {{1, 2}, {3, 4}};
  }
  auto batches = plan_batches(items, 20);  // a short item costs 1 row x (4 + 1 + 1) tokens = 6
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0], (std::pair<size_t, size_t>{0, 2}));
  EXPECT_EQ(batches[1], (std::pair<size_t, size_t>{2, 3}));  // over budget alone: a batch of its own
  EXPECT_EQ(batches[2], (std::pair<size_t, size_t>{3, 5}));
  EXPECT_EQ(plan_batches(items, 1).size(), 5u);
  EXPECT_TRUE(plan_batches({}, 100).empty());
  // the choices share one row: three short items are 3 x 6 = 18 tokens, a fourth is over 18
  const std::vector<Item> short_items = {items[0], items[1], items[3], items[4]};
  auto three = plan_batches(short_items, 18);
  ASSERT_EQ(three.size(), 2u);
  EXPECT_EQ(three[0], (std::pair<size_t, size_t>{0, 3}));
}

}  // namespace
}  // namespace bprof
