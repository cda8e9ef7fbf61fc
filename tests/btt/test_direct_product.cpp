// The direct time-domain product (shiftop/btt/direct_product.hpp), the baseline behind every
// "speed-up over the direct product" the tool reports, against the explicit dense block Toeplitz
// matrix (support/dense_reference.hpp): F and F*, on odd and tiny sizes, tall and wide, with every
// thread count splitting the output blocks unevenly. Outputs are poisoned with NaN first, so a
// block the product leaves unwritten (or only accumulates into) fails.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "shiftop/btt/direct_product.hpp"
#include "support/dense_reference.hpp"
#include "support/expect_error.hpp"

namespace shiftop::btt {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

class DirectProduct : public ::testing::TestWithParam<Shape> {};

TEST_P(DirectProduct, MatchesTheDenseMatrixForFAndItsAdjoint) {
  const Shape s = GetParam();
  const auto kernels = testing::random_vector(static_cast<std::size_t>(s.kernel_size()), 5);
  const auto dense = testing::dense_block_toeplitz(kernels, {}, s);
  const index_t rows = s.nd * s.nt, cols = s.nm * s.nt;
  const auto m = testing::random_vector(static_cast<std::size_t>(cols), 6);
  const auto d = testing::random_vector(static_cast<std::size_t>(rows), 7);
  const auto fm = testing::dense_apply(dense, rows, cols, false, m, 1);
  const auto fd = testing::dense_apply(dense, rows, cols, true, d, 1);
  for (int threads : {1, 2, 3, 0}) {
    std::vector<double> y(fm.size(), kNaN), x(fd.size(), kNaN);
    direct_product(kernels, s, m, y, threads);
    direct_adjoint_product(kernels, s, d, x, threads);
    // Both sum the same products as the dense matrix, in another order: FP64 rounding only.
    EXPECT_LT(testing::relative_error(y, fm), 1e-14) << threads << " threads";
    EXPECT_LT(testing::relative_error(x, fd), 1e-14) << threads << " threads";
  }
}

std::string shape_name(const ::testing::TestParamInfo<Shape>& param) {
  const Shape& s = param.param;
  return fmt::format("nd{}_nm{}_nt{}", s.nd, s.nm, s.nt);
}

// Nt = 1 (a plain matrix), Nd = 1 and Nm = 1, odd sizes, more blocks than threads on both sides.
INSTANTIATE_TEST_SUITE_P(Shapes, DirectProduct,
                         ::testing::Values(Shape{1, 1, 1}, Shape{3, 5, 1}, Shape{1, 7, 13},
                                           Shape{9, 1, 11}, Shape{5, 3, 17}, Shape{13, 37, 31}),
                         shape_name);

TEST(DirectProductInputs, WrongSizesAreRefused) {
  const Shape s{2, 3, 4};
  const auto k = testing::random_vector(static_cast<std::size_t>(s.kernel_size()), 1);
  std::vector<double> m(12), d(8);
  using testing::expect_error;
  expect_error([&] { direct_product(std::span(k).first(23), s, m, d); },
               "kernel array holds 23 values, expected 24");
  expect_error([&] { direct_product(k, s, std::span(m).first(11), d); },
               "input holds 11 values, expected 3 blocks of 4");
  expect_error([&] { direct_adjoint_product(k, s, d, std::span(m).first(8)); },
               "output holds 8 values, expected 3 blocks of 4");
  expect_error([&] { direct_product(k, Shape{2, 3, 0}, m, d); }, "positive");
}

}  // namespace
}  // namespace shiftop::btt
