#include "shiftop/io/matrix_file.hpp"

#include <fmt/ranges.h>

#include <filesystem>
#include <vector>

#include "io/hdf5.hpp"
#include "shiftop/core/error.hpp"

namespace shiftop::io {
namespace {

using namespace h5;

// The root's 2-D datasets, for choosing one when --dataset is not given.
std::vector<std::string> matrix_datasets(hid_t file, const std::string& context) {
  std::vector<std::string> found;
  for (const std::string& name : link_names(file, context)) {
    const Handle object(H5Oopen(file, name.c_str(), H5P_DEFAULT), H5Oclose);
    if (object.get() < 0 || H5Iget_type(object.get()) != H5I_DATASET) continue;
    const Handle dataset = open_dataset(file, name, context);
    if (dataset_dims(dataset.get(), context).size() == 2) found.push_back(name);
  }
  return found;
}

DenseMatrix read_hdf5_matrix(const std::string& path, const std::string& requested,
                             std::string_view dataset_option) {
  const Handle file = open_file(path);
  std::string name = requested;
  if (name.empty()) {
    const std::vector<std::string> candidates = matrix_datasets(file.get(), path);
    require(candidates.size() == 1,
            "{}: expected exactly one 2-D dataset at the root, found {} ({}): name it with {}",
            path, candidates.size(), fmt::join(candidates, ", "), dataset_option);
    name = candidates.front();
  }
  const std::string context = fmt::format("{}: dataset '{}'", path, name);
  const Handle dataset = open_dataset(file.get(), name, path);
  const std::vector<index_t> dims = dataset_dims(dataset.get(), context);
  require(dims.size() == 2, "{}: expected a 2-D dataset (a matrix), got {} dimensions ({})",
          context, dims.size(), fmt::join(dims, ", "));
  const bool single = element_type_name(dataset.get(), context) == "float32";
  if (!single) require_float64(dataset.get(), context);
  DenseMatrix matrix{.element = single ? Element::Float32 : Element::Float64,
                     .rows = dims[0],
                     .cols = dims[1],
                     .data = {}};
  std::vector<double> row_major(static_cast<std::size_t>(dims[0] * dims[1]));
  const std::vector<index_t> offset{0, 0};
  read_doubles(dataset.get(), offset, dims, row_major.data(), context);
  matrix.data.resize(row_major.size());
  for (index_t r = 0; r < matrix.rows; ++r)
    for (index_t c = 0; c < matrix.cols; ++c)
      matrix.data[static_cast<std::size_t>(c * matrix.rows + r)] =
          row_major[static_cast<std::size_t>(r * matrix.cols + c)];
  return matrix;
}

}  // namespace

DenseMatrix read_matrix_file(const std::string& path, const std::string& dataset,
                             std::string_view dataset_option) {
  if (std::filesystem::path(path).extension() == ".npy") {
    require(dataset.empty(), "{} {}: {} is an .npy file, which holds one array", dataset_option,
            dataset, path);
    return read_npy_matrix(path);
  }
  return read_hdf5_matrix(path, dataset, dataset_option);
}

}  // namespace shiftop::io
