// Wall-clock timing and medians for benchmarks and per-phase breakdowns.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace shiftop {

class Stopwatch {
 public:
  Stopwatch() : start_(Clock::now()) {}
  /// Seconds since construction or the last lap(), and restarts.
  double lap() {
    const auto now = Clock::now();
    const double s = std::chrono::duration<double>(now - start_).count();
    start_ = now;
    return s;
  }
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
};

inline double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  if (values.size() % 2 == 1) return *mid;
  return 0.5 * (*mid + *std::max_element(values.begin(), mid));
}

}  // namespace shiftop
