#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>

#include "inverse/prior_variances.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/inverse/prior.hpp"

namespace shiftop::inverse {
namespace {

// T's plan: a general (1, 1, Nt) Toeplitz plan whose first column and first row are both
// rho^k, k = 0..Nt-1.
std::shared_ptr<btt::Plan> make_time_plan(double rho, index_t nt, const btt::PlanOptions& options) {
  std::vector<double> lags(static_cast<std::size_t>(nt));
  for (index_t k = 0; k < nt; ++k)
    lags[k] = std::pow(rho, static_cast<double>(k));
  return std::make_shared<btt::Plan>(
      btt::Plan::create_general(lags, lags, Shape{1, 1, nt}, options));
}

}  // namespace

TimeSmoothingPrior::TimeSmoothingPrior(std::vector<double> variances, double correlation_steps,
                                       index_t nt, const btt::PlanOptions& options)
    : variances_(std::move(variances)), correlation_steps_(correlation_steps), nt_(nt) {
  check_prior_variances(variances_, nt_, "smoothing");
  require(std::isfinite(correlation_steps_) && correlation_steps_ > 0,
          "smoothing prior correlation steps {}: expected a positive finite number of time steps",
          correlation_steps_);
  rho_ = std::exp(-1 / correlation_steps_);
  require(rho_ < 1,
          "smoothing prior correlation steps {}: too long, exp(-1/steps) rounds to 1 (T is "
          "singular)",
          correlation_steps_);
  time_plan_ = make_time_plan(rho_, nt_, options);
}

void TimeSmoothingPrior::apply_covariance(std::span<const double> x, std::span<double> y,
                                          index_t nrhs) const {
  check_sizes(x, y, nrhs, "apply_covariance");
  // T on each of the nrhs*Nm series (they are contiguous in SOTI), then the variances.
  time_plan_->apply(btt::Op::F, x, y, nrhs * blocks());
  scale_prior_blocks(variances_, nt_, y, y, nrhs, [](double v) { return v; });
}

void TimeSmoothingPrior::apply_precision(std::span<const double> x, std::span<double> y,
                                         index_t nrhs) const {
  check_sizes(x, y, nrhs, "apply_precision");
  // x^T T^{-1} x = x_0^2 + sum_{t>=1} (x_t - rho x_{t-1})^2 / (1-rho^2) (the AR(1) recursion),
  // so T^{-1} is tridiagonal: -rho/(1-rho^2) off the diagonal, 1/(1-rho^2) at both ends,
  // (1+rho^2)/(1-rho^2) inside; 1 when Nt = 1.
  const double c = 1 / (1 - rho_ * rho_);
  const double end = nt_ == 1 ? 1.0 : c;
  const double inside = (1 + rho_ * rho_) * c;
  const double off = -rho_ * c;
  for (index_t s = 0; s < nrhs * blocks(); ++s) {
    const double* xs = x.data() + s * nt_;
    double* ys = y.data() + s * nt_;
    for (index_t t = 0; t < nt_; ++t) {
      const double diagonal = (t == 0 || t == nt_ - 1) ? end : inside;
      double value = diagonal * xs[t];
      if (t > 0) value += off * xs[t - 1];
      if (t + 1 < nt_) value += off * xs[t + 1];
      ys[t] = value;
    }
  }
  scale_prior_blocks(variances_, nt_, y, y, nrhs, [](double v) { return 1 / v; });
}

void TimeSmoothingPrior::apply_sqrt(std::span<const double> x, std::span<double> y,
                                    index_t nrhs) const {
  check_sizes(x, y, nrhs, "apply_sqrt");
  // y = L x with the AR(1) recursion y_0 = x_0, y_t = rho y_{t-1} + sqrt(1-rho^2) x_t:
  // Cov(y_s, y_t) = rho^|s-t| for x ~ N(0, I), so L L^T = T.
  const double innovation = std::sqrt(1 - rho_ * rho_);
  for (index_t s = 0; s < nrhs * blocks(); ++s) {
    const double* xs = x.data() + s * nt_;
    double* ys = y.data() + s * nt_;
    ys[0] = xs[0];
    for (index_t t = 1; t < nt_; ++t)
      ys[t] = rho_ * ys[t - 1] + innovation * xs[t];
  }
  scale_prior_blocks(variances_, nt_, y, y, nrhs, [](double v) { return std::sqrt(v); });
}

std::vector<double> TimeSmoothingPrior::circulant_spectrum(index_t length) const {
  require(length >= 2 * nt_ && length % 2 == 0,
          "smoothing prior circulant_spectrum: length {} is not an even number >= 2*Nt = {}",
          length, 2 * nt_);
  // lambda_w = sum_k rho^min(k, L-k) e^{-i theta k}, theta = 2 pi w / L, summed in closed form:
  // 1 + 2 Re sum_{k=1}^{n-1} z^k + rho^n (-1)^w with z = rho e^{i theta}, n = L/2.
  const index_t n = length / 2;
  const double floor = (1 - rho_) / (1 + rho_);
  const double rho_n = std::pow(rho_, static_cast<double>(n));
  const index_t nm = blocks();
  std::vector<double> spectrum(static_cast<std::size_t>((n + 1) * nm));
  for (index_t w = 0; w <= n; ++w) {
    const double theta =
        2 * std::numbers::pi * static_cast<double>(w) / static_cast<double>(length);
    const std::complex<double> z = std::polar(rho_, theta);
    const std::complex<double> geometric =
        z * (1.0 - std::pow(z, static_cast<double>(n - 1))) / (1.0 - z);
    const double lambda = 1 + 2 * geometric.real() + (w % 2 == 0 ? rho_n : -rho_n);
    for (index_t j = 0; j < nm; ++j)
      spectrum[w * nm + j] = variances_[j] * std::max(lambda, floor);
  }
  return spectrum;
}

}  // namespace shiftop::inverse
