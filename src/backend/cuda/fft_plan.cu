#include <utility>

#include "backend/cuda/check.hpp"
#include "backend/cuda/fft_plan.cuh"

namespace shiftop::cuda {

template <typename T>
FftPlan<T>::FftPlan(FftKind kind, std::int64_t length, std::int64_t batch) : kind_(kind) {
  constexpr bool single = sizeof(T) == 4;
  long long n[1] = {length};
  long long complex_rows[1] = {length / 2 + 1};
  long long real_rows[1] = {kind == FftKind::Forward ? length : 2 * (length / 2 + 1)};
  const cufftType type = kind == FftKind::Forward ? (single ? CUFFT_R2C : CUFFT_D2Z)
                                                  : (single ? CUFFT_C2R : CUFFT_Z2D);
  SHIFTOP_CUDA_CHECK(cufftCreate(&handle_));
  valid_ = true;
  SHIFTOP_CUDA_CHECK(cufftSetAutoAllocation(handle_, 0));
  long long* in_rows = kind == FftKind::Forward ? real_rows : complex_rows;
  long long* out_rows = kind == FftKind::Forward ? complex_rows : real_rows;
  SHIFTOP_CUDA_CHECK(cufftMakePlanMany64(handle_, 1, n, in_rows, 1, in_rows[0], out_rows, 1,
                                         out_rows[0], type, batch, &work_bytes_));
}

template <typename T>
FftPlan<T>::FftPlan(FftPlan&& other) noexcept
    : handle_(other.handle_),
      valid_(std::exchange(other.valid_, false)),
      kind_(other.kind_),
      work_bytes_(other.work_bytes_) {}

template <typename T>
FftPlan<T>::~FftPlan() {
  if (valid_) cufftDestroy(handle_);
}

template <typename T>
void FftPlan<T>::set_work_area(void* area, cudaStream_t stream) {
  SHIFTOP_CUDA_CHECK(cufftSetWorkArea(handle_, area));
  SHIFTOP_CUDA_CHECK(cufftSetStream(handle_, stream));
}

template <typename T>
void FftPlan<T>::execute(void* in, void* out) const {
  if constexpr (sizeof(T) == 4) {
    if (kind_ == FftKind::Forward)
      SHIFTOP_CUDA_CHECK(
          cufftExecR2C(handle_, static_cast<cufftReal*>(in), static_cast<cufftComplex*>(out)));
    else
      SHIFTOP_CUDA_CHECK(
          cufftExecC2R(handle_, static_cast<cufftComplex*>(in), static_cast<cufftReal*>(out)));
  } else {
    if (kind_ == FftKind::Forward)
      SHIFTOP_CUDA_CHECK(cufftExecD2Z(handle_, static_cast<cufftDoubleReal*>(in),
                                      static_cast<cufftDoubleComplex*>(out)));
    else
      SHIFTOP_CUDA_CHECK(cufftExecZ2D(handle_, static_cast<cufftDoubleComplex*>(in),
                                      static_cast<cufftDoubleReal*>(out)));
  }
}

template class FftPlan<float>;
template class FftPlan<double>;

}  // namespace shiftop::cuda
