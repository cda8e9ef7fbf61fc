// shiftop::models::Grid2dModel — what the PDE models on the unit square (Heat2d, Wave2d) share:
// the n x n interior grid and its point layout, and the p2o map's kernels, F and F^T by the shared
// time stepping (models/lti_stepping.hpp). A model supplies its one-step operator A as
// step(current, other) and A^T as step_transposed(current, other) (see lti_stepping.hpp) and
// C's gain at each source point; its configuration has at least n, dt, nt, sources, sensors and
// substeps.
//
// Grid points are numbered row-major, p = row*n + col in 0..n*n-1, with spacing h = 1/(n+1). A
// state is stored as an (n+2) x (n+2) array whose halo stays zero (the homogeneous Dirichlet
// boundary), grid point p at offset (row+1)*(n+2) + col+1. The member functions that are not
// defined here are instantiated for each model in its source file.
#pragma once

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "shiftop/core/shape.hpp"
#include "shiftop/models/lti_stepping.hpp"

namespace shiftop::models {

/// The spacing h = 1/(n+1) of the n x n interior grid of the unit square.
inline double grid_spacing(index_t n) {
  return 1.0 / static_cast<double>(n + 1);
}

template <typename Model, typename Config>
class Grid2dModel {
 public:
  /// The configuration with its defaults resolved.
  const Config& config() const { return config_; }
  /// {nd = sensors, nm = sources, nt}.
  Shape shape() const {
    return {.nd = static_cast<index_t>(config_.sensors.size()),
            .nm = static_cast<index_t>(config_.sources.size()),
            .nt = config_.nt};
  }
  /// Time between observations, substeps*dt.
  double observation_interval() const { return static_cast<double>(config_.substeps) * config_.dt; }

  /// The first block column, double[nd][nm][nt] (SOTI): kernels[i][j][t] = (B (A^s)^t S C)_ij.
  std::vector<double> kernels() const;

  /// d = F m by forward time stepping; m is [nm][nt], d is [nd][nt] (SOTI).
  void apply_forward(std::span<const double> m, std::span<double> d) const;
  /// m = F^T d by backward (adjoint) time stepping; d is [nd][nt], m is [nm][nt] (SOTI).
  void apply_adjoint(std::span<const double> d, std::span<double> m) const;

 protected:
  explicit Grid2dModel(Config config) : config_(std::move(config)) {}

  /// Side of the state arrays: the n x n interior plus a zero halo for the Dirichlet boundary.
  index_t padded_side() const { return config_.n + 2; }
  /// Doubles in one state array, (n+2)^2.
  std::size_t padded_size() const {
    return static_cast<std::size_t>(padded_side() * padded_side());
  }
  /// Offset of grid point p (row-major, 0..n*n-1) in a state array.
  index_t padded_offset(index_t p) const {
    return (p / config_.n + 1) * padded_side() + p % config_.n + 1;
  }
  /// Resolves the configured sources and sensors to offsets in the state arrays, with C's entry
  /// gain(p) for the source at grid point p. Call once, after validating the configuration.
  template <typename Gain>
  void place_points(const Gain& gain) {
    for (const index_t p : config_.sources) {
      source_offsets_.push_back(padded_offset(p));
      source_gain_.push_back(gain(p));
    }
    for (const index_t p : config_.sensors)
      sensor_offsets_.push_back(padded_offset(p));
  }

  Config config_;

 private:
  const Model& model() const { return static_cast<const Model&>(*this); }
  /// The sources, gains and sensors for the shared time stepping.
  LtiPorts ports() const;

  /// Sources and sensors as offsets into the state arrays; source_gain_[j] = (C)_{x_j, j}.
  std::vector<index_t> source_offsets_;
  std::vector<index_t> sensor_offsets_;
  std::vector<double> source_gain_;
};

}  // namespace shiftop::models
