#include "svd/pointwise.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>
#include <vector>

#include "shiftop/core/error.hpp"
#include "svd/column_norms.hpp"
#include "svd/rotation.hpp"

namespace shiftop::svd::detail {
namespace {

template <class T>
constexpr bool is_complex = !std::is_same_v<T, Real<T>>;

template <class T>
T conj_if_complex(T x) {
  if constexpr (is_complex<T>)
    return std::conj(x);
  else
    return x;
}

// Columns shorter than this are processed on one thread: a step's pairs then carry too little
// work to pay for OpenMP's barrier per step. An estimate (a pair of 64-row columns is ~100 ns of
// work, a barrier ~1 us), not yet timed on an unloaded machine.
constexpr index_t parallel_min_rows = 64;

// Real views of the columns: a complex column of length n is 2n interleaved reals, so the loops
// below are plain arithmetic on R that the compiler vectorises (std::complex's operator* calls
// __muldc3 for its NaN rules and would not).
template <class T>
Real<T>* reals(T* x) {
  return reinterpret_cast<Real<T>*>(x);
}

// x^H y (real: x^T y) times sx * sy, each entry scaled before its product (sx, sy powers of 2).
template <class T, bool scaled>
T scaled_dot(const T* x_in, const T* y_in, index_t n, Real<T> sx, Real<T> sy) {
  using R = Real<T>;
  const R* __restrict x = reinterpret_cast<const R*>(x_in);
  const R* __restrict y = reinterpret_cast<const R*>(y_in);
  if constexpr (!is_complex<T>) {
    R sum = 0;
#pragma omp simd reduction(+ : sum)
    for (index_t i = 0; i < n; ++i) {
      if constexpr (scaled)
        sum += (x[i] * sx) * (y[i] * sy);
      else
        sum += x[i] * y[i];
    }
    return sum;
  } else {
    R re = 0, im = 0;
#pragma omp simd reduction(+ : re, im)
    for (index_t i = 0; i < n; ++i) {
      R xr = x[2 * i], xi = x[2 * i + 1], yr = y[2 * i], yi = y[2 * i + 1];
      if constexpr (scaled) {
        xr *= sx, xi *= sx, yr *= sy, yi *= sy;
      }
      re += xr * yr + xi * yi;
      im += xr * yi - xi * yr;
    }
    return {re, im};
  }
}

// The cosine of the angle of x and y, x^H y / (nu_x nu_y), from their norms, without overflow. The
// plain dot product is bounded by nu_x nu_y (Cauchy-Schwarz), so it is safe while that product is
// below the overflow threshold; underflowed products lose at most n denorm_min, below eps of it
// while nu_x nu_y >= n min_normal. Outside that range the entries are scaled by the powers of 2
// that bring nu_x and nu_y near 1 (clamped to the normal range; the scaling is exact), as dgsvj0
// scales a column by its norm when the norms are extreme.
template <class T>
T cosine(const T* x, const T* y, index_t n, Real<T> nu_x, Real<T> nu_y) {
  using R = Real<T>;
  using limits = std::numeric_limits<R>;
  const R product = nu_x * nu_y;
  const R length = static_cast<R>(is_complex<T> ? 2 * n : n);
  if (product <= limits::max() / 2 && product >= length * limits::min())
    return scaled_dot<T, false>(x, y, n, 1, 1) / product;
  const auto power_near_inverse = [](R nu) {
    int exponent = 0;
    std::frexp(nu, &exponent);
    return std::ldexp(R(1),
                      std::clamp(-exponent, limits::min_exponent - 1, limits::max_exponent - 1));
  };
  const R sx = power_near_inverse(nu_x), sy = power_near_inverse(nu_y);
  return scaled_dot<T, true>(x, y, n, sx, sy) / ((nu_x * sx) * (nu_y * sy));
}

// [x y] <- [x y] c [1, beta; alpha, 1] (svd/rotation.hpp: alpha = -t tn e^{-i theta},
// beta = tn e^{i theta}), the new columns swapped when `swap`: x' = c (x + alpha y),
// y' = c (y + beta x). One pass, both columns read and written once.
template <class T, bool swap>
void rotate_columns(T* x_in, T* y_in, index_t n, Real<T> c, T alpha, T beta) {
  using R = Real<T>;
  R* __restrict x = reals(x_in);
  R* __restrict y = reals(y_in);
  if constexpr (!is_complex<T>) {
#pragma omp simd
    for (index_t i = 0; i < n; ++i) {
      const R xi = x[i], yi = y[i];
      const R new_x = c * std::fma(alpha, yi, xi), new_y = c * std::fma(beta, xi, yi);
      x[i] = swap ? new_y : new_x;
      y[i] = swap ? new_x : new_y;
    }
  } else {
    const R ar = alpha.real(), ai = alpha.imag(), br = beta.real(), bi = beta.imag();
#pragma omp simd
    for (index_t i = 0; i < n; ++i) {
      const R xr = x[2 * i], xi = x[2 * i + 1], yr = y[2 * i], yi = y[2 * i + 1];
      const R new_xr = c * (xr + (ar * yr - ai * yi)), new_xi = c * (xi + (ar * yi + ai * yr));
      const R new_yr = c * (yr + (br * xr - bi * xi)), new_yi = c * (yi + (br * xi + bi * xr));
      x[2 * i] = swap ? new_yr : new_xr;
      x[2 * i + 1] = swap ? new_yi : new_xi;
      y[2 * i] = swap ? new_xr : new_yr;
      y[2 * i + 1] = swap ? new_xi : new_yi;
    }
  }
}

template <class T>
void rotate_pair(T* x, T* y, index_t n, Real<T> c, T alpha, T beta, bool swap) {
  if (swap)
    rotate_columns<T, true>(x, y, n, c, alpha, beta);
  else
    rotate_columns<T, false>(x, y, n, c, alpha, beta);
}

struct PairOutcome {
  bool rotated = false;
  bool proper = false;
};

template <class T>
struct Problem {
  T* g;
  index_t rows, ldg;
  T* v;
  index_t v_rows, ldv;
  std::span<const std::int8_t> signs;
  bool sort;
  Real<T> tolerance;  // orthogonality_tolerance(rows, cols), svd/rotation.hpp, unless given
  Real<T>* norms;     // nu_i, kept through the sweep (updated by the prediction)

