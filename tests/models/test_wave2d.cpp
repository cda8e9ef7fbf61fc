// Wave2d against independent references: the dense one-step system written out from the header's
// formulas, forward-stepped unit impulses, shiftop's FFT plan, the adjoint identity, and the
// physics of waves (travel time, absorption by the sponge).
#include "shiftop/models/wave2d.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "models/model_test_support.hpp"
#include "shiftop/btt/plan.hpp"
#include "support/dense_reference.hpp"

namespace shiftop::models {
namespace {

using namespace model_testing;
using testing::random_vector;

// The wave speed of grid row `row` from the configuration's layers.
double speed_of_row(const Wave2dConfig& config, index_t row) {
  double speed = config.speed;
  for (const SpeedLayer& layer : config.layers)
    if (layer.first_row <= row) speed = layer.speed;
  return speed;
}

// B (A^s)^t S C on the state w = (u^n, u^{n-1}), with A, B, C written out from the formulas in
// wave2d.hpp and A^s, S formed explicitly; [nd][nm][nt].
std::vector<double> dense_kernels(const Wave2d& model) {
  const Wave2dConfig& config = model.config();
  const auto n = static_cast<std::size_t>(config.n);
  const std::size_t points = n * n;
  const double h = 1.0 / static_cast<double>(n + 1);
  const double dt = config.dt;
  const auto width = static_cast<double>(config.sponge_width);

  std::vector<double> a(points);  // diagonals of D_a and D_b
  std::vector<double> b(points);
  Matrix step(2 * points, 2 * points);
  for (std::size_t row = 0; row < n; ++row)
    for (std::size_t col = 0; col < n; ++col) {
      const std::size_t p = row * n + col;
      const auto to_boundary = static_cast<double>(std::min({row, col, n - 1 - row, n - 1 - col}));
      const double depth = to_boundary < width ? (width - to_boundary) / width : 0.0;
      const double sigma = config.sponge_damping * depth * depth;
      a[p] = 1 / (1 + sigma * dt / 2);
      b[p] = (1 - sigma * dt / 2) / (1 + sigma * dt / 2);
      const double c = speed_of_row(config, static_cast<index_t>(row));
      // Row p of D_a (2I + dt^2 K L_h), L_h the 5-point Laplacian with Dirichlet boundary.
      const double r = a[p] * dt * dt * c * c / (h * h);
      step(p, p) = 2 * a[p] - 4 * r;
      if (row > 0) step(p, p - n) = r;
      if (row + 1 < n) step(p, p + n) = r;
      if (col > 0) step(p, p - 1) = r;
      if (col + 1 < n) step(p, p + 1) = r;
      step(p, points + p) = -b[p];
      step(points + p, p) = 1;
    }
  // B = [Q 0], C = [(dt^2/h^2) D_a P; 0].
  return dense_lti_kernels(step, config, [&](std::size_t p) { return dt * dt / (h * h) * a[p]; });
}

// The first block column by nm forward solves: column j of every F_t is the response to a unit
// source j during the first observation interval.
std::vector<double> impulse_responses(const Wave2d& model) {
  const Shape s = model.shape();
  const auto nt = static_cast<std::size_t>(s.nt);
  const auto nm = static_cast<std::size_t>(s.nm);
  std::vector<double> kernels(static_cast<std::size_t>(s.kernel_size()));
  std::vector<double> m(nm * nt);
  std::vector<double> d(static_cast<std::size_t>(s.nd) * nt);
  for (std::size_t j = 0; j < nm; ++j) {
    std::ranges::fill(m, 0.0);
    m[j * nt] = 1;
    model.apply_forward(m, d);
    for (std::size_t i = 0; i < static_cast<std::size_t>(s.nd); ++i)
      for (std::size_t t = 0; t < nt; ++t)
        kernels[(i * nm + j) * nt + t] = d[i * nt + t];
  }
  return kernels;
}

// Small models covering the sponge, a layered medium, the stability limit and substeps.
std::vector<Wave2d> small_models(index_t substeps) {
  return {
      // Sponge of width 2 with the default damping, a sensor on a source (12), one in the sponge,
      // a faster lower layer (so K L_h is not symmetric), half the stable dt.
      Wave2d({.n = 5,
              .speed = 0.8,
              .layers = {{.first_row = 3, .speed = 1.5}},
              .dt = 0.5 * Wave2d::max_stable_dt(5, 1.5),
              .nt = 25,
              .sources = {0, 7, 12, 24},
              .sensors = {3, 12, 20},
              .substeps = substeps,
              .sponge_width = 2}),
      // Exactly at the CFL limit, two layers (the first replaces `speed` from row 0), reflecting
      // boundary.
      Wave2d({.n = 6,
              .layers = {{.first_row = 0, .speed = 2.0}, {.first_row = 2, .speed = 0.5}},
              .dt = Wave2d::max_stable_dt(6, 2.0),
              .nt = 30,
              .sources = {1, 14, 35},
              .sensors = {5, 30},
              .substeps = substeps,
              .sponge_width = 0}),
      // Strong explicit damping: 1 - sigma dt/2 < 0 at the boundary.
      Wave2d({.n = 6,
              .nt = 20,
              .sources = {8, 27},
              .sensors = {0, 15, 33},
              .substeps = substeps,
              .sponge_width = 3,
              .sponge_damping = 200}),
  };
}

TEST(Wave2d, KernelsMatchDenseOneStepSystem) {
  for (const index_t substeps : {1, 3})
    for (const Wave2d& model : small_models(substeps)) {
      EXPECT_EQ(model.config().substeps, substeps);
      EXPECT_LT(relative_error(model.kernels(), dense_kernels(model)), 1e-13)
          << "n = " << model.config().n << ", substeps = " << substeps;
    }
}

TEST(Wave2d, KernelsMatchForwardSteppedUnitImpulses) {
  for (const index_t substeps : {1, 4}) {
    std::vector<Wave2d> models = small_models(substeps);
    models.push_back(Wave2d::with_default_layout(16, 9, 3, 60, substeps));
    for (const Wave2d& model : models)
      EXPECT_LT(relative_error(model.kernels(), impulse_responses(model)), 1e-13)
          << "n = " << model.config().n << ", substeps = " << substeps;
  }
}

TEST(Wave2d, FftPlanMatchesTimeStepping) {
  for (const index_t substeps : {1, 3}) {
    Wave2dConfig layered = Wave2d::with_default_layout(20, 12, 4, 70, substeps).config();
    layered.layers = {{.first_row = 12, .speed = 1.7}};
    layered.dt = 0;  // re-resolve for the faster layer
    for (const Wave2d& model :
         {Wave2d::with_default_layout(24, 15, 5, 80, substeps), Wave2d(layered)}) {
      const Shape shape = model.shape();
      btt::Plan plan =
          btt::Plan::create(model.kernels(), shape, {.planning = btt::Planning::Estimate});
      const std::vector<double> m = random_vector(static_cast<std::size_t>(shape.nm * shape.nt), 4);
      const std::vector<double> d = random_vector(static_cast<std::size_t>(shape.nd * shape.nt), 5);
      std::vector<double> d_step(d.size()), d_fft(d.size()), m_step(m.size()), m_fft(m.size());
      model.apply_forward(m, d_step);
      plan.apply(btt::Op::F, m, d_fft);
      model.apply_adjoint(d, m_step);
      plan.apply(btt::Op::Fadj, d, m_fft);
      EXPECT_LT(relative_error(d_fft, d_step), 1e-12) << "F, substeps = " << substeps;
      EXPECT_LT(relative_error(m_fft, m_step), 1e-12) << "F*, substeps = " << substeps;
    }
  }
}

TEST(Wave2d, AdjointIdentity) {
  for (const index_t substeps : {1, 4}) {
    Wave2dConfig config = Wave2d::with_default_layout(18, 10, 4, 50, substeps).config();
    config.layers = {{.first_row = 5, .speed = 0.6}, {.first_row = 11, .speed = 1.4}};
    config.dt = 0;
    const Wave2d model{config};
    const Shape shape = model.shape();
    expect_adjoint_identity(model, random_vector(static_cast<std::size_t>(shape.nm * shape.nt), 2),
                            random_vector(static_cast<std::size_t>(shape.nd * shape.nt), 3));
  }
}

// Largest |f[t]| over kernel samples whose time (t+1)*interval lies in [begin, end).
double peak_between(const double* f, index_t nt, double interval, double begin, double end) {
  double peak = 0;
  for (index_t t = 0; t < nt; ++t) {
    const double time = static_cast<double>(t + 1) * interval;
    if (time >= begin && time < end) peak = std::max(peak, std::abs(f[t]));
  }
  return peak;
}

TEST(Wave2d, WaveArrivesAfterTravelTime) {
  // One source, sensors 8 to 40 grid points away in several directions, far enough from the
  // reflecting walls that no reflection arrives in the time observed. The source is on during the
  // first observation interval, so physically a sensor at distance r sees nothing before r/c. On
  // the grid the point source's front is smeared over a few grid points (dispersion), so the test
  // allows 5 grid points of travel; a speed wrong by 10% would move the front by 4 at r = 40. The
  // same dt for both speeds makes the two discrete systems genuinely different (Courant numbers
  // 0.25 and 0.64).
  const index_t n = 99;
  const index_t centre = 49;
  const double h = 1.0 / static_cast<double>(n + 1);
  const std::vector<std::pair<index_t, index_t>> offsets = {
      {0, 40}, {-30, 0}, {25, -25}, {12, 33}, {-3, -8}};
  std::vector<index_t> sensors;
  for (const auto& [rows, cols] : offsets)
    sensors.push_back((centre + rows) * n + centre + cols);
  const double dt = 0.9 * Wave2d::max_stable_dt(n, 2.5);
  for (const double speed : {1.0, 2.5}) {
    // Observed until reflections could arrive: the nearest wall is 50 grid points from the
    // source, so any reflected path to a sensor within 40 is longer than 55.
    const double horizon = 55 * h / speed;
    const index_t substeps = 2;
    const auto nt = static_cast<index_t>(horizon / (dt * static_cast<double>(substeps)));
    const Wave2d model({.n = n,
                        .speed = speed,
                        .dt = dt,
                        .nt = nt,
                        .sources = {centre * n + centre},
                        .sensors = sensors,
                        .substeps = substeps,
                        .sponge_width = 0});
    const std::vector<double> kernels = model.kernels();
    const double interval = model.observation_interval();
    for (std::size_t i = 0; i < offsets.size(); ++i) {
      const auto [rows, cols] = offsets[i];
      const double distance = std::hypot(static_cast<double>(rows), static_cast<double>(cols)) * h;
      const double arrival = distance / speed;
      const double* f = kernels.data() + i * static_cast<std::size_t>(nt);
      const double peak = peak_between(f, nt, interval, 0, horizon);
      ASSERT_GT(peak, 0.0);
      EXPECT_LT(peak_between(f, nt, interval, 0, arrival - 5 * h / speed), 1e-2 * peak)
          << "signal before the travel time, speed " << speed << ", sensor " << i;
      // The 2D wave is strongest right behind its front.
      EXPECT_EQ(peak_between(f, nt, interval, arrival, arrival + 4 * h / speed), peak)
          << "peak not within 4 grid points behind the front, speed " << speed << ", sensor " << i;
    }
  }
}

TEST(Wave2d, SpongeAbsorbsTheWave) {
  // Kernels observed for four crossing times of the unit square: with a reflecting boundary the
  // waves keep bouncing, the sponge takes their energy out.
  const auto tail_fraction = [](const Wave2d& model) {
    const Shape shape = model.shape();
    const std::vector<double> kernels = model.kernels();
    double all = 0;
    double tail = 0;
    for (index_t k = 0; k < shape.kernel_size(); ++k) {
      const double value = kernels[static_cast<std::size_t>(k)];
      all += value * value;
      if (static_cast<double>(k % shape.nt + 1) * model.observation_interval() >= 2)
        tail += value * value;
    }
    return std::sqrt(tail / all);
  };
  const index_t n = 64;
  const index_t substeps = 4;
  Wave2dConfig config = Wave2d::with_default_layout(n, 6, 4, 1, substeps).config();
  config.nt = static_cast<index_t>(std::ceil(4 / (config.dt * static_cast<double>(substeps))));
  EXPECT_EQ(config.sponge_width, 16);
  const double with_sponge = tail_fraction(Wave2d(config));
  config.sponge_width = 0;
  const double reflecting = tail_fraction(Wave2d(config));
  EXPECT_LT(with_sponge, 0.15);
  EXPECT_GT(reflecting, 0.5);
}

TEST(Wave2d, DefaultLayoutSeparatesSourcesAndSensorsClearOfTheSponge) {
  const index_t n = 24;
  const Wave2d model = Wave2d::with_default_layout(n, 20, 7, 5);
  EXPECT_EQ(model.shape(), (Shape{.nd = 7, .nm = 20, .nt = 5}));
  const Wave2dConfig& config = model.config();
  const index_t width = n / 4;
  EXPECT_EQ(config.sponge_width, width);
  EXPECT_EQ(std::set<index_t>(config.sources.begin(), config.sources.end()).size(), 20u);
  EXPECT_EQ(std::set<index_t>(config.sensors.begin(), config.sensors.end()).size(), 7u);
  for (index_t p : config.sources) {
    EXPECT_GE(p % n, width);
    EXPECT_LT(p % n, n / 2);
  }
  for (index_t p : config.sensors) {
    EXPECT_GE(p % n, n / 2);
    EXPECT_LT(p % n, n - width);
  }
  for (const std::vector<index_t>* points : {&config.sources, &config.sensors})
    for (index_t p : *points)
      EXPECT_TRUE(p / n >= width && p / n < n - width) << "grid point " << p << " in the sponge";
  const double h = 1.0 / static_cast<double>(n + 1);
  EXPECT_DOUBLE_EQ(config.dt, 0.9 * h / std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(config.sponge_damping, 3 * std::log(1000.0) / (static_cast<double>(width) * h));
  // Every point of each half clear of the sponge can be used.
  EXPECT_EQ(Wave2d::with_default_layout(n, 72, 72, 5).shape(),
            (Shape{.nd = 72, .nm = 72, .nt = 5}));
}

TEST(Wave2d, RejectsBadInput) {
  const Wave2dConfig config{
      .n = 6, .nt = 10, .sources = {0, 5}, .sensors = {30}, .sponge_width = 2};
  const auto expect_config_error = config_error_checker<Wave2d>(config);
  expect_config_error([](Wave2dConfig& c) { c.dt = 1.01 * Wave2d::max_stable_dt(c.n, 1.0); },
                      "is unstable for leapfrog: the CFL condition needs dt <= h/(c_max*sqrt(2))");
  // The limit follows the fastest layer.
  expect_config_error(
      [](Wave2dConfig& c) {
        c.dt = Wave2d::max_stable_dt(c.n, 1.0);
        c.layers = {{.first_row = 4, .speed = 1.2}};
      },
      "c_max = 1.2");
  expect_config_error([](Wave2dConfig& c) { c.dt = -1; }, "time step dt = -1 must be positive");
  expect_config_error([](Wave2dConfig& c) { c.n = 0; }, "grid size n = 0 must be positive");
  expect_config_error([](Wave2dConfig& c) { c.n = index_t{1} << 31; },
                      "wave2d: the 2147483648x2147483648 grid's coefficients and state needs");
  expect_config_error([](Wave2dConfig& c) { c.nt = 0; }, "nt = 0 must be positive");
  expect_config_error([](Wave2dConfig& c) { c.substeps = 0; }, "substeps = 0 must be at least 1");
  expect_config_error([](Wave2dConfig& c) { c.speed = 0; }, "wave speed = 0 must be positive");
  expect_config_error([](Wave2dConfig& c) { c.layers = {{.first_row = 2, .speed = -1}}; },
                      "layer speed = -1 must be positive");
  expect_config_error(
      [](Wave2dConfig& c) {
        c.layers = {{.first_row = 3, .speed = 1}, {.first_row = 3, .speed = 2}};
      },
      "layer 1 starts at row 3: expected 4..5");
  expect_config_error([](Wave2dConfig& c) { c.layers = {{.first_row = 6, .speed = 1}}; },
                      "layer 0 starts at row 6: expected 0..5");
  expect_config_error([](Wave2dConfig& c) { c.sponge_width = 4; },
                      "sponge_width = 4 must be in 0..3");
  expect_config_error([](Wave2dConfig& c) { c.sponge_damping = -2; },
                      "sponge_damping = -2 must be non-negative");
  expect_config_error([](Wave2dConfig& c) { c.sources.push_back(36); },
                      "source 2 is grid point 36, outside 0..35");
  expect_config_error([](Wave2dConfig& c) { c.sensors = {-1}; }, "sensor 0 is grid point -1");
  expect_config_error([](Wave2dConfig& c) { c.sources.clear(); }, "no sources");
  expect_config_error([](Wave2dConfig& c) { c.sensors.clear(); }, "no sensors");
  expect_error([] { Wave2d::with_default_layout(1, 1, 1, 10); }, "needs n >= 2");
  expect_error([] { Wave2d::with_default_layout(8, 9, 1, 10); }, "expected 1..8 sources");
  expect_error([] { Wave2d::with_default_layout(8, 1, 0, 10); }, "expected 1..8 sensors");
  expect_error([] { Wave2d::with_default_layout(8, 2, 1, 10, -2); }, "substeps = -2");

  expect_vector_size_errors(Wave2d{config});  // nd = 1, nm = 2, nt = 10
}

}  // namespace
}  // namespace shiftop::models
