// shiftop::svd::gsvd_hz and gsvd_hz_batched (the implicit Hari-Zimmermann GSVD, thesis chapter 3)
// on pairs with prescribed generalized singular values (support/prescribed_gsvd.hpp, formed in
// long double): the values against the prescribed ones and next to LAPACK's xGGSVD3 on the same
// pair; the factorisation F = U Sf X, G = V Sg X (residuals, orthonormal V and U's columns with
// sigma_f > 0, sigma_f^2 + sigma_g^2 = 1, the order); every variant, real and complex, wide and
// tall F, n = 1, 2, odd and across block widths; thread-count invariance and batches bit for bit;
// exact power-of-2 scaling; the refusals.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "shiftop/gsvd/gsvd.hpp"
#include "support/expect_error.hpp"
#include "support/prescribed_gsvd.hpp"

namespace {

using shiftop::index_t;
using shiftop::svd::GsvdOptions;
using shiftop::svd::GsvdResult;
using shiftop::svd::StrategyKind;
using shiftop::svd::Variant;
using shiftop::testing::expect_error;
using shiftop::testing::prescribed_gsvd_pair;
using shiftop::testing::PrescribedGsvd;
using shiftop::testing::random_gsvd_pair;
using C = std::complex<double>;

template <class T>
constexpr bool kComplex = !std::is_same_v<T, double>;

std::size_t at(index_t i) {
  return static_cast<std::size_t>(i);
}

// The generalized singular values by LAPACK's xGGSVD3 (G of full column rank: k = 0, l = n),
// nonincreasing.
template <class T>
std::vector<double> lapack_values(const PrescribedGsvd<T>& pair) {
  const auto m = static_cast<lapack_int>(pair.m), p = static_cast<lapack_int>(pair.p),
             n = static_cast<lapack_int>(pair.n);
  std::vector<double> alpha(at(pair.n)), beta(at(pair.n));
  std::vector<lapack_int> iwork(at(pair.n));
  lapack_int k = 0, l = 0, info = 0;
  if constexpr (kComplex<T>) {
    std::vector<lapack_complex_double> a(pair.f.size()), b(pair.g.size());
    for (std::size_t i = 0; i < a.size(); ++i)
      a[i] = lapack_make_complex_double(pair.f[i].real(), pair.f[i].imag());
    for (std::size_t i = 0; i < b.size(); ++i)
      b[i] = lapack_make_complex_double(pair.g[i].real(), pair.g[i].imag());
    info = LAPACKE_zggsvd3(LAPACK_COL_MAJOR, 'N', 'N', 'N', m, n, p, &k, &l, a.data(), m, b.data(),
                           p, alpha.data(), beta.data(), nullptr, 1, nullptr, 1, nullptr, 1,
                           iwork.data());
  } else {
    std::vector<double> a(pair.f), b(pair.g);
    info = LAPACKE_dggsvd3(LAPACK_COL_MAJOR, 'N', 'N', 'N', m, n, p, &k, &l, a.data(), m, b.data(),
                           p, alpha.data(), beta.data(), nullptr, 1, nullptr, 1, nullptr, 1,
                           iwork.data());
  }
  EXPECT_EQ(info, 0);
  EXPECT_EQ(k + l, n);
  std::vector<double> values(at(pair.n));
  for (index_t i = 0; i < pair.n; ++i)
    values[at(i)] = alpha[at(i)] / beta[at(i)];
  std::sort(values.begin(), values.end(), std::greater<>());
  return values;
}

// The condition of each generalized singular value of the prescribed pair F = U Sf X,
// G = V Sg X under columnwise perturbations ||dF e_j|| <= eta ||F e_j||, ||dG e_j|| <= eta ||G
// e_j|| (the rounding of F and G to double is one; a one-sided Jacobi method's backward error is of
// this form). With x_i = X^{-1} e_i (F x_i = sigma_f,i u_i, G x_i = sigma_g,i v_i), first-order
// perturbation of the pencil (F^H F, G^H G) gives
//   d sigma_i / sigma_i = Re(u_i^H dF x_i) / sigma_f,i - Re(v_i^H dG x_i) / sigma_g,i,
// so |d sigma_i| / sigma_i <= eta kappa_i with
//   kappa_i = sum_j |x_ij| (||F e_j|| / sigma_f,i + ||G e_j|| / sigma_g,i).
// X^{-1} by LAPACK (its own relative error, eps kappa(X), changes kappa_i by as little). 0 where
// sigma_f,i = 0 (those values are checked absolutely).
template <class T>
std::vector<double> value_conditions(const PrescribedGsvd<T>& pair) {
  const index_t n = pair.n;
  EXPECT_EQ(pair.x.size(), at(n * n)) << "value_conditions needs the pair's factors";
  std::vector<T> inverse(at(n * n), T(0));
  for (index_t i = 0; i < n; ++i)
    inverse[at(i + i * n)] = 1;
  std::vector<T> x = pair.x;
  std::vector<lapack_int> pivots(at(n));
  const auto ln = static_cast<lapack_int>(n);
  lapack_int info = 0;
  if constexpr (kComplex<T>)
    info = LAPACKE_zgesv(LAPACK_COL_MAJOR, ln, ln,
                         reinterpret_cast<lapack_complex_double*>(x.data()), ln, pivots.data(),
                         reinterpret_cast<lapack_complex_double*>(inverse.data()), ln);
  else
    info = LAPACKE_dgesv(LAPACK_COL_MAJOR, ln, ln, x.data(), ln, pivots.data(), inverse.data(), ln);
  EXPECT_EQ(info, 0);
  const auto column_norms = [&](const std::vector<T>& a, index_t rows) {
    std::vector<double> norms(at(n));
    for (index_t j = 0; j < n; ++j) {
      double sum = 0;
      for (index_t i = 0; i < rows; ++i)
        sum += std::norm(std::complex<double>(a[at(i + j * rows)]));
      norms[at(j)] = std::sqrt(sum);
    }
    return norms;
  };
  const std::vector<double> nf = column_norms(pair.f, pair.m), ng = column_norms(pair.g, pair.p);
  std::vector<double> kappa(at(n), 0.0);
  for (index_t i = 0; i < n; ++i) {
    if (!(pair.sigma_f[at(i)] > 0)) continue;
    for (index_t j = 0; j < n; ++j)
      kappa[at(i)] += std::abs(inverse[at(j + i * n)]) *
                      (nf[at(j)] / pair.sigma_f[at(i)] + ng[at(j)] / pair.sigma_g[at(i)]);
  }
  return kappa;
}

// max_i |computed_i - exact_i| / exact_i over the nonzero exact values; the largest ratio of that
// error to the value's condition kappa_i (value_conditions), which the bounds limit; and
// max computed_i where exact_i = 0 (there the error is absolute, relative to the largest value 1
// of sigma_f).
struct ValueErrors {
  double relative = 0, per_condition = 0, zero = 0;
};
ValueErrors value_errors(const std::vector<double>& computed, const std::vector<double>& exact,
                         const std::vector<double>& kappa) {
  ValueErrors e;
  for (std::size_t i = 0; i < exact.size(); ++i) {
    if (exact[i] > 0) {
      const double error = std::abs(computed[i] - exact[i]) / exact[i];
      e.relative = std::max(e.relative, error);
      e.per_condition = std::max(e.per_condition, error / kappa[i]);
    } else {
      e.zero = std::max(e.zero, std::abs(computed[i]));
    }
  }
  return e;
}

double norm2(double x) {
  return x * x;
}
double norm2(C x) {
  return std::norm(x);
}

// The checks of the factorisation: residuals, orthonormality, the unit pairs, the order.
template <class T>
struct FactorErrors {
  double residual_f = 0, residual_g = 0, orth_v = 0, orth_u = 0, unit = 0;
  bool ordered = true;
};

template <class T>
FactorErrors<T> factor_errors(const std::vector<T>& f, const std::vector<T>& g, index_t m,
                              index_t p, index_t n, const GsvdResult<T>& r) {
  FactorErrors<T> e;
  const auto residual = [&](const std::vector<T>& a, index_t rows, const std::vector<T>& w,
                            const std::vector<double>& s) {
    double diff = 0, total = 0;
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < rows; ++i) {
        T sum = 0;
        for (index_t k = 0; k < n; ++k)
          sum += w[at(i + k * rows)] * s[at(k)] * r.x[at(k + j * n)];
        diff += norm2(a[at(i + j * rows)] - sum);
        total += norm2(a[at(i + j * rows)]);
      }
    return total > 0 ? std::sqrt(diff / total) : std::sqrt(diff);
  };
  e.residual_f = residual(f, m, r.u, r.sigma_f);
  e.residual_g = residual(g, p, r.v, r.sigma_g);
  const auto orth = [&](const std::vector<T>& w, index_t rows, auto keep) {
    double worst = 0;
    for (index_t a = 0; a < n; ++a)
      for (index_t b = 0; b < n; ++b) {
        if (!keep(a) || !keep(b)) continue;
        T dot = 0;
        for (index_t i = 0; i < rows; ++i) {
          if constexpr (kComplex<T>)
            dot += std::conj(w[at(i + a * rows)]) * w[at(i + b * rows)];
          else
            dot += w[at(i + a * rows)] * w[at(i + b * rows)];
        }
        worst = std::max(worst, std::abs(dot - T(a == b ? 1.0 : 0.0)));
      }
    return worst;
  };
  e.orth_v = orth(r.v, p, [](index_t) { return true; });
  e.orth_u = orth(r.u, m, [&](index_t k) { return r.sigma_f[at(k)] > 0; });
  const std::vector<double> values = r.values();
  for (index_t k = 0; k < n; ++k) {
    e.unit = std::max(e.unit, std::abs(std::hypot(r.sigma_f[at(k)], r.sigma_g[at(k)]) - 1));
    if (!(r.sigma_g[at(k)] > 0)) e.ordered = false;
    if (k > 0 && values[at(k)] > values[at(k - 1)]) e.ordered = false;
  }
  return e;
}

