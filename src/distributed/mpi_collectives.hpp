// Collectives over the row and column communicators of a Grid with MPI, on host buffers. Each
// call is blocking: the result is in the buffer when it returns.
#pragma once

#include "shiftop/distributed/collectives.hpp"
#include "shiftop/distributed/grid.hpp"

namespace shiftop::distributed {

class MpiCollectives final : public Collectives {
 public:
  /// `grid` must outlive this object.
  explicit MpiCollectives(const Grid& grid) : grid_(&grid) {}

 protected:
  void broadcast_values(void* buffer, std::size_t count, Precision type, Axis axis) override;
  void reduce_sum_values(void* buffer, std::size_t count, Precision type, Axis axis) override;
  void allreduce_sum_values(void* buffer, std::size_t count, Precision type, Axis axis) override;

 private:
  const Grid* grid_;
};

}  // namespace shiftop::distributed
