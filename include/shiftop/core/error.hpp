// The one exception type of shiftop and the checks that raise it (docs/architecture.md,
// "Errors and conventions").
#pragma once

#include <fmt/format.h>

#include <utility>

#include "shiftop/core/error_type.hpp"

namespace shiftop {

/// Throws shiftop::Error with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

/// Throws shiftop::Error with the formatted message unless `condition` holds.
template <typename... Args>
void require(bool condition, fmt::format_string<Args...> format, Args&&... args) {
  if (!condition) fail(format, std::forward<Args>(args)...);
}

}  // namespace shiftop
