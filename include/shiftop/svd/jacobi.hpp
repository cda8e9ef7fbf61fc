// shiftop::svd::jacobi — the one-sided (Hestenes) Jacobi SVD and hyperbolic SVD on the CPU
// (jacobi-svd-gsvd-gpu-thesis, chapter 2) or, with options.backend = Backend::Cuda, on a GPU
// (svd/jacobi_gpu.hpp says how it differs). Singular values to high relative accuracy, optionally
// the singular vectors; real or complex, FP32 or FP64; one matrix (OpenMP over disjoint pivot
// pairs) or a batch of matrices of one size (OpenMP over matrices). On the CPU results are bitwise
// identical for any thread count. Matrices are column-major (LAPACK's layout).
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "shiftop/core/backend.hpp"
#include "shiftop/core/enum_names.hpp"
#include "shiftop/core/shape.hpp"
#include "shiftop/svd/progress.hpp"
#include "shiftop/svd/strategy.hpp"

namespace shiftop::svd {

template <class T>
struct RealOf {
  using type = T;
};
template <class R>
struct RealOf<std::complex<R>> {
  using type = R;
};
/// The real type of T: double for double and std::complex<double>, float for float and
/// std::complex<float>.
template <class T>
using Real = typename RealOf<T>::type;

enum class Variant {
  Auto,           ///< pointwise for small n, full block above (chosen from n and the block width)
  Pointwise,      ///< rotations of single column pairs (section 2.1)
  BlockOriented,  ///< block pairs shortened by Gram + Cholesky, one inner sweep per pair (2.1)
  FullBlock,      ///< block pairs shortened, the inner Jacobi run to convergence (2.1)
};

}  // namespace shiftop::svd

template <>
struct shiftop::EnumNames<shiftop::svd::Variant> {
  static constexpr std::array<std::pair<svd::Variant, std::string_view>, 4> table{
      {{svd::Variant::Auto, "auto"},
       {svd::Variant::Pointwise, "pointwise"},
       {svd::Variant::BlockOriented, "block-oriented"},
       {svd::Variant::FullBlock, "full-block"}}};
};

