// The Llama forward pass and the scoring rule on a tiny seeded model: agreement with an
// independent float64 reference, causality, batching invariance, and model-loading errors.
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/from_blob.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include <cmath>

#include "config.h"
#include "engine.h"
#include "llama.h"
#include "safetensors.h"
#include "support.h"

namespace bprof {
namespace {

using test::float32_logprob_tolerance;
using test::TempDir;
using test::TinyLlamaSpec;

at::Tensor token_tensor(const std::vector<int64_t>& tokens) {
  return at::from_blob(const_cast<int64_t*>(tokens.data()), {1, static_cast<int64_t>(tokens.size())}, at::kLong).clone();
}

std::unique_ptr<LlamaModel> load_tiny(const std::string& dir) {
  ModelConfig config = load_model_config(dir);
  Checkpoint checkpoint(dir);
  return std::make_unique<LlamaModel>(config, load_llama_weights(config, checkpoint, LoadOptions{}));
}

const std::vector<int64_t> kTokens = {256, 72, 101, 108, 108, 111, 44, 32, 119, 111, 114, 108, 100};

TEST(Llama, MatchesAFloat64ReferenceImplementation) {
  for (bool tied : {false, true}) {
    TempDir dir;
    TinyLlamaSpec spec;
    spec.tie_word_embeddings = tied;
    test::Weights weights = test::write_tiny_llama(dir.path(), spec);
    auto model = load_tiny(dir.path());

    c10::InferenceMode guard;
    at::Tensor logprobs = model->forward(token_tensor(kTokens)).log_softmax(-1)[0];  // [L, V]
    auto expected = test::reference_logprobs(spec, weights, kTokens);
    double worst = 0;
    for (size_t t = 0; t < kTokens.size(); t++)
      for (int64_t v = 0; v < spec.vocab_size; v++) worst = std::max(worst, std::abs(logprobs[t][v].item<double>() - expected[t][v]));
    EXPECT_LT(worst, 1e-4) << (tied ? "tied" : "untied");
  }
}

TEST(Llama, IsCausal) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  auto model = load_tiny(dir.path());
  c10::InferenceMode guard;
  std::vector<int64_t> longer = kTokens;
  longer.insert(longer.end(), {1, 2, 3, 200, 257});
  at::Tensor short_logits = model->forward(token_tensor(kTokens))[0];
  at::Tensor long_logits = model->forward(token_tensor(longer))[0].narrow(0, 0, static_cast<int64_t>(kTokens.size()));
  EXPECT_LT((short_logits - long_logits).abs().max().item<double>(), 1e-5);
  // and the appended tokens do change what comes after them
  EXPECT_GT((model->forward(token_tensor(longer))[0][-1] - short_logits[-1]).abs().max().item<double>(), 1e-3);
}

TEST(RoPE, Llama3ScalingKeepsHighAndStretchesLowFrequencies) {
  ModelConfig c;
  c.head_dim = 128;
  c.rope_theta = 500000.0;
  c.rope_scaling.type = RopeType::llama3;
  c.rope_scaling.factor = 8.0;
  c.rope_scaling.low_freq_factor = 1.0;
  c.rope_scaling.high_freq_factor = 4.0;
  c.rope_scaling.original_max_position_embeddings = 8192;
  at::Tensor scaled = rope_inv_freq(c, at::kCPU);
  c.rope_scaling.type = RopeType::standard;
  at::Tensor plain = rope_inv_freq(c, at::kCPU);
  ASSERT_EQ(scaled.size(0), 64);
  EXPECT_FLOAT_EQ(scaled[0].item<float>(), plain[0].item<float>());           // wavelength 2*pi: kept
  EXPECT_FLOAT_EQ(scaled[63].item<float>(), plain[63].item<float>() / 8.0f);  // longest: divided by factor
  for (int i = 0; i < 64; i++) {                                              // in between: never outside [plain / factor, plain]
    EXPECT_LE(scaled[i].item<float>(), plain[i].item<float>() * 1.000001f);
    EXPECT_GE(scaled[i].item<float>(), plain[i].item<float>() / 8.0f * 0.999999f);
  }
}

// --- scoring --------------------------------------------------------------

std::unique_ptr<Engine> tiny_engine(const std::string& dir, const std::string& dtype = "float32") {
  EngineOptions options;
  options.model_dir = dir;
  options.dtype = dtype;
  return std::make_unique<Engine>(load_model_config(dir), options);
}

TEST(Score, FollowsTheLoglikelihoodRule) {
  TempDir dir;
  TinyLlamaSpec spec;
  test::Weights weights = test::write_tiny_llama(dir.path(), spec);
  auto engine = tiny_engine(dir.path());
  std::vector<Item> items = test::sample_choice_items();
  std::vector<const Item*> all = {&items[0], &items[1], &items[2]};
  std::vector<ItemScores> scores = engine->score(all);

  for (size_t i = 0; i < items.size(); i++) {
    for (size_t c = 0; c < items[i].choices.size(); c++) {
      // score = sum_j log_softmax(logits[len(c) - 1 + j])[t_j] over the sequence context ++ choice
      std::vector<int64_t> seq = items[i].context;
      const std::vector<int64_t>& cont = items[i].choices[c];
      seq.insert(seq.end(), cont.begin(), cont.end());
      auto ref = test::reference_logprobs(spec, weights, seq);
      double expected = 0;
      bool greedy = true;
      for (size_t j = 0; j < cont.size(); j++) {
        const std::vector<double>& row = ref[items[i].context.size() - 1 + j];
        expected += row[cont[j]];
        greedy = greedy && std::max_element(row.begin(), row.end()) - row.begin() == cont[j];
      }
      EXPECT_NEAR(scores[i][c].logprob, expected, 1e-4) << items[i].id << " choice " << c;
      EXPECT_EQ(scores[i][c].tokens, static_cast<int64_t>(cont.size()));
      EXPECT_EQ(scores[i][c].greedy, greedy) << items[i].id << " choice " << c;
    }
  }
}

TEST(Score, BatchedEqualsUnbatched) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  auto engine = tiny_engine(dir.path());
  std::vector<Item> items = test::sample_choice_items();
  std::vector<ItemScores> batched = engine->score({&items[0], &items[1], &items[2]});
  for (size_t i = 0; i < items.size(); i++) {
    for (size_t c = 0; c < items[i].choices.size(); c++) {
      Item single{items[i].id, items[i].context, {items[i].choices[c]}};  // one row, no padding
      ChoiceScore alone = engine->score({&single})[0][0];
      EXPECT_NEAR(batched[i][c].logprob, alone.logprob, float32_logprob_tolerance(alone.logprob)) << items[i].id << " choice " << c;
      EXPECT_EQ(batched[i][c].greedy, alone.greedy);
      EXPECT_EQ(batched[i][c].tokens, alone.tokens);
    }
  }
}

