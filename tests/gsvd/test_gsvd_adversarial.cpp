// Adversarial probes of the implicit Hari-Zimmermann GSVD (shiftop/gsvd/gsvd.hpp) and of the
// regularisation path (shiftop/inverse/regpath.hpp), issue 18: the smallest sizes, zero and
// identity pairs, extreme scalings, padding of the leading dimensions, every variant and block
// width on wide complex pairs, thread-count invariance, ill-conditioned G (an accurate answer or a
// refusal, never a silent wrong one), and the path at extreme weights (no NaN from alpha^2
// over/underflow).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "shiftop/core/error.hpp"
#include "shiftop/gsvd/gsvd.hpp"
#include "shiftop/inverse/regpath.hpp"
#include "support/expect_error.hpp"

namespace {

using shiftop::index_t;
using shiftop::svd::gsvd_hz;
using shiftop::svd::GsvdOptions;
using shiftop::svd::GsvdResult;
using shiftop::svd::Variant;
using shiftop::testing::expect_error;
using C = std::complex<double>;

constexpr double kEps = std::numeric_limits<double>::epsilon();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::size_t at(index_t i) {
  return static_cast<std::size_t>(i);
}

template <class T>
std::vector<T> random_matrix(index_t rows, index_t cols, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> d;
  std::vector<T> a(at(rows * cols));
  for (auto& x : a) {
    if constexpr (std::is_same_v<T, double>)
      x = d(gen);
    else
      x = T(d(gen), d(gen));
  }
  return a;
}

double sq(double x) {
  return x * x;
}
double sq(C x) {
  return std::norm(x);
}
template <class T>
T conj_of(T x) {
  if constexpr (std::is_same_v<T, double>)
    return x;
  else
    return std::conj(x);
}

// ||A - W diag(s) X||_F / ||A||_F (absolute when A = 0).
template <class T>
double residual(const std::vector<T>& a, index_t rows, index_t n, const std::vector<T>& w,
                const std::vector<double>& s, const std::vector<T>& x) {
  double diff = 0, total = 0;
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < rows; ++i) {
      T sum = 0;
      for (index_t k = 0; k < n; ++k)
        sum += w[at(i + k * rows)] * s[at(k)] * x[at(k + j * n)];
      diff += sq(a[at(i + j * rows)] - sum);
      total += sq(a[at(i + j * rows)]);
    }
  return total > 0 ? std::sqrt(diff / total) : std::sqrt(diff);
}

// max |V^H V - I|.
template <class T>
double orthonormality(const std::vector<T>& v, index_t rows, index_t n) {
  double worst = 0;
  for (index_t a = 0; a < n; ++a)
    for (index_t b = 0; b < n; ++b) {
      T dot = 0;
      for (index_t i = 0; i < rows; ++i)
        dot += conj_of(v[at(i + a * rows)]) * v[at(i + b * rows)];
      worst = std::max(worst, std::abs(dot - T(a == b ? 1.0 : 0.0)));
    }
  return worst;
}

// The invariants every result must satisfy: unit pairs, sigma_g > 0, nonincreasing values, all
// finite; with vectors, the residuals and V's orthonormality.
template <class T>
void check_result(const std::vector<T>& f, index_t m, const std::vector<T>& g, index_t p, index_t n,
                  const GsvdResult<T>& r, double residual_bound) {
  ASSERT_EQ(r.sigma_f.size(), at(n));
  ASSERT_EQ(r.sigma_g.size(), at(n));
  const std::vector<double> values = r.values();
  for (index_t k = 0; k < n; ++k) {
    EXPECT_TRUE(std::isfinite(r.sigma_f[at(k)]) && std::isfinite(r.sigma_g[at(k)]));
    EXPECT_GT(r.sigma_g[at(k)], 0.0);
    EXPECT_GE(r.sigma_f[at(k)], 0.0);
    EXPECT_LE(std::abs(std::hypot(r.sigma_f[at(k)], r.sigma_g[at(k)]) - 1.0), 4 * kEps);
    if (k > 0) {
      EXPECT_LE(values[at(k)], values[at(k - 1)]) << "order at " << k;
    }
  }
  if (!r.x.empty()) {
    EXPECT_LE(residual(f, m, n, r.u, r.sigma_f, r.x), residual_bound);
    EXPECT_LE(residual(g, p, n, r.v, r.sigma_g, r.x), residual_bound);
    EXPECT_LE(orthonormality(r.v, p, n), residual_bound);
  }
}

