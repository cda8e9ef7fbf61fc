#include <string>

#include "backend/cuda/check.hpp"
#include "backend/cuda/gemv_kernels.cuh"

namespace shiftop::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// Both kernels give each work item W consecutive frequencies: the vectors are block-major
// ([block][w]), so the W values a thread reads or writes per block are adjacent in memory and fill
// whole 32-byte sectors instead of wasting most of each strided access.

// F: one warp per (tile of R rows, W frequencies), no block-level synchronisation, so each warp
// streams its R*W rows of F^ from start to end without waiting for others (the row length Nm is
// long). Each lane takes V = kPacket adjacent columns per step (one 16-byte load per row: one
// FP64 or two FP32 complex values) and keeps R*W partial dot products in registers; every x value
// is loaded once for R rows, and R*W independent 16-byte loads of F^ are in flight per step. Row
// tiles of the same frequencies are adjacent warps, so they share x through L1/L2. Rows of F^
// are padded to an even length with zeros, so a packet never leaves its row.
template <int R, int W, typename TA, typename TX, typename TY>
__global__ void __launch_bounds__(kThreads)
    gemv_rows_kernel(const complex_t<TA>* __restrict__ a, GemvShape shape,
                     const complex_t<TX>* __restrict__ x, complex_t<TY>* __restrict__ y) {
  using C = complex_t<TA>;
  constexpr int V = kPacket<TA>;
  const int lane = threadIdx.x % 32;
  const index_t tiles = (shape.nd + R - 1) / R;
  const index_t item = index_t{blockIdx.x} * kWarps + threadIdx.x / 32;
  const index_t w0 = item / tiles * W, i0 = item % tiles * R;
  if (w0 >= shape.nw) return;  // the whole warp leaves together
  const int rows = static_cast<int>(min(index_t{R}, shape.nd - i0));
  const int freqs = static_cast<int>(min(index_t{W}, shape.nw - w0));
  C acc[W][R];
#pragma unroll
  for (int f = 0; f < W; ++f)
#pragma unroll
    for (int r = 0; r < R; ++r)
      acc[f][r] = {TA(0), TA(0)};
#pragma unroll 2
  for (index_t j = lane * V; j < shape.nm; j += 32 * V) {
#pragma unroll
    for (int f = 0; f < W; ++f) {
      if (f >= freqs) break;
      C xj[V];
#pragma unroll
      for (int v = 0; v < V; ++v)
        xj[v] = j + v < shape.nm ? to_complex<TA>(x[(j + v) * shape.nw + w0 + f]) : C{TA(0), TA(0)};
      const C* row = a + ((w0 + f) * shape.nd + i0) * shape.ld + j;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        if (r >= rows) break;
        C av[V];
        load_streaming(row + r * shape.ld, av);
#pragma unroll
        for (int v = 0; v < V; ++v)
          multiply_add(acc[f][r], av[v], xj[v]);
      }
    }
  }
#pragma unroll
  for (int f = 0; f < W; ++f)
#pragma unroll
    for (int r = 0; r < R; ++r) {
      for (int offset = 16; offset > 0; offset /= 2) {
        acc[f][r].x += __shfl_down_sync(0xffffffffu, acc[f][r].x, offset);
        acc[f][r].y += __shfl_down_sync(0xffffffffu, acc[f][r].y, offset);
      }
      if (lane == 0 && f < freqs && r < rows)
        y[(i0 + r) * shape.nw + w0 + f] = to_complex<TY>(acc[f][r]);
    }
}

