#include "ranking.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <thread>

#include "errors.h"

namespace bprof {

namespace {

static_assert(sizeof(float) == 4, "float32 keys");

// An order key for a value of either sign, or for its magnitude: setting the sign bit of a
// non-negative float32, and flipping every bit of a negative one, gives unsigned integers that
// sort like the floats themselves, so selecting by key needs no float comparisons and no full sort.
constexpr uint32_t kSignBit = 0x80000000u;
constexpr uint32_t kInfinityBits = 0x7F800000u;
constexpr uint32_t kZeroKey = kSignBit;  // the key of +0.0

uint32_t order_key(float value, RankKey key, int64_t& non_finite) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if (key == RankKey::magnitude) bits &= ~kSignBit;
  if ((bits & ~kSignBit) >= kInfinityBits) {
    non_finite++;
    return kZeroKey;  // ranked as an importance of 0
  }
  if ((bits & ~kSignBit) == 0) return kZeroKey;  // -0.0 ranks as 0.0
  return (bits & kSignBit) ? ~bits : bits | kSignBit;
}

enum class Order { largest_first, smallest_first };

// The threads the ranking's passes may use (set_ranking_threads).
std::atomic<int> ranking_threads{1};

// Visits the keys of the global indices [begin, end), in index order.
template <typename Visit>
void for_each_key_in(const std::vector<ImportanceSpan>& importance, RankKey rank_key, Order order, int64_t begin, int64_t end,
                     int64_t& non_finite, Visit visit) {
  int64_t offset = 0;
  for (const ImportanceSpan& span : importance) {
    const int64_t from = std::max(begin, offset), to = std::min(end, offset + span.size);
    for (int64_t index = from; index < to; index++) {
      const uint32_t key = order_key(span.values[index - offset], rank_key, non_finite);
      visit(order == Order::largest_first ? ~key : key, index);
    }
    offset += span.size;
  }
}

// Runs work(part, begin, end) on `parts` consecutive ranges of [0, total), one thread each.
template <typename Work>
void in_parallel(int64_t total, int parts, Work work) {
  if (parts == 1) {
    work(0, 0, total);
    return;
  }
  std::vector<std::thread> threads;
  for (int p = 0; p < parts; p++) threads.emplace_back([&work, p, total, parts] { work(p, total * p / parts, total * (p + 1) / parts); });
  for (std::thread& t : threads) t.join();
}

using KeyIndex = std::pair<uint32_t, int64_t>;

// Sorted runs merged pairwise, the pairs of a round in parallel, into one sorted run.
std::vector<KeyIndex> merge_runs(std::vector<std::vector<KeyIndex>> runs) {
  while (runs.size() > 1) {
    std::vector<std::vector<KeyIndex>> merged((runs.size() + 1) / 2);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < merged.size(); i++) {
      threads.emplace_back([&runs, &merged, i] {
        if (2 * i + 1 == runs.size()) {
          merged[i] = std::move(runs[2 * i]);
          return;
        }
        std::vector<KeyIndex>& a = runs[2 * i];
        std::vector<KeyIndex>& b = runs[2 * i + 1];
        merged[i].resize(a.size() + b.size());
        std::merge(a.begin(), a.end(), b.begin(), b.end(), merged[i].begin());
        std::vector<KeyIndex>().swap(a);
        std::vector<KeyIndex>().swap(b);
      });
    }
    for (std::thread& t : threads) t.join();
    runs = std::move(merged);
  }
  return runs.empty() ? std::vector<KeyIndex>{} : std::move(runs.front());
}

