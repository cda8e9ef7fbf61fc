// Stage 2 of the batched Jacobi (H)SVD (svd/cuda/batched_kernels.hpp) for matrices whose G fits
// one thread block's reach: the pointwise method of svd/cuda/pointwise_sweeps.cuh on the whole of
// G, one thread block per matrix, G (and W) in shared memory when they fit.
#include "backend/cuda/check.hpp"
#include "backend/cuda/runtime.cuh"
#include "svd/cuda/batched_kernels.hpp"
#include "svd/cuda/group_ops.cuh"
#include "svd/cuda/pointwise_sweeps.cuh"

namespace shiftop::svd::gpu_kernels {
namespace {

template <class T>
__global__ void orthogonalize_kernel(Batch<T> batch, bool g_in_shared, bool w_in_shared) {
  using V = DeviceType<T>;
  using R = typename Device<T>::real;
  extern __shared__ __align__(16) unsigned char shared[];
  __shared__ Counters counters;

  const index_t b = blockIdx.x;
  const index_t rows = batch.g_rows, cols = batch.cols;
  const Groups groups(batch.lanes);
  const int tid = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  const bool accumulate = batch.w != nullptr;

  double* norm = reinterpret_cast<double*>(shared);  // cols
  const std::size_t small = (cols * sizeof(double) + 15) / 16 * 16;
  V* global_g = batch.g + b * rows * cols;
  V* global_w = accumulate ? batch.w + b * cols * cols : nullptr;
  V* g = g_in_shared ? reinterpret_cast<V*>(shared + small) : global_g;
  V* w = accumulate ? (w_in_shared ? g + rows * cols : global_w) : nullptr;
  if (g_in_shared)
    for (index_t e = tid; e < rows * cols; e += threads)
      g[e] = global_g[e];
  if (accumulate)
    for (index_t e = tid; e < cols * cols; e += threads)
      w[e] = e % cols == e / cols ? make<V>(R(1), R(0)) : zero<V>();
  __syncthreads();

  Pointwise<V> problem;
  problem.g = g;
  problem.rows = rows;
  problem.cols = cols;
  problem.w = w;
  problem.w_rows = cols;
  problem.norm = norm;
  problem.pairs = batch.pairs;
  problem.steps = batch.steps;
  problem.pairs_per_step = batch.pairs_per_step;
  problem.n_plus = batch.n_plus;
  problem.tolerance = detail::orthogonality_tolerance<R>(rows, cols);
  problem.max_sweeps = batch.max_sweeps;
  const SweepTotals totals = pointwise_sweeps<V, R>(problem, groups, &counters);

  finish_matrix(batch, b, g, norm, groups, &counters);
  if (accumulate && w_in_shared)
    for (index_t e = tid; e < cols * cols; e += threads)
      global_w[e] = w[e];
  __syncthreads();
  if (tid == 0) {
    MatrixReport& report = batch.reports[b];
    report.sweeps = totals.sweeps;
    report.rotations = totals.rotations;
    report.proper_rotations = totals.proper;
    report.converged = totals.converged && counters.nonfinite == 0;
  }
}

}  // namespace

template <class T>
void launch_orthogonalize(const Batch<T>& batch, std::size_t shared_limit, cudaStream_t stream) {
  if (batch.count == 0) return;
  // G in shared memory when it fits, and W too when both fit (G is read far more often).
  const std::size_t element = sizeof(DeviceType<T>);
  const std::size_t g_bytes = batch.g_rows * batch.cols * element;
  const std::size_t w_bytes = batch.w != nullptr ? batch.cols * batch.cols * element : 0;
  const std::size_t small = batch.cols * sizeof(double);
  SharedPlan shared = plan_shared(g_bytes + w_bytes, small, shared_limit);
  const bool w_in_shared = shared.matrix_in_shared && w_bytes > 0;
  if (!shared.matrix_in_shared) shared = plan_shared(g_bytes, small, shared_limit);
  cuda::allow_dynamic_shared(orthogonalize_kernel<T>, shared_limit);
  orthogonalize_kernel<T>
      <<<static_cast<unsigned>(batch.count), batch.threads, shared.bytes, stream>>>(
          batch, shared.matrix_in_shared, w_in_shared);
  SHIFTOP_CUDA_CHECK(cudaGetLastError());
}

template void launch_orthogonalize(const Batch<float>&, std::size_t, cudaStream_t);
template void launch_orthogonalize(const Batch<double>&, std::size_t, cudaStream_t);
template void launch_orthogonalize(const Batch<std::complex<float>>&, std::size_t, cudaStream_t);
template void launch_orthogonalize(const Batch<std::complex<double>>&, std::size_t, cudaStream_t);

}  // namespace shiftop::svd::gpu_kernels
