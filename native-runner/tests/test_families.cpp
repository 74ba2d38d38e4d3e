// The model families (llama, mistral, qwen2, qwen3) against the float64 reference of support.cpp,
// and KV-cache scoring against full-sequence scoring.
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/stack.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "config.h"
#include "engine.h"
#include "llama.h"
#include "safetensors.h"
#include "safetensors_writer.h"
#include "support.h"
#include "train.h"

namespace bprof {
namespace {

using test::float32_logprob_tolerance;
using test::TempDir;
using test::TinyLlamaSpec;

// 15 tokens: long enough for windows of 3..5 to cut off real context
const std::vector<int64_t> kTokens = {256, 72, 101, 108, 108, 111, 44, 32, 119, 111, 114, 108, 100, 33, 257};

at::Tensor token_tensor(const std::vector<int64_t>& tokens) {
  return at::from_blob(const_cast<int64_t*>(tokens.data()), {1, static_cast<int64_t>(tokens.size())}, at::kLong).clone();
}

std::unique_ptr<LlamaModel> load_model(const std::string& dir) {
  ModelConfig config = load_model_config(dir);
  Checkpoint checkpoint(dir);
  return std::make_unique<LlamaModel>(config, load_llama_weights(config, checkpoint, LoadOptions{}));
}

std::unique_ptr<Engine> load_engine(const std::string& dir) {
  EngineOptions options;
  options.model_dir = dir;
  return std::make_unique<Engine>(load_model_config(dir), options);
}

// Named specs covering every switch of every family.
struct Family {
  std::string name;
  TinyLlamaSpec spec;
};

std::vector<Family> families() {
  std::vector<Family> out;
  auto add = [&](const std::string& name, const std::function<void(TinyLlamaSpec&)>& edit) {
    TinyLlamaSpec spec;
    edit(spec);
    out.push_back({name, spec});
  };
  add("llama, attention_bias, explicit head_dim", [](TinyLlamaSpec& s) {
    s.attention_bias = true;
    s.explicit_head_dim = 16;
  });
  add("mistral, sliding_window 4", [](TinyLlamaSpec& s) {
    s.model_type = "mistral";
    s.sliding_window = 4;
  });
  add("mistral, sliding_window null, multi-head", [](TinyLlamaSpec& s) {
    s.model_type = "mistral";
    s.num_key_value_heads = 4;
  });
  add("qwen2, tied", [](TinyLlamaSpec& s) {
    s.model_type = "qwen2";
    s.tie_word_embeddings = true;
    s.sliding_window = 3;  // not used: use_sliding_window is false
  });
  add("qwen2, window 3 from layer 1", [](TinyLlamaSpec& s) {
    s.model_type = "qwen2";
    s.use_sliding_window = true;
    s.sliding_window = 3;
    s.max_window_layers = 1;
  });
  add("qwen3, head_dim 16", [](TinyLlamaSpec& s) {
    s.model_type = "qwen3";
    s.explicit_head_dim = 16;
    s.rope_theta = 1000000.0;
  });
  add("qwen3, attention_bias, window 5 in every layer, 3 layers, 1 kv head", [](TinyLlamaSpec& s) {
    s.model_type = "qwen3";
    s.attention_bias = true;
    s.use_sliding_window = true;
    s.sliding_window = 5;
    s.max_window_layers = 0;
    s.num_hidden_layers = 3;
    s.num_key_value_heads = 1;
  });
  return out;
}

double worst_difference(const at::Tensor& logprobs, const std::vector<std::vector<double>>& expected) {
  at::Tensor lp = logprobs.to(at::kDouble).contiguous();
  const double* p = lp.data_ptr<double>();
  const int64_t V = lp.size(1);
  double worst = 0;
  for (size_t t = 0; t < expected.size(); t++)
    for (int64_t v = 0; v < V; v++) worst = std::max(worst, std::abs(p[static_cast<int64_t>(t) * V + v] - expected[t][v]));
  return worst;
}

TEST(Families, LogitsMatchTheFloat64Reference) {
  for (const Family& f : families()) {
    TempDir dir;
    test::Weights weights = test::write_tiny_llama(dir.path(), f.spec);
    auto model = load_model(dir.path());
    c10::InferenceMode guard;
    at::Tensor logprobs = model->forward(token_tensor(kTokens)).log_softmax(-1)[0];  // [L, V]
    EXPECT_LT(worst_difference(logprobs, test::reference_logprobs(f.spec, weights, kTokens)), 1e-4) << f.name;
  }
}

// The switches are not vacuous: the reference with a switch turned off disagrees with the model.
TEST(Families, EachSwitchChangesTheResult) {
  struct Case {
    std::string name;
    std::function<void(TinyLlamaSpec&)> on;   // the family with the switch
    std::function<void(TinyLlamaSpec&)> off;  // the same weights read without it (reference only)
  };
  std::vector<Case> cases = {
      {"mistral sliding window",
       [](TinyLlamaSpec& s) {
         s.model_type = "mistral";
         s.sliding_window = 4;
       },
       [](TinyLlamaSpec& s) { s.sliding_window = 0; }},
      {"qwen2 window in layer 1 only",
       [](TinyLlamaSpec& s) {
         s.model_type = "qwen2";
         s.use_sliding_window = true;
         s.sliding_window = 3;
         s.max_window_layers = 1;
       },
       [](TinyLlamaSpec& s) { s.max_window_layers = 0; }},  // the window in layer 0 as well
      {"qwen3 q/k norm", [](TinyLlamaSpec& s) { s.model_type = "qwen3"; },
       [](TinyLlamaSpec& s) { s.model_type = "llama"; }},  // no q/k norm (and no biases either way)
      {"qwen2 q/k/v bias", [](TinyLlamaSpec& s) { s.model_type = "qwen2"; },
       [](TinyLlamaSpec& s) { s.model_type = "mistral"; }},  // mistral: no biases, no window
  };
  for (const Case& c : cases) {
    TempDir dir;
    TinyLlamaSpec spec;
    c.on(spec);
    test::Weights weights = test::write_tiny_llama(dir.path(), spec);
    auto model = load_model(dir.path());
    c10::InferenceMode guard;
    at::Tensor logprobs = model->forward(token_tensor(kTokens)).log_softmax(-1)[0];
    TinyLlamaSpec without = spec;
    c.off(without);
    EXPECT_LT(worst_difference(logprobs, test::reference_logprobs(spec, weights, kTokens)), 1e-4) << c.name;
    EXPECT_GT(worst_difference(logprobs, test::reference_logprobs(without, weights, kTokens)), 1e-3) << c.name;
  }
}

TEST(Families, MissingFamilyTensorsAreBadModelNamingThem) {
  for (const auto& [type, name] : std::vector<std::pair<std::string, std::string>>{{"qwen3", "model.layers.1.self_attn.k_norm.weight"},
                                                                                   {"qwen2", "model.layers.0.self_attn.v_proj.bias"}}) {
    TempDir dir;
    TinyLlamaSpec spec;
    spec.model_type = type;
    test::Weights w = test::tiny_llama_weights(spec);
    ASSERT_EQ(w.erase(name), 1u);
    std::vector<test::F32Tensor> tensors;
    for (const auto& kv : w) tensors.push_back(kv.second);
    test::write_file(dir.file("config.json"), test::tiny_llama_config(spec).dump());
    test::write_file(dir.file("model.safetensors"), test::safetensors_bytes(tensors));
    try {
      load_model(dir.path());
      FAIL() << type << " loaded without " << name;
    } catch (const RunnerError& e) {
      EXPECT_EQ(e.code(), ErrorCode::bad_model) << e.what();
      EXPECT_NE(std::string(e.what()).find("'" + name + "' is missing"), std::string::npos) << e.what();
    }
  }
}

// A mixture of experts' checkpoint in both layouts: each expert apart (Mixtral's
// block_sparse_moe.experts.M.w1/w3/w2, as save_pretrained writes them) and fused as transformers
// holds them in memory (mlp.experts.gate_up_proj [E, 2I, H], mlp.experts.down_proj [E, H, I],
// mlp.gate.weight): the same logits to the bit, and a missing expert named.
namespace moe {

std::string entry_bytes(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), static_cast<size_t>(c.numel()) * sizeof(float));
}

void write_checkpoint(const std::string& dir, const nlohmann::json& config, const std::map<std::string, at::Tensor>& tensors) {
  std::vector<SafetensorsEntry> entries;
  for (const auto& [name, t] : tensors) entries.push_back({name, DType::F32, t.sizes().vec(), entry_bytes(t)});
  test::write_file(dir + "/config.json", config.dump());
  test::write_file(dir + "/model.safetensors", serialize_safetensors(entries));
}

}  // namespace moe

