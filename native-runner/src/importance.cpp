// Parameter importance per ability (METHOD.md, phase 2), `method: paper`:
//
//     I_j = | theta_j * SUM over batches B of dL(B)/dtheta_j |
//
// with L(B) the mean next-token cross-entropy over the real tokens of batch B. No optimizer step is
// taken; gradients exist only for the candidates (MLP weights) and are summed in float32, whatever
// the compute dtype, so a bf16 model does not lose small contributions in the sum.
#include <ATen/TensorOperators.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <cstring>
#include <numeric>

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

// Turns requires_grad on for the candidates while alive, and off again however the scope is left,
// so the weights are plain tensors for scoring and in-place ablation.
class GradientsFor {
 public:
  explicit GradientsFor(std::vector<at::Tensor> weights) : weights_(std::move(weights)) {
    for (at::Tensor& w : weights_) w.set_requires_grad(true);
  }
  ~GradientsFor() {
    for (at::Tensor& w : weights_) {
      w.mutable_grad().reset();
      w.set_requires_grad(false);
    }
  }
  const std::vector<at::Tensor>& weights() const { return weights_; }

 private:
  std::vector<at::Tensor> weights_;
};

}  // namespace

std::vector<std::vector<float>> Engine::importance(const std::vector<std::vector<int64_t>>& sequences, int64_t batch_size,
                                                   const std::vector<CandidateTensor>& candidates,
                                                   const std::function<void(int64_t done, int64_t total)>& progress,
                                                   const std::function<bool()>& cancelled) {
  std::vector<at::Tensor> weights;
  for (const CandidateTensor& c : candidates) weights.push_back(impl_->candidate_tensor(c));
  GradientsFor grads(weights);
  std::vector<at::Tensor> sums;
  for (const at::Tensor& w : weights) sums.push_back(at::zeros(w.sizes(), w.options().dtype(at::kFloat)));

  const auto batches = length_batches(sequences, batch_size);
  const int64_t total = static_cast<int64_t>(batches.size());
  if (progress) progress(0, total);
  for (int64_t b = 0; b < total; b++) {
    if (cancelled && cancelled())
      throw RunnerError(ErrorCode::cancelled, "cancelled after " + std::to_string(b) + " of " + std::to_string(total) +
                                                  " importance batches");
    std::vector<const std::vector<int64_t>*> rows;
    for (size_t s : batches[static_cast<size_t>(b)]) rows.push_back(&sequences[s]);
    mean_next_token_loss(*impl_->model, rows, impl_->device).backward();
    for (size_t i = 0; i < weights.size(); i++) {
      at::Tensor& grad = weights[i].mutable_grad();
      if (!grad.defined()) continue;  // a candidate the loss does not reach contributes 0
      sums[i].add_(grad.to(at::kFloat));
      grad.reset();  // the next batch's gradient starts from nothing; only the float32 sum accumulates
    }
    if (progress) progress(b + 1, total);
  }

  // I = |theta * sum|, on the host as the ranking wants it
  std::vector<std::vector<float>> out;
  for (size_t i = 0; i < weights.size(); i++) {
    at::Tensor importance = (weights[i].detach().to(at::kFloat) * sums[i]).abs().to(at::kCPU).contiguous();
    out.emplace_back(importance.numel());
    std::memcpy(out.back().data(), importance.data_ptr<float>(), out.back().size() * sizeof(float));
  }
  return out;
}

}  // namespace bprof
