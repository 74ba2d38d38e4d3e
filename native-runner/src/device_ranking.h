// rank_top and rank_bottom (ranking.h) where r already is: over libtorch tensors, on a GPU or the
// CPU, with the same keys, the same ties (to the smaller global index) and the same non-finite rule,
// so that only the chosen indices leave the device. An 8B model's r is 22.5 GB: on an H200 its
// copy to the host took 16 s an ability and its ranking there 22 s, against 32 s for the paper's
// importance pass itself (docs/performance.md, "An 8B model").
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "engine.h"
#include "ranking.h"

namespace bprof {

// One ranking of `values` (float32 tensors, each flattened in order; the global index runs over
// them as over ImportanceSpans): rank_top's (`largest_first`) or rank_bottom's first n, and
// negatives_in_prefixes of it at `prefixes`. Throws RunnerError(bad_job) when n exceeds the values.
RankingResult rank_tensors(const std::vector<at::Tensor>& values, RankKey key, bool largest_first, int64_t n,
                           const std::vector<int64_t>& prefixes);

}  // namespace bprof