TEST(Families, MixtureOfExpertsLoadsEachExpertApartOrFused) {
  nlohmann::json config = {{"model_type", "mixtral"},  {"vocab_size", 300},        {"hidden_size", 32},        {"intermediate_size", 24},
                           {"num_hidden_layers", 2},   {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"num_local_experts", 3},
                           {"num_experts_per_tok", 2}, {"rms_norm_eps", 1e-5},     {"sliding_window", 4}};
  const ModelConfig c = parse_model_config(config.dump(), "config.json");
  at::manual_seed(3);
  std::map<std::string, at::Tensor> apart;
  for (const TensorSpec& spec : llama_tensor_specs(c))
    apart[spec.name] = at::randn(spec.shape) * (spec.role == TensorRole::norm ? 0.1 : 0.3) + (spec.role == TensorRole::norm ? 1.0 : 0.0);
  std::map<std::string, at::Tensor> fused;
  for (const auto& [name, t] : apart)
    if (name.find("block_sparse_moe") == std::string::npos) fused[name] = t;
  for (int64_t l = 0; l < c.num_hidden_layers; l++) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    std::vector<at::Tensor> gate_up, down;
    for (int64_t e = 0; e < c.num_experts; e++) {
      const std::string x = p + "block_sparse_moe.experts." + std::to_string(e) + ".";
      gate_up.push_back(at::cat({apart.at(x + "w1.weight"), apart.at(x + "w3.weight")}, 0));
      down.push_back(apart.at(x + "w2.weight"));
    }
    fused[p + "mlp.experts.gate_up_proj"] = at::stack(gate_up);
    fused[p + "mlp.experts.down_proj"] = at::stack(down);
    fused[p + "mlp.gate.weight"] = apart.at(p + "block_sparse_moe.gate.weight");
  }
  TempDir a, b;
  moe::write_checkpoint(a.path(), config, apart);
  moe::write_checkpoint(b.path(), config, fused);
  c10::InferenceMode guard;
  const at::Tensor logits_apart = load_model(a.path())->forward(token_tensor(kTokens));
  const at::Tensor logits_fused = load_model(b.path())->forward(token_tensor(kTokens));
  EXPECT_TRUE(logits_apart.equal(logits_fused));
  EXPECT_GT(logits_apart.std().item<double>(), 0.1);  // not a degenerate model

  apart.erase("model.layers.1.block_sparse_moe.experts.2.w3.weight");
  moe::write_checkpoint(a.path(), config, apart);
  try {
    load_model(a.path());
    FAIL() << "loaded without an expert's up weight";
  } catch (const RunnerError& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_model);
    EXPECT_NE(std::string(e.what()).find("'model.layers.1.block_sparse_moe.experts.2.w3.weight' is missing"), std::string::npos)
        << e.what();
  }
}

