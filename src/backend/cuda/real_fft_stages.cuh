// The building blocks of the batched power-of-two real FFTs (real_fft.cu) that other kernels
// reuse to transform series they build in shared memory themselves (product_inverse_fft.cu: the
// F* product written straight into the inverse transform): the radix-8 Stockham stages in shared
// memory (Govindaraju et al., SC'08), the thread tiles, the inverse's split step and unpadded
// store, and the persistent launch.
#pragma once

#include <algorithm>
#include <string>
#include <utility>

#include "backend/cuda/complex.cuh"
#include "backend/cuda/real_fft.cuh"
#include "backend/cuda/runtime.cuh"

namespace shiftop::cuda::real_fft_detail {

constexpr int kRadix = 8;
constexpr int kMinPoints = 8, kMaxPoints = 4096;  // N = L/2

template <typename C>
__device__ __forceinline__ C add(C a, C b) {
  return {a.x + b.x, a.y + b.y};
}
template <typename C>
__device__ __forceinline__ C sub(C a, C b) {
  return {a.x - b.x, a.y - b.y};
}
template <typename C>
__device__ __forceinline__ C mul(C a, C b) {
  return {fma(a.x, b.x, -a.y * b.y), fma(a.x, b.y, a.y * b.x)};
}
template <typename C>
__device__ __forceinline__ C times_minus_i(C a) {
  return {a.y, -a.x};
}

// Shared-memory index of point i: one spare slot per 8 points, so that the first stage's writes
// (8 points apart) fall in different banks.
__device__ __forceinline__ int pad(int i) {
  return i + (i >> 3);
}

/// The forward DFT of R = 2, 4 or 8 points in registers, natural order in and out.
template <int R, typename C>
__device__ __forceinline__ void dft(C (&v)[R]) {
  if constexpr (R == 2) {
    const C a = v[0];
    v[0] = add(a, v[1]);
    v[1] = sub(a, v[1]);
  } else if constexpr (R == 4) {
    const C a0 = add(v[0], v[2]), b0 = sub(v[0], v[2]);
    const C a1 = add(v[1], v[3]), b1 = times_minus_i(sub(v[1], v[3]));
    v[0] = add(a0, a1);
    v[1] = add(b0, b1);
    v[2] = sub(a0, a1);
    v[3] = sub(b0, b1);
  } else {
    static_assert(R == 8);
    // One radix-2 step in frequency: even outputs from v[k] + v[k+4], odd ones from
    // (v[k] - v[k+4]) exp(-2 pi i k / 8).
    using T = decltype(v[0].x);
    constexpr T h = T(0.70710678118654752440);
    C a[4], b[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      a[k] = add(v[k], v[k + 4]);
      b[k] = sub(v[k], v[k + 4]);
    }
    b[1] = {h * (b[1].x + b[1].y), h * (b[1].y - b[1].x)};
    b[2] = times_minus_i(b[2]);
    b[3] = {h * (b[3].y - b[3].x), -h * (b[3].x + b[3].y)};
    dft<4>(a);
    dft<4>(b);
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      v[2 * m] = a[m];
      v[2 * m + 1] = b[m];
    }
  }
}

/// Threads, series and shared memory of one thread block for N-point transforms: N/8 threads
/// per series, about 2048 points per block. Each series has two areas of shared memory that take
/// turns: asynchronous copies fill one with the raw input of the block's next series while the
/// current one is transformed in the other, in place (the first stage reads its raw input from
/// the area, the others the padded points, and point N for the inverse's input).
template <int N, typename T>
struct Tile {
  static constexpr int kThreads = N / kRadix;
  static constexpr int kSeries = kThreads >= 256 ? 1 : 256 / kThreads;
  static constexpr int kBlock = kThreads * kSeries;
  static constexpr int kPoints = N + N / 8 + 1;
  static constexpr std::size_t kAreaBytes = (kPoints * sizeof(complex_t<T>) + 15) / 16 * 16;
  static_assert(kAreaBytes >= N * sizeof(double));  // the forward's raw input fits
  // Three blocks per multiprocessor: enough warps to hide the shared-memory stages, with each
  // block's next input always in flight.
  static constexpr int kMinBlocks = kBlock <= 256 ? 3 : 1;
};

/// The radix of the Stockham stage that combines sub-transforms of Ns points (N points in all).
__host__ __device__ constexpr int radix(int n, int ns) {
  return n / ns >= kRadix ? kRadix : n / ns;
}

/// Where the twiddles of the stage after sub-transform size Ns start in the table (after the N+1
/// of the split step): stages Ns = 8, 64, ... each have Ns (R-1), N - 8 in all.
__host__ __device__ constexpr int stage_twiddles_at(int n, int ns) {
  int at = n + 1;
  for (int s = kRadix; s < ns; s *= radix(n, s))
    at += s * (radix(n, s) - 1);
  return at;
}

