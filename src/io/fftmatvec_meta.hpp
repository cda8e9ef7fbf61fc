// The text file `<dir>/binary/meta_adj` that describes an FFTMatvec matrix directory: eight lines
// and an optional ninth,
//   Nd, Nm, Nt, file-name prefix (e.g. "adj/vec_"), extension (".h5"), reindexed flag,
//   p2q flag (0: parameter-to-observable, 1: parameter-to-quantity-of-interest),
//   reverse-dof flag, [checksum (0 or absent: none)].
// Block row i of the operator is stored in `<dir>/binary/<prefix><i as 6 digits><extension>`.
// What the flags mean, and which values shiftop reads, is in fftmatvec_format.hpp; how FFTMatvec
// itself reads the file, line by line, is at the top of fftmatvec_meta.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "shiftop/core/shape.hpp"

namespace shiftop::io {

struct MetaAdj {
  /// Observation blocks (block rows), parameter blocks, time steps.
  index_t nd = 0, nm = 0, nt = 0;
  /// Block-row file names below binary/: a relative path prefix and ".h5".
  std::string prefix, extension;
  /// Any non-zero value of the line is true, as in FFTMatvec's `if (!reindexed)`.
  bool reindexed = true;
  /// Parameter-to-quantity-of-interest (true) or parameter-to-observable (false).
  bool p2q = false;
  bool reverse_dof = true;
  /// Stored in every block row when not 0; a C int, as FFTMatvec reads it; 0 when line 9 is absent.
  std::int64_t checksum = 0;
};

/// Parses meta_adj as FFTMatvec's Matrix::read_meta does (see fftmatvec_meta.cpp): lines split at
/// '\n' as std::getline splits them; lines 1-8 required, line 9 (the checksum) optional, lines
/// after the ninth ignored. A number is what std::stoi reads (leading white space, a sign, digits
/// within a C int) followed by nothing but white space; the prefix and extension are the lines as
/// they are, the extension exactly ".h5". Throws shiftop::Error naming `name`, the line number and
/// what was expected for anything else, and also for what FFTMatvec would misread rather than
/// refuse: a number followed by other text ("1e3", which std::stoi reads as 1), a size that is not
/// positive, Nd*Nm*Nt too large to index, a flag other than 0/1 for p2q, a prefix that is not a
/// relative path below binary/ or holds control characters. Never reads outside `text`.
MetaAdj parse_meta_adj(std::string_view text, std::string_view name);

/// The nine lines of `meta` (the checksum line included, 0 for none), each ending in '\n'.
std::string format_meta_adj(const MetaAdj& meta);

/// Path of block row `row` relative to the directory that contains `binary/`:
/// "binary/<prefix><row as 6 digits><extension>".
std::string block_row_path(const MetaAdj& meta, index_t row);

}  // namespace shiftop::io
