#include "svd/blocked.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>

#include "shiftop/core/error.hpp"
#include "svd/column_norms.hpp"
#include "svd/dense_kernels.hpp"
#include "svd/householder.hpp"
#include "svd/rotation.hpp"

namespace shiftop::svd::detail {

namespace {

// `parts` blocks of near-equal width over [first, first + count), appended to `bounds`.
void split_evenly(index_t first, index_t count, index_t parts, std::vector<index_t>& bounds) {
  for (index_t k = 1; k <= parts; ++k)
    bounds.push_back(first + count * k / parts);
}

index_t blocks_for(index_t count, index_t width) {
  return std::clamp<index_t>((count + width / 2) / width, 1, count);
}

}  // namespace

std::vector<index_t> block_boundaries(index_t cols, index_t width, index_t n_plus) {
  require(cols >= 2 && width >= 1, "block_boundaries: expected cols >= 2 and width >= 1");
  std::vector<index_t> bounds{0};
  if (n_plus > 0 && n_plus < cols) {
    const index_t minus = cols - n_plus;
    index_t bp = blocks_for(n_plus, width), bm = blocks_for(minus, width);
    if ((bp + bm) % 2 != 0) {
      // One block more where the blocks are wider (the part has a column to spare), else one less.
      const bool plus_wider = n_plus * bm >= minus * bp;
      if (plus_wider && bp < n_plus)
        ++bp;
      else if (!plus_wider && bm < minus)
        ++bm;
      else if (bp < n_plus)
        ++bp;
      else if (bm < minus)
        ++bm;
      else if (bp > 1)
        --bp;
      else
        --bm;  // bp = bm = 1 is even, so here bm > 1
    }
    split_evenly(0, n_plus, bp, bounds);
    split_evenly(n_plus, minus, bm, bounds);
    return bounds;
  }
  index_t b = std::max<index_t>(2, blocks_for(cols, width));
  if (b % 2 != 0) b = b + 1 <= cols ? b + 1 : b - 1;
  split_evenly(0, cols, b, bounds);
  return bounds;
}

namespace {

// One thread's buffers for a pivot pair of at most c_max columns.
template <class T>
struct PairWorkspace {
  using R = Real<T>;
  std::vector<R> g_re, g_im, v_re, v_im;    // planar panels of [G_p G_q] and [V_p V_q]
  std::vector<R> s_re, s_im, scaled_norms;  // the QR path's test: [G_p G_q] D, D's norms
  std::vector<T> r, v_pair, qr, tau;        // R_pq, V'_pq, the QR fallback's copy

