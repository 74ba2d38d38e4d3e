// Selections of the method (docs/method.md, step 3): exact counts, deterministic ties, nesting,
// the seeded random control, overlap counts and the ranking file format. Torch-free.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>

#include "errors.h"
#include "ranking.h"
#include "support.h"

namespace bprof {
namespace {

using test::spans_of;

// The definition, by a full sort: largest (or smallest) first, ties to the smaller index.
std::vector<int64_t> brute_force(const std::vector<float>& flat, int64_t n, bool largest_first) {
  std::vector<int64_t> order(flat.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return largest_first ? flat[a] > flat[b] : flat[a] < flat[b]; });
  order.resize(static_cast<size_t>(n));
  return order;
}

TEST(Ranking, TopAndBottomBreakTiesByIndexAcrossTensors) {
  const std::vector<std::vector<float>> tensors = {{3, 1, 3}, {0, 2, 3}};
  auto spans = spans_of(tensors);
  EXPECT_EQ(rank_top(spans, 4), (std::vector<int64_t>{0, 2, 5, 4}));
  EXPECT_EQ(rank_bottom(spans, 3), (std::vector<int64_t>{3, 1, 4}));
  EXPECT_EQ(rank_top(spans, 0), std::vector<int64_t>{});
  EXPECT_EQ(rank_top(spans, 6).size(), 6u);
}

TEST(Ranking, EqualsAFullSortOnValuesWithManyTies) {
  std::mt19937 rng(7);
  std::vector<std::vector<float>> tensors(3);
  std::vector<float> flat;
  for (int t = 0; t < 3; t++) {
    for (int i = 0; i < 4000; i++) {
      // a few repeated values, denormals, zeros and a wide spread of magnitudes
      float v = (rng() % 4 == 0) ? static_cast<float>(rng() % 5) * 0.25f
                                 : std::ldexp(static_cast<float>(rng() % 100000) / 100000.0f, static_cast<int>(rng() % 60) - 140);
      tensors[t].push_back(v);
      flat.push_back(v);
    }
  }
  auto spans = spans_of(tensors);
  for (int64_t n : {1, 2, 17, 500, 3001, 6000, 11999, 12000}) {
    EXPECT_EQ(rank_top(spans, n), brute_force(flat, n, true)) << "top n=" << n;
    EXPECT_EQ(rank_bottom(spans, n), brute_force(flat, n, false)) << "bottom n=" << n;
  }
}

// The passes run on consecutive index ranges in parallel, about a million candidates a thread: the
// rankings and the count of non-finite values are those of one thread, ties across the ranges'
// boundaries included (a third of the values are one of four, so every cut falls among ties).
TEST(Ranking, IsTheSameOnAnyNumberOfThreads) {
  std::mt19937 rng(11);
  std::vector<std::vector<float>> tensors(3);
  for (size_t t = 0; t < tensors.size(); t++)
    for (int i = 0; i < 1500000; i++) {
      const uint32_t r = rng();
      tensors[t].push_back(r % 3 == 0     ? static_cast<float>(r % 4) - 1.5f
                           : r % 997 == 0 ? std::numeric_limits<float>::quiet_NaN()
                                          : std::ldexp(static_cast<float>(r % 100000) / 100000.0f, static_cast<int>(r % 40) - 20));
    }
  auto spans = spans_of(tensors);
  std::vector<std::vector<int64_t>> rankings;
  std::vector<int64_t> counts;
  for (int threads : {1, 3, 4}) {
    set_ranking_threads(threads);
    int64_t non_finite = 0;
    for (int64_t n : {1, 1000, 1500001, 4499999}) {
      rankings.push_back(rank_top(spans, n, RankKey::magnitude, &non_finite));
      counts.push_back(non_finite);
      rankings.push_back(rank_bottom(spans, n, RankKey::value, &non_finite));
      counts.push_back(non_finite);
    }
  }
  set_ranking_threads(1);
  const size_t per_count = rankings.size() / 3;
  for (size_t i = 0; i < per_count; i++) {
    EXPECT_EQ(rankings[i], rankings[per_count + i]) << "3 threads, ranking " << i;
    EXPECT_EQ(rankings[i], rankings[2 * per_count + i]) << "4 threads, ranking " << i;
    EXPECT_EQ(counts[i], counts[2 * per_count + i]) << "non-finite count " << i;
    EXPECT_GT(counts[i], 0);
  }
}

// The runner ranks r = -theta x gradient sum, negative where zeroing a weight would lower the loss:
// by value (`signed`) every negative r ranks below every positive one, most negative last, -0 tying
// 0; by magnitude (the paper's |r|) the sign is ignored.
TEST(Ranking, SignedValuesRankByValueOrByMagnitude) {
  std::mt19937 rng(13);
  std::vector<std::vector<float>> tensors(2);
  std::vector<float> flat;
  for (int t = 0; t < 2; t++) {
    for (int i = 0; i < 5000; i++) {
      float v = (rng() % 5 == 0) ? static_cast<float>(static_cast<int>(rng() % 5) - 2) * 0.5f
                                 : std::ldexp(static_cast<float>(rng() % 100000) / 100000.0f, static_cast<int>(rng() % 60) - 140);
      if (rng() % 2) v = -v;  // both signs, -0.0 included
      tensors[t].push_back(v);
      flat.push_back(v);
    }
  }
  auto spans = spans_of(tensors);
  std::vector<float> magnitudes(flat.size());
  std::transform(flat.begin(), flat.end(), magnitudes.begin(), [](float v) { return std::abs(v); });
  for (int64_t n : {1, 3, 100, 4999, 7001, 10000}) {
    EXPECT_EQ(rank_top(spans, n, RankKey::value), brute_force(flat, n, true)) << "top n=" << n;
    EXPECT_EQ(rank_bottom(spans, n, RankKey::value), brute_force(flat, n, false)) << "bottom n=" << n;
    EXPECT_EQ(rank_top(spans, n, RankKey::magnitude), brute_force(magnitudes, n, true)) << "top |.| n=" << n;
    EXPECT_EQ(rank_bottom(spans, n, RankKey::magnitude), brute_force(magnitudes, n, false)) << "bottom |.| n=" << n;
  }
  const std::vector<std::vector<float>> small = {{-1.0f, 0.5f, -0.0f, -3.0f, 0.0f, 2.0f}};
  EXPECT_EQ(rank_top(spans_of(small), 6, RankKey::value), (std::vector<int64_t>{5, 1, 2, 4, 0, 3}));
  EXPECT_EQ(rank_top(spans_of(small), 6, RankKey::magnitude), (std::vector<int64_t>{3, 5, 0, 1, 2, 4}));
}

TEST(Ranking, NegativesInPrefixesCountAcrossTensors) {
  const std::vector<std::vector<float>> tensors = {{-1.0f, 0.5f, -0.0f}, {-3.0f, 2.0f, -0.25f}};
  const auto spans = spans_of(tensors);
  const std::vector<int64_t> ranking = rank_top(spans, 6, RankKey::magnitude);  // 3, 4, 0, 1, 5, 2
  EXPECT_EQ(ranking, (std::vector<int64_t>{3, 4, 0, 1, 5, 2}));
  // -3, then 2, -1, 0.5, -0.25 and -0.0 (not negative)
  EXPECT_EQ(negatives_in_prefixes(spans, ranking, {0, 1, 2, 3, 5, 6}), (std::vector<int64_t>{0, 1, 1, 2, 3, 3}));
  EXPECT_THROW(negatives_in_prefixes(spans, ranking, {3, 2}), RunnerError);
  EXPECT_THROW(negatives_in_prefixes(spans, ranking, {7}), RunnerError);
}

TEST(Ranking, TopSetsOfASweepAreNested) {
  std::mt19937 rng(11);
  std::vector<float> values(20000);
  for (float& v : values) v = static_cast<float>(rng() % 1000);
  const std::vector<std::vector<float>> tensors = {values};
  auto spans = spans_of(tensors);
  std::vector<int64_t> full = rank_top(spans, 5000);
  for (int64_t n : {10, 40, 160, 640, 2560}) {
    std::vector<int64_t> direct = rank_top(spans, n);
    EXPECT_TRUE(std::equal(direct.begin(), direct.end(), full.begin())) << n;
  }
}

TEST(Ranking, NonFiniteImportanceRanksAsZeroAndIsCounted) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<std::vector<float>> tensors = {{0.5f, nan, 2.0f, inf, -0.0f, 1.0f}};
  auto spans = spans_of(tensors);
  int64_t non_finite = -1;
  EXPECT_EQ(rank_top(spans, 3, RankKey::value, &non_finite), (std::vector<int64_t>{2, 5, 0}));
  EXPECT_EQ(non_finite, 2);
  // 0, -0 and the two non-finite values tie at 0: by index
  EXPECT_EQ(rank_bottom(spans, 3), (std::vector<int64_t>{1, 3, 4}));
}

