#include "shiftop/models/heat2d.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

#include "core/available_memory.hpp"
#include "shiftop/core/error.hpp"

namespace shiftop::models {

namespace {

// Explicit Euler is stable for dt <= h^2/(4*kappa); a dt computed by the caller in a different
// order of operations may exceed the limit by a few ulps, which must not be refused.
constexpr double kStabilityRoundingSlack = 1e-12;
// The default time step, as a fraction of the stability limit.
constexpr double kDefaultDtFraction = 0.9;

void check_points(const std::vector<index_t>& points, index_t n, const char* what) {
  require(!points.empty(), "heat2d: no {}s given: expected at least one grid point index", what);
  for (std::size_t k = 0; k < points.size(); ++k)
    require(points[k] >= 0 && points[k] < n * n,
            "heat2d: {} {} is grid point {}, outside 0..{} for the {}x{} grid", what, k, points[k],
            n * n - 1, n, n);
}

// `count` distinct grid points on a near-square regular sub-grid of columns [col_begin, col_end)
// (all rows), row-major; the last sub-grid row may be partly filled.
std::vector<index_t> regular_subgrid(index_t n, index_t col_begin, index_t col_end, index_t count) {
  const index_t width = col_end - col_begin;
  const double aspect = static_cast<double>(width) / static_cast<double>(n);
  index_t cols = static_cast<index_t>(std::ceil(std::sqrt(static_cast<double>(count) * aspect)));
  cols = std::clamp<index_t>(cols, 1, width);
  index_t rows = (count + cols - 1) / cols;
  if (rows > n) {
    cols = (count + n - 1) / n;
    rows = (count + cols - 1) / cols;
  }
  // Cell centres: positions strictly increase since rows <= n and cols <= width.
  std::vector<index_t> points;
  points.reserve(static_cast<std::size_t>(count));
  for (index_t r = 0; r < rows; ++r) {
    const index_t row = (2 * r + 1) * n / (2 * rows);
    for (index_t c = 0; c < cols && static_cast<index_t>(points.size()) < count; ++c)
      points.push_back(row * n + col_begin + (2 * c + 1) * width / (2 * cols));
  }
  return points;
}

}  // namespace

Heat2d::Heat2d(Heat2dConfig config) : config_(std::move(config)) {
  const index_t n = config_.n;
  require(n > 0, "heat2d: grid size n = {} must be positive", n);
  // Two time levels of a solve, each (n+2)^2 doubles.
  const double padded_points = static_cast<double>(n + 2) * static_cast<double>(n + 2);
  require_available_memory(2 * 8 * padded_points,
                           fmt::format("heat2d: the {}x{} grid's state", n, n));
  require(config_.nt > 0, "heat2d: number of time steps nt = {} must be positive", config_.nt);
  require(config_.substeps >= 1,
          "heat2d: substeps = {} must be at least 1 (PDE time steps per observation step)",
          config_.substeps);
  require(std::isfinite(config_.kappa) && config_.kappa > 0,
          "heat2d: diffusivity kappa = {} must be positive and finite", config_.kappa);
  const double limit = max_stable_dt(n, config_.kappa);
  require(std::isfinite(config_.dt) && config_.dt >= 0,
          "heat2d: time step dt = {} must be positive (or 0 for the default)", config_.dt);
  if (config_.dt == 0) config_.dt = kDefaultDtFraction * limit;
  require(config_.dt <= limit * (1 + kStabilityRoundingSlack),
          "heat2d: time step dt = {} is unstable for explicit Euler: it must be at most "
          "h^2/(4*kappa) = {} (n = {}, kappa = {}); pass dt = 0 for {} of that limit",
          config_.dt, limit, n, config_.kappa, kDefaultDtFraction);
  check_points(config_.sources, n, "source");
  check_points(config_.sensors, n, "sensor");

  const double h = 1.0 / static_cast<double>(n + 1);
  coupling_ = config_.dt * config_.kappa / (h * h);
  const auto to_offset = [n, side = padded_side()](index_t p) {
    return (p / n + 1) * side + p % n + 1;
  };
  std::ranges::transform(config_.sources, std::back_inserter(source_offsets_), to_offset);
  std::ranges::transform(config_.sensors, std::back_inserter(sensor_offsets_), to_offset);
  source_gain_.assign(source_offsets_.size(), config_.dt);  // m is a source rate
}

Heat2d Heat2d::with_default_layout(index_t n, index_t nsources, index_t nsensors, index_t nt,
                                   index_t substeps) {
  require(n >= 2, "heat2d: default layout needs n >= 2 (a left and a right half), got n = {}", n);
  const index_t half = n / 2;
  require(nsources >= 1 && nsources <= n * half,
          "heat2d: default layout puts sources in the left {}x{} half: expected 1..{} sources, "
          "got {}",
          n, half, n * half, nsources);
  require(nsensors >= 1 && nsensors <= n * (n - half),
          "heat2d: default layout puts sensors in the right {}x{} half: expected 1..{} sensors, "
          "got {}",
          n, n - half, n * (n - half), nsensors);
  return Heat2d({.n = n,
                 .nt = nt,
                 .sources = regular_subgrid(n, 0, half, nsources),
                 .sensors = regular_subgrid(n, half, n, nsensors),
                 .substeps = substeps});
}

double Heat2d::max_stable_dt(index_t n, double kappa) {
  const double h = 1.0 / static_cast<double>(n + 1);
  return h * h / (4 * kappa);
}

Shape Heat2d::shape() const {
  return {.nd = static_cast<index_t>(config_.sensors.size()),
          .nm = static_cast<index_t>(config_.sources.size()),
          .nt = config_.nt};
}

LtiPorts Heat2d::ports() const {
  return {.shape = shape(),
          .substeps = config_.substeps,
          .state_size = static_cast<std::size_t>(padded_side() * padded_side()),
          .sources = source_offsets_,
          .gains = source_gain_,
          .sensors = sensor_offsets_};
}

void Heat2d::step(const double* in, double* out) const {
  const index_t n = config_.n;
  const index_t side = padded_side();
  const double c = coupling_;
  const double diagonal = 1 - 4 * c;
  // The zero halo supplies the Dirichlet boundary, so the inner loop is contiguous and branch-free.
  for (index_t row = 1; row <= n; ++row) {
    const double* mid = in + row * side;
    const double* up = mid - side;
    const double* down = mid + side;
    double* result = out + row * side;
#pragma omp simd
    for (index_t col = 1; col <= n; ++col)
      result[col] = diagonal * mid[col] + c * (up[col] + down[col] + mid[col - 1] + mid[col + 1]);
  }
}

void Heat2d::step_transposed(const double* in, double* out) const {
  // L_h is symmetric (5-point Laplacian, Dirichlet), so A^T = A: the same stencil.
  step(in, out);
}

std::vector<double> Heat2d::kernels() const {
  const Shape s = shape();
  s.validate();
  require_available_memory(8 * static_cast<double>(s.kernel_size()), "heat2d: the kernels");
  return lti_kernels(ports(), [this](const double* in, double* out) { step_transposed(in, out); });
}

void Heat2d::apply_forward(std::span<const double> m, std::span<double> d) const {
  const LtiPorts p = ports();
  check_lti_vectors(p, "heat2d apply_forward", m.size(), d.size());
  lti_forward(
      p, [this](const double* in, double* out) { step(in, out); }, m, d);
}

void Heat2d::apply_adjoint(std::span<const double> d, std::span<double> m) const {
  const LtiPorts p = ports();
  check_lti_vectors(p, "heat2d apply_adjoint", m.size(), d.size());
  lti_adjoint(
      p, [this](const double* in, double* out) { step_transposed(in, out); }, d, m);
}

}  // namespace shiftop::models
