// `shiftop bench`: times one operation of a random operator phase by phase and reports it against
// the floor bytes(F^) / memory read bandwidth measured in the same run.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "btt/direct_product.hpp"
#include "btt/plan.hpp"
#include "commands.hpp"
#include "core/error.hpp"
#include "core/memory_bandwidth.hpp"
#include "core/timer.hpp"
#include "random_operator.hpp"

namespace shiftop::app {
namespace {

struct BenchOptions {
  index_t nd = 20, nm = 2000, nt = 500, nrhs = 1;
  std::string precision = "DDDDD", op = "F";
  int threads = 0, repetitions = 20, warmup = 3;
  bool json = false, direct = false, estimate = false;
};

/// Bytes of F^ read by one apply: Nt+1 frequencies of an Nd x Nm complex matrix in the phase-3
/// precision, once per pass over at most max_rhs vectors and once per half of F*F / FF*.
double matrix_bytes(const Shape& s, const PrecisionConfig& p, Op op, index_t passes) {
  const double element = p[Phase::Gemv] == Precision::Single ? 8.0 : 16.0;
  const double halves = (op == Op::FadjF || op == Op::FFadj) ? 2.0 : 1.0;
  return static_cast<double>(s.frequencies()) * static_cast<double>(s.nd * s.nm) * element *
         halves * static_cast<double>(passes);
}

void run(const BenchOptions& o) {
  const Shape shape{o.nd, o.nm, o.nt};
  shape.validate();
  const Op op = parse_op(o.op);
  const btt::PlanOptions options{
      .precision = o.precision,
      .threads = o.threads,
      .max_rhs = std::min<index_t>(o.nrhs, 16),
      .fft_planning = o.estimate ? btt::FftPlanning::Estimate : btt::FftPlanning::Measure};
  const auto progress = [&](const char* what) {
    if (!o.json) fmt::print(stderr, "[bench] {}...\n", what);
  };

  progress("measuring memory bandwidth");
  const MemoryBandwidth bw = measure_memory_bandwidth(std::size_t{512} << 20, o.threads);
  progress("creating the plan");
  const std::vector<double> kernels = random_values(shape.kernel_size(), 1);
  Stopwatch watch;
  btt::Plan plan = btt::Plan::create(kernels, shape, options);
  const double plan_seconds = watch.lap();

  const index_t nin = input_blocks(op, shape) * shape.nt,
                nout = output_blocks(op, shape) * shape.nt;
  const std::vector<double> x = random_values(o.nrhs * nin, 2);
  std::vector<double> y(static_cast<std::size_t>(o.nrhs * nout));
  progress("timing");
  for (int k = 0; k < o.warmup; ++k)
    plan.apply(op, x, y, o.nrhs);
  std::vector<double> totals;
  std::array<std::vector<double>, 6> phases;
  for (int k = 0; k < o.repetitions; ++k) {
    watch.lap();
    plan.apply(op, x, y, o.nrhs);
    totals.push_back(watch.lap());
    const btt::PhaseTimes t = plan.last_phase_times();
    for (std::size_t p = 0; p < phases.size(); ++p)
      phases[p].push_back(t.seconds[p]);
  }

  const index_t passes = (o.nrhs + options.max_rhs - 1) / options.max_rhs;
  const double bytes = matrix_bytes(shape, plan.precision(), op, passes);
  const double total = median(totals);
  const double floor = bytes / (bw.read_GBs * 1e9);
  nlohmann::ordered_json out;
  out["shape"] = {{"nd", o.nd}, {"nm", o.nm}, {"nt", o.nt}};
  out["op"] = o.op;
  out["nrhs"] = o.nrhs;
  out["precision"] = plan.precision().str();
  out["threads"] = o.threads;
  out["repetitions"] = o.repetitions;
  out["plan_ms"] = plan_seconds * 1e3;
  out["plan_bytes"] = plan.memory_bytes();
  out["total_ms"] = total * 1e3;
  out["per_vector_ms"] = total * 1e3 / static_cast<double>(o.nrhs);
  out["min_ms"] = *std::min_element(totals.begin(), totals.end()) * 1e3;
  for (std::size_t p = 0; p < phases.size(); ++p)
    out["phases"][std::string(btt::kApplyPhaseNames[p])] = median(phases[p]) * 1e3;
  out["bytes"] = bytes;
  out["bandwidth_GBs"] = bytes / total / 1e9;
  out["memory_bandwidth"] = {
      {"read_GBs", bw.read_GBs}, {"copy_GBs", bw.copy_GBs}, {"array_bytes", bw.array_bytes}};
  out["floor_ms"] = floor * 1e3;
  out["time_over_floor"] = total / floor;

  if (o.direct) {
    require(op == Op::F || op == Op::Fadj, "--direct compares F or Fadj only");
    progress("timing the direct time-domain product");
    std::vector<double> yd(static_cast<std::size_t>(nout));
    watch.lap();
    if (op == Op::F)
      btt::direct_product(kernels, shape, std::span(x).first(static_cast<std::size_t>(nin)), yd,
                          o.threads);
    else
      btt::direct_adjoint_product(kernels, shape, std::span(x).first(static_cast<std::size_t>(nin)),
                                  yd, o.threads);
    const double direct = watch.lap();
    double diff = 0, ref = 0;
    for (std::size_t k = 0; k < yd.size(); ++k) {
      diff += (y[k] - yd[k]) * (y[k] - yd[k]);
      ref += yd[k] * yd[k];
    }
    out["direct_ms"] = direct * 1e3;
    out["speedup_over_direct"] = direct / (total / static_cast<double>(o.nrhs));
    out["relative_difference_to_direct"] = std::sqrt(diff / ref);
  }

  if (o.json) {
    fmt::print("{}\n", out.dump());
    return;
  }
  fmt::print("shiftop bench: {} on {}, nrhs {}, precision {}\n", o.op, shape.str(), o.nrhs,
             plan.precision().str());
  fmt::print("  plan: {:.1f} ms, {:.1f} MB\n", plan_seconds * 1e3,
             static_cast<double>(plan.memory_bytes()) / 1e6);
  fmt::print("  apply: {:.3f} ms median of {} ({:.3f} ms per vector)\n", total * 1e3, o.repetitions,
             total * 1e3 / static_cast<double>(o.nrhs));
  for (std::size_t p = 0; p < phases.size(); ++p)
    fmt::print("    {:<7}{:9.3f} ms\n", btt::kApplyPhaseNames[p], median(phases[p]) * 1e3);
  fmt::print("  F^ read: {:.1f} MB -> {:.2f} GB/s; memory read {:.2f} GB/s, copy {:.2f} GB/s\n",
             bytes / 1e6, bytes / total / 1e9, bw.read_GBs, bw.copy_GBs);
  fmt::print("  floor bytes/read-bandwidth {:.3f} ms: apply takes {:.2f}x the floor\n", floor * 1e3,
             total / floor);
  if (o.direct)
    fmt::print(
        "  direct time-domain product {:.1f} ms: shiftop is {:.1f}x faster (difference {:.2e})\n",
        out["direct_ms"].get<double>(), out["speedup_over_direct"].get<double>(),
        out["relative_difference_to_direct"].get<double>());
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* cmd =
      app.add_subcommand("bench", "Time one operation of a random operator, phase by phase");
  cmd->add_option("--nd", o->nd, "observation blocks (sensors)")
      ->capture_default_str()
      ->check(kPositive);
  cmd->add_option("--nm", o->nm, "parameter blocks")->capture_default_str()->check(kPositive);
  cmd->add_option("--nt", o->nt, "time steps")->capture_default_str()->check(kPositive);
  cmd->add_option("--nrhs", o->nrhs, "right-hand sides per apply")
      ->capture_default_str()
      ->check(kPositive);
  cmd->add_option("--precision", o->precision, "five-phase precision string")
      ->capture_default_str();
  cmd->add_option("--op", o->op, "F, Fadj, FadjF or FFadj")->capture_default_str();
  cmd->add_option("--threads", o->threads, "CPU threads (0: all)")
      ->capture_default_str()
      ->check(kNonNegative);
  cmd->add_option("--reps", o->repetitions, "timed repetitions")
      ->capture_default_str()
      ->check(kPositive);
  cmd->add_option("--warmup", o->warmup, "untimed repetitions first")
      ->capture_default_str()
      ->check(kNonNegative);
  cmd->add_flag("--direct", o->direct, "also time the direct time-domain product (first vector)");
  cmd->add_flag("--estimate", o->estimate,
                "FFTW_ESTIMATE planning (faster plan, maybe slower apply)");
  cmd->add_flag("--json", o->json, "print one JSON object on stdout");
  cmd->callback([o] { run(*o); });
}

}  // namespace shiftop::app