TEST(Ranking, MoreThanTheCandidatesIsABadJob) {
  const std::vector<std::vector<float>> tensors = {{1, 2}, {3}};
  auto spans = spans_of(tensors);
  try {
    rank_top(spans, 4);
    FAIL() << "expected bad_job";
  } catch (const RunnerError& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_job);
    EXPECT_NE(std::string(e.what()).find("only 3 candidates"), std::string::npos) << e.what();
  }
  EXPECT_THROW(draw_random(3, 4, 1), RunnerError);
}

// n = floor(k * P) exactly for the paper's sweep: k = m / 100000 with m = 1, 4, 16, 64, 256, 1024,
// so the exact answer is floor(m * P / 100000) in integers.
TEST(Ranking, CountsAreExactForEveryKOfThePapersSweep) {
  const std::vector<std::pair<double, int64_t>> sweep = {{0.00001, 1},  {0.00004, 4},   {0.00016, 16},
                                                         {0.00064, 64}, {0.00256, 256}, {0.01024, 1024}};
  std::vector<int64_t> models = {100000, 1000000, 1235814400, 8030261248, 70553706496, 6738415616};
  std::mt19937_64 rng(3);
  for (int i = 0; i < 2000; i++) models.push_back(static_cast<int64_t>(rng() % 200000000000ull) + 1);
  for (int64_t p : models) {
    for (const auto& [k, m] : sweep) {
      const __int128 exact = static_cast<__int128>(m) * p / 100000;
      ASSERT_EQ(parameters_for_k(k, p), static_cast<int64_t>(exact)) << "k=" << k << " P=" << p;
    }
  }
  EXPECT_EQ(parameters_for_k(0.5, 3), 1);
}

