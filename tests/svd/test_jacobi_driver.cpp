// shiftop::svd::jacobi and jacobi_batched: singular values against LAPACK's xGESVD (in double
// precision for the FP32 types), residual ||A V - U S|| / ||A|| and orthonormality of U and V,
// for every variant, with and without preprocessing, on sizes that cross block boundaries, wide,
// tall and rank-deficient matrices; the hyperbolic SVD's structure (V^H J V = J, A V = U S);
// thread-count invariance and batches bit for bit; bad input.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <vector>

#include "shiftop/svd/jacobi.hpp"
#include "support/expect_error.hpp"
#include "support/graded_matrices.hpp"
#include "support/jacobi_checks.hpp"

namespace {

using shiftop::index_t;
using shiftop::svd::jacobi;
using shiftop::svd::JacobiOptions;
using shiftop::svd::JacobiResult;
using shiftop::svd::Real;
using shiftop::svd::Variant;
using shiftop::testing::eps;
using shiftop::testing::kComplex;
using shiftop::testing::orthogonality;
using shiftop::testing::random_entries;
using shiftop::testing::widen;

// The singular values of a (m x n, column-major) by LAPACK's xGESVD in double precision.
template <class T>
std::vector<double> lapack_sigma(const std::vector<T>& a, index_t m, index_t n) {
  const auto rows = static_cast<lapack_int>(m), cols = static_cast<lapack_int>(n);
  std::vector<double> s(static_cast<std::size_t>(std::min(m, n)));
  std::vector<double> superb(s.size() + 1);
  if constexpr (kComplex<T>) {
    std::vector<lapack_complex_double> copy(a.size());
    for (std::size_t i = 0; i < a.size(); ++i)
      copy[i] = lapack_make_complex_double(a[i].real(), a[i].imag());
    EXPECT_EQ(LAPACKE_zgesvd(LAPACK_COL_MAJOR, 'N', 'N', rows, cols, copy.data(), rows, s.data(),
                             nullptr, 1, nullptr, 1, superb.data()),
              0);
  } else {
    std::vector<double> copy(a.begin(), a.end());
    EXPECT_EQ(LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', rows, cols, copy.data(), rows, s.data(),
                             nullptr, 1, nullptr, 1, superb.data()),
              0);
  }
  return s;
}

struct Errors {
  double sigma = 0;                                 // max |s - s_ref| / s_max
  double residual = 0;                              // ||A V - U S||_F / ||A||_F
  double u_orthogonality = 0, v_orthogonality = 0;  // max |(X^H X - I)_ij|
};

template <class T>
Errors errors(const std::vector<T>& a, index_t m, index_t n, const JacobiResult<T>& r) {
  const index_t k = std::min(m, n);
  Errors e;
  const std::vector<double> ref = lapack_sigma(a, m, n);
  EXPECT_EQ(r.sigma.size(), static_cast<std::size_t>(k));
  for (index_t i = 0; i < k; ++i)
    e.sigma = std::max(e.sigma, std::abs(static_cast<double>(r.sigma[i]) - ref[i]) / ref[0]);
  if (!r.u.empty() && !r.v.empty()) {
    double num = 0, den = 0;
    for (index_t j = 0; j < k; ++j)
      for (index_t i = 0; i < m; ++i) {
        std::complex<double> av = 0;
        for (index_t l = 0; l < n; ++l)
          av += widen(a[i + l * m]) * widen(r.v[l + j * n]);
        num += std::norm(av - widen(r.u[i + j * m]) * static_cast<double>(r.sigma[j]));
      }
    for (const T& x : a)
      den += std::norm(widen(x));
    e.residual = std::sqrt(num / den);
  }
  if (!r.u.empty()) e.u_orthogonality = orthogonality(r.u.data(), m, k);
  if (!r.v.empty()) e.v_orthogonality = orthogonality(r.v.data(), n, k);
  return e;
}

template <class T>
class Driver : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(Driver, Types);

