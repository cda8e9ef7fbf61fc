// The GPU engine: Venkat et al., Algorithms 1-2 on one device, with the five-phase precision of
// the mixed-precision paper (section 3.2). One pass over at most `group_` right-hand sides:
//   pad+cast (phase 1) -> batched R2C (2) -> GEMV/GEMM (3) -> in-place C2R (4) -> unpad+cast (5).
// For one right-hand side the GEMV kernels read and write the block-major spectra directly, so
// no transpose touches the vectors; several right-hand sides are reordered frequency-major and
// multiplied by cuBLAS's batched GEMM, which reads F^ once per pass.
// At power-of-two lengths our real FFT kernels (backend/cuda/real_fft.cuh) replace phases 1-2 and
// 4-5 with one kernel each that reads or writes only the Nt values of every series.
// Under FftPlanning::Measure the plan times its candidates: the FFT length (2*Nt or a power of
// two, cuFFT's fastest sizes), the phase-3 kernel (the fused kernels' tunings, cuBLAS) and the
// transforms (ours, or pad + cuFFT + unpad).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "backend/cuda/check.hpp"
#include "backend/cuda/device_memory.cuh"
#include "backend/cuda/fft_plan.cuh"
#include "backend/cuda/gemv_kernels.cuh"
#include "backend/cuda/layout_kernels.cuh"
#include "backend/cuda/real_fft.cuh"
#include "btt/cuda_engine.hpp"

