#include "memory_needs.hpp"

#include <omp.h>

#include <algorithm>

#include "shiftop/btt/op.hpp"
#include "shiftop/core/precision.hpp"

namespace shiftop::app {
namespace {

// The CPU engine's leading dimensions and series stride: rounded up to 16 blocks and to 8
// frequencies (btt/cpu/setup.cpp).
double round_up(index_t n, index_t multiple) {
  return static_cast<double>((n + multiple - 1) / multiple * multiple);
}

}  // namespace

double double_bytes(double count) {
  return 8.0 * count;
}

double plan_host_bytes(const Shape& shape, const btt::PlanOptions& options) {
  if (options.backend != btt::Backend::Cpu) return 0;
  const PrecisionConfig precision = PrecisionConfig::parse(options.precision);
  const double nfreq = static_cast<double>(btt::frequencies(shape));
  const double stride = round_up(btt::frequencies(shape), 8);
  const double ld_m = round_up(shape.nm, 16), ld_d = round_up(shape.nd, 16);
  const auto group = static_cast<double>(options.max_rhs);
  const double threads = options.cpu.threads > 0 ? options.cpu.threads : omp_get_max_threads();
  const double spectrum = double_bytes(nfreq * 2 * static_cast<double>(shape.nd) * ld_m);
  const double fp32_copy = precision[Phase::Gemv] == Precision::Single ? spectrum / 2 : 0;
  const double scratch = threads * double_bytes(64 * 2 * stride);
  const double group_spectra = double_bytes(nfreq * 2 * group * (ld_m + ld_d));
  const double middle = double_bytes(group * static_cast<double>(std::max(shape.nd, shape.nm)) *
                                     static_cast<double>(shape.nt));
  const double series = double_bytes(static_cast<double>(shape.nm) * 2 * stride);
  return spectrum + fp32_copy + scratch + group_spectra + middle + series;
}

double vector_bytes(const Shape& shape, btt::Op op, index_t nrhs) {
  return double_bytes(
      static_cast<double>(nrhs) *
      static_cast<double>(btt::input_blocks(op, shape) + btt::output_blocks(op, shape)) *
      static_cast<double>(shape.nt));
}

}  // namespace shiftop::app
