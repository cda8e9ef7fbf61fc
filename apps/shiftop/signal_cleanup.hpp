// SIGINT, SIGTERM and SIGHUP end the tool without leaving the temporaries of its outputs behind.
#pragma once

namespace shiftop::app {

/// Blocks those signals in the calling thread, and so in every thread created after it (OpenMP,
/// FFTW, MPI): call it first in main(). One thread then waits for them with sigwait(), removes
/// the registered temporaries (io/temporaries.hpp) and ends the process by the same signal, so
/// that the shell sees the conventional status 128 + signal (130, 143). Signals ignored when the
/// tool starts (nohup, background jobs) stay ignored.
void install_signal_cleanup();

}  // namespace shiftop::app
