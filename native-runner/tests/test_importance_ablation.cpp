// The method's tensor work on a tiny seeded model: importance against finite differences of an
// independent float64 forward pass, parameter counting, candidates, and in-place ablation that
// restores the weights bit for bit.
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "config.h"
#include "engine.h"
#include "llama.h"
#include "ranking.h"
#include "support.h"

namespace bprof {
namespace {

using test::TempDir;
using test::TinyLlamaSpec;

std::unique_ptr<Engine> open_tiny(const std::string& dir) {
  EngineOptions options;
  options.model_dir = dir;
  return std::make_unique<Engine>(load_model_config(dir), options);
}

// The method's objective for given weights, in float64 by the reference forward pass: the sum
// over batches (length-sorted, `batch_size` a batch) of the mean next-token cross-entropy.
double summed_batch_losses(const TinyLlamaSpec& spec, const test::Weights& weights, const std::vector<std::vector<int64_t>>& by_length,
                           size_t batch_size) {
  double total = 0;
  for (size_t start = 0; start < by_length.size(); start += batch_size) {
    double loss = 0;
    int64_t predictions = 0;
    for (size_t s = start; s < std::min(by_length.size(), start + batch_size); s++) {
      const auto& seq = by_length[s];
      auto logprobs = test::reference_logprobs(spec, weights, seq);
      for (size_t p = 0; p + 1 < seq.size(); p++, predictions++) loss -= logprobs[p][static_cast<size_t>(seq[p + 1])];
    }
    total += loss / static_cast<double>(predictions);
  }
  return total;
}

TEST(Importance, RiseIsMinusThetaTimesTheSummedBatchGradientByFiniteDifferences) {
  TempDir dir;
  TinyLlamaSpec spec;
  test::Weights weights = test::write_tiny_llama(dir.path(), spec);
  auto engine = open_tiny(dir.path());

  // lengths 9, 5, 11, 7 in job order: batches of 2 by length are {5, 7} and {9, 11}
  auto sequence = [](int64_t length, int64_t salt) {
    std::vector<int64_t> s = {256};
    for (int64_t i = 1; i < length; i++) s.push_back(32 + (i * 7 + salt * 13) % 90);
    return s;
  };
  const std::vector<std::vector<int64_t>> job_order = {sequence(9, 1), sequence(5, 2), sequence(11, 3), sequence(7, 4)};
  const std::vector<std::vector<int64_t>> by_length = {job_order[1], job_order[3], job_order[0], job_order[2]};

  std::vector<CandidateTensor> candidates = engine->candidates(0, 0);
  ASSERT_EQ(candidates.size(), 6u);  // 2 layers x gate, up, down
  // r = -theta * g; the paper's importance is |r|
  std::vector<std::vector<float>> rise = engine->first_order_loss_rise(job_order, 2, candidates, nullptr, nullptr);
  ASSERT_EQ(rise.size(), candidates.size());
  int positive = 0, negative = 0;
  for (const auto& values : rise)
    for (float v : values) {
      positive += v > 0;
      negative += v < 0;
    }
  EXPECT_GT(positive, 0);
  EXPECT_GT(negative, 0);

  double largest = 0;
  for (const auto& values : rise)
    for (float v : values) largest = std::max(largest, std::abs(static_cast<double>(v)));
  ASSERT_GT(largest, 0);

  int checked = 0;
  for (size_t c = 0; c < candidates.size(); c++) {
    const std::vector<float>& values = rise[c];
    ASSERT_EQ(static_cast<int64_t>(values.size()), candidates[c].numel);
    // the entry of the largest |r| in the tensor and two fixed ones
    const size_t top = static_cast<size_t>(
        std::max_element(values.begin(), values.end(), [](float a, float b) { return std::abs(a) < std::abs(b); }) - values.begin());
    for (size_t j : {top, size_t{3}, values.size() - 5}) {
      test::Weights plus = weights, minus = weights;
      float& wp = plus.at(candidates[c].name).values[j];
      float& wm = minus.at(candidates[c].name).values[j];
      const float theta = weights.at(candidates[c].name).values[j];
      wp = theta + 1e-3f;
      wm = theta - 1e-3f;
      const double gradient = (summed_batch_losses(spec, plus, by_length, 2) - summed_batch_losses(spec, minus, by_length, 2)) /
                              (static_cast<double>(wp) - static_cast<double>(wm));
      const double expected = -static_cast<double>(theta) * gradient;
      EXPECT_NEAR(values[j], expected, 2e-3 * std::abs(expected) + 1e-5 * largest) << candidates[c].name << "[" << j << "]";
      checked++;
    }
  }
  EXPECT_EQ(checked, 18);
}

// What r promises, and `signed` ranks by: the weight of the largest r is the one whose zeroing raises
// the loss the most (to first order), and the one of the most negative r lowers the loss when
// zeroed. Checked by zeroing each in the float64 reference model.
TEST(Importance, TheLargestRiseRaisesTheLossWhenZeroedAndTheMostNegativeLowersIt) {
  TempDir dir;
  TinyLlamaSpec spec;
  test::Weights weights = test::write_tiny_llama(dir.path(), spec);
  auto engine = open_tiny(dir.path());
  std::vector<std::vector<int64_t>> sequences;
  for (int64_t s = 0; s < 6; s++) {
    sequences.push_back({256});
    for (int64_t i = 1; i < 6 + s; i++) sequences.back().push_back(40 + (i * 5 + s * 11) % 60);
  }
  std::vector<std::vector<int64_t>> by_length = sequences;  // already sorted by length
  std::vector<CandidateTensor> candidates = engine->candidates(0, 0);
  auto rise = engine->first_order_loss_rise(sequences, 3, candidates, nullptr, nullptr);
  std::vector<ImportanceSpan> spans;
  for (const auto& values : rise) spans.push_back({values.data(), static_cast<int64_t>(values.size())});
  const int64_t total = candidates.back().offset + candidates.back().numel;
  const int64_t first = rank_top(spans, 1).front(), last = rank_bottom(spans, 1).front();

  const double base = summed_batch_losses(spec, weights, by_length, 3);
  auto loss_change_when_zeroed = [&](int64_t index, double* estimate) {
    for (size_t c = 0; c < candidates.size(); c++) {
      if (index < candidates[c].offset || index >= candidates[c].offset + candidates[c].numel) continue;
      const size_t j = static_cast<size_t>(index - candidates[c].offset);
      *estimate = rise[c][j];
      test::Weights zeroed = weights;
      zeroed.at(candidates[c].name).values[j] = 0;
      return summed_batch_losses(spec, zeroed, by_length, 3) - base;
    }
    ADD_FAILURE() << "index " << index << " is not a candidate (of " << total << ")";
    return 0.0;
  };
  double first_estimate = 0, last_estimate = 0;
  const double raised = loss_change_when_zeroed(first, &first_estimate);
  const double lowered = loss_change_when_zeroed(last, &last_estimate);
  EXPECT_GT(first_estimate, 0);
  EXPECT_LT(last_estimate, 0);
  EXPECT_GT(raised, 0) << "zeroing the signed top weight should raise the loss";
  EXPECT_LT(lowered, 0) << "zeroing the signed bottom weight should lower the loss";
  EXPECT_NEAR(raised, first_estimate, 0.25 * first_estimate);
  EXPECT_NEAR(lowered, last_estimate, 0.25 * std::abs(last_estimate));
}

// The stability's halves out of one pass: r of a part of the sequences is -theta times the
// gradient of their share of the same batch losses (the batch means still divide by all of the
// batch's tokens), by finite differences; the whole r is the same bits with or without the part;
// a part and its complement add up to the whole.
TEST(Importance, APartsRiseIsItsShareOfTheSameBatchLosses) {
  TempDir dir;
  TinyLlamaSpec spec;
  test::Weights weights = test::write_tiny_llama(dir.path(), spec);
  auto engine = open_tiny(dir.path());
  std::vector<std::vector<int64_t>> sequences;  // lengths 5..10: already sorted by length
  for (int64_t s = 0; s < 6; s++) {
    sequences.push_back({256});
    for (int64_t i = 1; i < 5 + s; i++) sequences.back().push_back(40 + (i * 7 + s * 5) % 70);
  }
  const std::vector<bool> part = {true, false, false, true, true, false};
  std::vector<bool> rest(part.size());
  for (size_t i = 0; i < part.size(); i++) rest[i] = !part[i];
  const auto candidates = engine->candidates(0, 0);
  const auto whole = engine->first_order_loss_rise(sequences, 3, candidates, nullptr, nullptr);
  std::vector<std::vector<float>> part_rise, rest_rise;
  EXPECT_EQ(engine->first_order_loss_rise(sequences, 3, candidates, nullptr, nullptr, part, &part_rise), whole);
  engine->first_order_loss_rise(sequences, 3, candidates, nullptr, nullptr, rest, &rest_rise);

  // the part's objective in float64: per batch of 3, its rows' losses over all the batch's predictions
  auto part_losses = [&](const test::Weights& w) {
    double total = 0;
    for (size_t start = 0; start < sequences.size(); start += 3) {
      double loss = 0;
      int64_t predictions = 0;
      for (size_t s = start; s < start + 3; s++) {
        auto logprobs = test::reference_logprobs(spec, w, sequences[s]);
        for (size_t p = 0; p + 1 < sequences[s].size(); p++, predictions++)
          if (part[s]) loss -= logprobs[p][static_cast<size_t>(sequences[s][p + 1])];
      }
      total += loss / static_cast<double>(predictions);
    }
    return total;
  };
  double largest = 0;
  for (size_t c = 0; c < candidates.size(); c++)
    for (size_t j = 0; j < whole[c].size(); j++) {
      largest = std::max(largest, std::abs(static_cast<double>(whole[c][j])));
      EXPECT_NEAR(part_rise[c][j] + rest_rise[c][j], whole[c][j], 1e-5 * std::abs(whole[c][j]) + 1e-7) << c << " " << j;
    }
  for (size_t c = 0; c < candidates.size(); c++) {
    const auto& values = part_rise[c];
    const size_t top = static_cast<size_t>(
        std::max_element(values.begin(), values.end(), [](float a, float b) { return std::abs(a) < std::abs(b); }) - values.begin());
    test::Weights plus = weights, minus = weights;
    const float theta = weights.at(candidates[c].name).values[top];
    plus.at(candidates[c].name).values[top] = theta + 1e-3f;
    minus.at(candidates[c].name).values[top] = theta - 1e-3f;
    const double gradient =
        (part_losses(plus) - part_losses(minus)) / (static_cast<double>(theta + 1e-3f) - static_cast<double>(theta - 1e-3f));
    const double expected = -static_cast<double>(theta) * gradient;
    EXPECT_NEAR(values[top], expected, 2e-3 * std::abs(expected) + 1e-5 * largest) << candidates[c].name << "[" << top << "]";
  }
}

TEST(Importance, LeavesTheWeightsAsTheyWereAndGivesTheSameAnswerTwice) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  auto engine = open_tiny(dir.path());
  const std::vector<std::vector<int64_t>> sequences = {{256, 72, 105, 33}, {256, 65, 66, 67, 68, 69}, {256, 80, 81}};
  auto candidates = engine->candidates(0, 0);

