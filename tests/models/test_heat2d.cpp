// Heat2d against independent references: a dense B (A^s)^t S C (S = sum_{q<s} A^q), the causal
// convolution of its kernels,
// the adjoint identity, and the physics of diffusion.
#include "shiftop/models/heat2d.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "shiftop/core/error.hpp"

namespace shiftop::models {
namespace {

// Dense row-major matrix, just enough for the reference B (A^s)^t S C.
struct Matrix {
  Matrix(std::size_t rows_, std::size_t cols_) : rows(rows_), cols(cols_), values(rows_ * cols_) {}
  double& operator()(std::size_t i, std::size_t j) { return values[i * cols + j]; }
  double operator()(std::size_t i, std::size_t j) const { return values[i * cols + j]; }
  std::size_t rows;
  std::size_t cols;
  std::vector<double> values;
};

std::vector<double> random_vector(index_t size, unsigned seed) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<double> v(static_cast<std::size_t>(size));
  for (double& x : v)
    x = uniform(engine);
  return v;
}

double norm(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v)
    sum += x * x;
  return std::sqrt(sum);
}

double relative_error(const std::vector<double>& value, const std::vector<double>& reference) {
  EXPECT_EQ(value.size(), reference.size());
  std::vector<double> diff(reference.size());
  for (std::size_t k = 0; k < reference.size(); ++k)
    diff[k] = value[k] - reference[k];
  return norm(diff) / norm(reference);
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (std::size_t k = 0; k < a.size(); ++k)
    sum += a[k] * b[k];
  return sum;
}

Matrix multiply(const Matrix& a, const Matrix& b) {
  Matrix c(a.rows, b.cols);
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t k = 0; k < a.cols; ++k)
      for (std::size_t j = 0; j < b.cols; ++j)
        c(i, j) += a(i, k) * b(k, j);
  return c;
}

// B (A^s)^t S C, S = sum_{q<s} A^q, from dense A, B, C built from the grid coordinates, with A^s
// and S formed explicitly; [nd][nm][nt].
std::vector<double> dense_kernels(const Heat2d& model) {
  const Heat2dConfig& config = model.config();
  const auto n = static_cast<std::size_t>(config.n);
  const std::size_t points = n * n;
  const double h = 1.0 / static_cast<double>(n + 1);
  const double r = config.dt * config.kappa / (h * h);

  Matrix a(points, points);
  for (std::size_t row = 0; row < n; ++row)
    for (std::size_t col = 0; col < n; ++col) {
      const std::size_t p = row * n + col;
      a(p, p) = 1 - 4 * r;
      if (row > 0) a(p, p - n) = r;
      if (row + 1 < n) a(p, p + n) = r;
      if (col > 0) a(p, p - 1) = r;
      if (col + 1 < n) a(p, p + 1) = r;
    }
  const std::size_t nd = config.sensors.size();
  const std::size_t nm = config.sources.size();
  Matrix b(nd, points);
  for (std::size_t i = 0; i < nd; ++i)
    b(i, static_cast<std::size_t>(config.sensors[i])) = 1;
  Matrix c(points, nm);
  for (std::size_t j = 0; j < nm; ++j)
    c(static_cast<std::size_t>(config.sources[j]), j) = config.dt;

  Matrix a_power(points, points);  // A^q, then A^s
  for (std::size_t p = 0; p < points; ++p)
    a_power(p, p) = 1;
  Matrix sum(points, points);  // S
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

// d[i][k] = sum_{s<=k} sum_j F_{k-s}[i][j] m[j][s], straight from the kernels.
std::vector<double> causal_convolution(const std::vector<double>& kernels, const Shape& shape,
                                       const std::vector<double>& m) {
  const auto nd = static_cast<std::size_t>(shape.nd);
  const auto nm = static_cast<std::size_t>(shape.nm);
  const auto nt = static_cast<std::size_t>(shape.nt);
  std::vector<double> d(nd * nt, 0.0);
  for (std::size_t i = 0; i < nd; ++i)
    for (std::size_t k = 0; k < nt; ++k)
      for (std::size_t s = 0; s <= k; ++s)
        for (std::size_t j = 0; j < nm; ++j)
          d[i * nt + k] += kernels[(i * nm + j) * nt + (k - s)] * m[j * nt + s];
  return d;
}

// Runs `action`, expects a shiftop::Error whose message contains `expected`.
void expect_error(const std::function<void()>& action, const std::string& expected) {
  try {
    action();
    ADD_FAILURE() << "no shiftop::Error raised; expected one mentioning '" << expected << "'";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(expected), std::string::npos)
        << "message '" << error.what() << "' does not mention '" << expected << "'";
  }
}

