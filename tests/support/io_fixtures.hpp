// Writers of deliberately odd or broken files for the I/O tests and the command-line fixtures:
// HDF5 datasets of any element type, unwritten (huge) datasets, FFTMatvec directories built row by
// row, truncated and corrupted copies. Everything is written with the HDF5 C API directly, not
// through shiftop's writers, so the readers are tested against files they did not produce.
#pragma once

#include <hdf5.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "io/attribute_value.hpp"
#include "io/hdf5.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/shape.hpp"

namespace shiftop::testing {

using Attributes = std::vector<std::pair<std::string, io::AttributeValue>>;

struct DatasetSpec {
  std::string name;
  std::vector<index_t> dims{};
  /// Converted by HDF5 to `file_type` on writing; ignored when `unwritten`.
  std::vector<double> values{};
  hid_t file_type = H5T_IEEE_F64LE;
  /// Chunked and never written: a dataset of any size in a file of a few kilobytes.
  bool unwritten = false;
  Attributes attributes{};
};

inline void write_h5(const std::string& path, const std::vector<DatasetSpec>& datasets,
                     const Attributes& root_attributes = {}) {
  std::filesystem::remove(path);
  io::h5::Handle file = io::h5::create_file(path);
  for (const auto& [name, value] : root_attributes)
    io::h5::write_attribute(file.get(), name, value, path);
  for (const DatasetSpec& d : datasets) {
    const std::vector<hsize_t> dims(d.dims.begin(), d.dims.end());
    const io::h5::Handle space(
        H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
    const io::h5::Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    if (d.unwritten) {
      std::vector<hsize_t> chunk(dims.size(), 1);
      if (!chunk.empty()) chunk.back() = std::min<hsize_t>(dims.back(), 1024);
      H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data());
    }
    const io::h5::Handle dataset(H5Dcreate2(file.get(), d.name.c_str(), d.file_type, space.get(),
                                            H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                                 H5Dclose);
    require(dataset.get() >= 0, "{}: test fixture: cannot create dataset {}", path, d.name);
    if (!d.unwritten)
      require(H5Dwrite(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                       d.values.data()) >= 0,
              "{}: test fixture: cannot write dataset {}", path, d.name);
    for (const auto& [name, value] : d.attributes)
      io::h5::write_attribute(dataset.get(), name, value, path, io::h5::IntegerWidth::Bits32);
  }
  file.close(path);
}

/// The block-row dataset FFTMatvec reads: "vec" of length nm*nt with its three attributes.
inline DatasetSpec fftmatvec_row(std::vector<double> values, index_t nm, index_t nt) {
  return {.name = "vec",
          .dims = {nm * nt},
          .values = std::move(values),
          .attributes = {{"reindex", std::int64_t{1}},
                         {"n_param", std::int64_t{nm}},
                         {"param_steps", std::int64_t{nt}}}};
}

/// DIR/binary/meta_adj with `meta` and block rows binary/<prefix>NNNNNN.h5 from `rows`.
inline void write_fftmatvec_dir(const std::string& dir, const std::string& meta,
                                const std::string& prefix, const std::vector<DatasetSpec>& rows) {
  namespace fs = std::filesystem;
  fs::remove_all(dir);
  const fs::path binary = fs::path(dir) / "binary";
  fs::create_directories((binary / prefix).parent_path());
  std::ofstream(binary / "meta_adj", std::ios::binary) << meta;
  for (std::size_t r = 0; r < rows.size(); ++r)
    write_h5((binary / fmt::format("{}{:06d}.h5", prefix, r)).string(), {rows[r]});
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

/// A copy of `from` cut to `fraction` of its length.
inline void write_truncated(const std::string& from, const std::string& to, double fraction) {
  const std::string bytes = read_bytes(from);
  write_bytes(
      to, bytes.substr(0, static_cast<std::size_t>(fraction * static_cast<double>(bytes.size()))));
}

/// A copy of `from` with every byte after the 8-byte HDF5 signature overwritten by `fill`.
inline void write_corrupted(const std::string& from, const std::string& to, char fill) {
  std::string bytes = read_bytes(from);
  for (std::size_t k = 8; k < bytes.size(); ++k)
    bytes[k] = fill;
  write_bytes(to, bytes);
}

}  // namespace shiftop::testing
