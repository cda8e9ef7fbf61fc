// shiftop's own HDF5 files (layouts in operator_file.hpp and vector_file.hpp). Root attribute
// shiftop_format ("operator" or "vector") and format_version (1) mark files written by shiftop;
// files written by other tools (h5py) without them are read the same way.
#pragma once

#include "io/format_codec.hpp"

namespace shiftop::io::shiftop_h5 {

extern const OperatorCodec kOperatorCodec;
extern const VectorCodec kVectorCodec;

}  // namespace shiftop::io::shiftop_h5
