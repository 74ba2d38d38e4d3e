// `bprof-runner bench`: the runner's performance record, every ratio measured side by side in one
// process on one machine (PROTOCOL.md, "bench"):
//
//   matmul     peak FLOP/s of a large matrix multiply, the yardstick of model FLOP utilisation
//   scoring    multiple choice with the shared context computed once (KV cache) vs each choice as
//              a full sequence (the lm-eval HF backend's way); items/s, ratio, MFU
//   importance the gradient pass of one ability: tokens/s, MFU, and its memory next to the weights
//   profile    a whole profile the runner's way (one ranking per ability, in-place ablation, the
//              runner's scoring) vs the original pipeline's way as its released code does it
//              (importance on disk, ranking again per k, a damaged checkpoint written per variant
//              and loaded by a fresh model per benchmark, scored as lm-eval does): seconds, bytes
//              written, ratio, and the largest difference between the two ways' scores of the
//              same variant
//
// Models have random weights (throughput does not depend on them), made here from a config, or,
// where a model is named by its folder instead ("scoring_model": "/path"), read from there: an 8B
// model's 16 GB are best made on the GPU host by PyTorch itself (scripts/bench/gpu-8b.sh).
// Cancellation (SIGINT/SIGTERM) is polled between measurements and inside every loop of them; the
// run then ends as `cancelled` (exit 130) with no bench.json and its scratch models removed.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <system_error>
#include <type_traits>

#include "bench.h"
#include "commands.h"
#include "errors.h"
#include "files.h"
#include "job.h"
#include "json_util.h"
#include "ranking.h"
#include "train.h"

namespace bprof {

namespace {

using json = nlohmann::ordered_json;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// ----------------------------------------------------------------------------
// the job: every size has a default; the job overrides what it names

const json kDefaults = {
    {"device", "cpu"},
    {"dtype", "float32"},
    {"seed", 1},
    {"matmul", {{"n", 2048}, {"repeats", 5}}},
    // about 20M parameters, a GQA Llama with an 8k vocabulary
    {"scoring_model",
     {{"model_type", "llama"},
      {"vocab_size", 8192},
      {"hidden_size", 512},
      {"intermediate_size", 1408},
      {"num_hidden_layers", 4},
      {"num_attention_heads", 8},
      {"num_key_value_heads", 4},
      {"max_position_embeddings", 2048}}},
    {"scoring", {{"items", 16}, {"choices", 4}, {"context", 100}, {"continuation", 20}, {"items_per_batch", 8}, {"repeats", 3}}},
    // batch_size: one, or a list measured one after the other (the best is the row's figure)
    {"importance", {{"sequences", 16}, {"length", 128}, {"batch_size", 8}}},
    {"profile_model",
     {{"model_type", "llama"},
      {"vocab_size", 2048},
      {"hidden_size", 256},
      {"intermediate_size", 704},
      {"num_hidden_layers", 4},
      {"num_attention_heads", 4},
      {"num_key_value_heads", 4},
      {"max_position_embeddings", 2048}}},
    // The paper's proportions, scaled down 50 times: about 2000 diagnostic items per ability -> 40
    // sequences of 48 tokens; benchmarks of a few hundred items -> 4 benchmarks of 10 items, 4
    // choices, 48 context and 8 continuation tokens. An ability's importance pass (forward and
    // backward over 40 x 48 tokens) then costs about as much as scoring the benchmarks for 4
    // variants the runner's way, as 2000 items of ~150 tokens do against 4 x 500 items.
    {"profile",
     {{"abilities", 10},
      {"sequences", 40},
      {"length", 48},
      {"batch_size", 8},
      {"k", {0.00001, 0.00004, 0.00016, 0.00064, 0.00256, 0.01024}},
      {"benchmarks", 4},
      {"items", 10},
      {"choices", 4},
      {"context", 48},
      {"continuation", 8},
      // the ways measured: the runner's ("in_place") and the original pipeline's
      // ("checkpoint_per_variant", a full checkpoint written per variant: leave it out at 8B)
      {"ways", {"in_place", "checkpoint_per_variant"}}}},
    {"rows", {"matmul", "scoring", "importance", "profile"}},
};

json load_bench_job(const std::string& path) {
  std::string text;
  if (!read_file_if_exists(path, text)) throw RunnerError(ErrorCode::bad_job, path + ": cannot read the job file");
  json given;
  try {
    given = json::parse(text);
  } catch (const json::exception& e) {
    throw RunnerError(ErrorCode::bad_job, path + ": not valid JSON: " + e.what());
  }
  if (!given.is_object()) throw RunnerError(ErrorCode::bad_job, path + ": not a JSON object");
  json job = kDefaults;
  for (auto it = given.begin(); it != given.end(); ++it) {
    if (it.key() == "protocol" || it.key() == "subcommand") continue;
    if (!job.contains(it.key())) throw RunnerError(ErrorCode::bad_job, path + ": unknown field '" + it.key() + "'");
    if (job[it.key()].is_object() && it.value().is_object() && it.key().find("_model") == std::string::npos)
      job[it.key()].update(it.value());  // sizes: override one by one
    else
      job[it.key()] = it.value();  // a model config is replaced whole
  }
  return job;
}

int64_t size_of(const json& section, const char* key, const std::string& where) {
  const json& v = section.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() < 1)
    throw RunnerError(ErrorCode::bad_job, "'" + where + "." + key + "' must be a positive integer, got " + describe_json(v));
  return v.get<int64_t>();
}

// ----------------------------------------------------------------------------
// models and data

// Ends the run as `cancelled` once SIGINT or SIGTERM came (main.cpp): called between measurements
// and inside their loops, so that the bench stops within a batch.
void poll(const Command& command, const std::string& where) {
  if (command.cancelled()) throw RunnerError(ErrorCode::cancelled, "cancelled during " + where);
}

// Removes a scratch folder however the scope is left (a cancelled run leaves no models behind).
class ScratchDir {
 public:
  explicit ScratchDir(std::string dir) : dir_(std::move(dir)) {}
  ~ScratchDir() { remove_tree(dir_); }
  const std::string& path() const { return dir_; }

