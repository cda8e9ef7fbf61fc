#include <string>
#include <type_traits>

#include "backend/cuda/gemv_kernels.cuh"
#include "backend/cuda/runtime.cuh"

namespace shiftop::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / kWarpSize;

// Both kernels give each work item W consecutive frequencies: the vectors are block-major
// ([block][w]), so the W values a thread reads or writes per block are adjacent in memory and fill
// whole 32-byte sectors instead of wasting most of each strided access.
//
// Both accumulate in FP64 whatever the precision TA of F^: an FP32 F^ (phase 3 in single
// precision) halves the bytes, which is the whole point, while the products and sums cost nothing
// extra in a memory-bound kernel; the error is then F^'s rounding alone, not that of FP32 dot
// products over Nm (or Nd) terms.
//
// Partial tiles (fewer than R rows or W frequencies left) are handled by clamping the row and
// frequency indices instead of branching: every thread issues all its loads back to back (they
// are independent, so all are in flight together), the clamped ones re-read a valid row that the
// cache already holds, and their sums are never written.

// Blocks of 8 warps per multiprocessor that the registers must allow. Left to itself the compiler
// gave four FP32 rows so many registers that one block fit per multiprocessor, too few loads in
// flight (bench/NOTES.md, GPU variant 6: registers, occupancy, spills). A bound also lets the
// compiler use registers up to it, so each variant states the most blocks it fits without spilling
// more.
template <int R, typename TA>
inline constexpr int kRowsBlocksPerSm = R == 8 && sizeof(TA) == 4   ? 1
                                        : R == 2 && sizeof(TA) == 8 ? 3
                                                                    : 2;

// F: `split` warps per (tile of R rows, W frequencies), each streaming one segment of the Nm
// columns; the block (kWarps / split items) adds the segments' sums in shared memory at the end,
// its only barrier. Each lane takes V = kPacket adjacent columns per step (one 16-byte load per
// row: one FP64 or two FP32 complex values) and keeps R*W partial dot products in registers; every
// x value is loaded once for R rows. Rows of F^ are padded to an even length with zeros, so a
// packet never leaves its row.
template <int R, int W, typename TA, typename TX, typename TY>
__global__ void __launch_bounds__(kThreads, kRowsBlocksPerSm<R, TA>)
    gemv_rows_kernel(const complex_t<TA>* __restrict__ a, GemvShape shape, int split,
                     const complex_t<TX>* __restrict__ x, complex_t<TY>* __restrict__ y) {
  using C = complex_t<TA>;
  constexpr int V = kPacket<TA>;
  constexpr index_t kStep = kWarpSize * V;
  __shared__ double2 partial[kWarps][W][R];
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize, segment = warp % split;
  const index_t tiles = (shape.nd + R - 1) / R;
  const index_t item = index_t{blockIdx.x} * (kWarps / split) + warp / split;
  const index_t w0 = item / tiles * W, i0 = item % tiles * R;
  const int rows = static_cast<int>(min(index_t{R}, shape.nd - i0));
  const int freqs = static_cast<int>(max(index_t{0}, min(index_t{W}, shape.nw - w0)));
  const index_t per_segment = ((shape.nm + kStep - 1) / kStep + split - 1) / split * kStep;
  const index_t begin = segment * per_segment;
  const index_t end = freqs > 0 ? min(shape.nm, begin + per_segment) : 0;
  double2 acc[W][R] = {};           // zero
#pragma unroll(R* W >= 16 ? 1 : 2)  // at most 16 loads of F^ in flight: registers
  for (index_t j = begin + lane * V; j < end; j += kStep) {
#pragma unroll
    for (int f = 0; f < W; ++f) {
      const index_t w = w0 + min(f, freqs - 1);
      double2 xj[V];
#pragma unroll
      for (int v = 0; v < V; ++v)
        xj[v] = j + v < shape.nm ? to_complex<double>(x[(j + v) * shape.nw + w]) : double2{0, 0};
      const C* row = a + (w * shape.nd + i0) * shape.ld + j;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        C av[V];
        load_streaming(row + min(r, rows - 1) * shape.ld, av);
#pragma unroll
        for (int v = 0; v < V; ++v)
          multiply_add(acc[f][r], to_complex<double>(av[v]), xj[v]);
      }
    }
  }
