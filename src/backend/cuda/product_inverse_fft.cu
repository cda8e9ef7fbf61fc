#include <string>

#include "backend/cuda/product_inverse_fft.cuh"
#include "backend/cuda/real_fft_stages.cuh"

namespace shiftop::cuda {
namespace {

using namespace real_fft_detail;

/// Parameter blocks (columns of F^[w]) per series slot of a thread block: each thread loads
/// G adjacent values of a row of F^ per frequency and observation block, a whole 32-byte sector
/// (an FP64 F^ gives 2, an FP32 one 4 while the spectra are FP32 too; with FP64 spectra four areas
/// would leave one block per multiprocessor).
template <typename TA, typename TY>
inline constexpr int kColumns = sizeof(TA) == 4 && sizeof(TY) == 4 ? 4 : 2;

/// out[q] = p[q] for the q < G values of the row (`valid` of them are left in it); the rest zero.
/// p is 16-byte aligned: ld is even and j0 a multiple of G.
template <int G, typename CA>
__device__ __forceinline__ void load_columns(const CA* p, index_t valid, CA (&out)[G]) {
  using TA = decltype(CA{}.x);
  constexpr int V = kPacket<TA>;
  if (valid >= G) {
#pragma unroll
    for (int q = 0; q < G; q += V) {
      CA packet[V];
      load_streaming(p + q, packet);
#pragma unroll
      for (int v = 0; v < V; ++v)
        out[q + v] = packet[v];
    }
  } else {
#pragma unroll
    for (int q = 0; q < G; ++q)
      out[q] = q < valid ? p[q] : CA{0, 0};
  }
}

// Persistent: series slot `local` of the block takes column group first + local, G columns
// j0 .. j0+G-1, for first = blockIdx.x * S, + gridDim.x * S, ... Each slot has G areas of shared
// memory. The products fill every area at once (one pass over the rows of F^ for the G columns),
// then the G series are transformed one after the other. A group past Nm computes zeros and
// stores nothing, so that every thread meets every barrier.
template <typename TA, typename TX, typename TY, int N>
__global__ void __launch_bounds__(Tile<N, TY>::kBlock, Tile<N, TY>::kMinBlocks)
    product_inverse_fft_kernel(const complex_t<TA>* __restrict__ a, GemvShape shape,
                               const complex_t<TX>* __restrict__ x, double* __restrict__ y,
                               bool single_output, index_t nt,
                               const complex_t<TY>* __restrict__ twiddles) {
  using C = complex_t<TY>;
  using CA = complex_t<TA>;
  using Tl = Tile<N, TY>;
  constexpr int G = kColumns<TA, TY>;
  extern __shared__ __align__(16) unsigned char shared[];
  const int lane = threadIdx.x % Tl::kThreads, local = threadIdx.x / Tl::kThreads;
  const auto area = [&](int q) {
    return reinterpret_cast<C*>(shared + (local * G + q) * Tl::kAreaBytes);
  };
  const index_t groups = (shape.nm + G - 1) / G, step = index_t{gridDim.x} * Tl::kSeries;
  for (index_t first = index_t{blockIdx.x} * Tl::kSeries; first < groups; first += step) {
    const index_t j0 = (first + local) * G;
    const bool real_group = j0 < shape.nm;
    for (int k = lane; k <= N; k += Tl::kThreads) {
      double2 acc[G] = {};  // zero
      if (real_group) {
        const CA* row = a + index_t{k} * shape.nd * shape.ld + j0;
#pragma unroll 2
        for (index_t i = 0; i < shape.nd; ++i) {
          CA values[G];
          load_columns<G>(row + i * shape.ld, shape.ld - j0, values);
          const double2 xi = to_complex<double>(x[i * shape.nw + k]);
#pragma unroll
          for (int q = 0; q < G; ++q)
            conj_multiply_add(acc[q], to_complex<double>(values[q]), xi);
        }
      }
#pragma unroll
      for (int q = 0; q < G; ++q)
        area(q)[pad(k)] = to_complex<TY>(acc[q]);
    }
    __syncthreads();
#pragma unroll 1
    for (int q = 0; q < G; ++q) {
      C* data = area(q);
      stage<N, 1>([&](int k) { return inverse_split_point<N>(data, twiddles, k, false); }, data,
                  twiddles, lane);
      stages_from<N, kRadix>(data, twiddles, lane);
      if (j0 + q >= shape.nm) continue;
      if (single_output)
        store_unpadded<float>(data, y + (j0 + q) * nt, nt, lane, Tl::kThreads);
      else
        store_unpadded<double>(data, y + (j0 + q) * nt, nt, lane, Tl::kThreads);
    }
    __syncthreads();  // every area is stored before the next group's products overwrite it
  }
}

}  // namespace

template <typename TA, typename TX, typename TY>
void adjoint_product_inverse_fft(const complex_t<TA>* a, const GemvShape& shape,
                                 const complex_t<TX>* x, double* y, bool single_output, index_t nt,
                                 index_t length, const complex_t<TY>* twiddles, stream_t stream) {
  if (shape.nw != length / 2 + 1)
    throw Error("product + inverse FFT: " + std::to_string(shape.nw) +
                " frequencies do not match length " + std::to_string(length));
  with_points(length, nt, [&](auto points) {
    constexpr int N = decltype(points)::value;
    using Tl = Tile<N, TY>;
    constexpr int G = kColumns<TA, TY>;
    const index_t groups = (shape.nm + G - 1) / G;
    launch_persistent<product_inverse_fft_kernel<TA, TX, TY, N>>(
        [] { return "product + inverse FFT of length " + std::to_string(2 * N); },
        (groups + Tl::kSeries - 1) / Tl::kSeries, Tl::kBlock, Tl::kSeries * G * Tl::kAreaBytes,
        stream, a, shape, x, y, single_output, nt, twiddles);
  });
}

#define SHIFTOP_INSTANTIATE(TA, TX, TY)                                                     \
  template void adjoint_product_inverse_fft<TA, TX, TY>(                                    \
      const complex_t<TA>*, const GemvShape&, const complex_t<TX>*, double*, bool, index_t, \
      index_t, const complex_t<TY>*, stream_t);
#define SHIFTOP_INSTANTIATE_TY(TA, TX) \
  SHIFTOP_INSTANTIATE(TA, TX, float) SHIFTOP_INSTANTIATE(TA, TX, double)
SHIFTOP_INSTANTIATE_TY(float, float)
SHIFTOP_INSTANTIATE_TY(float, double)
SHIFTOP_INSTANTIATE_TY(double, float)
SHIFTOP_INSTANTIATE_TY(double, double)
#undef SHIFTOP_INSTANTIATE_TY
#undef SHIFTOP_INSTANTIATE

}  // namespace shiftop::cuda