GsvdOptions options_for(Variant variant, bool vectors = true, int threads = 1) {
  GsvdOptions o;
  o.variant = variant;
  o.compute_vectors = vectors;
  o.threads = threads;
  return o;
}

const char* name(Variant v) {
  switch (v) {
    case Variant::Pointwise:
      return "pointwise";
    case Variant::BlockOriented:
      return "block-oriented";
    case Variant::FullBlock:
      return "full-block";
    default:
      return "auto";
  }
}

// random_gsvd_pair with its factors (the same pair: the factors draw no random numbers), for
// value_conditions.
template <class T>
PrescribedGsvd<T> factored_pair(index_t m, index_t p, index_t n, unsigned seed,
                                double x_condition = 10, double lo = 1e-5, double hi = 1e4) {
  return random_gsvd_pair<T>(m, p, n, seed, x_condition, lo, hi, /*with_factors=*/true);
}

// Runs one pair (made with its factors) through gsvd_hz and checks everything. The values: each
// within 4 n eps kappa_i of the prescribed one (value_conditions: first-order perturbation theory
// with a columnwise backward error 4 n eps, LAPACK's test-ratio form c n eps; measured over the
// native and the portable build at most 0.52 n eps kappa_i at n = 1 (complex |f| / |g|, a few
// roundings) and 0.14 n eps kappa_i for n >= 2; xGGSVD3 on the same pairs 0.26 and 0.14). The
// factorisation: residuals and orthogonality within 20 n eps (times residual_factor for an
// ill-conditioned X, whose Z^{-1} the residuals go through).
template <class T>
void check_pair(const PrescribedGsvd<T>& pair, const GsvdOptions& options, const std::string& label,
                double residual_factor = 1) {
  SCOPED_TRACE(label);
  const GsvdResult<T> r = shiftop::svd::gsvd_hz(pair.f.data(), pair.m, pair.m, pair.g.data(),
                                                pair.p, pair.p, pair.n, options);
  ASSERT_EQ(r.sigma_f.size(), at(pair.n));
  EXPECT_TRUE(r.stats.converged) << r.stats.sweeps << " sweeps";
  const std::vector<double> kappa = value_conditions(pair);
  const ValueErrors ours = value_errors(r.values(), pair.sigma, kappa);
  const ValueErrors lapack = value_errors(lapack_values(pair), pair.sigma, kappa);
  const FactorErrors<T> fe = factor_errors(pair.f, pair.g, pair.m, pair.p, pair.n, r);
  const double n = static_cast<double>(pair.n);
  const double eps = std::numeric_limits<double>::epsilon();
  std::printf(
      "%s: n=%lld sweeps=%d values rel %.2e = %.3f n eps kappa (xGGSVD3 %.2e = %.3f n eps kappa) "
      "zero %.1e; residual F %.1e G %.1e; orth U %.1e V %.1e; unit %.1e\n",
      label.c_str(), static_cast<long long>(pair.n), r.stats.sweeps, ours.relative,
      ours.per_condition / (n * eps), lapack.relative, lapack.per_condition / (n * eps), ours.zero,
      fe.residual_f, fe.residual_g, fe.orth_u, fe.orth_v, fe.unit);
  ::testing::Test::RecordProperty(label + "_values_rel", std::to_string(ours.relative));
  ::testing::Test::RecordProperty(label + "_ggsvd3_rel", std::to_string(lapack.relative));
  EXPECT_LE(ours.per_condition, 4 * n * eps);
  EXPECT_LE(ours.zero, 1e-14);
  EXPECT_LE(fe.residual_f, 20 * n * eps * residual_factor);
  EXPECT_LE(fe.residual_g, 20 * n * eps * residual_factor);
  EXPECT_LE(fe.orth_u, 20 * n * eps);
  EXPECT_LE(fe.orth_v, 20 * n * eps);
  EXPECT_LE(fe.unit, 4 * eps);
  EXPECT_TRUE(fe.ordered);
}

