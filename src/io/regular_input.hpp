// The check every reader makes before it opens an input: that the path is a regular file (or, for
// an operator, an FFTMatvec directory), so that a FIFO never blocks a read and a directory is not
// called missing. Its own file, without HDF5, so that the parser fuzzers (tests/fuzz) link it.
#pragma once

#include <string>
#include <string_view>

namespace shiftop::io {

/// Throws shiftop::Error naming what `path` is when it exists but is not a regular file (after
/// links): "<path>: is a FIFO (named pipe), not a file: expected <expected>", or a directory
/// (unless `directory_allowed`), a socket, a character or block device. Readers call it before
/// they open, so that a FIFO never blocks a read and a directory is not called missing. A missing
/// path passes: the reader's own "no such file" names it.
void require_regular_input(const std::string& path, std::string_view expected,
                           bool directory_allowed = false);

}  // namespace shiftop::io
