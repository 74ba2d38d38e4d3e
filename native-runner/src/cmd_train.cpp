// `bprof-runner train` (PROTOCOL.md): trains a Llama from scratch on the job's token sequences and
// writes a Hugging Face folder (config.json + model.safetensors) that `score` and `profile` load.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "commands.h"
#include "errors.h"
#include "files.h"
#include "json_util.h"
#include "train.h"

namespace bprof {

namespace {

using json = nlohmann::json;

RunnerError bad_job(const std::string& source, const std::string& what) { return RunnerError(ErrorCode::bad_job, source + ": " + what); }

// Typed fields of the job's `train` object: absent (or null) takes the default when there is one;
// a wrong type or value is an error naming 'train.<key>'.
class TrainFields {
 public:
  TrainFields(const json& obj, const std::string& source) : obj_(obj), source_(source) {}

  const json* find(const char* key, bool required) const {
    auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null()) {
      if (required) throw error(key, "is missing");
      return nullptr;
    }
    return &*it;
  }
  RunnerError error(const std::string& key, const std::string& what) const { return bad_job(source_, "'train." + key + "' " + what); }
  int64_t integer(const char* key, int64_t min, int64_t fallback, bool required) const {
    const json* v = find(key, required);
    if (!v) return fallback;
    if (!v->is_number_integer() || v->get<int64_t>() < min)
      throw error(key, "must be an integer >= " + std::to_string(min) + ", got " + describe_json(*v));
    return v->get<int64_t>();
  }
  // a finite number in [min, max); `open_min` excludes min itself
  double number(const char* key, double min, bool open_min, double max, double fallback, bool required) const {
    const json* v = find(key, required);
    if (!v) return fallback;
    const std::string range = (open_min ? "> " : ">= ") + format(min) + (std::isfinite(max) ? " and < " + format(max) : "");
    if (!v->is_number()) throw error(key, "must be a number " + range + ", got " + describe_json(*v));
    const double x = v->get<double>();
    if (!std::isfinite(x) || x < min || (open_min && x == min) || x >= max)
      throw error(key, "must be a number " + range + ", got " + describe_json(*v));
    return x;
  }

 private:
  static std::string format(double x) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%g", x);
    return buf;
  }
  const json& obj_;
  std::string source_;
};

constexpr double kInf = std::numeric_limits<double>::infinity();

TrainOptions parse_train_options(const json& v, const std::string& source) {
  if (!v.is_object()) throw bad_job(source, "'train' must be an object");
  // a misspelled option must not silently fall back to its default
  static const std::set<std::string> known = {"steps", "batch_size", "lr",        "min_lr", "warmup_steps", "weight_decay",
                                              "betas", "eps",        "grad_clip", "seed",   "prompt_weight"};
  for (auto it = v.begin(); it != v.end(); ++it)
    if (!known.count(it.key())) throw bad_job(source, "'train." + it.key() + "' is not a training option");

  TrainFields f(v, source);
  TrainOptions o;
  o.steps = f.integer("steps", 0, 0, true);
  o.batch_size = f.integer("batch_size", 1, 1, true);
  o.lr = f.number("lr", 0, true, kInf, 0, true);
  o.min_lr = f.number("min_lr", 0, false, kInf, 0, false);
  if (o.min_lr > o.lr) throw f.error("min_lr", "must not exceed 'train.lr'");
  o.warmup_steps = f.integer("warmup_steps", 0, 0, true);
  if (o.warmup_steps > o.steps) throw f.error("warmup_steps", "must not exceed 'train.steps'");
  o.weight_decay = f.number("weight_decay", 0, false, kInf, 0.01, false);
  if (const json* betas = f.find("betas", false)) {
    if (!betas->is_array() || betas->size() != 2) throw f.error("betas", "must be [beta1, beta2], got " + describe_json(*betas));
    double b[2];
    for (size_t i = 0; i < 2; i++) {
      const json& x = (*betas)[i];
      if (!x.is_number() || !(x.get<double>() >= 0 && x.get<double>() < 1))
        throw f.error("betas[" + std::to_string(i) + "]", "must be a number in [0, 1), got " + describe_json(x));
      b[i] = x.get<double>();
    }
    o.beta1 = b[0];
    o.beta2 = b[1];
  }
  o.eps = f.number("eps", 0, true, kInf, 1e-8, false);
  o.grad_clip = f.number("grad_clip", 0, false, kInf, 1.0, false);
  o.seed = static_cast<uint64_t>(f.integer("seed", 0, 0, true));
  o.prompt_weight = f.number("prompt_weight", 0, false, std::nextafter(1.0, 2.0), 1.0, false);  // [0, 1]
  return o;
}

}  // namespace

