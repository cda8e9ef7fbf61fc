#include "shiftop/models/heat2d.hpp"

#include <cmath>
#include <utility>

#include "models/grid2d.hpp"
#include "shiftop/core/error.hpp"

namespace shiftop::models {

Heat2d::Heat2d(Heat2dConfig config) : Grid2dModel(std::move(config)) {
  const index_t n = config_.n;
  // Two time levels of a solve.
  check_grid_sizes(kName, n, config_.nt, config_.substeps, 2, "state");
  require(std::isfinite(config_.kappa) && config_.kappa > 0,
          "heat2d: diffusivity kappa = {} must be positive and finite", config_.kappa);
  const double limit = max_stable_dt(n, config_.kappa);
  resolve_time_step(kName, config_.dt, limit,
                    fmt::format("explicit Euler: it must be at most h^2/(4*kappa) = {} (n = {}, "
                                "kappa = {})",
                                limit, n, config_.kappa));
  check_points(kName, config_.sources, n, "source");
  check_points(kName, config_.sensors, n, "sensor");

  const double h = grid_spacing(n);
  coupling_ = config_.dt * config_.kappa / (h * h);
  place_points([this](index_t) { return config_.dt; });  // m is a source rate
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
                 .sources = regular_subgrid(n, 0, n, 0, half, nsources),
                 .sensors = regular_subgrid(n, 0, n, half, n, nsensors),
                 .substeps = substeps});
}

double Heat2d::max_stable_dt(index_t n, double kappa) {
  const double h = grid_spacing(n);
  return h * h / (4 * kappa);
}

void Heat2d::step(const double* in, double* out) const {
  const index_t n = config_.n;
  const double c = coupling_;
  const double diagonal = 1 - 4 * c;
  for_each_interior_row(
      n, in, [&](index_t first, const double* mid, const double* up, const double* down) {
        double* result = out + first;
#pragma omp simd
        for (index_t col = 1; col <= n; ++col)
          result[col] =
              diagonal * mid[col] + c * (up[col] + down[col] + mid[col - 1] + mid[col + 1]);
      });
}

void Heat2d::step_transposed(const double* in, double* out) const {
  // L_h is symmetric (5-point Laplacian, Dirichlet), so A^T = A: the same stencil.
  step(in, out);
}

template class Grid2dModel<Heat2d, Heat2dConfig>;

}  // namespace shiftop::models