TEST(Ranking, RandomControlIsSeededDistinctAndPrefixStable) {
  std::vector<int64_t> a = draw_random(1000, 300, 42);
  EXPECT_EQ(a, draw_random(1000, 300, 42));
  EXPECT_NE(a, draw_random(1000, 300, 43));
  EXPECT_EQ(std::set<int64_t>(a.begin(), a.end()).size(), 300u);
  for (int64_t i : a) {
    EXPECT_GE(i, 0);
    EXPECT_LT(i, 1000);
  }
  std::vector<int64_t> shorter = draw_random(1000, 50, 42);
  EXPECT_TRUE(std::equal(shorter.begin(), shorter.end(), a.begin()));
  // every candidate can be drawn: all 1000 of 1000
  std::vector<int64_t> all = draw_random(1000, 1000, 5);
  EXPECT_EQ(std::set<int64_t>(all.begin(), all.end()).size(), 1000u);
}

TEST(Ranking, PrefixIntersectionsCountSharedIndices) {
  std::vector<int64_t> a = {5, 1, 9, 3}, b = {1, 7, 5, 2}, c = {8, 6, 4, 0};
  auto shared = prefix_intersections({&a, &b, &c}, 3);
  EXPECT_EQ(shared, (std::vector<std::vector<int64_t>>{{3, 2, 0}, {2, 3, 0}, {0, 0, 3}}));
  EXPECT_EQ(prefix_intersections({&a, &b}, 1)[0][1], 0);
}

TEST(Ranking, FileFormatRoundTripsAndRejectsPartialEntries) {
  std::vector<int64_t> ranking = {0, 1, 255, 256, 8030261247, 1ll << 40};
  std::string bytes = ranking_bytes(ranking);
  ASSERT_EQ(bytes.size(), 48u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[16]), 255);  // little-endian
  EXPECT_EQ(ranking_from_bytes(bytes, "r.bin"), ranking);
  EXPECT_THROW(ranking_from_bytes(bytes.substr(0, 47), "r.bin"), RunnerError);
}

TEST(Stability, TheFirstHalfIsASeededDrawOfHalfTheItems) {
  const std::vector<bool> half = first_half(7, 3);
  EXPECT_EQ(std::count(half.begin(), half.end(), true), 3);
  EXPECT_EQ(first_half(7, 3), half);
  std::vector<int64_t> drawn = draw_random(7, 3, 3);
  for (int64_t i : drawn) EXPECT_TRUE(half[static_cast<size_t>(i)]);
  EXPECT_NE(first_half(40, 3), first_half(40, 4));
  const std::vector<bool> one = first_half(1, 3);
  EXPECT_EQ(std::count(one.begin(), one.end(), true), 0);
}

// The released code's chunk size, against values its own Python arithmetic gives
// (max(1_000_000, int(math.sqrt(total / (n / total + 1e-9))))).
TEST(ChunkedSelection, ChunkSizeIsTheReleasedCodesArithmetic) {
  EXPECT_EQ(released_chunk_size(2500000, 25), 1000000);
  EXPECT_EQ(released_chunk_size(10000000, 10), 3160697);
  EXPECT_EQ(released_chunk_size(5600000000, 80300), 19761281);    // an 8B model's MLP at k = 0.00001
  EXPECT_EQ(released_chunk_size(5600000000, 82227000), 1000000);  // at k = 0.01024
}

// 2.5 million candidates, n = 25: chunks of 10^6, 10^6 and 500,000 contribute 10, 10 and 5.
std::vector<float> ramp(int64_t size) {
  std::vector<float> values(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; i++) values[static_cast<size_t>(i)] = static_cast<float>(i % 1000) * 1e-6f;
  return values;
}

