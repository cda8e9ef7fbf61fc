// Sizes read from HDF5 attributes: integers or integral floats of any width, nothing else.
#include "io/attribute_value.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "support/io_test_support.hpp"

namespace shiftop::io {
namespace {

using shiftop::testing::contains;
using shiftop::testing::error_of;

TEST(AttributeValueTest, AcceptsIntegersAndIntegralFloats) {
  EXPECT_EQ(attribute_to_count(std::int64_t{5000}, "n_param"), 5000);
  EXPECT_EQ(attribute_to_count(std::int64_t{0}, "n_param"), 0);
  EXPECT_EQ(attribute_to_count(5000.0, "n_param"), 5000);
  EXPECT_EQ(attribute_to_count(-0.0, "n_param"), 0);
  EXPECT_EQ(attribute_to_count(std::string("42"), "n_param"), 42);
  EXPECT_EQ(attribute_to_count(kMaxAttributeCount, "n_param"), kMaxAttributeCount);
  EXPECT_EQ(attribute_to_count(static_cast<double>(kMaxAttributeCount), "n_param"),
            kMaxAttributeCount);
}

TEST(AttributeValueTest, RefusesEverythingElseNamingTheContext) {
  const std::vector<std::pair<AttributeValue, std::string>> cases = {
      {5000.5, "got 5000.5"},
      {std::nan(""), "got nan"},
      {std::numeric_limits<double>::infinity(), "got inf"},
      {-std::numeric_limits<double>::infinity(), "got -inf"},
      {-1.0, "got -1"},
      {std::int64_t{-3}, "got -3"},
      {std::int64_t{kMaxAttributeCount + 1}, "got 1099511627777"},
      {std::numeric_limits<double>::max(), "got 1.79"},
      {1e300, "got 1e+300"},
      {std::string("12a"), "the string '12a'"},
      {std::string(" 12"), "the string ' 12'"},
      {std::string(""), "the string ''"},
      {std::string("-1"), "the string '-1'"},
      {std::string("1e3"), "the string '1e3'"},
      {std::string("99999999999999999999999"), "the string '99999999999999999999999'"},
      {std::vector<std::int64_t>{4, 5}, "the array [4, 5]"},
      {std::vector<double>{4.0, 0.5}, "the array [4, 0.5]"},
  };
  for (const auto& [value, words] : cases) {
    SCOPED_TRACE(words);
    const std::string message =
        error_of([&] { attribute_to_count(value, "F.h5: attribute 'nt'"); });
    EXPECT_TRUE(contains(message, "F.h5: attribute 'nt': expected a non-negative integer count"))
        << message;
    EXPECT_TRUE(contains(message, words)) << message;
  }
}

TEST(AttributeValueTest, PrintsValuesExactly) {
  EXPECT_EQ(attribute_to_string(std::int64_t{-7}), "-7");
  EXPECT_EQ(attribute_to_string(0.1), "0.1");
  EXPECT_EQ(attribute_to_string(std::string("m/s")), "m/s");
  EXPECT_EQ(attribute_to_string(std::vector<std::int64_t>{64, -1}), "[64, -1]");
  EXPECT_EQ(attribute_to_string(std::vector<double>{0.1, 2.5}), "[0.1, 2.5]");
}

// A fuzzing smoke test: any double only ever yields a count equal to it or a shiftop::Error.
TEST(AttributeValueTest, ArbitraryDoublesOnlyRaiseShiftopErrors) {
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 100000; ++trial) {
    const double value = std::bit_cast<double>(random());
    try {
      EXPECT_EQ(static_cast<double>(attribute_to_count(value, "fuzz")), value);
    } catch (const Error&) {
    }
  }
}

}  // namespace
}  // namespace shiftop::io
