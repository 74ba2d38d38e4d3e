// What an Engine holds, for the translation units that implement its parts (engine.cpp: loading
// and scoring; importance.cpp: gradients; ablation.cpp: in-place ablation). Includes libtorch.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine.h"
#include "llama.h"

namespace bprof {

// An importance pass's float32 gradient sums g, one per candidate, beside the candidates' weights
// (on the model's device); `part`: the sums over the flagged sequences' rows alone, where asked.
struct GradientSums {
  std::vector<at::Tensor> weights, sums, part;
};

// Values an ablation overwrote, to be written back bit for bit.
struct SavedValues {
  at::Tensor weight;   // aliases the model's weight
  at::Tensor indices;  // flat indices into it (int64, on its device)
  at::Tensor values;   // what was there
};

struct Engine::Impl {
  std::unique_ptr<LlamaModel> model;
  at::Device device = at::kCPU;
  std::vector<SavedValues> saved;   // non-empty while an ablation is in place
  std::function<bool()> cancelled;  // EngineOptions::cancelled, polled inside long batches

  // The model's tensor behind each candidate, by name.
  at::Tensor candidate_tensor(const CandidateTensor& candidate) const;
  // Every parameter with its Hugging Face name, in state_dict order; a tied lm_head appears once,
  // as the embedding (ablation.cpp).
  std::vector<std::pair<std::string, at::Tensor>> named_parameters() const;
  // The importance pass's forward and backward passes (importance.cpp): the sums of
  // Engine::first_order_loss_rise before r is made of them.
  GradientSums gradient_sums(const std::vector<std::vector<int64_t>>& sequences, int64_t batch_size,
                             const std::vector<CandidateTensor>& candidates,
                             const std::function<void(int64_t done, int64_t total)>& progress, const std::function<bool()>& cancelled,
                             const std::vector<bool>& in_part, bool parted);
};

// int64 tensors from token lists (engine.cpp): one row, and rows right-padded with token 0 to the
// longest, [rows, longest].
at::Tensor long_tensor(const std::vector<int64_t>& values, at::Device device);
at::Tensor padded_tokens(const std::vector<std::vector<int64_t>>& rows, at::Device device);

}  // namespace bprof