// Each expert's importance from its gradient taps, over the tokens routed to it, is autograd's on
// the same batches (the whole, and a part of the sequences as the stability check takes it); the
// router is no candidate.
TEST(Families, MixtureOfExpertsImportanceIsAutogradsOverEachExpertsTokens) {
  nlohmann::json config = {{"model_type", "qwen3_moe"}, {"vocab_size", 300},           {"hidden_size", 32},
                           {"intermediate_size", 64},   {"moe_intermediate_size", 16}, {"num_hidden_layers", 2},
                           {"num_attention_heads", 4},  {"num_key_value_heads", 2},    {"head_dim", 8},
                           {"num_experts", 4},          {"num_experts_per_tok", 2},    {"rms_norm_eps", 1e-6}};
  const ModelConfig c = parse_model_config(config.dump(), "config.json");
  at::manual_seed(5);
  std::map<std::string, at::Tensor> tensors;
  for (const TensorSpec& spec : llama_tensor_specs(c))
    tensors[spec.name] = spec.role == TensorRole::norm ? 1.0 + 0.1 * at::randn(spec.shape) : 0.4 * at::randn(spec.shape);
  TempDir dir;
  moe::write_checkpoint(dir.path(), config, tensors);
  auto engine = load_engine(dir.path());
  const auto candidates = engine->candidates(0, 0);
  ASSERT_EQ(candidates.size(), static_cast<size_t>(2 * 4 * 3));
  for (const auto& candidate : candidates) EXPECT_EQ(candidate.name.find("mlp.gate.weight"), std::string::npos);

  // six sequences of one length (so the batches are the runner's without padding), two batches of 3
  const int64_t length = 9;
  std::vector<std::vector<int64_t>> sequences;
  for (int64_t s = 0; s < 6; s++) {
    sequences.push_back({256});
    for (int64_t i = 1; i < length; i++) sequences.back().push_back(40 + (i * 7 + s * 5) % 70);
  }
  const std::vector<bool> part = {true, false, true, false, false, true};
  std::vector<std::vector<float>> part_rise;
  const auto whole = engine->first_order_loss_rise(sequences, 3, candidates, nullptr, nullptr, part, &part_rise);

  // autograd on the engine's own weights: per batch, the mean next-token loss (and the part's rows' share of it)
  const LlamaModel& model = engine->model();
  std::vector<at::Tensor> weights;
  for (const auto& layer : model.weights().layers)
    for (const auto& expert : layer.experts)
      for (const at::Tensor& w : {expert.gate_proj, expert.up_proj, expert.down_proj}) weights.push_back(w);
  ASSERT_EQ(weights.size(), candidates.size());
  auto autograd_rise = [&](bool part_only) {
    for (const at::Tensor& w : weights) w.set_requires_grad(true);
    for (size_t start = 0; start < sequences.size(); start += 3) {
      std::vector<int64_t> flat;
      for (size_t s = start; s < start + 3; s++) flat.insert(flat.end(), sequences[s].begin(), sequences[s].end());
      const at::Tensor tokens = at::from_blob(flat.data(), {3, length}, at::kLong).clone();
      const at::Tensor logprobs = model.forward(tokens.narrow(1, 0, length - 1)).log_softmax(-1);
      at::Tensor nll = -logprobs.gather(2, tokens.narrow(1, 1, length - 1).unsqueeze(2)).squeeze(2);  // [3, L-1]
      if (part_only) {
        std::vector<float> mask;
        for (size_t s = start; s < start + 3; s++) mask.push_back(part[s] ? 1.0f : 0.0f);
        nll = nll * at::from_blob(mask.data(), {3, 1}, at::kFloat).clone();
      }
      (nll.sum() / static_cast<double>(3 * (length - 1))).backward();
    }
    std::vector<at::Tensor> rise;
    for (const at::Tensor& w : weights) {
      rise.push_back((-w.detach() * w.grad()).reshape(-1));
      w.mutable_grad().reset();
      w.set_requires_grad(false);
    }
    return rise;
  };
  for (const bool part_only : {false, true}) {
    const auto expected = autograd_rise(part_only);
    const auto& got = part_only ? part_rise : whole;
    double largest = 0, worst = 0;
    for (const at::Tensor& r : expected) largest = std::max(largest, r.abs().max().item<double>());
    for (size_t c = 0; c < candidates.size(); c++) {
      const at::Tensor runner = at::from_blob(const_cast<float*>(got[c].data()), {static_cast<int64_t>(got[c].size())}, at::kFloat);
      worst = std::max(worst, (runner - expected[c]).abs().max().item<double>());
    }
    EXPECT_GT(largest, 0.0);
    EXPECT_LE(worst, 1e-5 * largest) << (part_only ? "the part" : "the whole") << ": " << worst << " of " << largest;
  }
}

