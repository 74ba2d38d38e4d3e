// Test support, torch-free: temporary folders, a small safetensors writer, a seeded tiny Llama
// checkpoint writer, and a way to run the built bprof-runner and read its events.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "job.h"
#include "ranking.h"

namespace bprof::test {

// A fresh folder under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// How far two float32 computations of one log-likelihood may differ: a summed log-probability of
// -88 carries float32 rounding of about 1e-5 whichever order the sums are taken in, so a fixed
// absolute bound fails on long or unlikely continuations. About 8 float32 ulps of the value, and
// never less than 1e-5; a wrong mask or position is off by far more.
inline double float32_logprob_tolerance(double logprob) { return 1e-5 + 1e-6 * (logprob < 0 ? -logprob : logprob); }

void write_file(const std::string& path, const std::string& bytes);
std::string read_file(const std::string& path);

// A safetensors file from a header given as JSON text and a data section, laid out verbatim: the
// tool for writing malformed files.
std::string safetensors_bytes(const std::string& header_json, const std::string& data);

struct F32Tensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values;
};

// A well-formed F32 safetensors file: tensors laid out in the given order.
std::string safetensors_bytes(const std::vector<F32Tensor>& tensors);

// A tiny model of one of the four families. The fields up to seed hold for every family; the
// ones after it are the family switches as config.json states them, and the methods below say
// what each family makes of them (transformers' rules, written here independently of config.cpp).
struct TinyLlamaSpec {
  int64_t vocab_size = 258;  // bytes 0..255, 256 = BOS, 257 = EOS (as the TypeScript side makes them)
  int64_t hidden_size = 32;
  int64_t intermediate_size = 64;
  int64_t num_hidden_layers = 2;
  int64_t num_attention_heads = 4;
  int64_t num_key_value_heads = 2;
  double rms_norm_eps = 1e-5;
  double rope_theta = 10000.0;
  bool tie_word_embeddings = false;
  uint32_t seed = 1234;

  std::string model_type = "llama";  // llama | mistral | qwen2 | qwen3
  int64_t explicit_head_dim = 0;     // > 0: written as head_dim (qwen3 always writes head_dim())
  bool attention_bias = false;       // llama, qwen3: bias on q/k/v/o (mistral: ignored; qwen2: not read)
  int64_t sliding_window = 0;        // mistral, qwen2, qwen3; 0 is written as null
  bool use_sliding_window = false;   // qwen2, qwen3
  int64_t max_window_layers = 0;     // qwen2, qwen3: the first layer with the window

  int64_t head_dim() const { return explicit_head_dim > 0 ? explicit_head_dim : hidden_size / num_attention_heads; }
  bool qkv_bias() const { return model_type == "qwen2" || (attention_bias && (model_type == "llama" || model_type == "qwen3")); }
  bool o_bias() const { return attention_bias && (model_type == "llama" || model_type == "qwen3"); }
  bool qk_norm() const { return model_type == "qwen3"; }
  // 0: full causal attention; otherwise query i sees key j when i - window < j <= i
  int64_t window_of_layer(int64_t layer) const {
    if (model_type == "mistral") return sliding_window;
    if (model_type == "qwen2" || model_type == "qwen3") return use_sliding_window && layer >= max_window_layers ? sliding_window : 0;
    return 0;
  }
};

using Weights = std::map<std::string, F32Tensor>;

// Seeded random weights with Hugging Face names and shapes; the same seed gives the same weights
// on every platform (raw mt19937 output, no std distributions).
Weights tiny_llama_weights(const TinyLlamaSpec& spec);
nlohmann::json tiny_llama_config(const TinyLlamaSpec& spec);
// Writes config.json and model.safetensors into `dir`; returns the weights written.
Weights write_tiny_llama(const std::string& dir, const TinyLlamaSpec& spec = {});

// Three multiple-choice items in the tiny model's vocabulary, of uneven lengths (a one-token choice, a
// seven-token one, a one-token context): what the scoring tests score.
std::vector<Item> sample_choice_items();

// Log-probabilities of the next token at every position, by a float64 loop implementation of the
// Hugging Face Llama/Mistral/Qwen2/Qwen3 forward pass written independently of ATen:
// [position][token]. Covers the spec's switches: q/k/v and o biases, q/k norm, sliding window.
std::vector<std::vector<double>> reference_logprobs(const TinyLlamaSpec& spec, const Weights& weights, const std::vector<int64_t>& tokens);

// Host arrays as the ranking reads them: one span per array, in order.
std::vector<ImportanceSpan> spans_of(const std::vector<std::vector<float>>& arrays);

struct RunResult {
  int exit_code = -1;                  // 128 + signal when killed by one
  std::string out;                     // stdout
  std::vector<nlohmann::json> events;  // stdout parsed line by line
};

// Runs `argv` (argv[0] the program path) with extra environment variables. `on_line` sees each
// stdout line as it arrives, with the child's pid, so a test can signal it mid-run.
RunResult run_process(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {},
                      const std::function<void(const std::string& line, int pid)>& on_line = nullptr);

}  // namespace bprof::test
