#include "io/shiftop_format.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>

#include "io/attribute_value.hpp"
#include "io/consistency.hpp"
#include "io/fftmatvec_format.hpp"
#include "io/hdf5.hpp"
#include "io/nonfinite.hpp"
#include "io/text.hpp"
#include "shiftop/core/available_memory.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/io/atomic_output.hpp"

namespace shiftop::io::shiftop_h5 {
namespace {

constexpr const char* kKernels = "kernels";
constexpr const char* kFirstRow = "first_row";
constexpr const char* kVector = "vector";
constexpr const char* kMetadata = "metadata";
constexpr const char* kFFTMatvecAttributes = "fftmatvec_attributes";
// The layout version written in root attribute format_version; the only one read.
constexpr std::int64_t kFormatVersion = 1;

using Metadata = std::vector<std::pair<std::string, std::string>>;

std::string dataset_context(const std::string& path, std::string_view name) {
  return fmt::format("{}: dataset '{}'", path, name);
}

// "; it has vec (an FFTMatvec vector or block-row file)" and the like, for a missing dataset.
std::string what_it_has(hid_t file, const std::string& path) {
  const std::vector<std::string> names = h5::link_names(file, path);
  if (names.empty()) return "; the file is empty";
  std::string hint;
  const auto has = [&](std::string_view name) {
    return std::ranges::find(names, name) != names.end();
  };
  if (has("vec")) hint = " (an FFTMatvec vector or block-row file)";
  if (has(kVector)) hint = " (a shiftop vector file)";
  if (has(kKernels)) hint = " (a shiftop operator file)";
  return fmt::format("; it has {}{}", fmt::join(names, ", "), hint);
}

std::optional<index_t> count_attribute(hid_t object, const std::string& name,
                                       const std::string& path) {
  const std::string context = fmt::format("{}: attribute '{}'", path, name);
  const std::optional<AttributeValue> value = h5::read_attribute(object, name, path);
  if (!value) return std::nullopt;
  return attribute_to_count(*value, context);
}

std::optional<bool> flag_attribute(hid_t object, const std::string& name, const std::string& path) {
  const std::optional<index_t> value = count_attribute(object, name, path);
  if (!value) return std::nullopt;
  require(*value <= 1, "{}: attribute '{}' is {}: expected 0 or 1", path, name, *value);
  return *value == 1;
}

Metadata read_metadata(hid_t file, const std::string& path) {
  Metadata metadata;
  if (!h5::has_link(file, kMetadata, path)) return metadata;
  const h5::Handle group = h5::open_group(file, kMetadata, path);
  for (auto& [key, value] :
       h5::read_attributes(group.get(), fmt::format("{}: group 'metadata'", path)))
    metadata.emplace_back(key, attribute_to_string(value));
  return metadata;
}

// The metadata as `info` shows it: numbers stay numbers (h5py writes them so).
void append_metadata_details(hid_t file, const std::string& path, Details& details) {
  if (!h5::has_link(file, kMetadata, path)) return;
  const h5::Handle group = h5::open_group(file, kMetadata, path);
  for (const auto& [key, value] :
       h5::read_attributes(group.get(), fmt::format("{}: group 'metadata'", path)))
    details.push_back(to_detail(key, value));
}

// FFTMatvec's p2q flag and checksum, carried as metadata, are integers: stored as such (info
// --json shows numbers). Every other value is text.
AttributeValue metadata_value(std::string_view key, const std::string& value) {
  std::int64_t integer = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), integer);
  const bool is_integer =
      !value.empty() && error == std::errc() && end == value.data() + value.size();
  if ((key == fftmatvec::kP2qKey || key == fftmatvec::kChecksumKey) && is_integer) return integer;
  return value;
}

