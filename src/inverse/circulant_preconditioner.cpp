#include "shiftop/inverse/circulant_preconditioner.hpp"

#include <omp.h>

#include <algorithm>
#include <complex>
#include <vector>

// LAPACKE's complex arguments as std::complex<double> (the layout LAPACK itself uses).
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>

#include "backend/cpu/fftw_plan.hpp"
#include "backend/cpu/planar.hpp"
#include "btt/kernel_spectrum.hpp"
#include "core/aligned_buffer.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/threads.hpp"

namespace shiftop::inverse {
namespace {

using Complex = std::complex<double>;

// Impulses applied at once while reading kernels back: at most this many doubles of input.
constexpr index_t kImpulseDoubles = index_t{1} << 23;

// The plan's first block column ([Nd][Nm][Nt], lags 0..Nt-1) and, for a general plan, its first
// block row (lags 0..-(Nt-1)), read back through the plan itself: F[(i,t),(j,s)] = f_ij[t-s], so
// F applied to the impulse e_j δ_0 is column j of the kernels, f_ij[t] for all i and t, and F*
// applied to e_i δ_0 is row i, f_ij[-s] for all j and s.
void read_kernels(btt::Plan& plan, btt::Op op, std::vector<double>& kernels) {
  const Shape& s = plan.shape();
  const index_t in_blocks = btt::input_blocks(op, s), out_blocks = btt::output_blocks(op, s);
  kernels.assign(static_cast<std::size_t>(s.kernel_size()), 0.0);
  const index_t group = std::clamp<index_t>(kImpulseDoubles / (in_blocks * s.nt), 1, in_blocks);
  std::vector<double> impulses, responses;
  for (index_t first = 0; first < in_blocks; first += group) {
    const index_t count = std::min(group, in_blocks - first);
    impulses.assign(static_cast<std::size_t>(count * in_blocks * s.nt), 0.0);
    responses.resize(static_cast<std::size_t>(count * out_blocks * s.nt));
    for (index_t r = 0; r < count; ++r)
      impulses[(r * in_blocks + first + r) * s.nt] = 1;
    plan.apply(op, impulses, responses, count);
    for (index_t r = 0; r < count; ++r) {
      for (index_t b = 0; b < out_blocks; ++b) {
        // F: impulse in parameter block j = first+r, response in observation block i = b.
        const index_t i = op == btt::Op::F ? b : first + r;
        const index_t j = op == btt::Op::F ? first + r : b;
        std::copy_n(responses.begin() + (r * out_blocks + b) * s.nt, s.nt,
                    kernels.begin() + (i * s.nm + j) * s.nt);
      }
    }
  }
}

// The OpenMP team for a thread count checked as every entry point checks it (0: OpenMP's default).
int team(int thread_count) {
  check_threads(thread_count, "circulant preconditioner: threads");
  return thread_count > 0 ? thread_count : omp_get_max_threads();
}

}  // namespace

struct CirculantPreconditioner::Impl {
  Shape shape;
  index_t length = 0;  // L = 2*Nt
  index_t nfreq = 0;   // Nt+1
  index_t stride = 0;  // complex values per series in `series`
  int threads = 1;
  std::vector<Complex> spectrum;  // F^[w], [w][Nd][Nm], the unnormalised DFT of the kernels
  std::vector<Complex> factors;   // lower Cholesky factors of K_w, [w][Nd][Nd] row-major
  std::vector<double> prior;      // P_w[j], [w][Nm]
  AlignedBuffer<double> series;   // Nm padded series of 2*stride doubles
  cpu::RealFftBatch<double> forward_fft;
  cpu::RealFftBatch<double> inverse_fft;

  Impl(btt::Plan& plan, const GaussianNoise& noise, const Prior& prior_in, int thread_count)
      : shape(plan.shape()),
        length(btt::padded_length(shape)),
        nfreq(btt::frequencies(shape)),
        stride(
            static_cast<index_t>(round_up(static_cast<std::size_t>(btt::frequencies(shape)), 4))),
        threads(team(thread_count)),
        series(static_cast<std::size_t>(shape.nm * 2 * stride)),
        forward_fft(length, shape.nm, stride, cpu::FftDirection::RealToComplex, series.data(),
                    threads, false),
        inverse_fft(length, shape.nm, stride, cpu::FftDirection::ComplexToReal, series.data(),
                    threads, false) {
    require(
        noise.blocks() == shape.nd && noise.nt() == shape.nt && prior_in.blocks() == shape.nm &&
            prior_in.nt() == shape.nt,
        "circulant preconditioner: noise ({} x {}) and prior ({} x {}) do not match F's shape {}",
        noise.blocks(), noise.nt(), prior_in.blocks(), prior_in.nt(), shape.str());
    require(prior_in.has_circulant_spectrum(),
            "circulant preconditioner: the {} prior has no circulant spectrum; use the prior "
            "preconditioner",
            prior_in.name());
    prior = prior_in.circulant_spectrum(length);
    compute_spectrum(plan);
    factor(noise);
  }

