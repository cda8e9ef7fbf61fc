#include "mpi_launch.hpp"

#include <cstdlib>

#include "shiftop/core/error.hpp"
#ifdef SHIFTOP_HAVE_MPI
#include "distributed/mpi_check.hpp"
#include "shiftop/distributed/grid_choice.hpp"
#endif

namespace shiftop::app {

bool launched_by_mpi() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(variable) != nullptr) return true;
  return false;
}

void fail_without_mpi(std::string_view command) {
  fail(
      "{} on a process grid (--grid, or under mpiexec): this shiftop was built without MPI; "
      "install an MPI library (libopenmpi-dev) and rebuild",
      command);
}

#ifdef SHIFTOP_HAVE_MPI
MpiSession::MpiSession() {
  int provided = 0;
  require(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) == MPI_SUCCESS,
          "MPI_Init_thread failed");
  try {
    require(provided >= MPI_THREAD_FUNNELED,
            "the MPI library gives thread level {}, shiftop needs MPI_THREAD_FUNNELED", provided);
    distributed::check_mpi(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN),
                           "MPI_Comm_set_errhandler");
    distributed::check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    distributed::check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
    MPI_Comm node = MPI_COMM_NULL;
    distributed::check_mpi(
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
        "MPI_Comm_split_type");
    int node_size = 1;
    const int size_code = MPI_Comm_size(node, &node_size);
    distributed::check_mpi(MPI_Comm_free(&node), "MPI_Comm_free");
    distributed::check_mpi(size_code, "MPI_Comm_size");
    distributed::check_mpi(
        MPI_Allreduce(&node_size, &ranks_per_node_, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD),
        "MPI_Allreduce");
  } catch (...) {
    MPI_Finalize();
    throw;
  }
}

MpiSession::~MpiSession() {
  MPI_Finalize();
}

double max_over_ranks(double value, MPI_Comm comm) {
  distributed::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, comm),
                         "MPI_Allreduce");
  return value;
}

double min_over_ranks(double value, MPI_Comm comm) {
  distributed::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MIN, comm),
                         "MPI_Allreduce");
  return value;
}

GridSelection select_grid(const std::string& grid_option, const Shape& shape,
                          const MpiSession& mpi) {
  if (!grid_option.empty() && grid_option != "auto")
    return {distributed::GridShape::parse(grid_option), "--grid"};
  const distributed::GridChoice choice =
      distributed::choose_grid(shape, mpi.size(), mpi.ranks_per_node());
  return {choice.grid, choice.reason};
}
#endif

}  // namespace shiftop::app
