// The GPU engine of a circ::Operator (docs/circ.md): the prepared layout
// (circ/layout.hpp) uploaded once, and per group of at most group_size_ right-hand sides three
// launches on the context's stream (backend/cuda/circulant_spmm.cuh):
//   C:    x [s][j][l] -> X^ [l][2k][s] -> Y = A X^ [r][k][s] (one block per row of A) -> y
//   [s][i][r] C^T:  y [s][i][r] -> Y^ [r][2k][s] -> X by the transposed index (one block per column
//   l of
//         the blocks, gathering A's values) or by atomics from A's rows -> x [s][i][l]
// The split follows btt/cuda: setup.cu (context, memory, upload), tuning.cu (the transpose
// method under Planning::Measure), apply.cu (groups, host copies, the products).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend/cuda/circulant_spmm.cuh"
#include "backend/cuda/context.cuh"
#include "backend/cuda/device_memory.cuh"
#include "circ/engine.hpp"

namespace shiftop::circ {

template <typename T>
class CudaEngine final : public Engine<T> {
 public:
  CudaEngine(const Layout<T>& layout, const Options& options);

  void apply(Op op, const T* x, T* y, index_t nrhs) override;
  void apply_device(Op op, const T* x, T* y, index_t nrhs, void* stream) override;
  std::size_t memory_bytes() const override;
  Choices choices() const override;

 private:
  // setup.cu
  cudaStream_t stream() const { return cuda::stream_of(*context_); }
  cuda::DeviceMemory allocate(std::size_t bytes) const { return cuda::allocate(*context_, bytes); }
  template <typename V>
  cuda::DeviceMemory upload(const std::vector<V>& host) const;
  /// Rows of the dense operands: max(mb, nb), so one buffer serves C and C^T.
  index_t dense_rows() const { return std::max(shape_.mb, shape_.nb); }

  // tuning.cu
  /// Times Index and Atomic on C^T of one group and keeps the faster (choices().probe).
  void choose_transpose();

  // apply.cu
  /// op(C) on device buffers, group by group.
  void run(Op op, const T* x, T* y, index_t nrhs);
  /// One group of n <= group_size_ right-hand sides; x may be product_ and y duplicated_ (each
  /// is consumed before it is overwritten).
  void product(Op op, const T* x, T* y, index_t n, TransposeMethod method);
  cuda::SpmmRows<T> rows_of_a() const;
  cuda::SpmmRows<T> rows_of_transpose() const;

  std::shared_ptr<gpu::Context> context_;  // first: outlives every buffer below
  Shape shape_;
  std::int64_t nnz_ = 0;
  /// Right-hand sides per group: Options::max_rhs, or fewer where device memory is short.
  index_t group_size_ = 1;
  TransposeMethod transpose_ = TransposeMethod::Index;
  std::vector<std::pair<std::string, double>> probe_;
  // The layout: A by rows, the transposed index.
  cuda::DeviceMemory indptr_, offset_, data_, t_indptr_, t_offset_, t_source_;
  // The duplicated input X^ or Y^ [dense_rows][2k][group], and the product [dense_rows][k][group]
  // (also the host input's staging; the duplicated buffer then stages the output).
  cuda::DeviceMemory duplicated_, product_;
};

}  // namespace shiftop::circ
