// Llama-family forward pass. Reads top to bottom the way Hugging Face's modeling_llama.py does:
// embed -> N x (RMSNorm, attention with RoPE, residual, RMSNorm, SwiGLU MLP, residual) -> RMSNorm
// -> lm_head. Mistral, Qwen2 and Qwen3 are the same network with the switches of ModelConfig:
// q/k/v and o biases, Qwen3's q/k norm, sliding-window attention. Where HF computes in float32 whatever the model dtype (RMSNorm, RoPE
// tables, the attention softmax), so do we; everything else runs in the compute dtype.
#include "llama.h"

#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/bincount.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/embedding.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/index_add.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/nonzero.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/reciprocal.h>
#include <ATen/ops/repeat_interleave.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/sort.h>
#include <ATen/ops/topk.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <c10/core/InferenceMode.h>
#include <torch/version.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>
#include <tuple>

#include "errors.h"

namespace bprof {

// ----------------------------------------------------------------------------
// building blocks

namespace {

// y = x W^T (+ b). Biases are optional per family, so an undefined bias means none.
at::Tensor project(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b = at::Tensor()) {
  return b.defined() ? at::linear(x, w, b) : at::linear(x, w);
}

// RMSNorm in float32 whatever the input dtype (HF LlamaRMSNorm): x * rsqrt(mean(x^2) + eps),
// cast back to the input dtype, then times the weight. With an offset (Gemma2RMSNorm: 1), times
// (offset + weight) in float32 before the cast instead.
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps, double offset = 0.0) {
  at::Tensor xf = x.to(at::kFloat);
  at::Tensor variance = xf.pow(2).mean(-1, /*keepdim=*/true);
  xf = xf * at::rsqrt(variance + eps);
  if (offset != 0.0) return (xf * (weight.to(at::kFloat) + offset)).to(x.scalar_type());
  // without autograd, the last product in place (xf * ... is a fresh tensor, and so is a cast)
  if (!at::GradMode::is_enabled()) return xf.to(x.scalar_type()).mul_(weight);
  return weight * xf.to(x.scalar_type());
}

// cap * tanh(s / cap): Gemma 2's soft-capping of attention scores and logits (in place without autograd).
at::Tensor soft_cap(at::Tensor s, double cap) {
  if (!at::GradMode::is_enabled()) return s.div_(cap).tanh_().mul_(cap);
  return (s / cap).tanh() * cap;
}

// rotate_half(x) = cat(-x2, x1) with x1, x2 the two halves of the last dimension: HF's convention
// (not the interleaved pairs of the original Llama release).
at::Tensor rotate_half(const at::Tensor& x) {
  int64_t half = x.size(-1) / 2;
  at::Tensor x1 = x.narrow(-1, 0, half);
  at::Tensor x2 = x.narrow(-1, half, half);
  return at::cat({-x2, x1}, -1);
}

// x * cos + rotate_half(x) * sin for x [B, L, n, hd] and tables broadcastable to [B, L, 1, hd],
// returned heads first, [B, n, L, hd] contiguous, as attention wants it. On the CPU in float32
// without autograd, one pass writes that layout: x1 * cos1 + (-x2) * sin1 and x2 * cos2 + x1 * sin2,
// the same products and sums as the tensor expression, rounded the same way (the build does not
// contract them into fused multiply-adds: ISO C++, no -ffast-math).
at::Tensor rope_heads_first(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, bool inference) {
  if (!inference || !x.is_cpu() || x.scalar_type() != at::kFloat || cos.scalar_type() != at::kFloat)
    return (x * cos + rotate_half(x) * sin).transpose(1, 2).contiguous();
  const int64_t b = x.size(0), len = x.size(1), n = x.size(2), hd = x.size(3), half = hd / 2;
  const at::Tensor xc = x.contiguous();
  const at::Tensor c = cos.reshape({-1, len, hd}).contiguous(), s = sin.reshape({-1, len, hd}).contiguous();  // [1 or B, L, hd]
  const bool per_row = c.size(0) != 1;
  at::Tensor out = at::empty({b, n, len, hd}, x.options());
  const float* xp = xc.data_ptr<float>();
  const float* cp = c.data_ptr<float>();
  const float* sp = s.data_ptr<float>();
  float* op = out.data_ptr<float>();
  at::parallel_for(0, b * len, 8, [&](int64_t begin, int64_t end) {
    for (int64_t bl = begin; bl < end; bl++) {
      const int64_t row = bl / len, l = bl % len;
      const float* cr = cp + ((per_row ? row : 0) * len + l) * hd;
      const float* sr = sp + ((per_row ? row : 0) * len + l) * hd;
      for (int64_t h = 0; h < n; h++) {
        const float* xi = xp + (bl * n + h) * hd;
        float* o = op + ((row * n + h) * len + l) * hd;
        for (int64_t i = 0; i < half; i++) {
          const float first = xi[i] * cr[i], rotated = -xi[i + half] * sr[i];
          o[i] = first + rotated;
        }
        for (int64_t i = half; i < hd; i++) {
          const float first = xi[i] * cr[i], rotated = xi[i - half] * sr[i];
          o[i] = first + rotated;
        }
      }
    }
  });
  return out;
}

// cos/sin tables for the given positions (float32, any shape [...]): angle[..., i] = p * inv_freq[i],
// duplicated as cat(freqs, freqs) to cover the full head dimension, [..., hd]. Computed in float32
// (as HF's rotary embedding, whose matmul over a dimension of 1 is this same product), then cast.
std::pair<at::Tensor, at::Tensor> rope_tables(const at::Tensor& inv_freq, const at::Tensor& positions, at::ScalarType dtype) {
  at::Tensor freqs = positions.unsqueeze(-1) * inv_freq;  // [..., hd/2]
  at::Tensor angles = at::cat({freqs, freqs}, -1);        // [..., hd]
  return {angles.cos().to(dtype), angles.sin().to(dtype)};
}

// A bool mask (true: blocked), [L, keys] or [B', 1, L, keys], as float32 0 / -inf, [B' or 1, L, keys].
at::Tensor additive_mask(const at::Tensor& blocked) {
  at::Tensor mask = blocked.dim() == 2 ? blocked.unsqueeze(0) : blocked.squeeze(1);
  return at::zeros(mask.sizes(), mask.options().dtype(at::kFloat)).masked_fill_(mask, -std::numeric_limits<double>::infinity());
}

// Attention on the CPU in float32 without autograd: q [B, heads, L, hd], k and v [B, kv, keys, hd]
// (contiguous), bias [B' (1 or B), L, keys] (0 or -inf). Returns [B, L, heads, hd].
//
// The same operations as the general path (q k^T, times the scale, masked, softmax, times v), but
// each (row, kv head) pair done start to end by one thread, the pairs shared among the threads: the
// pair's scores stay in that core's cache from the product to the softmax to the product with v,
// the small matrix products run without a thread team each, and the output is written straight in
// the [B, L, heads, hd] layout o_proj reads. Masking adds the bias (x + 0 = x, x + -inf = -inf:
// what masked_fill gives for the finite scores).
at::Tensor attend_cpu(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias, double scale, double softcap) {
  const int64_t b = q.size(0), heads = q.size(1), len = q.size(2), hd = q.size(3);
  const int64_t kv = k.size(1), keys = k.size(2), n_rep = heads / kv;
  at::Tensor out = at::empty({b, len, heads, hd}, q.options());
  at::parallel_for(0, b * kv, 1, [&](int64_t begin, int64_t end) {
    c10::InferenceMode guard;  // thread-local: the workers are other threads
    for (int64_t pair = begin; pair < end; pair++) {
      const int64_t row = pair / kv, g = pair % kv;
      at::Tensor scores = at::mm(q[row].narrow(0, g * n_rep, n_rep).view({n_rep * len, hd}), k[row][g].t());  // [n_rep * L, keys]
      scores.mul_(scale);
      if (softcap > 0) scores.div_(softcap).tanh_().mul_(softcap);
      scores.view({n_rep, len, keys}).add_(bias[bias.size(0) == 1 ? 0 : row]);
      at::Tensor probs = scores.softmax(-1);
      at::Tensor value = v[row][g];
      for (int64_t r = 0; r < n_rep; r++) {  // [L, hd] with row stride heads * hd: BLAS writes it in place
        at::Tensor head_out = out[row].select(1, g * n_rep + r);
        at::mm_out(head_out, probs.narrow(0, r * len, len), value);
      }
    }
  });
  return out;
}

}  // namespace

