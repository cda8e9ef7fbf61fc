// svd::spectrum against independent references: LAPACK's zgesvd on each F^[w] built by the
// direct O(Nt^2) DFT of the zero-padded kernels (no FFTW), and LAPACK's dgesvd on the explicit
// dense block-circulant embedding; closed forms for sigma max/min, kappa and the rank.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "shiftop/svd/spectrum.hpp"
#include "support/dense_reference.hpp"
#include "support/expect_error.hpp"

namespace shiftop::svd {
namespace {

using testing::expect_error;
using testing::kernel_dft;
using testing::random_vector;

constexpr double kEps = std::numeric_limits<double>::epsilon();

struct Kernels {
  std::vector<double> column;
  std::vector<double> row;  // empty: block lower-triangular
};

Kernels random_kernels(const Shape& s, bool general, unsigned seed) {
  Kernels k{random_vector(static_cast<std::size_t>(s.kernel_size()), seed), {}};
  if (general) {
    k.row = random_vector(static_cast<std::size_t>(s.kernel_size()), seed + 1);
    for (index_t e = 0; e < s.nd * s.nm; ++e)  // lag 0 is F_0 in both
      k.row[static_cast<std::size_t>(e * s.nt)] = k.column[static_cast<std::size_t>(e * s.nt)];
  }
  return k;
}

// The singular values of every F^[w] (w = 0..Nt) by LAPACK, row w descending.
std::vector<double> lapack_spectrum(const Kernels& k, const Shape& s) {
  const auto dft = kernel_dft(k.column, k.row, s);
  const index_t p = std::min(s.nd, s.nm);
  std::vector<double> sigma(static_cast<std::size_t>(btt::frequencies(s) * p));
  for (index_t w = 0; w < btt::frequencies(s); ++w) {
    std::vector<lapack_complex_double> a(static_cast<std::size_t>(s.nd * s.nm));
    for (index_t e = 0; e < s.nd * s.nm; ++e) {
      const auto v = dft[static_cast<std::size_t>(w * s.nd * s.nm + e)];
      a[static_cast<std::size_t>(e)] = lapack_make_complex_double(v.real(), v.imag());
    }
    std::vector<double> superb(static_cast<std::size_t>(p));
    const lapack_int info =
        LAPACKE_zgesvd(LAPACK_ROW_MAJOR, 'N', 'N', static_cast<lapack_int>(s.nd),
                       static_cast<lapack_int>(s.nm), a.data(), static_cast<lapack_int>(s.nm),
                       sigma.data() + w * p, nullptr, 1, nullptr, 1, superb.data());
    EXPECT_EQ(info, 0) << "zgesvd at w=" << w;
  }
  return sigma;
}

// The singular values of the explicit block-circulant embedding (period L = 2*Nt): block (i, j) of
// size L x L is the circulant of the padded kernel c_ij (lags 0..Nt-1, 0, then -(Nt-1)..-1).
std::vector<double> embedding_singular_values(const Kernels& k, const Shape& s) {
  const index_t L = 2 * s.nt, rows = s.nd * L, cols = s.nm * L;
  std::vector<double> a(static_cast<std::size_t>(rows * cols), 0.0);
  for (index_t i = 0; i < s.nd; ++i)
    for (index_t j = 0; j < s.nm; ++j) {
      const index_t kernel = (i * s.nm + j) * s.nt;
      for (index_t t = 0; t < L; ++t)
        for (index_t u = 0; u < L; ++u) {
          const index_t lag = ((t - u) % L + L) % L;
          double v = 0.0;
          if (lag < s.nt)
            v = k.column[static_cast<std::size_t>(kernel + lag)];
          else if (lag > s.nt && !k.row.empty())
            v = k.row[static_cast<std::size_t>(kernel + L - lag)];
          a[static_cast<std::size_t>((i * L + t) * cols + j * L + u)] = v;
        }
    }
  const index_t p = std::min(rows, cols);
  std::vector<double> sigma(static_cast<std::size_t>(p)), superb(static_cast<std::size_t>(p));
  const lapack_int info = LAPACKE_dgesvd(
      LAPACK_ROW_MAJOR, 'N', 'N', static_cast<lapack_int>(rows), static_cast<lapack_int>(cols),
      a.data(), static_cast<lapack_int>(cols), sigma.data(), nullptr, 1, nullptr, 1, superb.data());
  EXPECT_EQ(info, 0) << "dgesvd of the embedding";
  return sigma;
}

SpectrumOptions with_tolerance(double tolerance) {
  SpectrumOptions options;
  options.rank_tolerance = tolerance;
  return options;
}

SpectrumOptions with_threads(int threads) {
  SpectrumOptions options;
  options.threads = threads;
  return options;
}

struct Case {
  Shape shape;
  bool general;
};

class SpectrumAgainstLapack : public ::testing::TestWithParam<Case> {};

// Random operators: every singular value of every frequency against zgesvd on the direct DFT.
// The FFT's normwise rounding makes the error relative to the frequency's largest value: measured
// at most 4.7 eps * sigma_max(F^[w]) over these cases and the OpenBLAS kernels listed below; the
// bound is 16 * max(Nd, Nm, log2 2Nt + 1) eps.
TEST_P(SpectrumAgainstLapack, EveryFrequencyMatchesZgesvd) {
  const auto [s, general] = GetParam();
  const Kernels k = random_kernels(s, general, 17);
  const Spectrum got = spectrum(k.column, k.row, s);
  const std::vector<double> want = lapack_spectrum(k, s);
  const index_t p = std::min(s.nd, s.nm);
  ASSERT_EQ(got.shape, s);
  ASSERT_EQ(got.frequencies, s.nt + 1);
  ASSERT_EQ(got.per_frequency, p);
  ASSERT_EQ(got.sigma.size(), want.size());
  EXPECT_TRUE(got.converged);
  EXPECT_GE(got.max_sweeps, 1);
  const double scale = std::max<double>({static_cast<double>(s.nd), static_cast<double>(s.nm),
                                         std::log2(2.0 * static_cast<double>(s.nt)) + 1.0});
  const double tol = 16.0 * scale * kEps;
  double smax = 0.0, smin = std::numeric_limits<double>::infinity(), worst = 0.0;
  for (index_t w = 0; w <= s.nt; ++w) {
    const double top = want[static_cast<std::size_t>(w * p)];
    for (index_t r = 0; r < p; ++r) {
      const auto at = static_cast<std::size_t>(w * p + r);
      worst = std::max(worst, std::abs(got.sigma[at] - want[at]) / top);
      if (r > 0) {
        EXPECT_LE(got.sigma[at], got.sigma[at - 1]) << "w=" << w << " not descending";
      }
    }
    smax = std::max(smax, top);
    smin = std::min(smin, want[static_cast<std::size_t>(w * p + p - 1)]);
  }
  EXPECT_LE(worst, tol) << s.str();
  EXPECT_NEAR(got.sigma_max, smax, tol * smax);
  EXPECT_NEAR(got.sigma_min, smin, tol * smax);
  EXPECT_NEAR(got.kappa, smax / smin, 1e-10 * got.kappa);
  // Random Gaussian kernels are of full rank at every frequency.
  EXPECT_EQ(got.rank, (s.nt + 1) * p);
  EXPECT_EQ(got.rank_tolerance, static_cast<double>(std::max(s.nd, s.nm)) * kEps);
}

// The union of the per-frequency values, w = 1..Nt-1 counted twice (F^[2Nt-w] = conj F^[w]), is
// the spectrum of the explicit embedding. dgesvd's error on the (2 Nt Nd) x (2 Nt Nm) embedding
// is normwise and depends on OpenBLAS's kernels, which it picks by CPU (OPENBLAS_CORETYPE): over
// Prescott (what a VM that hides its CPU model gets), Nehalem, Sandybridge, Haswell, Zen, SkylakeX
// and Cooperlake kernels, 1 and 2 threads, at most 31.7 eps * sigma_max (Zen and Haswell,
// Nd=5, Nm=3, Nt=7; tolerance 160 eps there), and sigma_max itself at most 4.2 eps (6 ulps)
// from dgesvd's, while ours is within 1.01 eps of zgesvd's on F^. Bound 32 * max(Nd, Nm) eps, at
// least 5 times the worst measured for every shape.
TEST_P(SpectrumAgainstLapack, UnionIsTheEmbeddingsSpectrum) {
  const auto [s, general] = GetParam();
  const Kernels k = random_kernels(s, general, 29);
  const Spectrum got = spectrum(k.column, k.row, s);
  const index_t p = got.per_frequency;
  std::vector<double> joined;
  for (index_t w = 0; w <= s.nt; ++w)
    for (int copy = 0; copy < (w == 0 || w == s.nt ? 1 : 2); ++copy)
      joined.insert(joined.end(), got.sigma.begin() + w * p, got.sigma.begin() + (w + 1) * p);
  std::ranges::sort(joined, std::greater<>());
  const std::vector<double> want = embedding_singular_values(k, s);
  ASSERT_EQ(joined.size(), want.size()) << s.str();
  const double tol = 32.0 * static_cast<double>(std::max(s.nd, s.nm)) * kEps;
  for (std::size_t r = 0; r < want.size(); ++r)
    EXPECT_NEAR(joined[r], want[r], tol * want.front()) << "value " << r << " of " << s.str();
  // sigma_max is the largest of the returned values, no arithmetic: exactly joined's first. Against
  // dgesvd, a different computation, it gets the tolerance above (value 0), not 4 ulps.
  EXPECT_EQ(got.sigma_max, joined.front());
}

// 1x1x1; Nd > Nm and Nd < Nm with odd Nt; square; Nt = 1 (a single lag, L = 2).
INSTANTIATE_TEST_SUITE_P(Shapes, SpectrumAgainstLapack,
                         ::testing::Values(Case{{1, 1, 1}, false}, Case{{1, 1, 1}, true},
                                           Case{{5, 3, 7}, false}, Case{{5, 3, 7}, true},
                                           Case{{2, 6, 9}, false}, Case{{2, 6, 9}, true},
                                           Case{{4, 4, 4}, true}, Case{{3, 2, 1}, false},
                                           Case{{1, 7, 8}, true}));

// F_0 = diag(1, 1e-3), F_t = 0 otherwise: F^[w] = F_0 at every frequency, so sigma_max = 1,
// sigma_min = 1e-3, kappa = 1e3, and a tolerance between the two halves the rank.
TEST(Spectrum, DiagonalKernelClosedForm) {
  const Shape s{2, 2, 5};
  std::vector<double> col(static_cast<std::size_t>(s.kernel_size()), 0.0);
  col[0] = 1.0;                                    // (0, 0) at t = 0
  col[static_cast<std::size_t>(3 * s.nt)] = 1e-3;  // (1, 1) at t = 0
  const Spectrum full = spectrum(col, {}, s);
  for (index_t w = 0; w <= s.nt; ++w) {
    EXPECT_NEAR(full.sigma[static_cast<std::size_t>(2 * w)], 1.0, 4 * kEps);
    EXPECT_NEAR(full.sigma[static_cast<std::size_t>(2 * w + 1)], 1e-3, 4e-3 * kEps);
  }
  EXPECT_NEAR(full.kappa, 1e3, 1e3 * 16 * kEps);
  EXPECT_EQ(full.rank, 2 * (s.nt + 1));
  const Spectrum cut = spectrum(col, {}, s, with_tolerance(1e-2));
  EXPECT_EQ(cut.rank_tolerance, 1e-2);
  EXPECT_EQ(cut.rank, s.nt + 1);
}

// Rank deficiency: F_0 = F_1 = M = a b^T + c d^T with small integer vectors (M exactly of rank 2,
// Nd = 5, Nm = 4), so F^[w] = (1 + e^{-i pi w / 2}) M: rank 2 at w = 0, 1 and exactly 0 at
// w = Nt = 2. Rank 2 * Nt, sigma_min at the level of rounding, kappa beyond 1e12.
TEST(Spectrum, ConstructedRankDeficientOperator) {
  const Shape s{5, 4, 2};
  const std::vector<double> a{1, -2, 3, 0, 2}, b{2, 1, -1, 3}, c{0, 1, 1, -3, 2}, d{1, 0, 2, -1};
  std::vector<double> col(static_cast<std::size_t>(s.kernel_size()));
  for (index_t i = 0; i < s.nd; ++i)
    for (index_t j = 0; j < s.nm; ++j)
      for (index_t t = 0; t < s.nt; ++t)
        col[static_cast<std::size_t>((i * s.nm + j) * s.nt + t)] =
            a[static_cast<std::size_t>(i)] * b[static_cast<std::size_t>(j)] +
            c[static_cast<std::size_t>(i)] * d[static_cast<std::size_t>(j)];
  const Spectrum got = spectrum(col, {}, s, with_tolerance(1e-12));
  EXPECT_EQ(got.rank, 2 * s.nt);
  EXPECT_LE(got.sigma_min, 1e-14 * got.sigma_max);
  EXPECT_GT(got.kappa, 1e12);
  EXPECT_EQ(got.sigma[static_cast<std::size_t>(s.nt * 4)], 0.0);  // w = Nt: F^ is exactly 0
  EXPECT_GT(got.sigma[1], 0.1 * got.sigma_max);                   // w = 0 keeps two values
}

TEST(Spectrum, ZeroOperatorHasRankZeroAndInfiniteKappa) {
  const Shape s{3, 2, 4};
  const std::vector<double> col(static_cast<std::size_t>(s.kernel_size()), 0.0);
  const Spectrum got = spectrum(col, {}, s);
  EXPECT_EQ(got.sigma_max, 0.0);
  EXPECT_EQ(got.sigma_min, 0.0);
  EXPECT_TRUE(std::isinf(got.kappa));
  EXPECT_EQ(got.rank, 0);
}

// OpenMP over the frequencies (and FFTW's threads) change nothing.
TEST(Spectrum, ThreadCountInvariant) {
  const Shape s{6, 5, 33};
  const Kernels k = random_kernels(s, true, 41);
  const Spectrum one = spectrum(k.column, k.row, s, with_threads(1));
  const Spectrum two = spectrum(k.column, k.row, s, with_threads(2));
  EXPECT_EQ(one.sigma, two.sigma);
  EXPECT_EQ(one.kappa, two.kappa);
}

TEST(Spectrum, BadInputIsRefusedByName) {
  const Shape s{2, 3, 4};
  Kernels k = random_kernels(s, true, 5);
  expect_error([&] { (void)spectrum(k.column, {}, Shape{0, 3, 4}); }, "shape");
  expect_error(
      [&] {
        (void)spectrum({k.column.data(), 23}, {}, s);
      },
      "first block column holds 23 values, expected Nd*Nm*Nt = 24");
  expect_error(
      [&] {
        (void)spectrum(k.column, {k.row.data(), 5}, s);
      },
      "first block row holds 5 values");
  expect_error([&] { (void)spectrum(k.column, k.row, s, with_tolerance(-1.0)); },
               "invalid rank tolerance -1");
  expect_error([&] { (void)spectrum(k.column, k.row, s, with_threads(-2)); },
               "invalid thread count -2");
  Kernels nan = k;
  nan.column[7] = std::numeric_limits<double>::quiet_NaN();
  expect_error([&] { (void)spectrum(nan.column, nan.row, s); },
               "first block column holds NaN at (i=0, j=1, t=3)");
  Kernels inf = k;
  inf.row[13] = -std::numeric_limits<double>::infinity();
  expect_error([&] { (void)spectrum(inf.column, inf.row, s); },
               "first block row holds infinity at (i=1, j=0, t=1)");
  Kernels lag0 = k;
  lag0.row[4] += 1.0;
  expect_error([&] { (void)spectrum(lag0.column, lag0.row, s); }, "disagree at lag 0");
}

// options.backend = Cuda in a build without CUDA (the CPU CI's) is refused in one line saying
// why; with CUDA, the Python package's GPU tests run that backend.
TEST(Spectrum, CudaBackendWithoutCudaIsRefused) {
#ifdef SHIFTOP_HAVE_CUDA
  GTEST_SKIP() << "built with CUDA";
#else
  const Shape s{2, 3, 4};
  const Kernels k = random_kernels(s, true, 5);
  SpectrumOptions options;
  options.backend = Backend::Cuda;
  expect_error(
      [&] { (void)spectrum(k.column, k.row, s, options); },
      "svd: backend cuda: this shiftop was built without CUDA (SHIFTOP_ENABLE_CUDA=OFF); use "
      "backend cpu");
#endif
}

}  // namespace
}  // namespace shiftop::svd
