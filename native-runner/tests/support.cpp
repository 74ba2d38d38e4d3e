#include "support.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "files.h"

namespace bprof::test {

std::vector<ImportanceSpan> spans_of(const std::vector<std::vector<float>>& arrays) {
  std::vector<ImportanceSpan> spans;
  for (const auto& a : arrays) spans.push_back({a.data(), static_cast<int64_t>(a.size())});
  return spans;
}

using json = nlohmann::json;

// ----------------------------------------------------------------------------
// files

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/bprof-test-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed");
  path_ = buf.data();
}

TempDir::~TempDir() { remove_tree(path_); }

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ----------------------------------------------------------------------------
// safetensors writer

std::string safetensors_bytes(const std::string& header_json, const std::string& data) {
  std::string out(8, '\0');
  uint64_t n = header_json.size();
  for (int i = 0; i < 8; i++) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);  // little-endian
  return out + header_json + data;
}

std::string safetensors_bytes(const std::vector<F32Tensor>& tensors) {
  json header = json::object();
  std::string data;
  for (const auto& t : tensors) {
    size_t begin = data.size();
    data.append(reinterpret_cast<const char*>(t.values.data()), t.values.size() * sizeof(float));
    header[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
  }
  header["__metadata__"] = {{"format", "pt"}};
  return safetensors_bytes(header.dump(), data);
}

// ----------------------------------------------------------------------------
// tiny Llama

namespace {

// uniform in [-a, a) from raw mt19937 output: reproducible everywhere
struct Rng {
  std::mt19937 gen;
  explicit Rng(uint32_t seed) : gen(seed) {}
  float uniform(float a) { return (static_cast<float>(gen() >> 8) * (1.0f / 16777216.0f) * 2.0f - 1.0f) * a; }
};

F32Tensor random_tensor(Rng& rng, const std::string& name, std::vector<int64_t> shape, float scale, float offset = 0) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  F32Tensor t{name, std::move(shape), std::vector<float>(static_cast<size_t>(n))};
  for (float& v : t.values) v = offset + rng.uniform(scale);
  return t;
}

}  // namespace

Weights tiny_llama_weights(const TinyLlamaSpec& s) {
  Rng rng(s.seed);
  const int64_t H = s.hidden_size, I = s.intermediate_size, V = s.vocab_size, hd = s.head_dim();
  const int64_t q_dim = s.num_attention_heads * hd, kv_dim = s.num_key_value_heads * hd;
  // scales keep activations O(1): uniform(-a, a) has variance a^2/3, so a = sqrt(3 / fan_in)
  auto scale = [](int64_t fan_in) { return std::sqrt(3.0f / static_cast<float>(fan_in)); };

  Weights w;
  auto add = [&](F32Tensor t) { w[t.name] = std::move(t); };
  add(random_tensor(rng, "model.embed_tokens.weight", {V, H}, 1.0f));
  for (int64_t i = 0; i < s.num_hidden_layers; i++) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    add(random_tensor(rng, p + "input_layernorm.weight", {H}, 0.2f, 1.0f));
    add(random_tensor(rng, p + "self_attn.q_proj.weight", {q_dim, H}, scale(H) * 2));
    add(random_tensor(rng, p + "self_attn.k_proj.weight", {kv_dim, H}, scale(H) * 2));
    add(random_tensor(rng, p + "self_attn.v_proj.weight", {kv_dim, H}, scale(H)));
    add(random_tensor(rng, p + "self_attn.o_proj.weight", {H, q_dim}, scale(q_dim)));
    add(random_tensor(rng, p + "post_attention_layernorm.weight", {H}, 0.2f, 1.0f));
    add(random_tensor(rng, p + "mlp.gate_proj.weight", {I, H}, scale(H)));
    add(random_tensor(rng, p + "mlp.up_proj.weight", {I, H}, scale(H)));
    add(random_tensor(rng, p + "mlp.down_proj.weight", {H, I}, scale(I)));
  }
  add(random_tensor(rng, "model.norm.weight", {H}, 0.2f, 1.0f));
  if (!s.tie_word_embeddings) add(random_tensor(rng, "lm_head.weight", {V, H}, scale(H) * 2));
  // family tensors from a generator of their own, so that a plain Llama keeps the weights above
  Rng extra(s.seed ^ 0x9e3779b9u);
  for (int64_t i = 0; i < s.num_hidden_layers; i++) {
    const std::string p = "model.layers." + std::to_string(i) + ".self_attn.";
    if (s.qkv_bias()) {
      add(random_tensor(extra, p + "q_proj.bias", {q_dim}, 0.5f));
      add(random_tensor(extra, p + "k_proj.bias", {kv_dim}, 0.5f));
      add(random_tensor(extra, p + "v_proj.bias", {kv_dim}, 0.5f));
    }
    if (s.o_bias()) add(random_tensor(extra, p + "o_proj.bias", {H}, 0.5f));
    if (s.qk_norm()) {
      add(random_tensor(extra, p + "q_norm.weight", {hd}, 0.5f, 1.0f));
      add(random_tensor(extra, p + "k_norm.weight", {hd}, 0.5f, 1.0f));
    }
  }
  return w;
}

