// Random operators and vectors for the benchmark and tuning commands (fixed seeds: repeatable).
#pragma once

#include <cstdint>
#include <vector>

#include "shiftop/core/shape.hpp"

namespace shiftop::app {

/// `count` normally distributed values from `seed`, generated in parallel blocks.
std::vector<double> random_values(index_t count, std::uint64_t seed);

/// Pieces of the sequence random_values(·, seed), one after another: `pieces` runs of `length`
/// values, the first starting at index `first` and each `stride` after the previous. The values
/// do not depend on which pieces are asked for, so the ranks of a process grid generate their
/// slices of one operator (or vector) without anyone holding all of it.
std::vector<double> random_pieces(std::uint64_t seed, index_t first, index_t pieces, index_t stride,
                                  index_t length);

}  // namespace shiftop::app
