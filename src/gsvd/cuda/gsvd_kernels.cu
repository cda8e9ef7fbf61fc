// The sweeps and the finish of the batched implicit Hari-Zimmermann GSVD on the GPU
// (gsvd/cuda/gsvd_kernels.hpp describes both), one thread block per pair (F_b, G_b).
//
// Every loop that contains a group sum runs the same trip count in every lane of a warp (inactive
// lanes add zeros): the sums shuffle with a full mask (docs/svd.md, "The Jacobi SVD on
// the GPU": whole warps around shuffles). The butterfly leaves the identical sum in every lane of a
// group, so a group's lanes take the same branches on it.
#include "backend/cuda/check.hpp"
#include "backend/cuda/runtime.cuh"
#include "gsvd/cuda/gsvd_kernels.hpp"
#include "gsvd/hz_transform.hpp"
#include "svd/cuda/group_ops.cuh"

namespace shiftop::svd::gpu_kernels {
namespace {

using detail::Pair2;

/// x * s for a real s.
template <class V>
__device__ __forceinline__ V times(V x, double s) {
  if constexpr (std::is_same_v<V, double>)
    return x * s;
  else
    return {x.x * s, x.y * s};
}

/// x * z for a complex z (real data: z.im is 0 and ignored).
template <class V>
__device__ __forceinline__ V times(V x, Pair2<double> z) {
  if constexpr (std::is_same_v<V, double>)
    return x * z.re;
  else
    return {x.x * z.re - x.y * z.im, x.x * z.im + x.y * z.re};
}

template <class V>
__device__ __forceinline__ V plus(V x, V y) {
  if constexpr (std::is_same_v<V, double>)
    return x + y;
  else
    return {x.x + y.x, x.y + y.y};
}

/// The coefficients of a pair's transformation: x_i' = c_ii x_i + c_ji x_j, x_j' = c_ij x_i +
/// c_jj x_j (as the CPU's transform_all, gsvd/gsvd_pointwise.cpp).
struct Coefficients {
  Pair2<double> c_ii, c_ji, c_ij, c_jj;
};

__device__ __forceinline__ Pair2<double> scaled(Pair2<double> x, double s) {
  return {x.re * s, x.im * s};
}

/// [x_i x_j] <- [x_i x_j] [c_ii c_ij; c_ji c_jj] over `rows` rows, lanes strided.
template <class V>
__device__ __forceinline__ void transform_columns(V* xi, V* xj, index_t rows, const Coefficients& c,
                                                  const Groups& groups) {
  const Pair2<double> c_ii = c.c_ii, c_ji = c.c_ji, c_ij = c.c_ij, c_jj = c.c_jj;
  for (index_t r = groups.lane; r < rows; r += groups.width) {
    const V a = xi[r], b = xj[r];
    xi[r] = plus(times(a, c_ii), times(b, c_ji));
    xj[r] = plus(times(a, c_ij), times(b, c_jj));
  }
}

/// Block-wide state in shared memory.
struct SweepState {
  int transformations, proper;
  int status, column_i, column_j;
};

template <class T>
__global__ void __launch_bounds__(512)
    gsvd_sweeps_kernel(GsvdBatch<T> batch, bool f_shared, bool g_shared, bool y_shared,
                       bool z_shared) {
  using V = DeviceType<T>;
  extern __shared__ __align__(16) unsigned char shared[];
  __shared__ SweepState state;

  const index_t b = blockIdx.x;
  const index_t m = batch.m, p = batch.p, n = batch.n;
  const Groups groups(batch.lanes);
  const int tid = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  const bool vectors = batch.z != nullptr;

  V* global_f = batch.f + b * m * n;
  V* global_g = batch.g + b * p * n;
  V* global_y = batch.y + b * n * n;
  V* global_z = vectors ? batch.z + b * n * n : nullptr;
  V* next = reinterpret_cast<V*>(shared);
  V* f = global_f;
  V* g = global_g;
  V* y = global_y;
  V* z = global_z;
  if (f_shared) f = next, next += m * n;
  if (g_shared) g = next, next += p * n;
  if (y_shared) y = next, next += n * n;
  if (vectors && z_shared) z = next;
  if (f_shared)
    for (index_t e = tid; e < m * n; e += threads)
      f[e] = global_f[e];
  if (g_shared)
    for (index_t e = tid; e < p * n; e += threads)
      g[e] = global_g[e];
  if (tid == 0) state = {0, 0, kGsvdOk, static_cast<int>(n), static_cast<int>(n)};
  __syncthreads();

  // initZ: Z = diag(1 / ||g_i||), f_i and g_i scaled by 1 / ||g_i||; a zero column of G is
  // refused (the smallest such column is reported). Y = diag(||f_k||) Z (f_k scaled), the CPU's
  // weighted Z of F's zero test (gsvd/gsvd_pointwise.hpp, HzColumns): the rounding noise of
  // column i of F Z is about eps sqrt(n) ||y_i||.
  const index_t column_rounds = (n + groups.count - 1) / groups.count;
  for (index_t round = 0; round < column_rounds; ++round) {
    const index_t j = round * groups.count + groups.index;
    const bool active = j < n;
    double norm2 = 0, f_norm2 = 0;
    if (active) {
      for (index_t r = groups.lane; r < p; r += groups.width)
        norm2 += abs2(g[r + j * p]);
      for (index_t r = groups.lane; r < m; r += groups.width)
        f_norm2 += abs2(f[r + j * m]);
    }
    norm2 = group_sum(norm2, groups.width);
    f_norm2 = group_sum(f_norm2, groups.width);
    if (!active) continue;
    if (!(norm2 > 0)) {
      if (groups.lane == 0) {
        atomicCAS(&state.status, kGsvdOk, kGsvdZeroColumn);
        atomicMin(&state.column_i, static_cast<int>(j));
      }
      continue;
    }
    const double scale = 1 / sqrt(norm2);
    for (index_t r = groups.lane; r < m; r += groups.width)
      f[r + j * m] = times(f[r + j * m], scale);
    for (index_t r = groups.lane; r < p; r += groups.width)
      g[r + j * p] = times(g[r + j * p], scale);
    const double y_jj = sqrt(f_norm2) * scale;
    for (index_t r = groups.lane; r < n; r += groups.width)
      y[r + j * n] = r == j ? make<V>(y_jj, 0.0) : zero<V>();
    if (vectors) {
      for (index_t r = groups.lane; r < n; r += groups.width)
        z[r + j * n] = r == j ? times(make<V>(1.0, 0.0), scale) : zero<V>();
      if (groups.lane == 0) batch.g_norms[b * n + j] = sqrt(norm2);
    }
  }
  __syncthreads();

  // The sweeps (section 3.5's pStep per parallel step). Tolerances of the CPU driver: transform
  // when |b| or the scaled |a_ij| reach eps sqrt(max(m, p, n)); G's columns parallel to working
  // precision when (1 - |b|)(1 + |b|) <= n eps.
  constexpr double eps = 0x1p-53;
  const double tolerance = detail::orthogonality_tolerance<double>(m > p ? m : p, n);
  const double parallel = static_cast<double>(n) * eps;
  // F's zero test (the CPU's f_zero2): ||f_i||^2 <= (eps sqrt(m n))^2 ||y_i||^2.
  const double f_zero2 = eps * eps * static_cast<double>(m) * static_cast<double>(n);
  const index_t pair_rounds = (batch.pairs_per_step + groups.count - 1) / groups.count;
  int sweeps = 0;
  long long transformations = 0, proper = 0;
  bool failed = state.status != kGsvdOk;
  // n = 1: no pairs, nothing to sweep (0 sweeps, converged, as the CPU reports).
  bool converged = !failed && batch.steps == 0;
  while (!failed && !converged && sweeps < batch.max_sweeps) {
    __syncthreads();  // everyone has read the previous sweep's counters
    if (tid == 0) state.transformations = state.proper = 0;
    __syncthreads();
    for (int step = 0; step < batch.steps; ++step) {
      for (index_t round = 0; round < pair_rounds; ++round) {
        const index_t k = round * groups.count + groups.index;
        const int2 pair = k < batch.pairs_per_step ? batch.pairs[step * batch.pairs_per_step + k]
                                                   : make_int2(-1, -1);
        const bool active = pair.x >= 0 && pair.y < n;
        const index_t i = active ? pair.x : 0, j = active ? pair.y : 0;
        V* fi = f + i * m;
        V* fj = f + j * m;
        V* gi = g + i * p;
        V* gj = g + j * p;
        double a_ii = 0, a_jj = 0, b_ii = 0, b_jj = 0, y_ii = 0, y_jj = 0;
        Acc a_ij, b_ij;
        if (active) {
          for (index_t r = groups.lane; r < m; r += groups.width) {
            a_ii += abs2(fi[r]);
            a_jj += abs2(fj[r]);
            add_conj_product(a_ij, fi[r], fj[r]);
          }
          for (index_t r = groups.lane; r < p; r += groups.width) {
            b_ii += abs2(gi[r]);
            b_jj += abs2(gj[r]);
            add_conj_product(b_ij, gi[r], gj[r]);
          }
          for (index_t r = groups.lane; r < n; r += groups.width) {
            y_ii += abs2(y[r + i * n]);
            y_jj += abs2(y[r + j * n]);
          }
        }
        a_ii = group_sum(a_ii, groups.width);
        a_jj = group_sum(a_jj, groups.width);
        a_ij = group_sum(a_ij, groups.width);
        b_ii = group_sum(b_ii, groups.width);
        b_jj = group_sum(b_jj, groups.width);
        b_ij = group_sum(b_ij, groups.width);
        y_ii = group_sum(y_ii, groups.width);
        y_jj = group_sum(y_jj, groups.width);
        if (!active) continue;
        // Columns of F at the level of rounding noise become exact zeros (the CPU's HzColumns):
        // among n - rank(F) noise columns the relative test never holds (wide F).
        const bool zero_i = a_ii > 0 && isfinite(a_ii) && a_ii <= f_zero2 * y_ii;
        const bool zero_j = a_jj > 0 && isfinite(a_jj) && a_jj <= f_zero2 * y_jj;
        if (zero_i)
          for (index_t r = groups.lane; r < m; r += groups.width)
            fi[r] = zero<V>();
        if (zero_j)
          for (index_t r = groups.lane; r < m; r += groups.width)
            fj[r] = zero<V>();
        if (zero_i) a_ii = 0;
        if (zero_j) a_jj = 0;
        if (zero_i || zero_j) a_ij = Acc{};
        // The pivot of (3.14) for G's columns normalised: d = 1 / ||g||.
        const double di = 1 / sqrt(b_ii), dj = 1 / sqrt(b_jj);
        detail::HzPivot<double> pivot;
        pivot.a_ii = a_ii * di * di;
        pivot.a_jj = a_jj * dj * dj;
        const double dij = di * dj;
        pivot.a_ij = {a_ij.re * dij, a_ij.im * dij};
        pivot.b = {b_ij.re * dij, b_ij.im * dij};
        const double abs_b = hypot(pivot.b.re, pivot.b.im);
        if (!(b_ii > 0 && b_jj > 0) || !((1 - abs_b) * (1 + abs_b) > parallel)) {
          if (groups.lane == 0 && atomicCAS(&state.status, kGsvdOk, kGsvdParallel) == kGsvdOk) {
            state.column_i = static_cast<int>(i);
            state.column_j = static_cast<int>(j);
          }
          continue;
        }
        // Section 3.5's test, except that a zero a_ij is orthogonal whatever a_ii, a_jj (as the
        // CPU: 0 >= 0 would hold for a zero column).
        const double abs_a = hypot(pivot.a_ij.re, pivot.a_ij.im);
        const bool f_pair = abs_a > 0 && detail::hz_needs_transform(pivot, tolerance);
        if (!(abs_b >= tolerance || f_pair)) continue;
        Coefficients c;
        bool is_proper = true;
        if (pivot.a_ii == 0 || pivot.a_jj == 0) {
          // A zero column of F (the CPU's Gram-Schmidt step): keep it, B-orthonormalise the
          // other, c = sqrt(1 - |b|^2); f_i = 0: [g_i, (g_j - b g_i) / c], swapped (the zero
          // column last) when sorting; f_j = 0: [(g_i - conj(b) g_j) / c, g_j].
          const double cc = sqrt((1 - abs_b) * (1 + abs_b));
          if (pivot.a_ii == 0) {
            const Pair2<double> keep{di, 0}, mix = scaled(pivot.b, -di / cc), other{dj / cc, 0};
            if (batch.sort && pivot.a_jj > 0)
              c = {mix, other, keep, Pair2<double>{}};
            else
              c = {keep, Pair2<double>{}, mix, other};
          } else {
            c = {Pair2<double>{di / cc, 0}, scaled(detail::conj(pivot.b), -dj / cc),
                 Pair2<double>{}, Pair2<double>{dj, 0}};
          }
        } else {
          const detail::HzTransform<double> t = detail::hz_transform(pivot, batch.sort, tolerance);
          // the normalisation d folded into the coefficients, as the CPU does
          c = {scaled(t.z_ii, di), scaled(t.z_ji, dj), scaled(t.z_ij, di), scaled(t.z_jj, dj)};
          is_proper = t.proper;
        }
        transform_columns(fi, fj, m, c, groups);
        transform_columns(gi, gj, p, c, groups);
        transform_columns(y + i * n, y + j * n, n, c, groups);
        if (vectors) transform_columns(z + i * n, z + j * n, n, c, groups);
        if (groups.lane == 0) {
          atomicAdd(&state.transformations, 1);
          if (is_proper) atomicAdd(&state.proper, 1);
        }
      }
      __syncthreads();
    }
    ++sweeps;
    transformations += state.transformations;
    proper += state.proper;
    failed = state.status != kGsvdOk;
    if (!failed && state.proper == 0) converged = true;  // as the CPU
    if (converged) break;
  }
  __syncthreads();

  // G's rank test of the CPU's finalisation (with Z, so with the vectors only): G z_j at rounding
  // level, ||G z_j|| <= eps n sqrt(p) ||D z_j|| with D = diag(||g_k||), is a G numerically rank
  // deficient whose null direction need not have shown as a parallel pair.
  if (vectors && !failed) {
    const double g_level =
        eps * sqrt(static_cast<double>(p) * static_cast<double>(n)) * sqrt(static_cast<double>(n));
    const double* g_norms = batch.g_norms + b * n;
    for (index_t round = 0; round < column_rounds; ++round) {
      const index_t j = round * groups.count + groups.index;
      const bool active = j < n;
      double gz2 = 0, dz2 = 0;
      if (active) {
        for (index_t r = groups.lane; r < p; r += groups.width)
          gz2 += abs2(g[r + j * p]);
        for (index_t r = groups.lane; r < n; r += groups.width)
          dz2 += abs2(times(z[r + j * n], g_norms[r]));
      }
      gz2 = group_sum(gz2, groups.width);
      dz2 = group_sum(dz2, groups.width);
      if (active && groups.lane == 0 && !(sqrt(gz2) > g_level * sqrt(dz2))) {
        atomicCAS(&state.status, kGsvdOk, kGsvdRankDeficient);
        atomicMin(&state.column_i, static_cast<int>(j));
      }
    }
    __syncthreads();
  }

  if (f_shared)
    for (index_t e = tid; e < m * n; e += threads)
      global_f[e] = f[e];
  if (g_shared)
    for (index_t e = tid; e < p * n; e += threads)
      global_g[e] = g[e];
  if (y_shared)
    for (index_t e = tid; e < n * n; e += threads)
      global_y[e] = y[e];
  if (vectors && z_shared)
    for (index_t e = tid; e < n * n; e += threads)
      global_z[e] = z[e];
  if (tid == 0) {
    GsvdReport& report = batch.reports[b];
    report.sweeps = sweeps;
    report.converged = converged ? 1 : 0;
    report.status = state.status;
    report.column_i = state.column_i;
    report.column_j = state.column_j;
    report.transformations = transformations;
    report.proper = proper;
  }
}

// `Sigma` (section 3.5, Algorithm 5's end): per column i of F Z and G Z, S_i = hypot(||f_i||,
// ||g_i||), sigma_f = ||f_i|| / S_i, sigma_g = ||g_i|| / S_i (then unscaled), u_i = f_i / ||f_i||,
// v_i = g_i / ||g_i||, so that F = U diag(sigma_f) X and G = V diag(sigma_g) X with
// X = diag(S) Z^{-1}.
template <class T>
__global__ void __launch_bounds__(512) gsvd_finish_kernel(GsvdBatch<T> batch) {
  using V = DeviceType<T>;
  using R = typename Device<T>::real;
  extern __shared__ __align__(16) unsigned char shared[];

  const index_t b = blockIdx.x;
  const index_t m = batch.m, p = batch.p, n = batch.n;
  const Groups groups(batch.lanes);
  const int tid = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  double* norm_f = reinterpret_cast<double*>(shared);  // ||f_i|| of the scaled pair
  double* norm_g = norm_f + n;
  double* sigma_f = norm_g + n;
  double* sigma_g = sigma_f + n;
  double* total = sigma_g + n;  // X's row scale
  double* key = total + n;      // sigma_f / sigma_g
  int* place = reinterpret_cast<int*>(key + n);
  const V* f = batch.f + b * m * n;
  const V* g = batch.g + b * p * n;
  const V* y = batch.y + b * n * n;
  const int2 exponent = batch.exponents[b];
  constexpr double eps = 0x1p-53;
  const double zero_level = eps * sqrt(static_cast<double>(m) * static_cast<double>(n));

  const index_t column_rounds = (n + groups.count - 1) / groups.count;
  for (index_t round = 0; round < column_rounds; ++round) {
    const index_t j = round * groups.count + groups.index;
    const bool active = j < n;
    double sum_f = 0, sum_g = 0, sum_y = 0;
    if (active) {
      for (index_t r = groups.lane; r < m; r += groups.width)
        sum_f += abs2(f[r + j * m]);
      for (index_t r = groups.lane; r < p; r += groups.width)
        sum_g += abs2(g[r + j * p]);
      for (index_t r = groups.lane; r < n; r += groups.width)
        sum_y += abs2(y[r + j * n]);
    }
    sum_f = group_sum(sum_f, groups.width);
    sum_g = group_sum(sum_g, groups.width);
    sum_y = group_sum(sum_y, groups.width);
    if (active && groups.lane == 0) {
      // F's zero test once more (the CPU's finalisation): a noise column is a zero sigma_f.
      norm_f[j] = sqrt(sum_f) <= zero_level * sqrt(sum_y) ? 0.0 : sqrt(sum_f);
      norm_g[j] = sqrt(sum_g);
    }
  }
  __syncthreads();
  // The scaling undone as the CPU does (gsvd/gsvd.cpp): for the scaled pair F_s = 2^ef F =
  // U diag(a) X_s, G_s = 2^eg G = V diag(b) X_s, the pair (2^-ef a, 2^-eg b) / t with t its
  // hypot, X's row times S t; a common power 2^k keeps the hypot in range.
  for (index_t j = tid; j < n; j += threads) {
    const double s = hypot(norm_f[j], norm_g[j]);
    const double a = norm_f[j] / s, bb = norm_g[j] / s;
    const int eb = ilogb(bb) - exponent.y;
    const int k = a > 0 ? max(ilogb(a) - exponent.x, eb) : eb;
    const double a2 = scalbn(a, -exponent.x - k), b2 = scalbn(bb, -exponent.y - k);
    const double t = hypot(a2, b2);
    sigma_f[j] = a2 / t;
    sigma_g[j] = b2 / t;
    total[j] = s * scalbn(t, k);
    key[j] = sigma_f[j] / sigma_g[j];
  }
  __syncthreads();
  // The place of value j in the nonincreasing order of sigma_f / sigma_g (ties: column order, as
  // the CPU's stable sort; NaN, a result that went wrong, last).
  for (index_t j = tid; j < n; j += threads) {
    const auto at = [key](index_t k) { return isnan(key[k]) ? -1.0 : key[k]; };
    const double s = at(j);
    index_t rank = 0;
    for (index_t k = 0; k < n; ++k)
      rank += at(k) > s || (at(k) == s && k < j);
    place[j] = static_cast<int>(rank);
    batch.sigma_f[b * n + rank] = static_cast<R>(sigma_f[j]);
    batch.sigma_g[b * n + rank] = static_cast<R>(sigma_g[j]);
  }
  if (batch.u == nullptr) return;
  __syncthreads();
  V* u = batch.u + b * m * n;
  V* v = batch.v + b * p * n;
  V* x = batch.x + b * n * n;
  const V* z_inverse = batch.z_inverse + b * n * n;
  for (index_t e = tid; e < m * n; e += threads) {
    const index_t r = e % m, j = e / m;
    u[r + place[j] * m] = norm_f[j] > 0 ? times(f[e], 1 / norm_f[j]) : zero<V>();
  }
  for (index_t e = tid; e < p * n; e += threads) {
    const index_t r = e % p, j = e / p;
    v[r + place[j] * p] = times(g[e], 1 / norm_g[j]);
  }
  for (index_t e = tid; e < n * n; e += threads) {
    const index_t i = e % n, c = e / n;
    x[place[i] + c * n] = times(z_inverse[e], total[i]);
  }
}

}  // namespace

template <class T>
void launch_gsvd_sweeps(const GsvdBatch<T>& batch, std::size_t shared_limit, cudaStream_t stream) {
  if (batch.count == 0) return;
  // F, G, Y and Z each in shared memory while they fit, in that order (F and G are read by
  // every pair's inner products, Y's norms too, Z only updated).
  const std::size_t element = sizeof(DeviceType<T>);
  const std::size_t f_bytes = static_cast<std::size_t>(batch.m * batch.n) * element;
  const std::size_t g_bytes = static_cast<std::size_t>(batch.p * batch.n) * element;
  const std::size_t y_bytes = static_cast<std::size_t>(batch.n * batch.n) * element;
  const std::size_t z_bytes = batch.z != nullptr ? y_bytes : 0;
  std::size_t bytes = 0;
  const bool f_shared = f_bytes <= shared_limit;
  if (f_shared) bytes += f_bytes;
  const bool g_shared = bytes + g_bytes <= shared_limit;
  if (g_shared) bytes += g_bytes;
  const bool y_shared = bytes + y_bytes <= shared_limit;
  if (y_shared) bytes += y_bytes;
  const bool z_shared = z_bytes > 0 && bytes + z_bytes <= shared_limit;
  if (z_shared) bytes += z_bytes;
  cuda::allow_dynamic_shared(gsvd_sweeps_kernel<T>, shared_limit);
  gsvd_sweeps_kernel<T><<<static_cast<unsigned>(batch.count), batch.threads, bytes, stream>>>(
      batch, f_shared, g_shared, y_shared, z_shared);
  SHIFTOP_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void launch_gsvd_finish(const GsvdBatch<T>& batch, std::size_t shared_limit, cudaStream_t stream) {
  if (batch.count == 0) return;
  const std::size_t bytes = static_cast<std::size_t>(batch.n) * kGsvdFinishBytesPerColumn;
  cuda::allow_dynamic_shared(gsvd_finish_kernel<T>, shared_limit);
  gsvd_finish_kernel<T>
      <<<static_cast<unsigned>(batch.count), batch.threads, bytes, stream>>>(batch);
  SHIFTOP_CUDA_CHECK(cudaGetLastError());
}

template void launch_gsvd_sweeps(const GsvdBatch<double>&, std::size_t, cudaStream_t);
template void launch_gsvd_sweeps(const GsvdBatch<std::complex<double>>&, std::size_t, cudaStream_t);
template void launch_gsvd_finish(const GsvdBatch<double>&, std::size_t, cudaStream_t);
template void launch_gsvd_finish(const GsvdBatch<std::complex<double>>&, std::size_t, cudaStream_t);

}  // namespace shiftop::svd::gpu_kernels
