// shiftop::models::Heat2d — the p2o map of a 2D heat equation, a real LTI system whose first block
// column is computed by adjoint solves (fft-block-toeplitz-matvec-multi-gpu, section 2.1, eqs.
// (2)-(5)).
//
// u_t = kappa * Laplacian(u) + sources on the unit square, n x n interior grid points (spacing
// h = 1/(n+1)), homogeneous Dirichlet boundary, explicit Euler in time with u_0 = 0. The PDE time
// step dt is finer than the observation interval (section 2.3, point (1)): one observation step is
// s = `substeps` Euler steps v <- A v + C m_k with the source m_k held constant, so
//   u_{k+1} = A^s u_k + S C m_k,   S = sum_{q<s} A^q,   d_k = B u_{k+1},   k = 0..nt-1,
// A = I + dt*kappa*L_h (5-point Laplacian), C injects parameter j at its source point scaled by dt
// (m is a source rate), B samples the state at the sensor points. Grid points are numbered
// row-major, p = row*n + col. F is block lower-triangular Toeplitz with F_t = B (A^s)^t S C.
#pragma once

#include <string_view>
#include <vector>

#include "shiftop/core/shape.hpp"
#include "shiftop/models/grid2d.hpp"

namespace shiftop::models {

struct Heat2dConfig {
  /// Interior grid points per side.
  index_t n = 64;
  /// Diffusivity, positive.
  double kappa = 1.0;
  /// PDE time step; 0 picks 0.9 of the explicit Euler stability limit h^2/(4*kappa).
  double dt = 0.0;
  /// Observation time steps.
  index_t nt = 100;
  /// Grid point of each parameter (row-major, 0..n*n-1): the columns of C.
  std::vector<index_t> sources;
  /// Grid point of each observation (row-major, 0..n*n-1): the rows of B.
  std::vector<index_t> sensors;
  /// PDE time steps per observation step (at least 1); the observation interval is substeps*dt.
  index_t substeps = 1;
};

/// config(), shape(), observation_interval(), kernels(), apply_forward() and apply_adjoint() come
/// from Grid2dModel (shiftop/models/grid2d.hpp).
class Heat2d : public Grid2dModel<Heat2d, Heat2dConfig> {
 public:
  /// Validates the configuration and resolves dt = 0 to the default; throws shiftop::Error on a
  /// non-positive size, kappa or substeps, an unstable dt, an out-of-range grid point, or no
  /// source/sensor.
  explicit Heat2d(Heat2dConfig config);

  /// A deterministic layout: `nsources` points on a regular sub-grid of the left half of the
  /// square, `nsensors` on a regular sub-grid of the right half; kappa = 1, default dt.
  static Heat2d with_default_layout(index_t n, index_t nsources, index_t nsensors, index_t nt,
                                    index_t substeps = 1);

  /// Explicit Euler is stable (and A entrywise nonnegative) iff dt <= h^2/(4*kappa).
  static double max_stable_dt(index_t n, double kappa);

 private:
  friend class Grid2dModel<Heat2d, Heat2dConfig>;
  static constexpr std::string_view kName = "heat2d";

  /// out = A in on padded states (the halo of `out` is never written, so it stays zero).
  void step(const double* in, double* out) const;
  /// out = A^T in.
  void step_transposed(const double* in, double* out) const;

  /// dt*kappa/h^2: the weight of each neighbour in A.
  double coupling_ = 0.0;
};

extern template class Grid2dModel<Heat2d, Heat2dConfig>;

}  // namespace shiftop::models
