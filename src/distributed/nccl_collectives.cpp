#include "distributed/nccl_collectives.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "backend/cuda/check.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/distributed/mpi_check.hpp"

namespace shiftop::distributed {
namespace {

/// NCCL's own message about its last failure, as " (<message>)", or nothing.
std::string last_error() {
  const char* detail = ncclGetLastError(nullptr);
  return detail != nullptr && *detail != '\0' ? fmt::format(" ({})", detail) : std::string();
}

/// Throws shiftop::Error "<call> failed: <NCCL's error string> (<its last message>)".
void check_nccl(ncclResult_t result, const char* call) {
  if (result != ncclSuccess)
    fail("{} failed: {}{}", call, ncclGetErrorString(result), last_error());
}

ncclDataType_t datatype(Precision type) {
  return type == Precision::Single ? ncclFloat : ncclDouble;
}

/// The NCCL communicator of the ranks of `comm` (a grid row or column), null for a single rank:
/// rank 0 makes the unique id and broadcasts it over MPI, then every rank joins.
ncclComm* create_communicator(MPI_Comm comm, const char* name) {
  int size = 0, rank = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  if (size == 1) return nullptr;
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  // The root's outcome goes first, so that a failure there fails every rank instead of leaving
  // them waiting in ncclCommInitRank.
  int status = rank == 0 ? static_cast<int>(ncclGetUniqueId(&id)) : 0;
  check_mpi(MPI_Bcast(&status, 1, MPI_INT, 0, comm), "MPI_Bcast");
  if (status != ncclSuccess)
    fail("ncclGetUniqueId failed on the first rank of a grid {}: {}", name,
         ncclGetErrorString(static_cast<ncclResult_t>(status)));
  check_mpi(MPI_Bcast(&id, static_cast<int>(sizeof id), MPI_BYTE, 0, comm), "MPI_Bcast");
  ncclComm_t communicator = nullptr;
  const ncclResult_t result = ncclCommInitRank(&communicator, size, id, rank);
  if (result != ncclSuccess)
    fail(
        "ncclCommInitRank failed for a grid {}: {}{}; every rank of a grid row or column needs "
        "a GPU of its own (more ranks on a node than GPUs?)",
        name, ncclGetErrorString(result), last_error());
  return communicator;
}

}  // namespace

NcclCollectives::NcclCollectives(const Grid& grid, int device, void* stream) : stream_(stream) {
  // NVLink SHARP (NVLS) makes NCCL reduce in NVSwitch multicast memory. The multi-GPU device
  // machines shiftop is tested on require it off: there a program that uses NVLink multicast can
  // put the host's GPUs, which others share, out of service for a day or more. NCCL reads the
  // variable when a communicator is created; a user who wants NVLS sets it to 1 beforehand.
  if (setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0) != 0)
    fail("could not set NCCL_NVLS_ENABLE=0 in the environment");
  SHIFTOP_CUDA_CHECK(cudaSetDevice(device));
  try {
    row_ = create_communicator(grid.row_comm(), "row");
    column_ = create_communicator(grid.col_comm(), "column");
  } catch (...) {
    if (row_ != nullptr) ncclCommDestroy(row_);
    throw;
  }
}

NcclCollectives::~NcclCollectives() {
  for (ncclComm* c : {column_, row_})
    if (c != nullptr) (void)ncclCommDestroy(c);  // a destructor cannot report errors
}

// The root of every axis is rank 0 of its communicator: Grid ranks rows by j and columns by i.
/// Runs `collective(comm, stream)` on the communicator of `axis` and checks it; nothing when the
/// axis has one rank or there is nothing to send.
template <typename Collective>
void NcclCollectives::on_axis(Axis axis, std::size_t count, const char* what,
                              Collective&& collective) {
  ncclComm* comm = communicator(axis);
  if (comm == nullptr || count == 0) return;
  check_nccl(collective(comm, static_cast<cudaStream_t>(stream_)), what);
}

// Every operation is in place; NCCL reads the root's buffer only, for a broadcast, and writes
// the root's buffer only, for a reduce.

void NcclCollectives::broadcast_values(void* buffer, std::size_t count, Precision type, Axis axis) {
  on_axis(axis, count, "ncclBroadcast", [&](ncclComm* comm, cudaStream_t stream) {
    return ncclBroadcast(buffer, buffer, count, datatype(type), 0, comm, stream);
  });
}

void NcclCollectives::reduce_sum_values(void* buffer, std::size_t count, Precision type,
                                        Axis axis) {
  on_axis(axis, count, "ncclReduce", [&](ncclComm* comm, cudaStream_t stream) {
    return ncclReduce(buffer, buffer, count, datatype(type), ncclSum, 0, comm, stream);
  });
}

void NcclCollectives::allreduce_sum_values(void* buffer, std::size_t count, Precision type,
                                           Axis axis) {
  on_axis(axis, count, "ncclAllReduce", [&](ncclComm* comm, cudaStream_t stream) {
    return ncclAllReduce(buffer, buffer, count, datatype(type), ncclSum, comm, stream);
  });
}

}  // namespace shiftop::distributed
