// io/png: the 8-bit grayscale PNG writer, decoded here by an independent reader: chunk layout,
// every CRC-32 against a bitwise implementation, the zlib header, the stored blocks (LEN, NLEN,
// at most 65535 bytes, BFINAL on the last only), the Adler-32 against a per-byte modular sum, and
// the gray levels against the linear map. tests/python/test_ct_recon_cli.py decodes the tool's
// PNG with matplotlib as well.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "shiftop/io/png.hpp"
#include "support/expect_error.hpp"
#include "support/io_test_support.hpp"

namespace shiftop::io {
namespace {

using Bytes = std::vector<std::uint8_t>;

// CRC-32 bit by bit (ISO 3309, reflected): no table.
std::uint32_t bitwise_crc(const std::uint8_t* data, std::size_t size) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

// Adler-32 reduced after every byte.
std::uint32_t plain_adler(const Bytes& data) {
  std::uint64_t a = 1, b = 0;
  for (const std::uint8_t byte : data) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return static_cast<std::uint32_t>(b << 16 | a);
}

std::uint32_t be32(const Bytes& bytes, std::size_t at) {
  return std::uint32_t{bytes.at(at)} << 24 | std::uint32_t{bytes.at(at + 1)} << 16 |
         std::uint32_t{bytes.at(at + 2)} << 8 | std::uint32_t{bytes.at(at + 3)};
}

struct Decoded {
  std::uint32_t width = 0, height = 0;
  Bytes raw;                        // the rows with their filter bytes
  std::vector<std::size_t> blocks;  // the stored blocks' lengths
};

// Reads what encode_png writes, checking every field with gtest along the way.
Decoded decode(const Bytes& png) {
  Decoded out;
  const Bytes signature{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  EXPECT_TRUE(std::equal(signature.begin(), signature.end(), png.begin()));
  std::size_t at = 8;
  std::vector<std::string> types;
  Bytes idat;
  while (at < png.size()) {
    const std::uint32_t length = be32(png, at);
    const std::string type(png.begin() + static_cast<std::ptrdiff_t>(at + 4),
                           png.begin() + static_cast<std::ptrdiff_t>(at + 8));
    EXPECT_EQ(be32(png, at + 8 + length), bitwise_crc(png.data() + at + 4, length + 4))
        << type << " CRC";
    const Bytes data(png.begin() + static_cast<std::ptrdiff_t>(at + 8),
                     png.begin() + static_cast<std::ptrdiff_t>(at + 8 + length));
    if (type == "IHDR") {
      EXPECT_EQ(length, 13u);
      out.width = be32(data, 0);
      out.height = be32(data, 4);
      EXPECT_EQ(Bytes(data.begin() + 8, data.end()), (Bytes{8, 0, 0, 0, 0}));
    }
    if (type == "IDAT") idat.insert(idat.end(), data.begin(), data.end());
    if (type == "IEND") {
      EXPECT_EQ(length, 0u);
    }
    types.push_back(type);
    at += 12 + length;
  }
  EXPECT_EQ(at, png.size());
  EXPECT_EQ(types, (std::vector<std::string>{"IHDR", "IDAT", "IEND"}));

  // zlib: CMF 0x78 (deflate, 32 KiB window), FLG with (CMF*256 + FLG) % 31 == 0, no dictionary.
  EXPECT_EQ(idat.at(0), 0x78);
  EXPECT_EQ((idat.at(0) * 256 + idat.at(1)) % 31, 0);
  EXPECT_EQ(idat.at(1) & 0x20, 0);
  std::size_t pos = 2;
  bool final_block = false;
  while (!final_block) {
    const std::uint8_t header = idat.at(pos);
    EXPECT_EQ(header & 0x06, 0) << "BTYPE must be 00 (stored)";
    final_block = (header & 1) != 0;
    const std::size_t len = idat.at(pos + 1) | std::size_t{idat.at(pos + 2)} << 8;
    const std::size_t nlen = idat.at(pos + 3) | std::size_t{idat.at(pos + 4)} << 8;
    EXPECT_EQ(len ^ nlen, 0xFFFFu);
    out.blocks.push_back(len);
    out.raw.insert(out.raw.end(), idat.begin() + static_cast<std::ptrdiff_t>(pos + 5),
                   idat.begin() + static_cast<std::ptrdiff_t>(pos + 5 + len));
    pos += 5 + len;
  }
  EXPECT_EQ(pos + 4, idat.size()) << "the Adler-32 ends the stream";
  EXPECT_EQ(be32(idat, pos), plain_adler(out.raw));
  return out;
}

// Gray level of `v` in the window [lo, hi], as the header documents.
std::uint8_t level(double v, double lo, double hi) {
  const double t = std::round((v - lo) / (hi - lo) * 255.0);
  return static_cast<std::uint8_t>(std::min(255.0, std::max(0.0, t)));
}

void check_image(index_t width, index_t height) {
  SCOPED_TRACE(::testing::Message() << width << " x " << height);
  std::vector<double> values(static_cast<std::size_t>(width * height));
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = -0.5 + 2.0 * static_cast<double>((i * 7919) % 1000) / 999.0;  // [-0.5, 1.5]
  const double lo = -0.25, hi = 1.25;
  const Decoded d = decode(encode_png(values, width, height, {lo, hi}));
  EXPECT_EQ(d.width, static_cast<std::uint32_t>(width));
  EXPECT_EQ(d.height, static_cast<std::uint32_t>(height));
  const auto w = static_cast<std::size_t>(width);
  ASSERT_EQ(d.raw.size(), (w + 1) * static_cast<std::size_t>(height));
  for (std::size_t b = 0; b < d.blocks.size(); ++b)
    EXPECT_EQ(d.blocks[b], b + 1 < d.blocks.size() ? 65535u : d.raw.size() - 65535 * b);
  for (std::size_t row = 0; row < static_cast<std::size_t>(height); ++row) {
    ASSERT_EQ(d.raw[row * (w + 1)], 0) << "filter type of row " << row;
    for (std::size_t col = 0; col < w; ++col)
      ASSERT_EQ(d.raw[row * (w + 1) + 1 + col], level(values[row * w + col], lo, hi))
          << "pixel " << row << ", " << col;
  }
}

TEST(Png, OnePixel) {
  check_image(1, 1);
}

TEST(Png, OddSizes) {
  check_image(7, 3);
}

// (w + 1) * h raw bytes exactly 65535 (one full block), 65536 (a full block and one byte), and
// three blocks with a short last one.
TEST(Png, StoredBlockBoundaries) {
  check_image(4, 13107);
  check_image(255, 256);
  check_image(301, 500);
}

TEST(Png, WindowMapsEndsAndClamps) {
  const std::vector<double> values{0.0, 1.0, 2.0, -5.0, 7.0, 0.5 + 0.5 / 255};
  const Decoded d = decode(encode_png(values, 6, 1, {0.0, 2.0}));
  EXPECT_EQ(d.raw, (Bytes{0, 0, 128, 255, 0, 255, 64}));
}

TEST(Png, RefusesBadInput) {
  const std::vector<double> four(4, 0.5);
  shiftop::testing::expect_error(
      [&] {
        encode_png(four, 2, 2, {1.0, 1.0});
      },
      "expected finite lo < hi");
  shiftop::testing::expect_error([&] { encode_png(four, 2, 2, {0.0, std::nan("")}); }, "lo < hi");
  shiftop::testing::expect_error(
      [&] {
        encode_png(four, 3, 2, {0.0, 1.0});
      },
      "4 values for 3 x 2 pixels");
  shiftop::testing::expect_error(
      [&] {
        encode_png(four, 0, 4, {0.0, 1.0});
      },
      "expected positive sizes");
  shiftop::testing::expect_error(
      [&] {
        encode_png(four, index_t{1} << 20, index_t{1} << 11, {0.0, 1.0});
      },
      "at most 2^30 pixels");
  std::vector<double> bad = four;
  bad[3] = std::numeric_limits<double>::infinity();
  shiftop::testing::expect_error(
      [&] {
        encode_png(bad, 2, 2, {0.0, 1.0});
      },
      "pixel (row 1, column 1) is inf");
}

class PngFile : public shiftop::testing::TempDirTest {};

TEST_F(PngFile, WritesWhatEncodeReturns) {
  const std::vector<double> values{0.0, 0.25, 0.5, 0.75, 1.0, 0.1};
  const std::string file = path("image.png");
  write_png(file, values, 3, 2, {0.0, 1.0});
  std::ifstream in(file, std::ios::binary);
  const Bytes written{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_EQ(written, encode_png(values, 3, 2, {0.0, 1.0}));
}

TEST_F(PngFile, BadInputLeavesNothing) {
  const std::string file = path("image.png");
  shiftop::testing::expect_error(
      [&] {
        write_png(file, std::vector<double>{std::nan("")}, 1, 1, {0, 1});
      },
      "image.png: pixel (row 0, column 0) is nan");
  EXPECT_FALSE(std::filesystem::exists(file));
  shiftop::testing::expect_error(
      [&] {
        write_png(path("missing/image.png"), std::vector<double>{0.5}, 1, 1, {0, 1});
      },
      "missing");
}

}  // namespace
}  // namespace shiftop::io
