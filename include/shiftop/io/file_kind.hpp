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

}  // namespace shiftop::io