// Gradients flow through every family's forward pass (the importance phase needs them).
TEST(Families, HiddenStatesAreDifferentiable) {
  TempDir dir;
  TinyLlamaSpec spec = families().back().spec;  // qwen3 with biases, q/k norm and a window
  test::write_tiny_llama(dir.path(), spec);
  auto model = load_model(dir.path());
  at::Tensor gate = model->weights().layers[0].gate_proj;
  gate.set_requires_grad(true);
  at::Tensor loss = model->forward(token_tensor(kTokens)).log_softmax(-1).mean();
  loss.backward();
  ASSERT_TRUE(gate.grad().defined());
  EXPECT_GT(gate.grad().abs().sum().item<double>(), 0.0);
  gate.set_requires_grad(false);
}

// A Llama 3.1 checkpoint (rope_scaling type llama3) opened shapes-only, as `profile` first opens
// every model (the headers, for P and the candidates): the RoPE frequencies are computed on the
// CPU, where Debian's libtorch 1.13 has the ops (its meta backend has no aten::where.self), and the
// engine answers as one with the weights does.
TEST(Families, ShapesOnlyLoadOfALlama31RopeScalingModel) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  nlohmann::json config = nlohmann::json::parse(test::read_file(dir.file("config.json")));
  config["rope_theta"] = 500000.0;
  config["rope_scaling"] = {{"rope_type", "llama3"},
                            {"factor", 8.0},
                            {"low_freq_factor", 1.0},
                            {"high_freq_factor", 4.0},
                            {"original_max_position_embeddings", 64}};
  test::write_file(dir.file("config.json"), config.dump());
  const ModelConfig parsed = load_model_config(dir.path());
  ASSERT_EQ(parsed.rope_scaling.type, RopeType::llama3);

  EngineOptions options;
  options.model_dir = dir.path();
  options.shapes_only = true;
  std::unique_ptr<Engine> shapes;
  ASSERT_NO_THROW(shapes = std::make_unique<Engine>(parsed, options));
  const std::unique_ptr<Engine> weights = load_engine(dir.path());
  EXPECT_EQ(shapes->parameter_count(), weights->parameter_count());
  EXPECT_EQ(shapes->candidates(0, 0).size(), weights->candidates(0, 0).size());

  // the frequencies are the CPU's, whatever device the model is on
  const at::Tensor on_meta = rope_inv_freq(parsed, at::kMeta);
  const at::Tensor on_cpu = rope_inv_freq(parsed, at::kCPU);
  EXPECT_EQ(on_meta.sizes(), on_cpu.sizes());
  EXPECT_TRUE(on_meta.is_meta());
}

