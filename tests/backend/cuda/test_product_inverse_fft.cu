// The F* product written straight into the inverse real FFT (backend/cuda/product_inverse_fft.cuh,
// ctest label `gpu`) against a long double reference on the host: Y[j][k] = sum_i conj(F^[k][i][j])
// x[i][k], then the Hermitian C2R of Y[j], keeping nt values. Precision triples (F^, x, spectra):
// all FP64 (FP64 and FP32 output), all FP32, FP32 F^ with FP64 vectors, FP64 F^ with FP32 ones
// (two and four columns per block); lengths 16 to 8192; even and odd nt; one and several
// observation blocks; Nm odd (a partial last range of columns) and Nm = 1.
//
// The kernel is persistent: each cluster of blocks loops over ranges of columns. So that the
// clusters loop (at L = 16, 1024 and 8192 at least twice) and the host reference stays cheap,
// column j of F^ is 2^(j mod 5 - 2) times one of 7 random patterns (j mod 7): scaling by a power of
// two is exact in every precision, so column j's reference is its pattern's, scaled, and a mix-up
// of two columns shows unless their distance is a multiple of 35. The padding of F^'s rows (ld = Nm
// rounded up to even) is zero, as the engine's.
//
// y is poisoned with NaN, and a guard after it, before each launch: an unwritten output or a write
// past the end fails. Tolerances are relative to scale = 2 sum_k sum_i |F^[k][i][j]| |x[i][k]|,
// which bounds every output of column j; the reference uses the cast inputs exactly. Tolerances
// are test_real_fft's (an L/2-point FFT in precision u errs by about u log2 L): 1e-13 in FP64,
// 1e-5 with FP32 spectra, 1e-7 for FP64 spectra rounded to an FP32 output.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/product_inverse_fft.cuh"
#include "backend/cuda/real_fft.cuh"
#include "scaled_patterns.cuh"
#include "shiftop/core/error_type.hpp"
#include "shiftop/gpu/devices.hpp"

