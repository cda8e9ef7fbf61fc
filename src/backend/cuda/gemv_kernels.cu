#include <string>

#include "backend/cuda/check.hpp"
#include "backend/cuda/gemv_kernels.cuh"

namespace shiftop::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// F: one thread block per (tile of R rows, frequency). Threads stride over the columns, each
// keeping R partial dot products in registers, so every x[j] is loaded once for R rows and R
// independent 16-byte loads of F^ are in flight per iteration; warp shuffles and one shared
// array reduce the partial sums. Row tiles of one frequency are adjacent in the launch order, so
// they read the same (strided) x[.][w] from L2.
template <int R, typename TA, typename TX, typename TY>
__global__ void __launch_bounds__(kThreads)
    gemv_rows_kernel(const complex_t<TA>* __restrict__ a, GemvShape shape,
                     const complex_t<TX>* __restrict__ x, complex_t<TY>* __restrict__ y) {
  using C = complex_t<TA>;
  const index_t w = blockIdx.y, i0 = index_t{blockIdx.x} * R;
  const int rows = static_cast<int>(min(index_t{R}, shape.nd - i0));
  const C* row = a + (w * shape.nd + i0) * shape.ld;
  C acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r)
    acc[r] = {TA(0), TA(0)};
#pragma unroll 2
  for (index_t j = threadIdx.x; j < shape.nm; j += kThreads) {
    const C xj = to_complex<TA>(x[j * shape.nw + w]);
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (r < rows) multiply_add(acc[r], load_streaming(row + r * shape.ld + j), xj);
  }
  __shared__ C partial[kWarps][R];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    for (int offset = 16; offset > 0; offset /= 2) {
      acc[r].x += __shfl_down_sync(0xffffffffu, acc[r].x, offset);
      acc[r].y += __shfl_down_sync(0xffffffffu, acc[r].y, offset);
    }
    if (lane == 0) partial[warp][r] = acc[r];
  }
  __syncthreads();
  if (threadIdx.x < rows) {
    C sum = partial[0][threadIdx.x];
    for (int k = 1; k < kWarps; ++k) {
      sum.x += partial[k][threadIdx.x].x;
      sum.y += partial[k][threadIdx.x].y;
    }
    y[(i0 + threadIdx.x) * shape.nw + w] = to_complex<TY>(sum);
  }
}

// F*: one thread block per (tile of kThreads*K columns, frequency). Each thread owns K columns
// (kThreads apart, so a warp's loads stay coalesced) and walks down the Nd rows, accumulating
// conj(F^[w][i][j]) x[i] in registers: no reduction at all, and K*4 independent loads per
// unrolled step. x[.][w] is staged in shared memory, kThreads rows at a time. Small Nd gets large
// K so that each block still streams enough of F^ to hide its launch (mixed-precision paper,
// section 3.1.1: the "many tiny blocks" problem of the library kernel).
template <int K, typename TA, typename TX, typename TY>
__global__ void __launch_bounds__(kThreads)
    gemv_columns_kernel(const complex_t<TA>* __restrict__ a, GemvShape shape,
                        const complex_t<TX>* __restrict__ x, complex_t<TY>* __restrict__ y) {
  using C = complex_t<TA>;
  __shared__ C xs[kThreads];
  const index_t w = blockIdx.y;
  const index_t j0 = index_t{blockIdx.x} * (kThreads * K) + threadIdx.x;
  const C* block = a + w * shape.nd * shape.ld;
  C acc[K];
#pragma unroll
  for (int c = 0; c < K; ++c)
    acc[c] = {TA(0), TA(0)};
  for (index_t i0 = 0; i0 < shape.nd; i0 += kThreads) {
    const int rows = static_cast<int>(min(index_t{kThreads}, shape.nd - i0));
    __syncthreads();
    if (threadIdx.x < rows) xs[threadIdx.x] = to_complex<TA>(x[(i0 + threadIdx.x) * shape.nw + w]);
    __syncthreads();
#pragma unroll 4
    for (int r = 0; r < rows; ++r) {
      const C* row = block + (i0 + r) * shape.ld;
      const C xr = xs[r];
#pragma unroll
      for (int c = 0; c < K; ++c) {
        const index_t j = j0 + c * kThreads;
        if (j < shape.nm) conj_multiply_add(acc[c], load_streaming(row + j), xr);
      }
    }
  }
#pragma unroll
  for (int c = 0; c < K; ++c) {
    const index_t j = j0 + c * kThreads;
    if (j < shape.nm) y[j * shape.nw + w] = to_complex<TY>(acc[c]);
  }
}