GsvdOptions vectors(Variant variant = Variant::Pointwise, int threads = 1) {
  GsvdOptions o;
  o.compute_vectors = true;
  o.variant = variant;
  o.threads = threads;
  return o;
}

TEST(GsvdAdversarial, OneByOne) {
  // F = [3], G = [-4]: value 3/4, sigma_f = 3/5, sigma_g = 4/5, F = U sf X, G = V sg X.
  const std::vector<double> f{3.0}, g{-4.0};
  const auto r = gsvd_hz(f.data(), 1, 1, g.data(), 1, 1, 1, vectors());
  EXPECT_NEAR(r.sigma_f[0], 0.6, 2 * kEps);
  EXPECT_NEAR(r.sigma_g[0], 0.8, 2 * kEps);
  check_result(f, 1, g, 1, 1, r, 4 * kEps);
  const std::vector<C> fc{C(0, 2)}, gc{C(0, -1)};  // purely imaginary
  const auto rc = gsvd_hz(fc.data(), 1, 1, gc.data(), 1, 1, 1, vectors());
  EXPECT_NEAR(rc.values()[0], 2.0, 4 * kEps);
  check_result(fc, 1, gc, 1, 1, rc, 4 * kEps);
}

TEST(GsvdAdversarial, ZeroFGivesZeroValues) {
  for (const index_t n : {index_t{1}, index_t{2}, index_t{5}}) {
    const std::vector<double> f(at(3 * n), 0.0);
    const auto g = random_matrix<double>(n + 1, n, 3);
    const auto r = gsvd_hz(f.data(), 3, 3, g.data(), n + 1, n + 1, n, vectors());
    for (index_t k = 0; k < n; ++k) {
      EXPECT_EQ(r.sigma_f[at(k)], 0.0);
      EXPECT_EQ(r.sigma_g[at(k)], 1.0);
    }
    check_result(f, 3, g, n + 1, n, r, 50 * kEps);
  }
}

// G = I: the generalized singular values are F's singular values; checked through the
// factorisation and against the Frobenius norm (sum of squares of the values).
TEST(GsvdAdversarial, IdentityGGivesSingularValuesOfF) {
  const index_t n = 7, m = 9;
  const auto f = random_matrix<C>(m, n, 11);
  std::vector<C> g(at(n * n), C(0));
  for (index_t i = 0; i < n; ++i)
    g[at(i + i * n)] = 1.0;
  for (const Variant v : {Variant::Pointwise, Variant::BlockOriented, Variant::FullBlock}) {
    const auto r = gsvd_hz(f.data(), m, m, g.data(), n, n, n, vectors(v));
    check_result(f, m, g, n, n, r, 100 * kEps);
    double frob = 0, sum = 0;
    for (const C x : f)
      frob += std::norm(x);
    for (const double s : r.values())
      sum += s * s;
    EXPECT_NEAR(sum, frob, 100 * kEps * frob);
  }
}