struct Shape3 {
  index_t m, p, n;
};

template <class T>
void check_shapes(Variant variant) {
  // n = 1, 2, odd; wide F (m < n), square, tall; n crossing the default block width 32.
  const Shape3 shapes[] = {{1, 1, 1},    {3, 2, 2},    {5, 7, 5},   {4, 12, 9},
                           {20, 25, 17}, {70, 66, 65}, {30, 80, 70}};
  for (const Shape3& s : shapes) {
    const auto pair = factored_pair<T>(s.m, s.p, s.n, 7u + static_cast<unsigned>(s.n));
    check_pair(pair, options_for(variant),
               std::string(name(variant)) + (kComplex<T> ? " complex " : " real ") +
                   std::to_string(s.m) + "x" + std::to_string(s.p) + "x" + std::to_string(s.n));
  }
}

TEST(GsvdHz, PointwiseReal) {
  check_shapes<double>(Variant::Pointwise);
}
TEST(GsvdHz, PointwiseComplex) {
  check_shapes<C>(Variant::Pointwise);
}

TEST(GsvdHz, BlockOrientedReal) {
  check_shapes<double>(Variant::BlockOriented);
}
TEST(GsvdHz, BlockOrientedComplex) {
  check_shapes<C>(Variant::BlockOriented);
}
TEST(GsvdHz, FullBlockReal) {
  check_shapes<double>(Variant::FullBlock);
}
TEST(GsvdHz, FullBlockComplex) {
  check_shapes<C>(Variant::FullBlock);
}

