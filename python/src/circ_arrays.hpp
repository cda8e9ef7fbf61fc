// What the block-circulant and CT bindings share: their 1-D NumPy arrays and the CSR of a first
// block row A as NumPy arrays that own it.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <tuple>
#include <utility>

#include "result_arrays.hpp"
#include "shiftop/circ/operator.hpp"

namespace shiftop::python {

template <class T>
using Values =
    nanobind::ndarray<const T, nanobind::ndim<1>, nanobind::c_contig, nanobind::device::cpu>;
template <class T>
using Mutable = nanobind::ndarray<T, nanobind::ndim<1>, nanobind::c_contig, nanobind::device::cpu>;

template <class T>
using Csr = std::tuple<nanobind::ndarray<nanobind::numpy, std::int64_t, nanobind::ndim<1>>,
                       nanobind::ndarray<nanobind::numpy, std::int64_t, nanobind::ndim<1>>,
                       nanobind::ndarray<nanobind::numpy, T, nanobind::ndim<1>>>;

/// (indptr, indices, data) as NumPy arrays owning the row's vectors.
template <class T>
Csr<T> csr_arrays(circ::FirstBlockRow<T>&& a) {
  return {owned_vector(std::move(a.indptr)), owned_vector(std::move(a.indices)),
          owned_vector(std::move(a.data))};
}

}  // namespace shiftop::python
