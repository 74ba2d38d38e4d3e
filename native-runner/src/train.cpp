// Training loop for `bprof-runner train` (train.h). Like llama.cpp, this includes ATen's core
// Tensor header and the individual operator headers it uses, never <torch/torch.h>.
#include "train.h"

#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>

#include "errors.h"
#include "llama.h"
#include "loss.h"

namespace bprof {

// ----------------------------------------------------------------------------
// tensors of a checkpoint

int64_t TensorSpec::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<TensorSpec> llama_tensor_specs(const ModelConfig& c) {
  const std::vector<LayerTensor> table = layer_tensors(c);
  std::vector<TensorSpec> specs;
  const std::vector<LayerTensor> outside = model_tensors(c);  // the embedding first, then the rest after the layers
  specs.push_back({outside.front().name, outside.front().shape, outside.front().role});
  for (int64_t i = 0; i < c.num_hidden_layers; i++) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    for (const LayerTensor& t : table) specs.push_back({p + t.name, t.shape, t.role});
  }
  for (size_t i = 1; i < outside.size(); i++) specs.push_back({outside[i].name, outside[i].shape, outside[i].role});
  return specs;
}

ParameterCount count_parameters(const ModelConfig& config) {
  ParameterCount count;
  for (const TensorSpec& spec : llama_tensor_specs(config)) {
    count.total += spec.numel();
    if (spec.role == TensorRole::mlp_weight) count.mlp += spec.numel();
  }
  return count;
}

// ----------------------------------------------------------------------------
// schedule

double cosine_lr(const TrainOptions& o, int64_t t) {
  if (o.warmup_steps > 0 && t <= o.warmup_steps)
    return o.lr * static_cast<double>(std::max<int64_t>(t, 0)) / static_cast<double>(o.warmup_steps);
  const int64_t decay_steps = o.steps - o.warmup_steps;
  if (decay_steps <= 0) return o.lr;
  double progress = static_cast<double>(t - o.warmup_steps) / static_cast<double>(decay_steps);
  progress = std::min(1.0, std::max(0.0, progress));
  constexpr double kPi = 3.14159265358979323846;
  return o.min_lr + (o.lr - o.min_lr) * 0.5 * (1.0 + std::cos(kPi * progress));
}

// ----------------------------------------------------------------------------
// optimizer

struct AdamW::State {
  std::vector<at::Tensor> params;
  std::vector<bool> decay;
  std::vector<at::Tensor> exp_avg, exp_avg_sq;  // undefined until a parameter's first gradient
  AdamWOptions options;
  int64_t t = 0;
};

AdamW::AdamW(const std::vector<at::Tensor>& params, const std::vector<bool>& decay, const AdamWOptions& options)
    : state_(std::make_unique<State>()) {
  if (decay.size() != params.size()) throw std::invalid_argument("AdamW: one decay flag per parameter");
  state_->params = params;
  state_->decay = decay;
  state_->exp_avg.resize(params.size());
  state_->exp_avg_sq.resize(params.size());
  state_->options = options;
}

AdamW::~AdamW() = default;

int64_t AdamW::steps_taken() const { return state_->t; }

void AdamW::step(double lr) {
  c10::NoGradGuard no_grad;
  State& s = *state_;
  const AdamWOptions& o = s.options;
  s.t++;
  const double bias_correction1 = 1.0 - std::pow(o.beta1, static_cast<double>(s.t));
  const double bias_correction2 = 1.0 - std::pow(o.beta2, static_cast<double>(s.t));
  const double step_size = lr / bias_correction1;
  const double bias_correction2_sqrt = std::sqrt(bias_correction2);
  for (size_t i = 0; i < s.params.size(); i++) {
    const at::Tensor& p = s.params[i];
    const at::Tensor& g = p.grad();
    if (!g.defined()) continue;
    if (!s.exp_avg[i].defined()) {
      s.exp_avg[i] = at::zeros_like(p);
      s.exp_avg_sq[i] = at::zeros_like(p);
    }
    if (s.decay[i] && o.weight_decay != 0) p.mul_(1.0 - lr * o.weight_decay);  // decoupled
    s.exp_avg[i].mul_(o.beta1).add_(g, 1.0 - o.beta1);
    s.exp_avg_sq[i].mul_(o.beta2).addcmul_(g, g, 1.0 - o.beta2);
    at::Tensor denom = (s.exp_avg_sq[i].sqrt() / bias_correction2_sqrt).add_(o.eps);
    p.addcdiv_(s.exp_avg[i], denom, -step_size);
  }
}