void write_metadata(hid_t file, const Metadata& metadata, const std::string& path) {
  if (metadata.empty()) return;
  const h5::Handle group = h5::create_group(file, kMetadata, path);
  for (const auto& [key, value] : metadata) {
    require(!key.empty() && !h5::has_attribute(group.get(), key, path),
            "{}: metadata key '{}' is empty or repeated: expected unique, non-empty keys", path,
            key);
    h5::write_attribute(group.get(), key, metadata_value(key, value), path);
  }
}

// A file of a later layout may mean something else by the same datasets: refused, not guessed at.
// Files without the attribute (written by other tools) are read as version 1.
void require_known_version(hid_t file, const std::string& path) {
  const std::optional<AttributeValue> version = h5::read_attribute(file, "format_version", path);
  if (!version) return;
  const auto* integer = std::get_if<std::int64_t>(&*version);
  require(integer != nullptr && *integer == kFormatVersion,
          "{}: attribute 'format_version' is {}: expected {}, the only version of shiftop's file "
          "layout this shiftop reads (a later shiftop wrote this file?)",
          path, printable(attribute_to_string(*version)), kFormatVersion);
}

// The FFTMatvec attributes a file carries (OperatorData::fftmatvec_attributes): the attributes of
// group fftmatvec_attributes when all block rows have the same, else those of its subgroup
// row_NNNNNN for block row N. A vector's are the group's attributes.
std::string row_group(index_t row) {
  return fmt::format("row_{:06d}", row);
}

void write_attributes(hid_t object, const Attributes& attributes, const std::string& context) {
  for (const auto& [name, value] : attributes)
    h5::write_attribute(object, name, value, context, h5::IntegerWidth::Fit);
}

void write_fftmatvec_attributes(hid_t file, const std::vector<Attributes>& rows,
                                const std::string& path) {
  if (rows.empty()) return;
  const h5::Handle group = h5::create_group(file, kFFTMatvecAttributes, path);
  const std::string context = fmt::format("{}: group '{}'", path, kFFTMatvecAttributes);
  if (std::ranges::all_of(rows, [&](const Attributes& row) { return row == rows.front(); })) {
    write_attributes(group.get(), rows.front(), context);
    return;
  }
  for (std::size_t row = 0; row < rows.size(); ++row) {
    const std::string name = row_group(static_cast<index_t>(row));
    write_attributes(h5::create_group(group.get(), name, context).get(), rows[row],
                     fmt::format("{}/{}", context, name));
  }
}

// The carried attributes of rows [begin, end); empty if the file carries none.
std::vector<Attributes> read_fftmatvec_attributes(hid_t file, index_t begin, index_t end,
                                                  const std::string& path) {
  if (!h5::has_link(file, kFFTMatvecAttributes, path)) return {};
  const h5::Handle group = h5::open_group(file, kFFTMatvecAttributes, path);
  const std::string context = fmt::format("{}: group '{}'", path, kFFTMatvecAttributes);
  if (h5::link_names(group.get(), context).empty())
    return std::vector<Attributes>(static_cast<std::size_t>(end - begin),
                                   h5::read_attributes(group.get(), context));
  std::vector<Attributes> rows;
  for (index_t row = begin; row < end; ++row) {
    const std::string name = row_group(row);
    require(h5::has_link(group.get(), name, context),
            "{}: no group '{}': expected one per block row when the rows' attributes differ",
            context, name);
    rows.push_back(h5::read_attributes(h5::open_group(group.get(), name, context).get(),
                                       fmt::format("{}/{}", context, name)));
  }
  return rows;
}

// Dimensions of a float64 dataset, checked for rank and non-empty extents.
std::vector<index_t> float64_dims(hid_t dataset, const std::string& context,
                                  std::span<const int> ranks, std::string_view layout) {
  const std::vector<index_t> dims = h5::dataset_dims(dataset, context);
  require(std::ranges::find(ranks, static_cast<int>(dims.size())) != ranks.end(),
          "{}: has rank {} (shape ({})): expected {}", context, dims.size(), fmt::join(dims, ", "),
          layout);
  require(std::ranges::none_of(dims, [](index_t n) { return n == 0; }),
          "{}: has an empty dimension (shape ({})): expected {}", context, fmt::join(dims, ", "),
          layout);
  h5::require_float64(dataset, context);
  return dims;
}

