// The fused real FFT kernels alone (backend/cuda/real_fft.cuh, ctest label `gpu`): the padded
// forward transform and the unpadded inverse against a long double DFT on the host, for every
// supported length 16..8192 (one test case each), even and odd nt (nt = 1 up to L/2), all four
// precision pairs (T1, T2) / (T4, T5), and for the inverse both input layouts (block-major;
// conjugated frequency-major). Outputs, and a guard after them, are poisoned with NaN before every
// launch, so unwritten elements and writes past the end fail.
//
// The kernels are persistent: each thread block loops over series, copying the next one's input
// while it transforms the current one. So that every block loops several times (2^21 / L series:
// at least twice the series an H100 or H200 holds at once) and the host reference stays cheap,
// series s is 2^(s mod 5 - 2) times one of 7 random patterns (s mod 7): scaling by a power of two
// is exact in every precision, so each series' reference is its pattern's, scaled, and a mix-up
// of two series shows unless their distance is a multiple of 35.
//
// Tolerances are relative to scale = the sum of the moduli of the terms of each output, which
// bounds every partial sum. The reference uses the cast inputs exactly. An FFT of L/2 points in
// precision u has relative error about u log2(L) (at most 13 u here, with the split step): FP64
// 2.9e-15, tolerance 1e-13; an FP32 transform 1.6e-6, tolerance 1e-5; an FP64 inverse whose
// output is rounded to FP32 adds 6e-8, tolerance 1e-7.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <numbers>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cuda/real_fft.cuh"
#include "scaled_patterns.cuh"
#include "shiftop/core/error_type.hpp"
#include "shiftop/gpu/devices.hpp"