 private:
  std::string dir_;
};

// A random-weight model folder made with the training code's initialization (0 steps).
std::string make_random_model(const json& config, uint64_t seed, const std::string& dir, const Command& command) {
  poll(command, "the making of a bench model");
  TrainJob job;
  job.config = parse_model_config(config.dump(), "bench model config");
  job.train.seed = seed;
  TrainCallbacks callbacks;
  callbacks.cancelled = [&command] { return command.cancelled(); };
  TrainResult model = train_llama(job, callbacks);
  poll(command, "the making of a bench model");
  prepare_output_dir(dir);
  write_file_atomic(dir + "/model.safetensors", serialize_safetensors(model.tensors));
  write_file_atomic(dir + "/config.json", config.dump(2));
  return dir;
}

// A job's model: a folder named by its path, or a config to make a random model from.
std::string bench_model(const json& model, uint64_t seed, const std::string& dir, const Command& command) {
  if (model.is_string()) {
    const std::string folder = model;
    if (!std::filesystem::exists(folder + "/config.json"))
      throw RunnerError(ErrorCode::bad_job, "bench model folder '" + folder + "' has no config.json");
    return folder;
  }
  return make_random_model(model, seed, dir, command);
}

std::unique_ptr<Engine> open_model(const std::string& dir, const json& job, const Command& command) {
  EngineOptions options;
  options.model_dir = dir;
  options.dtype = job["dtype"];
  options.device = job["device"];
  options.cancelled = [&command] { return command.cancelled(); };
  return std::make_unique<Engine>(load_model_config(dir), options);
}

std::vector<int64_t> random_tokens(std::mt19937_64& rng, int64_t n, int64_t vocab) {
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t& t : out) t = static_cast<int64_t>(rng() % static_cast<uint64_t>(vocab));
  return out;
}

std::vector<Item> random_items(std::mt19937_64& rng, const json& sizes, int64_t vocab, const std::string& prefix,
                               const std::string& where) {
  std::vector<Item> items;
  for (int64_t i = 0; i < size_of(sizes, "items", where); i++) {
    Item item{prefix + std::to_string(i), random_tokens(rng, size_of(sizes, "context", where), vocab), {}};
    for (int64_t c = 0; c < size_of(sizes, "choices", where); c++)
      item.choices.push_back(random_tokens(rng, size_of(sizes, "continuation", where), vocab));
    items.push_back(std::move(item));
  }
  return items;
}

std::vector<ItemScores> score_in_batches(Engine& engine, const std::vector<Item>& items, int64_t per_batch, bool full,
                                         const Command& command) {
  std::vector<ItemScores> out;
  for (size_t start = 0; start < items.size(); start += static_cast<size_t>(per_batch)) {
    poll(command, "scoring");
    std::vector<const Item*> batch;
    for (size_t i = start; i < std::min(items.size(), start + static_cast<size_t>(per_batch)); i++) batch.push_back(&items[i]);
    std::vector<ItemScores> scores = full ? engine.score_full_sequences(batch) : engine.score(batch);
    out.insert(out.end(), scores.begin(), scores.end());
  }
  return out;
}

// ----------------------------------------------------------------------------
// FLOPs (multiply-adds count 2): the work the method needs, the same figure whatever the way.
//
// Counted: every token of the sequences the method reads goes through every layer once (the q, k,
// v, o projections and the three MLP matrices: 2 x their weights per token; in a mixture of
// experts the matrices of the token's own experts_per_token experts and the router's, the
// active experts only); attention costs q k^T
// and p v over the keys the token may see (its own earlier positions, and for a choice the
// item's context; in a sliding-window layer the last `window` of those), not over masked keys or
// padding; lm_head runs on the positions whose
// log-probabilities are read and on no other. Not counted, although the runner computes it:
// padding, attention to masked keys (a packed row's other choices, later positions), and the
// norms, RoPE, softmax and other element-wise work. Also counted although no score reads it: the
// last layer's output at context positions other than the last (it is part of a forward pass over
// the context, whose keys and values the choices need from every layer).

