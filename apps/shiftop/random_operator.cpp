#include "random_operator.hpp"

#include <algorithm>
#include <random>

namespace shiftop::app {
namespace {

// Value k of the sequence is draw k - b*kBlock of the generator of block b = k / kBlock.
constexpr index_t kBlock = 1 << 16;

/// Values [begin, begin + count) of the sequence of `seed` into out[0, count).
void fill_range(std::uint64_t seed, index_t begin, index_t count, double* out) {
  const index_t end = begin + count;
  const index_t first_block = begin / kBlock, last_block = (end + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static)
  for (index_t b = first_block; b < last_block; ++b) {
    std::mt19937_64 gen(seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(b));
    std::normal_distribution<double> dist;
    const index_t from = std::max(begin, b * kBlock), to = std::min(end, (b + 1) * kBlock);
    for (index_t k = b * kBlock; k < from; ++k)
      (void)dist(gen);  // the draws before the range
    for (index_t k = from; k < to; ++k)
      out[k - begin] = dist(gen);
  }
}

}  // namespace

std::vector<double> random_values(index_t count, std::uint64_t seed) {
  return random_pieces(seed, 0, 1, count, count);
}

std::vector<double> random_pieces(std::uint64_t seed, index_t first, index_t pieces, index_t stride,
                                  index_t length) {
  std::vector<double> values(static_cast<std::size_t>(pieces * length));
  if (stride == length) {  // contiguous: one range
    fill_range(seed, first, pieces * length, values.data());
    return values;
  }
  for (index_t p = 0; p < pieces; ++p)
    fill_range(seed, first + p * stride, length, values.data() + p * length);
  return values;
}

}  // namespace shiftop::app
