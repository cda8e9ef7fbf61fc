// NumPy arrays that own a result's buffer (moved, not copied), as every binding returns them.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <array>
#include <cstddef>
#include <utility>
#include <vector>

namespace shiftop::python {

/// A new NumPy array of `shape` that owns `values` (moved, not copied).
template <class T, std::size_t N>
nanobind::ndarray<nanobind::numpy, T> owned_array(std::vector<T>&& values,
                                                  const std::array<std::size_t, N>& shape) {
  auto* owner = new std::vector<T>(std::move(values));
  nanobind::capsule free(owner, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nanobind::ndarray<nanobind::numpy, T>(owner->data(), N, shape.data(), free);
}

/// owned_array of one dimension, typed as such.
template <class T>
nanobind::ndarray<nanobind::numpy, T, nanobind::ndim<1>> owned_vector(std::vector<T>&& values) {
  const std::array<std::size_t, 1> shape{values.size()};
  return nanobind::ndarray<nanobind::numpy, T, nanobind::ndim<1>>(
      owned_array(std::move(values), shape));
}

}  // namespace shiftop::python
