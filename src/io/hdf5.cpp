#include "io/hdf5.hpp"
#include "io/regular_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <numeric>
#include <system_error>

#include "shiftop/core/error.hpp"
#include "shiftop/io/file_kind.hpp"

namespace shiftop::io::h5 {
namespace {

// Fixed-length string attributes longer than this are refused rather than allocated.
constexpr std::size_t kMaxStringAttribute = std::size_t{1} << 20;
// Largest array attribute read: metadata, not data.
constexpr hssize_t kMaxArrayAttribute = hssize_t{1} << 20;

// A file whose H5Fclose failed (a full disk while writing) stays half-closed in HDF5 1.10, and
// the library's atexit clean-up then crashes on it, after shiftop has reported the error. shiftop
// closes every file it opens, so that clean-up is not needed: it is turned off at program start,
// before any HDF5 call can start the library (H5dont_atexit has no effect after that).
[[maybe_unused]] const herr_t kNoAtexitCleanup = H5dont_atexit();

// HDF5 prints its whole error stack to stderr by default; shiftop reports one line instead. Called
// by every entry point: the setting is per thread in thread-safe builds of HDF5.
void silence_automatic_error_printing() {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

std::string with_detail(std::string message) {
  const std::string detail = error_detail();
  if (!detail.empty()) message += fmt::format(" (HDF5: {})", detail);
  return message;
}

// Checks the status of an HDF5 call that returns herr_t or a count (negative on failure).
template <typename Status>
Status check(Status status, const std::string& context, std::string_view what) {
  if (status < 0) throw Error(with_detail(fmt::format("{}: {} failed", context, what)));
  return status;
}

Handle checked(hid_t id, Handle::Closer closer, const std::string& context, std::string_view what) {
  if (id < 0) throw Error(with_detail(fmt::format("{}: {} failed", context, what)));
  return Handle(id, closer);
}

herr_t take_innermost(unsigned n, const H5E_error2_t* error, void* data) {
  if (n == 0 && error != nullptr && error->desc != nullptr)
    *static_cast<std::string*>(data) = error->desc;
  return 0;
}

Handle file_access_properties(const std::string& context) {
  Handle fapl = checked(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, context, "H5Pcreate");
  // Closing the file closes every object still open in it, so close() really finishes the file.
  check(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), context, "H5Pset_fclose_degree");
  return fapl;
}

Handle dataspace_of(hid_t dataset, const std::string& context) {
  return checked(H5Dget_space(dataset), H5Sclose, context, "reading the dataspace");
}

std::vector<index_t> extent(hid_t space, const std::string& context) {
  const int rank = check(H5Sget_simple_extent_ndims(space), context, "reading the rank");
  std::array<hsize_t, H5S_MAX_RANK> dims{};
  check(H5Sget_simple_extent_dims(space, dims.data(), nullptr), context, "reading the dimensions");
  std::vector<index_t> out;
  for (int k = 0; k < rank; ++k) {
    require(dims[k] <= static_cast<hsize_t>(kMaxAttributeCount),
            "{}: dimension {} is {}: expected at most {}", context, k, dims[k], kMaxAttributeCount);
    out.push_back(static_cast<index_t>(dims[k]));
  }
  return out;
}

std::string type_name(hid_t type, const std::string& context) {
  const H5T_class_t type_class = H5Tget_class(type);
  const std::size_t size = H5Tget_size(type);
  require(type_class != H5T_NO_CLASS && size > 0, "{}: cannot read the element type", context);
  switch (type_class) {
    case H5T_FLOAT:
      return fmt::format("float{}", 8 * size);
    case H5T_INTEGER:
      return fmt::format("{}int{}", H5Tget_sign(type) == H5T_SGN_NONE ? "u" : "", 8 * size);
    case H5T_STRING:
      return "string";
    case H5T_ENUM:
      return "enum";
    case H5T_COMPOUND:
      return "compound";
    default:
      return "non-numeric";
  }
}

Handle attribute_type(hid_t attribute, const std::string& context) {
  return checked(H5Aget_type(attribute), H5Tclose, context, "reading the attribute type");
}

AttributeValue read_string(hid_t attribute, hid_t type, const std::string& context) {
  Handle memory = checked(H5Tcopy(H5T_C_S1), H5Tclose, context, "H5Tcopy");
  check(H5Tset_cset(memory.get(), H5Tget_cset(type)), context, "H5Tset_cset");
  const htri_t variable = check(H5Tis_variable_str(type), context, "H5Tis_variable_str");
  if (variable > 0) {
    check(H5Tset_size(memory.get(), H5T_VARIABLE), context, "H5Tset_size");
    char* text = nullptr;
    check(H5Aread(attribute, memory.get(), &text), context, "reading the string");
    std::string value = text != nullptr ? text : "";
    H5free_memory(text);
    return value;
  }
  const std::size_t size = H5Tget_size(type);
  require(size > 0 && size <= kMaxStringAttribute,
          "{}: fixed-length string of {} bytes: expected at most {}", context, size,
          kMaxStringAttribute);
  check(H5Tset_size(memory.get(), size), context, "H5Tset_size");
  std::string value(size, '\0');
  check(H5Aread(attribute, memory.get(), value.data()), context, "reading the string");
  value.resize(std::strlen(value.c_str()));  // null-terminated or null-padded
  return value;
}

// A 1-D array of integers (as int64) or floats (as double).
AttributeValue read_array(hid_t attribute, H5T_class_t type_class, std::size_t points,
                          const std::string& context) {
  if (type_class == H5T_INTEGER) {
    std::vector<std::int64_t> values(points);
    check(H5Aread(attribute, H5T_NATIVE_INT64, values.data()), context, "reading");
    return values;
  }
  std::vector<double> values(points);
  check(H5Aread(attribute, H5T_NATIVE_DOUBLE, values.data()), context, "reading");
  return values;
}

// An enum (h5py stores numpy bools as one) is read raw and its integer base type converted.
AttributeValue read_enum(hid_t attribute, hid_t type, const std::string& context) {
  Handle base = checked(H5Tget_super(type), H5Tclose, context, "reading the enum base type");
  require(H5Tget_class(base.get()) == H5T_INTEGER && H5Tget_size(type) <= 8,
          "{}: enum with a non-integer base type: expected an integer, float or string", context);
  alignas(8) std::array<unsigned char, 8> buffer{};
  check(H5Aread(attribute, type, buffer.data()), context, "reading the value");
  check(H5Tconvert(base.get(), H5T_NATIVE_INT64, 1, buffer.data(), nullptr, H5P_DEFAULT), context,
        "converting the enum value");
  std::int64_t value = 0;
  std::memcpy(&value, buffer.data(), sizeof value);
  return value;
}

struct NameList {
  std::vector<std::string> names;
};

herr_t collect_attribute(hid_t, const char* name, const H5A_info_t*, void* data) {
  static_cast<NameList*>(data)->names.emplace_back(name);
  return 0;
}

template <typename T>
void write_array(hid_t object, const std::string& name, const std::vector<T>& values,
                 hid_t file_type, hid_t memory_type, const std::string& where) {
  const hsize_t size = values.size();
  const Handle space =
      checked(H5Screate_simple(1, &size, nullptr), H5Sclose, where, "H5Screate_simple");
  const Handle attribute =
      checked(H5Acreate2(object, name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
              H5Aclose, where, "creating");
  check(H5Awrite(attribute.get(), memory_type, values.data()), where, "writing");
}

}  // namespace

void Handle::close(const std::string& context) {
  const Closer closer = owned_.get_deleter().closer;
  const detail::Id id = owned_.release();
  if (id && closer(id.value) < 0)
    throw Error(with_detail(fmt::format("{}: closing (writing out) failed (disk full?)", context)));
}

std::string error_detail() {
  std::string detail;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, take_innermost, &detail);
  H5Eclear2(H5E_DEFAULT);
  std::replace_if(
      detail.begin(), detail.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  // Low-level I/O failures carry the system's message deep inside a long line of buffer
  // addresses and offsets: keep "file write failed: File too large".
  constexpr std::string_view kSystem = "error message = '";
  const std::size_t system = detail.find(kSystem);
  const std::size_t colon = detail.find(':');
  if (system != std::string::npos && colon < system) {
    const std::size_t begin = system + kSystem.size();
    detail =
        detail.substr(0, colon) + ": " + detail.substr(begin, detail.find('\'', begin) - begin);
  }
  return detail;
}

Handle open_file(const std::string& path) {
  silence_automatic_error_printing();
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  require(std::filesystem::exists(status),
          "{}: cannot open: no such file: expected an existing HDF5 file", path);
  require_regular_input(path, "an HDF5 file");
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  if (is_hdf5 < 0)
    throw Error(with_detail(
        fmt::format("{}: cannot open: not readable, expected a readable HDF5 file", path)));
  require(is_hdf5 > 0, "{}: not an HDF5 file (no HDF5 signature): expected an HDF5 file", path);
  const Handle fapl = file_access_properties(path);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get());
  if (file < 0)
    throw Error(with_detail(fmt::format(
        "{}: cannot open as HDF5: the file is truncated or corrupt, expected a complete HDF5 file",
        path)));
  return Handle(file, H5Fclose);
}

Handle create_file(const std::string& path) {
  silence_automatic_error_printing();
  const Handle fapl = file_access_properties(path);
  return checked(H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.get()), H5Fclose, path,
                 "creating the HDF5 file");
}

