// The text file `<dir>/binary/meta_adj` that describes an FFTMatvec matrix directory: nine lines,
//   Nd, Nm, Nt, file-name prefix (e.g. "adj/vec_"), extension (".h5"), reindexed flag,
//   p2q flag (0: parameter-to-observable, 1: parameter-to-quantity-of-interest),
//   reverse-dof flag, checksum (0: none).
// Block row i of the operator is stored in `<dir>/binary/<prefix><i as 6 digits><extension>`.
// What the flags mean, and which values shiftop reads, is in fftmatvec_format.hpp.
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
  bool reindexed = true;
  /// Parameter-to-quantity-of-interest (true) or parameter-to-observable (false).
  bool p2q = false;
  bool reverse_dof = true;
  /// Stored in every block row (and parameter vector) when not 0; a C int, as FFTMatvec reads it.
  std::int64_t checksum = 0;
};

/// Parses the nine lines of a meta_adj file. Whitespace around a value and trailing empty lines
/// are tolerated; anything else that is not exactly the nine values (a missing or extra line, a
/// non-numeric size or flag, a flag other than 0/1, a size that is not positive or above
/// kMaxAttributeCount, Nd*Nm*Nt too large to index, a prefix that is not a relative path below
/// binary/, an extension other than ".h5" (the only one FFTMatvec reads), a checksum outside the
/// range of a C int) throws shiftop::Error naming `name`, the line number and what was expected.
/// Never reads outside `text`, whatever its bytes.
MetaAdj parse_meta_adj(std::string_view text, std::string_view name);

/// The nine lines of `meta` as FFTMatvec writes them, each ending in '\n'.
std::string format_meta_adj(const MetaAdj& meta);

/// Path of block row `row` relative to the directory that contains `binary/`:
/// "binary/<prefix><row as 6 digits><extension>".
std::string block_row_path(const MetaAdj& meta, index_t row);

}  // namespace shiftop::io