constexpr double kPi = 3.14159265358979323846;  // Python's math.pi

namespace {

// rope_inv_freq on the CPU.
at::Tensor rope_inv_freq_cpu(const ModelConfig& config) {
  const int64_t hd = config.head_dim;
  // inv_freq[i] = 1 / theta^(2i/hd), i < hd/2, in float32 as HF computes it
  at::Tensor exponents = at::arange(0, hd, 2, at::TensorOptions().dtype(at::kLong)).to(at::kFloat) / static_cast<double>(hd);
  at::Tensor inv_freq = at::reciprocal(at::pow(config.rope_theta, exponents));

  const RopeScaling& rs = config.rope_scaling;
  switch (rs.type) {
    case RopeType::standard:
      return inv_freq;
    case RopeType::linear:
      // position interpolation: positions / factor, the same as frequencies / factor
      return inv_freq / rs.factor;
    case RopeType::llama3: {
      // Llama 3.1: wavelengths longer than original_context/low_freq_factor are stretched by
      // `factor`, shorter than original_context/high_freq_factor kept, and blended in between.
      const double old_len = static_cast<double>(rs.original_max_position_embeddings);
      const double low_freq_wavelen = old_len / rs.low_freq_factor;
      const double high_freq_wavelen = old_len / rs.high_freq_factor;
      at::Tensor wavelen = at::reciprocal(inv_freq) * (2.0 * kPi);
      at::Tensor scaled = at::where(wavelen > low_freq_wavelen, inv_freq / rs.factor, inv_freq);
      at::Tensor smooth = (at::reciprocal(wavelen) * old_len - rs.low_freq_factor) / (rs.high_freq_factor - rs.low_freq_factor);
      at::Tensor smoothed = (1.0 - smooth) * scaled / rs.factor + smooth * scaled;
      at::Tensor is_medium = (wavelen >= high_freq_wavelen).logical_and(wavelen <= low_freq_wavelen);
      return at::where(is_medium, smoothed, scaled);
    }
  }
  return inv_freq;
}

}  // namespace

// Computed on the CPU and then moved, as transformers computes them (at the model's construction,
// on the CPU) before the model moves to its device. A shapes-only model (weights on the meta
// device) gets a meta tensor of the right size: Debian's libtorch 1.13 has no meta kernel for some
// of the ops above (aten::where.self), and the values are never read there.
at::Tensor rope_inv_freq(const ModelConfig& config, at::Device device) {
  const at::Tensor inv_freq = rope_inv_freq_cpu(config);
  if (device.is_meta()) return at::empty(inv_freq.sizes(), inv_freq.options().device(device));
  return inv_freq.to(device);
}

// ----------------------------------------------------------------------------
// model

