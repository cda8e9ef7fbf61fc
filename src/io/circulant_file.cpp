// The block-circulant operator file (include/shiftop/io/circulant_file.hpp).
#include "shiftop/io/circulant_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <limits>
#include <optional>
#include <system_error>
#include <type_traits>
#include <vector>

#include "io/attribute_value.hpp"
#include "io/hdf5.hpp"
#include "shiftop/core/available_memory.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/io/atomic_output.hpp"

namespace shiftop::io {
namespace {

std::string dataset_context(const std::string& path, std::string_view name) {
  return fmt::format("{}: dataset '{}'", path, name);
}

index_t size_attribute(hid_t file, const char* name, const std::string& path) {
  const std::optional<AttributeValue> value = h5::read_attribute(file, name, path);
  require(value.has_value(),
          "{}: no attribute '{}': expected a block-circulant operator file with integer "
          "attributes mB, nB, k and datasets indptr, indices, data",
          path, name);
  return attribute_to_count(*value, fmt::format("{}: attribute '{}'", path, name));
}

// A dataset's length and element type, checked to be 1-D of one of `types`.
struct Column {
  index_t length = 0;
  std::string type;
};

Column column_of(hid_t file, const char* name, std::span<const std::string_view> types,
                 const std::string& path) {
  if (!h5::has_link(file, name, path)) {
    const std::vector<std::string> names = h5::link_names(file, path);
    fail(
        "{}: no dataset '{}': expected a block-circulant operator file with datasets indptr, "
        "indices, data (the CSR of A); it has {}",
        path, name,
        names.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(names, ", ")));
  }
  const std::string context = dataset_context(path, name);
  const h5::Handle dataset = h5::open_dataset(file, name, path);
  const std::vector<index_t> dims = h5::dataset_dims(dataset.get(), context);
  require(dims.size() == 1, "{}: has shape ({}): expected a 1-D array", context,
          fmt::join(dims, ", "));
  Column column{dims[0], h5::element_type_name(dataset.get(), context)};
  require(std::ranges::find(types, column.type) != types.end(), "{}: stores {}: expected {}",
          context, column.type, fmt::join(types, " or "));
  return column;
}

constexpr std::array<std::string_view, 2> kIndexTypes = {"int32", "int64"};
constexpr std::array<std::string_view, 2> kValueTypes = {"float32", "float64"};

CirculantInfo inspect_open(hid_t file, const std::string& path) {
  CirculantInfo info;
  info.shape = {.k = size_attribute(file, "k", path),
                .mb = size_attribute(file, "mB", path),
                .nb = size_attribute(file, "nB", path)};
  try {
    info.shape.validate();
  } catch (const Error& error) {
    fail("{}: {}", path, error.what());
  }
  const Column indptr = column_of(file, "indptr", kIndexTypes, path);
  const Column indices = column_of(file, "indices", kIndexTypes, path);
  const Column data = column_of(file, "data", kValueTypes, path);
  require(indptr.length == info.shape.mb + 1,
          "{}: has {} entries: expected mB+1 = {} (one offset per row of A and one more)",
          dataset_context(path, "indptr"), indptr.length, info.shape.mb + 1);
  require(indices.length == data.length,
          "{}: dataset 'indices' has {} entries and 'data' {}: expected one column per value", path,
          indices.length, data.length);
  info.nnz = data.length;
  info.value_type = data.type;
  info.index_bits = indptr.type == "int64" || indices.type == "int64" ? 64 : 32;
  const auto bytes = [](const Column& c) {
    return c.length * (c.type == "int64" || c.type == "float64" ? 8 : 4);
  };
  info.stored_bytes = bytes(indptr) + bytes(indices) + bytes(data);
  return info;
}

void read_into(hid_t file, const char* name, hid_t memory_type, index_t length, void* out,
               const std::string& path) {
  const h5::Handle dataset = h5::open_dataset(file, name, path);
  const std::array<index_t, 1> offset = {0};
  const std::array<index_t, 1> count = {length};
  h5::read_values(dataset.get(), memory_type, offset, count, out, dataset_context(path, name));
}

}  // namespace

CirculantInfo inspect_circulant(const std::string& path) {
  const h5::Handle file = h5::open_file(path);
  return inspect_open(file.get(), path);
}