  Item item{"q", {256, 72, 101}, {{108, 108}, {111}}};
  auto before = engine->score({&item});
  auto first = engine->first_order_loss_rise(sequences, 2, candidates, nullptr, nullptr);
  auto second = engine->first_order_loss_rise(sequences, 2, candidates, nullptr, nullptr);
  EXPECT_EQ(first, second);
  auto after = engine->score({&item});
  for (size_t c = 0; c < 2; c++) EXPECT_EQ(before[0][c].logprob, after[0][c].logprob);
  for (const LlamaLayer& layer : engine->model().weights().layers) EXPECT_FALSE(layer.up_proj.requires_grad());
}

TEST(Engine, CountsEveryParameterOnceAndListsTheMlpCandidates) {
  for (bool tied : {false, true}) {
    TempDir dir;
    TinyLlamaSpec spec;
    spec.tie_word_embeddings = tied;
    spec.num_hidden_layers = 4;
    test::Weights weights = test::write_tiny_llama(dir.path(), spec);
    auto engine = open_tiny(dir.path());
    int64_t written = 0;
    for (const auto& kv : weights) written += static_cast<int64_t>(kv.second.values.size());
    EXPECT_EQ(engine->parameter_count(), written) << (tied ? "tied" : "untied");

    auto candidates = engine->candidates(1, 2);  // layer 1 only
    ASSERT_EQ(candidates.size(), 3u);
    EXPECT_EQ(candidates[0].name, "model.layers.1.mlp.gate_proj.weight");
    EXPECT_EQ(candidates[1].name, "model.layers.1.mlp.up_proj.weight");
    EXPECT_EQ(candidates[2].name, "model.layers.1.mlp.down_proj.weight");
    EXPECT_EQ(candidates[1].offset, spec.hidden_size * spec.intermediate_size);
    EXPECT_EQ(candidates[2].offset, 2 * spec.hidden_size * spec.intermediate_size);
    EXPECT_THROW(engine->candidates(2, 2), RunnerError);
  }
}

std::vector<std::string> bytes_of_every_weight(const LlamaModel& model) {
  std::vector<std::string> out;
  auto add = [&](const at::Tensor& t) {
    if (!t.defined()) return;
    at::Tensor c = t.contiguous();
    out.emplace_back(static_cast<const char*>(c.data_ptr()), static_cast<size_t>(c.numel()) * c.element_size());
  };
  const LlamaWeights& w = model.weights();
  add(w.embed_tokens);
  add(w.lm_head);
  add(w.norm);
  for (const LlamaLayer& l : w.layers)
    for (const at::Tensor* t :
         {&l.input_norm, &l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.post_attention_norm, &l.gate_proj, &l.up_proj, &l.down_proj})
      add(*t);
  return out;
}

TEST(Ablation, ZeroesExactlyTheSelectionAndRestoresTheWeightsBitForBit) {
  for (const char* dtype : {"float32", "bfloat16"}) {
    TempDir dir;
    test::write_tiny_llama(dir.path());
    EngineOptions options;
    options.model_dir = dir.path();
    options.dtype = dtype;
    Engine engine(load_model_config(dir.path()), options);
    auto candidates = engine.candidates(0, 0);
    const int64_t total = candidates.back().offset + candidates.back().numel;
    const std::vector<std::string> original = bytes_of_every_weight(engine.model());

    auto count_zeros = [&] {
      int64_t zeros = 0;
      for (const LlamaLayer& l : engine.model().weights().layers)
        for (const at::Tensor* t : {&l.gate_proj, &l.up_proj, &l.down_proj}) zeros += t->eq(0).sum().item<int64_t>();
      return zeros;
    };
    ASSERT_EQ(count_zeros(), 0);

    // indices in every candidate tensor, the first and last included
    std::vector<int64_t> selection = {0, total - 1, candidates[1].offset, candidates[4].offset + 17};
    for (int64_t i = 5; i < total - 1; i += 97) selection.push_back(i);
    std::sort(selection.begin(), selection.end());
    selection.erase(std::unique(selection.begin(), selection.end()), selection.end());
    const int64_t n = static_cast<int64_t>(selection.size());

    Item item{"q", {256, 72, 101}, {{108, 108}, {111}}};
    auto before = engine.score({&item});
    engine.ablate(candidates, selection.data(), n);
    EXPECT_EQ(count_zeros(), n) << dtype;
    auto ablated = engine.score({&item});
    EXPECT_NE(before[0][0].logprob, ablated[0][0].logprob) << dtype;
    engine.restore();

    EXPECT_EQ(count_zeros(), 0);
    EXPECT_TRUE(bytes_of_every_weight(engine.model()) == original) << dtype << ": restored weights differ from the originals";
    auto after = engine.score({&item});
    for (size_t c = 0; c < 2; c++) EXPECT_EQ(before[0][c].logprob, after[0][c].logprob) << dtype;
  }
}

}  // namespace
}  // namespace bprof
