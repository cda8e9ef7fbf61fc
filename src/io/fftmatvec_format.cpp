#include "io/fftmatvec_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "io/attribute_value.hpp"
#include "io/consistency.hpp"
#include "io/fftmatvec_meta.hpp"
#include "io/hdf5.hpp"
#include "io/nonfinite.hpp"
#include "shiftop/core/available_memory.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/io/atomic_output.hpp"

namespace shiftop::io::fftmatvec {
namespace {

namespace fs = std::filesystem;

constexpr const char* kVec = "vec";
// meta_adj's nine lines are short; nine lines longer than this are not meta_adj's.
constexpr std::size_t kMaxMetaBytes = 4096;
// The attributes of "vec" that shiftop interprets and writes itself, for a block row, a
// parameter-space and a data-space vector; every other scalar attribute is carried through
// conversions. The last of each only when it has a value that means something (checksum != 0,
// qoi = 1): a checksum = 0 or qoi = 0 attribute is carried as it is.
constexpr std::array<std::string_view, 4> kRowAttributes = {"reindex", "n_param", "param_steps",
                                                            "checksum"};
constexpr std::array<std::string_view, 4> kParameterAttributes = {"n_param", "param_steps",
                                                                  "reindex", "checksum"};
constexpr std::array<std::string_view, 4> kDataAttributes = {"n_obs", "obs_steps", "reindex",
                                                             "qoi"};

std::span<const std::string_view> interpreted(const std::array<std::string_view, 4>& names,
                                              bool last) {
  return std::span(names).first(last ? 4 : 3);
}

std::string meta_path(const std::string& dir) {
  return (fs::path(dir) / "binary" / "meta_adj").string();
}

MetaAdj read_meta(const std::string& dir) {
  const std::string path = meta_path(dir);
  std::error_code error;
  if (!fs::is_regular_file(path, error)) {
    const bool is_dir = fs::is_directory(dir, error);
    fail(
        "{}: {}: expected an FFTMatvec matrix directory (the directory that contains "
        "binary/meta_adj)",
        dir, is_dir ? "no file binary/meta_adj" : "no such directory");
  }
  // FFTMatvec reads nothing after line 9, so only the start of the file is read: the nine lines
  // must fit in it.
  std::ifstream in(path, std::ios::binary);
  std::string text(kMaxMetaBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  require(in.good() || in.eof(), "{}: cannot read the file", path);
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxMetaBytes) {
    std::size_t end = std::string::npos;  // npos + 1 is 0: the first search starts at 0
    for (int line = 0; line < 9; ++line)
      if ((end = text.find('\n', end + 1)) == std::string::npos) break;
    require(end != std::string::npos && end < kMaxMetaBytes,
            "{}: the first nine lines are longer than {} bytes: expected meta_adj's short lines",
            path, kMaxMetaBytes);
    text.resize(end + 1);
  }
  MetaAdj meta = parse_meta_adj(text, path);
  require(meta.reindexed,
          "{}: line 6: reindexed flag is 0: expected 1 (block rows reindexed into SOTI order, the "
          "only layout FFTMatvec and shiftop read)",
          path);
  require(meta.reverse_dof,
          "{}: line 8: reverse-dof flag is 0: expected 1 (block rows in forward time order, the "
          "only layout FFTMatvec and shiftop read)",
          path);
  return meta;
}

std::string row_file(const std::string& dir, const MetaAdj& meta, index_t row) {
  return (fs::path(dir) / block_row_path(meta, row)).string();
}

index_t required_count(hid_t dataset, const std::string& name, const std::string& context) {
  const std::optional<AttributeValue> value = h5::read_attribute(dataset, name, context);
  require(value.has_value(), "{}: no attribute '{}': expected one (FFTMatvec requires it)", context,
          name);
  return attribute_to_count(*value, fmt::format("{}: attribute '{}'", context, name));
}

std::optional<std::int64_t> integer_attribute(hid_t dataset, const std::string& name,
                                              const std::string& context) {
  const std::optional<AttributeValue> value = h5::read_attribute(dataset, name, context);
  if (!value) return std::nullopt;
  if (const auto* integer = std::get_if<std::int64_t>(&*value)) return *integer;
  // A float is accepted if it holds an integer exactly (|x| <= 2^53); the comparisons are false
  // for NaN, and the range check comes before the conversion, which is undefined outside it.
  constexpr double kExact = 9007199254740992.0;
  const auto* real = std::get_if<double>(&*value);
  require(real != nullptr && std::abs(*real) <= kExact && std::floor(*real) == *real,
          "{}: attribute '{}' is '{}': expected an integer", context, name,
          attribute_to_string(*value));
  return static_cast<std::int64_t>(*real);
}

// FFTMatvec tests reindex as a C truth value (`if (!reindex)`, `(bool)reindex != SOTI_ordering`).
void require_reindexed(hid_t dataset, const std::string& context, std::string_view meaning) {
  const std::optional<std::int64_t> reindex = integer_attribute(dataset, "reindex", context);
  require(reindex.has_value(), "{}: no attribute 'reindex': expected one (FFTMatvec requires it)",
          context);
  require(*reindex != 0, "{}: attribute 'reindex' is 0: expected 1 ({})", context, meaning);
}

bool is_one_of(std::string_view name, std::span<const std::string_view> names) {
  return std::ranges::find(names, name) != names.end();
}

// The attributes of `dataset` other than `interpreted`, to carry; the names of those of types
// shiftop cannot hold are added to `uncarried` (once each).
Attributes carried_attributes(hid_t dataset, std::span<const std::string_view> interpreted,
                              const std::string& context, std::vector<std::string>& uncarried) {
  Attributes out;
  std::vector<std::string> unread;
  for (auto& [name, value] : h5::read_attributes(dataset, context, &unread))
    if (!is_one_of(name, interpreted)) out.emplace_back(std::move(name), std::move(value));
  for (std::string& name : unread)
    if (!is_one_of(name, interpreted) && std::ranges::find(uncarried, name) == uncarried.end())
      uncarried.push_back(std::move(name));
  return out;
}

// Writes carried attributes, except those the writer has written itself (`written`); integers as
// C ints where they fit, as FFTMatvec writes them.
void write_carried(hid_t dataset, const Attributes& attributes,
                   std::span<const std::string_view> written, const std::string& context) {
  for (const auto& [name, value] : attributes)
    if (!is_one_of(name, written))
      h5::write_attribute(dataset, name, value, context, h5::IntegerWidth::Fit);
}

// Opens block row `row`, checks it against meta_adj, and returns its "vec" dataset.
h5::Handle open_row(const h5::Handle& file, const MetaAdj& meta, index_t row,
                    const std::string& path) {
  const std::string context = fmt::format("{}: dataset 'vec'", path);
  require(h5::has_link(file.get(), kVec, path),
          "{}: no dataset 'vec': expected FFTMatvec block row {} (a 1-D dataset 'vec' of length "
          "Nm*Nt)",
          path, row);
  h5::Handle dataset = h5::open_dataset(file.get(), kVec, path);
  const std::vector<index_t> dims = h5::dataset_dims(dataset.get(), context);
  const index_t length = meta.nm * meta.nt;
  require(dims.size() == 1 && dims[0] == length,
          "{}: has shape ({}): expected length Nm*Nt = {}*{} = {} (binary/meta_adj)", context,
          fmt::format("{}", fmt::join(dims, ", ")), meta.nm, meta.nt, length);
  h5::require_float64(dataset.get(), context);
  require_reindexed(dataset.get(), context, "a block row in SOTI order");
  const index_t n_param = required_count(dataset.get(), "n_param", context);
  require(n_param == meta.nm, "{}: attribute 'n_param' is {}: expected Nm = {} (binary/meta_adj)",
          context, n_param, meta.nm);
  const index_t steps = required_count(dataset.get(), "param_steps", context);
  require(steps == meta.nt, "{}: attribute 'param_steps' is {}: expected Nt = {} (binary/meta_adj)",
          context, steps, meta.nt);
  if (meta.checksum != 0) {
    const std::optional<std::int64_t> checksum =
        integer_attribute(dataset.get(), "checksum", context);
    require(checksum.has_value(),
            "{}: no attribute 'checksum': expected {} (binary/meta_adj has a checksum)", context,
            meta.checksum);
    require(*checksum == meta.checksum,
            "{}: attribute 'checksum' is {}: expected {} (binary/meta_adj)", context, *checksum,
            meta.checksum);
  }
  return dataset;
}

h5::Handle open_existing_row(const std::string& path, index_t row, const MetaAdj& meta) {
  std::error_code error;
  require(fs::exists(path, error),
          "{}: missing: expected block row {} of Nd = {} (binary/meta_adj lists one file per "
          "block row)",
          path, row, meta.nd);
  return h5::open_file(path);
}

std::string metadata_value(const OperatorData& op, std::string_view key) {
  for (const auto& [name, value] : op.metadata)
    if (name == key) return value;
  return {};
}

std::int64_t metadata_integer(const OperatorData& op, std::string_view key, std::string_view path) {
  const std::string text = metadata_value(op, key);
  if (text.empty()) return 0;
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  require(error == std::errc() && end == text.data() + text.size(),
          "{}: metadata '{}' is '{}': expected an integer", path, key, text);
  return value;
}

MetaAdj meta_for(const OperatorData& op, const std::string& dir) {
  MetaAdj meta{.nd = op.shape.nd,
               .nm = op.shape.nm,
               .nt = op.shape.nt,
               .prefix = metadata_value(op, kPrefixKey),
               .extension = ".h5",
               .reindexed = true,
               .p2q = metadata_integer(op, kP2qKey, dir) != 0,
               .reverse_dof = true,
               .checksum = metadata_integer(op, kChecksumKey, dir)};
  if (meta.prefix.empty()) meta.prefix = kDefaultPrefix;
  // Round trip through the parser: the same checks a reader will make (prefix, checksum range).
  return parse_meta_adj(format_meta_adj(meta), fmt::format("{} (meta_adj to be written)", dir));
}

void write_text(const std::string& path, const std::string& text) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr)
    fail("{}: cannot open for writing: {}", path, std::generic_category().message(errno));
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  const bool closed = std::fclose(file) == 0;
  require(written && closed, "{}: write failed (disk full?): {}", path,
          std::generic_category().message(errno));
}

