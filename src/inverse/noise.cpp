#include "shiftop/inverse/noise.hpp"

#include <cmath>
#include <string_view>

#include "shiftop/core/error.hpp"

namespace shiftop::inverse {
namespace {

// y_i[t] = scale(variance_i) x_i[t] for every right-hand side.
template <typename Scale>
void scale_blocks(const std::vector<double>& variances, index_t nt, std::span<const double> x,
                  std::span<double> y, index_t nrhs, std::string_view what, Scale scale) {
  const auto nd = static_cast<index_t>(variances.size());
  const auto expected = static_cast<std::size_t>(nrhs * nd * nt);
  require(nrhs >= 1, "GaussianNoise::{}: nrhs {} is not positive", what, nrhs);
  require(x.size() == expected && y.size() == expected,
          "GaussianNoise::{}: x holds {} and y {} values, expected nrhs*Nd*Nt = {}*{}*{} = {}",
          what, x.size(), y.size(), nrhs, nd, nt, expected);
  for (index_t r = 0; r < nrhs; ++r) {
    for (index_t i = 0; i < nd; ++i) {
      const double s = scale(variances[i]);
      const index_t offset = (r * nd + i) * nt;
      for (index_t t = 0; t < nt; ++t)
        y[offset + t] = s * x[offset + t];
    }
  }
}

}  // namespace

GaussianNoise::GaussianNoise(std::vector<double> variances, index_t nt)
    : variances_(std::move(variances)), nt_(nt) {
  require(!variances_.empty(), "noise variances: expected one value per sensor, got none");
  require(nt_ >= 1, "noise: Nt {} is not positive", nt_);
  for (std::size_t i = 0; i < variances_.size(); ++i) {
    require(std::isfinite(variances_[i]) && variances_[i] > 0,
            "noise variance of sensor {} is {}: expected a positive finite value", i,
            variances_[i]);
  }
}

void GaussianNoise::apply(std::span<const double> x, std::span<double> y, index_t nrhs) const {
  scale_blocks(variances_, nt_, x, y, nrhs, "apply", [](double v) { return v; });
}

void GaussianNoise::apply_inverse(std::span<const double> x, std::span<double> y,
                                  index_t nrhs) const {
  scale_blocks(variances_, nt_, x, y, nrhs, "apply_inverse", [](double v) { return 1 / v; });
}

void GaussianNoise::apply_sqrt(std::span<const double> x, std::span<double> y, index_t nrhs) const {
  scale_blocks(variances_, nt_, x, y, nrhs, "apply_sqrt", [](double v) { return std::sqrt(v); });
}

}  // namespace shiftop::inverse