// One column of G scaled by 1e-300, the others O(1): one generalized value near 1e300, whose
// square overflows inside the method. Either an accurate factorisation with that value, or the
// documented refusal naming the overflow; never inf or NaN.
// F = G: every generalized singular value is 1, and the transformations only orthonormalise G,
// whose computed cosines then sit at the rounding of a dot product over the columns' length (about
// sqrt(rows) eps). Section 3.5's threshold eps sqrt(n) lies below that for tall pairs: once every
// transformation counted towards convergence (not only the "proper" ones), a 30 x 20 pair rotated
// for 50 sweeps and was reported not converged. The threshold is eps sqrt(max(m, p, n)), as the
// Jacobi SVD's (svd/rotation.hpp). Every variant, real and complex, square to tall.
TEST(GsvdAdversarial, EqualPairConvergesToOnes) {
  for (const auto& [m, n] : {std::pair<index_t, index_t>{7, 7}, {30, 20}, {200, 10}}) {
    const auto f = random_matrix<C>(m, n, 31u + static_cast<unsigned>(m));
    std::vector<double> real_f(f.size());
    for (std::size_t i = 0; i < f.size(); ++i)
      real_f[i] = f[i].real();
    for (const Variant variant : {Variant::Pointwise, Variant::BlockOriented, Variant::FullBlock}) {
      GsvdOptions o;
      o.variant = variant;
      o.block_width = 4;
      const auto check = [&](const auto& r, const char* type) {
        SCOPED_TRACE(::testing::Message() << m << " x " << n << " " << type << ", variant "
                                          << shiftop::name_of(variant));
        EXPECT_TRUE(r.stats.converged);
        // sigma_f = sigma_g to rounding: the two norms of the same column (f_i = g_i) and the
        // quotient, a few eps; 8 n eps bounds it with room for the transformations' rounding.
        for (const double v : r.values())
          EXPECT_NEAR(v, 1.0, 8 * static_cast<double>(n) * kEps);
      };
      check(gsvd_hz(real_f.data(), m, m, real_f.data(), m, m, n, o), "real");
      check(gsvd_hz(f.data(), m, m, f.data(), m, m, n, o), "complex");
    }
  }
}

TEST(GsvdAdversarial, TinyColumnOfG) {
  const index_t m = 5, p = 6, n = 4;
  const auto f = random_matrix<double>(m, n, 21);
  auto g = random_matrix<double>(p, n, 22);
  for (index_t i = 0; i < p; ++i)
    g[at(i + 2 * p)] *= 1e-300;
  try {
    const auto r = gsvd_hz(f.data(), m, m, g.data(), p, p, n, vectors());
    check_result(f, m, g, p, n, r, 100 * kEps);
    // One value is ~1e300 times larger than the rest.
    EXPECT_GT(r.values()[0], 1e290);
  } catch (const shiftop::Error& e) {
    // A refusal is acceptable only if it names the range problem.
    EXPECT_NE(std::string(e.what()).find("range"), std::string::npos) << e.what();
  }
}

// F huge (1e300) and G tiny (1e-300): the values are ~1e600, out of double's range: a clear
// refusal, not inf/NaN.
TEST(GsvdAdversarial, HugeFTinyGIsRefusedOrFinite) {
  const index_t m = 4, p = 4, n = 3;
  auto f = random_matrix<double>(m, n, 31);
  auto g = random_matrix<double>(p, n, 32);
  for (auto& x : f)
    x *= 1e300;
  for (auto& x : g)
    x *= 1e-300;
  try {
    const auto r = gsvd_hz(f.data(), m, m, g.data(), p, p, n, vectors());
    for (const double v : r.values())
      EXPECT_TRUE(std::isfinite(v)) << v;
    check_result(f, m, g, p, n, r, 100 * kEps);
  } catch (const shiftop::Error& e) {
    std::printf("huge F / tiny G refused: %s\n", e.what());
    EXPECT_NE(std::string(e.what()).find("range"), std::string::npos) << e.what();
  }
  // F times 2^500 and G times 2^-500: the values are those of the unscaled pair times 2^1000
  // (about 1e301, sigma_g about 1e-301, still normal): the exact scaling keeps them accurate.
  const auto f1 = random_matrix<double>(m, n, 31), g1 = random_matrix<double>(p, n, 32);
  std::vector<double> f2 = f1, g2 = g1;
  for (auto& x : f2)
    x *= 0x1p500;
  for (auto& x : g2)
    x *= 0x1p-500;
  const auto a = gsvd_hz(f1.data(), m, m, g1.data(), p, p, n);
  const auto b = gsvd_hz(f2.data(), m, m, g2.data(), p, p, n, vectors());
  for (index_t k = 0; k < n; ++k) {
    const double expected = std::ldexp(a.values()[at(k)], 1000);
    EXPECT_NEAR(b.values()[at(k)], expected, 8 * kEps * expected) << k;
  }
  check_result(f2, m, g2, p, n, b, 100 * kEps);
}

