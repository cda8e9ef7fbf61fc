#include <algorithm>
#include <string>
#include <type_traits>

#include "backend/cuda/layout_kernels.cuh"
#include "backend/cuda/runtime.cuh"

namespace shiftop::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kTile = 32;  // the transposes' tile width (a tile size, not the warp size)
constexpr int kTileRows = 8;

unsigned grid_for(index_t work) {
  const index_t blocks = (work + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<index_t>(blocks, 1, index_t{1} << 20));
}

template <typename T>
using pair_t = complex_t<T>;  // two consecutive reals: float2 or double2

// Phases 1 and 5: out[s][t] = To(Mid(in[s][t])) for t < nt of each of `series` rows, the rows
// ld_in and ld_out apart (pad: Nt -> L, zero tails untouched; unpad: 2(L/2+1) -> Nt). Two
// consecutive time steps per thread (16-byte loads of FP64) when rows have even length and
// stride, so that every pair is aligned; otherwise one element per thread.
template <typename From, typename Mid, typename To, int V>
__global__ void copy_rows_kernel(const From* __restrict__ in, index_t ld_in, To* __restrict__ out,
                                 index_t ld_out, index_t series, index_t nt) {
  const index_t per_row = nt / V, total = series * per_row;
  for (index_t k = blockIdx.x * index_t{blockDim.x} + threadIdx.x; k < total;
       k += index_t{gridDim.x} * blockDim.x) {
    const index_t s = k / per_row, t = (k - s * per_row) * V;
    if constexpr (V == 2) {
      const pair_t<From> v = *reinterpret_cast<const pair_t<From>*>(in + s * ld_in + t);
      *reinterpret_cast<pair_t<To>*>(out + s * ld_out + t) = {
          static_cast<To>(static_cast<Mid>(v.x)), static_cast<To>(static_cast<Mid>(v.y))};
    } else {
      out[s * ld_out + t] = static_cast<To>(static_cast<Mid>(in[s * ld_in + t]));
    }
  }
}

// Thread block (x: tile of q, y: tile of w, z: p). The block-major side is accessed along w and
// the frequency-major side along q, kTile consecutive elements per row of threads on both sides;
// the +1 column of the tile avoids shared-memory bank conflicts.
template <bool ToFrequencyMajor, typename TS, typename TD>
__global__ void transpose_kernel(const complex_t<TS>* __restrict__ src,
                                 complex_t<TD>* __restrict__ dst, TransposeShape shape, TD sign,
                                 TD scale) {
  __shared__ complex_t<TD> tile[kTile][kTile + 1];
  const index_t q0 = index_t{blockIdx.x} * kTile, w0 = index_t{blockIdx.y} * kTile;
  const index_t p = blockIdx.z;
  const auto block_major = [&](index_t q, index_t w) {
    return p * shape.block_p + q * shape.nw + w;
  };
  const auto frequency_major = [&](index_t q, index_t w) {
    return w * shape.freq_w + p * shape.freq_p + q;
  };
  // Each side is read and written along its contiguous index: w block-major, q frequency-major.
  for (int r = threadIdx.y; r < kTile; r += kTileRows) {
    const index_t q = q0 + (ToFrequencyMajor ? r : threadIdx.x);
    const index_t w = w0 + (ToFrequencyMajor ? threadIdx.x : r);
    if (q < shape.q && w < shape.nw) {
      const complex_t<TD> v =
          to_complex<TD>(src[ToFrequencyMajor ? block_major(q, w) : frequency_major(q, w)]);
      complex_t<TD>& slot = ToFrequencyMajor ? tile[r][threadIdx.x] : tile[threadIdx.x][r];
      if constexpr (ToFrequencyMajor)
        slot = {v.x * scale, v.y * scale * sign};
      else
        slot = {v.x, v.y * sign};
    }
  }
  __syncthreads();
  for (int r = threadIdx.y; r < kTile; r += kTileRows) {
    const index_t q = q0 + (ToFrequencyMajor ? threadIdx.x : r);
    const index_t w = w0 + (ToFrequencyMajor ? r : threadIdx.x);
    if (q < shape.q && w < shape.nw) {
      if constexpr (ToFrequencyMajor)
        dst[frequency_major(q, w)] = tile[threadIdx.x][r];
      else
        dst[block_major(q, w)] = tile[r][threadIdx.x];
    }
  }
}

template <typename From, typename To>
__global__ void cast_kernel(const From* __restrict__ from, To* __restrict__ to, index_t count) {
  for (index_t k = blockIdx.x * index_t{blockDim.x} + threadIdx.x; k < count;
       k += index_t{gridDim.x} * blockDim.x)
    to[k] = static_cast<To>(from[k]);  // round to nearest, as on the host
}

