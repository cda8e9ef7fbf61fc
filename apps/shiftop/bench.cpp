// `shiftop bench`: times one operation of a random operator phase by phase and reports it against
// floors measured in the same run (issue 19): the whole-apply floor, the bytes that must cross
// memory once (F^ at the plan's FFT length and phase-3 precision per group of right-hand sides
// actually run, the inputs read once, the outputs written once) over the read-only streaming
// bandwidth of the CPU or GPU, and on the GPU the flop floor, the phase-3 flops over cuBLAS's
// complex GEMM rate; the floor is the larger. Under mpiexec, or with --grid, it runs on a process
// grid instead (bench_distributed.cpp); --op GadjF|FGadj times an operator pair (bench_pair.cpp).
#include <fmt/core.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "commands.hpp"
#include "memory_needs.hpp"
#include "mpi_launch.hpp"
#include "random_operator.hpp"
#include "runner.hpp"
#include "shiftop/btt/direct_product.hpp"
#include "shiftop/btt/floor.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/core/available_memory.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/memory_bandwidth.hpp"
#include "shiftop/core/timer.hpp"
#ifdef SHIFTOP_HAVE_CUDA
#include "shiftop/gpu/devices.hpp"
#endif

namespace shiftop::app {
namespace {

void run(const BenchOptions& o) {
  const Shape shape{o.nd, o.nm, o.nt};
  shape.validate();
  const btt::Op op = parse_name<btt::Op>(o.op, "--op");
  const btt::PlanOptions options = plan_options(o);
  const bool cuda = options.backend == btt::Backend::Cuda;
  require_available_memory(host_bytes(o, shape, op, options) + probe_bytes(options.backend),
                           fmt::format("bench: {} on {}", o.op, shape.str()));
  const auto progress = [&](const char* what) {
    if (!o.json) fmt::print(stderr, "[bench] {}...\n", what);
  };

  progress("measuring memory bandwidth");
  const MemoryBandwidth bw = measure_bandwidth(options.backend, o.device, o.threads);
  // The GEMM rate of the phase-3 precision, before the plan and the vectors take device memory.
  const bool single = PrecisionConfig::parse(options.precision)[Phase::Gemv] == Precision::Single;
  if (cuda) progress("measuring the complex GEMM rate");
  const double gemm_TFLOPs = measure_gemm_TFLOPs(options.backend, o.device, single);
  progress("creating the plan");
  const std::vector<double> kernels = random_values(shape.kernel_size(), 1);
  Stopwatch watch;
  btt::Plan plan = btt::Plan::create(kernels, shape, options);
  const double plan_seconds = watch.lap();

  const index_t nin = input_blocks(op, shape) * shape.nt,
                nout = output_blocks(op, shape) * shape.nt;
  const std::vector<double> x = random_values(o.nrhs * nin, 2);
  std::vector<double> y(static_cast<std::size_t>(o.nrhs * nout),
                        std::numeric_limits<double>::quiet_NaN());
  Runner runner(plan, op, x, y, o.nrhs, options.backend, o.device);
  progress("timing");
  const std::vector<double>& result = runner.warm_up(o.warmup);
  require(all_finite(result), "bench: the output has a non-finite value (unwritten or overflow)");
  std::vector<double> totals;
  std::array<std::vector<double>, 6> phases;
  for (int k = 0; k < o.repetitions; ++k) {
    totals.push_back(runner.timed_apply());
    const btt::PhaseTimes t = plan.last_phase_times();
    for (std::size_t p = 0; p < phases.size(); ++p)
      phases[p].push_back(t.seconds[p]);
  }

  const btt::PlanChoices choices = plan.choices();
  const btt::ApplyFloor need = btt::apply_floor(plan, op, o.nrhs);
  const double total = median(totals);
  const btt::FloorTimes floors = btt::floor_times(need, bw.read_GBs * 1e9, gemm_TFLOPs * 1e12);
  const double whole_floor = floors.whole_apply, spectrum_floor = floors.spectrum_only;
  const double flop_floor = floors.flops, floor = floors.floor();
  nlohmann::ordered_json out;
  out["backend"] = o.backend;
  out["shape"] = {{"nd", o.nd}, {"nm", o.nm}, {"nt", o.nt}};
  out["op"] = o.op;
  out["nrhs"] = o.nrhs;
  out["precision"] = plan.precision().str();
  if (cuda) {
    out["gemv_kernel"] = choices.of(op).gemv_name();
    out["fft_kernel"] = name_of(choices.of(op).transforms);
    out["cuda_graphs"] = o.graphs;
  }
  out["fft_length"] = choices.fft_length;
  out["group_size"] = choices.group_size;
  out["groups"] = need.groups;
  out["threads"] = o.threads;
  out["repetitions"] = o.repetitions;
  out["plan_ms"] = plan_seconds * 1e3;
  out["plan_bytes"] = plan.memory_bytes();
  out["total_ms"] = total * 1e3;
  out["per_vector_ms"] = total * 1e3 / static_cast<double>(o.nrhs);
  out["min_ms"] = *std::min_element(totals.begin(), totals.end()) * 1e3;
  for (std::size_t p = 0; p < phases.size(); ++p)
    out["phases"][std::string(name_of(static_cast<btt::ApplyPhase>(p)))] = median(phases[p]) * 1e3;
  // bytes: the whole-apply floor's bytes (before issue 19: F^ alone at Nt+1 frequencies).
  out["bytes"] = need.bytes();
  out["bandwidth_GBs"] = need.bytes() / total / 1e9;
  out["floor_bytes"] = {{"spectrum", need.spectrum_bytes},
                        {"inputs", need.input_bytes},
                        {"outputs", need.output_bytes}};
  out["flops"] = need.flops;
  out["memory_bandwidth"] = {{"read_GBs", bw.read_GBs},
                             {"copy_GBs", bw.copy_GBs},
                             {"array_bytes", bw.array_bytes},
                             {"gemm_TFLOPs", cuda ? nlohmann::ordered_json(gemm_TFLOPs)
                                                  : nlohmann::ordered_json(nullptr)}};
  out["whole_apply_floor_ms"] = whole_floor * 1e3;
  out["flop_floor_ms"] =
      cuda ? nlohmann::ordered_json(flop_floor * 1e3) : nlohmann::ordered_json(nullptr);
  out["fspectrum_only_floor_ms"] = spectrum_floor * 1e3;
  // The floor is the larger of the whole-apply (memory) floor and the flop floor; time_over_floor
  // is the apply over it (issue 19; before: F^ bytes over the copy or read bandwidth).
  out["floor_ms"] = floor * 1e3;
  out["floor_bandwidth"] = "read";
  out["floor_bound"] = floors.flop_bound() ? "flops" : "memory";
  out["time_over_floor"] = total / floor;
  out["time_over_whole_apply_floor"] = total / whole_floor;
  out["time_over_fspectrum_only_floor"] = total / spectrum_floor;

  if (o.check) {
    progress("checking against the CPU backend in FP64");
    btt::Plan reference = btt::Plan::create(kernels, shape, {.cpu = {.threads = o.threads}});
    std::vector<double> want(y.size());
    reference.apply(op, x, want, o.nrhs);
    out["relative_error_vs_cpu_fp64"] = relative_difference(result, want);
  }

  if (o.direct) {
    require(op == btt::Op::F || op == btt::Op::Fadj, "--direct compares F or Fadj only");
    progress("timing the direct time-domain product");
    std::vector<double> yd(static_cast<std::size_t>(nout));
    watch.lap();
    if (op == btt::Op::F)
      btt::direct_product(kernels, shape, std::span(x).first(static_cast<std::size_t>(nin)), yd,
                          o.threads);
    else
      btt::direct_adjoint_product(kernels, shape, std::span(x).first(static_cast<std::size_t>(nin)),
                                  yd, o.threads);
    const double direct = watch.lap();
    out["direct_ms"] = direct * 1e3;
    out["speedup_over_direct"] = direct / (total / static_cast<double>(o.nrhs));
    out["relative_difference_to_direct"] = relative_difference(y, yd);
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
    fmt::print("    {:<7}{:9.3f} ms\n", name_of(static_cast<btt::ApplyPhase>(p)),
               median(phases[p]) * 1e3);
  fmt::print("  FFT length {}, {} group(s) of at most {} vector(s)\n", choices.fft_length,
             need.groups, choices.group_size);
  fmt::print("  ceilings: memory read {:.2f} GB/s, copy {:.2f} GB/s", bw.read_GBs, bw.copy_GBs);
  if (cuda) fmt::print(", complex GEMM {:.2f} TFLOP/s ({})", gemm_TFLOPs, single ? "FP32" : "FP64");
  fmt::print("\n");
  fmt::print(
      "  bytes that must cross memory once: F^ {:.1f} MB + inputs {:.1f} MB + outputs {:.1f} "
      "MB = {:.1f} MB -> {:.2f} GB/s\n",
      need.spectrum_bytes / 1e6, need.input_bytes / 1e6, need.output_bytes / 1e6,
      need.bytes() / 1e6, need.bytes() / total / 1e9);
  fmt::print("  whole-apply floor (bytes / read bandwidth) {:.3f} ms: {:.2f}x\n", whole_floor * 1e3,
             total / whole_floor);
  if (cuda)
    fmt::print("  flop floor ({:.3g} flops / GEMM rate) {:.3f} ms: {:.2f}x\n", need.flops,
               flop_floor * 1e3, total / flop_floor);
  fmt::print("  F^-only floor {:.3f} ms: {:.2f}x\n", spectrum_floor * 1e3, total / spectrum_floor);
  fmt::print("  the floor ({}) {:.3f} ms: apply takes {:.2f}x the floor\n",
             floors.flop_bound() ? "flops" : "memory", floor * 1e3, total / floor);
  if (o.check)
    fmt::print("  relative error vs the CPU backend in FP64: {:.2e}\n",
               out["relative_error_vs_cpu_fp64"].get<double>());
  if (o.direct)
    fmt::print(
        "  direct time-domain product {:.1f} ms: shiftop is {:.1f}x faster (difference {:.2e})\n",
        out["direct_ms"].get<double>(), out["speedup_over_direct"].get<double>(),
        out["relative_difference_to_direct"].get<double>());
}

}  // namespace

btt::PlanOptions plan_options(const BenchOptions& o) {
  const btt::Backend backend = backend_option(o.backend, o.device);
  const bool cuda = backend == btt::Backend::Cuda;
  return {.backend = backend,
          .precision = o.precision,
          .max_rhs = std::min<index_t>(o.nrhs, cuda ? 64 : 16),
          .planning = o.estimate ? btt::Planning::Estimate : btt::Planning::Measure,
          .cpu = {.threads = o.threads},
          .gpu = {.device = o.device},
          .gpu_engine = {.gemv = parse_name<btt::GemvImplementation>(o.gemv, "--gemv"),
                         .fft = parse_name<btt::FftImplementation>(o.fft, "--fft"),
                         .fft_length = o.fft_length,
                         .profile = o.profile,
                         .graphs = o.graphs}};
}

// Each buffer of the GPU's bandwidth probes: many times any L2 cache (H100 50 MB, H200 60 MB).
constexpr std::size_t kGpuProbeBytes = std::size_t{1} << 30;

MemoryBandwidth measure_bandwidth(btt::Backend backend, int device, int threads) {
  if (backend == btt::Backend::Cpu) return measure_memory_bandwidth(kCpuProbeArrayBytes, threads);
  MemoryBandwidth bw;
  bw.array_bytes = kGpuProbeBytes;
#ifdef SHIFTOP_HAVE_CUDA
  bw.read_GBs = gpu::measure_read_bandwidth_GBs(kGpuProbeBytes, device);
  bw.copy_GBs = gpu::measure_copy_bandwidth_GBs(kGpuProbeBytes, device);
#else
  (void)device;
#endif
  return bw;
}

double measure_gemm_TFLOPs(btt::Backend backend, int device, bool single) {
  if (backend == btt::Backend::Cpu) return 0;
#ifdef SHIFTOP_HAVE_CUDA
  return gpu::measure_complex_gemm_TFLOPs(single, device);
#else
  (void)device;
  (void)single;
  return 0;
#endif
}

#ifndef SHIFTOP_HAVE_MPI
void run_distributed_bench(const BenchOptions&) {
  fail_without_mpi("bench");
}
#endif

void add_bench_command(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* cmd =
      app.add_subcommand("bench", "Time one operation of a random operator, phase by phase");
  add_count_option(cmd, "--nd", o->nd, "observation blocks (sensors)");
  add_count_option(cmd, "--nm", o->nm, "parameter blocks");
  add_count_option(cmd, "--nt", o->nt, "time steps");
  add_count_option(cmd, "--nrhs", o->nrhs, "right-hand sides per apply");
  cmd->add_option("--precision", o->precision, "five-phase precision string")
      ->capture_default_str();
  cmd->add_option("--op", o->op,
                  fmt::format("{}; or GadjF or FGadj: an operator pair of F and a random G, in "
                              "one call against two",
                              choices_of<btt::Op>()))
      ->capture_default_str();
  add_count_option(cmd, "--nq", o->nq, "--op GadjF|FGadj: block rows of G (0: --nd)", kNonNegative);
  add_threads_option(cmd, o->threads);
  add_count_option(cmd, "--reps", o->repetitions, "timed repetitions");
  add_count_option(cmd, "--warmup", o->warmup, "untimed repetitions first", kNonNegative);
  cmd->add_flag("--direct", o->direct, "also time the direct time-domain product (first vector)");
  cmd->add_flag("--estimate", o->estimate,
                "FFTW_ESTIMATE planning (faster plan, maybe slower apply)");
  add_backend_option(cmd, o->backend);
  add_device_option(cmd, o->device);
  add_choice_option<btt::GemvImplementation>(cmd, "--gemv", o->gemv, "GPU phase-3 kernel: {}");
  add_choice_option<btt::FftImplementation>(
      cmd, "--fft", o->fft,
      "GPU transforms: {} (fused: ours, power-of-two lengths; cufft: pad + cuFFT)");
  add_count_option(cmd, "--fft-length", o->fft_length,
                   "GPU: FFT length L, even and >= 2*Nt (0: 2*Nt, or measured with the next power "
                   "of two)",
                   kNonNegative);
  cmd->add_flag("--profile", o->profile, "GPU: per-phase times from CUDA events");
  cmd->add_flag("--graphs", o->graphs, "GPU: replay the apply as a CUDA graph");
  cmd->add_flag("--check", o->check, "compare the output with the CPU backend in FP64");
  add_json_flag(cmd, o->json);
  cmd->add_option("--grid", o->grid,
                  "process grid PRxPC or auto (Algorithm 4), under mpiexec (the default there: "
                  "auto); --nd/--nm/--nt are the global sizes");
  cmd->add_flag("--weak", o->weak,
                "with --grid PRxPC: --nd and --nm are per grid row and column (weak scaling)");
  add_count_option(cmd, "--probe-bytes", o->probe_bytes,
                   "under MPI: bytes of the large all-reduce and broadcast that measure the "
                   "collectives' bus bandwidth");
  cmd->callback([o, cmd] {
    o->device_given = cmd->count("--device") > 0;
    const bool pair = o->op == "GadjF" || o->op == "FGadj";
    require(pair || o->nq == 0, "bench --nq {}: G's block rows, for --op GadjF or FGadj only",
            o->nq);
    if (pair) {
      require(o->grid.empty() && !launched_by_mpi(),
              "bench --op {}: the operator pair runs in one process: expected no --grid and no "
              "mpiexec",
              o->op);
      run_pair_bench(*o);
    } else if (!o->grid.empty() || launched_by_mpi())
      run_distributed_bench(*o);
    else
      run(*o);
  });
}

}  // namespace shiftop::app
