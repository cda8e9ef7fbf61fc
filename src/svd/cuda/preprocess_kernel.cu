// Stage 1 of the batched Jacobi (H)SVD (svd/cuda/batched_kernels.hpp): one thread block per
// matrix forms G from A' as the CPU driver does (svd/preprocess.hpp, LAPACK's xGEJSV): the rows
// sorted by decreasing infinity norm, Householder QR with column pivoting and the partial-norm
// downdating of xLAQP2 (LAWN 176), G = R^H; or QR without pivoting, G = R (HSVD); or G = A'.
// Groups of lanes own whole columns: each reflector is made by warp 0 and applied by every group
// to its columns (dot product by a group sum, then the update), one block-wide barrier per column.
#include <cfloat>
#include <climits>
#include <limits>

#include "backend/cuda/check.hpp"
#include "backend/cuda/runtime.cuh"
#include "svd/cuda/batched_kernels.hpp"
#include "svd/cuda/group_ops.cuh"

namespace shiftop::svd::gpu_kernels {
namespace {

// Nonnegative doubles compare as their bit patterns: block-wide maxima by integer atomics.
__device__ __forceinline__ void atomic_max_nonnegative(unsigned long long* target, double x) {
  atomicMax(target, static_cast<unsigned long long>(__double_as_longlong(x)));
}

template <class V>
__device__ __forceinline__ double max_abs_part(V x) {
  return fmax(fabs(real_of(x)), fabs(imag_of(x)));
}

// Element (i, j) of A' = A (tall) or A^H (wide) of matrix `a` (already offset to the matrix).
template <class T>
__device__ __forceinline__ DeviceType<T> element(const Batch<T>& batch, const DeviceType<T>* a,
                                                 index_t i, index_t j) {
  return batch.wide ? conj(a[j + i * batch.lda]) : a[i + j * batch.lda];
}

template <class T>
__global__ void preprocess_kernel(Batch<T> batch, bool matrix_in_shared) {
  using V = DeviceType<T>;
  using R = typename Device<T>::real;
  extern __shared__ __align__(16) unsigned char shared[];
  __shared__ unsigned long long max_bits;
  __shared__ long long first_bad;
  __shared__ int pivot;
  __shared__ Acc tau_k;

  const index_t b = blockIdx.x;
  const index_t rows = batch.rows, cols = batch.cols;
  const V* a = batch.a + b * batch.stride;
  const Groups groups(batch.lanes);
  const int tid = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  const bool pivoted = batch.preprocessing == Preprocessing::PivotedQr;

  double* partial = reinterpret_cast<double*>(shared);  // cols: xLAQP2's partial norms
  double* full = partial + cols;                        // cols: their reference values
  int* perm = reinterpret_cast<int*>(full + cols);      // cols
  const std::size_t small = (cols * (2 * sizeof(double) + sizeof(int)) + 15) / 16 * 16;
  V* work =
      batch.preprocessing == Preprocessing::None
          ? batch.g + b * rows * cols
          : (matrix_in_shared ? reinterpret_cast<V*>(shared + small) : batch.qr + b * rows * cols);
  std::int32_t* row_perm = batch.row_perm + b * rows;

  if (tid == 0) {
    max_bits = 0;
    first_bad = LLONG_MAX;
  }
  __syncthreads();

  // The largest |Re|, |Im|, the first non-finite entry (column-major index in A) and, when the
  // rows are sorted, each row's infinity norm (non-finite rows count as 0: ranks stay distinct).
  // The norm takes |x| as hypot, not sqrt(|x|^2): squares of FP64 entries beyond 2^±512 overflow
  // or underflow, all rows would tie, and the order would depend on the matrix's scale.
  double* row_key = reinterpret_cast<double*>(batch.row_keys + b * rows);
  for (index_t i = tid; i < rows; i += threads) {
    double key = 0, big = 0;
    for (index_t j = 0; j < cols; ++j) {
      const V x = element(batch, a, i, j);
      if (!finite(x)) {
        const long long at = batch.wide ? j + i * batch.m : i + j * batch.m;
        atomicMin(&first_bad, at);
        continue;
      }
      key = fmax(key, hypot(real_of(x), imag_of(x)));  // |x| without squaring: FP64 2^±600
      big = fmax(big, max_abs_part(x));
    }
    atomic_max_nonnegative(&max_bits, big);
    if (pivoted) row_key[i] = key;
  }
  __syncthreads();
  // A' is scaled by the power of two that brings its largest entry into [1, 2) (exact; sigma is
  // scaled back): the squared sums in double then neither overflow nor underflow unless the
  // entries themselves span more than ~300 decades (FP32: the factor stays a float).
  const double largest = __longlong_as_double(static_cast<long long>(max_bits));
  const int exponent =
      largest > 0 ? max(ilogb(largest), 3 - std::numeric_limits<R>::max_exponent) : 0;
  const R factor = static_cast<R>(scalbn(1.0, -exponent));

  if (pivoted) {  // rank = rows before it in decreasing order, ties in row order (stable)
    for (index_t i = tid; i < rows; i += threads) {
      const double key = row_key[i];
      index_t rank = 0;
      for (index_t k = 0; k < rows; ++k) {
        const double other = row_key[k];
        rank += other > key || (other == key && k < i);
      }
      row_perm[rank] = static_cast<std::int32_t>(i);
    }
    __syncthreads();
  }
  for (index_t e = tid; e < rows * cols; e += threads) {
    const index_t i = e % rows, j = e / rows;
    const V x = element(batch, a, pivoted ? row_perm[i] : i, j);
    work[e] = finite(x) ? scale(factor, x) : zero<V>();
  }
  if (pivoted)
    for (index_t j = tid; j < cols; j += threads)
      perm[j] = static_cast<int>(j);
  __syncthreads();

  MatrixReport* report = batch.reports + b;
  if (tid == 0) {
    report->scale_exponent = exponent;
    report->first_nonfinite = first_bad == LLONG_MAX ? -1 : first_bad;
    report->rank = static_cast<int>(cols);
  }
  if (batch.preprocessing == Preprocessing::None) return;

  const index_t steps = (cols + groups.count - 1) / groups.count;  // uniform trip counts per warp
  if (pivoted) {
    for (index_t s = 0; s < steps; ++s) {
      const index_t j = s * groups.count + groups.index;
      double sum = 0;
      if (j < cols)
        for (index_t i = groups.lane; i < rows; i += groups.width)
          sum += abs2(work[i + j * rows]);
      sum = group_sum(sum, groups.width);
      if (j < cols && groups.lane == 0) partial[j] = full[j] = sqrt(sum);
    }
    __syncthreads();
  }

  const double tol3z = sqrt(static_cast<double>(std::numeric_limits<R>::epsilon()));
  for (index_t k = 0; k < cols; ++k) {
    if (pivoted) {
      if (tid < 32) {  // warp 0: the first column of largest partial norm in k..cols-1
        double best = -1;
        int where = static_cast<int>(k);
        for (index_t j = k + tid; j < cols; j += 32)
          if (partial[j] > best) best = partial[j], where = static_cast<int>(j);
        for (int offset = 16; offset > 0; offset /= 2) {
          const double other = __shfl_xor_sync(0xffffffffu, best, offset);
          const int other_at = __shfl_xor_sync(0xffffffffu, where, offset);
          if (other > best || (other == best && other_at < where)) best = other, where = other_at;
        }
        if (tid == 0) pivot = where;
      }
      __syncthreads();
      const index_t p = pivot;
      if (p != k) {
        for (index_t i = tid; i < rows; i += threads) {
          const V x = work[i + k * rows];
          work[i + k * rows] = work[i + p * rows];
          work[i + p * rows] = x;
        }
        __syncthreads();
        if (tid == 0) {
          const int moved = perm[p];
          perm[p] = perm[k], perm[k] = moved;
          partial[p] = partial[k], full[p] = full[k];
        }
      }
    }
    // The reflector of column k (xLARFG): (alpha, x) -> (beta, 0), beta real; made by warp 0
    // (whole warps only: the lane sums shuffle over all 32 lanes).
    if (tid < 32) {
      V* column = work + k * rows;
      double x_norm2 = 0;
      for (index_t i = k + 1 + tid; i < rows; i += 32)
        x_norm2 += abs2(column[i]);
      x_norm2 = group_sum(x_norm2, 32);
      const V alpha = column[k];
      const double ar = real_of(alpha), ai = imag_of(alpha);
      Acc tau{0, 0};
      if (x_norm2 > 0 || ai != 0) {
        const double beta = -copysign(sqrt(fma(ar, ar, fma(ai, ai, x_norm2))), ar);
        tau = {(beta - ar) / beta, -ai / beta};
        // 1 / (alpha - beta); |alpha - beta| >= |beta|, no cancellation
        const double dr = ar - beta, d2 = fma(dr, dr, ai * ai);
        const Scalar<R> inverse{static_cast<R>(dr / d2), static_cast<R>(-ai / d2)};
        for (index_t i = k + 1 + tid; i < rows; i += 32)
          column[i] = axpy(inverse, column[i], zero<V>());
        __syncwarp();  // every lane has read alpha
        if (tid == 0) column[k] = make<V>(static_cast<R>(beta), R(0));
      }
      if (tid == 0) {
        tau_k = tau;
        if (batch.tau != nullptr)
          batch.tau[b * cols + k] = make<V>(static_cast<R>(tau.re), static_cast<R>(tau.im));
      }
    }
    __syncthreads();
    // H^H = I - conj(tau) v v^H on columns k+1.., then xLAQP2's downdate of their partial norms.
    const Acc tau = tau_k;
    const V* v = work + k * rows;
    const index_t first = k + 1, trailing = cols - first;
    const index_t rounds = (trailing + groups.count - 1) / groups.count;
    for (index_t s = 0; s < rounds; ++s) {
      const index_t j = first + s * groups.count + groups.index;
      const bool active = j < cols && (tau.re != 0 || tau.im != 0);
      V* c = work + j * rows;
      Acc dot{0, 0};
      if (active) {
        if (groups.lane == 0) dot = {real_of(c[k]), imag_of(c[k])};
        for (index_t i = k + 1 + groups.lane; i < rows; i += groups.width)
          add_conj_product(dot, v[i], c[i]);
      }
      dot = group_sum(dot, groups.width);
      if (active) {
        // s = conj(tau) * dot; c_k -= s; c_i -= v_i s
        const Scalar<R> minus_s{static_cast<R>(-(tau.re * dot.re + tau.im * dot.im)),
                                static_cast<R>(-(tau.re * dot.im - tau.im * dot.re))};
        if (groups.lane == 0) c[k] = axpy(minus_s, make<V>(R(1), R(0)), c[k]);
        for (index_t i = k + 1 + groups.lane; i < rows; i += groups.width)
          c[i] = axpy(minus_s, v[i], c[i]);
      }
      if (!pivoted) continue;
      __syncwarp();
      const bool has_norm = j < cols && partial[j] != 0;
      double ratio = 0, temp = 0, scaled = 1;
      if (has_norm) {
        ratio = sqrt(abs2(c[k])) / partial[j];
        temp = fmax(0.0, (1 - ratio) * (1 + ratio));
        scaled = temp * (partial[j] / full[j]) * (partial[j] / full[j]);
      }
      const bool recompute = has_norm && scaled <= tol3z;
      double sum = 0;
      if (recompute)
        for (index_t i = k + 1 + groups.lane; i < rows; i += groups.width)
          sum += abs2(c[i]);
      sum = group_sum(sum, groups.width);
      __syncwarp();
      if (has_norm && groups.lane == 0) {
        if (recompute)
          partial[j] = full[j] = sqrt(sum);
        else
          partial[j] *= sqrt(temp);
      }
    }
    __syncthreads();
  }

  // G = R^H (lower triangular) or R (upper), cols x cols; the rank counts nonzero R_kk.
  V* g = batch.g + b * cols * cols;
  for (index_t e = tid; e < cols * cols; e += threads) {
    const index_t i = e % cols, j = e / cols;
    if (pivoted)
      g[e] = j <= i ? conj(work[j + i * rows]) : zero<V>();
    else
      g[e] = i <= j ? work[i + j * rows] : zero<V>();
  }
  if (tid == 0) {
    int rank = 0;
    for (index_t k = 0; k < cols; ++k)
      rank += abs2(work[k + k * rows]) > 0;
    report->rank = rank;
  }
  if (pivoted)
    for (index_t j = tid; j < cols; j += threads)
      batch.col_perm[b * cols + j] = perm[j];
  if (matrix_in_shared && batch.tau != nullptr)  // the reflectors, for U' = Q [...]
    for (index_t e = tid; e < rows * cols; e += threads)
      batch.qr[b * rows * cols + e] = work[e];
}

}  // namespace

template <class T>
void launch_preprocess(const Batch<T>& batch, std::size_t shared_limit, cudaStream_t stream) {
  if (batch.count == 0) return;
  const bool none = batch.preprocessing == Preprocessing::None;
  const std::size_t small = batch.cols * (2 * sizeof(double) + sizeof(int));
  const SharedPlan shared =
      none ? SharedPlan{}
           : plan_shared(batch.rows * batch.cols * sizeof(DeviceType<T>), small, shared_limit);
  cuda::allow_dynamic_shared(preprocess_kernel<T>, shared_limit);
  preprocess_kernel<T><<<static_cast<unsigned>(batch.count), batch.threads, shared.bytes, stream>>>(
      batch, shared.matrix_in_shared);
  SHIFTOP_CUDA_CHECK(cudaGetLastError());
}

template void launch_preprocess(const Batch<float>&, std::size_t, cudaStream_t);
template void launch_preprocess(const Batch<double>&, std::size_t, cudaStream_t);
template void launch_preprocess(const Batch<std::complex<float>>&, std::size_t, cudaStream_t);
template void launch_preprocess(const Batch<std::complex<double>>&, std::size_t, cudaStream_t);

}  // namespace shiftop::svd::gpu_kernels
