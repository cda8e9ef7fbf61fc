#include "gsvd/gsvd_blocked.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "shiftop/core/error.hpp"
#include "svd/blocked.hpp"
#include "svd/dense_kernels.hpp"
#include "svd/householder.hpp"

namespace shiftop::svd::detail {

namespace {

// One thread's buffers for a block pair of at most c_max columns.
template <class T>
struct PairWorkspace {
  using R = Real<T>;
  std::vector<R> re, im;                // a planar panel of [X_i X_j] (X = F, G or Z)
  std::vector<T> r_f, r_g, r_z, z_hat;  // the shortened factors and Z^_ij
  std::vector<T> qr, tau;               // the QR fallback's copy
  std::vector<index_t> ids;             // global column indices, for the error messages

  PairWorkspace(index_t max_rows, index_t c_max) {
    const auto size = static_cast<std::size_t>(panel_ld<R>(max_rows) * c_max);
    re.resize(size);
    if (kIsComplex<T>) im.resize(size);
    r_f.resize(static_cast<std::size_t>(std::max(max_rows, c_max) * c_max));
    r_g.resize(r_f.size());
    r_z.resize(r_f.size());
    z_hat.resize(static_cast<std::size_t>(c_max * c_max));
    qr.resize(static_cast<std::size_t>(max_rows * c_max));
    tau.resize(static_cast<std::size_t>(c_max));
    ids.resize(static_cast<std::size_t>(c_max));
  }
};

// The block pair's columns p0.., q0.. of x (rows x ..., ldx) as one rows x c panel.
template <class T>
void pack(const T* x, index_t ldx, index_t rows, index_t p0, index_t wp, index_t q0, index_t wq,
          PairWorkspace<T>& ws) {
  using R = Real<T>;
  const index_t ld = panel_ld<R>(rows);
  R* im = kIsComplex<T> ? ws.im.data() : nullptr;
  pack_planar(x, ldx, rows, p0, wp, ws.re.data(), im, ld, 0);
  pack_planar(x, ldx, rows, q0, wq, ws.re.data(), im, ld, wp);
}

// A factor r (ld_r = its rows, returned) with r^H r = [X_i X_j]^H [X_i X_j]: the block itself when
// it has no more rows than columns, else Cholesky of the Gram matrix (the panel is packed), or
// Householder QR (2.8) where Cholesky fails or loses digits (F's Gram matrix is only
// semidefinite). Counts QR shortenings.
template <class T>
index_t shorten(const T* x, index_t ldx, index_t rows, index_t p0, index_t wp, index_t q0,
                index_t wq, T* r, PairWorkspace<T>& ws, std::int64_t& qr_count) {
  using R = Real<T>;
  const index_t c = wp + wq;
  const auto column = [&](index_t j) { return x + (j < wp ? p0 + j : q0 + j - wp) * ldx; };
  if (rows <= c) {
    for (index_t j = 0; j < c; ++j)
      std::copy(column(j), column(j) + rows, r + j * rows);
    return rows;
  }
  pack(x, ldx, rows, p0, wp, q0, wq, ws);
  std::fill(r, r + c * c, T(0));
  gram_upper<T>(ws.re.data(), kIsComplex<T> ? ws.im.data() : nullptr, panel_ld<R>(rows), c, r, c);
  const R min_fraction = std::sqrt(std::numeric_limits<R>::epsilon());
  if (gram_is_safe(r, c, rows) && cholesky_upper(r, c, c, min_fraction)) return c;
  ++qr_count;
  for (index_t j = 0; j < c; ++j)
    std::copy(column(j), column(j) + rows, ws.qr.data() + j * rows);
  householder_qr(ws.qr.data(), rows, c, rows, ws.tau.data());
  for (index_t j = 0; j < c; ++j)
    for (index_t i = 0; i < c; ++i)
      r[i + j * c] = i <= j ? ws.qr[static_cast<std::size_t>(i + j * rows)] : T(0);
  return c;
}

// [X_i X_j] <- [X_i X_j] Z^ (2.9's postmultiplication) from a packed copy.
template <class T>
void postmultiply_pair(T* x, index_t ldx, index_t rows, index_t p0, index_t wp, index_t q0,
                       index_t wq, const T* z_hat, PairWorkspace<T>& ws) {
  using R = Real<T>;
  const index_t c = wp + wq, ld = panel_ld<R>(rows);
  pack(x, ldx, rows, p0, wp, q0, wq, ws);
  const R* im = kIsComplex<T> ? ws.im.data() : nullptr;
  postmultiply<T>(ws.re.data(), im, ld, rows, c, z_hat, c, 0, wp, x + p0 * ldx, ldx);
  postmultiply<T>(ws.re.data(), im, ld, rows, c, z_hat, c, wp, wq, x + q0 * ldx, ldx);
}

struct PairResult {
  HzCounts counts;
  std::int64_t qr = 0;
  std::string error;  // a rank-deficiency refusal, raised after the step (deterministic)
};

template <class T>
PairResult process_pair(const HzColumns<T>& cols, index_t p0, index_t wp, index_t q0, index_t wq,
                        const Strategy& inner, int inner_sweeps, bool sort, PairWorkspace<T>& ws) {
  PairResult result;
  const index_t c = wp + wq;
  for (index_t j = 0; j < c; ++j)
    ws.ids[static_cast<std::size_t>(j)] = j < wp ? p0 + j : q0 + j - wp;
  const index_t rf =
      shorten(cols.f, cols.ldf, cols.rows_f, p0, wp, q0, wq, ws.r_f.data(), ws, result.qr);
  const index_t rg =
      shorten(cols.g, cols.ldg, cols.rows_g, p0, wp, q0, wq, ws.r_g.data(), ws, result.qr);
  const index_t rz =
      shorten(cols.z, cols.ldz, cols.rows_z, p0, wp, q0, wq, ws.r_z.data(), ws, result.qr);
  T* z_hat = ws.z_hat.data();
  std::fill(z_hat, z_hat + c * c, T(0));
  for (index_t i = 0; i < c; ++i)
    z_hat[i + i * c] = T(1);
  HzColumns<T> small;
  small.f = ws.r_f.data();
  small.rows_f = small.ldf = rf;
  small.g = ws.r_g.data();
  small.rows_g = small.ldg = rg;
  small.z = ws.r_z.data();
  small.rows_z = small.ldz = rz;
  small.w = z_hat;
  small.rows_w = small.ldw = c;
  small.n = c;
  small.f_zero2 = cols.f_zero2;
  small.columns = ws.ids.data();
  try {
    result.counts = hz_pointwise(small, inner, inner_sweeps, sort, 1);
  } catch (const Error& e) {
    result.error = e.what();
    return result;
  }
  if (result.counts.transformations == 0) return result;  // Z^ = I
  postmultiply_pair(cols.f, cols.ldf, cols.rows_f, p0, wp, q0, wq, z_hat, ws);
  postmultiply_pair(cols.g, cols.ldg, cols.rows_g, p0, wp, q0, wq, z_hat, ws);
  if (cols.z != nullptr)
    postmultiply_pair(cols.z, cols.ldz, cols.rows_z, p0, wp, q0, wq, z_hat, ws);
  if (cols.w != nullptr)
    postmultiply_pair(cols.w, cols.ldw, cols.rows_w, p0, wp, q0, wq, z_hat, ws);
  return result;
}

}  // namespace

template <class T>
HzBlockedCounts hz_blocked(const HzColumns<T>& columns, StrategyKind outer_kind,
                           StrategyKind inner_kind, index_t width, bool full_block, int max_sweeps,
                           bool sort, int threads, const SweepCallback& progress) {
  require(columns.columns == nullptr && columns.z != nullptr,
          "hz_blocked: expected the whole matrix and Z");
  HzBlockedCounts total;
  const index_t n = columns.n;
  if (n < 2) {
    total.counts.converged = true;
    return total;
  }
  const BlockSweep blocks = BlockSweep::create(n, width, n, outer_kind, inner_kind);
  const std::vector<index_t>& bounds = blocks.bounds;
  const Strategy& outer = blocks.outer;
  const index_t c_max = blocks.c_max;
  const int team = std::max(1, threads);
  const index_t max_rows = std::max(
      {columns.rows_f, columns.rows_g, columns.rows_z, columns.w ? columns.rows_w : index_t{0}});
  std::vector<PairWorkspace<T>> workspaces;
  workspaces.reserve(static_cast<std::size_t>(team));
  for (int t = 0; t < team; ++t)
    workspaces.emplace_back(max_rows, c_max);
  const int inner_sweeps = full_block ? max_sweeps : 1;

  std::vector<PairResult> results;
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
    std::int64_t transformed = 0, proper = 0;
    for (index_t s = 0; s < outer.steps(); ++s) {
      const auto pairs = outer.step(s);
      const auto count = static_cast<index_t>(pairs.size());
      results.assign(pairs.size(), PairResult{});
#pragma omp parallel for num_threads(team) schedule(dynamic, 1) if (team > 1 && count > 1)
      for (index_t k = 0; k < count; ++k) {
        const PivotPair pair = pairs[k];
        const index_t p0 = bounds[pair.p], wp = bounds[pair.p + 1] - p0;
        const index_t q0 = bounds[pair.q], wq = bounds[pair.q + 1] - q0;
        results[static_cast<std::size_t>(k)] =
            process_pair(columns, p0, wp, q0, wq, blocks.inner[static_cast<std::size_t>(wp + wq)],
                         inner_sweeps, sort, workspaces[omp_get_thread_num()]);
      }
      for (const PairResult& r : results) {
        if (!r.error.empty()) fail("{}", r.error);
        total.counts.transformations += r.counts.transformations;
        total.counts.proper_transformations += r.counts.proper_transformations;
        total.qr_shortenings += r.qr;
        transformed += r.counts.transformations;
        proper += r.counts.proper_transformations;
      }
    }
    ++total.counts.sweeps;
    if (progress)
      progress({.sweep = total.counts.sweeps, .max_sweeps = max_sweeps, .rotations = transformed});
    if (proper == 0) {  // as gsvd/gsvd_pointwise.cpp
      total.counts.converged = true;
      break;
    }
  }
  return total;
}

template HzBlockedCounts hz_blocked<double>(const HzColumns<double>&, StrategyKind, StrategyKind,
                                            index_t, bool, int, bool, int, const SweepCallback&);
template HzBlockedCounts hz_blocked<std::complex<double>>(const HzColumns<std::complex<double>>&,
                                                          StrategyKind, StrategyKind, index_t, bool,
                                                          int, bool, int, const SweepCallback&);

}  // namespace shiftop::svd::detail