bool has_link(hid_t location, const std::string& name, const std::string& context) {
  return check(H5Lexists(location, name.c_str(), H5P_DEFAULT), context,
               fmt::format("looking up '{}'", name)) > 0;
}

std::vector<std::string> link_names(hid_t location, const std::string& context) {
  H5G_info_t info;
  check(H5Gget_info(location, &info), context, "listing the contents");
  std::vector<std::string> names;
  for (hsize_t k = 0; k < info.nlinks; ++k) {
    const ssize_t length = check(
        H5Lget_name_by_idx(location, ".", H5_INDEX_NAME, H5_ITER_INC, k, nullptr, 0, H5P_DEFAULT),
        context, "reading a link name");
    std::string name(static_cast<std::size_t>(length) + 1, '\0');
    check(H5Lget_name_by_idx(location, ".", H5_INDEX_NAME, H5_ITER_INC, k, name.data(), name.size(),
                             H5P_DEFAULT),
          context, "reading a link name");
    name.resize(static_cast<std::size_t>(length));
    names.push_back(std::move(name));
  }
  return names;
}

Handle open_dataset(hid_t location, const std::string& name, const std::string& context) {
  silence_automatic_error_printing();
  require(has_link(location, name, context), "{}: no dataset '{}'", context, name);
  Handle object = checked(H5Oopen(location, name.c_str(), H5P_DEFAULT), H5Oclose, context,
                          fmt::format("opening '{}'", name));
  require(H5Iget_type(object.get()) == H5I_DATASET, "{}: '{}' is not a dataset: expected a dataset",
          context, name);
  return checked(H5Dopen2(location, name.c_str(), H5P_DEFAULT), H5Dclose, context,
                 fmt::format("opening dataset '{}'", name));
}