// The n smallest keys with ties to the smaller index, sorted: a two-pass radix select finds the
// key of the n-th entry exactly (16 high bits, then 16 low bits), so only about n entries are
// collected and sorted, whatever the number of candidates (billions for an 8B model). Each pass
// runs on consecutive index ranges in parallel (about a million candidates a thread at least);
// the ranges keep the index order, so the ties that make the cut are the first by index as with
// one thread, and the result is the same whatever the thread count.
std::vector<int64_t> select_smallest_keys(const std::vector<ImportanceSpan>& importance, int64_t n, RankKey rank_key, Order order,
                                          int64_t* non_finite_out) {
  int64_t total = 0;
  for (const ImportanceSpan& span : importance) total += span.size;
  if (n > total)
    throw RunnerError(ErrorCode::bad_job, "the ablation asks for " + std::to_string(n) + " parameters but there are only " +
                                              std::to_string(total) + " candidates (MLP weights of the included layers)");
  if (n <= 0) return {};
  const int parts = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(ranking_threads.load(), total / (1 << 20))));
  using Histogram = std::vector<int64_t>;

  std::vector<Histogram> high(static_cast<size_t>(parts), Histogram(1 << 16, 0));
  in_parallel(total, parts, [&](int p, int64_t begin, int64_t end) {
    int64_t ignored = 0;
    Histogram& h = high[static_cast<size_t>(p)];
    for_each_key_in(importance, rank_key, order, begin, end, ignored, [&](uint32_t key, int64_t) { h[key >> 16]++; });
  });
  for (int p = 1; p < parts; p++)
    for (size_t b = 0; b < high[0].size(); b++) high[0][b] += high[static_cast<size_t>(p)][b];
  uint32_t high_bucket = 0;
  int64_t below = 0;  // entries whose key is smaller than every key of the bucket
  while (below + high[0][high_bucket] < n) below += high[0][high_bucket++];

  std::vector<Histogram> low(static_cast<size_t>(parts), Histogram(1 << 16, 0));
  in_parallel(total, parts, [&](int p, int64_t begin, int64_t end) {
    int64_t ignored = 0;
    Histogram& h = low[static_cast<size_t>(p)];
    for_each_key_in(importance, rank_key, order, begin, end, ignored, [&](uint32_t key, int64_t) {
      if ((key >> 16) == high_bucket) h[key & 0xFFFFu]++;
    });
  });
  Histogram low_all(1 << 16, 0);
  for (const Histogram& h : low)
    for (size_t b = 0; b < h.size(); b++) low_all[b] += h[b];
  uint32_t low_bucket = 0;
  while (below + low_all[low_bucket] < n) below += low_all[low_bucket++];
  const uint32_t threshold = (high_bucket << 16) | low_bucket;

  // keys below the threshold all belong; of those equal to it, the first (n - below) by index:
  // each range takes what the ranges before it left
  std::vector<int64_t> ties(static_cast<size_t>(parts));
  int64_t ties_left = n - below;
  for (int p = 0; p < parts; p++) {
    ties[static_cast<size_t>(p)] = std::min(ties_left, low[static_cast<size_t>(p)][low_bucket]);
    ties_left -= ties[static_cast<size_t>(p)];
  }
  std::vector<std::vector<KeyIndex>> chosen(static_cast<size_t>(parts));
  std::vector<int64_t> non_finite(static_cast<size_t>(parts), 0);
  in_parallel(total, parts, [&](int p, int64_t begin, int64_t end) {
    std::vector<KeyIndex>& out = chosen[static_cast<size_t>(p)];
    int64_t& tied = ties[static_cast<size_t>(p)];
    for_each_key_in(importance, rank_key, order, begin, end, non_finite[static_cast<size_t>(p)], [&](uint32_t key, int64_t index) {
      if (key < threshold)
        out.emplace_back(key, index);
      else if (key == threshold && tied > 0) {
        out.emplace_back(key, index);
        tied--;
      }
    });
    std::sort(out.begin(), out.end());  // by key, then index
  });
  if (non_finite_out) *non_finite_out = std::accumulate(non_finite.begin(), non_finite.end(), int64_t{0});

  const std::vector<KeyIndex> sorted = merge_runs(std::move(chosen));
  std::vector<int64_t> ranking(sorted.size());
  for (size_t i = 0; i < sorted.size(); i++) ranking[i] = sorted[i].second;
  return ranking;
}

}  // namespace

void set_ranking_threads(int threads) { ranking_threads = std::max(1, threads); }