// More continuation tokens than one lm_head block (1024 rows): the blocks must add up to the
// same score as a single log_softmax over the whole forward pass.
TEST(Score, LongContinuationsSpanningSeveralLogitBlocks) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  Item item{"long", {256, 1, 2}, {{}}};
  for (int j = 0; j < 1100; j++) item.choices[0].push_back((j * 37) % 256);
  ChoiceScore score = tiny_engine(dir.path())->score({&item})[0][0];

  auto model = load_tiny(dir.path());
  c10::InferenceMode guard;
  std::vector<int64_t> seq = item.context;
  seq.insert(seq.end(), item.choices[0].begin(), item.choices[0].end() - 1);
  at::Tensor logprobs = model->forward(token_tensor(seq))[0].log_softmax(-1).contiguous();  // [L, V]
  const float* lp = logprobs.data_ptr<float>();
  const int64_t V = logprobs.size(1);
  double expected = 0;
  for (size_t j = 0; j < item.choices[0].size(); j++)
    expected += lp[static_cast<int64_t>(item.context.size() - 1 + j) * V + item.choices[0][j]];
  EXPECT_EQ(score.tokens, 1100);
  EXPECT_NEAR(score.logprob, expected, 1e-3);
}

TEST(Score, Bfloat16IsCloseToFloat32) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  std::vector<Item> items = test::sample_choice_items();
  ItemScores f32 = tiny_engine(dir.path())->score({&items[0]})[0];
  ItemScores bf16 = tiny_engine(dir.path(), "bfloat16")->score({&items[0]})[0];
  for (size_t c = 0; c < f32.size(); c++) EXPECT_NEAR(bf16[c].logprob, f32[c].logprob, 0.5);
}

