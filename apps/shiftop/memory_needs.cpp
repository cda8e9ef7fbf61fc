#include "memory_needs.hpp"

#include "shiftop/btt/op.hpp"

namespace shiftop::app {

double double_bytes(double count) {
  return 8.0 * count;
}

double vector_bytes(const Shape& shape, btt::Op op, index_t nrhs) {
  return double_bytes(
      static_cast<double>(nrhs) *
      static_cast<double>(btt::input_blocks(op, shape) + btt::output_blocks(op, shape)) *
      static_cast<double>(shape.nt));
}

double host_bytes(const BenchOptions& o, const Shape& shape, btt::Op op,
                  const btt::PlanOptions& options) {
  const double output =
      double_bytes(static_cast<double>(output_blocks(op, shape)) * static_cast<double>(shape.nt));
  double bytes = double_bytes(static_cast<double>(shape.kernel_size())) +
                 static_cast<double>(btt::Plan::host_bytes(shape, options)) +
                 vector_bytes(shape, op, o.nrhs);
  if (o.check)
    bytes += static_cast<double>(btt::Plan::host_bytes(shape, {.cpu = {.threads = o.threads}})) +
             static_cast<double>(o.nrhs) * output;
  if (o.direct) bytes += output;
  return bytes;
}

double probe_bytes(btt::Backend backend) {
  return backend == btt::Backend::Cpu ? 2.0 * static_cast<double>(kCpuProbeArrayBytes) : 0;
}

}  // namespace shiftop::app
