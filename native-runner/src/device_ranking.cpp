// The radix select of ranking.cpp in tensor operations: order keys as the low 32 bits of int64
// tensors, two histogram passes (bincount) for the n-th key, a third pass that gathers the keys
// below it and the first ties by index, then one stable sort by key. Each pass goes tensor by
// tensor: the keys of one tensor at a time, never of all 5.6 billion candidates at once.
#include "device_ranking.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/bincount.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/nonzero.h>
#include <ATen/ops/sort.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <string>
#include <tuple>

#include "errors.h"

namespace bprof {

namespace {

constexpr int64_t kSignBit = 0x80000000LL;
constexpr int64_t kLow32 = 0xFFFFFFFFLL;
constexpr int64_t kInfinityBits = 0x7F800000LL;

// ranking.cpp's order_key of every value, as int64 holding the uint32 key (smaller ranks first):
// non-finite values and -0.0 key as +0.0; with `largest_first` the keys are complemented.
at::Tensor order_keys(const at::Tensor& values, RankKey key, bool largest_first, at::Tensor* non_finite = nullptr) {
  at::Tensor bits = values.contiguous().view({-1}).view(at::kInt).to(at::kLong).bitwise_and(kLow32);
  if (key == RankKey::magnitude) bits = bits.bitwise_and(kSignBit - 1);
  const at::Tensor magnitude = bits.bitwise_and(kSignBit - 1);
  const at::Tensor not_finite = magnitude.ge(kInfinityBits);
  if (non_finite) *non_finite = not_finite.sum();
  at::Tensor keys = at::where(bits.bitwise_and(kSignBit).ne(0), bits.bitwise_xor(kLow32), bits.bitwise_or(kSignBit));
  keys.masked_fill_(not_finite.logical_or(magnitude.eq(0)), kSignBit);
  if (largest_first) keys = keys.bitwise_xor(kLow32);
  return keys;
}

// The histogram of 16-bit buckets, summed over the tensors, on the host.
std::vector<int64_t> host_histogram(const at::Tensor& counts) {
  const at::Tensor host = counts.to(at::kCPU).contiguous();
  return std::vector<int64_t>(host.data_ptr<int64_t>(), host.data_ptr<int64_t>() + host.numel());
}

// The first bucket at which the running count (from `below`) reaches n; `below` then counts the
// entries of the buckets before it.
int64_t bucket_of_nth(const std::vector<int64_t>& histogram, int64_t n, int64_t& below) {
  int64_t bucket = 0;
  while (below + histogram[static_cast<size_t>(bucket)] < n) below += histogram[static_cast<size_t>(bucket++)];
  return bucket;
}

}  // namespace

RankingResult rank_tensors(const std::vector<at::Tensor>& values, RankKey key, bool largest_first, int64_t n,
                           const std::vector<int64_t>& prefixes) {
  int64_t total = 0;
  for (const at::Tensor& v : values) total += v.numel();
  if (n > total)
    throw RunnerError(ErrorCode::bad_job, "the ablation asks for " + std::to_string(n) + " parameters but there are only " +
                                              std::to_string(total) + " candidates (MLP weights of the included layers)");
  RankingResult result;
  if (n <= 0) {
    result.negatives.assign(prefixes.size(), 0);
    return result;
  }
  const at::TensorOptions counts = at::TensorOptions().dtype(at::kLong).device(values.front().device());

  // the 16 high bits of the n-th key, then its 16 low bits
  at::Tensor high_counts = at::zeros({1 << 16}, counts);
  for (const at::Tensor& v : values) high_counts += at::bincount(order_keys(v, key, largest_first).bitwise_right_shift(16), {}, 1 << 16);
  int64_t below = 0;
  const int64_t high_bucket = bucket_of_nth(host_histogram(high_counts), n, below);
  at::Tensor low_counts = at::zeros({1 << 16}, counts);
  for (const at::Tensor& v : values) {
    const at::Tensor keys = order_keys(v, key, largest_first);
    low_counts += at::bincount(keys.masked_select(keys.bitwise_right_shift(16).eq(high_bucket)).bitwise_and(0xFFFF), {}, 1 << 16);
  }
  const int64_t threshold = (high_bucket << 16) | bucket_of_nth(host_histogram(low_counts), n, below);

  // keys below the threshold all belong; of those equal to it, the first (n - below) by index
  int64_t ties_left = n - below;
  std::vector<at::Tensor> keys_chosen, indices_chosen, values_chosen;
  at::Tensor non_finite = at::zeros({}, counts);
  int64_t offset = 0;
  for (const at::Tensor& v : values) {
    at::Tensor found;
    const at::Tensor keys = order_keys(v, key, largest_first, &found);
    non_finite += found;
    at::Tensor local = at::nonzero(keys.lt(threshold)).view({-1});
    if (ties_left > 0) {
      at::Tensor tied = at::nonzero(keys.eq(threshold)).view({-1});
      tied = tied.narrow(0, 0, std::min(ties_left, tied.numel()));
      ties_left -= tied.numel();
      local = at::cat({local, tied});
    }
    keys_chosen.push_back(keys.index_select(0, local));
    values_chosen.push_back(v.contiguous().view({-1}).index_select(0, local));
    indices_chosen.push_back(local + offset);
    offset += v.numel();
  }
  // by key; ties in the order gathered, which is the global index's
  const at::Tensor order = std::get<1>(at::sort(at::cat(keys_chosen), /*stable=*/true, 0, false));
  const at::Tensor ranking = at::cat(indices_chosen).index_select(0, order).to(at::kCPU).contiguous();
  result.ranking.assign(ranking.data_ptr<int64_t>(), ranking.data_ptr<int64_t>() + ranking.numel());
  result.non_finite = non_finite.item<int64_t>();

  // negatives_in_prefixes: the running count of values below 0 along the ranking
  const at::Tensor negatives = at::cat(values_chosen).index_select(0, order).lt(0).to(at::kLong).cumsum(0).to(at::kCPU).contiguous();
  int64_t previous = 0;
  for (int64_t p : prefixes) {
    if (p < previous || p > static_cast<int64_t>(result.ranking.size()))
      throw RunnerError(ErrorCode::internal, "rank_tensors: prefixes must ascend within the ranking");
    result.negatives.push_back(p == 0 ? 0 : negatives.data_ptr<int64_t>()[p - 1]);
    previous = p;
  }
  return result;
}

}  // namespace bprof