Handle open_group(hid_t location, const std::string& name, const std::string& context) {
  silence_automatic_error_printing();
  return checked(H5Gopen2(location, name.c_str(), H5P_DEFAULT), H5Gclose, context,
                 fmt::format("opening group '{}'", name));
}

Handle create_group(hid_t location, const std::string& name, const std::string& context) {
  silence_automatic_error_printing();
  const Handle properties = checked(H5Pcreate(H5P_GROUP_CREATE), H5Pclose, context, "H5Pcreate");
  // Attributes are read back in the order they were written (read_attributes).
  check(H5Pset_attr_creation_order(properties.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED),
        context, "H5Pset_attr_creation_order");
  return checked(H5Gcreate2(location, name.c_str(), H5P_DEFAULT, properties.get(), H5P_DEFAULT),
                 H5Gclose, context, fmt::format("creating group '{}'", name));
}

std::vector<index_t> dataset_dims(hid_t dataset, const std::string& context) {
  const Handle space = dataspace_of(dataset, context);
  const H5S_class_t space_class = H5Sget_simple_extent_type(space.get());
  require(space_class == H5S_SIMPLE || space_class == H5S_SCALAR,
          "{}: has no dataspace (an empty/null dataset): expected an array", context);
  return extent(space.get(), context);
}

std::string element_type_name(hid_t dataset, const std::string& context) {
  const Handle type = checked(H5Dget_type(dataset), H5Tclose, context, "reading the element type");
  return type_name(type.get(), context);
}

void require_float64(hid_t dataset, const std::string& context) {
  const Handle type = checked(H5Dget_type(dataset), H5Tclose, context, "reading the element type");
  const bool ieee64 = check(H5Tequal(type.get(), H5T_IEEE_F64LE), context, "H5Tequal") > 0 ||
                      check(H5Tequal(type.get(), H5T_IEEE_F64BE), context, "H5Tequal") > 0;
  if (ieee64) return;
  const std::string found = type_name(type.get(), context);
  fail("{}: stores {} values: expected float64{}", context, found,
       found == "float32" ? " (convert with numpy: a.astype('float64'))" : "");
}

