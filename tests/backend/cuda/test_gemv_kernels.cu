// The fused batched GEMV kernels alone (backend/cuda/gemv_kernels.cuh, ctest label `gpu`): F and F*
// against a long double host reference on tiny, odd and partial-tile shapes, under EVERY tuning
// (rows 2/4/8 x split 1/2/4/8 for F, freqs 2/4/8 direct or staged for F*, not only those
// gemv_tunings lists), in FP64 and FP32 with same and mixed vector precisions; also gemv_tunings'
// lists and the rejection of invalid tunings. Outputs, and a guard after them, are poisoned with
// NaN before every launch, so unwritten elements and writes past the end fail. Rows of F^ are zero
// beyond nm, as required.
//
// Tolerances are relative to scale = sum |a||x| of each output element, which bounds every partial
// sum. The reference uses the stored TA and TX values exactly, and the kernels accumulate in FP64
// whatever TA is, so the only FP32 rounding left is that of y to TY. The longest chain of FP64
// roundings here is F with nm = 2048, split 1: 2048/32 terms per lane at two FMAs each, 5 warp
// shuffles, under 140 in all: at most 1.6e-14 (tolerance 1e-12 when TY is FP64, even with an FP32
// F^: that checks the FP64 accumulation); rounding y to FP32 adds at most 6e-8 (tolerance 1e-6).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "backend/cuda/device_memory.cuh"
#include "backend/cuda/gemv_kernels.cuh"
#include "shiftop/core/error_type.hpp"
#include "shiftop/gpu/devices.hpp"

namespace shiftop::cuda {
namespace {

// {nd, nm, ld, nw}: partial tiles of rows (2 or 4 per warp), of frequencies (2 per F item, 2-8
// per F* thread), of 16-byte column packets and of split segments; ld = nm rounded up to even,
// some with extra zero padding.
const GemvShape kShapes[] = {{1, 1, 2, 1},       {2, 3, 4, 2},        {3, 5, 8, 3},
                             {7, 33, 34, 9},     {5, 1031, 1032, 17}, {37, 300, 302, 7},
                             {4, 2048, 2048, 6}, {9, 777, 780, 33}};
constexpr index_t kGuard = 64;  // poisoned elements after each output that must stay untouched

std::string name(const GemvShape& s) {
  return "nd=" + std::to_string(s.nd) + " nm=" + std::to_string(s.nm) +
         " ld=" + std::to_string(s.ld) + " nw=" + std::to_string(s.nw);
}

template <typename T>
void upload(DeviceArray<T>& d, const std::vector<T>& host) {
  d = DeviceArray<T>(host.size());
  ASSERT_EQ(cudaSuccess, cudaMemcpy(d.get(), host.data(), d.bytes(), cudaMemcpyHostToDevice));
}

template <typename T>
std::vector<complex_t<T>> random_complex(index_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<complex_t<T>> v(n);
  for (auto& z : v)
    z = {static_cast<T>(uniform(rng)), static_cast<T>(uniform(rng))};
  return v;
}

using Exact = std::complex<long double>;
template <typename C>
Exact widen(C z) {
  return {z.x, z.y};
}

struct Reference {
  std::vector<Exact> y;            // [output block][w]
  std::vector<long double> scale;  // sum |a||x| of each element
};

// y[out][w] = sum_k A[w](out, k) x[k][w] with A = F^ (rows i) or F^^H (rows j).
template <typename CA, typename CX>
Reference reference(bool adjoint, const std::vector<CA>& a, const GemvShape& s,
                    const std::vector<CX>& x) {
  const index_t outputs = adjoint ? s.nm : s.nd, terms = adjoint ? s.nd : s.nm;
  Reference r{std::vector<Exact>(outputs * s.nw), std::vector<long double>(outputs * s.nw)};
  for (index_t w = 0; w < s.nw; ++w)
    for (index_t out = 0; out < outputs; ++out)
      for (index_t k = 0; k < terms; ++k) {
        const index_t i = adjoint ? k : out, j = adjoint ? out : k;
        const Exact aij = widen(a[(w * s.nd + i) * s.ld + j]), xk = widen(x[k * s.nw + w]);
        r.y[out * s.nw + w] += (adjoint ? std::conj(aij) : aij) * xk;
        r.scale[out * s.nw + w] += std::abs(aij) * std::abs(xk);
      }
  return r;
}

template <typename CY>
void expect_close(const std::vector<CY>& y, const Reference& want, double tolerance) {
  CY poison;
  std::memset(&poison, 0xFF, sizeof poison);
  const std::size_t n = want.y.size();
  std::size_t unwritten = 0, past_end = 0, worst_at = 0;
  double worst = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (std::isnan(y[k].x) || std::isnan(y[k].y)) {
      ++unwritten;
      continue;
    }
    const auto error = static_cast<double>(std::abs(widen(y[k]) - want.y[k]) / want.scale[k]);
    if (error > worst) {
      worst = error;
      worst_at = k;
    }
  }
  for (std::size_t k = n; k < y.size(); ++k)
    past_end += std::memcmp(&y[k], &poison, sizeof poison) != 0;
  EXPECT_EQ(unwritten, 0u) << "elements left NaN (unwritten)";
  EXPECT_EQ(past_end, 0u) << "guard elements overwritten";
  EXPECT_LE(worst, tolerance) << "at [block][w] index " << worst_at;
}

template <typename A, typename X, typename Y>
struct Precisions {
  using TA = A;
  using TX = X;
  using TY = Y;
};
struct PrecisionName {
  template <typename P>
  static std::string GetName(int) {
    const auto bits = [](std::size_t bytes) { return std::to_string(8 * bytes); };
    return "A" + bits(sizeof(typename P::TA)) + "_X" + bits(sizeof(typename P::TX)) + "_Y" +
           bits(sizeof(typename P::TY));
  }
};
using AllPrecisions =
    ::testing::Types<Precisions<double, double, double>, Precisions<float, float, float>,
                     Precisions<float, double, double>, Precisions<double, float, float>>;

std::vector<GemvTuning> every_rows_and_split() {
  std::vector<GemvTuning> all;
  for (int rows : {2, 4, 8})
    for (int split : {1, 2, 4, 8})
      all.push_back({.rows = rows, .split = split});
  return all;
}

std::vector<GemvTuning> every_freqs_and_staging() {
  std::vector<GemvTuning> all;
  for (int freqs : {2, 4, 8})
    for (bool staged : {false, true})
      all.push_back({.freqs = freqs, .staged = staged});
  return all;
}

template <typename P>
class GemvFused : public ::testing::Test {};
TYPED_TEST_SUITE(GemvFused, AllPrecisions, PrecisionName);

TYPED_TEST(GemvFused, EveryShapeAndTuningMatchesTheReference) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  using TA = typename TypeParam::TA;
  using TX = typename TypeParam::TX;
  using TY = typename TypeParam::TY;
  const double tolerance = std::is_same_v<TY, double> ? 1e-12 : 1e-6;
  std::mt19937_64 rng(20240611);
  for (const GemvShape& s : kShapes) {
    auto a = random_complex<TA>(s.nw * s.nd * s.ld, rng);
    for (index_t row = 0; row < s.nw * s.nd; ++row)
      std::fill(a.begin() + row * s.ld + s.nm, a.begin() + (row + 1) * s.ld, complex_t<TA>{});
    DeviceArray<complex_t<TA>> a_d;
    ASSERT_NO_FATAL_FAILURE(upload(a_d, a));
    for (bool adjoint : {false, true}) {
      const auto x = random_complex<TX>((adjoint ? s.nd : s.nm) * s.nw, rng);
      const Reference want = reference(adjoint, a, s, x);
      DeviceArray<complex_t<TX>> x_d;
      DeviceArray<complex_t<TY>> y_d;
      std::vector<complex_t<TY>> y(want.y.size() + kGuard);
      ASSERT_NO_FATAL_FAILURE(upload(x_d, x));
      y_d = DeviceArray<complex_t<TY>>(y.size());
      const std::vector<GemvTuning> tunings =
          adjoint ? every_freqs_and_staging() : every_rows_and_split();
      for (const GemvTuning& tuning : tunings) {
        SCOPED_TRACE(name(s) + (adjoint ? " F* " : " F ") + describe(tuning, adjoint));
        const std::size_t bytes = y.size() * sizeof(complex_t<TY>);
        ASSERT_EQ(cudaSuccess, cudaMemset(y_d.get(), 0xFF, bytes));  // NaN in FP32 and FP64
        gemv_fused<TA, TX, TY>(adjoint, a_d.get(), s, x_d.get(), y_d.get(), tuning, nullptr);
        ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
        ASSERT_EQ(cudaSuccess, cudaMemcpy(y.data(), y_d.get(), bytes, cudaMemcpyDeviceToHost));
        expect_close(y, want, tolerance);
      }
    }
  }
}

