// shiftop::btt::Plan — the block-triangular (or general) block Toeplitz operator F, built once
// from its kernels f_ij[t] and applied many times with no allocation (docs/btt.md, "The
// life of a plan"; Venkat et al., fft-block-toeplitz-matvec-multi-gpu, Algorithms 1-3).
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "shiftop/btt/op.hpp"
#include "shiftop/core/backend.hpp"
#include "shiftop/core/precision.hpp"
#include "shiftop/core/shape.hpp"

namespace shiftop::btt {

using shiftop::Backend;
/// For a plan, Measure runs FFTW's planner on the CPU, and on the GPU times the FFT length, the
/// transforms and the phase-3 implementations on the plan's own F^ and keeps the fastest.
using shiftop::Planning;

/// What runs phase 3 for a single right-hand side on the GPU (several right-hand sides always use
/// cuBLAS's batched GEMM): shiftop's fused GEMV kernels or cuBLAS. Auto: Fused, or the faster
/// one under Planning::Measure.
enum class GemvImplementation { Auto, Fused, Cublas };

/// What runs phases 1-2 and 4-5 on the GPU. Fused: shiftop's real FFT kernels that read and write
/// only the Nt values of each series (FFT lengths that are powers of two from 16 to 8192); Cufft:
/// zero-padding, cuFFT, unpadding. Auto: Fused where it applies, or the faster one under
/// Planning::Measure.
enum class FftImplementation { Auto, Fused, Cufft };

}  // namespace shiftop::btt

template <>
struct shiftop::EnumNames<shiftop::btt::GemvImplementation> {
  static constexpr std::array<std::pair<btt::GemvImplementation, std::string_view>, 3> table{
      {{btt::GemvImplementation::Auto, "auto"},
       {btt::GemvImplementation::Fused, "fused"},
       {btt::GemvImplementation::Cublas, "cublas"}}};
};

template <>
struct shiftop::EnumNames<shiftop::btt::FftImplementation> {
  static constexpr std::array<std::pair<btt::FftImplementation, std::string_view>, 3> table{
      {{btt::FftImplementation::Auto, "auto"},
       {btt::FftImplementation::Fused, "fused"},
       {btt::FftImplementation::Cufft, "cufft"}}};
};

namespace shiftop::btt {

/// Options only the CPU engine reads.
struct CpuOptions {
  /// Threads for FFTW and OpenMP; 0 uses OpenMP's default.
  int threads = 0;
};

/// How the GPU engine runs a plan: the implementations of phases 1-2, 3 and 4-5, the FFT length,
/// and the timing and replay of its launches. The CPU engine reads none of them.
struct GpuEngineOptions {
  GemvImplementation gemv = GemvImplementation::Auto;
  FftImplementation fft = FftImplementation::Auto;
  /// The length L of the circulant embedding and its FFTs, even and at least 2*Nt (any
  /// L >= 2Nt-1 gives the same product; F^ then holds L/2+1 frequencies). 0 chooses: 2*Nt under
  /// Planning::Estimate, and under Measure whichever of 2*Nt and the next power of two (when at
  /// most 25% longer) has the lower measured FFT time plus the F^ bytes it adds.
  index_t fft_length = 0;
  /// Time each phase with events (one synchronisation per pass); the CPU always does.
  bool profile = false;
  /// Replay the captured apply sequence as a CUDA graph when the operation, the number of
  /// right-hand sides and the device pointers repeat (ignored when profiling).
  bool graphs = false;
};

struct PlanOptions {
  Backend backend = Backend::Cpu;
  /// Five-phase precision string (pad, FFT, GEMV, IFFT, unpad), e.g. "DSSDD". On the GPU an S
  /// GEMV reads an FP32 F^; the fused kernels accumulate in FP64, cuBLAS in FP32.
  std::string precision = "DDDDD";
  /// Right-hand sides transformed together per pass; the workspace grows linearly with it.
  index_t max_rhs = 16;
  Planning planning = Planning::Measure;
  CpuOptions cpu{};
  /// The GPU of Backend::Cuda: gpu.context when given (shared with other plans, a distributed
  /// plan, an SVD), else a new context of the plan's own on GPU gpu.device
  /// (gpu::context_for).
  GpuOptions gpu{};
  GpuEngineOptions gpu_engine{};
};

/// The phases of one apply, in the order they run. `layout` is both SOTI<->TOSI reorderings.
enum class ApplyPhase { Pad, Fft, Layout, Gemv, Ifft, Unpad };

}  // namespace shiftop::btt

