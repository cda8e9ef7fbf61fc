// The inner method of the blocked one-sided Jacobi SVD on the GPU (svd/cuda/blocked_method.hpp):
// the two-sided Jacobi method on a pivot block pair's Gram matrix H = [G_p G_q]^H [G_p G_q]
// (c x c, c = 2 width) in one thread block's shared memory, accumulating the pair's rotation V.
//
// The one-sided method on G's columns is the implicit form of the two-sided method on H = G^H G
// (jacobi-svd-gsvd-gpu-thesis, section 2.1, before (2.7)): a rotation of columns (p, q) of G by
// V_pq is H <- V_pq^H H V_pq, and its parameters (2.15)-(2.18) come from h_pp, h_qq and h_pq alone.
// The outer (blocked) method forms H anyway, so the inner one reads the pivots straight from it
// instead of shortening H = R^H R (Cholesky, 2.3.1) and forming the pairs' dot products of R
// again at every step: per inner step one thread per pivot pair computes its rotation, then all
// threads update H's 2 x 2 blocks and V's column pairs: two barriers, no dot products, no group
// sums. In exact arithmetic the rotations are the ones the one-sided method on R would apply. The
// rounding of the updates is the two-sided method's, which on a positive (semi)definite H keeps
// the relative accuracy of the one-sided method on R (Demmel and Veselic, "Jacobi's method is
// more accurate than QR", SIAM J. Matrix Anal. Appl. 13, 1992: for H = D A D the errors are
// bounded by the condition of A, not of H); either way the outer method recomputes H from G at the
// next pair visit, and sigma comes from G's columns, so the inner rotations only have to be
// orthogonal and steer (GpuBlockedMethod.ColumnGradedRelativeAccuracy measures the result).
//
// The rotation of a pair is the one of svd/rotation.hpp (2.13)-(2.18), computed in double, with
// the thesis' step 5 as the pointwise method has it (svd/cuda/pointwise_sweeps.cuh): the larger
// new diagonal entry first (in J's negative part the smaller). The rotated pair's new 2 x 2 pivot
// block is set to diag(h'_pp, h'_qq) exactly (the prediction of svd/rotation.hpp), as the
// two-sided method does. The hyperbolic SVD: each half of the pair (a block column) has one sign
// of J; a pair with one column in each is rotated by (2.14), H <- V^H H V with V J-unitary, and
// keeps its order (J stays partitioned).
#pragma once

#include "svd/cuda/group_ops.cuh"
#include "svd/rotation.hpp"

