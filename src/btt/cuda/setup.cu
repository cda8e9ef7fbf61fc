// The GPU engine's setup (btt/cuda/engine.cuh): the context, the FFT length and the workspaces
// sized to the device's free memory, F^ from the kernels, its FP32 copy, the transforms' plans
// and twiddles.
#include <algorithm>
#include <cstdio>
#include <string>

#include "backend/cuda/layout_kernels.cuh"
#include "backend/cuda/real_fft.cuh"
#include "btt/cuda/engine.cuh"
#include "btt/engines.hpp"
#include "shiftop/gpu/context.hpp"

namespace shiftop::btt {
namespace {

std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GB", bytes / 1e9);
  return text;
}

}  // namespace

index_t power_of_two_length(const Shape& shape) {
  index_t power = 2;
  while (power < padded_length(shape))
    power *= 2;
  return power;
}

CudaEngine::CudaEngine(std::span<const double> first_column, std::span<const double> first_row,
                       const Shape& shape, const PlanOptions& options,
                       const PrecisionConfig& precision)
    : context_(gpu::context_for(options.gpu)),
      shape_(shape),
      precision_(precision),
      options_(options),
      ld_(shape.nm + shape.nm % 2),
      max_blocks_(std::max(shape.nd, shape.nm)) {
  const GpuEngineOptions& gpu = options.gpu_engine;
  if (frequencies(shape) > 65535 || shape.nd > 65535)
    throw Error("the CUDA backend supports Nt <= 65534 and Nd <= 65535 per device, got " +
                shape.str() + "; split the operator over a process grid");
  context_->activate();
  if (gpu.fft == FftImplementation::Fused &&
      !cuda::real_fft_supported(gpu.fft_length != 0 ? gpu.fft_length : power_of_two_length(shape)))
    throw Error("the fused FFT kernels take FFT lengths that are powers of two from 16 to 8192; " +
                (gpu.fft_length != 0
                     ? "the length asked for is " + std::to_string(gpu.fft_length)
                     : "this shape needs " + std::to_string(power_of_two_length(shape))) +
                "; use FftImplementation::Cufft (--fft cufft)");

  // Memory: F^ (and its FP32 copy), then as many right-hand sides per pass as fit in half of
  // what is left, at most max_rhs.
  std::size_t free_bytes = 0, total_bytes = 0;
  SHIFTOP_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const index_t shortest = gpu.fft_length != 0 ? gpu.fft_length : padded_length(shape);
  if (fixed_bytes(shortest) > double(free_bytes)) {
    const double spectra = fixed_bytes(shortest) - per_rhs_bytes(shortest) - 64e6;
    throw Error("the plan for " + shape.str() + " needs " + gigabytes(fixed_bytes(shortest)) +
                " of device memory (F^ " + gigabytes(spectra) + ", workspaces " +
                gigabytes(per_rhs_bytes(shortest)) + ") but device " +
                std::to_string(context_->device()) + " has " + gigabytes(double(free_bytes)) +
                " free; split the operator over more GPUs");
  }
  marks_ = cuda::EventTimer(kMarks);

  length_ = choose_fft_length(free_bytes);
  nw_ = length_ / 2 + 1;
  fused_transforms_.fill(cuda::real_fft_supported(length_) && gpu.fft != FftImplementation::Cufft);
  const double per_rhs = per_rhs_bytes(length_);
  group_size_ = std::clamp<index_t>(
      static_cast<index_t>((double(free_bytes) - fixed_bytes(length_)) / 2 / per_rhs) + 1, 1,
      options.max_rhs);
  const auto series = static_cast<std::size_t>(group_size_ * max_blocks_);
  spectrum64_ = allocate(static_cast<std::size_t>(nw_ * shape.nd * ld_) * sizeof(double2));
  padded_ = allocate(series * length_ * sizeof(double));
  input_spectra_ = allocate(series * nw_ * sizeof(double2));
  output_spectra_ = allocate(series * nw_ * sizeof(double2));
  x_ = allocate(series * shape.nt * sizeof(double));
  y_ = allocate(series * shape.nt * sizeof(double));
  middle_ = allocate(series * shape.nt * sizeof(double));

  make_cufft_plans<double>();
  compute_spectrum(first_column, first_row);
  set_precision(precision);
}

