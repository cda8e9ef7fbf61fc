// The value of an HDF5 attribute as shiftop reads it: sizes and flags may be stored as integers or
// as floating-point numbers of any width (FFTMatvec and h5py write both), metadata as strings.
#pragma once

#include <string>
#include <string_view>

#include "shiftop/core/shape.hpp"
#include "shiftop/io/attribute.hpp"
#include "shiftop/io/file_details.hpp"

namespace shiftop::io {

/// Largest size accepted from a file's attribute (blocks, time steps): far above any operator
/// that fits in memory, far below overflow of the products computed from it.
inline constexpr index_t kMaxAttributeCount = index_t{1} << 40;

/// A non-negative count from an attribute: an integer, a float with an integral value (5000.0),
/// or a string holding a decimal integer. Throws shiftop::Error naming `context` for a negative
/// or non-integral value, NaN, infinity, a value above kMaxAttributeCount, or a string that is not
/// an integer.
index_t attribute_to_count(const AttributeValue& value, std::string_view context);

/// The value as text: integers in decimal, doubles in shortest round-trip form, strings as is.
std::string attribute_to_string(const AttributeValue& value);

/// The attribute as `info` reports it, with its type.
Detail to_detail(std::string key, const AttributeValue& value);

}  // namespace shiftop::io
