// shiftop::inverse::DataSpaceHessian — the dense data-space Hessian K = Gamma_noise + F Gamma_prior
// F* of the linear Gaussian inverse problem (mixed-precision-block-toeplitz-matvec, section 2.3,
// eq. 4), assembled with many right-hand sides per apply and factored by Cholesky once, so that
// every later data vector costs a triangular solve and two operator applies: the offline/online
// split of the tsunami digital twin (Henneking et al., cited in that paper's section 2.3).
//
// By the Woodbury identity Gamma_post = (F* Gamma_noise^-1 F + Gamma_prior^-1)^-1
// = Gamma_prior - Gamma_prior F* K^-1 F Gamma_prior, so
//   m_map = m_prior + Gamma_prior F* K^-1 (d - F m_prior),
// and K is (Nd*Nt)^2: small when there are few sensors, whatever Nm is.
//
// Offline (the constructor): K, then its Cholesky factor (LAPACK on the CPU, cuSOLVER on the
// GPU), and with a parameter-to-QoI map Q: W = K^-1 F Gamma_prior Q* and
// the posterior QoI variances. Online: map_point, qoi_map (one product with W^T), samples.
// Everything runs where F runs: host memory for a CPU plan, one GPU (K stays on it) for a CUDA
// plan. K is assembled one of two ways (DataSpaceAssembly):
// * Gram, chosen for a DiagonalPrior and a block-triangular F: K = Gamma_noise + D(Phi Phi^T),
//   with Phi[(i,a), j] = sqrt(gamma_j) f_ij[a] read off F* of the Nd unit vectors at t = Nt-1
//   (one batched apply), one DSYRK (2 (Nd Nt)^2 Nm / 2 flops) and D a prefix sum along the
//   diagonals of each Nt x Nt block (data_space_hessian.cpp derives it). It needs Phi's Nd*Nt*Nm
//   values besides K, and no per-column FFTs.
// * Applies, for any prior and F: K column by column in groups of identity columns (F*, then
//   Gamma_prior, then F, each with the group as right-hand sides); the reference.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "shiftop/btt/plan.hpp"
#include "shiftop/core/shape.hpp"
#include "shiftop/inverse/noise.hpp"
#include "shiftop/inverse/prior.hpp"

namespace shiftop::gpu {
class Context;
}

namespace shiftop::inverse {

class DenseSpace;

/// How far the offline phase is: `done` of `total` columns of the stage named `stage`
/// ("assembly": the columns of K; "qoi": the columns of F Gamma_prior Q*).
struct DataSpaceProgress {
  std::string_view stage;
  index_t done = 0;
  index_t total = 0;
};

/// How K is assembled (see the file comment).
enum class DataSpaceAssembly {
  Automatic,  ///< Gram where it applies (a DiagonalPrior and a block-triangular F), else Applies
  Gram,       ///< F Gamma_prior F* from one DSYRK; refused where it does not apply
  Applies,    ///< identity columns through F*, Gamma_prior and F
};

struct DataSpaceHessianOptions {
  /// Identity columns pushed through F*, Gamma_prior and F together: every apply of the offline
  /// phase gets this many right-hand sides (F's plan cuts them into its own groups of max_rhs).
  /// The workspace grows linearly with it. 0 chooses 64 (or Nd*Nt if smaller).
  index_t rhs_per_apply = 0;
  /// The prior mean m_prior (Nm*Nt values, SOTI); empty means zero.
  std::vector<double> prior_mean{};
  /// The parameter-to-QoI map Q (shape {Nq, Nm, Nt}, on the same backend as F); null for none.
  std::shared_ptr<btt::Plan> qoi{};
  /// For a CUDA F: the GPU context to hold K and run the dense algebra on; it must be on the
  /// device F's plan runs on. Null makes a new one on `device`.
  std::shared_ptr<gpu::Context> context{};
  int device = 0;
  DataSpaceAssembly assembly = DataSpaceAssembly::Automatic;
  /// Called after each group of columns of the offline phase (after the group is done on the
  /// GPU); the tool and the Python package print it on a terminal.
  std::function<void(const DataSpaceProgress&)> progress{};
};

/// A parameter entry: block j (0 <= j < Nm) at time step t (0 <= t < Nt).
struct ParameterIndex {
  index_t block = 0;
  index_t t = 0;
};

/// Seconds of the offline phase.
struct DataSpaceTimes {
  double assembly = 0;  // K's columns
  double factor = 0;    // Cholesky
  double qoi = 0;       // W and the QoI variances
};

class DataSpaceHessian {
 public:
  /// Assembles and factors K for F (shape {Nd, Nm, Nt}), the noise (Nd sensors, Nt steps) and
  /// the prior (Nm blocks, Nt steps). On a CUDA F the prior must run on the GPU too (a
  /// TimeSmoothingPrior or KernelPrior made with Backend::Cuda). Throws shiftop::Error on
  /// mismatched sizes, when K and its workspaces do not fit in (device) memory (checked before
  /// allocating), and when K is not positive definite.
  DataSpaceHessian(std::shared_ptr<btt::Plan> F, GaussianNoise noise, std::shared_ptr<Prior> prior,
                   DataSpaceHessianOptions options = {});
  ~DataSpaceHessian();
  DataSpaceHessian(const DataSpaceHessian&) = delete;
  DataSpaceHessian& operator=(const DataSpaceHessian&) = delete;