// Leading dimensions larger than the rows with NaN in the padding: the padding is never read.
TEST(GsvdAdversarial, NaNPaddingIsIgnored) {
  const index_t m = 3, p = 5, n = 4, ldf = 6, ldg = 7;
  const auto f = random_matrix<C>(m, n, 41);
  const auto g = random_matrix<C>(p, n, 42);
  std::vector<C> fp(at(ldf * n), C(kNaN, kNaN)), gp(at(ldg * n), C(kNaN, kNaN));
  for (index_t j = 0; j < n; ++j) {
    for (index_t i = 0; i < m; ++i)
      fp[at(i + j * ldf)] = f[at(i + j * m)];
    for (index_t i = 0; i < p; ++i)
      gp[at(i + j * ldg)] = g[at(i + j * p)];
  }
  const auto dense = gsvd_hz(f.data(), m, m, g.data(), p, p, n, vectors());
  const auto padded = gsvd_hz(fp.data(), m, ldf, gp.data(), p, ldg, n, vectors());
  EXPECT_EQ(dense.sigma_f, padded.sigma_f);
  EXPECT_EQ(dense.sigma_g, padded.sigma_g);
  EXPECT_EQ(dense.x, padded.x);
  check_result(f, m, g, p, n, padded, 100 * kEps);
  // A NaN inside is refused, naming the matrix.
  fp[at(1 + 2 * ldf)] = C(kNaN, 0);
  expect_error([&] { (void)gsvd_hz(fp.data(), m, ldf, gp.data(), p, ldg, n); }, "F");
  gp[at(0 + 3 * ldg)] = C(0, std::numeric_limits<double>::infinity());
  expect_error([&] { (void)gsvd_hz(f.data(), m, m, gp.data(), p, ldg, n); }, "G");
}

// m < n (F of rank m), complex, every variant and block widths 1, 2, 3, n-1, n, n+1: n - m values
// are exactly 0, the rest agree across variants, and the factorisation holds.
TEST(GsvdAdversarial, WideComplexEveryVariantAndWidth) {
  const index_t m = 4, p = 11, n = 9;
  const auto f = random_matrix<C>(m, n, 51);
  const auto g = random_matrix<C>(p, n, 52);
  const auto reference = gsvd_hz(f.data(), m, m, g.data(), p, p, n, vectors());
  check_result(f, m, g, p, n, reference, 200 * kEps);
  for (const Variant v : {Variant::BlockOriented, Variant::FullBlock})
    for (const index_t w : {index_t{1}, index_t{2}, index_t{3}, n - 1, n, n + 1}) {
      SCOPED_TRACE(std::to_string(static_cast<int>(v)) + " width " + std::to_string(w));
      GsvdOptions o = vectors(v);
      o.block_width = w;
      const auto r = gsvd_hz(f.data(), m, m, g.data(), p, p, n, o);
      EXPECT_TRUE(r.stats.converged);
      check_result(f, m, g, p, n, r, 200 * kEps);
      const auto values = r.values(), ref = reference.values();
      for (index_t k = 0; k < n; ++k) {
        if (k >= m) {
          EXPECT_EQ(r.sigma_f[at(k)], 0.0) << k;
        } else {
          EXPECT_NEAR(values[at(k)], ref[at(k)], 1e-12 * ref[at(k)]) << k;
        }
      }
    }
}

