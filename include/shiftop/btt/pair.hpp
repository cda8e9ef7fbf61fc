// shiftop::btt::OperatorPair — a block Toeplitz operator F and a second one G on the same time
// grid (FFTMatvec's "auxiliary matrix": a parameter-to-QoI map, or a prior-solved matrix such as
// F Gamma_prior), each with its own F^ (one btt::Plan each), applied as G, G*, G*F or FG*.
//
// The mixed products are exact, and so take two passes, not one. With E the zero padding to 2*Nt,
// C_F the circulant embedding of F and P the restriction to the first Nt samples, F = P C_F E, so
//   G*F = E^T C_G^* (P^T P) C_F E,
// and P^T P (unpad, then pad again) is not diagonal in frequency: one forward transform and one
// inverse (E^T C_G^* C_F E) is a different operator. On random kernels it is off from G*F by a
// relative 0.59 at (Nd, Nm, Nt) = (3, 4, 8), 0.91 at (5, 7, 33), 1.03 at (20, 20, 100), and still
// by 0.61, 0.17, 0.082 when the kernels decay as exp(-t/5) (NumPy, dense reference). FFTMatvec
// does the same two passes: Matrix::compute_matvec with `full` and `use_aux_mat` runs F then the
// conjugate pass with the auxiliary matrix for matvec (G*F), and the auxiliary matrix's conjugate
// pass then F for transpose_matvec (FG*), with an unpad and a pad between.
//
// What one call shares: the loop over groups of right-hand sides, and one middle buffer of a
// group, allocated when the pair is made. On the GPU the middle stays on the device (the host path
// copies only x in and y out).
#pragma once

#include <array>
#include <memory>
#include <span>
#include <string_view>
#include <utility>

#include "shiftop/btt/plan.hpp"
#include "shiftop/core/shape.hpp"

namespace shiftop::btt {

/// G, its adjoint G*, G*F (parameter space to G's parameter space, through F's data space) and FG*
/// (G's data space to F's data space, through the parameter space).
enum class PairOp { G, Gadj, GadjF, FGadj };

inline constexpr std::array<PairOp, 4> kAllPairOps = {PairOp::G, PairOp::Gadj, PairOp::GadjF,
                                                      PairOp::FGadj};

}  // namespace shiftop::btt

template <>
struct shiftop::EnumNames<shiftop::btt::PairOp> {
  static constexpr std::array<std::pair<btt::PairOp, std::string_view>, 4> table{
      {{btt::PairOp::G, "G"},
       {btt::PairOp::Gadj, "Gadj"},
       {btt::PairOp::GadjF, "GadjF"},
       {btt::PairOp::FGadj, "FGadj"}}};
};

namespace shiftop::btt {

struct PairOptions {
  /// Right-hand sides per group: the middle buffer holds this many vectors.
  index_t max_rhs = 16;
  /// For plans on the CUDA backend: gpu.context, the context both run on, where the middle
  /// buffer is allocated (and counted); null: CUDA device gpu.device (their PlanOptions::gpu).
  GpuOptions gpu{};
};

class OperatorPair {
 public:
  /// A pair of plans made by the caller, on one backend (on the GPU, on options' device), with
  /// the same Nt. F is Nd x Nm blocks, G is Nq x Nm' blocks: G*F needs Nq = Nd, FG* needs
  /// Nm' = Nm; G and G* need nothing more. The pair shares the plans.
  static OperatorPair create(std::shared_ptr<Plan> f, std::shared_ptr<Plan> g,
                             const PairOptions& options = {});
  /// Both plans from their kernels (double[nd][nm][nt], as Plan::create) with the same options;
  /// on the GPU both run on options.gpu.context, or on one new context on options.gpu.device.
  static OperatorPair create(std::span<const double> f_kernels, const Shape& f_shape,
                             std::span<const double> g_kernels, const Shape& g_shape,
                             const PlanOptions& options = {});

  /// Whether the shapes allow `op` (G and G* always; G*F when Nq = Nd; FG* when Nm' = Nm).
  bool supports(PairOp op) const;
  /// Blocks of the input and of the output vector of `op`.
  index_t input_blocks(PairOp op) const;
  index_t output_blocks(PairOp op) const;

  /// y = op x for `nrhs` vectors one after another, each SOTI [blocks][nt], max_rhs at a time.
  /// Throws shiftop::Error naming the operation and the dimension when the shapes do not allow op
  /// or x and y have the wrong sizes. Calls on one pair must not overlap in time.
  void apply(PairOp op, std::span<const double> x, std::span<double> y, index_t nrhs = 1);
  /// apply on device pointers (CUDA plans only), ordered after the work queued on `stream` (a
  /// cudaStream_t; nullptr is the default stream) and completing asynchronously.
  void apply_device(PairOp op, const double* x, double* y, index_t nrhs = 1,
                    void* stream = nullptr);

  const Plan& f() const { return *f_; }
  const Plan& g() const { return *g_; }
  const std::shared_ptr<Plan>& f_plan() const { return f_; }
  const std::shared_ptr<Plan>& g_plan() const { return g_; }
  index_t max_rhs() const { return max_rhs_; }
  /// Whether the plans run on the GPU (apply_device works).
  bool on_device() const { return on_device_; }

  OperatorPair(OperatorPair&&) noexcept;
  OperatorPair& operator=(OperatorPair&&) noexcept;
  ~OperatorPair();

  /// The middle buffer of one group (and on the GPU the staging of host calls); internal.
  struct Workspace;

 private:
  OperatorPair(std::shared_ptr<Plan> f, std::shared_ptr<Plan> g, const PairOptions& options);
  void require_supported(PairOp op) const;

  std::shared_ptr<Plan> f_, g_;
  index_t max_rhs_ = 16;
  bool on_device_ = false;
  std::unique_ptr<Workspace> workspace_;
};

}  // namespace shiftop::btt
