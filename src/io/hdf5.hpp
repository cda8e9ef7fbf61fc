// Checked use of the HDF5 C API: handles closed by scope, every call's status tested, and every
// failure turned into one shiftop::Error line naming the file and what was expected (HDF5's own
// printing of its error stack is turned off).
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "io/attribute_value.hpp"
#include "shiftop/core/shape.hpp"

namespace shiftop::io::h5 {

namespace detail {

// An HDF5 id held by std::unique_ptr in place of a pointer: H5I_INVALID_HID is its null value.
struct Id {
  hid_t value = H5I_INVALID_HID;
  Id(std::nullptr_t = nullptr) {}  // implicit: unique_ptr assigns and compares nullptr
  explicit Id(hid_t id) : value(id) {}
  explicit operator bool() const { return value != H5I_INVALID_HID; }
  friend bool operator==(Id, Id) = default;
};

// Closes an id with its H5?close function.
struct Close {
  using pointer = Id;
  herr_t (*closer)(hid_t) = nullptr;
  void operator()(Id id) const { closer(id.value); }
};

}  // namespace detail

/// An HDF5 identifier, closed by its H5?close function when the handle goes out of scope.
/// Move-only: a std::unique_ptr owns the id (as its "pointer") and calls the closer once.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : owned_(detail::Id(id), detail::Close{closer}) {}

  hid_t get() const { return owned_.get().value; }
  /// Closes now and reports failure (for a file being written: its data reaches the disk here).
  void close(const std::string& context);

 private:
  std::unique_ptr<detail::Id, detail::Close> owned_;
};

/// The most specific message on HDF5's error stack (e.g. "truncated file: eof = 96, ..."), on
/// one line; empty if the stack is empty. Clears the stack.
std::string error_detail();

/// Opens an existing HDF5 file read-only. Throws for a missing file, a file that is not HDF5,
/// and a truncated or corrupt one.
Handle open_file(const std::string& path);
/// Creates a new HDF5 file; fails if `path` exists.
Handle create_file(const std::string& path);

/// Whether `location` has a link called `name`.
bool has_link(hid_t location, const std::string& name, const std::string& context);
/// Names of the links directly under `location` (for "found only ..." messages).
std::vector<std::string> link_names(hid_t location, const std::string& context);

Handle open_dataset(hid_t location, const std::string& name, const std::string& context);
Handle open_group(hid_t location, const std::string& name, const std::string& context);
Handle create_group(hid_t location, const std::string& name, const std::string& context);

/// The dimensions of a dataset (empty for a scalar). Throws for absurd dimensions.
std::vector<index_t> dataset_dims(hid_t dataset, const std::string& context);
/// Throws unless the dataset stores IEEE float64 values (either byte order).
void require_float64(hid_t dataset, const std::string& context);
/// "float64", "float32", "int32", "string", ...: the stored element type, for descriptions.
std::string element_type_name(hid_t dataset, const std::string& context);

/// Reads the block [offset, offset + count) of a float64 dataset into `out` (C order).
void read_doubles(hid_t dataset, std::span<const index_t> offset, std::span<const index_t> count,
                  double* out, const std::string& context);
/// Creates the float64 dataset `name` with dimensions `dims` and writes `data` (C order).
void write_doubles(hid_t location, const std::string& name, std::span<const index_t> dims,
                   const double* data, const std::string& context);
/// read_doubles for any numeric dataset: the values converted by HDF5 to `memory_type` (a
/// H5T_NATIVE_* type of `out`'s elements; a conversion that overflows fails).
void read_values(hid_t dataset, hid_t memory_type, std::span<const index_t> offset,
                 std::span<const index_t> count, void* out, const std::string& context);
/// write_doubles for any type: a dataset of `file_type` (H5T_IEEE_F32LE, H5T_STD_I32LE, ...)
/// written from `data`, whose elements are `memory_type`.
void write_values(hid_t location, const std::string& name, hid_t file_type, hid_t memory_type,
                  std::span<const index_t> dims, const void* data, const std::string& context);

bool has_attribute(hid_t object, const std::string& name, const std::string& context);

/// The value of attribute `name` of `object`, if present: integers (any width, signed or not, or
/// an HDF5 enum such as h5py's bool) as int64, floats as double, strings as std::string; a 1-D
/// array of integers or floats (more than one value) as a vector of them. Throws for other types
/// and shapes.
std::optional<AttributeValue> read_attribute(hid_t object, const std::string& name,
                                             const std::string& context);
/// All attributes of `object` whose type read_attribute supports, in creation-index order where
/// tracked and name order otherwise; the names of the others go to `unread` if given.
std::vector<std::pair<std::string, AttributeValue>> read_attributes(
    hid_t object, const std::string& context, std::vector<std::string>* unread = nullptr);

/// Fit: 32 bits where the value fits (a C int, as FFTMatvec writes), else 64.
enum class IntegerWidth { Bits32, Bits64, Fit };
/// Writes an attribute: integers as 32- or 64-bit signed, doubles as float64, strings as
/// variable-length UTF-8, arrays as 1-D int64 or float64 (`width` applies to scalars).
void write_attribute(hid_t object, const std::string& name, const AttributeValue& value,
                     const std::string& context, IntegerWidth width = IntegerWidth::Bits64);

}  // namespace shiftop::io::h5
