// The GPU engine of a block Toeplitz plan: Venkat et al., Algorithms 1-2 on one device, with the
// five-phase precision of the mixed-precision paper (section 3.2). One pass over a group of at
// most `group_size_` right-hand sides:
//   pad+cast (phase 1) -> batched R2C (2) -> GEMV/GEMM (3) -> in-place C2R (4) -> unpad+cast (5).
// For one right-hand side the fused GEMV kernels read and write the block-major spectra directly,
// so no transpose touches the vectors; for F* the products can instead go straight into the
// shared memory of the inverse transform, so that the output spectra never reach device memory
// (phases 3-5 in one kernel); several right-hand sides are reordered frequency-major and
// multiplied by cuBLAS's batched GEMM, which reads F^ once per pass. At power-of-two lengths our
// real FFT kernels (backend/cuda/real_fft.cuh) replace phases 1-2 and 4-5 with one kernel each
// that reads or writes only the Nt values of every series.
// The engine is split by stage as the CPU engine (btt/cpu/): setup.cu builds F^ and the
// workspaces, tuning.cu times the candidates under Planning::Measure (FFT length, phase-3
// implementation, transforms), apply.cu runs the passes. All work goes to the stream of the
// plan's gpu::Context.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "backend/cuda/context.cuh"
#include "backend/cuda/device_memory.cuh"
#include "backend/cuda/event_timer.cuh"
#include "backend/cuda/fft_plan.cuh"
#include "backend/cuda/gemv_kernels.cuh"
#include "shiftop/btt/plan.hpp"

namespace shiftop::btt {

using cuda::complex_t;

/// The forward and inverse cuFFT plans of one precision for the block counts and batch sizes a
/// pass uses: one right-hand side or a whole group, of Nd or of Nm blocks.
template <typename T>
struct CufftPlans {
  std::vector<cuda::FftPlan<T>> plans;  // [inverse][blocks == nm][whole group]
  cuda::FftPlan<T>& get(cuda::FftKind kind, bool nm_blocks, bool group) {
    return plans[(kind == cuda::FftKind::Inverse ? 4 : 0) + (nm_blocks ? 2 : 0) + (group ? 1 : 0)];
  }
};

class CudaEngine final : public Engine {
 public:
  CudaEngine(std::span<const double> first_column, std::span<const double> first_row,
             const Shape& shape, const PlanOptions& options, const PrecisionConfig& precision);
  ~CudaEngine() override;

  void apply(Op op, const double* x, double* y, index_t nrhs) override;
  void apply_device(Op op, const double* x, double* y, index_t nrhs, void* stream) override;
  void set_precision(const PrecisionConfig& precision) override;
  void set_gemv(GemvImplementation gemv) override;
  PhaseTimes last_phase_times() const override { return times_; }
  std::size_t memory_bytes() const override;
  PlanChoices choices() const override;

 private:
  // The events of a pass, in order (profiling and timing only).
  enum Mark {
    kStart,
    kPadded,
    kTransformed,
    kReordered,
    kMultiplied,
    kReorderedBack,
    kTransformedBack,
    kUnpadded,
    kMarks
  };

  // setup.cu
  void compute_spectrum(std::span<const double> first_column, std::span<const double> first_row);
  template <typename T>
  std::optional<CufftPlans<T>>& cufft_plans() {
    if constexpr (sizeof(T) == 4)
      return cufft32_;
    else
      return cufft64_;
  }
  template <typename T>
  void make_cufft_plans();
  /// The roots of unity of the real FFT kernels in the precisions the phases need.
  void make_twiddles();
  /// Device bytes of the plan with FFT length `length` and one right-hand side per pass, and
  /// those of each further right-hand side.
  double fixed_bytes(index_t length) const;
  double per_rhs_bytes(index_t length) const;
  cudaStream_t stream() const { return cuda::stream_of(*context_); }
  cuda::DeviceMemory allocate(std::size_t bytes) const { return cuda::allocate(*context_, bytes); }

  // tuning.cu
  index_t choose_fft_length(std::size_t free_bytes);
  void choose_gemv();
  void choose_transforms();
  /// Milliseconds of `work` on the stream (synchronises).
  template <typename Work>
  float elapsed_ms(Work&& work);
  /// The best of three after one untimed run.
  template <typename Work>
  float best_of_three_ms(Work&& work);
  /// Which of `count` candidates (select(c) switches to candidate c) runs one F (adjoint = false)
  /// or F* pass fastest: whole passes, so that what a kernel leaves in L2 for the next counts;
  /// the candidates alternate after one untimed pass each, so that clock ramp-up and other drift
  /// hit all alike, and the best of five is kept.
  template <typename Select>
  std::size_t fastest_pass(bool adjoint, std::size_t count, Select&& select);

