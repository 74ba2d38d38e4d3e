// The torch-free face of the compute side. The CLI, the job logic and most tests talk to this
// header only; engine.cpp and llama.cpp are where libtorch lives. This keeps the number of
// translation units that parse libtorch headers (the bulk of the build time) small.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config.h"
#include "errors.h"
#include "job.h"
#include "ranking.h"

namespace bprof {

class LlamaModel;  // llama.h, for code that includes libtorch (tests look at the weights)

struct EngineOptions {
  std::string model_dir;
  std::string dtype = "float32";  // float32 | bfloat16 | float16
  std::string device = "cpu";     // cpu | cuda | cuda:N
  std::function<void(int64_t done, int64_t total)> load_progress;
  std::function<bool()> cancelled;
  std::function<void(const std::string&)> warning;
  // Reads the checkpoint's headers, not its weights (LoadOptions::shapes_only): an engine that
  // answers parameter_count and candidates, and nothing else.
  bool shapes_only = false;
};

struct ChoiceScore {
  double logprob = 0;   // sum over the continuation of log_softmax (float32) at the target token
  int64_t tokens = 0;   // continuation length
  bool greedy = false;  // every target token is the argmax of its row
};
using ItemScores = std::vector<ChoiceScore>;

struct Generation {
  std::vector<int64_t> tokens;  // greedy continuation, the matched stop sequence included
  bool stopped = false;         // ended on a stop sequence (else: max_tokens reached)
};

// Where an importance pass spent its time (bench): the forward and backward passes up to the last
// gradient sum (the device waited for), and r = -theta * g computed and brought to the host.
struct ImportanceTimes {
  double passes_seconds = 0;
  double rise_seconds = 0;
};

// One ranking of an importance pass's r asked of Engine::rank_first_order_loss_rise: a candidate
// set's tensors (positions in the pass's candidate list, in the set's order, its global index
// running over them), ranked by `key`, top (`largest_first`) or bottom, its first n; and at
// `prefixes`, how many of those hold a negative r (negatives_in_prefixes).
struct RankingRequest {
  std::vector<size_t> tensors;
  RankKey key = RankKey::value;
  bool largest_first = true;
  int64_t n = 0;
  std::vector<int64_t> prefixes;
};

struct RankingResult {
  std::vector<int64_t> ranking;    // rank_top's or rank_bottom's, exactly
  std::vector<int64_t> negatives;  // one per prefix
  int64_t non_finite = 0;          // values ranked as 0 (non-finite)
};

class Engine {
 public:
  // Checks device and dtype, loads the checkpoint. Throws RunnerError: bad_job (unsupported device
  // or dtype), resources (device unavailable), bad_model, bad_safetensors, cancelled.
  Engine(const ModelConfig& config, const EngineOptions& options);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Scores every choice of every item (lm-eval's loglikelihood rule, PROTOCOL.md). Token ids must
  // already be checked against the vocabulary. Each item is one row: its context once, then its
  // choices side by side, each attending to the context and to itself only
  // (LlamaModel::tree_hidden_states), so the context is computed once for all its choices, as with
  // a KV cache, and every weight multiplies all the batch's tokens at once. lm_head runs only on
  // the positions whose log-probabilities are read.
  std::vector<ItemScores> score(const std::vector<const Item*>& items);
  // The same scores the straightforward way: one padded row of context ++ choice per choice, no
  // shared context. Slower; kept as the reference `score` is tested and benchmarked against.
  // `every_position`: as lm-eval's Hugging Face backend does it, logits and log_softmax over the
  // whole vocabulary at every position of the padded batch, the scored positions read off after;
  // otherwise lm_head runs on the scored positions only.
  std::vector<ItemScores> score_full_sequences(const std::vector<const Item*>& items, bool every_position = false);

  // Greedy decoding of generation items (Item::generate; generate.cpp): the contexts run once as a
  // batch, then every row advances one token a step, attending to its cached context and its own
  // cached tokens; a row leaves the batch when it ends with a stop sequence or has max_tokens.
  std::vector<Generation> generate(const std::vector<const Item*>& items);

  // Every parameter of the model counted once (tied embeddings once): the P of n = floor(k * P).
  int64_t parameter_count() const;

  // The ablation candidates (docs/method.md, step 2): gate, up and down projection weights of layers
  // front_removal .. L - back_removal - 1, in layer order; with `attention`, the attention
  // projections' weights of those layers too, each layer's in its table order (q, k, v, o, then the
  // MLP's). Throws RunnerError(bad_job) when the removals leave no layer.
  std::vector<CandidateTensor> candidates(int64_t front_removal, int64_t back_removal, bool attention = false) const;

  // r = -theta * g for the candidates, with g the sum over batches of dL(batch)/dtheta: how much
  // zeroing each weight raises the summed loss, to first order; in float32 on the host
  // (importance.cpp). The paper's importance is |r|, `signed` ranks r itself. Sequences are
  // sorted by length (stable) and cut into batches of `batch_size`; L is the mean next-token
  // cross-entropy over the batch's real tokens. `progress` sees batches done; `cancelled` is polled
  // between batches (RunnerError(cancelled)). With `in_part` (one flag per sequence) and
  // `part_rise`, the same pass also gives r restricted to the flagged sequences' contributions
  // (their rows of the same batches), so r minus it is the other sequences' share; the whole r is
  // computed exactly as without it.
  std::vector<std::vector<float>> first_order_loss_rise(const std::vector<std::vector<int64_t>>& sequences, int64_t batch_size,
                                                        const std::vector<CandidateTensor>& candidates,
                                                        const std::function<void(int64_t done, int64_t total)>& progress,
                                                        const std::function<bool()>& cancelled, const std::vector<bool>& in_part = {},
                                                        std::vector<std::vector<float>>* part_rise = nullptr,
                                                        ImportanceTimes* times = nullptr);

  // The same pass with r kept where the model is and ranked there (device_ranking.h): each
  // request's ranking and negatives as rank_top / rank_bottom and negatives_in_prefixes give them
  // from first_order_loss_rise's values; only the rankings come to the host. For a GPU, where r's
  // copy to the host and its ranking there cost more than the pass.
  std::vector<RankingResult> rank_first_order_loss_rise(const std::vector<std::vector<int64_t>>& sequences, int64_t batch_size,
                                                        const std::vector<CandidateTensor>& candidates,
                                                        const std::function<void(int64_t done, int64_t total)>& progress,
                                                        const std::function<bool()>& cancelled,
                                                        const std::vector<RankingRequest>& requests);
  // Whether the model computes on a GPU (where rank_first_order_loss_rise pays).
  bool on_gpu() const;

  // Sets the candidates at the given global indices to exactly 0, saving their values first, and
  // puts the saved values back (ablation.cpp). One ablation at a time: restore before the next.
  void ablate(const std::vector<CandidateTensor>& candidates, const int64_t* indices, int64_t n);
  void restore();

  // The weights as they are now (ablated or not) as the bytes of a model.safetensors, in the compute
  // dtype: what the original pipeline writes per variant, for `bench` to reproduce it.
  std::string checkpoint_bytes() const;

  const LlamaModel& model() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Checks that `device` exists and that libtorch can run `dtype` on it, without loading anything:
// the CLI calls it before reading the model so that a missing GPU fails in milliseconds.
// Throws RunnerError: bad_job (unknown device or dtype, dtype not runnable), resources (no such GPU).
void check_compute_target(const std::string& device, const std::string& dtype);

// Process-wide libtorch settings and facts, here so that main needs no torch header.
// Sizes libtorch's intra-op and inter-op pools; threads <= 0: the cores this process may use
// (usable_cores(), cpus.h). Returns the intra-op threads in use.
int set_compute_threads(int threads);
std::string libtorch_version();
int64_t cuda_device_count();  // 0 when libtorch was built without CUDA or sees no device

// Maps any exception to an error code and message: RunnerError as it is, out-of-memory (c10 or
// std::bad_alloc) and CUDA failures to resources, everything else to internal.
RunnerError classify_exception(std::exception_ptr error);

}  // namespace bprof
