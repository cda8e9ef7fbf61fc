// MLEM, SIRT and CGLS on a block-circulant system matrix (shiftop/circ/reconstruct.hpp). Every
// iteration is one product with C and one with C^T through circ::Operator (on its backend); the
// vector work between them runs on the host on OpenMP threads, with sums in double.
#include "shiftop/circ/reconstruct.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "shiftop/core/error.hpp"
#include "shiftop/core/timer.hpp"

namespace shiftop::circ {
namespace {

// f(i) for every i < n on OpenMP threads.
template <class F>
void for_each_index(std::size_t n, F f) {
  const auto count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < count; ++i)
    f(static_cast<std::size_t>(i));
}

// The sum of f(i) over i < n, in double, on OpenMP threads.
template <class F>
double sum_over(std::size_t n, F f) {
  const auto count = static_cast<std::ptrdiff_t>(n);
  double total = 0;
#pragma omp parallel for schedule(static) reduction(+ : total)
  for (std::ptrdiff_t i = 0; i < count; ++i)
    total += f(static_cast<std::size_t>(i));
  return total;
}

template <class T>
double squared_norm(const std::vector<T>& v) {
  return sum_over(v.size(), [&](std::size_t i) { return double(v[i]) * double(v[i]); });
}

// ||p - b||_2 for p = C x.
template <class T>
double residual_norm(const std::vector<T>& p, std::span<const T> b) {
  return std::sqrt(sum_over(p.size(), [&](std::size_t i) {
    const double d = double(p[i]) - double(b[i]);
    return d * d;
  }));
}

// The checks every method makes before its first product; `counts` adds MLEM's b >= 0.
template <class T>
void check_input(const char* method, const circ::Operator<T>& c, std::span<const T> b,
                 const ReconOptions& options, bool counts) {
  require(options.iterations >= 1, "{}: {} iterations: expected at least 1", method,
          options.iterations);
  const auto rows = static_cast<std::size_t>(c.shape().rows());
  require(b.size() == rows,
          "{}: the sinogram holds {} values, expected k*mb = {} (the rows of C, {})", method,
          b.size(), rows, c.shape().str());
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (!std::isfinite(b[i]))
      fail("{}: sinogram value {} is {}: expected finite numbers", method, i, b[i]);
    if (counts && b[i] < 0)
      fail("{}: sinogram value {} is {}: expected counts >= 0 (the Poisson model)", method, i,
           b[i]);
  }
  require(std::any_of(b.begin(), b.end(), [](T v) { return v != 0; }),
          "{}: the sinogram is all zero: expected a nonzero sinogram (the residual is reported "
          "relative to its norm)",
          method);
}

// 1 / s where s > 0, 0 where s = 0; a negative or nonfinite sum means C is not the nonnegative
// system matrix the method assumes.
template <class T>
std::vector<T> inverse_sums(const char* method, const std::vector<T>& sums, const char* what) {
  std::vector<T> inverse(sums.size());
  for (std::size_t i = 0; i < sums.size(); ++i) {
    if (!(sums[i] >= 0) || !std::isfinite(sums[i]))
      fail("{}: {} {} of C sums to {}: expected a nonnegative system matrix", method, what, i,
           sums[i]);
    inverse[i] = sums[i] > 0 ? T(1) / sums[i] : T(0);
  }
  return inverse;
}

// The history and the progress callback.
class Recorder {
 public:
  template <class T>
  Recorder(const ReconOptions& options, std::span<const T> b)
      : options_(options),
        norm_b_(std::sqrt(sum_over(b.size(), [&](std::size_t i) { return double(b[i]) * b[i]; }))) {
  }

  void record(int iteration, double residual_norm, double neg_log_likelihood) {
    const ReconProgress progress{iteration, residual_norm / norm_b_, neg_log_likelihood,
                                 watch_.elapsed()};
    history_.push_back(progress);
    if (options_.progress) options_.progress(progress);
  }

  std::vector<ReconProgress> take() { return std::move(history_); }

 private:
  const ReconOptions& options_;
  Stopwatch watch_;
  double norm_b_;
  std::vector<ReconProgress> history_;
};

// sum_i (p_i - b_i log p_i), terms with b_i = 0 counting p_i (0 when p_i = 0 too).
template <class T>
double poisson_neg_log_likelihood(const std::vector<T>& p, std::span<const T> b) {
  return sum_over(p.size(), [&](std::size_t i) {
    if (b[i] == 0) return double(p[i]);
    if (!(p[i] > 0)) return std::numeric_limits<double>::infinity();
    return double(p[i]) - double(b[i]) * std::log(double(p[i]));
  });
}

}  // namespace

// Shepp and Vardi's EM step x_j <- x_j / s_j sum_i c_ij b_i / (C x)_i with s = C^T 1: each step
// does not increase the Poisson negative log-likelihood and keeps x >= 0. A ray with (C x)_i = 0
// adds nothing (b_i / 0 is taken as 0; its likelihood term is then infinite if b_i > 0). C x is
// formed once before the loop and again after each update, so the progress reports the current
// image.
template <class T>
ReconResult<T> mlem(circ::Operator<T>& c, std::span<const T> b, const ReconOptions& options) {
  check_input("MLEM", c, b, options, true);
  Recorder recorder(options, b);
  const auto m = static_cast<std::size_t>(c.shape().rows());
  const auto n = static_cast<std::size_t>(c.shape().cols());
  std::vector<T> sensitivity(n);
  c.apply(Op::Ct, std::vector<T>(m, T(1)), sensitivity);
  const std::vector<T> inverse_sensitivity = inverse_sums("MLEM", sensitivity, "column");

  ReconResult<T> result;
  std::vector<T>& x = result.image;
  x.resize(n);
  for_each_index(n, [&](std::size_t j) { x[j] = sensitivity[j] > 0 ? T(1) : T(0); });
  std::vector<T> p(m), ratio(m), back(n);
  c.apply(Op::C, x, p);
  for (int iteration = 1; iteration <= options.iterations; ++iteration) {
    for_each_index(m, [&](std::size_t i) { ratio[i] = p[i] > 0 ? b[i] / p[i] : T(0); });
    c.apply(Op::Ct, ratio, back);
    for_each_index(n, [&](std::size_t j) { x[j] *= back[j] * inverse_sensitivity[j]; });
    c.apply(Op::C, x, p);
    recorder.record(iteration, residual_norm(p, b), poisson_neg_log_likelihood(p, b));
  }
  result.history = recorder.take();
  return result;
}

