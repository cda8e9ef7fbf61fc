// A value kept with its type from a file's attributes or metadata: an integer, a floating-point
// number, a string, or a 1-D array of integers or of floating-point numbers (h5py writes numpy
// arrays so). Other tools' attributes that shiftop does not interpret (FFTMatvec block
// rows' prior_solved, grid and time metadata, ...) are carried through conversions as these.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace shiftop::io {

using AttributeValue =
    std::variant<std::int64_t, double, std::string, std::vector<std::int64_t>, std::vector<double>>;

/// Named values in the order the file lists them.
using Attributes = std::vector<std::pair<std::string, AttributeValue>>;

}  // namespace shiftop::io
