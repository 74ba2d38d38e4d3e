// What the subcommands share: job loading, opening the engine with its events, scoring items.
#include "commands.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "config.h"
#include "errors.h"

namespace bprof {

namespace {

int64_t batch_tokens(EventWriter& events) {
  const char* env = std::getenv("BPROF_BATCH_TOKENS");
  if (!env) return kDefaultBatchTokens;
  char* end = nullptr;
  long long n = std::strtoll(env, &end, 10);
  if (*env == '\0' || *end != '\0' || n < 1) {
    events.warning("BPROF_BATCH_TOKENS='" + std::string(env) + "' is not a positive integer; using " + std::to_string(kDefaultBatchTokens));
    return kDefaultBatchTokens;
  }
  return n;
}

void warn_long_sequences(const Job& job, const ModelConfig& config, EventWriter& events) {
  if (config.max_position_embeddings <= 0) return;
  int64_t longer = 0, longest = 0;
  auto count = [&](int64_t len) {
    longest = std::max(longest, len);
    if (len > config.max_position_embeddings) longer++;
  };
  for (const Item& item : job.items) {
    for (size_t c = 0; c < item.choices.size(); c++) count(input_length(item, c));
    if (item.generates()) count(static_cast<int64_t>(item.context.size()) + item.generate.max_tokens);
  }
  for (const Ability& ability : job.abilities)
    for (const auto& sequence : ability.sequences) count(static_cast<int64_t>(sequence.size()));
  if (longer > 0)
    events.warning(std::to_string(longer) + " sequence(s) are longer than the model's max_position_embeddings (" +
                   std::to_string(config.max_position_embeddings) + "; longest " + std::to_string(longest) +
                   "): their scores may be meaningless");
}

// One line of a scores file.
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

// One line of a scores file for a generation item.
std::string generation_line(const Item& item, const Generation& generation) {
  nlohmann::ordered_json line = {{"id", item.id}, {"generated", generation.tokens}, {"stopped", generation.stopped}};
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace

Job load_job_for(const Command& command) {
  Job job = load_job(command.args.job);
  if (job.subcommand != command.args.subcommand)
    throw RunnerError(ErrorCode::bad_job, command.args.job + ": 'subcommand' is '" + job.subcommand + "' but the runner was asked to " +
                                              command.args.subcommand);
  int threads = set_compute_threads(command.args.threads);
  command.events.start(command.args.subcommand, kRunnerVersion, job.device, threads);
  return job;
}

std::unique_ptr<Engine> open_engine(const Command& command, const Job& job, ModelConfig& config, EngineLoad load) {
  const bool first_open = load != EngineLoad::weights_after_shapes;
  if (first_open) {  // everything cheap is checked before the weights are read
    check_compute_target(job.device, job.dtype);
    config = load_model_config(job.model_path);
    check_token_ids(job, config.vocab_size);
    warn_long_sequences(job, config, command.events);
  }

  auto throttle = std::make_shared<ProgressThrottle>();
  EngineOptions options;
  options.model_dir = job.model_path;
  options.dtype = job.dtype;
  options.device = job.device;
  options.cancelled = [&command] { return command.cancelled(); };
  if (first_open) options.warning = [&command](const std::string& message) { command.events.warning(message); };
  options.shapes_only = load == EngineLoad::shapes_only;
  if (!options.shapes_only)  // reading headers takes no time worth showing
    options.load_progress = [&command, throttle](int64_t done, int64_t total) {
      if (throttle->should_emit(done, total)) command.events.progress("load", done, total);
    };
  return std::make_unique<Engine>(config, options);
}

std::string score_items(const Command& command, Engine& engine, const std::vector<Item>& items, const std::string& phase,
                        const ScoredVariant* variant) {
  const int64_t total = static_cast<int64_t>(items.size());
  const int64_t max_tokens = batch_tokens(command.events);
  int64_t done = 0;
  ProgressThrottle throttle;
  const auto progress = [&](int64_t n) {
    if (variant)
      command.events.progress(phase, n, total, *variant);
    else
      command.events.progress(phase, n, total);
  };
  progress(0);
  std::string lines;
  for (const auto& batch : plan_batches(items, max_tokens)) {
    if (command.cancelled())  // batch boundaries are item boundaries
      throw RunnerError(ErrorCode::cancelled,
                        "cancelled after " + std::to_string(done) + " of " + std::to_string(total) + " items of " + phase);
    // multiple-choice items are scored, generation items decoded; lines keep the job's order
    std::vector<const Item*> scored, generated;
    for (size_t i = batch.first; i < batch.second; i++) (items[i].generates() ? generated : scored).push_back(&items[i]);
    std::vector<ItemScores> scores = engine.score(scored);
    std::vector<Generation> generations = engine.generate(generated);
    size_t next_scored = 0, next_generated = 0;
    for (size_t i = batch.first; i < batch.second; i++) {
      if (items[i].generates())
        lines += generation_line(items[i], generations[next_generated++]);
      else
        lines += score_line(items[i], scores[next_scored++], command.events);
    }
    done += static_cast<int64_t>(batch.second - batch.first);
    if (throttle.should_emit(done, total)) progress(done);
  }
  return lines;
}

}  // namespace bprof