namespace shiftop::cuda {
namespace {

using namespace test;

struct Case {
  index_t length, nt, nd, nm;
};

template <typename T>
Exact exact(complex_t<T> z) {
  return {static_cast<long double>(z.x), static_cast<long double>(z.y)};
}

/// One launch of precision (TA, TX, TY) and output rounding against the reference.
template <typename TA, typename TX, typename TY>
void check(const Case& c, bool single_output) {
  using CA = complex_t<TA>;
  using CX = complex_t<TX>;
  const index_t n = c.length / 2, nw = n + 1, ld = c.nm + c.nm % 2;
  std::mt19937_64 rng(static_cast<unsigned>(c.length * 131 + c.nt * 7 + c.nd));
  std::uniform_real_distribution<double> uniform(-1, 1);
  // The patterns pattern[p][k][i] and x[i][k], in their stored precisions.
  std::vector<CA> pattern(static_cast<std::size_t>(kPatterns * nw * c.nd));
  for (CA& v : pattern)
    v = {static_cast<TA>(uniform(rng)), static_cast<TA>(uniform(rng))};
  std::vector<CX> x(static_cast<std::size_t>(c.nd * nw));
  for (CX& v : x)
    v = {static_cast<TX>(uniform(rng)), static_cast<TX>(uniform(rng))};
  std::vector<CA> a(static_cast<std::size_t>(nw * c.nd * ld), CA{0, 0});
  for (index_t k = 0; k < nw; ++k)
    for (index_t i = 0; i < c.nd; ++i)
      for (index_t j = 0; j < c.nm; ++j) {
        const CA p = pattern[static_cast<std::size_t>(((j % kPatterns) * nw + k) * c.nd + i)];
        const auto s = static_cast<TA>(scale_of(j));
        a[static_cast<std::size_t>((k * c.nd + i) * ld + j)] = {p.x * s, p.y * s};
      }

  // Reference per pattern: the product in long double, then the Hermitian C2R (imaginary parts of
  // Y[0] and Y[N] ignored), and the bound of every output.
  std::vector<Exact> root(static_cast<std::size_t>(c.length));
  for (index_t m = 0; m < c.length; ++m)
    root[static_cast<std::size_t>(m)] =
        std::polar(1.0L, 2 * std::numbers::pi_v<long double> * m / c.length);
  std::vector<long double> want(static_cast<std::size_t>(kPatterns * c.nt)), scale(kPatterns);
  for (index_t p = 0; p < kPatterns; ++p) {
    std::vector<Exact> y_hat(static_cast<std::size_t>(nw));
    long double bound = 0;
    for (index_t k = 0; k < nw; ++k)
      for (index_t i = 0; i < c.nd; ++i) {
        const Exact f = exact<TA>(pattern[static_cast<std::size_t>((p * nw + k) * c.nd + i)]);
        const Exact xi = exact<TX>(x[static_cast<std::size_t>(i * nw + k)]);
        y_hat[static_cast<std::size_t>(k)] += std::conj(f) * xi;
        bound += std::abs(f) * std::abs(xi);
      }
    scale[static_cast<std::size_t>(p)] = 2 * bound;
    for (index_t t = 0; t < c.nt; ++t) {
      long double sum =
          y_hat[0].real() + (t % 2 == 0 ? 1 : -1) * y_hat[static_cast<std::size_t>(n)].real();
      for (index_t k = 1; k < n; ++k)
        sum += 2 * (y_hat[static_cast<std::size_t>(k)] *
                    root[static_cast<std::size_t>((k * t) % c.length)])
                       .real();
      want[static_cast<std::size_t>(p * c.nt + t)] = sum;
    }
  }

  DeviceArray<CA> a_d(a.size());
  DeviceArray<CX> x_d(x.size());
  DeviceArray<complex_t<TY>> twiddles(static_cast<std::size_t>(c.length));
  const std::size_t outputs = static_cast<std::size_t>(c.nm * c.nt);
  DeviceArray<double> y_d(outputs + kGuard);
  ASSERT_EQ(cudaSuccess,
            cudaMemcpy(a_d.get(), a.data(), a.size() * sizeof(CA), cudaMemcpyHostToDevice));
  ASSERT_EQ(cudaSuccess,
            cudaMemcpy(x_d.get(), x.data(), x.size() * sizeof(CX), cudaMemcpyHostToDevice));
  std::vector<double> y(outputs + kGuard, std::nan(""));
  ASSERT_EQ(cudaSuccess, cudaMemcpy(y_d.get(), y.data(), y.size() * 8, cudaMemcpyHostToDevice));
  make_twiddles<TY>(twiddles.get(), c.length, nullptr);
  adjoint_product_inverse_fft<TA, TX, TY>(a_d.get(), {.nd = c.nd, .nm = c.nm, .ld = ld, .nw = nw},
                                          x_d.get(), y_d.get(), single_output, c.nt, c.length,
                                          twiddles.get(), nullptr);
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
  ASSERT_EQ(cudaSuccess, cudaMemcpy(y.data(), y_d.get(), y.size() * 8, cudaMemcpyDeviceToHost));

  const double tolerance = sizeof(TY) == 4 ? 1e-5 : single_output ? 1e-7 : 1e-13;
  double worst = 0;
  for (index_t j = 0; j < c.nm; ++j) {
    const index_t p = j % kPatterns;
    const long double s = scale_of(j);
    for (index_t t = 0; t < c.nt; ++t) {
      const double got = y[static_cast<std::size_t>(j * c.nt + t)];
      const auto error =
          static_cast<double>(std::abs(got - s * want[static_cast<std::size_t>(p * c.nt + t)]) /
                              (s * scale[static_cast<std::size_t>(p)]));
      ASSERT_TRUE(std::isfinite(got)) << "column " << j << ", t " << t << ": not written";
      ASSERT_LE(error, tolerance) << "column " << j << ", t " << t;
      worst = std::max(worst, error);
    }
  }
  for (index_t g = 0; g < kGuard; ++g)
    ASSERT_TRUE(std::isnan(y[outputs + static_cast<std::size_t>(g)])) << "written past the end";
  std::printf("L %lld nt %lld Nd %lld Nm %lld: worst error/scale %.3g (tolerance %.0e)\n",
              static_cast<long long>(c.length), static_cast<long long>(c.nt),
              static_cast<long long>(c.nd), static_cast<long long>(c.nm), worst, tolerance);
}

class ProductInverseFft : public ::testing::TestWithParam<Case> {};

TEST_P(ProductInverseFft, MatchesTheProductAndTheInverseDft) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const Case c = GetParam();
  if (!real_fft_supported(c.length)) GTEST_SKIP() << "length not supported on this device";
  check<double, double, double>(c, false);
  check<double, double, double>(c, true);
  check<float, float, float>(c, true);  // four columns per group (FP32 F^ and spectra)
  check<float, double, double>(c, false);
  check<double, float, float>(c, false);
}

// Sizes: more columns than the resident clusters of 8 blocks cover at once on an H100 or H200
// (132 multiprocessors), so that every cluster loops: L = 16, 4096-8192 columns per cluster, 33
// clusters; L = 1024, 64-128 columns, 49 clusters; L = 8192, 16-32 columns, 16 clusters. Nm odd
// and Nm = 1, Nd = 1, odd and even nt.
INSTANTIATE_TEST_SUITE_P(Sizes, ProductInverseFft,
                         ::testing::Values(Case{16, 8, 2, (index_t{1} << 19) + 3},
                                           Case{16, 5, 1, 1}, Case{32, 16, 5, 1},
                                           Case{256, 101, 3, 2047}, Case{1024, 512, 3, 8001},
                                           Case{1024, 77, 1, 8003}, Case{4096, 2000, 7, 801},
                                           Case{8192, 4096, 2, 601}, Case{8192, 4095, 2, 3}),
                         [](const auto& info) {
                           const Case& c = info.param;
                           return "L" + std::to_string(c.length) + "_nt" + std::to_string(c.nt) +
                                  "_nd" + std::to_string(c.nd) + "_nm" + std::to_string(c.nm);
                         });

TEST(ProductInverseFftLimits, RefusesAFrequencyCountThatIsNotTheLengths) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  // Refused before anything is launched (the pointers are null).
  const auto launch = [](index_t nw, index_t length) {
    adjoint_product_inverse_fft<double, double, double>(
        nullptr, {.nd = 1, .nm = 1, .ld = 2, .nw = nw}, nullptr, nullptr, false, 8, length, nullptr,
        nullptr);
  };
  EXPECT_THROW(launch(10, 32), Error);  // 32 has 17 frequencies
  EXPECT_THROW(launch(13, 24), Error);  // 24 is not a power of two
}

}  // namespace
}  // namespace shiftop::cuda
