// OperatorPair (include/shiftop/btt/pair.hpp): two plans, one loop over groups of right-hand
// sides, one middle buffer. Every product is a btt::Plan pass; nothing of the engines is repeated.
#include "shiftop/btt/pair.hpp"

#include <algorithm>

#include "btt/pair_device.hpp"
#include "btt/passes.hpp"
#include "core/aligned_buffer.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/gpu/context.hpp"

namespace shiftop::btt {

struct OperatorPair::Workspace {
  AlignedBuffer<double> host_middle;
  std::unique_ptr<PairDevice> device;
};

namespace {

// The CPU engine reports FFTW transforms (PlanChoices); every GPU engine cuFFT or its own.
bool runs_on_gpu(const Plan& plan) {
  return plan.choices().passes[0].transforms != Transforms::Fftw;
}

std::string_view backend_name(const Plan& plan) {
  return runs_on_gpu(plan) ? "the GPU" : "the CPU";
}

bool chained(PairOp op) {
  return op == PairOp::GadjF || op == PairOp::FGadj;
}

void check_shapes(const Shape& f, const Shape& g) {
  require(f.nt == g.nt,
          "operator pair: G has Nt = {} time steps and F has Nt = {}: expected one time grid", g.nt,
          f.nt);
}

// The two passes of a mixed product. G*F: F into F's data space, then G*. FG*: G* into the
// parameter space, then F.
struct Chain {
  Plan& first;
  Op first_op;
  Plan& second;
  Op second_op;
  index_t middle_blocks;
};

Chain chain_of(PairOp op, Plan& f, Plan& g) {
  if (op == PairOp::GadjF) return {f, Op::F, g, Op::Fadj, f.shape().nd};
  return {g, Op::Fadj, f, Op::F, f.shape().nm};
}

bool overlaps(const double* a, std::size_t na, const double* b, std::size_t nb) {
  return na > 0 && nb > 0 && a < b + nb && b < a + na;
}

}  // namespace

OperatorPair OperatorPair::create(std::shared_ptr<Plan> f, std::shared_ptr<Plan> g,
                                  const PairOptions& options) {
  require(f != nullptr && g != nullptr, "operator pair: {} is null: expected a plan",
          f == nullptr ? "F" : "G");
  check_shapes(f->shape(), g->shape());
  require(runs_on_gpu(*f) == runs_on_gpu(*g),
          "operator pair: F runs on {} and G on {}: expected both plans on one backend",
          backend_name(*f), backend_name(*g));
  require(options.max_rhs >= 1, "operator pair: invalid max_rhs {}: expected at least 1",
          options.max_rhs);
  return OperatorPair(std::move(f), std::move(g), options);
}

OperatorPair OperatorPair::create(std::span<const double> f_kernels, const Shape& f_shape,
                                  std::span<const double> g_kernels, const Shape& g_shape,
                                  const PlanOptions& options) {
  check_shapes(f_shape, g_shape);
  PlanOptions shared = options;
  if (options.backend == Backend::Cuda) shared.gpu.context = gpu::context_for(options.gpu);
  auto f = std::make_shared<Plan>(Plan::create(f_kernels, f_shape, shared));
  auto g = std::make_shared<Plan>(Plan::create(g_kernels, g_shape, shared));
  return create(std::move(f), std::move(g),
                {.max_rhs = options.max_rhs, .gpu = {.context = shared.gpu.context}});
}

OperatorPair::OperatorPair(std::shared_ptr<Plan> f, std::shared_ptr<Plan> g,
                           const PairOptions& options)
    : f_(std::move(f)),
      g_(std::move(g)),
      max_rhs_(options.max_rhs),
      on_device_(runs_on_gpu(*f_)),
      workspace_(std::make_unique<Workspace>()) {
  // The middle vector of a group: F's data space for G*F, the parameter space for FG*.
  index_t middle = 0, input = 0, output = 0;
  for (const PairOp op : {PairOp::GadjF, PairOp::FGadj}) {
    if (!supports(op)) continue;
    middle = std::max(middle, chain_of(op, *f_, *g_).middle_blocks);
    input = std::max(input, input_blocks(op));
    output = std::max(output, output_blocks(op));
  }
  const auto values = [&](index_t blocks) {
    return static_cast<std::size_t>(max_rhs_ * blocks * f_->shape().nt);
  };
  if (on_device_)
    workspace_->device = make_pair_device(options.gpu.context.get(), options.gpu.device,
                                          values(middle), values(input), values(output));
  else
    workspace_->host_middle = AlignedBuffer<double>(values(middle));
}

OperatorPair::OperatorPair(OperatorPair&&) noexcept = default;
OperatorPair& OperatorPair::operator=(OperatorPair&&) noexcept = default;
OperatorPair::~OperatorPair() = default;

bool OperatorPair::supports(PairOp op) const {
  switch (op) {
    case PairOp::GadjF:
      return g_->shape().nd == f_->shape().nd;
    case PairOp::FGadj:
      return g_->shape().nm == f_->shape().nm;
    default:
      return true;
  }
}

index_t OperatorPair::input_blocks(PairOp op) const {
  switch (op) {
    case PairOp::G:
      return g_->shape().nm;
    case PairOp::Gadj:
    case PairOp::FGadj:
      return g_->shape().nd;
    case PairOp::GadjF:
      return f_->shape().nm;
  }
  return 0;
}

index_t OperatorPair::output_blocks(PairOp op) const {
  switch (op) {
    case PairOp::G:
      return g_->shape().nd;
    case PairOp::Gadj:
    case PairOp::GadjF:
      return g_->shape().nm;
    case PairOp::FGadj:
      return f_->shape().nd;
  }
  return 0;
}

void OperatorPair::require_supported(PairOp op) const {
  if (op == PairOp::GadjF)
    require(supports(op),
            "GadjF: G has Nq = {} block rows and F has Nd = {}: G*F applies G* to F's output, so "
            "expected Nq = Nd",
            g_->shape().nd, f_->shape().nd);
  if (op == PairOp::FGadj)
    require(supports(op),
            "FGadj: G has Nm = {} parameter blocks and F has Nm = {}: FG* applies F to G*'s "
            "output, so expected equal Nm",
            g_->shape().nm, f_->shape().nm);
}

void OperatorPair::apply(PairOp op, std::span<const double> x, std::span<double> y, index_t nrhs) {
  require(nrhs >= 1, "invalid number of right-hand sides {}: expected at least 1", nrhs);
  require_supported(op);
  const index_t nt = f_->shape().nt;
  const index_t in = input_blocks(op), out = output_blocks(op);
  require(static_cast<index_t>(x.size()) == nrhs * in * nt,
          "input of {} has {} values, expected nrhs*blocks*Nt = {}*{}*{} = {}", name_of(op),
          x.size(), nrhs, in, nt, nrhs * in * nt);
  require(static_cast<index_t>(y.size()) == nrhs * out * nt,
          "output of {} has {} values, expected nrhs*blocks*Nt = {}*{}*{} = {}", name_of(op),
          y.size(), nrhs, out, nt, nrhs * out * nt);
  require(!overlaps(x.data(), x.size(), y.data(), y.size()),
          "input and output of {} overlap in memory: apply is out-of-place", name_of(op));
  if (!chained(op)) {
    g_->apply(op == PairOp::G ? Op::F : Op::Fadj, x, y, nrhs);
    return;
  }
  const Chain chain = chain_of(op, *f_, *g_);
  for_each_group(nrhs, max_rhs_, [&](index_t begin, index_t count) {
    const auto in_count = static_cast<std::size_t>(count * in * nt);
    const auto out_count = static_cast<std::size_t>(count * out * nt);
    const auto mid_count = static_cast<std::size_t>(count * chain.middle_blocks * nt);
    const std::span<const double> xg =
        x.subspan(static_cast<std::size_t>(begin * in * nt), in_count);
    const std::span<double> yg = y.subspan(static_cast<std::size_t>(begin * out * nt), out_count);
    if (!on_device_) {
      const std::span<double> middle(workspace_->host_middle.data(), mid_count);
      chain.first.apply(chain.first_op, xg, middle, count);
      chain.second.apply(chain.second_op, middle, yg, count);
      return;
    }
    // The middle stays on the device: copy the group in, run both passes, copy it out.
    PairDevice& device = *workspace_->device;
    device.upload(xg.data(), in_count);
    chain.first.apply_device(chain.first_op, device.input(), device.middle(), count, nullptr);
    chain.second.apply_device(chain.second_op, device.middle(), device.output(), count, nullptr);
    device.download(yg.data(), out_count);
  });
}

void OperatorPair::apply_device(PairOp op, const double* x, double* y, index_t nrhs, void* stream) {
  require(on_device_, "apply_device needs plans on the CUDA backend; this pair runs on the CPU");
  require(nrhs >= 1, "invalid number of right-hand sides {}: expected at least 1", nrhs);
  require(x != nullptr && y != nullptr, "apply_device: null input or output pointer");
  require_supported(op);
  const index_t nt = f_->shape().nt;
  const index_t in = input_blocks(op), out = output_blocks(op);
  require(!overlaps(x, static_cast<std::size_t>(nrhs * in * nt), y,
                    static_cast<std::size_t>(nrhs * out * nt)),
          "input and output of {} overlap in memory: apply is out-of-place", name_of(op));
  if (!chained(op)) {
    g_->apply_device(op == PairOp::G ? Op::F : Op::Fadj, x, y, nrhs, stream);
    return;
  }
  const Chain chain = chain_of(op, *f_, *g_);
  double* middle = workspace_->device->middle();
  // Both plans order their work after `stream` and `stream` after theirs, so the next group's
  // first pass overwrites the middle only after this group's second pass has read it.
  for_each_group(nrhs, max_rhs_, [&](index_t begin, index_t count) {
    chain.first.apply_device(chain.first_op, x + begin * in * nt, middle, count, stream);
    chain.second.apply_device(chain.second_op, middle, y + begin * out * nt, count, stream);
  });
}

}  // namespace shiftop::btt
