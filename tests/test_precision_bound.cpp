// All 32 precision configurations against the FP64 result, within the first-order error bound of
// the mixed-precision paper, eq. (6):
//   |dv5|/|v5| <= kappa(F^) [c1 e1 + (e_d + c2 e2 + c4 e4) log2(2 Nt) + c3 e3 n + c5 e5 max(1, log2
//   p)]
// with c_k = 1 when phase k is FP32 (0 otherwise), e_k the unit roundoff of that phase, n the
// length of the GEMV dot products (Nm for F, Nd for F*), p = 1 process. Two deliberate choices:
// log2(2 Nt) (the padded FFT length of the derivation) so that Nt = 1 keeps the FFT terms, and
// max(1, log2 p) because rounding the output to FP32 in phase 5 costs one rounding even on one
// process. The test allows a factor kSlack over the bound for the unknown constants of the
// paper's Higham/Van Loan estimates. It also checks the converse: a configuration with an FP32
// phase must really lose accuracy (FP32 is computed, not emulated in FP64).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>

#include "btt/plan.hpp"
#include "dense_reference.hpp"

namespace shiftop::btt {
namespace {

constexpr double kSlack = 4.0;

/// kappa(F^) = largest over smallest nonzero singular value over all frequencies (LAPACK).
double spectrum_condition_number(std::span<const double> col, std::span<const double> row,
                                 const Shape& s) {
  const auto dft = testing::kernel_dft(col, row, s);
  const index_t k = std::min(s.nd, s.nm);
  double smax = 0, smin = std::numeric_limits<double>::infinity();
  for (index_t w = 0; w < s.frequencies(); ++w) {
    std::vector<lapack_complex_double> a(static_cast<std::size_t>(s.nd * s.nm));
    for (index_t e = 0; e < s.nd * s.nm; ++e) {
      const auto v = dft[static_cast<std::size_t>(w * s.nd * s.nm + e)];
      a[static_cast<std::size_t>(e)] = lapack_make_complex_double(v.real(), v.imag());
    }
    std::vector<double> sv(static_cast<std::size_t>(k)), superb(static_cast<std::size_t>(k));
    const lapack_int info = LAPACKE_zgesvd(
        LAPACK_ROW_MAJOR, 'N', 'N', static_cast<lapack_int>(s.nd), static_cast<lapack_int>(s.nm),
        a.data(), static_cast<lapack_int>(s.nm), sv.data(), nullptr, 1, nullptr, 1, superb.data());
    EXPECT_EQ(info, 0);
    smax = std::max(smax, sv.front());
    smin = std::min(smin, sv.back());
  }
  return smax / smin;
}

double eq6_bound(const PrecisionConfig& p, Op op, const Shape& s, double kappa) {
  const auto e = [&](Phase phase) {
    return p[phase] == Precision::Single ? unit_roundoff(Precision::Single) : 0.0;
  };
  const double ed = unit_roundoff(Precision::Double);
  const double n = static_cast<double>(op == Op::F ? s.nm : s.nd);
  const double logn = std::log2(static_cast<double>(2 * s.nt));
  return kappa * (e(Phase::Pad) + (ed + e(Phase::Fft) + e(Phase::Ifft)) * logn +
                  e(Phase::Gemv) * n + e(Phase::Unpad));
}

struct Case {
  Shape shape;
  bool triangular;
};

class EveryPrecision : public ::testing::TestWithParam<Case> {};

TEST_P(EveryPrecision, ErrorIsWithinTheBoundOfEq6) {
  const auto [s, triangular] = GetParam();
  const auto n = static_cast<std::size_t>(s.kernel_size());
  const auto col = testing::random_vector(n, 101);
  auto row = testing::random_vector(n, 102);
  for (index_t k = 0; k < s.nd * s.nm; ++k)
    row[k * s.nt] = col[k * s.nt];
  const std::span<const double> row_used = triangular ? std::span<const double>{} : row;
  const double kappa = spectrum_condition_number(col, row_used, s);
  PlanOptions options{.fft_planning = FftPlanning::Estimate};
  Plan plan =
      triangular ? Plan::create(col, s, options) : Plan::create_general(col, row, s, options);
  for (Op op : {Op::F, Op::Fadj}) {
    // Random FP64 inputs: their mantissas carry bits below FP32's, so a rounding shows.
    const auto x =
        testing::random_vector(static_cast<std::size_t>(input_blocks(op, s) * s.nt), 103);
    std::vector<double> exact(static_cast<std::size_t>(output_blocks(op, s) * s.nt));
    plan.set_precision("DDDDD");
    plan.apply(op, x, exact);
    for (const PrecisionConfig& config : PrecisionConfig::all()) {
      plan.set_precision(config.str());
      std::vector<double> y(exact.size(), std::numeric_limits<double>::quiet_NaN());
      plan.apply(op, x, y);
      const double error = testing::relative_error(y, exact);
      const double bound = eq6_bound(config, op, s, kappa);
      SCOPED_TRACE(fmt::format("{} {} error {:.3e} bound {:.3e} kappa {:.3e}", to_string(op),
                               config.str(), error, bound, kappa));
      if (config.all_double()) {
        EXPECT_EQ(error, 0.0);  // the same plan and precision is deterministic
      } else {
        EXPECT_LE(error, kSlack * bound);
        EXPECT_GT(error, 1e-3 * unit_roundoff(Precision::Single));  // FP32 was really used
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, EveryPrecision,
                         ::testing::Values(Case{{3, 20, 16}, true}, Case{{3, 20, 16}, false},
                                           Case{{8, 5, 9}, true}, Case{{1, 7, 1}, true},
                                           Case{{12, 64, 33}, false}));

TEST(Fp64, AllDoubleConfigurationMatchesTheDenseProduct) {
  const Shape s{4, 9, 12};
  const auto col = testing::random_vector(static_cast<std::size_t>(s.kernel_size()), 7);
  Plan plan = Plan::create(col, s, {.fft_planning = FftPlanning::Estimate});
  const auto a = testing::dense_block_toeplitz(col, {}, s);
  const auto m = testing::random_vector(static_cast<std::size_t>(s.nm * s.nt), 8);
  std::vector<double> d(static_cast<std::size_t>(s.nd * s.nt));
  plan.apply(Op::F, m, d);
  EXPECT_LT(
      testing::relative_error(d, testing::dense_apply(a, s.nd * s.nt, s.nm * s.nt, false, m, 1)),
      1e-14);
}

}  // namespace
}  // namespace shiftop::btt
