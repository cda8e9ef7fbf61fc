// Standard normal numbers from a seed, the same sequence on every platform and backend:
// std::normal_distribution's algorithm is left to each standard library, so posterior samples are
// drawn instead from std::mt19937_64 (whose output the standard fixes) through the Box-Muller
// transform.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <span>

namespace shiftop::inverse {

class StandardNormal {
 public:
  explicit StandardNormal(std::uint64_t seed) : engine_(seed) {}

  /// Fills `values` with independent N(0, 1) numbers, continuing the sequence.
  void fill(std::span<double> values) {
    for (double& v : values)
      v = next();
  }

 private:
  // A uniform number in (0, 1): the top 53 bits of one draw, offset by half a step.
  double uniform() { return (static_cast<double>(engine_() >> 11) + 0.5) * 0x1.0p-53; }
  double next() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double radius = std::sqrt(-2 * std::log(uniform()));
    const double angle = 2 * std::numbers::pi * uniform();
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return radius * std::cos(angle);
  }

  std::mt19937_64 engine_;
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace shiftop::inverse
