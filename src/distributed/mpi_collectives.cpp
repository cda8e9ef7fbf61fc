#include "distributed/mpi_collectives.hpp"

#include <algorithm>
#include <climits>

#include "shiftop/distributed/mpi_check.hpp"

namespace shiftop::distributed {
namespace {

MPI_Datatype datatype(Precision type) {
  return type == Precision::Single ? MPI_FLOAT : MPI_DOUBLE;
}

// MPI counts are int; larger buffers go in pieces of at most INT_MAX values. A count of 0 makes
// no call (the same on every rank of the axis, which all have the same count).
template <typename Call>
void in_pieces(void* buffer, std::size_t count, Precision type, Call&& call) {
  const std::size_t value_bytes = type == Precision::Single ? sizeof(float) : sizeof(double);
  auto* bytes = static_cast<unsigned char*>(buffer);
  while (count > 0) {
    const std::size_t piece = std::min<std::size_t>(count, INT_MAX);
    call(bytes, static_cast<int>(piece));
    bytes += piece * value_bytes;
    count -= piece;
  }
}

}  // namespace

// The root of every axis is rank 0 of its communicator: Grid ranks rows by j and columns by i.

void MpiCollectives::broadcast_values(void* buffer, std::size_t count, Precision type, Axis axis) {
  const MPI_Comm comm = axis == Axis::Row ? grid_->row_comm() : grid_->col_comm();
  in_pieces(buffer, count, type, [&](void* piece, int n) {
    check_mpi(MPI_Bcast(piece, n, datatype(type), 0, comm), "MPI_Bcast");
  });
}

void MpiCollectives::reduce_sum_values(void* buffer, std::size_t count, Precision type, Axis axis) {
  const MPI_Comm comm = axis == Axis::Row ? grid_->row_comm() : grid_->col_comm();
  const bool root = (axis == Axis::Row ? grid_->col() : grid_->row()) == 0;
  in_pieces(buffer, count, type, [&](void* piece, int n) {
    check_mpi(MPI_Reduce(root ? MPI_IN_PLACE : piece, root ? piece : nullptr, n, datatype(type),
                         MPI_SUM, 0, comm),
              "MPI_Reduce");
  });
}

void MpiCollectives::allreduce_sum_values(void* buffer, std::size_t count, Precision type,
                                          Axis axis) {
  const MPI_Comm comm = axis == Axis::Row ? grid_->row_comm() : grid_->col_comm();
  in_pieces(buffer, count, type, [&](void* piece, int n) {
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, piece, n, datatype(type), MPI_SUM, comm),
              "MPI_Allreduce");
  });
}

}  // namespace shiftop::distributed