TEST(Heat2d, KernelsMatchDenseProductOnTinyGrids) {
  const double limit5 = Heat2d::max_stable_dt(5, 0.7);
  for (const index_t substeps : {1, 3}) {
    const std::vector<Heat2d> models = {
        // A sensor on a source (12), one on the boundary row, kappa != 1, half the stable dt.
        Heat2d({.n = 5,
                .kappa = 0.7,
                .dt = 0.5 * limit5,
                .nt = 25,
                .sources = {0, 7, 12, 24},
                .sensors = {3, 12, 20},
                .substeps = substeps}),
        // Exactly at the stability limit.
        Heat2d({.n = 6,
                .dt = Heat2d::max_stable_dt(6, 1.0),
                .nt = 30,
                .sources = {1, 14, 35},
                .sensors = {5, 30},
                .substeps = substeps}),
        Heat2d::with_default_layout(4, 5, 3, 20, substeps),
    };
    for (const Heat2d& model : models) {
      EXPECT_EQ(model.config().substeps, substeps);
      const std::vector<double> reference = dense_kernels(model);
      EXPECT_LT(relative_error(model.kernels(), reference), 1e-14)
          << "n = " << model.config().n << ", substeps = " << substeps;
    }
  }
}

TEST(Heat2d, ForwardMatchesCausalConvolutionOfKernels) {
  for (const index_t substeps : {1, 4}) {
    const Heat2d model = Heat2d::with_default_layout(9, 6, 3, 40, substeps);
    const Shape shape = model.shape();
    const std::vector<double> m = random_vector(shape.nm * shape.nt, 1);
    std::vector<double> d(static_cast<std::size_t>(shape.nd * shape.nt));
    model.apply_forward(m, d);
    EXPECT_LT(relative_error(d, causal_convolution(model.kernels(), shape, m)), 1e-12)
        << "substeps = " << substeps;
  }
}

TEST(Heat2d, AdjointIdentity) {
  for (const index_t substeps : {1, 4}) {
    const Heat2d model = Heat2d::with_default_layout(10, 7, 4, 50, substeps);
    const Shape shape = model.shape();
    const std::vector<double> m = random_vector(shape.nm * shape.nt, 2);
    const std::vector<double> d = random_vector(shape.nd * shape.nt, 3);
    std::vector<double> fm(d.size());
    std::vector<double> ftd(m.size());
    model.apply_forward(m, fm);
    model.apply_adjoint(d, ftd);
    const double lhs = dot(fm, d);
    const double rhs = dot(m, ftd);
    EXPECT_LT(std::abs(lhs - rhs), 1e-12 * norm(fm) * norm(d))
        << lhs << " vs " << rhs << ", substeps = " << substeps;
  }
}

TEST(Heat2d, ConstantSourceGivesNonnegativeIncreasingResponse) {
  const Heat2d model = Heat2d::with_default_layout(12, 4, 5, 300);
  const Shape shape = model.shape();
  const auto nt = static_cast<std::size_t>(shape.nt);
  const std::vector<double> m(static_cast<std::size_t>(shape.nm * shape.nt), 1.0);
  std::vector<double> d(static_cast<std::size_t>(shape.nd * shape.nt));
  model.apply_forward(m, d);
  for (std::size_t i = 0; i < static_cast<std::size_t>(shape.nd); ++i) {
    const double* response = d.data() + i * nt;
    EXPECT_GE(response[0], 0.0);
    for (std::size_t k = 1; k < nt; ++k)
      EXPECT_GE(response[k], response[k - 1]) << i << " " << k;
    EXPECT_GT(response[nt - 1], response[nt / 2]) << "sensor " << i;
  }
}