// Block widths 4 and 7 on n = 30, 31: many blocks (odd and even counts of columns per block), the
// outer strategy over more than two blocks; the values agree with the pointwise method's.
TEST(GsvdHz, BlockedManyBlocksAgreeWithPointwise) {
  for (const index_t n : {index_t{30}, index_t{31}}) {
    const auto pair = factored_pair<double>(n + 3, n + 5, n, 91u + static_cast<unsigned>(n));
    const auto pointwise =
        shiftop::svd::gsvd_hz(pair.f.data(), pair.m, pair.m, pair.g.data(), pair.p, pair.p, n,
                              options_for(Variant::Pointwise));
    const std::vector<double> kappa = value_conditions(pair);
    for (const Variant variant : {Variant::BlockOriented, Variant::FullBlock})
      for (const index_t width : {index_t{4}, index_t{7}}) {
        GsvdOptions o = options_for(variant);
        o.block_width = width;
        const std::string label = std::string(name(variant)) + " width " + std::to_string(width) +
                                  " n " + std::to_string(n);
        check_pair(pair, o, label);
        const auto blocked = shiftop::svd::gsvd_hz(pair.f.data(), pair.m, pair.m, pair.g.data(),
                                                   pair.p, pair.p, n, o);
        const auto a = blocked.values(), b = pointwise.values();
        double worst = 0;
        for (std::size_t i = 0; i < a.size(); ++i)
          worst = std::max(worst, std::abs(a[i] - b[i]) / b[i] / kappa[i]);
        // Each is within n eps kappa_i of the prescribed value (check_pair), so they differ by at
        // most twice that.
        EXPECT_LE(worst, 2 * 4 * static_cast<double>(n) * std::numeric_limits<double>::epsilon())
            << label;
      }
  }
}

// The same bits for 1, 2 and 3 threads, every variant (block width 3 so that a step of the outer
// strategy has several block pairs; rows >= 64 so that the pointwise steps do run in parallel).
TEST(GsvdHz, ThreadCountInvariantBitwise) {
  const index_t n = 16;
  const auto real = random_gsvd_pair<double>(40, 45, n, 5u);
  const auto cplx = random_gsvd_pair<C>(40, 45, n, 6u);
  for (const Variant variant : {Variant::Pointwise, Variant::BlockOriented, Variant::FullBlock}) {
    const auto run = [&](const auto& pair, int threads) {
      GsvdOptions o = options_for(variant, true, threads);
      o.block_width = 3;
      return shiftop::svd::gsvd_hz(pair.f.data(), pair.m, pair.m, pair.g.data(), pair.p, pair.p, n,
                                   o);
    };
    const auto r1 = run(real, 1);
    const auto c1 = run(cplx, 1);
    for (const int threads : {2, 3}) {
      const auto r = run(real, threads);
      const auto c = run(cplx, threads);
      EXPECT_EQ(r.sigma_f, r1.sigma_f) << name(variant) << " threads " << threads;
      EXPECT_EQ(r.sigma_g, r1.sigma_g);
      EXPECT_EQ(r.u, r1.u);
      EXPECT_EQ(r.v, r1.v);
      EXPECT_EQ(r.x, r1.x);
      EXPECT_EQ(r.stats.transformations, r1.stats.transformations);
      EXPECT_EQ(c.sigma_f, c1.sigma_f) << name(variant) << " complex threads " << threads;
      EXPECT_EQ(c.u, c1.u);
      EXPECT_EQ(c.x, c1.x);
    }
  }
}

