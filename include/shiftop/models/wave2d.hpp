// shiftop::models::Wave2d — the p2o map of a 2D acoustic wave equation with an absorbing sponge
// layer: the hyperbolic LTI case the block-Toeplitz method targets, where the p2o map has no
// low-rank shortcut (fft-block-toeplitz-matvec-multi-gpu, section 2.1, eqs. (2)-(5); section 2.2).
//
// u_tt + sigma(x) u_t = c(x)^2 Laplacian(u) + f on the unit square, n x n interior grid points
// (spacing h = 1/(n+1)), homogeneous Dirichlet boundary, at rest at t = 0. Explicit leapfrog with a
// centred damping term, second order in time and space:
//   (1 + sigma dt/2) u^{l+1} = 2 u^l - (1 - sigma dt/2) u^{l-1} + dt^2 (c^2 L_h u^l + f),
// u^l the grid values at time l*dt, L_h the 5-point Laplacian. Parameter j is the strength of a
// point source at grid point x_j, f = sum_j m_j delta_h(x - x_j) with the discrete delta 1/h^2 at
// one grid point.
//
// As a one-step system (2) on the state w = (u^l, u^{l-1}) in R^{2N}, N = n^2:
//   A = [ D_a (2I + dt^2 K L_h)   -D_b ]     C = [ (dt^2/h^2) D_a P ]     B = [ Q  0 ],
//       [ I                        0   ],        [ 0                ],
// D_a = diag(1/(1 + sigma dt/2)), D_b = diag((1 - sigma dt/2)/(1 + sigma dt/2)), K = diag(c^2),
// P (N x nm) puts parameter j at its source point, Q (nd x N) samples the sensor points. One
// observation step is s = `substeps` PDE steps with the source m_k held constant, so exactly as in
// Heat2d
//   w_{k+1} = A^s w_k + S C m_k,   S = sum_{q<s} A^q,   d_k = B w_{k+1},   k = 0..nt-1,
// and F is block lower-triangular Toeplitz with F_t = B (A^s)^t S C.
//
// Wave speed: `speed`, or in a layered medium each SpeedLayer's speed from its first_row down.
// Sponge: e = min(row, col, n-1-row, n-1-col) counts the grid points between a point and the
// boundary; sigma = sponge_damping * ((W - e)/W)^2 for e < W = sponge_width, else 0. Grid points
// are numbered row-major, p = row*n + col.
#pragma once

#include <string_view>
#include <vector>

#include "shiftop/core/shape.hpp"
#include "shiftop/models/grid2d.hpp"

namespace shiftop::models {

/// Rows first_row..n-1 (up to the next layer's first_row) have wave speed `speed`.
struct SpeedLayer {
  index_t first_row = 0;
  double speed = 1.0;
};

struct Wave2dConfig {
  /// Interior grid points per side.
  index_t n = 64;
  /// Wave speed above the first layer (everywhere when there are no layers), positive.
  double speed = 1.0;
  /// Optional layered medium, first_row strictly increasing in 0..n-1.
  std::vector<SpeedLayer> layers{};
  /// PDE time step; 0 picks 0.9 of the leapfrog CFL limit h/(c_max*sqrt(2)).
  double dt = 0.0;
  /// Observation time steps.
  index_t nt = 100;
  /// Grid point of each parameter (row-major, 0..n*n-1): the columns of P.
  std::vector<index_t> sources;
  /// Grid point of each observation (row-major, 0..n*n-1): the rows of Q.
  std::vector<index_t> sensors;
  /// PDE time steps per observation step (at least 1); the observation interval is substeps*dt.
  index_t substeps = 1;
  /// Grid points of damping next to each side, 0..n/2; 0 leaves the boundary fully reflecting.
  index_t sponge_width = 16;
  /// Peak damping sigma (1/time) at the boundary; 0 picks 3*c_max*ln(1000)/(W*h), which damps
  /// a wave's amplitude by about 1000 on its way through the layer and back.
  double sponge_damping = 0.0;
};

/// config(), shape(), observation_interval(), kernels(), apply_forward() and apply_adjoint() come
/// from Grid2dModel (shiftop/models/grid2d.hpp).
class Wave2d : public Grid2dModel<Wave2d, Wave2dConfig> {
 public:
  /// Validates the configuration and resolves dt = 0 and sponge_damping = 0 to their defaults;
  /// throws shiftop::Error on a non-positive size, speed or substeps, badly ordered layers, an
  /// unstable dt, a sponge wider than half the grid, an out-of-range grid point, or no
  /// source/sensor.
  explicit Wave2d(Wave2dConfig config);

  /// A deterministic layout clear of the sponge (width n/4): `nsources` points on a regular
  /// sub-grid of the left half of the square, `nsensors` on a regular sub-grid of the right half;
  /// speed 1, default dt and damping.
  static Wave2d with_default_layout(index_t n, index_t nsources, index_t nsensors, index_t nt,
                                    index_t substeps = 1);

  /// The CFL limit h/(max_speed*sqrt(2)) of leapfrog with the 5-point Laplacian, for any
  /// sigma >= 0 (a finite grid's exact limit is slightly larger).
  static double max_stable_dt(index_t n, double max_speed);

  /// Largest wave speed of the medium.
  double max_speed() const;

 private:
  friend class Grid2dModel<Wave2d, Wave2dConfig>;
  static constexpr std::string_view kName = "wave2d";

  /// One leapfrog step without source: `older` holds u^{n-1} on entry and u^{n+1} on return.
  void step(const double* current, double* older) const;
  /// The same for A^T on the adjoint pair (p, q = -D_b p_prev): `older` holds p_prev, then p_new.
  /// B^T and C^T only touch the adjoint state's first component p, and the kernels' z_0 = (e_i, 0)
  /// starts with p_prev = 0, so the shared time stepping's two buffers hold p and p_prev.
  void step_transposed(const double* current, double* older) const;

  /// Per padded grid point: A's top-left block is diag(centre_) + diag(neighbour_) * (4-neighbour
  /// sum), its top-right block -diag(lag_).
  std::vector<double> centre_;
  std::vector<double> neighbour_;
  std::vector<double> lag_;
};

extern template class Grid2dModel<Wave2d, Wave2dConfig>;

}  // namespace shiftop::models
