// shiftop::distributed::DistributedPlan: a block Toeplitz operator partitioned over a pr x pc
// process grid (Venkat et al., sections 3.2-3.5, Algorithms 2-3), applied as
//   F:    broadcast m down each grid column, local F, reduce d across each grid row;
//   F*:   broadcast d across each grid row, local F*, reduce m down each grid column;
//   F*F:  broadcast m down columns, local F, all-reduce d across rows, local F*, reduce m down
//         columns; FF* the mirror image (all-reduce m down columns).
// Rank (i, j) holds only its slice of the kernels (partition.hpp) and applies it with an ordinary
// btt::Plan: the slice of rows I and columns J of F is again block Toeplitz, because the Toeplitz
// structure is in time (block (t, u) of F is F_{t-u}, so block (t, u) of the slice is
// F_{t-u}[I, J], a function of t - u alone). Its first block column and row are the sliced ones.
// Parameter vectors live on grid row 0 and data vectors on grid column 0 (eqs. 13-14).
// With Backend::Cuda every rank drives one GPU: its vectors and buffers are device memory, the
// collectives run on NCCL and the FP32 casts as CUDA kernels (memory_space.hpp).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "shiftop/btt/plan.hpp"
#include "shiftop/core/precision.hpp"
#include "shiftop/distributed/bus_bandwidth.hpp"
#include "shiftop/distributed/collectives.hpp"
#include "shiftop/distributed/grid.hpp"
#include "shiftop/distributed/memory_space.hpp"
#include "shiftop/distributed/partition.hpp"

namespace shiftop::distributed {

class DeviceSpace;

/// Seconds and message sizes of the last apply on this rank. A collective's time includes its
/// FP32 casts and the time spent waiting for slower ranks; bytes are what this rank's buffer
/// held, summed over the groups of right-hand sides. On GPUs the times are measured only with
/// GpuEngineOptions::profile (which synchronises around every phase) and are zero otherwise.
struct DistributedPhaseTimes {
  double broadcast = 0, allreduce = 0, reduce = 0;
  double broadcast_bytes = 0, allreduce_bytes = 0, reduce_bytes = 0;
  /// The local plan's phases, summed over groups and over both halves of F*F / FF*.
  btt::PhaseTimes local;

  /// broadcast + allreduce + reduce + local.total().
  double total() const;
};

/// The precision of the values each collective moves (mixed-precision paper, sections 2.4 and
/// 4.2.2): phase 1 is "broadcast and pad", phase 5 "unpad and reduce".
///  * broadcast: phase 1. Rounding the input to FP32 before sending it is exactly the rounding
///    that an FP32 pad applies anyway, so it costs no accuracy, only halves the bytes.
///  * reduce: phase 5, the c5 e5 log2(p) term of eq. (6): the partial sums are added in FP32.
///  * allreduce (the middle of F*F / FF*): phase 5 too. It finishes the reduction of the first
///    half, whose accumulation precision phase 5 sets; its broadcast half needs no separate rule,
///    because when phase 1 is FP32 the second half's pad rounds its input to FP32 in any case.
struct CommunicationPrecision {
  Precision broadcast = Precision::Double;
  Precision allreduce = Precision::Double;
  Precision reduce = Precision::Double;
};

CommunicationPrecision communication_precision(const PrecisionConfig& precision);

/// The grid axes along which an operation broadcasts its input, all-reduces the middle vector
/// (F*F and FF* only) and reduces its output.
struct CollectiveAxes {
  Axis broadcast;
  std::optional<Axis> allreduce;
  Axis reduce;
};

CollectiveAxes collective_axes(btt::Op op);

class DistributedPlan {
 public:
  /// Collective over the grid. Block lower-triangular F of global `shape`; `local_kernels` is
  /// this rank's slice of its first block column, double[nd_i][nm_j][nt] for the blocks
  /// partition().rows(i) x cols(j) (empty when the rank owns no blocks). Every rank passes the
  /// same shape and options (backend, precision, max_rhs); `grid` must outlive the plan. If the
  /// input is bad on any rank, every rank throws shiftop::Error naming the first such rank.
  /// Backend::Cuda (built with NCCL): each rank runs on options.gpu.context when given (its local
  /// plan, casts and NCCL collectives all on that context's stream), else on a new context on GPU
  /// node_rank() modulo the GPUs it sees, whatever options.gpu.device says; every rank of a grid
  /// row or column needs a GPU of its own.
  static DistributedPlan create(const Grid& grid, const Shape& shape,
                                std::span<const double> local_kernels,
                                const btt::PlanOptions& options = {});
  /// General block Toeplitz operator: this rank's slices of the first block column and of the
  /// first block row (btt::Plan::create_general).
  static DistributedPlan create_general(const Grid& grid, const Shape& shape,
                                        std::span<const double> local_first_column,
                                        std::span<const double> local_first_row,
                                        const btt::PlanOptions& options = {});