// gsvd_hz_batched equals gsvd_hz on each pair bit for bit (padded leading dimensions and strides).
template <class T>
void check_batched() {
  const index_t m = 9, p = 13, n = 11, batch = 5, ldf = 10, ldg = 15;
  const index_t stride_f = ldf * n + 3, stride_g = ldg * n + 1;
  std::vector<T> f(static_cast<std::size_t>(stride_f * batch), T(std::nan(""))),
      g(static_cast<std::size_t>(stride_g * batch), T(std::nan("")));
  for (index_t b = 0; b < batch; ++b) {
    const auto pair = random_gsvd_pair<T>(m, p, n, 300u + static_cast<unsigned>(b));
    for (index_t j = 0; j < n; ++j) {
      for (index_t i = 0; i < m; ++i)
        f[at(b * stride_f + i + j * ldf)] = pair.f[at(i + j * m)];
      for (index_t i = 0; i < p; ++i)
        g[at(b * stride_g + i + j * ldg)] = pair.g[at(i + j * p)];
    }
  }
  for (const Variant variant : {Variant::Pointwise, Variant::BlockOriented}) {
    GsvdOptions o = options_for(variant, true, 2);
    o.block_width = 3;
    const auto all = shiftop::svd::gsvd_hz_batched(f.data(), ldf, stride_f, g.data(), ldg, stride_g,
                                                   batch, m, p, n, o);
    o.threads = 1;
    for (index_t b = 0; b < batch; ++b) {
      const auto one = shiftop::svd::gsvd_hz(f.data() + b * stride_f, m, ldf,
                                             g.data() + b * stride_g, p, ldg, n, o);
      EXPECT_TRUE(std::equal(one.sigma_f.begin(), one.sigma_f.end(), all.sigma_f.begin() + b * n));
      EXPECT_TRUE(std::equal(one.sigma_g.begin(), one.sigma_g.end(), all.sigma_g.begin() + b * n));
      EXPECT_TRUE(std::equal(one.u.begin(), one.u.end(), all.u.begin() + b * m * n));
      EXPECT_TRUE(std::equal(one.v.begin(), one.v.end(), all.v.begin() + b * p * n));
      EXPECT_TRUE(std::equal(one.x.begin(), one.x.end(), all.x.begin() + b * n * n));
      EXPECT_EQ(one.stats.sweeps, all.stats[at(b)].sweeps);
      EXPECT_TRUE(all.stats[at(b)].converged);
    }
  }
}
TEST(GsvdHz, BatchedEqualsOneAtATimeReal) {
  check_batched<double>();
}
TEST(GsvdHz, BatchedEqualsOneAtATimeComplex) {
  check_batched<C>();
}

// Scaling F and G by the same power of 2 gives the same bits (the driver scales exactly); scaling
// F alone by 2^k multiplies the values by 2^k (to rounding: sigma_f, sigma_g are renormalised).
template <class T>
void check_scaling() {
  const index_t m = 12, p = 15, n = 10;
  const auto pair = random_gsvd_pair<T>(m, p, n, 77u);
  const GsvdOptions o = options_for(Variant::Pointwise, false);
  const auto base = shiftop::svd::gsvd_hz(pair.f.data(), m, m, pair.g.data(), p, p, n, o);
  for (const int k : {600, -600}) {
    std::vector<T> f = pair.f, g = pair.g;
    for (T& x : f)
      x *= std::ldexp(1.0, k);
    for (T& x : g)
      x *= std::ldexp(1.0, k);
    const auto both = shiftop::svd::gsvd_hz(f.data(), m, m, g.data(), p, p, n, o);
    EXPECT_EQ(both.sigma_f, base.sigma_f) << k;
    EXPECT_EQ(both.sigma_g, base.sigma_g) << k;
    const auto only_f = shiftop::svd::gsvd_hz(f.data(), m, m, pair.g.data(), p, p, n, o);
    const auto a = only_f.values(), b = base.values();
    for (index_t i = 0; i < n; ++i)
      EXPECT_NEAR(a[at(i)] / std::ldexp(b[at(i)], k), 1.0,
                  8 * std::numeric_limits<double>::epsilon())
          << k << " " << i;
  }
}
TEST(GsvdHz, PowerOfTwoScalingReal) {
  check_scaling<double>();
}
TEST(GsvdHz, PowerOfTwoScalingComplex) {
  check_scaling<C>();
}

// Values spread over 18 orders of magnitude (1e-9 .. 1e9): the rounding of F to double alone moves
// sigma_f = 1e-9 by up to eps / 1e-9 relatively, which each value's condition kappa_i (check_pair)
// accounts for (measured: pointwise 1.3e-8, block-oriented 1.7e-8, xGGSVD3 1.1e-8 relative, all
// below 0.01 n eps kappa_i). Values only give the same values as with vectors.
TEST(GsvdHz, WideRangeOfValues) {
  const index_t n = 24;
  for (const Variant variant : {Variant::Pointwise, Variant::BlockOriented}) {
    const auto pair = factored_pair<double>(n, n + 4, n, 12u, 10, 1e-9, 1e9);
    GsvdOptions o = options_for(variant);
    o.block_width = 6;
    check_pair(pair, o, std::string("wide range ") + name(variant));
    const auto with = shiftop::svd::gsvd_hz(pair.f.data(), n, n, pair.g.data(), n + 4, n + 4, n, o);
    o.compute_vectors = false;
    const auto without =
        shiftop::svd::gsvd_hz(pair.f.data(), n, n, pair.g.data(), n + 4, n + 4, n, o);
    EXPECT_EQ(with.sigma_f, without.sigma_f);
    EXPECT_TRUE(without.u.empty() && without.v.empty() && without.x.empty());
  }
}