struct VectorLayout {
  VectorSpace space = VectorSpace::Unknown;
  index_t blocks = 0, nt = 0;
  bool qoi = false;
  std::int64_t checksum = 0;
  Attributes carried;
  std::vector<std::string> uncarried;
};

VectorLayout read_vector_layout(const h5::Handle& file, const std::string& path) {
  const std::string context = fmt::format("{}: dataset 'vec'", path);
  require(h5::has_link(file.get(), kVec, path),
          "{}: no dataset 'vec': expected an FFTMatvec vector file", path);
  const h5::Handle dataset = h5::open_dataset(file.get(), kVec, path);
  const std::vector<index_t> dims = h5::dataset_dims(dataset.get(), context);
  require(dims.size() == 1, "{}: has rank {}: expected a 1-D dataset of length blocks*steps",
          context, dims.size());
  h5::require_float64(dataset.get(), context);
  const bool parameter = h5::has_attribute(dataset.get(), "n_param", context);
  const bool data = h5::has_attribute(dataset.get(), "n_obs", context);
  require(parameter != data,
          "{}: {}: expected n_param/param_steps (a parameter-space vector) or n_obs/obs_steps (a "
          "data-space vector)",
          context, parameter ? "has both n_param and n_obs" : "has neither n_param nor n_obs");
  VectorLayout layout;
  layout.space = parameter ? VectorSpace::Parameter : VectorSpace::Data;
  layout.blocks = required_count(dataset.get(), parameter ? "n_param" : "n_obs", context);
  layout.nt = required_count(dataset.get(), parameter ? "param_steps" : "obs_steps", context);
  require(layout.blocks > 0 && layout.nt > 0 &&
              static_cast<double>(layout.blocks) * static_cast<double>(layout.nt) ==
                  static_cast<double>(dims[0]),
          "{}: has length {}: expected {} = {}*{} ({}*{})", context, dims[0],
          static_cast<double>(layout.blocks) * static_cast<double>(layout.nt), layout.blocks,
          layout.nt, parameter ? "n_param" : "n_obs", parameter ? "param_steps" : "obs_steps");
  require_reindexed(dataset.get(), context,
                    "SOTI order; reindex = 0 is TOSI, which shiftop does not read");
  if (data) {
    const std::optional<std::int64_t> qoi = integer_attribute(dataset.get(), "qoi", context);
    require(!qoi || *qoi == 0 || *qoi == 1, "{}: attribute 'qoi' is {}: expected 0 or 1", context,
            qoi.value_or(0));
    layout.qoi = qoi.value_or(0) == 1;
  } else {
    layout.checksum = integer_attribute(dataset.get(), "checksum", context).value_or(0);
  }
  layout.carried =
      carried_attributes(dataset.get(),
                         data ? interpreted(kDataAttributes, layout.qoi)
                              : interpreted(kParameterAttributes, layout.checksum != 0),
                         context, layout.uncarried);
  return layout;
}