namespace shiftop::svd::gpu_kernels {

/// Complex arithmetic in double on the element type's layout (real types: the imaginary parts are
/// compile-time zeros).
template <class V>
struct Wide {
  static constexpr bool complex = std::is_same_v<V, float2> || std::is_same_v<V, double2>;
  double re = 0, im = 0;
  __device__ static Wide of(V x) { return {real_of(x), complex ? imag_of(x) : 0.0}; }
  __device__ V narrow() const {
    if constexpr (std::is_same_v<V, float2>)
      return make_float2(static_cast<float>(re), static_cast<float>(im));
    else if constexpr (std::is_same_v<V, double2>)
      return make_double2(re, im);
    else
      return static_cast<V>(re);
  }
  /// this + conj(a) b
  __device__ Wide conj_product_add(Wide a, Wide b) const {
    if constexpr (complex)
      return {fma(a.re, b.re, fma(a.im, b.im, re)), fma(a.re, b.im, fma(-a.im, b.re, im))};
    else
      return {fma(a.re, b.re, re), 0.0};
  }
  /// this + a b
  __device__ Wide product_add(Wide a, Wide b) const {
    if constexpr (complex)
      return {fma(a.re, b.re, fma(-a.im, b.im, re)), fma(a.re, b.im, fma(a.im, b.re, im))};
    else
      return {fma(a.re, b.re, re), 0.0};
  }
};

/// One unit of an inner step, its columns (x, y) of H: a pivot pair (p, q), a column the step
/// leaves alone (j, -1), or padding (-1, -1); and its transform: new column x = t00 x + t10 y,
/// new column y = t01 x + t11 y (the identity unless rotated or exchanged), with the new diagonal
/// (d0, d1) of a rotated pair.
template <class V>
struct Unit {
  int2 columns;
  Wide<V> t00, t10, t01, t11;
  double d0, d1;
  bool rotated, proper;
};

/// A step's units in shared memory, one array per field (the threads of a warp read the fields
/// of different units: an array of structs would put them in the same banks).
template <class V>
struct StepUnits {
  int2* columns;
  Wide<V>*t00, *t10, *t01, *t11;
  double *d0, *d1;
  int* rotated;
  /// The arrays for `units` units from `shared` (16-byte aligned); bytes(units) of it.
  __host__ __device__ static constexpr std::size_t bytes(std::size_t units) {
    return units * (sizeof(int2) + 4 * sizeof(Wide<V>) + 2 * sizeof(double) + sizeof(int)) + 16;
  }
  __device__ static StepUnits at(unsigned char* shared, int units) {
    StepUnits s;
    auto* wide = reinterpret_cast<Wide<V>*>(shared);  // 16-byte aligned first
    s.t00 = wide, s.t10 = wide + units, s.t01 = wide + 2 * units, s.t11 = wide + 3 * units;
    auto* real = reinterpret_cast<double*>(wide + 4 * units);
    s.d0 = real, s.d1 = real + units;
    s.columns = reinterpret_cast<int2*>(real + 2 * units);
    s.rotated = reinterpret_cast<int*>(s.columns + units);
    return s;
  }
  __device__ void store(int k, const Unit<V>& u) const {
    columns[k] = u.columns, t00[k] = u.t00, t10[k] = u.t10, t01[k] = u.t01, t11[k] = u.t11;
    d0[k] = u.d0, d1[k] = u.d1, rotated[k] = u.rotated;
  }
};

template <class V>
struct GramProblem {
  V* h = nullptr;  ///< c x c Hermitian (both triangles), shared memory
  V* w = nullptr;  ///< c x c, the rotation accumulated (shared or global memory)
  int c = 0;
  const int2* units = nullptr;  ///< UnitTable::units (svd/cuda/strategy_table.hpp)
  int steps = 0, units_per_step = 0;
  unsigned char* step_units = nullptr;  ///< StepUnits<V>::bytes(units_per_step) of shared memory
  double tolerance = 0;                 ///< rotate when |h_pq| >= tolerance sqrt(h_pp h_qq)
  int max_sweeps = 1;
  bool negative[2] = {false, false};  ///< J's sign of columns [0, c/2) and [c/2, c): -1 if true
};

/// Block-shared counters of the method.
struct GramCounters {
  int sweep_rotations, rotations, proper, nonfinite;
};

/// A pivot pair's transform from H (the thesis' steps 3-5): rotated when relatively
/// non-orthogonal (hyperbolically when J's signs of p and q differ); a pair of one sign exchanged
/// so that the larger new diagonal entry comes first (positive) or last (negative).
template <class V>
__device__ void pair_transform(const GramProblem<V>& problem, Unit<V>& u, int* nonfinite) {
  const V* h = problem.h;
  const int c = problem.c, p = u.columns.x, q = u.columns.y;
  const bool negative = problem.negative[2 * p >= c];
  const bool hyperbolic = negative != problem.negative[2 * q >= c];
  const double h_pp = real_of(h[p + p * c]), h_qq = real_of(h[q + q * c]);
  const Wide<V> h_pq = Wide<V>::of(h[p + q * c]);
  const double abs_h = Wide<V>::complex ? hypot(h_pq.re, h_pq.im) : fabs(h_pq.re);
  if (!isfinite(h_pp) || !isfinite(h_qq) || !isfinite(abs_h)) atomicExch(nonfinite, 1);
  double new_p = h_pp, new_q = h_qq;
  u.rotated =
      h_pp > 0 && h_qq > 0 && abs_h > 0 && abs_h >= problem.tolerance * sqrt(h_pp) * sqrt(h_qq);
  if (u.rotated) {
    // (2.15): ct 2phi = t (h_qq - t h_pp) / (2 |h_pq|)
    const double t = hyperbolic ? -1 : 1;
    const auto rotation =
        detail::rotation_from_cot2<double>(t * fma(-t, h_pp, h_qq) / (2 * abs_h), hyperbolic);
    const auto diagonal =
        detail::predicted_diagonal<double>(rotation, h_pp, h_qq, abs_h, hyperbolic);
    new_p = fmax(0.0, diagonal.p);
    new_q = fmax(0.0, diagonal.q);
    u.proper = rotation.cosine != 1;
    // [g_p' g_q'] = [g_p g_q] cs [1, tn e^{i theta}; -t tn e^{-i theta}, 1] (svd/rotation.hpp)
    const double cs = rotation.cosine, ctn = rotation.cosine * rotation.tangent;
    const double phase_re = h_pq.re / abs_h, phase_im = h_pq.im / abs_h;
    u.t00 = u.t11 = Wide<V>{cs, 0};
    u.t01 = Wide<V>{ctn * phase_re, ctn * phase_im};
    u.t10 = Wide<V>{-t * ctn * phase_re, t * ctn * phase_im};
  }
  const bool exchange = !hyperbolic && (negative ? new_p > new_q : new_p < new_q);
  if (exchange) {  // step 5: exchange the new columns
    const Wide<V> t00 = u.t00, t10 = u.t10;
    u.t00 = u.t01, u.t10 = u.t11;
    u.t01 = t00, u.t11 = t10;
  }
  u.d0 = exchange ? new_q : new_p;
  u.d1 = exchange ? new_p : new_q;
}

/// H's block (rows of unit a, columns of unit b) <- T_a^H H_ab T_b, and its mirror; a rotated
/// pair's own block becomes diag(d0, d1).
template <class V>
__device__ void update_block(V* h, int c, const StepUnits<V>& units, int a, int b) {
  const int2 ra = units.columns[a], cb = units.columns[b];
  const int rows[2] = {ra.x, ra.y}, cols[2] = {cb.x, cb.y};
  const Wide<V> ta[2][2] = {{units.t00[a], units.t01[a]},
                            {units.t10[a], units.t11[a]}};  // [old][new]
  const Wide<V> tb[2][2] = {{units.t00[b], units.t01[b]}, {units.t10[b], units.t11[b]}};
  const bool same = a == b, rotated = same && units.rotated[a] != 0;
  Wide<V> old[2][2];
  for (int k = 0; k < 2; ++k)
    for (int l = 0; l < 2; ++l)
      old[k][l] = rows[k] >= 0 && cols[l] >= 0 ? Wide<V>::of(h[rows[k] + cols[l] * c]) : Wide<V>{};
  Wide<V> right[2][2];  // H_ab T_b
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 2; ++j)
      right[k][j] = Wide<V>{}.product_add(old[k][0], tb[0][j]).product_add(old[k][1], tb[1][j]);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      if (rows[i] < 0 || cols[j] < 0) continue;
      Wide<V> value =
          Wide<V>{}.conj_product_add(ta[0][i], right[0][j]).conj_product_add(ta[1][i], right[1][j]);
      if (rotated) value = Wide<V>{i != j ? 0.0 : i == 0 ? units.d0[a] : units.d1[a], 0};
      if (same && i == j) value.im = 0;  // a Hermitian matrix's diagonal
      h[rows[i] + cols[j] * c] = value.narrow();
      if (!same) h[cols[j] + rows[i] * c] = Wide<V>{value.re, -value.im}.narrow();
    }
}

