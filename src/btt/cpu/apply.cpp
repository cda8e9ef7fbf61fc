// The CPU engine's apply (btt/cpu/engine.hpp): groups of right-hand sides, the passes of an
// operation, and the five phases of a pass on OpenMP threads.
#include <omp.h>

#include <algorithm>

#include "backend/cpu/complex_gemm.hpp"
#include "backend/cpu/layout.hpp"
#include "btt/cpu/engine.hpp"
#include "btt/passes.hpp"
#include "shiftop/core/timer.hpp"

namespace shiftop::btt {

// Laps of one thread's stopwatch charged to phases.
class CpuEngine::PhaseClock {
 public:
  explicit PhaseClock(PhaseTimes& times) : times_(times) {}
  void charge(ApplyPhase phase) { times_[phase] += watch_.lap(); }

 private:
  PhaseTimes& times_;
  Stopwatch watch_;
};

void CpuEngine::apply(Op op, const double* x, double* y, index_t nrhs) {
  times_ = {};
  const index_t in_size = input_blocks(op, shape_) * shape_.nt;
  const index_t out_size = output_blocks(op, shape_) * shape_.nt;
  for_each_group(nrhs, group_size_, [&](index_t first, index_t n) {
    run_passes(op, x + first * in_size, middle_.data(), y + first * out_size,
               [&](bool adjoint, const double* in, double* out) { pass(adjoint, in, out, n); });
  });
}

template <typename T, typename Body>
void CpuEngine::for_each_chunk(index_t nrhs, index_t blocks, Body&& body) {
  const index_t chunks = (blocks + chunk_ - 1) / chunk_;
  std::fill(thread_times_.begin(), thread_times_.end(), PhaseTimes{});
#pragma omp parallel num_threads(threads_)
  {
    const auto thread = static_cast<std::size_t>(omp_get_thread_num());
    T* scratch = scratch_[thread].as<T>();
    PhaseClock clock(thread_times_[thread]);
#pragma omp for schedule(static)
    for (index_t task = 0; task < nrhs * chunks; ++task) {
      const index_t r = task / chunks, b0 = (task % chunks) * chunk_;
      body(scratch, clock, r, b0, std::min(chunk_, blocks - b0));
    }
  }
  // Per-phase seconds summed over threads, charged as their mean over threads.
  for (const PhaseTimes& t : thread_times_)
    for (std::size_t p = 0; p < t.seconds.size(); ++p)
      times_.seconds[p] += t.seconds[p] / static_cast<double>(thread_times_.size());
}

template <typename T1, typename T2, typename T3>
void CpuEngine::transform_input(const double* x, index_t nrhs, index_t blocks,
                                cpu::PlanarSpectrum<T3> spectra) {
  const index_t nt = shape_.nt, nfreq = frequencies(shape_);
  const cpu::RealFftBatch<T2>& fft = transforms<T2>().forward;
  for_each_chunk<T2>(
      nrhs, blocks, [&](T2* scratch, PhaseClock& clock, index_t r, index_t b0, index_t count) {
        cpu::pad_and_cast<T1, T2>(x + (r * blocks + b0) * nt, count, nt, stride_, scratch);
        clock.charge(ApplyPhase::Pad);
        for (index_t k = 0; k < count; ++k)
          fft.execute(scratch + k * 2 * stride_);
        clock.charge(ApplyPhase::Fft);
        cpu::soti_to_tosi<T2, T3>(scratch, count, nfreq, stride_, spectra, r, b0);
        if (b0 + count == blocks) cpu::zero_padding_columns(spectra, r, blocks, nfreq);
        clock.charge(ApplyPhase::Layout);
      });
}

template <typename T3, typename T4, typename T5>
void CpuEngine::transform_output(cpu::PlanarSpectrum<const T3> spectra, index_t nrhs,
                                 index_t blocks, double* y) {
  const index_t nt = shape_.nt, nfreq = frequencies(shape_);
  const cpu::RealFftBatch<T4>& ifft = transforms<T4>().inverse;
  for_each_chunk<T4>(
      nrhs, blocks, [&](T4* scratch, PhaseClock& clock, index_t r, index_t b0, index_t count) {
        cpu::tosi_to_soti<T3, T4>(spectra, r, b0, count, nfreq, stride_, scratch);
        clock.charge(ApplyPhase::Layout);
        for (index_t k = 0; k < count; ++k)
          ifft.execute(scratch + k * 2 * stride_);
        clock.charge(ApplyPhase::Ifft);
        cpu::unpad_and_cast<T4, T5>(scratch, count, nt, stride_, y + (r * blocks + b0) * nt);
        clock.charge(ApplyPhase::Unpad);
      });
}

void CpuEngine::pass(bool adjoint, const double* x, double* y, index_t nrhs) {
  const index_t nfreq = frequencies(shape_);
  const index_t nin = adjoint ? shape_.nd : shape_.nm;
  const index_t nout = adjoint ? shape_.nm : shape_.nd;
  AlignedBuffer<double>& spec_in = adjoint ? spec_d_ : spec_m_;
  AlignedBuffer<double>& spec_out = adjoint ? spec_m_ : spec_d_;
  const index_t ld_in = adjoint ? ld_d_ : ld_m_;
  const index_t ld_out = adjoint ? ld_m_ : ld_d_;
  const PrecisionConfig& p = precision_;

  with_type(p[Phase::Pad], [&](auto t1) {
    with_type(p[Phase::Fft], [&](auto t2) {
      with_type(p[Phase::Gemv], [&](auto t3) {
        using T3 = decltype(t3);
        transform_input<decltype(t1), decltype(t2), T3>(
            x, nrhs, nin, cpu::PlanarSpectrum<T3>{spec_in.as<T3>(), group_size_, ld_in});
      });
    });
  });

  // Phase 3: per frequency, F^[w] (or its conjugate transpose) times all right-hand sides.
  Stopwatch watch;
  with_type(p[Phase::Gemv], [&](auto t3) {
    using T3 = decltype(t3);
    const cpu::PlanarSpectrum<const T3> a = spectrum<T3>();
    const cpu::PlanarSpectrum<T3> in{spec_in.as<T3>(), group_size_, ld_in};
    const cpu::PlanarSpectrum<T3> out{spec_out.as<T3>(), group_size_, ld_out};
    const auto cols = static_cast<index_t>(
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

  with_type(p[Phase::Gemv], [&](auto t3) {
    with_type(p[Phase::Ifft], [&](auto t4) {
      with_type(p[Phase::Unpad], [&](auto t5) {
        using T3 = decltype(t3);
        transform_output<T3, decltype(t4), decltype(t5)>(
            cpu::PlanarSpectrum<const T3>{spec_out.as<T3>(), group_size_, ld_out}, nrhs, nout, y);
      });
    });
  });
}

}  // namespace shiftop::btt
