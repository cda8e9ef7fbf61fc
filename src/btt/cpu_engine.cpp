#include "btt/cpu_engine.hpp"

#include <omp.h>

#include <algorithm>

#include "backend/cpu/complex_gemm.hpp"
#include "backend/cpu/layout.hpp"
#include "btt/kernel_spectrum.hpp"
#include "core/timer.hpp"

namespace shiftop::btt {
namespace {

// Calls f with a value of the C++ type of `precision` (float or double), so that a template
// instantiation per phase precision is chosen at run time.
template <typename F>
void with_type(Precision precision, F&& f) {
  if (precision == Precision::Single)
    f(float{});
  else
    f(double{});
}

std::size_t padded(index_t n) {
  return round_up(static_cast<std::size_t>(n), 16);
}

}  // namespace

CpuEngine::CpuEngine(std::span<const double> first_column, std::span<const double> first_row,
                     const Shape& shape, const PlanOptions& options,
                     const PrecisionConfig& precision)
    : shape_(shape),
      threads_(options.threads > 0 ? options.threads : omp_get_max_threads()),
      measure_(options.fft_planning == FftPlanning::Measure),
      max_rhs_(options.max_rhs),
      stride_(static_cast<index_t>(round_up(static_cast<std::size_t>(shape.frequencies()), 8))),
      ld_m_(static_cast<index_t>(padded(shape.nm))),
      ld_d_(static_cast<index_t>(padded(shape.nd))) {
  const auto nfreq = static_cast<std::size_t>(shape.frequencies());
  const auto series = [&](index_t blocks) {
    return static_cast<std::size_t>(max_rhs_ * blocks * 2 * stride_);
  };
  spectrum64_ = AlignedBuffer<double>(nfreq * 2 * static_cast<std::size_t>(shape.nd * ld_m_));
  series_m_ = AlignedBuffer<double>(series(shape.nm));
  series_d_ = AlignedBuffer<double>(series(shape.nd));
  spec_m_ = AlignedBuffer<double>(nfreq * 2 * static_cast<std::size_t>(max_rhs_ * ld_m_));
  spec_d_ = AlignedBuffer<double>(nfreq * 2 * static_cast<std::size_t>(max_rhs_ * ld_d_));
  middle_ = AlignedBuffer<double>(
      static_cast<std::size_t>(max_rhs_ * std::max(shape.nd, shape.nm) * shape.nt));
  compute_kernel_spectrum(first_column, first_row, shape, {spectrum64_.data(), shape.nd, ld_m_},
                          threads_);
  set_precision(precision);
}

template <typename T>
void CpuEngine::make_transforms(std::optional<Transforms<T>>& transforms) {
  if (transforms) return;
  const index_t L = shape_.padded_length();
  using cpu::FftDirection;
  T* m = series_m_.as<T>();
  T* d = series_d_.as<T>();
  transforms.emplace(
      Transforms<T>{{L, shape_.nm, stride_, FftDirection::RealToComplex, m, threads_, measure_},
                    {L, shape_.nd, stride_, FftDirection::RealToComplex, d, threads_, measure_},
                    {L, shape_.nm, stride_, FftDirection::ComplexToReal, m, threads_, measure_},
                    {L, shape_.nd, stride_, FftDirection::ComplexToReal, d, threads_, measure_}});
}

template <typename T>
const CpuEngine::Transforms<T>& CpuEngine::transforms() const {
  if constexpr (std::is_same_v<T, float>)
    return *transforms32_;
  else
    return *transforms64_;
}

template <typename T>
cpu::PlanarSpectrum<const T> CpuEngine::spectrum() const {
  if constexpr (std::is_same_v<T, float>)
    return {spectrum32_.data(), shape_.nd, ld_m_};
  else
    return {spectrum64_.data(), shape_.nd, ld_m_};
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
    const auto n = static_cast<index_t>(spectrum64_.size());
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (index_t k = 0; k < n; ++k)
      spectrum32_[k] = static_cast<float>(spectrum64_[k]);
  } else if (precision[Phase::Gemv] == Precision::Double) {
    spectrum32_ = AlignedBuffer<float>();
  }
}

std::size_t CpuEngine::memory_bytes() const {
  return spectrum64_.bytes() + spectrum32_.bytes() + series_m_.bytes() + series_d_.bytes() +
         spec_m_.bytes() + spec_d_.bytes() + middle_.bytes();
}

void CpuEngine::apply(Op op, const double* x, double* y, index_t nrhs) {
  times_ = {};
  const index_t in_size = input_blocks(op, shape_) * shape_.nt;
  const index_t out_size = output_blocks(op, shape_) * shape_.nt;
  for (index_t r0 = 0; r0 < nrhs; r0 += max_rhs_) {
    const index_t count = std::min(max_rhs_, nrhs - r0);
    const double* xr = x + r0 * in_size;
    double* yr = y + r0 * out_size;
    switch (op) {
      case Op::F:
        apply_pass(false, xr, yr, count);
        break;
      case Op::Fadj:
        apply_pass(true, xr, yr, count);
        break;
      case Op::FadjF:  // the unpad/pad between the halves is part of F*F (Toeplitz, not circulant)
        apply_pass(false, xr, middle_.data(), count);
        apply_pass(true, middle_.data(), yr, count);
        break;
      case Op::FFadj:
        apply_pass(true, xr, middle_.data(), count);
        apply_pass(false, middle_.data(), yr, count);
        break;
    }
  }
}