/// One Stockham stage of radix R = min(8, N / Ns) over the N points of one series (Govindaraju et
/// al., SC'08, Fig. 2): butterfly j of N/R reads points j + r N/R, multiplies them by the
/// twiddles exp(-2 pi i k r / (Ns R)) of its place k = j mod Ns in its sub-transform, transforms
/// them and writes them Ns apart from (j div Ns) Ns R + j mod Ns. Each of the N/8 threads does
/// 8/R butterflies. load(i) gives point i: shared memory, or the staging area in a first stage.
/// The stage's twiddles are stored [r-1][k], so that a warp's loads are contiguous.
template <int N, int Ns, typename C, typename Load>
__device__ __forceinline__ void stage(Load load, C* data, const C* __restrict__ twiddles,
                                      int lane) {
  constexpr int R = radix(N, Ns);
  constexpr int kPerThread = kRadix / R;
  constexpr int kThreads = N / kRadix;
  C v[kPerThread][R];
#pragma unroll
  for (int b = 0; b < kPerThread; ++b) {
    const int j = lane + b * kThreads;
#pragma unroll
    for (int r = 0; r < R; ++r)
      v[b][r] = load(j + r * (N / R));
    if constexpr (Ns > 1) {
      const C* stage_twiddles = twiddles + stage_twiddles_at(N, Ns) + (j & (Ns - 1));
#pragma unroll
      for (int r = 1; r < R; ++r)
        v[b][r] = mul(v[b][r], stage_twiddles[(r - 1) * Ns]);
    }
    dft<R>(v[b]);
  }
  __syncthreads();  // every point is read before any is overwritten
#pragma unroll
  for (int b = 0; b < kPerThread; ++b) {
    const int j = lane + b * kThreads;
    const int base = (j - (j & (Ns - 1))) * R + (j & (Ns - 1));
#pragma unroll
    for (int r = 0; r < R; ++r)
      data[pad(base + r * Ns)] = v[b][r];
  }
  __syncthreads();
}

/// The stages from sub-transform size Ns on, reading and writing shared memory.
template <int N, int Ns, typename C>
__device__ __forceinline__ void stages_from(C* data, const C* __restrict__ twiddles, int lane) {
  if constexpr (Ns < N) {
    stage<N, Ns>([data](int i) { return data[pad(i)]; }, data, twiddles, lane);
    stages_from<N, Ns * radix(N, Ns)>(data, twiddles, lane);
  }
}

/// The block's series, as a persistent loop: series first + local for first = blockIdx.x * S,
/// + gridDim.x * S, ...; fetch(s, area) starts the asynchronous copy of series s (if it exists)
/// into area 0 or 1 and transform(s, area) transforms series s there, while the copy of the
/// block's next series runs.
template <typename Fetch, typename Transform>
__device__ __forceinline__ void double_buffered(index_t series, int series_per_block, int local,
                                                Fetch fetch, Transform transform) {
  const index_t step = index_t{gridDim.x} * series_per_block;
  index_t first = index_t{blockIdx.x} * series_per_block;
  fetch(first + local, 0);
  async_copy_commit();
  for (int area = 0; first < series; first += step, area ^= 1) {
    fetch(first + step + local, area ^ 1);
    async_copy_commit();
    async_copy_wait<1>();  // this thread's copies of the current series have landed
    __syncthreads();       // and everyone's
    transform(first + local, area);
    __syncthreads();  // everyone is done with the area before the next copy into it
  }
}

/// The shared-memory area of series `local` of the block, turn `area`.
template <typename Tl>
__device__ __forceinline__ unsigned char* area_of(unsigned char* shared, int area, int local) {
  return shared + (area * Tl::kSeries + local) * Tl::kAreaBytes;
}

/// Copies `count` elements of Bytes (4, 8 or 16) each, the lanes of a series sharing them.
template <int Bytes>
__device__ __forceinline__ void copy_elements_async(void* to, const void* from, index_t count,
                                                    int lane, int lanes) {
  for (index_t c = lane; c < count; c += lanes)
    async_copy<Bytes>(static_cast<char*>(to) + c * Bytes,
                      static_cast<const char*>(from) + c * Bytes);
}