// The lists the plan times: valid, distinct; a split only where each segment keeps >= 256
// columns; every freqs for F*, direct and staged.
TEST(GemvTunings, ValidDistinctAndComplete) {
  for (const GemvShape& s : kShapes)
    for (int sms : {1, 132}) {
      SCOPED_TRACE(name(s) + " sms=" + std::to_string(sms));
      std::vector<std::pair<int, int>> rows_splits;
      std::vector<int> freqs;
      for (const GemvTuning& t : gemv_tunings(false, s, sms))
        rows_splits.emplace_back(t.rows, t.split);
      for (const GemvTuning& t : gemv_tunings(true, s, sms))
        freqs.push_back(2 * t.freqs + (t.staged ? 1 : 0));
      ASSERT_FALSE(rows_splits.empty());  // the first, the estimated best, is checked with the rest
      for (const auto [rows, split] : rows_splits) {
        EXPECT_TRUE(rows == 2 || rows == 4 || rows == 8) << rows;
        // All rows in one tile up to 4; beyond that, tiles of 4 or 8.
        EXPECT_EQ(rows == 2, s.nd <= 2) << "rows=" << rows;
        EXPECT_TRUE(split == 1 || split == 2 || split == 4 || split == 8) << split;
        if (split > 1) EXPECT_GE(s.nm, split * 256) << "split=" << split;
      }
      std::sort(rows_splits.begin(), rows_splits.end());
      EXPECT_EQ(std::adjacent_find(rows_splits.begin(), rows_splits.end()), rows_splits.end())
          << "duplicates";
      std::sort(freqs.begin(), freqs.end());
      // Every freqs, direct and staged: codes 2 * freqs + staged.
      EXPECT_EQ(freqs, (std::vector<int>{4, 5, 8, 9, 16, 17}));
    }
}

// Invalid parameters are refused before any launch (so no device memory is needed), naming them.
TEST(GemvFusedTuning, InvalidParametersThrow) {
  const GemvShape s{2, 3, 4, 2};
  const auto expect_refused = [&](bool adjoint, GemvTuning tuning, const std::string& mention) {
    try {
      gemv_fused<float, float, float>(adjoint, nullptr, s, nullptr, nullptr, tuning, nullptr);
      ADD_FAILURE() << mention << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(mention), std::string::npos) << e.what();
    }
  };
  expect_refused(false, {.split = 3}, "split=3");
  expect_refused(false, {.rows = 3}, "rows=3");
  expect_refused(true, {.freqs = 5}, "freqs=5");
}

}  // namespace
}  // namespace shiftop::cuda