// What the layers of one forward pass share.
struct LlamaModel::Pass {
  at::Tensor cos, sin;              // RoPE tables, broadcastable to [B, L, heads, hd]
  at::Tensor cos_local, sin_local;  // the sliding-window layers' own (Gemma 3); undefined: theirs are cos, sin
  // bool, broadcastable to [B, heads, L, keys]: true where a query must not see a key. `blocked`
  // is causal attention, `blocked_window` the same plus the sliding window (undefined when no
  // layer has one).
  at::Tensor blocked, blocked_window;
  // The same masks as float32 0 / -inf, [B' (1 or B), L, keys], made on first use by the CPU
  // attention (attend_cpu) and shared by the layers.
  mutable at::Tensor bias, bias_window;
  KVCache* store = nullptr;       // keep each layer's keys and values here
  const KVCache* past = nullptr;  // prepend these cached keys and values ...
  at::Tensor past_rows;           // ... row past_rows[r] of the cache for row r
  KVCache* own = nullptr;         // then the rows' own earlier tokens; the new ones are appended
};

LlamaModel::LlamaModel(const ModelConfig& config, LlamaWeights weights) : config_(config), weights_(std::move(weights)) {
  if (config_.qk_norm)
    for (const LlamaLayer& layer : weights_.layers)
      if (!layer.q_norm.defined() || !layer.k_norm.defined())
        throw RunnerError(ErrorCode::internal, "the config asks for q/k norm but the weights have none");
  inv_freq_ = rope_inv_freq(config_, weights_.embed_tokens.device());
  if (config_.local_rope_theta > 0) {
    ModelConfig local = config_;
    local.rope_theta = config_.local_rope_theta;
    local.rope_scaling = config_.local_rope_scaling;
    inv_freq_local_ = rope_inv_freq(local, weights_.embed_tokens.device());
  }
}

// The RoPE tables of the positions (float32, [...]) as [..., hd] with a dimension of 1 for the
// heads inserted at `heads_dim`; the local ones too where the family has them.
void LlamaModel::set_rope(Pass& pass, const at::Tensor& positions, int64_t heads_dim, at::ScalarType dtype) const {
  std::tie(pass.cos, pass.sin) = rope_tables(inv_freq_, positions, dtype);
  pass.cos = pass.cos.unsqueeze(heads_dim);
  pass.sin = pass.sin.unsqueeze(heads_dim);
  if (!inv_freq_local_.defined()) return;
  std::tie(pass.cos_local, pass.sin_local) = rope_tables(inv_freq_local_, positions, dtype);
  pass.cos_local = pass.cos_local.unsqueeze(heads_dim);
  pass.sin_local = pass.sin_local.unsqueeze(heads_dim);
}

at::Tensor LlamaModel::attention(int64_t layer_index, const LlamaLayer& layer, const at::Tensor& x, const Pass& pass) const {
  const int64_t b = x.size(0), len = x.size(1);
  const int64_t heads = config_.num_attention_heads, kv_heads = config_.num_key_value_heads, hd = config_.head_dim;
  const int64_t n_rep = heads / kv_heads;
  const bool inference = !at::GradMode::is_enabled();

  // project and split into heads: [B, L, n*hd] -> [B, L, n, hd]
  at::Tensor q, k, v;
  if (config_.fused_qkv) {  // Phi-3: one projection, rows q, k, v
    const at::Tensor qkv = project(x, layer.qkv_proj);
    q = qkv.narrow(-1, 0, heads * hd);
    k = qkv.narrow(-1, heads * hd, kv_heads * hd);
    v = qkv.narrow(-1, (heads + kv_heads) * hd, kv_heads * hd).view({b, len, kv_heads, hd});
  } else {
    q = project(x, layer.q_proj, layer.q_bias);
    k = project(x, layer.k_proj, layer.k_bias);
    v = project(x, layer.v_proj, layer.v_bias).view({b, len, kv_heads, hd});
  }
  if (config_.qk_norm_whole) {  // OLMo 2: RMSNorm over the whole projection, before the split into heads
    q = rms_norm(q, layer.q_norm, config_.rms_norm_eps, config_.norm_weight_offset);
    k = rms_norm(k, layer.k_norm, config_.rms_norm_eps, config_.norm_weight_offset);
  }
  q = q.view({b, len, heads, hd});
  k = k.view({b, len, kv_heads, hd});
  if (config_.qk_norm && !config_.qk_norm_whole) {  // Qwen3: RMSNorm over each head's hd values, before RoPE
    q = rms_norm(q, layer.q_norm, config_.rms_norm_eps, config_.norm_weight_offset);
    k = rms_norm(k, layer.k_norm, config_.rms_norm_eps, config_.norm_weight_offset);
  }
  // RoPE, heads first: [B, L, n, hd] -> [B, n, L, hd], contiguous
  const bool window = config_.window_of_layer(layer_index) > 0;
  const at::Tensor& cos = window && pass.cos_local.defined() ? pass.cos_local : pass.cos;
  const at::Tensor& sin = window && pass.sin_local.defined() ? pass.sin_local : pass.sin;
  q = rope_heads_first(q, cos, sin, inference);
  k = rope_heads_first(k, cos, sin, inference);
  v = v.transpose(1, 2).contiguous();
  if (pass.store) {
    pass.store->keys[static_cast<size_t>(layer_index)] = k;
    pass.store->values[static_cast<size_t>(layer_index)] = v;
  }
  if (pass.own) {  // the rows' earlier tokens, then these: what the next step will see
    at::Tensor& own_k = pass.own->keys[static_cast<size_t>(layer_index)];
    at::Tensor& own_v = pass.own->values[static_cast<size_t>(layer_index)];
    own_k = own_k.defined() ? at::cat({own_k, k}, 2) : k;
    own_v = own_v.defined() ? at::cat({own_v, v}, 2) : v;
    k = own_k;
    v = own_v;
  }
  if (pass.past) {  // cached context first, then this row's own tokens
    k = at::cat({pass.past->keys[static_cast<size_t>(layer_index)].index_select(0, pass.past_rows), k}, 2);
    v = at::cat({pass.past->values[static_cast<size_t>(layer_index)].index_select(0, pass.past_rows), v}, 2);
  }
  const int64_t keys = k.size(2);

  // Grouped-query attention without copying keys and values per query head: query head h uses kv
  // head h / n_rep, so the n_rep query heads of kv head g, all positions, are one matrix
  // [n_rep * L, hd] against that head's keys: q [B, kv, n_rep * L, hd] x k^T [B, kv, hd, keys].
  // scores = q k^T / sqrt(hd), invisible keys masked out; softmax in float32 (as HF's eager
  // attention), probabilities back in the compute dtype for the product with v
  const at::Tensor& blocked = window ? pass.blocked_window : pass.blocked;
  const double scale = config_.attention_multiplier > 0 ? config_.attention_multiplier : std::pow(static_cast<double>(hd), -0.5);
  const double softcap = config_.attention_softcap;
  at::Tensor out;  // [B, L, heads * hd]
  if (inference && q.is_cpu() && q.scalar_type() == at::kFloat) {
    at::Tensor& bias = window ? pass.bias_window : pass.bias;
    if (!bias.defined()) bias = additive_mask(blocked);
    out = attend_cpu(q, k.contiguous(), v.contiguous(), bias, scale, softcap).view({b, len, heads * hd});
  } else {
    at::Tensor scores = q.view({b, kv_heads, n_rep * len, hd}).matmul(k.transpose(-2, -1));
    // [L, keys] or [B', 1, L, keys] -> [B', 1, 1, L, keys], against scores seen as [B, kv, n_rep, L, keys]
    const at::Tensor mask = blocked.dim() == 2 ? blocked.view({1, 1, 1, len, keys}) : blocked.unsqueeze(2);
    const double minus_inf = -std::numeric_limits<double>::infinity();
    if (inference) {  // the same operations in place: no graph to keep the inputs for
      scores.mul_(scale);
      if (softcap > 0) soft_cap(scores, softcap);
      scores.view({b, kv_heads, n_rep, len, keys}).masked_fill_(mask, minus_inf);
    } else {
      scores = scores * scale;
      if (softcap > 0) scores = soft_cap(scores, softcap);
      scores = scores.view({b, kv_heads, n_rep, len, keys}).masked_fill(mask, minus_inf).view({b, kv_heads, n_rep * len, keys});
    }
    at::Tensor probs = scores.softmax(-1, at::kFloat).to(q.scalar_type());
    out = probs.matmul(v);  // [B, kv, n_rep * L, hd], i.e. [B, heads, L, hd]
    out = out.view({b, heads, len, hd}).transpose(1, 2).reshape({b, len, heads * hd});
  }
  return project(out, layer.o_proj, layer.o_bias);
}

