// make_layout: A's columns split into (block, column in block) once, and the transposed index
// that lets C^T run on A's own values (circ/layout.hpp).
#include "circ/layout.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "shiftop/core/error.hpp"

namespace shiftop::circ {

template <class T>
std::size_t Layout<T>::bytes() const {
  return indptr.size() * sizeof(std::int64_t) + offset.size() * sizeof(std::uint32_t) +
         data.size() * sizeof(T) + t_indptr.size() * sizeof(std::int64_t) +
         t_offset.size() * sizeof(std::uint32_t) + t_source.size() * sizeof(std::uint32_t);
}

template <class T, class I>
Layout<T> make_layout(const Shape& shape, CsrView<T, I> a) {
  const auto nnz = static_cast<std::int64_t>(a.data.size());
  require(nnz <= std::numeric_limits<std::uint32_t>::max(),
          "A has {} nonzeros; the transposed index holds 32-bit positions (at most 2^32-1)", nnz);
  const index_t k = shape.k, mb = shape.mb, nb = shape.nb;
  Layout<T> layout;
  layout.shape = shape;
  layout.indptr.assign(a.indptr.begin(), a.indptr.end());
  layout.offset.resize(static_cast<std::size_t>(nnz));
  layout.data.resize(static_cast<std::size_t>(nnz));
  // Each row's nonzeros by ascending offset l*2k + d (< 2*k*nb < 2^32): the rows of X^ they read
  // then ascend in memory, which the hardware prefetchers follow (a row's order only changes the
  // order of its sum).
  std::vector<std::pair<std::uint32_t, T>> row;
  for (index_t r = 0; r < mb; ++r) {
    row.clear();
    for (auto e = static_cast<std::int64_t>(a.indptr[r]); e < a.indptr[r + 1]; ++e) {
      const auto c = static_cast<index_t>(a.indices[e]);
      row.emplace_back(static_cast<std::uint32_t>((c % nb) * 2 * k + c / nb), a.data[e]);
    }
    std::stable_sort(row.begin(), row.end(),
                     [](const auto& p, const auto& q) { return p.first < q.first; });
    for (std::size_t q = 0; q < row.size(); ++q) {
      layout.offset[a.indptr[r] + q] = row[q].first;
      layout.data[a.indptr[r] + q] = row[q].second;
    }
  }
  // The transposed index: a counting sort of the nonzeros by l, rows ascending within each l.
  layout.t_indptr.assign(static_cast<std::size_t>(nb) + 1, 0);
  for (const std::uint32_t o : layout.offset)
    ++layout.t_indptr[o / (2 * k) + 1];
  for (index_t l = 0; l < nb; ++l)
    layout.t_indptr[l + 1] += layout.t_indptr[l];
  layout.t_offset.resize(static_cast<std::size_t>(nnz));
  layout.t_source.resize(static_cast<std::size_t>(nnz));
  std::vector<std::int64_t> next(layout.t_indptr.begin(), layout.t_indptr.end() - 1);
  for (index_t r = 0; r < mb; ++r) {
    for (auto e = layout.indptr[r]; e < layout.indptr[r + 1]; ++e) {
      const index_t l = layout.offset[e] / (2 * k), d = layout.offset[e] % (2 * k);
      const auto slot = next[l]++;
      layout.t_offset[slot] = static_cast<std::uint32_t>(r * 2 * k + (k - d));  // < 2*k*mb
      layout.t_source[slot] = static_cast<std::uint32_t>(e);
    }
  }
  return layout;
}

template struct Layout<float>;
template struct Layout<double>;
template Layout<float> make_layout(const Shape&, CsrView<float, std::int32_t>);
template Layout<float> make_layout(const Shape&, CsrView<float, std::int64_t>);
template Layout<double> make_layout(const Shape&, CsrView<double, std::int32_t>);
template Layout<double> make_layout(const Shape&, CsrView<double, std::int64_t>);

}  // namespace shiftop::circ
