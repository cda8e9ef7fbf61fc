#include "shiftop/inverse/regpath.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <optional>
#include <vector>

// LAPACKE's complex arguments as std::complex<double> (the layout LAPACK itself uses).
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>

#include "backend/cpu/fftw_plan.hpp"
#include "btt/frequency_blocks.hpp"
#include "core/aligned_buffer.hpp"
#include "require_finite.hpp"
#include "shiftop/btt/op.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/threads.hpp"
#include "shiftop/gsvd/gsvd.hpp"

namespace shiftop::inverse {
namespace {

using Complex = std::complex<double>;

// The filter quantities of one generalized pair at weight alpha, with D = sf^2 + alpha^2 sg^2:
// keep = alpha^2 sg^2 / D (1 - the filter factor), semi = sf sg / D and solve = sf / D. Formed
// through s = hypot(sf, alpha sg), so that alpha^2 may overflow or underflow (alpha = 1e200 or
// 1e-200) without inf / inf or 0 / 0; a column left out (sf = 0) has keep 1 and the rest 0.
// (alpha sg is finite: sg <= 1.)
struct Filter {
  double keep = 1.0, semi = 0.0, solve = 0.0;
};
Filter filter(double sf, double sg, double alpha) {
  if (sf == 0.0) return {};
  const double q = alpha * sg;
  const double s = std::hypot(sf, q);
  const double cf = sf / s, cq = q / s;
  return {cq * cq, sg * cf / s, cf / s};
}

bool has_time_block(const Regulariser& r) {
  return r.time_derivative > 0 && r.time_weight != 0.0;
}
bool has_space_block(const Regulariser& r) {
  return !r.laplacian.empty() && r.space_weight != 0.0;
}

void validate_regulariser(const Regulariser& r, index_t nm) {
  require(std::isfinite(r.mass) && r.mass > 0.0,
          "regpath: invalid mass {}: expected a positive number (only the identity block keeps "
          "R^[0] of full column rank: the time difference vanishes at frequency 0 and a graph "
          "Laplacian is singular)",
          r.mass);
  require(r.time_derivative >= 0 && r.time_derivative <= 2,
          "regpath: invalid time derivative order {}: expected 0, 1 or 2", r.time_derivative);
  require(std::isfinite(r.time_weight) && r.time_weight >= 0.0,
          "regpath: invalid time weight {}: expected a finite number >= 0", r.time_weight);
  require(std::isfinite(r.space_weight) && r.space_weight >= 0.0,
          "regpath: invalid space weight {}: expected a finite number >= 0", r.space_weight);
  if (!r.laplacian.empty()) require_laplacian(r.laplacian, nm, "regpath: the Laplacian");
}

void validate_kernels(std::span<const double> first_column, std::span<const double> first_row,
                      const Shape& shape) {
  shape.validate();
  require(static_cast<index_t>(first_column.size()) == shape.kernel_size(),
          "regpath: the first block column holds {} values, expected Nd*Nm*Nt = {} for {}",
          first_column.size(), shape.kernel_size(), shape.str());
  require(first_row.empty() || static_cast<index_t>(first_row.size()) == shape.kernel_size(),
          "regpath: the first block row holds {} values, expected 0 (block lower-triangular) or "
          "Nd*Nm*Nt = {} for {}",
          first_row.size(), shape.kernel_size(), shape.str());
  require_finite(first_column, "regpath: the first block column's");
  require_finite(first_row, "regpath: the first block row's");
  for (index_t k = 0; !first_row.empty() && k < shape.nd * shape.nm; ++k) {
    const auto at = static_cast<std::size_t>(k * shape.nt);
    require(first_column[at] == first_row[at],
            "regpath: the first block row and column disagree at lag 0 in kernel (i={}, j={}): "
            "{} vs {}; both hold the diagonal block F_0",
            k / shape.nm, k % shape.nm, first_row[at], first_column[at]);
  }
}

}  // namespace

index_t Regulariser::rows(index_t nm) const {
  return nm * (1 + (has_time_block(*this) ? 1 : 0) + (has_space_block(*this) ? 1 : 0));
}

std::vector<Complex> Regulariser::symbol(index_t nm, index_t w, index_t period) const {
  const index_t p = rows(nm);
  std::vector<Complex> r(static_cast<std::size_t>(p * nm), Complex{});
  auto at = [&](index_t row, index_t col) -> Complex& {
    return r[static_cast<std::size_t>(row + col * p)];
  };
  index_t first = 0;
  for (index_t j = 0; j < nm; ++j)
    at(j, j) = mass;
  first += nm;
  if (has_time_block(*this)) {
    // delta(w) = 1 - exp(-2 pi i w / L): the symbol of (D m)_t = m_t - m_{t-1} (circulant).
    const double angle =
        -2.0 * std::numbers::pi * static_cast<double>(w) / static_cast<double>(period);
    const Complex delta = Complex(1.0, 0.0) - std::polar(1.0, angle);
    Complex value = time_weight;
    for (int k = 0; k < time_derivative; ++k)
      value *= delta;
    for (index_t j = 0; j < nm; ++j)
      at(first + j, j) = value;
    first += nm;
  }
  if (has_space_block(*this)) {
    for (index_t i = 0; i < nm; ++i)
      for (index_t j = 0; j < nm; ++j)
        at(first + i, j) = space_weight * laplacian[static_cast<std::size_t>(i * nm + j)];
  }
  return r;
}

struct RegularizationPath::Impl {
  Shape shape;
  index_t length = 0;  // L = 2*Nt
  index_t nfreq = 0;   // Nt+1
  index_t stride = 0;  // complex values per FFT series
  int threads = 1;
  std::vector<double> sigma_f, sigma_g;   // [w][Nm], as the GSVD returned them
  std::vector<double> kept_f;             // sigma_f, 0 where dropped (below), [w][Nm]
  std::vector<Complex> coefficients;      // c = U^H d^_w, [w][Nm]; 0 where sigma_f is dropped
  std::vector<double> outside;            // ||d^_w - U U^H d^_w||^2, [w]
  index_t rank = 0;                       // r = min(Nd, Nm): columns that can be kept
  std::vector<Complex> x_inverse;         // X^{-1}'s first r columns, [w] Nm x r column-major
  cpu::RealFftBatch<double> inverse_fft;  // Nm series, for solve()

