// A batch of in-place real FFTs of one length planned once with FFTW (advanced interface) and
// executed many times on buffers of the same layout (FFTW's new-array execute).
#pragma once

#include <complex>
#include <memory>

#include "shiftop/core/shape.hpp"

namespace shiftop::cpu {

enum class FftDirection { RealToComplex, ComplexToReal };

/// `count` series of `length` reals, series k starting at element k * 2 * complex_stride of the
/// buffer; the r2c output (length/2+1 complex values) overwrites its input in place.
/// T is float or double. Buffers passed to execute() must have the planning buffer's alignment
/// modulo 64 bytes (shiftop's workspaces are 64-byte aligned and strides multiples of 64 bytes).
template <typename T>
class RealFftBatch {
 public:
  RealFftBatch(index_t length, index_t count, index_t complex_stride, FftDirection direction,
               T* planning_buffer, int threads, bool measure);
  ~RealFftBatch();
  RealFftBatch(RealFftBatch&&) noexcept;
  RealFftBatch& operator=(RealFftBatch&&) noexcept;
  RealFftBatch(const RealFftBatch&) = delete;
  RealFftBatch& operator=(const RealFftBatch&) = delete;

  void execute(T* buffer) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

extern template class RealFftBatch<float>;
extern template class RealFftBatch<double>;

}  // namespace shiftop::cpu