template <>
struct shiftop::EnumNames<shiftop::btt::ApplyPhase> {
  static constexpr std::array<std::pair<btt::ApplyPhase, std::string_view>, 6> table{
      {{btt::ApplyPhase::Pad, "pad"},
       {btt::ApplyPhase::Fft, "fft"},
       {btt::ApplyPhase::Layout, "layout"},
       {btt::ApplyPhase::Gemv, "gemv"},
       {btt::ApplyPhase::Ifft, "ifft"},
       {btt::ApplyPhase::Unpad, "unpad"}}};
};

namespace shiftop::btt {

/// Seconds spent in each phase by the last apply (summed over passes and both halves of F*F).
struct PhaseTimes {
  std::array<double, 6> seconds{};
  double& operator[](ApplyPhase p) { return seconds[static_cast<int>(p)]; }
  double operator[](ApplyPhase p) const { return seconds[static_cast<int>(p)]; }
  double total() const;
};

/// The transforms a plan runs: FFTW (CPU), pad + cuFFT + unpad, or shiftop's fused real FFTs.
enum class Transforms { Fftw, Cufft, Fused };
/// The phase-3 product a plan runs for one right-hand side: the CPU's SIMD kernels, shiftop's
/// fused GEMV kernels, or cuBLAS.
enum class Gemv { Cpu, Fused, Cublas };

}  // namespace shiftop::btt

template <>
struct shiftop::EnumNames<shiftop::btt::Transforms> {
  static constexpr std::array<std::pair<btt::Transforms, std::string_view>, 3> table{
      {{btt::Transforms::Fftw, "fftw"},
       {btt::Transforms::Cufft, "cufft"},
       {btt::Transforms::Fused, "fused"}}};
};

template <>
struct shiftop::EnumNames<shiftop::btt::Gemv> {
  static constexpr std::array<std::pair<btt::Gemv, std::string_view>, 3> table{
      {{btt::Gemv::Cpu, "cpu"}, {btt::Gemv::Fused, "fused"}, {btt::Gemv::Cublas, "cublas"}}};
};

namespace shiftop::btt {

/// What a plan chose for the passes of one direction (F or F*).
struct PassChoice {
  Transforms transforms = Transforms::Fftw;
  Gemv gemv = Gemv::Cpu;
  /// The fused kernels' tuning (e.g. "4 rows/warp, split 2"); empty for the others.
  std::string gemv_tuning;
  /// "cpu", "cublas" or "fused <tuning>", as the tool reports it.
  std::string gemv_name() const;
};

/// What a plan chose (under Planning::Measure by timing): the FFT length and, per direction, the
/// transforms and the phase-3 product.
struct PlanChoices {
  index_t fft_length = 0;
  std::array<PassChoice, 2> passes;  // [0]: F passes, [1]: F* passes
  /// Right-hand sides per pass: an apply on nrhs vectors runs ceil(nrhs / group_size) groups.
  index_t group_size = 1;
  /// The choice for the first pass of op (F for F and F*F, F* for F* and FF*).
  const PassChoice& of(Op op) const;
};

/// The backend-specific half of a plan (CPU: FFTW + OpenMP; CUDA: cuFFT, cuBLAS and kernels).
class Engine {
 public:
  virtual ~Engine() = default;
  /// y = op(F) x for `nrhs` vectors, SOTI layout, sizes already checked by Plan.
  virtual void apply(Op op, const double* x, double* y, index_t nrhs) = 0;
  /// The same on device pointers, ordered after prior work on `stream` (a cudaStream_t). Only
  /// engines on a device override it.
  virtual void apply_device(Op op, const double* x, double* y, index_t nrhs, void* stream);
  virtual void set_precision(const PrecisionConfig& precision) = 0;
  /// Only engines with a choice of phase-3 implementations override it.
  virtual void set_gemv(GemvImplementation gemv);
  virtual PhaseTimes last_phase_times() const = 0;
  /// Bytes held by the plan: F^ (and its FP32 copy), workspaces.
  virtual std::size_t memory_bytes() const = 0;
  virtual PlanChoices choices() const = 0;
};

class Plan {
 public:
  /// Block lower-triangular Toeplitz F from its first block column: `kernels` is
  /// double[nd][nm][nt] (SOTI), kernels[i][j][t] = (F_t)_ij.
  static Plan create(std::span<const double> kernels, const Shape& shape,
                     const PlanOptions& options = {});
  /// General block Toeplitz operator from its first block column (lags 0..nt-1) and first block
  /// row (lags 0..-(nt-1)), both double[nd][nm][nt]; the lag-0 entries of both must agree.
  static Plan create_general(std::span<const double> first_column,
                             std::span<const double> first_row, const Shape& shape,
                             const PlanOptions& options = {});