// Reads only the block-row files of the slice, and only the columns [c0*Nt, c1*Nt) of each.
OperatorData read_operator(const std::string& dir, const OperatorReadOptions& options) {
  const MetaAdj meta = read_meta(dir);
  const Shape full{meta.nd, meta.nm, meta.nt};
  const ResolvedSlice slice = resolve_slice(options.slice, full, dir);
  OperatorData op = slice_to_read(full, slice, true, dir);
  op.first_column.resize(static_cast<std::size_t>(op.shape.kernel_size()));
  const index_t row_values = op.shape.nm * meta.nt;
  for (index_t row = slice.row_begin; row < slice.row_end; ++row) {
    const std::string path = row_file(dir, meta, row);
    const h5::Handle file = open_existing_row(path, row, meta);
    const h5::Handle dataset = open_row(file, meta, row, path);
    op.fftmatvec_attributes.push_back(
        carried_attributes(dataset.get(), interpreted(kRowAttributes, meta.checksum != 0),
                           fmt::format("{}: dataset 'vec'", path), op.uncarried_attributes));
    double* out = op.first_column.data() + (row - slice.row_begin) * row_values;
    const std::array<index_t, 1> offset = {slice.col_begin * meta.nt};
    const std::array<index_t, 1> count = {row_values};
    const std::string context = fmt::format("{}: dataset 'vec'", path);
    h5::read_doubles(dataset.get(), offset, count, out, context);
    if (!options.allow_nonfinite)
      require_finite_kernels({out, static_cast<std::size_t>(row_values)}, {1, op.shape.nm, meta.nt},
                             row, slice.col_begin, context, options.allow_nonfinite_name);
  }
  if (std::ranges::all_of(op.fftmatvec_attributes, &Attributes::empty))
    op.fftmatvec_attributes.clear();
  op.metadata = {{std::string(kPrefixKey), meta.prefix},
                 {std::string(kP2qKey), meta.p2q ? "1" : "0"},
                 {std::string(kChecksumKey), fmt::format("{}", meta.checksum)}};
  return op;
}

