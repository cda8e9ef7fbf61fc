// The GPU runtime as the kernels see it: the warp size, the warp shuffles, the cache-hinted and
// asynchronous loads, the clusters' barrier and shared memory, the stream and event types, and
// the check after a launch. The kernels (gemv_kernels.cu, real_fft.cu, product_inverse_fft.cu,
// layout_kernels.cu) and the code that launches them use these names instead of CUDA's
// intrinsics and literal 32s, so that a HIP build swaps this header and compiles the same kernel
// files (docs/backends.md).
//
// Every wrapper is `__device__ __forceinline__` around one intrinsic: the generated code is the
// intrinsic's own.
#pragma once

#include <cooperative_groups.h>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "backend/cuda/check.hpp"

namespace shiftop::cuda {

/// Lets `kernel` launch with up to `bytes` of dynamic shared memory. The attribute is the
/// function's, not a launch's: callers pass their device's whole opt-in limit (one value from every
/// thread), never one shape's bytes, which a concurrent caller with a smaller shape would lower
/// under this one's launch.
template <class Kernel>
void allow_dynamic_shared(Kernel* kernel, std::size_t bytes) {
  SHIFTOP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(bytes)));
}

/// The stream and event handles that launches and timings take.
using stream_t = cudaStream_t;
using event_t = cudaEvent_t;

/// Threads per warp.
inline constexpr int kWarpSize = 32;
/// The mask of a warp's shuffles: every lane takes part.
inline constexpr unsigned kFullWarpMask = 0xffffffffu;

/// The `value` of lane (this lane + offset) of the whole warp (this lane's own `value` where that
/// is past the warp's last lane).
template <typename T>
__device__ __forceinline__ T warp_shuffle_down(T value, unsigned offset) {
  return __shfl_down_sync(kFullWarpMask, value, offset);
}

/// *p through the streaming cache policy (ld.global.cs: evict first, for data read once, so that
/// it does not push out of L2 what is read again). T is any type __ldcs takes, e.g. double2 or
/// float4 for one 16-byte load.
template <typename T>
__device__ __forceinline__ T load_streaming_once(const T* p) {
  return __ldcs(p);
}

/// Starts an asynchronous copy of Bytes (4, 8 or 16) bytes from global to shared memory
/// (cp.async); both addresses are Bytes-aligned. The copy is not visible until the batch that
/// holds it is committed (async_copy_commit) and waited for (async_copy_wait).
template <std::size_t Bytes>
__device__ __forceinline__ void async_copy(void* to_shared, const void* from_global) {
  __pipeline_memcpy_async(to_shared, from_global, Bytes);
}

/// Closes this thread's batch of the asynchronous copies started since the last commit.
__device__ __forceinline__ void async_copy_commit() {
  __pipeline_commit();
}

/// Waits until at most `Pending` of this thread's committed batches are still in flight: the
/// copies of all older batches have landed (only for this thread; a barrier makes them everyone's).
template <std::size_t Pending>
__device__ __forceinline__ void async_copy_wait() {
  __pipeline_wait_prior(Pending);
}

/// The rank of this thread block in its cluster (a launch in clusters of blocks that share their
/// shared memory: distributed shared memory, sm_90).
__device__ __forceinline__ unsigned cluster_block_rank() {
  return cooperative_groups::this_cluster().block_rank();
}

/// A barrier of every thread of every block of the cluster; shared-memory writes into other
/// blocks before it are visible to them after it.
__device__ __forceinline__ void cluster_sync() {
  cooperative_groups::this_cluster().sync();
}

/// The address of `local` (this block's shared memory) in the shared memory of block `rank` of the
/// cluster.
template <typename T>
__device__ __forceinline__ T* cluster_shared_of(T* local, unsigned rank) {
  return cooperative_groups::this_cluster().map_shared_rank(local, rank);
}

}  // namespace shiftop::cuda

/// After a kernel launch: a launch error (bad configuration, too much shared memory, ...) becomes
/// a shiftop::Error naming the source line, as SHIFTOP_CUDA_CHECK does for a runtime call.
#define SHIFTOP_CHECK_LAUNCH() SHIFTOP_CUDA_CHECK(cudaGetLastError())
