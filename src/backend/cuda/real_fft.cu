#include <algorithm>
#include <string>
#include <utility>

#include "backend/cuda/real_fft.cuh"
#include "backend/cuda/real_fft_stages.cuh"
#include "backend/cuda/runtime.cuh"

namespace shiftop::cuda {
namespace {

using namespace real_fft_detail;

// Forward: z[n] = x[2n] + i x[2n+1] (zero past nt) is transformed as N = L/2 complex points,
// then X[k] = (Z[k] + conj Z[N-k]) / 2 - i exp(-2 pi i k / L) (Z[k] - conj Z[N-k]) / 2.
// Its area first holds the nt <= N FP64 values of the series.
template <typename T1, typename T, int N>
__global__ void __launch_bounds__(Tile<N, T>::kBlock, Tile<N, T>::kMinBlocks)
    padded_real_fft_kernel(const double* __restrict__ x, complex_t<T>* __restrict__ spectra,
                           index_t series, index_t nt, const complex_t<T>* __restrict__ twiddles) {
  using C = complex_t<T>;
  using Tl = Tile<N, T>;
  extern __shared__ __align__(16) unsigned char shared[];
  const int lane = threadIdx.x % Tl::kThreads, local = threadIdx.x / Tl::kThreads;
  const index_t points = (nt + 1) / 2;
  const auto fetch = [&](index_t s, int area) {
    if (s >= series) return;
    unsigned char* to = area_of<Tl>(shared, area, local);
    if (nt % 2 == 0)  // then every row starts on a 16-byte boundary
      copy_elements_async<16>(to, x + s * nt, nt / 2, lane, Tl::kThreads);
    else
      copy_elements_async<8>(to, x + s * nt, nt, lane, Tl::kThreads);
  };
  const auto transform = [&](index_t s, int area) {
    const auto* in = reinterpret_cast<const double*>(area_of<Tl>(shared, area, local));
    C* data = reinterpret_cast<C*>(area_of<Tl>(shared, area, local));
    const auto load = [&](int n) -> C {
      if (n >= points) return {T(0), T(0)};
      const double2 p = *reinterpret_cast<const double2*>(in + 2 * n);
      const double im = 2 * n + 1 < nt ? p.y : 0.0;  // past an odd nt: not copied
      return {static_cast<T>(static_cast<T1>(p.x)), static_cast<T>(static_cast<T1>(im))};
    };
    stage<N, 1>(load, data, twiddles, lane);
    stages_from<N, kRadix>(data, twiddles, lane);
    if (s >= series) return;
    C* out = spectra + s * (N + 1);
    for (int k = lane; k <= N; k += Tl::kThreads) {
      const C a = data[pad(k & (N - 1))];
      const C b = conjugate(data[pad((N - k) & (N - 1))]);
      const C even = {T(0.5) * (a.x + b.x), T(0.5) * (a.y + b.y)};
      const C odd = times_minus_i(C{T(0.5) * (a.x - b.x), T(0.5) * (a.y - b.y)});
      out[k] = add(even, mul(odd, twiddles[k]));
    }
  };
  double_buffered(series, Tl::kSeries, local, fetch, transform);
}

// Inverse: Z[k] = (X[k] + conj X[N-k]) + i exp(2 pi i k / L) (X[k] - conj X[N-k]); the
// unnormalised inverse z = conj(FFT(conj Z)) of N points gives y[2n] + i y[2n+1] = z[n].
// Its area first holds the N+1 spectrum values of the series, at their padded places.
template <typename T, typename T5, int N>
__global__ void __launch_bounds__(Tile<N, T>::kBlock, Tile<N, T>::kMinBlocks)
    unpadded_inverse_real_fft_kernel(const complex_t<T>* __restrict__ spectra,
                                     double* __restrict__ y, index_t series, index_t nt,
                                     const complex_t<T>* __restrict__ twiddles,
                                     SpectraLayout layout) {
  using C = complex_t<T>;
  using Tl = Tile<N, T>;
  extern __shared__ __align__(16) unsigned char shared[];
  const int lane = threadIdx.x % Tl::kThreads, local = threadIdx.x / Tl::kThreads;
  const auto fetch = [&](index_t s, int area) {
    if (s >= series) return;
    C* to = reinterpret_cast<C*>(area_of<Tl>(shared, area, local));
    const index_t at = layout.frequency_stride != 0 ? s : s * (N + 1);
    const index_t step = layout.frequency_stride != 0 ? layout.frequency_stride : 1;
    for (int k = lane; k <= N; k += Tl::kThreads)  // to the padded places the stages use
      async_copy<sizeof(C)>(to + pad(k), spectra + at + k * step);
  };
  const auto transform = [&](index_t s, int area) {
    C* data = reinterpret_cast<C*>(area_of<Tl>(shared, area, local));
    const auto load = [&](int k) {
      return inverse_split_point<N>(data, twiddles, k, layout.conjugate);
    };
    stage<N, 1>(load, data, twiddles, lane);
    stages_from<N, kRadix>(data, twiddles, lane);
    if (s >= series) return;
    store_unpadded<T5>(data, y + s * nt, nt, lane, Tl::kThreads);
  };
  double_buffered(series, Tl::kSeries, local, fetch, transform);
}

// Entry e <= N: exp(-2 pi i e / L) (the split step); then each stage's exp(-2 pi i k r / (Ns R)),
// [r-1][k]; zeros in the last 7 (unused) entries.
template <typename T>
__global__ void twiddles_kernel(complex_t<T>* table, int length) {
  const int n = length / 2;
  for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < length; e += gridDim.x * blockDim.x) {
    double turns = 0;  // the angle / (-2 pi)
    bool used = e <= n;
    if (used) {
      turns = double(e) / double(length);
    } else {
      for (int ns = kRadix, f = e - (n + 1); ns < n; ns *= radix(n, ns)) {
        const int r = radix(n, ns);
        if (f < ns * (r - 1)) {
          used = true;
          turns = double((f % ns) * (f / ns + 1)) / double(ns * r);
          break;
        }
        f -= ns * (r - 1);
      }
    }
    double s = 0, c = 0;
    if (used) sincospi(2.0 * turns, &s, &c);
    table[e] = {static_cast<T>(c), static_cast<T>(-s)};
  }
}

/// A persistent real FFT kernel over `series` series of N points.
template <int N, typename T, auto kernel, typename... Args>
void launch(index_t series, stream_t stream, Args... args) {
  using Tl = Tile<N, T>;
  launch_persistent<kernel>([] { return "real FFT of length " + std::to_string(2 * N); },
                            (series + Tl::kSeries - 1) / Tl::kSeries, Tl::kBlock,
                            2 * Tl::kSeries * Tl::kAreaBytes, 1, stream, args...);
}

}  // namespace

