#include <algorithm>
#include <string>

#include "backend/cuda/product_inverse_fft.cuh"
#include "backend/cuda/real_fft_stages.cuh"

namespace shiftop::cuda {
namespace {

using namespace real_fft_detail;

/// Parameter blocks (columns of F^[w]) per series slot of a thread block, transformed one after
/// the other: two FP64 spectra (or four FP32 ones) per slot keep three blocks per multiprocessor.
template <typename TY>
inline constexpr int kColumns = sizeof(TY) == 4 ? 4 : 2;

/// Thread blocks per cluster. A block holds the spectra of a few columns only (shared memory), so
/// that on its own it would read each row of F^ in pieces of 32 bytes, 4.5 MB apart (at Nd = 7,
/// Nm = 40000): a first version did so and streamed F^ at 0.7 TB/s on an H100 (bench/NOTES.md,
/// issue 19). The blocks of a cluster read their columns together, K times wider (256-byte pieces
/// at FP64 with K = 8: 1.9 TB/s, and no faster with the non-portable K = 16), and write each
/// product into the shared memory of the block that transforms it (distributed shared memory).
constexpr int kCluster = 8;

// Persistent: cluster c (of gridDim.x / K) takes the column range of W = K * S * G columns
// (S series slots of G columns per block) starting at W * (c + clusters * pass). First the whole
// cluster computes the products Y[j][k] for k <= N and the W columns, adjacent threads taking
// adjacent columns so that a warp reads W * sizeof(TA complex) contiguous bytes of a row of F^,
// and stores each into its owner's shared memory; then each block transforms its own columns,
// slot by slot, the G columns of a slot one after the other. Columns past Nm compute zeros and
// store nothing, so that every thread meets every barrier.
template <typename TA, typename TX, typename TY, int N>
__global__ void __launch_bounds__(Tile<N, TY>::kBlock, Tile<N, TY>::kMinBlocks)
    product_inverse_fft_kernel(const complex_t<TA>* __restrict__ a, GemvShape shape,
                               const complex_t<TX>* __restrict__ x, double* __restrict__ y,
                               bool single_output, index_t nt,
                               const complex_t<TY>* __restrict__ twiddles) {
  using C = complex_t<TY>;
  using Tl = Tile<N, TY>;
  constexpr int G = kColumns<TY>, kPerBlock = Tl::kSeries * G, kWidth = kCluster * kPerBlock;
  extern __shared__ __align__(16) unsigned char shared[];
  const int lane = threadIdx.x % Tl::kThreads, local = threadIdx.x / Tl::kThreads;
  const auto area = [&](unsigned char* base, int column) {  // column < kPerBlock of a block
    return reinterpret_cast<C*>(base + column * Tl::kAreaBytes);
  };
  const int rank = static_cast<int>(cluster_block_rank());
  const index_t clusters = gridDim.x / kCluster, ranges = (shape.nm + kWidth - 1) / kWidth;
  const int thread = rank * Tl::kBlock + static_cast<int>(threadIdx.x);
  constexpr int kItems = (N + 1) * kWidth, kClusterThreads = kCluster * Tl::kBlock;
  cluster_sync();  // every block of the cluster has started before any writes into its memory
  for (index_t range = blockIdx.x / kCluster; range < ranges; range += clusters) {
    const index_t first = range * kWidth;
    for (int item = thread; item < kItems; item += kClusterThreads) {
      const int column = item % kWidth, k = item / kWidth;
      const index_t j = first + column;
      double2 acc = {0, 0};
      if (j < shape.nm) {
        const complex_t<TA>* entry = a + index_t{k} * shape.nd * shape.ld + j;
#pragma unroll 4
        for (index_t i = 0; i < shape.nd; ++i)
          conj_multiply_add(acc, to_complex<double>(load_streaming_once(entry + i * shape.ld)),
                            to_complex<double>(x[i * shape.nw + k]));
      }
      unsigned char* owner = cluster_shared_of(shared, static_cast<unsigned>(column / kPerBlock));
      area(owner, column % kPerBlock)[pad(k)] = to_complex<TY>(acc);
    }
    cluster_sync();  // every product has landed in its owner's shared memory
#pragma unroll 1
    for (int q = 0; q < G; ++q) {
      const int column = local * G + q;
      C* data = area(shared, column);
      stage<N, 1>([&](int k) { return inverse_split_point<N>(data, twiddles, k, false); }, data,
                  twiddles, lane);
      stages_from<N, kRadix>(data, twiddles, lane);
      const index_t j = first + rank * kPerBlock + column;
      if (j >= shape.nm) continue;
      if (single_output)
        store_unpadded<float>(data, y + j * nt, nt, lane, Tl::kThreads);
      else
        store_unpadded<double>(data, y + j * nt, nt, lane, Tl::kThreads);
    }
    cluster_sync();  // every block is done with its areas before the next products fill them
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
    const index_t width = index_t{kCluster} * Tl::kSeries * kColumns<TY>;
    launch_persistent<product_inverse_fft_kernel<TA, TX, TY, N>>(
        [] { return "product + inverse FFT of length " + std::to_string(2 * N); },
        (shape.nm + width - 1) / width * kCluster, Tl::kBlock,
        Tl::kSeries * kColumns<TY> * Tl::kAreaBytes, kCluster, stream, a, shape, x, y,
        single_output, nt, twiddles);
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
