// The CPU backend of a plan: FFTW (threaded) transforms, OpenMP over frequencies for the batched
// complex GEMV/GEMM, the five phases each in FP32 or FP64 (mixed-precision paper, section 2.4).
#pragma once

#include <optional>
#include <span>

#include "backend/cpu/fftw_plan.hpp"
#include "backend/cpu/planar.hpp"
#include "btt/plan.hpp"
#include "core/aligned_buffer.hpp"

namespace shiftop::btt {

class CpuEngine final : public Engine {
 public:
  CpuEngine(std::span<const double> first_column, std::span<const double> first_row,
            const Shape& shape, const PlanOptions& options, const PrecisionConfig& precision);

  void apply(Op op, const double* x, double* y, index_t nrhs) override;
  void set_precision(const PrecisionConfig& precision) override;
  PhaseTimes last_phase_times() const override { return times_; }
  std::size_t memory_bytes() const override;

 private:
  // The four batched transforms of one right-hand side in one precision.
  template <typename T>
  struct Transforms {
    cpu::RealFftBatch<T> forward_m, forward_d, inverse_m, inverse_d;
  };

  /// One F (adjoint = false) or F* pass over at most max_rhs right-hand sides.
  void apply_pass(bool adjoint, const double* x, double* y, index_t nrhs);
  template <typename T>
  void make_transforms(std::optional<Transforms<T>>& transforms);
  template <typename T>
  const Transforms<T>& transforms() const;
  template <typename T>
  cpu::PlanarSpectrum<const T> spectrum() const;

  Shape shape_;
  PrecisionConfig precision_;
  int threads_;
  bool measure_;
  index_t max_rhs_;
  index_t stride_;  // complex values per time series in the FFT buffers (>= Nt+1, 64-byte rows)
  index_t ld_m_, ld_d_;

  AlignedBuffer<double> spectrum64_;           // F^ planar [w][re|im][Nd][ld_m]
  AlignedBuffer<float> spectrum32_;            // its FP32 copy, only while phase 3 is FP32
  AlignedBuffer<double> series_m_, series_d_;  // [rhs][blocks][2*stride_], FP32 or FP64 view
  AlignedBuffer<double> spec_m_, spec_d_;      // planar [w][re|im][max_rhs][ld]
  AlignedBuffer<double> middle_;               // F x or F* x between the halves of F*F / FF*
  std::optional<Transforms<float>> transforms32_;
  std::optional<Transforms<double>> transforms64_;
  PhaseTimes times_;
};

}  // namespace shiftop::btt
