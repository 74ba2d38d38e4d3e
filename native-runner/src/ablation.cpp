// The parameters of the model as the method sees them: counting, the MLP candidates, and in-place
// ablation (save the selected values, zero them, write them back bit for bit).
#include <ATen/TensorOperators.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>

#include "engine_impl.h"
#include "errors.h"
#include "safetensors_writer.h"

namespace bprof {

namespace {

std::string layer_prefix(size_t layer) { return "model.layers." + std::to_string(layer) + "."; }

// The candidate weight matrices of a layer, in candidate order (the table's, config.h
// layer_tensors): the MLP's, and with `attention` the attention projections' too.
std::vector<std::pair<std::string, at::Tensor>> candidate_weights(const std::vector<LayerTensor>& table, const LlamaLayer& layer,
                                                                  size_t index, bool attention) {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const LayerTensor& t : table)
    if (t.role == TensorRole::mlp_weight || (attention && t.role == TensorRole::attention))
      out.emplace_back(layer_prefix(index) + t.name, layer_slot(layer, t));
  return out;
}

}  // namespace

std::vector<std::pair<std::string, at::Tensor>> Engine::Impl::named_parameters() const {
  const LlamaWeights& w = model->weights();
  const std::vector<LayerTensor> table = layer_tensors(model->config());
  std::vector<std::pair<std::string, at::Tensor>> out;
  out.emplace_back("model.embed_tokens.weight", w.embed_tokens);
  for (size_t i = 0; i < w.layers.size(); i++)
    for (const LayerTensor& t : table) out.emplace_back(layer_prefix(i) + t.name, layer_slot(w.layers[i], t));
  out.emplace_back("model.norm.weight", w.norm);
  if (!w.lm_head.is_same(w.embed_tokens)) out.emplace_back("lm_head.weight", w.lm_head);  // tied: stored once, as HF does
  return out;
}

int64_t Engine::parameter_count() const {
  int64_t total = 0;
  for (const auto& named : impl_->named_parameters()) total += named.second.numel();
  return total;
}

std::vector<CandidateTensor> Engine::candidates(int64_t front_removal, int64_t back_removal, bool attention) const {
  const std::vector<LlamaLayer>& layers = impl_->model->weights().layers;
  const int64_t n_layers = static_cast<int64_t>(layers.size());
  if (front_removal + back_removal >= n_layers)
    throw RunnerError(ErrorCode::bad_job, "ablation.front_removal (" + std::to_string(front_removal) + ") + back_removal (" +
                                              std::to_string(back_removal) + ") leave none of the model's " + std::to_string(n_layers) +
                                              " layers as candidates");
  const std::vector<LayerTensor> table = layer_tensors(impl_->model->config());
  std::vector<CandidateTensor> out;
  int64_t offset = 0;
  for (int64_t i = front_removal; i < n_layers - back_removal; i++) {
    for (const auto& [name, tensor] : candidate_weights(table, layers[static_cast<size_t>(i)], static_cast<size_t>(i), attention)) {
      out.push_back({name, tensor.numel(), offset});
      offset += tensor.numel();
    }
  }
  return out;
}

at::Tensor Engine::Impl::candidate_tensor(const CandidateTensor& candidate) const {
  const std::vector<LlamaLayer>& layers = model->weights().layers;
  const std::vector<LayerTensor> table = layer_tensors(model->config());
  for (size_t i = 0; i < layers.size(); i++) {
    if (candidate.name.rfind(layer_prefix(i), 0) != 0) continue;
    for (const auto& [name, tensor] : candidate_weights(table, layers[i], i, true))
      if (name == candidate.name) return tensor;
  }
  throw RunnerError(ErrorCode::internal, "no model tensor is named " + candidate.name);
}

