// `bprof-runner bench`: the runner's performance record, every ratio measured side by side in one
// process on one machine (PROTOCOL.md, "bench"):
//
//   matmul     peak FLOP/s of a large matrix multiply, the yardstick of model FLOP utilisation
//   scoring    multiple choice with the shared context computed once (KV cache) vs each choice as
//              a full sequence (the lm-eval HF backend's way); items/s, ratio, MFU
//   importance the gradient pass of one ability: tokens/s, MFU, and its memory next to the weights
//   profile    a whole profile the runner's way (one ranking per ability, in-place ablation) vs the
//              original pipeline's way (ranking recomputed per k, a damaged checkpoint written and
//              loaded again per variant): seconds, bytes written, ratio
//
// Models have random weights (throughput does not depend on them), made here from a config.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "bench.h"
#include "commands.h"
#include "errors.h"
#include "files.h"
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
     {{"model_type", "llama"}, {"vocab_size", 8192}, {"hidden_size", 512}, {"intermediate_size", 1408},
      {"num_hidden_layers", 4}, {"num_attention_heads", 8}, {"num_key_value_heads", 4}, {"max_position_embeddings", 2048}}},
    {"scoring", {{"items", 16}, {"choices", 4}, {"context", 100}, {"continuation", 20}, {"items_per_batch", 8}, {"repeats", 3}}},
    {"importance", {{"sequences", 16}, {"length", 128}, {"batch_size", 8}}},
    {"profile_model",
     {{"model_type", "llama"}, {"vocab_size", 2048}, {"hidden_size", 256}, {"intermediate_size", 704},
      {"num_hidden_layers", 4}, {"num_attention_heads", 4}, {"num_key_value_heads", 4}, {"max_position_embeddings", 2048}}},
    {"profile",
     {{"abilities", 10}, {"sequences", 8}, {"length", 64}, {"batch_size", 8},
      {"k", {0.00001, 0.00004, 0.00016, 0.00064, 0.00256, 0.01024}},
      {"benchmarks", 4}, {"items", 16}, {"choices", 4}, {"context", 48}, {"continuation", 8}}},
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

// A random-weight model folder made with the training code's initialization (0 steps).
std::string make_random_model(const json& config, uint64_t seed, const std::string& dir) {
  TrainJob job;
  job.config = parse_model_config(config.dump(), "bench model config");
  job.train.seed = seed;
  TrainResult model = train_llama(job, {});
  prepare_output_dir(dir);
  write_file_atomic(dir + "/model.safetensors", serialize_safetensors(model.tensors));
  write_file_atomic(dir + "/config.json", config.dump(2));
  return dir;
}

