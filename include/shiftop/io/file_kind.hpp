// Whether a file holds a block Toeplitz operator, a vector or a block-circulant operator, for the
// commands that accept any of them (convert, info).
#pragma once

#include <string>
#include <string_view>

namespace shiftop::io {

/// Operator: a block Toeplitz operator (operator_file.hpp); Vector: vectors (vector_file.hpp);
/// Circulant: a sparse block-circulant operator (circulant_file.hpp).
enum class FileKind { Operator, Vector, Circulant };

/// A directory is an FFTMatvec operator; an .npy file is an operator if it is 3-D and a vector
/// if 2-D (a 3-D .npy may also be a batch of vectors: `prefer` decides); an HDF5 file is an
/// operator if it has dataset "kernels", a vector if it has "vector" or "vec", and a
/// block-circulant operator if it has "indptr" (the CSR of its first block row). Throws
/// shiftop::Error naming what was found otherwise.
FileKind detect_file_kind(const std::string& path, FileKind prefer = FileKind::Operator);

}  // namespace shiftop::io
