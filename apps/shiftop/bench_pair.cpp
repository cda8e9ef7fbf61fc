// `shiftop bench --op GadjF|FGadj`: the operator pair (btt::OperatorPair) of two random operators,
// F (Nd x Nm) and G (Nq x Nm, --nq, default Nd), in one call against the same two passes as two
// separate calls of the plans, F then G* (or G* then F) through a vector of all nrhs middles. Both
// are timed on the backend's own memory (device arrays on the GPU, as `bench` times F); on the GPU
// also from host arrays, where the two separate Plan::apply calls copy the middle vector to the
// host and back and the pair keeps it on the device. The floor is the bytes of F^ and G^ read (once
// per group of max_rhs vectors) over the read bandwidth measured in the same run.
#include <fmt/core.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <vector>

#include "bench.hpp"
#include "commands.hpp"
#include "memory_needs.hpp"
#include "random_operator.hpp"
#include "runner.hpp"
#include "shiftop/btt/floor.hpp"
#include "shiftop/btt/pair.hpp"
#include "shiftop/core/available_memory.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/timer.hpp"
#include "shiftop/gpu/context.hpp"
#ifdef SHIFTOP_HAVE_CUDA
#include "shiftop/gpu/devices.hpp"
#endif

namespace shiftop::app {
namespace {

// The pair as Runner sees a plan: one fixed operation (Runner's btt::Op is not used).
struct OneCall {
  btt::OperatorPair& pair;
  btt::PairOp op;
  void apply(btt::Op, std::span<const double> x, std::span<double> y, index_t nrhs) {
    pair.apply(op, x, y, nrhs);
  }
  void apply_device(btt::Op, const double* x, double* y, index_t nrhs) {
    pair.apply_device(op, x, y, nrhs);
  }
};

// The same product as two calls of the plans, each over all nrhs vectors, through `middle` (host)
// or `device_middle` (a device array of the same size, on the GPU).
struct TwoCalls {
  btt::Plan& first;
  btt::Op first_op;
  btt::Plan& second;
  btt::Op second_op;
  std::vector<double>& middle;
  double* device_middle;
  void apply(btt::Op, std::span<const double> x, std::span<double> y, index_t nrhs) {
    first.apply(first_op, x, middle, nrhs);
    second.apply(second_op, middle, y, nrhs);
  }
  void apply_device(btt::Op, const double* x, double* y, index_t nrhs) {
    first.apply_device(first_op, x, device_middle, nrhs);
    second.apply_device(second_op, device_middle, y, nrhs);
  }
};

}  // namespace

void run_pair_bench(const BenchOptions& o) {
  const btt::PairOp op = parse_name<btt::PairOp>(o.op, "--op");
  require(op == btt::PairOp::GadjF || op == btt::PairOp::FGadj,
          "bench --op {}: expected GadjF or FGadj for an operator pair (G alone is `bench --op "
          "F`)",
          o.op);
  const index_t nq = o.nq == 0 ? o.nd : o.nq;
  require(op == btt::PairOp::FGadj || nq == o.nd,
          "bench --op GadjF: --nq {} must equal --nd {} (G* applies to F's output)", nq, o.nd);
  const Shape f_shape{o.nd, o.nm, o.nt}, g_shape{nq, o.nm, o.nt};
  f_shape.validate();
  g_shape.validate();
  btt::PlanOptions options = plan_options(o);
  const bool cuda = options.backend == btt::Backend::Cuda;
  const index_t in = op == btt::PairOp::GadjF ? o.nm : nq;
  const index_t mid = op == btt::PairOp::GadjF ? o.nd : o.nm;
  const index_t out = op == btt::PairOp::GadjF ? o.nm : o.nd;
  // Kernels of both, two plans, x, y (twice: one call and two calls), the two calls' middle.
  const double vectors =
      double_bytes(static_cast<double>(o.nrhs * o.nt) * static_cast<double>(in + 2 * out + mid));
  require_available_memory(
      double_bytes(static_cast<double>(f_shape.kernel_size() + g_shape.kernel_size())) +
          static_cast<double>(btt::Plan::host_bytes(f_shape, options)) +
          static_cast<double>(btt::Plan::host_bytes(g_shape, options)) + vectors +
          probe_bytes(options.backend),
      fmt::format("bench: {} on F {} and G {}", o.op, f_shape.str(), g_shape.str()));
  const auto progress = [&](const char* what) {
    if (!o.json) fmt::print(stderr, "[bench] {}...\n", what);
  };

  progress("measuring memory bandwidth");
  const MemoryBandwidth bw = measure_bandwidth(options.backend, o.device, o.threads);
  const double ceiling_GBs = bw.read_GBs;  // read-only streaming on both backends (issue 19)
  progress("creating the plans");
  if (cuda) options.gpu.context = gpu::context_for(options.gpu);
  const std::vector<double> f_kernels = random_values(f_shape.kernel_size(), 1);
  const std::vector<double> g_kernels = random_values(g_shape.kernel_size(), 3);
  Stopwatch watch;
  btt::OperatorPair pair =
      btt::OperatorPair::create(f_kernels, f_shape, g_kernels, g_shape, options);
  const double plan_seconds = watch.lap();

  const std::vector<double> x = random_values(o.nrhs * in * o.nt, 2);
  const auto nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> y(static_cast<std::size_t>(o.nrhs * out * o.nt), nan), y2(y.size(), nan);
  std::vector<double> middle(static_cast<std::size_t>(o.nrhs * mid * o.nt));
  btt::Plan& f = *pair.f_plan();
  btt::Plan& g = *pair.g_plan();
  double* device_middle = nullptr;
#ifdef SHIFTOP_HAVE_CUDA
  std::optional<gpu::DeviceArray> device_middle_array;
  if (cuda) device_middle = device_middle_array.emplace(middle.size(), o.device).data();
#endif
  OneCall one{pair, op};
  TwoCalls two = op == btt::PairOp::GadjF
                     ? TwoCalls{f, btt::Op::F, g, btt::Op::Fadj, middle, device_middle}
                     : TwoCalls{g, btt::Op::Fadj, f, btt::Op::F, middle, device_middle};
  progress("timing one call and two calls, alternately");
  Runner one_runner(one, btt::Op::F, x, y, o.nrhs, options.backend, o.device);
  Runner two_runner(two, btt::Op::F, x, y2, o.nrhs, options.backend, o.device);
  const std::vector<double>& one_result = one_runner.warm_up(o.warmup);
  require(all_finite(one_result), "bench: the output has a non-finite value");
  const std::vector<double>& two_result = two_runner.warm_up(o.warmup);
  // Alternated, so that both see the same machine (other processes, clock changes).
  std::vector<double> one_times, two_times;
  for (int k = 0; k < o.repetitions; ++k) {
    one_times.push_back(one_runner.timed_apply());
    two_times.push_back(two_runner.timed_apply());
  }
  const double one_seconds = median(one_times), two_seconds = median(two_times);
  const index_t passes = (o.nrhs + options.max_rhs - 1) / options.max_rhs;
  const double bytes = btt::matrix_bytes(f_shape, f.precision(), btt::Op::F, passes) +
                       btt::matrix_bytes(g_shape, g.precision(), btt::Op::F, passes);
  const double floor = bytes / (ceiling_GBs * 1e9);
  nlohmann::ordered_json json;
  json["backend"] = o.backend;
  json["op"] = o.op;
  json["shape"] = {{"nd", o.nd}, {"nm", o.nm}, {"nt", o.nt}};
  json["aux_shape"] = {{"nd", nq}, {"nm", o.nm}, {"nt", o.nt}};
  json["nrhs"] = o.nrhs;
  json["max_rhs"] = options.max_rhs;
  json["precision"] = f.precision().str();
  json["threads"] = o.threads;
  json["repetitions"] = o.repetitions;
  json["plan_ms"] = plan_seconds * 1e3;
  json["plan_bytes"] = f.memory_bytes() + g.memory_bytes();
  json["one_call_ms"] = one_seconds * 1e3;
  json["two_calls_ms"] = two_seconds * 1e3;
  json["two_calls_over_one"] = two_seconds / one_seconds;
  json["bytes"] = bytes;
  json["bandwidth_GBs"] = bytes / one_seconds / 1e9;
  json["memory_bandwidth"] = {
      {"read_GBs", bw.read_GBs}, {"copy_GBs", bw.copy_GBs}, {"array_bytes", bw.array_bytes}};
  json["floor_ms"] = floor * 1e3;
  json["floor_bandwidth"] = "read";
  json["time_over_floor"] = one_seconds / floor;
  json["relative_difference_one_vs_two"] = relative_difference(one_result, two_result);
  if (cuda) {
    // From host arrays: the pair copies x in and y out; two Plan::apply calls also copy the
    // middle vector out and back in.
    progress("timing from host arrays");
    json["one_call_host_ms"] =
        median_seconds(o.repetitions, [&] { pair.apply(op, x, y, o.nrhs); }) * 1e3;
    json["two_calls_host_ms"] =
        median_seconds(o.repetitions, [&] { two.apply(btt::Op::F, x, y2, o.nrhs); }) * 1e3;
  }
  if (o.json) {
    fmt::print("{}\n", json.dump());
    return;
  }
  fmt::print("shiftop bench: {} on F {} and G {}, nrhs {}, precision {}\n", o.op, f_shape.str(),
             g_shape.str(), o.nrhs, f.precision().str());
  fmt::print("  plans: {:.1f} ms, {:.1f} MB\n", plan_seconds * 1e3,
             static_cast<double>(f.memory_bytes() + g.memory_bytes()) / 1e6);
  fmt::print("  one call {:.3f} ms, two calls {:.3f} ms (median of {}): {:.2f}x\n",
             one_seconds * 1e3, two_seconds * 1e3, o.repetitions, two_seconds / one_seconds);
  if (cuda)
    fmt::print("  from host arrays: one call {:.3f} ms, two calls {:.3f} ms\n",
               json["one_call_host_ms"].get<double>(), json["two_calls_host_ms"].get<double>());
  fmt::print(
      "  F^ and G^ read: {:.1f} MB -> {:.2f} GB/s; memory read {:.2f} GB/s, copy {:.2f} "
      "GB/s\n",
      bytes / 1e6, bytes / one_seconds / 1e9, bw.read_GBs, bw.copy_GBs);
  fmt::print("  floor bytes/read-bandwidth {:.3f} ms: one call takes {:.2f}x the floor\n",
             floor * 1e3, one_seconds / floor);
  fmt::print("  one call vs two calls: relative difference {:.2e}\n",
             json["relative_difference_one_vs_two"].get<double>());
}

}  // namespace shiftop::app
