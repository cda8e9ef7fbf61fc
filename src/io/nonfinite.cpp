#include "io/nonfinite.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "shiftop/core/error.hpp"

namespace shiftop::io {
namespace {

// Index of the first non-finite value, or -1.
index_t first_nonfinite(std::span<const double> values) {
  const auto found = std::ranges::find_if(values, [](double v) { return !std::isfinite(v); });
  return found == values.end() ? -1 : static_cast<index_t>(found - values.begin());
}

std::string_view kind(double value) {
  return std::isnan(value) ? "NaN" : "infinity";
}

std::string accepted(std::string_view accepted_by) {
  return accepted_by.empty() ? std::string() : fmt::format(" ({} accepts them)", accepted_by);
}

}  // namespace

void require_finite_kernels(std::span<const double> kernels, const Shape& slice, index_t row_begin,
                            index_t col_begin, std::string_view where,
                            std::string_view accepted_by) {
  const index_t k = first_nonfinite(kernels);
  if (k < 0) return;
  const index_t t = k % slice.nt;
  const index_t col = k / slice.nt % slice.nm;
  const index_t row = k / (slice.nt * slice.nm);
  fail("{}: {} at (row {}, parameter block {}, time {}): expected finite kernel values{}", where,
       kind(kernels[k]), row_begin + row, col_begin + col, t, accepted(accepted_by));
}

void require_finite_vectors(std::span<const double> values, index_t blocks, index_t nt,
                            std::string_view where, std::string_view accepted_by) {
  const index_t k = first_nonfinite(values);
  if (k < 0) return;
  fail("{}: {} at (right-hand side {}, block {}, time {}): expected finite values{}", where,
       kind(values[k]), k / (blocks * nt), k / nt % blocks, k % nt, accepted(accepted_by));
}

}  // namespace shiftop::io
