#include "signal_cleanup.hpp"

#include <pthread.h>
#include <unistd.h>

#include <csignal>
#include <thread>

#include "shiftop/io/atomic_output.hpp"

namespace shiftop::app {
namespace {

pthread_t cleanup_thread;

// Threads that libraries start before main (OpenBLAS's pool, linked for the inverse layer's LAPACK
// and BLAS calls) do not inherit main's blocked mask, so the kernel may deliver a process-directed
// SIGINT to one of them, and its default action would end the process before the temporaries are
// removed. This handler runs only in such threads and hands the signal on to the cleanup thread
// (pthread_kill is async-signal-safe since POSIX.1-2008 TC1).
extern "C" void forward_to_cleanup_thread(int signal) {
  pthread_kill(cleanup_thread, signal);
}

}  // namespace

void install_signal_cleanup() {
  sigset_t signals;
  sigemptyset(&signals);
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction current {};
    // Linux delivers a blocked signal even if ignored: add only those not ignored at start.
    if (sigaction(signal, nullptr, &current) == 0 && current.sa_handler != SIG_IGN)
      sigaddset(&signals, signal);
  }
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread cleanup([signals] {
    int signal = 0;
    while (sigwait(&signals, &signal) != 0) {
    }
    io::remove_temporaries_for_exit();
    // Die by the signal itself: its default action, unblocked in this thread only.
    std::signal(signal, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, signal);
    pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
    std::raise(signal);
    ::_exit(128 + signal);  // not reached unless the signal's default action is overridden
  });
  cleanup_thread = cleanup.native_handle();
  cleanup.detach();
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) {
    if (sigismember(&signals, signal) != 1) continue;
    struct sigaction forward {};
    forward.sa_handler = forward_to_cleanup_thread;
    sigemptyset(&forward.sa_mask);
    sigaction(signal, &forward, nullptr);
  }
}

}  // namespace shiftop::app
