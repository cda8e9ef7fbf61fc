// Every MPI call is checked: the communicators shiftop creates return errors instead of aborting
// (MPI_ERRORS_RETURN, set on the grid's duplicate of the user's communicator and inherited by
// the row and column communicators), and check_mpi turns a failure into shiftop::Error.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string_view>

#include "shiftop/core/error.hpp"

namespace shiftop::distributed {

/// Throws shiftop::Error "<call> failed: <MPI's error string>" unless `code` is MPI_SUCCESS.
inline void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  fail("{} failed: {}", call,
       length > 0 ? std::string_view(text, static_cast<std::size_t>(length)) : "unknown MPI error");
}

}  // namespace shiftop::distributed
