// Greedy generation for generate_until benchmarks (lm-eval's greedy decoding): argmax of the
// float32 logits at every step, ties to the lowest token id, until a stop sequence or max_tokens.
#include <ATen/TensorOperators.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>

#include "engine_impl.h"
#include "errors.h"

namespace bprof {

namespace {

bool ends_with(const std::vector<int64_t>& tokens, const std::vector<int64_t>& suffix) {
  return !suffix.empty() && tokens.size() >= suffix.size() && std::equal(suffix.rbegin(), suffix.rend(), tokens.rbegin());
}

bool ends_with_stop(const std::vector<int64_t>& tokens, const GenerateSpec& spec) {
  for (const auto& stop : spec.stop)
    if (ends_with(tokens, stop)) return true;
  return false;
}

// The next token of every row: argmax of its logits in float32, on the host.
std::vector<int64_t> greedy_tokens(const LlamaModel& model, const at::Tensor& hidden) {
  at::Tensor next = model.logits(hidden).to(at::kFloat).argmax(-1).to(at::kCPU).contiguous();
  return std::vector<int64_t>(next.data_ptr<int64_t>(), next.data_ptr<int64_t>() + next.numel());
}

}  // namespace

std::vector<Generation> Engine::generate(const std::vector<const Item*>& items) {
  c10::InferenceMode guard;
  std::vector<Generation> out(items.size());
  if (items.empty()) return out;
  const LlamaModel& model = *impl_->model;
  const at::Device device = impl_->device;

  // the contexts, once: their keys and values, and the first token from each last position
  std::vector<std::vector<int64_t>> contexts;
  std::vector<int64_t> lengths, last_positions;
  for (size_t i = 0; i < items.size(); i++) {
    contexts.push_back(items[i]->context);
    lengths.push_back(static_cast<int64_t>(items[i]->context.size()));
  }
  KVCache context_cache;
  at::Tensor tokens = padded_tokens(contexts, device);
  const int64_t padded = tokens.size(1);
  for (size_t i = 0; i < items.size(); i++) last_positions.push_back(static_cast<int64_t>(i) * padded + lengths[i] - 1);
  at::Tensor hidden = model.hidden_states(tokens, &context_cache);
  hidden = hidden.reshape({-1, hidden.size(-1)}).index_select(0, long_tensor(last_positions, device));
  std::vector<int64_t> next = greedy_tokens(model, hidden);

  // then one token a step for the rows still going; `active[r]` is the item of batch row r
  std::vector<size_t> active(items.size());
  for (size_t i = 0; i < items.size(); i++) active[i] = i;
  KVCache own;  // the active rows' generated tokens
  at::Tensor cache_rows = at::arange(static_cast<int64_t>(items.size()), at::TensorOptions().dtype(at::kLong).device(device));
  at::Tensor context_lengths = long_tensor(lengths, device);
  while (true) {
    std::vector<int64_t> keep;  // batch rows that go on
    for (size_t r = 0; r < active.size(); r++) {
      Generation& g = out[active[r]];
      const GenerateSpec& spec = items[active[r]]->generate;
      g.tokens.push_back(next[r]);
      g.stopped = ends_with_stop(g.tokens, spec);
      if (!g.stopped && static_cast<int64_t>(g.tokens.size()) < spec.max_tokens) keep.push_back(static_cast<int64_t>(r));
    }
    if (keep.empty()) break;
    // a batch of long generations can take minutes: a signal must not wait for its end
    if (impl_->cancelled && impl_->cancelled())
      throw RunnerError(ErrorCode::cancelled, "cancelled while generating (no result of this batch kept)");
    if (keep.size() < active.size()) {  // drop finished rows from every per-row tensor
      at::Tensor index = long_tensor(keep, device);
      for (size_t l = 0; l < own.keys.size(); l++) {
        if (!own.keys[l].defined()) continue;
        own.keys[l] = own.keys[l].index_select(0, index);
        own.values[l] = own.values[l].index_select(0, index);
      }
      cache_rows = cache_rows.index_select(0, index);
      context_lengths = context_lengths.index_select(0, index);
      std::vector<size_t> still;
      std::vector<int64_t> still_next;
      for (int64_t r : keep) {
        still.push_back(active[static_cast<size_t>(r)]);
        still_next.push_back(next[static_cast<size_t>(r)]);
      }
      active = std::move(still);
      next = std::move(still_next);
    }
    at::Tensor step = long_tensor(next, device).view({static_cast<int64_t>(next.size()), 1});
    at::Tensor h = model.continuation_hidden_states(step, context_cache, cache_rows, context_lengths, &own);  // [R, 1, H]
    next = greedy_tokens(model, h.select(1, 0));
  }
  return out;
}

}  // namespace bprof