void read_doubles(hid_t dataset, std::span<const index_t> offset, std::span<const index_t> count,
                  double* out, const std::string& context) {
  read_values(dataset, H5T_NATIVE_DOUBLE, offset, count, out, context);
}

void read_values(hid_t dataset, hid_t memory_type, std::span<const index_t> offset,
                 std::span<const index_t> count, void* out, const std::string& context) {
  if (std::ranges::any_of(count, [](index_t n) { return n == 0; })) return;
  const Handle file_space = dataspace_of(dataset, context);
  const std::vector<hsize_t> start(offset.begin(), offset.end());
  const std::vector<hsize_t> size(count.begin(), count.end());
  Handle memory_space;
  if (size.empty()) {
    memory_space = checked(H5Screate(H5S_SCALAR), H5Sclose, context, "H5Screate");
  } else {
    check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, size.data(),
                              nullptr),
          context, "selecting the hyperslab");
    memory_space = checked(H5Screate_simple(static_cast<int>(size.size()), size.data(), nullptr),
                           H5Sclose, context, "H5Screate_simple");
  }
  if (H5Dread(dataset, memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, out) < 0)
    throw Error(
        with_detail(fmt::format("{}: reading the values failed: the file is truncated or corrupt, "
                                "expected a complete HDF5 file",
                                context)));
}

void write_doubles(hid_t location, const std::string& name, std::span<const index_t> dims,
                   const double* data, const std::string& context) {
  write_values(location, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, dims, data, context);
}