#pragma unroll
  for (int f = 0; f < W; ++f)
#pragma unroll
    for (int r = 0; r < R; ++r)
      for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
        acc[f][r].x += warp_shuffle_down(acc[f][r].x, offset);
        acc[f][r].y += warp_shuffle_down(acc[f][r].y, offset);
      }
  if (split == 1) {  // the same for the whole launch: no thread waits at the barrier below
    if (lane == 0)
#pragma unroll
      for (int f = 0; f < W; ++f)
#pragma unroll
        for (int r = 0; r < R; ++r)
          if (f < freqs && r < rows) y[(i0 + r) * shape.nw + w0 + f] = to_complex<TY>(acc[f][r]);
    return;
  }
  if (lane == 0)
#pragma unroll
    for (int f = 0; f < W; ++f)
#pragma unroll
      for (int r = 0; r < R; ++r)
        partial[warp][f][r] = acc[f][r];
  __syncthreads();
  // The item's first warp adds the segments in a fixed order (the result does not depend on
  // timing), one output per lane.
  const int f = lane / R, r = lane % R;
  if (segment == 0 && lane < W * R && f < freqs && r < rows) {
    double2 sum = partial[warp][f][r];
    for (int s = 1; s < split; ++s) {
      sum.x += partial[warp + s][f][r].x;
      sum.y += partial[warp + s][f][r].y;
    }
    y[(i0 + r) * shape.nw + w0 + f] = to_complex<TY>(sum);
  }
}

// F*: one thread per (V = kPacket adjacent columns, W frequencies), walking down the Nd rows and
// accumulating conj(F^[w][i][j]) x[i][w] in registers: no reduction at all, W 16-byte loads per
// row in flight (times the unrolling), coalesced across the warp. x[i][w] is the same address for
// the whole block (a broadcast load). The column tiles of the same frequencies are adjacent
// blocks. (The library kernel's problem for Nd << Nm, one tiny block per column, mixed-precision
// paper section 3.1.1, does not arise: a block covers kThreads*V columns.) Each thread's W outputs
// of a column are adjacent; `Staged` writes them through shared memory so that each store
// instruction fills whole segments of W*sizeof(TY complex) bytes, W lanes per column, where
// otherwise every lane stores 16 bytes into a different column.
template <int W, bool Staged, typename TA, typename TX, typename TY>
__global__ void __launch_bounds__(kThreads)
    gemv_columns_kernel(const complex_t<TA>* __restrict__ a, GemvShape shape,
                        const complex_t<TX>* __restrict__ x, complex_t<TY>* __restrict__ y) {
  using C = complex_t<TA>;
  constexpr int V = kPacket<TA>;
  const index_t tiles = (shape.nm + kThreads * V - 1) / (kThreads * V);
  const index_t w0 = index_t{blockIdx.x} / tiles * W;
  const index_t j0 = index_t{blockIdx.x} % tiles * kThreads * V;  // the block's first column
  const index_t j = j0 + index_t{threadIdx.x} * V;
  if (!Staged && j >= shape.nm) return;  // staged: every thread reaches the barriers
  const index_t rows = j < shape.nm ? shape.nd : 0;
  const int freqs = static_cast<int>(min(index_t{W}, shape.nw - w0));
  double2 acc[W][V] = {};  // zero
#pragma unroll(W <= 2 ? 4 : 2)
  for (index_t i = 0; i < rows; ++i) {
#pragma unroll
    for (int f = 0; f < W; ++f) {
      const index_t w = w0 + min(f, freqs - 1);
      C av[V];
      load_streaming(a + (w * shape.nd + i) * shape.ld + j, av);
      const double2 xi = to_complex<double>(x[i * shape.nw + w]);
#pragma unroll
      for (int v = 0; v < V; ++v)
        conj_multiply_add(acc[f][v], to_complex<double>(av[v]), xi);
    }
  }
  if constexpr (!Staged) {
#pragma unroll
    for (int v = 0; v < V; ++v)
#pragma unroll
      for (int f = 0; f < W; ++f)
        if (f < freqs && j + v < shape.nm)
          y[(j + v) * shape.nw + w0 + f] = to_complex<TY>(acc[f][v]);
  } else {
    // One pass per packet element v (the tile of kThreads columns fits the 48 KB of static shared
    // memory); the padded row keeps the threads' stores free of bank conflicts.
    __shared__ complex_t<TY> tile[kThreads][W + 1];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      if (v > 0) __syncthreads();  // the previous pass has read the tile
#pragma unroll
      for (int f = 0; f < W; ++f)
        tile[threadIdx.x][f] = to_complex<TY>(acc[f][v]);
      __syncthreads();
      for (int e = threadIdx.x; e < kThreads * W; e += kThreads) {
        const int c = e / W, f = e % W;
        const index_t column = j0 + index_t{c} * V + v;
        if (f < freqs && column < shape.nm) y[column * shape.nw + w0 + f] = tile[c][f];
      }
    }
  }
}