  PairWorkspace(index_t rows, index_t v_rows, index_t c_max, bool with_v) {
    const auto gsize = static_cast<std::size_t>(panel_ld<R>(rows) * c_max);
    g_re.resize(gsize);
    if (kIsComplex<T>) g_im.resize(gsize);
    s_re.resize(gsize);
    if (kIsComplex<T>) s_im.resize(gsize);
    scaled_norms.resize(static_cast<std::size_t>(c_max));
    if (with_v) {
      const auto vsize = static_cast<std::size_t>(panel_ld<R>(v_rows) * c_max);
      v_re.resize(vsize);
      if (kIsComplex<T>) v_im.resize(vsize);
    }
    r.resize(static_cast<std::size_t>(c_max * c_max));
    v_pair.resize(r.size());
    tau.resize(static_cast<std::size_t>(c_max));
    qr.resize(static_cast<std::size_t>(rows * c_max));
  }
};

struct PairResult {
  SweepCounts counts;
  bool qr = false;                  // shortened by QR
  bool skipped_orthogonal = false;  // on the QR path, found relatively orthogonal first
};

// Whether every two of the pair's c columns (packed in the planar panel re, im with leading
// dimension ld; p0, wp, q0, wq their place in G) are relatively orthogonal, |g_i^H g_j| <
// tolerance ||g_i|| ||g_j||, judged as the pointwise method judges them (svd/pointwise.cpp's
// cosine): a dot product of the columns themselves over the norms of column_norm. Each column is
// first scaled by the power of two that brings its norm near 1, as the pointwise method scales
// columns of extreme norm, so that the Gram matrix of the scaled columns is in range whatever G's
// scale. The scaling is exact but for the entries it makes subnormal (below about twice the
// smallest normal number times their column's norm), whose rounding is far below the threshold.
template <class T>
bool pair_is_orthogonal(const T* g, index_t ldg, index_t rows, index_t p0, index_t wp, index_t q0,
                        const Real<T>* re, const Real<T>* im, index_t ld, index_t c,
                        Real<T> tolerance, PairWorkspace<T>& ws) {
  using R = Real<T>;
  using limits = std::numeric_limits<R>;
  R* sre = ws.s_re.data();
  R* sim = kIsComplex<T> ? ws.s_im.data() : nullptr;
  for (index_t j = 0; j < c; ++j) {
    const R nu = column_norm(g + (j < wp ? p0 + j : q0 + j - wp) * ldg, rows);
    int exponent = 0;
    std::frexp(nu, &exponent);
    const R scale =
        std::ldexp(R(1), std::clamp(-exponent, limits::min_exponent - 1, limits::max_exponent - 1));
    ws.scaled_norms[static_cast<std::size_t>(j)] = nu * scale;
    for (index_t i = 0; i < ld; ++i) {
      sre[i + j * ld] = re[i + j * ld] * scale;
      if constexpr (kIsComplex<T>) sim[i + j * ld] = im[i + j * ld] * scale;
    }
  }
  T* h = ws.v_pair.data();  // free until V'_pq is set up
  gram_upper<T>(sre, sim, ld, c, h, c);
  for (index_t j = 1; j < c; ++j)
    for (index_t i = 0; i < j; ++i) {
      const R product = ws.scaled_norms[static_cast<std::size_t>(i)] *
                        ws.scaled_norms[static_cast<std::size_t>(j)];
      // A zero column is orthogonal to every other (the pointwise method rotates no such pair).
      if (product > 0 && std::abs(h[i + j * c]) >= tolerance * product) return false;
    }
  return true;
}

// Gram + Cholesky is used when every squared column norm of the pair is in range (gram_is_safe,
// svd/dense_kernels.hpp). It is abandoned when the Cholesky factorisation fails or
// a pivot keeps less than sqrt(eps) of its h_ii (cancellation in r_ii^2 = h_ii - sum |r_ki|^2
// would leave fewer than half the digits). Then R_pq comes from Householder QR of the pair (2.8).
// A less accurate R_pq costs convergence, not accuracy: V'_pq is applied to G itself, and the
// final block-sweep's orthogonality test rests on Gram entries accurate to eps ||g_p|| ||g_q||
// (eps the unit roundoff, as in svd/rotation.hpp).
//
// On the QR path that test is made on G's columns (pair_is_orthogonal), not on R_pq's: a pair
// that passes it is neither shortened nor rotated. Householder's rounding moves the cosines of
// R_pq's columns away from G's by up to 3 eps for 20 x 8 and 30 x 8 pairs and 5 eps for 200 x 32
// (rms 0.5 eps; Gram + Cholesky: at most 0.7 eps, rms 0.1 eps; measured on 40 orthogonalised
// random G each), as much as the threshold of a small G (sqrt(20) eps = 4.5 eps for 20 x 16). Two
// of G's columns orthogonal to 2-3 eps were then seen at 4.8 eps in one pivot pair's R_pq, and the
// rotation that this noise asked for moved their cosine from -1.9 to +3.2 eps and back in every
// block-sweep: a 2-cycle, 60 block-sweeps, not converged. With the threshold below but without
// this test, 10 of 1000 random 20 x 16 and 2 of 1000 30 x 24 matrices scaled by 2^664 (width 4,
// full block) did not converge; with it none did, nor any of 400 each complex, float, 200 x 40.
//
// The inner method's threshold (`tolerance`) is the pointwise method's on the whole G,
// orthogonality_tolerance(rows, cols) = eps sqrt(max(rows, cols)) (svd/rotation.hpp; the rule
// DESIGN.md states for every variant), not a c x c matrix's eps sqrt(c): R_pq's cosines stand for
// those of G's columns, dot products over `rows` entries, and are no more accurate than those
// (less, from QR). With eps sqrt(c), one pair of the 30 x 24 matrix of test_blocked's
// BlockedQrShortening (scaled by 2^664 or 2^-664, width 4) was rotated at 3.1 eps > sqrt(8) eps
// in every block-sweep, 60 block-sweeps without converging (and with eps sqrt(c) and without the
// test above, 70 of 400 random ones: 200 seeds, both variants). The GPU's blocked method uses the
// same threshold (svd/cuda/blocked_method.cu).
template <class T>
PairResult process_pair(T* g, index_t rows, index_t ldg, T* v, index_t v_rows, index_t ldv,
                        std::span<const std::int8_t> signs, index_t p0, index_t wp, index_t q0,
                        index_t wq, const Strategy& inner, int inner_sweeps, Real<T> tolerance,
                        PairWorkspace<T>& ws) {
  using R = Real<T>;
  const index_t c = wp + wq;
  const index_t ld = panel_ld<R>(rows);
  R* gre = ws.g_re.data();
  R* gim = kIsComplex<T> ? ws.g_im.data() : nullptr;
  pack_planar(g, ldg, rows, p0, wp, gre, gim, ld, 0);
  pack_planar(g, ldg, rows, q0, wq, gre, gim, ld, wp);

  T* r = ws.r.data();
  std::fill(r, r + c * c, T(0));
  gram_upper<T>(gre, gim, ld, c, r, c);
  PairResult result;
  const R min_fraction = std::sqrt(std::numeric_limits<R>::epsilon());
  if (!gram_is_safe(r, c, rows) || !cholesky_upper(r, c, c, min_fraction)) {
    if (pair_is_orthogonal(g, ldg, rows, p0, wp, q0, gre, gim, ld, c, tolerance, ws)) {
      result.skipped_orthogonal = true;
      return result;
    }
    result.qr = true;
    for (index_t j = 0; j < c; ++j) {
      const T* src = g + (j < wp ? p0 + j : q0 + j - wp) * ldg;
      std::copy(src, src + rows, ws.qr.data() + j * rows);
    }
    householder_qr(ws.qr.data(), rows, c, rows, ws.tau.data());
    for (index_t j = 0; j < c; ++j)
      for (index_t i = 0; i < c; ++i)
        r[i + j * c] = i <= j ? ws.qr[i + j * rows] : T(0);
  }

  T* vp = ws.v_pair.data();
  std::fill(vp, vp + c * c, T(0));
  for (index_t i = 0; i < c; ++i)
    vp[i + i * c] = T(1);
  std::vector<std::int8_t> pair_signs;
  if (!signs.empty()) {
    pair_signs.assign(signs.begin() + p0, signs.begin() + p0 + wp);
    pair_signs.insert(pair_signs.end(), signs.begin() + q0, signs.begin() + q0 + wq);
  }
  result.counts =
      orthogonalize_pointwise(r, c, c, c, vp, c, c, std::span<const std::int8_t>(pair_signs), inner,
                              inner_sweeps, true, 1, {}, tolerance);
  if (result.counts.rotations == 0) return result;  // V'_pq = I: nothing to postmultiply

  // (2.9): [G_p G_q] <- [G_p G_q] V'_pq from the packed copy, then the same for V.
  postmultiply<T>(gre, gim, ld, rows, c, vp, c, 0, wp, g + p0 * ldg, ldg);
  postmultiply<T>(gre, gim, ld, rows, c, vp, c, wp, wq, g + q0 * ldg, ldg);
  if (v != nullptr) {
    const index_t lv = panel_ld<R>(v_rows);
    R* vre = ws.v_re.data();
    R* vim = kIsComplex<T> ? ws.v_im.data() : nullptr;
    pack_planar(v, ldv, v_rows, p0, wp, vre, vim, lv, 0);
    pack_planar(v, ldv, v_rows, q0, wq, vre, vim, lv, wp);
    postmultiply<T>(vre, vim, lv, v_rows, c, vp, c, 0, wp, v + p0 * ldv, ldv);
    postmultiply<T>(vre, vim, lv, v_rows, c, vp, c, wp, wq, v + q0 * ldv, ldv);
  }
  return result;
}

}  // namespace

BlockSweep BlockSweep::create(index_t cols, index_t width, index_t n_plus, StrategyKind outer_kind,
                              StrategyKind inner_kind) {
  BlockSweep sweep;
  sweep.bounds = block_boundaries(cols, width, n_plus);
  const auto b = static_cast<index_t>(sweep.bounds.size()) - 1;
  sweep.outer = Strategy::create(outer_kind, b);
  for (index_t k = 0; k < b; ++k)
    sweep.c_max = std::max(sweep.c_max, 2 * (sweep.bounds[k + 1] - sweep.bounds[k]));
  sweep.inner.resize(static_cast<std::size_t>(sweep.c_max + 1));
  for (const PivotPair& pair : sweep.outer.pairs()) {
    const auto c = static_cast<std::size_t>(sweep.bounds[pair.p + 1] - sweep.bounds[pair.p] +
                                            sweep.bounds[pair.q + 1] - sweep.bounds[pair.q]);
    if (sweep.inner[c].order() == 0)
      sweep.inner[c] = Strategy::create(inner_kind, static_cast<index_t>(c));
  }
  return sweep;
}

template <class T>
BlockedCounts orthogonalize_blocked(T* g, index_t rows, index_t cols, index_t ldg, T* v,
                                    index_t v_rows, index_t ldv, std::span<const std::int8_t> signs,
                                    StrategyKind strategy, index_t width, bool full_block,
                                    int max_sweeps, int threads, const SweepCallback& progress) {
  BlockedCounts total;
  if (cols < 2) {
    total.counts.converged = true;
    return total;
  }
  const index_t n_plus =
      signs.empty() ? cols : static_cast<index_t>(std::count(signs.begin(), signs.end(), 1));
  const BlockSweep blocks = BlockSweep::create(cols, width, n_plus, strategy, strategy);
  const std::vector<index_t>& bounds = blocks.bounds;
  const Strategy& outer = blocks.outer;
  const index_t c_max = blocks.c_max;
  const int team = std::max(1, threads);
  std::vector<PairWorkspace<T>> workspaces;
  workspaces.reserve(static_cast<std::size_t>(team));
  for (int t = 0; t < team; ++t)
    workspaces.emplace_back(rows, v_rows, c_max, v != nullptr);
  const int inner_sweeps = full_block ? max_sweeps : 1;
  const Real<T> tolerance = orthogonality_tolerance<Real<T>>(rows, cols);  // see process_pair

  std::vector<PairResult> results;
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
    std::int64_t rotations = 0;
    for (index_t s = 0; s < outer.steps(); ++s) {
      const auto pairs = outer.step(s);
      const auto count = static_cast<index_t>(pairs.size());
      results.assign(pairs.size(), PairResult{});
#pragma omp parallel for num_threads(team) schedule(dynamic, 1) if (team > 1)
      for (index_t k = 0; k < count; ++k) {
        const PivotPair pair = pairs[k];
        const index_t p0 = bounds[pair.p], wp = bounds[pair.p + 1] - p0;
        const index_t q0 = bounds[pair.q], wq = bounds[pair.q + 1] - q0;
        results[k] = process_pair(g, rows, ldg, v, v_rows, ldv, signs, p0, wp, q0, wq,
                                  blocks.inner[static_cast<std::size_t>(wp + wq)], inner_sweeps,
                                  tolerance, workspaces[omp_get_thread_num()]);
      }
      for (const PairResult& r : results) {
        total.counts.rotations += r.counts.rotations;
        total.counts.proper_rotations += r.counts.proper_rotations;
        total.qr_shortenings += r.qr ? 1 : 0;
        total.skipped_orthogonal += r.skipped_orthogonal ? 1 : 0;
        rotations += r.counts.rotations;
      }
    }
    ++total.counts.sweeps;
    if (progress)
      progress({.sweep = total.counts.sweeps, .max_sweeps = max_sweeps, .rotations = rotations});
    // As the pointwise method (svd/pointwise.cpp): converged when no inner sweep found a pair that
    // was not relatively orthogonal, not when no rotation was proper.
    if (rotations == 0) {
      total.counts.converged = true;
      break;
    }
  }
  return total;
}

#define SHIFTOP_INSTANTIATE_BLOCKED(T)                                                   \
  template BlockedCounts orthogonalize_blocked<T>(                                       \
      T*, index_t, index_t, index_t, T*, index_t, index_t, std::span<const std::int8_t>, \
      StrategyKind, index_t, bool, int, int, const SweepCallback&);
SHIFTOP_INSTANTIATE_BLOCKED(float)
SHIFTOP_INSTANTIATE_BLOCKED(double)
SHIFTOP_INSTANTIATE_BLOCKED(std::complex<float>)
SHIFTOP_INSTANTIATE_BLOCKED(std::complex<double>)
#undef SHIFTOP_INSTANTIATE_BLOCKED

}  // namespace shiftop::svd::detail