// A zero F: every value 0 (sigma_f = 0, sigma_g = 1), U zero, G = V X.
TEST(GsvdHz, ZeroF) {
  const index_t m = 4, p = 6, n = 5;
  const auto pair = random_gsvd_pair<double>(m, p, n, 3u);
  const std::vector<double> f(static_cast<std::size_t>(m * n), 0.0);
  const auto r = shiftop::svd::gsvd_hz(f.data(), m, m, pair.g.data(), p, p, n,
                                       options_for(Variant::Pointwise));
  for (index_t i = 0; i < n; ++i) {
    EXPECT_EQ(r.sigma_f[at(i)], 0.0);
    EXPECT_EQ(r.sigma_g[at(i)], 1.0);
  }
  EXPECT_TRUE(std::all_of(r.u.begin(), r.u.end(), [](double x) { return x == 0; }));
  EXPECT_TRUE(r.stats.converged) << r.stats.sweeps;
  const FactorErrors<double> e = factor_errors(f, pair.g, m, p, n, r);
  EXPECT_LE(e.residual_g, 1e-14);  // 20 n eps = 2.2e-14 in check_pair; measured 3.5e-16
  EXPECT_LE(e.orth_v, 1e-14);
}

TEST(GsvdHz, MaxSweepsOneReportsNotConverged) {
  const auto pair = random_gsvd_pair<double>(20, 20, 20, 4u);
  for (const Variant variant : {Variant::Pointwise, Variant::BlockOriented}) {
    GsvdOptions o = options_for(variant, false);
    o.max_sweeps = 1;
    o.block_width = 5;
    const auto r = shiftop::svd::gsvd_hz(pair.f.data(), 20, 20, pair.g.data(), 20, 20, 20, o);
    EXPECT_FALSE(r.stats.converged) << name(variant);
    EXPECT_EQ(r.stats.sweeps, 1);
    EXPECT_GT(r.stats.proper_transformations, 0);
    o.max_sweeps = 0;
    const auto full = shiftop::svd::gsvd_hz(pair.f.data(), 20, 20, pair.g.data(), 20, 20, 20, o);
    EXPECT_TRUE(full.stats.converged);
    EXPECT_GT(full.stats.sweeps, 1);
    EXPECT_LE(full.stats.proper_transformations, full.stats.transformations);
  }
}

TEST(GsvdHz, Refusals) {
  std::vector<double> f(12, 1.0), g(12, 0.0);
  for (int i = 0; i < 3; ++i)
    g[static_cast<std::size_t>(i + 4 * i)] = 1.0;  // G = [I3; 0], 4 x 3
  const auto call = [&](index_t m, index_t ldf, index_t p, index_t ldg, index_t n,
                        GsvdOptions o = {}) {
    return [=, &f, &g] { shiftop::svd::gsvd_hz(f.data(), m, ldf, g.data(), p, ldg, n, o); };
  };
  expect_error(call(4, 4, 2, 4, 3), "with p < n: not of full column rank");
  expect_error(call(0, 4, 4, 4, 3), "m, p, n >= 1");
  expect_error(call(4, 3, 4, 4, 3), "ldf: expected >= m = 4");
  expect_error(call(4, 4, 4, 3, 3), "ldg: expected >= p = 4");
  GsvdOptions bad;
  bad.threads = -1;
  expect_error(call(4, 4, 4, 4, 3, bad), "threads");
  bad = {};
  bad.block_width = -2;
  expect_error(call(4, 4, 4, 4, 3, bad), "block_width");
  bad = {};
  bad.max_sweeps = -1;
  expect_error(call(4, 4, 4, 4, 3, bad), "max_sweeps");
  {
    std::vector<double> f2 = f;
    f2[5] = std::nan("");
    expect_error([&] { shiftop::svd::gsvd_hz(f2.data(), 4, 4, g.data(), 4, 4, 3); },
                 "f: F entry (1, 1) is nan");
    std::vector<double> g2 = g;
    g2[10] = std::numeric_limits<double>::infinity();
    expect_error([&] { shiftop::svd::gsvd_hz(f.data(), 4, 4, g2.data(), 4, 4, 3); },
                 "g: G entry (2, 2) is inf");
  }
  {
    std::vector<double> g2 = g;
    g2[5] = 0.0;  // column 1 of G zero
    expect_error([&] { shiftop::svd::gsvd_hz(f.data(), 4, 4, g2.data(), 4, 4, 3); },
                 "column 1 of G is zero");
  }
  for (const Variant variant : {Variant::Pointwise, Variant::BlockOriented}) {
    // A duplicated column of G (columns 0 and 2 of a random G of 5 columns).
    const auto pair = random_gsvd_pair<double>(6, 8, 5, 8u);
    std::vector<double> g2 = pair.g;
    std::copy(g2.begin(), g2.begin() + 8, g2.begin() + 16);
    GsvdOptions o = options_for(variant);
    o.block_width = 2;
    expect_error([&] { shiftop::svd::gsvd_hz(pair.f.data(), 6, 6, g2.data(), 8, 8, 5, o); },
                 "G is numerically rank deficient");
  }
  // Batches name the pair.
  std::vector<double> fb(24, 1.0), gb(24, 0.0);
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 3; ++i)
      gb[static_cast<std::size_t>(12 * b + i + 4 * i)] = 1.0;
  fb[12 + 7] = std::nan("");
  expect_error(
      [&] { shiftop::svd::gsvd_hz_batched(fb.data(), 4, 12, gb.data(), 4, 12, 2, 4, 4, 3); },
      "f: pair 1: F entry (3, 1) is nan");
  gb[12 + 4 * 2 + 2] = 0.0;
  fb[12 + 7] = 1.0;
  expect_error(
      [&] { shiftop::svd::gsvd_hz_batched(fb.data(), 4, 12, gb.data(), 4, 12, 2, 4, 4, 3); },
      "pair 1: g: column 2 of G is zero");
  expect_error(
      [&] { shiftop::svd::gsvd_hz_batched(fb.data(), 4, 11, gb.data(), 4, 12, 2, 4, 4, 3); },
      "stride_f: expected >= ldf * n = 12");
}

