// The backend half of a circ::Operator: one engine per backend, built once from the layout and
// applied many times (docs/architecture.md, "The family pattern"; docs/circ.md).
// make_cuda_engine is declared here without CUDA types so that operator.cpp builds without the
// toolkit.
#pragma once

#include <cstddef>
#include <memory>

#include "circ/layout.hpp"

namespace shiftop::circ {

template <class T>
class Engine {
 public:
  virtual ~Engine() = default;
  /// y = op(C) x for nrhs block-major vectors; sizes already checked by Operator.
  virtual void apply(Op op, const T* x, T* y, index_t nrhs) = 0;
  /// The same on device pointers, ordered after `stream`; only a GPU engine overrides it.
  virtual void apply_device(Op op, const T* x, T* y, index_t nrhs, void* stream);
  virtual std::size_t memory_bytes() const = 0;
  virtual Choices choices() const = 0;
};

template <class T>
std::unique_ptr<Engine<T>> make_cpu_engine(Layout<T> layout, const Options& options);
template <class T>
std::unique_ptr<Engine<T>> make_cuda_engine(Layout<T> layout, const Options& options);

}  // namespace shiftop::circ