namespace {

// sum += g^T x: a weight's gradient ([out, in], float32) from its output gradients g [N, out] and
// inputs x [N, in]. On a GPU with PyTorch 2.8 or later, a bfloat16 or float16 product is
// accumulated by the matrix multiply itself in float32, straight into the sum (cuBLAS with a
// float32 C); elsewhere the product is made in the inputs' dtype and added. BPROF_PLAIN_GRADIENT_SUMS
// set in the environment takes the second way on a GPU too: the bench's before and after.
void add_weight_gradient(const at::Tensor& sum, const at::Tensor& g, const at::Tensor& x) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 8)
  static const bool plain = std::getenv("BPROF_PLAIN_GRADIENT_SUMS") != nullptr;
  if (!plain && g.is_cuda() && g.scalar_type() != at::kFloat && sum.scalar_type() == at::kFloat) {
    at::Tensor target = sum;
    at::addmm_out(target, sum, g.t(), x, at::kFloat);
    return;
  }
#endif
  sum.add_(g.t().matmul(x).to(at::kFloat));
}

// y = x W^T (+ b), and when `sum` is defined, a hook that adds dL/dW = (dL/dy)^T x, in float32,
// during the backward pass: the weight's gradient without the weight requiring one. When `part`
// is defined too, the same product over the batch rows `rows` only ([B, L, in] inputs) goes into
// `part`; `sum` is computed exactly as without it.
at::Tensor tapped_project(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, const at::Tensor& sum, const at::Tensor& part,
                          const at::Tensor& rows) {
  at::Tensor y = project(x, w, b);
  if (sum.defined() && y.requires_grad()) {
    const at::Tensor batch = x.detach();
    // ([B, L, in]: rows of the batch; [N, in], an expert's tokens: rows of N)
    const bool by_rows = part.defined() && rows.defined() && rows.numel() > 0 && batch.dim() >= 2;
    y.register_hook([sum, part, rows, batch, by_rows](const at::Tensor& grad) {
      at::Tensor g = grad.reshape({-1, grad.size(-1)});  // [N, out]
      add_weight_gradient(sum, g, batch.reshape({-1, batch.size(-1)}));
      if (by_rows) {
        at::Tensor g_rows = grad.index_select(0, rows).reshape({-1, grad.size(-1)});
        add_weight_gradient(part, g_rows, batch.index_select(0, rows).reshape({-1, batch.size(-1)}));
      }
      return at::Tensor();  // the gradient flows on unchanged
    });
  }
  return y;
}

}  // namespace

// The MLP's gate activation, silu (SwiGLU) or GELU's tanh approximation (Gemma's GeGLU).
at::Tensor LlamaModel::activate(const at::Tensor& gate) const {
  return config_.activation == Activation::gelu_tanh ? at::gelu(gate, "tanh") : at::silu(gate);
}