int64_t parameters_for_k(double k, int64_t parameters) {
  // k arrives as the double nearest to a short decimal (0.00016). Recover that decimal, m / 10^d,
  // as the shortest one that parses back to the same double, then floor(m * P / 10^d) in integers:
  // floating point alone cannot tell 159.99999 (a true fraction) from 160 (a rounding error).
  double scale = 1;
  for (int digits = 0; digits <= 17; digits++, scale *= 10) {
    const double m = std::round(k * scale);
    if (m / scale == k && m < 1e18) {
      const __int128 product = static_cast<__int128>(static_cast<int64_t>(m)) * parameters;
      __int128 power = 1;
      for (int i = 0; i < digits; i++) power *= 10;
      return static_cast<int64_t>(product / power);
    }
  }
  return static_cast<int64_t>(std::floor(static_cast<long double>(k) * static_cast<long double>(parameters)));
}

std::vector<int64_t> rank_top(const std::vector<ImportanceSpan>& importance, int64_t n, RankKey key, int64_t* non_finite) {
  return select_smallest_keys(importance, n, key, Order::largest_first, non_finite);
}

std::vector<int64_t> rank_bottom(const std::vector<ImportanceSpan>& importance, int64_t n, RankKey key, int64_t* non_finite) {
  return select_smallest_keys(importance, n, key, Order::smallest_first, non_finite);
}

int64_t released_chunk_size(int64_t candidates, int64_t n) {
  // the released code's arithmetic, in the same double operations: its "fraction of the MLP
  // subset", then max(10^6, int(sqrt(total / (fraction + 1e-9))))
  const double fraction = static_cast<double>(n) / static_cast<double>(candidates);
  const double root = std::sqrt(static_cast<double>(candidates) / (fraction + 1e-9));
  return std::max<int64_t>(kReleasedMinChunk, static_cast<int64_t>(root));
}

namespace {

// The part of the candidates' importance in [start, end) of the global index, as spans.
std::vector<ImportanceSpan> spans_between(const std::vector<ImportanceSpan>& importance, int64_t start, int64_t end) {
  std::vector<ImportanceSpan> out;
  int64_t offset = 0;
  for (const ImportanceSpan& span : importance) {
    const int64_t from = std::max(start, offset), to = std::min(end, offset + span.size);
    if (from < to) out.push_back({span.values + (from - offset), to - from});
    offset += span.size;
  }
  return out;
}

}  // namespace

std::vector<int64_t> rank_top_chunked(const std::vector<ImportanceSpan>& importance, int64_t n, RankKey key, int64_t* non_finite_out) {
  int64_t total = 0;
  for (const ImportanceSpan& span : importance) total += span.size;
  if (n > total)
    throw RunnerError(ErrorCode::bad_job, "the ablation asks for " + std::to_string(n) + " parameters but there are only " +
                                              std::to_string(total) + " candidates (MLP weights of the included layers)");
  if (non_finite_out) *non_finite_out = 0;
  if (n <= 0) return {};
  const double fraction = static_cast<double>(n) / static_cast<double>(total);
  const int64_t chunk = released_chunk_size(total, n);
  std::vector<int64_t> chosen;
  for (int64_t start = 0; start < total; start += chunk) {
    const int64_t end = std::min(total, start + chunk);
    const int64_t take = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(fraction * static_cast<double>(end - start))));
    int64_t non_finite = 0;
    for (int64_t local : select_smallest_keys(spans_between(importance, start, end), take, key, Order::largest_first, &non_finite))
      chosen.push_back(start + local);
    if (non_finite_out) *non_finite_out += non_finite;
  }
  return chosen;
}

int64_t shared_indices(std::vector<int64_t> a, std::vector<int64_t> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  int64_t shared = 0;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] < b[j])
      i++;
    else if (b[j] < a[i])
      j++;
    else
      shared++, i++, j++;
  }
  return shared;
}

