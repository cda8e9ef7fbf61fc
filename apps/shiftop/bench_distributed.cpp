// `shiftop bench` on a process grid, under mpiexec (or with --grid): a random operator of the
// given global sizes, each rank generating only its own slice (the same numbers whatever the
// grid, and the same as the single-process bench), applied by distributed::DistributedPlan.
// Reported as the maximum over the ranks: the total time and each phase, the local plan's and the
// broadcast, all-reduce and reduce (Venkat et al., section 3.5); the bytes each collective
// moves and its bandwidth as nccl-tests defines it (bus_bandwidth.hpp), held against the same
// collective timed alone at the same message size and at a large one in the same run; and the
// memory floors of the local slice and of the whole operator on one device.
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "bench.hpp"
#include "core/memory_bandwidth.hpp"
#include "core/timer.hpp"
#include "distributed/collective_check.hpp"
#include "distributed/mpi_check.hpp"
#include "mpi_launch.hpp"
#include "random_operator.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/distributed/bus_bandwidth.hpp"
#include "shiftop/distributed/distributed_plan.hpp"
#include "shiftop/distributed/grid_choice.hpp"
#ifdef SHIFTOP_HAVE_NCCL
#include "shiftop/gpu/devices.hpp"
#endif

namespace shiftop::app {
namespace {

using distributed::Axis;
using distributed::Collective;

/// Runs one operation of the plan on its rank's vectors, host or device, and waits for it: on a
/// GPU, x is uploaded once and the device output poisoned with NaN, as in the single-process
/// bench (runner.hpp), so that the timings exclude host-device copies.
class DistributedRunner {
 public:
  DistributedRunner(distributed::DistributedPlan& plan, btt::Op op, const std::vector<double>& x,
                    std::vector<double>& y, index_t nrhs)
      : plan_(plan), op_(op), x_(x), y_(y), nrhs_(nrhs) {
    if (plan.backend() == btt::Backend::Cpu) return;
#ifdef SHIFTOP_HAVE_NCCL
    if (!x.empty()) {
      device_x_.emplace(x.size(), plan.device());
      device_x_->upload(x.data());
    }
    if (!y.empty()) {
      device_y_.emplace(y.size(), plan.device());
      const std::vector<double> poison(y.size(), std::numeric_limits<double>::quiet_NaN());
      device_y_->upload(poison.data());
    }
#endif
  }

  void apply() {
    if (plan_.backend() == btt::Backend::Cpu) {
      plan_.apply(op_, x_, y_, nrhs_);
      return;
    }
#ifdef SHIFTOP_HAVE_NCCL
    plan_.apply_device(op_, device_x_ ? device_x_->data() : nullptr,
                       device_y_ ? device_y_->data() : nullptr, nrhs_);
    gpu::synchronize(plan_.device());
#endif
  }

  const std::vector<double>& result() {
#ifdef SHIFTOP_HAVE_NCCL
    if (device_y_) device_y_->download(y_.data());
#endif
    return y_;
  }

