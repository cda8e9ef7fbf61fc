// A check of the inverse layer's inputs: data vectors and prior means with NaN or infinity would
// otherwise surface as misleading errors deep inside CG (r.z = nan) or LAPACK (info < 0).
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
#include <string_view>

#include "shiftop/core/error.hpp"

namespace shiftop::inverse {

/// Throws shiftop::Error naming `what` and the first entry that is NaN or infinite.
inline void require_finite(std::span<const double> values, std::string_view what) {
  const auto bad =
      std::find_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); });
  if (bad != values.end())
    fail("{} value {} is {}: expected finite numbers", what, bad - values.begin(), *bad);
}

}  // namespace shiftop::inverse