bool real_fft_supported(index_t length) {
  if (length / 2 < kMinPoints || length / 2 > kMaxPoints || (length & (length - 1)) != 0)
    return false;
  // The FP64 kernels' shared memory (Tile) must fit the current device's opt-in limit.
  const index_t n = length / 2, threads = n / kRadix;
  const index_t series = threads >= 256 ? 1 : 256 / threads;
  const index_t area = ((n + n / 8 + 1) * index_t{sizeof(double2)} + 15) / 16 * 16;
  int device = 0, limit = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
          cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return 2 * series * area <= limit;
}

template <typename T>
void make_twiddles(complex_t<T>* table, index_t length, stream_t stream) {
  if (!real_fft_supported(length))
    throw Error("real FFT twiddles: length " + std::to_string(length) + " is not supported");
  twiddles_kernel<T>
      <<<static_cast<unsigned>((length + 255) / 256), 256, 0, stream>>>(table, int(length));
  SHIFTOP_CHECK_LAUNCH();
}

template <typename T1, typename T2>
void padded_real_fft(const double* x, complex_t<T2>* spectra, index_t series, index_t nt,
                     index_t length, const complex_t<T2>* twiddles, stream_t stream) {
  with_points(length, nt, [&](auto points) {
    constexpr int N = decltype(points)::value;
    launch<N, T2, padded_real_fft_kernel<T1, T2, N>>(series, stream, x, spectra, series, nt,
                                                     twiddles);
  });
}

template <typename T4, typename T5>
void unpadded_inverse_real_fft(const complex_t<T4>* spectra, double* y, index_t series, index_t nt,
                               index_t length, const complex_t<T4>* twiddles, stream_t stream,
                               SpectraLayout layout) {
  with_points(length, nt, [&](auto points) {
    constexpr int N = decltype(points)::value;
    launch<N, T4, unpadded_inverse_real_fft_kernel<T4, T5, N>>(series, stream, spectra, y, series,
                                                               nt, twiddles, layout);
  });
}

template void make_twiddles<float>(float2*, index_t, stream_t);
template void make_twiddles<double>(double2*, index_t, stream_t);
#define SHIFTOP_INSTANTIATE(A, B)                                                               \
  template void padded_real_fft<A, B>(const double*, complex_t<B>*, index_t, index_t, index_t,  \
                                      const complex_t<B>*, stream_t);                           \
  template void unpadded_inverse_real_fft<A, B>(const complex_t<A>*, double*, index_t, index_t, \
                                                index_t, const complex_t<A>*, stream_t,         \
                                                SpectraLayout);
SHIFTOP_INSTANTIATE(float, float)
SHIFTOP_INSTANTIATE(float, double)
SHIFTOP_INSTANTIATE(double, float)
SHIFTOP_INSTANTIATE(double, double)
#undef SHIFTOP_INSTANTIATE

}  // namespace shiftop::cuda