// down(act(gate(x)) * up(x))
at::Tensor LlamaModel::mlp(size_t layer_index, const LlamaLayer& layer, const at::Tensor& x) const {
  static const MlpGradientSums untapped;
  const MlpGradientSums& sums = gradient_sums_ ? (*gradient_sums_)[layer_index] : untapped;
  if (config_.num_experts > 0) return experts_mlp(layer, x, sums);
  if (config_.fused_gate_up) {  // Phi-3: gate_up_proj's rows are gate, then up; one tap for the fused weight
    const int64_t I = config_.intermediate_size;
    at::Tensor gate_up = tapped_project(x, layer.gate_proj, layer.gate_bias, sums.gate, sums.gate_part, sums.part_rows);
    at::Tensor up = gate_up.narrow(-1, I, I);
    return tapped_project(activate(gate_up.narrow(-1, 0, I)) * up, layer.down_proj, layer.down_bias, sums.down, sums.down_part,
                          sums.part_rows);
  }
  if (!at::GradMode::is_enabled()) {  // the same operations, in place where the activation allows
    at::Tensor gate = project(x, layer.gate_proj, layer.gate_bias);
    if (config_.activation == Activation::silu)
      at::silu_(gate);
    else
      gate = activate(gate);
    gate.mul_(project(x, layer.up_proj, layer.up_bias));
    return project(gate, layer.down_proj, layer.down_bias);
  }
  at::Tensor gate = activate(tapped_project(x, layer.gate_proj, layer.gate_bias, sums.gate, sums.gate_part, sums.part_rows));
  at::Tensor up = tapped_project(x, layer.up_proj, layer.up_bias, sums.up, sums.up_part, sums.part_rows);
  return tapped_project(gate * up, layer.down_proj, layer.down_bias, sums.down, sums.down_part, sums.part_rows);
}

// A mixture of experts (MixtralSparseMoeBlock, Qwen3MoeSparseMoeBlock): router logits over the
// tokens, softmax in float32, each token's top experts_per_token, their probabilities renormalised
// where the config says; each expert runs on the tokens routed to it only (index_select), its
// output times the token's weight added back in (index_add, experts in order as transformers
// adds them). The taps see each expert's own tokens, so its gradient sums run over those alone.
at::Tensor LlamaModel::experts_mlp(const LlamaLayer& layer, const at::Tensor& x, const MlpGradientSums& sums) const {
  const int64_t H = x.size(-1), E = config_.num_experts, k = config_.experts_per_token;
  const at::Tensor flat = x.reshape({-1, H});  // [N, H]
  const int64_t N = flat.size(0);
  at::Tensor probs = at::linear(flat, layer.router).softmax(-1, at::kFloat);  // [N, E]
  auto [weights, chosen] = probs.topk(k, -1);                                 // [N, k] each
  if (config_.norm_topk_prob) weights = weights / weights.sum(-1, /*keepdim=*/true);
  if (config_.routing_weights_in_dtype) weights = weights.to(x.scalar_type());

  // the (token, slot) pairs grouped by expert: a stable sort of the chosen experts, and each
  // expert's count (one transfer to the host per layer)
  const at::Tensor picks = chosen.reshape({-1});  // [N k]
  const at::Tensor order = std::get<1>(picks.sort(/*stable=*/true, 0, /*descending=*/false));
  const at::Tensor counts = picks.bincount({}, E).to(at::kCPU).contiguous();
  const int64_t* count = counts.data_ptr<int64_t>();
  const at::Tensor tokens = order.div(k, "floor");  // [N k], by expert
  const at::Tensor token_weights = weights.reshape({-1}).index_select(0, order);
  // a part of the batch's rows (importance's stability): the tokens of those rows
  at::Tensor in_part;
  if (sums.part_rows.defined() && !sums.experts.empty()) {
    at::Tensor row_in_part = at::zeros({x.size(0)}, x.options().dtype(at::kBool));
    if (sums.part_rows.numel() > 0) row_in_part.index_fill_(0, sums.part_rows, true);
    in_part = row_in_part.repeat_interleave(N / x.size(0));  // [N]
  }

  const bool inference = !at::GradMode::is_enabled();
  at::Tensor out = at::zeros_like(flat);
  int64_t start = 0;
  for (int64_t e = 0; e < E; e++) {
    const int64_t n = count[e];
    if (n == 0) continue;
    const at::Tensor token = tokens.narrow(0, start, n);
    const at::Tensor weight = token_weights.narrow(0, start, n).unsqueeze(-1);
    start += n;
    const ExpertWeights& expert = layer.experts[static_cast<size_t>(e)];
    static const MlpGradientSums untapped;
    const MlpGradientSums& tap = sums.experts.empty() ? untapped : sums.experts[static_cast<size_t>(e)];
    const at::Tensor part = in_part.defined() ? in_part.index_select(0, token).nonzero().squeeze(1) : at::Tensor();
    const at::Tensor input = flat.index_select(0, token);  // [n, H]
    at::Tensor gate = activate(tapped_project(input, expert.gate_proj, at::Tensor(), tap.gate, tap.gate_part, part));
    at::Tensor up = tapped_project(input, expert.up_proj, at::Tensor(), tap.up, tap.up_part, part);
    at::Tensor h = tapped_project(gate * up, expert.down_proj, at::Tensor(), tap.down, tap.down_part, part);
    h = (h * weight).to(out.scalar_type());  // Mixtral: in float32, then the compute dtype
    out = inference ? out.index_add_(0, token, h) : out.index_add(0, token, h);
  }
  return out.view(x.sizes());
}

