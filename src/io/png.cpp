#include "shiftop/io/png.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string_view>
#include <system_error>

#include "shiftop/core/error.hpp"
#include "shiftop/io/atomic_output.hpp"

namespace shiftop::io {
namespace {

// The most pixels encode_png takes: the stream stays far below a chunk's 2^31 - 1 bytes.
constexpr index_t kMaxPixels = index_t{1} << 30;
// A stored deflate block holds at most 65535 bytes (its LEN field is 16 bits).
constexpr std::size_t kStoredBlock = 65535;

// CRC-32 of the PNG specification (annex D): reflected polynomial 0xEDB88320, one table lookup
// per byte.
constexpr std::array<std::uint32_t, 256> kCrcTable = [] {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t n = 0; n < 256; ++n) {
    std::uint32_t c = n;
    for (int bit = 0; bit < 8; ++bit)
      c = (c & 1) != 0 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[n] = c;
  }
  return table;
}();

std::uint32_t crc32(std::span<const std::uint8_t> bytes) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (const std::uint8_t byte : bytes)
    c = kCrcTable[(c ^ byte) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

// Adler-32 of RFC 1950 section 8 (the zlib trailer): sums modulo 65521, reduced every 5552 bytes,
// the most that cannot overflow 32 bits.
std::uint32_t adler32(std::span<const std::uint8_t> bytes) {
  constexpr std::uint32_t kMod = 65521;
  std::uint32_t a = 1, b = 0;
  for (std::size_t start = 0; start < bytes.size(); start += 5552) {
    const std::size_t end = std::min(bytes.size(), start + 5552);
    for (std::size_t i = start; i < end; ++i) {
      a += bytes[i];
      b += a;
    }
    a %= kMod;
    b %= kMod;
  }
  return (b << 16) | a;
}

void put_u16_le(std::vector<std::uint8_t>& out, std::size_t v) {
  out.push_back(static_cast<std::uint8_t>(v & 0xFF));
  out.push_back(static_cast<std::uint8_t>((v >> 8) & 0xFF));
}

void put_u32_be(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<std::uint8_t>((v >> shift) & 0xFF));
}

// A chunk: length, type, data, and the CRC of type and data.
void put_chunk(std::vector<std::uint8_t>& out, std::string_view type,
               std::span<const std::uint8_t> data) {
  put_u32_be(out, static_cast<std::uint32_t>(data.size()));
  const std::size_t typed = out.size();
  out.insert(out.end(), type.begin(), type.end());
  out.insert(out.end(), data.begin(), data.end());
  put_u32_be(out, crc32(std::span(out).subspan(typed)));
}

// The zlib stream of `raw` in stored blocks: header 0x78 0x01 (deflate, 32 KiB window, FCHECK
// making it a multiple of 31), the blocks (BFINAL on the last, BTYPE 00, LEN, NLEN, the bytes),
// and the Adler-32 of `raw`, big-endian.
std::vector<std::uint8_t> zlib_stored(std::span<const std::uint8_t> raw) {
  std::vector<std::uint8_t> out{0x78, 0x01};
  out.reserve(raw.size() + 5 * (raw.size() / kStoredBlock + 1) + 6);
  for (std::size_t start = 0; start < raw.size(); start += kStoredBlock) {
    const std::size_t length = std::min(kStoredBlock, raw.size() - start);
    out.push_back(start + length == raw.size() ? 0x01 : 0x00);
    put_u16_le(out, length);
    put_u16_le(out, ~length & 0xFFFF);
    out.insert(out.end(), raw.begin() + static_cast<std::ptrdiff_t>(start),
               raw.begin() + static_cast<std::ptrdiff_t>(start + length));
  }
  put_u32_be(out, adler32(raw));
  return out;
}

}  // namespace

std::vector<std::uint8_t> encode_png(std::span<const double> values, index_t width, index_t height,
                                     GrayWindow window, const std::string& name) {
  require(width >= 1 && height >= 1 && width <= kMaxPixels / height,
          "{}: {} x {} pixels: expected positive sizes and at most 2^30 pixels", name, width,
          height);
  require(values.size() == static_cast<std::size_t>(width * height),
          "{}: {} values for {} x {} pixels, expected {}", name, values.size(), width, height,
          width * height);
  require(std::isfinite(window.lo) && std::isfinite(window.hi) && window.lo < window.hi,
          "{}: gray window [{}, {}]: expected finite lo < hi", name, window.lo, window.hi);
  const double scale = 255.0 / (window.hi - window.lo);

  // Each row is its filter type (0, none) followed by its gray levels.
  const auto w = static_cast<std::size_t>(width);
  std::vector<std::uint8_t> raw;
  raw.reserve((w + 1) * static_cast<std::size_t>(height));
  for (std::size_t row = 0; row < static_cast<std::size_t>(height); ++row) {
    raw.push_back(0);
    for (std::size_t col = 0; col < w; ++col) {
      const double v = values[row * w + col];
      if (!std::isfinite(v))
        fail("{}: pixel (row {}, column {}) is {}: expected finite values", name, row, col, v);
      const double level = std::clamp(std::round((v - window.lo) * scale), 0.0, 255.0);
      raw.push_back(static_cast<std::uint8_t>(level));
    }
  }

  std::vector<std::uint8_t> png{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  std::vector<std::uint8_t> header;
  put_u32_be(header, static_cast<std::uint32_t>(width));
  put_u32_be(header, static_cast<std::uint32_t>(height));
  // Bit depth 8, colour type 0 (grayscale), compression 0, filter method 0, no interlace.
  header.insert(header.end(), {8, 0, 0, 0, 0});
  put_chunk(png, "IHDR", header);
  put_chunk(png, "IDAT", zlib_stored(raw));
  put_chunk(png, "IEND", {});
  return png;
}

void write_png(const std::string& path, std::span<const double> values, index_t width,
               index_t height, GrayWindow window) {
  const std::vector<std::uint8_t> png = encode_png(values, width, height, window, path);
  AtomicOutput output(path, AtomicOutput::Kind::Stream);
  std::FILE* file = output.open_stream();
  if (file == nullptr)
    fail("{}: cannot open '{}' for writing: {}", path, output.path(),
         std::generic_category().message(errno));
  const bool written = std::fwrite(png.data(), 1, png.size(), file) == png.size();
  // fclose flushes the buffered tail: a full disk may only show up here.
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed)
    fail("{}: write failed (disk full?): {}", path, std::generic_category().message(errno));
  output.commit();
}

}  // namespace shiftop::io