  T* g_column(index_t j) const { return g + j * ldg; }
  T* v_column(index_t j) const { return v + j * ldv; }
};

// One pivot pair (p, q), p < q: the steps 2, 4, 5, 6 of section 2.3.3 on the scaled quantities of
// svd/rotation.hpp.
template <class T>
PairOutcome process_pair(const Problem<T>& problem, index_t p, index_t q) {
  using R = Real<T>;
  PairOutcome outcome;
  const bool hyperbolic = !problem.signs.empty() && problem.signs[p] != problem.signs[q];
  const bool positive = problem.signs.empty() || problem.signs[p] > 0;
  T* gp = problem.g_column(p);
  T* gq = problem.g_column(q);
  R nu_p = problem.norms[p], nu_q = problem.norms[q];

  Rotation<R> rotation;
  T phase = 1;  // e^{i theta} of h_pq (real: its sign)
  R abs_cosine = 0;
  if (nu_p > 0 && nu_q > 0) {
    const T a = cosine(gp, gq, problem.rows, nu_p, nu_q);
    abs_cosine = std::abs(a);
    outcome.rotated = abs_cosine >= problem.tolerance;
    if (outcome.rotated) phase = a / abs_cosine;
  }
  R new_p = nu_p, new_q = nu_q;
  PairValues<R> factors{1, 1};
  if (outcome.rotated) {
    const R ratio = nu_q / nu_p;
    rotation = rotation_from_norms(ratio, abs_cosine, hyperbolic);
    outcome.proper = rotation.cosine != 1;
    factors = predicted_norm_factors(rotation, ratio, abs_cosine, hyperbolic);
    new_p = nu_p * std::sqrt(factors.p);
    new_q = nu_q * std::sqrt(factors.q);
  }
  // Step 5 with the corrected prediction: +1 columns nonincreasing, -1 columns nondecreasing;
  // a hyperbolic pair keeps its order (J stays partitioned).
  const bool swap = problem.sort && !hyperbolic && (positive ? new_p < new_q : new_p > new_q);

  if (outcome.rotated) {
    const R t = hyperbolic ? R(-1) : R(1);
    const T alpha = -t * rotation.tangent * conj_if_complex(phase);
    const T beta = rotation.tangent * phase;
    rotate_pair(gp, gq, problem.rows, rotation.cosine, alpha, beta, swap);
    if (problem.v != nullptr)
      rotate_pair(problem.v_column(p), problem.v_column(q), problem.v_rows, rotation.cosine, alpha,
                  beta, swap);
    // dgsvj0: a predicted norm that lost more than half its digits to cancellation is recomputed
    // (from the column it now lives in).
    const R sqrt_eps = std::sqrt(unit_roundoff<R>());
    if (factors.p <= sqrt_eps) new_p = column_norm(swap ? gq : gp, problem.rows);
    if (factors.q <= sqrt_eps) new_q = column_norm(swap ? gp : gq, problem.rows);
  } else if (swap) {
    std::swap_ranges(gp, gp + problem.rows, gq);
    if (problem.v != nullptr)
      std::swap_ranges(problem.v_column(p), problem.v_column(p) + problem.v_rows,
                       problem.v_column(q));
  }
  problem.norms[p] = swap ? new_q : new_p;
  problem.norms[q] = swap ? new_p : new_q;
  return outcome;
}

}  // namespace

template <class T>
SweepCounts orthogonalize_pointwise(T* g, index_t rows, index_t cols, index_t ldg, T* v,
                                    index_t v_rows, index_t ldv, std::span<const std::int8_t> signs,
                                    const Strategy& strategy, int max_sweeps, bool sort,
                                    int threads, const SweepCallback& progress, Real<T> tolerance) {
  using R = Real<T>;
  require(rows >= 0 && cols >= 0, "orthogonalize_pointwise: rows {} and cols {} must be >= 0", rows,
          cols);
  require(ldg >= std::max<index_t>(1, rows), "orthogonalize_pointwise: ldg {} must be >= rows {}",
          ldg, rows);
  require(v == nullptr || (v_rows >= 0 && ldv >= std::max<index_t>(1, v_rows)),
          "orthogonalize_pointwise: v_rows {} must be >= 0 and ldv {} >= v_rows", v_rows, ldv);
  require(signs.empty() || static_cast<index_t>(signs.size()) == cols,
          "orthogonalize_pointwise: signs has {} entries, expected 0 or cols = {}", signs.size(),
          cols);
  require(std::all_of(signs.begin(), signs.end(), [](std::int8_t s) { return s == 1 || s == -1; }),
          "orthogonalize_pointwise: signs must be +1 or -1");
  require(strategy.order() == cols,
          "orthogonalize_pointwise: strategy of order {}, expected cols = {}", strategy.order(),
          cols);
  require(max_sweeps >= 1, "orthogonalize_pointwise: max_sweeps {} must be >= 1", max_sweeps);
  require(threads >= 1, "orthogonalize_pointwise: threads {} must be >= 1", threads);
  require(tolerance >= 0, "orthogonalize_pointwise: tolerance {} must be >= 0 (0: the default)",
          tolerance);

  SweepCounts counts;
  if (cols == 0 || rows == 0) {
    counts.converged = true;
    return counts;
  }
  std::vector<R> norms(static_cast<std::size_t>(cols));
  const R threshold = tolerance > 0 ? tolerance : orthogonality_tolerance<R>(rows, cols);
  const Problem<T> problem{g, rows, ldg, v, v_rows, ldv, signs, sort, threshold, norms.data()};
  const bool parallel = threads > 1 && rows >= parallel_min_rows;

  while (counts.sweeps < max_sweeps) {
    std::int64_t rotations = 0, proper = 0;
    // The norms are recomputed at every sweep's start, so the predictions' rounding errors do not
    // accumulate over sweeps.
#pragma omp parallel num_threads(threads) if (parallel)
    {
#pragma omp for schedule(static)
      for (index_t j = 0; j < cols; ++j)
        norms[j] = column_norm(problem.g_column(j), rows);
      for (index_t s = 0; s < strategy.steps(); ++s) {
        const std::span<const PivotPair> pairs = strategy.step(s);
        const index_t count = static_cast<index_t>(pairs.size());
#pragma omp for schedule(static) reduction(+ : rotations, proper)
        for (index_t k = 0; k < count; ++k) {
          const PairOutcome outcome = process_pair(problem, pairs[k].p, pairs[k].q);
          rotations += outcome.rotated;
          proper += outcome.proper;
        }
      }
    }
    ++counts.sweeps;
    counts.rotations += rotations;
    counts.proper_rotations += proper;
    if (progress)
      progress({.sweep = counts.sweeps, .max_sweeps = max_sweeps, .rotations = rotations});
    // Overflow (a hyperbolic SVD that does not exist: the rotations of a nearly parallel mixed
    // pair grow without bound) makes the cosines NaN, which no test rotates: stop, not converged.
    if (!std::all_of(norms.begin(), norms.end(), [](R x) { return std::isfinite(x); })) break;
    // Converged when every pair was found relatively orthogonal: the off-diagonal measure itself,
    // as dgesvj stops. "No proper rotation" (cos != 1, the thesis' section 2.3.6 heuristic) is not
    // enough: a pair of norms 1e8 apart gets cos == 1 in floating point while its tangent still
    // moves the smaller column by as much as its own norm (graded matrices, issue 28).
    if (rotations == 0) {
      counts.converged = true;
      break;
    }
  }
  return counts;
}

template SweepCounts orthogonalize_pointwise(float*, index_t, index_t, index_t, float*, index_t,
                                             index_t, std::span<const std::int8_t>, const Strategy&,
                                             int, bool, int, const SweepCallback&, float);
template SweepCounts orthogonalize_pointwise(double*, index_t, index_t, index_t, double*, index_t,
                                             index_t, std::span<const std::int8_t>, const Strategy&,
                                             int, bool, int, const SweepCallback&, double);
template SweepCounts orthogonalize_pointwise(std::complex<float>*, index_t, index_t, index_t,
                                             std::complex<float>*, index_t, index_t,
                                             std::span<const std::int8_t>, const Strategy&, int,
                                             bool, int, const SweepCallback&, float);
template SweepCounts orthogonalize_pointwise(std::complex<double>*, index_t, index_t, index_t,
                                             std::complex<double>*, index_t, index_t,
                                             std::span<const std::int8_t>, const Strategy&, int,
                                             bool, int, const SweepCallback&, double);

}  // namespace shiftop::svd::detail
