// libFuzzer harness for the .npy header parser (src/io/npy.hpp): any bytes are either refused
// with shiftop::Error or give a header that is consistent with them.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

#include "fuzz_check.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/io/npy.hpp"

namespace {

// Smallest header: magic string (6 bytes), version (2), header length (2), then the dictionary.
constexpr std::size_t kShortestPreamble = 10;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using shiftop::index_t;
  using shiftop::fuzz::check;
  constexpr std::string_view name = "fuzz.npy";
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const shiftop::io::NpyHeader header = shiftop::io::parse_npy_header(bytes, name);
    check(header.data_offset >= kShortestPreamble && header.data_offset <= size,
          "the data starts after the preamble and within the input");
    // The element count computed independently: 0 if any dimension is 0 (whatever the others
    // are), else the product, which must not overflow even as a float64 byte size.
    bool has_zero = false;
    index_t product = 1;
    bool overflow = false;
    for (const index_t n : header.shape) {
      check(n >= 0, "dimensions are non-negative");
      has_zero = has_zero || n == 0;
      overflow = overflow || __builtin_mul_overflow(product, n, &product);
    }
    const index_t expected = has_zero ? 0 : product;
    check(has_zero || !overflow, "the element count fits in index_t");
    check(expected <= std::numeric_limits<index_t>::max() / 8,
          "the float64 byte size fits in index_t");
    check(header.count() == expected, "count() is the product of the shape");
  } catch (const shiftop::Error& error) {
    shiftop::fuzz::check_error_message(error.what(), name);
  }
  return 0;
}