CudaEngine::~CudaEngine() {
  context_->activate();
  if (graph_ != nullptr) cudaGraphExecDestroy(graph_);
}

double CudaEngine::per_rhs_bytes(index_t length) const {
  // padded series, two spectra, and the x, y and middle staging vectors
  const index_t nw = length / 2 + 1;
  return double(max_blocks_) *
         (double(length) * 8 + 2.0 * double(nw) * sizeof(double2) + 3.0 * double(shape_.nt) * 8);
}

double CudaEngine::fixed_bytes(index_t length) const {
  const double spectrum =
      double(length / 2 + 1) * double(shape_.nd) * double(ld_) * sizeof(double2);
  const double spectrum32 = precision_[Phase::Gemv] == Precision::Single ? spectrum / 2 : 0.0;
  return spectrum + spectrum32 + per_rhs_bytes(length) + 64e6;  // + cuFFT and cuBLAS work areas
}

std::size_t CudaEngine::memory_bytes() const {
  return spectrum64_.bytes() + spectrum32_.bytes() + padded_.bytes() + input_spectra_.bytes() +
         output_spectra_.bytes() + x_.bytes() + y_.bytes() + middle_.bytes() + fft_work_.bytes() +
         context_->handles().cublas_workspace.bytes() + twiddles64_.bytes() + twiddles32_.bytes();
}

PlanChoices CudaEngine::choices() const {
  PlanChoices made{.fft_length = length_, .passes = {}};
  for (int adjoint = 0; adjoint < 2; ++adjoint) {
    PassChoice& pass = made.passes[adjoint];
    pass.transforms = fused_transforms_[adjoint] ? Transforms::Fused : Transforms::Cufft;
    const std::optional<cuda::GemvTuning>& tuning = gemv_tuning_[adjoint];
    pass.gemv = tuning ? Gemv::Fused : Gemv::Cublas;
    if (tuning) pass.gemv_tuning = cuda::describe(*tuning, adjoint == 1);
  }
  made.group_size = group_size_;
  return made;
}

template <typename T>
void CudaEngine::make_cufft_plans() {
  std::optional<CufftPlans<T>>& slot = cufft_plans<T>();
  if (slot) return;
  CufftPlans<T> made;
  made.plans.reserve(8);
  for (cuda::FftKind kind : {cuda::FftKind::Forward, cuda::FftKind::Inverse})
    for (index_t blocks : {shape_.nd, shape_.nm})
      for (index_t rhs : {index_t{1}, group_size_})
        made.plans.emplace_back(kind, length_, blocks * rhs);
  std::size_t need = 0;
  for (const cuda::FftPlan<T>& plan : made.plans)
    need = std::max(need, plan.work_bytes());
  if (need > fft_work_.bytes()) {
    fft_work_ = allocate(need);
    // Plans made earlier point at the old area.
    const auto repoint = [this](auto& existing) {
      if (existing)
        for (auto& plan : existing->plans)
          plan.set_work_area(fft_work_.as<void>(), stream());
    };
    repoint(cufft32_);
    repoint(cufft64_);
  }
  for (cuda::FftPlan<T>& plan : made.plans)
    plan.set_work_area(fft_work_.as<void>(), stream());
  slot = std::move(made);
}

void CudaEngine::make_twiddles() {
  if (!cuda::real_fft_supported(length_)) return;
  if (twiddles64_.bytes() == 0) {
    twiddles64_ = allocate(static_cast<std::size_t>(length_) * sizeof(double2));
    cuda::make_twiddles<double>(twiddles64_.as<double2>(), length_, stream());
  }
  const bool single =
      precision_[Phase::Fft] == Precision::Single || precision_[Phase::Ifft] == Precision::Single;
  if (single && twiddles32_.bytes() == 0) {
    twiddles32_ = allocate(static_cast<std::size_t>(length_) * sizeof(float2));
    cuda::make_twiddles<float>(twiddles32_.as<float2>(), length_, stream());
  }
}