// The operator layout of an open file: shape, triangularity, with the size attributes checked
// against the dataset.
struct Layout {
  Shape shape;
  bool triangular = true;
};

Layout read_layout(hid_t file, const std::string& path) {
  require_known_version(file, path);
  require(h5::has_link(file, kKernels, path),
          "{}: no dataset 'kernels': expected shiftop's operator file with dataset 'kernels' of "
          "shape (Nd, Nm, Nt){}",
          path, what_it_has(file, path));
  const std::string context = dataset_context(path, kKernels);
  const h5::Handle kernels = h5::open_dataset(file, kKernels, path);
  constexpr std::array<int, 1> kRank3 = {3};
  const std::vector<index_t> dims =
      float64_dims(kernels.get(), context, kRank3, "rank 3, shape (Nd, Nm, Nt)");
  const Layout layout{{dims[0], dims[1], dims[2]}, !h5::has_link(file, kFirstRow, path)};
  require_indexable(layout.shape, context);
  constexpr std::array<const char*, 3> kSizes = {"nd", "nm", "nt"};
  for (std::size_t k = 0; k < kSizes.size(); ++k) {
    const std::optional<index_t> size = count_attribute(file, kSizes[k], path);
    require(!size || *size == dims[k],
            "{}: attribute '{}' = {} disagrees with dataset 'kernels' of shape ({}): expected {}",
            path, kSizes[k], size.value_or(0), fmt::join(dims, ", "), dims[k]);
  }
  const std::optional<bool> triangular = flag_attribute(file, "triangular", path);
  require(!triangular || *triangular == layout.triangular,
          "{}: attribute 'triangular' is {} but dataset 'first_row' is {}: expected {}", path,
          triangular.value_or(false) ? 1 : 0, layout.triangular ? "absent" : "present",
          layout.triangular ? "a 'first_row' dataset for a general operator"
                            : "triangular = 0 with a 'first_row' dataset");
  if (!layout.triangular) {
    const h5::Handle row = h5::open_dataset(file, kFirstRow, path);
    const std::vector<index_t> row_dims =
        float64_dims(row.get(), dataset_context(path, kFirstRow), kRank3, "rank 3");
    require(row_dims == dims, "{}: has shape ({}): expected the shape of 'kernels', ({})",
            dataset_context(path, kFirstRow), fmt::join(row_dims, ", "), fmt::join(dims, ", "));
  }
  return layout;
}

std::vector<double> read_block(hid_t file, const char* name, const ResolvedSlice& slice, index_t nt,
                               const std::string& path) {
  const h5::Handle dataset = h5::open_dataset(file, name, path);
  std::vector<double> values(static_cast<std::size_t>(slice.rows() * slice.cols() * nt));
  const std::array<index_t, 3> offset = {slice.row_begin, slice.col_begin, 0};
  const std::array<index_t, 3> count = {slice.rows(), slice.cols(), nt};
  h5::read_doubles(dataset.get(), offset, count, values.data(), dataset_context(path, name));
  return values;
}

void write_format_marker(hid_t file, std::string_view kind, const std::string& path) {
  h5::write_attribute(file, "shiftop_format", std::string(kind), path);
  h5::write_attribute(file, "format_version", kFormatVersion, path);
}

VectorSpace parse_space(const std::optional<AttributeValue>& value, const std::string& path) {
  if (!value) return VectorSpace::Unknown;
  const std::string text = attribute_to_string(*value);
  if (text == "parameter") return VectorSpace::Parameter;
  if (text == "data") return VectorSpace::Data;
  fail("{}: attribute 'space' is '{}': expected 'parameter' or 'data'", path, text);
}

