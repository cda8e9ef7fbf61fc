// Random operators and vectors for the benchmark and tuning commands (fixed seeds: repeatable).
#pragma once

#include <cstdint>
#include <vector>

#include "core/shape.hpp"

namespace shiftop::app {

/// `count` normally distributed values from `seed`, generated in parallel blocks.
std::vector<double> random_values(index_t count, std::uint64_t seed);

}  // namespace shiftop::app
