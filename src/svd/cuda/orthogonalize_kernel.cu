// Stage 2 of the batched Jacobi (H)SVD (svd/cuda/batched_kernels.hpp): the pointwise one-sided
// Jacobi method, one thread block per matrix (jacobi-svd-gsvd-gpu-thesis, section 2.3.3: the
// steps of `orthogonalize` at the shared-memory level, here on the whole matrix). Each parallel
// step of the strategy gives its disjoint pivot pairs to the block's groups of lanes; a group
// forms g_p^H g_q by a group sum, computes the rotation from the column norms exactly as the CPU
// does (svd/rotation.hpp, shared code), applies it to G and W with the local sort of step 5, and
// updates the norms by the corrected prediction (recomputed when it cancels, as dgsvj0). A sweep
// starts from freshly computed norms; the method stops after a sweep without a proper rotation
// (cos != 1), the thesis' convergence criterion.
#include <limits>

#include "backend/cuda/check.hpp"
#include "svd/cuda/batched_kernels.hpp"
#include "svd/cuda/group_ops.cuh"
#include "svd/rotation.hpp"

namespace shiftop::svd::gpu_kernels {
namespace {

template <class V>
__device__ __forceinline__ double column_norm2(const V* x, index_t n, const Groups& groups,
                                               bool active) {
  double sum = 0;
  if (active)
    for (index_t i = groups.lane; i < n; i += groups.width)
      sum += abs2(x[i]);
  return group_sum(sum, groups.width);
}

// [x y] <- [x y] c [1, beta; alpha, 1], the new columns swapped when `swap`.
template <class V, class R>
__device__ __forceinline__ void rotate(V* x, V* y, index_t n, R c, Scalar<R> alpha, Scalar<R> beta,
                                       bool swap, const Groups& groups) {
  for (index_t i = groups.lane; i < n; i += groups.width) {
    const V xi = x[i], yi = y[i];
    const V new_x = scale(c, axpy(alpha, yi, xi)), new_y = scale(c, axpy(beta, xi, yi));
    x[i] = swap ? new_y : new_x;
    y[i] = swap ? new_x : new_y;
  }
}

template <class V>
__device__ __forceinline__ void swap_columns(V* x, V* y, index_t n, const Groups& groups) {
  for (index_t i = groups.lane; i < n; i += groups.width) {
    const V t = x[i];
    x[i] = y[i];
    y[i] = t;
  }
}

template <class T>
__global__ void orthogonalize_kernel(Batch<T> batch, bool g_in_shared, bool w_in_shared) {
  using V = DeviceType<T>;
  using R = typename Device<T>::real;
  extern __shared__ __align__(16) unsigned char shared[];
  __shared__ int rotations, proper, nonfinite;

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
  if (tid == 0) nonfinite = 0;
  __syncthreads();

  const R tolerance = detail::unit_roundoff<R>() * sqrt(static_cast<R>(cols));
  const R sqrt_eps = sqrt(detail::unit_roundoff<R>());
  const int n_plus = batch.n_plus;
  const index_t column_rounds = (cols + groups.count - 1) / groups.count;
  const index_t pair_rounds = (batch.pairs_per_step + groups.count - 1) / groups.count;

  // sigma_j^2 into norm[j] (squared: final) or nu_j (not squared: the sweeps' norms).
  const auto compute_norms = [&](bool squared) {
    for (index_t s = 0; s < column_rounds; ++s) {
      const index_t j = s * groups.count + groups.index;
      const double sum = column_norm2(g + j * rows, rows, groups, j < cols);
      if (j < cols && groups.lane == 0) {
        norm[j] = squared ? sum : sqrt(sum);
        if (!isfinite(sum)) nonfinite = 1;
      }
    }
  };

  int sweeps = 0;
  long long total_rotations = 0, total_proper = 0;
  bool converged = false;
  while (sweeps < batch.max_sweeps) {
    compute_norms(false);
    if (tid == 0) rotations = proper = 0;
    __syncthreads();
    for (int step = 0; step < batch.steps; ++step) {
      for (index_t round = 0; round < pair_rounds; ++round) {
        const index_t k = round * groups.count + groups.index;
        const int2 pair = k < batch.pairs_per_step ? batch.pairs[step * batch.pairs_per_step + k]
                                                   : make_int2(-1, -1);
        const bool active = pair.x >= 0;
        const index_t p = active ? pair.x : 0, q = active ? pair.y : 0;
        V* gp = g + p * rows;
        V* gq = g + q * rows;
        // (an inactive group reads no norm: another group may be writing norm[0])
        const R nu_p = active ? static_cast<R>(norm[p]) : R(0);
        const R nu_q = active ? static_cast<R>(norm[q]) : R(0);
        const bool nonzero = active && nu_p > 0 && nu_q > 0;
        Acc dot{0, 0};
        if (nonzero)
          for (index_t i = groups.lane; i < rows; i += groups.width)
            add_conj_product(dot, gp[i], gq[i]);
        dot = group_sum(dot, groups.width);

        const bool hyperbolic = n_plus >= 0 && ((p < n_plus) != (q < n_plus));
        const bool positive = n_plus < 0 || p < n_plus;
        const double product = static_cast<double>(nu_p) * static_cast<double>(nu_q);
        const double a_re = nonzero ? dot.re / product : 0, a_im = nonzero ? dot.im / product : 0;
        const R abs_cosine = static_cast<R>(hypot(a_re, a_im));
        const bool rotated = nonzero && abs_cosine >= tolerance;
        detail::Rotation<R> rotation;
        detail::PairValues<R> factors{1, 1};
        R new_p = nu_p, new_q = nu_q;
        if (rotated) {
          const R ratio = nu_q / nu_p;
          rotation = detail::rotation_from_norms(ratio, abs_cosine, hyperbolic);
          factors = detail::predicted_norm_factors(rotation, ratio, abs_cosine, hyperbolic);
          new_p = nu_p * sqrt(factors.p);
          new_q = nu_q * sqrt(factors.q);
        }
        // Step 5 with the corrected prediction: +1 columns nonincreasing, -1 columns
        // nondecreasing; a hyperbolic pair keeps its order (J stays partitioned).
        const bool swap = active && !hyperbolic && (positive ? new_p < new_q : new_p > new_q);
        if (rotated) {
          // e^{i theta} of h_pq; alpha = -t tn e^{-i theta}, beta = tn e^{i theta}
          const double inverse = 1.0 / hypot(a_re, a_im);
          const R phase_re = static_cast<R>(a_re * inverse),
                  phase_im = static_cast<R>(a_im * inverse);
          const R t = hyperbolic ? R(-1) : R(1);
          const Scalar<R> alpha{-t * rotation.tangent * phase_re, t * rotation.tangent * phase_im};
          const Scalar<R> beta{rotation.tangent * phase_re, rotation.tangent * phase_im};
          rotate(gp, gq, rows, rotation.cosine, alpha, beta, swap, groups);
          if (accumulate)
            rotate(w + p * cols, w + q * cols, cols, rotation.cosine, alpha, beta, swap, groups);
        } else if (swap) {
          swap_columns(gp, gq, rows, groups);
          if (accumulate) swap_columns(w + p * cols, w + q * cols, cols, groups);
        }
        // dgsvj0: a predicted norm that lost more than half its digits is recomputed (each lane
        // reads back the entries it wrote, so no barrier is needed).
        const bool recompute_p = rotated && factors.p <= sqrt_eps;
        const bool recompute_q = rotated && factors.q <= sqrt_eps;
        const double fresh_p = column_norm2(swap ? gq : gp, rows, groups, recompute_p);
        const double fresh_q = column_norm2(swap ? gp : gq, rows, groups, recompute_q);
        if (recompute_p) new_p = static_cast<R>(sqrt(fresh_p));
        if (recompute_q) new_q = static_cast<R>(sqrt(fresh_q));
        if (active && groups.lane == 0) {
          norm[p] = swap ? new_q : new_p;
          norm[q] = swap ? new_p : new_q;
          if (rotated) atomicAdd(&rotations, 1);
          if (rotated && rotation.cosine != 1) atomicAdd(&proper, 1);
        }
      }
      __syncthreads();
    }
    ++sweeps;
    total_rotations += rotations;
    total_proper += proper;
    // Overflow (an HSVD that does not exist) makes norms non-finite: stop, not converged.
    const bool stop_nonfinite = nonfinite != 0, stop_converged = proper == 0;
    __syncthreads();  // everyone has read the counters before the next sweep resets them
    if (stop_nonfinite) break;
    if (stop_converged) {
      converged = true;
      break;
    }
  }

  // sigma_j = ||g_j||; its place in the descending order (per part of J, ties in column order).
  compute_norms(true);
  __syncthreads();
  const int exponent = batch.reports[b].scale_exponent;
  for (index_t j = tid; j < cols; j += threads) {
    const index_t start = n_plus >= 0 && j >= n_plus ? n_plus : 0;
    const index_t end = n_plus >= 0 && j < n_plus ? n_plus : cols;
    const double s = norm[j];
    index_t rank = start;
    for (index_t k = start; k < end; ++k)
      rank += norm[k] > s || (norm[k] == s && k < j);
    batch.order[b * cols + j] = static_cast<std::int32_t>(rank);
    batch.sigma[b * cols + rank] = static_cast<R>(scalbn(sqrt(s), exponent));
  }
  __syncthreads();
  if (batch.keep_x)  // X: the columns of G normalised (zero columns stay zero)
    for (index_t e = tid; e < rows * cols; e += threads) {
      const double s = norm[e / rows];
      global_g[e] = s > 0 ? scale(static_cast<R>(1.0 / sqrt(s)), g[e]) : zero<V>();
    }
  if (accumulate && w_in_shared)
    for (index_t e = tid; e < cols * cols; e += threads)
      global_w[e] = w[e];
  if (tid == 0) {
    MatrixReport& report = batch.reports[b];
    report.sweeps = sweeps;
    report.rotations = total_rotations;
    report.proper_rotations = total_proper;
    report.converged = converged && nonfinite == 0;
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
  SHIFTOP_CUDA_CHECK(cudaFuncSetAttribute(orthogonalize_kernel<T>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(shared.bytes)));
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
