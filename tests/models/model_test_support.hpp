// What the PDE model tests (Heat2d, Wave2d) share: the dense reference B (A^s)^t S C of an LTI
// system written out as matrices, and the checks of the adjoint identity and of refused input.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "shiftop/core/error.hpp"
#include "shiftop/core/shape.hpp"
#include "support/dense_reference.hpp"
#include "support/expect_error.hpp"

namespace shiftop::models::model_testing {

// Dense row-major matrix, just enough for the reference B (A^s)^t S C.
struct Matrix {
  Matrix(std::size_t rows_, std::size_t cols_) : rows(rows_), cols(cols_), values(rows_ * cols_) {}
  double& operator()(std::size_t i, std::size_t j) { return values[i * cols + j]; }
  double operator()(std::size_t i, std::size_t j) const { return values[i * cols + j]; }
  std::size_t rows;
  std::size_t cols;
  std::vector<double> values;
};

inline Matrix multiply(const Matrix& a, const Matrix& b) {
  Matrix c(a.rows, b.cols);
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t k = 0; k < a.cols; ++k)
      for (std::size_t j = 0; j < b.cols; ++j)
        c(i, j) += a(i, k) * b(k, j);
  return c;
}

/// B (A^s)^t S C for t = 0..nt-1 of the model configured by `config` (sources, sensors, nt,
/// substeps), S = sum_{q<s} A^q: A is the dense one-step system (of any state size), B reads
/// state entry sensors[i] for sensor i, C puts gain(p) at state entry p = sources[j] for source j;
/// A^s and S are formed explicitly. [nd][nm][nt].
template <typename Config, typename Gain>
std::vector<double> dense_lti_kernels(const Matrix& a, const Config& config, const Gain& gain) {
  const std::size_t nd = config.sensors.size();
  const std::size_t nm = config.sources.size();
  Matrix b(nd, a.rows);
  for (std::size_t i = 0; i < nd; ++i)
    b(i, static_cast<std::size_t>(config.sensors[i])) = 1;
  Matrix c(a.rows, nm);
  for (std::size_t j = 0; j < nm; ++j) {
    const auto p = static_cast<std::size_t>(config.sources[j]);
    c(p, j) = gain(p);
  }

  Matrix a_power(a.rows, a.cols);  // A^q, then A^s
  for (std::size_t p = 0; p < a.rows; ++p)
    a_power(p, p) = 1;
  Matrix sum(a.rows, a.cols);  // S
  for (index_t q = 0; q < config.substeps; ++q) {
    for (std::size_t k = 0; k < sum.values.size(); ++k)
      sum.values[k] += a_power.values[k];
    a_power = multiply(a, a_power);
  }

  const auto nt = static_cast<std::size_t>(config.nt);
  std::vector<double> kernels(nd * nm * nt);
  Matrix power_times_c = multiply(sum, c);  // (A^s)^t S C
  for (std::size_t t = 0; t < nt; ++t) {
    const Matrix block = multiply(b, power_times_c);
    for (std::size_t i = 0; i < nd; ++i)
      for (std::size_t j = 0; j < nm; ++j)
        kernels[(i * nm + j) * nt + t] = block(i, j);
    power_times_c = multiply(a_power, power_times_c);
  }
  return kernels;
}

/// ||value - reference|| / ||reference||, after checking that the two have the same size.
inline double relative_error(const std::vector<double>& value,
                             const std::vector<double>& reference) {
  EXPECT_EQ(value.size(), reference.size());
  return testing::relative_error(value, reference);
}

/// Expects <F m, d> = <m, F^T d> for the model's apply_forward and apply_adjoint.
template <typename Model>
void expect_adjoint_identity(const Model& model, const std::vector<double>& m,
                             const std::vector<double>& d) {
  std::vector<double> fm(d.size());
  std::vector<double> ftd(m.size());
  model.apply_forward(m, fm);
  model.apply_adjoint(d, ftd);
  const double lhs = testing::dot(fm, d);
  const double rhs = testing::dot(m, ftd);
  EXPECT_LT(std::abs(lhs - rhs), 1e-12 * testing::norm(fm) * testing::norm(d))
      << lhs << " vs " << rhs << ", substeps = " << model.config().substeps;
}

using testing::expect_error;

/// check(edit, expected): expects Model(config) to throw a shiftop::Error mentioning `expected`,
/// where config is a copy of `base` changed by edit(config).
template <typename Model, typename Config>
auto config_error_checker(Config base) {
  return [base = std::move(base)](const std::function<void(Config&)>& edit,
                                  const std::string& expected) {
    expect_error(
        [&] {
          Config c = base;
          edit(c);
          Model{c};
        },
        expected);
  };
}

/// Expects apply_forward and apply_adjoint to refuse m or d of the wrong size; the model has
/// nd = 1, nm = 2, nt = 10.
template <typename Model>
void expect_vector_size_errors(const Model& model) {
  ASSERT_EQ(model.shape(), (Shape{.nd = 1, .nm = 2, .nt = 10}));
  std::vector<double> m(20);
  std::vector<double> d(10);
  std::vector<double> short_m(19);
  std::vector<double> long_d(11);
  expect_error([&] { model.apply_forward(short_m, d); }, "m has 19 entries, expected nm*nt");
  expect_error([&] { model.apply_forward(m, long_d); }, "d has 11 entries, expected nd*nt");
  expect_error([&] { model.apply_adjoint(long_d, m); }, "d has 11 entries, expected nd*nt");
  expect_error([&] { model.apply_adjoint(d, short_m); }, "m has 19 entries, expected nm*nt");
}

}  // namespace shiftop::models::model_testing
