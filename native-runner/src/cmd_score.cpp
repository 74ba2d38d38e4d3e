// `bprof-runner score`: the unmodified model's log-likelihoods of every item (PROTOCOL.md).
#include <chrono>

#include "commands.h"
#include "files.h"

namespace bprof {

int run_score(const Command& command) {
  const auto t0 = std::chrono::steady_clock::now();
  Job job = load_job_for(command);
  prepare_output_dir(command.args.out);
  ModelConfig config;
  std::unique_ptr<Engine> engine = open_engine(command, job, config);

  std::string lines = score_items(command, *engine, job.items, "score");
  write_file_atomic(command.args.out + "/scores.jsonl", lines);
  command.events.result("scores.jsonl", static_cast<int64_t>(job.items.size()));
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - t0;
  command.events.summary(elapsed.count());
  return 0;
}

}  // namespace bprof