TrainJob parse_train_job(const std::string& text, const std::string& source) {
  const json root = parse_job_json(text, source);
  const std::string subcommand = parse_job_envelope(root, source);
  if (subcommand != "train") throw bad_job(source, "'subcommand' is \"" + subcommand + "\", expected \"train\"");

  TrainJob job;
  auto config = root.find("config");
  if (config == root.end() || !config->is_object())
    throw bad_job(source, "'config' must be an object (a Hugging Face config.json, model_type llama)");
  job.config_text = config->dump();
  try {
    job.config = parse_model_config(job.config_text, source + ": 'config'");
  } catch (const RunnerError& e) {  // a config given in the job is part of the job
    throw RunnerError(ErrorCode::bad_job, e.what());
  }
  auto range = config->find("initializer_range");
  if (range != config->end() && !range->is_null()) {
    if (!range->is_number() || !(range->get<double>() > 0) || !std::isfinite(range->get<double>()))
      throw bad_job(source, "'config.initializer_range' must be a positive number, got " + describe_json(*range));
    job.initializer_range = range->get<double>();
  }

  auto device = root.find("device");
  if (device != root.end() && !device->is_null()) {
    if (!device->is_string() || device->get<std::string>().empty()) throw bad_job(source, "'device' must be a non-empty string");
    job.device = device->get<std::string>();
  }

  auto sequences = root.find("sequences");
  if (sequences == root.end() || !sequences->is_array() || sequences->empty())
    throw bad_job(source, "'sequences' must be a non-empty array of token arrays");
  const int64_t vocab = job.config.vocab_size;
  for (size_t s = 0; s < sequences->size(); s++) {
    const std::string where = "'sequences[" + std::to_string(s) + "]'";
    const json& seq = (*sequences)[s];
    if (!seq.is_array()) throw bad_job(source, where + " must be an array of token ids");
    if (seq.size() < 2)
      throw bad_job(source,
                    where + " has " + std::to_string(seq.size()) + " token(s); a sequence needs at least 2 (one next-token prediction)");
    std::vector<int64_t> tokens;
    tokens.reserve(seq.size());
    for (size_t t = 0; t < seq.size(); t++) {
      const json& id = seq[t];
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= vocab)
        throw bad_job(source, "'sequences[" + std::to_string(s) + "][" + std::to_string(t) + "]' = " + describe_json(id) +
                                  " is not a token id of the vocabulary (0.." + std::to_string(vocab - 1) + ")");
      tokens.push_back(id.get<int64_t>());
    }
    job.sequences.push_back(std::move(tokens));
  }

  auto train = root.find("train");
  if (train == root.end()) throw bad_job(source, "'train' is missing (steps, batch_size, lr, warmup_steps, seed)");
  job.train = parse_train_options(*train, source);

  auto prompt_lengths = root.find("prompt_lengths");
  if (prompt_lengths != root.end() && !prompt_lengths->is_null()) {
    if (!prompt_lengths->is_array() || prompt_lengths->size() != job.sequences.size())
      throw bad_job(source,
                    "'prompt_lengths' must be an array with one integer per sequence (" + std::to_string(job.sequences.size()) + ")");
    for (size_t s = 0; s < prompt_lengths->size(); s++) {
      const json& n = (*prompt_lengths)[s];
      const int64_t size = static_cast<int64_t>(job.sequences[s].size());
      // below the size, so every sequence keeps at least one prediction of full weight
      if (!n.is_number_integer() || n.get<int64_t>() < 0 || n.get<int64_t>() >= size)
        throw bad_job(source, "'prompt_lengths[" + std::to_string(s) + "]' = " + describe_json(n) + " must be an integer from 0 to " +
                                  std::to_string(size - 1) + " (sequences[" + std::to_string(s) + "] has " + std::to_string(size) +
                                  " tokens)");
      job.prompt_lengths.push_back(n.get<int64_t>());
    }
  }
  if (job.train.prompt_weight != 1.0 && job.prompt_lengths.empty())
    throw bad_job(source, "'train.prompt_weight' needs 'prompt_lengths' (where each sequence's prompt ends)");
  return job;
}

namespace {

std::string read_job_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RunnerError(ErrorCode::bad_job, path + ": cannot read the job file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A `progress` event with the loss of the step (EventWriter's progress has no room for it); the
// same line format: "type" first, one line, flushed.
void progress_with_loss(const Command& command, int64_t done, int64_t total, double loss) {
  nlohmann::ordered_json e = {{"type", "progress"}, {"phase", "train"}, {"done", done}, {"total", total}, {"loss", loss}};
  const std::string line = e.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  std::fwrite(line.data(), 1, line.size(), command.context.events);
  std::fflush(command.context.events);
}

}  // namespace

int run_train(const Command& command) {
  const auto t0 = std::chrono::steady_clock::now();
  TrainJob job = parse_train_job(read_job_file(command.args.job), command.args.job);
  const int threads = set_compute_threads(command.args.threads);
  command.events.start(command.args.subcommand, kRunnerVersion, job.device, threads);
  check_compute_target(job.device, "float32");
  prepare_output_dir(command.args.out);
  if (job.config.max_position_embeddings > 0) {  // as score warns: RoPE past the trained range
    size_t longer = 0;
    for (const auto& sequence : job.sequences)
      if (static_cast<int64_t>(sequence.size()) > job.config.max_position_embeddings) longer++;
    if (longer > 0)
      command.events.warning(std::to_string(longer) + " sequence(s) are longer than the config's max_position_embeddings (" +
                             std::to_string(job.config.max_position_embeddings) + ")");
  }

  ProgressThrottle throttle;
  command.events.progress("train", 0, job.train.steps);
  TrainCallbacks callbacks;
  callbacks.cancelled = [&command] { return command.cancelled(); };
  callbacks.step_done = [&](int64_t done, int64_t total, double loss) {
    if (throttle.should_emit(done, total)) progress_with_loss(command, done, total, loss);
  };
  TrainResult result = train_llama(job, callbacks);

  // the weights first: a folder with config.json but no weights is never left behind as complete
  const std::string out = command.args.out;
  write_file_atomic(out + "/model.safetensors", serialize_safetensors(result.tensors, {{"format", "pt"}}));
  command.events.result("model.safetensors", static_cast<int64_t>(result.tensors.size()));

  json config = json::parse(job.config_text);
  config["torch_dtype"] = "float32";
  write_file_atomic(out + "/config.json", config.dump(2) + "\n");
  command.events.result("config.json", 1);

  json log = {{"steps", job.train.steps}, {"parameters", count_parameters(job.config).total}, {"loss", result.losses}};
  write_file_atomic(out + "/train.json", log.dump() + "\n");
  command.events.result("train.json", job.train.steps);

  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - t0;
  command.events.summary(elapsed.count());
  return 0;
}

}  // namespace bprof