// Each sublayer (attention, then the MLP) reads the residual stream through its pre-norm where the
// family has them, its output goes through its post-norm where the family has them (OLMo 2, Gemma
// 2), times Granite's residual multiplier, and is added to the stream.
at::Tensor LlamaModel::run_layers(at::Tensor x, const Pass& pass) const {
  const double eps = config_.rms_norm_eps, offset = config_.norm_weight_offset;
  const bool inference = !at::GradMode::is_enabled();
  const double residual = config_.residual_multiplier;
  const bool scaled_residual = residual != 1.0;
  const bool pre = config_.pre_norms, post = config_.post_norms;
  auto norm = [&](const at::Tensor& t, const at::Tensor& weight) { return rms_norm(t, weight, eps, offset); };
  auto add = [&](at::Tensor& stream, at::Tensor out, const at::Tensor& post_norm) {
    if (post) out = norm(out, post_norm);
    if (scaled_residual) out = inference ? out.mul_(residual) : out * residual;  // Granite
    stream = inference ? stream.add_(out) : stream + out;                        // in place: x is this pass's own (the embedding's copy)
  };
  for (size_t i = 0; i < weights_.layers.size(); i++) {
    const LlamaLayer& layer = weights_.layers[i];
    add(x, attention(static_cast<int64_t>(i), layer, pre ? norm(x, layer.input_norm) : x, pass), layer.post_attention_norm);
    // before the MLP: HF's post_attention_layernorm in a pre-norm-only family, pre_feedforward_layernorm in Gemma 2
    const at::Tensor& mlp_norm = post ? layer.pre_feedforward_norm : layer.post_attention_norm;
    add(x, mlp(i, layer, pre ? norm(x, mlp_norm) : x), layer.post_feedforward_norm);
  }
  return norm(x, weights_.norm);
}

at::Tensor LlamaModel::hidden_states(const at::Tensor& tokens, KVCache* cache) const {
  at::Tensor x = embed(tokens);  // [B, L, H]
  const int64_t len = tokens.size(1);

  // RoPE tables for positions 0..L-1, and the causal mask: true above the diagonal, where a query
  // would look at a later position; with a sliding window also where it looks `window` or more
  // positions back (i - j >= window)
  Pass pass;
  at::Tensor position = at::arange(len, tokens.options());      // [L] int64
  set_rope(pass, position.to(at::kFloat), 1, x.scalar_type());  // [L, 1, hd]: shared by the rows and the heads
  at::Tensor query = position.unsqueeze(1), key = position.unsqueeze(0);
  pass.blocked = key > query;  // [L, L]
  if (config_.sliding_window > 0) pass.blocked_window = pass.blocked.logical_or(key <= query - config_.sliding_window);
  if (cache) {
    cache->keys.assign(weights_.layers.size(), at::Tensor());
    cache->values.assign(weights_.layers.size(), at::Tensor());
    pass.store = cache;
  }
  return run_layers(x, pass);
}

at::Tensor LlamaModel::continuation_hidden_states(const at::Tensor& tokens, const KVCache& cache, const at::Tensor& cache_rows,
                                                  const at::Tensor& context_lengths, KVCache* own_cache) const {
  at::Tensor x = embed(tokens);  // [R, Lq, H]
  const int64_t rows = tokens.size(0), len = tokens.size(1);
  const int64_t cached = cache.keys.at(0).size(2);  // Lc, the padded context length
  int64_t earlier = 0;                              // T, the rows' own tokens already cached
  if (own_cache) {
    if (own_cache->keys.empty()) {
      own_cache->keys.assign(weights_.layers.size(), at::Tensor());
      own_cache->values.assign(weights_.layers.size(), at::Tensor());
    }
    if (own_cache->keys[0].defined()) earlier = own_cache->keys[0].size(2);
  }

  Pass pass;
  pass.past = &cache;
  pass.past_rows = cache_rows;
  pass.own = own_cache;
  // token t of row r sits at position context_lengths[r] + T + t; the T earlier ones before it
  at::Tensor own = at::arange(earlier, earlier + len, tokens.options());  // [Lq]: T .. T + Lq - 1
  at::Tensor lengths = context_lengths.view({rows, 1});                   // [R, 1]
  at::Tensor position = lengths + own.unsqueeze(0);                       // [R, Lq]
  set_rope(pass, position.to(at::kFloat), 2, x.scalar_type());            // [R, Lq, 1, hd]: one table per row, shared by the heads

  // keys: the Lc cached positions (real below the row's context length, padding from there on),
  // then the row's own Lq tokens (causal)
  // (the T earlier tokens first: own indices 0 .. T + Lq - 1 in both key ranges)
  at::Tensor context_key = at::arange(cached, tokens.options()).view({1, 1, cached});  // [1, 1, Lc]
  at::Tensor own_query = own.unsqueeze(1);                                             // [Lq, 1]
  at::Tensor own_key = at::arange(earlier + len, tokens.options()).unsqueeze(0);       // [1, T + Lq]
  const int64_t own_keys = earlier + len;
  at::Tensor context_blocked = (context_key >= lengths.unsqueeze(2)).expand({rows, len, cached});
  at::Tensor own_blocked = (own_key > own_query).expand({rows, len, own_keys});
  pass.blocked = at::cat({context_blocked, own_blocked}, -1).unsqueeze(1);  // [R, 1, Lq, Lc + Lq]
  if (config_.sliding_window > 0) {
    // query at context_length + t sees context position j when context_length + t - window < j,
    // and its own token t' when t - window < t'
    const int64_t w = config_.sliding_window;
    at::Tensor context_far = context_key <= position.unsqueeze(2) - w;              // [R, Lq, Lc]
    at::Tensor own_far = (own_key <= own_query - w).expand({rows, len, own_keys});  // [R, Lq, T + Lq]
    pass.blocked_window = pass.blocked.logical_or(at::cat({context_far, own_far}, -1).unsqueeze(1));
  }
  return run_layers(x, pass);
}

at::Tensor LlamaModel::tree_hidden_states(const at::Tensor& tokens, const at::Tensor& positions, const at::Tensor& branches) const {
  at::Tensor x = embed(tokens);  // [B, L, H]
  Pass pass;
  set_rope(pass, positions.to(at::kFloat), 2, x.scalar_type());             // [B, L, 1, hd]: one table per row, shared by the heads
  at::Tensor query = positions.unsqueeze(2), key = positions.unsqueeze(1);  // [B, L, 1], [B, 1, L]
  at::Tensor query_branch = branches.unsqueeze(2), key_branch = branches.unsqueeze(1);
  at::Tensor other_branch = key_branch.ne(0).logical_and(key_branch.ne(query_branch));  // [B, L, L]
  pass.blocked = (key > query).logical_or(other_branch).unsqueeze(1);                   // [B, 1, L, L]
  if (config_.sliding_window > 0) pass.blocked_window = pass.blocked.logical_or((key <= query - config_.sliding_window).unsqueeze(1));
  return run_layers(x, pass);
}

