// Training a Llama-family decoder from scratch (the `train` subcommand, PROTOCOL.md): Hugging Face's
// initialization from a seeded generator, seeded batches, next-token cross-entropy, AdamW written
// out with ATen operations, linear warmup then cosine decay, global-norm gradient clipping.
//
// This header stays torch-free (at::Tensor is only forward-declared) so that cmd_train.cpp compiles
// without libtorch headers and cmd_info.cpp needs only ATen/Context.h; train.cpp is where libtorch
// lives.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config.h"
#include "safetensors_writer.h"

namespace at {
class Tensor;
}

namespace bprof {

// ----------------------------------------------------------------------------
// the tensors of a Llama checkpoint (torch-free)

// (TensorRole: config.h, with the families' layer table.)

struct TensorSpec {
  std::string name;  // Hugging Face name
  std::vector<int64_t> shape;
  TensorRole role;
  int64_t numel() const;
};

// Every tensor the config calls for (biases and q/k norms as its switches say), with Hugging Face
// names and shapes, in the order of the model's state_dict. lm_head.weight is left out when the embeddings are tied (Hugging
// Face saves the shared tensor once, under the embedding's name).
std::vector<TensorSpec> llama_tensor_specs(const ModelConfig& config);

struct ParameterCount {
  int64_t total = 0;  // every parameter once (tied embeddings once)
  int64_t mlp = 0;    // mlp.gate_proj/up_proj/down_proj weights of every layer (no biases)
};
ParameterCount count_parameters(const ModelConfig& config);

// ----------------------------------------------------------------------------
// the job

struct TrainOptions {
  int64_t steps = 0;         // optimizer steps; 0 writes the initialized model
  int64_t batch_size = 1;    // sequences per step
  double lr = 0;             // peak learning rate
  double min_lr = 0;         // where the cosine ends
  int64_t warmup_steps = 0;  // <= steps
  double weight_decay = 0.01;
  double beta1 = 0.9, beta2 = 0.95;
  double eps = 1e-8;
  double grad_clip = 1.0;  // max global gradient norm; 0: no clipping
  uint64_t seed = 0;
  double prompt_weight = 1.0;  // in [0, 1]: the loss weight of a prompt token's prediction (TrainJob::prompt_lengths)
};

struct TrainJob {
  std::string config_text;  // the job's `config` object as given (JSON text)
  ModelConfig config;
  double initializer_range = 0.02;  // config.initializer_range, Hugging Face's default 0.02
  std::string device = "cpu";
  std::vector<std::vector<int64_t>> sequences;  // each >= 2 tokens, ids < vocab_size
  // Optional, one per sequence, each below its sequence's size: the predictions of tokens
  // 1 .. prompt_lengths[s] - 1 weigh train.prompt_weight in the loss, the rest 1.
  std::vector<int64_t> prompt_lengths;
  TrainOptions train;
};

// Parses and validates a `train` job (cmd_train.cpp); `source` names the file in messages.
// Throws RunnerError(bad_job) naming the field.
TrainJob parse_train_job(const std::string& text, const std::string& source);

// The learning rate of optimizer step t (1-based; t = 0 is the start of the warmup):
// lr * t / warmup_steps while t <= warmup_steps, then
// min_lr + (lr - min_lr) * (1 + cos(pi * (t - warmup_steps) / (steps - warmup_steps))) / 2,
// so the warmup ends at lr and step `steps` runs at min_lr.
double cosine_lr(const TrainOptions& options, int64_t t);

// ----------------------------------------------------------------------------
// training (libtorch inside)

struct TrainCallbacks {
  std::function<void(int64_t step, int64_t total, double loss)> step_done;  // after each step
  std::function<bool()> cancelled;                                          // polled before each step
};

struct TrainResult {
  std::vector<double> losses;             // per step: the batch loss the step's gradients came from
  std::vector<SafetensorsEntry> tensors;  // F32, Hugging Face names (llama_tensor_specs)
};

// Initializes a model as Hugging Face's LlamaForCausalLM does (normal(0, initializer_range) for
// embeddings and projection weights, zeros for biases, ones for norms; one seeded generator for all
// of it, in state_dict order) and trains it. Deterministic on CPU for a given job and thread count.
// Throws RunnerError: cancelled; bad_job when the loss stops being finite.
TrainResult train_llama(const TrainJob& job, const TrainCallbacks& callbacks);

struct AdamWOptions {
  double beta1 = 0.9, beta2 = 0.95;
  double eps = 1e-8;
  double weight_decay = 0.01;
};

// AdamW as torch.optim.AdamW computes it (decoupled weight decay, bias-corrected moments):
//   p *= 1 - lr * weight_decay               (only where decay[i])
//   m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
//   p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
class AdamW {
 public:
  AdamW(const std::vector<at::Tensor>& params, const std::vector<bool>& decay, const AdamWOptions& options);
  ~AdamW();
  AdamW(const AdamW&) = delete;
  AdamW& operator=(const AdamW&) = delete;

  // One update from the parameters' .grad() (a parameter without one is left alone), t += 1.
  void step(double lr);
  // Drops the gradients (the next backward pass starts from none).
  void zero_grad();
  int64_t steps_taken() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// torch.nn.utils.clip_grad_norm_: with N the L2 norm of all gradients together, every gradient is
// scaled by min(1, max_norm / (N + 1e-6)). Returns N.
double clip_grad_norm(const std::vector<at::Tensor>& params, double max_norm);

}  // namespace bprof
