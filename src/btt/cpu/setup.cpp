// The CPU engine's setup (btt/cpu/engine.hpp): the workspaces, F^ from the kernels
// (btt/kernel_spectrum), its FP32 copy, and FFTW's plans in the precisions the phases need.
#include <omp.h>

#include <algorithm>

#include "backend/cpu/cast.hpp"
#include "btt/cpu/engine.hpp"
#include "btt/engines.hpp"
#include "btt/kernel_spectrum.hpp"

namespace shiftop::btt {
namespace {

// Blocks per chunk of the vector-side pipeline: about 512 kB of padded FP64 series, which stay
// in a core's L2 between padding, FFT and reordering; a multiple of 8 so that each frequency's
// reordered run fills whole cache lines.
index_t chunk_blocks(index_t complex_stride) {
  const index_t fit = (index_t{512} << 10) / (2 * complex_stride * 8);
  return std::clamp<index_t>(fit / 8 * 8, 8, 64);
}

index_t padded(index_t n) {
  return static_cast<index_t>(round_up(static_cast<std::size_t>(n), 16));
}

}  // namespace

CpuEngine::CpuEngine(std::span<const double> first_column, std::span<const double> first_row,
                     const Shape& shape, const PlanOptions& options,
                     const PrecisionConfig& precision)
    : shape_(shape),
      threads_(options.cpu.threads > 0 ? options.cpu.threads : omp_get_max_threads()),
      measure_(options.planning == Planning::Measure),
      group_size_(options.max_rhs),
      stride_(static_cast<index_t>(round_up(static_cast<std::size_t>(frequencies(shape)), 8))),
      ld_m_(padded(shape.nm)),
      ld_d_(padded(shape.nd)),
      chunk_(chunk_blocks(stride_)) {
  const auto nfreq = static_cast<std::size_t>(frequencies(shape));
  spectrum64_ = AlignedBuffer<double>(nfreq * 2 * static_cast<std::size_t>(shape.nd * ld_m_));
  for (int t = 0; t < threads_; ++t)
    scratch_.emplace_back(static_cast<std::size_t>(chunk_ * 2 * stride_));
  thread_times_.resize(static_cast<std::size_t>(threads_));
  spec_m_ = AlignedBuffer<double>(nfreq * 2 * static_cast<std::size_t>(group_size_ * ld_m_));
  spec_d_ = AlignedBuffer<double>(nfreq * 2 * static_cast<std::size_t>(group_size_ * ld_d_));
  middle_ = AlignedBuffer<double>(
      static_cast<std::size_t>(group_size_ * std::max(shape.nd, shape.nm) * shape.nt));
  compute_kernel_spectrum(first_column, first_row, shape, {spectrum64_.data(), shape.nd, ld_m_},
                          threads_);
  set_precision(precision);
}

template <typename T>
void CpuEngine::make_transforms(std::optional<FftwPlans<T>>& transforms) {
  if (transforms) return;
  const index_t L = padded_length(shape_);
  T* scratch = scratch_.front().as<T>();
  using cpu::FftDirection;
  transforms.emplace(
      FftwPlans<T>{{L, 1, stride_, FftDirection::RealToComplex, scratch, 1, measure_},
                   {L, 1, stride_, FftDirection::ComplexToReal, scratch, 1, measure_}});
}

void CpuEngine::set_precision(const PrecisionConfig& precision) {
  precision_ = precision;
  for (Phase phase : {Phase::Fft, Phase::Ifft}) {
    if (precision[phase] == Precision::Single)
      make_transforms(transforms32_);
    else
      make_transforms(transforms64_);
  }
  if (precision[Phase::Gemv] == Precision::Single && spectrum32_.size() == 0) {
    spectrum32_ = AlignedBuffer<float>(spectrum64_.size());
    cpu::cast(spectrum64_.data(), spectrum32_.data(), static_cast<index_t>(spectrum64_.size()),
              threads_);
  } else if (precision[Phase::Gemv] == Precision::Double) {
    spectrum32_ = AlignedBuffer<float>();
  }
}

std::size_t CpuEngine::memory_bytes() const {
  std::size_t scratch = 0;
  for (const auto& s : scratch_)
    scratch += s.bytes();
  return spectrum64_.bytes() + spectrum32_.bytes() + scratch + spec_m_.bytes() + spec_d_.bytes() +
         middle_.bytes();
}

PlanChoices CpuEngine::choices() const {
  const PassChoice pass{.transforms = Transforms::Fftw, .gemv = Gemv::Cpu, .gemv_tuning = {}};
  return {.fft_length = padded_length(shape_), .passes = {pass, pass}};
}

std::unique_ptr<Engine> make_cpu_engine(const EngineInputs& in) {
  return std::make_unique<CpuEngine>(in.first_column, in.first_row, in.shape, in.options,
                                     in.precision);
}

}  // namespace shiftop::btt