  static cpu::RealFftBatch<double> make_inverse(const Shape& s, index_t stride, int threads) {
    AlignedBuffer<double> planning(static_cast<std::size_t>(s.nm * 2 * stride));
    return {btt::padded_length(s), s.nm,    stride, cpu::FftDirection::ComplexToReal,
            planning.data(),       threads, false};
  }

  Impl(const Shape& s, index_t stride_in, int threads_in)
      : shape(s),
        length(btt::padded_length(s)),
        nfreq(btt::frequencies(s)),
        stride(stride_in),
        threads(threads_in),
        inverse_fft(make_inverse(s, stride_in, threads_in)) {}

  // d^_w for w = 0..Nt (the data padded with Nt zero steps), [w][Nd].
  std::vector<Complex> data_spectrum(std::span<const double> data) const {
    const index_t nd = shape.nd, nt = shape.nt;
    AlignedBuffer<double> series(static_cast<std::size_t>(nd * 2 * stride));
    const cpu::RealFftBatch<double> forward(length, nd, stride, cpu::FftDirection::RealToComplex,
                                            series.data(), threads, false);
    for (index_t i = 0; i < nd; ++i) {
      double* c = series.data() + i * 2 * stride;
      std::copy_n(data.begin() + i * nt, nt, c);
      std::fill(c + nt, c + 2 * stride, 0.0);
    }
    forward.execute(series.data());
    std::vector<Complex> out(static_cast<std::size_t>(nfreq * nd));
    for (index_t w = 0; w < nfreq; ++w)
      for (index_t i = 0; i < nd; ++i)
        out[static_cast<std::size_t>(w * nd + i)] =
            reinterpret_cast<const Complex*>(series.data() + i * 2 * stride)[w];
    return out;
  }

