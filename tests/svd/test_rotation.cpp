// The rotations of svd/rotation.hpp in long double: they annihilate h_pq, are (J-)orthogonal, take
// the special cases of (2.16)-(2.18), and their predicted new diagonal (h'_pp = h_pp - t tn h_pq)
// is the actual one, while the thesis' sign (h'_pp = h_pp + tn h_pq for t = +1) is not.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "svd/rotation.hpp"

namespace shiftop::svd::detail {
namespace {

using Long = long double;

struct Gram {
  Long pp, qq, pq;
};

// The Gram matrix of two random columns of length 4 (so Cauchy-Schwarz holds strictly).
Gram random_gram(std::mt19937_64& engine, Long scale_q) {
  std::normal_distribution<double> normal;
  Gram h{0, 0, 0};
  for (int i = 0; i < 4; ++i) {
    const Long x = normal(engine), y = scale_q * normal(engine);
    h.pp += x * x;
    h.qq += y * y;
    h.pq += x * y;
  }
  return h;
}

// H' = M^T H M for M = c [1, tn; -t tn, 1] (2.13)/(2.14).
Gram rotate(const Gram& h, const Rotation<double>& r, bool hyperbolic) {
  const Long c = r.cosine, tn = r.tangent, t = hyperbolic ? -1 : 1;
  const Long m11 = c, m12 = c * tn, m21 = -t * c * tn, m22 = c;
  return {m11 * m11 * h.pp + 2 * m11 * m21 * h.pq + m21 * m21 * h.qq,
          m12 * m12 * h.pp + 2 * m12 * m22 * h.pq + m22 * m22 * h.qq,
          m11 * m12 * h.pp + (m11 * m22 + m21 * m12) * h.pq + m21 * m22 * h.qq};
}

Rotation<double> rotation_of(const Gram& h, bool hyperbolic) {
  const double cot2 =
      static_cast<double>(hyperbolic ? -(h.qq + h.pp) / (2 * h.pq) : (h.qq - h.pp) / (2 * h.pq));
  return rotation_from_cot2(cot2, hyperbolic);
}

constexpr double kEps = std::numeric_limits<double>::epsilon() / 2;

TEST(Rotation, AnnihilatesAndPredictsTheDiagonal) {
  std::mt19937_64 engine(7);
  for (const bool hyperbolic : {false, true}) {
    for (int trial = 0; trial < 2000; ++trial) {
      // Column norms' ratios from 1e-3 to 1e3, so cot 2phi spans all the branches.
      const Long scale = std::pow(10.0L, (trial % 7) - 3);
      const Gram h = random_gram(engine, scale);
      const Rotation<double> r = rotation_of(h, hyperbolic);
      const Gram rotated = rotate(h, r, hyperbolic);
      const Long size = std::sqrt(h.pp * h.qq);
      // At least 4x the worst measured (the same bits in the native and the portable build: the
      // header is compiled into the test): |h'_pq| <= 2.2 u c^2 sqrt(h_pp h_qq) (trigonometric),
      // 2.6 (hyperbolic); the predicted diagonal 5.0 u c^2 (h_pp + h_qq).
      EXPECT_LE(std::abs(rotated.pq), 12 * kEps * size * r.cosine * r.cosine)
          << "trial " << trial << " hyperbolic " << hyperbolic;
      const PairValues<double> predicted =
          predicted_diagonal(r, static_cast<double>(h.pp), static_cast<double>(h.qq),
                             static_cast<double>(h.pq), hyperbolic);
      const Long bound = 24 * kEps * (h.pp + h.qq) * r.cosine * r.cosine;
      EXPECT_LE(std::abs(predicted.p - rotated.pp), bound) << "trial " << trial;
      EXPECT_LE(std::abs(predicted.q - rotated.qq), bound) << "trial " << trial;
      // The same prediction as factors of the squared norms, from the ratio and the cosine.
      const double ratio = static_cast<double>(std::sqrt(h.qq / h.pp));
      const double cosine = static_cast<double>(h.pq / size);
      if (cosine > 0) {
        const Rotation<double> scaled = rotation_from_norms(ratio, cosine, hyperbolic);
        EXPECT_NEAR(scaled.tangent, r.tangent, 64 * kEps * std::abs(r.tangent));
        const PairValues<double> factors =
            predicted_norm_factors(scaled, ratio, cosine, hyperbolic);
        EXPECT_LE(std::abs(factors.p * h.pp - rotated.pp), 64 * bound);
        EXPECT_LE(std::abs(factors.q * h.qq - rotated.qq), 64 * bound);
      }
    }
  }
}

TEST(Rotation, ThesisSignOfTheNewDiagonalIsWrong) {
  // h'_pp = fma(tan, h_pq, h_pp) of section 2.3.3, step 5, for a trigonometric rotation (2.13):
  // off by 2 tn h_pq, far above rounding on a pair with a sizeable angle.
  const Gram h{1.1, 1, 0.9};
  const Rotation<double> r = rotation_of(h, false);
  const Gram rotated = rotate(h, r, false);
  const double thesis_pp = std::fma(r.tangent, 0.9, 1.1);
  const double thesis_qq = std::fma(-r.tangent, 0.9, 1.0);
  EXPECT_GT(std::abs(thesis_pp - rotated.pp), 0.5L);
  EXPECT_GT(std::abs(thesis_qq - rotated.qq), 0.5L);
  const PairValues<double> ours = predicted_diagonal(r, 1.1, 1.0, 0.9, false);
  EXPECT_LE(std::abs(ours.p - rotated.pp), 8 * kEps * 2);
  EXPECT_LE(std::abs(ours.q - rotated.qq), 8 * kEps * 2);
  // The sort of step 5 decides on these values: here the thesis' prediction would swap a pair
  // that needs no swap (h'_pp > h'_qq in truth).
  EXPECT_GT(rotated.pp, rotated.qq);
  EXPECT_LT(thesis_pp, thesis_qq);
}

TEST(Rotation, IsOrthogonalOrJOrthogonal) {
  // cos^2 + sin^2 - 1 and cosh^2 - sinh^2 - 1 in long double over cot 2phi in 2^-30 .. 2^30
  // (section 2.3.4's Table 2.1 experiment, smaller; the thesis' exponents -53 .. 53 add many
  // cs = 1 cases, which lowers its averages 8.3e-17 / 6.6e-17). Measured here: average 1.0e-16
  // (trigonometric) and 1.9e-16 (hyperbolic), worst 4.3e-16 and 4.7e-16.
  std::mt19937_64 engine(3);
  std::uniform_real_distribution<double> mantissa(1, 2);
  for (const bool hyperbolic : {false, true}) {
    Long sum = 0, worst = 0;
    int count = 0;
    for (int e = -30; e <= 30; ++e)
      for (int k = 0; k < 200; ++k) {
        const double cot2 = std::ldexp(mantissa(engine), e) * (k % 2 ? -1 : 1);
        const Rotation<double> r = rotation_from_cot2(cot2, hyperbolic);
        const Long c = r.cosine, s = c * Long(r.tangent);
        const Long d = hyperbolic ? (c - s) * (c + s) - 1 : c * c + s * s - 1;
        sum += std::abs(d);
        worst = std::max(worst, std::abs(d));
        ++count;
        EXPECT_EQ(std::signbit(r.tangent), std::signbit(cot2));
      }
    EXPECT_LE(sum / count, 3 * kEps) << "hyperbolic " << hyperbolic;
    EXPECT_LE(worst, 6 * kEps) << "hyperbolic " << hyperbolic;
  }
}

TEST(Rotation, SpecialCases) {
  const double sqrt_eps = std::sqrt(kEps), large = std::sqrt(2 / kEps);
  // |cot 2phi| < sqrt(eps): |cot phi| = |cot 2phi| + 1, so tan phi = 1 / (1 + cot 2phi).
  const double tiny = sqrt_eps / 2;
  EXPECT_EQ(rotation_from_cot2(tiny, false).tangent, 1 / (tiny + 1));
  EXPECT_EQ(rotation_from_cot2(-tiny, false).tangent, -1 / (tiny + 1));
  EXPECT_EQ(rotation_from_cot2(0.0, false).tangent, 1.0);  // 45 degrees
  EXPECT_NEAR(rotation_from_cot2(0.0, false).cosine, std::sqrt(0.5), kEps);
  // |ct 2phi| >= sqrt(2/eps): |ct phi| = 2 |ct 2phi|, cs = 1 (not proper), no overflow.
  for (const bool hyperbolic : {false, true}) {
    for (const double cot2 : {large, 1e300, std::numeric_limits<double>::max()}) {
      const Rotation<double> r = rotation_from_cot2(-cot2, hyperbolic);
      EXPECT_EQ(r.cosine, 1.0);
      EXPECT_EQ(r.tangent, -1 / (2 * cot2));
    }
    // Below (by 16, where cs_2 no longer rounds to 1): proper.
    EXPECT_NE(rotation_from_cot2(large / 16, hyperbolic).cosine, 1.0);
  }
  // Hyperbolic |coth 2phi| == 1 (or below by rounding) is taken as 5/4: tanh phi = 1/2.
  for (const double coth2 : {1.0, -1.0, 1 - kEps, -(1 - 2 * kEps)}) {
    const Rotation<double> r = rotation_from_cot2(coth2, true);
    EXPECT_EQ(r.tangent, std::copysign(0.5, coth2));
    EXPECT_NEAR(r.cosine, 2 / std::sqrt(3.0), 2 * kEps);
  }
  // Just above 1: the formula, |tanh phi| < 1.
  const Rotation<double> near_one = rotation_from_cot2(1 + 4 * kEps, true);
  EXPECT_LT(near_one.tangent, 1.0);
  EXPECT_GT(near_one.tangent, 0.99);
}

}  // namespace
}  // namespace shiftop::svd::detail
