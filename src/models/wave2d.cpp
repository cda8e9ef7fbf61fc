#include "shiftop/models/wave2d.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "models/grid2d.hpp"
#include "shiftop/core/error.hpp"

namespace shiftop::models {

namespace {

// Default sponge: a wave crossing the layer and coming back is damped by this factor. With a
// quadratic ramp, sigma integrates to sigma_max*W*h/3 over the layer, and the amplitude of
// u_tt + sigma u_t = c^2 u_xx decays like exp(-sigma x/(2c)) along the path, so the round trip
// damps by exp(-sigma_max*W*h/(3c)).
constexpr double kSpongeRoundTripDamping = 1e3;

void check_speed(double speed, const char* what) {
  require(std::isfinite(speed) && speed > 0, "wave2d: {} = {} must be positive and finite", what,
          speed);
}

}  // namespace

Wave2d::Wave2d(Wave2dConfig config) : Grid2dModel(std::move(config)) {
  const index_t n = config_.n;
  // Three coefficient arrays and the two time levels of a solve.
  check_grid_sizes(kName, n, config_.nt, config_.substeps, 5, "coefficients and state");
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
  resolve_time_step(kName, config_.dt, limit,
                    fmt::format("leapfrog: the CFL condition needs dt <= h/(c_max*sqrt(2)) = {} "
                                "(n = {}, c_max = {})",
                                limit, n, max_speed()));
  require(config_.sponge_width >= 0 && config_.sponge_width <= n / 2,
          "wave2d: sponge_width = {} must be in 0..{} (grid points next to each side of the {}x{} "
          "grid)",
          config_.sponge_width, n / 2, n, n);
  require(std::isfinite(config_.sponge_damping) && config_.sponge_damping >= 0,
          "wave2d: sponge_damping = {} must be non-negative and finite (0 for the default)",
          config_.sponge_damping);
  check_points(kName, config_.sources, n, "source");
  check_points(kName, config_.sensors, n, "sensor");

  const double h = grid_spacing(n);
  const index_t width = config_.sponge_width;
  if (config_.sponge_damping == 0 && width > 0)
    config_.sponge_damping =
        3 * max_speed() * std::log(kSpongeRoundTripDamping) / (static_cast<double>(width) * h);

  centre_.assign(padded_size(), 0.0);
  neighbour_.assign(padded_size(), 0.0);
  lag_.assign(padded_size(), 0.0);
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
      const auto x = static_cast<std::size_t>(padded_offset(row * n + col));
      neighbour_[x] = a * dt * dt * speed * speed / (h * h);
      centre_[x] = 2 * a - 4 * neighbour_[x];
      lag_[x] = b;
    }
  }

  place_points([&](index_t p) { return dt * dt / (h * h) * damping_factors(p / n, p % n).first; });
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
  const double h = grid_spacing(n);
  return h / (max_speed * std::sqrt(2.0));
}

double Wave2d::max_speed() const {
  double result = config_.speed;
  for (const SpeedLayer& layer : config_.layers)
    result = std::max(result, layer.speed);
  return result;
}

void Wave2d::step(const double* current, double* older) const {
  // older[x] is read before it is overwritten, and no other point of `older` is read.
  const index_t n = config_.n;
  for_each_interior_row(
      n, current, [&](index_t first, const double* mid, const double* up, const double* down) {
        const double* centre = centre_.data() + first;
        const double* neighbour = neighbour_.data() + first;
        const double* lag = lag_.data() + first;
        double* result = older + first;
#pragma omp simd
        for (index_t col = 1; col <= n; ++col)
          result[col] = centre[col] * mid[col] +
                        neighbour[col] * (up[col] + down[col] + mid[col - 1] + mid[col + 1]) -
                        lag[col] * result[col];
      });
}

void Wave2d::step_transposed(const double* current, double* older) const {
  // A^T (p, q) = ((2I + dt^2 L_h K) D_a p + q, -D_b p): the second component is always -D_b times
  // the previous first one, so A^T is the three-level recurrence
  //   p_new = diag(centre) p + (4-neighbour sum of neighbour.*p) - D_b p_prev.
  // With a varying speed L_h K != K L_h: each neighbour is weighted by its own coefficient.
  const index_t n = config_.n;
  const index_t side = padded_side();
  for_each_interior_row(
      n, current, [&](index_t first, const double* mid, const double* up, const double* down) {
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
      });
}

template class Grid2dModel<Wave2d, Wave2dConfig>;

}  // namespace shiftop::models
