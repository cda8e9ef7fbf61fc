// Householder reflections for the Jacobi SVD's preprocessing (svd/preprocess.hpp), the QR
// shortening of badly scaled pivot block pairs (jacobi-svd-gsvd-gpu-thesis, (2.8)) and the
// completion of singular vectors: QR without and with column pivoting (LAPACK's xGEQR2 and
// xLAQP2, the latter with its column-norm downdating), applying Q, and extending orthonormal
// columns to a larger orthonormal set. Written out rather than called from LAPACK because they
// run inside OpenMP regions (the installed OpenBLAS is the pthreads build). Conventions as
// LAPACK's xLARFG: H = I - tau v v^H with v_0 = 1 and H^H x = beta e_0, beta real; Q = H_0 H_1 ...
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "svd/column_norms.hpp"
#include "svd/dense_kernels.hpp"

namespace shiftop::svd::detail {

/// Generates the reflector that maps (alpha, x) to (beta, 0): overwrites alpha by beta and x
/// (n - 1 entries) by v_1.., returns tau (0 when nothing needs reflecting).
template <class T>
T make_reflector(T& alpha, T* x, index_t n) {
  using R = Real<T>;
  const R xnorm = n > 1 ? column_norm(x, n - 1) : R(0);
  if (xnorm == 0 && std::imag(alpha) == R(0)) return T(0);
  const R beta = -std::copysign(std::hypot(std::abs(alpha), xnorm), std::real(alpha));
  const T tau = (T(beta) - alpha) / beta;
  const T denominator = alpha - T(beta);  // |alpha - beta| >= |beta|: no cancellation
  for (index_t i = 0; i < n - 1; ++i)
    x[i] /= denominator;
  alpha = T(beta);
  return tau;
}

/// Applies H^H = I - conj(tau) v v^H (v in column `col` of a from row `row`, v_0 = 1 implied)
/// to columns first..last-1 of a, rows row..m-1.
template <class T>
void reflect_columns_adjoint(T* a, index_t lda, index_t m, index_t row, index_t col, T tau,
                             index_t first, index_t last) {
  if (tau == T(0)) return;
  const T* v = a + row + col * lda;
  for (index_t j = first; j < last; ++j) {
    T* c = a + row + j * lda;
    T w = c[0];
    for (index_t i = 1; i < m - row; ++i)
      w += conj_mul(v[i], c[i]);
    const T s = conj_of(tau) * w;
    c[0] -= s;
    for (index_t i = 1; i < m - row; ++i)
      c[i] -= mul(v[i], s);
  }
}

/// A = Q R (m >= n) in place: R on and above the diagonal, the reflectors below; tau (size n).
template <class T>
void householder_qr(T* a, index_t m, index_t n, index_t lda, T* tau) {
  for (index_t k = 0; k < n; ++k) {
    tau[k] = k < m ? make_reflector(a[k + k * lda], a + k + 1 + k * lda, m - k) : T(0);
    if (k < m) reflect_columns_adjoint(a, lda, m, k, k, tau[k], k + 1, n);
  }
}

/// A P = Q R with column pivoting (m >= n), as LAPACK's xLAQP2: the column of largest remaining
/// norm first; partial norms downdated and recomputed when cancellation would spoil them
/// (LAPACK Working Note 176). perm[j] is the column of A that became column j.
template <class T>
void householder_qrcp(T* a, index_t m, index_t n, index_t lda, T* tau, index_t* perm) {
  using R = Real<T>;
  const R tol3z = std::sqrt(std::numeric_limits<R>::epsilon());
  std::vector<R> partial(n), full(n);
  std::iota(perm, perm + n, index_t{0});
  for (index_t j = 0; j < n; ++j)
    partial[j] = full[j] = column_norm(a + j * lda, m);
  for (index_t k = 0; k < n; ++k) {
    index_t p = k;
    for (index_t j = k + 1; j < n; ++j)
      if (partial[j] > partial[p]) p = j;
    if (p != k) {
      std::swap_ranges(a + p * lda, a + p * lda + m, a + k * lda);
      std::swap(perm[p], perm[k]);
      partial[p] = partial[k];
      full[p] = full[k];
    }
    tau[k] = make_reflector(a[k + k * lda], a + k + 1 + k * lda, m - k);
    reflect_columns_adjoint(a, lda, m, k, k, tau[k], k + 1, n);
    for (index_t j = k + 1; j < n; ++j) {
      if (partial[j] == 0) continue;
      const R ratio = std::abs(a[k + j * lda]) / partial[j];
      const R temp = std::max(R(0), (R(1) - ratio) * (R(1) + ratio));
      const R scaled = temp * (partial[j] / full[j]) * (partial[j] / full[j]);
      if (scaled <= tol3z) {
        partial[j] = full[j] = k + 1 < m ? column_norm(a + k + 1 + j * lda, m - k - 1) : R(0);
      } else {
        partial[j] *= std::sqrt(temp);
      }
    }
  }
}

/// X <- Q X for Q = H_0 ... H_{k-1} stored by householder_qr(cp) in a (m rows, lda): X is m x
/// ncols (ldx).
template <class T>
void apply_q(const T* a, index_t m, index_t k, index_t lda, const T* tau, T* x, index_t ncols,
             index_t ldx) {
  for (index_t r = k - 1; r >= 0; --r) {
    if (tau[r] == T(0)) continue;
    const T* v = a + r + r * lda;
    for (index_t j = 0; j < ncols; ++j) {
      T* c = x + r + j * ldx;
      T w = c[0];
      for (index_t i = 1; i < m - r; ++i)
        w += conj_mul(v[i], c[i]);
      const T s = tau[r] * w;
      c[0] -= s;
      for (index_t i = 1; i < m - r; ++i)
        c[i] -= mul(v[i], s);
    }
  }
}

/// Replaces the columns j of the m x ncols matrix u (ldu) with missing[j] by an orthonormal basis
/// of the complement of the other (orthonormal) columns, deterministically: Q e_c, Q e_{c+1}, ...
/// from the Householder QR of the c kept columns. ncols <= m.
template <class T>
void complete_orthonormal(T* u, index_t m, index_t ncols, index_t ldu,
                          const std::vector<bool>& missing) {
  std::vector<index_t> kept;
  for (index_t j = 0; j < ncols; ++j)
    if (!missing[j]) kept.push_back(j);
  const auto c = static_cast<index_t>(kept.size());
  if (c == ncols) return;
  std::vector<T> y(static_cast<std::size_t>(m) * std::max<index_t>(c, 1)), tau(c);
  for (index_t j = 0; j < c; ++j)
    std::copy(u + kept[j] * ldu, u + kept[j] * ldu + m, y.data() + j * m);
  householder_qr(y.data(), m, c, m, tau.data());
  index_t next = c;
  for (index_t j = 0; j < ncols; ++j) {
    if (!missing[j]) continue;
    T* col = u + j * ldu;
    std::fill(col, col + m, T(0));
    col[next++] = T(1);
    apply_q(y.data(), m, c, m, tau.data(), col, 1, ldu);
  }
}

}  // namespace shiftop::svd::detail
