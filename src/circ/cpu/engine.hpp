// The CPU engine of circ::Operator: the layout, the kernel chosen at creation, the rows of each
// direction split over the threads by nonzeros, and the workspaces (docs/circ.md).
#pragma once

#include <cstdint>
#include <vector>

#include "circ/engine.hpp"
#include "core/aligned_buffer.hpp"

namespace shiftop::circ {

template <class T>
class CpuEngine final : public Engine<T> {
 public:
  CpuEngine(Layout<T> layout, const Options& options);

  void apply(Op op, const T* x, T* y, index_t nrhs) override;
  std::size_t memory_bytes() const override;
  Choices choices() const override { return choices_; }

  /// Chooses the kernel: the options' (s = 8 for Mm2s under Estimate), or under
  /// Planning::Measure the fastest candidate of a probe, cached per sizes within the process.
  void choose(const Options& options);

 private:
  // Uses `kernel` (with s = `width` for Mm2s) from now on.
  void use(CpuKernel kernel, int width);
  // One group of at most max_rhs right-hand sides.
  void apply_group(Op op, const T* x, T* y, index_t nrhs);
  void block_spmv(Op op, const T* x, T* y, index_t nrhs);
  // Runs the chosen SpMM on rows [begin, end) of op's index.
  void spmm_rows(Op op, std::int64_t begin, std::int64_t end, const T* in, T* out, index_t nrhs);

  Layout<T> layout_;
  int threads_ = 1;
  index_t max_rhs_ = 1;
  Choices choices_;
  // Row boundaries per thread for A's rows (C) and the transposed index's (C^T).
  std::vector<std::int64_t> split_[2];
  // The original column of each nonzero in the duplicated block-major vector, for BlockSpmv only
  // (eq. 2): d*nb + l for C, (k-d)*mb + r for C^T. Empty unless that kernel runs.
  std::vector<std::uint32_t> column_[2];
  // The dense operands: in_ holds X^ or Y^ (rows of 2k*nrhs), out_ the product's rows (k*nrhs).
  AlignedBuffer<T> in_, out_;
};

}  // namespace shiftop::circ
