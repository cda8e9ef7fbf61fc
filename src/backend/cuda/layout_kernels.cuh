// The memory phases of an apply on the GPU, each fused with its precision cast (mixed-precision
// paper, section 3.2): zero-padding (phase 1), unpadding (phase 5) and the tiled transposes
// between block-major ([block][frequency]) and frequency-major ([frequency][block]) spectra.
#pragma once

#include <cstdint>

#include "backend/cuda/complex.cuh"
#include "backend/cuda/runtime.cuh"

namespace shiftop::cuda {

using index_t = std::int64_t;

/// padded[s][t] = T2(T1(x[s][t])) for t < nt and each of `series` series; padded has rows of
/// `length` (even, >= 2*nt) and their tails (the zero padding) are never written.
template <typename T1, typename T2>
void pad_and_cast(const double* x, T2* padded, index_t series, index_t nt, index_t length,
                  stream_t stream);

/// y[s][t] = double(T5(padded[s][t])) for t < nt; padded rows are `ld` reals apart.
template <typename T4, typename T5>
void unpad_and_cast(const T4* padded, index_t ld, double* y, index_t series, index_t nt,
                    stream_t stream);

/// Strides of a block-major spectrum array B[p][q][w] (w fastest) and a frequency-major array
/// W[w][p][q] (q fastest): element (p, q, w) is B[p*block_p + q*nw + w] and
/// W[w*freq_w + p*freq_p + q].
struct TransposeShape {
  index_t p = 1, q = 1, nw = 1;
  index_t block_p = 0, freq_w = 0, freq_p = 0;
};

/// Block-major src -> frequency-major dst = scale * src (conjugated if `conj`), cast to TD.
/// 32x32 tiles in shared memory keep both the reads and the writes coalesced.
template <typename TS, typename TD>
void to_frequency_major(const complex_t<TS>* src, complex_t<TD>* dst, const TransposeShape& shape,
                        bool conj, double scale, stream_t stream);

/// Frequency-major src -> block-major dst, cast to TD, conjugated if `conj`.
template <typename TS, typename TD>
void from_frequency_major(const complex_t<TS>* src, complex_t<TD>* dst, const TransposeShape& shape,
                          bool conj, stream_t stream);

/// series[s] = the first column of the circulant embedding of kernel s, of length `length`
/// >= 2*nt-1 (Venkat et al., eq. (8), where length = 2*nt): col[s][0..nt), zeros, then the last
/// nt-1 entries row[s][nt-1..1] (the lags -(nt-1)..-1), or zeros when `row` is null
/// (block-triangular F).
void circulant_columns(const double* col, const double* row, double* series, index_t count,
                       index_t nt, index_t length, stream_t stream);

/// to[k] = To(from[k]) for `count` values, rounded to nearest when narrowing (as on the host):
/// the FP32 copy of F^ and the distributed plan's conversions. Defined for double -> float and
/// float -> double.
template <typename From, typename To>
void cast(const From* from, To* to, index_t count, stream_t stream);

}  // namespace shiftop::cuda
