#include "loss.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>

#include <algorithm>

namespace bprof {

namespace {

// log p(token j + 1 | tokens 0..j) of every real position, rows in order, j ascending: [T, 1]
at::Tensor next_token_logprobs(const LlamaModel& model, const std::vector<const std::vector<int64_t>*>& rows, at::Device device) {
  // the model reads each sequence without its last token; position j predicts token j + 1
  int64_t longest = 0;
  for (const auto* row : rows) longest = std::max(longest, static_cast<int64_t>(row->size()) - 1);
  const int64_t n_rows = static_cast<int64_t>(rows.size());
  at::Tensor inputs = at::zeros({n_rows, longest}, at::kLong);
  int64_t* in = inputs.data_ptr<int64_t>();
  std::vector<int64_t> positions, targets;
  for (int64_t r = 0; r < n_rows; r++) {
    const std::vector<int64_t>& seq = *rows[static_cast<size_t>(r)];
    for (size_t j = 0; j + 1 < seq.size(); j++) {
      in[r * longest + static_cast<int64_t>(j)] = seq[j];
      positions.push_back(r * longest + static_cast<int64_t>(j));
      targets.push_back(seq[j + 1]);
    }
  }
  const int64_t n = static_cast<int64_t>(targets.size());
  at::Tensor position_index = at::empty({n}, at::kLong), target_index = at::empty({n}, at::kLong);
  std::copy(positions.begin(), positions.end(), position_index.data_ptr<int64_t>());
  std::copy(targets.begin(), targets.end(), target_index.data_ptr<int64_t>());

  at::Tensor hidden = model.hidden_states(inputs.to(device));  // [B, L, H]
  hidden = hidden.reshape({n_rows * longest, hidden.size(-1)}).index_select(0, position_index.to(device));
  at::Tensor logprobs = model.logits(hidden).to(at::kFloat).log_softmax(-1);  // [T, V]
  return logprobs.gather(1, target_index.to(device).unsqueeze(1));
}

}  // namespace

at::Tensor mean_next_token_loss(const LlamaModel& model, const std::vector<const std::vector<int64_t>*>& rows, at::Device device) {
  return -next_token_logprobs(model, rows, device).mean();
}

at::Tensor weighted_next_token_loss(const LlamaModel& model, const std::vector<const std::vector<int64_t>*>& rows,
                                    const std::vector<int64_t>& prompt_lengths, double prompt_weight, at::Device device) {
  std::vector<float> weights;
  for (size_t r = 0; r < rows.size(); r++)
    for (size_t j = 1; j < rows[r]->size(); j++)  // the prediction of token j, as next_token_logprobs orders them
      weights.push_back(static_cast<int64_t>(j) < prompt_lengths[r] ? static_cast<float>(prompt_weight) : 1.0f);
  at::Tensor w = at::empty({static_cast<int64_t>(weights.size())}, at::kFloat);
  std::copy(weights.begin(), weights.end(), w.data_ptr<float>());
  w = w.to(device).unsqueeze(1);
  return -(next_token_logprobs(model, rows, device) * w).sum() / w.sum();
}

}  // namespace bprof