  // apply.cu
  /// Runs op on device buffers group by group.
  void run(Op op, const double* x, double* y, index_t nrhs);
  /// One F or F* pass over n <= group_size_ right-hand sides.
  void pass(bool adjoint, const double* x, double* y, index_t n);
  /// The cuFFT transforms of phase 2 (forward) or 4 (inverse) of a pass over n right-hand sides.
  template <typename T>
  void execute_cufft(cuda::FftKind kind, index_t blocks, index_t n);
  template <typename T3, typename T2, typename T4>
  void multiply(bool adjoint, index_t n, bool frequency_major_output);
  /// Whether an F* pass over n right-hand sides computes its products straight into the inverse
  /// transform's shared memory (phases 3-5 in one kernel, backend/cuda/product_inverse_fft.cuh).
  bool products_into_inverse_fft(bool adjoint, index_t n) const;
  /// Whether in a pass over n right-hand sides our inverse transform reads cuBLAS's
  /// frequency-major output directly (phases 3 and 4 in one precision), instead of a transpose.
  bool inverse_reads_frequency_major(bool adjoint, index_t n) const;
  template <typename T>
  const complex_t<T>* spectrum() const;
  template <typename T>
  const complex_t<T>* twiddles() const;
  cuda::GemvShape gemv_shape() const {
    return {.nd = shape_.nd, .nm = shape_.nm, .ld = ld_, .nw = nw_};
  }
  /// Drops the captured CUDA graph (its kernels or buffers changed).
  void forget_graph();
  void mark(Mark m);
  void add_pass_times();

  std::shared_ptr<gpu::Context> context_;  // first: outlives every buffer below
  Shape shape_;
  PrecisionConfig precision_;
  PlanOptions options_;
  index_t ld_, max_blocks_;
  index_t length_ = 0, nw_ = 0;  // FFT length, its frequencies L/2+1
  /// Right-hand sides per pass: PlanOptions::max_rhs, or fewer where the device memory is short.
  index_t group_size_ = 1;
  cuda::EventTimer marks_;  // kMarks events, made on the plan's device
  // Per direction, [0] F and [1] F*: the fused GEMV tuning (cuBLAS if empty), and whether the
  // transforms are our real FFT kernels (otherwise pad + cuFFT + unpad).
  std::array<std::optional<cuda::GemvTuning>, 2> gemv_tuning_;
  std::array<bool, 2> fused_transforms_{};

  cuda::DeviceMemory spectrum64_, spectrum32_;  // F^ [w][Nd][ld], complex
  cuda::DeviceMemory padded_;  // [group][blocks][L] real, zero tails (never written)
  // Block-major spectra [group][blocks][L/2+1], complex: the forward transform writes the input's
  // and the inverse reads the output's. On the cuBLAS path each also serves the other side while
  // it is free: the frequency-major GEMM input goes into output_spectra_ and the GEMM's output into
  // input_spectra_ (read there directly by our inverse, or reordered back).
  cuda::DeviceMemory input_spectra_, output_spectra_;
  cuda::DeviceMemory x_, y_, middle_;  // [group][blocks][Nt] FP64: host staging, F x inside F*F
  cuda::DeviceMemory fft_work_;
  cuda::DeviceMemory twiddles64_, twiddles32_;  // exp(-2 pi i k / L), k < L
  std::optional<CufftPlans<float>> cufft32_;
  std::optional<CufftPlans<double>> cufft64_;

  cudaGraphExec_t graph_ = nullptr;
  struct GraphKey {
    Op op;
    const double* x;
    double* y;
    index_t nrhs;
    bool operator==(const GraphKey&) const = default;
  };
  std::optional<GraphKey> graph_key_;
  PhaseTimes times_;
};

/// The FP32 or the FP64 copy of a plan's complex array, as precision T.
template <typename T>
const complex_t<T>* of_precision(const cuda::DeviceMemory& fp32, const cuda::DeviceMemory& fp64) {
  if constexpr (sizeof(T) == 4)
    return fp32.as<float2>();
  else
    return fp64.as<double2>();
}

/// The shortest power-of-two FFT length >= 2*Nt.
index_t power_of_two_length(const Shape& shape);

}  // namespace shiftop::btt
