#include "shiftop/distributed/grid.hpp"

#include <utility>

#include "shiftop/core/error.hpp"
#include "shiftop/distributed/mpi_check.hpp"

namespace shiftop::distributed {

Grid::Grid(GridShape shape, MPI_Comm comm) : shape_(shape) {
  int initialized = 0;
  check_mpi(MPI_Initialized(&initialized), "MPI_Initialized");
  require(initialized, "MPI is not initialised: call MPI_Init_thread before creating a Grid");
  require(shape.rows >= 1 && shape.cols >= 1,
          "invalid process grid {}: rows and columns must be positive", shape.str());
  int size = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  require(size == shape.size(), "process grid {} needs {} MPI ranks, the communicator has {}",
          shape.str(), shape.size(), size);
  try {
    check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
    check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    // The largest and the smallest rows over the ranks agree only if all ranks agree (the
    // columns follow: rows * cols is the communicator's size on every rank).
    const int mine[2] = {shape.rows, -shape.rows};
    int extremes[2] = {0, 0};
    check_mpi(MPI_Allreduce(mine, extremes, 2, MPI_INT, MPI_MAX, comm_), "MPI_Allreduce");
    require(extremes[0] == -extremes[1],
            "the ranks disagree on the process grid: this rank asked for {}, every rank must pass "
            "the same shape",
            shape.str());
    row_ = rank_ % shape.rows;
    col_ = rank_ / shape.rows;
    check_mpi(MPI_Comm_split(comm_, row_, col_, &row_comm_), "MPI_Comm_split (grid rows)");
    check_mpi(MPI_Comm_split(comm_, col_, row_, &col_comm_), "MPI_Comm_split (grid columns)");
    MPI_Comm node = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
              "MPI_Comm_split_type (node)");
    const int rank_code = MPI_Comm_rank(node, &node_rank_);
    const int size_code = MPI_Comm_size(node, &node_size_);
    check_mpi(MPI_Comm_free(&node), "MPI_Comm_free (node)");
    check_mpi(rank_code, "MPI_Comm_rank (node)");
    check_mpi(size_code, "MPI_Comm_size (node)");
  } catch (...) {
    release();
    throw;
  }
}

Grid::~Grid() {
  release();
}

Grid::Grid(Grid&& other) noexcept
    : shape_(other.shape_),
      rank_(other.rank_),
      row_(other.row_),
      col_(other.col_),
      node_rank_(other.node_rank_),
      node_size_(other.node_size_),
      comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      row_comm_(std::exchange(other.row_comm_, MPI_COMM_NULL)),
      col_comm_(std::exchange(other.col_comm_, MPI_COMM_NULL)) {}

Grid& Grid::operator=(Grid&& other) noexcept {
  if (this != &other) {
    release();
    shape_ = other.shape_;
    rank_ = other.rank_;
    row_ = other.row_;
    col_ = other.col_;
    node_rank_ = other.node_rank_;
    node_size_ = other.node_size_;
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    row_comm_ = std::exchange(other.row_comm_, MPI_COMM_NULL);
    col_comm_ = std::exchange(other.col_comm_, MPI_COMM_NULL);
  }
  return *this;
}

// MPI_Comm_free is collective: every rank destroys its Grid. After MPI_Finalize (a Grid that
// outlives MPI) there is nothing left to free. A destructor cannot report errors.
void Grid::release() noexcept {
  int finalized = 0;
  if (MPI_Finalized(&finalized) != MPI_SUCCESS || finalized) return;
  for (MPI_Comm* c : {&col_comm_, &row_comm_, &comm_})
    if (*c != MPI_COMM_NULL) (void)MPI_Comm_free(c);
}

}  // namespace shiftop::distributed
