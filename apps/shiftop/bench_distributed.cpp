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
#include <string>
#include <vector>

#include "bench.hpp"
#include "memory_needs.hpp"
#include "mpi_launch.hpp"
#include "random_operator.hpp"
#include "runner.hpp"
#include "shiftop/btt/distributed_plan.hpp"
#include "shiftop/btt/floor.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/core/available_memory.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/memory_bandwidth.hpp"
#include "shiftop/core/timer.hpp"
#include "shiftop/distributed/bus_bandwidth.hpp"
#include "shiftop/distributed/collective_check.hpp"
#include "shiftop/distributed/mpi_check.hpp"

namespace shiftop::app {
namespace {

using distributed::Axis;
using distributed::Collective;

/// "[bench] what..." on stderr, from rank 0 of a run that prints text.
struct Progress {
  bool shown = false;
  void operator()(const char* what) const {
    if (shown) fmt::print(stderr, "[bench] {}...\n", what);
  }
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

/// The operator of a run and its process grid.
struct Layout {
  Shape shape;  // global
  GridSelection grid;
};

/// The global shape (with --weak, --nd and --nm per grid row and column) and the grid.
Layout lay_out(const MpiSession& mpi, const BenchOptions& o) {
  Shape shape{o.nd, o.nm, o.nt};
  shape.validate();
  require(!o.weak || !(o.grid.empty() || o.grid == "auto"),
          "--weak needs --grid PRxPC: the local sizes make the global ones only on a known grid");
  GridSelection grid = select_grid(o.grid, shape, mpi);
  if (o.weak) shape = {o.nd * grid.shape.rows, o.nm * grid.shape.cols, o.nt};
  return {shape, std::move(grid)};
}

struct PhaseSamples {
  std::vector<double> broadcast, allreduce, reduce;
  std::array<std::vector<double>, 6> local;
};

/// The timed applies: each total the maximum over the ranks, each phase too.
struct ApplyTimes {
  std::vector<double> totals;
  PhaseSamples samples;
  distributed::DistributedPhaseTimes last;
};

/// --warmup applies and a check that every rank's output is finite, then --reps timed applies.
ApplyTimes time_applies(distributed::DistributedPlan& plan, Runner& runner,
                        const distributed::Grid& grid, const BenchOptions& o) {
  const bool finite = all_finite(runner.warm_up(o.warmup));
  require(min_over_ranks(finite ? 1.0 : 0.0, grid.comm()) == 1.0,
          "bench: the output has a non-finite value (unwritten or overflow)");
  ApplyTimes times;
  PhaseSamples& samples = times.samples;
  for (int k = 0; k < o.repetitions; ++k) {
    distributed::check_mpi(MPI_Barrier(grid.comm()), "MPI_Barrier");
    times.totals.push_back(max_over_ranks(runner.timed_apply(), grid.comm()));
    times.last = plan.max_phase_times();
    samples.broadcast.push_back(times.last.broadcast);
    samples.allreduce.push_back(times.last.allreduce);
    samples.reduce.push_back(times.last.reduce);
    for (std::size_t p = 0; p < samples.local.size(); ++p)
      samples.local[p].push_back(times.last.local.seconds[p]);
  }
  return times;
}

/// The ranks along `axis` of the grid: a grid row holds its columns' ranks.
int axis_ranks(const distributed::GridShape& grid, Axis axis) {
  return axis == Axis::Row ? grid.cols : grid.rows;
}

const char* axis_name(Axis axis) {
  return axis == Axis::Row ? "row" : "column";
}

double gigabytes_per_second(double bytes, double seconds) {
  return seconds > 0 ? bytes / seconds / 1e9 : 0.0;
}

/// One collective of the apply (its median time over the applies, its bytes in `groups` calls)
/// against the same collective alone at the apply's message size (collective).
nlohmann::ordered_json collective_report(distributed::DistributedPlan& plan,
                                         const distributed::GridShape& grid, Collective kind,
                                         Axis axis, const std::vector<double>& seconds,
                                         double bytes, index_t groups) {
  const int n = axis_ranks(grid, axis);
  const double t = median(seconds), factor = distributed::bus_bandwidth_factor(kind, n);
  nlohmann::ordered_json r{{"axis", axis_name(axis)}, {"ranks", n}};
  r["bytes"] = bytes;
  r["calls"] = n > 1 ? groups : 0;
  r["ms"] = t * 1e3;
  if (n == 1 || bytes == 0) return r;
  const auto message = static_cast<std::size_t>(bytes / static_cast<double>(groups));
  const double alone = plan.time_collective(kind, axis, message, 20);
  if (t > 0) {  // GPU phases are timed with --profile only
    r["algbw_GBs"] = gigabytes_per_second(bytes, t);
    r["busbw_GBs"] = factor * gigabytes_per_second(bytes, t);
  }
  r["alone_same_size_ms"] = alone * 1e3;
  r["alone_same_size_busbw_GBs"] =
      factor * gigabytes_per_second(static_cast<double>(message), alone);
  return r;
}

/// Each collective of op's apply against the same collective alone (one call per group of
/// max_rhs vectors): the report's "collectives" (collective).
nlohmann::ordered_json collective_reports(distributed::DistributedPlan& plan,
                                          const distributed::GridShape& grid, btt::Op op,
                                          const ApplyTimes& times, index_t groups) {
  const distributed::CollectiveAxes axes = distributed::collective_axes(op);
  const distributed::DistributedPhaseTimes& last = times.last;
  nlohmann::ordered_json collectives;
  collectives["broadcast"] =
      collective_report(plan, grid, Collective::Broadcast, axes.broadcast, times.samples.broadcast,
                        last.broadcast_bytes, groups);
  if (axes.allreduce)
    collectives["allreduce"] =
        collective_report(plan, grid, Collective::AllReduce, *axes.allreduce,
                          times.samples.allreduce, last.allreduce_bytes, groups);
  collectives["reduce"] = collective_report(plan, grid, Collective::Reduce, axes.reduce,
                                            times.samples.reduce, last.reduce_bytes, groups);
  return collectives;
}

/// The all-reduce and the broadcast alone at `bytes` along every axis of more than one rank:
/// the report's "collective_probe" (collective).
nlohmann::ordered_json probe_collectives(distributed::DistributedPlan& plan,
                                         const distributed::GridShape& grid, std::size_t bytes) {
  nlohmann::ordered_json probe = nlohmann::json::array();
  for (Axis axis : {Axis::Row, Axis::Column}) {
    if (axis_ranks(grid, axis) == 1) continue;
    for (Collective kind : {Collective::AllReduce, Collective::Broadcast}) {
      const double t = plan.time_collective(kind, axis, bytes, 20);
      const double algbw = gigabytes_per_second(static_cast<double>(bytes), t);
      probe.push_back(
          {{"collective", std::string(name_of(kind))},
           {"axis", axis_name(axis)},
           {"ranks", axis_ranks(grid, axis)},
           {"bytes", bytes},
           {"ms", t * 1e3},
           {"algbw_GBs", algbw},
           {"busbw_GBs", distributed::bus_bandwidth_factor(kind, axis_ranks(grid, axis)) * algbw}});
    }
  }
  return probe;
}

/// What measure() finds. Times are the maximum over the ranks, the floor bandwidth the slowest
/// rank's; x and y are this rank's input and the output of its last apply.
struct Measurement {
  double plan_seconds = 0, plan_bytes = 0;
  MemoryBandwidth bandwidth;  // this rank's
  double ceiling_GBs = 0;
  ApplyTimes times;
  index_t groups = 0;  // calls of each collective per apply
  nlohmann::ordered_json collectives, probe;
  PrecisionConfig precision;
  distributed::CommunicationPrecision messages;
  std::vector<int> devices;  // every rank's, on rank 0
  std::vector<double> x, y;
  distributed::IndexRange held;  // the global output blocks y holds
};

/// Creates the plan and times it, the memory bandwidth, the applies and the collectives alone
/// (collective).
Measurement measure(const distributed::Grid& grid, const Layout& layout,
                    distributed::IndexRange rows, distributed::IndexRange cols, btt::Op op,
                    const btt::PlanOptions& options, const BenchOptions& o,
                    const Progress& progress) {
  const Shape& shape = layout.shape;
  const bool cuda = options.backend == btt::Backend::Cuda;
  Measurement m;
  // This rank's slice, plus the larger of the bandwidth probe's arrays and the collectives'
  // probe buffer (--probe-bytes; on the device for CUDA).
  const Shape local{rows.size(), cols.size(), shape.nt};
  distributed::run_collectively(grid.comm(), [&] {
    require_available_memory(
        host_bytes(o, local, op, options) +
            std::max(probe_bytes(options.backend), cuda ? 0.0 : static_cast<double>(o.probe_bytes)),
        fmt::format("bench: {} on the slice {}", o.op, local.str()));
  });
  progress("creating the plan");
  std::optional<distributed::DistributedPlan> plan;
  {
    const std::vector<double> kernels = kernel_slice(shape, rows, cols);
    distributed::check_mpi(MPI_Barrier(grid.comm()), "MPI_Barrier");
    Stopwatch watch;
    plan.emplace(distributed::DistributedPlan::create(grid, shape, kernels, options));
    m.plan_seconds = max_over_ranks(watch.lap(), grid.comm());
  }

  progress("measuring memory bandwidth");
  distributed::run_collectively(grid.comm(), [&] {
    m.bandwidth = measure_bandwidth(options.backend, plan->device(), o.threads);
  });
  // Every rank streams its slice at once: the slowest device (or the node's share) sets the pace.
  // The read-only streaming bandwidth on both backends (issue 19: a read beats the copy rate).
  m.ceiling_GBs = min_over_ranks(m.bandwidth.read_GBs, grid.comm());

  m.x = input_slice(shape, op, plan->local_input_blocks(op), o.nrhs);
  m.held = plan->local_output_blocks(op);
  m.y.assign(static_cast<std::size_t>(o.nrhs * m.held.size() * shape.nt),
             std::numeric_limits<double>::quiet_NaN());
  std::optional<Runner> runner;
  distributed::run_collectively(grid.comm(), [&] {
    runner.emplace(*plan, op, m.x, m.y, o.nrhs, options.backend, plan->device());
  });
  progress("timing");
  m.times = time_applies(*plan, *runner, grid, o);
  runner->result();  // y

  progress("timing the collectives alone");
  m.groups = (o.nrhs + options.max_rhs - 1) / options.max_rhs;
  m.collectives = collective_reports(*plan, layout.grid.shape, op, m.times, m.groups);
  m.probe = probe_collectives(*plan, layout.grid.shape, static_cast<std::size_t>(o.probe_bytes));

  m.devices.resize(static_cast<std::size_t>(grid.size()));
  const int device = plan->device();
  distributed::check_mpi(
      MPI_Gather(&device, 1, MPI_INT, m.devices.data(), 1, MPI_INT, 0, grid.comm()), "MPI_Gather");
  m.plan_bytes = max_over_ranks(static_cast<double>(plan->memory_bytes()), grid.comm());
  m.precision = plan->precision();
  m.messages = plan->communication_precision();
  return m;
}

/// --check (collective): the relative 2-norm difference between the output, gathered on rank 0,
/// and the same operation of a single-process FP64 CPU plan (btt::Plan: none of the distributed
/// code) of the whole operator, on the same random kernels and inputs; on rank 0 only. An output
/// block no rank holds stays NaN and so makes the difference NaN.
std::optional<double> check_against_cpu(const distributed::Grid& grid, const Shape& shape,
                                        const BenchOptions& o, btt::Op op,
                                        distributed::IndexRange held,
                                        const std::vector<double>& y) {
  const bool root = grid.rank() == 0;
  const auto ranks = static_cast<std::size_t>(grid.size());
  const std::array<index_t, 2> range{held.begin, held.end};
  std::vector<index_t> ranges(root ? 2 * ranks : 0);
  distributed::check_mpi(
      MPI_Gather(range.data(), 2, MPI_INT64_T, ranges.data(), 2, MPI_INT64_T, 0, grid.comm()),
      "MPI_Gather");
  require(y.size() <= static_cast<std::size_t>(std::numeric_limits<int>::max()),
          "--check: {} output values on one rank are too many to gather", y.size());
  const int count = static_cast<int>(y.size());
  std::vector<int> counts(root ? ranks : 0), offsets(root ? ranks : 0);
  distributed::check_mpi(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, grid.comm()),
                         "MPI_Gather");
  for (std::size_t r = 1; r < counts.size(); ++r)
    offsets[r] = offsets[r - 1] + counts[r - 1];
  std::vector<double> slices(root ? static_cast<std::size_t>(offsets.back() + counts.back()) : 0);
  distributed::check_mpi(MPI_Gatherv(y.data(), count, MPI_DOUBLE, slices.data(), counts.data(),
                                     offsets.data(), MPI_DOUBLE, 0, grid.comm()),
                         "MPI_Gatherv");
  if (!root) return std::nullopt;

