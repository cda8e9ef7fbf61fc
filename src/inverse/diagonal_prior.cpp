#include <cmath>

#include "inverse/prior_variances.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/inverse/prior.hpp"

namespace shiftop::inverse {

DiagonalPrior::DiagonalPrior(std::vector<double> variances, index_t nt)
    : variances_(std::move(variances)), nt_(nt) {
  check_prior_variances(variances_, nt_, "diagonal");
}

void DiagonalPrior::apply_covariance(std::span<const double> x, std::span<double> y,
                                     index_t nrhs) const {
  check_sizes(x, y, nrhs, "apply_covariance");
  scale_prior_blocks(variances_, nt_, x, y, nrhs, [](double v) { return v; });
}

void DiagonalPrior::apply_precision(std::span<const double> x, std::span<double> y,
                                    index_t nrhs) const {
  check_sizes(x, y, nrhs, "apply_precision");
  scale_prior_blocks(variances_, nt_, x, y, nrhs, [](double v) { return 1 / v; });
}

void DiagonalPrior::apply_sqrt(std::span<const double> x, std::span<double> y, index_t nrhs) const {
  check_sizes(x, y, nrhs, "apply_sqrt");
  scale_prior_blocks(variances_, nt_, x, y, nrhs, [](double v) { return std::sqrt(v); });
}

std::vector<double> DiagonalPrior::circulant_spectrum(index_t length) const {
  require(length >= 2 * nt_ && length % 2 == 0,
          "diagonal prior circulant_spectrum: length {} is not an even number >= 2*Nt = {}", length,
          2 * nt_);
  const index_t nm = blocks();
  std::vector<double> spectrum(static_cast<std::size_t>((length / 2 + 1) * nm));
  for (index_t w = 0; w <= length / 2; ++w) {
    for (index_t j = 0; j < nm; ++j)
      spectrum[w * nm + j] = variances_[j];
  }
  return spectrum;
}

}  // namespace shiftop::inverse
