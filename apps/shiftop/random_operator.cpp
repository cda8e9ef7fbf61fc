#include "random_operator.hpp"

#include <random>

namespace shiftop::app {

std::vector<double> random_values(index_t count, std::uint64_t seed) {
  std::vector<double> values(static_cast<std::size_t>(count));
  constexpr index_t kBlock = 1 << 16;
  const index_t blocks = (count + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static)
  for (index_t b = 0; b < blocks; ++b) {
    std::mt19937_64 gen(seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(b));
    std::normal_distribution<double> dist;
    const index_t end = std::min(count, (b + 1) * kBlock);
    for (index_t k = b * kBlock; k < end; ++k)
      values[static_cast<std::size_t>(k)] = dist(gen);
  }
  return values;
}

}  // namespace shiftop::app