// Whether `relative` (below the matrix directory) is block row r < Nd of `meta`'s files.
bool names_block_row(const MetaAdj& meta, const std::string& relative) {
  const std::string head = "binary/" + meta.prefix;
  if (!relative.starts_with(head) || !relative.ends_with(meta.extension)) return false;
  if (relative.size() < head.size() + meta.extension.size()) return false;
  const std::string_view digits = std::string_view(relative).substr(
      head.size(), relative.size() - head.size() - meta.extension.size());
  index_t row = -1;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), row);
  return error == std::errc{} && end == digits.data() + digits.size() && row >= 0 &&
         row < meta.nd && block_row_path(meta, row) == relative;
}

}  // namespace

void check_replaceable(const std::string& dir) {
  const auto refuse = [&](const std::string& why) {
    fail(
        "{}: already exists and is not a directory holding only 'binary/' as shiftop writes it "
        "(binary/meta_adj and the block rows it names, nothing else): {}: expected a new path "
        "(shiftop replaces only a directory it could have written)",
        dir, why);
  };
  MetaAdj meta;
  try {
    meta = read_meta(dir);
  } catch (const Error& e) {
    refuse(fmt::format("binary/meta_adj is missing or not one shiftop writes ({})", e.what()));
  }
  // binary/ and the directories of the block rows' prefix ("adj/" of "adj/vec_").
  std::vector<std::string> directories;
  for (fs::path up = fs::path(block_row_path(meta, 0)).parent_path(); !up.empty();
       up = up.parent_path())
    directories.push_back(up.string());
  std::error_code error;
  fs::recursive_directory_iterator entry(dir, error), end;
  for (; !error && entry != end; entry.increment(error)) {
    const std::string relative = entry->path().lexically_relative(dir).string();
    const fs::file_status status = entry->symlink_status(error);
    const bool expected =
        fs::is_directory(status)
            ? std::find(directories.begin(), directories.end(), relative) != directories.end()
            : fs::is_regular_file(status) &&
                  (relative == "binary/meta_adj" || names_block_row(meta, relative));
    if (!expected) refuse(fmt::format("it holds '{}'", relative));
  }
  if (error) refuse(fmt::format("it cannot be listed: {}", error.message()));
}