void write_values(hid_t location, const std::string& name, hid_t file_type, hid_t memory_type,
                  std::span<const index_t> dims, const void* data, const std::string& context) {
  const std::vector<hsize_t> size(dims.begin(), dims.end());
  const Handle space =
      checked(H5Screate_simple(static_cast<int>(size.size()), size.data(), nullptr), H5Sclose,
              context, "H5Screate_simple");
  const Handle properties = checked(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, context, "H5Pcreate");
  // No modification times: the same data gives the same bytes, so outputs can be compared.
  check(H5Pset_obj_track_times(properties.get(), false), context, "H5Pset_obj_track_times");
  const Handle dataset = checked(H5Dcreate2(location, name.c_str(), file_type, space.get(),
                                            H5P_DEFAULT, properties.get(), H5P_DEFAULT),
                                 H5Dclose, context, fmt::format("creating dataset '{}'", name));
  if (std::ranges::any_of(dims, [](index_t n) { return n == 0; })) return;
  if (H5Dwrite(dataset.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    throw Error(with_detail(fmt::format(
        "{}: writing dataset '{}' failed: expected room for {} bytes (disk full?)", context, name,
        static_cast<index_t>(H5Tget_size(file_type)) *
            std::accumulate(dims.begin(), dims.end(), index_t{1}, std::multiplies<>()))));
}

bool has_attribute(hid_t object, const std::string& name, const std::string& context) {
  silence_automatic_error_printing();
  return check(H5Aexists(object, name.c_str()), context,
               fmt::format("looking up attribute '{}'", name)) > 0;
}

std::optional<AttributeValue> read_attribute(hid_t object, const std::string& name,
                                             const std::string& context) {
  const std::string where = fmt::format("{}: attribute '{}'", context, name);
  if (!has_attribute(object, name, context)) return std::nullopt;
  const Handle attribute =
      checked(H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose, where, "opening");
  const Handle space = checked(H5Aget_space(attribute.get()), H5Sclose, where, "H5Aget_space");
  const hssize_t points =
      check(H5Sget_simple_extent_npoints(space.get()), where, "counting values");
  const Handle type = attribute_type(attribute.get(), where);
  const H5T_class_t type_class = H5Tget_class(type.get());
  if (points != 1) {
    const bool numeric = type_class == H5T_INTEGER || type_class == H5T_FLOAT;
    require(numeric && H5Sget_simple_extent_ndims(space.get()) == 1 && points > 1 &&
                points <= kMaxArrayAttribute,
            "{}: holds {} values: expected a single value or a 1-D array of at most {} numbers",
            where, points, kMaxArrayAttribute);
    return read_array(attribute.get(), type_class, static_cast<std::size_t>(points), where);
  }
  switch (type_class) {
    case H5T_INTEGER: {
      std::int64_t value = 0;
      check(H5Aread(attribute.get(), H5T_NATIVE_INT64, &value), where, "reading");
      return value;
    }
    case H5T_FLOAT: {
      double value = 0;
      check(H5Aread(attribute.get(), H5T_NATIVE_DOUBLE, &value), where, "reading");
      return value;
    }
    case H5T_STRING:
      return read_string(attribute.get(), type.get(), where);
    case H5T_ENUM:
      return read_enum(attribute.get(), type.get(), where);
    default:
      fail("{}: has type {}: expected an integer, float or string", where,
           type_name(type.get(), where));
  }
}

std::vector<std::pair<std::string, AttributeValue>> read_attributes(
    hid_t object, const std::string& context, std::vector<std::string>* unread) {
  silence_automatic_error_printing();
  NameList list;
  hsize_t position = 0;
  // Creation order where the file tracks it; otherwise (files of other writers) name order.
  if (H5Aiterate2(object, H5_INDEX_CRT_ORDER, H5_ITER_INC, &position, collect_attribute, &list) <
      0) {
    H5Eclear2(H5E_DEFAULT);
    list.names.clear();
    position = 0;
    check(H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_INC, &position, collect_attribute, &list),
          context, "listing the attributes");
  }
  std::vector<std::pair<std::string, AttributeValue>> out;
  for (const std::string& name : list.names) {
    try {
      if (auto value = read_attribute(object, name, context)) out.emplace_back(name, *value);
    } catch (const Error&) {
      // Attributes shiftop does not use may be of any type: they are tolerated, not read.
      if (unread != nullptr) unread->push_back(name);
    }
  }
  return out;
}

void write_attribute(hid_t object, const std::string& name, const AttributeValue& value,
                     const std::string& context, IntegerWidth width) {
  const std::string where = fmt::format("{}: attribute '{}'", context, name);
  if (const auto* integers = std::get_if<std::vector<std::int64_t>>(&value)) {
    write_array(object, name, *integers, H5T_STD_I64LE, H5T_NATIVE_INT64, where);
    return;
  }
  if (const auto* reals = std::get_if<std::vector<double>>(&value)) {
    write_array(object, name, *reals, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, where);
    return;
  }
  const Handle space = checked(H5Screate(H5S_SCALAR), H5Sclose, where, "H5Screate");
  Handle string_type;
  hid_t file_type = H5T_IEEE_F64LE;
  hid_t memory_type = H5T_NATIVE_DOUBLE;
  const void* buffer = nullptr;
  std::int32_t narrow = 0;
  const char* text = nullptr;
  if (const auto* integer = std::get_if<std::int64_t>(&value)) {
    const bool fits = *integer >= std::numeric_limits<std::int32_t>::min() &&
                      *integer <= std::numeric_limits<std::int32_t>::max();
    if (width == IntegerWidth::Fit) width = fits ? IntegerWidth::Bits32 : IntegerWidth::Bits64;
    if (width == IntegerWidth::Bits32) {
      require(fits, "{}: value {} does not fit the 32-bit integer expected here", where, *integer);
      narrow = static_cast<std::int32_t>(*integer);
      file_type = H5T_NATIVE_INT;
      memory_type = H5T_NATIVE_INT32;
      buffer = &narrow;
    } else {
      file_type = H5T_STD_I64LE;
      memory_type = H5T_NATIVE_INT64;
      buffer = integer;
    }
  } else if (const auto* real = std::get_if<double>(&value)) {
    buffer = real;
  } else {
    string_type = checked(H5Tcopy(H5T_C_S1), H5Tclose, where, "H5Tcopy");
    check(H5Tset_size(string_type.get(), H5T_VARIABLE), where, "H5Tset_size");
    check(H5Tset_cset(string_type.get(), H5T_CSET_UTF8), where, "H5Tset_cset");
    file_type = memory_type = string_type.get();
    text = std::get<std::string>(value).c_str();
    buffer = &text;
  }
  const Handle attribute =
      checked(H5Acreate2(object, name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
              H5Aclose, where, "creating");
  check(H5Awrite(attribute.get(), memory_type, buffer), where, "writing");
}

}  // namespace shiftop::io::h5