template <class T>
circ::FirstBlockRow<T> read_circulant(const std::string& path) {
  const h5::Handle file = h5::open_file(path);
  const CirculantInfo info = inspect_open(file.get(), path);
  if constexpr (std::is_same_v<T, float>)
    require(info.value_type == "float32",
            "{}: dataset 'data' stores {} values: expected float32 for a float32 operator (read "
            "it in float64, or write it with --precision float32)",
            path, info.value_type);
  const double entries = static_cast<double>(info.nnz);
  require_available_memory(entries * static_cast<double>(sizeof(std::int64_t) + sizeof(T)) +
                               8 * static_cast<double>(info.shape.mb + 1),
                           fmt::format("{}: reading A ({} nonzeros)", path, info.nnz));
  circ::FirstBlockRow<T> a;
  a.shape = info.shape;
  a.indptr.resize(static_cast<std::size_t>(info.shape.mb + 1));
  a.indices.resize(static_cast<std::size_t>(info.nnz));
  a.data.resize(static_cast<std::size_t>(info.nnz));
  read_into(file.get(), "indptr", H5T_NATIVE_INT64, info.shape.mb + 1, a.indptr.data(), path);
  read_into(file.get(), "indices", H5T_NATIVE_INT64, info.nnz, a.indices.data(), path);
  read_into(file.get(), "data", std::is_same_v<T, float> ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE,
            info.nnz, a.data.data(), path);
  circ::validate(a.shape, a.view(), path);
  return a;
}

StoredCirculant read_stored_circulant(const std::string& path) {
  if (inspect_circulant(path).value_type == "float32") return read_circulant<float>(path);
  return read_circulant<double>(path);
}

template <class T>
void write_circulant(const std::string& path, const circ::FirstBlockRow<T>& a,
                     const CirculantWriteOptions& options) {
  circ::validate(a.shape, a.view(), fmt::format("{}: the operator to write", path));
  std::error_code error;
  require(
      options.overwrite || !std::filesystem::exists(std::filesystem::symlink_status(path, error)),
      "{}: already exists: expected a new file{}", path,
      options.overwrite_name.empty() ? std::string()
                                     : fmt::format(" ({} replaces it)", options.overwrite_name));
  AtomicOutput output(path, AtomicOutput::Kind::File);
  h5::Handle file = h5::create_file(output.path());
  h5::write_attribute(file.get(), "mB", a.shape.mb, path);
  h5::write_attribute(file.get(), "nB", a.shape.nb, path);
  h5::write_attribute(file.get(), "k", a.shape.k, path);
  // int32 when every offset (at most nnz) and every column (below k*nB) fits, as scipy does.
  constexpr auto kInt32 = static_cast<double>(std::numeric_limits<std::int32_t>::max());
  const bool narrow =
      static_cast<double>(a.nnz()) <= kInt32 && static_cast<double>(a.shape.cols()) <= kInt32;
  const hid_t index_type = narrow ? H5T_STD_I32LE : H5T_STD_I64LE;
  const std::array<index_t, 1> offsets = {a.shape.mb + 1};
  const std::array<index_t, 1> entries = {a.nnz()};
  h5::write_values(file.get(), "indptr", index_type, H5T_NATIVE_INT64, offsets, a.indptr.data(),
                   path);
  h5::write_values(file.get(), "indices", index_type, H5T_NATIVE_INT64, entries, a.indices.data(),
                   path);
  if constexpr (std::is_same_v<T, float>)
    h5::write_values(file.get(), "data", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, entries, a.data.data(),
                     path);
  else
    h5::write_values(file.get(), "data", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, entries, a.data.data(),
                     path);
  file.close(path);
  output.commit();
}

template circ::FirstBlockRow<float> read_circulant<float>(const std::string&);
template circ::FirstBlockRow<double> read_circulant<double>(const std::string&);
template void write_circulant<float>(const std::string&, const circ::FirstBlockRow<float>&,
                                     const CirculantWriteOptions&);
template void write_circulant<double>(const std::string&, const circ::FirstBlockRow<double>&,
                                      const CirculantWriteOptions&);

}  // namespace shiftop::io