// Every variant, with and without preprocessing, on sizes around the block width 4 (n = w - 1,
// w, w + 1, 2w + 1, odd, 1, 2) and shapes tall, wide, square and m >> n.
TYPED_TEST(Driver, MatchesLapackForEveryVariantAndShape) {
  using T = TypeParam;
  const index_t w = 4;
  const std::vector<std::pair<index_t, index_t>> shapes = {
      {1, 1}, {2, 2},   {1, 5},   {6, 1},  {3, 3},   {4, 4}, {5, 5},
      {9, 9}, {11, 10}, {13, 17}, {60, 9}, {24, 23}, {5, 33}};
  double worst_sigma = 0, worst_residual = 0, worst_orth = 0;
  unsigned seed = 1;
  for (const auto& [m, n] : shapes)
    for (Variant variant : {Variant::Pointwise, Variant::BlockOriented, Variant::FullBlock})
      for (bool preprocess : {true, false}) {
        const std::vector<T> a = random_entries<T>(m * n, seed++);
        JacobiOptions options{.compute_u = true,
                              .compute_v = true,
                              .variant = variant,
                              .block_width = w,
                              .threads = 1,
                              .preprocess = preprocess};
        const JacobiResult<T> r = jacobi(a.data(), m, n, m, options);
        SCOPED_TRACE(::testing::Message()
                     << m << " x " << n << " variant " << static_cast<int>(variant)
                     << " preprocess " << preprocess);
        EXPECT_TRUE(r.stats.converged);
        EXPECT_TRUE(std::is_sorted(r.sigma.rbegin(), r.sigma.rend()));
        ASSERT_EQ(r.u.size(), static_cast<std::size_t>(m * std::min(m, n)));
        ASSERT_EQ(r.v.size(), static_cast<std::size_t>(n * std::min(m, n)));
        const Errors e = errors(a, m, n, r);
        worst_sigma = std::max(worst_sigma, e.sigma);
        worst_residual = std::max(worst_residual, e.residual);
        worst_orth = std::max({worst_orth, e.u_orthogonality, e.v_orthogonality});
      }
  // At least 4x the worst measured over the native and the portable build (double: sigma 13.8 eps
  // against dgesvd, whose own error is in it, residual 14.9 eps, orthogonality 32.0 eps; the
  // other types less).
  EXPECT_LE(worst_sigma, 64 * eps<T>());
  EXPECT_LE(worst_residual, 64 * eps<T>());
  EXPECT_LE(worst_orth, 128 * eps<T>());
  std::printf("sigma %.2f eps, residual %.2f eps, orthogonality %.2f eps\n", worst_sigma / eps<T>(),
              worst_residual / eps<T>(), worst_orth / eps<T>());
}

// Values only (no vectors accumulated) give the same singular values.
TYPED_TEST(Driver, ValuesOnlyMatchValuesWithVectors) {
  using T = TypeParam;
  const index_t m = 30, n = 21;
  const std::vector<T> a = random_entries<T>(m * n, 7);
  for (Variant variant : {Variant::Pointwise, Variant::FullBlock}) {
    JacobiOptions options{.variant = variant, .block_width = 4, .threads = 1};
    const auto values = jacobi(a.data(), m, n, m, options);
    options.compute_u = options.compute_v = true;
    const auto both = jacobi(a.data(), m, n, m, options);
    EXPECT_TRUE(values.u.empty() && values.v.empty());
    for (index_t i = 0; i < n; ++i)
      EXPECT_NEAR(values.sigma[i], both.sigma[i], 4 * eps<T>() * both.sigma[0]);
  }
}