namespace shiftop::btt {
namespace {

using cuda::complex_t;
using cuda::DeviceMemory;
using cuda::FftKind;
using cuda::FftPlan;

/// The FP32 or the FP64 copy of a plan's complex array, as precision T.
template <typename T>
const complex_t<T>* of_precision(const DeviceMemory& fp32, const DeviceMemory& fp64) {
  if constexpr (sizeof(T) == 4)
    return fp32.as<float2>();
  else
    return fp64.as<double2>();
}

/// The shortest power-of-two FFT length >= 2*Nt.
index_t power_of_two_length(const Shape& shape) {
  index_t power = 2;
  while (power < shape.padded_length())
    power *= 2;
  return power;
}

std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GB", bytes / 1e9);
  return text;
}

// cuBLAS's strided batched GEMM in either precision; complex_t<T> is cuComplex/cuDoubleComplex.
void gemm_batched(cublasHandle_t handle, cublasOperation_t op_a, int m, int n, int k,
                  const float2* a, long long lda, long long stride_a, const float2* b, int ldb,
                  long long stride_b, float2* c, int ldc, long long stride_c, int batch) {
  const float2 one{1.0f, 0.0f}, zero{0.0f, 0.0f};
  SHIFTOP_CUDA_CHECK(cublasCgemmStridedBatched(handle, op_a, CUBLAS_OP_N, m, n, k, &one, a,
                                               static_cast<int>(lda), stride_a, b, ldb, stride_b,
                                               &zero, c, ldc, stride_c, batch));
}
void gemm_batched(cublasHandle_t handle, cublasOperation_t op_a, int m, int n, int k,
                  const double2* a, long long lda, long long stride_a, const double2* b, int ldb,
                  long long stride_b, double2* c, int ldc, long long stride_c, int batch) {
  const double2 one{1.0, 0.0}, zero{0.0, 0.0};
  SHIFTOP_CUDA_CHECK(cublasZgemmStridedBatched(handle, op_a, CUBLAS_OP_N, m, n, k, &one, a,
                                               static_cast<int>(lda), stride_a, b, ldb, stride_b,
                                               &zero, c, ldc, stride_c, batch));
}
void gemv_batched(cublasHandle_t handle, cublasOperation_t op, int m, int n, const float2* a,
                  long long lda, long long stride_a, const float2* x, long long stride_x, float2* y,
                  long long stride_y, int batch) {
  const float2 one{1.0f, 0.0f}, zero{0.0f, 0.0f};
  SHIFTOP_CUDA_CHECK(cublasCgemvStridedBatched(handle, op, m, n, &one, a, static_cast<int>(lda),
                                               stride_a, x, 1, stride_x, &zero, y, 1, stride_y,
                                               batch));
}
void gemv_batched(cublasHandle_t handle, cublasOperation_t op, int m, int n, const double2* a,
                  long long lda, long long stride_a, const double2* x, long long stride_x,
                  double2* y, long long stride_y, int batch) {
  const double2 one{1.0, 0.0}, zero{0.0, 0.0};
  SHIFTOP_CUDA_CHECK(cublasZgemvStridedBatched(handle, op, m, n, &one, a, static_cast<int>(lda),
                                               stride_a, x, 1, stride_x, &zero, y, 1, stride_y,
                                               batch));
}

// The forward and inverse transforms of one precision for the block counts and batch sizes a
// pass uses: one right-hand side or a whole group, of Nd or of Nm blocks.
template <typename T>
struct Transforms {
  // [inverse][blocks == nm][whole group]
  std::vector<FftPlan<T>> plans;
  FftPlan<T>& get(FftKind kind, bool nm_blocks, bool group) {
    return plans[(kind == FftKind::Inverse ? 4 : 0) + (nm_blocks ? 2 : 0) + (group ? 1 : 0)];
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
  void set_gemv_kernel(GemvKernel kernel) override;
  PhaseTimes last_phase_times() const override { return times_; }
  std::size_t memory_bytes() const override;
  std::string gemv_kernel(Op op) const override {
    const bool adjoint = op == Op::Fadj || op == Op::FFadj;
    const std::optional<cuda::GemvTuning>& kernel = kernel_[adjoint ? 1 : 0];
    return kernel ? "fused " + cuda::describe(*kernel, adjoint) : "cublas";
  }
  std::string fft_kernel(Op op) const override {
    return fused_fft_[op == Op::Fadj || op == Op::FFadj ? 1 : 0] ? "fused" : "cufft";
  }
  index_t fft_length() const override { return length_; }

 private:
  /// Runs op on device buffers group by group on stream_.
  void run(Op op, const double* x, double* y, index_t nrhs);
  /// One F or F* pass over n <= group_ right-hand sides.
  void pass(bool adjoint, const double* x, double* y, index_t n);
  template <typename T>
  void forward(index_t blocks, index_t n);
  template <typename T>
  void inverse(index_t blocks, index_t n);
  template <typename T3, typename T2, typename T4>
  void multiply(bool adjoint, index_t n, bool frequency_major_output);
  /// Whether in a pass over n right-hand sides our inverse transform reads cuBLAS's
  /// frequency-major output directly (phases 3 and 4 in one precision), instead of a transpose.
  bool inverse_reads_frequency_major(bool adjoint, index_t n) const;
  template <typename T>
  const complex_t<T>* spectrum() const;
  template <typename T>
  std::optional<Transforms<T>>& transforms();
  template <typename T>
  void make_transforms();
  template <typename T>
  const complex_t<T>* twiddles() const;
  /// The roots of unity of the real FFT kernels in the precisions the phases need.
  void make_twiddles();
  void compute_spectrum(std::span<const double> first_column, std::span<const double> first_row);
  /// Device bytes of the plan with FFT length `length` and one right-hand side per pass, and
  /// those of each further right-hand side.
  double fixed_bytes(index_t length) const;
  double per_rhs_bytes(index_t length) const;
  index_t choose_fft_length(std::size_t free_bytes);
  /// Milliseconds of `work` on stream_ (synchronises).
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
  cuda::GemvShape gemv_shape() const {
    return {.nd = shape_.nd, .nm = shape_.nm, .ld = ld_, .nw = nw_};
  }
  void choose_gemv_kernels();
  void choose_fft_kernels();
  /// Drops the captured CUDA graph (its kernels or buffers changed).
  void forget_graph();
  /// Event k of a pass (profiling only): 0 start, 1 padded, 2 transformed, 3 reordered,
  /// 4 multiplied, 5 reordered back, 6 transformed back, 7 unpadded.
  void mark(int k);
  void add_pass_times();

  Shape shape_;
  PrecisionConfig precision_;
  PlanOptions options_;
  index_t ld_, max_blocks_;
  index_t length_ = 0, nw_ = 0, group_ = 1;  // FFT length, its frequencies L/2+1
  int sms_ = 1;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cudaEvent_t fork_ = nullptr, join_ = nullptr;
  std::array<cudaEvent_t, 8> marks_{};
  std::array<std::optional<cuda::GemvTuning>, 2> kernel_;  // F, F*: fused, or cuBLAS if empty
  std::array<bool, 2> fused_fft_{};  // F, F*: our real FFT kernels, or pad + cuFFT + unpad

  DeviceMemory spectrum64_, spectrum32_;  // F^ [w][Nd][ld], complex
  DeviceMemory padded_;                   // [group][blocks][L] real, zero tails (never written)
  DeviceMemory spec_in_;   // [group][blocks][L/2+1] complex (cuFFT output), or GEMM output
  DeviceMemory spec_out_;  // [group][blocks][L/2+1] complex, inverse FFT in place; or GEMM input
  DeviceMemory x_, y_, middle_;  // [group][blocks][Nt] FP64: host staging and F x inside F*F
  DeviceMemory fft_work_, cublas_work_;
  DeviceMemory twiddles64_, twiddles32_;  // exp(-2 pi i k / L), k < L
  std::optional<Transforms<float>> transforms32_;
  std::optional<Transforms<double>> transforms64_;

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

CudaEngine::CudaEngine(std::span<const double> first_column, std::span<const double> first_row,
                       const Shape& shape, const PlanOptions& options,
                       const PrecisionConfig& precision)
    : shape_(shape),
      precision_(precision),
      options_(options),
      ld_(shape.nm + shape.nm % 2),
      max_blocks_(std::max(shape.nd, shape.nm)) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || options.device < 0 ||
      options.device >= devices) {
    (void)cudaGetLastError();
    throw Error("CUDA device " + std::to_string(options.device) + " is not available (" +
                std::to_string(devices) + " visible); use the CPU backend or another device");
  }
  if (shape.frequencies() > 65535 || shape.nd > 65535)
    throw Error("the CUDA backend supports Nt <= 65534 and Nd <= 65535 per device, got " +
                shape.str() + "; split the operator over a process grid");
  SHIFTOP_CUDA_CHECK(cudaSetDevice(options.device));
  SHIFTOP_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, options.device));
  if (options.fft == FftKernel::Fused &&
      !cuda::real_fft_supported(options.fft_length != 0 ? options.fft_length
                                                        : power_of_two_length(shape)))
    throw Error("the fused FFT kernels take FFT lengths that are powers of two from 16 to 8192; " +
                (options.fft_length != 0
                     ? "the length asked for is " + std::to_string(options.fft_length)
                     : "this shape needs " + std::to_string(power_of_two_length(shape))) +
                "; use FftKernel::Cufft (--fft cufft)");

  // Memory: F^ (and its FP32 copy), then as many right-hand sides per pass as fit in half of
  // what is left, at most max_rhs.
  std::size_t free_bytes = 0, total_bytes = 0;
  SHIFTOP_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const index_t shortest = options.fft_length != 0 ? options.fft_length : shape.padded_length();
  if (fixed_bytes(shortest) > double(free_bytes)) {
    const double spectra = fixed_bytes(shortest) - per_rhs_bytes(shortest) - 64e6;
    throw Error("the plan for " + shape.str() + " needs " + gigabytes(fixed_bytes(shortest)) +
                " of device memory (F^ " + gigabytes(spectra) + ", workspaces " +
                gigabytes(per_rhs_bytes(shortest)) + ") but device " +
                std::to_string(options.device) + " has " + gigabytes(double(free_bytes)) +
                " free; split the operator over more GPUs");
  }

  SHIFTOP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  SHIFTOP_CUDA_CHECK(cublasCreate(&cublas_));
  SHIFTOP_CUDA_CHECK(cublasSetStream(cublas_, stream_));
  // A workspace of our own keeps cuBLAS from allocating while a CUDA graph is captured.
  cublas_work_ = DeviceMemory(std::size_t{32} << 20);
  SHIFTOP_CUDA_CHECK(cublasSetWorkspace(cublas_, cublas_work_.as<void>(), cublas_work_.bytes()));
  SHIFTOP_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
  SHIFTOP_CUDA_CHECK(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
  for (cudaEvent_t& mark : marks_)
    SHIFTOP_CUDA_CHECK(cudaEventCreate(&mark));

  length_ = choose_fft_length(free_bytes);
  nw_ = length_ / 2 + 1;
  fused_fft_.fill(cuda::real_fft_supported(length_) && options.fft != FftKernel::Cufft);
  const double per_rhs = per_rhs_bytes(length_);
  group_ = std::clamp<index_t>(
      static_cast<index_t>((double(free_bytes) - fixed_bytes(length_)) / 2 / per_rhs) + 1, 1,
      options.max_rhs);
  const auto series = static_cast<std::size_t>(group_ * max_blocks_);
  spectrum64_ = DeviceMemory(static_cast<std::size_t>(nw_ * shape.nd * ld_) * sizeof(double2));
  padded_ = DeviceMemory(series * length_ * sizeof(double));
  spec_in_ = DeviceMemory(series * nw_ * sizeof(double2));
  spec_out_ = DeviceMemory(series * nw_ * sizeof(double2));
  x_ = DeviceMemory(series * shape.nt * sizeof(double));
  y_ = DeviceMemory(series * shape.nt * sizeof(double));
  middle_ = DeviceMemory(series * shape.nt * sizeof(double));

  make_transforms<double>();
  compute_spectrum(first_column, first_row);
  set_precision(precision);
}

