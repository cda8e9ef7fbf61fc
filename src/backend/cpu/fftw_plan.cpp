#include "backend/cpu/fftw_plan.hpp"

#include <fftw3.h>

#include <mutex>
#include <type_traits>

#include "shiftop/core/error.hpp"

namespace shiftop::cpu {
namespace {

// FFTW's planner is not thread-safe and its thread count is global state: plan under one lock.
std::mutex& planner_mutex() {
  static std::mutex mutex;
  return mutex;
}

void init_fftw_threads_once() {
  static std::once_flag flag;
  std::call_once(flag, [] {
    require(fftw_init_threads() != 0 && fftwf_init_threads() != 0,
            "FFTW could not initialise its threads");
  });
}

/// The first argument for FP32, the second for FP64.
template <typename T, typename Single, typename Double>
constexpr auto pick(Single single, Double dbl) {
  if constexpr (std::is_same_v<T, float>)
    return single;
  else
    return dbl;
}

/// FFTW's single (fftwf_) or double (fftw_) precision interface for T.
template <typename T>
struct Fftw {
  static constexpr bool kSingle = std::is_same_v<T, float>;
  using plan = std::conditional_t<kSingle, fftwf_plan, fftw_plan>;
  using complex = std::conditional_t<kSingle, fftwf_complex, fftw_complex>;
  static constexpr auto plan_many_r2c = pick<T>(fftwf_plan_many_dft_r2c, fftw_plan_many_dft_r2c);
  static constexpr auto plan_many_c2r = pick<T>(fftwf_plan_many_dft_c2r, fftw_plan_many_dft_c2r);
  static constexpr auto execute_r2c = pick<T>(fftwf_execute_dft_r2c, fftw_execute_dft_r2c);
  static constexpr auto execute_c2r = pick<T>(fftwf_execute_dft_c2r, fftw_execute_dft_c2r);
  static constexpr auto destroy = pick<T>(fftwf_destroy_plan, fftw_destroy_plan);
  static constexpr auto plan_with_nthreads =
      pick<T>(fftwf_plan_with_nthreads, fftw_plan_with_nthreads);
};

}  // namespace

template <typename T>
struct RealFftBatch<T>::Impl {
  typename Fftw<T>::plan plan = nullptr;
  FftDirection direction = FftDirection::RealToComplex;
  ~Impl() {
    if (plan) Fftw<T>::destroy(plan);
  }
};

template <typename T>
RealFftBatch<T>::RealFftBatch(index_t length, index_t count, index_t complex_stride,
                              FftDirection direction, T* planning_buffer, int threads, bool measure)
    : impl_(std::make_unique<Impl>()) {
  using W = Fftw<T>;
  require(length > 0 && count > 0 && complex_stride >= length / 2 + 1,
          "invalid FFT batch: length {}, count {}, complex stride {}", length, count,
          complex_stride);
  init_fftw_threads_once();
  std::lock_guard lock(planner_mutex());
  W::plan_with_nthreads(threads);
  const int n = static_cast<int>(length);
  const int real_dist = static_cast<int>(2 * complex_stride);
  const int complex_dist = static_cast<int>(complex_stride);
  const unsigned flags = measure ? FFTW_MEASURE : FFTW_ESTIMATE;
  auto* complex_data = reinterpret_cast<typename W::complex*>(planning_buffer);
  impl_->direction = direction;
  impl_->plan = direction == FftDirection::RealToComplex
                    ? W::plan_many_r2c(1, &n, static_cast<int>(count), planning_buffer, nullptr, 1,
                                       real_dist, complex_data, nullptr, 1, complex_dist, flags)
                    : W::plan_many_c2r(1, &n, static_cast<int>(count), complex_data, nullptr, 1,
                                       complex_dist, planning_buffer, nullptr, 1, real_dist, flags);
  require(impl_->plan != nullptr, "FFTW could not plan {} real transforms of length {}", count,
          length);
}

template <typename T>
RealFftBatch<T>::~RealFftBatch() = default;
template <typename T>
RealFftBatch<T>::RealFftBatch(RealFftBatch&&) noexcept = default;
template <typename T>
RealFftBatch<T>& RealFftBatch<T>::operator=(RealFftBatch&&) noexcept = default;

template <typename T>
void RealFftBatch<T>::execute(T* buffer) const {
  using W = Fftw<T>;
  auto* complex_data = reinterpret_cast<typename W::complex*>(buffer);
  if (impl_->direction == FftDirection::RealToComplex)
    W::execute_r2c(impl_->plan, buffer, complex_data);
  else
    W::execute_c2r(impl_->plan, complex_data, buffer);
}

template class RealFftBatch<float>;
template class RealFftBatch<double>;

}  // namespace shiftop::cpu