/// The sweeps of the two-sided method on problem.h (every thread of the block calls it): stops
/// after a sweep that rotated no pair, or after max_sweeps. `counters` (block-shared) ends with
/// the rotations and proper rotations of all sweeps, and nonfinite set when H had a non-finite
/// pivot.
template <class V>
__device__ void gram_sweeps(const GramProblem<V>& problem, GramCounters* counters) {
  const int tid = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  const int lane = tid % warpSize, warp = tid / warpSize, warps = threads / warpSize;
  const int units = problem.units_per_step, c = problem.c;
  const StepUnits<V> unit = StepUnits<V>::at(problem.step_units, units);
  if (tid == 0) *counters = GramCounters{0, 0, 0, 0};
  __syncthreads();
  int rotations = 0, proper = 0;  // this thread's
  for (int sweep = 0; sweep < problem.max_sweeps; ++sweep) {
    int sweep_rotations = 0;
    for (int s = 0; s < problem.steps; ++s) {
      for (int k = tid; k < units; k += threads) {
        Unit<V> u{problem.units[s * units + k], {1, 0}, {}, {}, {1, 0}, 0, 0, false, false};
        if (u.columns.y >= 0) pair_transform(problem, u, &counters->nonfinite);
        sweep_rotations += u.rotated;
        proper += u.proper;
        unit.store(k, u);
      }
      __syncthreads();
      // A warp per column unit b: H's blocks (a, b), a <= b, one lane each, then the rotation's
      // two columns of b, a lane per row (warp-uniform units: no divisions, broadcast reads).
      for (int b = warp; b < units; b += warps) {
        if (unit.columns[b].x < 0) continue;
        for (int a = lane; a <= b; a += warpSize)
          if (unit.columns[a].x >= 0) update_block(problem.h, c, unit, a, b);
        const int2 columns = unit.columns[b];
        if (columns.y < 0) continue;
        const Wide<V> t00 = unit.t00[b], t10 = unit.t10[b], t01 = unit.t01[b], t11 = unit.t11[b];
        V* w0 = problem.w + columns.x * c;
        V* w1 = problem.w + columns.y * c;
        for (int row = lane; row < c; row += warpSize) {
          const Wide<V> x0 = Wide<V>::of(w0[row]), x1 = Wide<V>::of(w1[row]);
          w0[row] = Wide<V>{}.product_add(x0, t00).product_add(x1, t10).narrow();
          w1[row] = Wide<V>{}.product_add(x0, t01).product_add(x1, t11).narrow();
        }
      }
      __syncthreads();
    }
    if (sweep_rotations != 0) atomicAdd(&counters->sweep_rotations, sweep_rotations);
    rotations += sweep_rotations;
    __syncthreads();
    const bool converged = counters->sweep_rotations == 0;
    __syncthreads();  // everyone has read it before it is reset
    if (converged) break;
    if (tid == 0) counters->sweep_rotations = 0;
  }
  if (rotations != 0) atomicAdd(&counters->rotations, rotations);
  if (proper != 0) atomicAdd(&counters->proper, proper);
  __syncthreads();
}

}  // namespace shiftop::svd::gpu_kernels