std::unique_ptr<Engine> open_model(const std::string& dir, const json& job) {
  EngineOptions options;
  options.model_dir = dir;
  options.dtype = job["dtype"];
  options.device = job["device"];
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

std::vector<ItemScores> score_in_batches(Engine& engine, const std::vector<Item>& items, int64_t per_batch, bool full) {
  std::vector<ItemScores> out;
  for (size_t start = 0; start < items.size(); start += static_cast<size_t>(per_batch)) {
    std::vector<const Item*> batch;
    for (size_t i = start; i < std::min(items.size(), start + static_cast<size_t>(per_batch)); i++) batch.push_back(&items[i]);
    std::vector<ItemScores> scores = full ? engine.score_full_sequences(batch) : engine.score(batch);
    out.insert(out.end(), scores.begin(), scores.end());
  }
  return out;
}

// ----------------------------------------------------------------------------
// FLOPs (multiply-adds count 2): the work the method needs, the same figure whatever the way

struct Flops {
  const ModelConfig& c;
  double q_dim() const { return static_cast<double>(c.num_attention_heads * c.head_dim); }
  double kv_dim() const { return static_cast<double>(c.num_key_value_heads * c.head_dim); }
  // projections and MLP of every layer, per token
  double per_token() const {
    const double H = static_cast<double>(c.hidden_size), I = static_cast<double>(c.intermediate_size);
    return 2.0 * static_cast<double>(c.num_hidden_layers) * (2 * H * q_dim() + 2 * H * kv_dim() + 3 * H * I);
  }
  // q k^T and p v of one token attending to `keys` positions, all layers
  double attention(double keys) const { return 4.0 * static_cast<double>(c.num_hidden_layers) * q_dim() * keys; }
  double lm_head() const { return 2.0 * static_cast<double>(c.vocab_size * c.hidden_size); }
  double mlp_weight_gradients_per_token() const {
    return 2.0 * static_cast<double>(c.num_hidden_layers) * 3.0 * static_cast<double>(c.hidden_size * c.intermediate_size);
  }

  // a causal pass over `n` new tokens after `past` cached ones
  double pass(double past, double n) const { return n * per_token() + attention(past * n + n * (n + 1) / 2); }

  // scoring one item with its context once and every choice after it; lm_head on scored rows only
  double scoring(const Item& item) const {
    const double ctx = static_cast<double>(item.context.size());
    double f = pass(0, ctx);
    for (const auto& choice : item.choices) {
      const double m = static_cast<double>(choice.size());
      f += pass(ctx, m - 1) + m * lm_head();
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
  const double peak = matmul_flops_per_second(job["device"], job["dtype"], n, static_cast<int>(size_of(job["matmul"], "repeats", "matmul")));
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
  score_in_batches(engine, items, per_batch, false);  // warm-up
  for (int64_t r = 0; r < repeats; r++) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<ItemScores> kv = score_in_batches(engine, items, per_batch, false);
    kv_best = std::min(kv_best, seconds_since(t0));
    t0 = std::chrono::steady_clock::now();
    std::vector<ItemScores> full = score_in_batches(engine, items, per_batch, true);
    full_best = std::min(full_best, seconds_since(t0));
    for (size_t i = 0; i < items.size(); i++)
      for (size_t c = 0; c < kv[i].size(); c++) worst_difference = std::max(worst_difference, std::abs(kv[i][c].logprob - full[i][c].logprob));
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

json importance_row(const json& job, const Command& command, Engine& engine, const ModelConfig& config) {
  std::mt19937_64 rng(job["seed"].get<uint64_t>() + 1);
  const json& sizes = job["importance"];
  const int64_t length = size_of(sizes, "length", "importance");
  std::vector<std::vector<int64_t>> sequences;
  for (int64_t s = 0; s < size_of(sizes, "sequences", "importance"); s++) sequences.push_back(random_tokens(rng, length, config.vocab_size));
  const auto candidates = engine.candidates(0, 0);
  int64_t candidate_count = 0, weights_bytes = 0;
  for (const CandidateTensor& c : candidates) candidate_count += c.numel;
  const int64_t element = job["dtype"] == "float32" ? 4 : 2;
  weights_bytes = engine.parameter_count() * element;

  engine.importance(sequences, size_of(sizes, "batch_size", "importance"), candidates, nullptr, nullptr);  // warm-up
  const int64_t resident_before = resident_bytes();
  reset_peak_memory();
  auto t0 = std::chrono::steady_clock::now();
  engine.importance(sequences, size_of(sizes, "batch_size", "importance"), candidates, nullptr, nullptr);
  const double seconds = seconds_since(t0);
  const int64_t peak_resident = peak_resident_bytes();
  command.events.progress("bench-importance", 1, 1);

  const double flops = Flops{config}.importance(static_cast<double>(sequences.size()), static_cast<double>(length));
  return {{"sequences", sequences.size()},
          {"length", length},
          {"seconds", seconds},
          {"tokens_per_second", static_cast<double>(sequences.size() * static_cast<size_t>(length)) / seconds},
          {"flops", flops},
          {"flops_per_second", flops / seconds},
          {"memory",
           {{"weights_bytes", weights_bytes},
            {"float32_accumulator_bytes", candidate_count * 4},
            {"host_importance_bytes", candidate_count * 4},
            {"peak_resident_increase_bytes", peak_resident > 0 ? json(peak_resident - resident_before) : json(nullptr)}}}};
}

// A whole profile twice: the runner's way and the original pipeline's way, same variants.
json profile_row(const json& job, const Command& command, const std::string& model_dir, const std::string& scratch) {
  const json& sizes = job["profile"];
  auto engine = open_model(model_dir, job);
  const ModelConfig config = load_model_config(model_dir);
  std::mt19937_64 rng(job["seed"].get<uint64_t>() + 2);
  std::vector<Item> items;
  for (int64_t b = 0; b < size_of(sizes, "benchmarks", "profile"); b++) {
    std::vector<Item> benchmark = random_items(rng, sizes, config.vocab_size, "b" + std::to_string(b) + "/", "profile");
    items.insert(items.end(), benchmark.begin(), benchmark.end());
  }
  std::vector<std::vector<std::vector<int64_t>>> abilities(static_cast<size_t>(size_of(sizes, "abilities", "profile")));
  for (auto& sequences : abilities)
    for (int64_t s = 0; s < size_of(sizes, "sequences", "profile"); s++)
      sequences.push_back(random_tokens(rng, size_of(sizes, "length", "profile"), config.vocab_size));
  const int64_t batch_size = size_of(sizes, "batch_size", "profile");
  const auto candidates = engine->candidates(0, 0);
  const int64_t candidate_count = candidates.back().offset + candidates.back().numel;
  const int64_t parameters = engine->parameter_count();
  std::vector<int64_t> n;
  for (const json& k : sizes["k"]) n.push_back(parameters_for_k(k.get<double>(), parameters));
  const uint64_t seed = job["seed"].get<uint64_t>();
  int64_t variants = 0;

  auto rank = [&](const std::vector<std::vector<int64_t>>& sequences, int64_t count) {
    std::vector<std::vector<float>> importance = engine->importance(sequences, batch_size, candidates, nullptr, nullptr);
    std::vector<ImportanceSpan> spans;
    for (const auto& v : importance) spans.push_back({v.data(), static_cast<int64_t>(v.size())});
    return rank_top(spans, count);
  };
  auto score_all = [&](Engine& e) { return score_in_batches(e, items, 8, false); };

  // the runner's way: one ranking per ability serves every k; ablate in place, score, restore
  auto t0 = std::chrono::steady_clock::now();
  auto in_place = [&](const std::vector<int64_t>& ranking) {
    for (int64_t count : n) {
      engine->ablate(candidates, ranking.data(), count);
      score_all(*engine);
      engine->restore();
      variants++;
    }
  };
  for (const auto& sequences : abilities) in_place(rank(sequences, n.back()));
  in_place(draw_random(candidate_count, n.back(), seed));
  const double runner_seconds = seconds_since(t0);
  command.events.progress("bench-profile", 1, 2);

  // the original pipeline's way: per (ability, k) the ranking again, then per variant a damaged
  // checkpoint on disk, loaded by a fresh model for scoring
  int64_t bytes_written = 0;
  const std::string checkpoint_dir = scratch + "/damaged";
  prepare_output_dir(checkpoint_dir);
  std::string config_text;
  read_file_if_exists(model_dir + "/config.json", config_text);
  write_file_atomic(checkpoint_dir + "/config.json", config_text);
  t0 = std::chrono::steady_clock::now();
  auto via_checkpoint = [&](const std::vector<int64_t>& ranking, int64_t count) {
    engine->ablate(candidates, ranking.data(), count);
    const std::string bytes = engine->checkpoint_bytes();
    engine->restore();
    write_file_atomic(checkpoint_dir + "/model.safetensors", bytes);
    bytes_written += static_cast<int64_t>(bytes.size());
    auto damaged = open_model(checkpoint_dir, job);
    score_all(*damaged);
  };
  for (const auto& sequences : abilities)
    for (int64_t count : n) via_checkpoint(rank(sequences, count), count);
  for (int64_t count : n) via_checkpoint(draw_random(candidate_count, count, seed), count);
  const double original_seconds = seconds_since(t0);
  std::filesystem::remove_all(checkpoint_dir);
  command.events.progress("bench-profile", 2, 2);

  return {{"parameters", parameters},
          {"abilities", abilities.size()},
          {"k", sizes["k"]},
          {"variants", variants},
          {"items", items.size()},
          {"in_place", {{"seconds", runner_seconds}, {"bytes_written", 0}}},
          {"checkpoint_per_variant", {{"seconds", original_seconds}, {"bytes_written", bytes_written}}},
          {"speedup", original_seconds / runner_seconds}};
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

  json report = {{"runner_version", kRunnerVersion}, {"libtorch", libtorch_version()}, {"device", job["device"]},
                 {"dtype", job["dtype"]}, {"threads", threads}};
  // the matrix-multiply peak is measured before and after the other rows and the better one kept,
  // so that a busy moment of the machine does not flatter the utilisation of what ran between
  std::vector<double> peaks;
  if (wants("matmul")) peaks.push_back(matmul_row(job, command)["flops_per_second"]);
  const std::string scratch = out + "/models";
  if (wants("scoring") || wants("importance")) {
    const std::string dir = make_random_model(job["scoring_model"], job["seed"], scratch + "/scoring");
    auto engine = open_model(dir, job);
    const ModelConfig config = load_model_config(dir);
    if (wants("scoring")) report["scoring"] = scoring_row(job, command, *engine, config);
    if (wants("importance")) report["importance"] = importance_row(job, command, *engine, config);
  }
  if (wants("profile")) {
    const std::string dir = make_random_model(job["profile_model"], job["seed"], scratch + "/profile");
    report["profile"] = profile_row(job, command, dir, scratch);
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
  }
  std::filesystem::remove_all(scratch);
  report["seconds"] = seconds_since(t0);
  write_file_atomic(out + "/bench.json", report.dump(2) + "\n");
  command.events.result("bench.json", 1);
  command.events.summary(seconds_since(t0));
  return 0;
}

}  // namespace bprof
