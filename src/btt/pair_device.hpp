// The GPU memory of an OperatorPair (include/shiftop/btt/pair.hpp): the middle vector of one group
// of right-hand sides, and for calls on host memory the staging of a group's input and output.
// Defined in btt/cuda/pair_device.cu; a build without CUDA links
// btt/cuda/pair_device_unavailable.cpp, which refuses.
#pragma once

#include <cstddef>
#include <memory>

#include "shiftop/gpu/context.hpp"

namespace shiftop::btt {

class PairDevice {
 public:
  virtual ~PairDevice() = default;
  virtual double* middle() = 0;
  virtual double* input() = 0;
  virtual double* output() = 0;
  /// Copies `count` values from the host to input(), and from output() to the host, on the
  /// default stream: ordered with plans applied with stream nullptr; download returns when the
  /// values are on the host.
  virtual void upload(const double* host, std::size_t count) = 0;
  virtual void download(double* host, std::size_t count) = 0;
};

/// Buffers of `middle`, `input` and `output` doubles on the device of `context` (counted in its
/// allocated_bytes()), or on CUDA device `device` when `context` is null.
std::unique_ptr<PairDevice> make_pair_device(const gpu::Context* context, int device,
                                             std::size_t middle, std::size_t input,
                                             std::size_t output);

}  // namespace shiftop::btt