struct Flops {
  const ModelConfig& c;
  double q_dim() const { return static_cast<double>(c.num_attention_heads * c.head_dim); }
  double kv_dim() const { return static_cast<double>(c.num_key_value_heads * c.head_dim); }
  // the MLP weights one token multiplies by in a layer: its own experts' only in a mixture of experts
  // (experts_per_token of them), and the router's
  double mlp_weights_per_token() const {
    const double H = static_cast<double>(c.hidden_size);
    if (c.num_experts == 0) return 3 * H * static_cast<double>(c.intermediate_size);
    return static_cast<double>(c.experts_per_token) * 3 * H * static_cast<double>(c.expert_intermediate_size) +
           static_cast<double>(c.num_experts) * H;
  }
  // projections and MLP of every layer, per token
  double per_token() const {
    const double H = static_cast<double>(c.hidden_size);
    return 2.0 * static_cast<double>(c.num_hidden_layers) * (2 * H * q_dim() + 2 * H * kv_dim() + mlp_weights_per_token());
  }
  // the keys that queries at positions past + 1 .. past + n (counted from 1) see in one layer: each
  // its own and every earlier one, or in a sliding-window layer only the last `window` of those
  static double keys_seen(double past, double n, double window) {
    const double first = past + 1, last = past + n;
    if (window <= 0 || last <= window) return n * (first + last) / 2;
    if (first > window) return n * window;
    return (window - first + 1) * (first + window) / 2 + (last - window) * window;
  }
  // q k^T and p v of n tokens after `past` cached ones, every layer over the keys its mask lets in
  double attention(double past, double n) const {
    double keys = 0;
    for (int64_t layer = 0; layer < c.num_hidden_layers; layer++) keys += keys_seen(past, n, static_cast<double>(c.window_of_layer(layer)));
    return 4.0 * q_dim() * keys;
  }
  double lm_head() const { return 2.0 * static_cast<double>(c.vocab_size * c.hidden_size); }
  // the candidates' weight gradients: a token's own experts only in a mixture (the router's is not taken)
  double mlp_weight_gradients_per_token() const {
    const double I = static_cast<double>(c.num_experts == 0 ? c.intermediate_size : c.experts_per_token * c.expert_intermediate_size);
    return 2.0 * static_cast<double>(c.num_hidden_layers) * 3.0 * static_cast<double>(c.hidden_size) * I;
  }

  // a causal pass over `n` new tokens after `past` cached ones
  double pass(double past, double n) const { return n * per_token() + attention(past, n); }

  // scoring one item: its context once, and each choice without its last token after it. lm_head
  // on the rows whose log-probabilities are read: the context's last position once (it predicts
  // the first token of every choice, and the runner reads all of them off that one row) and the
  // m - 1 positions of each choice of m tokens.
  double scoring(const Item& item) const {
    const double ctx = static_cast<double>(item.context.size());
    double f = pass(0, ctx) + lm_head();
    for (const auto& choice : item.choices) {
      const double m = static_cast<double>(choice.size());
      f += pass(ctx, m - 1) + (m - 1) * lm_head();
    }
    return f;
  }
  // forward + backward of the importance pass: the backward pass costs a forward again for the
  // activation gradients, plus the weight gradients of the MLP candidates only
  double importance(double sequences, double length) const {
    const double predicted = sequences * (length - 1);
    const double forward = sequences * pass(0, length - 1) + predicted * lm_head();
    return 2.0 * forward + predicted * mlp_weight_gradients_per_token();
  }
};

// ----------------------------------------------------------------------------
// the rows

json matmul_row(const json& job, const Command& command) {
  const int64_t n = size_of(job["matmul"], "n", "matmul");
  const double peak = matmul_flops_per_second(job["device"], job["dtype"], n, static_cast<int>(size_of(job["matmul"], "repeats", "matmul")),
                                              [&command] { return command.cancelled(); });
  command.events.progress("bench-matmul", 1, 1);
  return {{"n", n}, {"dtype", job["dtype"]}, {"flops_per_second", peak}};
}

json scoring_row(const json& job, const Command& command, Engine& engine, const ModelConfig& config) {
  std::mt19937_64 rng(job["seed"].get<uint64_t>());
  const json& sizes = job["scoring"];
  const std::vector<Item> items = random_items(rng, sizes, config.vocab_size, "s", "scoring");
  const int64_t per_batch = size_of(sizes, "items_per_batch", "scoring");
  const int64_t repeats = size_of(sizes, "repeats", "scoring");

  // alternate the two ways so that a slow moment of the machine hurts both alike; keep the best
  double kv_best = 1e300, full_best = 1e300, worst_difference = 0;
  score_in_batches(engine, items, per_batch, false, command);  // warm-up
  for (int64_t r = 0; r < repeats; r++) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<ItemScores> kv = score_in_batches(engine, items, per_batch, false, command);
    kv_best = std::min(kv_best, seconds_since(t0));
    t0 = std::chrono::steady_clock::now();
    std::vector<ItemScores> full = score_in_batches(engine, items, per_batch, true, command);
    full_best = std::min(full_best, seconds_since(t0));
    for (size_t i = 0; i < items.size(); i++)
      for (size_t c = 0; c < kv[i].size(); c++)
        worst_difference = std::max(worst_difference, std::abs(kv[i][c].logprob - full[i][c].logprob));
    command.events.progress("bench-scoring", r + 1, repeats);
  }
  double flops = 0;
  Flops f{config};
  for (const Item& item : items) flops += f.scoring(item);
  const double n = static_cast<double>(items.size());
  return {{"parameters", engine.parameter_count()},
          {"items", items.size()},
          {"choices", sizes["choices"]},
          {"context_tokens", sizes["context"]},
          {"continuation_tokens", sizes["continuation"]},
          {"flops", flops},
          {"kv_cache", {{"seconds", kv_best}, {"items_per_second", n / kv_best}, {"flops_per_second", flops / kv_best}}},
          {"full_sequences", {{"seconds", full_best}, {"items_per_second", n / full_best}, {"flops_per_second", flops / full_best}}},
          {"speedup", full_best / kv_best},
          {"max_logprob_difference", worst_difference}};
}