__global__ void circulant_kernel(const double* __restrict__ col, const double* __restrict__ row,
                                 double* __restrict__ series, index_t count, index_t nt,
                                 index_t length) {
  for (index_t k = blockIdx.x * index_t{blockDim.x} + threadIdx.x; k < count * length;
       k += index_t{gridDim.x} * blockDim.x) {
    const index_t s = k / length, t = k - s * length;
    double v = 0.0;
    if (t < nt)
      v = col[s * nt + t];
    else if (t > length - nt && row != nullptr)
      v = row[s * nt + length - t];
    series[k] = v;
  }
}

dim3 transpose_grid(const TransposeShape& shape) {
  // CUDA limits the y and z grid dimensions to 65535.
  if (shape.p > 65535 || (shape.nw + kTile - 1) / kTile > 65535)
    throw Error("spectrum transpose: " + std::to_string(shape.p) + " series of " +
                std::to_string(shape.nw) + " frequencies exceed the CUDA grid limits");
  return dim3(static_cast<unsigned>((shape.q + kTile - 1) / kTile),
              static_cast<unsigned>((shape.nw + kTile - 1) / kTile),
              static_cast<unsigned>(shape.p));
}

}  // namespace

/// Calls launch(std::integral_constant<int, V>, threads) with V = 2 values per thread when
/// `pairs` holds (8- or 16-byte accesses), else V = 1: the element-wise phases over `count` values.
template <typename Launch>
void by_pairs(bool pairs, index_t count, Launch&& launch) {
  if (pairs)
    launch(std::integral_constant<int, 2>{}, count / 2);
  else
    launch(std::integral_constant<int, 1>{}, count);
  SHIFTOP_CHECK_LAUNCH();
}

template <typename T1, typename T2>
void pad_and_cast(const double* x, T2* padded, index_t series, index_t nt, index_t length,
                  stream_t stream) {
  by_pairs(nt % 2 == 0, series * nt, [&](auto v, index_t threads) {
    copy_rows_kernel<double, T1, T2, decltype(v)::value>
        <<<grid_for(threads), kThreads, 0, stream>>>(x, nt, padded, length, series, nt);
  });
}

template <typename T4, typename T5>
void unpad_and_cast(const T4* padded, index_t ld, double* y, index_t series, index_t nt,
                    stream_t stream) {
  by_pairs(nt % 2 == 0 && ld % 2 == 0, series * nt, [&](auto v, index_t threads) {
    copy_rows_kernel<T4, T5, double, decltype(v)::value>
        <<<grid_for(threads), kThreads, 0, stream>>>(padded, ld, y, nt, series, nt);
  });
}

template <typename TS, typename TD>
void to_frequency_major(const complex_t<TS>* src, complex_t<TD>* dst, const TransposeShape& shape,
                        bool conj, double scale, stream_t stream) {
  transpose_kernel<true, TS, TD><<<transpose_grid(shape), dim3(kTile, kTileRows), 0, stream>>>(
      src, dst, shape, conj ? TD(-1) : TD(1), static_cast<TD>(scale));
  SHIFTOP_CHECK_LAUNCH();
}

template <typename TS, typename TD>
void from_frequency_major(const complex_t<TS>* src, complex_t<TD>* dst, const TransposeShape& shape,
                          bool conj, stream_t stream) {
  transpose_kernel<false, TS, TD><<<transpose_grid(shape), dim3(kTile, kTileRows), 0, stream>>>(
      src, dst, shape, conj ? TD(-1) : TD(1), TD(1));
  SHIFTOP_CHECK_LAUNCH();
}

void circulant_columns(const double* col, const double* row, double* series, index_t count,
                       index_t nt, index_t length, stream_t stream) {
  circulant_kernel<<<grid_for(count * length), kThreads, 0, stream>>>(col, row, series, count, nt,
                                                                      length);
  SHIFTOP_CHECK_LAUNCH();
}

template <typename From, typename To>
void cast(const From* from, To* to, index_t count, stream_t stream) {
  if (count <= 0) return;
  cast_kernel<From, To><<<grid_for(count), kThreads, 0, stream>>>(from, to, count);
  SHIFTOP_CHECK_LAUNCH();
}

template void cast<double, float>(const double*, float*, index_t, stream_t);
template void cast<float, double>(const float*, double*, index_t, stream_t);

// Every precision combination the five phases can ask for.
#define SHIFTOP_PAIRS(X) X(float, float) X(float, double) X(double, float) X(double, double)
#define SHIFTOP_INSTANTIATE(A, B)                                                             \
  template void pad_and_cast<A, B>(const double*, B*, index_t, index_t, index_t, stream_t);   \
  template void unpad_and_cast<A, B>(const A*, index_t, double*, index_t, index_t, stream_t); \
  template void to_frequency_major<A, B>(const complex_t<A>*, complex_t<B>*,                  \
                                         const TransposeShape&, bool, double, stream_t);      \
  template void from_frequency_major<A, B>(const complex_t<A>*, complex_t<B>*,                \
                                           const TransposeShape&, bool, stream_t);
SHIFTOP_PAIRS(SHIFTOP_INSTANTIATE)
#undef SHIFTOP_INSTANTIATE
#undef SHIFTOP_PAIRS

}  // namespace shiftop::cuda