namespace {

// Each candidate tensor's share of the global indices, as flat indices within it on `device`
// (undefined where it has none): on the host one index at a time; on a GPU, where the top 1% of
// an 8B model's candidates is 57M indices, by one range test per tensor over all of them there.
std::vector<at::Tensor> local_indices(const std::vector<CandidateTensor>& candidates, const int64_t* indices, int64_t n,
                                      at::Device device) {
  std::vector<at::Tensor> out(candidates.size());
  if (device.is_cuda()) {
    const at::Tensor all = at::from_blob(const_cast<int64_t*>(indices), {n}, at::TensorOptions().dtype(at::kLong)).to(device);
    int64_t found = 0;
    for (size_t c = 0; c < candidates.size(); c++) {
      const int64_t begin = candidates[c].offset, end = begin + candidates[c].numel;
      const at::Tensor mine = all.masked_select(all.ge(begin).logical_and_(all.lt(end)));
      if (mine.numel() > 0) out[c] = mine - begin;
      found += mine.numel();
    }
    if (found != n) throw RunnerError(ErrorCode::internal, std::to_string(n - found) + " candidate indices are out of range");
    return out;
  }
  std::vector<std::vector<int64_t>> local(candidates.size());
  for (int64_t i = 0; i < n; i++) {
    const int64_t g = indices[i];
    auto after =
        std::upper_bound(candidates.begin(), candidates.end(), g, [](int64_t value, const CandidateTensor& c) { return value < c.offset; });
    if (after == candidates.begin() || g - (after - 1)->offset >= (after - 1)->numel || g < 0)
      throw RunnerError(ErrorCode::internal, "candidate index " + std::to_string(g) + " is out of range");
    const size_t c = static_cast<size_t>(after - 1 - candidates.begin());
    local[c].push_back(g - candidates[c].offset);
  }
  for (size_t c = 0; c < candidates.size(); c++) {
    if (local[c].empty()) continue;
    at::Tensor host = at::empty({static_cast<int64_t>(local[c].size())}, at::TensorOptions().dtype(at::kLong));
    std::copy(local[c].begin(), local[c].end(), host.data_ptr<int64_t>());
    out[c] = host.to(device);
  }
  return out;
}

}  // namespace

void Engine::ablate(const std::vector<CandidateTensor>& candidates, const int64_t* indices, int64_t n) {
  if (!impl_->saved.empty()) throw RunnerError(ErrorCode::internal, "ablate() called while another ablation is in place");
  c10::InferenceMode guard;
  const std::vector<at::Tensor> local = local_indices(candidates, indices, n, impl_->device);
  for (size_t c = 0; c < candidates.size(); c++) {
    if (!local[c].defined()) continue;
    SavedValues saved;
    saved.weight = impl_->candidate_tensor(candidates[c]).view({-1});  // contiguous: a view aliases it
    saved.indices = local[c];
    saved.values = saved.weight.index_select(0, saved.indices);
    saved.weight.index_fill_(0, saved.indices, 0);
    impl_->saved.push_back(std::move(saved));
  }
}

std::string Engine::checkpoint_bytes() const {
  std::vector<SafetensorsEntry> entries;
  for (const auto& [name, tensor] : impl_->named_parameters()) {
    at::Tensor host = tensor.detach().to(at::kCPU).contiguous();
    SafetensorsEntry entry;
    entry.name = name;
    entry.dtype = host.scalar_type() == at::kBFloat16 ? DType::BF16 : host.scalar_type() == at::kHalf ? DType::F16 : DType::F32;
    entry.shape = host.sizes().vec();
    entry.bytes.assign(static_cast<const char*>(host.data_ptr()), static_cast<size_t>(host.numel()) * host.element_size());
    entries.push_back(std::move(entry));
  }
  return serialize_safetensors(entries);
}

const LlamaModel& Engine::model() const { return *impl_->model; }

void Engine::restore() {
  c10::InferenceMode guard;
  for (SavedValues& s : impl_->saved) s.weight.index_copy_(0, s.indices, s.values);
  impl_->saved.clear();
}

}  // namespace bprof
