#include "shiftop/models/wave2d.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/available_memory.hpp"
#include "shiftop/core/error.hpp"

namespace shiftop::models {

namespace {

// Leapfrog is stable for dt <= h/(c_max*sqrt(2)); a dt computed by the caller in a different
// order of operations may exceed the limit by a few ulps, which must not be refused.
constexpr double kStabilityRoundingSlack = 1e-12;
// The default time step, as a fraction of the CFL limit.
constexpr double kDefaultDtFraction = 0.9;
// Default sponge: a wave crossing the layer and coming back is damped by this factor. With a
// quadratic ramp, sigma integrates to sigma_max*W*h/3 over the layer, and the amplitude of
// u_tt + sigma u_t = c^2 u_xx decays like exp(-sigma x/(2c)) along the path, so the round trip
// damps by exp(-sigma_max*W*h/(3c)).
constexpr double kSpongeRoundTripDamping = 1e3;

void check_points(const std::vector<index_t>& points, index_t n, const char* what) {
  require(!points.empty(), "wave2d: no {}s given: expected at least one grid point index", what);
  for (std::size_t k = 0; k < points.size(); ++k)
    require(points[k] >= 0 && points[k] < n * n,
            "wave2d: {} {} is grid point {}, outside 0..{} for the {}x{} grid", what, k, points[k],
            n * n - 1, n, n);
}

void check_speed(double speed, const char* what) {
  require(std::isfinite(speed) && speed > 0, "wave2d: {} = {} must be positive and finite", what,
          speed);
}

// `count` distinct grid points on a near-square regular sub-grid of the rectangle of rows
// [row_begin, row_end) and columns [col_begin, col_end), row-major; the last sub-grid row may be
// partly filled. count must not exceed the rectangle's points.
std::vector<index_t> regular_subgrid(index_t n, index_t row_begin, index_t row_end,
                                     index_t col_begin, index_t col_end, index_t count) {
  const index_t height = row_end - row_begin;
  const index_t width = col_end - col_begin;
  const double aspect = static_cast<double>(width) / static_cast<double>(height);
  index_t cols = static_cast<index_t>(std::ceil(std::sqrt(static_cast<double>(count) * aspect)));
  cols = std::clamp<index_t>(cols, 1, width);
  index_t rows = (count + cols - 1) / cols;
  if (rows > height) {
    cols = (count + height - 1) / height;
    rows = (count + cols - 1) / cols;
  }
  // Cell centres: positions strictly increase since rows <= height and cols <= width.
  std::vector<index_t> points;
  points.reserve(static_cast<std::size_t>(count));
  for (index_t r = 0; r < rows; ++r) {
    const index_t row = row_begin + (2 * r + 1) * height / (2 * rows);
    for (index_t c = 0; c < cols && static_cast<index_t>(points.size()) < count; ++c)
      points.push_back(row * n + col_begin + (2 * c + 1) * width / (2 * cols));
  }
  return points;
}

}  // namespace

Wave2d::Wave2d(Wave2dConfig config) : config_(std::move(config)) {
  const index_t n = config_.n;
  require(n > 0, "wave2d: grid size n = {} must be positive", n);
  // Three coefficient arrays and the two time levels of a solve, each (n+2)^2 doubles.
  const double padded_points = static_cast<double>(n + 2) * static_cast<double>(n + 2);
  require_available_memory(5 * 8 * padded_points,
                           fmt::format("wave2d: the {}x{} grid's coefficients and state", n, n));
  require(config_.nt > 0, "wave2d: number of time steps nt = {} must be positive", config_.nt);
  require(config_.substeps >= 1,
          "wave2d: substeps = {} must be at least 1 (PDE time steps per observation step)",
          config_.substeps);
  check_speed(config_.speed, "wave speed");
  for (std::size_t l = 0; l < config_.layers.size(); ++l) {
    const index_t first = config_.layers[l].first_row;
    const index_t lowest = l == 0 ? 0 : config_.layers[l - 1].first_row + 1;
    require(first >= lowest && first < n,
            "wave2d: layer {} starts at row {}: expected {}..{} (rows strictly increasing, grid "
            "rows 0..{})",
            l, first, lowest, n - 1, n - 1);
    check_speed(config_.layers[l].speed, "layer speed");
  }
  const double limit = max_stable_dt(n, max_speed());
  require(std::isfinite(config_.dt) && config_.dt >= 0,
          "wave2d: time step dt = {} must be positive (or 0 for the default)", config_.dt);
  if (config_.dt == 0) config_.dt = kDefaultDtFraction * limit;
  require(config_.dt <= limit * (1 + kStabilityRoundingSlack),
          "wave2d: time step dt = {} is unstable for leapfrog: the CFL condition needs dt <= "
          "h/(c_max*sqrt(2)) = {} (n = {}, c_max = {}); pass dt = 0 for {} of that limit",
          config_.dt, limit, n, max_speed(), kDefaultDtFraction);
  require(config_.sponge_width >= 0 && config_.sponge_width <= n / 2,
          "wave2d: sponge_width = {} must be in 0..{} (grid points next to each side of the {}x{} "
          "grid)",
          config_.sponge_width, n / 2, n, n);
  require(std::isfinite(config_.sponge_damping) && config_.sponge_damping >= 0,
          "wave2d: sponge_damping = {} must be non-negative and finite (0 for the default)",
          config_.sponge_damping);
  check_points(config_.sources, n, "source");
  check_points(config_.sensors, n, "sensor");

  const double h = 1.0 / static_cast<double>(n + 1);
  const index_t width = config_.sponge_width;
  if (config_.sponge_damping == 0 && width > 0)
    config_.sponge_damping =
        3 * max_speed() * std::log(kSpongeRoundTripDamping) / (static_cast<double>(width) * h);

  const index_t side = padded_side();
  const auto padded_size = static_cast<std::size_t>(side * side);
  centre_.assign(padded_size, 0.0);
  neighbour_.assign(padded_size, 0.0);
  lag_.assign(padded_size, 0.0);
  const double dt = config_.dt;
  // 1/(1 + sigma dt/2) and (1 - sigma dt/2)/(1 + sigma dt/2): the entries of D_a and D_b.
  const auto damping_factors = [&](index_t row, index_t col) {
    const index_t to_boundary = std::min({row, col, n - 1 - row, n - 1 - col});
    double sigma = 0;
    if (to_boundary < width) {
      const double depth = static_cast<double>(width - to_boundary) / static_cast<double>(width);
      sigma = config_.sponge_damping * depth * depth;
    }
    const double a = 1 / (1 + sigma * dt / 2);
    return std::pair{a, (1 - sigma * dt / 2) * a};
  };
  std::size_t layer = 0;
  double speed = config_.speed;
  for (index_t row = 0; row < n; ++row) {
    while (layer < config_.layers.size() && config_.layers[layer].first_row == row)
      speed = config_.layers[layer++].speed;
    for (index_t col = 0; col < n; ++col) {
      const auto [a, b] = damping_factors(row, col);
      const auto x = static_cast<std::size_t>((row + 1) * side + col + 1);
      neighbour_[x] = a * dt * dt * speed * speed / (h * h);
      centre_[x] = 2 * a - 4 * neighbour_[x];
      lag_[x] = b;
    }
  }

  const auto to_offset = [n, side](index_t p) { return (p / n + 1) * side + p % n + 1; };
  for (const index_t p : config_.sources) {
    source_offsets_.push_back(to_offset(p));
    source_gain_.push_back(dt * dt / (h * h) * damping_factors(p / n, p % n).first);
  }
  for (const index_t p : config_.sensors)
    sensor_offsets_.push_back(to_offset(p));
}

Wave2d Wave2d::with_default_layout(index_t n, index_t nsources, index_t nsensors, index_t nt,
                                   index_t substeps) {
  require(n >= 2, "wave2d: default layout needs n >= 2 (a left and a right half), got n = {}", n);
  // The 2D wave of a point source is broadband, down to wavelengths of the size of the square: with
  // a sponge of a quarter of the grid on each side, the kernels' RMS after twice the crossing time
  // is about a tenth of their overall RMS, against 0.7 with a reflecting boundary (n = 64, 128).
  const index_t width = n / 4;
  const index_t half = n / 2;
  const index_t height = n - 2 * width;
  const index_t left = half - width;
  const index_t right = n - width - half;
  require(
      nsources >= 1 && nsources <= height * left,
      "wave2d: default layout puts sources in the left {}x{} half clear of the sponge: expected "
      "1..{} sources, got {}",
      height, left, height * left, nsources);
  require(
      nsensors >= 1 && nsensors <= height * right,
      "wave2d: default layout puts sensors in the right {}x{} half clear of the sponge: expected "
      "1..{} sensors, got {}",
      height, right, height * right, nsensors);
  return Wave2d({.n = n,
                 .nt = nt,
                 .sources = regular_subgrid(n, width, n - width, width, half, nsources),
                 .sensors = regular_subgrid(n, width, n - width, half, n - width, nsensors),
                 .substeps = substeps,
                 .sponge_width = width});
}

double Wave2d::max_stable_dt(index_t n, double max_speed) {
  const double h = 1.0 / static_cast<double>(n + 1);
  return h / (max_speed * std::sqrt(2.0));
}

Shape Wave2d::shape() const {
  return {.nd = static_cast<index_t>(config_.sensors.size()),
          .nm = static_cast<index_t>(config_.sources.size()),
          .nt = config_.nt};
}

double Wave2d::max_speed() const {
  double result = config_.speed;
  for (const SpeedLayer& layer : config_.layers)
    result = std::max(result, layer.speed);
  return result;
}

LtiPorts Wave2d::ports() const {
  return {.shape = shape(),
          .substeps = config_.substeps,
          .state_size = static_cast<std::size_t>(padded_side() * padded_side()),
          .sources = source_offsets_,
          .gains = source_gain_,
          .sensors = sensor_offsets_};
}

void Wave2d::step(const double* current, double* older) const {
  const index_t n = config_.n;
  const index_t side = padded_side();
  // The zero halo supplies the Dirichlet boundary, so the inner loop is contiguous and branch-free;
  // older[x] is read before it is overwritten, and no other point of `older` is read.
  for (index_t row = 1; row <= n; ++row) {
    const index_t first = row * side;
    const double* mid = current + first;
    const double* up = mid - side;
    const double* down = mid + side;
    const double* centre = centre_.data() + first;
    const double* neighbour = neighbour_.data() + first;
    const double* lag = lag_.data() + first;
    double* result = older + first;
#pragma omp simd
    for (index_t col = 1; col <= n; ++col)
      result[col] = centre[col] * mid[col] +
                    neighbour[col] * (up[col] + down[col] + mid[col - 1] + mid[col + 1]) -
                    lag[col] * result[col];
  }
}

void Wave2d::step_transposed(const double* current, double* older) const {
  // A^T (p, q) = ((2I + dt^2 L_h K) D_a p + q, -D_b p): the second component is always -D_b times
  // the previous first one, so A^T is the three-level recurrence
  //   p_new = diag(centre) p + (4-neighbour sum of neighbour.*p) - D_b p_prev.
  // With a varying speed L_h K != K L_h: each neighbour is weighted by its own coefficient.
  const index_t n = config_.n;
  const index_t side = padded_side();
  for (index_t row = 1; row <= n; ++row) {
    const index_t first = row * side;
    const double* mid = current + first;
    const double* up = mid - side;
    const double* down = mid + side;
    const double* centre = centre_.data() + first;
    const double* neighbour = neighbour_.data() + first;
    const double* neighbour_up = neighbour - side;
    const double* neighbour_down = neighbour + side;
    const double* lag = lag_.data() + first;
    double* result = older + first;
#pragma omp simd
    for (index_t col = 1; col <= n; ++col)
      result[col] = centre[col] * mid[col] + neighbour_up[col] * up[col] +
                    neighbour_down[col] * down[col] + neighbour[col - 1] * mid[col - 1] +
                    neighbour[col + 1] * mid[col + 1] - lag[col] * result[col];
  }
}

std::vector<double> Wave2d::kernels() const {
  const Shape s = shape();
  s.validate();
  require_available_memory(8 * static_cast<double>(s.kernel_size()),
                           fmt::format("wave2d: the kernels of shape {}", s.str()));
  // B^T e_i and C only touch the first component p of the adjoint state z = (p, q), and
  // z_0 = (e_i, 0) starts with p_prev = 0: the two buffers hold p and p_prev.
  return lti_kernels(
      ports(), [this](const double* current, double* older) { step_transposed(current, older); });
}

void Wave2d::apply_forward(std::span<const double> m, std::span<double> d) const {
  const LtiPorts p = ports();
  check_lti_vectors(p, "wave2d apply_forward", m.size(), d.size());
  lti_forward(
      p, [this](const double* current, double* older) { step(current, older); }, m, d);
}

void Wave2d::apply_adjoint(std::span<const double> d, std::span<double> m) const {
  const LtiPorts p = ports();
  check_lti_vectors(p, "wave2d apply_adjoint", m.size(), d.size());
  // B^T and C^T only touch the adjoint state's first component, which `current` holds.
  lti_adjoint(
      p, [this](const double* current, double* older) { step_transposed(current, older); }, d, m);
}

}  // namespace shiftop::models