// Granite divides the logits by logits_scaling, Gemma 2 soft-caps them (a fresh tensor: in place
// without autograd).
at::Tensor LlamaModel::logits(const at::Tensor& hidden) const {
  at::Tensor out = project(hidden, weights_.lm_head);
  if (config_.logits_scaling != 1.0) out = at::GradMode::is_enabled() ? out / config_.logits_scaling : out.div_(config_.logits_scaling);
  if (config_.logits_softcap > 0) out = soft_cap(out, config_.logits_softcap);
  return out;
}

double embedding_scale(const ModelConfig& config, at::ScalarType dtype) {
  if (!config.embedding_multiplier_in_dtype) return config.embedding_multiplier;
  return at::scalar_tensor(config.embedding_multiplier, at::TensorOptions().dtype(dtype)).item<double>();
}

// The token embeddings, times Granite's embedding_multiplier or Gemma's sqrt(hidden_size) (a fresh
// tensor: in place without autograd).
at::Tensor LlamaModel::embed(const at::Tensor& tokens) const {
  at::Tensor x = at::embedding(weights_.embed_tokens, tokens);
  if (config_.embedding_multiplier == 1.0) return x;
  const double scale = embedding_scale(config_, x.scalar_type());
  return at::GradMode::is_enabled() ? x * scale : x.mul_(scale);
}

// ----------------------------------------------------------------------------
// loading

namespace {

at::ScalarType scalar_type_of(DType dtype) {
  switch (dtype) {
    case DType::F16:
      return at::kHalf;
    case DType::BF16:
      return at::kBFloat16;
    case DType::F32:
      return at::kFloat;
    case DType::F64:
      return at::kDouble;
    default:
      return at::kFloat;  // callers check dtype_is_float first
  }
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); i++) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Takes tensors out of the checkpoint by name, checking shape and dtype against what the config
// implies, and keeps count for progress events and the unused-tensor warning.
class WeightLoader {
 public:
  WeightLoader(const Checkpoint& checkpoint, const LoadOptions& options, int64_t total)
      : checkpoint_(checkpoint), options_(options), total_(total) {
    if (options_.progress) options_.progress(0, total_);
  }

  at::Tensor take(const std::string& name, const std::vector<int64_t>& shape) {
    if (options_.cancelled && options_.cancelled()) throw RunnerError(ErrorCode::cancelled, "cancelled while loading the model");
    const Checkpoint::Entry* entry = checkpoint_.find(name);
    if (!entry) throw RunnerError(ErrorCode::bad_model, "tensor '" + name + "' is missing from the checkpoint");
    const TensorInfo& info = *entry->info;
    if (info.shape != shape)
      throw RunnerError(ErrorCode::bad_model, entry->file->path() + ": tensor '" + name + "' has shape " + shape_str(info.shape) +
                                                  ", expected " + shape_str(shape));
    if (!dtype_is_float(info.dtype))
      throw RunnerError(ErrorCode::bad_model, entry->file->path() + ": tensor '" + name + "' has dtype " + dtype_name(info.dtype) +
                                                  ", expected F32, F16 or BF16");

    at::Tensor t = options_.shapes_only ? at::empty(info.shape, at::TensorOptions().dtype(options_.dtype).device(at::kMeta)) : read(*entry);

    used_.insert(name);
    done_++;
    if (options_.progress) options_.progress(done_, total_);
    return t;
  }

  at::Tensor take_if(bool wanted, const std::string& name, const std::vector<int64_t>& shape) {
    return wanted ? take(name, shape) : at::Tensor();
  }

  void mark_used(const std::string& name) { used_.insert(name); }
  bool has(const std::string& name) const { return checkpoint_.find(name) != nullptr; }
  // Counts tensors the table lists and the checkpoint holds in another form (fused experts).
  void count_as_done(int64_t n) {
    done_ += n;
    if (options_.progress) options_.progress(done_, total_);
  }

  // The tensor's bytes, copied out of the (possibly unaligned) mapped file, in the compute dtype on the device.
  at::Tensor read(const Checkpoint::Entry& entry) const {
    const TensorInfo& info = *entry.info;
    at::Tensor host = at::empty(info.shape, at::TensorOptions().dtype(scalar_type_of(info.dtype)));
    std::memcpy(host.data_ptr(), entry.file->data(info), info.end - info.begin);
    return host.to(options_.device, options_.dtype);
  }

  // Tensors the model does not use are likely a sign of a config that does not match the weights.
  void warn_unused() const {
    if (!options_.warning) return;
    std::vector<std::string> unused;
    for (const auto& kv : checkpoint_.entries()) {
      const std::string& name = kv.first;
      // old checkpoints carry RoPE tables as buffers; HF ignores them and so do we
      const std::string suffix = "rotary_emb.inv_freq";
      bool rope_buffer = name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
      if (!used_.count(name) && !rope_buffer) unused.push_back(name);
    }
    if (unused.empty()) return;
    std::string msg = std::to_string(unused.size()) + " tensor(s) in the checkpoint are not used by the model: ";
    for (size_t i = 0; i < unused.size() && i < 5; i++) msg += (i ? ", " : "") + unused[i];
    if (unused.size() > 5) msg += ", ...";
    options_.warning(msg);
  }

