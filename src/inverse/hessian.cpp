#include "shiftop/inverse/hessian.hpp"

#include "shiftop/core/error.hpp"

namespace shiftop::inverse {

Hessian::Hessian(std::shared_ptr<btt::Plan> forward, GaussianNoise noise,
                 std::shared_ptr<const Prior> prior)
    : forward_(std::move(forward)), noise_(std::move(noise)), prior_(std::move(prior)) {
  require(forward_ != nullptr, "Hessian: no operator F given");
  require(prior_ != nullptr, "Hessian: no prior given");
  const Shape& s = forward_->shape();
  require(noise_.blocks() == s.nd && noise_.nt() == s.nt,
          "Hessian: the noise covers {} sensors x {} steps, but F (shape {}) has Nd = {}, Nt = {}",
          noise_.blocks(), noise_.nt(), s.str(), s.nd, s.nt);
  require(
      prior_->blocks() == s.nm && prior_->nt() == s.nt,
      "Hessian: the {} prior covers {} blocks x {} steps, but F (shape {}) has Nm = {}, Nt = {}",
      prior_->name(), prior_->blocks(), prior_->nt(), s.str(), s.nm, s.nt);
}

index_t Hessian::size() const {
  return forward_->shape().nm * forward_->shape().nt;
}

void Hessian::check_parameters(std::span<const double> x, std::span<double> y, index_t nrhs,
                               const char* what) const {
  require(nrhs >= 1, "Hessian::{}: nrhs {} is not positive", what, nrhs);
  const auto expected = static_cast<std::size_t>(nrhs * size());
  require(x.size() == expected && y.size() == expected,
          "Hessian::{}: x holds {} and y {} values, expected nrhs*Nm*Nt = {}", what, x.size(),
          y.size(), expected);
}

void Hessian::apply_misfit(std::span<const double> x, std::span<double> y, index_t nrhs) {
  check_parameters(x, y, nrhs, "apply_misfit");
  const Shape& s = forward_->shape();
  data_space_.resize(static_cast<std::size_t>(nrhs * s.nd * s.nt));
  forward_->apply(btt::Op::F, x, data_space_, nrhs);
  noise_.apply_inverse(data_space_, data_space_, nrhs);
  forward_->apply(btt::Op::Fadj, data_space_, y, nrhs);
}

void Hessian::apply(std::span<const double> x, std::span<double> y, index_t nrhs) {
  check_parameters(x, y, nrhs, "apply");
  prior_term_.resize(x.size());
  prior_->apply_precision(x, prior_term_, nrhs);
  apply_misfit(x, y, nrhs);
  for (std::size_t k = 0; k < y.size(); ++k)
    y[k] += prior_term_[k];
}

void Hessian::weighted_data_residual(std::span<const double> data, std::span<const double> m,
                                     std::span<double> g) {
  const Shape& s = forward_->shape();
  require(static_cast<index_t>(data.size()) == s.nd * s.nt,
          "data vector holds {} values, expected Nd*Nt = {}*{} = {}", data.size(), s.nd, s.nt,
          s.nd * s.nt);
  check_parameters(m, g, 1, "weighted_data_residual");
  data_space_.resize(data.size());
  forward_->apply(btt::Op::F, m, data_space_);
  for (std::size_t k = 0; k < data.size(); ++k)
    data_space_[k] = data[k] - data_space_[k];
  noise_.apply_inverse(data_space_, data_space_);
  forward_->apply(btt::Op::Fadj, data_space_, g);
}

}  // namespace shiftop::inverse
