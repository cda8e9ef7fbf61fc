#include "shiftop/btt/plan.hpp"

#include <numeric>

#include "btt/engines.hpp"
#include "btt/passes.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/threads.hpp"

namespace shiftop::btt {
namespace {

void check_kernel_size(std::span<const double> kernels, const Shape& shape, const char* what) {
  require(static_cast<index_t>(kernels.size()) == shape.kernel_size(),
          "{} holds {} values, expected Nd*Nm*Nt = {} for shape {}", what, kernels.size(),
          shape.kernel_size(), shape.str());
}

void check_options(const PlanOptions& options, const Shape& shape) {
  check_threads(options.cpu.threads, "threads");
  require(options.max_rhs >= 1, "invalid max_rhs {}: expected at least 1", options.max_rhs);
  const index_t length = options.gpu_engine.fft_length;
  require(length == 0 || options.backend == Backend::Cuda,
          "fft_length {}: the FFT length is a CUDA backend option (the CPU uses 2*Nt)", length);
  require(length == 0 || (length % 2 == 0 && length >= padded_length(shape)),
          "invalid fft_length {}: expected 0 (choose) or an even length of at least 2*Nt = {}",
          length, padded_length(shape));
}

std::unique_ptr<Engine> make_engine(const EngineInputs& inputs) {
  return inputs.options.backend == Backend::Cuda ? make_cuda_engine(inputs)
                                                 : make_cpu_engine(inputs);
}

bool overlaps(const double* a, std::size_t na, const double* b, std::size_t nb) {
  return na > 0 && nb > 0 && a < b + nb && b < a + na;
}

}  // namespace

double PhaseTimes::total() const {
  return std::accumulate(seconds.begin(), seconds.end(), 0.0);
}

std::string PassChoice::gemv_name() const {
  std::string name(name_of(gemv));
  return gemv_tuning.empty() ? name : name + " " + gemv_tuning;
}

const PassChoice& PlanChoices::of(Op op) const {
  return passes[passes_of(op).first_adjoint ? 1 : 0];
}

Plan::Plan(Shape shape, bool triangular, PrecisionConfig precision, std::unique_ptr<Engine> engine)
    : shape_(shape), triangular_(triangular), precision_(precision), engine_(std::move(engine)) {}

Plan Plan::create(std::span<const double> kernels, const Shape& shape, const PlanOptions& options) {
  shape.validate();
  check_kernel_size(kernels, shape, "kernel array");
  check_options(options, shape);
  const PrecisionConfig precision = PrecisionConfig::parse(options.precision);
  return Plan(shape, true, precision, make_engine({kernels, {}, shape, options, precision}));
}

Plan Plan::create_general(std::span<const double> first_column, std::span<const double> first_row,
                          const Shape& shape, const PlanOptions& options) {
  shape.validate();
  check_kernel_size(first_column, shape, "first block column");
  check_kernel_size(first_row, shape, "first block row");
  check_options(options, shape);
  for (index_t k = 0; k < shape.nd * shape.nm; ++k) {
    const auto at = static_cast<std::size_t>(k * shape.nt);
    require(first_column[at] == first_row[at],
            "first block row and first block column disagree at lag 0 in kernel (i={}, j={}): "
            "{} vs {}; both hold the diagonal block F_0",
            k / shape.nm, k % shape.nm, first_row[at], first_column[at]);
  }
  const PrecisionConfig precision = PrecisionConfig::parse(options.precision);
  return Plan(shape, false, precision,
              make_engine({first_column, first_row, shape, options, precision}));
}

std::size_t Plan::host_bytes(const Shape& shape, const PlanOptions& options) {
  require(shape.nd > 0 && shape.nm > 0 && shape.nt > 0,
          "invalid operator shape {}: every size must be positive", shape.str());
  check_options(options, shape);
  const PrecisionConfig precision = PrecisionConfig::parse(options.precision);
  return options.backend == Backend::Cuda ? cuda_host_bytes(shape, options, precision)
                                          : cpu_host_bytes(shape, options, precision);
}

void Engine::apply_device(Op, const double*, double*, index_t, void*) {
  fail("apply_device needs a plan with Backend::Cuda; this plan runs on the CPU");
}

void Engine::set_gemv(GemvImplementation) {
  fail("set_gemv chooses between the GPU's phase-3 implementations; this plan runs on the CPU");
}

void Plan::apply_device(Op op, const double* x, double* y, index_t nrhs, void* stream) {
  require(nrhs >= 1, "invalid number of right-hand sides {}: expected at least 1", nrhs);
  require(x != nullptr && y != nullptr, "apply_device: null input or output pointer");
  const auto in_size = static_cast<std::size_t>(nrhs * input_blocks(op, shape_) * shape_.nt);
  const auto out_size = static_cast<std::size_t>(nrhs * output_blocks(op, shape_) * shape_.nt);
  require(!overlaps(x, in_size, y, out_size),
          "input and output of {} overlap in memory: apply is out-of-place", name_of(op));
  engine_->apply_device(op, x, y, nrhs, stream);
}

void Plan::apply(Op op, std::span<const double> x, std::span<double> y, index_t nrhs) {
  require(nrhs >= 1, "invalid number of right-hand sides {}: expected at least 1", nrhs);
  const index_t in_size = nrhs * input_blocks(op, shape_) * shape_.nt;
  const index_t out_size = nrhs * output_blocks(op, shape_) * shape_.nt;
  require(static_cast<index_t>(x.size()) == in_size,
          "input of {} has {} values, expected nrhs*blocks*Nt = {}*{}*{} = {}", name_of(op),
          x.size(), nrhs, input_blocks(op, shape_), shape_.nt, in_size);
  require(static_cast<index_t>(y.size()) == out_size,
          "output of {} has {} values, expected nrhs*blocks*Nt = {}*{}*{} = {}", name_of(op),
          y.size(), nrhs, output_blocks(op, shape_), shape_.nt, out_size);
  require(!overlaps(x.data(), x.size(), y.data(), y.size()),
          "input and output of {} overlap in memory: apply is out-of-place", name_of(op));
  engine_->apply(op, x.data(), y.data(), nrhs);
}

void Plan::set_precision(std::string_view precision) {
  const PrecisionConfig parsed = PrecisionConfig::parse(precision);
  engine_->set_precision(parsed);
  precision_ = parsed;
}

}  // namespace shiftop::btt
