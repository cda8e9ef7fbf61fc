// Stages 1 and 2 of the batched Jacobi SVD (svd/cuda/batched_kernels.hpp) for matrices too large
// for one thread block: the blocked one-sided Jacobi method of jacobi-svd-gsvd-gpu-thesis,
// section 2.3, with the work of a parallel step spread as the GPU's memory levels suggest:
//  * G's columns are split into block columns of `width` (padded with zero columns to an even
//    count of blocks); each outer step of the block strategy pairs them. For the hyperbolic SVD
//    the columns of J's positive and negative parts get blocks of their own (each part's last
//    block padded), so every block has one sign and J stays partitioned: a pair of blocks of
//    different signs is rotated hyperbolically (2.14) and never exchanges columns;
//  * the Gram matrices H_i = [G_p G_q]^H [G_p G_q] of all pivot block pairs of the step (and of
//    every matrix of the batch) are one strided batched GEMM on cuBLAS (tensor cores in FP64);
//  * one thread block per pair runs the two-sided Jacobi method on H_i in shared memory
//    (svd/cuda/gram_jacobi.cuh: the rotations the one-sided method would apply to H_i's Cholesky
//    factor R_i, 2.3.1, without forming R_i or its dot products), accumulating the pair's
//    rotation V_i (2 width x 2 width): one sweep (block-oriented) or to convergence (full block);
//  * G_i V_i and W_i V_i (2.3.5) are one batched GEMM each, written out of place straight into the
//    order the next step reads: the blocks of step k's pair i sit side by side (slots 2i, 2i+1),
//    so the Gram product reads each pair as one contiguous panel and no permutation pass is needed.
// The host queues whole sweeps and synchronises once per sweep to read the rotation counters; a
// matrix stops after a sweep that rotates no pair (as the pointwise method, svd/pointwise.cpp).
// The object holds the workspaces and tables for one shape, so repeated runs allocate nothing.
#pragma once

#include <vector>

#include "backend/cuda/device_memory.cuh"
#include "shiftop/gpu/context.hpp"
#include "shiftop/svd/strategy.hpp"
#include "svd/cuda/batched_kernels.hpp"

namespace shiftop::svd::gpu_kernels {

struct BlockedChoices {
  index_t width = 0;  ///< columns per block column; 0: the widest whose pair fits (default_width)
  int inner_sweeps = 1;  ///< inner sweeps per pair visit: 1 block-oriented, more full block
  int max_sweeps = 60;   ///< block-sweeps before giving up
  StrategyKind strategy = StrategyKind::ReversedRowCyclicClosest;
};

/// The per-matrix outcome of the block-sweeps.
struct BlockedOutcome {
  std::vector<int> sweeps;
  std::vector<long long> rotations, proper;
  std::vector<bool> converged;  ///< a block-sweep rotated no pair and every norm is finite
};

/// The widest block column (32, 24 or 16, at most ceil(cols / 2)) whose pair's Gram matrix and
/// rotation both fit `shared_limit` bytes of shared memory.
index_t default_block_width(std::size_t element, std::size_t shared_limit, index_t cols);

/// The largest width whose pair's Gram matrix fits shared memory (the rotation then lives in
/// global memory): what a caller's block_width may be.
index_t max_block_width(std::size_t element, std::size_t shared_limit);

template <class T>
class BlockedMethod {
 public:
  using V = DeviceType<T>;
  /// For `count` matrices A' of rows x cols (rows >= cols), J = diag(I_{n_plus}, -I) on the
  /// columns (n_plus = -1: the SVD), W accumulated when `accumulate`; choices.width at most
  /// max_block_width (the caller checks it).
  BlockedMethod(const gpu::Context& context, index_t count, index_t rows, index_t cols,
                index_t n_plus, bool accumulate, const BlockedChoices& choices,
                std::size_t shared_limit);

  /// batch.a (A, or A^H when batch.wide) -> batch.reports (the scale, the first non-finite entry,
  /// the rank), batch.sigma (descending; hyperbolic: J's positive part first, each part
  /// descending; scaled back by 2^scale_exponent) and, in the same order,
  /// X (G's columns normalised, rows x cols per matrix) into x and W (cols x cols per matrix) into
  /// w, each when not null (w only when accumulated). The method's own preprocessing (the
  /// power-of-two scaling and the finiteness check, over the whole GPU) replaces stage 1.
  BlockedOutcome run(const Batch<T>& batch, V* x, V* w);

  index_t width() const { return width_; }

 private:
  const gpu::Context& context_;
  index_t count_, rows_, cols_, plus_, width_, blocks_, pairs_;
  bool accumulate_;
  BlockedChoices choices_;
  int steps_ = 0, inner_steps_ = 0, units_per_step_ = 0, threads_ = 32;
  bool rotation_in_shared_ = false;
  std::size_t shared_bytes_ = 0;
  // Device tables: the slot of each block before step 0, the next step's slot of each slot of a
  // step, the pairs of a step that are no pair of the strategy (identity), the inner strategy,
  // A's column (or, past cols, the padding's index) of each column of each block, and per step
  // and slot whether its block is of J's negative part.
  cuda::DeviceMemory first_layout_, next_slot_, filler_, units_, column_of_, slot_negative_;
  // Workspaces: G and W in two copies (steps alternate), the Gram matrices and rotations of a
  // step, the update's pointer arrays, the counters, the norms, the sorted order and the scan's
  // largest entries and first non-finite ones.
  cuda::DeviceMemory g_work_[2], w_work_[2], gram_, rotation_, pointers_, counters_, norms_,
      source_, scan_;
};

}  // namespace shiftop::svd::gpu_kernels
