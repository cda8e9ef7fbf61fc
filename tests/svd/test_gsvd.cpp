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
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "shiftop/svd/gsvd.hpp"
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

// max_i |computed_i - exact_i| / exact_i over the nonzero exact values, and max computed_i where
// exact_i = 0 (there the error is absolute, relative to the largest value 1 of sigma_f).
struct ValueErrors {
  double relative = 0, zero = 0;
};
ValueErrors value_errors(const std::vector<double>& computed, const std::vector<double>& exact) {
  ValueErrors e;
  for (std::size_t i = 0; i < exact.size(); ++i) {
    if (exact[i] > 0)
      e.relative = std::max(e.relative, std::abs(computed[i] - exact[i]) / exact[i]);
    else
      e.zero = std::max(e.zero, std::abs(computed[i]));
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

// Runs one pair through gsvd_hz and checks everything; the bounds are from the measured errors
// (printed) with a margin.
template <class T>
void check_pair(const PrescribedGsvd<T>& pair, const GsvdOptions& options, double value_bound,
                const std::string& label) {
  SCOPED_TRACE(label);
  const GsvdResult<T> r = shiftop::svd::gsvd_hz(pair.f.data(), pair.m, pair.m, pair.g.data(),
                                                pair.p, pair.p, pair.n, options);
  ASSERT_EQ(r.sigma_f.size(), at(pair.n));
  EXPECT_TRUE(r.stats.converged) << r.stats.sweeps << " sweeps";
  const ValueErrors ours = value_errors(r.values(), pair.sigma);
  const ValueErrors lapack = value_errors(lapack_values(pair), pair.sigma);
  const FactorErrors<T> fe = factor_errors(pair.f, pair.g, pair.m, pair.p, pair.n, r);
  std::printf(
      "%s: n=%lld sweeps=%d values rel %.2e (xGGSVD3 %.2e) zero %.1e; residual F %.1e G %.1e; "
      "orth U %.1e V %.1e; unit %.1e\n",
      label.c_str(), static_cast<long long>(pair.n), r.stats.sweeps, ours.relative, lapack.relative,
      ours.zero, fe.residual_f, fe.residual_g, fe.orth_u, fe.orth_v, fe.unit);
  ::testing::Test::RecordProperty(label + "_values_rel", std::to_string(ours.relative));
  ::testing::Test::RecordProperty(label + "_ggsvd3_rel", std::to_string(lapack.relative));
  EXPECT_LE(ours.relative, value_bound);
  EXPECT_LE(ours.zero, 1e-14);
  const double n = static_cast<double>(pair.n);
  const double eps = std::numeric_limits<double>::epsilon();
  EXPECT_LE(fe.residual_f, 20 * n * eps);
  EXPECT_LE(fe.residual_g, 20 * n * eps);
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
    const auto pair = random_gsvd_pair<T>(s.m, s.p, s.n, 7u + static_cast<unsigned>(s.n));
    check_pair(pair, options_for(variant), 3e-13 * static_cast<double>(s.n),
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

}  // namespace
