// The GPU engine's setup (circ/cuda/engine.cuh): the context, the group size from the device's
// free memory, the layout's upload and the workspaces.
#include <algorithm>
#include <cstdio>
#include <string>

#include "circ/cuda/engine.cuh"
#include "shiftop/gpu/context.hpp"

namespace shiftop::circ {
namespace {

std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GB", bytes / 1e9);
  return text;
}

// k*R outputs per row at most (circulant_spmm.cuh: k*R/32 tiles on a grid dimension).
constexpr index_t kMaxOutputsPerRow = index_t{65535} * 32;

}  // namespace

template <typename T>
template <typename V>
cuda::DeviceMemory CudaEngine<T>::upload(const std::vector<V>& host) const {
  cuda::DeviceMemory memory = allocate(host.size() * sizeof(V));
  if (!host.empty())
    SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(memory.as<void>(), host.data(), memory.bytes(),
                                       cudaMemcpyHostToDevice, stream()));
  return memory;
}

template <typename T>
CudaEngine<T>::CudaEngine(const Layout<T>& layout, const Options& options)
    : context_(gpu::context_for(options.gpu)), shape_(layout.shape), nnz_(layout.nnz()) {
  // One row of the product (k*nrhs outputs) must fit one launch's grid (kMaxOutputsPerRow).
  if (shape_.k > kMaxOutputsPerRow)
    throw Error("the block-circulant operator " + shape_.str() +
                " has k = " + std::to_string(shape_.k) +
                " blocks; the GPU engine handles at most " + std::to_string(kMaxOutputsPerRow));
  context_->activate();
  // Memory: the layout (A's offsets and values, the transposed index), then as many right-hand
  // sides per group as fit in half of what is left, at most max_rhs. One right-hand side needs
  // the duplicated operand (2k values per row) and the product (k per row).
  const double fixed = double(layout.indptr.size() + layout.t_indptr.size()) * 8 +
                       double(nnz_) * (sizeof(std::uint32_t) * 3 + sizeof(T));
  const double per_rhs = double(dense_rows()) * double(3 * shape_.k) * sizeof(T);
  std::size_t free_bytes = 0, total_bytes = 0;
  SHIFTOP_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (fixed + per_rhs > double(free_bytes))
    throw Error("the block-circulant operator " + shape_.str() + " with " + std::to_string(nnz_) +
                " nonzeros needs " + gigabytes(fixed + per_rhs) + " of device memory (layout " +
                gigabytes(fixed) + ", one right-hand side " + gigabytes(per_rhs) + ") but device " +
                std::to_string(context_->device()) + " has " + gigabytes(double(free_bytes)) +
                " free");
  group_size_ =
      std::clamp<index_t>(static_cast<index_t>((double(free_bytes) - fixed) / 2 / per_rhs), 1,
                          std::min(options.max_rhs, kMaxOutputsPerRow / shape_.k));

  indptr_ = upload(layout.indptr);
  offset_ = upload(layout.offset);
  data_ = upload(layout.data);
  t_indptr_ = upload(layout.t_indptr);
  t_offset_ = upload(layout.t_offset);
  t_source_ = upload(layout.t_source);
  const auto dense = static_cast<std::size_t>(dense_rows() * shape_.k * group_size_);
  duplicated_ = allocate(2 * dense * sizeof(T));
  product_ = allocate(dense * sizeof(T));
  SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream()));  // the host vectors may go now

  transpose_ = options.gpu_engine.transpose;
  if (transpose_ == TransposeMethod::Auto) {
    if (options.planning == Planning::Measure)
      choose_transpose();
    else
      transpose_ = TransposeMethod::Index;
  }
}

template <typename T>
std::size_t CudaEngine<T>::memory_bytes() const {
  return indptr_.bytes() + offset_.bytes() + data_.bytes() + t_indptr_.bytes() + t_offset_.bytes() +
         t_source_.bytes() + duplicated_.bytes() + product_.bytes();
}

template <typename T>
Choices CudaEngine<T>::choices() const {
  Choices made;
  made.backend = Backend::Cuda;
  made.transpose = transpose_;
  made.probe = probe_;
  return made;
}

template <class T>
std::unique_ptr<Engine<T>> make_cuda_engine(Layout<T> layout, const Options& options) {
  return std::make_unique<CudaEngine<T>>(layout, options);
}

template class CudaEngine<float>;
template class CudaEngine<double>;
template std::unique_ptr<Engine<float>> make_cuda_engine(Layout<float>, const Options&);
template std::unique_ptr<Engine<double>> make_cuda_engine(Layout<double>, const Options&);

}  // namespace shiftop::circ