// One measurement of the importance pass per batch size, on the same sequences, each after a
// warm-up at its size: the time of the forward and backward passes (the gradient sums), and of
// r = -theta * g brought to the host, apart.
json importance_row(const json& job, const Command& command, Engine& engine, const ModelConfig& config) {
  std::mt19937_64 rng(job["seed"].get<uint64_t>() + 1);
  const json& sizes = job["importance"];
  const int64_t length = size_of(sizes, "length", "importance");
  std::vector<std::vector<int64_t>> sequences;
  for (int64_t s = 0; s < size_of(sizes, "sequences", "importance"); s++)
    sequences.push_back(random_tokens(rng, length, config.vocab_size));
  const auto candidates = engine.candidates(0, 0);
  int64_t candidate_count = 0;
  for (const CandidateTensor& c : candidates) candidate_count += c.numel;
  const int64_t element = job["dtype"] == "float32" ? 4 : 2;
  const int64_t weights_bytes = engine.parameter_count() * element;
  std::vector<int64_t> batch_sizes;
  if (sizes["batch_size"].is_array()) {
    for (const json& b : sizes["batch_size"]) batch_sizes.push_back(size_of(json{{"batch_size", b}}, "batch_size", "importance"));
  } else {
    batch_sizes.push_back(size_of(sizes, "batch_size", "importance"));
  }
  const double flops = Flops{config}.importance(static_cast<double>(sequences.size()), static_cast<double>(length));
  const double tokens = static_cast<double>(sequences.size() * static_cast<size_t>(length));

  auto cancelled = [&command] { return command.cancelled(); };
  const int64_t resident_before = resident_bytes();
  reset_peak_memory();
  json measured = json::array();
  size_t best = 0;
  for (size_t i = 0; i < batch_sizes.size(); i++) {
    engine.first_order_loss_rise(sequences, batch_sizes[i], candidates, nullptr, cancelled);  // warm-up
    ImportanceTimes times;
    auto t0 = std::chrono::steady_clock::now();
    engine.first_order_loss_rise(sequences, batch_sizes[i], candidates, nullptr, cancelled, {}, nullptr, &times);
    const double seconds = seconds_since(t0);
    measured.push_back({{"batch_size", batch_sizes[i]},
                        {"seconds", seconds},
                        {"passes_seconds", times.passes_seconds},
                        {"rise_seconds", times.rise_seconds},
                        {"tokens_per_second", tokens / seconds},
                        {"flops_per_second", flops / seconds},
                        {"passes_flops_per_second", flops / times.passes_seconds}});
    if (seconds < measured[best]["seconds"].get<double>()) best = i;
    command.events.progress("bench-importance", static_cast<int64_t>(i + 1), static_cast<int64_t>(batch_sizes.size()));
  }
  const int64_t peak_resident = peak_resident_bytes();

  json row = {{"sequences", sequences.size()}, {"length", length}, {"flops", flops}};
  for (const char* key :
       {"batch_size", "seconds", "passes_seconds", "rise_seconds", "tokens_per_second", "flops_per_second", "passes_flops_per_second"})
    row[key] = measured[best][key];
  row["by_batch_size"] = measured;
  row["memory"] = {{"weights_bytes", weights_bytes},
                   {"float32_accumulator_bytes", candidate_count * 4},
                   {"host_importance_bytes", candidate_count * 4},
                   {"peak_resident_increase_bytes", peak_resident > 0 ? json(peak_resident - resident_before) : json(nullptr)}};
  return row;
}

// Batches of full sequences (context ++ choice without its last token, one row per choice) of at
// most `max_tokens` padded tokens, items never split: the original pipeline's forward passes get
// the same token budget as the runner's (plan_batches).
std::vector<std::pair<size_t, size_t>> full_sequence_batches(const std::vector<Item>& items, int64_t max_tokens) {
  return plan_padded_batches(
      items.size(),
      [&](size_t i) {
        int64_t longest = 0;
        for (size_t c = 0; c < items[i].choices.size(); c++) longest = std::max(longest, input_length(items[i], c));
        return RowsAndLength{static_cast<int64_t>(items[i].choices.size()), longest};
      },
      max_tokens);
}

std::vector<ItemScores> score_batches(Engine& engine, const std::vector<Item>& items, const std::vector<std::pair<size_t, size_t>>& batches,
                                      bool lm_eval, const Command& command) {
  std::vector<ItemScores> out;
  for (const auto& [first, last] : batches) {
    poll(command, "profile scoring");
    std::vector<const Item*> batch;
    for (size_t i = first; i < last; i++) batch.push_back(&items[i]);
    std::vector<ItemScores> scores = lm_eval ? engine.score_full_sequences(batch, /*every_position=*/true) : engine.score(batch);
    out.insert(out.end(), scores.begin(), scores.end());
  }
  return out;
}

// Seconds spent in each part of a way, summed over the run.
struct Stopwatch {
  std::map<std::string, double> parts;
  template <typename F>
  auto time(const std::string& part, F&& work) {
    const auto t0 = std::chrono::steady_clock::now();
    if constexpr (std::is_void_v<decltype(work())>) {
      work();
      parts[part] += seconds_since(t0);
    } else {
      auto result = work();
      parts[part] += seconds_since(t0);
      return result;
    }
  }
  double total() const {
    double sum = 0;
    for (const auto& [part, seconds] : parts) sum += seconds;
    return sum;
  }
  json to_json(int64_t bytes_written) const {
    json out = {{"seconds", total()}, {"bytes_written", bytes_written}};
    json breakdown = json::object();
    for (const auto& [part, seconds] : parts) breakdown[part] = seconds;
    out["seconds_by_part"] = breakdown;
    return out;
  }
};

using Sequences = std::vector<std::vector<int64_t>>;
using ScoresByK = std::vector<std::vector<ItemScores>>;

