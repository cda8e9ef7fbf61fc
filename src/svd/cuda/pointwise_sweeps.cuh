// The pointwise one-sided Jacobi method for one thread block (jacobi-svd-gsvd-gpu-thesis, section
// 2.3.3, the steps of `orthogonalize`) of the one-block-per-matrix kernel (orthogonalize_kernel.cu:
// the whole matrix; the blocked method's pairs run the two-sided form on their Gram matrices,
// gram_jacobi.cuh). Each parallel step of the strategy gives its disjoint pivot pairs to the
// block's groups of lanes; a group forms g_p^H g_q by a group sum, computes the rotation from the
// column norms exactly as the CPU does (svd/rotation.hpp, shared code), applies it to G and W with
// the local sort of step 5, and updates the norms by the corrected prediction (recomputed when it
// cancels, as dgsvj0). A sweep starts from freshly computed norms; the method stops after a sweep
// that rotated no pair (every pair relatively orthogonal, as on the CPU: svd/pointwise.cpp says why
// "no proper rotation" is not enough), or after max_sweeps, or when a norm overflows.
#pragma once

#include "svd/cuda/batched_kernels.hpp"
#include "svd/cuda/group_ops.cuh"
#include "svd/rotation.hpp"

namespace shiftop::svd::gpu_kernels {

template <class V>
struct Pointwise {
  V* g = nullptr;  ///< rows x cols (leading dimension rows)
  index_t rows = 0, cols = 0;
  V* w = nullptr;  ///< w_rows x cols accumulating the rotations, or null
  index_t w_rows = 0;
  double* norm = nullptr;       ///< cols, shared memory
  const int2* pairs = nullptr;  ///< steps x pairs_per_step, p = -1 pads
  int steps = 0, pairs_per_step = 0;
  int n_plus = -1;       ///< J = diag(I_{n_plus}, -I) on the columns; -1 for the SVD
  double tolerance = 0;  ///< rotate when |g_p^H g_q| >= tolerance ||g_p|| ||g_q||
  int max_sweeps = 1;
};

/// Block-wide counters in shared memory.
struct Counters {
  int rotations, proper, nonfinite;
};

struct SweepTotals {
  int sweeps = 0;
  long long rotations = 0, proper = 0;
  bool converged = false;
};

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

/// norm[j] = ||g_j|| (or its square) for every column; sets counters->nonfinite on overflow.
template <class V>
__device__ void column_norms(const V* g, index_t rows, index_t cols, double* norm, bool squared,
                             const Groups& groups, Counters* counters) {
  const index_t rounds = (cols + groups.count - 1) / groups.count;
  for (index_t s = 0; s < rounds; ++s) {
    const index_t j = s * groups.count + groups.index;
    const double sum = column_norm2(g + j * rows, rows, groups, j < cols);
    if (j < cols && groups.lane == 0) {
      norm[j] = squared ? sum : sqrt(sum);
      if (!isfinite(sum)) counters->nonfinite = 1;
    }
  }
}

/// The sweeps of the pointwise method on problem.g (every thread of the block calls it).
template <class V, class R>
__device__ SweepTotals pointwise_sweeps(const Pointwise<V>& problem, const Groups& groups,
                                        Counters* counters) {
  V* const g = problem.g;
  V* const w = problem.w;
  const index_t rows = problem.rows;
  const R tolerance = static_cast<R>(problem.tolerance);
  const R sqrt_eps = sqrt(detail::unit_roundoff<R>());
  const index_t pair_rounds = (problem.pairs_per_step + groups.count - 1) / groups.count;
  const bool first_thread = threadIdx.x == 0;
  if (first_thread) counters->nonfinite = 0;
  __syncthreads();  // before any column_norms may set it
  SweepTotals totals;
  while (totals.sweeps < problem.max_sweeps) {
    column_norms(g, rows, problem.cols, problem.norm, false, groups, counters);
    if (first_thread) counters->rotations = counters->proper = 0;
    int rotations = 0, proper = 0;  // this lane's, when it is a group's first
    __syncthreads();
    for (int step = 0; step < problem.steps; ++step) {
      for (index_t round = 0; round < pair_rounds; ++round) {
        const index_t k = round * groups.count + groups.index;
        const int2 pair = k < problem.pairs_per_step
                              ? problem.pairs[step * problem.pairs_per_step + k]
                              : make_int2(-1, -1);
        // (a strategy for more columns than the problem has: pairs beyond them are skipped)
        const bool active = pair.x >= 0 && pair.y < problem.cols;
        const index_t p = active ? pair.x : 0, q = active ? pair.y : 0;
        V* gp = g + p * rows;
        V* gq = g + q * rows;
        // (an inactive group reads no norm: another group may be writing norm[0])
        const R nu_p = active ? static_cast<R>(problem.norm[p]) : R(0);
        const R nu_q = active ? static_cast<R>(problem.norm[q]) : R(0);
        const bool nonzero = active && nu_p > 0 && nu_q > 0;
        Acc dot{0, 0};
        if (nonzero)
          for (index_t i = groups.lane; i < rows; i += groups.width)
            add_conj_product(dot, gp[i], gq[i]);
        dot = group_sum(dot, groups.width);

        const bool positive = problem.n_plus < 0 || p < problem.n_plus;
        const bool hyperbolic = active && positive != (problem.n_plus < 0 || q < problem.n_plus);
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
          if (w != nullptr)
            rotate(w + p * problem.w_rows, w + q * problem.w_rows, problem.w_rows, rotation.cosine,
                   alpha, beta, swap, groups);
        } else if (swap) {
          swap_columns(gp, gq, rows, groups);
          if (w != nullptr)
            swap_columns(w + p * problem.w_rows, w + q * problem.w_rows, problem.w_rows, groups);
        }
        // dgsvj0: a predicted norm that lost more than half its digits is recomputed (each lane
        // reads back the entries it wrote, so no barrier is needed).
        const bool recompute_p = rotated && factors.p <= sqrt_eps;
        const bool recompute_q = rotated && factors.q <= sqrt_eps;
        const double fresh_p = column_norm2(swap ? gq : gp, rows, groups, recompute_p);
        const double fresh_q = column_norm2(swap ? gp : gq, rows, groups, recompute_q);
        if (recompute_p) new_p = static_cast<R>(sqrt(fresh_p));
        if (recompute_q) new_q = static_cast<R>(sqrt(fresh_q));
        __syncwarp();  // the group's lanes have read norm[p], norm[q] (racecheck)
        if (active && groups.lane == 0) {
          problem.norm[p] = swap ? new_q : new_p;
          problem.norm[q] = swap ? new_p : new_q;
          rotations += rotated;
          proper += rotated && rotation.cosine != 1;
        }
      }
      __syncthreads();
    }
    // The sweep's counts, one shared atomic per counting lane and sweep (per pair and step they
    // serialised the groups of every step on one address).
    if (rotations != 0) atomicAdd(&counters->rotations, rotations);
    if (proper != 0) atomicAdd(&counters->proper, proper);
    __syncthreads();
    ++totals.sweeps;
    totals.rotations += counters->rotations;
    totals.proper += counters->proper;
    // Overflow (an HSVD that does not exist) makes norms non-finite: stop, not converged.
    const bool stop_nonfinite = counters->nonfinite != 0, stop_converged = counters->rotations == 0;
    __syncthreads();  // everyone has read the counters before the next sweep resets them
    if (stop_nonfinite) break;
    if (stop_converged) {
      totals.converged = true;
      break;
    }
  }
  return totals;
}