/// Point k of the N-point complex input of an inverse real FFT whose Hermitian spectrum X (N+1
/// values, conjugated first if asked) lies at the padded places of `data`:
/// Z[k] = (X[k] + conj X[N-k]) + i exp(2 pi i k / L) (X[k] - conj X[N-k]), returned conjugated, so
/// that the forward stages give the unnormalised inverse z = conj(FFT(conj Z)), and
/// y[2n] + i y[2n+1] = z[n]. The imaginary parts of X[0] and X[N] are ignored.
template <int N, typename C>
__device__ __forceinline__ C inverse_split_point(const C* data, const C* __restrict__ twiddles,
                                                 int k, bool conjugate_input) {
  using T = decltype(C{}.x);
  C a = data[pad(k)], b = data[pad(N - k)];
  if (conjugate_input) a = conjugate(a), b = conjugate(b);
  if (k == 0) a.y = b.y = T(0);  // X[0] and X[N] are real
  b = conjugate(b);
  const C sum = add(a, b), turned = mul(conjugate(twiddles[k]), sub(a, b));
  return {sum.x - turned.y, -(sum.y + turned.x)};  // conj(sum + i turned)
}

/// The inverse of the series in `data` (after the stages): y[t] = T5(real part / imaginary part of
/// the conjugated points) for t < nt, written as FP64, the lanes of the series sharing the work.
template <typename T5, typename C>
__device__ __forceinline__ void store_unpadded(const C* data, double* out, index_t nt, int lane,
                                               int lanes) {
  const index_t points = (nt + 1) / 2;
  for (index_t n = lane; n < points; n += lanes) {
    const C z = data[pad(static_cast<int>(n))];
    const double re = static_cast<double>(static_cast<T5>(z.x));
    const double im = static_cast<double>(static_cast<T5>(-z.y));
    if (nt % 2 == 0) {
      *reinterpret_cast<double2*>(out + 2 * n) = {re, im};
    } else {
      out[2 * n] = re;
      if (2 * n + 1 < nt) out[2 * n + 1] = im;
    }
  }
}

/// Calls f(std::integral_constant<int, N>) for N = length / 2, after checking length and nt.
template <typename F, int... Logs>
void with_points(index_t length, index_t nt, F&& f, std::integer_sequence<int, Logs...>) {
  if (!real_fft_supported(length))
    throw Error("real FFT: length " + std::to_string(length) +
                " is not a power of two from 16 to 8192 whose working set fits this device");
  if (nt < 1 || nt > length / 2)
    throw Error("real FFT: " + std::to_string(nt) + " values per series do not fit length " +
                std::to_string(length) + " (1 to L/2)");
  ((length / 2 == (kMinPoints << Logs) &&
    (f(std::integral_constant<int, (kMinPoints << Logs)>{}), true)) ||
   ...);
}
template <typename F>
void with_points(index_t length, index_t nt, F&& f) {
  with_points(length, nt, std::forward<F>(f), std::make_integer_sequence<int, 10>{});
}
static_assert(kMinPoints << 9 == kMaxPoints);

/// Launches a persistent kernel: min(`blocks`, as many as fit on the device at once) blocks of
/// `threads` threads with `bytes` of dynamic shared memory, in clusters of `cluster` blocks
/// (`blocks` a multiple of it), each looping over its work. The occupancy is looked up once per
/// kernel, device and host thread; what() names the kernel in the error when it does not fit.
template <auto kernel, typename What, typename... Args>
void launch_persistent(What what, index_t blocks, int threads, std::size_t bytes, int cluster,
                       stream_t stream, Args... args) {
  if (blocks <= 0) return;
  cudaLaunchAttribute clusters{};
  clusters.id = cudaLaunchAttributeClusterDimension;
  clusters.val.clusterDim = {static_cast<unsigned>(cluster), 1, 1};
  cudaLaunchConfig_t config{};
  config.blockDim = dim3(static_cast<unsigned>(threads));
  config.dynamicSmemBytes = bytes;
  config.stream = stream;
  config.attrs = &clusters;
  config.numAttrs = cluster > 1 ? 1 : 0;
  thread_local int device = -1;
  thread_local index_t resident = 0;
  int current = 0;
  SHIFTOP_CUDA_CHECK(cudaGetDevice(&current));
  if (current != device) {
    SHIFTOP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(bytes)));
    int fit = 0;  // clusters on the device, or blocks per multiprocessor
    if (cluster > 1) {
      config.gridDim = dim3(static_cast<unsigned>(cluster));
      SHIFTOP_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&fit, kernel, &config));
      resident = index_t{fit} * cluster;
    } else {
      int sms = 0;
      SHIFTOP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, current));
      SHIFTOP_CUDA_CHECK(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, threads, bytes));
      resident = index_t{fit} * sms;
    }
    if (fit == 0)
      throw Error(what() + ": " + std::to_string(bytes) + " bytes of shared memory per block" +
                  (cluster > 1 ? " in clusters of " + std::to_string(cluster) + " blocks" : "") +
                  " do not fit on this device");
    device = current;
  }
  config.gridDim = dim3(static_cast<unsigned>(std::min(blocks, resident)));
  SHIFTOP_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, args...));
}

}  // namespace shiftop::cuda::real_fft_detail