std::vector<int64_t> negatives_in_prefixes(const std::vector<ImportanceSpan>& values, const std::vector<int64_t>& ranking,
                                           const std::vector<int64_t>& prefixes) {
  std::vector<int64_t> starts;  // global index of each span's first value
  int64_t total = 0;
  for (const ImportanceSpan& span : values) {
    starts.push_back(total);
    total += span.size;
  }
  auto value_at = [&](int64_t index) {
    const size_t s = static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), index) - starts.begin()) - 1;
    return values[s].values[index - starts[s]];
  };
  std::vector<int64_t> counts;
  int64_t counted = 0, negatives = 0;
  for (int64_t n : prefixes) {
    if (n < counted || n > static_cast<int64_t>(ranking.size()))
      throw RunnerError(ErrorCode::internal, "negatives_in_prefixes: prefixes must ascend within the ranking");
    for (; counted < n; counted++) negatives += value_at(ranking[static_cast<size_t>(counted)]) < 0;
    counts.push_back(negatives);
  }
  return counts;
}

std::vector<int64_t> draw_random(int64_t candidates, int64_t n, uint64_t seed) {
  if (n > candidates)
    throw RunnerError(ErrorCode::bad_job, "the random control asks for " + std::to_string(n) + " parameters but there are only " +
                                              std::to_string(candidates) + " candidates");
  std::mt19937_64 generator(seed);
  // uniform in [0, candidates) by rejection (std::uniform_int_distribution differs between
  // standard libraries; this does not)
  const uint64_t range = static_cast<uint64_t>(candidates);
  const uint64_t limit = range == 0 ? 0 : std::mt19937_64::max() - (std::mt19937_64::max() % range + 1) % range;
  std::vector<bool> taken(static_cast<size_t>(candidates), false);
  std::vector<int64_t> drawn;
  drawn.reserve(static_cast<size_t>(n));
  while (static_cast<int64_t>(drawn.size()) < n) {
    uint64_t r = generator();
    if (r > limit) continue;
    uint64_t index = r % range;
    if (taken[index]) continue;
    taken[index] = true;
    drawn.push_back(static_cast<int64_t>(index));
  }
  return drawn;
}

std::vector<bool> first_half(int64_t items, uint64_t seed) {
  std::vector<bool> in_first(static_cast<size_t>(items), false);
  for (int64_t index : draw_random(items, items / 2, seed)) in_first[static_cast<size_t>(index)] = true;
  return in_first;
}

std::vector<std::vector<int64_t>> prefix_intersections(const std::vector<const std::vector<int64_t>*>& rankings, int64_t n) {
  std::vector<std::vector<int64_t>> sorted;
  for (const std::vector<int64_t>* ranking : rankings) {
    const int64_t take = std::min<int64_t>(n, static_cast<int64_t>(ranking->size()));
    sorted.emplace_back(ranking->begin(), ranking->begin() + take);
    std::sort(sorted.back().begin(), sorted.back().end());
  }
  const size_t m = sorted.size();
  std::vector<std::vector<int64_t>> shared(m, std::vector<int64_t>(m, 0));
  for (size_t i = 0; i < m; i++) {
    shared[i][i] = static_cast<int64_t>(sorted[i].size());
    for (size_t j = i + 1; j < m; j++) {
      std::vector<int64_t> both;
      std::set_intersection(sorted[i].begin(), sorted[i].end(), sorted[j].begin(), sorted[j].end(), std::back_inserter(both));
      shared[i][j] = shared[j][i] = static_cast<int64_t>(both.size());
    }
  }
  return shared;
}

std::string ranking_bytes(const std::vector<int64_t>& ranking) {
  std::string bytes(ranking.size() * 8, '\0');
  for (size_t i = 0; i < ranking.size(); i++) {
    uint64_t v = static_cast<uint64_t>(ranking[i]);
    for (int b = 0; b < 8; b++) bytes[i * 8 + b] = static_cast<char>((v >> (8 * b)) & 0xFF);
  }
  return bytes;
}

std::vector<int64_t> ranking_from_bytes(const std::string& bytes, const std::string& source) {
  if (bytes.size() % 8 != 0)
    throw RunnerError(ErrorCode::bad_job, source + ": " + std::to_string(bytes.size()) + " bytes is not a whole number of int64 indices");
  std::vector<int64_t> ranking(bytes.size() / 8);
  for (size_t i = 0; i < ranking.size(); i++) {
    uint64_t v = 0;
    for (int b = 0; b < 8; b++) v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i * 8 + b])) << (8 * b);
    ranking[i] = static_cast<int64_t>(v);
  }
  return ranking;
}

}  // namespace bprof