// Other strategies, no local sorting: still the GSVD (the final order does not rely on sorting).
TEST(GsvdHz, StrategiesAndNoSorting) {
  const auto pair = factored_pair<C>(26, 30, 23, 41u);
  for (const StrategyKind kind : {StrategyKind::RowCyclic, StrategyKind::ReversedRowCyclicClosest,
                                  StrategyKind::RowCyclicClosest}) {
    for (const bool sort : {true, false}) {
      GsvdOptions o = options_for(Variant::Pointwise);
      o.strategy = kind;
      o.sort = sort;
      check_pair(pair, o, std::string(shiftop::name_of(kind)) + (sort ? " sorted" : ""));
      o.variant = Variant::FullBlock;
      o.block_width = 5;
      o.inner_strategy = kind;
      check_pair(pair, o,
                 "full-block " + std::string(shiftop::name_of(kind)) + (sort ? " sorted" : ""));
    }
  }
}

// Scaling the columns of F and G by the same factors (F E, G E, E diagonal) does not change the
// generalized singular values, and the method is invariant under it (initZ normalises G's
// columns): factors 1e-100 .. 1e80 give the values of the unscaled pair to rounding. Each value's
// condition kappa_i (check_pair) is the same for both pairs (X^{-1} -> E^{-1} X^{-1}, column norms
// times E) and the scaled pair's rounding is columnwise, so both are within 4 n eps kappa_i of the
// exact value and differ by at most twice that (measured: pointwise 2.4e-13, block-oriented
// 1.1e-13 relative, at most 0.004 n eps kappa_i). G E has condition number 1e180, which must not be
// refused as rank deficiency.
TEST(GsvdHz, ColumnScalingInvariant) {
  const index_t m = 9, p = 11, n = 8;
  const auto pair = factored_pair<C>(m, p, n, 21u);
  const std::vector<double> kappa = value_conditions(pair);
  const double factors[] = {1e-100, 1, 3e80, 7.0, 1e-50, 2e40, 1, 5e-20};
  std::vector<C> f = pair.f, g = pair.g;
  for (index_t j = 0; j < n; ++j) {
    for (index_t i = 0; i < m; ++i)
      f[at(i + j * m)] *= factors[j];
    for (index_t i = 0; i < p; ++i)
      g[at(i + j * p)] *= factors[j];
  }
  for (const Variant variant : {Variant::Pointwise, Variant::BlockOriented}) {
    GsvdOptions o = options_for(variant, false);
    o.block_width = 2;
    const auto base = shiftop::svd::gsvd_hz(pair.f.data(), m, m, pair.g.data(), p, p, n, o);
    const auto scaled = shiftop::svd::gsvd_hz(f.data(), m, m, g.data(), p, p, n, o);
    const auto a = scaled.values(), b = base.values();
    double worst = 0, per_condition = 0;
    for (index_t i = 0; i < n; ++i) {
      const double difference = std::abs(a[at(i)] - b[at(i)]) / b[at(i)];
      worst = std::max(worst, difference);
      per_condition = std::max(per_condition, difference / kappa[at(i)]);
    }
    const double bound = 4 * static_cast<double>(n) * std::numeric_limits<double>::epsilon();
    std::printf("column scaling %s: %.2e = %.3f n eps kappa\n", name(variant), worst,
                per_condition / (bound / 4));
    EXPECT_LE(per_condition, 2 * bound) << name(variant);
  }
}

