// FFTMatvec's files (https://github.com/s769/FFTMatvec): the matrix directory and vector files.
//
// Matrix directory DIR (the one that contains binary/): binary/meta_adj (fftmatvec_meta.hpp) and
// one HDF5 file per block row i, binary/<prefix><i, 6 digits>.h5, holding the 1-D float64
// dataset "vec" of length Nm*Nt with vec[j*Nt + t] = f_ij[t] = (F_t)_ij: row i of the first block
// column, parameter block outer, time inner (SOTI). Attributes of "vec": reindex, n_param (= Nm),
// param_steps (= Nt), and checksum when meta_adj's checksum is not 0 (then they must be equal).
// Any other attribute (FFTMatvec ignores them: a solver's prior_solved, grid and time metadata)
// is read with its type into OperatorData::fftmatvec_attributes and written back to each row.
// FFTMatvec then applies the block lower-triangular Toeplitz F exactly as shiftop does: zero-pad
// to 2*Nt, FFT, multiply by F^ (F^^H for the adjoint), inverse FFT, keep the first Nt samples.
//
// The flags. Each block row is computed by one adjoint PDE solve, which runs backwards in time
// and produces its output in the solver's own ordering. FFTMatvec's reader (Matrix::read_meta and
// init_mat_from_file) refuses reindexed = 0 and reverse-dof = 0 (any other value is true) and then
// uses each file as is, as f_ij[0..Nt-1]: flags 1 and 1 say the file was already reordered into
// SOTI and into forward lag order (the time reversal of the adjoint solve undone). FFTMatvec does
// not define the layouts the 0 values would describe, so shiftop refuses them too rather than
// guess a reordering, and writes 1 and 1. A block row's "reindex" attribute must be non-zero for
// the same reason; in a vector file FFTMatvec checks reindex against its SOTI flag (non-zero:
// SOTI, 0: TOSI), and shiftop reads only SOTI. "p2q" (0/1) labels the data
// space: parameter-to-observable or parameter-to-quantity-of-interest; FFTMatvec marks the
// data-space vectors of a p2q map with the attribute qoi = 1 and requires it on their input;
// shiftop matvec also refuses qoi = 1 data for a p2o map, where FFTMatvec ignores the mark.
//
// FFTMatvec's own reader and writer use C int attributes; shiftop writes 32-bit integers (carried
// ones too where they fit) and reads any integer or integral float.
#pragma once

#include "io/format_codec.hpp"
#include "shiftop/io/fftmatvec.hpp"

namespace shiftop::io::fftmatvec {

/// The matrix directory. Reading a slice opens only its block-row files, and reads only the
/// columns [c0*Nt, c1*Nt) of each; writing makes a temporary directory renamed into place, and
/// refuses a general (non-triangular) operator, which FFTMatvec cannot represent; inspecting reads
/// meta_adj and checks which block-row files exist, but reads no values.
extern const OperatorCodec kOperatorCodec;
/// The vector file (one vector, parameter or data space).
extern const VectorCodec kVectorCodec;

}  // namespace shiftop::io::fftmatvec