// F*: one thread per (V = kPacket adjacent columns, W frequencies), walking down the Nd rows and
// accumulating conj(F^[w][i][j]) x[i][w] in registers: no reduction at all, one 16-byte load per
// row and frequency, W*4 of them in flight per unrolled step, coalesced across the warp. x[i][w]
// is the same address for the whole block (a broadcast load). The column tiles of the same
// frequencies are adjacent blocks. (The library kernel's problem for Nd << Nm, one tiny block per
// column, mixed-precision paper section 3.1.1, does not arise: a block covers kThreads*V
// columns.)
template <int W, typename TA, typename TX, typename TY>
__global__ void __launch_bounds__(kThreads)
    gemv_columns_kernel(const complex_t<TA>* __restrict__ a, GemvShape shape,
                        const complex_t<TX>* __restrict__ x, complex_t<TY>* __restrict__ y) {
  using C = complex_t<TA>;
  constexpr int V = kPacket<TA>;
  const index_t tiles = (shape.nm + kThreads * V - 1) / (kThreads * V);
  const index_t w0 = index_t{blockIdx.x} / tiles * W;
  const index_t j = (index_t{blockIdx.x} % tiles * kThreads + threadIdx.x) * V;
  if (j >= shape.nm) return;
  const int freqs = static_cast<int>(min(index_t{W}, shape.nw - w0));
  C acc[W][V];
#pragma unroll
  for (int f = 0; f < W; ++f)
#pragma unroll
    for (int v = 0; v < V; ++v)
      acc[f][v] = {TA(0), TA(0)};
#pragma unroll 4
  for (index_t i = 0; i < shape.nd; ++i) {
#pragma unroll
    for (int f = 0; f < W; ++f) {
      if (f >= freqs) break;
      C av[V];
      load_streaming(a + ((w0 + f) * shape.nd + i) * shape.ld + j, av);
      const C xi = to_complex<TA>(x[i * shape.nw + w0 + f]);
#pragma unroll
      for (int v = 0; v < V; ++v)
        conj_multiply_add(acc[f][v], av[v], xi);
    }
  }
#pragma unroll
  for (int f = 0; f < W; ++f)
#pragma unroll
    for (int v = 0; v < V; ++v)
      if (f < freqs && j + v < shape.nm) y[(j + v) * shape.nw + w0 + f] = to_complex<TY>(acc[f][v]);
}

void check_grid(index_t blocks) {
  if (blocks > 0x7fffffff)
    throw Error(
        "batched GEMV: " + std::to_string(blocks) +
        " thread blocks exceed the CUDA grid limit; split the operator over a process grid");
}

constexpr int kFrequencies = 2;  // W: two FP64 complex values fill a 32-byte sector

template <int R, typename TA, typename TX, typename TY>
void launch_rows(const complex_t<TA>* a, const GemvShape& shape, const complex_t<TX>* x,
                 complex_t<TY>* y, cudaStream_t stream) {
  const index_t items = (shape.nd + R - 1) / R * ((shape.nw + kFrequencies - 1) / kFrequencies);
  const index_t blocks = (items + kWarps - 1) / kWarps;
  check_grid(blocks);
  gemv_rows_kernel<R, kFrequencies, TA, TX, TY>
      <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a, shape, x, y);
}

template <typename TA, typename TX, typename TY>
void launch_columns(const complex_t<TA>* a, const GemvShape& shape, const complex_t<TX>* x,
                    complex_t<TY>* y, cudaStream_t stream) {
  const index_t blocks =
      (shape.nm + kThreads - 1) / kThreads * ((shape.nw + kFrequencies - 1) / kFrequencies);
  check_grid(blocks);
  gemv_columns_kernel<kFrequencies, TA, TX, TY>
      <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a, shape, x, y);
}

}  // namespace

template <typename TA, typename TX, typename TY>
void gemv_fused(bool adjoint, const complex_t<TA>* a, const GemvShape& shape,
                const complex_t<TX>* x, complex_t<TY>* y, cudaStream_t stream) {
  if (adjoint)
    launch_columns<TA, TX, TY>(a, shape, x, y, stream);
  else if (shape.nd > 2)  // four rows per warp reuse x; fewer rows waste no loads
    launch_rows<4, TA, TX, TY>(a, shape, x, y, stream);
  else
    launch_rows<2, TA, TX, TY>(a, shape, x, y, stream);
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
