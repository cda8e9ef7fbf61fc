// The GPU engine's apply (circ/cuda/engine.cuh): groups of right-hand sides, the host copies, and
// the three launches of one product.
#include "circ/cuda/engine.cuh"

namespace shiftop::circ {

template <typename T>
cuda::SpmmRows<T> CudaEngine<T>::rows_of_a() const {
  return {.indptr = indptr_.as<std::int64_t>(),
          .offset = offset_.as<std::uint32_t>(),
          .values = data_.as<T>(),
          .source = nullptr,
          .rows = shape_.mb};
}

template <typename T>
cuda::SpmmRows<T> CudaEngine<T>::rows_of_transpose() const {
  return {.indptr = t_indptr_.as<std::int64_t>(),
          .offset = t_offset_.as<std::uint32_t>(),
          .values = data_.as<T>(),
          .source = t_source_.as<std::uint32_t>(),
          .rows = shape_.nb};
}

template <typename T>
void CudaEngine<T>::product(Op op, const T* x, T* y, index_t n, TransposeMethod method) {
  const index_t k = shape_.k;
  const index_t in_rows = op == Op::C ? shape_.nb : shape_.mb;
  const index_t out_rows = op == Op::C ? shape_.mb : shape_.nb;
  T* dup = duplicated_.as<T>();
  T* out = product_.as<T>();
  cuda::duplicate_rows<T>(x, dup, in_rows, k, n, stream());
  if (op == Op::C) {
    cuda::circulant_spmm<T>(rows_of_a(), dup, out, k, n, stream());
  } else if (method == TransposeMethod::Atomic) {
    SHIFTOP_CUDA_CHECK(
        cudaMemsetAsync(out, 0, static_cast<std::size_t>(out_rows * k * n) * sizeof(T), stream()));
    cuda::circulant_scatter<T>(rows_of_a(), dup, out, k, n, stream());
  } else {
    cuda::circulant_spmm<T>(rows_of_transpose(), dup, out, k, n, stream());
  }
  cuda::to_block_major<T>(out, y, out_rows, k, n, stream());
}

template <typename T>
void CudaEngine<T>::run(Op op, const T* x, T* y, index_t nrhs) {
  const index_t in_size = input_length(shape_, op), out_size = output_length(shape_, op);
  for (index_t first = 0; first < nrhs; first += group_size_)
    product(op, x + first * in_size, y + first * out_size, std::min(group_size_, nrhs - first),
            transpose_);
}

template <typename T>
void CudaEngine<T>::apply(Op op, const T* x, T* y, index_t nrhs) {
  context_->activate();
  const index_t in_size = input_length(shape_, op), out_size = output_length(shape_, op);
  // The input is staged in product_ and the output in duplicated_ (product's aliasing rule).
  for (index_t first = 0; first < nrhs; first += group_size_) {
    const index_t n = std::min(group_size_, nrhs - first);
    SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(product_.as<T>(), x + first * in_size,
                                       static_cast<std::size_t>(n * in_size) * sizeof(T),
                                       cudaMemcpyHostToDevice, stream()));
    product(op, product_.as<T>(), duplicated_.as<T>(), n, transpose_);
    SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(y + first * out_size, duplicated_.as<T>(),
                                       static_cast<std::size_t>(n * out_size) * sizeof(T),
                                       cudaMemcpyDeviceToHost, stream()));
  }
  SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream()));
}

template <typename T>
void CudaEngine<T>::apply_device(Op op, const T* x, T* y, index_t nrhs, void* stream) {
  context_->activate();
  context_->wait_for(stream);
  run(op, x, y, nrhs);
  context_->signal(stream);
}

#define SHIFTOP_CIRC_CUDA_APPLY(T)                                                  \
  template cuda::SpmmRows<T> CudaEngine<T>::rows_of_a() const;                      \
  template cuda::SpmmRows<T> CudaEngine<T>::rows_of_transpose() const;              \
  template void CudaEngine<T>::product(Op, const T*, T*, index_t, TransposeMethod); \
  template void CudaEngine<T>::run(Op, const T*, T*, index_t);                      \
  template void CudaEngine<T>::apply(Op, const T*, T*, index_t);                    \
  template void CudaEngine<T>::apply_device(Op, const T*, T*, index_t, void*);
SHIFTOP_CIRC_CUDA_APPLY(float)
SHIFTOP_CIRC_CUDA_APPLY(double)
#undef SHIFTOP_CIRC_CUDA_APPLY

}  // namespace shiftop::circ
