// Command line of bprof-runner (PROTOCOL.md): argument parsing and the `score` subcommand.
// Torch-free: the compute side is reached through engine.h.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

namespace bprof {

constexpr const char* kRunnerVersion = "0.1.0";

struct CliContext {
  std::FILE* events = stdout;       // NDJSON events go here and nothing else does
  std::function<bool()> cancelled;  // true once SIGINT/SIGTERM arrived
};

// Runs the command line; returns the process exit code. Never throws: every failure becomes one
// `error` event (the last line) and the exit code of PROTOCOL.md.
int run_cli(int argc, const char* const* argv, const CliContext& context);

}  // namespace bprof
