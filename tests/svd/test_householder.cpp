// The Householder QR with column pivoting of the SVD's preprocessing (svd/householder.hpp, as
// LAPACK's xLAQP2) against LAPACK's xGEQP3 on the same matrices: the same column order, the same
// |R_kk|, and |R_kk| non-increasing, on random, column-graded and rank-deficient matrices (the
// partial column norms are downdated, LAPACK Working Note 176: a wrong downdate picks the wrong
// pivots long before any value is visibly wrong). Then the driver with rank_tolerance > 0, whose
// numerical rank is read off those |R_kk|, against the rank and the singular values of LAPACK's
// pivoted R.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "shiftop/svd/jacobi.hpp"
#include "svd/householder.hpp"

namespace {

using shiftop::index_t;
using shiftop::svd::Real;
using shiftop::svd::detail::conj_of;

template <class T>
constexpr bool kComplex = !std::is_same_v<T, Real<T>>;

constexpr double kEps = std::numeric_limits<double>::epsilon();

template <class T>
T random_entry(std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  if constexpr (kComplex<T>) {
    const double re = normal(rng);
    return T(re, normal(rng));
  } else {
    return normal(rng);
  }
}

template <class T>
std::vector<T> random_matrix(index_t m, index_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> a(static_cast<std::size_t>(m * n));
  for (T& x : a)
    x = random_entry<T>(rng);
  return a;
}

// The test matrices: dense random (all pivots decided by norms well apart), random with columns
// scaled over 8 decades in a shuffled order (the pivot order is far from the identity), a random
// rank-7 product X Y, and rank 7 with two columns repeated (the repeats' partial norms fall to
// rounding level in one step: the norms must be recomputed, not downdated).
struct Case {
  std::string name;
  index_t m, n;
  index_t rank;  // the numerical rank; the pivots after it are decided by rounding errors
  unsigned seed;
};

const Case kCases[] = {{"random 40x30", 40, 30, 30, 1}, {"random 30x30", 30, 30, 30, 2},
                       {"random 90x60", 90, 60, 60, 3}, {"graded 50x40", 50, 40, 40, 4},
                       {"rank 7 40x30", 40, 30, 7, 5},  {"rank 7 repeated 40x30", 40, 30, 7, 6},
                       {"graded 60x12", 60, 12, 12, 7}};

template <class T>
std::vector<T> make_matrix(const Case& c) {
  const index_t m = c.m, n = c.n;
  if (c.rank == n && c.name.starts_with("random")) return random_matrix<T>(m, n, c.seed);
  if (c.rank == n) {  // graded: column j scaled by 10^(-8 j / n), the columns shuffled
    std::vector<T> a = random_matrix<T>(m, n, c.seed);
    std::vector<index_t> order(static_cast<std::size_t>(n));
    for (index_t j = 0; j < n; ++j)
      order[static_cast<std::size_t>(j)] = j;
    std::shuffle(order.begin(), order.end(), std::mt19937_64(c.seed + 100));
    for (index_t j = 0; j < n; ++j) {
      const double scale = std::pow(10.0, -8.0 * static_cast<double>(order[j]) / double(n));
      for (index_t i = 0; i < m; ++i)
        a[static_cast<std::size_t>(i + j * m)] *= scale;
    }
    return a;
  }
  const std::vector<T> x = random_matrix<T>(m, c.rank, c.seed),
                       y = random_matrix<T>(c.rank, n, c.seed + 1);
  std::vector<T> a(static_cast<std::size_t>(m * n), T(0));
  for (index_t j = 0; j < n; ++j)
    for (index_t l = 0; l < c.rank; ++l)
      for (index_t i = 0; i < m; ++i)
        a[static_cast<std::size_t>(i + j * m)] +=
            x[static_cast<std::size_t>(i + l * m)] * y[static_cast<std::size_t>(l + j * c.rank)];
  if (c.name.find("repeated") != std::string::npos) {
    std::copy_n(a.begin() + 3 * m, m, a.begin() + 17 * m);
    std::copy_n(a.begin() + 3 * m, m, a.begin() + 25 * m);
  }
  return a;
}

struct Factor {
  std::vector<double> r_diagonal;  // |R_kk|
  std::vector<index_t> perm;       // perm[k]: the column of A that became column k
  // The pivot's lead at step k (k < n - 1): the largest remaining partial norm ||R(k:j, j)||
  // (column j of the final R holds column j's partial norms) over the second largest, minus 1.
  std::vector<double> lead;
};

// LAPACK's xGEQP3 (every column free: jpvt = 0 on entry).
template <class T>
Factor lapack_qrcp(std::vector<T> a, index_t m, index_t n) {
  std::vector<lapack_int> jpvt(static_cast<std::size_t>(n), 0);
  std::vector<T> tau(static_cast<std::size_t>(n));
  const auto rows = static_cast<lapack_int>(m), cols = static_cast<lapack_int>(n);
  lapack_int info = 0;
  if constexpr (kComplex<T>)
    info = LAPACKE_zgeqp3(LAPACK_COL_MAJOR, rows, cols,
                          reinterpret_cast<lapack_complex_double*>(a.data()), rows, jpvt.data(),
                          reinterpret_cast<lapack_complex_double*>(tau.data()));
  else
    info = LAPACKE_dgeqp3(LAPACK_COL_MAJOR, rows, cols, a.data(), rows, jpvt.data(), tau.data());
  EXPECT_EQ(info, 0);
  Factor f;
  for (index_t k = 0; k < n; ++k) {
    f.r_diagonal.push_back(std::abs(a[static_cast<std::size_t>(k + k * m)]));
    f.perm.push_back(jpvt[static_cast<std::size_t>(k)] - 1);
  }
  for (index_t k = 0; k + 1 < n; ++k) {
    std::vector<double> partial;
    for (index_t j = k; j < n; ++j) {
      double s = 0;
      for (index_t i = k; i <= j; ++i)
        s += std::norm(a[static_cast<std::size_t>(i + j * m)]);
      partial.push_back(std::sqrt(s));
    }
    std::partial_sort(partial.begin(), partial.begin() + 2, partial.end(), std::greater<>());
    f.lead.push_back(partial[0] / partial[1] - 1);
  }
  return f;
}

template <class T>
Factor shiftop_qrcp(std::vector<T> a, index_t m, index_t n) {
  std::vector<T> tau(static_cast<std::size_t>(n));
  Factor f;
  f.perm.resize(static_cast<std::size_t>(n));
  shiftop::svd::detail::householder_qrcp(a.data(), m, n, m, tau.data(), f.perm.data());
  for (index_t k = 0; k < n; ++k)
    f.r_diagonal.push_back(std::abs(a[static_cast<std::size_t>(k + k * m)]));
  return f;
}

std::string first_difference(const std::vector<index_t>& got, const std::vector<index_t>& want,
                             index_t count) {
  for (index_t k = 0; k < count; ++k)
    if (got[static_cast<std::size_t>(k)] != want[static_cast<std::size_t>(k)])
      return "pivot " + std::to_string(k) + ": column " +
             std::to_string(got[static_cast<std::size_t>(k)]) + ", LAPACK's " +
             std::to_string(want[static_cast<std::size_t>(k)]);
  return "";
}

template <class T>
class Qrcp : public ::testing::Test {};
using Types = ::testing::Types<double, std::complex<double>>;
TYPED_TEST_SUITE(Qrcp, Types);

// Both factorisations pivot on partial norms downdated by the same formula, so they choose the
// same columns as long as no two candidates' norms are within rounding of each other (on these
// matrices the pivot leads the next candidate by at least 1.3e-5 relative within the rank,
// measured from LAPACK's R; exact ties, the repeated columns, go to the first in both). Past the
// numerical rank the candidates are rounding noise and their order is arbitrary: only the first
// `rank` pivots are compared there. After a pivot that differs every later |R_kk| differs too, so
// the diagonal is compared up to the first difference only.
TYPED_TEST(Qrcp, ColumnOrderAndDiagonalMatchLapack) {
  using T = TypeParam;
  double worst_diagonal = 0, worst_rise = 0, least_lead = 1;
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const std::vector<T> a = make_matrix<T>(c);
    const Factor want = lapack_qrcp(a, c.m, c.n), got = shiftop_qrcp(a, c.m, c.n);
    EXPECT_EQ(first_difference(got.perm, want.perm, c.rank), "");
    for (index_t k = 0; k + 1 < c.rank; ++k)
      if (want.lead[static_cast<std::size_t>(k)] > 0)
        least_lead = std::min(least_lead, want.lead[static_cast<std::size_t>(k)]);
    const double r11 = want.r_diagonal[0];
    for (index_t k = 0; k < c.n; ++k) {
      if (k < c.rank &&
          got.perm[static_cast<std::size_t>(k)] != want.perm[static_cast<std::size_t>(k)])
        break;
      const double g = got.r_diagonal[static_cast<std::size_t>(k)],
                   w = want.r_diagonal[static_cast<std::size_t>(k)];
      // Within the rank: the same column and the same Householder vectors, so the same |R_kk|
      // to backward error (measured 21 eps); past it, both are rounding noise of size eps |R_11|.
      const double error = k < c.rank ? std::abs(g - w) / w : std::max(g, w) / r11;
      worst_diagonal = std::max(worst_diagonal, error / kEps);
      EXPECT_LE(error, 200 * kEps) << "|R_kk| at k = " << k << ": " << g << ", LAPACK's " << w;
    }
    // Non-increasing up to the downdate's error: the pivot's partial norm is the largest remaining
    // one to about sqrt(eps) relative (LAWN 176; measured: no rise at all), while a wrong downdate
    // lets a column of larger norm wait (a rise by a visible factor).
    for (index_t k = 1; k < c.rank; ++k) {
      const double g = got.r_diagonal[static_cast<std::size_t>(k)],
                   before = got.r_diagonal[static_cast<std::size_t>(k - 1)];
      worst_rise = std::max(worst_rise, (g - before) / before);
      if (g > before * (1 + 1e-6)) {
        ADD_FAILURE() << "|R_kk| rises at k = " << k << ": " << before << " then " << g;
        break;
      }
    }
  }
  std::printf(
      "[ measured ] worst |R_kk| difference to xGEQP3 %.1f eps; worst rise %.2e; least lead of "
      "a pivot %.2e\n",
      worst_diagonal, worst_rise, least_lead);
}