TEST(GsvdAdversarial, MaxSweepsOneAndHuge) {
  const index_t m = 12, p = 12, n = 12;
  const auto f = random_matrix<double>(m, n, 61);
  const auto g = random_matrix<double>(p, n, 62);
  GsvdOptions one = vectors();
  one.max_sweeps = 1;
  const auto r1 = gsvd_hz(f.data(), m, m, g.data(), p, p, n, one);
  EXPECT_EQ(r1.stats.sweeps, 1);
  EXPECT_FALSE(r1.stats.converged);
  GsvdOptions many = vectors();
  many.max_sweeps = std::numeric_limits<int>::max();
  const auto r2 = gsvd_hz(f.data(), m, m, g.data(), p, p, n, many);
  EXPECT_TRUE(r2.stats.converged);
  EXPECT_LT(r2.stats.sweeps, 50);
  check_result(f, m, g, p, n, r2, 200 * kEps);
  GsvdOptions bad;
  bad.max_sweeps = -1;
  expect_error([&] { (void)gsvd_hz(f.data(), m, m, g.data(), p, p, n, bad); }, "max_sweeps");
  bad = {};
  bad.threads = -1;
  expect_error([&] { (void)gsvd_hz(f.data(), m, m, g.data(), p, p, n, bad); }, "threads");
  bad = {};
  bad.block_width = -2;
  expect_error([&] { (void)gsvd_hz(f.data(), m, m, g.data(), p, p, n, bad); }, "block_width");
}

TEST(GsvdAdversarial, ThreadsBitwise) {
  // Rows >= 64 so that the pointwise steps actually go parallel.
  const index_t m = 70, p = 80, n = 24;
  const auto f = random_matrix<C>(m, n, 71);
  const auto g = random_matrix<C>(p, n, 72);
  for (const Variant v : {Variant::Pointwise, Variant::BlockOriented, Variant::FullBlock}) {
    GsvdOptions a = vectors(v, 1), b = vectors(v, 2);
    a.block_width = b.block_width = 5;
    const auto r1 = gsvd_hz(f.data(), m, m, g.data(), p, p, n, a);
    const auto r2 = gsvd_hz(f.data(), m, m, g.data(), p, p, n, b);
    EXPECT_EQ(r1.sigma_f, r2.sigma_f);
    EXPECT_EQ(r1.sigma_g, r2.sigma_g);
    EXPECT_EQ(r1.u, r2.u);
    EXPECT_EQ(r1.v, r2.v);
    EXPECT_EQ(r1.x, r2.x);
  }
}

// G = Q diag(d) W with singular values d from 1 down to 1/kappa: the values of (F, G) are known
// through (F W^{-1} diag(1/d)... ): we use F = P diag(s) W instead, so the generalized values are
// exactly s / d. A condition of 1e6 and 1e8 must give accurate values (the method is accurate
// for G well-conditioned after column scaling... here the columns are not badly scaled, so only
// the relative error bound kappa eps applies); 1e12 may be refused but must not be silently wrong.
TEST(GsvdAdversarial, IllConditionedG) {
  const index_t n = 6, m = 6, p = 6;
  // Orthogonal P, Q, W from a fixed Householder product (exact enough in double).
  auto orthogonal = [&](unsigned seed) {
    auto a = random_matrix<double>(n, n, seed);
    // Gram-Schmidt twice.
    for (int pass = 0; pass < 2; ++pass)
      for (index_t j = 0; j < n; ++j) {
        for (index_t k = 0; k < j; ++k) {
          double dot = 0;
          for (index_t i = 0; i < n; ++i)
            dot += a[at(i + k * n)] * a[at(i + j * n)];
          for (index_t i = 0; i < n; ++i)
            a[at(i + j * n)] -= dot * a[at(i + k * n)];
        }
        double norm = 0;
        for (index_t i = 0; i < n; ++i)
          norm += sq(a[at(i + j * n)]);
        for (index_t i = 0; i < n; ++i)
          a[at(i + j * n)] /= std::sqrt(norm);
      }
    return a;
  };
  const auto pm = orthogonal(81), qm = orthogonal(82), wm = orthogonal(83);
  for (const double kappa : {1e6, 1e8, 1e12}) {
    SCOPED_TRACE(kappa);
    std::vector<double> s(at(n)), d(at(n));
    for (index_t i = 0; i < n; ++i) {
      d[at(i)] = std::pow(kappa, -static_cast<double>(i) / static_cast<double>(n - 1));
      s[at(i)] = 1.0 + static_cast<double>(i);
    }
    std::vector<double> f(at(m * n), 0.0), g(at(p * n), 0.0);
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < n; ++i)
        for (index_t k = 0; k < n; ++k) {
          f[at(i + j * m)] += pm[at(i + k * n)] * s[at(k)] * wm[at(k + j * n)];
          g[at(i + j * p)] += qm[at(i + k * n)] * d[at(k)] * wm[at(k + j * n)];
        }
    std::vector<double> exact(at(n));
    for (index_t i = 0; i < n; ++i)
      exact[at(i)] = s[at(i)] / d[at(i)];
    std::sort(exact.begin(), exact.end(), std::greater<>());
    try {
      const auto r = gsvd_hz(f.data(), m, m, g.data(), p, p, n, vectors());
      double worst = 0;
      for (index_t k = 0; k < n; ++k)
        worst = std::max(worst, std::abs(r.values()[at(k)] - exact[at(k)]) / exact[at(k)]);
      std::printf("kappa(G) = %.0e: worst relative value error %.2e (kappa eps %.1e)\n", kappa,
                  worst, kappa * kEps);
      // Rounding of the input alone perturbs the values by about kappa eps.
      EXPECT_LE(worst, 100 * kappa * kEps);
      check_result(f, m, g, p, n, r, 1e4 * kEps);
    } catch (const shiftop::Error& e) {
      std::printf("kappa(G) = %.0e refused: %s\n", kappa, e.what());
      EXPECT_GE(kappa, 1e12) << e.what();
      EXPECT_NE(std::string(e.what()).find("rank deficient"), std::string::npos) << e.what();
    }
  }
}

