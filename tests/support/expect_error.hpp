// The check every bad-input test makes: the action throws a shiftop::Error whose one-line
// message mentions what was wrong.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "shiftop/core/error.hpp"

namespace shiftop::testing {

/// Runs `action`; expects a shiftop::Error whose message contains `expected`.
template <typename Action>
void expect_error(Action&& action, const std::string& expected) {
  try {
    action();
    ADD_FAILURE() << "no shiftop::Error raised; expected one mentioning '" << expected << "'";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(expected), std::string::npos)
        << "message '" << error.what() << "' does not mention '" << expected << "'";
  }
}

}  // namespace shiftop::testing