unsigned grid(index_t blocks) {
  if (blocks > 0x7fffffff)
    throw Error(
        "batched GEMV: " + std::to_string(blocks) +
        " thread blocks exceed the CUDA grid limit; split the operator over a process grid");
  return static_cast<unsigned>(blocks);
}

constexpr int kRowFrequencies = 2;  // W of the F kernel: two FP64 complex values fill a sector

template <int R, typename TA, typename TX, typename TY>
void launch_rows(const complex_t<TA>* a, const GemvShape& shape, const complex_t<TX>* x,
                 complex_t<TY>* y, int split, stream_t stream) {
  const index_t items =
      (shape.nd + R - 1) / R * ((shape.nw + kRowFrequencies - 1) / kRowFrequencies);
  const index_t per_block = kWarps / split;
  gemv_rows_kernel<R, kRowFrequencies, TA, TX, TY>
      <<<grid((items + per_block - 1) / per_block), kThreads, 0, stream>>>(a, shape, split, x, y);
}

template <int W, typename TA, typename TX, typename TY>
void launch_columns(const complex_t<TA>* a, const GemvShape& shape, const complex_t<TX>* x,
                    complex_t<TY>* y, bool staged, stream_t stream) {
  const index_t columns_per_block = kThreads * kPacket<TA>;
  const unsigned blocks =
      grid((shape.nm + columns_per_block - 1) / columns_per_block * ((shape.nw + W - 1) / W));
  if (staged)
    gemv_columns_kernel<W, true, TA, TX, TY><<<blocks, kThreads, 0, stream>>>(a, shape, x, y);
  else
    gemv_columns_kernel<W, false, TA, TX, TY><<<blocks, kThreads, 0, stream>>>(a, shape, x, y);
}

// Each split segment should stream at least this many columns.
constexpr index_t kMinSegment = 256;

}  // namespace

