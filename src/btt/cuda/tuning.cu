// The GPU engine's tuning (btt/cuda/engine.cuh): under Planning::Measure it times its candidates
// on the plan's own F^ and keeps the fastest: the FFT length (2*Nt or a power of two, cuFFT's
// fastest sizes), the phase-3 implementation (the fused kernels' tunings, cuBLAS) and the
// transforms (ours, or pad + cuFFT + unpad). Under Estimate it takes the first candidate.
#include <algorithm>
#include <utility>
#include <vector>

#include "backend/cuda/real_fft.cuh"
#include "btt/cuda/engine.cuh"

namespace shiftop::btt {
namespace {

/// Observation blocks up to which the F* products into the inverse transform are the estimate.
constexpr index_t kFewObservationBlocks = 16;

}  // namespace

template <typename Work>
float CudaEngine::elapsed_ms(Work&& work) {
  return marks_.time_ms(stream(), work, kStart, kUnpadded);
}

template <typename Work>
float CudaEngine::best_of_three_ms(Work&& work) {
  work();
  return std::min({elapsed_ms(work), elapsed_ms(work), elapsed_ms(work)});
}

index_t CudaEngine::choose_fft_length(std::size_t free_bytes) {
  const GpuEngineOptions& gpu = options_.gpu_engine;
  const index_t natural = padded_length(shape_);
  if (gpu.fft_length != 0) return gpu.fft_length;
  const index_t power = power_of_two_length(shape_);
  if (gpu.fft == FftImplementation::Fused) return power;  // the fused kernels take no other
  // The longer length costs F^ bytes (L/2+1 frequencies) and must pay for them in FFT time.
  if (options_.planning != Planning::Measure || power == natural || 4 * power > 5 * natural ||
      power / 2 + 1 > 65535)
    return natural;
  // Probe on the larger side's series at the longer length, in memory the plan then reuses.
  const auto series = static_cast<std::size_t>(max_blocks_);
  const std::size_t real_bytes = series * power * sizeof(double);
  const std::size_t complex_bytes = series * (power / 2 + 1) * sizeof(double2);
  if (fixed_bytes(power) + double(real_bytes + complex_bytes) > double(free_bytes)) return natural;
  cuda::DeviceMemory real = allocate(real_bytes), spectra = allocate(complex_bytes);
  SHIFTOP_CUDA_CHECK(cudaMemsetAsync(real.as<void>(), 0, real_bytes, stream()));
  const float copy_ms = best_of_three_ms([&] {
    SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(spectra.as<void>(), real.as<void>(), real_bytes,
                                       cudaMemcpyDeviceToDevice, stream()));
  });
  const double bytes_per_ms = 2.0 * double(real_bytes) / copy_ms;
  index_t best = natural;
  double best_ms = 1e30;
  for (index_t length : {natural, power}) {
    cuda::FftPlan<double> forward(cuda::FftKind::Forward, length, max_blocks_);
    cuda::FftPlan<double> inverse(cuda::FftKind::Inverse, length, max_blocks_);
    cuda::DeviceMemory work = allocate(std::max(forward.work_bytes(), inverse.work_bytes()));
    forward.set_work_area(work.as<void>(), stream());
    inverse.set_work_area(work.as<void>(), stream());
    const float fft_ms = best_of_three_ms([&] {
      forward.execute(real.as<void>(), spectra.as<void>());
      inverse.execute(spectra.as<void>(), spectra.as<void>());
    });
    // F and F* each read F^ once and transform the larger side once each way (together).
    const double gemv_ms =
        2.0 * double(length / 2 + 1) * double(shape_.nd) * double(ld_) * 16.0 / bytes_per_ms;
    if (fft_ms + gemv_ms < best_ms) {
      best_ms = fft_ms + gemv_ms;
      best = length;
    }
  }
  return best;
}

template <typename Select>
std::size_t CudaEngine::fastest_pass(bool adjoint, std::size_t count, Select&& select) {
  const bool profile = std::exchange(options_.gpu_engine.profile, false);
  std::vector<float> best(count, 1e30f);
  for (int rep = -1; rep < 5; ++rep)
    for (std::size_t c = 0; c < count; ++c) {
      select(c);
      const float ms = elapsed_ms([&] { pass(adjoint, x_.as<double>(), y_.as<double>(), 1); });
      if (rep >= 0) best[c] = std::min(best[c], ms);
    }
  options_.gpu_engine.profile = profile;
  return static_cast<std::size_t>(std::min_element(best.begin(), best.end()) - best.begin());
}

void CudaEngine::choose_gemv() {
  const GemvImplementation allowed = options_.gpu_engine.gemv;
  SHIFTOP_CUDA_CHECK(cudaMemsetAsync(x_.as<void>(), 0, x_.bytes(), stream()));
  for (int adjoint = 0; adjoint < 2; ++adjoint) {
    std::vector<std::optional<cuda::GemvTuning>> candidates;
    // F*: the products into the inverse transform wherever our transforms run; the estimate with
    // few observation blocks, where the output spectra are most of the bytes beside F^
    // (bench/NOTES.md, issue 19: at Nd = 7 it ties cuBLAS in FP64 and beats it by 10% in FP32 on
    // an H100; at Nd = 100 it is 11% slower).
    const bool into_inverse_fft = allowed != GemvImplementation::Cublas && adjoint == 1 &&
                                  cuda::real_fft_supported(length_) &&
                                  options_.gpu_engine.fft != FftImplementation::Cufft;
    if (into_inverse_fft && shape_.nd <= kFewObservationBlocks)
      candidates.emplace_back(cuda::GemvTuning{.into_inverse_fft = true});
    if (allowed != GemvImplementation::Cublas)
      for (const cuda::GemvTuning& tuning :
           cuda::gemv_tunings(adjoint == 1, gemv_shape(), context_->multiprocessors()))
        candidates.emplace_back(tuning);
    // With phase 3 in FP32 the candidates differ in accuracy too: cuBLAS accumulates in FP32, the
    // fused kernels in FP64. The plan keeps the fastest, as for FP64; choices() says which.
    if (into_inverse_fft && shape_.nd > kFewObservationBlocks)
      candidates.emplace_back(cuda::GemvTuning{.into_inverse_fft = true});
    if (allowed != GemvImplementation::Fused) candidates.emplace_back(std::nullopt);
    gemv_tuning_[adjoint] = candidates.front();  // the estimate
    if (options_.planning != Planning::Measure || candidates.size() == 1) continue;
    gemv_tuning_[adjoint] =
        candidates[fastest_pass(adjoint == 1, candidates.size(),
                                [&](std::size_t c) { gemv_tuning_[adjoint] = candidates[c]; })];
  }
}

void CudaEngine::choose_transforms() {
  if (!cuda::real_fft_supported(length_) || options_.gpu_engine.fft != FftImplementation::Auto ||
      options_.planning != Planning::Measure)
    return;
  SHIFTOP_CUDA_CHECK(cudaMemsetAsync(x_.as<void>(), 0, x_.bytes(), stream()));
  for (int adjoint = 0; adjoint < 2; ++adjoint)
    fused_transforms_[adjoint] = fastest_pass(adjoint == 1, 2, [&](std::size_t fused) {
                                   fused_transforms_[adjoint] = fused == 1;
                                 }) == 1;
}

}  // namespace shiftop::btt