  /// Collective: y = op(F) x for `nrhs` vectors; every rank calls it with the same op and nrhs.
  /// x holds this rank's blocks local_input_blocks(op) of each vector ([rhs][block][t], as
  /// btt::Plan), and is empty on ranks that hold none of the input; y likewise. Right-hand sides
  /// go through in groups of max_rhs, with no allocation.
  /// On a GPU plan, x and y are copied to and from device buffers allocated for the call.
  void apply(btt::Op op, std::span<const double> x, std::span<double> y, index_t nrhs = 1);

  /// Collective, Backend::Cuda only: apply on device memory of this rank's GPU (device()), x and
  /// y holding as many values as for apply (null where that is none). The work, collectives
  /// included, is queued after what was queued on `stream` (a cudaStream_t; null is the default
  /// stream) and work queued on `stream` afterwards runs after it; synchronise `stream` before
  /// reading y on the host.
  void apply_device(btt::Op op, const double* x, double* y, index_t nrhs = 1,
                    void* stream = nullptr);

  /// Global block indices of the input (output) vectors that this rank holds: its columns' or
  /// rows' blocks on grid row 0 or column 0, nothing elsewhere.
  IndexRange local_input_blocks(btt::Op op) const;
  IndexRange local_output_blocks(btt::Op op) const;

  /// Collective: changes the five-phase precision on every rank (all pass the same string).
  void set_precision(std::string_view precision);

  const Shape& shape() const { return partition_.shape(); }
  const Partition& partition() const { return partition_; }
  const Grid& grid() const { return *grid_; }
  btt::Backend backend() const {
    return device_ != nullptr ? btt::Backend::Cuda : btt::Backend::Cpu;
  }
  /// The CUDA device of this rank (Backend::Cuda), -1 on the CPU.
  int device() const;
  bool triangular() const { return triangular_; }
  const PrecisionConfig& precision() const { return precision_; }
  CommunicationPrecision communication_precision() const;
  /// This rank's times of the last apply.
  const DistributedPhaseTimes& last_phase_times() const { return times_; }
  /// Collective: the maximum over all ranks of every entry of last_phase_times().
  DistributedPhaseTimes max_phase_times() const;
  /// Bytes held on this rank: the local plan and the communication buffers.
  std::size_t memory_bytes() const;

  /// Collective: seconds per call of `collective` on `bytes` bytes of FP64 values along `axis`,
  /// with this plan's collectives and buffers in its memory space, every grid row (or column)
  /// at once as in an apply: the mean of `repetitions` calls after an untimed one, the maximum
  /// over the ranks; 0 when the axis has one rank. bus_bandwidth.hpp turns it into nccl-tests'
  /// bandwidths, to hold the communication phases of an apply against.
  double time_collective(Collective collective, Axis axis, std::size_t bytes, int repetitions);

 private:
  DistributedPlan(const Grid& grid, const Shape& shape, bool triangular,
                  std::span<const double> first_column, std::span<const double> first_row,
                  const btt::PlanOptions& options);

  bool is_root(Axis axis) const;
  int axis_size(Axis axis) const;
  index_t input_count(btt::Op op, index_t nrhs) const;
  index_t output_count(btt::Op op, index_t nrhs) const;
  /// y = op(F) x on vectors in the plan's memory space (sizes checked by the caller).
  void run(btt::Op op, const double* x, double* y, index_t nrhs);
  /// Runs `collective` and adds its seconds to `seconds` (when collectives are timed).
  template <typename Work>
  void timed(double& seconds, Work&& collective);
  /// Blocks on this rank of the input (adjoint: nd_i) or output (adjoint: nm_j) of local F/F*.
  index_t local_blocks(bool adjoint, bool input) const;
  void allocate_fp32_buffer();

  const double* receive_input(Axis axis, const double* x, index_t count);
  void apply_local(bool adjoint, const double* x, double* y, index_t nrhs);
  void allreduce_middle(Axis axis, index_t count);
  void reduce_output(Axis axis, double* local, double* y, index_t count);

  const Grid* grid_;
  Partition partition_;
  bool triangular_;
  PrecisionConfig precision_;
  index_t max_rhs_;
  bool time_collectives_ = true;  // host: always; GPU: when profiling
  std::unique_ptr<MemorySpace> space_;
  DeviceSpace* device_ = nullptr;   // space_ when it is a GPU's, else null
  std::optional<btt::Plan> local_;  // none when this rank owns no blocks
  std::unique_ptr<Collectives> collectives_;
  // Per group of max_rhs vectors: the received input, the middle of F*F / FF*, the local
  // output of non-root ranks, and the FP32 messages (only while a collective is FP32).
  SpaceArray<double> input_, middle_, output_;
  SpaceArray<float> message32_;
  DistributedPhaseTimes times_;
};

}  // namespace shiftop::distributed