// rank_tolerance > 0 keeps the leading columns of R with |R_kk| > rank_tolerance * |R_11|, so
// the rank and the singular values depend on the pivot order: a matrix with singular values
// 1 .. 1e-12 spread geometrically (A = X diag(s) Y, X and Y with orthonormal columns from a
// Householder QR of random matrices) cut at 1e-6 keeps some columns. LAPACK's R with the same
// cut gives the reference: its rank, and the singular values of its leading rows R_1 (k x n) by
// xGESVD. The values kept are those of R_1 and agree to a few eps relative to sigma_max (R_1 is
// the same in both up to rounding); the rest are exactly 0.
TYPED_TEST(Qrcp, DriverRankToleranceMatchesLapacksPivotedR) {
  using T = TypeParam;
  const index_t m = 50, n = 40;
  std::vector<T> x = random_matrix<T>(m, n, 21), y = random_matrix<T>(n, n, 22);
  std::vector<T> tau_x(static_cast<std::size_t>(n)), tau_y(static_cast<std::size_t>(n));
  shiftop::svd::detail::householder_qr(x.data(), m, n, m, tau_x.data());
  shiftop::svd::detail::householder_qr(y.data(), n, n, n, tau_y.data());
  // A = Q_x diag(s) Q_y^H with Q applied to diag(s) padded to m x n, column by column.
  std::vector<T> d(static_cast<std::size_t>(m * n), T(0));
  for (index_t j = 0; j < n; ++j)
    d[static_cast<std::size_t>(j + j * m)] = std::pow(10.0, -12.0 * double(j) / double(n - 1));
  shiftop::svd::detail::apply_q(x.data(), m, n, m, tau_x.data(), d.data(), n, m);
  // (Q_x D) Q_y^H = (Q_y (Q_x D)^H)^H: apply Q_y to the n x m conjugate transpose.
  std::vector<T> t(static_cast<std::size_t>(n * m));
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j)
      t[static_cast<std::size_t>(j + i * n)] = conj_of(d[static_cast<std::size_t>(i + j * m)]);
  shiftop::svd::detail::apply_q(y.data(), n, n, n, tau_y.data(), t.data(), m, n);
  std::vector<T> a(static_cast<std::size_t>(m * n));
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j)
      a[static_cast<std::size_t>(i + j * m)] = conj_of(t[static_cast<std::size_t>(j + i * n)]);

  for (const double tolerance : {1e-6, 1e-9}) {
    SCOPED_TRACE(::testing::Message() << "rank_tolerance " << tolerance);
    // LAPACK's R and its cut.
    std::vector<T> qr = a;
    std::vector<lapack_int> jpvt(static_cast<std::size_t>(n), 0);
    std::vector<T> tau(static_cast<std::size_t>(n));
    if constexpr (kComplex<T>)
      ASSERT_EQ(LAPACKE_zgeqp3(LAPACK_COL_MAJOR, int(m), int(n),
                               reinterpret_cast<lapack_complex_double*>(qr.data()), int(m),
                               jpvt.data(), reinterpret_cast<lapack_complex_double*>(tau.data())),
                0);
    else
      ASSERT_EQ(LAPACKE_dgeqp3(LAPACK_COL_MAJOR, int(m), int(n), qr.data(), int(m), jpvt.data(),
                               tau.data()),
                0);
    index_t rank = 0;
    while (rank < n &&
           std::abs(qr[static_cast<std::size_t>(rank + rank * m)]) > tolerance * std::abs(qr[0]))
      ++rank;
    std::vector<T> r1(static_cast<std::size_t>(rank * n), T(0));
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < std::min(rank, j + 1); ++i)
        r1[static_cast<std::size_t>(i + j * rank)] = qr[static_cast<std::size_t>(i + j * m)];
    std::vector<double> want(static_cast<std::size_t>(rank)), superb(want.size() + 1);
    if constexpr (kComplex<T>)
      ASSERT_EQ(LAPACKE_zgesvd(LAPACK_COL_MAJOR, 'N', 'N', int(rank), int(n),
                               reinterpret_cast<lapack_complex_double*>(r1.data()), int(rank),
                               want.data(), nullptr, 1, nullptr, 1, superb.data()),
                0);
    else
      ASSERT_EQ(LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', int(rank), int(n), r1.data(), int(rank),
                               want.data(), nullptr, 1, nullptr, 1, superb.data()),
                0);

    shiftop::svd::JacobiOptions options;
    options.rank_tolerance = tolerance;
    options.threads = 1;
    const auto got = shiftop::svd::jacobi(a.data(), m, n, m, options);
    ASSERT_EQ(got.stats.rank, rank)
        << "LAPACK's |R_kk| at the cut: "
        << std::abs(qr[static_cast<std::size_t>((rank - 1) + (rank - 1) * m)]) << " and "
        << (rank < n ? std::abs(qr[static_cast<std::size_t>(rank + rank * m)]) : 0.0);
    double worst = 0;
    for (index_t i = 0; i < rank; ++i)
      worst = std::max(worst, std::abs(got.sigma[static_cast<std::size_t>(i)] -
                                       want[static_cast<std::size_t>(i)]) /
                                  want[0]);
    // Backward error of two QR factorisations and two SVDs of the same R_1: c n eps sigma_max.
    EXPECT_LE(worst, 4 * double(n) * kEps);
    for (index_t i = rank; i < n; ++i)
      EXPECT_EQ(got.sigma[static_cast<std::size_t>(i)], 0.0);
    std::printf("[ measured ] rank_tolerance %g: rank %lld, values %.1f eps from LAPACK's R_1\n",
                tolerance, static_cast<long long>(rank), worst / kEps);
  }
}

}  // namespace
