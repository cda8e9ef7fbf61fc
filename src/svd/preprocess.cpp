#include "svd/preprocess.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <numeric>

#include "svd/householder.hpp"

namespace shiftop::svd::detail {

namespace {

// The rows of a in order of decreasing infinity norm (ties in row order, so deterministic).
template <class T>
std::vector<index_t> rows_by_decreasing_norm(const T* a, index_t m, index_t n, index_t lda) {
  std::vector<Real<T>> norm(static_cast<std::size_t>(m), Real<T>(0));
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i)
      norm[i] = std::max(norm[i], std::abs(a[i + j * lda]));
  std::vector<index_t> order(static_cast<std::size_t>(m));
  std::iota(order.begin(), order.end(), index_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](index_t x, index_t y) { return norm[x] > norm[y]; });
  return order;
}

// pivot: the SVD's factorisation, rows sorted (xGEJSV's row pivoting) and columns pivoted; else
// the HSVD's plain QR.
template <class T>
Preprocessed<T> factor_qr(const T* a, index_t m, index_t n, index_t lda, bool pivot) {
  Preprocessed<T> pre;
  pre.m = m;
  pre.n = n;
  pre.qr.resize(static_cast<std::size_t>(m * n));
  if (pivot) {
    pre.row_perm = rows_by_decreasing_norm(a, m, n, lda);
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < m; ++i)
        pre.qr[i + j * m] = a[pre.row_perm[i] + j * lda];
  } else {
    for (index_t j = 0; j < n; ++j)
      std::copy(a + j * lda, a + j * lda + m, pre.qr.data() + j * m);
  }
  pre.tau.resize(static_cast<std::size_t>(n));
  if (pivot) {
    pre.perm.resize(static_cast<std::size_t>(n));
    householder_qrcp(pre.qr.data(), m, n, m, pre.tau.data(), pre.perm.data());
  } else {
    householder_qr(pre.qr.data(), m, n, m, pre.tau.data());
  }
  return pre;
}

}  // namespace

template <class T>
Preprocessed<T> preprocess_svd(const T* a, index_t m, index_t n, index_t lda,
                               Real<T> rank_tolerance) {
  using R = Real<T>;
  Preprocessed<T> pre = factor_qr(a, m, n, lda, true);
  pre.transposed = true;
  const T* r = pre.qr.data();
  // Column pivoting orders |R_kk| nonincreasingly: keep the leading ones above the threshold
  // (0: every nonzero one, so tiny singular values keep their relative accuracy).
  const R threshold = rank_tolerance * std::abs(r[0]);
  index_t k = 0;
  while (k < n && std::abs(r[k + k * m]) > threshold)
    ++k;
  pre.rank = k;
  pre.g.assign(static_cast<std::size_t>(k * k), T(0));
  if (k == n) {
    for (index_t j = 0; j < n; ++j)  // G = R^H
      for (index_t i = 0; i <= j; ++i)
        pre.g[j + i * n] = conj_of(r[i + j * m]);
    return pre;
  }
  // R_0^H (n x k, lower trapezoidal) = Q_2 L^H; G = L^H is the upper triangle of its QR.
  pre.lq.assign(static_cast<std::size_t>(n * k), T(0));
  for (index_t i = 0; i < k; ++i)
    for (index_t j = i; j < n; ++j)
      pre.lq[j + i * n] = conj_of(r[i + j * m]);
  pre.lq_tau.resize(static_cast<std::size_t>(k));
  householder_qr(pre.lq.data(), n, k, n, pre.lq_tau.data());
  for (index_t j = 0; j < k; ++j)
    for (index_t i = 0; i <= j; ++i)
      pre.g[i + j * k] = pre.lq[i + j * n];
  return pre;
}

template <class T>
Preprocessed<T> preprocess_hyperbolic(const T* a, index_t m, index_t n, index_t lda) {
  Preprocessed<T> pre = factor_qr(a, m, n, lda, false);
  pre.rank = n;
  pre.g.assign(static_cast<std::size_t>(n * n), T(0));
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i <= j; ++i)
      pre.g[i + j * n] = pre.qr[i + j * m];
  return pre;
}

template <class T>
void left_vectors(const Preprocessed<T>& pre, const T* x, index_t ldx, T* u, index_t ldu) {
  const index_t k = pre.rank;
  for (index_t j = 0; j < pre.n; ++j) {
    T* col = u + j * ldu;
    std::fill(col, col + pre.m, T(0));
    if (j < k) std::copy(x + j * ldx, x + j * ldx + k, col);
  }
  apply_q(pre.qr.data(), pre.m, pre.n, pre.m, pre.tau.data(), u, k, ldu);
  if (pre.row_perm.empty()) return;
  std::vector<T> row(static_cast<std::size_t>(pre.m));
  for (index_t j = 0; j < k; ++j) {  // U = P_r^T (Q [x; 0]): row i goes back to row_perm[i]
    T* col = u + j * ldu;
    for (index_t i = 0; i < pre.m; ++i)
      row[pre.row_perm[i]] = col[i];
    std::copy(row.begin(), row.end(), col);
  }
}

template <class T>
void right_vectors(const Preprocessed<T>& pre, const T* x, index_t ldx, T* v, index_t ldv) {
  const index_t k = pre.rank, n = pre.n;
  std::vector<T> y(static_cast<std::size_t>(n * k), T(0));
  for (index_t j = 0; j < k; ++j)
    std::copy(x + j * ldx, x + j * ldx + k, y.data() + j * n);
  if (k < n) apply_q(pre.lq.data(), n, k, n, pre.lq_tau.data(), y.data(), k, n);
  for (index_t j = 0; j < n; ++j) {
    T* col = v + j * ldv;
    std::fill(col, col + n, T(0));
    if (j >= k) continue;
    for (index_t i = 0; i < n; ++i)
      col[pre.perm[i]] = y[i + j * n];  // P e_i = e_perm[i]
  }
}

#define SHIFTOP_INSTANTIATE_PREPROCESS(T)                                                   \
  template Preprocessed<T> preprocess_svd<T>(const T*, index_t, index_t, index_t, Real<T>); \
  template Preprocessed<T> preprocess_hyperbolic<T>(const T*, index_t, index_t, index_t);   \
  template void left_vectors<T>(const Preprocessed<T>&, const T*, index_t, T*, index_t);    \
  template void right_vectors<T>(const Preprocessed<T>&, const T*, index_t, T*, index_t);
SHIFTOP_INSTANTIATE_PREPROCESS(float)
SHIFTOP_INSTANTIATE_PREPROCESS(double)
SHIFTOP_INSTANTIATE_PREPROCESS(std::complex<float>)
SHIFTOP_INSTANTIATE_PREPROCESS(std::complex<double>)
#undef SHIFTOP_INSTANTIATE_PREPROCESS

}  // namespace shiftop::svd::detail
