// Agreement on failure for collective set-up steps: a bad kernel slice or an unreadable file on
// one rank must make every rank throw, not leave the others waiting in the next collective.
#pragma once

#include <mpi.h>

#include <exception>
#include <optional>
#include <string>

namespace shiftop::distributed {

/// Collective over `comm`. Every rank passes the message of its local failure, or nothing; if
/// any rank failed, every rank throws shiftop::Error "rank R: <message>" for the lowest such R.
void agree_on_failure(MPI_Comm comm, const std::optional<std::string>& local_failure);

/// Runs `step` on this rank, then agrees with the other ranks of `comm` on whether it failed
/// anywhere (agree_on_failure).
template <typename Step>
void run_collectively(MPI_Comm comm, Step&& step) {
  std::optional<std::string> failure;
  try {
    step();
  } catch (const std::exception& e) {
    failure = e.what();
  }
  agree_on_failure(comm, failure);
}

}  // namespace shiftop::distributed
