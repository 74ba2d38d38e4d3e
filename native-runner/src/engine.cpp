// Scoring on top of LlamaModel, device/dtype checks, and the libtorch facts the CLI needs.
#include "engine.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/zeros.h>
#include <c10/core/InferenceMode.h>
#include <torch/version.h>

#include <algorithm>
#include <new>

#include "cpus.h"
#include "engine_impl.h"
#include "llama.h"

namespace bprof {

// ----------------------------------------------------------------------------
// device and dtype

namespace {

at::ScalarType parse_dtype(const std::string& dtype) {
  if (dtype == "float32") return at::kFloat;
  if (dtype == "bfloat16") return at::kBFloat16;
  if (dtype == "float16") return at::kHalf;
  throw RunnerError(ErrorCode::bad_job, "model.dtype '" + dtype + "' is not one of float32, bfloat16, float16");
}

at::Device parse_device(const std::string& device) {
  at::Device parsed = at::kCPU;
  try {
    parsed = at::Device(device);
  } catch (const c10::Error&) {
    throw RunnerError(ErrorCode::bad_job, "device '" + device + "' is not a device name (expected cpu, cuda or cuda:N)");
  }
  if (parsed.is_cpu()) return parsed;
  if (!parsed.is_cuda()) throw RunnerError(ErrorCode::bad_job, "device '" + device + "' is not supported (expected cpu, cuda or cuda:N)");
  if (!at::hasCUDA())
    throw RunnerError(ErrorCode::resources,
                      "device '" + device + "' is unavailable: no CUDA device visible to libtorch " + libtorch_version());
  int64_t index = parsed.has_index() ? parsed.index() : 0;
  if (index >= static_cast<int64_t>(at::getNumGPUs()))
    throw RunnerError(ErrorCode::resources,
                      "device '" + device + "' is unavailable: " + std::to_string(at::getNumGPUs()) + " CUDA device(s) visible");
  return parsed;
}

// Not every libtorch runs every dtype on every device (libtorch 1.13 has no float16 matmul on
// CPU). Trying the forward pass's operations on a tiny tensor turns that into a clear bad_job
// before gigabytes of weights are converted.
void check_dtype_runs(at::ScalarType dtype, at::Device device, const std::string& dtype_name, const std::string& device_name) {
  try {
    c10::InferenceMode guard;
    auto options = at::TensorOptions().dtype(dtype).device(device);
    at::Tensor x = at::ones({2, 4}, options);
    at::Tensor w = at::ones({3, 4}, options);
    at::Tensor y = at::silu(at::linear(x, w)).matmul(w);
    y.softmax(-1, at::kFloat).log_softmax(-1).sum().item<double>();
  } catch (const c10::Error& e) {
    throw RunnerError(ErrorCode::bad_job, "model.dtype '" + dtype_name + "' is not supported on device '" + device_name + "' by libtorch " +
                                              libtorch_version() + ": " + e.what_without_backtrace());
  }
}

}  // namespace

// ----------------------------------------------------------------------------
// engine

namespace {

std::unique_ptr<LlamaModel> load_model(const ModelConfig& config, const EngineOptions& options, at::Device device, at::ScalarType dtype) {
  Checkpoint checkpoint(options.model_dir);
  LoadOptions load;
  load.dtype = dtype;
  load.device = device;
  load.progress = options.load_progress;
  load.cancelled = options.cancelled;
  load.warning = options.warning;
  load.shapes_only = options.shapes_only;
  // the checkpoint (and its memory maps) goes away when this returns: the weights are copies
  return std::make_unique<LlamaModel>(config, load_llama_weights(config, checkpoint, load));
}

}  // namespace

void check_compute_target(const std::string& device, const std::string& dtype) {
  check_dtype_runs(parse_dtype(dtype), parse_device(device), dtype, device);
}

Engine::Engine(const ModelConfig& config, const EngineOptions& options) {
  check_compute_target(options.device, options.dtype);
  at::ScalarType dtype = parse_dtype(options.dtype);
  at::Device device = parse_device(options.device);
  impl_ = std::make_unique<Impl>();
  impl_->model = load_model(config, options, device, dtype);
  impl_->device = device;
  impl_->cancelled = options.cancelled;
}

Engine::~Engine() = default;

// Rows of hidden state per lm_head block: 1024 x a 128k vocabulary is 512 MB of float32.
constexpr int64_t kLogitRowsPerBlock = 1024;

at::Tensor long_tensor(const std::vector<int64_t>& values, at::Device device) {
  at::Tensor t = at::empty({static_cast<int64_t>(values.size())}, at::TensorOptions().dtype(at::kLong));
  std::copy(values.begin(), values.end(), t.data_ptr<int64_t>());
  return t.to(device);
}

at::Tensor padded_tokens(const std::vector<std::vector<int64_t>>& rows, at::Device device) {
  int64_t longest = 0;
  for (const auto& row : rows) longest = std::max(longest, static_cast<int64_t>(row.size()));
  at::Tensor tokens = at::zeros({static_cast<int64_t>(rows.size()), longest}, at::kLong);
  auto tok = tokens.accessor<int64_t, 2>();
  for (size_t r = 0; r < rows.size(); r++)
    for (size_t j = 0; j < rows[r].size(); j++) tok[static_cast<int64_t>(r)][static_cast<int64_t>(j)] = rows[r][j];
  return tokens.to(device);
}

namespace {

// Scores of target tokens read off rows of hidden state: target p is token targets[p] predicted
// by row rows[p] of `hidden` ([N, H]); rows must be non-decreasing (a row may predict several
// targets: the first token of every choice of an item comes from the same context position).
// log_softmax in float32 over the vocabulary, a block of rows at a time, so that long
// continuations with a large vocabulary never hold all [N, V] float32 logits at once.
struct TargetScores {
  std::vector<float> logprob;
  std::vector<uint8_t> greedy;  // the target is the argmax of its row
};

TargetScores score_targets(const LlamaModel& model, const at::Tensor& hidden, const std::vector<int64_t>& rows,
                           const std::vector<int64_t>& targets, at::Device device) {
  const int64_t n_rows = hidden.size(0), n_targets = static_cast<int64_t>(targets.size());
  TargetScores out;
  out.logprob.resize(static_cast<size_t>(n_targets));
  out.greedy.resize(static_cast<size_t>(n_targets));
  int64_t first = 0;  // first target of the current block
  for (int64_t start = 0; start < n_rows && first < n_targets; start += kLogitRowsPerBlock) {
    const int64_t n = std::min(kLogitRowsPerBlock, n_rows - start);
    int64_t last = first;
    while (last < n_targets && rows[static_cast<size_t>(last)] < start + n) last++;
    if (last == first) continue;
    std::vector<int64_t> local(rows.begin() + first, rows.begin() + last);
    for (int64_t& r : local) r -= start;
    std::vector<int64_t> block_targets(targets.begin() + first, targets.begin() + last);
    at::Tensor row_index = long_tensor(local, device), target = long_tensor(block_targets, device);

    at::Tensor logprobs = model.logits(hidden.narrow(0, start, n)).to(at::kFloat).log_softmax(-1);  // [n, V]
    const int64_t vocab = logprobs.size(1);
    at::Tensor target_lp = logprobs.reshape({-1}).index_select(0, row_index * vocab + target).to(at::kCPU).contiguous();
    at::Tensor is_greedy = logprobs.argmax(-1).index_select(0, row_index).eq(target).to(at::kCPU).contiguous();
    std::copy_n(target_lp.data_ptr<float>(), last - first, out.logprob.begin() + first);
    std::copy_n(is_greedy.data_ptr<bool>(), last - first, out.greedy.begin() + first);
    first = last;
  }
  return out;
}

// Where the scores of one choice are among the targets: its first token, then the others in order.
struct ChoiceTargets {
  size_t item, choice;
  int64_t first;         // index of the first token's target
  int64_t rest, n_rest;  // the choice's tokens 1..m-1: targets rest .. rest + n_rest - 1
};

// Sums per choice in double: float32 per token as the rule says, no extra rounding in the sum.
std::vector<ItemScores> collect(const std::vector<const Item*>& items, const std::vector<ChoiceTargets>& choices,
                                const TargetScores& scores) {
  std::vector<ItemScores> out(items.size());
  for (size_t i = 0; i < items.size(); i++) out[i].resize(items[i]->choices.size());
  for (const ChoiceTargets& c : choices) {
    ChoiceScore& s = out[c.item][c.choice];
    s.tokens = 1 + c.n_rest;
    s.logprob = scores.logprob[static_cast<size_t>(c.first)];
    s.greedy = scores.greedy[static_cast<size_t>(c.first)] != 0;
    for (int64_t k = c.rest; k < c.rest + c.n_rest; k++) {
      s.logprob += scores.logprob[static_cast<size_t>(k)];
      s.greedy = s.greedy && scores.greedy[static_cast<size_t>(k)];
    }
  }
  return out;
}

}  // namespace

std::vector<ItemScores> Engine::score(const std::vector<const Item*>& items) {
  // Inference tensors skip autograd bookkeeping. The weights themselves were created outside this
  // mode on purpose: later phases take gradients with respect to them.
  c10::InferenceMode guard;
  if (items.empty()) return {};
  const LlamaModel& model = *impl_->model;
  const at::Device device = impl_->device;

  // 1. One packed row per item: the context once (branch 0, positions 0 .. Lc - 1), then every
  // choice of two or more tokens without its last token, side by side (branch c + 1, positions
  // Lc .. Lc + m - 2), each attending to the context and to its own earlier tokens only
  // (LlamaModel::tree_hidden_states). The context's last position predicts the first token of
  // every choice; token j of a choice's branch predicts choice token j + 1. One forward pass over
  // all of it: every weight matrix multiplies every token of the batch at once, and the context's
  // keys and values are never copied per choice.
  const int64_t n_items = static_cast<int64_t>(items.size());
  std::vector<int64_t> branch_start;  // per choice, in item order: where its branch starts in the row
  int64_t longest = 0;
  for (size_t i = 0; i < items.size(); i++) {
    int64_t length = static_cast<int64_t>(items[i]->context.size());
    for (const auto& choice : items[i]->choices) {
      branch_start.push_back(length);
      length += static_cast<int64_t>(choice.size()) - 1;
    }
    longest = std::max(longest, length);  // = packed_length(*items[i]) (job.h), what plan_batches budgets
  }
  at::Tensor tokens = at::zeros({n_items, longest}, at::kLong);  // padding: token 0, branch -1
  at::Tensor positions = at::empty({n_items, longest}, at::kLong);
  at::Tensor branches = at::full({n_items, longest}, -1, at::kLong);
  {
    int64_t* tok = tokens.data_ptr<int64_t>();
    int64_t* pos = positions.data_ptr<int64_t>();
    int64_t* br = branches.data_ptr<int64_t>();
    size_t next_choice = 0;
    for (size_t i = 0; i < items.size(); i++) {
      const int64_t row = static_cast<int64_t>(i) * longest, context_len = static_cast<int64_t>(items[i]->context.size());
      for (int64_t j = 0; j < longest; j++) pos[row + j] = j;  // padding positions: anything after the context
      for (int64_t j = 0; j < context_len; j++) {
        tok[row + j] = items[i]->context[static_cast<size_t>(j)];
        br[row + j] = 0;
      }
      for (size_t c = 0; c < items[i]->choices.size(); c++) {
        const std::vector<int64_t>& choice = items[i]->choices[c];
        const int64_t start = branch_start[next_choice++];
        for (size_t j = 0; j + 1 < choice.size(); j++) {
          tok[row + start + static_cast<int64_t>(j)] = choice[j];
          pos[row + start + static_cast<int64_t>(j)] = context_len + static_cast<int64_t>(j);
          br[row + start + static_cast<int64_t>(j)] = static_cast<int64_t>(c) + 1;
        }
      }
    }
  }

  // 2. Targets in row order: the first tokens per item (one shared row each), then the choices'
  // other tokens, read off the rows of hidden state that predict them.
  std::vector<int64_t> gather, rows, targets;
  std::vector<ChoiceTargets> choices;
  for (size_t i = 0; i < items.size(); i++) {
    gather.push_back(static_cast<int64_t>(i) * longest + static_cast<int64_t>(items[i]->context.size()) - 1);
    for (size_t c = 0; c < items[i]->choices.size(); c++) {
      choices.push_back({i, c, static_cast<int64_t>(targets.size()), 0, 0});
      rows.push_back(static_cast<int64_t>(i));
      targets.push_back(items[i]->choices[c][0]);
    }
  }
  for (size_t n = 0; n < choices.size(); n++) {
    ChoiceTargets& c = choices[n];
    const std::vector<int64_t>& choice = items[c.item]->choices[c.choice];
    c.rest = static_cast<int64_t>(targets.size());
    c.n_rest = static_cast<int64_t>(choice.size()) - 1;
    for (size_t j = 1; j < choice.size(); j++) {
      rows.push_back(static_cast<int64_t>(gather.size()));
      gather.push_back(static_cast<int64_t>(c.item) * longest + branch_start[n] + static_cast<int64_t>(j) - 1);
      targets.push_back(choice[j]);
    }
  }

  at::Tensor hidden = model.tree_hidden_states(tokens.to(device), positions.to(device), branches.to(device));  // [B, L, H]
  hidden = hidden.reshape({-1, hidden.size(-1)}).index_select(0, long_tensor(gather, device));                 // [B + T, H]
  return collect(items, choices, score_targets(model, hidden, rows, targets, device));
}

std::vector<ItemScores> Engine::score_full_sequences(const std::vector<const Item*>& items, bool every_position) {
  c10::InferenceMode guard;
  if (items.empty()) return {};
  const LlamaModel& model = *impl_->model;
  const at::Device device = impl_->device;

  // One row per (item, choice): the model reads context ++ choice without its last token. Rows
  // are right-padded with token 0; causal attention keeps padding from touching earlier positions.
  std::vector<std::vector<int64_t>> sequences;
  std::vector<ChoiceTargets> choices;
  for (size_t i = 0; i < items.size(); i++) {
    for (size_t c = 0; c < items[i]->choices.size(); c++) {
      std::vector<int64_t> seq = items[i]->context;
      seq.insert(seq.end(), items[i]->choices[c].begin(), items[i]->choices[c].end() - 1);
      sequences.push_back(std::move(seq));
      choices.push_back({i, c, 0, 0, 0});
    }
  }
  at::Tensor tokens = padded_tokens(sequences, device);
  const int64_t longest = tokens.size(1);

  // Continuation token j of a row is predicted at position context_len - 1 + j. Only those rows
  // of hidden state go through lm_head: with a 128k vocabulary that is most of the memory saved.
  std::vector<int64_t> positions, targets;
  for (size_t r = 0; r < choices.size(); r++) {
    const Item& item = *items[choices[r].item];
    const std::vector<int64_t>& choice = item.choices[choices[r].choice];
    const int64_t context_len = static_cast<int64_t>(item.context.size());
    choices[r].first = static_cast<int64_t>(targets.size());
    choices[r].rest = choices[r].first + 1;
    choices[r].n_rest = static_cast<int64_t>(choice.size()) - 1;
    for (size_t j = 0; j < choice.size(); j++) {
      positions.push_back(static_cast<int64_t>(r) * longest + context_len - 1 + static_cast<int64_t>(j));
      targets.push_back(choice[j]);
    }
  }
  at::Tensor hidden = model.hidden_states(tokens);  // [R, L, H]
  if (every_position) {
    // lm-eval: log_softmax(model(inputs).logits) over [R, L, V], then the continuation's rows;
    // greedy: the argmax of each of those rows equals its target
    at::Tensor logprobs = model.logits(hidden).to(at::kFloat).log_softmax(-1);                             // [R, L, V]
    logprobs = logprobs.reshape({-1, logprobs.size(-1)}).index_select(0, long_tensor(positions, device));  // [T, V]
    at::Tensor target = long_tensor(targets, device);
    at::Tensor target_lp = logprobs.gather(1, target.unsqueeze(1)).squeeze(1).to(at::kCPU).contiguous();
    at::Tensor is_greedy = logprobs.argmax(-1).eq(target).to(at::kCPU).contiguous();
    TargetScores scores;
    scores.logprob.assign(target_lp.data_ptr<float>(), target_lp.data_ptr<float>() + target_lp.numel());
    scores.greedy.assign(is_greedy.data_ptr<bool>(), is_greedy.data_ptr<bool>() + is_greedy.numel());
    return collect(items, choices, scores);
  }
  hidden = hidden.reshape({-1, hidden.size(-1)}).index_select(0, long_tensor(positions, device));  // [T, H]
  std::vector<int64_t> rows(targets.size());
  for (size_t t = 0; t < rows.size(); t++) rows[t] = static_cast<int64_t>(t);
  return collect(items, choices, score_targets(model, hidden, rows, targets, device));
}

// ----------------------------------------------------------------------------
// process-wide facts

int set_compute_threads(int threads) {
  // Not libtorch's default, which depends on its build (Debian's libtorch 1.13 starts with 1 thread)
  // and counts cores this process may not use: the cores of its affinity under its cgroup's quota.
  const int n = threads > 0 ? threads : usable_cores();
  at::set_num_threads(n);
  set_ranking_threads(n);
  // The inter-op pool can be sized once, before its first task; a second call (tests) keeps it.
  static bool interop_set = false;
  if (!interop_set) {
    interop_set = true;
    try {
      at::set_num_interop_threads(n);
    } catch (const c10::Error&) {
    }
  }
  return at::get_num_threads();
}

std::string libtorch_version() { return TORCH_VERSION; }

int64_t cuda_device_count() { return at::hasCUDA() ? static_cast<int64_t>(at::getNumGPUs()) : 0; }

RunnerError classify_exception(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const RunnerError& e) {
    return e;
  } catch (const c10::OutOfMemoryError& e) {
    return RunnerError(ErrorCode::resources, std::string("out of memory: ") + e.what_without_backtrace());
  } catch (const c10::Error& e) {
    // CPU allocation failures come as a plain c10::Error ("DefaultCPUAllocator: not enough memory"),
    // and so do CUDA runtime failures; both are the machine, not the input or our code.
    std::string msg = e.what_without_backtrace();
    bool memory = msg.find("out of memory") != std::string::npos || msg.find("not enough memory") != std::string::npos;
    bool cuda = msg.find("CUDA error") != std::string::npos || msg.find("CUDA driver") != std::string::npos;
    if (memory || cuda) return RunnerError(ErrorCode::resources, msg);
    return RunnerError(ErrorCode::internal, "libtorch error: " + msg);
  } catch (const std::bad_alloc&) {
    return RunnerError(ErrorCode::resources, "out of memory (std::bad_alloc)");
  } catch (const std::exception& e) {
    return RunnerError(ErrorCode::internal, std::string("unexpected error: ") + e.what());
  } catch (...) {
    return RunnerError(ErrorCode::internal, "unexpected error of unknown type");
  }
}

}  // namespace bprof
