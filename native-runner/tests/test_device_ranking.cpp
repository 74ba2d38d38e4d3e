// Rankings made where r is (device_ranking.h), against the host's (ranking.h): the same indices in
// the same order, the same negatives and non-finite counts, for both keys and both directions,
// with ties, signed zeros and NaNs; and the engine's ranked pass against its pass ranked on the
// host. Run here on the CPU: the tensor operations are the GPU's, and test_gpu.cpp runs them there.
#include <ATen/ops/from_blob.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "config.h"
#include "device_ranking.h"
#include "engine.h"
#include "ranking.h"
#include "support.h"

namespace bprof {
namespace {

using test::spans_of;

std::vector<at::Tensor> tensors_of(std::vector<std::vector<float>>& values) {
  std::vector<at::Tensor> out;
  for (auto& v : values) out.push_back(at::from_blob(v.data(), {static_cast<int64_t>(v.size())}, at::TensorOptions().dtype(at::kFloat)));
  return out;
}

TEST(DeviceRanking, EqualsTheHostsRankingsNegativesAndNonFiniteCounts) {
  std::mt19937 rng(5);
  std::vector<std::vector<float>> values(4);
  for (size_t t = 0; t < values.size(); t++)
    for (int i = 0; i < 3000 + 500 * static_cast<int>(t); i++) {
      const uint32_t r = rng();
      float v = std::ldexp(static_cast<float>(r % 100000) / 100000.0f, static_cast<int>(r % 50) - 25) * ((r >> 20) % 2 ? 1.0f : -1.0f);
      if (r % 5 == 0) v = static_cast<float>(r % 7) * 0.5f - 1.5f;  // ties, of both signs
      if (r % 97 == 0) v = -0.0f;
      if (r % 101 == 0) v = 0.0f;
      if (r % 211 == 0) v = std::numeric_limits<float>::quiet_NaN();
      if (r % 307 == 0) v = -std::numeric_limits<float>::infinity();
      values[t].push_back(v);
    }
  const auto spans = spans_of(values);
  const auto tensors = tensors_of(values);
  int64_t total = 0;
  for (const auto& v : values) total += static_cast<int64_t>(v.size());
  for (RankKey key : {RankKey::magnitude, RankKey::value})
    for (bool top : {true, false})
      for (int64_t n : {int64_t{1}, int64_t{40}, int64_t{2999}, int64_t{5000}, total - 1, total}) {
        int64_t non_finite = 0;
        const std::vector<int64_t> host = top ? rank_top(spans, n, key, &non_finite) : rank_bottom(spans, n, key, &non_finite);
        const std::vector<int64_t> prefixes = {0, n / 3, n};
        const RankingResult device = rank_tensors(tensors, key, top, n, prefixes);
        const std::string where =
            std::string(key == RankKey::magnitude ? "magnitude" : "value") + (top ? " top " : " bottom ") + std::to_string(n);
        EXPECT_EQ(device.ranking, host) << where;
        EXPECT_EQ(device.negatives, negatives_in_prefixes(spans, host, prefixes)) << where;
        EXPECT_EQ(device.non_finite, non_finite) << where;
        EXPECT_GT(device.non_finite, 0);
      }
  EXPECT_THROW(rank_tensors(tensors, RankKey::value, true, total + 1, {}), RunnerError);
  EXPECT_TRUE(rank_tensors(tensors, RankKey::value, true, 0, {0}).ranking.empty());
}

TEST(DeviceRanking, TheEnginesRankedPassEqualsItsPassRankedOnTheHost) {
  test::TempDir dir;
  test::write_tiny_llama(dir.path(), test::TinyLlamaSpec{});
  EngineOptions options;
  options.model_dir = dir.path();
  Engine engine(load_model_config(dir.path()), options);
  std::vector<std::vector<int64_t>> sequences;
  for (int64_t s = 0; s < 6; s++) {
    sequences.push_back({256});
    for (int64_t i = 1; i < 6 + s; i++) sequences.back().push_back(32 + (i * 11 + s * 5) % 90);
  }
  const auto candidates = engine.candidates(0, 0);
  const auto rise = engine.first_order_loss_rise(sequences, 2, candidates, nullptr, nullptr);
  // the second set: the last two candidate tensors, in reverse order, as a set's own order may be
  const std::vector<std::vector<size_t>> sets = {{0, 1, 2, 3, 4, 5}, {candidates.size() - 1, candidates.size() - 2}};
  std::vector<RankingRequest> requests;
  for (const auto& set : sets)
    for (RankKey key : {RankKey::magnitude, RankKey::value}) requests.push_back({set, key, key == RankKey::value, 50, {10, 50}});
  const std::vector<RankingResult> ranked = engine.rank_first_order_loss_rise(sequences, 2, candidates, nullptr, nullptr, requests);
  ASSERT_EQ(ranked.size(), requests.size());
  for (size_t r = 0; r < requests.size(); r++) {
    std::vector<ImportanceSpan> spans;
    for (size_t t : requests[r].tensors) spans.push_back({rise[t].data(), static_cast<int64_t>(rise[t].size())});
    const std::vector<int64_t> host =
        requests[r].largest_first ? rank_top(spans, 50, requests[r].key) : rank_bottom(spans, 50, requests[r].key);
    EXPECT_EQ(ranked[r].ranking, host) << "request " << r;
    EXPECT_EQ(ranked[r].negatives, negatives_in_prefixes(spans, host, {10, 50})) << "request " << r;
  }
}

}  // namespace
}  // namespace bprof
