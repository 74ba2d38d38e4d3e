// bprof-runner entry point: signal handling, then the command line (cli.cpp).
#include <signal.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include <csignal>
#include <cstdlib>
#include <string>

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

// BPROF_STOP_WITH_PARENT=<pid>: the local launcher (bprof, or the editor) is that process. When it
// is gone (killed, its window reloaded), nobody reads our events and a resume would start a
// second runner on the same folder: stop as on SIGTERM, at the next item, leaving the folder
// resumable. Launchers that mean the runner to outlive them (a detached remote run) do not set it.
void stop_with_parent() {
#if defined(__linux__)
  const char* expected = std::getenv("BPROF_STOP_WITH_PARENT");
  if (expected == nullptr || *expected == '\0') return;
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  // The parent may have gone before prctl took effect: then we were reparented already.
  if (std::to_string(getppid()) != expected) raise(SIGTERM);
#endif
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
  stop_with_parent();
  tune_malloc();
  bprof::CliContext context;
  context.events = stdout;
  context.cancelled = [] { return g_cancel != 0; };
  return bprof::run_cli(argc, argv, context);
}