CudaEngine::~CudaEngine() {
  if (graph_ != nullptr) cudaGraphExecDestroy(graph_);
  for (cudaEvent_t mark : marks_)
    if (mark != nullptr) cudaEventDestroy(mark);
  if (fork_ != nullptr) cudaEventDestroy(fork_);
  if (join_ != nullptr) cudaEventDestroy(join_);
  if (cublas_ != nullptr) cublasDestroy(cublas_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
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

template <typename Work>
float CudaEngine::elapsed_ms(Work&& work) {
  SHIFTOP_CUDA_CHECK(cudaEventRecord(marks_[0], stream_));
  work();
  SHIFTOP_CUDA_CHECK(cudaEventRecord(marks_[7], stream_));
  SHIFTOP_CUDA_CHECK(cudaEventSynchronize(marks_[7]));
  float ms = 0;
  SHIFTOP_CUDA_CHECK(cudaEventElapsedTime(&ms, marks_[0], marks_[7]));
  return ms;
}

template <typename Work>
float CudaEngine::best_of_three_ms(Work&& work) {
  work();
  return std::min({elapsed_ms(work), elapsed_ms(work), elapsed_ms(work)});
}

index_t CudaEngine::choose_fft_length(std::size_t free_bytes) {
  const index_t natural = shape_.padded_length();
  if (options_.fft_length != 0) return options_.fft_length;
  const index_t power = power_of_two_length(shape_);
  if (options_.fft == FftKernel::Fused) return power;  // the fused kernels take no other
  // The longer length costs F^ bytes (L/2+1 frequencies) and must pay for them in FFT time.
  if (options_.fft_planning != FftPlanning::Measure || power == natural ||
      4 * power > 5 * natural || power / 2 + 1 > 65535)
    return natural;
  // Probe on the larger side's series at the longer length, in memory the plan then reuses.
  const auto series = static_cast<std::size_t>(max_blocks_);
  const std::size_t real_bytes = series * power * sizeof(double);
  const std::size_t complex_bytes = series * (power / 2 + 1) * sizeof(double2);
  if (fixed_bytes(power) + double(real_bytes + complex_bytes) > double(free_bytes)) return natural;
  DeviceMemory real(real_bytes), spectra(complex_bytes);
  SHIFTOP_CUDA_CHECK(cudaMemsetAsync(real.as<void>(), 0, real_bytes, stream_));
  const float copy_ms = best_of_three_ms([&] {
    SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(spectra.as<void>(), real.as<void>(), real_bytes,
                                       cudaMemcpyDeviceToDevice, stream_));
  });
  const double bytes_per_ms = 2.0 * double(real_bytes) / copy_ms;
  index_t best = natural;
  double best_ms = 1e30;
  for (index_t length : {natural, power}) {
    FftPlan<double> forward(FftKind::Forward, length, max_blocks_);
    FftPlan<double> inverse(FftKind::Inverse, length, max_blocks_);
    DeviceMemory work(std::max(forward.work_bytes(), inverse.work_bytes()));
    forward.set_work_area(work.as<void>(), stream_);
    inverse.set_work_area(work.as<void>(), stream_);
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

std::size_t CudaEngine::memory_bytes() const {
  return spectrum64_.bytes() + spectrum32_.bytes() + padded_.bytes() + spec_in_.bytes() +
         spec_out_.bytes() + x_.bytes() + y_.bytes() + middle_.bytes() + fft_work_.bytes() +
         cublas_work_.bytes() + twiddles64_.bytes() + twiddles32_.bytes();
}

template <typename T>
std::optional<Transforms<T>>& CudaEngine::transforms() {
  if constexpr (sizeof(T) == 4)
    return transforms32_;
  else
    return transforms64_;
}

template <typename T>
void CudaEngine::make_transforms() {
  std::optional<Transforms<T>>& slot = transforms<T>();
  if (slot) return;
  Transforms<T> made;
  made.plans.reserve(8);
  for (FftKind kind : {FftKind::Forward, FftKind::Inverse})
    for (index_t blocks : {shape_.nd, shape_.nm})
      for (index_t rhs : {index_t{1}, group_})
        made.plans.emplace_back(kind, length_, blocks * rhs);
  std::size_t need = 0;
  for (const FftPlan<T>& plan : made.plans)
    need = std::max(need, plan.work_bytes());
  if (need > fft_work_.bytes()) {
    fft_work_ = DeviceMemory(need);
    // Plans made earlier point at the old area.
    const auto repoint = [this](auto& existing) {
      if (existing)
        for (auto& plan : existing->plans)
          plan.set_work_area(fft_work_.as<void>(), stream_);
    };
    repoint(transforms32_);
    repoint(transforms64_);
  }
  for (FftPlan<T>& plan : made.plans)
    plan.set_work_area(fft_work_.as<void>(), stream_);
  slot = std::move(made);
}

template <typename T>
const complex_t<T>* CudaEngine::twiddles() const {
  return of_precision<T>(twiddles32_, twiddles64_);
}

void CudaEngine::make_twiddles() {
  if (!cuda::real_fft_supported(length_)) return;
  if (twiddles64_.bytes() == 0) {
    twiddles64_ = DeviceMemory(static_cast<std::size_t>(length_) * sizeof(double2));
    cuda::make_twiddles<double>(twiddles64_.as<double2>(), length_, stream_);
  }
  const bool single =
      precision_[Phase::Fft] == Precision::Single || precision_[Phase::Ifft] == Precision::Single;
  if (single && twiddles32_.bytes() == 0) {
    twiddles32_ = DeviceMemory(static_cast<std::size_t>(length_) * sizeof(float2));
    cuda::make_twiddles<float>(twiddles32_.as<float2>(), length_, stream_);
  }
}

void CudaEngine::compute_spectrum(std::span<const double> first_column,
                                  std::span<const double> first_row) {
  const index_t nt = shape_.nt, nm = shape_.nm;
  double* col = x_.as<double>();
  double* row = y_.as<double>();
  SHIFTOP_CUDA_CHECK(cudaMemsetAsync(spectrum64_.as<void>(), 0, spectrum64_.bytes(), stream_));
  cuda::TransposeShape layout{
      .p = 1, .q = nm, .nw = nw_, .block_p = 0, .freq_w = shape_.nd * ld_, .freq_p = 0};
  // One observation block (Nm kernels) at a time: upload, circulant embedding, FFT, scale by
  // 1/L (the inverse FFT's normalisation, folded in once) and reorder frequency-major.
  for (index_t i = 0; i < shape_.nd; ++i) {
    const auto offset = static_cast<std::size_t>(i * nm * nt);
    const std::size_t bytes = static_cast<std::size_t>(nm * nt) * sizeof(double);
    SHIFTOP_CUDA_CHECK(
        cudaMemcpyAsync(col, first_column.data() + offset, bytes, cudaMemcpyHostToDevice, stream_));
    if (!first_row.empty())
      SHIFTOP_CUDA_CHECK(
          cudaMemcpyAsync(row, first_row.data() + offset, bytes, cudaMemcpyHostToDevice, stream_));
    cuda::circulant_columns(col, first_row.empty() ? nullptr : row, padded_.as<double>(), nm, nt,
                            length_, stream_);
    transforms64_->get(FftKind::Forward, true, false)
        .execute(padded_.as<void>(), spec_in_.as<void>());
    cuda::to_frequency_major<double, double>(spec_in_.as<double2>(),
                                             spectrum64_.as<double2>() + i * ld_, layout, false,
                                             1.0 / double(length_), stream_);
  }
  SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaEngine::set_precision(const PrecisionConfig& precision) {
  SHIFTOP_CUDA_CHECK(cudaSetDevice(options_.device));
  if (precision[Phase::Fft] == Precision::Single || precision[Phase::Ifft] == Precision::Single)
    make_transforms<float>();
  if (precision[Phase::Gemv] == Precision::Single) {
    if (spectrum32_.bytes() == 0) {
      spectrum32_ = DeviceMemory(spectrum64_.bytes() / 2);
      cuda::cast_complex<double, float>(spectrum64_.as<double2>(), spectrum32_.as<float2>(),
                                        nw_ * shape_.nd * ld_, stream_);
    }
  } else {
    spectrum32_ = DeviceMemory();
  }
  precision_ = precision;
  make_twiddles();
  // The padded series are read as FP32 or FP64 rows: re-zero the padding for the new view.
  SHIFTOP_CUDA_CHECK(cudaMemsetAsync(padded_.as<void>(), 0, padded_.bytes(), stream_));
  forget_graph();
  choose_gemv_kernels();
  choose_fft_kernels();
  SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaEngine::set_gemv_kernel(GemvKernel kernel) {
  SHIFTOP_CUDA_CHECK(cudaSetDevice(options_.device));
  options_.gemv = kernel;
  forget_graph();
  choose_gemv_kernels();
  SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaEngine::forget_graph() {
  if (graph_ != nullptr) SHIFTOP_CUDA_CHECK(cudaGraphExecDestroy(graph_));
  graph_ = nullptr;
  graph_key_.reset();
}

template <typename Select>
std::size_t CudaEngine::fastest_pass(bool adjoint, std::size_t count, Select&& select) {
  const bool profile = std::exchange(options_.profile, false);
  std::vector<float> best(count, 1e30f);
  for (int rep = -1; rep < 5; ++rep)
    for (std::size_t c = 0; c < count; ++c) {
      select(c);
      const float ms = elapsed_ms([&] { pass(adjoint, x_.as<double>(), y_.as<double>(), 1); });
      if (rep >= 0) best[c] = std::min(best[c], ms);
    }
  options_.profile = profile;
  return static_cast<std::size_t>(std::min_element(best.begin(), best.end()) - best.begin());
}

void CudaEngine::choose_gemv_kernels() {
  SHIFTOP_CUDA_CHECK(cudaMemsetAsync(x_.as<void>(), 0, x_.bytes(), stream_));
  for (int adjoint = 0; adjoint < 2; ++adjoint) {
    std::vector<std::optional<cuda::GemvTuning>> candidates;
    if (options_.gemv != GemvKernel::Cublas)
      for (const cuda::GemvTuning& tuning : cuda::gemv_tunings(adjoint == 1, gemv_shape(), sms_))
        candidates.emplace_back(tuning);
    // With phase 3 in FP32 the candidates differ in accuracy too: cuBLAS accumulates in FP32, the
    // fused kernels in FP64. The plan keeps the fastest, as for FP64; gemv_kernel() says which.
    if (options_.gemv != GemvKernel::Fused) candidates.emplace_back(std::nullopt);
    kernel_[adjoint] = candidates.front();  // the estimate
    if (options_.fft_planning != FftPlanning::Measure || candidates.size() == 1) continue;
    kernel_[adjoint] = candidates[fastest_pass(
        adjoint == 1, candidates.size(), [&](std::size_t c) { kernel_[adjoint] = candidates[c]; })];
  }
}

void CudaEngine::choose_fft_kernels() {
  if (!cuda::real_fft_supported(length_) || options_.fft != FftKernel::Auto ||
      options_.fft_planning != FftPlanning::Measure)
    return;
  SHIFTOP_CUDA_CHECK(cudaMemsetAsync(x_.as<void>(), 0, x_.bytes(), stream_));
  for (int adjoint = 0; adjoint < 2; ++adjoint)
    fused_fft_[adjoint] = fastest_pass(adjoint == 1, 2, [&](std::size_t fused) {
                            fused_fft_[adjoint] = fused == 1;
                          }) == 1;
}

template <typename T>
const complex_t<T>* CudaEngine::spectrum() const {
  return of_precision<T>(spectrum32_, spectrum64_);
}

template <typename T>
void CudaEngine::forward(index_t blocks, index_t n) {
  Transforms<T>& t = *transforms<T>();
  const bool nm_blocks = blocks == shape_.nm;
  if (n == 1 || n == group_) {
    t.get(FftKind::Forward, nm_blocks, n != 1).execute(padded_.as<void>(), spec_in_.as<void>());
    return;
  }
  for (index_t r = 0; r < n; ++r)
    t.get(FftKind::Forward, nm_blocks, false)
        .execute(padded_.as<T>() + r * blocks * length_,
                 spec_in_.as<complex_t<T>>() + r * blocks * nw_);
}

template <typename T>
void CudaEngine::inverse(index_t blocks, index_t n) {
  Transforms<T>& t = *transforms<T>();
  const bool nm_blocks = blocks == shape_.nm;
  if (n == 1 || n == group_) {
    t.get(FftKind::Inverse, nm_blocks, n != 1).execute(spec_out_.as<void>(), spec_out_.as<void>());
    return;
  }
  for (index_t r = 0; r < n; ++r) {
    complex_t<T>* series = spec_out_.as<complex_t<T>>() + r * blocks * nw_;
    t.get(FftKind::Inverse, nm_blocks, false).execute(series, series);
  }
}

bool CudaEngine::inverse_reads_frequency_major(bool adjoint, index_t n) const {
  return fused_fft_[adjoint ? 1 : 0] && (n > 1 || !kernel_[adjoint ? 1 : 0]) &&
         precision_[Phase::Gemv] == precision_[Phase::Ifft];
}

template <typename T3, typename T2, typename T4>
void CudaEngine::multiply(bool adjoint, index_t n, bool frequency_major_output) {
  const index_t nd = shape_.nd, nm = shape_.nm;
  const std::optional<cuda::GemvTuning>& kernel = kernel_[adjoint ? 1 : 0];
  if (n == 1 && kernel) {
    mark(3);
    cuda::gemv_fused<T3, T2, T4>(adjoint, spectrum<T3>(), gemv_shape(),
                                 spec_in_.as<complex_t<T2>>(), spec_out_.as<complex_t<T4>>(),
                                 *kernel, stream_);
    mark(4);
    mark(5);
    return;
  }
  // Frequency-major vectors for cuBLAS. F* uses conj(F^[w]^H x) = M conj(x), with M the
  // column-major view of F^[w] (Nm x Nd, lda = ld): the reorderings conjugate on the way.
  const index_t in_b = adjoint ? nd : nm, out_b = adjoint ? nm : nd;
  complex_t<T3>* xs = spec_out_.as<complex_t<T3>>();
  complex_t<T3>* ys = spec_in_.as<complex_t<T3>>();
  cuda::to_frequency_major<T2, T3>(
      spec_in_.as<complex_t<T2>>(), xs,
      {.p = n, .q = in_b, .nw = nw_, .block_p = in_b * nw_, .freq_w = n * in_b, .freq_p = in_b},
      adjoint, 1.0, stream_);
  mark(3);
  const auto i = [](index_t v) { return static_cast<int>(v); };
  const cublasOperation_t op = adjoint ? CUBLAS_OP_N : CUBLAS_OP_T;
  const long long stride_a = nd * ld_;
  if (n == 1)
    gemv_batched(cublas_, op, i(nm), i(nd), spectrum<T3>(), ld_, stride_a, xs, in_b, ys, out_b,
                 i(nw_));
  else
    gemm_batched(cublas_, op, i(out_b), i(n), i(in_b), spectrum<T3>(), ld_, stride_a, xs, i(in_b),
                 n * in_b, ys, i(out_b), n * out_b, i(nw_));
  mark(4);
  if (!frequency_major_output)
    cuda::from_frequency_major<T3, T4>(ys, spec_out_.as<complex_t<T4>>(),
                                       {.p = n,
                                        .q = out_b,
                                        .nw = nw_,
                                        .block_p = out_b * nw_,
                                        .freq_w = n * out_b,
                                        .freq_p = out_b},
                                       adjoint, stream_);
  mark(5);
}

void CudaEngine::mark(int k) {
  if (options_.profile) SHIFTOP_CUDA_CHECK(cudaEventRecord(marks_[k], stream_));
}

void CudaEngine::add_pass_times() {
  if (!options_.profile) return;
  SHIFTOP_CUDA_CHECK(cudaEventSynchronize(marks_[7]));
  const auto between = [this](int a, int b) {
    float ms = 0;
    SHIFTOP_CUDA_CHECK(cudaEventElapsedTime(&ms, marks_[a], marks_[b]));
    return 1e-3 * ms;
  };
  times_[ApplyPhase::Pad] += between(0, 1);
  times_[ApplyPhase::Fft] += between(1, 2);
  times_[ApplyPhase::Layout] += between(2, 3) + between(4, 5);
  times_[ApplyPhase::Gemv] += between(3, 4);
  times_[ApplyPhase::Ifft] += between(5, 6);
  times_[ApplyPhase::Unpad] += between(6, 7);
}

void CudaEngine::pass(bool adjoint, const double* x, double* y, index_t n) {
  const PrecisionConfig& p = precision_;
  const index_t in_b = adjoint ? shape_.nd : shape_.nm, out_b = adjoint ? shape_.nm : shape_.nd;
  const bool fused = fused_fft_[adjoint ? 1 : 0];
  // Frequency-major: the inverse reads cuBLAS's output (spec_in_), conjugated back for F* as the
  // transpose would.
  const bool frequency_major = inverse_reads_frequency_major(adjoint, n);
  const cuda::SpectraLayout from_gemm{.frequency_stride = frequency_major ? n * out_b : 0,
                                      .conjugate = frequency_major && adjoint};
  mark(0);
  with_type(p[Phase::Pad], [&](auto t1) {
    with_type(p[Phase::Fft], [&](auto t2) {
      using T1 = decltype(t1);
      using T2 = decltype(t2);
      if (fused) {
        mark(1);
        cuda::padded_real_fft<T1, T2>(x, spec_in_.as<complex_t<T2>>(), n * in_b, shape_.nt, length_,
                                      twiddles<T2>(), stream_);
      } else {
        cuda::pad_and_cast<T1, T2>(x, padded_.as<T2>(), n * in_b, shape_.nt, length_, stream_);
        mark(1);
        forward<T2>(in_b, n);
      }
      mark(2);
    });
  });
  with_type(p[Phase::Gemv], [&](auto t3) {
    with_type(p[Phase::Fft], [&](auto t2) {
      with_type(p[Phase::Ifft], [&](auto t4) {
        multiply<decltype(t3), decltype(t2), decltype(t4)>(adjoint, n, frequency_major);
      });
    });
  });
  with_type(p[Phase::Ifft], [&](auto t4) {
    with_type(p[Phase::Unpad], [&](auto t5) {
      using T4 = decltype(t4);
      using T5 = decltype(t5);
      if (fused) {
        const DeviceMemory& spectra = frequency_major ? spec_in_ : spec_out_;
        cuda::unpadded_inverse_real_fft<T4, T5>(spectra.as<complex_t<T4>>(), y, n * out_b,
                                                shape_.nt, length_, twiddles<T4>(), stream_,
                                                from_gemm);
        mark(6);
      } else {
        inverse<T4>(out_b, n);
        mark(6);
        cuda::unpad_and_cast<T4, T5>(spec_out_.as<T4>(), 2 * nw_, y, n * out_b, shape_.nt, stream_);
      }
    });
  });
  mark(7);
  add_pass_times();
}

void CudaEngine::run(Op op, const double* x, double* y, index_t nrhs) {
  const index_t nt = shape_.nt, in_b = input_blocks(op, shape_), out_b = output_blocks(op, shape_);
  double* middle = middle_.as<double>();
  for (index_t r0 = 0; r0 < nrhs; r0 += group_) {
    const index_t n = std::min(group_, nrhs - r0);
    const double* xg = x + r0 * in_b * nt;
    double* yg = y + r0 * out_b * nt;
    switch (op) {
      case Op::F:
        pass(false, xg, yg, n);
        break;
      case Op::Fadj:
        pass(true, xg, yg, n);
        break;
      case Op::FadjF:
        pass(false, xg, middle, n);
        pass(true, middle, yg, n);
        break;
      case Op::FFadj:
        pass(true, xg, middle, n);
        pass(false, middle, yg, n);
        break;
    }
  }
}

void CudaEngine::apply(Op op, const double* x, double* y, index_t nrhs) {
  SHIFTOP_CUDA_CHECK(cudaSetDevice(options_.device));
  times_ = {};
  const index_t nt = shape_.nt, in_b = input_blocks(op, shape_), out_b = output_blocks(op, shape_);
  for (index_t r0 = 0; r0 < nrhs; r0 += group_) {
    const index_t n = std::min(group_, nrhs - r0);
    SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(x_.as<double>(), x + r0 * in_b * nt,
                                       static_cast<std::size_t>(n * in_b * nt) * sizeof(double),
                                       cudaMemcpyHostToDevice, stream_));
    run(op, x_.as<double>(), y_.as<double>(), n);
    SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(y + r0 * out_b * nt, y_.as<double>(),
                                       static_cast<std::size_t>(n * out_b * nt) * sizeof(double),
                                       cudaMemcpyDeviceToHost, stream_));
  }
  SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaEngine::apply_device(Op op, const double* x, double* y, index_t nrhs, void* stream) {
  SHIFTOP_CUDA_CHECK(cudaSetDevice(options_.device));
  times_ = {};
  const auto user = static_cast<cudaStream_t>(stream);
  SHIFTOP_CUDA_CHECK(cudaEventRecord(fork_, user));
  SHIFTOP_CUDA_CHECK(cudaStreamWaitEvent(stream_, fork_));
  if (options_.cuda_graphs && !options_.profile) {
    const GraphKey key{op, x, y, nrhs};
    if (!graph_key_ || !(*graph_key_ == key)) {
      forget_graph();
      cudaGraph_t graph = nullptr;
      SHIFTOP_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
      try {
        run(op, x, y, nrhs);
      } catch (...) {
        cudaStreamEndCapture(stream_, &graph);
        if (graph != nullptr) cudaGraphDestroy(graph);
        throw;
      }
      SHIFTOP_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
      const cudaError_t made = cudaGraphInstantiate(&graph_, graph, 0);
      cudaGraphDestroy(graph);
      SHIFTOP_CUDA_CHECK(made);
      graph_key_ = key;
    }
    SHIFTOP_CUDA_CHECK(cudaGraphLaunch(graph_, stream_));
  } else {
    run(op, x, y, nrhs);
  }
  SHIFTOP_CUDA_CHECK(cudaEventRecord(join_, stream_));
  SHIFTOP_CUDA_CHECK(cudaStreamWaitEvent(user, join_));
}

}  // namespace

std::unique_ptr<Engine> make_cuda_engine(std::span<const double> first_column,
                                         std::span<const double> first_row, const Shape& shape,
                                         const PlanOptions& options,
                                         const PrecisionConfig& precision) {
  return std::make_unique<CudaEngine>(first_column, first_row, shape, options, precision);
}

}  // namespace shiftop::btt
