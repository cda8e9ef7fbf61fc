// Whether the tool runs under an MPI launcher, and MPI for the commands that then run on a process
// grid. A plain run (no launcher, no --grid) never initialises MPI.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#ifdef SHIFTOP_HAVE_MPI
#include <mpi.h>

#include "shiftop/core/shape.hpp"
#include "shiftop/distributed/grid_shape.hpp"
#endif

namespace shiftop::app {

/// True when an MPI launcher started this process: mpiexec/mpirun of Open MPI
/// (OMPI_COMM_WORLD_SIZE), of MPICH, Intel MPI or Slurm's PMI (PMI_SIZE), or a PMIx launcher
/// (PMIX_RANK).
bool launched_by_mpi();

/// What `command` on a process grid does in a shiftop built without MPI: shiftop::Error saying so.
[[noreturn]] void fail_without_mpi(std::string_view command);

/// How a run ended: status 0, or the one line to print ("shiftop: error: <message>").
struct Outcome {
  int status = 0;
  std::string message;
  bool internal = false;  ///< a bug or a failed library call ("internal error"), not bad input
};

#ifdef SHIFTOP_HAVE_MPI
class MpiSession;
#endif

/// The whole run of the tool in one process. Under an MPI launcher (in a build with MPI) it holds
/// MPI for the run, so that finish() can agree with the other ranks on who prints: a user error
/// is printed once, by the lowest rank that has it (every rank has it when the command line is
/// bad or a collective step failed; one rank alone when only that rank failed), while an
/// internal error is printed by every rank that has it, naming the rank. Without MPI, a user
/// error under a launcher is printed by the launcher's rank 0 only.
class Run {
 public:
  Run();
  ~Run();
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;
  /// Prints `outcome` where it belongs (collective under MPI) and returns its status.
  int finish(const Outcome& outcome);

 private:
#ifdef SHIFTOP_HAVE_MPI
  std::unique_ptr<MpiSession> mpi_;
#endif
};

#ifdef SHIFTOP_HAVE_MPI
/// MPI_Init_thread (MPI_THREAD_FUNNELED: plans run OpenMP threads between the calling thread's
/// MPI calls) for the lifetime of the object, then MPI_Finalize; a session made while another
/// holds MPI (the command's inside the tool's Run) uses that one. Communicators on
/// MPI_COMM_WORLD return errors instead of aborting.
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// The most ranks that share a node (MPI_COMM_TYPE_SHARED): GPUs per node for Algorithm 4.
  int ranks_per_node() const { return ranks_per_node_; }

 private:
  bool owner_ = true;
  int rank_ = 0, size_ = 1, ranks_per_node_ = 1;
};

/// The largest and the smallest `value` over the ranks of `comm` (collective).
double max_over_ranks(double value, MPI_Comm comm);
double min_over_ranks(double value, MPI_Comm comm);

/// The process grid of a run and why it was chosen.
struct GridSelection {
  distributed::GridShape shape;
  std::string reason;
};

/// The grid --grid names: "PRxPC" (the reason is "--grid"), or, for "auto" or none, the one
/// Algorithm 4 chooses for `shape` on the session's ranks (distributed::choose_grid).
GridSelection select_grid(const std::string& grid_option, const Shape& shape,
                          const MpiSession& mpi);
#endif

}  // namespace shiftop::app
