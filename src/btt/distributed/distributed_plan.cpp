#include "shiftop/btt/distributed_plan.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

#include "btt/passes.hpp"
#include "distributed/device_space.hpp"
#include "distributed/mpi_collectives.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/timer.hpp"
#include "shiftop/distributed/collective_check.hpp"
#include "shiftop/distributed/mpi_check.hpp"
#include "shiftop/gpu/context.hpp"
#include "shiftop/gpu/devices.hpp"
#ifdef SHIFTOP_HAVE_NCCL
#include "distributed/nccl_collectives.hpp"
#endif

namespace shiftop::distributed {
namespace {

/// How one operation travels through the grid: its passes (btt/passes.hpp), the axis its input
/// is broadcast along, for F*F / FF* the axis the middle vector is all-reduced along, and the
/// axis its output is reduced along.
struct Route {
  btt::Passes passes;
  Axis broadcast;
  Axis middle;  // read only when chained
  Axis reduce;
};

Route route_of(btt::Op op) {
  const btt::Passes passes = btt::passes_of(op);
  // Local F sums over the parameter blocks of a rank's columns: its output (data blocks) is
  // reduced across the grid row and its input broadcast down the grid column; F* the mirror.
  const auto reduced_along = [](bool adjoint) { return adjoint ? Axis::Column : Axis::Row; };
  return {.passes = passes,
          .broadcast = reduced_along(!passes.first_adjoint),
          .middle = reduced_along(passes.first_adjoint),
          .reduce = reduced_along(passes.last_adjoint())};
}

std::size_t value_bytes(Precision p) {
  return p == Precision::Single ? sizeof(float) : sizeof(double);
}

bool overlaps(const double* a, index_t a_count, const double* b, index_t b_count) {
  return a_count > 0 && b_count > 0 && a < b + b_count && b < a + a_count;
}

/// The GPU of this rank: the context the caller gave, or else the node's ranks take the node's
/// GPUs in turn.
std::unique_ptr<DeviceSpace> make_gpu_space(const Grid& grid,
                                            std::shared_ptr<gpu::Context> context) {
#ifdef SHIFTOP_HAVE_NCCL
  if (context != nullptr) return make_device_space(std::move(context));
  const int devices = gpu::device_count();
  require(devices > 0,
          "grid rank ({}, {}) sees no CUDA device: the distributed plan with Backend::Cuda runs "
          "one rank per GPU",
          grid.row(), grid.col());
  return make_device_space(gpu::Context::create(grid.node_rank() % devices));
#else
  (void)grid;
  (void)context;
  fail(
      "this shiftop was built without NCCL: the distributed plan on GPUs needs CUDA, MPI and NCCL "
      "(configure with -DSHIFTOP_ENABLE_NCCL=ON); use Backend::Cpu");
#endif
}

/// MPI on host buffers, or NCCL on the device buffers of `device`.
std::unique_ptr<Collectives> make_collectives(const Grid& grid, DeviceSpace* device) {
#ifdef SHIFTOP_HAVE_NCCL
  if (device != nullptr)
    return std::make_unique<NcclCollectives>(grid, device->device(), device->stream());
#else
  (void)device;  // always null: make_gpu_space makes none without NCCL
#endif
  return std::make_unique<MpiCollectives>(grid);
}

/// Every rank must build the same operator with the same grouping and precision: a rank that
/// disagrees would send messages of another size or type into the same collective.
void check_same_on_every_rank(const Grid& grid, const Shape& shape, bool triangular,
                              const PrecisionConfig& precision, index_t max_rhs) {
  std::int64_t bits = 0;
  for (int p = 0; p < 5; ++p)
    bits |= std::int64_t{precision[static_cast<Phase>(p)] == Precision::Single} << p;
  const std::array<std::int64_t, 6> mine = {shape.nd,           shape.nm, shape.nt,
                                            triangular ? 1 : 0, bits,     max_rhs};
  std::array<std::int64_t, 6> low{}, high{};
  check_mpi(MPI_Allreduce(mine.data(), low.data(), 6, MPI_INT64_T, MPI_MIN, grid.comm()),
            "MPI_Allreduce");
  check_mpi(MPI_Allreduce(mine.data(), high.data(), 6, MPI_INT64_T, MPI_MAX, grid.comm()),
            "MPI_Allreduce");
  require(low == high,
          "the ranks of grid {} disagree on the operator: every rank must pass the same shape "
          "(here {}), kind ({}), precision ({}) and max_rhs ({})",
          grid.shape().str(), shape.str(), triangular ? "triangular" : "general", precision.str(),
          max_rhs);
}

/// The partition of `shape` over the grid; a bad shape on any rank throws on every rank.
Partition partition_on_every_rank(const Grid& grid, const Shape& shape) {
  std::optional<Partition> partition;
  run_collectively(grid.comm(), [&] { partition.emplace(shape, grid.shape()); });
  return *partition;
}

}  // namespace

double DistributedPhaseTimes::total() const {
  return broadcast + allreduce + reduce + local.total();
}

CommunicationPrecision communication_precision(const PrecisionConfig& precision) {
  return {.broadcast = precision[Phase::Pad],
          .allreduce = precision[Phase::Unpad],
          .reduce = precision[Phase::Unpad]};
}

CollectiveAxes collective_axes(btt::Op op) {
  const Route route = route_of(op);
  return {route.broadcast, route.passes.chained ? std::optional(route.middle) : std::nullopt,
          route.reduce};
}

DistributedPlan DistributedPlan::create(const Grid& grid, const Shape& shape,
                                        std::span<const double> local_kernels,
                                        const btt::PlanOptions& options) {
  return DistributedPlan(grid, shape, true, local_kernels, {}, options);
}

DistributedPlan DistributedPlan::create_general(const Grid& grid, const Shape& shape,
                                                std::span<const double> local_first_column,
                                                std::span<const double> local_first_row,
                                                const btt::PlanOptions& options) {
  return DistributedPlan(grid, shape, false, local_first_column, local_first_row, options);
}

DistributedPlan::DistributedPlan(const Grid& grid, const Shape& shape, bool triangular,
                                 std::span<const double> first_column,
                                 std::span<const double> first_row, const btt::PlanOptions& options)
    : grid_(&grid),
      partition_(partition_on_every_rank(grid, shape)),
      triangular_(triangular),
      max_rhs_(options.max_rhs) {
  run_collectively(grid.comm(), [&] {
    precision_ = PrecisionConfig::parse(options.precision);
    require(options.max_rhs >= 1, "invalid max_rhs {}: expected at least 1", options.max_rhs);
  });
  check_same_on_every_rank(grid, shape, triangular, precision_, max_rhs_);
  btt::PlanOptions local_options = options;
  // The memory space, then (once every rank has one) the collectives, which NCCL creates
  // collectively: a rank without a GPU must not leave the others waiting in ncclCommInitRank.
  run_collectively(grid.comm(), [&] {
    if (options.backend == btt::Backend::Cuda) {
      std::unique_ptr<DeviceSpace> device = make_gpu_space(grid, options.gpu.context);
      device_ = device.get();
      local_options.gpu.context = device->context();
      space_ = std::move(device);
    } else {
      space_ = make_host_space();
    }
  });
  time_collectives_ = device_ == nullptr || options.gpu_engine.profile;
  run_collectively(grid.comm(), [&] { collectives_ = make_collectives(grid, device_); });
  run_collectively(grid.comm(), [&] {
    const Shape local = partition_.local_shape(grid.row(), grid.col());
    const auto expected = static_cast<std::size_t>(local.kernel_size());
    const auto where = [&] {
      return fmt::format(
          "grid rank ({}, {}) owns observation blocks [{}, {}) and parameter "
          "blocks [{}, {}) of {}",
          grid.row(), grid.col(), partition_.rows(grid.row()).begin,
          partition_.rows(grid.row()).end, partition_.cols(grid.col()).begin,
          partition_.cols(grid.col()).end, shape.str());
    };
    require(first_column.size() == expected,
            "its first block column slice holds {} values, expected nd*nm*Nt = {}: {}",
            first_column.size(), expected, where());
    require(triangular || first_row.size() == expected,
            "its first block row slice holds {} values, expected nd*nm*Nt = {}: {}",
            first_row.size(), expected, where());
    if (expected > 0)
      local_.emplace(
          triangular ? btt::Plan::create(first_column, local, local_options)
                     : btt::Plan::create_general(first_column, first_row, local, local_options));
    // Only the non-roots of a collective receive or send from workspace (roots use x and y):
    // F and F*F broadcast parameter blocks down columns and F* and F*F reduce them there, F* and
    // FF* broadcast data blocks across rows and F and FF* reduce them there.
    const index_t per_vector = max_rhs_ * shape.nt;
    const index_t received = std::max(grid.row() > 0 ? local.nm : 0, grid.col() > 0 ? local.nd : 0);
    input_ = space_->allocate<double>(static_cast<std::size_t>(received * per_vector));
    output_ = space_->allocate<double>(static_cast<std::size_t>(received * per_vector));
    middle_ = space_->allocate<double>(
        static_cast<std::size_t>(std::max(local.nd, local.nm) * per_vector));
    allocate_fp32_buffer();
  });
}

bool DistributedPlan::is_root(Axis axis) const {
  return (axis == Axis::Row ? grid_->col() : grid_->row()) == 0;
}

int DistributedPlan::axis_size(Axis axis) const {
  return axis == Axis::Row ? grid_->shape().cols : grid_->shape().rows;
}

index_t DistributedPlan::local_blocks(bool adjoint, bool input) const {
  // Local F maps the nm_j parameter blocks to the nd_i data blocks; F* the other way.
  const bool data_side = adjoint == input;
  return data_side ? partition_.rows(grid_->row()).size() : partition_.cols(grid_->col()).size();
}

IndexRange DistributedPlan::local_input_blocks(btt::Op op) const {
  const Route route = route_of(op);
  if (!is_root(route.broadcast)) return {};
  return route.passes.first_adjoint ? partition_.rows(grid_->row()) : partition_.cols(grid_->col());
}

IndexRange DistributedPlan::local_output_blocks(btt::Op op) const {
  const Route route = route_of(op);
  if (!is_root(route.reduce)) return {};
  return route.passes.last_adjoint() ? partition_.cols(grid_->col())
                                     : partition_.rows(grid_->row());
}

void DistributedPlan::allocate_fp32_buffer() {
  const CommunicationPrecision p = communication_precision();
  const bool needed = p.broadcast == Precision::Single || p.allreduce == Precision::Single ||
                      p.reduce == Precision::Single;
  if (needed && message32_.size() == 0)
    message32_ = space_->allocate<float>(middle_.size());
  else if (!needed)
    message32_ = SpaceArray<float>();
}

void DistributedPlan::set_precision(std::string_view precision) {
  std::optional<PrecisionConfig> parsed;
  run_collectively(grid_->comm(), [&] { parsed = PrecisionConfig::parse(precision); });
  check_same_on_every_rank(*grid_, shape(), triangular_, *parsed, max_rhs_);
  run_collectively(grid_->comm(), [&] {
    if (local_) local_->set_precision(precision);
    precision_ = *parsed;
    allocate_fp32_buffer();
  });
}

CommunicationPrecision DistributedPlan::communication_precision() const {
  return distributed::communication_precision(precision_);
}

int DistributedPlan::device() const {
  return device_ != nullptr ? device_->device() : -1;
}

index_t DistributedPlan::input_count(btt::Op op, index_t nrhs) const {
  return nrhs * local_input_blocks(op).size() * shape().nt;
}

index_t DistributedPlan::output_count(btt::Op op, index_t nrhs) const {
  return nrhs * local_output_blocks(op).size() * shape().nt;
}

void DistributedPlan::apply(btt::Op op, std::span<const double> x, std::span<double> y,
                            index_t nrhs) {
  require(nrhs >= 1, "invalid number of right-hand sides {}: expected at least 1", nrhs);
  const Route route = route_of(op);
  const auto holder = [&](Axis axis, bool data) -> std::string {
    if (is_root(axis)) return "its blocks";
    return data ? "nothing: data vectors live on grid column 0"
                : "nothing: parameter vectors live on grid row 0";
  };
  require(static_cast<index_t>(x.size()) == input_count(op, nrhs),
          "input of {} on grid rank ({}, {}) has {} values, expected {} ({})", name_of(op),
          grid_->row(), grid_->col(), x.size(), input_count(op, nrhs),
          holder(route.broadcast, route.passes.first_adjoint));
  require(static_cast<index_t>(y.size()) == output_count(op, nrhs),
          "output of {} on grid rank ({}, {}) has {} values, expected {} ({})", name_of(op),
          grid_->row(), grid_->col(), y.size(), output_count(op, nrhs),
          holder(route.reduce, !route.passes.last_adjoint()));
  require(
      !overlaps(x.data(), static_cast<index_t>(x.size()), y.data(), static_cast<index_t>(y.size())),
      "input and output of {} overlap in memory: apply is out-of-place", name_of(op));
  if (device_ == nullptr) {
    run(op, x.data(), y.data(), nrhs);
    return;
  }
  SpaceArray<double> device_x, device_y;
  run_collectively(grid_->comm(), [&] {
    device_x = space_->allocate<double>(x.size());
    device_y = space_->allocate<double>(y.size());
  });
  device_->copy_to_device(device_x.data(), x.data(), x.size());
  run(op, device_x.data(), device_y.data(), nrhs);
  device_->copy_to_host(y.data(), device_y.data(), y.size());
  device_->synchronize();
}

void DistributedPlan::apply_device(btt::Op op, const double* x, double* y, index_t nrhs,
                                   void* stream) {
  require(device_ != nullptr,
          "apply_device needs a distributed plan with Backend::Cuda; this one runs on the CPU");
  require(nrhs >= 1, "invalid number of right-hand sides {}: expected at least 1", nrhs);
  const index_t in = input_count(op, nrhs), out = output_count(op, nrhs);
  require((in == 0 || x != nullptr) && (out == 0 || y != nullptr),
          "apply_device of {} on grid rank ({}, {}): null input or output pointer for {} and {} "
          "values",
          name_of(op), grid_->row(), grid_->col(), in, out);
  require(!overlaps(x, in, y, out),
          "input and output of {} overlap in memory: apply is out-of-place", name_of(op));
  device_->wait_for(stream);
  run(op, x, y, nrhs);
  device_->signal(stream);
}

void DistributedPlan::run(btt::Op op, const double* x, double* y, index_t nrhs) {
  const Route route = route_of(op);
  const index_t nt = shape().nt;
  const index_t in_blocks = local_input_blocks(op).size();
  const index_t out_blocks = local_output_blocks(op).size();
  times_ = {};
  const index_t first_in = local_blocks(route.passes.first_adjoint, true);
  const index_t middle = local_blocks(route.passes.first_adjoint, false);
  const index_t last_out = local_blocks(route.passes.last_adjoint(), false);
  btt::for_each_group(nrhs, max_rhs_, [&](index_t r0, index_t g) {
    const double* x_group = in_blocks == 0 ? nullptr : x + r0 * in_blocks * nt;
    double* y_group = out_blocks == 0 ? nullptr : y + r0 * out_blocks * nt;
    const double* input = receive_input(route.broadcast, x_group, g * first_in * nt);
    double* local = is_root(route.reduce) ? y_group : output_.data();
    btt::run_passes(
        op, input, middle_.data(), local,
        [&](bool adjoint, const double* in, double* out) { apply_local(adjoint, in, out, g); },
        [&] { allreduce_middle(route.middle, g * middle * nt); });
    reduce_output(route.reduce, local, y_group, g * last_out * nt);
  });
}

template <typename Work>
void DistributedPlan::timed(double& seconds, Work&& collective) {
  if (!time_collectives_) {
    collective();
    return;
  }
  space_->synchronize();
  Stopwatch watch;
  collective();
  space_->synchronize();
  seconds += watch.lap();
}

const double* DistributedPlan::receive_input(Axis axis, const double* x, index_t count) {
  if (axis_size(axis) == 1) return x;
  const bool root = is_root(axis);
  const Precision type = communication_precision().broadcast;
  timed(times_.broadcast, [&] {
    if (type == Precision::Double) {
      // The root's buffer is only read: the caller's input itself.
      double* buffer = root ? const_cast<double*>(x) : input_.data();
      collectives_->broadcast(std::span(buffer, static_cast<std::size_t>(count)), axis);
    } else {
      if (root) space_->convert(x, message32_.data(), count);
      collectives_->broadcast(std::span(message32_.data(), static_cast<std::size_t>(count)), axis);
      if (!root) space_->convert(message32_.data(), input_.data(), count);
    }
  });
  times_.broadcast_bytes += static_cast<double>(count) * static_cast<double>(value_bytes(type));
  return root ? x : input_.data();
}

void DistributedPlan::apply_local(bool adjoint, const double* x, double* y, index_t nrhs) {
  if (!local_) {  // this rank owns no kernels: its share of every sum is zero
    space_->fill_zero(y, nrhs * local_blocks(adjoint, false) * shape().nt);
    return;
  }
  space_->apply(*local_, adjoint ? btt::Op::Fadj : btt::Op::F, x, y, nrhs);
  const btt::PhaseTimes t = local_->last_phase_times();
  for (std::size_t p = 0; p < t.seconds.size(); ++p)
    times_.local.seconds[p] += t.seconds[p];
}

void DistributedPlan::allreduce_middle(Axis axis, index_t count) {
  if (axis_size(axis) == 1) return;
  const Precision type = communication_precision().allreduce;
  timed(times_.allreduce, [&] {
    if (type == Precision::Double) {
      collectives_->allreduce_sum(std::span(middle_.data(), static_cast<std::size_t>(count)), axis);
    } else {
      space_->convert(middle_.data(), message32_.data(), count);
      collectives_->allreduce_sum(std::span(message32_.data(), static_cast<std::size_t>(count)),
                                  axis);
      space_->convert(message32_.data(), middle_.data(), count);
    }
  });
  times_.allreduce_bytes += static_cast<double>(count) * static_cast<double>(value_bytes(type));
}

void DistributedPlan::reduce_output(Axis axis, double* local, double* y, index_t count) {
  if (axis_size(axis) == 1) return;  // the root's local result is already in y
  const Precision type = communication_precision().reduce;
  timed(times_.reduce, [&] {
    if (type == Precision::Double) {
      collectives_->reduce_sum(std::span(local, static_cast<std::size_t>(count)), axis);
    } else {
      space_->convert(local, message32_.data(), count);
      collectives_->reduce_sum(std::span(message32_.data(), static_cast<std::size_t>(count)), axis);
      if (is_root(axis)) space_->convert(message32_.data(), y, count);
    }
  });
  times_.reduce_bytes += static_cast<double>(count) * static_cast<double>(value_bytes(type));
}

double DistributedPlan::time_collective(Collective collective, Axis axis, std::size_t bytes,
                                        int repetitions) {
  require(repetitions >= 1, "invalid number of repetitions {}: expected at least 1", repetitions);
  if (axis_size(axis) == 1) return 0.0;
  const std::size_t count = bytes / sizeof(double);
  SpaceArray<double> buffer;
  run_collectively(grid_->comm(), [&] {
    buffer = space_->allocate<double>(count);
    space_->fill_zero(buffer.data(), static_cast<index_t>(count));
  });
  const std::span values(buffer.data(), count);
  const auto call = [&] {
    switch (collective) {
      case Collective::Broadcast:
        collectives_->broadcast(values, axis);
        break;
      case Collective::Reduce:
        collectives_->reduce_sum(values, axis);
        break;
      case Collective::AllReduce:
        collectives_->allreduce_sum(values, axis);
        break;
    }
  };
  call();  // NCCL sets up its channels on the first call
  space_->synchronize();
  check_mpi(MPI_Barrier(grid_->comm()), "MPI_Barrier");
  Stopwatch watch;
  for (int k = 0; k < repetitions; ++k)
    call();
  space_->synchronize();
  double seconds = watch.lap() / repetitions;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, grid_->comm()),
            "MPI_Allreduce");
  return seconds;
}

DistributedPhaseTimes DistributedPlan::max_phase_times() const {
  constexpr std::size_t kLocal = std::tuple_size_v<decltype(btt::PhaseTimes::seconds)>;
  std::array<double, 6 + kLocal> values{times_.broadcast,       times_.allreduce,
                                        times_.reduce,          times_.broadcast_bytes,
                                        times_.allreduce_bytes, times_.reduce_bytes};
  std::copy(times_.local.seconds.begin(), times_.local.seconds.end(), values.begin() + 6);
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE,
                          MPI_MAX, grid_->comm()),
            "MPI_Allreduce");
  DistributedPhaseTimes out{values[0], values[1], values[2], values[3], values[4], values[5], {}};
  std::copy(values.begin() + 6, values.end(), out.local.seconds.begin());
  return out;
}

std::size_t DistributedPlan::memory_bytes() const {
  return (local_ ? local_->memory_bytes() : 0) + input_.bytes() + middle_.bytes() +
         output_.bytes() + message32_.bytes();
}

}  // namespace shiftop::distributed
