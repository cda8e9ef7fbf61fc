// Independent references for the circ tests (CPU and GPU): random first block rows with the
// awkward features the kernels must survive (empty rows, completely empty blocks, repeated
// columns, rows longer than any MAXPY width, the first and last column of A), the explicit dense
// block-circulant C built from the CSR by plain loops per the paper's eq. (1), and its products
// in long double with the |C| |x| bound that scales the rounding tolerance of each entry.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <span>
#include <vector>

#include "shiftop/circ/operator.hpp"

namespace shiftop::testing {

/// An owned CSR of A with index type I (int32 or int64), as a caller would hand it over.
template <class T, class I>
struct CircCsr {
  circ::Shape shape;
  std::vector<I> indptr;
  std::vector<I> indices;
  std::vector<T> data;

  circ::CsrView<T, I> view() const { return {indptr, indices, data}; }
  circ::FirstBlockRow<T> owned() const {
    return {shape, {indptr.begin(), indptr.end()}, {indices.begin(), indices.end()}, data};
  }
};

/// Row r gets row_lengths[r % size] nonzeros (columns drawn from the blocks not listed in
/// empty_blocks, in random order, a fifth of them repeating the previous column of the row);
/// row 0 also gets column 0 and column k*nb-1 when their blocks are not empty.
struct CircSpec {
  circ::Shape shape;
  std::vector<int> row_lengths;
  std::set<index_t> empty_blocks;
  unsigned seed = 1;
};

template <class T, class I>
CircCsr<T, I> random_circ(const CircSpec& spec) {
  const circ::Shape& s = spec.shape;
  std::mt19937_64 gen(spec.seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<index_t> live;
  for (index_t d = 0; d < s.k; ++d)
    if (!spec.empty_blocks.contains(d)) live.push_back(d);
  CircCsr<T, I> a{s, {0}, {}, {}};
  for (index_t r = 0; r < s.mb; ++r) {
    std::vector<index_t> cols;
    if (r == 0 && !live.empty()) {
      if (live.front() == 0) cols.push_back(0);
      if (live.back() == s.k - 1) cols.push_back(s.cols() - 1);
    }
    const int length = spec.row_lengths[static_cast<std::size_t>(r) % spec.row_lengths.size()];
    for (int n = 0; n < length && !live.empty(); ++n) {
      if (!cols.empty() && gen() % 5 == 0) {
        cols.push_back(cols.back());  // a repeated column: the two values add
        continue;
      }
      const index_t d = live[gen() % live.size()];
      cols.push_back(d * s.nb + static_cast<index_t>(gen() % static_cast<std::uint64_t>(s.nb)));
    }
    for (const index_t c : cols) {
      a.indices.push_back(static_cast<I>(c));
      a.data.push_back(static_cast<T>(value(gen)));
    }
    a.indptr.push_back(static_cast<I>(a.indices.size()));
  }
  return a;
}

/// The explicit (k*mb) x (k*nb) row-major C of eq. (1): block (i, j) is A_{(j-i) mod k}, and
/// column c of A is column c mod nb of block c / nb. Repeated columns add.
template <class T, class I>
std::vector<long double> dense_circulant(const circ::Shape& s, circ::CsrView<T, I> a) {
  const index_t cols = s.cols();
  std::vector<long double> c(static_cast<std::size_t>(s.rows() * cols), 0.0L);
  for (index_t i = 0; i < s.k; ++i)
    for (index_t j = 0; j < s.k; ++j) {
      const index_t block = ((j - i) % s.k + s.k) % s.k;
      for (index_t r = 0; r < s.mb; ++r)
        for (auto p = static_cast<std::size_t>(a.indptr[static_cast<std::size_t>(r)]);
             p < static_cast<std::size_t>(a.indptr[static_cast<std::size_t>(r) + 1]); ++p) {
          const index_t col = static_cast<index_t>(a.indices[p]);
          if (col / s.nb != block) continue;
          c[static_cast<std::size_t>((i * s.mb + r) * cols + j * s.nb + col % s.nb)] +=
              static_cast<long double>(a.data[p]);
        }
    }
  return c;
}

/// op(C) x in long double for nrhs vectors back to back, and |op(C)| |x| (the scale of each
/// entry's rounding error: a sum of n products in precision eps is off by at most about
/// n eps |C| |x|).
struct CircProduct {
  std::vector<long double> value;
  std::vector<long double> magnitude;
};

template <class T>
CircProduct dense_circ_apply(const std::vector<long double>& c, const circ::Shape& s, circ::Op op,
                             std::span<const T> x, index_t nrhs) {
  const index_t rows = s.rows(), cols = s.cols();
  const bool transpose = op == circ::Op::Ct;
  const index_t n_in = transpose ? rows : cols, n_out = transpose ? cols : rows;
  CircProduct y{std::vector<long double>(static_cast<std::size_t>(n_out * nrhs), 0.0L),
                std::vector<long double>(static_cast<std::size_t>(n_out * nrhs), 0.0L)};
  for (index_t v = 0; v < nrhs; ++v)
    for (index_t p = 0; p < rows; ++p)
      for (index_t q = 0; q < cols; ++q) {
        const long double cpq = c[static_cast<std::size_t>(p * cols + q)];
        if (cpq == 0.0L) continue;
        const index_t in = transpose ? p : q, out = transpose ? q : p;
        const long double xin =
            static_cast<long double>(x[static_cast<std::size_t>(v * n_in + in)]);
        y.value[static_cast<std::size_t>(v * n_out + out)] += cpq * xin;
        y.magnitude[static_cast<std::size_t>(v * n_out + out)] += std::fabs(cpq * xin);
      }
  return y;
}

/// The largest |got - want| / (eps_T |C| |x|) over the entries (NaN when any entry of `got` is
/// not finite, infinity when an entry whose |C| |x| is 0 is not exactly 0).
template <class T>
double circ_error_ratio(std::span<const T> got, const CircProduct& want) {
  const long double eps = std::numeric_limits<T>::epsilon();
  double worst = 0;
  for (std::size_t e = 0; e < got.size(); ++e) {
    if (!std::isfinite(got[e])) return std::numeric_limits<double>::quiet_NaN();
    const long double diff = std::fabs(static_cast<long double>(got[e]) - want.value[e]);
    if (want.magnitude[e] == 0.0L) {
      if (diff != 0.0L) return std::numeric_limits<double>::infinity();
      continue;
    }
    worst = std::max(worst, static_cast<double>(diff / (eps * want.magnitude[e])));
  }
  return worst;
}

template <class T>
std::vector<T> random_circ_vector(std::size_t n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> v(n);
  for (T& x : v)
    x = static_cast<T>(dist(gen));
  return v;
}

/// Row lengths 0, 1, ..., longest (a spec's row_lengths cycle through them).
inline std::vector<int> every_length_to(int longest) {
  std::vector<int> lengths(static_cast<std::size_t>(longest) + 1);
  for (int n = 0; n <= longest; ++n)
    lengths[static_cast<std::size_t>(n)] = n;
  return lengths;
}

/// Blocks 1, 4, 7, ... below k - 1: empty blocks for a spec.
inline std::set<index_t> every_third_block_from_1(index_t k) {
  std::set<index_t> empty;
  for (index_t d = 1; d < k - 1; d += 3)
    empty.insert(d);
  return empty;
}

/// n NaNs: an output every entry of which a product must overwrite.
template <class T>
std::vector<T> poisoned(index_t n) {
  return std::vector<T>(static_cast<std::size_t>(n), std::numeric_limits<T>::quiet_NaN());
}

}  // namespace shiftop::testing
