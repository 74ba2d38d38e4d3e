#include "cli.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "config.h"
#include "engine.h"
#include "errors.h"
#include "events.h"
#include "files.h"
#include "job.h"

namespace bprof {

namespace {

const char* const kUsage =
    "usage: bprof-runner <subcommand> --job FILE --out DIR [--threads N]\n"
    "       bprof-runner --version\n"
    "subcommands: score\n"
    "Events (NDJSON) go to stdout, results to files under DIR; see PROTOCOL.md.\n";

// Padded tokens per forward pass unless BPROF_BATCH_TOKENS says otherwise (a tuning knob outside
// the protocol: results do not depend on it beyond float rounding).
constexpr int64_t kDefaultBatchTokens = 2048;

struct Args {
  std::string subcommand;
  std::string job;
  std::string out;
  int threads = 0;  // 0: libtorch's default
  bool version = false;
  bool help = false;
};

RunnerError bad_arguments(const std::string& what) { return RunnerError(ErrorCode::bad_arguments, what); }

int parse_threads(const std::string& value) {
  char* end = nullptr;
  long n = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || n < 1 || n > 4096)
    throw bad_arguments("--threads wants a positive integer, got '" + value + "'");
  return static_cast<int>(n);
}

// Accepts `--name value` and `--name=value`.
Args parse_args(int argc, const char* const* argv) {
  Args a;
  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i];
    if (arg == "--version") { a.version = true; continue; }
    if (arg == "--help" || arg == "-h") { a.help = true; continue; }
    if (arg.rfind("--", 0) == 0) {
      std::string name = arg, value;
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        name = arg.substr(0, eq);
        value = arg.substr(eq + 1);
      } else {
        if (name != "--job" && name != "--out" && name != "--threads") throw bad_arguments("unknown option " + arg);
        if (i + 1 >= argc) throw bad_arguments(name + " needs a value");
        value = argv[++i];
      }
      if (name == "--job") a.job = value;
      else if (name == "--out") a.out = value;
      else if (name == "--threads") a.threads = parse_threads(value);
      else throw bad_arguments("unknown option " + name);
      continue;
    }
    if (!a.subcommand.empty()) throw bad_arguments("unexpected argument '" + arg + "'");
    a.subcommand = arg;
  }
  if (a.version || a.help) return a;
  if (a.subcommand.empty()) throw bad_arguments("no subcommand given");
  if (a.subcommand != "score") throw bad_arguments("unknown subcommand '" + a.subcommand + "' (this runner knows: score)");
  if (a.job.empty()) throw bad_arguments("--job FILE is required");
  if (a.out.empty()) throw bad_arguments("--out DIR is required");
  return a;
}

int64_t batch_tokens(EventWriter& events) {
  const char* env = std::getenv("BPROF_BATCH_TOKENS");
  if (!env) return kDefaultBatchTokens;
  char* end = nullptr;
  long long n = std::strtoll(env, &end, 10);
  if (*env == '\0' || *end != '\0' || n < 1) {
    events.warning("BPROF_BATCH_TOKENS='" + std::string(env) + "' is not a positive integer; using " +
                   std::to_string(kDefaultBatchTokens));
    return kDefaultBatchTokens;
  }
  return n;
}

void warn_long_sequences(const Job& job, const ModelConfig& config, EventWriter& events) {
  if (config.max_position_embeddings <= 0) return;
  int64_t longer = 0, longest = 0;
  for (const Item& item : job.items) {
    for (size_t c = 0; c < item.choices.size(); c++) {
      int64_t len = input_length(item, c);
      longest = std::max(longest, len);
      if (len > config.max_position_embeddings) longer++;
    }
  }
  if (longer > 0)
    events.warning(std::to_string(longer) + " choice sequence(s) are longer than the model's max_position_embeddings (" +
                   std::to_string(config.max_position_embeddings) + "; longest " + std::to_string(longest) +
                   "): their scores may be meaningless");
}

