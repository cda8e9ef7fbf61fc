// `shiftop tune`: all 32 five-phase precision configurations of F and F* on the user's operator
// (or a random one), timed and compared with FP64 by the library's tuner (btt::tune_precision,
// shiftop/btt/tune.hpp: the inputs, the GPU's second point per FP32 phase 3, the eq. (6) bounds):
// prints the Pareto front of (time, error) and the fastest configuration under --tol, and writes
// JSON and a plot (drawn by the Python package from that JSON: python_plotter.hpp).
#include <fmt/core.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "memory_needs.hpp"
#include "output_paths.hpp"
#include "python_plotter.hpp"
#include "random_operator.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/btt/tune.hpp"
#include "shiftop/core/available_memory.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/io/atomic_output.hpp"
#include "shiftop/io/operator_file.hpp"

namespace shiftop::app {
namespace {

struct TuneOptions {
  std::string operator_path, backend = "cpu", json_path, plot_path;
  index_t nd = 20, nm = 2000, nt = 500;
  double tolerance = 1e-7;
  int repetitions = 10, threads = 0, device = 0;
  bool allow_nonfinite = false;
};

/// Writes `text` to `path` (a temporary of the output `name`).
void write_file(const std::string& path, const std::string& text, const std::string& name) {
  std::ofstream file(path, std::ios::binary);
  file << text;
  file.close();
  require(file.good(), "{}: cannot write the file", name);
}

void write_text(const std::string& path, const std::string& text) {
  io::AtomicOutput out(path, io::AtomicOutput::Kind::Stream);
  write_file(out.path(), text, path);
  out.commit();
}

void run(const TuneOptions& o) {
  check_paths({{"--operator", o.operator_path}}, {{"--json", o.json_path, OutputFormat::Json},
                                                  {"--plot", o.plot_path, OutputFormat::Plot}});
  const btt::Backend backend = backend_option(o.backend, o.device);
  require(o.tolerance > 0, "--tol: expected a positive relative error, got {}", o.tolerance);
  if (!o.plot_path.empty()) {
    plot_format("--plot", o.plot_path);
    require_python_plotter("--plot");
  }
  const bool cuda = backend == btt::Backend::Cuda;
  io::OperatorData a;
  if (!o.operator_path.empty()) {
    a = io::read_operator(o.operator_path, {.slice = {},
                                            .allow_nonfinite = o.allow_nonfinite,
                                            .allow_nonfinite_name = kAllowNonfinite});
  } else {
    a.shape = a.full_shape = {o.nd, o.nm, o.nt};
    a.shape.validate();
  }
  const Shape s = a.shape;
  const btt::PlanOptions options{
      .backend = backend, .max_rhs = 1, .cpu = {.threads = o.threads}, .gpu = {.device = o.device}};
  // What is still to be allocated: the random kernels, the plan at its largest (an FP32 phase 3
  // adds F^'s FP32 copy), one op's x, y and FP64 result, and the F^ that svd::spectrum forms for
  // kappa(F^) (Nt+1 complex Nd x Nm matrices).
  btt::PlanOptions widest = options;
  widest.precision = "DDSDD";
  require_available_memory(
      (o.operator_path.empty() ? double_bytes(static_cast<double>(s.kernel_size())) : 0) +
          static_cast<double>(btt::Plan::host_bytes(s, widest)) + vector_bytes(s, btt::Op::F, 1) +
          double_bytes(static_cast<double>(std::max(s.nd, s.nm)) * static_cast<double>(s.nt)) +
          double_bytes(2.0 * static_cast<double>(s.nt + 1) * static_cast<double>(s.nd) *
                       static_cast<double>(s.nm)),
      fmt::format("tune on {}", s.str()));
  if (o.operator_path.empty()) a.first_column = random_values(s.kernel_size(), 1);
  fmt::print(stderr, "[tune] creating the plan for {} on {}\n", s.str(), o.backend);
  btt::Plan plan = a.triangular
                       ? btt::Plan::create(a.first_column, s, options)
                       : btt::Plan::create_general(a.first_column, a.first_row, s, options);

  btt::TuneOptions tune{.ops = {btt::Op::F, btt::Op::Fadj},
                        .repetitions = o.repetitions,
                        .kappa = 0,
                        .threads = o.threads,
                        .device = o.device,
                        .on_start = {},
                        .on_point = {}};
  tune.on_start = [](btt::Op op, std::size_t k, std::size_t count) {
    fmt::print(stderr, "[tune] {:<4} {:2}/{}\n", name_of(op), k + 1, count);
  };
  tune.on_point = [cuda](btt::Op op, const btt::TunePoint& p) {
    fmt::print(stderr, "[tune] {:<4} {:<12} {:9.3f} ms  error {:.2e}  ({})\n", name_of(op),
               p.label(), p.milliseconds, p.relative_error, cuda ? p.gemv_kernel : "cpu");
  };
  fmt::print(stderr, "[tune] kappa(F^) for the error bounds (svd::spectrum)\n");
  const btt::TuneResult result = btt::tune_precision(plan, a.first_column, a.first_row, tune);

  nlohmann::ordered_json out;
  out["shape"] = {{"nd", s.nd}, {"nm", s.nm}, {"nt", s.nt}};
  out["operator"] = o.operator_path.empty() ? "random" : o.operator_path;
  out["backend"] = o.backend;
  out["tolerance"] = o.tolerance;
  out["repetitions"] = o.repetitions;
  out["kappa"] = result.kappa;
  for (const btt::OpTuning& tuning : result.ops) {
    const btt::Op op = tuning.op;
    const btt::TunePoint& fp64 = tuning.points.front();
    const btt::TunePoint* best = tuning.fastest_under(o.tolerance);
    fmt::print("{} on {}: Pareto front (time, relative error vs FP64, eq. (6) bound):\n",
               name_of(op), s.str());
    for (const btt::TunePoint& p : tuning.points)
      if (p.pareto)
        fmt::print("  {:<12}  {:9.3f} ms  {:5.2f}x  {:.2e}  (bound {:.1e}){}\n", p.label(),
                   p.milliseconds, fp64.milliseconds / p.milliseconds, p.relative_error,
                   p.error_bound, &p == best ? "  <- fastest under --tol" : "");
    nlohmann::ordered_json entry;
    for (const btt::TunePoint& p : tuning.points)
      entry["configurations"].push_back({{"precision", p.precision},
                                         {"gemv_kernel", p.gemv_kernel},
                                         {"median_ms", p.milliseconds},
                                         {"relative_error", p.relative_error},
                                         {"error_bound", p.error_bound},
                                         {"pareto", p.pareto}});
    if (best) {
      entry["fastest_under_tolerance"] = best->precision;
      entry["fastest_under_tolerance_gemv_kernel"] = best->gemv_kernel;
      entry["speedup_over_fp64"] = fp64.milliseconds / best->milliseconds;
      fmt::print(
          "  fastest under {:.1e}: {} ({:.2f}x FP64){}\n", o.tolerance, best->label(),
          fp64.milliseconds / best->milliseconds,
          best->label() != best->precision
              ? fmt::format("; plan option gemv = {}", best->gemv_kernel.substr(0, 5) == "fused"
                                                           ? "Fused (--gemv fused)"
                                                           : "Cublas (--gemv cublas)")
              : "");
    }
    out["ops"][std::string(name_of(op))] = entry;
  }
  const std::string json = out.dump(2) + "\n";
  if (!o.json_path.empty()) write_text(o.json_path, json);
  if (!o.plot_path.empty()) {
    draw_plot("--plot", o.plot_path, "pareto", text_input(json));  // the front, from the JSON
    fmt::print("{}: wrote the Pareto front plot\n", o.plot_path);
  }
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto o = std::make_shared<TuneOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "Time all 32 precision configurations of F and F*; print the Pareto front");
  cmd->add_option("--operator", o->operator_path,
                  "operator file (.h5, .npy or FFTMatvec directory); default: random");
  add_count_option(cmd, "--nd", o->nd, "random operator: observation blocks");
  add_count_option(cmd, "--nm", o->nm, "random operator: parameter blocks");
  add_count_option(cmd, "--nt", o->nt, "random operator: time steps");
  cmd->add_option("--tol", o->tolerance, "relative error allowed vs FP64")->capture_default_str();
  add_count_option(cmd, "--reps", o->repetitions, "timed repetitions per configuration");
  add_backend_option(cmd, o->backend);
  add_device_option(cmd, o->device);
  add_threads_option(cmd, o->threads);
  cmd->add_option("--json", o->json_path, "write the results as JSON to this file");
  cmd->add_option("--plot", o->plot_path,
                  "draw the error-vs-time plot (.png, .svg or .pdf) with the Python package "
                  "shiftop (python -m shiftop.plot; $SHIFTOP_PYTHON picks the interpreter)");
  cmd->add_flag(kAllowNonfinite, o->allow_nonfinite,
                "accept NaN/Inf in the operator (the FFT spreads a NaN anywhere in a series to "
                "every output that series feeds, so the errors are NaN and tune refuses them)");
  cmd->callback([o] { run(*o); });
}

}  // namespace shiftop::app
