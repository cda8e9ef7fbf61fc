#include "svd/column_norms.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shiftop::svd::detail {

template <class R>
R safe_norm(const R* x, index_t n) {
  using limits = std::numeric_limits<R>;
  R sum = 0;
#pragma omp simd reduction(+ : sum)
  for (index_t i = 0; i < n; ++i)
    sum += x[i] * x[i];
  // Fast path. A finite sum means no square or partial sum overflowed. A square that underflowed
  // lost at most denorm_min; n of them stay below eps * sum when sum >= n * min_normal
  // (min_normal / denorm_min = 2^(digits - 1) = 1 / eps).
  if (std::isfinite(sum) && sum >= static_cast<R>(n) * limits::min()) return std::sqrt(sum);
  if (std::isnan(sum)) return sum;

  R largest = 0;
#pragma omp simd reduction(max : largest)
  for (index_t i = 0; i < n; ++i)
    largest = std::max(largest, std::abs(x[i]));
  if (largest == 0 || !std::isfinite(largest)) return largest;
  // Scale by 2^k with k from largest's exponent: exact (a power of 2), and the scaled largest is
  // in [1/2, 1), so the sum is at most n and cannot overflow. For a subnormal largest, 2^-exponent
  // is not representable: k is clamped to the normal range, which still leaves the scaled largest
  // above 2^(1 - digits) and its square normal. A square that underflows after scaling is below
  // 2^min_exponent of the scaled largest's square, far below eps of the sum: one scale serves all
  // entries (section 2.6 needs separate scales for the small entries only because its sum of the
  // unscaled ones is taken in the same pass).
  int exponent = 0;
  std::frexp(largest, &exponent);
  const int k = std::clamp(-exponent, limits::min_exponent - 1, limits::max_exponent - 1);
  const R scale = std::ldexp(R(1), k);
  sum = 0;
#pragma omp simd reduction(+ : sum)
  for (index_t i = 0; i < n; ++i) {
    const R scaled = x[i] * scale;
    sum += scaled * scaled;
  }
  return std::ldexp(std::sqrt(sum), -k);
}

template float safe_norm(const float*, index_t);
template double safe_norm(const double*, index_t);

}  // namespace shiftop::svd::detail
