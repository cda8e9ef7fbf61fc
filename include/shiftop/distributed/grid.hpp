// shiftop::distributed::Grid: pr x pc MPI ranks as a 2D process grid (Venkat et al., section 3.2),
// with the communicators of its rows and columns and each rank's place on its node.
//
// Ranks are laid out column-major, as in FFTMatvec: world rank w is grid rank (w % pr, w / pr),
// so the pr ranks of a grid column are consecutive. With ranks packed k to a node, a column then
// lies inside one node when pr | k and is made of whole nodes when k | pr: the node placement
// that Algorithm 4 (grid_choice.hpp) reasons about.
#pragma once

#include <mpi.h>

#include "shiftop/distributed/grid_shape.hpp"

namespace shiftop::distributed {

class Grid {
 public:
  /// Collective over `comm`, which must have exactly shape.size() ranks, every one passing the
  /// same shape (else shiftop::Error on every rank). MPI must be initialised, with at least
  /// MPI_THREAD_FUNNELED: plans run OpenMP threads between the calling thread's MPI calls. The
  /// grid works on its own duplicate of `comm`; `comm` may be freed afterwards.
  explicit Grid(GridShape shape, MPI_Comm comm = MPI_COMM_WORLD);
  ~Grid();
  Grid(const Grid&) = delete;
  Grid& operator=(const Grid&) = delete;
  Grid(Grid&& other) noexcept;
  Grid& operator=(Grid&& other) noexcept;

  const GridShape& shape() const { return shape_; }
  /// This rank in the grid's communicator.
  int rank() const { return rank_; }
  int size() const { return shape_.size(); }
  /// Grid coordinates (i, j) of this rank: row i in [0, pr), column j in [0, pc).
  int row() const { return row_; }
  int col() const { return col_; }
  /// Grid row 0 holds the parameter vectors, grid column 0 the data vectors (eqs. 13-14).
  bool holds_parameters() const { return row_ == 0; }
  bool holds_data() const { return col_ == 0; }

  /// All ranks of the grid.
  MPI_Comm comm() const { return comm_; }
  /// The pc ranks of this rank's grid row, ranked by column j (rank (i, 0) is 0).
  MPI_Comm row_comm() const { return row_comm_; }
  /// The pr ranks of this rank's grid column, ranked by row i (rank (0, j) is 0).
  MPI_Comm col_comm() const { return col_comm_; }

  /// This rank among the ranks of the grid that share its node (MPI_COMM_TYPE_SHARED), and how
  /// many those are: rank k of a node drives GPU k.
  int node_rank() const { return node_rank_; }
  int node_size() const { return node_size_; }

 private:
  void release() noexcept;

  GridShape shape_;
  int rank_ = 0, row_ = 0, col_ = 0, node_rank_ = 0, node_size_ = 1;
  MPI_Comm comm_ = MPI_COMM_NULL, row_comm_ = MPI_COMM_NULL, col_comm_ = MPI_COMM_NULL;
};

}  // namespace shiftop::distributed
