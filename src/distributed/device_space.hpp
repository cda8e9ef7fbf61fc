// The memory of one GPU as a distributed plan's memory space (memory_space.hpp): device buffers,
// FP32 message casts as CUDA kernels and the local plan's apply_device, all queued in order on a
// stream of the space's own, on which the NCCL collectives run too. Declared without CUDA types
// (streams are void*, as in btt::Plan::apply_device) so that host code includes it freely.
#pragma once

#include <cstddef>
#include <memory>

#include "shiftop/distributed/memory_space.hpp"

namespace shiftop::distributed {

class DeviceSpace : public MemorySpace {
 public:
  /// The CUDA device index.
  virtual int device() const = 0;
  /// The space's stream, a cudaStream_t.
  virtual void* stream() const = 0;
  /// Makes the space's stream wait for the work queued so far on `user` (a cudaStream_t; null
  /// is the default stream), and the reverse: `user` waits for the space's stream.
  virtual void wait_for(void* user) = 0;
  virtual void signal(void* user) = 0;
  /// Copies `count` doubles between the host and this device, queued on the space's stream.
  virtual void copy_to_device(double* device, const double* host, std::size_t count) = 0;
  virtual void copy_to_host(double* host, const double* device, std::size_t count) = 0;
};

/// The CUDA devices this process sees; 0 (not an error) when there is no driver or no GPU.
int cuda_device_count();

/// A space on `device` with a new stream; throws shiftop::Error if the device is not there.
std::unique_ptr<DeviceSpace> make_device_space(int device);

}  // namespace shiftop::distributed
