// `shiftop tune`: all 32 five-phase precision configurations of F and F* on the user's operator
// (or a random one), timed and compared with FP64 (mixed-precision paper, section 3.2 and 4.2):
// prints the Pareto front of (time, error) and the fastest configuration under --tol, and writes
// JSON and a plot (drawn by the Python package from that JSON: python_plotter.hpp). The input
// vectors carry mantissa bits below FP32's, so that rounding the input to FP32 (phase 1 in S) shows
// in the error. On the GPU, a configuration with FP32 in phase 3 for which the plan picks cuBLAS
// (FP32 sums) is also timed with the fused kernels (FP64 sums, same bytes): a second point, often
// much more accurate for a little more time.
#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "memory_needs.hpp"
#include "output_paths.hpp"
#include "python_plotter.hpp"
#include "random_operator.hpp"
#include "runner.hpp"
#include "shiftop/btt/plan.hpp"
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

struct TunePoint {
  std::string precision;
  std::string kernel;  // the phase-3 kernel on the GPU ("cublas", "fused ..."); empty on the CPU
  double milliseconds = 0;
  double relative_error = 0;
  bool on_front = false;
  /// "DDSDD", or "DDSDD fused" / "DDSDD cublas" on the GPU where phase 3 is FP32 (the two differ
  /// in accuracy there). shiftop.plot's pareto labels its points the same way.
  std::string label() const {
    if (kernel.empty() || precision.size() < 3 || precision[2] != 'S') return precision;
    return precision + " " + kernel.substr(0, kernel.find(' '));
  }
};

/// Random values whose low 29 mantissa bits (those FP32 drops) are not all zero.
std::vector<double> unrepresentable_in_fp32(index_t count, std::uint64_t seed) {
  std::vector<double> values = random_values(count, seed);
  for (double& v : values)
    v = std::bit_cast<double>(std::bit_cast<std::uint64_t>(v) | 0x10000001ull);
  return values;
}

/// Marks the configurations no other one beats in both time and error.
void mark_front(std::vector<TunePoint>& points) {
  for (TunePoint& p : points)
    p.on_front = std::none_of(points.begin(), points.end(), [&](const TunePoint& q) {
      return q.milliseconds <= p.milliseconds && q.relative_error <= p.relative_error &&
             (q.milliseconds < p.milliseconds || q.relative_error < p.relative_error);
    });
}

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

/// Draws the Pareto front with shiftop.plot's pareto from the results, written for it to a
/// temporary JSON next to the plot (whatever --json is: it may be a FIFO or absent), which is
/// removed afterwards or on a signal. The plot itself is written under a temporary name and
/// renamed into place once the plotter succeeded.
void write_plot(const std::string& plot_path, const std::string& json) {
  io::AtomicOutput results(plot_path, io::AtomicOutput::Kind::File);  // never committed
  write_file(results.path(), json, plot_path);
  io::AtomicOutput plot(plot_path, io::AtomicOutput::Kind::File);
  run_python_plot("--plot", {"pareto", results.path(), "-o", plot.path(), "--format",
                             plot_format("--plot", plot_path)});
  plot.commit();
}

