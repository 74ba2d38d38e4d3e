// Parameter importance per ability (docs/method.md, step 2). With g_j = SUM over batches B of
// dL(B)/dtheta_j, L(B) the mean next-token cross-entropy over the real tokens of batch B, this
// computes
//
//     r_j = -theta_j * g_j
//
// how much zeroing theta_j raises the summed loss, to first order. The importance of the paper is
// |r_j| (`method: paper`); `method: signed` ranks r_j itself (cmd_profile.cpp). The absolute value
// ranks a weight whose zeroing would lower the ability's loss as high as one whose zeroing would
// raise it, and in the demo model the two kinds are about equally common among the largest
// (media/demo/README.md); the sign is what tells them apart.
//
// No optimizer step is taken. The MLP candidates' gradients go straight from the backward pass
// into float32 sums through the model's gradient taps, whatever the compute dtype, so a bf16 model
// loses no small contributions and no MLP weight ever holds a .grad: the memory is the weights,
// the float32 sums and one batch of activations. Attention candidates (`candidates: "all"`) take
// the plain autograd path instead: a .grad per batch, added to their float32 sums.
#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/neg.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <numeric>

#include "device_ranking.h"
#include "engine_impl.h"
#include "errors.h"
#include "loss.h"

namespace bprof {

namespace {

// Sequence indices sorted by length (stable), cut into batches: similar lengths waste little
// padding, and the order is fixed by the job alone.
std::vector<std::vector<size_t>> length_batches(const std::vector<std::vector<int64_t>>& sequences, int64_t batch_size) {
  std::vector<size_t> order(sequences.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sequences[a].size() < sequences[b].size(); });
  std::vector<std::vector<size_t>> batches;
  for (size_t start = 0; start < order.size(); start += static_cast<size_t>(batch_size))
    batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(start),
                         order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), start + static_cast<size_t>(batch_size))));
  return batches;
}

// Turns requires_grad on for one small tensor while alive, and off again however the scope is
// left: enough for autograd to build the backward graph through the layers after it.
class GraphFrom {
 public:
  explicit GraphFrom(at::Tensor tensor) : tensor_(std::move(tensor)) { tensor_.set_requires_grad(true); }
  ~GraphFrom() {
    tensor_.mutable_grad().reset();
    tensor_.set_requires_grad(false);
  }
  void drop_gradient() { tensor_.mutable_grad().reset(); }
  // Adds the gradient the last backward left in the tensor's .grad to `sum` (float32), and drops it.
  void take_gradient(at::Tensor& sum) {
    if (tensor_.grad().defined()) sum.add_(tensor_.grad().to(at::kFloat));
    drop_gradient();
  }

 private:
  at::Tensor tensor_;
};

// Copies a float32 tensor's values to `host`: a CPU tensor's directly, a GPU tensor's through one
// pinned buffer of at most 256 MB, each block then spread over the threads.
void copy_to_host(const at::Tensor& flat, float* host) {
  const int64_t n = flat.numel();
  if (!flat.is_cuda()) {
    at::from_blob(host, {n}, at::TensorOptions().dtype(at::kFloat)).copy_(flat);
    return;
  }
  constexpr int64_t kBlock = int64_t{64} << 20;  // floats
  static thread_local at::Tensor pinned;
  if (!pinned.defined()) pinned = at::empty({kBlock}, at::TensorOptions().dtype(at::kFloat).pinned_memory(true));
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t size = std::min(kBlock, n - start);
    pinned.narrow(0, 0, size).copy_(flat.narrow(0, start, size));
    const float* from = pinned.data_ptr<float>();
    at::parallel_for(0, size, int64_t{1} << 20, [&](int64_t begin, int64_t end) {
      std::memcpy(host + start + begin, from + begin, static_cast<size_t>(end - begin) * sizeof(float));
    });
  }
}

// Clears the model's gradient taps however the scope is left.
class Taps {
 public:
  Taps(const LlamaModel& model, std::vector<MlpGradientSums>& sums) : model_(model) { model_.set_mlp_gradient_sums(&sums); }
  ~Taps() { model_.set_mlp_gradient_sums(nullptr); }