  double weight(index_t w) const { return w == 0 || w == shape.nt ? 1.0 : 2.0; }
};

RegularizationPath::RegularizationPath(std::span<const double> first_column,
                                       std::span<const double> first_row, const Shape& shape,
                                       const Regulariser& regulariser, std::span<const double> data,
                                       const RegPathOptions& options) {
  validate_kernels(first_column, first_row, shape);
  validate_regulariser(regulariser, shape.nm);
  require(static_cast<index_t>(data.size()) == shape.nd * shape.nt,
          "regpath: the data hold {} values, expected Nd*Nt = {} for {}", data.size(),
          shape.nd * shape.nt, shape.str());
  require_finite(data, "regpath: the data's");
  check_threads(options.threads, "regpath: threads");
  const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
  const index_t nd = shape.nd, nm = shape.nm;
  const index_t nfreq = btt::frequencies(shape), period = btt::padded_length(shape);
  impl_ = std::make_unique<Impl>(
      shape, static_cast<index_t>(round_up(static_cast<std::size_t>(nfreq), 4)), threads);
  Impl& im = *impl_;

  // The pairs (F^[w], R^[w]), w = 0..Nt (F^ of all frequencies at once, R^ per batch), and their
  // GSVDs.
  const std::vector<Complex> f =
      btt::frequency_blocks(first_column, first_row, shape, btt::BlockLayout::ColumnMajor,
                            static_cast<double>(period), threads);
  const index_t p = regulariser.rows(nm);
  svd::GsvdOptions gsvd = options.gsvd;
  gsvd.compute_vectors = true;
  gsvd.threads = threads;
  gsvd.backend = options.backend;
  gsvd.gpu = options.gpu;
  require(options.frequencies_per_batch >= 0,
          "regpath: frequencies_per_batch = {}: expected 0 (automatic) or a positive count",
          options.frequencies_per_batch);
  // The GSVDs in batches of frequencies, of which only what the path needs is kept: sigma, the
  // coefficients U^H d^_w, the residuals outside U's kept columns and X^{-1}'s first r columns
  // (only those meet a nonzero filter factor, as columns i >= r have sigma_f = 0). X itself, U and
  // V of all Nt + 1 pairs would be 16 (Nt + 1) Nm (Nm + Nd + p) bytes (issue 31: 64 GB for X
  // alone at Nm = 2000, Nt = 1000).
  const index_t rank = std::min(nd, nm);
  const std::size_t pair_bytes = 32 * static_cast<std::size_t>((nd + p + nm) * nm);
  const index_t batch = options.frequencies_per_batch > 0
                            ? std::min(options.frequencies_per_batch, nfreq)
                            : std::clamp(static_cast<index_t>((std::size_t{1} << 30) / pair_bytes),
                                         index_t{1}, nfreq);
  im.rank = rank;
  im.sigma_f.assign(static_cast<std::size_t>(nfreq * nm), 0.0);
  im.sigma_g.assign(static_cast<std::size_t>(nfreq * nm), 0.0);
  im.coefficients.assign(static_cast<std::size_t>(nfreq * nm), Complex{});
  im.x_inverse.assign(static_cast<std::size_t>(nfreq * nm * rank), Complex{});
  // ||d^_w - sum_{i < j} u_i c_i||^2 for j = 0..r: which prefix of U's columns is kept is known
  // only once every frequency's sigma_f is (the threshold below is relative to the largest).
  std::vector<double> outside_prefix(static_cast<std::size_t>(nfreq * (rank + 1)));
  const std::vector<Complex> dhat = im.data_spectrum(data);
  std::vector<Complex> g;
  for (index_t first = 0; first < nfreq; first += batch) {
    const index_t count = std::min(batch, nfreq - first);
    g.resize(static_cast<std::size_t>(count * p * nm));
    for (index_t w = first; w < first + count; ++w) {
      const std::vector<Complex> r = regulariser.symbol(nm, w, period);
      std::copy(r.begin(), r.end(), g.begin() + (w - first) * p * nm);
    }
    svd::BatchedGsvdResult<Complex> result = svd::gsvd_hz_batched(
        f.data() + first * nd * nm, nd, nd * nm, g.data(), p, p * nm, count, nd, p, nm, gsvd);
    for (index_t k = 0; k < count; ++k) {
      const svd::GsvdStats& stats = result.stats[static_cast<std::size_t>(k)];
      require(stats.converged,
              "regpath: the GSVD of frequency {} did not converge in {} sweeps (raise the GSVD's "
              "max_sweeps)",
              first + k, stats.sweeps);
    }
    std::copy(result.sigma_f.begin(), result.sigma_f.end(), im.sigma_f.begin() + first * nm);
    std::copy(result.sigma_g.begin(), result.sigma_g.end(), im.sigma_g.begin() + first * nm);
    index_t singular = -1;
#pragma omp parallel num_threads(threads)
    {
      std::vector<Complex> residual(static_cast<std::size_t>(nd));
      std::vector<lapack_int> pivots(static_cast<std::size_t>(nm));
#pragma omp for schedule(static)
      for (index_t k = 0; k < count; ++k) {
        const index_t w = first + k;
        const Complex* u = result.u.data() + k * nd * nm;
        const Complex* d = dhat.data() + w * nd;
        Complex* c = im.coefficients.data() + w * nm;
        double* out = outside_prefix.data() + w * (rank + 1);
        std::copy_n(d, nd, residual.begin());
        const auto squared_norm = [&] {
          double sum = 0.0;
          for (const Complex& v : residual)
            sum += std::norm(v);
          return sum;
        };
        out[0] = squared_norm();
        for (index_t i = 0; i < rank; ++i) {
          Complex sum{};
          for (index_t j = 0; j < nd; ++j)
            sum += std::conj(u[j + i * nd]) * d[j];
          c[i] = sum;
          for (index_t j = 0; j < nd; ++j)
            residual[static_cast<std::size_t>(j)] -= u[j + i * nd] * sum;
          out[i + 1] = squared_norm();
        }
        // X^{-1}'s first r columns: X Z = [I_r; 0] by X's LU (then dropped).
        Complex* x = result.x.data() + k * nm * nm;
        Complex* z = im.x_inverse.data() + w * nm * rank;
        for (index_t i = 0; i < rank; ++i)
          z[i + i * nm] = 1.0;
        const auto n = static_cast<lapack_int>(nm);
        if (LAPACKE_zgetrf(LAPACK_COL_MAJOR, n, n, x, n, pivots.data()) != 0 ||
            LAPACKE_zgetrs(LAPACK_COL_MAJOR, 'N', n, static_cast<lapack_int>(rank), x, n,
                           pivots.data(), z, n) != 0) {
#pragma omp critical
          singular = w;
        }
      }
    }
    require(singular < 0,
            "regpath: the GSVD's X of frequency {} is singular (it should not be: R^[w] has full "
            "column rank)",
            singular);
  }

  // Columns whose sigma_f is zero to working precision are left out: U's column there is zero
  // or rounding noise, and their filter factor sigma_f^2 / (sigma_f^2 + alpha^2 sigma_g^2) is
  // zero to rounding for any alpha that is not itself at rounding level. F^[w] has rank at most
  // min(Nd, Nm), and the values come ordered by sigma_f / sigma_g, that is by sigma_f (as
  // sigma_f^2 + sigma_g^2 = 1): beyond the first min(Nd, Nm) only such columns remain, and the
  // kept columns are the prefix before the first value at or below the threshold.
  const double sf_max = *std::ranges::max_element(im.sigma_f);
  const double drop =
      4.0 * static_cast<double>(std::max(nd, nm)) * std::numeric_limits<double>::epsilon() * sf_max;
  im.kept_f.assign(static_cast<std::size_t>(nfreq * nm), 0.0);
  im.outside.assign(static_cast<std::size_t>(nfreq), 0.0);
  for (index_t w = 0; w < nfreq; ++w) {
    const double* sf = im.sigma_f.data() + w * nm;
    index_t kept = 0;
    while (kept < rank && sf[kept] > drop)
      ++kept;
    std::copy_n(sf, kept, im.kept_f.begin() + w * nm);
    std::fill(im.coefficients.begin() + w * nm + kept, im.coefficients.begin() + (w + 1) * nm,
              Complex{});
    im.outside[static_cast<std::size_t>(w)] =
        outside_prefix[static_cast<std::size_t>(w * (rank + 1) + kept)];
  }
}

RegularizationPath::~RegularizationPath() = default;
RegularizationPath::RegularizationPath(RegularizationPath&&) noexcept = default;
RegularizationPath& RegularizationPath::operator=(RegularizationPath&&) noexcept = default;

const Shape& RegularizationPath::shape() const {
  return impl_->shape;
}

std::vector<PathPoint> RegularizationPath::evaluate(std::span<const double> alphas) const {
  const Impl& im = *impl_;
  for (std::size_t k = 0; k < alphas.size(); ++k)
    require(std::isfinite(alphas[k]) && alphas[k] > 0.0,
            "regpath: invalid alpha {} (entry {}): expected a positive finite number", alphas[k],
            k);
  const index_t nm = im.shape.nm;
  std::vector<PathPoint> path(alphas.size());
  const auto count = static_cast<index_t>(alphas.size());
#pragma omp parallel for num_threads(im.threads) schedule(static)
  for (index_t k = 0; k < count; ++k) {
    const double alpha = alphas[static_cast<std::size_t>(k)];
    // Sums over w = 0..Nt, the frequencies 1..Nt-1 twice (their conjugates w' = L - w).
    // trace(I - A(alpha)) = sum_w (Nd - sum_i f_i), f_i = sigma_f^2 / (sigma_f^2 + alpha^2
    // sigma_g^2), summed as the Nd - (kept columns) zero filter factors plus the kept columns'
    // 1 - f_i: without the cancellation of L*Nd - trace(A) when nearly every f_i is 1.
    double residual2 = 0.0, seminorm2 = 0.0, free = 0.0;
    for (index_t w = 0; w < im.nfreq; ++w) {
      const double* sf = im.kept_f.data() + w * nm;
      const double* sg = im.sigma_g.data() + w * nm;
      const Complex* c = im.coefficients.data() + w * nm;
      double res = im.outside[static_cast<std::size_t>(w)], semi = 0.0;
      index_t zero = im.shape.nd;  // the zero filter factors (Nd - kept columns)
      double unfit = 0.0;          // the kept columns' 1 - f_i
      for (index_t i = 0; i < nm; ++i) {
        const double c2 = std::norm(c[i]);
        const Filter q = filter(sf[i], sg[i], alpha);
        res += q.keep * q.keep * c2;
        semi += q.semi * q.semi * c2;
        if (sf[i] > 0.0) {
          --zero;
          unfit += q.keep;
        }
      }
      const double weight = im.weight(w);
      residual2 += weight * res;
      seminorm2 += weight * semi;
      free += weight * (static_cast<double>(zero) + unfit);
    }
    const double scale = 1.0 / static_cast<double>(im.length);
    PathPoint& point = path[static_cast<std::size_t>(k)];
    point.alpha = alpha;
    point.residual_norm = std::sqrt(scale * residual2);
    point.seminorm = std::sqrt(scale * seminorm2);
    point.gcv = scale * residual2 / (free * free);
  }
  return path;
}

std::vector<double> RegularizationPath::solve(double alpha) const {
  require(std::isfinite(alpha) && alpha > 0.0,
          "regpath: invalid alpha {}: expected a positive finite number", alpha);
  const Impl& im = *impl_;
  const index_t nm = im.shape.nm, nt = im.shape.nt;
  AlignedBuffer<double> series(static_cast<std::size_t>(nm * 2 * im.stride));
  double* buffer = series.data();
#pragma omp parallel num_threads(im.threads)
  {
    std::vector<Complex> y(static_cast<std::size_t>(nm));
#pragma omp for schedule(static)
    for (index_t w = 0; w < im.nfreq; ++w) {
      const double* sf = im.kept_f.data() + w * nm;
      const double* sg = im.sigma_g.data() + w * nm;
      const Complex* c = im.coefficients.data() + w * nm;
      // m_w = X^{-1} diag(sigma_f / (sigma_f^2 + alpha^2 sigma_g^2)) U^H d_w, over the first r
      // columns of X^{-1} (the others meet sigma_f = 0).
      const Complex* z = im.x_inverse.data() + w * nm * im.rank;
      std::fill(y.begin(), y.end(), Complex{});
      for (index_t i = 0; i < im.rank; ++i) {
        const Complex factor = filter(sf[i], sg[i], alpha).solve * c[i];
        if (factor == Complex{}) continue;
        for (index_t j = 0; j < nm; ++j)
          y[static_cast<std::size_t>(j)] += z[j + i * nm] * factor;
      }
      for (index_t j = 0; j < nm; ++j)
        reinterpret_cast<Complex*>(buffer + j * 2 * im.stride)[w] = y[static_cast<std::size_t>(j)];
    }
  }
  im.inverse_fft.execute(buffer);
  const double scale = 1.0 / static_cast<double>(im.length);
  std::vector<double> m(static_cast<std::size_t>(nm * nt));
  for (index_t j = 0; j < nm; ++j)
    for (index_t t = 0; t < nt; ++t)
      m[static_cast<std::size_t>(j * nt + t)] = scale * buffer[j * 2 * im.stride + t];
  return m;
}

std::size_t RegularizationPath::bytes() const {
  const Impl& im = *impl_;
  return sizeof(double) *
             (im.sigma_f.size() + im.sigma_g.size() + im.kept_f.size() + im.outside.size()) +
         sizeof(Complex) * (im.coefficients.size() + im.x_inverse.size());
}

std::vector<double> RegularizationPath::generalized_values(index_t w) const {
  const Impl& im = *impl_;
  require(w >= 0 && w < im.nfreq, "regpath: invalid frequency {}: expected 0..Nt = 0..{}", w,
          im.nfreq - 1);
  std::vector<double> values(static_cast<std::size_t>(im.shape.nm));
  for (index_t i = 0; i < im.shape.nm; ++i)
    values[static_cast<std::size_t>(i)] =
        im.sigma_f[static_cast<std::size_t>(w * im.shape.nm + i)] /
        im.sigma_g[static_cast<std::size_t>(w * im.shape.nm + i)];
  return values;
}

std::vector<double> RegularizationPath::default_alphas(index_t count) const {
  require(count >= 2, "regpath: default_alphas: count = {}: expected at least 2", count);
  const Impl& im = *impl_;
  double top = 0, bottom = std::numeric_limits<double>::infinity();
  for (index_t w = 0; w < im.nfreq; ++w)
    for (const double gamma : generalized_values(w))
      if (gamma > 0) {
        top = std::max(top, gamma);
        bottom = std::min(bottom, gamma);
      }
  if (top == 0) return {1.0};
  bottom = std::max(bottom, top * 1e-12);
  if (bottom == top) {
    bottom = top / 10;
    top *= 10;
  }
  std::vector<double> alphas(static_cast<std::size_t>(count));
  const double decades = std::log10(top / bottom);
  for (index_t k = 0; k < count; ++k)
    alphas[static_cast<std::size_t>(k)] =
        bottom * std::pow(10.0, decades * static_cast<double>(k) / static_cast<double>(count - 1));
  alphas.front() = bottom;  // the ends exactly: the grid spans the values, no rounding outside
  alphas.back() = top;
  return alphas;
}

std::size_t gcv_choice(std::span<const PathPoint> path) {
  // NaN values (a GCV of 0 / 0 where trace(I - A) underflows) are skipped: NaN < x is false, so
  // a NaN first point would otherwise never be replaced.
  require(!path.empty(), "gcv_choice: expected a path of at least one point, got none");
  std::size_t best = 0;
  for (std::size_t k = 1; k < path.size(); ++k)
    if (path[k].gcv < path[best].gcv || (std::isnan(path[best].gcv) && !std::isnan(path[k].gcv)))
      best = k;
  return best;
}

std::optional<std::size_t> lcurve_corner(std::span<const PathPoint> path) {
  const std::size_t n = path.size();
  if (n < 5) return std::nullopt;
  // The curve (x, y) = (log ||r||, log ||R m||) parametrised by t = log alpha; curvature
  // kappa = (x' y'' - y' x'') / (x'^2 + y'^2)^{3/2}, derivatives by centred differences on the
  // (possibly non-uniform) grid of t; -inf where it is not finite (a zero norm).
  auto x = [&](std::size_t k) { return std::log(path[k].residual_norm); };
  auto y = [&](std::size_t k) { return std::log(path[k].seminorm); };
  auto t = [&](std::size_t k) { return std::log(path[k].alpha); };
  const double none = -std::numeric_limits<double>::infinity();
  std::vector<double> kappa(n, none);
  for (std::size_t k = 1; k + 1 < n; ++k) {
    const double h0 = t(k) - t(k - 1), h1 = t(k + 1) - t(k);
    auto first = [&](auto v) {
      return (v(k + 1) - v(k)) / h1 * h0 / (h0 + h1) + (v(k) - v(k - 1)) / h0 * h1 / (h0 + h1);
    };
    auto second = [&](auto v) {
      return 2.0 * ((v(k + 1) - v(k)) / h1 - (v(k) - v(k - 1)) / h0) / (h0 + h1);
    };
    const double dx = first(x), dy = first(y), ddx = second(x), ddy = second(y);
    const double speed = std::hypot(dx, dy);
    const double value = (dx * ddy - dy * ddx) / (speed * speed * speed);
    if (std::isfinite(value)) kappa[k] = value;
  }
  const auto best = static_cast<std::size_t>(std::ranges::max_element(kappa) - kappa.begin());
  // At the first or last interior point the largest curvature says only that the curve bends
  // more towards the end of the grid: the corner may be beyond it.
  if (best < 2 || best + 2 >= n || !(kappa[best] > 0) || !(kappa[best] > kappa[best - 1]) ||
      !(kappa[best] > kappa[best + 1]))
    return std::nullopt;
  // The largest turn of the curve across the corner, from a segment before it to one after it,
  // in the corner's sense (that of a positive kappa, counterclockwise): an L turns by about 90
  // degrees, a straight line by none. (A Tikhonov L-curve bends back the other way at large
  // alpha, where the seminorm falls as 1 / alpha^2 and the residual stalls at ||d||: so not the
  // turn from the first segment to the last.)
  double turn = 0;
  for (std::size_t i = 0; i < best; ++i)
    for (std::size_t j = best; j + 1 < n; ++j) {
      const double ax = x(i + 1) - x(i), ay = y(i + 1) - y(i);
      const double bx = x(j + 1) - x(j), by = y(j + 1) - y(j);
      turn = std::max(turn, std::atan2(ax * by - ay * bx, ax * bx + ay * by));
    }
  if (!(turn >= std::numbers::pi / 4)) return std::nullopt;
  return best;
}

void require_laplacian(std::span<const double> laplacian, index_t nm, std::string_view what) {
  require(static_cast<index_t>(laplacian.size()) == nm * nm,
          "{} holds {} values, expected Nm*Nm = {}", what, laplacian.size(), nm * nm);
  const auto at = [&](index_t i, index_t j) {
    return laplacian[static_cast<std::size_t>(i * nm + j)];
  };
  for (index_t i = 0; i < nm; ++i)
    for (index_t j = 0; j < nm; ++j)
      require(std::isfinite(at(i, j)), "{}: entry ({}, {}) is {}: expected finite numbers", what, i,
              j, at(i, j));
  // Exactly: R^[w] holds the matrix as given, and the GSVD of a nonsymmetric one would be
  // another regulariser's than the caller believes.
  for (index_t i = 0; i < nm; ++i)
    for (index_t j = 0; j < i; ++j)
      require(at(i, j) == at(j, i), "{} is not symmetric: ({}, {}) = {} but ({}, {}) = {}", what, i,
              j, at(i, j), j, i, at(j, i));
}

}  // namespace shiftop::inverse
