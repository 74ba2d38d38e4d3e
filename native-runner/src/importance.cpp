// Parameter importance per ability (METHOD.md, phase 2), `method: paper`:
//
//     I_j = | theta_j * SUM over batches B of dL(B)/dtheta_j |
//
// with L(B) the mean next-token cross-entropy over the real tokens of batch B. No optimizer step is
// taken; gradients exist only for the candidates (MLP weights) and are summed in float32, whatever
// the compute dtype, so a bf16 model does not lose small contributions in the sum.
#include <ATen/TensorOperators.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "engine_impl.h"
#include "errors.h"

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

// Mean next-token cross-entropy over the real tokens of one right-padded batch, in float32.
at::Tensor batch_loss(const LlamaModel& model, const std::vector<std::vector<int64_t>>& sequences,
                      const std::vector<size_t>& batch, at::Device device) {
  int64_t longest = 0;
  for (size_t s : batch) longest = std::max<int64_t>(longest, static_cast<int64_t>(sequences[s].size()));
  const int64_t rows = static_cast<int64_t>(batch.size());

  at::Tensor tokens = at::zeros({rows, longest}, at::kLong);
  auto tok = tokens.accessor<int64_t, 2>();
  std::vector<int64_t> positions, targets;  // position p of row r predicts token p + 1
  for (int64_t r = 0; r < rows; r++) {
    const std::vector<int64_t>& seq = sequences[batch[static_cast<size_t>(r)]];
    for (size_t p = 0; p < seq.size(); p++) tok[r][static_cast<int64_t>(p)] = seq[p];
    for (size_t p = 0; p + 1 < seq.size(); p++) {
      positions.push_back(r * longest + static_cast<int64_t>(p));
      targets.push_back(seq[p + 1]);
    }
  }
  auto to_tensor = [&](const std::vector<int64_t>& v) {
    at::Tensor t = at::empty({static_cast<int64_t>(v.size())}, at::TensorOptions().dtype(at::kLong));
    std::copy(v.begin(), v.end(), t.data_ptr<int64_t>());
    return t.to(device);
  };
  at::Tensor position_index = to_tensor(positions);
  at::Tensor target_index = to_tensor(targets);

  at::Tensor hidden = model.hidden_states(tokens.to(device));                      // [R, L, H]
  hidden = hidden.reshape({rows * longest, hidden.size(-1)}).index_select(0, position_index);  // [T, H]
  at::Tensor logprobs = model.logits(hidden).to(at::kFloat).log_softmax(-1);        // [T, V]
  return -logprobs.gather(1, target_index.unsqueeze(1)).mean();
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
    batch_loss(*impl_->model, sequences, batches[static_cast<size_t>(b)], impl_->device).backward();
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