TEST(Heat2d, KernelsArriveAtManhattanDistanceThenDecay) {
  const Heat2d model = Heat2d::with_default_layout(12, 4, 5, 300);
  const Heat2dConfig& config = model.config();
  const Shape shape = model.shape();
  const std::vector<double> kernels = model.kernels();
  const auto nt = static_cast<std::size_t>(shape.nt);
  for (std::size_t i = 0; i < config.sensors.size(); ++i)
    for (std::size_t j = 0; j < config.sources.size(); ++j) {
      const double* f = kernels.data() + (i * config.sources.size() + j) * nt;
      // The 5-point stencil moves heat one grid point per step.
      const index_t sensor = config.sensors[i];
      const index_t source = config.sources[j];
      const auto distance =
          static_cast<std::size_t>(std::abs(sensor / config.n - source / config.n) +
                                   std::abs(sensor % config.n - source % config.n));
      ASSERT_LT(distance, nt);
      double peak = 0;
      std::size_t peak_at = 0;
      for (std::size_t t = 0; t < nt; ++t) {
        if (t < distance)
          EXPECT_EQ(f[t], 0.0);
        else
          EXPECT_GT(f[t], 0.0);
        if (f[t] > peak) {
          peak = f[t];
          peak_at = t;
        }
      }
      // Heat diffuses and leaves through the Dirichlet boundary.
      EXPECT_LT(peak_at, nt / 2);
      EXPECT_LT(f[nt - 1], 1e-2 * peak) << "sensor " << i << ", source " << j;
    }
}

TEST(Heat2d, DefaultLayoutSeparatesSourcesAndSensors) {
  const index_t n = 8;
  const Heat2d model = Heat2d::with_default_layout(n, 10, 7, 5);
  EXPECT_EQ(model.shape(), (Shape{.nd = 7, .nm = 10, .nt = 5}));
  const Heat2dConfig& config = model.config();
  EXPECT_EQ(std::set<index_t>(config.sources.begin(), config.sources.end()).size(), 10u);
  EXPECT_EQ(std::set<index_t>(config.sensors.begin(), config.sensors.end()).size(), 7u);
  for (index_t p : config.sources)
    EXPECT_LT(p % n, n / 2);
  for (index_t p : config.sensors)
    EXPECT_GE(p % n, n / 2);
  EXPECT_EQ(config.dt, 0.9 * Heat2d::max_stable_dt(n, 1.0));
  // Every point of each half can be used.
  EXPECT_EQ(Heat2d::with_default_layout(n, 32, 32, 5).shape(),
            (Shape{.nd = 32, .nm = 32, .nt = 5}));
}

TEST(Heat2d, RejectsBadInput) {
  const auto config = [] {
    return Heat2dConfig{.n = 6, .nt = 10, .sources = {0, 5}, .sensors = {30}};
  };
  expect_error(
      [&] {
        Heat2dConfig c = config();
        c.dt = 1.01 * Heat2d::max_stable_dt(c.n, c.kappa);
        Heat2d{c};
      },
      "unstable for explicit Euler");
  expect_error(
      [&] {
        Heat2dConfig c = config();
        c.sources.push_back(36);
        Heat2d{c};
      },
      "source 2 is grid point 36, outside 0..35");
  expect_error(
      [&] {
        Heat2dConfig c = config();
        c.sensors = {-1};
        Heat2d{c};
      },
      "sensor 0 is grid point -1");
  expect_error(
      [&] {
        Heat2dConfig c = config();
        c.sensors.clear();
        Heat2d{c};
      },
      "no sensors");
  expect_error(
      [&] {
        Heat2dConfig c = config();
        c.n = 0;
        Heat2d{c};
      },
      "n = 0");
  expect_error(
      [&] {
        Heat2dConfig c = config();
        c.kappa = -1;
        Heat2d{c};
      },
      "kappa");
  expect_error(
      [&] {
        Heat2dConfig c = config();
        c.substeps = 0;
        Heat2d{c};
      },
      "substeps = 0 must be at least 1");
  expect_error([] { Heat2d::with_default_layout(4, 9, 1, 10); }, "expected 1..8 sources");
  expect_error([] { Heat2d::with_default_layout(4, 2, 1, 10, -2); }, "substeps = -2");

  const Heat2d model{config()};  // nd = 1, nm = 2, nt = 10
  std::vector<double> m(20);
  std::vector<double> d(10);
  std::vector<double> short_m(19);
  std::vector<double> long_d(11);
  expect_error([&] { model.apply_forward(short_m, d); }, "m has 19 entries, expected nm*nt");
  expect_error([&] { model.apply_forward(m, long_d); }, "d has 11 entries, expected nd*nt");
  expect_error([&] { model.apply_adjoint(long_d, m); }, "d has 11 entries, expected nd*nt");
  expect_error([&] { model.apply_adjoint(d, short_m); }, "m has 19 entries, expected nm*nt");
}

}  // namespace
}  // namespace shiftop::models
