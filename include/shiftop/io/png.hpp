// 8-bit grayscale PNG images (PNG specification, ISO/IEC 15948): the signature, IHDR, one IDAT
// holding a zlib stream (RFC 1950) of stored deflate blocks (RFC 1951 section 3.2.4: no
// compression, so no dependency), and IEND. For viewing reconstructions, not for archiving.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "shiftop/core/shape.hpp"

namespace shiftop::io {

/// How values become gray levels: v in [lo, hi] maps linearly to 0..255 (rounded to nearest),
/// values below lo to 0 and above hi to 255.
struct GrayWindow {
  double lo = 0;
  double hi = 1;
};

/// The PNG file of a width x height image, `values` row-major with row 0 at the top. Throws
/// shiftop::Error, naming `name`, for sizes that are not positive or hold more than 2^30 pixels,
/// a value count other than width*height, a nonfinite value, or a window without lo < hi (both
/// finite).
std::vector<std::uint8_t> encode_png(std::span<const double> values, index_t width, index_t height,
                                     GrayWindow window, const std::string& name = "PNG image");

/// encode_png written to `path` under a temporary name and renamed into place
/// (io/atomic_output.hpp), so a failure leaves nothing at `path`.
void write_png(const std::string& path, std::span<const double> values, index_t width,
               index_t height, GrayWindow window);

}  // namespace shiftop::io