std::vector<GemvTuning> gemv_tunings(bool adjoint, const GemvShape& shape, int sms) {
  // A multiprocessor holds 64 warps; the kernels are memory-bound, so the estimate wants about
  // two full waves of warps (F) or of blocks (F*) to hide the latency of the loads.
  const index_t resident_warps = index_t{sms} * 64;
  std::vector<GemvTuning> tunings;
  if (!adjoint) {
    // Rows per warp: all of them up to 4; beyond, 4 or 8 (8 halves the x traffic per byte of
    // F^ and wastes at most 7 clamped rows per tile).
    const std::vector<int> row_choices = shape.nd <= 2   ? std::vector<int>{2}
                                         : shape.nd <= 4 ? std::vector<int>{4}
                                         : shape.nd <= 8 ? std::vector<int>{8, 4}
                                                         : std::vector<int>{4, 8};
    const index_t items = (shape.nd + row_choices[0] - 1) / row_choices[0] * ((shape.nw + 1) / 2);
    int best = 1;
    while (best < 8 && items * best < 2 * resident_warps && shape.nm >= 2 * best * kMinSegment)
      best *= 2;
    tunings.push_back({.rows = row_choices[0], .split = best});
    for (int rows : row_choices)
      for (int split : {1, 2, 4, 8})
        if (!(rows == row_choices[0] && split == best) && shape.nm >= split * kMinSegment)
          tunings.push_back({.rows = rows, .split = split});
  } else {
    // More frequencies per thread when a thread has few rows to walk, while the blocks still
    // fill the device four times over.
    const index_t column_blocks = (shape.nm + kThreads - 1) / kThreads;
    const auto blocks = [&](int freqs) { return column_blocks * ((shape.nw + freqs - 1) / freqs); };
    int best = 2;
    while (best < 8 && shape.nd * best < 64 && blocks(2 * best) >= 4 * resident_warps / kWarps)
      best *= 2;
    tunings.push_back({.freqs = best});
    for (int freqs : {2, 4, 8})
      for (bool staged : {false, true})
        if (freqs != best || staged) tunings.push_back({.freqs = freqs, .staged = staged});
  }
  return tunings;
}

std::string describe(const GemvTuning& tuning, bool adjoint) {
  if (adjoint && tuning.into_inverse_fft) return "into inverse FFT";
  return adjoint ? "freqs=" + std::to_string(tuning.freqs) + (tuning.staged ? " staged" : "")
                 : "rows=" + std::to_string(tuning.rows) + " split=" + std::to_string(tuning.split);
}

/// Calls f(std::integral_constant<int, value>) if value is one of Options; else refuses it,
/// naming the tuning parameter.
template <int... Options, typename F>
void with_option(int value, const char* name, F&& f) {
  if (!((value == Options && (f(std::integral_constant<int, Options>{}), true)) || ...)) {
    std::string allowed;
    ((allowed += (allowed.empty() ? "" : ", ") + std::to_string(Options)), ...);
    throw Error(std::string("batched GEMV: ") + name + "=" + std::to_string(value) +
                " is not one of " + allowed);
  }
}

template <typename TA, typename TX, typename TY>
void gemv_fused(bool adjoint, const complex_t<TA>* a, const GemvShape& shape,
                const complex_t<TX>* x, complex_t<TY>* y, const GemvTuning& tuning,
                stream_t stream) {
  if (adjoint) {
    with_option<2, 4, 8>(tuning.freqs, "freqs", [&](auto freqs) {
      launch_columns<decltype(freqs)::value, TA, TX, TY>(a, shape, x, y, tuning.staged, stream);
    });
  } else {
    with_option<1, 2, 4, 8>(tuning.split, "split", [](auto) {});
    with_option<2, 4, 8>(tuning.rows, "rows", [&](auto rows) {
      launch_rows<decltype(rows)::value, TA, TX, TY>(a, shape, x, y, tuning.split, stream);
    });
  }
  SHIFTOP_CHECK_LAUNCH();
}

#define SHIFTOP_INSTANTIATE_GEMV(TA, TX, TY)                                                    \
  template void gemv_fused<TA, TX, TY>(bool, const complex_t<TA>*, const GemvShape&,            \
                                       const complex_t<TX>*, complex_t<TY>*, const GemvTuning&, \
                                       stream_t);
#define SHIFTOP_OVER_Y(TA, TX) \
  SHIFTOP_INSTANTIATE_GEMV(TA, TX, float) SHIFTOP_INSTANTIATE_GEMV(TA, TX, double)
#define SHIFTOP_OVER_X(TA) SHIFTOP_OVER_Y(TA, float) SHIFTOP_OVER_Y(TA, double)
SHIFTOP_OVER_X(float)
SHIFTOP_OVER_X(double)
#undef SHIFTOP_OVER_X
#undef SHIFTOP_OVER_Y
#undef SHIFTOP_INSTANTIATE_GEMV

}  // namespace shiftop::cuda