  void compute_spectrum(btt::Plan& plan) {
    std::vector<double> column, row;
    read_kernels(plan, btt::Op::F, column);
    if (!plan.triangular()) read_kernels(plan, btt::Op::Fadj, row);
    // The plan's own setup (btt/kernel_spectrum.hpp) transforms them: F^[w] / L in planar rows.
    const auto ld = static_cast<index_t>(round_up(static_cast<std::size_t>(shape.nm),
                                                  static_cast<std::size_t>(cpu::kLanes<double>)));
    std::vector<double> planar(static_cast<std::size_t>(nfreq * 2 * shape.nd * ld));
    const cpu::PlanarSpectrum<double> view{planar.data(), shape.nd, ld};
    btt::compute_kernel_spectrum(column, row, shape, view, {series.data(), series.size()}, stride,
                                 threads);
    spectrum.resize(static_cast<std::size_t>(nfreq * shape.nd * shape.nm));
    const auto scale = static_cast<double>(length);
    for (index_t w = 0; w < nfreq; ++w) {
      const cpu::PlanarRows<double> rows = view.at(w);
      for (index_t i = 0; i < shape.nd; ++i)
        for (index_t j = 0; j < shape.nm; ++j)
          spectrum[(w * shape.nd + i) * shape.nm + j] =
              scale * Complex(rows.re[i * ld + j], rows.im[i * ld + j]);
    }
  }

  // K_w = Gamma_noise + F^[w] P_w F^[w]^H and its Cholesky factor, every frequency.
  void factor(const GaussianNoise& noise) {
    const index_t nd = shape.nd, nm = shape.nm;
    factors.assign(static_cast<std::size_t>(nfreq * nd * nd), Complex{});
    index_t failed = -1;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (index_t w = 0; w < nfreq; ++w) {
      const Complex* f = spectrum.data() + w * nd * nm;
      const double* p = prior.data() + w * nm;
      Complex* k = factors.data() + w * nd * nd;
      for (index_t i = 0; i < nd; ++i) {
        for (index_t l = 0; l <= i; ++l) {
          Complex sum = i == l ? Complex(noise.variances()[i]) : Complex{};
          for (index_t j = 0; j < nm; ++j)
            sum += f[i * nm + j] * p[j] * std::conj(f[l * nm + j]);
          k[i * nd + l] = sum;
        }
      }
      const auto n = static_cast<lapack_int>(nd);
      if (LAPACKE_zpotrf(LAPACK_ROW_MAJOR, 'L', n, k, n) != 0) {
#pragma omp critical
        failed = w;
      }
    }
    // K_w >= Gamma_noise > 0 in exact arithmetic: a failure means F^ holds non-finite values.
    require(failed < 0,
            "circulant preconditioner: K_w = Gamma_noise + F^ P F^H is not positive definite at "
            "frequency {} (non-finite values in F?)",
            failed);
  }

  void apply(std::span<const double> r, std::span<double> z) {
    const index_t nd = shape.nd, nm = shape.nm, nt = shape.nt;
    const auto n = static_cast<std::size_t>(nm * nt);
    require(r.size() == n && z.size() == n,
            "circulant preconditioner: r holds {} and z {} values, expected Nm*Nt = {}", r.size(),
            z.size(), n);
    double* buffer = series.data();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (index_t j = 0; j < nm; ++j) {
      double* c = buffer + j * 2 * stride;
      std::copy_n(r.begin() + j * nt, nt, c);
      std::fill(c + nt, c + 2 * stride, 0.0);
    }
    forward_fft.execute(buffer);
#pragma omp parallel num_threads(threads)
    {
      std::vector<Complex> s(static_cast<std::size_t>(nm)), u(static_cast<std::size_t>(nd));
#pragma omp for schedule(static)
      for (index_t w = 0; w < nfreq; ++w) {
        const Complex* f = spectrum.data() + w * nd * nm;
        const double* p = prior.data() + w * nm;
        auto value = [&](index_t j) {
          return reinterpret_cast<Complex*>(buffer + j * 2 * stride) + w;
        };
        for (index_t j = 0; j < nm; ++j)
          s[j] = p[j] * *value(j);
        for (index_t i = 0; i < nd; ++i) {
          Complex sum{};
          for (index_t j = 0; j < nm; ++j)
            sum += f[i * nm + j] * s[j];
          u[i] = sum;
        }
        const auto size = static_cast<lapack_int>(nd);
        LAPACKE_zpotrs(LAPACK_ROW_MAJOR, 'L', size, 1, factors.data() + w * nd * nd, size, u.data(),
                       1);
        for (index_t j = 0; j < nm; ++j) {
          Complex sum{};
          for (index_t i = 0; i < nd; ++i)
            sum += std::conj(f[i * nm + j]) * u[i];
          *value(j) = s[j] - p[j] * sum;
        }
      }
    }
    inverse_fft.execute(buffer);
    const double scale = 1.0 / static_cast<double>(length);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (index_t j = 0; j < nm; ++j) {
      const double* c = buffer + j * 2 * stride;
      for (index_t t = 0; t < nt; ++t)
        z[j * nt + t] = scale * c[t];
    }
  }
};

CirculantPreconditioner::CirculantPreconditioner(btt::Plan& forward, const GaussianNoise& noise,
                                                 const Prior& prior, int threads)
    : impl_(std::make_unique<Impl>(forward, noise, prior, threads)) {}
CirculantPreconditioner::~CirculantPreconditioner() = default;
CirculantPreconditioner::CirculantPreconditioner(CirculantPreconditioner&&) noexcept = default;
CirculantPreconditioner& CirculantPreconditioner::operator=(CirculantPreconditioner&&) noexcept =
    default;

void CirculantPreconditioner::apply(std::span<const double> r, std::span<double> z) {
  impl_->apply(r, z);
}

std::size_t CirculantPreconditioner::memory_bytes() const {
  return (impl_->spectrum.size() + impl_->factors.size()) * sizeof(Complex) +
         impl_->prior.size() * sizeof(double) + impl_->series.bytes();
}

}  // namespace shiftop::inverse