void AdamW::zero_grad() {
  for (const at::Tensor& p : state_->params)
    if (p.grad().defined()) p.mutable_grad().reset();
}

double clip_grad_norm(const std::vector<at::Tensor>& params, double max_norm) {
  c10::NoGradGuard no_grad;
  std::vector<at::Tensor> norms;
  for (const at::Tensor& p : params)
    if (p.grad().defined()) norms.push_back(p.grad().norm(2));
  if (norms.empty()) return 0;
  const double total = at::stack(norms).norm(2).item<double>();
  const double coef = max_norm / (total + 1e-6);
  if (coef < 1.0)
    for (const at::Tensor& p : params)
      if (p.grad().defined()) p.mutable_grad().mul_(coef);
  return total;
}

// ----------------------------------------------------------------------------
// training

namespace {

// Seeded random numbers from the raw output of std::mt19937_64 (whose sequence the standard fixes)
// with no std:: distribution (whose algorithms it does not): the same job gives the same model
// with every compiler and libtorch.
class Random {
 public:
  explicit Random(uint64_t seed, uint64_t stream) {
    std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), static_cast<uint32_t>(stream)};
    gen_.seed(seq);
  }
  // uniform in [0, n), without modulo bias
  uint64_t below(uint64_t n) {
    const uint64_t limit = std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % n;
    uint64_t x;
    do x = gen_();
    while (x >= limit);
    return x % n;
  }
  // standard normal, Box-Muller
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    constexpr double kTwoPi = 6.28318530717958647692;
    const double u1 = static_cast<double>((gen_() >> 11) + 1) * 0x1.0p-53;  // (0, 1]
    const double u2 = static_cast<double>(gen_() >> 11) * 0x1.0p-53;        // [0, 1)
    const double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(kTwoPi * u2);
    has_spare_ = true;
    return r * std::cos(kTwoPi * u2);
  }

 private:
  std::mt19937_64 gen_;
  bool has_spare_ = false;
  double spare_ = 0;
};

constexpr uint64_t kInitStream = 1, kDataStream = 2;

// Hugging Face's LlamaPreTrainedModel._init_weights: nn.Linear and nn.Embedding weights
// normal(0, initializer_range), biases zero, RMSNorm weights one; zero where the norm scales by 1 +
// weight (Gemma2PreTrainedModel), the same identity scale. Built on the CPU in float32.
at::Tensor init_tensor(const TensorSpec& spec, double std_dev, double norm_offset, Random& random) {
  auto f32 = at::TensorOptions().dtype(at::kFloat);
  switch (spec.role) {
    case TensorRole::norm:
      return at::full(spec.shape, 1.0 - norm_offset, f32);
    case TensorRole::bias:
      return at::zeros(spec.shape, f32);
    default:
      break;
  }
  at::Tensor t = at::empty(spec.shape, f32);
  float* data = t.data_ptr<float>();
  for (int64_t i = 0, n = t.numel(); i < n; i++) data[i] = static_cast<float>(random.normal() * std_dev);
  return t;
}

// Epochs of a seeded shuffle (Fisher-Yates) of the sequences, cut into batches of batch_size; a
// batch that runs past the end of an epoch continues into the next one.
class BatchStream {
 public:
  BatchStream(size_t n, uint64_t seed) : order_(n), random_(seed, kDataStream) { reshuffle(); }
  std::vector<size_t> next(int64_t batch_size) {
    std::vector<size_t> batch;
    for (int64_t i = 0; i < batch_size; i++) {
      if (pos_ == order_.size()) reshuffle();
      batch.push_back(order_[pos_++]);
    }
    return batch;
  }

 private:
  void reshuffle() {
    for (size_t i = 0; i < order_.size(); i++) order_[i] = i;
    for (size_t i = order_.size(); i > 1; i--) std::swap(order_[i - 1], order_[random_.below(i)]);
    pos_ = 0;
  }
  std::vector<size_t> order_;
  size_t pos_ = 0;
  Random random_;
};

