// The subcommands of bprof-runner and what they share: parsed arguments, opening the engine with
// its events, scoring a list of items. Torch-free: the compute side is reached through engine.h.
// One subcommand, one file: cmd_<name>.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "engine.h"
#include "events.h"
#include "job.h"

namespace bprof {

struct Args {
  std::string subcommand;
  std::string job;
  std::string out;
  int threads = 0;  // 0: the cores this process may use (cpus.h)
  bool version = false;
  bool families = false;  // --families: print the family table (config.h, families_table_json)
  bool help = false;
};

// What every subcommand gets.
struct Command {
  const Args& args;
  EventWriter& events;
  const CliContext& context;
  bool cancelled() const { return context.cancelled && context.cancelled(); }
};

int run_score(const Command& command);
int run_profile(const Command& command);
int run_bench(const Command& command);
int run_train(const Command& command);  // cmd_train.cpp, train.h
int run_info(const Command& command);   // cmd_info.cpp

// The CUDA driver's names of devices cuda:0 .. cuda:count-1 (cmd_info.cpp); an empty name where the
// driver cannot say.
std::vector<std::string> cuda_device_names(int64_t count);

// Reads the job file and checks that it was written for this subcommand; sets the thread count and
// writes the `start` event. Throws RunnerError(bad_job).
Job load_job_for(const Command& command);

enum class EngineLoad {
  weights,               // the checks, then the weights
  shapes_only,           // the checks, then the checkpoint's headers only (EngineOptions::shapes_only)
  weights_after_shapes,  // the weights of a model opened shapes_only: its checks and warnings were given then
};

// Checks device, dtype, config and token ids (everything cheap) and then loads the model as `load`
// says, with `load` progress events for its weights. Throws RunnerError.
std::unique_ptr<Engine> open_engine(const Command& command, const Job& job, ModelConfig& config, EngineLoad load = EngineLoad::weights);

// Padded tokens per forward pass (plan_batches) unless BPROF_BATCH_TOKENS says otherwise (a tuning
// knob outside the protocol: results do not depend on it beyond float rounding).
constexpr int64_t kDefaultBatchTokens = 2048;

// Scores `items` in batches (item boundaries are where cancellation stops the run), with progress
// events of `phase`; returns the lines of a scores file (PROTOCOL.md) in item order.
// `variant`: the ablation being scored, named in each progress event; null for unablated scoring.
std::string score_items(const Command& command, Engine& engine, const std::vector<Item>& items, const std::string& phase,
                        const ScoredVariant* variant = nullptr);

}  // namespace bprof