json tiny_llama_config(const TinyLlamaSpec& s) {
  const char* architecture = s.model_type == "mistral" ? "MistralForCausalLM"
                             : s.model_type == "qwen2" ? "Qwen2ForCausalLM"
                             : s.model_type == "qwen3" ? "Qwen3ForCausalLM"
                                                       : "LlamaForCausalLM";
  json c = {{"architectures", {architecture}},
            {"model_type", s.model_type},
            {"vocab_size", s.vocab_size},
            {"hidden_size", s.hidden_size},
            {"intermediate_size", s.intermediate_size},
            {"num_hidden_layers", s.num_hidden_layers},
            {"num_attention_heads", s.num_attention_heads},
            {"num_key_value_heads", s.num_key_value_heads},
            {"rms_norm_eps", s.rms_norm_eps},
            {"rope_theta", s.rope_theta},
            {"tie_word_embeddings", s.tie_word_embeddings},
            {"hidden_act", "silu"},
            {"max_position_embeddings", 512},
            {"bos_token_id", 256},
            {"eos_token_id", 257},
            {"torch_dtype", "float32"}};
  if (s.explicit_head_dim > 0 || s.model_type == "qwen3") c["head_dim"] = s.head_dim();
  const json window = s.sliding_window > 0 ? json(s.sliding_window) : json(nullptr);
  if (s.model_type == "llama") {
    c["attention_bias"] = s.attention_bias;
    c["mlp_bias"] = false;
  } else if (s.model_type == "mistral") {
    c["sliding_window"] = window;
  } else if (s.model_type == "qwen2" || s.model_type == "qwen3") {
    if (s.model_type == "qwen3") c["attention_bias"] = s.attention_bias;
    c["use_sliding_window"] = s.use_sliding_window;
    c["sliding_window"] = window;
    c["max_window_layers"] = s.max_window_layers;
  }
  return c;
}

std::vector<Item> sample_choice_items() {
  std::vector<Item> items(3);
  items[0] = {"a", {256, 84, 104, 101}, {{32, 99, 97, 116}, {32, 100, 111, 103, 115}, {33}}};
  items[1] = {"b", {256, 50, 43, 50, 61}, {{52}, {53}, {52, 52, 52, 52, 52, 52, 52}}};
  items[2] = {"c", {256}, {{72, 105}, {257}}};
  return items;
}

Weights write_tiny_llama(const std::string& dir, const TinyLlamaSpec& spec) {
  Weights w = tiny_llama_weights(spec);
  std::vector<F32Tensor> tensors;
  for (const auto& kv : w) tensors.push_back(kv.second);
  write_file(dir + "/config.json", tiny_llama_config(spec).dump(2));
  write_file(dir + "/model.safetensors", safetensors_bytes(tensors));
  return w;
}

// ----------------------------------------------------------------------------
// float64 reference forward (plain loops, Hugging Face conventions)

namespace {

using Vec = std::vector<double>;

// y = W x with W [out, in] row-major (torch.nn.Linear's weight layout)
Vec matvec(const F32Tensor& w, const Vec& x) {
  const int64_t out = w.shape[0], in = w.shape[1];
  Vec y(static_cast<size_t>(out), 0.0);
  for (int64_t o = 0; o < out; o++)
    for (int64_t i = 0; i < in; i++) y[o] += static_cast<double>(w.values[o * in + i]) * x[i];
  return y;
}

Vec rms_norm(const Vec& x, const F32Tensor& w, double eps) {
  double ss = 0;
  for (double v : x) ss += v * v;
  double r = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + eps);
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); i++) y[i] = x[i] * r * w.values[i];
  return y;
}

// in place, head by head: (x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin), HF's rotate_half form
void rope(Vec& v, int64_t n_heads, int64_t hd, int64_t pos, double theta) {
  const int64_t half = hd / 2;
  for (int64_t h = 0; h < n_heads; h++) {
    for (int64_t i = 0; i < half; i++) {
      double inv_freq = 1.0 / std::pow(theta, static_cast<double>(2 * i) / static_cast<double>(hd));
      double c = std::cos(pos * inv_freq), s = std::sin(pos * inv_freq);
      double x1 = v[h * hd + i], x2 = v[h * hd + half + i];
      v[h * hd + i] = x1 * c - x2 * s;
      v[h * hd + half + i] = x2 * c + x1 * s;
    }
  }
}

}  // namespace

