// Runs one operation of a plan on its backend for timing: host arrays on the CPU, device arrays on
// the GPU (so that timings exclude host-device copies), waiting for completion. Shared by
// `shiftop bench` and `shiftop tune`.
#pragma once

#include <memory>
#include <vector>

#include "shiftop/btt/plan.hpp"

namespace shiftop::app {

class Runner {
 public:
  /// Keeps references to plan, x and y. On the GPU, x is uploaded once and the device output is
  /// poisoned with NaN so that unwritten elements show in result().
  Runner(btt::Plan& plan, btt::Op op, const std::vector<double>& x, std::vector<double>& y,
         index_t nrhs, bool cuda, int device);
  ~Runner();
  void apply();
  /// The output of the last apply, in host memory (y).
  const std::vector<double>& result();

 private:
  struct DeviceBuffers;
  btt::Plan& plan_;
  btt::Op op_;
  const std::vector<double>& x_;
  std::vector<double>& y_;
  index_t nrhs_;
  int device_;
  std::unique_ptr<DeviceBuffers> device_buffers_;
};

}  // namespace shiftop::app