// A 40 x 30 matrix of rank 7: with dgejsv's JOBA = 'A' tolerance, preprocessing finds the rank,
// the other 23 values are zero, and the vectors for them complete U and V to orthonormal sets.
TYPED_TEST(Driver, RankDeficient) {
  using T = TypeParam;
  const index_t m = 40, n = 30, k = 7;
  const std::vector<T> x = random_entries<T>(m * k, 3), y = random_entries<T>(k * n, 4);
  std::vector<T> a(static_cast<std::size_t>(m * n), T(0));
  for (index_t j = 0; j < n; ++j)
    for (index_t l = 0; l < k; ++l)
      for (index_t i = 0; i < m; ++i)
        a[i + j * m] += x[i + l * m] * y[l + j * k];
  for (Variant variant : {Variant::Pointwise, Variant::FullBlock}) {
    JacobiOptions options{
        .compute_u = true, .compute_v = true, .variant = variant, .block_width = 4, .threads = 1};
    options.rank_tolerance = std::sqrt(static_cast<double>(n)) * eps<T>();
    const auto r = jacobi(a.data(), m, n, m, options);
    EXPECT_EQ(r.stats.rank, k);
    for (index_t i = k; i < n; ++i)
      EXPECT_EQ(r.sigma[i], Real<T>(0));
    const Errors e = errors(a, m, n, r);
    // At least 4x the worst measured over the native and the portable build: sigma 3.7 eps,
    // residual 5.9 eps, orthogonality of U 11.0 eps, of V 8.5 eps.
    EXPECT_LE(e.sigma, 40 * eps<T>());
    EXPECT_LE(e.residual, 40 * eps<T>());
    EXPECT_LE(e.u_orthogonality, 48 * eps<T>());
    EXPECT_LE(e.v_orthogonality, 48 * eps<T>());
  }
}

// The variants agree with each other: values within a few eps relative, vectors up to a phase
// (the values of a random matrix are distinct).
TYPED_TEST(Driver, VariantsAgree) {
  using T = TypeParam;
  const index_t m = 45, n = 37;
  const std::vector<T> a = random_entries<T>(m * n, 11);
  JacobiOptions options{.compute_u = true,
                        .compute_v = true,
                        .variant = Variant::Pointwise,
                        .block_width = 5,
                        .threads = 1,
                        .preprocess = false};
  const auto reference = jacobi(a.data(), m, n, m, options);
  double worst = 0;
  for (Variant variant : {Variant::BlockOriented, Variant::FullBlock}) {
    options.variant = variant;
    const auto r = jacobi(a.data(), m, n, m, options);
    for (index_t j = 0; j < n; ++j) {
      worst = std::max(worst, std::abs(static_cast<double>(r.sigma[j] - reference.sigma[j])) /
                                  static_cast<double>(reference.sigma[j]) / eps<T>());
      std::complex<double> u = 0, v = 0;
      for (index_t i = 0; i < m; ++i)
        u += std::conj(widen(reference.u[i + j * m])) * widen(r.u[i + j * m]);
      for (index_t i = 0; i < n; ++i)
        v += std::conj(widen(reference.v[i + j * n])) * widen(r.v[i + j * n]);
      // Measured: the smallest gap of these values is ~0.02 sigma_max, so vectors agree to
      // ~eps / gap.
      EXPECT_NEAR(std::abs(u), 1.0, 2000 * eps<T>());
      EXPECT_NEAR(std::abs(v), 1.0, 2000 * eps<T>());
    }
  }
  std::printf("variants differ by %.2f eps relative\n", worst);
  // At least 4x the worst measured over the native and the portable build: 19.0 eps.
  EXPECT_LE(worst, 80.0);
}

// Hyperbolic: A V = U S with U orthonormal and V^H J V = J; each sign part descending.
TYPED_TEST(Driver, HyperbolicStructure) {
  using T = TypeParam;
  const index_t m = 26, n = 19, n_plus = 8;
  const std::vector<T> a = random_entries<T>(m * n, 21);
  for (Variant variant : {Variant::Pointwise, Variant::BlockOriented, Variant::FullBlock})
    for (bool preprocess : {true, false}) {
      JacobiOptions options{.compute_u = true,
                            .compute_v = true,
                            .n_plus = n_plus,
                            .variant = variant,
                            .block_width = 4,
                            .threads = 1,
                            .preprocess = preprocess};
      const auto r = jacobi(a.data(), m, n, m, options);
      EXPECT_TRUE(r.stats.converged);
      EXPECT_TRUE(std::is_sorted(r.sigma.rend() - n_plus, r.sigma.rend()));
      EXPECT_TRUE(std::is_sorted(r.sigma.rbegin(), r.sigma.rend() - n_plus));
      const shiftop::testing::HyperbolicErrors e = shiftop::testing::hyperbolic_errors(
          a.data(), m, n, r.sigma.data(), r.u.data(), r.v.data(), n_plus);
      SCOPED_TRACE(::testing::Message() << "variant " << static_cast<int>(variant));
      // V is not orthogonal: its errors scale with ||V||^2 (measured ||V||_max^2 ~ 10).
      EXPECT_LE(e.residual, 40 * eps<T>() * (1 + e.v_norm));
      EXPECT_LE(e.j_error, 100 * eps<T>() * (1 + e.v_norm));
      EXPECT_LE(orthogonality(r.u.data(), m, n), 40 * eps<T>());
    }
}