// A generalized singular value near 1e200 overflows ||f||^2 / ||g||^2 (here G's column 1 scaled by
// 1e-200 while F's is not): refused with a message saying so, not answered with inf or NaN.
TEST(GsvdHz, OutOfRangeValuesRefused) {
  const auto pair = random_gsvd_pair<double>(6, 6, 4, 2u);
  std::vector<double> g = pair.g;
  for (index_t i = 0; i < 6; ++i)
    g[at(i + 6)] *= 1e-200;
  expect_error(
      [&] {
        shiftop::svd::gsvd_hz(pair.f.data(), 6, 6, g.data(), 6, 6, 4,
                              options_for(Variant::Pointwise));
      },
      "overflowed");
}
// An ill-conditioned X (condition 1e6, so G's condition is about 1e6 too) is not refused; the
// values keep the accuracy the conditioning allows (check_pair's kappa_i grows with X^{-1};
// measured: pointwise 2.3e-8, block-oriented 2.6e-7, xGGSVD3 5.4e-8 relative, all below
// 0.003 n eps kappa_i; the residuals grow with X's condition, through Z^{-1}: 1.1e-11), and Auto
// (the default options) gives the pointwise result at this size.
TEST(GsvdHz, IllConditionedXAndAuto) {
  const index_t n = 40;
  const auto pair = factored_pair<double>(45, 50, n, 33u, 1e6);
  check_pair(pair, options_for(Variant::Pointwise), "x condition 1e6 pointwise", 1e3);
  check_pair(pair, options_for(Variant::BlockOriented), "x condition 1e6 block-oriented", 1e3);
  GsvdOptions automatic;
  automatic.threads = 1;
  const auto a = shiftop::svd::gsvd_hz(pair.f.data(), 45, 45, pair.g.data(), 50, 50, n, automatic);
  const auto b = shiftop::svd::gsvd_hz(pair.f.data(), 45, 45, pair.g.data(), 50, 50, n,
                                       options_for(Variant::Pointwise, false));
  EXPECT_EQ(a.sigma_f, b.sigma_f);
  EXPECT_TRUE(a.u.empty());
}

// n = 150 with the default block width 32 (six block columns), two threads: the values against
// the prescribed ones next to xGGSVD3's, pointwise and block-oriented.
TEST(GsvdHz, DefaultBlockWidthSixBlocks) {
  const index_t n = 150;
  const auto pair = factored_pair<double>(160, 155, n, 150u);
  for (const Variant variant : {Variant::Pointwise, Variant::BlockOriented})
    check_pair(pair, options_for(variant, true, 2), std::string(name(variant)) + " n 150");
}

// F of rank < n with m >= n (prescribed zero values among 1e-8 .. 1e8), random sizes, block
// widths and variants: every run converges, the zero values come out exactly 0 (the zero test)
// and the others to the relative accuracy the spread allows (bound 1e-5; the rounding of F moves
// sigma = 1e-8 by up to about eps / 1e-8; measured 6.1e-9 native, 1.1e-8 portable).
TEST(GsvdHz, RankDeficientFExactZeros) {
  for (unsigned seed = 0; seed < 12; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<index_t>(2 + rng() % 30);
    const auto m = n + static_cast<index_t>(rng() % 5), p = n + static_cast<index_t>(rng() % 5);
    std::vector<double> s = shiftop::testing::log_uniform_gsvd_values(m, n, 1e-8, 1e8, seed);
    const auto zeros = 1 + rng() % static_cast<std::uint64_t>(n / 2 + 1);
    for (std::uint64_t k = 0; k < zeros; ++k)
      s[rng() % static_cast<std::uint64_t>(n)] = 0;
    const auto pair = prescribed_gsvd_pair<double>(m, p, n, s, 10.0, seed);
    for (const Variant variant : {Variant::Pointwise, Variant::BlockOriented, Variant::FullBlock}) {
      GsvdOptions o = options_for(variant, false);
      o.block_width = static_cast<index_t>(1 + rng() % 8);
      const auto r = shiftop::svd::gsvd_hz(pair.f.data(), m, m, pair.g.data(), p, p, n, o);
      EXPECT_TRUE(r.stats.converged) << seed << " " << name(variant);
      const auto values = r.values();
      for (index_t i = 0; i < n; ++i) {
        if (pair.sigma[at(i)] == 0)
          EXPECT_EQ(values[at(i)], 0.0) << seed << " " << name(variant) << " " << i;
        else
          EXPECT_NEAR(values[at(i)] / pair.sigma[at(i)], 1.0, 1e-5)
              << seed << " " << name(variant) << " " << i;
      }
    }
  }
}

// options.backend = Cuda in a build without CUDA (the CPU CI's) is refused in one line saying
// why, for one pair and for a batch; with CUDA, test_gsvd_cuda runs that backend.
TEST(GsvdHz, CudaBackendWithoutCudaIsRefused) {
#ifdef SHIFTOP_HAVE_CUDA
  GTEST_SKIP() << "built with CUDA: test_gsvd_cuda runs the GPU backend";
#else
  const auto pair = shiftop::testing::random_gsvd_pair<double>(6, 7, 5, 3, 10.0);
  GsvdOptions options;
  options.backend = shiftop::Backend::Cuda;
  const char* const why =
      "gsvd: backend cuda: this shiftop was built without CUDA (SHIFTOP_ENABLE_CUDA=OFF); use "
      "backend cpu";
  expect_error(
      [&] { (void)shiftop::svd::gsvd_hz(pair.f.data(), 6, 6, pair.g.data(), 7, 7, 5, options); },
      why);
  expect_error(
      [&] {
        (void)shiftop::svd::gsvd_hz_batched(pair.f.data(), 6, 30, pair.g.data(), 7, 35, 1, 6, 7, 5,
                                            options);
      },
      why);
#endif
}

}  // namespace