// Gemma's embedding scale is a tensor of the compute dtype in transformers (embed_scale cast to the
// weights' dtype): sqrt(3584) multiplies as 59.75 in bfloat16, as its float32 value in float32;
// Granite's multiplier is a Python float, the same in every dtype.
TEST(Families, GemmaEmbeddingScaleIsRoundedToTheComputeDtype) {
  nlohmann::json config = test::tiny_llama_config(TinyLlamaSpec{});
  config["model_type"] = "gemma2";
  config["hidden_size"] = 3584;
  config["head_dim"] = 8;
  config.erase("hidden_act");
  const ModelConfig gemma = parse_model_config(config.dump(), "config.json");
  EXPECT_EQ(embedding_scale(gemma, at::kFloat), static_cast<double>(static_cast<float>(std::sqrt(3584.0))));
  EXPECT_EQ(embedding_scale(gemma, at::kBFloat16), 59.75);
  config["model_type"] = "granite";
  config["hidden_act"] = "silu";
  config["embedding_multiplier"] = 59.866;
  const ModelConfig granite = parse_model_config(config.dump(), "config.json");
  EXPECT_EQ(embedding_scale(granite, at::kBFloat16), 59.866);
}

// --- scoring with a KV cache ----------------------------------------------

// Contexts of 1..14 tokens and choices of 1..9 tokens in one batch; one item needs no choice pass.
std::vector<Item> mixed_items() {
  std::vector<Item> items(5);
  items[0] = {"a", {256, 84, 104, 101}, {{32, 99, 97, 116}, {32, 100, 111, 103, 115}, {33}}};
  items[1] = {"b", {256, 50, 43, 50, 61, 32, 63, 10, 65, 110, 115, 119, 101, 114}, {{52}, {53, 10}, {52, 52, 52, 52, 52, 52, 52, 46, 257}}};
  items[2] = {"c", {256}, {{72, 105}, {257}}};
  items[3] = {"d", {256, 1, 2, 3, 4, 5, 6, 7}, {{8}, {9}, {10}, {11}}};
  items[4] = {"e", {256, 200, 201}, {{202, 203, 204, 205, 206, 207}}};
  return items;
}