struct VectorLayout {
  std::vector<index_t> dims;
  VectorSpace space = VectorSpace::Unknown;
  bool qoi = false;
  std::int64_t checksum = 0;
};

VectorLayout read_vector_layout(hid_t file, const std::string& path) {
  require_known_version(file, path);
  require(h5::has_link(file, kVector, path),
          "{}: no dataset 'vector': expected shiftop's vector file with dataset 'vector' of shape "
          "(blocks, Nt) or (nrhs, blocks, Nt){}",
          path, what_it_has(file, path));
  const h5::Handle dataset = h5::open_dataset(file, kVector, path);
  constexpr std::array<int, 2> kRanks = {2, 3};
  VectorLayout layout;
  layout.dims = float64_dims(dataset.get(), dataset_context(path, kVector), kRanks,
                             "rank 2 or 3, shape (blocks, Nt) or (nrhs, blocks, Nt)");
  layout.space = parse_space(h5::read_attribute(file, "space", path), path);
  layout.qoi = flag_attribute(file, "qoi", path).value_or(false);
  if (const auto checksum = h5::read_attribute(file, "checksum", path)) {
    const auto* integer = std::get_if<std::int64_t>(&*checksum);
    require(integer != nullptr, "{}: attribute 'checksum' is '{}': expected an integer", path,
            attribute_to_string(*checksum));
    layout.checksum = *integer;
  }
  return layout;
}

// Writes a shiftop file atomically: the format marker, what `write_data` writes, the metadata.
template <typename WriteData>
void write_file(const std::string& path, std::string_view kind, const Metadata& metadata,
                WriteData write_data) {
  AtomicOutput output(path, AtomicOutput::Kind::File);
  h5::Handle file = h5::create_file(output.path());
  write_format_marker(file.get(), kind, path);
  write_data(file.get());
  write_metadata(file.get(), metadata, path);
  file.close(path);
  output.commit();
}

OperatorData read_operator(const std::string& path, const OperatorReadOptions& options) {
  const h5::Handle file = h5::open_file(path);
  const Layout layout = read_layout(file.get(), path);
  const ResolvedSlice slice = resolve_slice(options.slice, layout.shape, path);
  OperatorData op = slice_to_read(layout.shape, slice, layout.triangular, path);
  op.first_column = read_block(file.get(), kKernels, slice, op.shape.nt, path);
  if (!op.triangular) op.first_row = read_block(file.get(), kFirstRow, slice, op.shape.nt, path);
  if (!options.allow_nonfinite) {
    require_finite_kernels(op.first_column, op.shape, op.row_begin, op.col_begin,
                           dataset_context(path, kKernels), options.allow_nonfinite_name);
    if (!op.triangular)
      require_finite_kernels(op.first_row, op.shape, op.row_begin, op.col_begin,
                             dataset_context(path, kFirstRow), options.allow_nonfinite_name);
  }
  require_consistent_lag_zero(op, path);
  op.metadata = read_metadata(file.get(), path);
  op.fftmatvec_attributes =
      read_fftmatvec_attributes(file.get(), slice.row_begin, slice.row_end, path);
  return op;
}

void write_operator(const std::string& path, const OperatorData& op) {
  write_file(path, "operator", op.metadata, [&](hid_t file) {
    h5::write_attribute(file, "nd", op.shape.nd, path);
    h5::write_attribute(file, "nm", op.shape.nm, path);
    h5::write_attribute(file, "nt", op.shape.nt, path);
    h5::write_attribute(file, "triangular", std::int64_t{op.triangular ? 1 : 0}, path);
    const std::array<index_t, 3> dims = {op.shape.nd, op.shape.nm, op.shape.nt};
    h5::write_doubles(file, kKernels, dims, op.first_column.data(), path);
    if (!op.triangular) h5::write_doubles(file, kFirstRow, dims, op.first_row.data(), path);
    write_fftmatvec_attributes(file, op.fftmatvec_attributes, path);
  });
}

