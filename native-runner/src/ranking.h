// Which parameters a variant zeroes (docs/method.md, step 3). Torch-free: importances arrive as plain
// float arrays, one per candidate tensor, and rankings leave as global candidate indices.
//
// Candidates are numbered by one global index: the candidate tensors in order, each flattened
// row-major. A ranking lists N indices best first; the variant at k takes its first floor(k * P)
// entries, so the selections of a k sweep are nested by construction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bprof {

struct CandidateTensor {
  std::string name;  // Hugging Face name, e.g. model.layers.3.mlp.up_proj.weight
  int64_t numel = 0;
  int64_t offset = 0;  // global index of its first element
};

// One candidate tensor's importance values (CPU, float32), in the order of the candidates.
struct ImportanceSpan {
  const float* values = nullptr;
  int64_t size = 0;
};

// n = floor(k * parameters) for k as the user wrote it in decimal: 0.00016 * 1e6 is 160, although
// the double nearest to 0.00016 times 1e6 is 159.99999999999997.
int64_t parameters_for_k(double k, int64_t parameters);

// The threads a ranking may use (at least 1; the default): the runner gives it its own thread count.
// A ranking is the same whatever the count.
void set_ranking_threads(int threads);

// What a ranking compares: `magnitude`, |value| (the paper's importance of a signed first-order
// term); `value`, the value itself, which may be negative (`signed`).
enum class RankKey { magnitude, value };

// Ranking by importance. `top`: largest first; `bottom`: smallest first; ties go to the smaller
// global index in both. Non-finite values (a diverged loss) rank as 0; `non_finite` counts them.
// Throws RunnerError(bad_job) when n exceeds the number of candidates.
std::vector<int64_t> rank_top(const std::vector<ImportanceSpan>& importance, int64_t n, RankKey key = RankKey::value,
                              int64_t* non_finite = nullptr);
std::vector<int64_t> rank_bottom(const std::vector<ImportanceSpan>& importance, int64_t n, RankKey key = RankKey::value,
                                 int64_t* non_finite = nullptr);

// The selection of the authors' released code (extract_region.py, docs/method.md step 3): the
// candidates' importance vector, in global index order, is cut into consecutive chunks of
// `released_chunk_size` values (the last one shorter), and each chunk contributes its
// max(1, ceil(f * length)) largest values, f = n / candidates. The set is spread along the vector
// and slightly larger than n; it is not nested across k, since the chunk size depends on n.
// Within a chunk, ties go to the smaller index (torch.topk leaves them unspecified). Returned in
// chunk order, each chunk's best first. n = 0 selects nothing (the released code would still take
// one weight per chunk). Throws RunnerError(bad_job) when n exceeds the candidates.
constexpr int64_t kReleasedMinChunk = 1000000;
int64_t released_chunk_size(int64_t candidates, int64_t n);
std::vector<int64_t> rank_top_chunked(const std::vector<ImportanceSpan>& importance, int64_t n, RankKey key = RankKey::value,
                                      int64_t* non_finite = nullptr);

// |A n B| of two index lists, each without repeats, in any order.
int64_t shared_indices(std::vector<int64_t> a, std::vector<int64_t> b);

// For each n of `prefixes` (each at most the ranking's length), how many of the ranking's first n
// candidates hold a negative value: with the values of Engine::first_order_loss_rise, the weights
// whose zeroing lowers the ability's loss to first order.
std::vector<int64_t> negatives_in_prefixes(const std::vector<ImportanceSpan>& values, const std::vector<int64_t>& ranking,
                                           const std::vector<int64_t>& prefixes);

// n distinct indices of [0, candidates), uniformly drawn in order by std::mt19937_64(seed), the same
// on every platform. Its prefixes are uniform draws too, so one list serves the whole sweep.
std::vector<int64_t> draw_random(int64_t candidates, int64_t n, uint64_t seed);

// The seeded split of an ability's items for the ranking's stability (docs/method.md): true for
// the floor(items / 2) items of the first half, drawn as draw_random(items, items / 2, seed) draws.
std::vector<bool> first_half(int64_t items, uint64_t seed);

// |first n of a| intersected with |first n of b| for every pair: [i][j], symmetric, diagonal n.
std::vector<std::vector<int64_t>> prefix_intersections(const std::vector<const std::vector<int64_t>*>& rankings, int64_t n);

// Rankings on disk: little-endian int64, best first (PROTOCOL.md).
std::string ranking_bytes(const std::vector<int64_t>& ranking);
std::vector<int64_t> ranking_from_bytes(const std::string& bytes, const std::string& source);

}  // namespace bprof