void CudaEngine::compute_spectrum(std::span<const double> first_column,
                                  std::span<const double> first_row) {
  const index_t nt = shape_.nt, nm = shape_.nm;
  double* col = x_.as<double>();
  double* row = y_.as<double>();
  SHIFTOP_CUDA_CHECK(cudaMemsetAsync(spectrum64_.as<void>(), 0, spectrum64_.bytes(), stream()));
  cuda::TransposeShape layout{
      .p = 1, .q = nm, .nw = nw_, .block_p = 0, .freq_w = shape_.nd * ld_, .freq_p = 0};
  // One observation block (Nm kernels) at a time: upload, circulant embedding, FFT, scale by
  // 1/L (the inverse FFT's normalisation, folded in once) and reorder frequency-major.
  for (index_t i = 0; i < shape_.nd; ++i) {
    const auto offset = static_cast<std::size_t>(i * nm * nt);
    const std::size_t bytes = static_cast<std::size_t>(nm * nt) * sizeof(double);
    SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(col, first_column.data() + offset, bytes,
                                       cudaMemcpyHostToDevice, stream()));
    if (!first_row.empty())
      SHIFTOP_CUDA_CHECK(
          cudaMemcpyAsync(row, first_row.data() + offset, bytes, cudaMemcpyHostToDevice, stream()));
    cuda::circulant_columns(col, first_row.empty() ? nullptr : row, padded_.as<double>(), nm, nt,
                            length_, stream());
    cufft64_->get(cuda::FftKind::Forward, true, false)
        .execute(padded_.as<void>(), input_spectra_.as<void>());
    cuda::to_frequency_major<double, double>(input_spectra_.as<double2>(),
                                             spectrum64_.as<double2>() + i * ld_, layout, false,
                                             1.0 / double(length_), stream());
  }
  SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream()));
}

void CudaEngine::set_precision(const PrecisionConfig& precision) {
  context_->activate();
  if (precision[Phase::Fft] == Precision::Single || precision[Phase::Ifft] == Precision::Single)
    make_cufft_plans<float>();
  if (precision[Phase::Gemv] == Precision::Single) {
    if (spectrum32_.bytes() == 0) {
      spectrum32_ = allocate(spectrum64_.bytes() / 2);
      // A complex cast rounds its real and imaginary parts on their own: 2n real casts.
      cuda::cast(spectrum64_.as<double>(), spectrum32_.as<float>(), 2 * nw_ * shape_.nd * ld_,
                 stream());
    }
  } else {
    spectrum32_ = cuda::DeviceMemory();
  }
  precision_ = precision;
  make_twiddles();
  // The padded series are read as FP32 or FP64 rows: re-zero the padding for the new view.
  SHIFTOP_CUDA_CHECK(cudaMemsetAsync(padded_.as<void>(), 0, padded_.bytes(), stream()));
  forget_graph();
  choose_gemv();
  choose_transforms();
  SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream()));
}

void CudaEngine::set_gemv(GemvImplementation gemv) {
  context_->activate();
  options_.gpu_engine.gemv = gemv;
  forget_graph();
  choose_gemv();
  SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream()));
}

std::size_t cuda_host_bytes(const Shape&, const PlanOptions&, const PrecisionConfig&) {
  // F^, the workspaces and the staging vectors are all device memory (allocate, sized against
  // cudaMemGetInfo above); the host holds only plan handles and choices.
  return 0;
}

std::unique_ptr<Engine> make_cuda_engine(const EngineInputs& in) {
  return std::make_unique<CudaEngine>(in.first_column, in.first_row, in.shape, in.options,
                                      in.precision);
}

}  // namespace shiftop::btt
