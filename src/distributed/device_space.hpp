// The memory of one GPU as a distributed plan's memory space (memory_space.hpp): device buffers,
// FP32 message casts as CUDA kernels and the local plan's apply_device, all queued in order on the
// stream of one gpu::Context, which the local plan and the NCCL collectives share. Declared without
// CUDA types (streams are void*, as in btt::Plan::apply_device) so that host code includes it
// freely.
#pragma once

#include <cstddef>
#include <memory>

#include "shiftop/distributed/memory_space.hpp"
#include "shiftop/gpu/context.hpp"

namespace shiftop::distributed {

class DeviceSpace : public MemorySpace {
 public:
  /// The context whose stream orders all work in this space (the local plan runs on it too).
  virtual const std::shared_ptr<gpu::Context>& context() const = 0;
  /// The context's device and stream (a cudaStream_t).
  virtual int device() const = 0;
  virtual void* stream() const = 0;
  /// gpu::Context::wait_for and signal: orders the space's stream after `user` and back.
  virtual void wait_for(void* user) = 0;
  virtual void signal(void* user) = 0;
  /// Copies `count` doubles between the host and this device, queued on the space's stream.
  virtual void copy_to_device(double* device, const double* host, std::size_t count) = 0;
  virtual void copy_to_host(double* host, const double* device, std::size_t count) = 0;
};

/// A space on the device of `context`, queuing its work on the context's stream.
std::unique_ptr<DeviceSpace> make_device_space(std::shared_ptr<gpu::Context> context);

}  // namespace shiftop::distributed
