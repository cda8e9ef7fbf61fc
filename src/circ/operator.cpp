// circ::Operator: the engine per backend, the checked apply, and the explicit C for small
// operators (include/shiftop/circ/operator.hpp).
#include "shiftop/circ/operator.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "circ/engine.hpp"
#include "circ/layout.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/threads.hpp"

namespace shiftop::circ {

index_t input_length(const Shape& shape, Op op) {
  return op == Op::C ? shape.cols() : shape.rows();
}
index_t output_length(const Shape& shape, Op op) {
  return op == Op::C ? shape.rows() : shape.cols();
}

std::string Choices::str() const {
  if (backend == Backend::Cuda) return fmt::format("cuda transpose={}", name_of(transpose));
  if (cpu_kernel == CpuKernel::Mm2s)
    return fmt::format("cpu {} s={}", name_of(cpu_kernel), maxpy_width);
  return fmt::format("cpu {}", name_of(cpu_kernel));
}

template <class T>
void Engine<T>::apply_device(Op, const T*, T*, index_t, void*) {
  fail("apply_device needs an operator made with Backend::Cuda");
}

template <class T>
Operator<T>::Operator(Shape shape, std::int64_t nnz, std::unique_ptr<Engine<T>> engine)
    : shape_(shape), nnz_(nnz), engine_(std::move(engine)) {}
template <class T>
Operator<T>::Operator(Operator&&) noexcept = default;
template <class T>
Operator<T>& Operator<T>::operator=(Operator&&) noexcept = default;
template <class T>
Operator<T>::~Operator() = default;

template <class T>
template <class I>
Operator<T> Operator<T>::create(const Shape& shape, CsrView<T, I> a, const Options& options) {
  validate(shape, a);
  require(options.max_rhs >= 1, "max_rhs is {}, expected at least 1", options.max_rhs);
  // The workspaces hold about 3 * max(mb, nb) * k * max_rhs values; their size must not wrap.
  const index_t per_rhs =
      3 * std::max(shape.mb, shape.nb) * shape.k * static_cast<index_t>(sizeof(T));
  require(options.max_rhs <= std::numeric_limits<index_t>::max() / per_rhs,
          "max_rhs is {}: the workspaces of {} bytes per right-hand side would overflow",
          options.max_rhs, per_rhs);
  check_threads(options.cpu.threads, "threads");
  const auto s = options.cpu.maxpy_width;
  require(s >= 0 && s <= 16, "maxpy_width (s) is {}, expected 0 (choose) or 1..16", s);
  Layout<T> layout = make_layout(shape, a);
  const std::int64_t nnz = layout.nnz();
  auto engine = options.backend == Backend::Cuda ? make_cuda_engine(std::move(layout), options)
                                                 : make_cpu_engine(std::move(layout), options);
  return Operator(shape, nnz, std::move(engine));
}

template <class T>
Operator<T> Operator<T>::create(const FirstBlockRow<T>& a, const Options& options) {
  return create(a.shape, a.view(), options);
}

template <class T>
void Operator<T>::apply(Op op, std::span<const T> x, std::span<T> y, index_t nrhs) {
  require(nrhs >= 1, "apply: nrhs is {}, expected at least 1", nrhs);
  const auto in = static_cast<std::size_t>(input_length(shape_, op));
  const auto out = static_cast<std::size_t>(output_length(shape_, op));
  const auto vectors = static_cast<std::size_t>(nrhs);
  const char* name = op == Op::C ? "C" : "C^T";
  constexpr auto most = std::numeric_limits<std::size_t>::max();
  require(vectors <= most / std::max(in, out),
          "apply {}: nrhs = {} vectors of {} and {} values overflow the sizes", name, nrhs, in,
          out);
  require(x.size() == in * vectors,
          "apply {}: the input has {} values, expected {} ({} vectors of {})", name, x.size(),
          in * vectors, nrhs, in);
  require(y.size() == out * vectors,
          "apply {}: the output has {} values, expected {} ({} vectors of {})", name, y.size(),
          out * vectors, nrhs, out);
  engine_->apply(op, x.data(), y.data(), nrhs);
}

template <class T>
void Operator<T>::apply_device(Op op, const T* x, T* y, index_t nrhs, void* stream) {
  require(nrhs >= 1, "apply_device: nrhs is {}, expected at least 1", nrhs);
  engine_->apply_device(op, x, y, nrhs, stream);
}

template <class T>
std::size_t Operator<T>::memory_bytes() const {
  return engine_->memory_bytes();
}

template <class T>
Choices Operator<T>::choices() const {
  return engine_->choices();
}

template <class T>
FirstBlockRow<T> assemble(const FirstBlockRow<T>& a, std::int64_t max_entries) {
  const Shape& shape = a.shape;
  validate(shape, a.view());
  require(a.nnz() <= max_entries / shape.k,
          "assemble: C would hold k*nnz(A) = {} x {} entries, more than the limit {}", shape.k,
          a.nnz(), max_entries);
  // Row i*mb + r of C is row r of A with block d moved to block (i + d) mod k (eq. 1).
  FirstBlockRow<T> c;
  c.shape = Shape{1, shape.rows(), shape.cols()};
  c.indptr.assign(static_cast<std::size_t>(shape.rows()) + 1, 0);
  std::vector<std::pair<std::int64_t, T>> row;
  for (index_t i = 0; i < shape.k; ++i) {
    for (index_t r = 0; r < shape.mb; ++r) {
      row.clear();
      for (auto e = a.indptr[r]; e < a.indptr[r + 1]; ++e) {
        const auto d = a.indices[e] / shape.nb, l = a.indices[e] % shape.nb;
        row.emplace_back(((i + d) % shape.k) * shape.nb + l, a.data[e]);
      }
      std::sort(row.begin(), row.end(),
                [](const auto& p, const auto& q) { return p.first < q.first; });
      for (std::size_t e = 0; e < row.size(); ++e) {
        if (e > 0 && row[e].first == row[e - 1].first) {
          c.data.back() += row[e].second;  // repeated columns add
          continue;
        }
        c.indices.push_back(row[e].first);
        c.data.push_back(row[e].second);
      }
      c.indptr[i * shape.mb + r + 1] = static_cast<std::int64_t>(c.data.size());
    }
  }
  return c;
}

template class Engine<float>;
template class Engine<double>;
template class Operator<float>;
template class Operator<double>;
template Operator<float> Operator<float>::create(const Shape&, CsrView<float, std::int32_t>,
                                                 const Options&);
template Operator<float> Operator<float>::create(const Shape&, CsrView<float, std::int64_t>,
                                                 const Options&);
template Operator<double> Operator<double>::create(const Shape&, CsrView<double, std::int32_t>,
                                                   const Options&);
template Operator<double> Operator<double>::create(const Shape&, CsrView<double, std::int64_t>,
                                                   const Options&);
template FirstBlockRow<float> assemble(const FirstBlockRow<float>&, std::int64_t);
template FirstBlockRow<double> assemble(const FirstBlockRow<double>&, std::int64_t);

}  // namespace shiftop::circ
