// What one file format provides to operator_file.cpp and vector_file.cpp: a reader, a writer and
// an inspector, for operators (OperatorCodec) and for vectors (VectorCodec). Each format defines
// its codecs (shiftop_format.hpp, fftmatvec_format.hpp; .npy in operator_file.cpp and
// vector_file.cpp), and read_operator, write_operator, ... pick one by format.
#pragma once

#include <string>

#include "shiftop/io/operator_file.hpp"
#include "shiftop/io/vector_file.hpp"

namespace shiftop::io {

template <typename Data, typename ReadOptions, typename Info>
struct Codec {
  /// Reads the file at `path` (the slice options.slice of an operator), checking every value.
  Data (*read)(const std::string& path, const ReadOptions& options);
  /// Writes `data`, already checked by require_writable (consistency.hpp), atomically.
  void (*write)(const std::string& path, const Data& data);
  /// What the file holds, from its metadata alone.
  Info (*inspect)(const std::string& path);
};

using OperatorCodec = Codec<OperatorData, OperatorReadOptions, OperatorInfo>;
using VectorCodec = Codec<VectorData, VectorReadOptions, VectorInfo>;

}  // namespace shiftop::io
