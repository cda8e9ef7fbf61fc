#include <algorithm>
#include <cstdint>
#include <string>

#include "backend/cuda/circulant_spmm.cuh"
#include "shiftop/core/error_type.hpp"

namespace shiftop::cuda {
namespace {

constexpr int kTile = 32;  // the layout transposes' tile width (a tile size, not the warp size)
constexpr int kTileRows = 8;
// Nonzeros staged in shared memory at a time: (offset, value) pairs loaded by the whole thread
// block with coalesced reads, then read as broadcasts by every thread (paper, section 4: "each
// element of A is read simultaneously by all threads in a block").
constexpr int kChunk = 256;
constexpr int kMaxThreads = 512;
// Threads a row's product keeps busy at least: below it, the nonzeros are split into slices.
constexpr int kMinThreads = 256;

// How a thread block covers the k*R outputs of one row: `width` threads over outputs, each with
// `per_thread` accumulators `width` apart (outputs t, t + width, ...), and `slices` groups of
// `width` threads that split the row's nonzeros when k*R is small (k = 1, 2, 3), their partial
// sums added through shared memory. k = 150 and R = 1 gives 160 threads of one accumulator (10
// idle): the paper's "as many threads as blocks" rounded up to whole warps.
struct RowConfig {
  int per_thread = 1, width = kWarpSize, slices = 1;
  int threads() const { return width * slices; }
};

int round_up(index_t value, int multiple) {
  return static_cast<int>((value + multiple - 1) / multiple * multiple);
}

RowConfig row_config(index_t kr) {
  RowConfig config;
  config.per_thread = kr <= kMinThreads ? 1 : kr <= 2 * kMinThreads ? 2 : 4;
  config.width =
      std::min(round_up((kr + config.per_thread - 1) / config.per_thread, kWarpSize), kMaxThreads);
  if (config.per_thread == 1 && config.width < kMinThreads)
    config.slices = kMinThreads / config.width;
  return config;
}

void check_sizes(index_t k, index_t nrhs) {
  // The launches put k*R/32 tiles on grid.y and k*R outputs in an int. (Messages without fmt:
  // nvcc cannot evaluate its compile-time format checks.)
  constexpr index_t kMaxOutputs = index_t{65535} * kTile;
  if (k < 1 || nrhs < 1 || k * nrhs > kMaxOutputs)
    throw Error("circulant product on the GPU: k*nrhs = " + std::to_string(k * nrhs) +
                " (k=" + std::to_string(k) + ", nrhs=" + std::to_string(nrhs) + ") is not in [1, " +
                std::to_string(kMaxOutputs) + "]; use a smaller max_rhs");
}

template <typename T>
__global__ void duplicate_kernel(const T* __restrict__ blocks, T* __restrict__ dup, index_t rows,
                                 int k, int nrhs) {
  __shared__ T tile[kTile][kTile + 1];
  const int kr = k * nrhs;
  const index_t row0 = index_t{blockIdx.x} * kTile;
  const int p0 = static_cast<int>(blockIdx.y) * kTile;
  // Read along the rows of each input block, write along (j, s) of each row of D.
  for (int r = threadIdx.y; r < kTile; r += kTileRows) {
    const int p = p0 + r;  // p = j*R + s
    const index_t row = row0 + threadIdx.x;
    if (p < kr && row < rows)
      tile[r][threadIdx.x] = blocks[(index_t{p % nrhs} * k + p / nrhs) * rows + row];
  }
  __syncthreads();
  for (int r = threadIdx.y; r < kTile; r += kTileRows) {
    const index_t row = row0 + r;
    const int p = p0 + threadIdx.x;
    if (p < kr && row < rows) {
      const T v = tile[threadIdx.x][r];
      T* d = dup + row * 2 * kr + p;
      d[0] = v;   // column j of X^
      d[kr] = v;  // and its copy, column j + k (eq. 5)
    }
  }
}

template <typename T>
__global__ void block_major_kernel(const T* __restrict__ out, T* __restrict__ blocks, index_t rows,
                                   int k, int nrhs) {
  __shared__ T tile[kTile][kTile + 1];
  const int kr = k * nrhs;
  const index_t row0 = index_t{blockIdx.x} * kTile;
  const int p0 = static_cast<int>(blockIdx.y) * kTile;
  for (int r = threadIdx.y; r < kTile; r += kTileRows) {
    const index_t row = row0 + r;
    const int p = p0 + threadIdx.x;  // p = i*R + s
    if (p < kr && row < rows) tile[r][threadIdx.x] = out[row * kr + p];
  }
  __syncthreads();
  for (int r = threadIdx.y; r < kTile; r += kTileRows) {
    const int p = p0 + r;
    const index_t row = row0 + threadIdx.x;
    if (p < kr && row < rows)
      blocks[(index_t{p % nrhs} * k + p / nrhs) * rows + row] = tile[threadIdx.x][r];
  }
}

template <typename T>
void launch_layout(bool duplicate, const T* in, T* out, index_t rows, index_t k, index_t nrhs,
                   stream_t stream) {
  check_sizes(k, nrhs);
  const dim3 grid(static_cast<unsigned>((rows + kTile - 1) / kTile),
                  static_cast<unsigned>((k * nrhs + kTile - 1) / kTile));
  const dim3 block(kTile, kTileRows);
  if (duplicate)
    duplicate_kernel<T>
        <<<grid, block, 0, stream>>>(in, out, rows, static_cast<int>(k), static_cast<int>(nrhs));
  else
    block_major_kernel<T>
        <<<grid, block, 0, stream>>>(in, out, rows, static_cast<int>(k), static_cast<int>(nrhs));
  SHIFTOP_CHECK_LAUNCH();
}

// Fig. 6 of the paper with the nonzeros staged in shared memory and D read through the read-only
// path (__ldg): thread t of a row accumulates outputs t, t + width, ... over the row's nonzeros,
// each nonzero adding v times the k*R contiguous values of D that start at its offset. Gather
// reads the value through `source` (C^T's transposed index). Accumulation in T.
template <typename T, bool Gather, int PerThread>
__global__ void __launch_bounds__(kMaxThreads)
    spmm_kernel(SpmmRows<T> a, const T* __restrict__ dup, T* __restrict__ out, int kr, int nrhs,
                int width, int slices) {
  __shared__ std::uint32_t s_offset[kChunk];
  __shared__ T s_value[kChunk];
  __shared__ T s_partial[kMinThreads];
  const index_t row = blockIdx.x;
  const index_t begin = a.indptr[row], end = a.indptr[row + 1];
  const int lane = static_cast<int>(threadIdx.x) % width;
  const int slice = static_cast<int>(threadIdx.x) / width;
  T* out_row = out + row * kr;
  for (int tile = 0; tile < kr; tile += PerThread * width) {
    const int first = tile + lane;
    T acc[PerThread];
#pragma unroll
    for (int p = 0; p < PerThread; ++p)
      acc[p] = T(0);
    for (index_t chunk = begin; chunk < end; chunk += kChunk) {
      const int n = static_cast<int>(min(index_t{kChunk}, end - chunk));
      __syncthreads();  // the previous chunk is consumed
      for (int e = threadIdx.x; e < n; e += blockDim.x) {
        s_offset[e] = a.offset[chunk + e];
        s_value[e] = Gather ? __ldg(a.values + a.source[chunk + e]) : a.values[chunk + e];
      }
      __syncthreads();
#pragma unroll 4
      for (int e = slice; e < n; e += slices) {
        const T v = s_value[e];
        const T* x = dup + index_t{s_offset[e]} * nrhs + first;
#pragma unroll
        for (int p = 0; p < PerThread; ++p)
          if (first + p * width < kr) acc[p] += v * __ldg(x + p * width);
      }
    }
    if (slices > 1) {  // then PerThread == 1 and kr <= width: this is the only tile
      __syncthreads();
      s_partial[threadIdx.x] = acc[0];
      __syncthreads();
      if (slice == 0)
        for (int q = 1; q < slices; ++q)
          acc[0] += s_partial[q * width + lane];
    }
    if (slice == 0) {
#pragma unroll
      for (int p = 0; p < PerThread; ++p)
        if (first + p * width < kr) out_row[first + p * width] = acc[p];
    }
  }
}

// The Atomic transpose: row r of A scatters into the rows l of x that its nonzeros name. The
// (target row, source start) pairs are computed once per nonzero while staging.
template <typename T>
__global__ void __launch_bounds__(kMaxThreads)
    scatter_kernel(SpmmRows<T> a, const T* __restrict__ dup, T* __restrict__ x, int k, int nrhs,
                   int width, int slices) {
  __shared__ index_t s_target[kChunk];
  __shared__ index_t s_start[kChunk];
  __shared__ T s_value[kChunk];
  const index_t row = blockIdx.x;
  const index_t begin = a.indptr[row], end = a.indptr[row + 1];
  const int kr = k * nrhs;
  const int lane = static_cast<int>(threadIdx.x) % width;
  const int slice = static_cast<int>(threadIdx.x) / width;
  for (index_t chunk = begin; chunk < end; chunk += kChunk) {
    const int n = static_cast<int>(min(index_t{kChunk}, end - chunk));
    __syncthreads();
    for (int e = threadIdx.x; e < n; e += blockDim.x) {
      const std::uint32_t o = a.offset[chunk + e];  // l*2k + d
      const index_t l = o / (2 * k), d = o - l * 2 * k;
      s_target[e] = l * kr;
      s_start[e] = (row * 2 * k + k - d) * nrhs;  // Y^[r][k - d]
      s_value[e] = a.values[chunk + e];
    }
    __syncthreads();
    for (int e = slice; e < n; e += slices) {
      const T v = s_value[e];
      const T* y = dup + s_start[e];
      T* target = x + s_target[e];
      for (int t = lane; t < kr; t += width)
        atomicAdd(target + t, v * __ldg(y + t));
    }
  }
}

}  // namespace

template <typename T>
void duplicate_rows(const T* blocks, T* dup, index_t rows, index_t k, index_t nrhs,
                    stream_t stream) {
  launch_layout<T>(true, blocks, dup, rows, k, nrhs, stream);
}

template <typename T>
void to_block_major(const T* out, T* blocks, index_t rows, index_t k, index_t nrhs,
                    stream_t stream) {
  launch_layout<T>(false, out, blocks, rows, k, nrhs, stream);
}

template <typename T>
void circulant_spmm(const SpmmRows<T>& a, const T* dup, T* out, index_t k, index_t nrhs,
                    stream_t stream) {
  check_sizes(k, nrhs);
  if (a.rows == 0) return;
  const index_t kr = k * nrhs;
  const RowConfig c = row_config(kr);
  const auto launch = [&](auto kernel) {
    kernel<<<static_cast<unsigned>(a.rows), c.threads(), 0, stream>>>(
        a, dup, out, static_cast<int>(kr), static_cast<int>(nrhs), c.width, c.slices);
  };
  const bool gather = a.source != nullptr;
  if (c.per_thread == 1)
    gather ? launch(spmm_kernel<T, true, 1>) : launch(spmm_kernel<T, false, 1>);
  else if (c.per_thread == 2)
    gather ? launch(spmm_kernel<T, true, 2>) : launch(spmm_kernel<T, false, 2>);
  else
    gather ? launch(spmm_kernel<T, true, 4>) : launch(spmm_kernel<T, false, 4>);
  SHIFTOP_CHECK_LAUNCH();
}

template <typename T>
void circulant_scatter(const SpmmRows<T>& a, const T* dup, T* x, index_t k, index_t nrhs,
                       stream_t stream) {
  check_sizes(k, nrhs);
  if (a.rows == 0) return;
  RowConfig c = row_config(k * nrhs);
  c.width = std::min(c.width * c.per_thread, kMaxThreads);  // no accumulators: one pass of width
  scatter_kernel<T><<<static_cast<unsigned>(a.rows), c.threads(), 0, stream>>>(
      a, dup, x, static_cast<int>(k), static_cast<int>(nrhs), c.width, c.slices);
  SHIFTOP_CHECK_LAUNCH();
}

#define SHIFTOP_CIRCULANT_SPMM(T)                                                                \
  template void duplicate_rows<T>(const T*, T*, index_t, index_t, index_t, stream_t);            \
  template void to_block_major<T>(const T*, T*, index_t, index_t, index_t, stream_t);            \
  template void circulant_spmm<T>(const SpmmRows<T>&, const T*, T*, index_t, index_t, stream_t); \
  template void circulant_scatter<T>(const SpmmRows<T>&, const T*, T*, index_t, index_t, stream_t);
SHIFTOP_CIRCULANT_SPMM(float)
SHIFTOP_CIRCULANT_SPMM(double)
#undef SHIFTOP_CIRCULANT_SPMM

}  // namespace shiftop::cuda