void CpuEngine::apply_pass(bool adjoint, const double* x, double* y, index_t nrhs) {
  const index_t nt = shape_.nt, nfreq = shape_.frequencies();
  const index_t nin = adjoint ? shape_.nd : shape_.nm;
  const index_t nout = adjoint ? shape_.nm : shape_.nd;
  AlignedBuffer<double>& series_in = adjoint ? series_d_ : series_m_;
  AlignedBuffer<double>& series_out = adjoint ? series_m_ : series_d_;
  AlignedBuffer<double>& spec_in = adjoint ? spec_d_ : spec_m_;
  AlignedBuffer<double>& spec_out = adjoint ? spec_m_ : spec_d_;
  const index_t ld_in = adjoint ? ld_d_ : ld_m_;
  const index_t ld_out = adjoint ? ld_m_ : ld_d_;
  const PrecisionConfig& p = precision_;
  Stopwatch watch;

  // Phase 1: zero-pad (and round through the phase-1 precision) into the FFT's precision.
  with_type(p[Phase::Pad], [&](auto t1) {
    with_type(p[Phase::Fft], [&](auto t2) {
      using T1 = decltype(t1);
      using T2 = decltype(t2);
      cpu::pad_and_cast<T1, T2>(x, nrhs * nin, nt, stride_, series_in.as<T2>(), threads_);
    });
  });
  times_[ApplyPhase::Pad] += watch.lap();

  // Phase 2: batched real FFT of every padded block, one batch per right-hand side.
  with_type(p[Phase::Fft], [&](auto t2) {
    using T2 = decltype(t2);
    const Transforms<T2>& fft = transforms<T2>();
    const auto& forward = adjoint ? fft.forward_d : fft.forward_m;
    for (index_t r = 0; r < nrhs; ++r)
      forward.execute(series_in.as<T2>() + r * nin * 2 * stride_);
  });
  times_[ApplyPhase::Fft] += watch.lap();

  // SOTI -> TOSI so that each frequency's vector is contiguous, cast to the GEMV precision.
  with_type(p[Phase::Fft], [&](auto t2) {
    with_type(p[Phase::Gemv], [&](auto t3) {
      using T2 = decltype(t2);
      using T3 = decltype(t3);
      cpu::soti_to_tosi<T2, T3>(series_in.as<T2>(), nrhs, nin, nfreq, stride_,
                                cpu::PlanarSpectrum<T3>{spec_in.as<T3>(), max_rhs_, ld_in},
                                threads_);
    });
  });
  times_[ApplyPhase::Layout] += watch.lap();

  // Phase 3: per frequency, F^[w] (or its conjugate transpose) times all right-hand sides.
  with_type(p[Phase::Gemv], [&](auto t3) {
    using T3 = decltype(t3);
    const cpu::PlanarSpectrum<const T3> a = spectrum<T3>();
    const cpu::PlanarSpectrum<T3> in{spec_in.as<T3>(), max_rhs_, ld_in};
    const cpu::PlanarSpectrum<T3> out{spec_out.as<T3>(), max_rhs_, ld_out};
    const index_t cols = static_cast<index_t>(
        round_up(static_cast<std::size_t>(shape_.nm), static_cast<std::size_t>(cpu::kLanes<T3>)));
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (index_t w = 0; w < nfreq; ++w) {
      if (adjoint)
        cpu::complex_adjoint_product<T3>(a.at(w), shape_.nd, cols, in.at(w), out.at(w), nrhs);
      else
        cpu::complex_product<T3>(a.at(w), shape_.nd, cols, in.at(w), out.at(w), nrhs);
    }
  });
  times_[ApplyPhase::Gemv] += watch.lap();

  // TOSI -> SOTI, cast to the IFFT precision.
  with_type(p[Phase::Gemv], [&](auto t3) {
    with_type(p[Phase::Ifft], [&](auto t4) {
      using T3 = decltype(t3);
      using T4 = decltype(t4);
      cpu::tosi_to_soti<T3, T4>(cpu::PlanarSpectrum<const T3>{spec_out.as<T3>(), max_rhs_, ld_out},
                                nrhs, nout, nfreq, stride_, series_out.as<T4>(), threads_);
    });
  });
  times_[ApplyPhase::Layout] += watch.lap();

  // Phase 4: batched inverse real FFT (the 1/(2 Nt) is folded into F^).
  with_type(p[Phase::Ifft], [&](auto t4) {
    using T4 = decltype(t4);
    const Transforms<T4>& fft = transforms<T4>();
    const auto& inverse = adjoint ? fft.inverse_m : fft.inverse_d;
    for (index_t r = 0; r < nrhs; ++r)
      inverse.execute(series_out.as<T4>() + r * nout * 2 * stride_);
  });
  times_[ApplyPhase::Ifft] += watch.lap();

  // Phase 5: keep the first Nt samples of each block (rounded through the phase-5 precision).
  with_type(p[Phase::Ifft], [&](auto t4) {
    with_type(p[Phase::Unpad], [&](auto t5) {
      using T4 = decltype(t4);
      using T5 = decltype(t5);
      cpu::unpad_and_cast<T4, T5>(series_out.as<T4>(), nrhs * nout, nt, stride_, y, threads_);
    });
  });
  times_[ApplyPhase::Unpad] += watch.lap();
}

}  // namespace shiftop::btt
