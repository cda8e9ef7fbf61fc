// The mixed-precision tuner (mixed-precision paper, sections 3.2 and 4.2): every one of the 32
// five-phase precision configurations of a plan timed and compared with FP64, each reported with
// the paper's a-priori error bound (eq. 6) beside its measured error, and the Pareto front of
// (time, error): the configurations no other one beats in both. The tool's `shiftop tune` and
// Python's shiftop.tune print and draw what this returns.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "shiftop/btt/op.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/core/precision.hpp"
#include "shiftop/core/shape.hpp"

namespace shiftop::btt {

/// The mixed-precision paper's eq. (6), the first-order a-priori bound on the relative error
/// ||y' - y|| / ||y|| of y = op(F) x computed in `precision`, on one process (p_c = p_r = 1), with
/// every O(1) constant c_i = 1 and eps_i the machine epsilon of phase i (2^-23 in FP32, 2^-52 in
/// FP64, the paper's eps_s ~ 1e-7 and eps_d ~ 1e-16):
///
///   kappa(F^) * [ c1 eps1 + (eps_d + eps2 + eps4) log2(2 Nt) + eps3 n + c5 eps5 ]
///
/// c1 = 1 when phase 1 (pad) is FP32, which rounds the input, else 0; n the length of phase 3's
/// inner products, Nm for F and Nd for F*; log2(2 Nt) that of the length-2Nt FFTs of the
/// derivation (eq. 6 abbreviates it log2(Nt)). The paper's reduction term c5 eps5 log2(p_c)
/// vanishes on one process, but an FP32 phase 5 still rounds the output to FP32 (shiftop writes
/// the unpadded output in phase 5's precision): c5 = 1 then, else 0. Throws shiftop::Error for an
/// op other than F or F*, or a kappa below 1 (infinity, for a singular F^, gives infinity).
double precision_error_bound(const PrecisionConfig& precision, const Shape& shape, Op op,
                             double kappa);

/// One configuration as the tuner measured it.
struct TunePoint {
  std::string precision;  ///< "DDSDD"
  /// The phase-3 kernel of a GPU plan ("cublas", "fused <tuning>"); empty on the CPU.
  std::string gemv_kernel;
  double milliseconds = 0;  ///< median of the timed applies
  /// ||y - y_FP64|| / ||y_FP64|| (||y|| itself where y_FP64 is 0) against the plan in DDDDD on
  /// the same input.
  double relative_error = 0;
  /// precision_error_bound of the configuration: it bounds the error against the exact product;
  /// against FP64's, which has its own error (at most the DDDDD bound, never above this one),
  /// the measured error may exceed it by at most that much.
  double error_bound = 0;
  bool pareto = false;  ///< on the Pareto front: no other point is as fast and as accurate
  /// "DDSDD", or "DDSDD fused" / "DDSDD cublas" on the GPU where phase 3 is FP32 (the two kernels
  /// differ in accuracy there).
  std::string label() const;
};

/// The points of one operation: the 32 configurations in PrecisionConfig::all()'s order
/// (DDDDD first), and on the GPU, after each with an FP32 phase 3 for which the plan picked
/// cuBLAS (FP32 sums), the same configuration with the fused kernels (FP64 sums, same bytes).
struct OpTuning {
  Op op = Op::F;
  std::vector<TunePoint> points;
  /// The input every configuration was applied to (SOTI, input_blocks(op) x Nt): normal random
  /// values with mantissa bits below FP32's, so that an FP32 phase 1 shows in the error.
  std::vector<double> input;
  /// The fastest point whose relative_error is at most `tolerance`; null when none is.
  const TunePoint* fastest_under(double tolerance) const;
};

struct TuneResult {
  double kappa = 0;  ///< kappa(F^) of the bounds
  std::vector<OpTuning> ops;
};

struct TuneOptions {
  /// The operations tuned, each F or Fadj.
  std::vector<Op> ops = {Op::F, Op::Fadj};
  /// Timed applies per configuration (the median is reported), after one untimed one.
  int repetitions = 10;
  /// kappa(F^) for the bounds; 0: computed by svd::spectrum from the kernels given.
  double kappa = 0;
  /// OpenMP threads of svd::spectrum (0: OpenMP's default).
  int threads = 0;
  /// The CUDA device of a GPU plan: where the timed input and output live, so that timings
  /// exclude host-device copies.
  int device = 0;
  /// Called before each configuration is measured: (op, index from 0, count).
  std::function<void(Op, std::size_t, std::size_t)> on_start{};
  /// Called with each measured point.
  std::function<void(Op, const TunePoint&)> on_point{};
};

/// Times and measures every precision configuration of `plan` (restored to its precision, and a
/// GPU plan's phase-3 choice to GemvImplementation::Auto, afterwards) on inputs whose values carry
/// mantissa bits below FP32's, so that rounding the input to FP32 (phase 1 in S) shows in the
/// error. `first_column` and `first_row` are the kernels the plan was made from, as
/// Plan::create / create_general took them, for kappa(F^) by svd::spectrum; both may be empty
/// when options.kappa is given. Throws shiftop::Error for bad options, kernels that do not match
/// the plan's shape, or a configuration whose result is not finite (overflow in FP32).
TuneResult tune_precision(Plan& plan, std::span<const double> first_column,
                          std::span<const double> first_row, const TuneOptions& options = {});

}  // namespace shiftop::btt