TEST(Score, Float16EitherRunsOrIsAClearBadJob) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  try {
    tiny_engine(dir.path(), "float16");  // libtorch 1.13 cannot matmul float16 on CPU; 2.x can
  } catch (const RunnerError& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_job) << e.what();
    EXPECT_NE(std::string(e.what()).find("float16"), std::string::npos);
  }
}

TEST(Engine, UnavailableDeviceIsResourcesAndUnknownDeviceIsBadJob) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  EngineOptions options;
  options.model_dir = dir.path();
  options.device = "cuda:7";
  try {
    Engine engine(load_model_config(dir.path()), options);
    FAIL();
  } catch (const RunnerError& e) {
    EXPECT_EQ(e.code(), ErrorCode::resources) << e.what();
  }
  options.device = "toaster";
  try {
    Engine engine(load_model_config(dir.path()), options);
    FAIL();
  } catch (const RunnerError& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_job) << e.what();
  }
}

// --- loading errors -------------------------------------------------------

void write_with(const std::string& dir, const std::function<void(test::Weights&)>& edit) {
  test::Weights w = test::tiny_llama_weights({});
  edit(w);
  std::vector<test::F32Tensor> tensors;
  for (const auto& kv : w) tensors.push_back(kv.second);
  test::write_file(dir + "/config.json", test::tiny_llama_config({}).dump());
  test::write_file(dir + "/model.safetensors", test::safetensors_bytes(tensors));
}

void expect_bad_model(const std::string& dir, const std::string& fragment) {
  try {
    load_tiny(dir);
    FAIL() << "loaded";
  } catch (const RunnerError& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_model) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Load, MissingTensorIsBadModelNamingIt) {
  TempDir dir;
  write_with(dir.path(), [](test::Weights& w) { w.erase("model.layers.0.self_attn.k_proj.weight"); });
  expect_bad_model(dir.path(), "'model.layers.0.self_attn.k_proj.weight' is missing");
}

TEST(Load, MisShapedTensorIsBadModelNamingIt) {
  TempDir dir;
  write_with(dir.path(), [](test::Weights& w) {
    test::F32Tensor& t = w["model.layers.1.mlp.down_proj.weight"];
    t.shape = {64, 32};  // transposed: [I, H] instead of [H, I]
  });
  expect_bad_model(dir.path(), "'model.layers.1.mlp.down_proj.weight' has shape [64, 32], expected [32, 64]");
}

TEST(Load, UnusedTensorsAreReportedAsAWarning) {
  TempDir dir;
  write_with(dir.path(), [](test::Weights& w) { w["model.extra.weight"] = {"model.extra.weight", {2}, {1, 2}}; });
  ModelConfig config = load_model_config(dir.path());
  Checkpoint checkpoint(dir.path());
  std::vector<std::string> warnings;
  LoadOptions options;
  options.warning = [&](const std::string& w) { warnings.push_back(w); };
  load_llama_weights(config, checkpoint, options);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("model.extra.weight"), std::string::npos);
}

}  // namespace
}  // namespace bprof