std::vector<const Item*> pointers(const std::vector<Item>& items) {
  std::vector<const Item*> out;
  for (const Item& item : items) out.push_back(&item);
  return out;
}

TEST(KvCache, ScoresEqualFullSequenceScores) {
  std::vector<Item> items = mixed_items();
  for (const Family& f : families()) {
    TempDir dir;
    test::write_tiny_llama(dir.path(), f.spec);
    auto engine = load_engine(dir.path());
    std::vector<ItemScores> cached = engine->score(pointers(items));
    std::vector<ItemScores> full = engine->score_full_sequences(pointers(items));
    ASSERT_EQ(cached.size(), items.size());
    for (size_t i = 0; i < items.size(); i++) {
      ASSERT_EQ(cached[i].size(), items[i].choices.size());
      for (size_t c = 0; c < items[i].choices.size(); c++) {
        EXPECT_NEAR(cached[i][c].logprob, full[i][c].logprob, float32_logprob_tolerance(full[i][c].logprob))
            << f.name << ": " << items[i].id << " choice " << c;
        EXPECT_EQ(cached[i][c].tokens, static_cast<int64_t>(items[i].choices[c].size()));
        EXPECT_EQ(cached[i][c].tokens, full[i][c].tokens);
        EXPECT_EQ(cached[i][c].greedy, full[i][c].greedy) << f.name << ": " << items[i].id << " choice " << c;
      }
    }
  }
}

// lm-eval's way (log_softmax at every position of the padded batch, bench's original pipeline)
// reads the same numbers as lm_head on the scored positions only.
TEST(KvCache, EveryPositionLogitsGiveTheSameScores) {
  std::vector<Item> items = mixed_items();
  for (const Family& f : families()) {
    TempDir dir;
    test::write_tiny_llama(dir.path(), f.spec);
    auto engine = load_engine(dir.path());
    std::vector<ItemScores> scored = engine->score_full_sequences(pointers(items));
    std::vector<ItemScores> every = engine->score_full_sequences(pointers(items), /*every_position=*/true);
    for (size_t i = 0; i < items.size(); i++)
      for (size_t c = 0; c < items[i].choices.size(); c++) {
        EXPECT_NEAR(every[i][c].logprob, scored[i][c].logprob, float32_logprob_tolerance(scored[i][c].logprob))
            << f.name << ": " << items[i].id << " choice " << c;
        EXPECT_EQ(every[i][c].greedy, scored[i][c].greedy) << f.name << ": " << items[i].id << " choice " << c;
        EXPECT_EQ(every[i][c].tokens, scored[i][c].tokens);
      }
  }
}