TEST(GsvdAdversarial, RefusalsNameTheInput) {
  const std::vector<double> f(6, 1.0), g(6, 1.0);
  expect_error([&] { (void)gsvd_hz(f.data(), 2, 2, g.data(), 2, 2, 3); }, "p < n");
  expect_error([&] { (void)gsvd_hz(f.data(), 3, 2, g.data(), 3, 3, 2); }, "ldf");
  expect_error([&] { (void)gsvd_hz(f.data(), 3, 3, g.data(), 3, 2, 2); }, "ldg");
  expect_error([&] { (void)gsvd_hz<double>(nullptr, 3, 3, g.data(), 3, 3, 2); }, "f:");
  // G with two equal columns: rank deficient, said so.
  expect_error([&] { (void)gsvd_hz(f.data(), 3, 3, g.data(), 3, 3, 2); }, "rank deficient");
  std::vector<double> gz(6, 0.0);
  gz[0] = 1.0;
  expect_error([&] { (void)gsvd_hz(f.data(), 3, 3, gz.data(), 3, 3, 2); }, "column 1 of G is zero");
}

TEST(GsvdAdversarial, BatchedPaddedEqualsSingleAndNamesThePair) {
  const index_t m = 3, p = 5, n = 4, ldf = 4, ldg = 6, batch = 3;
  const index_t stride_f = ldf * n + 1, stride_g = ldg * n + 2;
  std::vector<C> f(at(stride_f * batch), C(kNaN, kNaN)), g(at(stride_g * batch), C(kNaN, kNaN));
  for (index_t b = 0; b < batch; ++b) {
    const auto fb = random_matrix<C>(m, n, 100 + static_cast<unsigned>(b));
    const auto gb = random_matrix<C>(p, n, 200 + static_cast<unsigned>(b));
    for (index_t j = 0; j < n; ++j) {
      for (index_t i = 0; i < m; ++i)
        f[at(b * stride_f + i + j * ldf)] = fb[at(i + j * m)];
      for (index_t i = 0; i < p; ++i)
        g[at(b * stride_g + i + j * ldg)] = gb[at(i + j * p)];
    }
  }
  GsvdOptions o = vectors(Variant::Pointwise, 2);
  const auto all = shiftop::svd::gsvd_hz_batched(f.data(), ldf, stride_f, g.data(), ldg, stride_g,
                                                 batch, m, p, n, o);
  o.threads = 1;
  for (index_t b = 0; b < batch; ++b) {
    const auto one =
        gsvd_hz(f.data() + b * stride_f, m, ldf, g.data() + b * stride_g, p, ldg, n, o);
    for (index_t k = 0; k < n; ++k) {
      EXPECT_EQ(one.sigma_f[at(k)], all.sigma_f[at(b * n + k)]);
      EXPECT_EQ(one.sigma_g[at(k)], all.sigma_g[at(b * n + k)]);
    }
    for (index_t k = 0; k < n * n; ++k)
      EXPECT_EQ(one.x[at(k)], all.x[at(b * n * n + k)]);
  }
  const auto none = shiftop::svd::gsvd_hz_batched<C>(nullptr, ldf, 0, nullptr, ldg, 0, 0, m, p, n);
  EXPECT_TRUE(none.sigma_f.empty() && none.stats.empty());
  g[at(2 * stride_g + 1 + 2 * ldg)] = C(0, kNaN);
  expect_error(
      [&] {
        (void)shiftop::svd::gsvd_hz_batched(f.data(), ldf, stride_f, g.data(), ldg, stride_g, batch,
                                            m, p, n);
      },
      "pair 2");
  expect_error(
      [&] {
        (void)shiftop::svd::gsvd_hz_batched(f.data(), ldf, ldf * n - 1, g.data(), ldg, stride_g,
                                            batch, m, p, n);
      },
      "stride_f");
}