  const index_t nt = shape.nt, blocks = output_blocks(op, shape);
  btt::Plan reference = btt::Plan::create(
      kernel_slice(shape, {0, shape.nd}, {0, shape.nm}), shape,
      {.max_rhs = std::min<index_t>(o.nrhs, 16),
       .planning = btt::Planning::Estimate,  // a reference: its speed does not matter
       .cpu = {.threads = o.threads}});
  const std::vector<double> x = input_slice(shape, op, {0, input_blocks(op, shape)}, o.nrhs);
  std::vector<double> want(static_cast<std::size_t>(o.nrhs * blocks * nt));
  reference.apply(op, x, want, o.nrhs);
  std::vector<double> got(want.size(), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t r = 0; r < ranks; ++r) {  // rank r: [rhs][its blocks][t]
    const index_t begin = ranges[2 * r], size = ranges[2 * r + 1] - begin;
    const double* slice = slices.data() + offsets[r];
    for (index_t rhs = 0; rhs < o.nrhs; ++rhs)
      std::copy_n(slice + rhs * size * nt, size * nt, got.begin() + (rhs * blocks + begin) * nt);
  }
  return relative_difference(got, want);
}

/// What the report derives from a measurement: the median apply against the floors of the local
/// slice and of the whole operator on one device.
struct Floors {
  Shape local;       // the largest slice
  double total = 0;  // seconds, median
  double local_bytes = 0, floor = 0, single_floor = 0;
};

Floors floors(const Layout& layout, const distributed::Partition& partition, btt::Op op,
              const Measurement& m) {
  Floors f;
  f.local = partition.local_shape(0, 0);
  f.total = median(m.times.totals);
  f.local_bytes = btt::matrix_bytes(f.local, m.precision, op, m.groups);
  const double whole_bytes = btt::matrix_bytes(layout.shape, m.precision, op, m.groups);
  f.floor = f.local_bytes / (m.ceiling_GBs * 1e9);
  f.single_floor = whole_bytes / (m.ceiling_GBs * 1e9);
  return f;
}

nlohmann::ordered_json report_json(const MpiSession& mpi, const BenchOptions& o,
                                   const Layout& layout, const Measurement& m, const Floors& f,
                                   std::optional<double> error, bool cuda) {
  const Shape& shape = layout.shape;
  const PhaseSamples& samples = m.times.samples;
  const auto letter = [](Precision p) { return p == Precision::Single ? "S" : "D"; };
  nlohmann::ordered_json out;
  out["backend"] = o.backend;
  out["ranks"] = layout.grid.shape.size();
  out["grid"] = layout.grid.shape.str();
  out["grid_reason"] = layout.grid.reason;
  out["ranks_per_node"] = mpi.ranks_per_node();
  if (cuda) out["devices"] = m.devices;
  out["shape"] = {{"nd", shape.nd}, {"nm", shape.nm}, {"nt", shape.nt}};
  out["local_shape"] = {{"nd", f.local.nd}, {"nm", f.local.nm}, {"nt", f.local.nt}};
  out["weak"] = o.weak;
  out["op"] = o.op;
  out["nrhs"] = o.nrhs;
  out["precision"] = m.precision.str();
  out["message_precision"] = {{"broadcast", letter(m.messages.broadcast)},
                              {"allreduce", letter(m.messages.allreduce)},
                              {"reduce", letter(m.messages.reduce)}};
  out["profile"] = o.profile;
  out["repetitions"] = o.repetitions;
  out["plan_ms"] = m.plan_seconds * 1e3;
  out["plan_bytes"] = m.plan_bytes;
  out["total_ms"] = f.total * 1e3;
  out["per_vector_ms"] = f.total * 1e3 / static_cast<double>(o.nrhs);
  out["min_ms"] = *std::min_element(m.times.totals.begin(), m.times.totals.end()) * 1e3;
  for (std::size_t p = 0; p < samples.local.size(); ++p)
    out["phases"][std::string(name_of(static_cast<btt::ApplyPhase>(p)))] =
        median(samples.local[p]) * 1e3;
  out["phases"]["broadcast"] = median(samples.broadcast) * 1e3;
  out["phases"]["allreduce"] = median(samples.allreduce) * 1e3;
  out["phases"]["reduce"] = median(samples.reduce) * 1e3;
  out["collectives"] = m.collectives;
  out["collective_probe"] = m.probe;
  out["bytes"] = f.local_bytes;
  out["bandwidth_GBs"] = f.local_bytes / f.total / 1e9;
  out["memory_bandwidth"] = {{"read_GBs", m.bandwidth.read_GBs},
                             {"copy_GBs", m.bandwidth.copy_GBs},
                             {"slowest_rank_GBs", m.ceiling_GBs}};
  out["floor_ms"] = f.floor * 1e3;
  out["floor_bandwidth"] = "read";
  out["time_over_floor"] = f.total / f.floor;
  out["single_device_floor_ms"] = f.single_floor * 1e3;
  if (error) out["relative_error_vs_cpu_fp64"] = *error;
  return out;
}

void print_text(const BenchOptions& o, const Layout& layout, const Measurement& m, const Floors& f,
                const nlohmann::ordered_json& out, std::optional<double> error, bool cuda) {
  const distributed::GridShape& grid = layout.grid.shape;
  fmt::print("shiftop bench: {} on {} over {} ranks, grid {} ({}), nrhs {}, precision {}\n", o.op,
             layout.shape.str(), grid.size(), grid.str(), layout.grid.reason, o.nrhs,
             m.precision.str());
  fmt::print("  local slice {} (largest); plan: {:.1f} ms, {:.1f} MB on the largest rank\n",
             f.local.str(), m.plan_seconds * 1e3, m.plan_bytes / 1e6);
  fmt::print("  apply: {:.3f} ms median of {}, max over ranks ({:.3f} ms per vector)\n",
             f.total * 1e3, o.repetitions, f.total * 1e3 / static_cast<double>(o.nrhs));
  if (cuda && !o.profile) fmt::print("    (per-phase times on GPUs need --profile)\n");
  for (const auto& phase : out["phases"].items())
    fmt::print("    {:<10}{:9.3f} ms\n", phase.key(), phase.value().get<double>());
  for (const auto& entry : m.collectives.items()) {
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
  for (const auto& p : m.probe)
    fmt::print("  probe: {} of {:.0f} MB along grid {}s of {}: bus {:.1f} GB/s\n",
               p["collective"].get<std::string>(), p["bytes"].get<double>() / 1e6,
               p["axis"].get<std::string>(), p["ranks"].get<int>(), p["busbw_GBs"].get<double>());
  fmt::print(
      "  floor: local F^ {:.1f} MB / {} bandwidth {:.1f} GB/s = {:.3f} ms ({:.2f}x); the "
      "whole operator on one {}: {:.3f} ms\n",
      f.local_bytes / 1e6, "read", m.ceiling_GBs, f.floor * 1e3, f.total / f.floor,
      cuda ? "GPU" : "process", f.single_floor * 1e3);
  if (error) fmt::print("  relative error vs the CPU backend in FP64: {:.2e}\n", *error);
}

/// Rank 0: the measurement as one JSON object (--json) or as text.
void report(const MpiSession& mpi, const BenchOptions& o, const Layout& layout,
            const distributed::Partition& partition, btt::Op op, const Measurement& m,
            std::optional<double> error, bool cuda) {
  const Floors f = floors(layout, partition, op, m);
  const nlohmann::ordered_json out = report_json(mpi, o, layout, m, f, error, cuda);
  if (o.json) {
    fmt::print("{}\n", out.dump());
    return;
  }
  print_text(o, layout, m, f, out, error, cuda);
}

void run_on_grid(const MpiSession& mpi, const BenchOptions& o) {
  require(!o.device_given,
          "--device: under MPI every rank drives the GPU of its node rank (modulo the GPUs it "
          "sees); leave --device out");
  require(!o.direct, "--direct: the direct time-domain product runs in a single process only");
  const btt::Op op = parse_name<btt::Op>(o.op, "--op");
  const btt::PlanOptions options = plan_options(o);
  const bool cuda = options.backend == btt::Backend::Cuda;
  const Progress progress{.shown = mpi.rank() == 0 && !o.json};

  const Layout layout = lay_out(mpi, o);
  const distributed::Grid grid(layout.grid.shape);
  const distributed::Partition partition(layout.shape, layout.grid.shape);
  const distributed::IndexRange rows = partition.rows(grid.row()),
                                cols = partition.cols(grid.col());
  const Measurement m = measure(grid, layout, rows, cols, op, options, o, progress);
  std::optional<double> error;
  if (o.check) {
    progress("checking against a single-process CPU plan in FP64 on rank 0");
    error = check_against_cpu(grid, layout.shape, o, op, m.held, m.y);
  }
  if (mpi.rank() == 0) report(mpi, o, layout, partition, op, m, error, cuda);
}

}  // namespace

void run_distributed_bench(const BenchOptions& o) {
  const MpiSession mpi;
  run_on_grid(mpi, o);
}

}  // namespace shiftop::app
