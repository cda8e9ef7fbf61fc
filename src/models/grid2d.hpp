// The definitions behind shiftop/models/grid2d.hpp (Grid2dModel's time stepping) and the checks and
// point layouts that the models on the n x n grid share. Heat2d and Wave2d include this and
// instantiate Grid2dModel for themselves; a model names itself in messages by Model::kName.
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
#include <string_view>
#include <vector>

#include "shiftop/core/available_memory.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/models/grid2d.hpp"
#include "shiftop/models/lti_stepping.hpp"

namespace shiftop::models {

// Explicit time stepping is stable for dt up to a limit; a dt computed by the caller in a different
// order of operations may exceed the limit by a few ulps, which must not be refused.
inline constexpr double kStabilityRoundingSlack = 1e-12;
// The default time step, as a fraction of the stability limit.
inline constexpr double kDefaultDtFraction = 0.9;

/// Checks the sizes every grid model has, and that `padded_arrays` arrays of (n+2)^2 doubles (the
/// `arrays`, as the memory error calls them) fit in memory.
inline void check_grid_sizes(std::string_view model, index_t n, index_t nt, index_t substeps,
                             int padded_arrays, std::string_view arrays) {
  require(n > 0, "{}: grid size n = {} must be positive", model, n);
  const double padded_points = static_cast<double>(n + 2) * static_cast<double>(n + 2);
  require_available_memory(padded_arrays * 8 * padded_points,
                           fmt::format("{}: the {}x{} grid's {}", model, n, n, arrays));
  require(nt > 0, "{}: number of time steps nt = {} must be positive", model, nt);
  require(substeps >= 1,
          "{}: substeps = {} must be at least 1 (PDE time steps per observation step)", model,
          substeps);
}

/// Resolves dt = 0 to the default fraction of the stability limit, and refuses a dt that is not
/// finite, negative, or above `limit`; `condition` says which limit ("<scheme>: <limit> = ...").
inline void resolve_time_step(std::string_view model, double& dt, double limit,
                              std::string_view condition) {
  require(std::isfinite(dt) && dt >= 0,
          "{}: time step dt = {} must be positive (or 0 for the default)", model, dt);
  if (dt == 0) dt = kDefaultDtFraction * limit;
  require(dt <= limit * (1 + kStabilityRoundingSlack),
          "{}: time step dt = {} is unstable for {}; pass dt = 0 for {} of that limit", model, dt,
          condition, kDefaultDtFraction);
}

/// Checks that `points` (the sources or the sensors, `what`) are grid points of the n x n grid.
inline void check_points(std::string_view model, const std::vector<index_t>& points, index_t n,
                         std::string_view what) {
  require(!points.empty(), "{}: no {}s given: expected at least one grid point index", model, what);
  for (std::size_t k = 0; k < points.size(); ++k)
    require(points[k] >= 0 && points[k] < n * n,
            "{}: {} {} is grid point {}, outside 0..{} for the {}x{} grid", model, what, k,
            points[k], n * n - 1, n, n);
}

/// `count` distinct grid points on a near-square regular sub-grid of the rectangle of rows
/// [row_begin, row_end) and columns [col_begin, col_end) of the n x n grid, row-major; the last
/// sub-grid row may be partly filled. count must not exceed the rectangle's points.
inline std::vector<index_t> regular_subgrid(index_t n, index_t row_begin, index_t row_end,
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

/// Calls row(first, mid, up, down) for each interior row of the padded (n+2) x (n+2) arrays:
/// `first` is the row's offset, `mid` points to the row of `in` and `up`, `down` to its
/// neighbours, so that row(...) can sweep columns 1..n with a contiguous, branch-free stencil
/// (the zero halo supplies the Dirichlet boundary).
template <typename Row>
void for_each_interior_row(index_t n, const double* in, const Row& row) {
  const index_t side = n + 2;
  for (index_t r = 1; r <= n; ++r) {
    const index_t first = r * side;
    const double* mid = in + first;
    row(first, mid, mid - side, mid + side);
  }
}

template <typename Model, typename Config>
LtiPorts Grid2dModel<Model, Config>::ports() const {
  return {.shape = shape(),
          .substeps = config_.substeps,
          .state_size = padded_size(),
          .sources = source_offsets_,
          .gains = source_gain_,
          .sensors = sensor_offsets_,
          .model = Model::kName};
}

template <typename Model, typename Config>
std::vector<double> Grid2dModel<Model, Config>::kernels() const {
  const Shape s = shape();
  s.validate();
  require_available_memory(8 * static_cast<double>(s.kernel_size()),
                           fmt::format("{}: the kernels of shape {}", Model::kName, s.str()));
  const auto step_transposed = [this](const double* current, double* other) {
    model().step_transposed(current, other);
  };
  return lti_kernels(ports(), step_transposed);
}

template <typename Model, typename Config>
void Grid2dModel<Model, Config>::apply_forward(std::span<const double> m,
                                               std::span<double> d) const {
  const auto step = [this](const double* current, double* other) { model().step(current, other); };
  lti_forward(ports(), step, m, d);
}

template <typename Model, typename Config>
void Grid2dModel<Model, Config>::apply_adjoint(std::span<const double> d,
                                               std::span<double> m) const {
  const auto step_transposed = [this](const double* current, double* other) {
    model().step_transposed(current, other);
  };
  lti_adjoint(ports(), step_transposed, d, m);
}

}  // namespace shiftop::models
