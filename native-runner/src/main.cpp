// bprof-runner entry point: signal handling, then the command line (cli.cpp).
#include <signal.h>
#include <unistd.h>

#include <csignal>

#include "cli.h"

namespace {

volatile std::sig_atomic_t g_cancel = 0;

// First SIGINT/SIGTERM: ask the run to stop at the next item boundary (it then reports
// `cancelled` and exits 130). A second one means "now": leave at once, still with 130.
extern "C" void on_signal(int) {
  if (g_cancel) _exit(130);
  g_cancel = 1;
}

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // a reader that goes away must not kill us halfway through writing a result file
  signal(SIGPIPE, SIG_IGN);
}

}  // namespace

int main(int argc, char** argv) {
  install_signal_handlers();
  bprof::CliContext context;
  context.events = stdout;
  context.cancelled = [] { return g_cancel != 0; };
  return bprof::run_cli(argc, argv, context);
}
