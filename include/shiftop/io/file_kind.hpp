// Whether a file holds an operator or a vector, for commands that accept either (convert, info).
#pragma once

#include <string>
#include <string_view>

namespace shiftop::io {

enum class FileKind { Operator, Vector };

/// A directory is an FFTMatvec operator; an .npy file is an operator if it is 3-D and a vector
/// if 2-D (a 3-D .npy may also be a batch of vectors: `prefer` decides); an HDF5 file is an
/// operator if it has dataset "kernels" and a vector if it has "vector" or "vec". Throws
/// shiftop::Error naming what was found otherwise.
FileKind detect_file_kind(const std::string& path, FileKind prefer = FileKind::Operator);

/// Throws shiftop::Error naming what `path` is when it exists but is not a regular file (after
/// links): "<path>: is a FIFO (named pipe), not a file: expected <expected>", or a directory
/// (unless `directory_allowed`), a socket, a character or block device. Readers call it before
/// they open, so that a FIFO never blocks a read and a directory is not called missing. A missing
/// path passes: the reader's own "no such file" names it.
void require_regular_input(const std::string& path, std::string_view expected,
                           bool directory_allowed = false);

}  // namespace shiftop::io
