// The blocked one-sided Jacobi method (svd/blocked.hpp) and its dense kernels
// (svd/dense_kernels.hpp): Gram matrix, Cholesky and postmultiplication against plain loops on
// sizes that leave partial register tiles; block boundaries (even count, n_plus kept); the
// blocked method against the pointwise one with G_in V = G_out; the QR shortening taken for
// columns scaled by 2^664 (~1e200, the Gram matrix overflows), 2^-664 (it underflows) and for
// nearly dependent columns (Cholesky loses them), with the values still right; the QR path
// converging on random matrices near 1e200.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <vector>

#include "svd/blocked.hpp"
#include "svd/dense_kernels.hpp"
#include "svd/pointwise.hpp"

namespace {

using shiftop::index_t;
using shiftop::svd::Real;
using shiftop::svd::StrategyKind;
namespace detail = shiftop::svd::detail;

template <class T>
constexpr bool kComplex = !std::is_same_v<T, Real<T>>;

template <class T>
std::vector<T> random_matrix(index_t m, index_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<T> a(static_cast<std::size_t>(m * n));
  for (T& x : a) {
    if constexpr (kComplex<T>)
      x = T(static_cast<Real<T>>(normal(rng)), static_cast<Real<T>>(normal(rng)));
    else
      x = static_cast<T>(normal(rng));
  }
  return a;
}

template <class T>
double eps() {
  return static_cast<double>(std::numeric_limits<Real<T>>::epsilon());
}

template <class T>
std::complex<double> widen(T x) {
  return {static_cast<double>(std::real(x)), static_cast<double>(std::imag(x))};
}

template <class T>
class Blocked : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(Blocked, Types);

// Gram (upper triangle) and postmultiplication against double-precision loops; rows and column
// counts that are not multiples of the vector width or the register tiles.
TYPED_TEST(Blocked, KernelsMatchPlainLoops) {
  using T = TypeParam;
  using R = Real<T>;
  for (index_t rows : {1, 7, 17, 40}) {
    for (index_t c : {1, 2, 5, 9, 14}) {
      const std::vector<T> g = random_matrix<T>(rows, c, static_cast<unsigned>(rows * 31 + c));
      const index_t ld = detail::panel_ld<R>(rows);
      std::vector<R> re(static_cast<std::size_t>(ld * c), std::nan("")), im(re);
      detail::pack_planar(g.data(), rows, rows, 0, c, re.data(), im.data(), ld, 0);
      std::vector<T> h(static_cast<std::size_t>(c * c), T(std::nan("")));
      detail::gram_upper<T>(re.data(), kComplex<T> ? im.data() : nullptr, ld, c, h.data(), c);
      double worst = 0;
      for (index_t j = 0; j < c; ++j)
        for (index_t i = 0; i <= j; ++i) {
          std::complex<double> s = 0, scale = 0;
          for (index_t k = 0; k < rows; ++k) {
            s += std::conj(widen(g[k + i * rows])) * widen(g[k + j * rows]);
            scale += std::abs(widen(g[k + i * rows])) * std::abs(widen(g[k + j * rows]));
          }
          worst = std::max(worst, std::abs(widen(h[i + j * c]) - s) / std::abs(scale));
        }
      EXPECT_LE(worst, 2 * static_cast<double>(rows) * eps<T>()) << rows << " x " << c;

      const std::vector<T> x = random_matrix<T>(c, c, 99);
      std::vector<T> out(static_cast<std::size_t>(rows * c), T(std::nan("")));
      detail::postmultiply<T>(re.data(), kComplex<T> ? im.data() : nullptr, ld, rows, c, x.data(),
                              c, 1, c - 1, out.data(), rows);
      worst = 0;
      for (index_t j = 1; j < c; ++j)
        for (index_t i = 0; i < rows; ++i) {
          std::complex<double> s = 0, scale = 0;
          for (index_t k = 0; k < c; ++k) {
            s += widen(g[i + k * rows]) * widen(x[k + j * c]);
            scale += std::abs(widen(g[i + k * rows])) * std::abs(widen(x[k + j * c]));
          }
          worst = std::max(worst, std::abs(widen(out[i + (j - 1) * rows]) - s) / std::abs(scale));
        }
      EXPECT_LE(worst, 2 * static_cast<double>(c) * eps<T>()) << rows << " x " << c;
    }
  }
}

TEST(BlockBoundaries, EvenCountNearWidthAndSignsKept) {
  const auto check = [](index_t cols, index_t width, index_t n_plus) {
    const std::vector<index_t> b = detail::block_boundaries(cols, width, n_plus);
    const auto count = static_cast<index_t>(b.size()) - 1;
    EXPECT_EQ(count % 2, 0) << cols << " " << width << " " << n_plus;
    EXPECT_GE(count, 2);
    EXPECT_EQ(b.front(), 0);
    EXPECT_EQ(b.back(), cols);
    for (index_t k = 0; k < count; ++k)
      EXPECT_GT(b[k + 1], b[k]);
    return b;
  };
  EXPECT_EQ(check(64, 16, 64), (std::vector<index_t>{0, 16, 32, 48, 64}));
  EXPECT_EQ(check(2, 16, 2), (std::vector<index_t>{0, 1, 2}));
  EXPECT_EQ(check(3, 1, 3).size(), 3u);  // 3 blocks of 1 would be odd: 2
  for (index_t cols = 2; cols < 80; ++cols)
    for (index_t width : {1, 3, 8})
      for (index_t n_plus : {index_t{1}, cols / 3, cols - 1}) {
        const auto b = check(cols, width, n_plus);
        if (n_plus > 0 && n_plus < cols && !(n_plus == 1 && cols - n_plus == 2)) {
          EXPECT_NE(std::find(b.begin(), b.end(), n_plus), b.end())
              << cols << " " << width << " " << n_plus;
        }
      }
}

// Runs the blocked method on a copy of g with V = I; checks G_in V = G_out and that the column
// norms (the singular values) match the pointwise method's to `tolerance` eps relative.
template <class T>
detail::BlockedCounts compare_with_pointwise(const std::vector<T>& g, index_t rows, index_t cols,
                                             index_t width, bool full_block, double tolerance,
                                             bool relative_to_largest = false) {
  std::vector<T> blocked(g), pointwise(g);
  std::vector<T> v(static_cast<std::size_t>(cols * cols), T(0));
  for (index_t i = 0; i < cols; ++i)
    v[i + i * cols] = T(1);
  const auto counts =
      detail::orthogonalize_blocked(blocked.data(), rows, cols, rows, v.data(), cols, cols, {},
                                    StrategyKind::RowCyclicClosest, width, full_block, 60, 1);
  EXPECT_TRUE(counts.counts.converged);
  detail::orthogonalize_pointwise<T>(
      pointwise.data(), rows, cols, rows, nullptr, 0, 0, {},
      shiftop::svd::Strategy::create(StrategyKind::RowCyclicClosest, cols), 60, true, 1);
  const auto norms = [&](const std::vector<T>& x) {
    std::vector<double> s;
    for (index_t j = 0; j < cols; ++j) {
      long double t = 0;
      for (index_t i = 0; i < rows; ++i)
        t += std::norm(std::complex<long double>(widen(x[i + j * rows])));
      s.push_back(static_cast<double>(std::sqrt(t)));
    }
    std::sort(s.begin(), s.end());
    return s;
  };
  const std::vector<double> a = norms(blocked), b = norms(pointwise);
  double worst = 0;
  for (index_t j = 0; j < cols; ++j)
    worst = std::max(worst, std::abs(a[j] - b[j]) / (relative_to_largest ? b.back() : b[j]));
  EXPECT_LE(worst, tolerance * eps<T>()) << rows << " x " << cols << " width " << width;
  // G_in V = G_out, relative to ||G||.
  double residual = 0, norm = 0;
  for (index_t j = 0; j < cols; ++j)
    for (index_t i = 0; i < rows; ++i) {
      std::complex<double> s = 0;
      for (index_t k = 0; k < cols; ++k)
        s += widen(g[i + k * rows]) * widen(v[k + j * cols]);
      residual = std::max(residual, std::abs(s - widen(blocked[i + j * rows])));
      norm = std::max(norm, std::abs(widen(g[i + j * rows])));
    }
  EXPECT_LE(residual / norm, 20 * std::sqrt(static_cast<double>(cols)) * eps<T>());
  return counts;
}

// Block boundaries crossed: n = w - 1, w, w + 1, 2w + 1 and odd n for w = 4 and 8; both the
// block-oriented and the full-block variant.
TYPED_TEST(Blocked, AgreesWithPointwise) {
  unsigned seed = 40;
  for (index_t width : {4, 8})
    for (index_t cols : {width - 1, width, width + 1, 2 * width + 1, index_t{37}})
      for (bool full_block : {false, true}) {
        const index_t rows = cols + 5;
        const auto counts = compare_with_pointwise(random_matrix<TypeParam>(rows, cols, seed++),
                                                   rows, cols, width, full_block, 30);
        EXPECT_EQ(counts.qr_shortenings, 0);
      }
}

// Every pair shortened by QR when all columns are scaled by 2^664 or 2^-664 (the Gram matrix
// would overflow or underflow); the values are the unscaled ones times the scale, exactly up to
// rounding.
TEST(BlockedQrShortening, TakenForColumnsNear1e200And1eMinus200) {
  const index_t rows = 30, cols = 24, width = 4;
  const std::vector<double> g = random_matrix<double>(rows, cols, 3);
  for (int e : {664, -664}) {
    std::vector<double> scaled(g);
    for (double& x : scaled)
      x = std::ldexp(x, e);
    const auto counts = compare_with_pointwise(scaled, rows, cols, width, true, 30);
    const std::int64_t pairs = (cols / width) * (cols / width - 1) / 2;
    // Every pair of every block-sweep takes the QR path: shortened by QR, or first found relatively
    // orthogonal on G's own columns and left alone (svd/blocked.cpp); none by Gram + Cholesky.
    EXPECT_EQ(counts.qr_shortenings + counts.skipped_orthogonal, pairs * counts.counts.sweeps)
        << "scale 2^" << e;
    EXPECT_GT(counts.qr_shortenings, 0) << "scale 2^" << e;
  }
}

// Householder's rounding moves the cosines of R_pq's columns away from G's by up to a few eps, as
// much as the orthogonality threshold of a small G (sqrt(20) eps for 20 x 16). Judged on R_pq,
// some random matrices scaled by 2^664 kept rotating two columns of G that were orthogonal to
// working accuracy, 60 block-sweeps (svd/blocked.cpp: 70 of 400 random 30 x 24 ones with the
// former c x c threshold, 12 of 2000 20 x 16 and 30 x 24 ones with G's threshold alone). Both
// variants, 100 random matrices of each size.
TEST(BlockedQrShortening, ConvergesForRandomMatricesNear1e200) {
  const index_t width = 4;
  for (const auto& [rows, cols] : {std::pair<index_t, index_t>{20, 16}, {30, 24}})
    for (bool full_block : {true, false})
      for (unsigned seed = 1; seed <= 100; ++seed) {
        std::vector<double> g = random_matrix<double>(rows, cols, seed);
        for (double& x : g)
          x = std::ldexp(x, 664);
        const auto counts = detail::orthogonalize_blocked<double>(
            g.data(), rows, cols, rows, nullptr, 0, 1, {}, StrategyKind::RowCyclicClosest, width,
            full_block, 60, 1);
        EXPECT_TRUE(counts.counts.converged)
            << rows << " x " << cols << " seed " << seed << (full_block ? " full block" : "")
            << ": " << counts.counts.sweeps << " block-sweeps";
        EXPECT_GT(counts.qr_shortenings, 0);
      }
}

// Two nearly dependent columns (difference 1e-9 relative) in one block: the Cholesky pivot keeps
// ~1e-18 of h_ii < sqrt(eps), so the pair is shortened by QR. The smallest value (~2e-9, with
// kappa ~4e9 even after column scaling) is then only accurate to eps * kappa relative in any
// Jacobi method (measured against LAPACK dgesvj: pointwise 9e-8, blocked 3e-9 and 5e-8), so the
// values are compared relative to the largest.
TEST(BlockedQrShortening, TakenForNearlyDependentColumns) {
  const index_t rows = 20, cols = 16, width = 4;
  std::vector<double> g = random_matrix<double>(rows, cols, 8);
  const std::vector<double> d = random_matrix<double>(rows, 1, 9);
  for (index_t i = 0; i < rows; ++i)
    g[i + 1 * rows] = g[i] + 1e-9 * d[i];
  const auto counts = compare_with_pointwise(g, rows, cols, width, true, 40, true);
  EXPECT_GT(counts.qr_shortenings, 0);
}

}  // namespace
