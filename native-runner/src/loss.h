// The language-modelling loss shared by importance (docs/method.md, step 2) and training. Includes
// libtorch (ATen/core/Tensor.h only).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "llama.h"

namespace bprof {

// Mean next-token cross-entropy, in float32, over the real tokens of one right-padded batch: a
// sequence of m tokens contributes m - 1 predictions, padding none (Hugging Face's loss with
// labels = inputs and padding labelled -100). Each row needs at least 2 tokens.
at::Tensor mean_next_token_loss(const LlamaModel& model, const std::vector<const std::vector<int64_t>*>& rows, at::Device device);

// Training's variant: the prediction of token j of row r weighs prompt_weight while
// j < prompt_lengths[r], 1 from there on, and the loss is sum(w * CE) / sum(w). A model can so
// learn mostly from the answers of items whose passages are random names (scripts/demo-train.ts).
// Each prompt length is below its row's size, so every row has a prediction of weight 1.
at::Tensor weighted_next_token_loss(const LlamaModel& model, const std::vector<const std::vector<int64_t>*>& rows,
                                    const std::vector<int64_t>& prompt_lengths, double prompt_weight, at::Device device);

}  // namespace bprof
