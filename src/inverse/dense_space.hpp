// Where the data-space Hessian (include/shiftop/inverse/data_space_hessian.hpp) keeps K, W and its
// workspaces, and how its dense algebra runs there: host memory with LAPACK and OpenMP
// (host_dense_space.cpp) or one GPU with cuBLAS, cuSOLVER and small kernels, all in order on the
// context's stream (cuda/device_dense_space.cu). The offline and online algorithms are written
// once against this interface, as the distributed plan's apply is against MemorySpace.
// Matrices are column-major with leading dimension = rows; vectors are SOTI.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "shiftop/btt/plan.hpp"
#include "shiftop/inverse/prior.hpp"

namespace shiftop::gpu {
class Context;
}

namespace shiftop::inverse {

/// `count` doubles in one space, freed with the handle.
class SpaceVector {
 public:
  SpaceVector() = default;
  SpaceVector(std::shared_ptr<void> memory, std::size_t count)
      : memory_(std::move(memory)), size_(count) {}
  double* data() const { return static_cast<double*>(memory_.get()); }
  std::size_t size() const { return size_; }

 private:
  std::shared_ptr<void> memory_;
  std::size_t size_ = 0;
};

class DenseSpace {
 public:
  virtual ~DenseSpace() = default;

  virtual bool on_device() const = 0;
  /// Bytes this space can still allocate (MemAvailable on the host, cudaMemGetInfo's free
  /// memory on a GPU), or a very large number where unknown.
  virtual double available_bytes() const = 0;
  /// Bytes of scratch cholesky() needs beyond the matrix (cuSOLVER's workspace; 0 on the host).
  virtual double cholesky_workspace_bytes(index_t n) = 0;
  /// `count` doubles, unset (test builds fill them with NaN); throws shiftop::Error, naming
  /// `what`, when they cannot be allocated.
  virtual SpaceVector allocate(std::size_t count, std::string_view what) = 0;

  virtual void upload(std::span<const double> host, double* to) = 0;
  virtual void download(const double* from, std::span<double> host) = 0;
  /// to[k] = from[k] for k < count, both in this space.
  virtual void copy(const double* from, double* to, std::size_t count) = 0;
  virtual void fill_zero(double* values, std::size_t count) = 0;
  /// Unit vectors: vectors[r*length + k] = (k == positions[r]) for r < positions.size().
  virtual void fill_unit_vectors(double* vectors, index_t length,
                                 std::span<const index_t> positions) = 0;
  /// out[r] = vectors[r*length + positions[r]] (to the host).
  virtual void gather(const double* vectors, index_t length, std::span<const index_t> positions,
                      std::span<double> out) = 0;
  /// a[c*lda + first + c] += values[first + c] for c < count: adds to the diagonal entries of
  /// columns first..first+count-1 held at `a` (a points at column `first`, lda rows each).
  virtual void add_to_diagonal(double* a, index_t lda, index_t first, index_t count,
                               const double* values) = 0;
  /// y[k] += alpha x[k].
  virtual void axpy(double alpha, const double* x, double* y, std::size_t count) = 0;

  /// y = op(F) x with a plan on this space's memory.
  virtual void apply(btt::Plan& plan, btt::Op op, const double* x, double* y, index_t nrhs) = 0;
  /// y = Gamma_prior x on this space's memory.
  virtual void apply_prior(const Prior& prior, const double* x, double* y, index_t nrhs) = 0;

  /// The Gram factor's rows of `count` sensors from F* of their unit vectors at t = Nt-1:
  /// phi[j*ld + r*nt + a] = scale[j] * series[(r*nm + j)*nt + nt-1-a] for r < count, j < nm,
  /// a < nt (series: count SOTI parameter vectors; phi points at the first sensor's row).
  virtual void scatter_reversed(const double* series, index_t count, index_t nm, index_t nt,
                                const double* scale, double* phi, index_t ld) = 0;
  /// The lower triangle of the n x n c = a a^T, a n x k (DSYRK; the strict upper triangle of c
  /// is left as it was).
  virtual void syrk_lower(const double* a, index_t n, index_t k, double* c) = 0;
  /// In the lower triangle of the (blocks*nt)^2 matrix a, the prefix sum along every diagonal of
  /// each nt x nt block: a(t,t') += a(t-1,t'-1) in t order (data_space_hessian.cpp, the Gram
  /// assembly).
  virtual void diagonal_prefix_sum(double* a, index_t blocks, index_t nt) = 0;
  /// a(c,r) = a(r,c) for r > c: the strict upper triangle of the n x n a from its lower one.
  virtual void copy_lower_to_upper(double* a, index_t n) = 0;

  /// Cholesky factor of the n x n symmetric a in place (lower triangle; the strict upper
  /// triangle is kept); throws shiftop::Error when a is not positive definite.
  virtual void cholesky(double* a, index_t n) = 0;
  /// b = L^-1 b (transpose false) or L^-T b (transpose true) for nrhs columns of n values, L the
  /// lower triangle cholesky() left in `factor`; the two in turn give K^-1 b.
  virtual void triangular_solve(const double* factor, index_t n, double* b, index_t nrhs,
                                bool transpose) = 0;
  /// y = A^T x for nrhs vectors (x: rows values each, y: cols values each), A rows x cols.
  virtual void gemm_transposed(const double* a, index_t rows, index_t cols, const double* x,
                               double* y, index_t nrhs) = 0;
  /// out[j] = a_j . b_j for the cols columns of two rows x cols matrices (to the host).
  virtual void column_dots(const double* a, const double* b, index_t rows, index_t cols,
                           std::span<double> out) = 0;
  /// Returns once the work queued so far is done.
  virtual void synchronize() = 0;
};

/// Throws the shiftop::Error for a K that is not positive definite: Cholesky stopped at the
/// leading minor of order `minor` of the n x n matrix. Both spaces raise it.
[[noreturn]] void refuse_indefinite(index_t minor, index_t n);

/// Host memory: LAPACK (dpotrf, dtrtrs) and OpenMP loops.
std::unique_ptr<DenseSpace> make_host_dense_space();

/// One GPU (cuda/device_dense_space.cu): `context`, or a new one on `device` when null. A build
/// without CUDA throws shiftop::Error.
std::unique_ptr<DenseSpace> make_device_dense_space(std::shared_ptr<gpu::Context> context,
                                                    int device);

}  // namespace shiftop::inverse