// What both ways of the profile row work on: the model, the benchmarks' items, the abilities'
// diagnostic sequences, the MLP candidates and the n of every k; and the row's progress.
struct ProfileBench {
  ProfileBench(const json& job_, const Command& command_, const std::string& model_dir_)
      : job(job_),
        sizes(job_["profile"]),
        command(command_),
        model_dir(model_dir_),
        engine(open_model(model_dir_, job_, command_)),
        config(load_model_config(model_dir_)),
        seed(job_["seed"].get<uint64_t>()) {
    std::mt19937_64 rng(seed + 2);
    benchmarks = size_of(sizes, "benchmarks", "profile");
    for (int64_t b = 0; b < benchmarks; b++) {
      std::vector<Item> benchmark = random_items(rng, sizes, config.vocab_size, "b" + std::to_string(b) + "/", "profile");
      items.insert(items.end(), benchmark.begin(), benchmark.end());
    }
    abilities.resize(static_cast<size_t>(size_of(sizes, "abilities", "profile")));
    for (auto& sequences : abilities)
      for (int64_t s = 0; s < size_of(sizes, "sequences", "profile"); s++)
        sequences.push_back(random_tokens(rng, size_of(sizes, "length", "profile"), config.vocab_size));
    batch_size = size_of(sizes, "batch_size", "profile");
    candidates = engine->candidates(0, 0);
    candidate_count = candidates.back().offset + candidates.back().numel;
    parameters = engine->parameter_count();
    for (const json& k : sizes["k"]) {
      n.push_back(parameters_for_k(k.get<double>(), parameters));
      if (n.back() > candidate_count) throw RunnerError(ErrorCode::bad_job, "'profile.k' asks for more parameters than the MLP candidates");
    }
    variants_per_way = static_cast<int64_t>((abilities.size() + 1) * n.size());
  }

  // The importance pass over an ability's sequences: what both ways rank.
  std::vector<std::vector<float>> importance(const Sequences& sequences) {
    return engine->first_order_loss_rise(sequences, batch_size, candidates, nullptr, [this] { return command.cancelled(); });
  }

  void variant_done() { command.events.progress("bench-profile", ++done, 2 * variants_per_way); }

  const json& job;
  const json& sizes;
  const Command& command;
  const std::string model_dir;
  std::unique_ptr<Engine> engine;
  const ModelConfig config;
  const uint64_t seed;
  int64_t benchmarks = 0;
  std::vector<Item> items;
  std::vector<Sequences> abilities;
  int64_t batch_size = 0;
  std::vector<CandidateTensor> candidates;
  int64_t candidate_count = 0;
  int64_t parameters = 0;
  std::vector<int64_t> n;
  int64_t variants_per_way = 0;
  int64_t done = 0;
};

// The runner's way, what `profile` does: one importance pass and one ranking per ability serve
// every k; each variant is ablated in place, scored by Engine::score in plan_batches batches, and
// restored.
class InPlaceWay {
 public:
  explicit InPlaceWay(ProfileBench& bench) : bench_(bench), batches_(plan_batches(bench.items, kDefaultBatchTokens)) {}

  const std::vector<std::pair<size_t, size_t>>& batches() const { return batches_; }
  const Stopwatch& clock() const { return clock_; }

  // An ability's variants (the random control's without sequences) at every k; `ranking` gets
  // the order the variants zero the candidates in.
  ScoresByK run(const Sequences* sequences, std::vector<int64_t>& ranking) {
    ranking = sequences ? rank(*sequences, bench_.n.back())
                        : clock_.time("rank", [&] { return draw_random(bench_.candidate_count, bench_.n.back(), bench_.seed); });
    ScoresByK scores;
    for (int64_t count : bench_.n) {
      poll(bench_.command, "the profile row");
      clock_.time("ablate", [&] { bench_.engine->ablate(bench_.candidates, ranking.data(), count); });
      scores.push_back(clock_.time("score", [&] { return score_batches(*bench_.engine, bench_.items, batches_, false, bench_.command); }));
      clock_.time("restore", [&] { bench_.engine->restore(); });
      bench_.variant_done();
    }
    return scores;
  }

 private:
  // As `profile` ranks: on a GPU where r is, in the same call as the pass (timed as `importance`)
  std::vector<int64_t> rank(const Sequences& sequences, int64_t count) {
    if (bench_.engine->on_gpu()) {
      std::vector<size_t> all(bench_.candidates.size());
      for (size_t t = 0; t < all.size(); t++) all[t] = t;
      return clock_.time("importance", [&] {
        return bench_.engine
            ->rank_first_order_loss_rise(sequences, bench_.batch_size, bench_.candidates, nullptr,
                                         [this] { return bench_.command.cancelled(); }, {{all, RankKey::magnitude, true, count, {}}})
            .front()
            .ranking;
      });
    }
    std::vector<std::vector<float>> importance = clock_.time("importance", [&] { return bench_.importance(sequences); });
    return clock_.time("rank", [&] {
      std::vector<ImportanceSpan> spans;
      for (const auto& v : importance) spans.push_back({v.data(), static_cast<int64_t>(v.size())});
      return rank_top(spans, count, RankKey::magnitude);
    });
  }

  ProfileBench& bench_;
  const std::vector<std::pair<size_t, size_t>> batches_;
  Stopwatch clock_;
};

