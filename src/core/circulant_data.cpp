// The shape of a block-circulant operator and the check of its first block row's CSR
// (include/shiftop/core/circulant_data.hpp).
#include "shiftop/core/circulant_data.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "shiftop/core/error.hpp"

namespace shiftop::circ {

namespace {

// The kernels address the dense operands X^ (nb rows of 2k) and Y^ (mb rows of 2k) with 32-bit
// offsets l*2k + d and r*2k + (k - d) (circ/layout.hpp): both k*nb and k*mb must be below 2^31.
constexpr index_t kMaxDenseLength = std::numeric_limits<std::int32_t>::max();

}  // namespace

void Shape::validate() const {
  require(k >= 1 && mb >= 1 && nb >= 1,
          "block-circulant shape k={} mb={} nb={}: every size must be at least 1", k, mb, nb);
  require(
      k <= kMaxDenseLength / mb,
      "block-circulant shape k={} mb={}: k*mb = {} rows is not below 2^31 (the products address "
      "their operands with 32-bit offsets)",
      k, mb, static_cast<double>(k) * static_cast<double>(mb));
  require(k <= kMaxDenseLength / nb,
          "block-circulant shape k={} nb={}: k*nb = {} columns is not below 2^31 (the products "
          "address their operands with 32-bit offsets)",
          k, nb, static_cast<double>(k) * static_cast<double>(nb));
}

std::string Shape::str() const {
  return fmt::format("k={} mb={} nb={} ({} x {})", k, mb, nb, rows(), cols());
}

template <class T, class I>
void validate(const Shape& shape, CsrView<T, I> a, const std::string& context) {
  shape.validate();
  const auto rows = static_cast<std::size_t>(shape.mb);
  require(a.indptr.size() == rows + 1,
          "{}: indptr has {} entries, expected mb+1 = {} (one per row of A and one more)", context,
          a.indptr.size(), rows + 1);
  require(a.indptr[0] == 0, "{}: indptr[0] is {}, expected 0", context,
          static_cast<std::int64_t>(a.indptr[0]));
  for (std::size_t r = 0; r < rows; ++r)
    require(a.indptr[r + 1] >= a.indptr[r], "{}: indptr decreases at row {} ({} then {})", context,
            r, static_cast<std::int64_t>(a.indptr[r]), static_cast<std::int64_t>(a.indptr[r + 1]));
  const auto nnz = static_cast<std::size_t>(a.indptr[rows]);
  require(a.indices.size() == nnz, "{}: indices has {} entries, expected indptr[mb] = {}", context,
          a.indices.size(), nnz);
  require(a.data.size() == nnz, "{}: data has {} entries, expected indptr[mb] = {}", context,
          a.data.size(), nnz);
  const index_t cols = shape.cols();
  for (std::size_t e = 0; e < nnz; ++e) {
    const auto c = static_cast<index_t>(a.indices[e]);
    if (c < 0 || c >= cols) {
      const auto row = std::upper_bound(a.indptr.begin(), a.indptr.end(), static_cast<I>(e)) -
                       a.indptr.begin() - 1;
      fail("{}: column index {} of row {} is outside [0, k*nb) = [0, {})", context, c, row, cols);
    }
    if (!std::isfinite(a.data[e])) {
      const auto row = std::upper_bound(a.indptr.begin(), a.indptr.end(), static_cast<I>(e)) -
                       a.indptr.begin() - 1;
      fail("{}: value {} of row {} (entry {}) is not finite", context, a.data[e], row, e);
    }
  }
}

template void validate(const Shape&, CsrView<float, std::int32_t>, const std::string&);
template void validate(const Shape&, CsrView<float, std::int64_t>, const std::string&);
template void validate(const Shape&, CsrView<double, std::int32_t>, const std::string&);
template void validate(const Shape&, CsrView<double, std::int64_t>, const std::string&);

}  // namespace shiftop::circ