namespace {

void write_operator(const std::string& dir, const OperatorData& op) {
  require_triangular(op, dir, "an FFTMatvec directory holds a", "this operator is general");
  const MetaAdj meta = meta_for(op, dir);
  AtomicOutput output(dir, AtomicOutput::Kind::Directory, check_replaceable);
  const fs::path binary = fs::path(output.path()) / "binary";
  // One level at a time below the temporary, which exists: create_directories would make the
  // temporary again if a signal's cleanup (apps/shiftop/signal_cleanup.cpp) had just removed it,
  // and leave it behind; here the missing parent fails the write instead.
  std::error_code error;
  fs::path made = output.path();
  for (const fs::path& part : fs::path(block_row_path(meta, 0)).parent_path()) {
    made /= part;
    if (!fs::create_directory(made, error) && error) break;
  }
  require(!error, "{}: cannot create {}: {}", dir, binary.string(), error.message());
  write_text((binary / "meta_adj").string(), format_meta_adj(meta));
  const index_t row_values = meta.nm * meta.nt;
  const std::array<index_t, 1> dims = {row_values};
  for (index_t row = 0; row < meta.nd; ++row) {
    const std::string path = (fs::path(output.path()) / block_row_path(meta, row)).string();
    const std::string name = row_file(dir, meta, row);
    h5::Handle file = h5::create_file(path);
    {
      h5::write_doubles(file.get(), kVec, dims, op.first_column.data() + row * row_values, name);
      const h5::Handle dataset = h5::open_dataset(file.get(), kVec, name);
      const auto int32 = h5::IntegerWidth::Bits32;
      h5::write_attribute(dataset.get(), "reindex", std::int64_t{1}, name, int32);
      h5::write_attribute(dataset.get(), "n_param", meta.nm, name, int32);
      h5::write_attribute(dataset.get(), "param_steps", meta.nt, name, int32);
      if (meta.checksum != 0)
        h5::write_attribute(dataset.get(), "checksum", meta.checksum, name, int32);
      if (!op.fftmatvec_attributes.empty())
        write_carried(dataset.get(), op.fftmatvec_attributes.at(static_cast<std::size_t>(row)),
                      interpreted(kRowAttributes, meta.checksum != 0), name);
    }
    file.close(name);
  }
  output.commit();
}

OperatorInfo inspect_operator(const std::string& dir) {
  const MetaAdj meta = read_meta(dir);
  OperatorInfo info{.format = OperatorFormat::FFTMatvec,
                    .shape = {meta.nd, meta.nm, meta.nt},
                    .triangular = true,
                    .stored_bytes = 0,
                    .details = {}};
  require_indexable(info.shape, meta_path(dir));
  info.stored_bytes = static_cast<index_t>(stored_bytes(info.shape, true));
  // Only up to the first missing file: Nd may be far larger than any directory could hold.
  std::optional<std::string> first_missing;
  for (index_t row = 0; row < meta.nd && !first_missing; ++row) {
    std::error_code error;
    if (!fs::exists(row_file(dir, meta, row), error)) first_missing = block_row_path(meta, row);
  }
  info.details = {
      {"block_rows", fmt::format("binary/{}NNNNNN{}", meta.prefix, meta.extension)},
      {"p2q", meta.p2q, meta.p2q ? "parameter-to-QoI" : "parameter-to-observable"},
      {"checksum", meta.checksum, meta.checksum == 0 ? "none" : ""},
      {"first_missing_block_row", first_missing ? Detail::Value(*first_missing) : nullptr}};
  return info;
}

VectorData read_vector(const std::string& path, const VectorReadOptions& options) {
  const h5::Handle file = h5::open_file(path);
  const VectorLayout layout = read_vector_layout(file, path);
  VectorData vector;
  vector.blocks = layout.blocks;
  vector.nt = layout.nt;
  vector.space = layout.space;
  vector.qoi = layout.qoi;
  vector.checksum = layout.checksum;
  vector.fftmatvec_attributes = layout.carried;
  vector.uncarried_attributes = layout.uncarried;
  const index_t count = layout.blocks * layout.nt;
  require_available_memory(8.0 * static_cast<double>(count),
                           fmt::format("{}: reading a vector of {} values", path, count));
  vector.values.resize(static_cast<std::size_t>(count));
  const std::string context = fmt::format("{}: dataset 'vec'", path);
  const h5::Handle dataset = h5::open_dataset(file.get(), kVec, path);
  const std::array<index_t, 1> offset = {0};
  const std::array<index_t, 1> length = {count};
  h5::read_doubles(dataset.get(), offset, length, vector.values.data(), context);
  if (!options.allow_nonfinite)
    require_finite_vectors(vector.values, vector.blocks, vector.nt, context,
                           options.allow_nonfinite_name);
  return vector;
}

void write_vector(const std::string& path, const VectorData& vector) {
  require(vector.nrhs == 1 && !vector.batched,
          "{}: an FFTMatvec vector file holds one vector: expected 1 right-hand side, got {}", path,
          vector.nrhs);
  require(vector.space != VectorSpace::Unknown,
          "{}: an FFTMatvec vector file must say whether it is a parameter- or data-space vector: "
          "expected a known space (shiftop convert: --space parameter|data)",
          path);
  AtomicOutput output(path, AtomicOutput::Kind::File);
  h5::Handle file = h5::create_file(output.path());
  {
    const std::array<index_t, 1> dims = {vector.blocks * vector.nt};
    h5::write_doubles(file.get(), kVec, dims, vector.values.data(), path);
    const h5::Handle dataset = h5::open_dataset(file.get(), kVec, path);
    const auto int32 = h5::IntegerWidth::Bits32;
    // The attributes FFTMatvec's Vector::save writes, in its order.
    if (vector.space == VectorSpace::Parameter) {
      h5::write_attribute(dataset.get(), "n_param", vector.blocks, path, int32);
      h5::write_attribute(dataset.get(), "param_steps", vector.nt, path, int32);
      if (vector.checksum != 0)
        h5::write_attribute(dataset.get(), "checksum", vector.checksum, path, int32);
    } else {
      if (vector.qoi) h5::write_attribute(dataset.get(), "qoi", std::int64_t{1}, path, int32);
      h5::write_attribute(dataset.get(), "n_obs", vector.blocks, path, int32);
      h5::write_attribute(dataset.get(), "obs_steps", vector.nt, path, int32);
    }
    h5::write_attribute(dataset.get(), "reindex", std::int64_t{1}, path, int32);
    write_carried(dataset.get(), vector.fftmatvec_attributes,
                  vector.space == VectorSpace::Parameter
                      ? interpreted(kParameterAttributes, vector.checksum != 0)
                      : interpreted(kDataAttributes, vector.qoi),
                  path);
  }
  file.close(path);
  output.commit();
}

VectorInfo inspect_vector(const std::string& path) {
  const h5::Handle file = h5::open_file(path);
  const VectorLayout layout = read_vector_layout(file, path);
  VectorInfo info;
  info.format = VectorFormat::FFTMatvec;
  info.blocks = layout.blocks;
  info.nt = layout.nt;
  info.space = layout.space;
  if (layout.qoi) info.details.push_back({"qoi", true, "data of a parameter-to-QoI map"});
  if (layout.checksum != 0) info.details.push_back({"checksum", layout.checksum});
  return info;
}

}  // namespace

constinit const OperatorCodec kOperatorCodec{read_operator, write_operator, inspect_operator};
constinit const VectorCodec kVectorCodec{read_vector, write_vector, inspect_vector};

}  // namespace shiftop::io::fftmatvec
