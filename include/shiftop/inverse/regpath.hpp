// shiftop::inverse::RegularizationPath — Tikhonov regularisation of a block-Toeplitz inverse
// problem for every weight alpha at once, through the GSVD of each frequency pair (issue 18;
// jacobi-svd-gsvd-gpu-thesis, chapter 3, for the GSVD).
//
// THE CIRCULANT APPROXIMATION. The block-Toeplitz F (Nd x Nm blocks, Nt steps) is embedded in the
// block circulant C_F of period L = 2*Nt that the FFT matvec runs through (DESIGN.md); the data d
// (Nd x Nt) is padded with Nt zero steps, the parameter m gets L steps, and the regulariser L_R is
// a block circulant of the same period. The embedded problem
//   min_m  ||C_F m - [d; 0]||^2 + alpha^2 ||C_R m||^2
// separates under the DFT into the frequency problems
//   min_{m_w} ||F^[w] m_w - d_w||^2 + alpha^2 ||R^[w] m_w||^2,   w = 0..L-1,
// with F^[w] = sum_t F_t exp(-2 pi i w t / L) (Nd x Nm) and R^[w] the regulariser's symbol. With
// the GSVD F^[w] = U diag(sigma_f) X, R^[w] = V diag(sigma_g) X:
//   m_w = X^{-1} diag(sigma_f / (sigma_f^2 + alpha^2 sigma_g^2)) U^H d_w,
// so after the GSVDs (only w = 0..Nt: the others are conjugates) each alpha costs O(Nm) per
// frequency for the curves and one X^{-1} product per frequency for a solution. The result is the
// first Nt steps of the inverse DFT. It is NOT the Tikhonov solution of the Toeplitz problem
// itself (there m has Nt steps and nothing wraps around); it is its circulant approximation, a
// starting point or a preconditioner for the exact solve (`shiftop solve`, which runs CG on the
// Toeplitz normal equations with the circulant preconditioner of
// inverse/circulant_preconditioner.hpp).
//
// THE REGULARISER, shift-invariant in time, possibly coupling the parameters in space:
//   R^[w] = [ mass * I ;  time_weight * delta(w)^k * I ;  space_weight * Lap ]   (rows stacked,
// the blocks with a zero weight, or k = 0 for the middle one, left out), where
// delta(w) = 1 - exp(-2 pi i w / L) is the symbol of the first difference in time (k = 1: first
// derivative, k = 2: second) and Lap an Nm x Nm graph Laplacian of the parameter points. The GSVD
// needs R^[w] of full column rank at every frequency: at w = 0 delta vanishes and a graph
// Laplacian is singular (constants are in its null space), so only the identity block keeps
// R^[0] of full rank: mass > 0 is required, and the constructor refuses mass <= 0 saying why.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "shiftop/core/backend.hpp"
#include "shiftop/core/shape.hpp"
#include "shiftop/gsvd/gsvd.hpp"

namespace shiftop::inverse {

struct Regulariser {
  double mass = 1.0;         ///< weight of the identity block (> 0)
  int time_derivative = 0;   ///< k: 0 (none), 1 or 2
  double time_weight = 1.0;  ///< weight of the time-derivative block (used when k > 0)
  /// Nm x Nm row-major symmetric graph Laplacian of the parameter points; empty: none.
  std::vector<double> laplacian;
  double space_weight = 1.0;  ///< weight of the Laplacian block (used when it is given)