void run(const TuneOptions& o) {
  check_paths({{"--operator", o.operator_path}}, {{"--json", o.json_path, OutputFormat::Json},
                                                  {"--plot", o.plot_path, OutputFormat::Plot}});
  const btt::Backend backend = parse_backend(o.backend, o.device);
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
  // adds F^'s FP32 copy), and one op's x, y and FP64 result.
  btt::PlanOptions widest = options;
  widest.precision = "DDSDD";
  require_available_memory(
      (o.operator_path.empty() ? double_bytes(static_cast<double>(s.kernel_size())) : 0) +
          static_cast<double>(btt::Plan::host_bytes(s, widest)) + vector_bytes(s, btt::Op::F, 1) +
          double_bytes(static_cast<double>(std::max(s.nd, s.nm)) * static_cast<double>(s.nt)),
      fmt::format("tune on {}", s.str()));
  if (o.operator_path.empty()) a.first_column = random_values(s.kernel_size(), 1);
  fmt::print(stderr, "[tune] creating the plan for {} on {}\n", s.str(), o.backend);
  btt::Plan plan = a.triangular
                       ? btt::Plan::create(a.first_column, s, options)
                       : btt::Plan::create_general(a.first_column, a.first_row, s, options);

  nlohmann::ordered_json out;
  out["shape"] = {{"nd", s.nd}, {"nm", s.nm}, {"nt", s.nt}};
  out["operator"] = o.operator_path.empty() ? "random" : o.operator_path;
  out["backend"] = o.backend;
  out["tolerance"] = o.tolerance;
  out["repetitions"] = o.repetitions;
  const auto configs = PrecisionConfig::all();
  for (btt::Op op : {btt::Op::F, btt::Op::Fadj}) {
    const std::vector<double> x =
        unrepresentable_in_fp32(input_blocks(op, s) * s.nt, op == btt::Op::F ? 2 : 3);
    std::vector<double> y(static_cast<std::size_t>(output_blocks(op, s) * s.nt));
    Runner runner(plan, op, x, y, 1, backend, o.device);
    std::vector<double> exact;
    std::vector<TunePoint> points;
    // Times the plan as it is set up and compares its result with FP64's (`exact`).
    const auto measure = [&](const PrecisionConfig& config) {
      const std::vector<double>& result = runner.warm_up(1);
      if (exact.empty()) exact = result;  // configs[0] is DDDDD
      const SquaredNorms norms = squared_norms(result, exact);
      const double seconds = median_seconds(o.repetitions, [&] { runner.apply(); });
      const TunePoint point{config.str(), cuda ? plan.choices().of(op).gemv_name() : "",
                            seconds * 1e3,
                            norms.reference > 0 ? norms.relative() : std::sqrt(norms.difference)};
      require(std::isfinite(point.relative_error),
              "tune: {} in {} gave a non-finite result (overflow in FP32?)", to_string(op),
              point.label());
      fmt::print(stderr, "[tune] {:<4} {:<12} {:9.3f} ms  error {:.2e}  ({})\n", to_string(op),
                 point.label(), point.milliseconds, point.relative_error,
                 cuda ? point.kernel : "cpu");
      return point;
    };
    for (std::size_t k = 0; k < configs.size(); ++k) {
      fmt::print(stderr, "[tune] {:<4} {:2}/{}\n", to_string(op), k + 1, configs.size());
      plan.set_precision(configs[k].str());
      points.push_back(measure(configs[k]));
      if (cuda && configs[k][Phase::Gemv] == Precision::Single &&
          points.back().kernel == "cublas") {
        plan.set_gemv(btt::GemvImplementation::Fused);
        points.push_back(measure(configs[k]));
        plan.set_gemv(btt::GemvImplementation::Auto);
      }
    }
    mark_front(points);
    const TunePoint& fp64 = points.front();
    const TunePoint* best = nullptr;
    for (const TunePoint& p : points)
      if (p.relative_error <= o.tolerance && (!best || p.milliseconds < best->milliseconds))
        best = &p;
    fmt::print("{} on {}: Pareto front (time, relative error vs FP64):\n", to_string(op), s.str());
    for (const TunePoint& p : points)
      if (p.on_front)
        fmt::print("  {:<12}  {:9.3f} ms  {:5.2f}x  {:.2e}{}\n", p.label(), p.milliseconds,
                   fp64.milliseconds / p.milliseconds, p.relative_error,
                   &p == best ? "  <- fastest under --tol" : "");
    nlohmann::ordered_json entry;
    for (const TunePoint& p : points)
      entry["configurations"].push_back({{"precision", p.precision},
                                         {"gemv_kernel", p.kernel},
                                         {"median_ms", p.milliseconds},
                                         {"relative_error", p.relative_error},
                                         {"pareto", p.on_front}});
    if (best) {
      entry["fastest_under_tolerance"] = best->precision;
      entry["fastest_under_tolerance_gemv_kernel"] = best->kernel;
      entry["speedup_over_fp64"] = fp64.milliseconds / best->milliseconds;
      fmt::print("  fastest under {:.1e}: {} ({:.2f}x FP64){}\n", o.tolerance, best->label(),
                 fp64.milliseconds / best->milliseconds,
                 best->label() != best->precision
                     ? fmt::format("; plan option gemv = {}", best->kernel.substr(0, 5) == "fused"
                                                                  ? "Fused (--gemv fused)"
                                                                  : "Cublas (--gemv cublas)")
                     : "");
    }
    out["ops"][std::string(to_string(op))] = entry;
  }
  const std::string json = out.dump(2) + "\n";
  if (!o.json_path.empty()) write_text(o.json_path, json);
  if (!o.plot_path.empty()) {
    write_plot(o.plot_path, json);
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