// SIRT (Gregor and Benson's form): x <- max(0, x + D_col^{-1} C^T D_row^{-1} (b - C x)) with the
// row sums C 1 and the column sums C^T 1 found once; rows or columns summing to 0 are skipped.
template <class T>
ReconResult<T> sirt(circ::Operator<T>& c, std::span<const T> b, const ReconOptions& options) {
  check_input("SIRT", c, b, options, false);
  Recorder recorder(options, b);
  const auto m = static_cast<std::size_t>(c.shape().rows());
  const auto n = static_cast<std::size_t>(c.shape().cols());
  std::vector<T> row_sums(m), column_sums(n);
  c.apply(Op::C, std::vector<T>(n, T(1)), row_sums);
  c.apply(Op::Ct, std::vector<T>(m, T(1)), column_sums);
  const std::vector<T> inverse_rows = inverse_sums("SIRT", row_sums, "row");
  const std::vector<T> inverse_columns = inverse_sums("SIRT", column_sums, "column");

  ReconResult<T> result;
  std::vector<T>& x = result.image;
  x.assign(n, T(0));
  std::vector<T> p(m, T(0)), weighted(m), correction(n);  // p = C x = 0 for x = 0
  for (int iteration = 1; iteration <= options.iterations; ++iteration) {
    for_each_index(m, [&](std::size_t i) { weighted[i] = (b[i] - p[i]) * inverse_rows[i]; });
    c.apply(Op::Ct, weighted, correction);
    for_each_index(n, [&](std::size_t j) {
      x[j] = std::max(T(0), x[j] + correction[j] * inverse_columns[j]);
    });
    c.apply(Op::C, x, p);
    recorder.record(iteration, residual_norm(p, b), 0);
  }
  result.history = recorder.take();
  return result;
}

// CGLS (Bjorck, Numerical Methods for Least Squares Problems, Algorithm 7.4.1): CG on
// C^T C x = C^T b with the residual r = b - C x and s = C^T r updated, never formed. It relies
// on C^T being C's exact transpose. Once ||C^T r|| is at rounding level, further steps follow
// rounding errors and x drifts away (FP32 on a random 450 x 300 C of condition 116: ||r|| grew
// 20x between iterations 250 and 400), so it stops, as LSQR's rule 2 (Paige and Saunders 1982)
// does, when ||C^T r|| <= 10 eps ||C|| ||r||, with ||C|| estimated from below by the largest
// ||C p|| / ||p|| seen; the history may then be shorter than options.iterations.
template <class T>
ReconResult<T> cgls(circ::Operator<T>& c, std::span<const T> b, const ReconOptions& options) {
  check_input("CGLS", c, b, options, false);
  Recorder recorder(options, b);
  const auto m = static_cast<std::size_t>(c.shape().rows());
  const auto n = static_cast<std::size_t>(c.shape().cols());

  ReconResult<T> result;
  std::vector<T>& x = result.image;
  x.assign(n, T(0));
  std::vector<T> r(b.begin(), b.end()), s(n), p(n), q(m);
  c.apply(Op::Ct, r, s);
  p = s;
  double gamma = squared_norm(s);
  double c_norm = 0;  // the largest ||C p|| / ||p|| so far
  const double stop = 10 * std::numeric_limits<T>::epsilon();
  for (int iteration = 1; iteration <= options.iterations && gamma > 0; ++iteration) {
    c.apply(Op::C, p, q);
    const double q_norm = squared_norm(q);
    if (!(q_norm > 0)) break;  // p is 0 to rounding: nothing left to reduce
    c_norm = std::max(c_norm, std::sqrt(q_norm / squared_norm(p)));
    const auto alpha = static_cast<T>(gamma / q_norm);
    for_each_index(n, [&](std::size_t j) { x[j] += alpha * p[j]; });
    for_each_index(m, [&](std::size_t i) { r[i] -= alpha * q[i]; });
    c.apply(Op::Ct, r, s);
    const double gamma_next = squared_norm(s);
    const auto beta = static_cast<T>(gamma_next / gamma);
    for_each_index(n, [&](std::size_t j) { p[j] = s[j] + beta * p[j]; });
    gamma = gamma_next;
    const double r_norm = std::sqrt(squared_norm(r));
    recorder.record(iteration, r_norm, 0);
    if (std::sqrt(gamma) <= stop * c_norm * r_norm) break;
  }
  result.history = recorder.take();
  return result;
}

#define SHIFTOP_RECONSTRUCT(T)                                                                  \
  template ReconResult<T> mlem<T>(circ::Operator<T>&, std::span<const T>, const ReconOptions&); \
  template ReconResult<T> sirt<T>(circ::Operator<T>&, std::span<const T>, const ReconOptions&); \
  template ReconResult<T> cgls<T>(circ::Operator<T>&, std::span<const T>, const ReconOptions&);
SHIFTOP_RECONSTRUCT(float)
SHIFTOP_RECONSTRUCT(double)
#undef SHIFTOP_RECONSTRUCT

}  // namespace shiftop::circ
