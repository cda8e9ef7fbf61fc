#include "signal_cleanup.hpp"

#include <pthread.h>
#include <unistd.h>

#include <csignal>
#include <thread>

#include "io/temporaries.hpp"

namespace shiftop::app {

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
  std::thread([signals] {
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
  }).detach();
}

}  // namespace shiftop::app