// The original pipeline's way, as its released code does it (the steps are listed above
// profile_row), through these files in scratch (every write fsync'ed; removed at the end):
//   importance.bin  an ability's importance, once per ability. The released code saves theta *
//                   gradient for every parameter in bfloat16 (2 bytes a parameter); here the
//                   candidates' float32 values (4 bytes a candidate: about as many bytes for this
//                   model, and the very values the runner ranks, so that both ways zero the same
//                   parameters)
//   mask.bin        a variant's mask, one byte per parameter (torch.save of a bool mask per tensor)
//   damaged/        the damaged model: config.json and model.safetensors, every parameter
class OriginalPipeline {
 public:
  OriginalPipeline(ProfileBench& bench, const std::string& scratch)
      : bench_(bench), files_(scratch + "/original"), damaged_dir_(files_ + "/damaged") {
    prepare_output_dir(damaged_dir_);
    read_file_if_exists(bench_.model_dir + "/config.json", config_text_);
    // lm-eval runs once per (variant, benchmark): a fresh model and that benchmark's items
    const int64_t per_benchmark = size_of(bench_.sizes, "items", "profile");
    for (int64_t b = 0; b < bench_.benchmarks; b++) {
      const size_t first = static_cast<size_t>(b * per_benchmark);
      std::vector<Item> slice(bench_.items.begin() + static_cast<std::ptrdiff_t>(first),
                              bench_.items.begin() + static_cast<std::ptrdiff_t>(first + static_cast<size_t>(per_benchmark)));
      benchmark_batches_.emplace_back();
      for (const auto& [from, to] : full_sequence_batches(slice, kDefaultBatchTokens))
        benchmark_batches_.back().emplace_back(first + from, first + to);
    }
  }

  const Stopwatch& clock() const { return clock_; }
  int64_t bytes_written() const { return bytes_written_; }
  void remove_files() { remove_tree(files_); }

  // An ability's variants (the random control's without sequences) at every k; `zeroed[i]` gets
  // the candidates the i-th k's damaged model has zeroed, as read back from its mask.
  ScoresByK run(const Sequences* sequences, std::vector<std::vector<int64_t>>& zeroed) {
    if (sequences) importance_to_disk(*sequences);
    ScoresByK scores;
    for (size_t i = 0; i < bench_.n.size(); i++) {
      const std::vector<int64_t> selection =
          sequences ? extract(bench_.n[i])
                    : clock_.time("rank", [&] { return draw_random(bench_.candidate_count, bench_.n[i], bench_.seed); });
      scores.push_back(via_checkpoint(selection, bench_.n[i], zeroed[i]));
    }
    return scores;
  }

 private:
  void write_counted(const std::string& path, const std::string& bytes) {
    write_file_atomic(path, bytes);
    bytes_written_ += static_cast<int64_t>(bytes.size());
  }

  // step 1, once per ability: the importance pass, its values written to disk
  void importance_to_disk(const Sequences& sequences) {
    std::vector<std::vector<float>> importance = clock_.time("importance", [&] { return bench_.importance(sequences); });
    clock_.time("importance", [&] {
      std::string bytes;
      for (const auto& v : importance) bytes.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
      write_counted(files_ + "/importance.bin", bytes);
    });
  }

  // step 2, per (ability, k): the importance read back and ranked
  std::vector<int64_t> extract(int64_t count) {
    return clock_.time("rank", [&] {
      std::string bytes;
      read_file_if_exists(files_ + "/importance.bin", bytes);
      const float* values = reinterpret_cast<const float*>(bytes.data());
      std::vector<ImportanceSpan> spans;
      for (const CandidateTensor& c : bench_.candidates) spans.push_back({values + c.offset, c.numel});
      return rank_top(spans, count, RankKey::magnitude);
    });
  }

  // steps 2b-4, per variant: the mask written; a fresh copy of the original model damaged by it
  // and saved; per benchmark a fresh model loaded from that checkpoint, scored as lm-eval does
  std::vector<ItemScores> via_checkpoint(const std::vector<int64_t>& selection, int64_t count, std::vector<int64_t>& zeroed) {
    poll(bench_.command, "the profile row");
    clock_.time("mask", [&] {
      std::string mask(static_cast<size_t>(bench_.parameters), '\0');
      for (int64_t i = 0; i < count; i++) mask[static_cast<size_t>(selection[static_cast<size_t>(i)])] = 1;
      write_counted(files_ + "/mask.bin", mask);
    });
    clock_.time("damage", [&] {
      std::string mask;
      read_file_if_exists(files_ + "/mask.bin", mask);
      zeroed.clear();
      for (int64_t g = 0; g < bench_.candidate_count; g++)
        if (mask[static_cast<size_t>(g)]) zeroed.push_back(g);
      std::unique_ptr<Engine> fresh = open_model(bench_.model_dir, bench_.job, bench_.command);  // from_pretrained(original_model)
      fresh->ablate(bench_.candidates, zeroed.data(), static_cast<int64_t>(zeroed.size()));
      const std::string bytes = fresh->checkpoint_bytes();
      write_counted(damaged_dir_ + "/config.json", config_text_);
      write_counted(damaged_dir_ + "/model.safetensors", bytes);
    });
    std::vector<ItemScores> scores;
    for (const auto& batches : benchmark_batches_) {
      std::unique_ptr<Engine> damaged = clock_.time("load", [&] { return open_model(damaged_dir_, bench_.job, bench_.command); });
      std::vector<ItemScores> s =
          clock_.time("score", [&] { return score_batches(*damaged, bench_.items, batches, true, bench_.command); });
      scores.insert(scores.end(), s.begin(), s.end());
    }
    bench_.variant_done();
    return scores;
  }