// Bit for bit the same with 1, 2 and 3 threads, for every variant (n = 27 with width 4: 6
// blocks, 3 pairs per step; pointwise 13 pairs per step).
TYPED_TEST(Driver, ThreadCountInvariant) {
  using T = TypeParam;
  const index_t m = 30, n = 27;
  const std::vector<T> a = random_entries<T>(m * n, 5);
  for (Variant variant : {Variant::Pointwise, Variant::BlockOriented, Variant::FullBlock})
    for (index_t n_plus : {index_t{-1}, index_t{17}}) {
      JacobiOptions options{.compute_u = true,
                            .compute_v = true,
                            .n_plus = n_plus,
                            .variant = variant,
                            .block_width = 4,
                            .threads = 1};
      const auto one = jacobi(a.data(), m, n, m, options);
      for (int threads : {2, 3}) {
        options.threads = threads;
        const auto r = jacobi(a.data(), m, n, m, options);
        EXPECT_EQ(r.sigma, one.sigma) << "threads " << threads;
        EXPECT_EQ(r.u, one.u);
        EXPECT_EQ(r.v, one.v);
        EXPECT_EQ(r.stats.rotations, one.stats.rotations);
      }
    }
}

// A batch equals one matrix at a time on one thread, bit for bit (the batch on 3 threads).
TYPED_TEST(Driver, BatchedEqualsOneAtATime) {
  using T = TypeParam;
  const index_t batch = 5, m = 9, n = 12, lda = 10, stride = 130;
  const std::vector<T> a = random_entries<T>(stride * batch, 9);
  JacobiOptions options{.compute_u = true, .compute_v = true, .threads = 3};
  const auto all = shiftop::svd::jacobi_batched(a.data(), batch, m, n, lda, stride, options);
  ASSERT_EQ(all.sigma.size(), static_cast<std::size_t>(batch * m));
  options.threads = 1;
  for (index_t b = 0; b < batch; ++b) {
    const auto one = jacobi(a.data() + b * stride, m, n, lda, options);
    EXPECT_TRUE(std::equal(one.sigma.begin(), one.sigma.end(), all.sigma.begin() + b * m));
    EXPECT_TRUE(std::equal(one.u.begin(), one.u.end(), all.u.begin() + b * m * m));
    EXPECT_TRUE(std::equal(one.v.begin(), one.v.end(), all.v.begin() + b * n * m));
    EXPECT_EQ(all.stats[b].rotations, one.stats.rotations);
  }
  const auto empty = shiftop::svd::jacobi_batched<T>(nullptr, 0, m, n, lda, stride, options);
  EXPECT_TRUE(empty.sigma.empty());
}

// Entries near the ends of the range: scaled by 2^600 and 2^-600 (exact), the values scale too.
TYPED_TEST(Driver, ExtremeScalesScaleTheValues) {
  using T = TypeParam;
  if constexpr (std::is_same_v<Real<T>, double>) {
    const index_t m = 20, n = 15;
    const std::vector<T> a = random_entries<T>(m * n, 13);
    JacobiOptions options{.variant = Variant::FullBlock, .block_width = 4, .threads = 1};
    const auto base = jacobi(a.data(), m, n, m, options);
    for (int e : {600, -600}) {
      std::vector<T> scaled(a);
      for (T& x : scaled)
        x *= std::ldexp(1.0, e);
      const auto r = jacobi(scaled.data(), m, n, m, options);
      for (index_t i = 0; i < n; ++i)
        EXPECT_NEAR(std::ldexp(r.sigma[i], -e), base.sigma[i], 16 * eps<T>() * base.sigma[i]);
    }
  }
}

