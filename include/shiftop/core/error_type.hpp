// shiftop::Error alone, without fmt, for translation units nvcc compiles (fmt's compile-time
// format checks do not build under nvcc in C++20 mode).
#pragma once

#include <stdexcept>

namespace shiftop {

/// Raised for every user-visible failure: bad input, bad option, a failed library call.
/// The message says what was wrong and what was expected; the CLI prints it on one line.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace shiftop