// One line of scores.jsonl.
std::string score_line(const Item& item, const ItemScores& scores, EventWriter& events) {
  using json = nlohmann::ordered_json;  // "id" first, then the choices, as in PROTOCOL.md
  json choices = json::array();
  for (size_t c = 0; c < scores.size(); c++) {
    const ChoiceScore& s = scores[c];
    if (!std::isfinite(s.logprob))  // JSON has no inf/nan: the line gets null, the user a warning
      events.warning("item '" + item.id + "' choice " + std::to_string(c) + ": logprob is not finite (written as null)");
    choices.push_back({{"logprob", s.logprob}, {"tokens", s.tokens}, {"greedy", s.greedy}});
  }
  json line = {{"id", item.id}, {"choices", choices}};
  return line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

int run_score(const Args& args, EventWriter& events, const CliContext& context) {
  const auto t0 = std::chrono::steady_clock::now();
  auto cancelled = [&] { return context.cancelled && context.cancelled(); };

  Job job = load_job(args.job);
  if (job.subcommand != args.subcommand)
    throw RunnerError(ErrorCode::bad_job, args.job + ": 'subcommand' is '" + job.subcommand + "' but the runner was asked to " +
                                              args.subcommand);
  int threads = set_compute_threads(args.threads);
  events.start(args.subcommand, kRunnerVersion, job.device, threads);

  // everything cheap is checked before the weights are read
  prepare_output_dir(args.out);
  check_compute_target(job.device, job.dtype);
  ModelConfig config = load_model_config(job.model_path);
  check_token_ids(job, config.vocab_size);
  warn_long_sequences(job, config, events);
  const int64_t max_tokens = batch_tokens(events);

  ProgressThrottle load_throttle;
  EngineOptions options;
  options.model_dir = job.model_path;
  options.dtype = job.dtype;
  options.device = job.device;
  options.cancelled = cancelled;
  options.warning = [&](const std::string& message) { events.warning(message); };
  options.load_progress = [&](int64_t done, int64_t total) {
    if (load_throttle.should_emit(done, total)) events.progress("load", done, total);
  };
  Engine engine(config, options);

  const int64_t total = static_cast<int64_t>(job.items.size());
  int64_t done = 0;
  ProgressThrottle score_throttle;
  events.progress("score", 0, total);
  std::string lines;
  for (const auto& batch : plan_batches(job.items, max_tokens)) {
    if (cancelled())  // batch boundaries are item boundaries
      throw RunnerError(ErrorCode::cancelled, "cancelled after " + std::to_string(done) + " of " +
                                                  std::to_string(total) + " items; no result written");
    std::vector<const Item*> items;
    for (size_t i = batch.first; i < batch.second; i++) items.push_back(&job.items[i]);
    std::vector<ItemScores> scores = engine.score(items);
    for (size_t i = 0; i < items.size(); i++) lines += score_line(*items[i], scores[i], events);
    done += static_cast<int64_t>(items.size());
    if (score_throttle.should_emit(done, total)) events.progress("score", done, total);
  }

  write_file_atomic(args.out + "/scores.jsonl", lines);
  events.result("scores.jsonl", total);
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - t0;
  events.summary(elapsed.count());
  return 0;
}

}  // namespace

int run_cli(int argc, const char* const* argv, const CliContext& context) {
  EventWriter events(context.events);
  try {
    Args args = parse_args(argc, argv);
    if (args.help) {
      std::fputs(kUsage, stderr);
      return 0;
    }
    if (args.version) {
      std::printf("bprof-runner %s (protocol %d, libtorch %s)\n", kRunnerVersion, kProtocolVersion,
                  libtorch_version().c_str());
      return 0;
    }
    return run_score(args, events, context);
  } catch (...) {
    RunnerError error = classify_exception(std::current_exception());
    if (error.code() == ErrorCode::bad_arguments) std::fputs(kUsage, stderr);
    std::fprintf(stderr, "bprof-runner: %s: %s\n", error_code_name(error.code()), error.what());
    events.error(error_code_name(error.code()), error.what());
    return exit_code_for(error.code());
  }
}

}  // namespace bprof
