#include "loss.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>

#include <algorithm>

namespace bprof {

at::Tensor mean_next_token_loss(const LlamaModel& model, const std::vector<const std::vector<int64_t>*>& rows,
                                at::Device device) {
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
  return -logprobs.gather(1, target_index.to(device).unsqueeze(1)).mean();
}

}  // namespace bprof