 private:
  const Checkpoint& checkpoint_;
  const LoadOptions& options_;
  int64_t total_;
  int64_t done_ = 0;
  std::set<std::string> used_;
};

// The name of a layer tensor in this checkpoint: the table's, except for a Mixtral router kept
// under transformers' in-memory name (mlp.gate.weight, beside fused experts).
std::string router_name(const WeightLoader& loader, const std::string& prefix, const LayerTensor& t) {
  if (t.slot == LayerSlot::router && !loader.has(prefix + t.name) && loader.has(prefix + "mlp.gate.weight")) return "mlp.gate.weight";
  return t.name;
}

// Experts as transformers 5 holds them in memory (MixtralExperts, Qwen3MoeExperts):
// mlp.experts.gate_up_proj [E, 2I, H] (each expert's gate rows, then its up rows) and
// mlp.experts.down_proj [E, H, I]. Each expert's weights are views of the two.
void take_fused_experts(const ModelConfig& c, WeightLoader& loader, const std::string& prefix, LlamaLayer& layer) {
  const int64_t E = c.num_experts, I = c.expert_intermediate_size, H = c.hidden_size;
  const at::Tensor gate_up = loader.take(prefix + "mlp.experts.gate_up_proj", {E, 2 * I, H});
  const at::Tensor down = loader.take(prefix + "mlp.experts.down_proj", {E, H, I});
  layer.experts.resize(static_cast<size_t>(E));
  for (int64_t e = 0; e < E; e++) {
    ExpertWeights& expert = layer.experts[static_cast<size_t>(e)];
    expert.gate_proj = gate_up[e].narrow(0, 0, I);
    expert.up_proj = gate_up[e].narrow(0, I, I);
    expert.down_proj = down[e];
  }
  loader.count_as_done(3 * E - 2);  // the table lists 3 E expert tensors
}

}  // namespace

at::Tensor& layer_slot(LlamaLayer& l, const LayerTensor& t) {
  auto expert = [&]() -> ExpertWeights& {
    if (t.expert < 0) throw RunnerError(ErrorCode::internal, "an expert slot without its expert");
    if (static_cast<size_t>(t.expert) >= l.experts.size()) l.experts.resize(static_cast<size_t>(t.expert) + 1);
    return l.experts[static_cast<size_t>(t.expert)];
  };
  switch (t.slot) {
    case LayerSlot::q_proj:
      return l.q_proj;
    case LayerSlot::q_bias:
      return l.q_bias;
    case LayerSlot::k_proj:
      return l.k_proj;
    case LayerSlot::k_bias:
      return l.k_bias;
    case LayerSlot::v_proj:
      return l.v_proj;
    case LayerSlot::v_bias:
      return l.v_bias;
    case LayerSlot::o_proj:
      return l.o_proj;
    case LayerSlot::o_bias:
      return l.o_bias;
    case LayerSlot::q_norm:
      return l.q_norm;
    case LayerSlot::k_norm:
      return l.k_norm;
    case LayerSlot::gate_proj:
      return l.gate_proj;
    case LayerSlot::gate_bias:
      return l.gate_bias;
    case LayerSlot::up_proj:
      return l.up_proj;
    case LayerSlot::up_bias:
      return l.up_bias;
    case LayerSlot::down_proj:
      return l.down_proj;
    case LayerSlot::down_bias:
      return l.down_bias;
    case LayerSlot::qkv_proj:
      return l.qkv_proj;
    case LayerSlot::gate_up_proj:
      return l.gate_proj;
    case LayerSlot::input_norm:
      return l.input_norm;
    case LayerSlot::post_attention_norm:
      return l.post_attention_norm;
    case LayerSlot::pre_feedforward_norm:
      return l.pre_feedforward_norm;
    case LayerSlot::post_feedforward_norm:
      return l.post_feedforward_norm;
    case LayerSlot::router:
      return l.router;
    case LayerSlot::expert_gate:
      return expert().gate_proj;
    case LayerSlot::expert_up:
      return expert().up_proj;
    case LayerSlot::expert_down:
      return expert().down_proj;
  }
  throw RunnerError(ErrorCode::internal, "unknown layer slot");
}

const at::Tensor& layer_slot(const LlamaLayer& l, const LayerTensor& t) { return layer_slot(const_cast<LlamaLayer&>(l), t); }

LlamaWeights load_llama_weights(const ModelConfig& c, const Checkpoint& checkpoint, const LoadOptions& options) {
  const int64_t H = c.hidden_size, V = c.vocab_size;
  const std::vector<LayerTensor> table = layer_tensors(c);
  const int64_t total = 2 + (c.tie_word_embeddings ? 0 : 1) + static_cast<int64_t>(table.size()) * c.num_hidden_layers;
  WeightLoader loader(checkpoint, options, total);

  LlamaWeights w;
  w.embed_tokens = loader.take("model.embed_tokens.weight", {V, H});
  for (int64_t i = 0; i < c.num_hidden_layers; i++) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    LlamaLayer l;
    // a mixture of experts may keep its experts as transformers does in memory, fused 3-D tensors
    const bool fused_experts = c.num_experts > 0 && loader.has(p + "mlp.experts.gate_up_proj");
    for (const LayerTensor& t : table) {
      if (fused_experts && t.expert >= 0) continue;
      layer_slot(l, t) = loader.take(p + router_name(loader, p, t), t.shape);
    }
    if (fused_experts) take_fused_experts(c, loader, p, l);
    w.layers.push_back(std::move(l));
  }
  w.norm = loader.take("model.norm.weight", {H});
  if (c.tie_word_embeddings) {
    w.lm_head = w.embed_tokens;  // HF ties the two: a stored lm_head.weight is ignored
    loader.mark_used("lm_head.weight");
  } else {
    w.lm_head = loader.take("lm_head.weight", {V, H});
  }
  loader.warn_unused();
  return w;
}

}  // namespace bprof
