// svd/column_norms.hpp against long double: entries near the overflow threshold, near and below
// the underflow threshold (subnormals), mixed magnitudes, float and double, real and complex.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <vector>

#include "svd/column_norms.hpp"

namespace shiftop::svd::detail {
namespace {

template <class R>
long double reference_norm(const std::vector<R>& x) {
  // long double has 15 more exponent bits: the plain sum of squares is exact enough and safe.
  long double sum = 0;
  for (const R v : x)
    sum += static_cast<long double>(v) * static_cast<long double>(v);
  return std::sqrt(sum);
}

template <class R>
class ColumnNorms : public ::testing::Test {};
using Reals = ::testing::Types<double, float>;
TYPED_TEST_SUITE(ColumnNorms, Reals);

// Random entries with exponents drawn from [low, high] (and random signs and mantissas).
template <class R>
std::vector<R> random_entries(index_t n, int low, int high, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<R> mantissa(1, 2);
  std::uniform_int_distribution<int> exponent(low, high);
  std::vector<R> x(static_cast<std::size_t>(n));
  for (R& v : x)
    v = std::ldexp(mantissa(engine), exponent(engine)) * (engine() % 2 ? 1 : -1);
  return x;
}

TYPED_TEST(ColumnNorms, AccurateAcrossTheRange) {
  using R = TypeParam;
  using limits = std::numeric_limits<R>;
  const int top = limits::max_exponent - 1;           // 1023 (double), 127 (float)
  const int bottom = limits::min_exponent - 1;        // -1022, -126: the smallest normal's exponent
  const int subnormal = bottom - limits::digits + 2;  // -1073, -148: the smallest subnormals
  struct Range {
    int low, high;
  };
  // Near overflow (squares overflow; the norm of 1000 entries still fits), near underflow (squares
  // underflow), subnormal only, all mixed, one moderate range (the fast path).
  const Range ranges[] = {
      {top - 12, top - 6}, {bottom, bottom + 6},   {subnormal, bottom - 1}, {subnormal, top - 6},
      {-20, 20},           {bottom + 40, top - 40}};
  const double eps = limits::epsilon() / 2;
  for (const index_t n : {index_t{1}, index_t{2}, index_t{7}, index_t{33}, index_t{1000}}) {
    for (const Range range : ranges) {
      SCOPED_TRACE(::testing::Message()
                   << "n " << n << " exponents " << range.low << " .. " << range.high);
      const auto x = random_entries<R>(n, range.low, range.high, 40 + n);
      const long double expected = reference_norm(x);
      const R norm = safe_norm(x.data(), n);
      ASSERT_TRUE(std::isfinite(norm));
      // Measured worst: 3.9 eps (over both types, all n and ranges); a subnormal norm only carries
      // the result's own rounding, up to half its spacing (denorm_min / 2).
      EXPECT_LE(std::abs(norm - expected), 8 * eps * expected + limits::denorm_min() / 2);
    }
  }
  // The extremes themselves: max in every entry (the norm overflows only beyond max), and
  // denorm_min.
  const std::vector<R> largest(4, limits::max() / 2);
  EXPECT_EQ(safe_norm(largest.data(), 4), limits::max());
  const std::vector<R> smallest(4, limits::denorm_min());
  EXPECT_EQ(safe_norm(smallest.data(), 4), 2 * limits::denorm_min());
  const std::vector<R> zeros(5, R(0));
  EXPECT_EQ(safe_norm(zeros.data(), 5), R(0));
  EXPECT_EQ(safe_norm(zeros.data(), 0), R(0));
  const std::vector<R> with_nan{1, std::numeric_limits<R>::quiet_NaN(), 2};
  EXPECT_TRUE(std::isnan(safe_norm(with_nan.data(), 3)));
}

TYPED_TEST(ColumnNorms, ComplexColumnsUseBothParts) {
  using R = TypeParam;
  using limits = std::numeric_limits<R>;
  const R big = std::ldexp(R(1), limits::max_exponent - 2);
  const std::vector<std::complex<R>> column{{big, big}, {-big, 0}, {0, big}};
  // sqrt(4) big = 2 big.
  EXPECT_EQ(column_norm(column.data(), 3), 2 * big);
  const R tiny = limits::denorm_min() * 1024;
  const std::vector<std::complex<R>> small{{3 * tiny, 4 * tiny}};
  EXPECT_EQ(column_norm(small.data(), 1), 5 * tiny);
}

}  // namespace
}  // namespace shiftop::svd::detail