  ProfileBench& bench_;
  const std::string files_, damaged_dir_;
  std::string config_text_;
  std::vector<std::vector<std::pair<size_t, size_t>>> benchmark_batches_;
  Stopwatch clock_;
  int64_t bytes_written_ = 0;
};

// The same variant both ways: the same parameters zeroed, and the same scores up to float rounding.
struct WaysCompared {
  double worst_difference = 0;
  int64_t greedy_disagreements = 0, selection_mismatches = 0;

  void add(const std::vector<ItemScores>& ours, const std::vector<ItemScores>& theirs, const std::vector<int64_t>& ranking,
           std::vector<int64_t> zeroed, int64_t count) {
    std::vector<int64_t> a(ranking.begin(), ranking.begin() + count);
    std::sort(a.begin(), a.end());
    std::sort(zeroed.begin(), zeroed.end());
    if (a != zeroed) selection_mismatches++;
    for (size_t i = 0; i < ours.size(); i++)
      for (size_t c = 0; c < ours[i].size(); c++) {
        worst_difference = std::max(worst_difference, std::abs(ours[i][c].logprob - theirs[i][c].logprob));
        if (ours[i][c].greedy != theirs[i][c].greedy) greedy_disagreements++;
      }
  }
};

// A whole profile twice, the same variants both ways, measured interleaved: for each ability the
// runner's way and the original pipeline's way, one after the other (which goes first alternates
// from ability to ability), then the random control both ways, so that a slow moment of the
// machine falls on both alike. Only the ways' own work is timed; comparing their scores is not.
//
// The runner's way is what `profile` does: one importance pass and one ranking per ability serve
// every k; each variant is ablated in place, scored by Engine::score in plan_batches batches, and
// restored.
//
// The original pipeline's way follows the authors' released code (run.sh, accumulate_grad.py,
// extract_region.py, damage_model.py of Kim et al.'s repository), in the same process:
//   1. per ability, once: the importance pass (gradient accumulation), theta * gradient saved
//      to disk;
//   2. per (ability, k): the importance read back from disk and ranked again (extract_region),
//      the variant's mask saved;
//   3. per variant: a fresh copy of the original model loaded, the mask applied, the damaged model
//      saved as a full checkpoint (damage_model);
//   4. per (variant, benchmark): a fresh model loaded from that checkpoint (one lm_eval process
//      each) and the benchmark scored as lm-eval scores multiple choice: every choice as a full
//      sequence context ++ choice, log-probabilities at every position (its Hugging Face backend
//      takes log_softmax over the whole batch; the vLLM backend the released code names asks for
//      prompt log-probabilities, which vLLM computes at every prompt position, bypassing its
//      prefix cache).
// Both ways' forward passes get the same token budget.
//
// Files are fsync'ed (write_file_atomic): at the paper's scale a damaged checkpoint is 16 to 32 GB
// and a sweep terabytes, which no page cache absorbs, so writeback holds the writer to the disk's
// speed; at the bench's scale the page cache would absorb the whole sweep (and a file replaced
// before its writeback would never reach the disk at all). Reading back comes from the page cache,
// the original's most favourable case. Not reproduced, all to the original's advantage: starting
// a process per step and per (variant, benchmark) (Python, torch, DeepSpeed or vLLM start-up);
// gradients for every parameter rather than the MLP candidates; diagnostic batches padded to
// max_seq_len (1024) rather than to their longest sequence; bottom masks and models, which the
// released code makes for every k alongside the top ones.
json profile_row(const json& job, const Command& command, const std::string& model_dir, const std::string& scratch) {
  ProfileBench bench(job, command, model_dir);
  InPlaceWay runner(bench);
  bool with_original = false;
  for (const json& way : bench.sizes["ways"]) {
    if (way == "checkpoint_per_variant")
      with_original = true;
    else if (way != "in_place")
      throw RunnerError(ErrorCode::bad_job, "'profile.ways' takes in_place and checkpoint_per_variant, got " + describe_json(way));
  }

  // warm-up, untimed: the first passes of a process pay for allocations and lazy initialization
  bench.importance(bench.abilities.front());
  score_batches(*bench.engine, bench.items, runner.batches(), false, command);
  if (with_original) score_batches(*bench.engine, bench.items, full_sequence_batches(bench.items, kDefaultBatchTokens), true, command);

  std::optional<OriginalPipeline> original;
  if (with_original) original.emplace(bench, scratch);
  WaysCompared compared;
  // one ability (or, with none, the random control) both ways; which way goes first alternates
  auto both_ways = [&](const Sequences* sequences, bool runner_first) {
    std::vector<int64_t> ranking;
    ScoresByK ours, theirs;
    std::vector<std::vector<int64_t>> zeroed(bench.n.size());
    if (!original) {
      runner.run(sequences, ranking);
      return;
    }
    if (runner_first) {
      ours = runner.run(sequences, ranking);
      theirs = original->run(sequences, zeroed);
    } else {
      theirs = original->run(sequences, zeroed);
      ours = runner.run(sequences, ranking);
    }
    for (size_t i = 0; i < bench.n.size(); i++) compared.add(ours[i], theirs[i], ranking, zeroed[i], bench.n[i]);
  };
  for (size_t a = 0; a < bench.abilities.size(); a++) both_ways(&bench.abilities[a], a % 2 == 0);
  both_ways(nullptr, bench.abilities.size() % 2 == 0);
  if (original) original->remove_files();

  // the FLOPs the method needs for the whole profile, the same for both ways: each ability's
  // importance pass, and every item scored once per variant (the random control's ranking is free)
  const Flops flops{bench.config};
  double profile_flops = 0;
  for (const Sequences& sequences : bench.abilities)
    profile_flops += flops.importance(static_cast<double>(sequences.size()), static_cast<double>(sequences.front().size()));
  double scoring_flops = 0;
  for (const Item& item : bench.items) scoring_flops += flops.scoring(item);
  profile_flops += static_cast<double>(bench.variants_per_way) * scoring_flops;
  json in_place = runner.clock().to_json(0);
  in_place["flops_per_second"] = profile_flops / runner.clock().total();

  const json& sizes = bench.sizes;
  json row = {{"parameters", bench.parameters},
              {"abilities", bench.abilities.size()},
              {"diagnostic_sequences", sizes["sequences"]},
              {"diagnostic_tokens", sizes["length"]},
              {"benchmarks", bench.benchmarks},
              {"items", bench.items.size()},
              {"choices", sizes["choices"]},
              {"context_tokens", sizes["context"]},
              {"continuation_tokens", sizes["continuation"]},
              {"k", sizes["k"]},
              {"variants", bench.variants_per_way},
              {"flops", profile_flops},
              {"in_place", in_place}};
  if (original) {
    json checkpoint_per_variant = original->clock().to_json(original->bytes_written());
    checkpoint_per_variant["flops_per_second"] = profile_flops / original->clock().total();
    row["checkpoint_per_variant"] = checkpoint_per_variant;
    row["speedup"] = original->clock().total() / runner.clock().total();
    row["max_logprob_difference"] = compared.worst_difference;
    row["greedy_disagreements"] = compared.greedy_disagreements;
    row["selection_mismatches"] = compared.selection_mismatches;
  }
  return row;
}

}  // namespace

