// Reading and writing vectors (the inputs and outputs of F, F*, F*F, FF*) in every format shiftop
// knows. Values are SOTI: [right-hand side][block][time].
//   * shiftop's own HDF5 file (.h5/.hdf5): dataset "vector" of shape (blocks, Nt) or
//     (nrhs, blocks, Nt), float64; optional root attributes space ("parameter"/"data"), qoi,
//     checksum, and string metadata in group "metadata";
//   * FFTMatvec's vector file (.h5): 1-D float64 dataset "vec" of length blocks*Nt with integer
//     (or float) attributes n_param/param_steps (parameter space) or n_obs/obs_steps (data
//     space), reindex non-zero (SOTI; FFTMatvec's TOSI files, reindex = 0, are refused), optional
//     qoi (1: data space of a parameter-to-QoI map) and checksum (parameter space); any other
//     attribute carried (VectorData::fftmatvec_attributes); one vector only;
//   * .npy of shape (blocks, Nt) or (nrhs, blocks, Nt), float64 or float32.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shiftop/core/enum_names.hpp"
#include "shiftop/core/shape.hpp"
#include "shiftop/io/attribute.hpp"
#include "shiftop/io/file_details.hpp"

namespace shiftop::io {

enum class VectorFormat { Auto, Shiftop, FFTMatvec, Npy };

/// Which side of the operator a vector belongs to: parameters (input of F) or data (output of F).
enum class VectorSpace { Unknown, Parameter, Data };

}  // namespace shiftop::io

template <>
struct shiftop::EnumNames<shiftop::io::VectorFormat> {
  static constexpr std::array<std::pair<io::VectorFormat, std::string_view>, 4> table{
      {{io::VectorFormat::Auto, "auto"},
       {io::VectorFormat::Shiftop, "shiftop"},
       {io::VectorFormat::FFTMatvec, "fftmatvec"},
       {io::VectorFormat::Npy, "npy"}}};
};

template <>
struct shiftop::EnumNames<shiftop::io::VectorSpace> {
  static constexpr std::array<std::pair<io::VectorSpace, std::string_view>, 3> table{
      {{io::VectorSpace::Unknown, "unknown"},
       {io::VectorSpace::Parameter, "parameter"},
       {io::VectorSpace::Data, "data"}}};
};

namespace shiftop::io {

struct VectorData {
  index_t nrhs = 1, blocks = 0, nt = 0;
  /// Stored with the leading right-hand-side dimension, (nrhs, blocks, Nt), even when nrhs is 1.
  bool batched = false;
  /// double[nrhs][blocks][nt].
  std::vector<double> values{};
  VectorSpace space = VectorSpace::Unknown;
  /// FFTMatvec: a data-space vector of a parameter-to-quantity-of-interest map (qoi = 1).
  bool qoi = false;
  /// FFTMatvec: the operator checksum a parameter-space vector belongs to; 0 for none.
  std::int64_t checksum = 0;
  std::vector<std::pair<std::string, std::string>> metadata{};
  /// Attributes of an FFTMatvec vector file's "vec" that shiftop does not interpret, with their
  /// types: carried to shiftop .h5 (group "fftmatvec_attributes") and back.
  Attributes fftmatvec_attributes{};
  /// Names of attributes of "vec" of types shiftop cannot carry: named by `convert` as dropped.
  std::vector<std::string> uncarried_attributes{};
};

struct VectorReadOptions {
  /// Accept NaN and infinity instead of refusing them with their location.
  bool allow_nonfinite = false;
  /// What accepts them in the caller's words, which the refusal names (as OperatorReadOptions').
  std::string_view allow_nonfinite_name = {};
};

/// Npy for a .npy file; for an HDF5 file, FFTMatvec if it has dataset "vec", Shiftop if it has
/// "vector"; throws shiftop::Error naming what was found otherwise.
VectorFormat detect_vector_format(const std::string& path);
/// What write_vector picks for Auto: Npy for .npy, Shiftop otherwise.
VectorFormat output_vector_format(const std::string& path);

/// Reads a whole vector file; throws shiftop::Error naming the file and what was expected on any
/// bad input, and before allocating if the values do not fit in the available memory.
VectorData read_vector(const std::string& path, const VectorReadOptions& options = {});

/// Writes `vector` atomically (temporary file renamed into place). FFTMatvec needs nrhs = 1 and a
/// known space, and writes exactly the attributes FFTMatvec writes for that space.
void write_vector(const std::string& path, const VectorData& vector,
                  VectorFormat format = VectorFormat::Auto);

/// What a vector file holds, from its metadata alone (values are not read).
struct VectorInfo {
  VectorFormat format = VectorFormat::Auto;
  index_t nrhs = 1, blocks = 0, nt = 0;
  bool batched = false;
  VectorSpace space = VectorSpace::Unknown;
  Details details{};
};

VectorInfo inspect_vector(const std::string& path);

}  // namespace shiftop::io
