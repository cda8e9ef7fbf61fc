// The CPU engine's apply: groups of right-hand sides, the block-major vectors gathered into the
// duplicated row-major operand of eq. (5) and the product's rows scattered back, the rows of the
// SpMM split over the threads (sparse-block-circulant-spmv, section 3.1).
#include <omp.h>

#include <algorithm>
#include <array>
#include <utility>

#include "backend/cpu/circulant_spmm.hpp"
#include "circ/cpu/engine.hpp"

namespace shiftop::circ {

namespace {

// circulant_mm2s<S> for S = 1..16, indexed by s - 1 (CpuOptions::maxpy_width accepts 1..16).
template <class T, class Values>
using Mm2sKernel = void (*)(std::int64_t, std::int64_t, const std::int64_t*, const std::uint32_t*,
                            Values, const T*, T*, cpu::CirculantWidth);
template <class T, class Values, int... S>
constexpr std::array<Mm2sKernel<T, Values>, sizeof...(S)> mm2s_table(
    std::integer_sequence<int, S...>) {
  return {&cpu::circulant_mm2s<S + 1, T, Values>...};
}
template <class T, class Values>
constexpr auto kMm2s = mm2s_table<T, Values>(std::make_integer_sequence<int, 16>{});

// Calls body(t) for the row ranges 0..parts-1 on the team's threads: when the runtime gives fewer
// threads than asked for, each thread takes several ranges, so no row is skipped.
template <class Body>
void for_each_part(int parts, Body body) {
#pragma omp parallel num_threads(parts)
  {
    const int team = omp_get_num_threads();
    for (int t = omp_get_thread_num(); t < parts; t += team)
      body(t);
  }
}

}  // namespace

template <class T>
std::size_t CpuEngine<T>::memory_bytes() const {
  return layout_.bytes() + in_.bytes() + out_.bytes() +
         (column_[0].size() + column_[1].size()) * sizeof(std::uint32_t);
}

template <class T>
void CpuEngine<T>::apply(Op op, const T* x, T* y, index_t nrhs) {
  const index_t in_length = input_length(layout_.shape, op);
  const index_t out_length = output_length(layout_.shape, op);
  for (index_t first = 0; first < nrhs; first += max_rhs_) {
    const index_t group = std::min(max_rhs_, nrhs - first);
    apply_group(op, x + first * in_length, y + first * out_length, group);
  }
}

template <class T>
void CpuEngine<T>::spmm_rows(Op op, std::int64_t begin, std::int64_t end, const T* in, T* out,
                             index_t nrhs) {
  const cpu::CirculantWidth width{layout_.shape.k, nrhs};
  const auto run = [&](const std::vector<std::int64_t>& indptr,
                       const std::vector<std::uint32_t>& offset, auto values) {
    using Values = decltype(values);
    if (choices_.cpu_kernel == CpuKernel::Mm)
      cpu::circulant_mm(begin, end, indptr.data(), offset.data(), values, in, out, width);
    else
      kMm2s<T, Values>[choices_.maxpy_width > 0 ? choices_.maxpy_width - 1 : 0](
          begin, end, indptr.data(), offset.data(), values, in, out, width);
  };
  if (op == Op::C)
    run(layout_.indptr, layout_.offset, cpu::DirectValues<T>{layout_.data.data()});
  else
    run(layout_.t_indptr, layout_.t_offset,
        cpu::GatheredValues<T>{layout_.data.data(), layout_.t_source.data()});
}

template <class T>
void CpuEngine<T>::apply_group(Op op, const T* x, T* y, index_t nrhs) {
  if (choices_.cpu_kernel == CpuKernel::BlockSpmv) {
    block_spmv(op, x, y, nrhs);
    return;
  }
  const Shape& s = layout_.shape;
  const index_t k = s.k;
  // The input has k blocks of n values per right-hand side, the output k blocks of m.
  const index_t n = op == Op::C ? s.nb : s.mb, m = op == Op::C ? s.mb : s.nb;
  // MM reads X itself (rows of k), MM-2 and MM-2-s the duplicated X^ = (X X) (rows of 2k).
  const index_t columns = choices_.cpu_kernel == CpuKernel::Mm ? k : 2 * k;
  T* in = in_.data();
  T* out = out_.data();
#pragma omp parallel for num_threads(threads_) schedule(static)
  for (index_t q = 0; q < n; ++q)
    for (index_t j = 0; j < columns; ++j)
      for (index_t r = 0; r < nrhs; ++r)
        in[(q * columns + j) * nrhs + r] = x[r * k * n + (j % k) * n + q];
  const int op_index = op == Op::C ? 0 : 1;
  for_each_part(threads_, [&](int t) {
    spmm_rows(op, split_[op_index][t], split_[op_index][t + 1], in, out, nrhs);
  });
#pragma omp parallel for num_threads(threads_) schedule(static)
  for (index_t q = 0; q < m; ++q)
    for (index_t i = 0; i < k; ++i)
      for (index_t r = 0; r < nrhs; ++r)
        y[r * k * m + i * m + q] = out[(q * k + i) * nrhs + r];
}

template <class T>
void CpuEngine<T>::block_spmv(Op op, const T* x, T* y, index_t nrhs) {
  const Shape& s = layout_.shape;
  const index_t k = s.k;
  const index_t n = op == Op::C ? s.nb : s.mb, m = op == Op::C ? s.mb : s.nb;
  const int op_index = op == Op::C ? 0 : 1;
  const auto& indptr = op == Op::C ? layout_.indptr : layout_.t_indptr;
  T* in = in_.data();
  for (index_t r = 0; r < nrhs; ++r) {
    // The block-major input twice over (2k blocks), so that block i + d needs no modulo.
    const T* xr = x + r * k * n;
    std::copy(xr, xr + k * n, in);
    std::copy(xr, xr + k * n, in + k * n);
    T* yr = y + r * k * m;
    for_each_part(threads_, [&](int t) {
      const auto begin = split_[op_index][t], end = split_[op_index][t + 1];
      if (op == Op::C)
        cpu::circulant_block_spmv(begin, end, indptr.data(), column_[0].data(),
                                  cpu::DirectValues<T>{layout_.data.data()}, in, n, yr, m, k);
      else
        cpu::circulant_block_spmv(
            begin, end, indptr.data(), column_[1].data(),
            cpu::GatheredValues<T>{layout_.data.data(), layout_.t_source.data()}, in, n, yr, m, k);
    });
  }
}

template class CpuEngine<float>;
template class CpuEngine<double>;

}  // namespace shiftop::circ