 private:
  distributed::DistributedPlan& plan_;
  btt::Op op_;
  const std::vector<double>& x_;
  std::vector<double>& y_;
  index_t nrhs_;
#ifdef SHIFTOP_HAVE_NCCL
  std::optional<gpu::DeviceArray> device_x_, device_y_;
#endif
};

/// This rank's slice double[rows][cols][nt] of the kernels random_values(Nd*Nm*Nt, 1).
std::vector<double> kernel_slice(const Shape& s, distributed::IndexRange rows,
                                 distributed::IndexRange cols) {
  return random_pieces(1, (rows.begin * s.nm + cols.begin) * s.nt, rows.size(), s.nm * s.nt,
                       cols.size() * s.nt);
}

/// This rank's blocks of nrhs input vectors random_values(nrhs*blocks*Nt, 2).
std::vector<double> input_slice(const Shape& s, btt::Op op, distributed::IndexRange blocks,
                                index_t nrhs) {
  return random_pieces(2, blocks.begin * s.nt, nrhs, input_blocks(op, s) * s.nt,
                       blocks.size() * s.nt);
}

/// Relative 2-norm difference between y and the same operation of an FP64 CPU plan of the same
/// operator on the same grid (collective).
double error_against_cpu(const distributed::Grid& grid, const Shape& shape,
                         distributed::IndexRange rows, distributed::IndexRange cols,
                         const BenchOptions& o, btt::Op op, const std::vector<double>& x,
                         const std::vector<double>& y) {
  btt::PlanOptions options{.max_rhs = std::min<index_t>(o.nrhs, 16), .cpu = {.threads = o.threads}};
  distributed::DistributedPlan reference =
      distributed::DistributedPlan::create(grid, shape, kernel_slice(shape, rows, cols), options);
  std::vector<double> want(y.size());
  reference.apply(op, x, want, o.nrhs);
  std::array<double, 2> sums{};
  for (std::size_t k = 0; k < want.size(); ++k) {
    sums[0] += (y[k] - want[k]) * (y[k] - want[k]);
    sums[1] += want[k] * want[k];
  }
  distributed::check_mpi(
      MPI_Allreduce(MPI_IN_PLACE, sums.data(), 2, MPI_DOUBLE, MPI_SUM, grid.comm()),
      "MPI_Allreduce");
  return std::sqrt(sums[0] / sums[1]);
}

struct PhaseSamples {
  std::vector<double> broadcast, allreduce, reduce;
  std::array<std::vector<double>, 6> local;
};

void run_on_grid(const MpiSession& mpi, const BenchOptions& o) {
  require(!o.device_given,
          "--device: under MPI every rank drives the GPU of its node rank (modulo the GPUs it "
          "sees); leave --device out");
  require(!o.direct, "--direct: the direct time-domain product runs in a single process only");
  const btt::Op op = btt::parse_op(o.op);
  const btt::PlanOptions options = plan_options(o);
  const bool cuda = options.backend == btt::Backend::Cuda;
  const bool root = mpi.rank() == 0;
  const auto progress = [&](const char* what) {
    if (root && !o.json) fmt::print(stderr, "[bench] {}...\n", what);
  };

  Shape shape{o.nd, o.nm, o.nt};
  shape.validate();
  distributed::GridShape grid_shape;
  std::string grid_reason = "--grid";
  if (o.grid.empty() || o.grid == "auto") {
    require(!o.weak,
            "--weak needs --grid PRxPC: the local sizes make the global ones only on a known grid");
    const distributed::GridChoice choice =
        distributed::choose_grid(shape, mpi.size(), mpi.ranks_per_node());
    grid_shape = choice.grid;
    grid_reason = choice.reason;
  } else {
    grid_shape = distributed::GridShape::parse(o.grid);
  }
  if (o.weak) shape = {o.nd * grid_shape.rows, o.nm * grid_shape.cols, o.nt};
  const distributed::Grid grid(grid_shape);
  const distributed::Partition partition(shape, grid_shape);
  const distributed::IndexRange rows = partition.rows(grid.row()),
                                cols = partition.cols(grid.col());

  progress("creating the plan");
  std::optional<distributed::DistributedPlan> plan;
  double plan_seconds = 0;
  {
    const std::vector<double> kernels = kernel_slice(shape, rows, cols);
    distributed::check_mpi(MPI_Barrier(grid.comm()), "MPI_Barrier");
    Stopwatch watch;
    plan.emplace(distributed::DistributedPlan::create(grid, shape, kernels, options));
    plan_seconds = max_over_ranks(watch.lap(), grid.comm());
  }

  progress("measuring memory bandwidth");
  MemoryBandwidth bw;
  distributed::run_collectively(grid.comm(), [&] {
#ifdef SHIFTOP_HAVE_NCCL
    if (cuda) bw.copy_GBs = gpu::measure_copy_bandwidth_GBs(std::size_t{1} << 30, plan->device());
#endif
    if (!cuda) bw = measure_memory_bandwidth(std::size_t{512} << 20, o.threads);
  });
  // Every rank streams its slice at once: the slowest device (or the node's share) sets the pace.
  const double ceiling_GBs = min_over_ranks(cuda ? bw.copy_GBs : bw.read_GBs, grid.comm());

  const std::vector<double> x = input_slice(shape, op, plan->local_input_blocks(op), o.nrhs);
  std::vector<double> y(
      static_cast<std::size_t>(o.nrhs * plan->local_output_blocks(op).size() * shape.nt),
      std::numeric_limits<double>::quiet_NaN());
  std::optional<DistributedRunner> runner;
  distributed::run_collectively(grid.comm(), [&] { runner.emplace(*plan, op, x, y, o.nrhs); });
  progress("timing");
  for (int k = 0; k < std::max(o.warmup, 1); ++k)
    runner->apply();
  const std::vector<double>& result = runner->result();
  const bool finite =
      std::all_of(result.begin(), result.end(), [](double v) { return std::isfinite(v); });
  require(min_over_ranks(finite ? 1.0 : 0.0, grid.comm()) == 1.0,
          "bench: the output has a non-finite value (unwritten or overflow)");

  std::vector<double> totals;
  PhaseSamples samples;
  distributed::DistributedPhaseTimes last;
  for (int k = 0; k < o.repetitions; ++k) {
    distributed::check_mpi(MPI_Barrier(grid.comm()), "MPI_Barrier");
    Stopwatch watch;
    runner->apply();
    totals.push_back(max_over_ranks(watch.lap(), grid.comm()));
    last = plan->max_phase_times();
    samples.broadcast.push_back(last.broadcast);
    samples.allreduce.push_back(last.allreduce);
    samples.reduce.push_back(last.reduce);
    for (std::size_t p = 0; p < samples.local.size(); ++p)
      samples.local[p].push_back(last.local.seconds[p]);
  }
  const double total = median(totals);

  // Each collective of the apply against the same collective alone, at the apply's message size
  // (one call per group of max_rhs vectors) and at --probe-bytes.
  progress("timing the collectives alone");
  const index_t groups = (o.nrhs + options.max_rhs - 1) / options.max_rhs;
  const distributed::CollectiveAxes axes = distributed::collective_axes(op);
  const auto axis_ranks = [&](Axis axis) {
    return axis == Axis::Row ? grid_shape.cols : grid_shape.rows;
  };
  const auto axis_name = [](Axis axis) { return axis == Axis::Row ? "row" : "column"; };
  const auto gigabytes_per_second = [](double bytes, double seconds) {
    return seconds > 0 ? bytes / seconds / 1e9 : 0.0;
  };
  const auto phase_report = [&](Collective kind, Axis axis, const std::vector<double>& seconds,
                                double bytes) {
    const int n = axis_ranks(axis);
    const double t = median(seconds), factor = distributed::bus_bandwidth_factor(kind, n);
    nlohmann::ordered_json r{{"axis", axis_name(axis)}, {"ranks", n}};
    r["bytes"] = bytes;
    r["calls"] = n > 1 ? groups : 0;
    r["ms"] = t * 1e3;
    if (n == 1 || bytes == 0) return r;
    const auto message = static_cast<std::size_t>(bytes / static_cast<double>(groups));
    const double alone = plan->time_collective(kind, axis, message, 20);
    if (t > 0) {  // GPU phases are timed with --profile only
      r["algbw_GBs"] = gigabytes_per_second(bytes, t);
      r["busbw_GBs"] = factor * gigabytes_per_second(bytes, t);
    }
    r["alone_same_size_ms"] = alone * 1e3;
    r["alone_same_size_busbw_GBs"] =
        factor * gigabytes_per_second(static_cast<double>(message), alone);
    return r;
  };
  nlohmann::ordered_json collectives;
  collectives["broadcast"] =
      phase_report(Collective::Broadcast, axes.broadcast, samples.broadcast, last.broadcast_bytes);
  if (axes.allreduce)
    collectives["allreduce"] = phase_report(Collective::AllReduce, *axes.allreduce,
                                            samples.allreduce, last.allreduce_bytes);
  collectives["reduce"] =
      phase_report(Collective::Reduce, axes.reduce, samples.reduce, last.reduce_bytes);
  nlohmann::ordered_json probe = nlohmann::json::array();
  for (Axis axis : {Axis::Row, Axis::Column}) {
    if (axis_ranks(axis) == 1) continue;
    for (Collective kind : {Collective::AllReduce, Collective::Broadcast}) {
      const auto bytes = static_cast<std::size_t>(o.probe_bytes);
      const double t = plan->time_collective(kind, axis, bytes, 20);
      const double algbw = gigabytes_per_second(static_cast<double>(bytes), t);
      probe.push_back(
          {{"collective", std::string(distributed::to_string(kind))},
           {"axis", axis_name(axis)},
           {"ranks", axis_ranks(axis)},
           {"bytes", bytes},
           {"ms", t * 1e3},
           {"algbw_GBs", algbw},
           {"busbw_GBs", distributed::bus_bandwidth_factor(kind, axis_ranks(axis)) * algbw}});
    }
  }

  std::optional<double> error;
  if (o.check) {
    progress("checking against the CPU backend in FP64 on the same grid");
    error = error_against_cpu(grid, shape, rows, cols, o, op, x, runner->result());
  }

  std::vector<int> devices(static_cast<std::size_t>(grid.size()));
  const int device = plan->device();
  distributed::check_mpi(
      MPI_Gather(&device, 1, MPI_INT, devices.data(), 1, MPI_INT, 0, grid.comm()), "MPI_Gather");
  const double plan_bytes = max_over_ranks(static_cast<double>(plan->memory_bytes()), grid.comm());
  if (!root) return;

  const Shape local = partition.local_shape(0, 0);  // the largest slice
  const PrecisionConfig& precision = plan->precision();
  const double local_bytes = matrix_bytes(local, precision, op, groups);
  const double whole_bytes = matrix_bytes(shape, precision, op, groups);
  const double floor = local_bytes / (ceiling_GBs * 1e9);
  const double single_floor = whole_bytes / (ceiling_GBs * 1e9);
  const distributed::CommunicationPrecision messages = plan->communication_precision();
  const auto letter = [](Precision p) { return p == Precision::Single ? "S" : "D"; };

  nlohmann::ordered_json out;
  out["backend"] = o.backend;
  out["ranks"] = grid.size();
  out["grid"] = grid_shape.str();
  out["grid_reason"] = grid_reason;
  out["ranks_per_node"] = mpi.ranks_per_node();
  if (cuda) out["devices"] = devices;
  out["shape"] = {{"nd", shape.nd}, {"nm", shape.nm}, {"nt", shape.nt}};
  out["local_shape"] = {{"nd", local.nd}, {"nm", local.nm}, {"nt", local.nt}};
  out["weak"] = o.weak;
  out["op"] = o.op;
  out["nrhs"] = o.nrhs;
  out["precision"] = precision.str();
  out["message_precision"] = {{"broadcast", letter(messages.broadcast)},
                              {"allreduce", letter(messages.allreduce)},
                              {"reduce", letter(messages.reduce)}};
  out["profile"] = o.profile;
  out["repetitions"] = o.repetitions;
  out["plan_ms"] = plan_seconds * 1e3;
  out["plan_bytes"] = plan_bytes;
  out["total_ms"] = total * 1e3;
  out["per_vector_ms"] = total * 1e3 / static_cast<double>(o.nrhs);
  out["min_ms"] = *std::min_element(totals.begin(), totals.end()) * 1e3;
  for (std::size_t p = 0; p < samples.local.size(); ++p)
    out["phases"][std::string(btt::kApplyPhaseNames[p])] = median(samples.local[p]) * 1e3;
  out["phases"]["broadcast"] = median(samples.broadcast) * 1e3;
  out["phases"]["allreduce"] = median(samples.allreduce) * 1e3;
  out["phases"]["reduce"] = median(samples.reduce) * 1e3;
  out["collectives"] = collectives;
  out["collective_probe"] = probe;
  out["bytes"] = local_bytes;
  out["bandwidth_GBs"] = local_bytes / total / 1e9;
  out["memory_bandwidth"] = {
      {"read_GBs", bw.read_GBs}, {"copy_GBs", bw.copy_GBs}, {"slowest_rank_GBs", ceiling_GBs}};
  out["floor_ms"] = floor * 1e3;
  out["floor_bandwidth"] = cuda ? "device copy" : "read";
  out["time_over_floor"] = total / floor;
  out["single_device_floor_ms"] = single_floor * 1e3;
  if (error) out["relative_error_vs_cpu_fp64"] = *error;

  if (o.json) {
    fmt::print("{}\n", out.dump());
    return;
  }
  fmt::print("shiftop bench: {} on {} over {} ranks, grid {} ({}), nrhs {}, precision {}\n", o.op,
             shape.str(), grid.size(), grid_shape.str(), grid_reason, o.nrhs, precision.str());
  fmt::print("  local slice {} (largest); plan: {:.1f} ms, {:.1f} MB on the largest rank\n",
             local.str(), plan_seconds * 1e3, plan_bytes / 1e6);
  fmt::print("  apply: {:.3f} ms median of {}, max over ranks ({:.3f} ms per vector)\n",
             total * 1e3, o.repetitions, total * 1e3 / static_cast<double>(o.nrhs));
  if (cuda && !o.profile) fmt::print("    (per-phase times on GPUs need --profile)\n");
  for (const auto& phase : out["phases"].items())
    fmt::print("    {:<10}{:9.3f} ms\n", phase.key(), phase.value().get<double>());
  for (const auto& entry : collectives.items()) {
    const auto& r = entry.value();
    if (r["ranks"].get<int>() == 1) continue;
    fmt::print("  {} along grid {}s of {}: {:.2f} MB in {} calls", entry.key(),
               r["axis"].get<std::string>(), r["ranks"].get<int>(), r["bytes"].get<double>() / 1e6,
               r["calls"].get<index_t>());
    if (r.contains("busbw_GBs")) fmt::print(", bus {:.1f} GB/s", r["busbw_GBs"].get<double>());
    if (r.contains("alone_same_size_busbw_GBs"))
      fmt::print(" (alone at that size {:.1f} GB/s)", r["alone_same_size_busbw_GBs"].get<double>());
    fmt::print("\n");
  }
  for (const auto& p : probe)
    fmt::print("  probe: {} of {:.0f} MB along grid {}s of {}: bus {:.1f} GB/s\n",
               p["collective"].get<std::string>(), p["bytes"].get<double>() / 1e6,
               p["axis"].get<std::string>(), p["ranks"].get<int>(), p["busbw_GBs"].get<double>());
  fmt::print(
      "  floor: local F^ {:.1f} MB / {} bandwidth {:.1f} GB/s = {:.3f} ms ({:.2f}x); the "
      "whole operator on one {}: {:.3f} ms\n",
      local_bytes / 1e6, cuda ? "copy" : "read", ceiling_GBs, floor * 1e3, total / floor,
      cuda ? "GPU" : "process", single_floor * 1e3);
  if (error) fmt::print("  relative error vs the CPU backend in FP64: {:.2e}\n", *error);
}

}  // namespace

void run_distributed_bench(const BenchOptions& o) {
  const MpiSession mpi;
  run_on_grid(mpi, o);
}

}  // namespace shiftop::app