// The cached path against the independent reference: sum_j log_softmax(logits[len(c) - 1 + j])[t_j].
TEST(KvCache, FollowsTheLoglikelihoodRuleInEveryFamily) {
  std::vector<Item> items = mixed_items();
  for (const Family& f : families()) {
    TempDir dir;
    test::Weights weights = test::write_tiny_llama(dir.path(), f.spec);
    std::vector<ItemScores> scores = load_engine(dir.path())->score(pointers(items));
    for (size_t i = 0; i < items.size(); i++) {
      for (size_t c = 0; c < items[i].choices.size(); c++) {
        std::vector<int64_t> seq = items[i].context;
        const std::vector<int64_t>& cont = items[i].choices[c];
        seq.insert(seq.end(), cont.begin(), cont.end());
        auto ref = test::reference_logprobs(f.spec, weights, seq);
        double expected = 0;
        bool greedy = true;
        for (size_t j = 0; j < cont.size(); j++) {
          const std::vector<double>& row = ref[items[i].context.size() - 1 + j];
          expected += row[cont[j]];
          greedy = greedy && std::max_element(row.begin(), row.end()) - row.begin() == cont[j];
        }
        EXPECT_NEAR(scores[i][c].logprob, expected, 1e-4) << f.name << ": " << items[i].id << " choice " << c;
        EXPECT_EQ(scores[i][c].greedy, greedy) << f.name << ": " << items[i].id << " choice " << c;
      }
    }
  }
}

TEST(KvCache, BatchedEqualsUnbatched) {
  std::vector<Item> items = mixed_items();
  for (const Family& f : families()) {
    TempDir dir;
    test::write_tiny_llama(dir.path(), f.spec);
    auto engine = load_engine(dir.path());
    std::vector<ItemScores> batched = engine->score(pointers(items));
    for (size_t i = 0; i < items.size(); i++) {
      ItemScores item_alone = engine->score({&items[i]})[0];  // the item's choices, no other item
      for (size_t c = 0; c < items[i].choices.size(); c++) {
        Item single{items[i].id, items[i].context, {items[i].choices[c]}};  // one row, no padding
        ChoiceScore alone = engine->score({&single})[0][0];
        EXPECT_NEAR(batched[i][c].logprob, alone.logprob, float32_logprob_tolerance(alone.logprob))
            << f.name << ": " << items[i].id << " choice " << c;
        EXPECT_NEAR(item_alone[c].logprob, alone.logprob, float32_logprob_tolerance(alone.logprob))
            << f.name << ": " << items[i].id << " choice " << c;
        EXPECT_EQ(batched[i][c].greedy, alone.greedy);
        EXPECT_EQ(batched[i][c].tokens, alone.tokens);
      }
    }
  }
}

// Only one-token choices: the context pass alone scores them.
TEST(KvCache, OneTokenChoicesNeedNoChoicePass) {
  TempDir dir;
  TinyLlamaSpec spec;
  test::write_tiny_llama(dir.path(), spec);
  auto engine = load_engine(dir.path());
  std::vector<Item> items = {{"x", {256, 5}, {{1}, {2}}}, {"y", {256, 7, 8, 9}, {{3}}}};
  std::vector<ItemScores> cached = engine->score(pointers(items));
  std::vector<ItemScores> full = engine->score_full_sequences(pointers(items));
  for (size_t i = 0; i < items.size(); i++)
    for (size_t c = 0; c < items[i].choices.size(); c++) {
      EXPECT_NEAR(cached[i][c].logprob, full[i][c].logprob, float32_logprob_tolerance(full[i][c].logprob));
      EXPECT_EQ(cached[i][c].greedy, full[i][c].greedy);
      EXPECT_EQ(cached[i][c].tokens, 1);
    }
}

}  // namespace
}  // namespace bprof
