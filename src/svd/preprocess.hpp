// Preprocessing of the one-sided Jacobi SVD as LAPACK's xGEJSV (Drmac-Veselic; thesis eqs.
// (2.1)-(2.2)): the Jacobi method runs on a small triangular factor instead of the m x n matrix.
// * SVD: the rows are first sorted by decreasing infinity norm (xGEJSV's row pivoting, JOBA = 'F'
//   or 'G': it makes the QR with column pivoting accurate for row-graded matrices D B as well as
//   for column-graded ones B D; without it a row-graded 12 x 12 matrix lost 11 digits, measured),
//   then P_r A P = Q R by Householder QR with column pivoting; k is the number of leading
//   |R_ii| > tolerance * |R_00| (tolerance 0: xGEJSV's accurate modes, only exact zeros go;
//   sqrt(n) eps: its JOBA = 'A'). k = n: Jacobi on G = R^H
//   (xGEJSV's choice: the transposed factor converges faster). k < n: the k x n top R_0 of R is
//   factored as R_0 = L Q_2^H (LQ, through the QR of R_0^H = Q_2 L^H), and Jacobi runs on G = L^H.
//   With G W = X diag(sigma) (W the accumulated rotations, X the normalised columns of G):
//   A = (P_r^T Q W) diag(sigma) (P Q_2 X)^H, so U comes from W and V from X.
// * HSVD (m > n): A = Q R without pivoting (pivoting would permute J), Jacobi on G = R with J:
//   U = Q X, V = W.
#pragma once

#include <vector>

#include "shiftop/svd/jacobi.hpp"

namespace shiftop::svd::detail {

template <class T>
struct Preprocessed {
  index_t m = 0, n = 0;
  index_t rank = 0;           ///< k: G is k x k
  bool transposed = false;    ///< G = R^H or L^H (SVD): U from W, V from X; else U from X, V = W
  std::vector<T> g;           ///< k x k, column-major, leading dimension k
  std::vector<T> qr, tau;     ///< Householder QR of A (m x n, leading dimension m) and its taus
  std::vector<index_t> perm;  ///< column j of A P is column perm[j] of A (SVD only)
  std::vector<index_t> row_perm;  ///< row i of P_r A is row row_perm[i] of A (SVD only)
  std::vector<T> lq, lq_tau;      ///< QR of R_0^H (n x k, leading dimension n), when k < n
};

/// SVD preprocessing of the m x n matrix a (m >= n, leading dimension lda); rank_tolerance as
/// JacobiOptions::rank_tolerance.
template <class T>
Preprocessed<T> preprocess_svd(const T* a, index_t m, index_t n, index_t lda,
                               Real<T> rank_tolerance);

/// HSVD preprocessing (m > n): QR without pivoting, G = R.
template <class T>
Preprocessed<T> preprocess_hyperbolic(const T* a, index_t m, index_t n, index_t lda);

/// u (m x n, ldu) with columns 0..k-1 = P_r^T Q [x; 0] for the k x k matrix x (ldx); columns k..
/// zero.
template <class T>
void left_vectors(const Preprocessed<T>& pre, const T* x, index_t ldx, T* u, index_t ldu);

/// v (n x n, ldv) with columns 0..k-1 = P Q_2 [x; 0] for the k x k matrix x (ldx) (SVD only:
/// Q_2 = I when k = n); columns k.. zero.
template <class T>
void right_vectors(const Preprocessed<T>& pre, const T* x, index_t ldx, T* v, index_t ldv);

}  // namespace shiftop::svd::detail
