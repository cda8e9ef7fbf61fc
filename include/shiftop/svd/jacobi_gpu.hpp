// The one-sided Jacobi (H)SVD on a GPU — what svd::jacobi and svd::jacobi_batched (svd/jacobi.hpp)
// run with options.backend = Backend::Cuda on host arrays, and jacobi_batched_device below on
// device arrays: the twin of the CPU batched driver with the same options, layouts and results
// (equal within rounding, not bitwise: the GPU sums dot products in another order). A single
// matrix is a batch of one. Two methods, chosen per call
// (jacobi-svd-gsvd-gpu-thesis, section 2.3; docs/svd.md, "The Jacobi SVD on the GPU"):
//  * one thread block per matrix while the matrix's cols x cols factor (cols = min(m, n)) fits a
//    block's shared memory (Hopper: up to 227 KB), or while the batch has at least two matrices
//    per multiprocessor: the rows are sorted by their infinity norm, the matrix is factored by
//    Householder QR with column pivoting (as the CPU driver and LAPACK's xGEJSV do) and the
//    transposed triangular factor is orthogonalised by the pointwise method under the parallel
//    strategy of the options, in shared memory when it fits and in global memory otherwise;
//  * otherwise (one large matrix, or a few), and for variants BlockOriented and FullBlock, the
//    blocked method, many thread blocks per matrix: block columns of options.block_width (0: 32,
//    or the widest of 24 and 16 whose pair fits a block's shared memory), the Gram matrices of each
//    step's pivot block pairs and the updates of G and W as cuBLAS GEMMs, and on each pair's Gram
//    matrix the two-sided Jacobi method, which applies the rotations the one-sided method would
//    apply to its Cholesky factor (one sweep, BlockOriented and Auto; to convergence, FullBlock).
//    This path does no QR preprocessing (options.preprocess is ignored; the scaling and the
//    finiteness check run, over the whole GPU): its relative accuracy is the plain
//    one-sided method's (column scaling, A = B D), not the row-sorted QR's (row scaling,
//    A = D B); stats.sweeps counts block-sweeps and stats.rank is min(m, n). Since the choice
//    depends on the batch size, a matrix of that size computed alone may take the other path than
//    within a large batch; variant Pointwise keeps every matrix on the first method. The
//    hyperbolic SVD keeps J's parts in block columns of their own (each part's last one padded),
//    rotates pairs of mixed sign hyperbolically and sorts sigma within each part, as the CPU does
//    (without the QR preprocessing the one-block path gives a tall matrix).
// Each matrix is scaled by the power of two that brings its largest entry into [1, 2) (exact;
// sigma is scaled back), and sums of squares are formed in double: entries spanning more than
// about 300 decades within one matrix lose the relative accuracy of the tiniest singular values
// (the CPU's scaled norms keep it). The blocked method's Gram products are cuBLAS GEMMs in the
// data's precision: there columns more than about 19 decades (FP32) or 150 decades (FP64) below
// the largest underflow in their Gram entries and are taken as zero columns.
// Work is queued on the context's stream (gpu/context.hpp; on host arrays the context of
// options.gpu, JacobiOptions::gpu); every call returns after that stream is synchronised, because
// the convergence counters come back to the host.
//
// Options on the GPU: compute_u, compute_v, n_plus (the hyperbolic SVD), strategy and max_sweeps
// as on the CPU (on the blocked path max_sweeps bounds the block-sweeps, and the sweeps inside
// each block pair); preprocess as on the CPU except on the blocked path (above); variant Auto
// (the GPU picks its method as above), Pointwise (one thread block per matrix always),
// BlockOriented or FullBlock (the blocked method); block_width on the blocked path (refused
// beyond what a block's shared memory holds); rank_tolerance must be 0 (refused otherwise);
// threads and progress are ignored. min(m, n) is limited by the
// per-column arrays a thread block keeps (about 11,000 with the QR, 29,000 without; refused
// beyond).
#pragma once

#include <memory>
#include <vector>

#include "shiftop/gpu/context.hpp"
#include "shiftop/svd/jacobi.hpp"

namespace shiftop::svd {

/// The outputs of jacobi_batched_device, in device memory of the context's GPU, r = min(m, n).
template <class T>
struct DeviceJacobiOutput {
  Real<T>* sigma = nullptr;  ///< batch x r, row b descending (hyperbolic: per part of J)
  T* u = nullptr;  ///< batch x (m x r), column-major, leading dimension m; written iff compute_u
  T* v = nullptr;  ///< batch x (n x r), column-major, leading dimension n; written iff compute_v
};

/// The plan of the GPU SVD of batches of `batch` m x n matrices with `options` on `context` (FFTW's
/// plan once, execute many): the checks, the method (above), the device workspaces and the
/// strategy tables are made here, so that execute allocates no device memory and uploads no table
/// (it uses host memory only: the statistics, and the orthonormal completion of the vectors of
/// exactly zero singular values, which is done on the host). The context must outlive the plan;
/// one plan runs one call at a time (its workspaces are its own).
template <class T>
class GpuPlan {
 public:
  GpuPlan(const gpu::Context& context, index_t batch, index_t m, index_t n,
          const JacobiOptions& options = {});
  ~GpuPlan();
  GpuPlan(GpuPlan&&) noexcept;
  GpuPlan& operator=(GpuPlan&&) noexcept;

  /// As jacobi_batched_device on this plan's shape: `a` (device memory, not modified) holds the
  /// matrices at a + b * stride with leading dimension lda; the results go to `out`.
  std::vector<JacobiStats> execute(const T* a, index_t lda, index_t stride,
                                   const DeviceJacobiOutput<T>& out);

  index_t batch() const;
  index_t m() const;
  index_t n() const;
  /// True when the plan runs the blocked method (many thread blocks per matrix), false for one
  /// thread block per matrix.
  bool blocked() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Device arrays: `a` (device memory, not modified) holds `batch` m x n column-major matrices,
/// matrix b at a + b * stride (as jacobi_batched); the results go to `out` (device memory, not
/// overlapping `a`). options.backend and options.gpu are not read: the work runs on `context`. The
/// work is ordered after what is queued on the context's stream (use Context::wait_for to order it
/// after a caller's stream). Returns the statistics of each matrix (host memory). A GpuPlan made
/// and executed once: repeated calls of one shape should keep a GpuPlan instead.
template <class T>
std::vector<JacobiStats> jacobi_batched_device(const gpu::Context& context, const T* a,
                                               index_t batch, index_t m, index_t n, index_t lda,
                                               index_t stride, const DeviceJacobiOutput<T>& out,
                                               const JacobiOptions& options = {});

}  // namespace shiftop::svd
