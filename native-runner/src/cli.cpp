// Argument parsing and dispatch to the subcommands (commands.h, one cmd_<name>.cpp each).
#include "cli.h"

#include <cstdlib>
#include <map>

#include "commands.h"
#include "config.h"
#include "engine.h"
#include "errors.h"
#include "events.h"

namespace bprof {

namespace {

using Subcommand = int (*)(const Command&);

const std::map<std::string, Subcommand>& subcommands() {
  static const std::map<std::string, Subcommand> table = {
      {"score", run_score}, {"profile", run_profile}, {"bench", run_bench}, {"train", run_train}, {"info", run_info},
  };
  return table;
}

std::string subcommand_names() {
  std::string names;
  for (const auto& kv : subcommands()) names += (names.empty() ? "" : ", ") + kv.first;
  return names;
}

std::string usage() {
  return "usage: bprof-runner <subcommand> --job FILE --out DIR [--threads N]\n"
         "       bprof-runner --version\n"
         "       bprof-runner --families   (the family table as JSON, on stdout)\n"
         "subcommands: " +
         subcommand_names() +
         "\n"
         "Events (NDJSON) go to stdout, results to files under DIR; see PROTOCOL.md.\n";
}

RunnerError bad_arguments(const std::string& what) { return RunnerError(ErrorCode::bad_arguments, what); }

int parse_threads(const std::string& value) {
  char* end = nullptr;
  long n = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || n < 1 || n > 4096) throw bad_arguments("--threads wants a positive integer, got '" + value + "'");
  return static_cast<int>(n);
}

// Accepts `--name value` and `--name=value`.
Args parse_args(int argc, const char* const* argv) {
  Args a;
  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i];
    if (arg == "--version") {
      a.version = true;
      continue;
    }
    if (arg == "--families") {
      a.families = true;
      continue;
    }
    if (arg == "--help" || arg == "-h") {
      a.help = true;
      continue;
    }
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
      if (name == "--job")
        a.job = value;
      else if (name == "--out")
        a.out = value;
      else if (name == "--threads")
        a.threads = parse_threads(value);
      else
        throw bad_arguments("unknown option " + name);
      continue;
    }
    if (!a.subcommand.empty()) throw bad_arguments("unexpected argument '" + arg + "'");
    a.subcommand = arg;
  }
  if (a.version || a.help || a.families) return a;
  if (a.subcommand.empty()) throw bad_arguments("no subcommand given");
  if (!subcommands().count(a.subcommand))
    throw bad_arguments("unknown subcommand '" + a.subcommand + "' (this runner knows: " + subcommand_names() + ")");
  if (a.job.empty()) throw bad_arguments("--job FILE is required");
  if (a.out.empty()) throw bad_arguments("--out DIR is required");
  return a;
}

}  // namespace

int run_cli(int argc, const char* const* argv, const CliContext& context) {
  EventWriter events(context.events);
  try {
    Args args = parse_args(argc, argv);
    if (args.help) {
      std::fputs(usage().c_str(), stderr);
      return 0;
    }
    if (args.families) {
      std::fputs(families_table_json().c_str(), stdout);
      return 0;
    }
    if (args.version) {
      std::printf("bprof-runner %s (protocol %d, libtorch %s)\n", kRunnerVersion, kProtocolVersion, libtorch_version().c_str());
      return 0;
    }
    return subcommands().at(args.subcommand)(Command{args, events, context});
  } catch (...) {
    RunnerError error = classify_exception(std::current_exception());
    if (error.code() == ErrorCode::bad_arguments) std::fputs(usage().c_str(), stderr);
    std::fprintf(stderr, "bprof-runner: %s: %s\n", error_code_name(error.code()), error.what());
    events.error(error_code_name(error.code()), error.what());
    return exit_code_for(error.code());
  }
}

}  // namespace bprof
