// bprof-runner entry point: signal handling, then the command line (cli.cpp).
#include <signal.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

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

// glibc's malloc hands blocks above a (moving) threshold back to the kernel on free and trims the
// top of the heap once 2x that much is free there. The forward pass allocates and frees
// activations of a few MB dozens of times per batch, and each time the kernel zeroes fresh pages
// again (page faults were a few % of scoring time). Keep blocks up to 32 MB (glibc's largest
// mmap threshold) in the heap, and trim its top only once a GB is free there: memory stays near
// the run's peak, which it reaches on every batch anyway.
void tune_malloc() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  install_signal_handlers();
  tune_malloc();
  bprof::CliContext context;
  context.events = stdout;
  context.cancelled = [] { return g_cancel != 0; };
  return bprof::run_cli(argc, argv, context);
}