// ---- the regularisation path ----

using shiftop::Shape;
using shiftop::inverse::PathPoint;
using shiftop::inverse::Regulariser;
using shiftop::inverse::RegularizationPath;

struct Problem {
  Shape shape;
  std::vector<double> column, data;
};

Problem problem(index_t nd, index_t nm, index_t nt, unsigned seed) {
  Problem p;
  p.shape = Shape{nd, nm, nt};
  p.column = random_matrix<double>(nd * nm * nt, 1, seed);
  p.data = random_matrix<double>(nd * nt, 1, seed + 1);
  return p;
}

bool finite(const PathPoint& q) {
  return std::isfinite(q.residual_norm) && std::isfinite(q.seminorm) && std::isfinite(q.gcv);
}

TEST(RegPathAdversarial, SizeOne) {
  const Problem p = problem(1, 1, 1, 91);
  Regulariser r;
  const RegularizationPath path(p.column, {}, p.shape, r, p.data);
  const std::vector<double> alphas{1e-3, 1.0, 1e3};
  const auto points = path.evaluate(alphas);
  for (const auto& q : points)
    EXPECT_TRUE(finite(q));
  // Nt = 1, L = 2: C_F = [[f, 0], [0, f]] acting on m (2 steps), data [d; 0]: m_0 =
  // f d / (f^2 + alpha^2), m_1 = 0.
  const double f = p.column[0], d = p.data[0];
  const auto m = path.solve(1.0);
  ASSERT_EQ(m.size(), 1U);
  EXPECT_NEAR(m[0], f * d / (f * f + 1.0), 1e-14 * std::abs(f * d));
}

TEST(RegPathAdversarial, ZeroDataGivesZeroSolution) {
  Problem p = problem(2, 3, 4, 93);
  std::fill(p.data.begin(), p.data.end(), 0.0);
  Regulariser r;
  r.time_derivative = 1;
  const RegularizationPath path(p.column, {}, p.shape, r, p.data);
  for (const double x : path.solve(0.5))
    EXPECT_EQ(x, 0.0);
  const std::vector<double> alphas{0.1, 1.0};
  for (const auto& q : path.evaluate(alphas)) {
    EXPECT_EQ(q.residual_norm, 0.0);
    EXPECT_EQ(q.seminorm, 0.0);
    EXPECT_EQ(q.gcv, 0.0);
  }
}

