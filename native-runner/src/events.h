// NDJSON events on stdout (PROTOCOL.md "Events"). One JSON object per line, flushed at once so the
// TypeScript side sees progress as it happens. Torch-free.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace bprof {

// The variant a `profile` is scoring, named in its `score` progress so that a user sees which
// ablation the count is of. An empty ability (and method) is the random control; `draw`, which of
// its random draws (named only when the job has several, `ablation.random_draws`; -1 otherwise).
struct ScoredVariant {
  std::string ability;
  std::string method;
  std::string selection;
  double k = 0;
  int64_t draw = -1;
};

class EventWriter {
 public:
  explicit EventWriter(std::FILE* out) : out_(out) {}

  void start(const std::string& subcommand, const std::string& runner_version, const std::string& device, int threads);
  void progress(const std::string& phase, int64_t done, int64_t total);
  void progress(const std::string& phase, int64_t done, int64_t total, const std::string& ability);
  void progress(const std::string& phase, int64_t done, int64_t total, const ScoredVariant& variant);
  // `profile`: a variant's scores are on disk. An empty ability is the ability-free random control;
  // `draw` (>= 0) its random draw, when the job has several.
  void variant(const std::string& ability, const std::string& selection, double k, int64_t n, const std::string& file, bool resumed,
               int64_t draw = -1);
  void warning(const std::string& message);
  void result(const std::string& file, int64_t items);
  void summary(double seconds);
  void error(const std::string& code, const std::string& message);

 private:
  void emit(const std::string& line);
  std::FILE* out_;
};

// Limits progress events to a few per second: always the first and the last of a phase, otherwise
// only when `interval` has passed since the previous one, so a job of 100k items does not send 100k
// lines.
class ProgressThrottle {
 public:
  explicit ProgressThrottle(std::chrono::milliseconds interval = std::chrono::milliseconds(200)) : interval_(interval) {}
  bool should_emit(int64_t done, int64_t total);

 private:
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point last_{};
  bool emitted_ = false;
};

}  // namespace bprof