 private:
  const LlamaModel& model_;
};

}  // namespace

GradientSums Engine::Impl::gradient_sums(const std::vector<std::vector<int64_t>>& sequences, int64_t batch_size,
                                         const std::vector<CandidateTensor>& candidates,
                                         const std::function<void(int64_t done, int64_t total)>& progress,
                                         const std::function<bool()>& cancelled, const std::vector<bool>& in_part, bool parted) {
  if (parted && in_part.size() != sequences.size())
    throw RunnerError(ErrorCode::internal, "first_order_loss_rise: one part flag per sequence is needed");
  // one float32 sum per candidate, filled by the model's gradient taps during backward
  // (llama.h): the weights never get a .grad, so the sums are the only gradient memory
  const LlamaModel& model_ref = *model;
  const std::vector<LlamaLayer>& layers = model_ref.weights().layers;
  std::vector<MlpGradientSums> taps(layers.size());
  std::vector<at::Tensor> weights, sums, part_sums;
  size_t first_layer = layers.size();
  // Attention candidates (`candidates: "all"`) have no tap: autograd leaves their gradient in .grad
  // (in the model's dtype, one batch at a time) and it is added to their float32 sum after each
  // backward pass. Only asked-for runs pay that memory.
  std::vector<std::unique_ptr<GraphFrom>> graded;
  std::vector<size_t> graded_sum;
  for (const CandidateTensor& c : candidates) {
    at::Tensor w = candidate_tensor(c);
    at::Tensor sum = at::zeros(w.sizes(), w.options().dtype(at::kFloat));
    at::Tensor part = parted ? at::zeros(w.sizes(), w.options().dtype(at::kFloat)) : at::Tensor();
    bool tapped = false;
    for (size_t l = 0; l < layers.size(); l++) {
      // a dense MLP's weights, or (a mixture of experts) an expert's, each expert with its own taps
      auto tap_if_same = [&](MlpGradientSums& tap, const at::Tensor& gate_w, const at::Tensor& up_w, const at::Tensor& down_w) {
        const bool gate = w.is_same(gate_w), up = w.is_same(up_w), down = w.is_same(down_w);
        if (!gate && !up && !down) return;
        (gate ? tap.gate : up ? tap.up : tap.down) = sum;
        (gate ? tap.gate_part : up ? tap.up_part : tap.down_part) = part;
        first_layer = std::min(first_layer, l);
        tapped = true;
      };
      const LlamaLayer& layer = layers[l];
      tap_if_same(taps[l], layer.gate_proj, layer.up_proj, layer.down_proj);
      if (!layer.experts.empty()) taps[l].experts.resize(layer.experts.size());
      for (size_t e = 0; e < layer.experts.size(); e++)
        tap_if_same(taps[l].experts[e], layer.experts[e].gate_proj, layer.experts[e].up_proj, layer.experts[e].down_proj);
    }
    if (!tapped) {
      if (parted) throw RunnerError(ErrorCode::bad_job, "the ranking's stability is measured on MLP candidates only (" + c.name + ")");
      graded.push_back(std::make_unique<GraphFrom>(w));
      graded_sum.push_back(sums.size());
    }
    weights.push_back(w);
    sums.push_back(sum);
    part_sums.push_back(part);
  }
  Taps tapped(model_ref, taps);
  // (OLMo 2 has no input norm: its first norm is the q projection's)
  const LlamaLayer& first = layers.at(first_layer);
  GraphFrom graph(first.input_norm.defined() ? first.input_norm : first.q_norm);

  const auto batches = length_batches(sequences, batch_size);
  const int64_t total = static_cast<int64_t>(batches.size());
  if (progress) progress(0, total);
  for (int64_t b = 0; b < total; b++) {
    if (cancelled && cancelled())
      throw RunnerError(ErrorCode::cancelled,
                        "cancelled after " + std::to_string(b) + " of " + std::to_string(total) + " importance batches");
    std::vector<const std::vector<int64_t>*> rows;
    std::vector<int64_t> part_rows;  // positions in the batch of the part's sequences
    for (size_t s : batches[static_cast<size_t>(b)]) {
      if (parted && in_part[s]) part_rows.push_back(static_cast<int64_t>(rows.size()));
      rows.push_back(&sequences[s]);
    }
    if (parted) {
      const at::Tensor index = at::tensor(part_rows, at::TensorOptions().dtype(at::kLong)).to(device);
      for (MlpGradientSums& tap : taps) tap.part_rows = index;
    }
    mean_next_token_loss(model_ref, rows, device).backward();
    graph.drop_gradient();
    for (size_t i = 0; i < graded.size(); i++) graded[i]->take_gradient(sums[graded_sum[i]]);
    if (progress) progress(b + 1, total);
  }

  return {std::move(weights), std::move(sums), std::move(part_sums)};
}

