// Stage 3 of the batched Jacobi (H)SVD (svd/cuda/batched_kernels.hpp): the singular vectors of A'
// from X (G's normalised columns) and W (the accumulated rotations), in the order of the sorted
// singular values, one thread block per matrix, as the CPU driver forms them (svd/preprocess.hpp):
//   SVD, preprocessed:  U' = P_r^T Q [W; 0],  V' = P X;
//   HSVD, preprocessed: U' = Q [X; 0],        V' = W;
//   not preprocessed:   U' = X,               V' = W;
// and U = U', V = V' for A' = A, U = V', V = U' for A' = A^H. Q [Y; 0] applies the reflectors
// H_{cols-1} first (Q = H_0 ... H_{cols-1}), each by every group on its columns, in shared memory
// when the rows x cols block fits and in the caller's scratch otherwise.
#include "backend/cuda/check.hpp"
#include "backend/cuda/runtime.cuh"
#include "svd/cuda/batched_kernels.hpp"
#include "svd/cuda/group_ops.cuh"

namespace shiftop::svd::gpu_kernels {
namespace {

template <class T>
__global__ void vectors_kernel(Batch<T> batch, DeviceType<T>* u, DeviceType<T>* v,
                               DeviceType<T>* scratch, bool matrix_in_shared) {
  using V = DeviceType<T>;
  using R = typename Device<T>::real;
  extern __shared__ __align__(16) unsigned char shared[];
  const index_t b = blockIdx.x;
  const index_t rows = batch.rows, cols = batch.cols, g_rows = batch.g_rows;
  const Groups groups(batch.lanes);
  const int tid = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  const bool pivoted = batch.preprocessing == Preprocessing::PivotedQr;
  const bool qr = batch.preprocessing != Preprocessing::None;

  const std::int32_t* order = batch.order + b * cols;
  const V* x = batch.g + b * g_rows * cols;
  const V* w = batch.w != nullptr ? batch.w + b * cols * cols : nullptr;
  // U' (rows x cols) and V' (cols x cols) go to these outputs (leading dimensions rows, cols).
  V* u_out = batch.wide ? v : u;
  V* v_out = batch.wide ? u : v;
  if (u_out != nullptr) u_out += b * rows * cols;
  if (v_out != nullptr) v_out += b * cols * cols;

  if (v_out != nullptr) {
    const V* source = pivoted ? x : w;
    for (index_t e = tid; e < cols * cols; e += threads) {
      const index_t i = e % cols, j = e / cols;
      const index_t row = pivoted ? batch.col_perm[b * cols + i] : i;
      v_out[row + order[j] * cols] = source[e];
    }
  }
  if (u_out == nullptr) return;
  if (!qr) {
    for (index_t e = tid; e < rows * cols; e += threads)
      u_out[e % rows + order[e / rows] * rows] = x[e];
    return;
  }

  // Y = [Y_0; 0] with Y_0 = W (SVD) or X (HSVD), columns in sorted order; then Y <- Q Y.
  V* y = matrix_in_shared ? reinterpret_cast<V*>(shared) : scratch + b * rows * cols;
  const V* top = pivoted ? w : x;
  for (index_t e = tid; e < rows * cols; e += threads) {
    const index_t i = e % rows, j = e / rows;
    y[i + order[j] * rows] = i < cols ? top[i + j * cols] : zero<V>();
  }
  __syncthreads();
  const V* reflectors = batch.qr + b * rows * cols;
  const index_t rounds = (cols + groups.count - 1) / groups.count;
  for (index_t k = cols - 1; k >= 0; --k) {
    const V tau_k = batch.tau[b * cols + k];
    if (real_of(tau_k) == 0 && imag_of(tau_k) == 0) continue;  // uniform over the block
    const V* vk = reflectors + k * rows;
    for (index_t s = 0; s < rounds; ++s) {
      const index_t j = s * groups.count + groups.index;
      const bool active = j < cols;
      V* c = y + j * rows;
      Acc dot{0, 0};
      if (active) {
        if (groups.lane == 0) dot = {real_of(c[k]), imag_of(c[k])};
        for (index_t i = k + 1 + groups.lane; i < rows; i += groups.width)
          add_conj_product(dot, vk[i], c[i]);
      }
      dot = group_sum(dot, groups.width);
      if (!active) continue;
      // s = tau * dot; c_k -= s; c_i -= v_i s
      const double tr = real_of(tau_k), ti = imag_of(tau_k);
      const Scalar<R> minus_s{static_cast<R>(-(tr * dot.re - ti * dot.im)),
                              static_cast<R>(-(tr * dot.im + ti * dot.re))};
      if (groups.lane == 0) c[k] = axpy(minus_s, make<V>(R(1), R(0)), c[k]);
      for (index_t i = k + 1 + groups.lane; i < rows; i += groups.width)
        c[i] = axpy(minus_s, vk[i], c[i]);
    }
    __syncthreads();
  }
  for (index_t e = tid; e < rows * cols; e += threads) {
    const index_t i = e % rows;
    const index_t row = pivoted ? batch.row_perm[b * rows + i] : i;
    u_out[row + (e / rows) * rows] = y[e];
  }
}

}  // namespace

template <class T>
void launch_vectors(const Batch<T>& batch, DeviceType<T>* u, DeviceType<T>* v,
                    DeviceType<T>* scratch, std::size_t shared_limit, cudaStream_t stream) {
  if (batch.count == 0 || (u == nullptr && v == nullptr)) return;
  const bool needs_y =
      (batch.wide ? v : u) != nullptr && batch.preprocessing != Preprocessing::None;
  const SharedPlan shared =
      needs_y ? plan_shared(batch.rows * batch.cols * sizeof(DeviceType<T>), 0, shared_limit)
              : SharedPlan{};
  cuda::allow_dynamic_shared(vectors_kernel<T>, shared_limit);
  vectors_kernel<T><<<static_cast<unsigned>(batch.count), batch.threads, shared.bytes, stream>>>(
      batch, u, v, scratch, shared.matrix_in_shared);
  SHIFTOP_CUDA_CHECK(cudaGetLastError());
}

#define SHIFTOP_INSTANTIATE(T)                                                                  \
  template void launch_vectors(const Batch<T>&, DeviceType<T>*, DeviceType<T>*, DeviceType<T>*, \
                               std::size_t, cudaStream_t);
SHIFTOP_INSTANTIATE(float)
SHIFTOP_INSTANTIATE(double)
SHIFTOP_INSTANTIATE(std::complex<float>)
SHIFTOP_INSTANTIATE(std::complex<double>)
#undef SHIFTOP_INSTANTIATE

}  // namespace shiftop::svd::gpu_kernels