// Extreme alphas: alpha^2 overflows (1e200) or underflows (1e-200) in double. The path must stay
// finite with the limits alpha -> infinity (m = 0: residual ||d||, seminorm 0) and alpha -> 0
// (the least-squares fit), and the solution finite.
TEST(RegPathAdversarial, ExtremeAlphasStayFinite) {
  // Nd < Nm: F^[w] is wide, so some sigma_f are exactly zero.
  const Problem p = problem(2, 3, 5, 95);
  Regulariser r;
  r.time_derivative = 2;
  const RegularizationPath path(p.column, {}, p.shape, r, p.data);
  double data_norm = 0;
  for (const double x : p.data)
    data_norm += x * x;
  data_norm = std::sqrt(data_norm);
  const std::vector<double> alphas{1e-300, 1e-200, 1e-160, 1e160, 1e200, 1e300};
  const auto points = path.evaluate(alphas);
  for (const auto& q : points) {
    SCOPED_TRACE(q.alpha);
    // GCV may be 0 / 0 at alphas where the fit is exact to underflow (Nd < Nm); the curves not.
    EXPECT_TRUE(std::isfinite(q.residual_norm) && std::isfinite(q.seminorm))
        << q.residual_norm << " " << q.seminorm << " " << q.gcv;
    EXPECT_FALSE(q.gcv < 0.0);
  }
  EXPECT_TRUE(std::isfinite(points[3].gcv) && std::isfinite(points[5].gcv));
  EXPECT_TRUE(std::isfinite(points[shiftop::inverse::gcv_choice(points)].gcv));
  // alpha -> infinity: m -> 0, so the residual is ||[d; 0]|| = ||d||.
  EXPECT_NEAR(points[5].residual_norm, data_norm, 1e-12 * data_norm);
  EXPECT_LE(points[5].seminorm, 1e-250);
  const auto huge = path.solve(1e300);
  for (const double x : huge)
    EXPECT_TRUE(std::isfinite(x) && std::abs(x) < 1e-250) << x;
  const auto tiny = path.solve(1e-300);
  const auto small = path.solve(1e-12);
  for (std::size_t i = 0; i < tiny.size(); ++i) {
    EXPECT_TRUE(std::isfinite(tiny[i])) << i;
    EXPECT_NEAR(tiny[i], small[i], 1e-6 * (1 + std::abs(small[i]))) << i;
  }
}

TEST(RegPathAdversarial, LaplacianOneUlpAsymmetryIsRefused) {
  const Problem p = problem(2, 3, 3, 97);
  Regulariser r;
  r.laplacian = {1, -1, 0, -1, 2, -1, 0, -1, 1};
  r.laplacian[1] = std::nextafter(-1.0, 0.0);
  expect_error([&] { RegularizationPath(p.column, {}, p.shape, r, p.data); }, "not symmetric");
}

TEST(RegPathAdversarial, ChoicesOnDegeneratePaths) {
  using shiftop::inverse::gcv_choice;
  using shiftop::inverse::lcurve_corner;
  std::vector<PathPoint> path(4);
  for (std::size_t k = 0; k < path.size(); ++k) {
    path[k].alpha = std::pow(10.0, static_cast<double>(k));
    path[k].residual_norm = 1.0;
    path[k].seminorm = 1.0;
    path[k].gcv = 2.0;
  }
  EXPECT_EQ(gcv_choice(path), 0U);               // all equal: the first
  EXPECT_EQ(lcurve_corner(path), std::nullopt);  // a point, not a curve: no corner
  path[0].gcv = kNaN;                            // a NaN first must not win
  path[2].gcv = 1.0;
  EXPECT_EQ(gcv_choice(path), 2U);
  path[0].gcv = path[1].gcv = path[2].gcv = path[3].gcv = kNaN;  // all NaN: the first
  EXPECT_EQ(gcv_choice(path), 0U);
  expect_error([] { (void)gcv_choice(std::vector<PathPoint>{}); }, "gcv_choice");
  EXPECT_EQ(lcurve_corner(std::vector<PathPoint>{}), std::nullopt);
  path.resize(7);  // still one point repeated, with enough alphas for a corner: none
  for (std::size_t k = 0; k < path.size(); ++k)
    path[k] = {std::pow(10.0, static_cast<double>(k)), 1.0, 1.0, 2.0};
  EXPECT_EQ(lcurve_corner(path), std::nullopt);
}

}  // namespace
