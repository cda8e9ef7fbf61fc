// The GPU kernels of a sparse block-circulant product (circ/cuda/engine.cuh; Romero et al.,
// sparse-block-circulant-spmv, section 4 and eqs. 3-5). A product is three launches on one stream:
//   duplicate_rows:  block-major input [s][j][row] -> the duplicated operand D[row][j2][s],
//                    j2 < 2k, D[row][j2][s] = input[s][j2 mod k][row] (X^ = (X X) of eq. 5);
//   circulant_spmm (or circulant_scatter for the transpose's Atomic method):
//                    out[row][i][s] = sum over the row's nonzeros of v * D[.][start + i][s];
//   to_block_major:  out [row][i][s] -> block-major [s][i][row].
// In D and out every row holds its k (or 2k) values times the R right-hand sides of the group
// contiguously, so a nonzero whose k values start at `offset` (circ/layout.hpp, in units of R
// values) reads the k*R contiguous values D[offset*R ...]: one coalesced run per nonzero.
#pragma once

#include <cstdint>

#include "backend/cuda/runtime.cuh"

namespace shiftop::cuda {

using index_t = std::int64_t;

/// dup[row][j2][s] = blocks[s][j2 mod k][row] for row < rows, j2 < 2k, s < nrhs.
template <typename T>
void duplicate_rows(const T* blocks, T* dup, index_t rows, index_t k, index_t nrhs,
                    stream_t stream);

/// blocks[s][i][row] = out[row][i][s] for row < rows, i < k, s < nrhs.
template <typename T>
void to_block_major(const T* out, T* blocks, index_t rows, index_t k, index_t nrhs,
                    stream_t stream);

/// The rows of a product: CSR-like offsets (rows+1) into `offset` and the values. With `source`
/// null, nonzero e has value values[e]; otherwise values[source[e]] (C^T's transposed index reads
/// A's own values).
template <typename T>
struct SpmmRows {
  const std::int64_t* indptr = nullptr;
  const std::uint32_t* offset = nullptr;
  const T* values = nullptr;
  const std::uint32_t* source = nullptr;
  index_t rows = 0;
};

/// out[row][t] = sum_e value_e * dup[offset_e * nrhs + t] for t < k*nrhs, every row written (an
/// empty row gives zeros). One thread block per row, threads over the k*nrhs outputs.
template <typename T>
void circulant_spmm(const SpmmRows<T>& a, const T* dup, T* out, index_t k, index_t nrhs,
                    stream_t stream);

/// The transpose by atomics: for every nonzero of row r of A with offset l*2k + d and value v,
/// x[l][i][s] += v * dup[r][k - d + i][s] (dup = Y^ of mb rows). `x` (nb rows of k*nrhs) must be
/// zero beforehand; the sums' order varies from run to run.
template <typename T>
void circulant_scatter(const SpmmRows<T>& a, const T* dup, T* x, index_t k, index_t nrhs,
                       stream_t stream);

}  // namespace shiftop::cuda