OperatorInfo inspect_operator(const std::string& path) {
  const h5::Handle file = h5::open_file(path);
  const Layout layout = read_layout(file.get(), path);
  OperatorInfo info{
      .format = OperatorFormat::Shiftop,
      .shape = layout.shape,
      .triangular = layout.triangular,
      .stored_bytes = static_cast<index_t>(stored_bytes(layout.shape, layout.triangular)),
      .details = {}};
  if (const auto version = h5::read_attribute(file.get(), "format_version", path))
    info.details.push_back(to_detail("format_version", *version));
  append_metadata_details(file.get(), path, info.details);
  return info;
}

VectorData read_vector(const std::string& path, const VectorReadOptions& options) {
  const h5::Handle file = h5::open_file(path);
  const VectorLayout layout = read_vector_layout(file.get(), path);
  const std::vector<index_t>& dims = layout.dims;
  VectorData vector;
  set_sizes(vector, dims);
  vector.space = layout.space;
  vector.qoi = layout.qoi;
  vector.checksum = layout.checksum;
  const double count = static_cast<double>(vector.nrhs) * static_cast<double>(vector.blocks) *
                       static_cast<double>(vector.nt);
  require_available_memory(
      8 * count, fmt::format("{}: reading the vector of shape ({})", path, fmt::join(dims, ", ")));
  vector.values.resize(static_cast<std::size_t>(vector.nrhs * vector.blocks * vector.nt));
  const h5::Handle dataset = h5::open_dataset(file.get(), kVector, path);
  const std::vector<index_t> offset(dims.size(), 0);
  h5::read_doubles(dataset.get(), offset, dims, vector.values.data(),
                   dataset_context(path, kVector));
  if (!options.allow_nonfinite)
    require_finite_vectors(vector.values, vector.blocks, vector.nt, dataset_context(path, kVector),
                           options.allow_nonfinite_name);
  vector.metadata = read_metadata(file.get(), path);
  const std::vector<Attributes> carried = read_fftmatvec_attributes(file.get(), 0, 1, path);
  if (!carried.empty()) vector.fftmatvec_attributes = carried.front();
  return vector;
}

void write_vector(const std::string& path, const VectorData& vector) {
  write_file(path, "vector", vector.metadata, [&](hid_t file) {
    if (vector.space != VectorSpace::Unknown)
      h5::write_attribute(file, "space", std::string(name_of(vector.space)), path);
    if (vector.qoi) h5::write_attribute(file, "qoi", std::int64_t{1}, path);
    if (vector.checksum != 0) h5::write_attribute(file, "checksum", vector.checksum, path);
    h5::write_doubles(file, kVector, stored_dims(vector), vector.values.data(), path);
    if (!vector.fftmatvec_attributes.empty())
      write_fftmatvec_attributes(file, {vector.fftmatvec_attributes}, path);
  });
}

VectorInfo inspect_vector(const std::string& path) {
  const h5::Handle file = h5::open_file(path);
  const VectorLayout layout = read_vector_layout(file.get(), path);
  const std::vector<index_t>& dims = layout.dims;
  VectorInfo info;
  info.format = VectorFormat::Shiftop;
  set_sizes(info, dims);
  info.space = layout.space;
  if (layout.qoi) info.details.push_back({"qoi", true, "data of a parameter-to-QoI map"});
  if (layout.checksum != 0) info.details.push_back({"checksum", layout.checksum});
  append_metadata_details(file.get(), path, info.details);
  return info;
}

}  // namespace

constinit const OperatorCodec kOperatorCodec{read_operator, write_operator, inspect_operator};
constinit const VectorCodec kVectorCodec{read_vector, write_vector, inspect_vector};

}  // namespace shiftop::io::shiftop_h5