int run_bench(const Command& command) {
  const auto t0 = std::chrono::steady_clock::now();
  json job = load_bench_job(command.args.job);
  int threads = set_compute_threads(command.args.threads);
  command.events.start("bench", kRunnerVersion, job["device"], threads);
  const std::string out = command.args.out;
  prepare_output_dir(out);
  check_compute_target(job["device"], job["dtype"]);
  auto wants = [&](const std::string& row) {
    for (const json& r : job["rows"])
      if (r == row) return true;
    return false;
  };

  json report = {{"runner_version", kRunnerVersion},
                 {"libtorch", libtorch_version()},
                 {"device", job["device"]},
                 {"dtype", job["dtype"]},
                 {"threads", threads}};
  // a GPU's figures mean little without its name (the record is read on another machine)
  const std::string device = job["device"];
  if (device.rfind("cuda", 0) == 0) {
    const size_t index = device.size() > 5 ? std::stoul(device.substr(5)) : 0;
    const std::vector<std::string> names = cuda_device_names(cuda_device_count());
    report["device_name"] = index < names.size() && !names[index].empty() ? json(names[index]) : json(nullptr);
  }
  // the matrix-multiply peak is measured before and after the other rows and the better one kept,
  // so that a busy moment of the machine does not flatter the utilisation of what ran between
  std::vector<double> peaks;
  if (wants("matmul")) peaks.push_back(matmul_row(job, command)["flops_per_second"]);
  const ScratchDir scratch(out + "/models");
  std::string scoring_dir;
  if (wants("scoring") || wants("importance")) {
    const std::string dir = scoring_dir = bench_model(job["scoring_model"], job["seed"], scratch.path() + "/scoring", command);
    auto engine = open_model(dir, job, command);
    const ModelConfig config = load_model_config(dir);
    if (wants("scoring")) report["scoring"] = scoring_row(job, command, *engine, config);
    if (wants("importance")) report["importance"] = importance_row(job, command, *engine, config);
  }
  if (wants("profile")) {
    // one model serves both when the configs agree (a GPU bench's 1B model takes a minute to make)
    const std::string dir = !scoring_dir.empty() && job["profile_model"] == job["scoring_model"]
                                ? scoring_dir
                                : bench_model(job["profile_model"], job["seed"], scratch.path() + "/profile", command);
    report["profile"] = profile_row(job, command, dir, scratch.path());
  }
  if (wants("matmul")) {
    peaks.push_back(matmul_row(job, command)["flops_per_second"]);
    const double peak = *std::max_element(peaks.begin(), peaks.end());
    report["matmul"] = {{"n", job["matmul"]["n"]}, {"flops_per_second", peak}, {"measurements", peaks}};
    // model FLOP utilisation: the FLOPs the method needs per second, over the measured peak
    if (report.contains("scoring")) {
      json& row = report["scoring"];
      row["kv_cache"]["mfu"] = row["kv_cache"]["flops_per_second"].get<double>() / peak;
      row["full_sequences"]["mfu"] = row["full_sequences"]["flops_per_second"].get<double>() / peak;
    }
    if (report.contains("importance")) report["importance"]["mfu"] = report["importance"]["flops_per_second"].get<double>() / peak;
    if (report.contains("profile")) {
      for (const char* way : {"in_place", "checkpoint_per_variant"}) {
        if (!report["profile"].contains(way)) continue;
        json& row = report["profile"][way];
        row["mfu"] = row["flops_per_second"].get<double>() / peak;
      }
    }
  }
  report["seconds"] = seconds_since(t0);
  write_file_atomic(out + "/bench.json", report.dump(2) + "\n");
  command.events.result("bench.json", 1);
  command.events.summary(seconds_since(t0));
  return 0;
}

}  // namespace bprof