// Fills LlamaWeights from tensors named as in llama_tensor_specs.
LlamaWeights assemble(const ModelConfig& c, const std::map<std::string, at::Tensor>& t) {
  auto get = [&](const std::string& name) { return t.at(name); };
  const std::vector<LayerTensor> table = layer_tensors(c);
  LlamaWeights w;
  w.embed_tokens = get("model.embed_tokens.weight");
  for (int64_t i = 0; i < c.num_hidden_layers; i++) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    LlamaLayer l;
    for (const LayerTensor& lt : table) layer_slot(l, lt) = get(p + lt.name);
    w.layers.push_back(std::move(l));
  }
  w.norm = get("model.norm.weight");
  // tied: one tensor, one parameter, gradients from both uses add up in it
  w.lm_head = c.tie_word_embeddings ? w.embed_tokens : get("lm_head.weight");
  return w;
}

}  // namespace

TrainResult train_llama(const TrainJob& job, const TrainCallbacks& callbacks) {
  const at::Device device(job.device);
  const TrainOptions& o = job.train;

  // parameters, initialized in state_dict order from one generator
  const std::vector<TensorSpec> specs = llama_tensor_specs(job.config);
  Random init_random(o.seed, kInitStream);
  std::map<std::string, at::Tensor> tensors;
  std::vector<at::Tensor> params;
  std::vector<bool> decay;
  for (const TensorSpec& spec : specs) {
    at::Tensor t = init_tensor(spec, job.initializer_range, job.config.norm_weight_offset, init_random).to(device);
    t.set_requires_grad(true);
    tensors[spec.name] = t;
    params.push_back(t);
    decay.push_back(spec.shape.size() == 2);  // matrices only: no decay on norms and biases
  }
  LlamaModel model(job.config, assemble(job.config, tensors));

  AdamWOptions adamw;
  adamw.beta1 = o.beta1;
  adamw.beta2 = o.beta2;
  adamw.eps = o.eps;
  adamw.weight_decay = o.weight_decay;
  AdamW optimizer(params, decay, adamw);

  TrainResult result;
  BatchStream stream(job.sequences.size(), o.seed);
  // unweighted jobs keep the plain mean, so they give the same bytes as before weights existed
  const bool weighted = !job.prompt_lengths.empty() && o.prompt_weight != 1.0;
  for (int64_t t = 1; t <= o.steps; t++) {
    if (callbacks.cancelled && callbacks.cancelled())
      throw RunnerError(ErrorCode::cancelled,
                        "cancelled after " + std::to_string(t - 1) + " of " + std::to_string(o.steps) + " training steps");
    std::vector<const std::vector<int64_t>*> rows;
    std::vector<int64_t> prompt_lengths;
    for (size_t index : stream.next(o.batch_size)) {
      rows.push_back(&job.sequences[index]);
      if (weighted) prompt_lengths.push_back(job.prompt_lengths[index]);
    }

    at::Tensor loss = weighted ? weighted_next_token_loss(model, rows, prompt_lengths, o.prompt_weight, device)
                               : mean_next_token_loss(model, rows, device);
    const double value = loss.item<double>();
    if (!std::isfinite(value))
      throw RunnerError(ErrorCode::bad_job, "the training loss is not finite at step " + std::to_string(t) + " ('train.lr' too high?)");
    loss.backward();
    if (o.grad_clip > 0) clip_grad_norm(params, o.grad_clip);
    optimizer.step(cosine_lr(o, t));
    optimizer.zero_grad();

    result.losses.push_back(value);
    if (callbacks.step_done) callbacks.step_done(t, o.steps, value);
  }

  // float32 bytes on the CPU, Hugging Face names
  for (const TensorSpec& spec : specs) {
    at::Tensor t = tensors.at(spec.name).detach().to(at::kCPU, at::kFloat).contiguous();
    SafetensorsEntry entry;
    entry.name = spec.name;
    entry.dtype = DType::F32;
    entry.shape = spec.shape;
    entry.bytes.assign(static_cast<const char*>(t.data_ptr()), static_cast<size_t>(t.numel()) * sizeof(float));
    result.tensors.push_back(std::move(entry));
  }
  return result;
}

}  // namespace bprof