/// The end of the method for matrix b (every thread of the block calls it): sigma_j = ||g_j||
/// written at its place in the descending order (per part of J, ties in column order), that place
/// recorded, and X = G's columns normalised into x (may be g itself) when keep_x. `norm` is shared
/// scratch of cols entries.
template <class T>
__device__ void finish_matrix(const Batch<T>& batch, index_t b, const DeviceType<T>* g,
                              double* norm, const Groups& groups, Counters* counters) {
  using R = typename Device<T>::real;
  const index_t rows = batch.g_rows, cols = batch.cols;
  const int tid = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  const int n_plus = batch.n_plus;
  column_norms(g, rows, cols, norm, true, groups, counters);
  __syncthreads();
  const int exponent = batch.reports[b].scale_exponent;
  for (index_t j = tid; j < cols; j += threads) {
    const index_t start = n_plus >= 0 && j >= n_plus ? n_plus : 0;
    const index_t end = n_plus >= 0 && j < n_plus ? n_plus : cols;
    // NaN norms (a result that did not converge) rank last, so the places stay distinct
    const auto key = [norm](index_t k) { return isnan(norm[k]) ? -1.0 : norm[k]; };
    const double s = key(j);
    index_t rank = start;
    for (index_t k = start; k < end; ++k)
      rank += key(k) > s || (key(k) == s && k < j);
    batch.order[b * cols + j] = static_cast<std::int32_t>(rank);
    batch.sigma[b * cols + rank] = static_cast<R>(scalbn(sqrt(norm[j]), exponent));
  }
  if (!batch.keep_x) return;
  DeviceType<T>* x = batch.g + b * rows * cols;
  for (index_t e = tid; e < rows * cols; e += threads) {  // zero columns stay zero
    const double s = norm[e / rows];
    x[e] = s > 0 ? scale_in_double(1.0 / sqrt(s), g[e]) : zero<DeviceType<T>>();
  }
}

}  // namespace shiftop::svd::gpu_kernels
