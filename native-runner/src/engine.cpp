// Scoring on top of LlamaModel, device/dtype checks, and the libtorch facts the CLI needs.
#include "engine.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/zeros.h>
#include <c10/core/InferenceMode.h>
#include <torch/version.h>

#include <algorithm>
#include <new>

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
    throw RunnerError(ErrorCode::resources, "device '" + device + "' is unavailable: no CUDA device visible to libtorch " +
                                                libtorch_version());
  int64_t index = parsed.has_index() ? parsed.index() : 0;
  if (index >= static_cast<int64_t>(at::getNumGPUs()))
    throw RunnerError(ErrorCode::resources, "device '" + device + "' is unavailable: " + std::to_string(at::getNumGPUs()) +
                                                " CUDA device(s) visible");
  return parsed;
}

// Not every libtorch runs every dtype on every device (libtorch 1.13 has no float16 matmul on
// CPU). Trying the forward pass's operations on a tiny tensor turns that into a clear bad_job
// before gigabytes of weights are converted.
void check_dtype_runs(at::ScalarType dtype, at::Device device, const std::string& dtype_name,
                      const std::string& device_name) {
  try {
    c10::InferenceMode guard;
    auto options = at::TensorOptions().dtype(dtype).device(device);
    at::Tensor x = at::ones({2, 4}, options);
    at::Tensor w = at::ones({3, 4}, options);
    at::Tensor y = at::silu(at::linear(x, w)).matmul(w);
    y.softmax(-1, at::kFloat).log_softmax(-1).sum().item<double>();
  } catch (const c10::Error& e) {
    throw RunnerError(ErrorCode::bad_job, "model.dtype '" + dtype_name + "' is not supported on device '" + device_name +
                                              "' by libtorch " + libtorch_version() + ": " + e.what_without_backtrace());
  }
}

}  // namespace

// ----------------------------------------------------------------------------
// engine

namespace {

std::unique_ptr<LlamaModel> load_model(const ModelConfig& config, const EngineOptions& options, at::Device device,
                                       at::ScalarType dtype) {
  Checkpoint checkpoint(options.model_dir);
  LoadOptions load;
  load.dtype = dtype;
  load.device = device;
  load.progress = options.load_progress;
  load.cancelled = options.cancelled;
  load.warning = options.warning;
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
}

Engine::~Engine() = default;

// Rows of hidden state per lm_head block: 1024 x a 128k vocabulary is 512 MB of float32.
constexpr int64_t kLogitRowsPerBlock = 1024;

std::vector<ItemScores> Engine::score(const std::vector<const Item*>& items) {
  // Inference tensors skip autograd bookkeeping. The weights themselves were created outside this
  // mode on purpose: later phases take gradients with respect to them.
  c10::InferenceMode guard;
  if (items.empty()) return {};

  // One row per (item, choice): the model reads context ++ choice without its last token. Rows
  // are right-padded with token 0; causal attention keeps padding from touching earlier positions.
  struct Row {
    size_t item, choice;
    int64_t context_len, choice_len;
  };
  std::vector<Row> rows;
  int64_t longest = 0;
  for (size_t i = 0; i < items.size(); i++) {
    for (size_t c = 0; c < items[i]->choices.size(); c++) {
      rows.push_back({i, c, static_cast<int64_t>(items[i]->context.size()),
                      static_cast<int64_t>(items[i]->choices[c].size())});
      longest = std::max(longest, input_length(*items[i], c));
    }
  }
  const int64_t n_rows = static_cast<int64_t>(rows.size());

  at::Tensor tokens = at::zeros({n_rows, longest}, at::kLong);
  auto tok = tokens.accessor<int64_t, 2>();
  // Continuation token j of a row is predicted at position context_len - 1 + j. Only those rows
  // of hidden state go through lm_head: with a 128k vocabulary that is most of the memory saved.
  std::vector<int64_t> positions, targets;
  for (int64_t r = 0; r < n_rows; r++) {
    const Item& item = *items[rows[r].item];
    const std::vector<int64_t>& choice = item.choices[rows[r].choice];
    int64_t p = 0;
    for (int64_t t : item.context) tok[r][p++] = t;
    for (size_t j = 0; j + 1 < choice.size(); j++) tok[r][p++] = choice[j];
    for (int64_t j = 0; j < rows[r].choice_len; j++) {
      positions.push_back(r * longest + rows[r].context_len - 1 + j);
      targets.push_back(choice[j]);
    }
  }
  const int64_t n_targets = static_cast<int64_t>(targets.size());
  auto long_opts = at::TensorOptions().dtype(at::kLong);
  at::Tensor position_index = at::empty({n_targets}, long_opts);
  at::Tensor target_index = at::empty({n_targets}, long_opts);
  std::copy(positions.begin(), positions.end(), position_index.data_ptr<int64_t>());
  std::copy(targets.begin(), targets.end(), target_index.data_ptr<int64_t>());
  position_index = position_index.to(impl_->device);
  target_index = target_index.to(impl_->device);

  const LlamaModel& model = *impl_->model;
  at::Tensor hidden = model.hidden_states(tokens.to(impl_->device));  // [R, L, H]
  hidden = hidden.reshape({n_rows * longest, hidden.size(-1)}).index_select(0, position_index);  // [T, H]

  // log_softmax in float32 over the vocabulary, a block of rows at a time so that long
  // continuations with a large vocabulary never hold all [T, V] float32 logits at once
  std::vector<float> lp(static_cast<size_t>(n_targets));
  std::vector<uint8_t> greedy(static_cast<size_t>(n_targets));
  for (int64_t start = 0; start < n_targets; start += kLogitRowsPerBlock) {
    const int64_t n = std::min(kLogitRowsPerBlock, n_targets - start);
    at::Tensor target = target_index.narrow(0, start, n);
    at::Tensor logprobs = model.logits(hidden.narrow(0, start, n)).to(at::kFloat).log_softmax(-1);  // [n, V]
    at::Tensor target_lp = logprobs.gather(1, target.unsqueeze(1)).squeeze(1).to(at::kCPU).contiguous();
    at::Tensor is_greedy = logprobs.argmax(-1).eq(target).to(at::kCPU).contiguous();
    std::copy_n(target_lp.data_ptr<float>(), n, lp.begin() + start);
    std::copy_n(is_greedy.data_ptr<bool>(), n, greedy.begin() + start);
  }

  // Sum per choice in double: float32 per token as the rule says, no extra rounding in the sum.
  std::vector<ItemScores> out(items.size());
  for (size_t i = 0; i < items.size(); i++) out[i].resize(items[i]->choices.size());
  int64_t k = 0;
  for (const Row& row : rows) {
    ChoiceScore& s = out[row.item][row.choice];
    s.tokens = row.choice_len;
    s.greedy = true;
    for (int64_t j = 0; j < row.choice_len; j++, k++) {
      s.logprob += lp[k];
      s.greedy = s.greedy && greedy[k];
    }
  }
  return out;
}

// ----------------------------------------------------------------------------
// process-wide facts

int set_compute_threads(int threads) {
  if (threads > 0) at::set_num_threads(threads);
  return at::get_num_threads();
}

std::string libtorch_version() { return TORCH_VERSION; }

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
