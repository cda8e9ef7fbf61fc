// The dense matrices the `svd` command reads: a 2-D .npy array (real or complex, float64 or
// float32, C or Fortran order: io::read_npy_matrix) or a 2-D real dataset of an HDF5 file.
#pragma once

#include <string>
#include <string_view>

#include "shiftop/io/npy.hpp"

namespace shiftop::io {

/// A .npy file by its extension, any other file as HDF5: the dataset `dataset` names, or when
/// `dataset` is empty the only 2-D dataset at the file's root (float64 or float32, C order).
/// Throws shiftop::Error naming the file, the dataset and what was expected; `dataset_option` is
/// the caller's option that names the dataset ("--dataset", gsvd's "--f-dataset").
DenseMatrix read_matrix_file(const std::string& path, const std::string& dataset,
                             std::string_view dataset_option);

}  // namespace shiftop::io
