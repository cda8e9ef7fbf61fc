// What the block-diagonal priors (Diagonal, TimeSmoothing) share: the check of their per-block
// variances and the scaling of each block by a function of its variance.
#pragma once

#include <cmath>
#include <span>
#include <string_view>
#include <vector>

#include "shiftop/core/error.hpp"
#include "shiftop/core/shape.hpp"

namespace shiftop::inverse {

/// Throws shiftop::Error unless there is at least one variance, all positive and finite, and
/// nt >= 1; `prior` names the prior in the message.
inline void check_prior_variances(const std::vector<double>& variances, index_t nt,
                                  std::string_view prior) {
  require(!variances.empty(),
          "{} prior variances: expected one value per parameter block, got none", prior);
  require(nt >= 1, "{} prior: Nt {} is not positive", prior, nt);
  for (std::size_t j = 0; j < variances.size(); ++j) {
    require(std::isfinite(variances[j]) && variances[j] > 0,
            "{} prior variance of block {} is {}: expected a positive finite value", prior, j,
            variances[j]);
  }
}

/// y[r][j][t] = scale(variance_j) * x[r][j][t] (in place when x and y are the same span).
template <typename Scale>
void scale_prior_blocks(const std::vector<double>& variances, index_t nt, std::span<const double> x,
                        std::span<double> y, index_t nrhs, Scale scale) {
  const auto nm = static_cast<index_t>(variances.size());
  for (index_t r = 0; r < nrhs; ++r) {
    for (index_t j = 0; j < nm; ++j) {
      const double s = scale(variances[j]);
      const index_t offset = (r * nm + j) * nt;
      for (index_t t = 0; t < nt; ++t)
        y[offset + t] = s * x[offset + t];
    }
  }
}

}  // namespace shiftop::inverse
