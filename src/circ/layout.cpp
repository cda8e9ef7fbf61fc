// make_layout: A's columns split into (block, column in block) once, and the transposed index
// that lets C^T run on A's own values (circ/layout.hpp).
#include "circ/layout.hpp"

#include <limits>

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
  layout.data.assign(a.data.begin(), a.data.end());
  layout.offset.resize(static_cast<std::size_t>(nnz));
  // Column counts of the transposed index, then their prefix sums (a counting sort by l).
  layout.t_indptr.assign(static_cast<std::size_t>(nb) + 1, 0);
  for (std::int64_t e = 0; e < nnz; ++e) {
    const auto c = static_cast<index_t>(a.indices[e]);
    const index_t d = c / nb, l = c % nb;
    layout.offset[e] = static_cast<std::uint32_t>(l * 2 * k + d);  // < 2*k*nb < 2^32
    ++layout.t_indptr[l + 1];
  }
  for (index_t l = 0; l < nb; ++l)
    layout.t_indptr[l + 1] += layout.t_indptr[l];
  layout.t_offset.resize(static_cast<std::size_t>(nnz));
  layout.t_source.resize(static_cast<std::size_t>(nnz));
  std::vector<std::int64_t> next(layout.t_indptr.begin(), layout.t_indptr.end() - 1);
  for (index_t r = 0; r < mb; ++r) {
    for (auto e = static_cast<std::int64_t>(a.indptr[r]); e < a.indptr[r + 1]; ++e) {
      const auto c = static_cast<index_t>(a.indices[e]);
      const index_t d = c / nb, l = c % nb;
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