  /// The rows of R^[w]: Nm * (1 + (k > 0 and time_weight != 0) + (laplacian given and
  /// space_weight != 0)); a block with a zero weight is left out.
  index_t rows(index_t nm) const;
  /// R^[w] (rows(nm) x nm, column-major) at frequency w of period L.
  std::vector<std::complex<double>> symbol(index_t nm, index_t w, index_t period) const;
};

/// Throws shiftop::Error, one line starting with `what` (e.g. "--laplacian lap.npy") and naming
/// the entry, unless `laplacian` holds an Nm x Nm matrix (row-major) of finite numbers that is
/// exactly symmetric: the Regulariser's Laplacian, as RegularizationPath checks it.
void require_laplacian(std::span<const double> laplacian, index_t nm, std::string_view what);

struct RegPathOptions {
  /// OpenMP threads (F^ and the GSVDs over the frequencies on the CPU); 0: OpenMP's default.
  int threads = 0;
  /// Passed to the GSVD (compute_vectors is always on; backend and gpu are ignored: the two
  /// below say where it runs).
  svd::GsvdOptions gsvd;
  /// Where the GSVDs of the frequency pairs run: Backend::Cuda on the GPU of `gpu`, as
  /// svd::GsvdOptions::gpu (F^ and the symbols are formed on the CPU either way).
  Backend backend = Backend::Cpu;
  GpuOptions gpu{};
  /// The frequency pairs whose GSVDs are in memory at once (their R^, U, V and X with the GSVD's
  /// copies, about 32 (Nd + rows + Nm) Nm bytes each; F^ of every frequency, 16 (Nt + 1) Nd Nm
  /// bytes, is formed first): 0 chooses as many as fit 1 GiB, at least one. Results do not depend
  /// on it.
  index_t frequencies_per_batch = 0;
};

/// One alpha of the path: the quantities of the embedded problem above.
struct PathPoint {
  double alpha = 0.0;
  double residual_norm = 0.0;  ///< ||C_F m - [d; 0]||
  double seminorm = 0.0;       ///< ||C_R m||
  /// Generalized cross-validation ||r||^2 / trace(I - A(alpha))^2 over the L * Nd embedded data
  /// values, A(alpha) the influence matrix.
  double gcv = 0.0;
};

class RegularizationPath {
 public:
  /// `first_column` / `first_row`: F's kernels as btt::Plan::create takes them (first_row empty
  /// for a block lower-triangular F); `data`: d, Nd x Nt, SOTI (sensor-outer, time-inner). Computes
  /// F^ and the GSVD of every frequency pair w = 0..Nt. Throws shiftop::Error for bad sizes,
  /// non-finite values, a regulariser without full column rank, or a GSVD that did not converge.
  RegularizationPath(std::span<const double> first_column, std::span<const double> first_row,
                     const Shape& shape, const Regulariser& regulariser,
                     std::span<const double> data, const RegPathOptions& options = {});
  ~RegularizationPath();
  RegularizationPath(RegularizationPath&&) noexcept;
  RegularizationPath& operator=(RegularizationPath&&) noexcept;

  const Shape& shape() const;
  /// The path at each alpha (> 0, finite), O(Nm * (Nt + 1)) per alpha.
  std::vector<PathPoint> evaluate(std::span<const double> alphas) const;
  /// The circulant-embedded Tikhonov solution for alpha: Nm x Nt, SOTI. O(Nm r (Nt + 1)) with
  /// r = min(Nd, Nm): only the first r columns of each X^{-1} can meet a nonzero filter factor.
  std::vector<double> solve(double alpha) const;
  /// The bytes of the arrays the path keeps: about 16 (Nt + 1) Nm (r + 3), r = min(Nd, Nm) (the
  /// first r columns of each X^{-1}, not X's LU: Nm = 2000, Nd = 100, Nt = 1000 keep 3.3 GB, not
  /// 64 GB).
  std::size_t bytes() const;
  /// The generalized singular values sigma_f / sigma_g of frequency w (0..Nt), nonincreasing.
  std::vector<double> generalized_values(index_t w) const;
  /// The weights a path takes when none are given (the tool's and Python's default): `count`
  /// alphas (>= 2) log-spaced from the smallest positive generalized singular value of every
  /// frequency (at most 12 decades below the largest) to the largest, the range over which the
  /// filter factors gamma^2 / (gamma^2 + alpha^2) go from 1 to 0 whatever the problem's scale; a
  /// decade either side of a single value; {1} when none is positive.
  std::vector<double> default_alphas(index_t count = 40) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The index of the smallest GCV value of a path (ties: the first; NaN values skipped unless all
/// are NaN). Throws shiftop::Error for an empty path.
std::size_t gcv_choice(std::span<const PathPoint> path);
/// The L-curve corner, when the path has one: the index of the largest curvature of
/// (log residual_norm, log seminorm) along the path (alphas increasing, derivatives by centred
/// differences on the possibly uneven grid) if that point is a strict local maximum of the
/// curvature with a point on either side that has one too (so not the first or last interior
/// point, where the corner may lie beyond the alphas), and the curve turns there: by at least 45
/// degrees from a segment before that point to one after it, counterclockwise as an L (a
/// straight or gently bending path, or one bending the other way, has no corner). std::nullopt
/// otherwise, and for paths of fewer than 5 points.
std::optional<std::size_t> lcurve_corner(std::span<const PathPoint> path);

}  // namespace shiftop::inverse
