// Collectives over the row and column communicators of a Grid with NCCL, on device buffers of one
// GPU per rank (no host staging). Each call is queued on the stream given at construction and
// returns at once: its result is there for the work queued after it on that stream, and for the
// host once the stream is synchronised.
#pragma once

#include "shiftop/distributed/collectives.hpp"
#include "shiftop/distributed/grid.hpp"

struct ncclComm;  // nccl.h: ncclComm_t is ncclComm*

namespace shiftop::distributed {

class NcclCollectives final : public Collectives {
 public:
  /// Collective over the grid: every rank creates the NCCL communicators of its grid row and
  /// grid column (those of more than one rank) from their MPI communicators, on CUDA `device`,
  /// and queues the collectives on `stream` (a cudaStream_t of that device). `grid` must outlive
  /// this object. Sets NCCL_NVLS_ENABLE=0 unless the environment sets it.
  NcclCollectives(const Grid& grid, int device, void* stream);
  ~NcclCollectives() override;
  NcclCollectives(const NcclCollectives&) = delete;
  NcclCollectives& operator=(const NcclCollectives&) = delete;

 protected:
  void broadcast_values(void* buffer, std::size_t count, Precision type, Axis axis) override;
  void reduce_sum_values(void* buffer, std::size_t count, Precision type, Axis axis) override;
  void allreduce_sum_values(void* buffer, std::size_t count, Precision type, Axis axis) override;

 private:
  /// The communicator of `axis`, null when the axis has one rank (every collective is then a
  /// no-op: the root's buffer already holds the result).
  ncclComm* communicator(Axis axis) const { return axis == Axis::Row ? row_ : column_; }
  template <typename Collective>
  void on_axis(Axis axis, std::size_t count, const char* what, Collective&& collective);

  void* stream_;
  ncclComm* row_ = nullptr;
  ncclComm* column_ = nullptr;
};

}  // namespace shiftop::distributed
