#include "shiftop/btt/floor.hpp"

#include "shiftop/core/error.hpp"

namespace shiftop::btt {
namespace {

// Both halves of F*F and FF* read F^.
double halves(Op op) {
  return (op == Op::FadjF || op == Op::FFadj) ? 2.0 : 1.0;
}

double frequencies(const Shape& shape, index_t fft_length) {
  return static_cast<double>(fft_length > 0 ? fft_length / 2 + 1 : btt::frequencies(shape));
}

}  // namespace

double matrix_bytes(const Shape& shape, const PrecisionConfig& precision, Op op, index_t passes,
                    index_t fft_length) {
  const double element = precision[Phase::Gemv] == Precision::Single ? 8.0 : 16.0;
  return frequencies(shape, fft_length) * static_cast<double>(shape.nd) *
         static_cast<double>(shape.nm) * element * halves(op) * static_cast<double>(passes);
}

ApplyFloor apply_floor(const Shape& shape, const PrecisionConfig& precision, Op op, index_t nrhs,
                       index_t fft_length, index_t group_size) {
  require(group_size > 0, "apply_floor: group size {} must be positive", group_size);
  ApplyFloor f;
  f.groups = (nrhs + group_size - 1) / group_size;
  f.spectrum_bytes = matrix_bytes(shape, precision, op, f.groups, fft_length);
  const double vector = static_cast<double>(nrhs) * static_cast<double>(shape.nt) * sizeof(double);
  f.input_bytes = vector * static_cast<double>(input_blocks(op, shape));
  f.output_bytes = vector * static_cast<double>(output_blocks(op, shape));
  f.flops = 8.0 * static_cast<double>(shape.nd) * static_cast<double>(shape.nm) *
            frequencies(shape, fft_length) * static_cast<double>(nrhs) * halves(op);
  return f;
}

ApplyFloor apply_floor(const Plan& plan, Op op, index_t nrhs) {
  const PlanChoices choices = plan.choices();
  return apply_floor(plan.shape(), plan.precision(), op, nrhs, choices.fft_length,
                     choices.group_size);
}

FloorTimes floor_times(const ApplyFloor& need, double read_bytes_per_second,
                       double flops_per_second) {
  require(read_bytes_per_second > 0, "floor_times: expected a positive read bandwidth, got {}",
          read_bytes_per_second);
  require(flops_per_second >= 0, "floor_times: expected a flop rate >= 0, got {}",
          flops_per_second);
  return {.whole_apply = need.bytes() / read_bytes_per_second,
          .spectrum_only = need.spectrum_bytes / read_bytes_per_second,
          .flops = flops_per_second > 0 ? need.flops / flops_per_second : 0.0};
}

}  // namespace shiftop::btt
