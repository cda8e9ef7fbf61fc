// shiftop::svd::gsvd_hz — the generalized SVD of a pair (F, G) by the implicit Hari-Zimmermann
// method on the CPU (jacobi-svd-gsvd-gpu-thesis, chapter 3: Algorithm 5, the blocked Algorithm 8,
// the local sorting of section 3.2.2, the OpenMP level of section 3.3.1) or, with
// options.backend = Backend::Cuda, on a GPU. Real or complex, FP64. Matrices are column-major
// (LAPACK's layout).
//
// On the GPU (gsvd/cuda/gsvd_batched.cpp) the same options, layouts and results (equal within
// rounding, not bitwise), by the thesis' GPU design (section 3.5): `initZ` (Z = I, the columns of
// F, G and Z scaled by 1 / ||g_i||), `pStep` (one parallel step: the pairs' columns of F, G and Z
// transformed), `Sigma` (Z rescaled, sigma_f, sigma_g and the vectors at the end), with a
// proper-transformation counter per pair read by the host after each sweep. One thread block per
// pair of matrices while the batch fills the GPU or the pair fits a block's shared memory;
// docs/gsvd.md, "The GSVD on the GPU", describes the paths and what is refused (the blocked
// variants; n beyond what a thread block's shared memory holds). A single pair is a batch of one,
// and its errors name it as pair 0. The work is queued on the stream of the context of options.gpu;
// every call returns after it is synchronised.
//
// For F (m x n) and G (p x n) with G of full column rank, the method finds a nonsingular Z with
// F Z and G Z of orthogonal columns (3.11), and finishes (3.12)-(3.13):
//   F = U diag(sigma_f) X,   G = V diag(sigma_g) X,   sigma_f^2 + sigma_g^2 = 1,
// with V of orthonormal columns, the columns of U orthonormal where sigma_f > 0, and X = S Z^{-1}
// nonsingular. The generalized singular values are sigma_f / sigma_g (the square roots of the
// eigenvalues of the pair (F^H F, G^H G)). G must have full column rank (so p >= n): a G that is
// numerically rank deficient is refused with an error saying so; LAPACK's preprocessing (xGGSVP3)
// is not done.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

#include "shiftop/core/backend.hpp"
#include "shiftop/core/shape.hpp"
#include "shiftop/svd/jacobi.hpp"
#include "shiftop/svd/strategy.hpp"

namespace shiftop::svd {

struct GsvdOptions {
  /// U, V and X; otherwise only sigma_f and sigma_g.
  bool compute_vectors = false;
  /// Pointwise (Algorithm 5), BlockOriented or FullBlock (Algorithm 8); Auto chooses from n.
  Variant variant = Variant::Auto;
  /// The strategy of the outermost level: the pairs of columns (pointwise) or of block columns
  /// (blocked variants). The thesis' choice for the parallel levels is modified modulus (Table
  /// 3.2); each step's disjoint pairs run on OpenMP threads.
  StrategyKind strategy = StrategyKind::ModifiedModulus;
  /// The pointwise method inside a block pair of the blocked variants (Table 3.2: row-cyclic).
  StrategyKind inner_strategy = StrategyKind::RowCyclic;
  /// Columns per block column of the blocked variants; 0: chosen from n.
  index_t block_width = 0;
  /// OpenMP threads; 0: OpenMP's default. Results are bitwise identical for any count.
  int threads = 0;
  /// (Block-)sweeps before giving up; 0: the thesis' 50.
  int max_sweeps = 0;
  /// The local sorting of section 3.2.2 (Algorithm 7 for pairs): after each transformation the
  /// pair's columns are ordered so that sigma_f / sigma_g does not increase.
  bool sort = true;
  /// Called after every (block-)sweep (progress.hpp); empty: not called. The CPU only.
  SweepCallback progress = {};
  /// Where the GSVD runs: Backend::Cuda on the GPU of `gpu` (the pointwise method: variant auto
  /// or pointwise; block_width and threads are ignored there); a build without CUDA refuses.
  Backend backend = Backend::Cpu;
  /// The GPU of Backend::Cuda, as JacobiOptions::gpu: gpu.context when given, else the shared
  /// context of GPU gpu.device, held for the call.
  GpuOptions gpu{};
};

struct GsvdStats {
  int sweeps = 0;                           ///< (block-)sweeps run
  std::int64_t transformations = 0;         ///< pointwise transformations applied
  std::int64_t proper_transformations = 0;  ///< of those, not the identity (section 3.5)
  bool converged = false;                   ///< a (block-)sweep transformed no pair
};

template <class T>
struct GsvdResult {
  index_t m = 0, p = 0, n = 0;
  /// n values each, ordered so that sigma_f / sigma_g is nonincreasing; sigma_f^2 + sigma_g^2 = 1
  /// to rounding, sigma_g > 0.
  std::vector<Real<T>> sigma_f, sigma_g;
  /// m x n, column-major; column i is F's transformed column normalised, zero where sigma_f is 0.
  /// Empty unless compute_vectors.
  std::vector<T> u;
  /// p x n, column-major, orthonormal columns. Empty unless compute_vectors.
  std::vector<T> v;
  /// n x n, column-major, nonsingular: F = U diag(sigma_f) X, G = V diag(sigma_g) X. Empty unless
  /// compute_vectors.
  std::vector<T> x;
  GsvdStats stats;

  /// The generalized singular values sigma_f / sigma_g, nonincreasing.
  std::vector<Real<T>> values() const;
};

/// The GSVD of F (m x n, leading dimension ldf >= m) and G (p x n, ldg >= p). Throws
/// shiftop::Error for empty or inconsistent sizes, non-finite entries (naming the matrix and the
/// first entry), a G that is not of full column rank (p < n, a zero column, columns that become
/// parallel to working precision during the iteration, or a column of G Z at rounding level,
/// ||G z_j|| <= eps n sqrt(p) ||diag(||g_k||) z_j||, at the end), and values so large that
/// ||f_i||^2 / ||g_i||^2 overflows. Columns of F Z at rounding level (F of rank < n, e.g. m < n)
/// are set to exactly 0, so their sigma_f is exactly 0. A run that does not converge in
/// max_sweeps returns with stats.converged false.
template <class T>
GsvdResult<T> gsvd_hz(const T* f, index_t m, index_t ldf, const T* g, index_t p, index_t ldg,
                      index_t n, const GsvdOptions& options = {});

template <class T>
struct BatchedGsvdResult {
  index_t batch = 0, m = 0, p = 0, n = 0;
  std::vector<Real<T>> sigma_f, sigma_g;  ///< batch x n
  std::vector<T> u;                       ///< batch x (m x n) when compute_vectors
  std::vector<T> v;                       ///< batch x (p x n) when compute_vectors
  std::vector<T> x;                       ///< batch x (n x n) when compute_vectors
  std::vector<GsvdStats> stats;           ///< one per pair
};

/// `batch` independent pairs of one size: pair b is F at f + b * stride_f (leading dimension
/// ldf, stride_f >= ldf * n) and G at g + b * stride_g (ldg, stride_g >= ldg * n), each solved as
/// gsvd_hz would on one thread, OpenMP over the pairs (options.threads). Bitwise equal to calling
/// gsvd_hz with one thread on each pair. Errors name the pair.
template <class T>
BatchedGsvdResult<T> gsvd_hz_batched(const T* f, index_t ldf, index_t stride_f, const T* g,
                                     index_t ldg, index_t stride_g, index_t batch, index_t m,
                                     index_t p, index_t n, const GsvdOptions& options = {});

}  // namespace shiftop::svd