// Row-graded A = D B (D spanning 1e-12..1, B random) and its column-graded transpose B^T D have
// the same singular values. One-sided Jacobi is relatively accurate on column scaling by itself;
// on row scaling only through the preprocessing's row sort (xGEJSV's row pivoting): without it,
// A's smallest values came out with relative errors up to 1.5e-4 (measured).
TEST(DriverGraded, RowScalingIsAsAccurateAsColumnScaling) {
  const index_t n = 12;
  const std::vector<double> b = random_entries<double>(n * n, 21);
  std::vector<double> rows(b.size()), columns(b.size());
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < n; ++j) {
      const double d = std::pow(10.0, -12.0 * static_cast<double>((i * 5) % n) / (n - 1));
      rows[i + j * n] = d * b[i + j * n];     // D B
      columns[j + i * n] = d * b[i + j * n];  // (D B)^T = B^T D
    }
  const double kappa =
      shiftop::testing::equilibrated_condition(b, n, n, shiftop::testing::Grading::Rows);
  std::printf("kappa of B with unit rows: %.1f\n", kappa);
  for (Variant variant : {Variant::Pointwise, Variant::FullBlock}) {
    const JacobiOptions options{.compute_u = true, .variant = variant, .block_width = 4};
    const auto r = jacobi(rows.data(), n, n, n, options);
    const auto c = jacobi(columns.data(), n, n, n, options);
    ASSERT_LT(c.sigma[n - 1], 1e-9 * c.sigma[0]);  // graded indeed
    double worst = 0;
    for (index_t i = 0; i < n; ++i)
      worst = std::max(worst, std::abs(r.sigma[i] - c.sigma[i]) / c.sigma[i]);
    // Each is within n eps kappa of the exact values, kappa the condition of B with unit rows
    // (Drmac's bound for D B with the row-sorted QR first; Demmel-Veselic's for B^T D), so they
    // differ by at most twice that. Measured 26 n eps (portable build; kappa 1393, so 0.019
    // n eps kappa), 3.9e-14 in the ASan build; without the row sort 4.7e-7.
    EXPECT_LT(worst, 2 * n * eps<double>() * kappa) << "variant " << static_cast<int>(variant);
  }
}

// A zero matrix has rank 0: every singular value 0, U and V orthonormal (nothing to rotate).
TYPED_TEST(Driver, ZeroMatrixHasRankZero) {
  using T = TypeParam;
  for (const auto& [m, n] : {std::pair<index_t, index_t>{3, 2}, {2, 3}, {1, 1}, {7, 7}}) {
    const std::vector<T> a(static_cast<std::size_t>(m * n), T(0));
    const auto r = jacobi(a.data(), m, n, m, {.compute_u = true, .compute_v = true});
    EXPECT_EQ(r.stats.rank, 0);
    EXPECT_TRUE(r.stats.converged);
    for (auto s : r.sigma)
      EXPECT_EQ(s, Real<T>(0));
    const index_t k = std::min(m, n);
    EXPECT_LT(orthogonality(r.u.data(), m, k), 4 * eps<T>());
    EXPECT_LT(orthogonality(r.v.data(), n, k), 4 * eps<T>());
  }
}

// The default keeps every nonzero R_kk: singular values far below eps * sigma_max keep their
// relative accuracy (dgejsv's JOBA = 'A' rank cut, the old default, returned 0 for them).
TYPED_TEST(Driver, TinySingularValuesAreKeptByDefault) {
  using T = TypeParam;
  using R = Real<T>;
  const index_t n = 3;
  const R tiny = std::is_same_v<R, float> ? R(1e-20f) : R(1e-200);
  const R scales[n] = {R(1), tiny, R(1e-8)};
  std::vector<T> a = random_entries<T>((n + 2) * n, 17);  // columns scaled: B D
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n + 2; ++i)
      a[i + j * (n + 2)] *= scales[j];
  const auto r = jacobi(a.data(), n + 2, n, n + 2);
  EXPECT_EQ(r.stats.rank, n);
  std::vector<T> scaled_free = random_entries<T>((n + 2) * n, 17);
  const auto b = jacobi(scaled_free.data(), n + 2, n, n + 2);
  // sigma_i of B D is not sigma_i(B) * d_i, but with scales this far apart it is to first order:
  // the smallest is tiny times the norm of B's second column projected away from the others.
  EXPECT_GT(r.sigma[n - 1], R(0));
  EXPECT_LT(r.sigma[n - 1], 10 * tiny * b.sigma[0]);
  EXPECT_GT(r.sigma[n - 1], tiny * b.sigma[n - 1] / 10);
  JacobiOptions cut;
  cut.rank_tolerance = std::sqrt(static_cast<double>(n)) * eps<T>();
  const auto c = jacobi(a.data(), n + 2, n, n + 2, cut);
  EXPECT_EQ(c.stats.rank, (std::is_same_v<R, float> ? 1 : 2));
  EXPECT_EQ(c.sigma[n - 1], R(0));
}

