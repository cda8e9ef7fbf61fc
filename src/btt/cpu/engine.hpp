// The CPU backend of a plan: the five phases each in FP32 or FP64 (mixed-precision paper, section
// 2.4). The vector side (pad, FFT, reorder and back) runs on OpenMP threads over chunks of blocks
// in a per-thread scratch that stays in cache; the matrix side (batched complex GEMV/GEMM) runs
// on OpenMP threads over frequencies and streams F^ once per pass. Split by stage as the GPU
// engine (btt/cuda/): setup.cpp builds F^, the FFTW plans and the workspaces; apply.cpp runs
// the passes. FFTW's own planner (Planning::Measure) is the CPU's tuning.
#pragma once

#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "backend/cpu/fftw_plan.hpp"
#include "backend/cpu/planar.hpp"
#include "core/aligned_buffer.hpp"
#include "shiftop/btt/plan.hpp"

namespace shiftop::btt {

/// The CPU engine's sizes for a shape and options, derived here only: the constructor sizes its
/// buffers from them and Plan::host_bytes adds them up (cpu_host_bytes). Element counts saturate
/// at SIZE_MAX, so that an absurd shape gives an absurd count instead of a wrapped small one.
struct CpuLayout {
  CpuLayout(const Shape& shape, const PlanOptions& options);

  int threads;         // OpenMP and FFTW threads: CpuOptions::threads, or OpenMP's default
  index_t group;       // right-hand sides per pass: PlanOptions::max_rhs
  index_t stride;      // complex values per time series in the FFT buffers (>= Nt+1, 64-byte rows)
  index_t ld_m, ld_d;  // Nm and Nd rounded up to 16 (the SIMD kernels' leading dimensions)
  index_t chunk;       // blocks per chunk of the vector-side pipeline
  std::size_t spectrum;  // doubles of F^, planar [w][re|im][Nd][ld_m] (floats of its FP32 copy)
  std::size_t scratch;   // doubles per thread: [chunk][2*stride]
  std::size_t spec_m, spec_d;  // doubles of one group's spectra, [w][re|im][group][ld]
  std::size_t middle;          // doubles of F x or F* x between the halves of F*F / FF*
  std::size_t series;  // doubles of the Nm series F^ is computed through, freed once it is made

  /// What CpuEngine::memory_bytes() reports for a plan in `precision`, plus the series.
  std::size_t host_bytes(const PrecisionConfig& precision) const;
};

class CpuEngine final : public Engine {
 public:
  CpuEngine(std::span<const double> first_column, std::span<const double> first_row,
            const Shape& shape, const PlanOptions& options, const PrecisionConfig& precision);

  void apply(Op op, const double* x, double* y, index_t nrhs) override;
  void set_precision(const PrecisionConfig& precision) override;
  PhaseTimes last_phase_times() const override { return times_; }
  std::size_t memory_bytes() const override;
  PlanChoices choices() const override;

 private:
  CpuEngine(std::span<const double> first_column, std::span<const double> first_row,
            const Shape& shape, const PlanOptions& options, const PrecisionConfig& precision,
            const CpuLayout& layout);

  // Single-series transforms (executed by many threads on their own scratch) in one precision.
  template <typename T>
  struct FftwPlans {
    cpu::RealFftBatch<T> forward, inverse;
  };

  /// One F (adjoint = false) or F* pass over at most group_size_ right-hand sides.
  void pass(bool adjoint, const double* x, double* y, index_t nrhs);
  /// Phases 1, 2 and SOTI -> TOSI: x -> planar spectra of the input blocks.
  template <typename T1, typename T2, typename T3>
  void transform_input(const double* x, index_t nrhs, index_t blocks,
                       cpu::PlanarSpectrum<T3> spectra);
  /// TOSI -> SOTI and phases 4, 5: planar spectra of the output blocks -> y.
  template <typename T3, typename T4, typename T5>
  void transform_output(cpu::PlanarSpectrum<const T3> spectra, index_t nrhs, index_t blocks,
                        double* y);
  class PhaseClock;
  /// Runs body(scratch, clock, rhs, first_block, count) for every chunk of `blocks` of every
  /// right-hand side on the OpenMP threads, each with its own scratch and phase clock.
  template <typename T, typename Body>
  void for_each_chunk(index_t nrhs, index_t blocks, Body&& body);
  template <typename T>
  void make_transforms(std::optional<FftwPlans<T>>& transforms);
  template <typename T>
  const FftwPlans<T>& transforms() const {
    if constexpr (std::is_same_v<T, float>)
      return *transforms32_;
    else
      return *transforms64_;
  }
  template <typename T>
  cpu::PlanarSpectrum<const T> spectrum() const {
    if constexpr (std::is_same_v<T, float>)
      return {spectrum32_.data(), shape_.nd, ld_m_};
    else
      return {spectrum64_.data(), shape_.nd, ld_m_};
  }

  Shape shape_;
  PrecisionConfig precision_;
  int threads_;
  bool measure_;
  index_t group_size_;  // right-hand sides per pass: PlanOptions::max_rhs
  index_t stride_;      // CpuLayout::stride
  index_t ld_m_, ld_d_;
  index_t chunk_;  // blocks per chunk of the vector-side pipeline

  AlignedBuffer<double> spectrum64_;            // F^ planar [w][re|im][Nd][ld_m]
  AlignedBuffer<float> spectrum32_;             // its FP32 copy, only while phase 3 is FP32
  std::vector<AlignedBuffer<double>> scratch_;  // per thread: [chunk_][2*stride_] (FP32/FP64)
  AlignedBuffer<double> spec_m_, spec_d_;       // planar [w][re|im][group_size][ld]
  AlignedBuffer<double> middle_;                // F x or F* x between the halves of F*F / FF*
  std::optional<FftwPlans<float>> transforms32_;
  std::optional<FftwPlans<double>> transforms64_;
  std::vector<PhaseTimes> thread_times_;  // per thread, reset by each chunked phase
  PhaseTimes times_;
};

}  // namespace shiftop::btt