namespace shiftop::svd {

struct JacobiOptions {
  bool compute_u = false;
  bool compute_v = false;
  /// The hyperbolic SVD: J = diag(I_{n_plus}, -I_{n - n_plus}) on the columns, 0 <= n_plus <= n;
  /// -1 gives the ordinary SVD (J = I). Needs m >= n.
  index_t n_plus = -1;
  Variant variant = Variant::Auto;
  StrategyKind strategy = StrategyKind::ReversedRowCyclicClosest;
  /// Columns per block column of the blocked variants; 0: chosen from n (and the cache).
  index_t block_width = 0;
  /// OpenMP threads; 0: OpenMP's default.
  int threads = 0;
  /// Sweeps (block-sweeps for the blocked variants) before giving up; 0: the default (60).
  int max_sweeps = 0;
  /// The ordinary SVD starts, as LAPACK's dgejsv, with a QR factorisation with column pivoting
  /// (rows sorted first), keeps the leading columns of R with |R_kk| > rank_tolerance * |R_11|
  /// (then an LQ factorisation when some are dropped) and runs Jacobi on the triangular factor;
  /// false runs Jacobi on A itself. The hyperbolic SVD uses QR without pivoting when m > n
  /// (pivoting would permute J).
  bool preprocess = true;
  /// 0 (the default, as dgejsv's JOBA = 'C'/'F'): only exact zeros of R are dropped, so singular
  /// values far below eps * sigma_max keep their relative accuracy. A positive value declares a
  /// numerical rank as dgejsv's JOBA = 'A' does with sqrt(n) * eps: the dropped singular values
  /// are exactly 0 (the matrix treated as rank deficient, with absolute error bounds).
  double rank_tolerance = 0.0;
  /// Called after every sweep (progress.hpp); empty: not called. The CPU only (the GPU runs
  /// every sweep in one launch).
  SweepCallback progress = {};
  /// Where the SVD runs. Backend::Cuda: on the GPU of `gpu`, a single matrix as a batch of one,
  /// with the options and limits of svd/jacobi_gpu.hpp; a build without CUDA refuses.
  Backend backend = Backend::Cpu;
  /// The GPU of Backend::Cuda: gpu.context when given (the caller drives it from one thread at a
  /// time), else the process's shared context of GPU gpu.device (gpu::shared_context), whose lock
  /// the call holds until it returns. Shared, not one per call: a context (a stream, a cuBLAS
  /// handle and its 32 MB workspace) costs more to make than a small batch costs to solve.
  GpuOptions gpu{};
};

struct JacobiStats {
  int sweeps = 0;                     ///< (block-)sweeps run
  std::int64_t rotations = 0;         ///< rotations applied (pairs not relatively orthogonal)
  std::int64_t proper_rotations = 0;  ///< of those, rotations with cos != 1 (section 2.3.3)
  /// A sweep found every column pair relatively orthogonal, |g_p^H g_q| < eps sqrt(n) ||g_p||
  /// ||g_q|| (no rotation), and every result is finite. A hyperbolic SVD that does not exist,
  /// rank(A J A^H) < rank(A), can end in overflow (the all-ones matrix does: not converged), but
  /// need not: A = [B B]
  /// (B 10 x 3 random, J = diag(I_3, -I_3)) converges to sigma ~ 1e-8 with ||V||_max ~ 5e7 on
  /// the CPU and the GPU; a V with entries near 1/sqrt(eps) is the sign of it.
  bool converged = false;
  index_t rank = 0;  ///< the columns preprocessing kept (see rank_tolerance)
};

template <class T>
struct JacobiResult {
  index_t m = 0, n = 0;
  /// min(m, n) singular values, descending. Hyperbolic: the n_plus values of the positive part of
  /// J first, then the others, each part descending, so that J keeps its partition and the
  /// eigenvalues of A J A^H are sigma_i^2 * J_ii.
  std::vector<Real<T>> sigma;
  /// m x min(m, n), column-major, orthonormal columns (completed to an orthonormal set where
  /// sigma is 0); empty unless compute_u.
  std::vector<T> u;
  /// n x min(m, n), column-major; empty unless compute_v. A = U diag(sigma) V^H. Hyperbolic
  /// (n x n): V^H J V = J and A = U diag(sigma) V^{-1}.
  std::vector<T> v;
  JacobiStats stats;
};

/// The SVD (or, with options.n_plus >= 0, the hyperbolic SVD) of the m x n column-major matrix
/// `a` (leading dimension lda >= m). m < n is handled through A^H. Throws shiftop::Error for
/// empty sizes, lda < m, non-finite entries (naming the first one), n_plus out of range, and on
/// the GPU for the options it does not run.
template <class T>
JacobiResult<T> jacobi(const T* a, index_t m, index_t n, index_t lda,
                       const JacobiOptions& options = {});

template <class T>
struct BatchedJacobiResult {
  index_t batch = 0, m = 0, n = 0;
  std::vector<Real<T>> sigma;      ///< batch x min(m, n)
  std::vector<T> u;                ///< batch x (m x min(m, n)) when compute_u
  std::vector<T> v;                ///< batch x (n x min(m, n)) when compute_v
  std::vector<JacobiStats> stats;  ///< one per matrix
};

/// `batch` independent m x n column-major matrices, matrix b at a + b * stride (stride >= lda*n),
/// each solved as jacobi() would on one thread, OpenMP over the matrices (options.threads); a
/// batch of one is jacobi() with options.threads. Bitwise equal to calling jacobi() on each. On
/// the GPU the batch is copied there and the results back (svd/jacobi_gpu.hpp).
template <class T>
BatchedJacobiResult<T> jacobi_batched(const T* a, index_t batch, index_t m, index_t n, index_t lda,
                                      index_t stride, const JacobiOptions& options = {});

}  // namespace shiftop::svd
