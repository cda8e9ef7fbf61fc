#include "shiftop/distributed/collective_check.hpp"

#include <algorithm>
#include <climits>

#include "shiftop/core/error.hpp"
#include "shiftop/distributed/mpi_check.hpp"

namespace shiftop::distributed {

void agree_on_failure(MPI_Comm comm, const std::optional<std::string>& local_failure) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  const int mine = local_failure ? rank : INT_MAX;
  int first = INT_MAX;
  check_mpi(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (first == INT_MAX) return;
  std::string message = rank == first ? *local_failure : std::string();  // cut at 4096 characters
  int length = static_cast<int>(std::min<std::size_t>(message.size(), 4096));
  check_mpi(MPI_Bcast(&length, 1, MPI_INT, first, comm), "MPI_Bcast");
  message.resize(static_cast<std::size_t>(length));
  check_mpi(MPI_Bcast(message.data(), length, MPI_CHAR, first, comm), "MPI_Bcast");
  fail("rank {}: {}", first, message);
}

}  // namespace shiftop::distributed
