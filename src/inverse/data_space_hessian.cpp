// The data-space Hessian (include/shiftop/inverse/data_space_hessian.hpp): the offline phase
// (assembly, Cholesky, the QoI matrix) and the online phase (MAP point, QoI MAP, variances,
// samples), written once against a DenseSpace (dense_space.hpp) that is host memory or one GPU.
#include "shiftop/inverse/data_space_hessian.hpp"

#include <algorithm>
#include <cmath>

#include "inverse/dense_space.hpp"
#include "inverse/require_finite.hpp"
#include "inverse/standard_normal.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/timer.hpp"

namespace shiftop::inverse {
namespace {

constexpr index_t kDefaultRhsPerApply = 64;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Only the CPU engine reports Gemv::Cpu as its phase-3 product (btt::PlanChoices).
bool runs_on_gpu(const btt::Plan& plan) {
  return plan.choices().passes[0].gemv != btt::Gemv::Cpu;
}

// The plan a prior applies its covariance with; null for a prior without one (DiagonalPrior),
// which runs on either side.
const btt::Plan* plan_of(const Prior& prior) {
  if (const auto* p = dynamic_cast<const TimeSmoothingPrior*>(&prior)) return p->time_plan().get();
  if (const auto* p = dynamic_cast<const KernelPrior*>(&prior)) return p->plan().get();
  return nullptr;
}

std::size_t to_size(index_t count) {
  return static_cast<std::size_t>(count);
}

std::unique_ptr<DenseSpace> space_for(const btt::Plan& F,
                                      const std::shared_ptr<gpu::Context>& context, int device) {
  return runs_on_gpu(F) ? make_device_dense_space(context, device) : make_host_dense_space();
}

// Columns first..first+count-1 of F Gamma_prior F* into `columns` (count columns of `size`
// values): unit vectors through F*, Gamma_prior and F with the group as right-hand sides (F^ is
// read once per group, the design's reason for many right-hand sides). `units` holds count data
// vectors, `p1` and `p2` count parameter vectors.
void push_columns(DenseSpace& space, btt::Plan& F, const Prior& prior, index_t first, index_t count,
                  index_t size, double* units, double* p1, double* p2, double* columns,
                  std::vector<index_t>& positions) {
  positions.resize(to_size(count));
  for (index_t r = 0; r < count; ++r)
    positions[to_size(r)] = first + r;
  space.fill_unit_vectors(units, size, positions);
  space.apply(F, btt::Op::Fadj, units, p1, count);
  space.apply_prior(prior, p1, p2, count);
  space.apply(F, btt::Op::F, p2, columns, count);
}

// Whether K can be assembled as a Gram product: Gamma_prior diagonal in time and in blocks, and F
// causal (the derivation in assemble_gram needs f_ij[k] = 0 for k < 0).
bool gram_applies(const btt::Plan& F, const Prior& prior) {
  return F.triangular() && dynamic_cast<const DiagonalPrior*>(&prior) != nullptr;
}

}  // namespace

/// What the offline phase leaves in the space, and its host-side companions.
struct DataSpaceHessian::Arrays {
  SpaceVector K;                  // N x N: K, then its Cholesky factor in the lower triangle
  SpaceVector noise;              // the N diagonal entries of Gamma_noise
  SpaceVector data;               // group_ data vectors
  SpaceVector data2;              // group_ data vectors
  SpaceVector parameters;         // group_ parameter vectors
  SpaceVector parameters2;        // group_ parameter vectors
  SpaceVector data_prior;         // F m_prior (N), with a prior mean
  SpaceVector W;                  // N x Nq*Nt: K^-1 F Gamma_prior Q*
  SpaceVector qoi_work;           // group_ QoI vectors
  std::vector<double> diagonal;   // K's diagonal, kept before the factor overwrites it
  std::vector<double> qoi_prior;  // Q m_prior (zero without a prior mean)
};

DataSpaceHessian::DataSpaceHessian(std::shared_ptr<btt::Plan> F, GaussianNoise noise,
                                   std::shared_ptr<Prior> prior, DataSpaceHessianOptions options)
    : F_(std::move(F)),
      noise_(std::move(noise)),
      prior_(std::move(prior)),
      options_(std::move(options)) {
  require(F_ != nullptr, "data-space Hessian: the operator F is null");
  require(prior_ != nullptr, "data-space Hessian: the prior is null");
  shape_ = F_->shape();
  size_ = shape_.nd * shape_.nt;
  parameters_ = shape_.nm * shape_.nt;
  if (options_.qoi != nullptr) {
    qoi_blocks_ = options_.qoi->shape().nd;
    qoi_size_ = qoi_blocks_ * shape_.nt;
  }
  check_inputs();
  group_ =
      options_.rhs_per_apply == 0 ? std::min(kDefaultRhsPerApply, size_) : options_.rhs_per_apply;

  gram_ = gram_applies(*F_, *prior_);
  if (options_.assembly == DataSpaceAssembly::Gram)
    require(gram_,
            "data-space Hessian: the Gram assembly needs a diagonal prior and a block-triangular "
            "F, but the prior is {} and F is {}: use DataSpaceAssembly::Automatic or Applies",
            prior_->name(), F_->triangular() ? "triangular" : "general");
  if (options_.assembly == DataSpaceAssembly::Applies) gram_ = false;

  space_ = space_for(*F_, options_.context, options_.device);
  if (space_->on_device()) {
    const btt::Plan* prior_plan = plan_of(*prior_);
    require(prior_plan == nullptr || runs_on_gpu(*prior_plan),
            "F runs on the GPU, and the data-space Hessian with it, but the {} prior's plan runs "
            "on the CPU: make the prior with PlanOptions{{.backend = Backend::Cuda}}",
            prior_->name());
    require(options_.qoi == nullptr || runs_on_gpu(*options_.qoi),
            "F runs on the GPU, and the data-space Hessian with it, but the QoI map's plan runs "
            "on the CPU: make it with PlanOptions{{.backend = Backend::Cuda}}");
  }
  allocate();

  Stopwatch clock;
  if (gram_)
    assemble_gram();
  else
    assemble();
  space_->synchronize();
  times_.assembly = clock.lap();
  factor();
  space_->synchronize();
  times_.factor = clock.lap();
  if (options_.qoi != nullptr) {
    prepare_qoi();
    space_->synchronize();
    times_.qoi = clock.lap();
  }
}

DataSpaceHessian::~DataSpaceHessian() = default;

void DataSpaceHessian::check_inputs() const {
  require(noise_.blocks() == shape_.nd && noise_.nt() == shape_.nt,
          "data-space Hessian: the noise has {} sensors and Nt = {}, but F has Nd = {} and Nt = {}",
          noise_.blocks(), noise_.nt(), shape_.nd, shape_.nt);
  require(prior_->blocks() == shape_.nm && prior_->nt() == shape_.nt,
          "data-space Hessian: the prior has {} blocks and Nt = {}, but F has Nm = {} and Nt = {}",
          prior_->blocks(), prior_->nt(), shape_.nm, shape_.nt);
  require(options_.rhs_per_apply >= 0,
          "data-space Hessian: rhs_per_apply {} is negative: expected 0 (choose) or a count",
          options_.rhs_per_apply);
  const auto& mean = options_.prior_mean;
  require(mean.empty() || mean.size() == to_size(parameters_),
          "data-space Hessian: the prior mean has {} values, expected Nm*Nt = {}*{} = {}",
          mean.size(), shape_.nm, shape_.nt, parameters_);
  for (std::size_t k = 0; k < mean.size(); ++k)
    require(std::isfinite(mean[k]), "data-space Hessian: prior mean value {} is {}", k, mean[k]);
  if (options_.qoi != nullptr) {
    const Shape& q = options_.qoi->shape();
    require(q.nm == shape_.nm && q.nt == shape_.nt,
            "data-space Hessian: the QoI map has shape (Nq, Nm, Nt) = ({}, {}, {}), expected Nm "
            "= {} and Nt = {} as F",
            q.nd, q.nm, q.nt, shape_.nm, shape_.nt);
  }
}

bool DataSpaceHessian::on_device() const {
  return space_->on_device();
}

std::size_t DataSpaceHessian::memory_bytes() const {
  const Arrays& a = *arrays_;
  std::size_t doubles = 0;
  for (const SpaceVector* v : {&a.K, &a.noise, &a.data, &a.data2, &a.parameters, &a.parameters2,
                               &a.data_prior, &a.W, &a.qoi_work})
    doubles += v->size();
  return 8 * doubles;
}

void DataSpaceHessian::allocate() {
  const double n = static_cast<double>(size_), m = static_cast<double>(parameters_),
               g = static_cast<double>(group_), nq = static_cast<double>(qoi_size_);
  const double matrix_bytes = 8 * n * n;
  const double available = space_->available_bytes();
  // K alone is checked before the factorisation's workspace is asked for: cuSOLVER's 32-bit
  // query fails on an order whose square does not fit in an int, long before it fits in memory.
  // The Gram factor Phi (Nd*Nt x Nm) and the prior's standard deviations live during the
  // assembly only, the Cholesky workspace during the factor only: the larger of the two counts.
  const double nm = static_cast<double>(shape_.nm);
  const double gram_bytes = gram_ ? 8 * (n * nm + nm) : 0;
  const double without_cholesky =
      matrix_bytes + gram_bytes +
      8 * (n + 2 * g * n + 2 * g * m + (options_.prior_mean.empty() ? 0 : n) + n * nq + g * nq);
  const double bytes = without_cholesky > available
                           ? without_cholesky
                           : without_cholesky - gram_bytes +
                                 std::max(gram_bytes, space_->cholesky_workspace_bytes(size_));
  require(bytes <= available,
          "the data-space Hessian needs {:.3g} GiB of {} (K = Gamma_noise + F Gamma_prior F* is "
          "Nd*Nt = {} rows square, {:.3g} GiB; W, {} right-hand sides of workspace{} take the "
          "rest) but only {:.3g} GiB are free: K grows as (Nd*Nt)^2, so use fewer sensors or time "
          "steps, a smaller rhs_per_apply, or the MAP point by CG, which needs no K",
          bytes / kGiB, space_->on_device() ? "GPU memory" : "host memory", size_,
          matrix_bytes / kGiB, group_, gram_ ? " and the Gram factor Phi (Nd*Nt x Nm)" : "",
          available / kGiB);

  arrays_ = std::make_unique<Arrays>();
  Arrays& a = *arrays_;
  a.K = space_->allocate(to_size(size_) * to_size(size_), "the data-space Hessian K");
  a.noise = space_->allocate(to_size(size_), "the noise variances");
  a.data = space_->allocate(to_size(group_ * size_), "the data-space workspace");
  a.data2 = space_->allocate(to_size(group_ * size_), "the data-space workspace");
  a.parameters = space_->allocate(to_size(group_ * parameters_), "the parameter workspace");
  a.parameters2 = space_->allocate(to_size(group_ * parameters_), "the parameter workspace");
  std::vector<double> diagonal(to_size(size_));
  for (index_t i = 0; i < shape_.nd; ++i)
    std::fill_n(diagonal.begin() + i * shape_.nt, shape_.nt, noise_.variances()[to_size(i)]);
  space_->upload(diagonal, a.noise.data());
  if (options_.qoi != nullptr) {
    a.W = space_->allocate(to_size(size_) * to_size(qoi_size_), "the QoI matrix W");
    a.qoi_work = space_->allocate(to_size(group_ * qoi_size_), "the QoI workspace");
  }
}

void DataSpaceHessian::progress(std::string_view stage, index_t done, index_t total) const {
  if (!options_.progress) return;
  space_->synchronize();  // report what is done, not what is queued
  options_.progress({.stage = stage, .done = done, .total = total});
}

// Column j of K is Gamma_noise e_j + F Gamma_prior F* e_j; F writes each group's columns of K
// directly.
void DataSpaceHessian::assemble() {
  Arrays& a = *arrays_;
  std::vector<index_t> positions;
  for (index_t first = 0; first < size_; first += group_) {
    const index_t count = std::min(group_, size_ - first);
    double* columns = a.K.data() + to_size(first) * to_size(size_);
    push_columns(*space_, *F_, *prior_, first, count, size_, a.data.data(), a.parameters.data(),
                 a.parameters2.data(), columns, positions);
    space_->add_to_diagonal(columns, size_, first, count, a.noise.data());
    progress("assembly", first + count, size_);
  }
}

// The Gram assembly, for a causal F (f_ij[k] = 0 for k < 0) and Gamma_prior = diag(gamma_j) ⊗ I:
//   (F Gamma_prior F*)[(i,t),(i',t')] = sum_j gamma_j sum_{s=0}^{min(t,t')} f_ij[t-s] f_i'j[t'-s].
// With Phi[(i,a), j] = sqrt(gamma_j) f_ij[a] and G = Phi Phi^T, G[(i,a),(i',a')] = sum_j gamma_j
// f_ij[a] f_i'j[a'], so the sum over s is G summed down the diagonal of block (i,i') that ends at
// (t,t'): D(t,t') = G(t,t') + D(t-1,t'-1), D = 0 off the block. The kernels come from F itself:
// (F* d)_j[s] = sum_i sum_{t>=s} f_ij[t-s] d_i[t], so for d = e_{i,Nt-1} (sensor i, last step)
// (F* e_{i,Nt-1})_j[s] = f_ij[Nt-1-s], the kernels of sensor i reversed in time. Cost: Nd unit
// vectors through F* in groups, one DSYRK of (Nd Nt)^2 Nm flops, and two O((Nd Nt)^2) passes
// over K (the prefix sums and the mirror into the upper triangle), against Nd*Nt columns through
// F*, Gamma_prior and F (two FFT passes over Nm series per column) for the applies.
void DataSpaceHessian::assemble_gram() {
  Arrays& a = *arrays_;
  const index_t nd = shape_.nd, nm = shape_.nm, nt = shape_.nt;
  const auto& variances = static_cast<const DiagonalPrior&>(*prior_).variances();
  std::vector<double> deviations(to_size(nm));
  for (std::size_t j = 0; j < deviations.size(); ++j)
    deviations[j] = std::sqrt(variances[j]);
  const SpaceVector scale = space_->allocate(to_size(nm), "the prior's standard deviations");
  space_->upload(deviations, scale.data());
  const SpaceVector phi =
      space_->allocate(to_size(size_) * to_size(nm), "the Gram factor Phi (Nd*Nt x Nm)");
  std::vector<index_t> positions;
  for (index_t first = 0; first < nd; first += group_) {
    const index_t count = std::min(group_, nd - first);
    positions.resize(to_size(count));
    for (index_t r = 0; r < count; ++r)
      positions[to_size(r)] = (first + r) * nt + nt - 1;
    space_->fill_unit_vectors(a.data.data(), size_, positions);
    space_->apply(*F_, btt::Op::Fadj, a.data.data(), a.parameters.data(), count);
    space_->scatter_reversed(a.parameters.data(), count, nm, nt, scale.data(),
                             phi.data() + to_size(first * nt), size_);
  }
  space_->syrk_lower(phi.data(), size_, nm, a.K.data());
  space_->diagonal_prefix_sum(a.K.data(), nd, nt);
  space_->copy_lower_to_upper(a.K.data(), size_);
  space_->add_to_diagonal(a.K.data(), size_, 0, size_, a.noise.data());
  progress("assembly", size_, size_);
}

double DataSpaceHessian::time_assembly(const std::shared_ptr<btt::Plan>& F, const Prior& prior,
                                       index_t columns, index_t rhs_per_apply,
                                       std::shared_ptr<gpu::Context> context, int device) {
  require(F != nullptr, "time_assembly: the operator F is null");
  const Shape& s = F->shape();
  const index_t size = s.nd * s.nt, parameters = s.nm * s.nt;
  require(columns >= 1 && columns <= size, "time_assembly: columns {} is not in 1..Nd*Nt = {}",
          columns, size);
  require(rhs_per_apply >= 1, "time_assembly: rhs_per_apply {} is not positive", rhs_per_apply);
  require(prior.blocks() == s.nm && prior.nt() == s.nt,
          "time_assembly: the prior has {} blocks and Nt = {}, but F has Nm = {} and Nt = {}",
          prior.blocks(), prior.nt(), s.nm, s.nt);
  const auto space = space_for(*F, context, device);
  const auto group = to_size(rhs_per_apply);
  const SpaceVector units = space->allocate(group * to_size(size), "the data-space workspace");
  const SpaceVector out = space->allocate(group * to_size(size), "the data-space workspace");
  const SpaceVector p1 = space->allocate(group * to_size(parameters), "the parameter workspace");
  const SpaceVector p2 = space->allocate(group * to_size(parameters), "the parameter workspace");
  std::vector<index_t> positions;
  space->synchronize();
  Stopwatch clock;
  for (index_t first = 0; first < columns; first += rhs_per_apply)
    push_columns(*space, *F, prior, first, std::min(rhs_per_apply, columns - first), size,
                 units.data(), p1.data(), p2.data(), out.data(), positions);
  space->synchronize();
  return clock.elapsed();
}

void DataSpaceHessian::factor() {
  Arrays& a = *arrays_;
  std::vector<index_t> positions(to_size(size_));
  for (index_t j = 0; j < size_; ++j)
    positions[to_size(j)] = j;
  a.diagonal.resize(to_size(size_));
  space_->gather(a.K.data(), size_, positions, a.diagonal);
  space_->cholesky(a.K.data(), size_);
  if (options_.prior_mean.empty()) return;
  a.data_prior = space_->allocate(to_size(size_), "F m_prior");
  space_->upload(options_.prior_mean, a.parameters.data());
  space_->apply(*F_, btt::Op::F, a.parameters.data(), a.data_prior.data(), 1);
}

// B = F Gamma_prior Q* column by column (a group of QoI identity columns through Q*, Gamma_prior
// and F), with diag(Q Gamma_prior Q*) from the same Gamma_prior Q* columns. Then Y = L^-1 B gives
// the QoI posterior variances diag(Q Gamma_prior Q*) - diag(B^T K^-1 B) = ... - |Y_j|^2, and
// W = L^-T Y = K^-1 B, so that Q m_map = Q m_prior + W^T (d - F m_prior).
void DataSpaceHessian::prepare_qoi() {
  Arrays& a = *arrays_;
  btt::Plan& Q = *options_.qoi;
  std::vector<double> prior_variance(to_size(qoi_size_));
  std::vector<index_t> positions;
  for (index_t first = 0; first < qoi_size_; first += group_) {
    const index_t count = std::min(group_, qoi_size_ - first);
    positions.resize(to_size(count));
    for (index_t r = 0; r < count; ++r)
      positions[to_size(r)] = first + r;
    space_->fill_unit_vectors(a.qoi_work.data(), qoi_size_, positions);
    space_->apply(Q, btt::Op::Fadj, a.qoi_work.data(), a.parameters.data(), count);
    space_->apply_prior(*prior_, a.parameters.data(), a.parameters2.data(), count);
    space_->apply(*F_, btt::Op::F, a.parameters2.data(),
                  a.W.data() + to_size(first) * to_size(size_), count);
    space_->apply(Q, btt::Op::F, a.parameters2.data(), a.qoi_work.data(), count);
    space_->gather(a.qoi_work.data(), qoi_size_, positions,
                   std::span(prior_variance).subspan(to_size(first), to_size(count)));
    progress("qoi", first + count, qoi_size_);
  }
  space_->triangular_solve(a.K.data(), size_, a.W.data(), qoi_size_, false);
  qoi_variance_.resize(to_size(qoi_size_));
  space_->column_dots(a.W.data(), a.W.data(), size_, qoi_size_, qoi_variance_);
  for (std::size_t k = 0; k < qoi_variance_.size(); ++k)
    qoi_variance_[k] = prior_variance[k] - qoi_variance_[k];
  space_->triangular_solve(a.K.data(), size_, a.W.data(), qoi_size_, true);

  a.qoi_prior.assign(to_size(qoi_size_), 0.0);
  if (!options_.prior_mean.empty()) {
    space_->upload(options_.prior_mean, a.parameters.data());
    space_->apply(Q, btt::Op::F, a.parameters.data(), a.qoi_work.data(), 1);
    space_->download(a.qoi_work.data(), a.qoi_prior);
  }
}

std::vector<double> DataSpaceHessian::matrix() const {
  const Arrays& a = *arrays_;
  std::vector<double> k(to_size(size_) * to_size(size_));
  space_->download(a.K.data(), k);
  const auto n = to_size(size_);
  for (std::size_t j = 0; j < n; ++j) {
    k[j * n + j] = a.diagonal[j];
    for (std::size_t i = j + 1; i < n; ++i)
      k[j * n + i] = k[i * n + j];
  }
  return k;
}

void DataSpaceHessian::check_data(std::span<const double> d, index_t nrhs,
                                  std::string_view what) const {
  require(nrhs >= 1, "{}: nrhs {} is not positive", what, nrhs);
  require(d.size() == to_size(nrhs * size_),
          "{}: the data hold {} values, expected nrhs*Nd*Nt = {}*{}*{} = {}", what, d.size(), nrhs,
          shape_.nd, shape_.nt, nrhs * size_);
  require_finite(d, fmt::format("{}: data", what));
}

void DataSpaceHessian::solve_and_lift(double* x, double* y, index_t nrhs) const {
  Arrays& a = *arrays_;
  space_->triangular_solve(a.K.data(), size_, x, nrhs, false);
  space_->triangular_solve(a.K.data(), size_, x, nrhs, true);
  space_->apply(*F_, btt::Op::Fadj, x, a.parameters.data(), nrhs);
  space_->apply_prior(*prior_, a.parameters.data(), y, nrhs);
}

// m_map = m_prior + Gamma_prior F* K^-1 (d - F m_prior) (Woodbury applied to eq. 4).
void DataSpaceHessian::map_point(std::span<const double> d, std::span<double> m,
                                 index_t nrhs) const {
  check_data(d, nrhs, "map_point");
  require(m.size() == to_size(nrhs * parameters_),
          "map_point: the output holds {} values, expected nrhs*Nm*Nt = {}*{}*{} = {}", m.size(),
          nrhs, shape_.nm, shape_.nt, nrhs * parameters_);
  Arrays& a = *arrays_;
  const auto& mean = options_.prior_mean;
  for (index_t first = 0; first < nrhs; first += group_) {
    const index_t count = std::min(group_, nrhs - first);
    space_->upload(d.subspan(to_size(first * size_), to_size(count * size_)), a.data.data());
    if (!mean.empty())
      for (index_t r = 0; r < count; ++r)
        space_->axpy(-1, a.data_prior.data(), a.data.data() + to_size(r * size_), to_size(size_));
    solve_and_lift(a.data.data(), a.parameters2.data(), count);
    const auto out = m.subspan(to_size(first * parameters_), to_size(count * parameters_));
    space_->download(a.parameters2.data(), out);
    if (!mean.empty())
      for (std::size_t k = 0; k < out.size(); ++k)
        out[k] += mean[k % mean.size()];
  }
}

void DataSpaceHessian::qoi_map(std::span<const double> d, std::span<double> q, index_t nrhs) const {
  require(options_.qoi != nullptr,
          "qoi_map needs a QoI map: give DataSpaceHessianOptions::qoi when building the Hessian");
  check_data(d, nrhs, "qoi_map");
  require(q.size() == to_size(nrhs * qoi_size_),
          "qoi_map: the output holds {} values, expected nrhs*Nq*Nt = {}*{}*{} = {}", q.size(),
          nrhs, qoi_blocks_, shape_.nt, nrhs * qoi_size_);
  Arrays& a = *arrays_;
  for (index_t first = 0; first < nrhs; first += group_) {
    const index_t count = std::min(group_, nrhs - first);
    space_->upload(d.subspan(to_size(first * size_), to_size(count * size_)), a.data.data());
    if (!options_.prior_mean.empty())
      for (index_t r = 0; r < count; ++r)
        space_->axpy(-1, a.data_prior.data(), a.data.data() + to_size(r * size_), to_size(size_));
    space_->gemm_transposed(a.W.data(), size_, qoi_size_, a.data.data(), a.qoi_work.data(), count);
    const auto out = q.subspan(to_size(first * qoi_size_), to_size(count * qoi_size_));
    space_->download(a.qoi_work.data(), out);
    for (std::size_t k = 0; k < out.size(); ++k)
      out[k] += a.qoi_prior[k % a.qoi_prior.size()];
  }
}

std::span<const double> DataSpaceHessian::qoi_variance() const {
  require(options_.qoi != nullptr,
          "qoi_variance needs a QoI map: give DataSpaceHessianOptions::qoi when building the "
          "Hessian");
  return qoi_variance_;
}

std::vector<double> DataSpaceHessian::posterior_variance(
    std::span<const ParameterIndex> indices) const {
  std::vector<index_t> all(indices.size());
  for (std::size_t k = 0; k < indices.size(); ++k) {
    const ParameterIndex& p = indices[k];
    require(p.block >= 0 && p.block < shape_.nm && p.t >= 0 && p.t < shape_.nt,
            "posterior_variance: index {} is (block {}, t {}), expected 0 <= block < Nm = {} and "
            "0 <= t < Nt = {}",
            k, p.block, p.t, shape_.nm, shape_.nt);
    all[k] = p.block * shape_.nt + p.t;
  }
  Arrays& a = *arrays_;
  std::vector<double> variance(indices.size()), dots(to_size(group_));
  for (std::size_t first = 0; first < all.size(); first += to_size(group_)) {
    const std::size_t count = std::min(to_size(group_), all.size() - first);
    const auto positions = std::span<const index_t>(all).subspan(first, count);
    const auto out = std::span(variance).subspan(first, count);
    const auto n = static_cast<index_t>(count);
    // u = F Gamma_prior e_j; var_j = (Gamma_prior e_j)_j - |L^-1 u|^2.
    space_->fill_unit_vectors(a.parameters.data(), parameters_, positions);
    space_->apply_prior(*prior_, a.parameters.data(), a.parameters2.data(), n);
    space_->gather(a.parameters2.data(), parameters_, positions, out);
    space_->apply(*F_, btt::Op::F, a.parameters2.data(), a.data.data(), n);
    space_->triangular_solve(a.K.data(), size_, a.data.data(), n, false);
    space_->column_dots(a.data.data(), a.data.data(), size_, n, std::span(dots).first(count));
    for (std::size_t r = 0; r < count; ++r)
      out[r] -= dots[r];
  }
  return variance;
}

void DataSpaceHessian::sample(std::span<const double> d, index_t count, std::uint64_t seed,
                              std::span<double> samples) const {
  require(count >= 1, "sample: count {} is not positive", count);
  std::vector<double> xi_parameter(to_size(count * parameters_)), xi_data(to_size(count * size_));
  StandardNormal normal(seed);
  for (index_t s = 0; s < count; ++s) {  // sample by sample: the group size does not matter
    normal.fill(std::span(xi_parameter).subspan(to_size(s * parameters_), to_size(parameters_)));
    normal.fill(std::span(xi_data).subspan(to_size(s * size_), to_size(size_)));
  }
  sample_from(d, xi_parameter, xi_data, samples, count);
}

// Matheron's rule ("conditioning by kriging"; Hoffman and Ribak, 1991): draw x = S xi_1 ~
// N(0, Gamma_prior) and e = Gamma_noise^{1/2} xi_2 ~ N(0, Gamma_noise) independently and set
// y = F x + e, so that Cov(y) = K and Cov(x, y) = Gamma_prior F*. With A = Gamma_prior F* K^-1,
// Cov(x - A y, y) = Gamma_prior F* - A K = 0, and
// Cov(x - A y) = Gamma_prior - 2 A F Gamma_prior + A K A^T = Gamma_prior - Gamma_prior F* K^-1 F
// Gamma_prior = Gamma_post (Woodbury), with mean 0. Hence m = m_map + x - A y ~ N(m_map,
// Gamma_post); with m_map = m_prior + A (d - F m_prior) one solve gives
// m = m_prior + x + A (d - F m_prior - F x - e).
void DataSpaceHessian::sample_from(std::span<const double> d, std::span<const double> xi_parameter,
                                   std::span<const double> xi_data, std::span<double> samples,
                                   index_t count) const {
  require(prior_->has_sqrt(),
          "samples need a prior with a square root Gamma_prior = S S^T; the {} prior has none: use "
          "the diagonal or smoothing prior, or posterior_variance for the variances",
          prior_->name());
  check_data(d, 1, "sample");
  require(count >= 1, "sample: count {} is not positive", count);
  require(xi_parameter.size() == to_size(count * parameters_) &&
              xi_data.size() == to_size(count * size_) &&
              samples.size() == to_size(count * parameters_),
          "sample: xi_parameter, xi_data and samples hold {}, {} and {} values, expected "
          "count*Nm*Nt = {}, count*Nd*Nt = {} and count*Nm*Nt",
          xi_parameter.size(), xi_data.size(), samples.size(), count * parameters_, count * size_);
  Arrays& a = *arrays_;
  const auto& mean = options_.prior_mean;
  std::vector<double> x(to_size(group_ * parameters_)), c(to_size(group_ * size_));
  for (index_t first = 0; first < count; first += group_) {
    const index_t n = std::min(group_, count - first);
    const auto xs = std::span(x).first(to_size(n * parameters_));
    const auto cs = std::span(c).first(to_size(n * size_));
    prior_->apply_sqrt(xi_parameter.subspan(to_size(first * parameters_), xs.size()), xs, n);
    noise_.apply_sqrt(xi_data.subspan(to_size(first * size_), cs.size()), cs, n);
    for (std::size_t k = 0; k < cs.size(); ++k)
      cs[k] = d[k % d.size()] - cs[k];  // d - e
    space_->upload(xs, a.parameters2.data());
    space_->upload(cs, a.data.data());
    if (!mean.empty())
      for (index_t r = 0; r < n; ++r)
        space_->axpy(-1, a.data_prior.data(), a.data.data() + to_size(r * size_), to_size(size_));
    space_->apply(*F_, btt::Op::F, a.parameters2.data(), a.data2.data(), n);
    space_->axpy(-1, a.data2.data(), a.data.data(), cs.size());
    solve_and_lift(a.data.data(), a.parameters2.data(), n);
    const auto out = samples.subspan(to_size(first * parameters_), xs.size());
    space_->download(a.parameters2.data(), out);
    for (std::size_t k = 0; k < out.size(); ++k)
      out[k] += xs[k] + (mean.empty() ? 0.0 : mean[k % mean.size()]);
  }
}

}  // namespace shiftop::inverse
