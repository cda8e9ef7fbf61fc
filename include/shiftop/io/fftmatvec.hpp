// What programs need of FFTMatvec's files (https://github.com/s769/FFTMatvec) beyond reading and
// writing them through io::read_operator / io::write_operator (the codecs and the format's full
// description: src/io/fftmatvec_format.hpp): the metadata keys that carry the matrix directory's
// meta_adj fields through other formats, and whether a directory may be replaced by a new one.
#pragma once

#include <string>
#include <string_view>

namespace shiftop::io::fftmatvec {

/// Metadata keys that carry meta_adj's prefix, p2q flag and checksum through other formats, so
/// that FFTMatvec -> shiftop .h5 -> FFTMatvec reproduces the directory.
inline constexpr std::string_view kPrefixKey = "fftmatvec_prefix";
inline constexpr std::string_view kP2qKey = "fftmatvec_p2q";
inline constexpr std::string_view kChecksumKey = "fftmatvec_checksum";
/// Prefix of written block rows when the operator carries none.
inline constexpr std::string_view kDefaultPrefix = "adj/vec_";

/// Returns normally only if the existing directory `dir` is exactly what the matrix-directory
/// writer could have written, and so may be replaced: binary/meta_adj (which parses) and
/// block-row files that it names (binary/<prefix><row, 6 digits>.h5 for rows below Nd, with their
/// directories), and nothing else anywhere below it; else throws shiftop::Error naming the first
/// unexpected entry. The AtomicOutput::Replaceable of the matrix directory; commands check it
/// before any work.
void check_replaceable(const std::string& dir);

}  // namespace shiftop::io::fftmatvec
