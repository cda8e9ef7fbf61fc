// The fused real FFT kernels alone (backend/cuda/real_fft.cuh, ctest label `gpu`): the padded
// forward transform and the unpadded inverse against a long double DFT on the host, for every
// supported length 16..8192, even and odd nt (nt = 1 up to L/2), a partial last thread block, all
// four precision pairs (T1, T2) / (T4, T5), and for the inverse both input layouts (block-major;
// conjugated frequency-major). Outputs, and a guard after them, are poisoned with
// NaN before every launch, so unwritten elements and writes past the end fail.
//
// Tolerances are relative to scale = the sum of the moduli of the terms of each output, which
// bounds every partial sum. The reference uses the cast inputs exactly. An FFT of L/2 points in
// precision u has relative error about u log2(L) (at most 13 u here, with the split step): FP64
// 2.9e-15, tolerance 1e-13; any FP32 step (transform or output cast) 1.6e-6, tolerance 1e-5.
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
#include "core/error_type.hpp"

namespace shiftop::cuda {
namespace {

bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

constexpr index_t kGuard = 64;  // poisoned elements after each output that must stay untouched
using Exact = std::complex<long double>;

template <typename T>
struct DeviceArray {
  T* p = nullptr;
  explicit DeviceArray(std::size_t n) { EXPECT_EQ(cudaSuccess, cudaMalloc(&p, n * sizeof(T))); }
  ~DeviceArray() { cudaFree(p); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
};

// exp(sign 2 pi i m / L) for m < L.
std::vector<Exact> roots(index_t length, int sign) {
  std::vector<Exact> r(length);
  for (index_t m = 0; m < length; ++m)
    r[m] = std::polar(1.0L, sign * 2 * std::numbers::pi_v<long double> * m / length);
  return r;
}

// (series, nt) cases for length L: one or several blocks with a partial last one.
std::vector<std::pair<index_t, index_t>> cases(index_t length) {
  const index_t half = length / 2, series = length <= 128 ? 300 : 3;
  return {{series, half}, {series, half - 1}, {series, half / 2 + 1}, {2, 1}};
}

struct Check {
  std::size_t unwritten = 0, past_end = 0;
  double worst = 0;
};

template <typename P>
class RealFft : public ::testing::Test {};
template <typename A, typename B>
struct Pair {
  using First = A;   // T1 (forward) / T4 (inverse)
  using Second = B;  // T2 (forward) / T5 (inverse)
};
struct PairName {
  template <typename P>
  static std::string GetName(int) {
    return "T" + std::to_string(8 * sizeof(typename P::First)) + "_T" +
           std::to_string(8 * sizeof(typename P::Second));
  }
};
using AllPairs = ::testing::Types<Pair<double, double>, Pair<float, float>, Pair<float, double>,
                                  Pair<double, float>>;
TYPED_TEST_SUITE(RealFft, AllPairs, PairName);

TYPED_TEST(RealFft, PaddedForwardMatchesTheDft) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  using T1 = typename TypeParam::First;
  using T2 = typename TypeParam::Second;
  using C = complex_t<T2>;
  const double tolerance = std::is_same_v<T1, double> && std::is_same_v<T2, double> ? 1e-13 : 1e-5;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (index_t length = 16; length <= 8192; length *= 2) {
    const index_t nw = length / 2 + 1;
    const std::vector<Exact> w = roots(length, -1);
    DeviceArray<C> twiddles(length);
    make_twiddles<T2>(twiddles.p, length, nullptr);
    for (const auto& [series, nt] : cases(length)) {
      SCOPED_TRACE("L=" + std::to_string(length) + " series=" + std::to_string(series) +
                   " nt=" + std::to_string(nt));
      std::vector<double> x(series * nt);
      for (double& v : x)
        v = uniform(rng);
      DeviceArray<double> x_d(x.size());
      DeviceArray<C> out_d(series * nw + kGuard);
      ASSERT_EQ(cudaSuccess, cudaMemcpy(x_d.p, x.data(), x.size() * 8, cudaMemcpyHostToDevice));
      ASSERT_EQ(cudaSuccess, cudaMemset(out_d.p, 0xFF, (series * nw + kGuard) * sizeof(C)));
      padded_real_fft<T1, T2>(x_d.p, out_d.p, series, nt, length, twiddles.p, nullptr);
      std::vector<C> out(series * nw + kGuard);
      ASSERT_EQ(cudaSuccess,
                cudaMemcpy(out.data(), out_d.p, out.size() * sizeof(C), cudaMemcpyDeviceToHost));
      Check c;
      for (index_t s = 0; s < series; ++s)
        for (index_t k = 0; k < nw; ++k) {
          Exact want = 0;
          long double scale = 0;
          for (index_t t = 0; t < nt; ++t) {
            const auto v =
                static_cast<long double>(static_cast<T2>(static_cast<T1>(x[s * nt + t])));
            want += v * w[(k * t) % length];
            scale += std::abs(v);
          }
          const C got = out[s * nw + k];
          if (std::isnan(got.x) || std::isnan(got.y)) {
            ++c.unwritten;
            continue;
          }
          const auto error = std::abs(Exact(got.x, got.y) - want) / std::max(scale, 1e-30L);
          c.worst = std::max(c.worst, static_cast<double>(error));
        }
      C poison;
      std::memset(&poison, 0xFF, sizeof poison);
      for (index_t k = series * nw; k < series * nw + kGuard; ++k)
        c.past_end += std::memcmp(&out[k], &poison, sizeof poison) != 0;
      EXPECT_EQ(c.unwritten, 0u) << "spectrum values left NaN (unwritten)";
      EXPECT_EQ(c.past_end, 0u) << "guard elements overwritten";
      EXPECT_LE(c.worst, tolerance);
    }
  }
}

TYPED_TEST(RealFft, UnpaddedInverseMatchesTheDft) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  using T4 = typename TypeParam::First;
  using T5 = typename TypeParam::Second;
  using C = complex_t<T4>;
  const double tolerance = std::is_same_v<T4, double> && std::is_same_v<T5, double> ? 1e-13 : 1e-5;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (index_t length = 16; length <= 8192; length *= 2) {
    const index_t nw = length / 2 + 1, half = length / 2;
    const std::vector<Exact> w = roots(length, +1);
    DeviceArray<C> twiddles(length);
    make_twiddles<T4>(twiddles.p, length, nullptr);
    for (const auto& [series, nt] : cases(length))
      for (const bool frequency_major : {false, true}) {
        SCOPED_TRACE("L=" + std::to_string(length) + " series=" + std::to_string(series) +
                     " nt=" + std::to_string(nt) + (frequency_major ? " frequency-major" : ""));
        const SpectraLayout layout{.frequency_stride = frequency_major ? series : 0,
                                   .conjugate = frequency_major};
        // Imaginary parts everywhere, also at k = 0 and k = L/2, where they must be ignored.
        std::vector<C> spectra(series * nw);
        for (C& z : spectra)
          z = {static_cast<T4>(uniform(rng)), static_cast<T4>(uniform(rng))};
        std::vector<C> stored = spectra;  // as the kernel reads them
        if (frequency_major)
          for (index_t s = 0; s < series; ++s)
            for (index_t k = 0; k < nw; ++k)
              stored[k * series + s] = {spectra[s * nw + k].x, -spectra[s * nw + k].y};
        DeviceArray<C> in_d(stored.size());
        DeviceArray<double> y_d(series * nt + kGuard);
        ASSERT_EQ(cudaSuccess, cudaMemcpy(in_d.p, stored.data(), stored.size() * sizeof(C),
                                          cudaMemcpyHostToDevice));
        ASSERT_EQ(cudaSuccess, cudaMemset(y_d.p, 0xFF, (series * nt + kGuard) * 8));
        unpadded_inverse_real_fft<T4, T5>(in_d.p, y_d.p, series, nt, length, twiddles.p, nullptr,
                                          layout);
        std::vector<double> y(series * nt + kGuard);
        ASSERT_EQ(cudaSuccess, cudaMemcpy(y.data(), y_d.p, y.size() * 8, cudaMemcpyDeviceToHost));
        Check c;
        for (index_t s = 0; s < series; ++s)
          for (index_t t = 0; t < nt; ++t) {
            const C* X = spectra.data() + s * nw;
            long double want = X[0].x + (t % 2 == 0 ? 1 : -1) * static_cast<long double>(X[half].x);
            long double scale = std::abs(X[0].x) + std::abs(X[half].x);
            for (index_t k = 1; k < half; ++k) {
              want += 2 * (Exact(X[k].x, X[k].y) * w[(k * t) % length]).real();
              scale += 2 * std::abs(Exact(X[k].x, X[k].y));
            }
            const double got = y[s * nt + t];
            if (std::isnan(got)) {
              ++c.unwritten;
              continue;
            }
            c.worst = std::max(c.worst, static_cast<double>(std::abs(got - want) / scale));
          }
        for (index_t k = series * nt; k < series * nt + kGuard; ++k)
          c.past_end += !std::isnan(y[k]);
        EXPECT_EQ(c.unwritten, 0u) << "outputs left NaN (unwritten)";
        EXPECT_EQ(c.past_end, 0u) << "guard elements overwritten";
        EXPECT_LE(c.worst, tolerance);
      }
  }
}

TEST(RealFft, SupportedLengthsAndClearErrors) {
  for (index_t length : {16, 64, 2048, 8192})
    EXPECT_TRUE(real_fft_supported(length)) << length;
  for (index_t length : {0, 8, 12, 48, 2000, 16384})
    EXPECT_FALSE(real_fft_supported(length)) << length;
  try {
    padded_real_fft<double, double>(nullptr, nullptr, 1, 1, 2000, nullptr, nullptr);
    ADD_FAILURE() << "length 2000 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("2000"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace shiftop::cuda