  /// Nd*Nt, the order of K.
  index_t size() const { return size_; }
  const Shape& shape() const { return shape_; }
  /// Nq of the QoI map (0 without one).
  index_t qoi_blocks() const { return qoi_blocks_; }
  /// Whether K and the dense algebra live on a GPU.
  bool on_device() const;
  /// Whether K was assembled by the Gram product (DataSpaceAssembly::Gram) rather than applies.
  bool gram_assembly() const { return gram_; }
  /// Bytes held for K, the QoI matrix W and the workspaces (host or device).
  std::size_t memory_bytes() const;
  /// What the offline phase took.
  const DataSpaceTimes& times() const { return times_; }

  /// The assembled K, column-major (= row-major: it is symmetric), size()^2 values copied to
  /// the host (the factor overwrote its lower triangle; K is rebuilt from the upper triangle and
  /// the diagonal kept aside).
  std::vector<double> matrix() const;

  /// m = m_map for `nrhs` data vectors d (SOTI [rhs][Nd][Nt]); m holds nrhs*Nm*Nt values.
  void map_point(std::span<const double> d, std::span<double> m, index_t nrhs = 1) const;
  /// q = Q m_map = Q m_prior + W^T (d - F m_prior) for `nrhs` data vectors: one product with
  /// the precomputed W (no solve). Needs options.qoi.
  void qoi_map(std::span<const double> d, std::span<double> q, index_t nrhs = 1) const;
  /// The posterior variances of every QoI entry, diag(Q Gamma_post Q*) as Nq*Nt values (SOTI),
  /// computed offline (a Gaussian posterior's covariance does not depend on the data).
  std::span<const double> qoi_variance() const;
  /// diag(Gamma_post) at the given parameter entries: Gamma_post e_j = Gamma_prior e_j -
  /// Gamma_prior F* K^-1 F Gamma_prior e_j, so var_j = (Gamma_prior e_j)_j - u^T K^-1 u with
  /// u = F Gamma_prior e_j.
  std::vector<double> posterior_variance(std::span<const ParameterIndex> indices) const;

  /// `count` samples of the posterior N(m_map(d), Gamma_post) (count*Nm*Nt values, SOTI), drawn
  /// from standard normals of a generator seeded with `seed` (the same on every backend and
  /// platform). Needs a prior with a square root (Prior::has_sqrt).
  void sample(std::span<const double> d, index_t count, std::uint64_t seed,
              std::span<double> samples) const;
  /// The same from given standard normals: xi_parameter (count*Nm*Nt values) and xi_data
  /// (count*Nd*Nt values), by Matheron's rule m = m_map + S xi_1 - Gamma_prior F* K^-1 (F S xi_1
  /// + Gamma_noise^{1/2} xi_2) (see the definition for why its covariance is Gamma_post).
  void sample_from(std::span<const double> d, std::span<const double> xi_parameter,
                   std::span<const double> xi_data, std::span<double> samples, index_t count) const;

  /// Seconds to push the first `columns` identity columns of the data space through F*,
  /// Gamma_prior and F in groups of `rhs_per_apply`, as the assembly does, into a scratch group
  /// (K is not kept): the assembly's cost per column with many right-hand sides against one at a
  /// time (bench/data_space_hessian.py). Runs where F runs, as the constructor does.
  static double time_assembly(const std::shared_ptr<btt::Plan>& F, const Prior& prior,
                              index_t columns, index_t rhs_per_apply,
                              std::shared_ptr<gpu::Context> context = {}, int device = 0);

 private:
  void check_inputs() const;
  void allocate();
  void assemble();
  void assemble_gram();
  void factor();
  void prepare_qoi();
  void progress(std::string_view stage, index_t done, index_t total) const;
  /// y[r] = Gamma_prior F* K^-1 x[r] for `nrhs` data vectors in the space (x is overwritten).
  void solve_and_lift(double* x, double* y, index_t nrhs) const;
  void check_data(std::span<const double> d, index_t nrhs, std::string_view what) const;

  std::shared_ptr<btt::Plan> F_;
  GaussianNoise noise_;
  std::shared_ptr<Prior> prior_;
  DataSpaceHessianOptions options_;
  Shape shape_;
  index_t size_ = 0;        // Nd*Nt
  index_t parameters_ = 0;  // Nm*Nt
  index_t qoi_blocks_ = 0;  // Nq
  index_t qoi_size_ = 0;    // Nq*Nt
  index_t group_ = 0;       // right-hand sides per apply
  bool gram_ = false;       // K by the Gram product
  DataSpaceTimes times_{};
  std::unique_ptr<DenseSpace> space_;
  struct Arrays;
  std::unique_ptr<Arrays> arrays_;
  std::vector<double> qoi_variance_;
};

}  // namespace shiftop::inverse
