// `shiftop spectrum`: the singular values of the Nt+1 blocks F^[w] of an operator's block-circulant
// embedding (shiftop/svd/spectrum.hpp; with --backend cuda the SVDs on a GPU), kappa(F^) and the
// numerical rank, as text or JSON, the (Nt+1) x min(Nd, Nm) values as .npy, and their plot per
// frequency (python -m shiftop.plot spectrum, python_plotter.hpp).
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "output_paths.hpp"
#include "python_plotter.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/timer.hpp"
#include "shiftop/gpu/context.hpp"
#include "shiftop/io/npy.hpp"
#include "shiftop/io/operator_file.hpp"
#include "shiftop/svd/spectrum.hpp"
#include "sweep_progress.hpp"

namespace shiftop::app {
namespace {

struct SpectrumOptions {
  std::string operator_path, output, plot, backend = "cpu";
  double rank_tolerance = 0.0;
  int threads = 0, device = 0;
  bool json = false, progress = false;
};

// The values as the plotter reads them: a .npy array (Nt+1, min(Nd, Nm)).
void write_plot(const SpectrumOptions& o, const svd::Spectrum& s) {
  const std::vector<index_t> shape{s.frequencies, s.per_frequency};
  draw_plot("--plot", o.plot, "spectrum",
            [&](const std::string& path) { io::write_npy(path, s.sigma, shape); },
            {"--tolerance", fmt::format("{:.17g}", s.rank_tolerance), "--title",
             fmt::format("{} ({})", o.operator_path, s.shape.str())});
}

// JSON numbers cannot be infinite: kappa of a singular F^ is null there.
nlohmann::ordered_json finite_or_null(double value) {
  return std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json path_or_null(const std::string& path) {
  return path.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(path);
}

void run(const SpectrumOptions& o) {
  check_paths({{"OPERATOR", o.operator_path}},
              {{"--output", o.output, OutputFormat::Npy}, {"--plot", o.plot, OutputFormat::Plot}});
  require(std::isfinite(o.rank_tolerance) && o.rank_tolerance >= 0.0,
          "--rank-tolerance: expected 0 (the default, max(Nd, Nm) * eps) or a positive number, "
          "got {}",
          o.rank_tolerance);
  const Backend backend = backend_option(o.backend, o.device);
  if (!o.plot.empty()) {
    plot_format("--plot", o.plot);
    require_python_plotter("--plot");
  }
  const io::OperatorData op = io::read_operator(o.operator_path);
  svd::SpectrumOptions options;
  options.rank_tolerance = o.rank_tolerance;
  options.threads = o.threads;
  if (o.progress) options.jacobi.progress = print_finished_frequencies(op.shape.nt + 1);
  options.backend = backend;
  options.gpu.device = o.device;
  // The GPU's context is made before the clock starts, as its cost is not the spectrum's: the
  // library runs on this shared context of the device (SpectrumOptions::gpu).
  if (backend == Backend::Cuda) (void)gpu::shared_context(o.device);
  Stopwatch clock;
  const svd::Spectrum s = svd::spectrum(op.first_column, op.first_row, op.shape, options);
  const double seconds = clock.elapsed();
  require(s.converged, "{}: the Jacobi SVD of some F^[w] did not converge in {} sweeps",
          o.operator_path, s.max_sweeps);
  if (!o.output.empty()) {
    const std::vector<index_t> shape{s.frequencies, s.per_frequency};
    io::write_npy(o.output, s.sigma, shape);
  }
  if (!o.plot.empty()) write_plot(o, s);
  if (o.json) {
    const nlohmann::ordered_json out = {
        {"operator", o.operator_path},
        {"shape", {{"nd", s.shape.nd}, {"nm", s.shape.nm}, {"nt", s.shape.nt}}},
        {"triangular", op.first_row.empty()},
        {"backend", o.backend},
        {"frequencies", s.frequencies},
        {"per_frequency", s.per_frequency},
        {"sigma_max", s.sigma_max},
        {"sigma_min", s.sigma_min},
        {"kappa", finite_or_null(s.kappa)},
        {"rank_tolerance", s.rank_tolerance},
        {"rank", s.rank},
        {"values", s.frequencies * s.per_frequency},
        {"max_sweeps", s.max_sweeps},
        {"converged", s.converged},
        {"seconds", seconds},
        {"output", path_or_null(o.output)},
        {"plot", path_or_null(o.plot)}};
    fmt::print("{}\n", out.dump());
    return;
  }
  fmt::print("{}: {}, {} frequencies x {} singular values ({:.3g} s)\n", o.operator_path,
             s.shape.str(), s.frequencies, s.per_frequency, seconds);
  fmt::print("  sigma_max {:.6e}, sigma_min {:.6e}, kappa(F^) {:.6e}\n", s.sigma_max, s.sigma_min,
             s.kappa);
  fmt::print("  rank {} of {} at the relative tolerance {:.3g}\n", s.rank,
             s.frequencies * s.per_frequency, s.rank_tolerance);
  if (!o.output.empty())
    fmt::print("{}: the singular values, {} x {}\n", o.output, s.frequencies, s.per_frequency);
  if (!o.plot.empty()) fmt::print("{}: the spectrum plot\n", o.plot);
}

}  // namespace

void add_spectrum_command(CLI::App& app) {
  auto o = std::make_shared<SpectrumOptions>();
  CLI::App* cmd = app.add_subcommand(
      "spectrum",
      "Singular values of the Nt+1 blocks F^[w] of an operator's block-circulant embedding, "
      "kappa(F^) and the numerical rank");
  cmd->add_option("OPERATOR", o->operator_path,
                  "the operator: shiftop .h5, FFTMatvec matrix directory or .npy kernels")
      ->required();
  cmd->add_option("--output", o->output,
                  "write the singular values as .npy of shape (Nt+1, min(Nd, Nm)), row w those of "
                  "F^[w], descending");
  cmd->add_option("--rank-tolerance", o->rank_tolerance,
                  "count the values above T * sigma_max (0: max(Nd, Nm) * eps); each frequency "
                  "w = 0..Nt counts once")
      ->capture_default_str();
  cmd->add_option("--plot", o->plot,
                  "draw the singular values against the frequency w, log scale (.png, .svg or "
                  ".pdf), with the Python package shiftop (python -m shiftop.plot; "
                  "$SHIFTOP_PYTHON picks the interpreter)");
  add_backend_option(cmd, o->backend);
  add_device_option(cmd, o->device);
  add_threads_option(cmd, o->threads);
  add_json_flag(cmd, o->json);
  cmd->add_flag(
      "--progress", o->progress,
      "print each frequency's SVD as it finishes on stderr (CPU; the GPU runs them in one "
      "launch)");
  cmd->callback([o] { run(*o); });
}

}  // namespace shiftop::app