// rank(G J G^T) < rank(G) has no hyperbolic SVD: the rotations of the nearly parallel mixed
// pairs grow without bound. The result must say so (not converged), not report success with
// infinities in V.
TYPED_TEST(Driver, HyperbolicWithoutAnHsvdDoesNotConverge) {
  using T = TypeParam;
  const index_t n = 8;
  const std::vector<T> a(static_cast<std::size_t>(n * n), T(1));
  JacobiOptions options{.compute_u = true, .compute_v = true, .n_plus = n / 2};
  const auto r = jacobi(a.data(), n, n, n, options);
  EXPECT_FALSE(r.stats.converged);
}

TEST(DriverErrors, BadInputIsNamed) {
  using shiftop::testing::expect_error;
  std::vector<double> a(20, 1.0);
  a[2 + 1 * 5] = std::nan("");
  expect_error([&] { jacobi(a.data(), 5, 4, 5); }, "entry (2, 1) is nan");
  a[2 + 1 * 5] = 1.0;
  a[4 + 3 * 5] = -std::numeric_limits<double>::infinity();
  expect_error([&] { jacobi(a.data(), 5, 4, 5); }, "entry (4, 3) is inf");
  a[4 + 3 * 5] = 1.0;
  expect_error([&] { jacobi(a.data(), 0, 4, 5); }, "at least 1 x 1");
  expect_error([&] { jacobi(a.data(), 5, 0, 5); }, "at least 1 x 1");
  expect_error([&] { jacobi(a.data(), 5, 4, 4); }, "lda: expected >= m = 5, got 4");
  expect_error([&] { jacobi(a.data(), 5, 4, 5, {.n_plus = 5}); },
               "n_plus: expected -1 (SVD) or 0..4, got 5");
  expect_error([&] { jacobi(a.data(), 5, 4, 5, {.n_plus = -2}); },
               "n_plus: expected -1 (SVD) or 0..4, got -2");
  expect_error([&] { jacobi(a.data(), 4, 5, 4, {.n_plus = 2}); }, "needs m >= n");
  expect_error([&] { jacobi(a.data(), 5, 4, 5, {.block_width = -1}); }, "block_width");
  a[1] = std::nan("");
  expect_error([&] { shiftop::svd::jacobi_batched(a.data(), 2, 2, 2, 2, 4); },
               "matrix 0: entry (1, 0) is nan");
  expect_error([&] { shiftop::svd::jacobi_batched(a.data(), 2, 2, 2, 2, 3); },
               "stride: expected >= lda * n = 4, got 3");
}

// options.backend = Cuda in a build without CUDA (the CPU CI's) is refused in one line saying
// why, for one matrix and for a batch; with CUDA, test_jacobi_cuda runs that backend.
TEST(DriverErrors, CudaBackendWithoutCudaIsRefused) {
#ifdef SHIFTOP_HAVE_CUDA
  GTEST_SKIP() << "built with CUDA: test_jacobi_cuda runs the GPU backend";
#else
  using shiftop::testing::expect_error;
  const std::vector<double> a(20, 1.0);
  JacobiOptions options;
  options.backend = shiftop::Backend::Cuda;
  const char* const why =
      "svd: backend cuda: this shiftop was built without CUDA (SHIFTOP_ENABLE_CUDA=OFF); use "
      "backend cpu";
  expect_error([&] { jacobi(a.data(), 5, 4, 5, options); }, why);
  expect_error([&] { shiftop::svd::jacobi_batched(a.data(), 2, 2, 2, 2, 4, options); }, why);
#endif
}

}  // namespace
