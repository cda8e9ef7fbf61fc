// What every fuzz harness requires of a parser: it returns a result whose properties hold, or
// it throws shiftop::Error with a one-line message naming the input. Anything else (another
// exception, a sanitizer report, a broken property) stops the fuzzer, which saves the input.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace shiftop::fuzz {

/// Aborts, so that libFuzzer reports the current input as a crash, unless `condition` holds.
inline void check(bool condition, const char* property) {
  if (condition) return;
  std::fprintf(stderr, "fuzz property violated: %s\n", property);
  std::abort();
}

/// The CLI prints an error message on one line, and the message must say which input it is about.
inline void check_error_message(std::string_view message, std::string_view name) {
  check(message.find('\n') == std::string_view::npos, "the error message is one line");
  check(message.find(name) != std::string_view::npos, "the error message names the input");
}

}  // namespace shiftop::fuzz