void check_grid(const GemvShape& shape) {
  if (shape.nw > 65535)
    throw Error("batched GEMV: " + std::to_string(shape.nw) +
                " frequencies exceed the CUDA grid limit of 65535 (Nt <= 65534)");
}

template <int R, typename TA, typename TX, typename TY>
void launch_rows(const complex_t<TA>* a, const GemvShape& shape, const complex_t<TX>* x,
                 complex_t<TY>* y, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((shape.nd + R - 1) / R), static_cast<unsigned>(shape.nw));
  gemv_rows_kernel<R, TA, TX, TY><<<grid, kThreads, 0, stream>>>(a, shape, x, y);
}

template <int K, typename TA, typename TX, typename TY>
void launch_columns(const complex_t<TA>* a, const GemvShape& shape, const complex_t<TX>* x,
                    complex_t<TY>* y, cudaStream_t stream) {
  const index_t per_block = index_t{kThreads} * K;
  const dim3 grid(static_cast<unsigned>((shape.nm + per_block - 1) / per_block),
                  static_cast<unsigned>(shape.nw));
  gemv_columns_kernel<K, TA, TX, TY><<<grid, kThreads, 0, stream>>>(a, shape, x, y);
}

}  // namespace

template <typename TA, typename TX, typename TY>
void gemv_fused(bool adjoint, const complex_t<TA>* a, const GemvShape& shape,
                const complex_t<TX>* x, complex_t<TY>* y, cudaStream_t stream) {
  check_grid(shape);
  if (!adjoint) {
    // Enough rows per block to reuse x, few enough that the accumulators stay in registers.
    if (shape.nd >= 5)
      launch_rows<8, TA, TX, TY>(a, shape, x, y, stream);
    else if (shape.nd >= 3)
      launch_rows<4, TA, TX, TY>(a, shape, x, y, stream);
    else
      launch_rows<2, TA, TX, TY>(a, shape, x, y, stream);
  } else {
    if (shape.nd <= 16)
      launch_columns<4, TA, TX, TY>(a, shape, x, y, stream);
    else if (shape.nd <= 64)
      launch_columns<2, TA, TX, TY>(a, shape, x, y, stream);
    else
      launch_columns<1, TA, TX, TY>(a, shape, x, y, stream);
  }
  SHIFTOP_CUDA_CHECK(cudaGetLastError());
}

#define SHIFTOP_INSTANTIATE_GEMV(TA, TX, TY)                                         \
  template void gemv_fused<TA, TX, TY>(bool, const complex_t<TA>*, const GemvShape&, \
                                       const complex_t<TX>*, complex_t<TY>*, cudaStream_t);
#define SHIFTOP_OVER_Y(TA, TX) \
  SHIFTOP_INSTANTIATE_GEMV(TA, TX, float) SHIFTOP_INSTANTIATE_GEMV(TA, TX, double)
#define SHIFTOP_OVER_X(TA) SHIFTOP_OVER_Y(TA, float) SHIFTOP_OVER_Y(TA, double)
SHIFTOP_OVER_X(float)
SHIFTOP_OVER_X(double)
#undef SHIFTOP_OVER_X
#undef SHIFTOP_OVER_Y
#undef SHIFTOP_INSTANTIATE_GEMV

}  // namespace shiftop::cuda
