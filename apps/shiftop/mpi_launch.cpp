#include "mpi_launch.hpp"

#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>

#include "shiftop/core/error.hpp"
#ifdef SHIFTOP_HAVE_MPI
#include "shiftop/distributed/grid_choice.hpp"
#include "shiftop/distributed/mpi_check.hpp"
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

namespace {

void print(const Outcome& outcome, int rank) {
  if (outcome.internal && rank >= 0)
    fmt::print(stderr, "shiftop: internal error on rank {}: {}\n", rank, outcome.message);
  else
    fmt::print(stderr, "shiftop: {}: {}\n", outcome.internal ? "internal error" : "error",
               outcome.message);
}

#ifdef SHIFTOP_HAVE_MPI
// How long a failed rank waits for the others to finish before it prints its own error and
// aborts the job: a rank that failed alone must not wait for ranks blocked in a collective.
constexpr auto kAgreementTimeout = std::chrono::seconds(10);

// The lowest rank of MPI_COMM_WORLD whose value is `mine`'s "has a user error" (size if none),
// or nothing when a failed rank gave up waiting. On a duplicate of MPI_COMM_WORLD, so that it
// never matches a collective of the command that another rank is still in.
std::optional<int> lowest_rank_with_user_error(const MpiSession& mpi, const Outcome& outcome) {
  MPI_Comm comm = MPI_COMM_NULL;
  if (MPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) return std::nullopt;
  const int mine = outcome.status != 0 && !outcome.internal ? mpi.rank() : mpi.size();
  int lowest = mpi.size();
  MPI_Request request = MPI_REQUEST_NULL;
  if (MPI_Iallreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, comm, &request) != MPI_SUCCESS)
    return std::nullopt;
  const auto deadline = std::chrono::steady_clock::now() + kAgreementTimeout;
  for (int done = 0; !done;) {
    if (MPI_Test(&request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return std::nullopt;
    if (!done && outcome.status != 0 && std::chrono::steady_clock::now() > deadline)
      return std::nullopt;
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  MPI_Comm_free(&comm);
  return lowest;
}
#endif

}  // namespace

#ifdef SHIFTOP_HAVE_MPI
Run::Run() {
  if (!launched_by_mpi()) return;
  try {
    mpi_ = std::make_unique<MpiSession>();
  } catch (const std::exception&) {
    // Runs as a plain process; a command that needs MPI fails (and says why) on its own.
  }
}

Run::~Run() = default;

int Run::finish(const Outcome& outcome) {
  if (!mpi_) {
    if (outcome.status != 0) print(outcome, -1);
    return outcome.status;
  }
  const std::optional<int> lowest = lowest_rank_with_user_error(*mpi_, outcome);
  if (outcome.status == 0) return 0;
  if (!lowest) {
    // The other ranks did not all finish: this rank's error is its own. Print it, naming the
    // rank, and end the job as a failed rank without MPI_Finalize would.
    print(outcome.internal
              ? outcome
              : Outcome{.status = outcome.status,
                        .message = fmt::format("rank {}: {}", mpi_->rank(), outcome.message),
                        .internal = false},
          mpi_->rank());
    MPI_Abort(MPI_COMM_WORLD, outcome.status);
  }
  if (outcome.internal || *lowest == mpi_->rank()) print(outcome, mpi_->rank());
  return outcome.status;
}
#else
// The launcher's rank of this process, from its environment (-1: none set).
int launcher_rank() {
  for (const char* variable : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char* value = std::getenv(variable)) return std::atoi(value);
  return -1;
}

Run::Run() = default;
Run::~Run() = default;

int Run::finish(const Outcome& outcome) {
  // Without MPI the processes cannot agree on who prints: each prints its own error, so that an
  // error of one rank alone is never lost.
  const int rank = launcher_rank();
  if (outcome.status == 0) return 0;
  if (outcome.internal || rank <= 0)
    print(outcome, rank);
  else
    print({.status = outcome.status,
           .message = fmt::format("rank {}: {}", rank, outcome.message),
           .internal = false},
          rank);
  return outcome.status;
}
#endif

#ifdef SHIFTOP_HAVE_MPI
MpiSession::MpiSession() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  owner_ = initialized == 0;
  int provided = MPI_THREAD_FUNNELED;
  if (owner_)
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
    if (owner_) MPI_Finalize();
    throw;
  }
}

MpiSession::~MpiSession() {
  if (owner_) MPI_Finalize();
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
