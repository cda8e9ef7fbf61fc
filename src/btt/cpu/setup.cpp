// The CPU engine's setup (btt/cpu/engine.hpp): the workspaces, F^ from the kernels
// (btt/kernel_spectrum), its FP32 copy, and FFTW's plans in the precisions the phases need.
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <limits>

#include "backend/cpu/cast.hpp"
#include "btt/cpu/engine.hpp"
#include "btt/engines.hpp"
#include "btt/kernel_spectrum.hpp"

namespace shiftop::btt {
namespace {

constexpr std::size_t kSaturated = std::numeric_limits<std::size_t>::max();

// Saturating products and sums of sizes: an absurd shape gives SIZE_MAX, not a wrapped count.
std::size_t times(std::size_t a, std::size_t b) {
  std::size_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? kSaturated : product;
}

template <typename... Sizes>
std::size_t times(std::size_t a, std::size_t b, Sizes... rest) {
  return times(times(a, b), rest...);
}

std::size_t plus(std::size_t a, std::size_t b) {
  std::size_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? kSaturated : sum;
}

std::size_t size(index_t n) {
  return static_cast<std::size_t>(n);
}

// Blocks per chunk of the vector-side pipeline: about 512 kB of padded FP64 series (2*stride
// doubles each), which stay in a core's L2 between padding, FFT and reordering; a multiple of 8
// so that each frequency's reordered run fills whole cache lines.
index_t chunk_blocks(index_t complex_stride) {
  const index_t fit = (index_t{512} << 10) / (2 * 8) / complex_stride;
  return std::clamp<index_t>(fit / 8 * 8, 8, 64);
}

index_t padded(index_t n) {
  return static_cast<index_t>(round_up(size(n), 16));
}

}  // namespace

CpuLayout::CpuLayout(const Shape& shape, const PlanOptions& options)
    : threads(options.cpu.threads > 0 ? options.cpu.threads : omp_get_max_threads()),
      group(options.max_rhs),
      stride(static_cast<index_t>(round_up(size(frequencies(shape)), 8))),
      ld_m(padded(shape.nm)),
      ld_d(padded(shape.nd)),
      chunk(chunk_blocks(stride)) {
  const std::size_t nfreq = size(frequencies(shape));
  spectrum = times(nfreq, 2, size(shape.nd), size(ld_m));
  scratch = times(size(chunk), 2, size(stride));
  spec_m = times(nfreq, 2, size(group), size(ld_m));
  spec_d = times(nfreq, 2, size(group), size(ld_d));
  middle = times(size(group), size(std::max(shape.nd, shape.nm)), size(shape.nt));
  series = times(size(shape.nm), 2, size(stride));
}

std::size_t CpuLayout::host_bytes(const PrecisionConfig& precision) const {
  const std::size_t fp32_copy =
      precision[Phase::Gemv] == Precision::Single ? times(spectrum, sizeof(float)) : 0;
  std::size_t doubles = spectrum;
  for (std::size_t count : {times(size(threads), scratch), spec_m, spec_d, middle, series})
    doubles = plus(doubles, count);
  return plus(times(doubles, sizeof(double)), fp32_copy);
}

std::size_t cpu_host_bytes(const Shape& shape, const PlanOptions& options,
                           const PrecisionConfig& precision) {
  return CpuLayout(shape, options).host_bytes(precision);
}

CpuEngine::CpuEngine(std::span<const double> first_column, std::span<const double> first_row,
                     const Shape& shape, const PlanOptions& options,
                     const PrecisionConfig& precision)
    : CpuEngine(first_column, first_row, shape, options, precision, CpuLayout(shape, options)) {}

CpuEngine::CpuEngine(std::span<const double> first_column, std::span<const double> first_row,
                     const Shape& shape, const PlanOptions& options,
                     const PrecisionConfig& precision, const CpuLayout& layout)
    : shape_(shape),
      threads_(layout.threads),
      measure_(options.planning == Planning::Measure),
      group_size_(layout.group),
      stride_(layout.stride),
      ld_m_(layout.ld_m),
      ld_d_(layout.ld_d),
      chunk_(layout.chunk) {
  spectrum64_ = AlignedBuffer<double>(layout.spectrum);
  for (int t = 0; t < threads_; ++t)
    scratch_.emplace_back(layout.scratch);
  thread_times_.resize(size(threads_));
  spec_m_ = AlignedBuffer<double>(layout.spec_m);
  spec_d_ = AlignedBuffer<double>(layout.spec_d);
  middle_ = AlignedBuffer<double>(layout.middle);
  {
    // Freed before set_precision makes F^'s FP32 copy.
    AlignedBuffer<double> series(layout.series);
    compute_kernel_spectrum(first_column, first_row, shape, {spectrum64_.data(), shape.nd, ld_m_},
                            {series.data(), series.size()}, stride_, threads_);
  }
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
  return {.fft_length = padded_length(shape_), .passes = {pass, pass}, .group_size = group_size_};
}

std::unique_ptr<Engine> make_cpu_engine(const EngineInputs& in) {
  return std::make_unique<CpuEngine>(in.first_column, in.first_row, in.shape, in.options,
                                     in.precision);
}

}  // namespace shiftop::btt