std::vector<std::vector<float>> Engine::first_order_loss_rise(const std::vector<std::vector<int64_t>>& sequences, int64_t batch_size,
                                                              const std::vector<CandidateTensor>& candidates,
                                                              const std::function<void(int64_t done, int64_t total)>& progress,
                                                              const std::function<bool()>& cancelled, const std::vector<bool>& in_part,
                                                              std::vector<std::vector<float>>* part_rise, ImportanceTimes* times) {
  const auto started = std::chrono::steady_clock::now();
  const bool parted = part_rise != nullptr;
  const GradientSums pass = impl_->gradient_sums(sequences, batch_size, candidates, progress, cancelled, in_part, parted);
  const std::vector<at::Tensor>& weights = pass.weights;
  const std::vector<at::Tensor>& sums = pass.sums;
  const auto passes_done = [&] {
    if (!sums.empty()) (void)sums.back().sum().item<float>();  // waits for the device's queue
    return std::chrono::steady_clock::now();
  }();

  // r = -theta * sum, on the host as the ranking wants it: a float32 product (the weight promoted
  // inside the multiply, no float32 copy of it) brought to host memory. An 8B model's r is 22 GB:
  // the host arrays are filled in parallel, and from a GPU through a pinned buffer, since a copy to
  // pageable memory ran at 1.5 GB/s on an H200 (docs/performance.md, "An 8B model").
  auto rise_of = [&](const std::vector<at::Tensor>& gradient_sums) {
    std::vector<std::vector<float>> out(weights.size());
    at::parallel_for(0, static_cast<int64_t>(out.size()), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; i++)
        out[static_cast<size_t>(i)].resize(static_cast<size_t>(weights[static_cast<size_t>(i)].numel()));
    });
    for (size_t i = 0; i < weights.size(); i++) {
      const at::Tensor rise = at::mul(gradient_sums[i], weights[i].detach()).neg_().reshape({-1});
      copy_to_host(rise, out[i].data());
    }
    return out;
  };
  if (parted) *part_rise = rise_of(pass.part);
  std::vector<std::vector<float>> rise = rise_of(sums);
  if (times) {
    const auto now = std::chrono::steady_clock::now();
    times->passes_seconds = std::chrono::duration<double>(passes_done - started).count();
    times->rise_seconds = std::chrono::duration<double>(now - passes_done).count();
  }
  return rise;
}

std::vector<RankingResult> Engine::rank_first_order_loss_rise(const std::vector<std::vector<int64_t>>& sequences, int64_t batch_size,
                                                              const std::vector<CandidateTensor>& candidates,
                                                              const std::function<void(int64_t done, int64_t total)>& progress,
                                                              const std::function<bool()>& cancelled,
                                                              const std::vector<RankingRequest>& requests) {
  GradientSums pass = impl_->gradient_sums(sequences, batch_size, candidates, progress, cancelled, {}, false);
  // r = -theta * g in place of g: the sums are not needed again, and r takes no memory of its own
  for (size_t i = 0; i < pass.sums.size(); i++) pass.sums[i].mul_(pass.weights[i].detach()).neg_();
  std::vector<RankingResult> out;
  for (const RankingRequest& request : requests) {
    std::vector<at::Tensor> values;
    for (size_t t : request.tensors) values.push_back(pass.sums.at(t));
    out.push_back(rank_tensors(values, request.key, request.largest_first, request.n, request.prefixes));
  }
  return out;
}

bool Engine::on_gpu() const { return impl_->device.is_cuda(); }

}  // namespace bprof