TEST(ChunkedSelection, DiffersFromTheGlobalTopWhenTheLargestValuesShareAChunk) {
  std::vector<float> values = ramp(2500000);
  for (int64_t i = 0; i < 25; i++) values[static_cast<size_t>(100 + i * 7)] = 10.0f + static_cast<float>(i);  // all in chunk 0
  const std::vector<ImportanceSpan> spans = {{values.data(), 1200000}, {values.data() + 1200000, 1300000}};
  const std::vector<int64_t> global = rank_top(spans, 25);
  const std::vector<int64_t> chunked = rank_top_chunked(spans, 25);
  ASSERT_EQ(chunked.size(), 25u);
  // chunk 0 gives its 10 largest, best first: the planted values 24 down to 15
  for (int64_t i = 0; i < 10; i++) EXPECT_EQ(chunked[static_cast<size_t>(i)], 100 + (24 - i) * 7);
  // the other chunks give their own largest ramp values (0.000999, ties to the smaller index),
  // across the boundary between the two spans
  std::vector<int64_t> rest;
  for (int64_t i = 0; i < 10; i++) rest.push_back(1000999 + i * 1000);
  for (int64_t i = 0; i < 5; i++) rest.push_back(2000999 + i * 1000);
  EXPECT_EQ(std::vector<int64_t>(chunked.begin() + 10, chunked.end()), rest);
  EXPECT_EQ(shared_indices(chunked, global), 10);
  EXPECT_EQ(shared_indices(global, global), 25);
}

TEST(ChunkedSelection, AgreesWithTheGlobalTopWhenEachChunkHoldsItsShare) {
  std::vector<float> values = ramp(2500000);
  // 10, 10 and 5 planted values in the three chunks: exactly the global top 25
  for (int64_t i = 0; i < 10; i++) values[static_cast<size_t>(3 + i * 1000)] = 5.0f + static_cast<float>(i);
  for (int64_t i = 0; i < 10; i++) values[static_cast<size_t>(1000003 + i * 1000)] = 2.0f + static_cast<float>(i) * 0.01f;
  for (int64_t i = 0; i < 5; i++) values[static_cast<size_t>(2499990 + i)] = 1.0f;
  const std::vector<ImportanceSpan> spans = {{values.data(), static_cast<int64_t>(values.size())}};
  const std::vector<int64_t> chunked = rank_top_chunked(spans, 25, RankKey::magnitude);
  std::vector<int64_t> sorted_chunked = chunked, sorted_global = rank_top(spans, 25, RankKey::magnitude);
  std::sort(sorted_chunked.begin(), sorted_chunked.end());
  std::sort(sorted_global.begin(), sorted_global.end());
  EXPECT_EQ(sorted_chunked, sorted_global);
}

// Below 10^6 candidates there is one chunk: the chunked set is the global top of its own size,
// which is ceil(n / N * N) in floating point: n, or n + 1 where the division rounds up.
TEST(ChunkedSelection, OneChunkIsTheGlobalTopOfItsSize) {
  std::mt19937 rng(11);
  std::vector<float> values(50000);
  for (float& v : values) v = static_cast<float>(static_cast<int>(rng() % 20001) - 10000) * 1e-3f;
  const std::vector<ImportanceSpan> spans = {{values.data(), 20000}, {values.data() + 20000, 30000}};
  for (int64_t n : {1, 7, 49, 1000, 33333, 50000}) {
    for (RankKey key : {RankKey::magnitude, RankKey::value}) {
      const std::vector<int64_t> chunked = rank_top_chunked(spans, n, key);
      EXPECT_TRUE(static_cast<int64_t>(chunked.size()) == n || static_cast<int64_t>(chunked.size()) == n + 1) << n;
      EXPECT_EQ(chunked, rank_top(spans, static_cast<int64_t>(chunked.size()), key)) << "n=" << n;
    }
  }
  EXPECT_EQ(rank_top_chunked(spans, 0), std::vector<int64_t>{});
  EXPECT_THROW(rank_top_chunked(spans, 50001), RunnerError);
}

TEST(ChunkedSelection, CountsNonFiniteValuesInEveryChunk) {
  std::vector<float> values = ramp(2500000);
  values[5] = std::numeric_limits<float>::quiet_NaN();
  values[2400000] = std::numeric_limits<float>::infinity();
  const std::vector<ImportanceSpan> spans = {{values.data(), static_cast<int64_t>(values.size())}};
  int64_t non_finite = -1;
  const std::vector<int64_t> chunked = rank_top_chunked(spans, 25, RankKey::value, &non_finite);
  EXPECT_EQ(non_finite, 2);
  EXPECT_EQ(std::count(chunked.begin(), chunked.end(), 2400000), 0);  // ranked as 0, below the ramp's top
}

}  // namespace
}  // namespace bprof