std::vector<std::vector<double>> reference_logprobs(const TinyLlamaSpec& s, const Weights& w, const std::vector<int64_t>& tokens) {
  const int64_t L = static_cast<int64_t>(tokens.size()), H = s.hidden_size, hd = s.head_dim();
  const int64_t heads = s.num_attention_heads, kv_heads = s.num_key_value_heads, n_rep = heads / kv_heads;
  auto W = [&](const std::string& name) -> const F32Tensor& { return w.at(name); };
  auto add_bias = [](Vec& y, const F32Tensor& b) {
    for (size_t i = 0; i < y.size(); i++) y[i] += b.values[i];
  };
  // Qwen3's q/k norm: RMSNorm over each head's hd values with one [hd] weight shared by the heads
  auto norm_heads = [&](Vec& y, int64_t n_heads, const F32Tensor& weight) {
    for (int64_t h = 0; h < n_heads; h++) {
      Vec head(y.begin() + h * hd, y.begin() + (h + 1) * hd);
      head = rms_norm(head, weight, s.rms_norm_eps);
      std::copy(head.begin(), head.end(), y.begin() + h * hd);
    }
  };

  std::vector<Vec> x(static_cast<size_t>(L));
  for (int64_t t = 0; t < L; t++) {
    const F32Tensor& e = W("model.embed_tokens.weight");
    x[t].assign(e.values.begin() + tokens[t] * H, e.values.begin() + (tokens[t] + 1) * H);
  }
  for (int64_t layer = 0; layer < s.num_hidden_layers; layer++) {
    const std::string p = "model.layers." + std::to_string(layer) + ".";
    const int64_t window = s.window_of_layer(layer);
    std::vector<Vec> q(L), k(L), v(L);
    for (int64_t t = 0; t < L; t++) {
      Vec h = rms_norm(x[t], W(p + "input_layernorm.weight"), s.rms_norm_eps);
      q[t] = matvec(W(p + "self_attn.q_proj.weight"), h);
      k[t] = matvec(W(p + "self_attn.k_proj.weight"), h);
      v[t] = matvec(W(p + "self_attn.v_proj.weight"), h);
      if (s.qkv_bias()) {
        add_bias(q[t], W(p + "self_attn.q_proj.bias"));
        add_bias(k[t], W(p + "self_attn.k_proj.bias"));
        add_bias(v[t], W(p + "self_attn.v_proj.bias"));
      }
      if (s.qk_norm()) {
        norm_heads(q[t], heads, W(p + "self_attn.q_norm.weight"));
        norm_heads(k[t], kv_heads, W(p + "self_attn.k_norm.weight"));
      }
      rope(q[t], heads, hd, t, s.rope_theta);
      rope(k[t], kv_heads, hd, t, s.rope_theta);
    }
    for (int64_t t = 0; t < L; t++) {
      // keys t - window < j <= t with a sliding window, 0 <= j <= t without
      const int64_t first = window > 0 ? std::max<int64_t>(0, t - window + 1) : 0;
      Vec att(static_cast<size_t>(heads * hd), 0.0);
      for (int64_t h = 0; h < heads; h++) {
        const int64_t g = h / n_rep;  // the kv head this query head reads
        Vec score(static_cast<size_t>(t + 1 - first));
        double mx = -1e300;
        for (int64_t j = first; j <= t; j++) {
          double dot = 0;
          for (int64_t d = 0; d < hd; d++) dot += q[t][h * hd + d] * k[j][g * hd + d];
          score[j - first] = dot / std::sqrt(static_cast<double>(hd));
          mx = std::max(mx, score[j - first]);
        }
        double z = 0;
        for (double& sc : score) z += (sc = std::exp(sc - mx));
        for (int64_t j = first; j <= t; j++)
          for (int64_t d = 0; d < hd; d++) att[h * hd + d] += score[j - first] / z * v[j][g * hd + d];
      }
      Vec o = matvec(W(p + "self_attn.o_proj.weight"), att);
      if (s.o_bias()) add_bias(o, W(p + "self_attn.o_proj.bias"));
      for (int64_t i = 0; i < H; i++) x[t][i] += o[i];
      Vec h = rms_norm(x[t], W(p + "post_attention_layernorm.weight"), s.rms_norm_eps);
      Vec gate = matvec(W(p + "mlp.gate_proj.weight"), h), up = matvec(W(p + "mlp.up_proj.weight"), h);
      for (size_t i = 0; i < gate.size(); i++) gate[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
      Vec down = matvec(W(p + "mlp.down_proj.weight"), gate);
      for (int64_t i = 0; i < H; i++) x[t][i] += down[i];
    }
  }
  const F32Tensor& head = s.tie_word_embeddings ? W("model.embed_tokens.weight") : W("lm_head.weight");
  std::vector<Vec> out;
  for (int64_t t = 0; t < L; t++) {
    Vec logits = matvec(head, rms_norm(x[t], W("model.norm.weight"), s.rms_norm_eps));
    double mx = -1e300, z = 0;
    for (double l : logits) mx = std::max(mx, l);
    for (double l : logits) z += std::exp(l - mx);
    for (double& l : logits) l = l - mx - std::log(z);
    out.push_back(logits);
  }
  return out;
}

// ----------------------------------------------------------------------------
// processes

RunResult run_process(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                      const std::function<void(const std::string&, int)>& on_line) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    for (const auto& kv : env) ::setenv(kv.first.c_str(), kv.second.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(fds[1]);

  RunResult result;
  std::string pending;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.out.append(buf, static_cast<size_t>(n));
    pending.append(buf, static_cast<size_t>(n));
    size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      if (on_line) on_line(line, pid);
    }
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

  std::istringstream lines(result.out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    result.events.push_back(j.is_discarded() ? json("NOT JSON: " + line) : j);
  }
  return result;
}

}  // namespace bprof::test