namespace shiftop::cuda {
namespace {

using namespace test;

// exp(sign 2 pi i m / L) for m < L.
std::vector<Exact> roots(index_t length, int sign) {
  std::vector<Exact> r(length);
  for (index_t m = 0; m < length; ++m)
    r[m] = std::polar(1.0L, sign * 2 * std::numbers::pi_v<long double> * m / length);
  return r;
}

// Values per series for length L: L/2, odd, about a quarter, and 1 (the last only where cheap).
std::vector<index_t> value_counts(index_t length) {
  const index_t half = length / 2;
  if (length >= 4096) return {half, half - 1};
  return {half, half - 1, half / 2 + 1, 1};
}

index_t series_for(index_t length) {
  return (index_t{1} << 21) / length + 3;  // + 3: a partial last group of series
}

struct Check {
  std::size_t unwritten = 0, past_end = 0;
  double worst = 0;
  void expect(double tolerance) const {
    EXPECT_EQ(unwritten, 0u) << "values left NaN (unwritten)";
    EXPECT_EQ(past_end, 0u) << "guard elements overwritten";
    EXPECT_LE(worst, tolerance);
  }
};

template <typename T1, typename T2>
void check_forward(index_t length) {
  SCOPED_TRACE(std::string("T1 = FP") + (sizeof(T1) == 4 ? "32" : "64") + ", T2 = FP" +
               (sizeof(T2) == 4 ? "32" : "64"));
  using C = complex_t<T2>;
  const double tolerance = std::is_same_v<T2, double> ? 1e-13 : 1e-5;
  std::mt19937_64 rng(7 + length);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  {
    const index_t nw = length / 2 + 1, series = series_for(length);
    const std::vector<Exact> w = roots(length, -1);
    DeviceArray<C> twiddles(length);
    make_twiddles<T2>(twiddles.get(), length, nullptr);
    for (const index_t nt : value_counts(length)) {
      SCOPED_TRACE("L=" + std::to_string(length) + " series=" + std::to_string(series) +
                   " nt=" + std::to_string(nt));
      std::vector<double> pattern(kPatterns * nt);
      for (double& v : pattern)
        v = uniform(rng);
      // Each pattern's spectrum and the sums of moduli, from the values the kernel casts.
      std::vector<Exact> want(kPatterns * nw);
      std::vector<long double> scale(kPatterns);
      for (index_t p = 0; p < kPatterns; ++p)
        for (index_t t = 0; t < nt; ++t) {
          const auto v =
              static_cast<long double>(static_cast<T2>(static_cast<T1>(pattern[p * nt + t])));
          scale[p] += std::abs(v);
          for (index_t k = 0; k < nw; ++k)
            want[p * nw + k] += v * w[(k * t) % length];
        }
      std::vector<double> x(series * nt);
      for (index_t s = 0; s < series; ++s)
        for (index_t t = 0; t < nt; ++t)
          x[s * nt + t] = scale_of(s) * pattern[(s % kPatterns) * nt + t];
      DeviceArray<double> x_d(x.size());
      DeviceArray<C> out_d(series * nw + kGuard);
      ASSERT_EQ(cudaSuccess, cudaMemcpy(x_d.get(), x.data(), x.size() * 8, cudaMemcpyHostToDevice));
      ASSERT_EQ(cudaSuccess, cudaMemset(out_d.get(), 0xFF, (series * nw + kGuard) * sizeof(C)));
      padded_real_fft<T1, T2>(x_d.get(), out_d.get(), series, nt, length, twiddles.get(), nullptr);
      std::vector<C> out(series * nw + kGuard);
      ASSERT_EQ(cudaSuccess, cudaMemcpy(out.data(), out_d.get(), out.size() * sizeof(C),
                                        cudaMemcpyDeviceToHost));
      Check c;
      for (index_t s = 0; s < series; ++s) {
        const index_t p = s % kPatterns;
        const long double factor = scale_of(s);
        for (index_t k = 0; k < nw; ++k) {
          const C got = out[s * nw + k];
          if (std::isnan(got.x) || std::isnan(got.y)) {
            ++c.unwritten;
            continue;
          }
          const long double error =
              std::abs(Exact(got.x, got.y) - factor * want[p * nw + k]) / (factor * scale[p]);
          c.worst = std::max(c.worst, static_cast<double>(error));
        }
      }
      C poison;
      std::memset(&poison, 0xFF, sizeof poison);
      for (index_t k = series * nw; k < series * nw + kGuard; ++k)
        c.past_end += std::memcmp(&out[k], &poison, sizeof poison) != 0;
      c.expect(tolerance);
    }
  }
}

template <typename T4, typename T5>
void check_inverse(index_t length) {
  SCOPED_TRACE(std::string("T4 = FP") + (sizeof(T4) == 4 ? "32" : "64") + ", T5 = FP" +
               (sizeof(T5) == 4 ? "32" : "64"));
  using C = complex_t<T4>;
  const double tolerance =
      std::is_same_v<T4, float> ? 1e-5 : (std::is_same_v<T5, float> ? 1e-7 : 1e-13);
  std::mt19937_64 rng(11 + length);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  {
    const index_t nw = length / 2 + 1, half = length / 2, series = series_for(length);
    const std::vector<Exact> w = roots(length, +1);
    DeviceArray<C> twiddles(length);
    make_twiddles<T4>(twiddles.get(), length, nullptr);
    for (const index_t nt : value_counts(length)) {
      // Imaginary parts everywhere, also at k = 0 and k = L/2, where they must be ignored.
      std::vector<C> pattern(kPatterns * nw);
      for (C& z : pattern)
        z = {static_cast<T4>(uniform(rng)), static_cast<T4>(uniform(rng))};
      std::vector<long double> want(kPatterns * nt), scale(kPatterns);
      for (index_t p = 0; p < kPatterns; ++p) {
        const C* X = pattern.data() + p * nw;
        scale[p] = std::abs(X[0].x) + std::abs(X[half].x);
        for (index_t k = 1; k < half; ++k)
          scale[p] += 2 * std::abs(Exact(X[k].x, X[k].y));
        for (index_t t = 0; t < nt; ++t) {
          long double y = X[0].x + (t % 2 == 0 ? 1 : -1) * static_cast<long double>(X[half].x);
          for (index_t k = 1; k < half; ++k)
            y += 2 * (Exact(X[k].x, X[k].y) * w[(k * t) % length]).real();
          want[p * nt + t] = y;
        }
      }
      for (const bool frequency_major : {false, true}) {
        SCOPED_TRACE("L=" + std::to_string(length) + " series=" + std::to_string(series) +
                     " nt=" + std::to_string(nt) + (frequency_major ? " frequency-major" : ""));
        const SpectraLayout layout{.frequency_stride = frequency_major ? series : 0,
                                   .conjugate = frequency_major};
        std::vector<C> stored(series * nw);  // as the kernel reads them
        for (index_t s = 0; s < series; ++s)
          for (index_t k = 0; k < nw; ++k) {
            const C z = pattern[(s % kPatterns) * nw + k];
            const auto f = static_cast<T4>(scale_of(s));
            stored[frequency_major ? k * series + s : s * nw + k] = {
                f * z.x, frequency_major ? -f * z.y : f * z.y};
          }
        DeviceArray<C> in_d(stored.size());
        DeviceArray<double> y_d(series * nt + kGuard);
        ASSERT_EQ(cudaSuccess, cudaMemcpy(in_d.get(), stored.data(), stored.size() * sizeof(C),
                                          cudaMemcpyHostToDevice));
        ASSERT_EQ(cudaSuccess, cudaMemset(y_d.get(), 0xFF, (series * nt + kGuard) * 8));
        unpadded_inverse_real_fft<T4, T5>(in_d.get(), y_d.get(), series, nt, length, twiddles.get(),
                                          nullptr, layout);
        std::vector<double> y(series * nt + kGuard);
        ASSERT_EQ(cudaSuccess,
                  cudaMemcpy(y.data(), y_d.get(), y.size() * 8, cudaMemcpyDeviceToHost));
        Check c;
        for (index_t s = 0; s < series; ++s) {
          const index_t p = s % kPatterns;
          const long double factor = scale_of(s);
          for (index_t t = 0; t < nt; ++t) {
            const double got = y[s * nt + t];
            if (std::isnan(got)) {
              ++c.unwritten;
              continue;
            }
            const long double error =
                std::abs(got - factor * want[p * nt + t]) / (factor * scale[p]);
            c.worst = std::max(c.worst, static_cast<double>(error));
          }
        }
        for (index_t k = series * nt; k < series * nt + kGuard; ++k)
          c.past_end += !std::isnan(y[k]);
        c.expect(tolerance);
      }
    }
  }
}

// One case per length (the sanitizers in scripts/gpu-check pick some), every precision pair.
class RealFft : public ::testing::TestWithParam<index_t> {};

TEST_P(RealFft, PaddedForwardMatchesTheDft) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  check_forward<double, double>(GetParam());
  check_forward<float, float>(GetParam());
  check_forward<float, double>(GetParam());
  check_forward<double, float>(GetParam());
}

TEST_P(RealFft, UnpaddedInverseMatchesTheDft) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  check_inverse<double, double>(GetParam());
  check_inverse<float, float>(GetParam());
  check_inverse<float, double>(GetParam());
  check_inverse<double, float>(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Lengths, RealFft,
                         ::testing::Values(16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192),
                         [](const ::testing::TestParamInfo<index_t>& info) {
                           return "L" + std::to_string(info.param);
                         });

TEST(RealFftLimits, SupportedLengthsAndClearErrors) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";  // support depends on the device
  for (index_t length : {16, 64, 2048, 8192})
    EXPECT_TRUE(real_fft_supported(length)) << length;
  for (index_t length : {0, 8, 12, 17, 48, 2000, 16384})
    EXPECT_FALSE(real_fft_supported(length)) << length;
  const auto expect_error = [](auto call, const std::string& fragment) {
    try {
      call();
      ADD_FAILURE() << "accepted; expected an error with '" << fragment << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  // Refused before anything is launched (the pointers are null).
  for (index_t length : {2000, 17})
    expect_error(
        [&] { padded_real_fft<double, double>(nullptr, nullptr, 1, 1, length, nullptr, nullptr); },
        "length " + std::to_string(length));
  expect_error(
      [] { padded_real_fft<double, double>(nullptr, nullptr, 1, 9, 16, nullptr, nullptr); },
      "9 values per series do not fit length 16");
  expect_error(
      [] { unpadded_inverse_real_fft<float, float>(nullptr, nullptr, 1, 0, 64, nullptr, nullptr); },
      "0 values per series");
}

}  // namespace
}  // namespace shiftop::cuda
