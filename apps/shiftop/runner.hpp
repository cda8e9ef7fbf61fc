// Runs one operation of a plan on its backend for timing: host arrays on the CPU, device arrays on
// the GPU (so that timings exclude host-device copies), waiting for completion. One runner serves
// every plan with apply(op, x, y, nrhs) and apply_device(op, x, y, nrhs): btt::Plan in
// `shiftop bench` and `shiftop tune`, distributed::DistributedPlan in `shiftop bench` on a process
// grid. Also what those commands (and `shiftop demo`) time and compare results with.
#pragma once

#include <cmath>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "shiftop/btt/plan.hpp"
#include "shiftop/core/timer.hpp"

namespace shiftop::app {

class Runner {
 public:
  /// Keeps references to plan, x and y. On a GPU backend, x is uploaded once to `device` and the
  /// device output is poisoned with NaN so that unwritten elements show in result(); an empty x
  /// or y (a rank of a process grid that holds none of the vectors) stays a null pointer.
  template <typename Plan>
  Runner(Plan& plan, btt::Op op, const std::vector<double>& x, std::vector<double>& y, index_t nrhs,
         btt::Backend backend, int device)
      : Runner(
            x, y, backend, device, [&plan, op, &x, &y, nrhs] { plan.apply(op, x, y, nrhs); },
            [&plan, op, nrhs](const double* device_x, double* device_y) {
              plan.apply_device(op, device_x, device_y, nrhs);
            }) {}
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  /// One operation, waited for.
  void apply();
  /// Seconds of one apply().
  double timed_apply() {
    Stopwatch watch;
    apply();
    return watch.lap();
  }
  /// max(count, 1) untimed applies, then their output: result().
  const std::vector<double>& warm_up(int count);
  /// The output of the last apply, in host memory (y).
  const std::vector<double>& result();

 private:
  using HostApply = std::function<void()>;
  using DeviceApply = std::function<void(const double*, double*)>;
  Runner(const std::vector<double>& x, std::vector<double>& y, btt::Backend backend, int device,
         HostApply host_apply, DeviceApply device_apply);

  struct DeviceBuffers;
  std::vector<double>& y_;
  int device_;
  HostApply host_apply_;
  DeviceApply device_apply_;
  std::unique_ptr<DeviceBuffers> device_buffers_;
};

/// Median seconds of `repetitions` calls of f, each timed alone.
template <typename F>
double median_seconds(int repetitions, F&& f) {
  std::vector<double> seconds;
  for (int k = 0; k < repetitions; ++k) {
    Stopwatch watch;
    f();
    seconds.push_back(watch.lap());
  }
  return median(seconds);
}

/// Whether every value is finite.
bool all_finite(std::span<const double> values);

/// The squared 2-norms a result is compared by: of a - reference and of the reference.
struct SquaredNorms {
  double difference = 0, reference = 0;
  /// ||a - reference|| / ||reference||.
  double relative() const { return std::sqrt(difference / reference); }
};
SquaredNorms squared_norms(std::span<const double> a, std::span<const double> reference);

/// ||a - reference|| / ||reference|| over the elements of `reference`.
inline double relative_difference(std::span<const double> a, std::span<const double> reference) {
  return squared_norms(a, reference).relative();
}

}  // namespace shiftop::app
