// shiftop's own HDF5 files (layouts in operator_file.hpp and vector_file.hpp). Root attribute
// shiftop_format ("operator" or "vector") and format_version (1) mark files written by shiftop;
// files written by other tools (h5py) without them are read the same way.
#pragma once

#include <string>

#include "shiftop/io/operator_file.hpp"
#include "shiftop/io/vector_file.hpp"

namespace shiftop::io::shiftop_h5 {

OperatorData read_operator(const std::string& path, const OperatorReadOptions& options);
void write_operator(const std::string& path, const OperatorData& op);
OperatorInfo inspect_operator(const std::string& path);

VectorData read_vector(const std::string& path, const VectorReadOptions& options);
void write_vector(const std::string& path, const VectorData& vector);
VectorInfo inspect_vector(const std::string& path);

}  // namespace shiftop::io::shiftop_h5
