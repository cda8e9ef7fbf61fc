// Reading part of a 3-D .npy array without reading the rest: the slice of an operator's kernels
// that one process of a distributed run needs.
#pragma once

#include <string>
#include <vector>

#include "shiftop/io/npy.hpp"

namespace shiftop::io {

/// Reads a[r0:r1, c0:c1, :] of the 3-D float64 or float32 array of the .npy file `path`, whose
/// header is `header` (from read_npy_header), as float64 in C order. Throws shiftop::Error if the
/// file is shorter than the header says or a read fails.
std::vector<double> read_npy_slice(const std::string& path, const NpyHeader& header, index_t r0,
                                   index_t r1, index_t c0, index_t c1);

}  // namespace shiftop::io