  /// Host bytes a plan made with these options holds at its peak, without making it: on the CPU,
  /// memory_bytes() of that plan (F^ and its FP32 copy where phase 3 is FP32, the workspaces) plus
  /// the Nm series F^ is computed through, which are freed before the FP32 copy is made (so this
  /// bounds the peak from above). On the GPU backend the host part only (none of its own: the
  /// engine checks the device's free memory when it is created). Does not validate the shape's
  /// size, so that a caller can refuse an absurd one: the arithmetic saturates at SIZE_MAX.
  /// Throws shiftop::Error on a size below 1 or on options create would refuse.
  static std::size_t host_bytes(const Shape& shape, const PlanOptions& options = {});

  /// y = op(F) x for `nrhs` vectors stored one after another, each SOTI [blocks][nt].
  /// x holds nrhs*input_blocks(op)*nt values, y nrhs*output_blocks(op)*nt. Vectors are processed
  /// max_rhs at a time (F^ is read once per group). apply uses the plan's workspaces: calls on one
  /// plan must not overlap in time (use one plan per calling thread).
  void apply(Op op, std::span<const double> x, std::span<double> y, index_t nrhs = 1);

  /// apply on device memory (Backend::Cuda only): x and y are device pointers, and the work is
  /// ordered after what was queued on `stream` (a cudaStream_t; nullptr is the default stream)
  /// and completes asynchronously with respect to the host.
  void apply_device(Op op, const double* x, double* y, index_t nrhs = 1, void* stream = nullptr);

  /// Changes the five-phase precision; allocates the FP32 copy of F^ if newly needed.
  void set_precision(std::string_view precision);

  /// Changes which phase-3 implementations a GPU plan may use (GpuEngineOptions::gemv): with FP32
  /// in phase 3 the fused kernels and cuBLAS differ in accuracy, not only in time. A CPU plan,
  /// which has one, refuses.
  void set_gemv(GemvImplementation gemv) { engine_->set_gemv(gemv); }

  const Shape& shape() const { return shape_; }
  const PrecisionConfig& precision() const { return precision_; }
  bool triangular() const { return triangular_; }
  PhaseTimes last_phase_times() const { return engine_->last_phase_times(); }
  std::size_t memory_bytes() const { return engine_->memory_bytes(); }
  /// What the plan chose: FFT length, transforms and phase-3 product per direction.
  PlanChoices choices() const { return engine_->choices(); }

 private:
  Plan(Shape shape, bool triangular, PrecisionConfig precision, std::unique_ptr<Engine> engine);

  Shape shape_;
  bool triangular_ = true;
  PrecisionConfig precision_;
  std::unique_ptr<Engine> engine_;
};

}  // namespace shiftop::btt
