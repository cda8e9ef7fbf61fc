// `shiftop gsvd`: the generalized SVD of a pair of dense matrices F, G (same columns, G of full
// column rank) from .npy or HDF5 by the implicit Hari-Zimmermann method (shiftop/gsvd/gsvd.hpp, on
// the backend --backend names), in FP64:
// float32 inputs are promoted, complex ones computed in complex128. Writes the generalized
// singular values sigma_f / sigma_g (nonincreasing) and, with --vectors, U, V, X, sigma_f, sigma_g.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include <complex>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "output_paths.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/timer.hpp"
#include "shiftop/gpu/context.hpp"
#include "shiftop/gsvd/gsvd.hpp"
#include "shiftop/io/matrix_file.hpp"
#include "sweep_progress.hpp"

namespace shiftop::app {
namespace {

struct GsvdCliOptions {
  std::string f, g, output, vectors, f_dataset, g_dataset;
  std::string variant = "auto", strategy = "modmod", backend = "cpu";
  int threads = 0, device = 0, max_sweeps = 0;
  index_t block_width = 0;
  bool json = false, progress = false;
};

constexpr const char* kVectorFiles[] = {"u", "v", "x", "sigma_f", "sigma_g"};

// F or G as the GSVD takes it: T is double, or std::complex<double> when either file is complex
// (io::read_matrix promotes float32 and real files exactly and refuses non-finite entries).
template <class T>
io::Matrix<T> read_operand(const char* option, const std::string& path, const std::string& dataset,
                           std::string_view dataset_option) {
  io::Matrix<T> a = io::read_matrix<T>(path, {.dataset = dataset,
                                              .dataset_option = dataset_option,
                                              .allow_nonfinite = false,
                                              .option = option});
  require(a.rows > 0 && a.cols > 0,
          "{} {}: the matrix is empty ({} x {}): expected at least one row and one column", option,
          path, a.rows, a.cols);
  return a;
}

struct Solved {
  svd::GsvdStats stats;
  index_t m = 0, p = 0, n = 0;
  double seconds = 0;
};

template <class T>
Solved solve_and_write(const GsvdCliOptions& o, const svd::GsvdOptions& options) {
  const io::Matrix<T> f = read_operand<T>("--f", o.f, o.f_dataset, "--f-dataset");
  const io::Matrix<T> g = read_operand<T>("--g", o.g, o.g_dataset, "--g-dataset");
  require(f.cols == g.cols,
          "--g {}: G has {} columns but F ({}) has {}: the pair must have the same number of "
          "columns",
          o.g, g.cols, o.f, f.cols);
  require(g.rows >= g.cols,
          "--g {}: G is {} x {}: G must have full column rank, so at least as many rows as "
          "columns",
          o.g, g.rows, g.cols);
  const index_t m = f.rows, p = g.rows, n = f.cols;
  // The GPU's context is made before the clock starts, as its cost is not the GSVD's: the library
  // runs on this shared context of the device (GsvdOptions::gpu).
  if (options.backend == Backend::Cuda) (void)gpu::shared_context(o.device);
  Stopwatch clock;  // on the GPU with the copies to and from it
  const svd::GsvdResult<T> result =
      svd::gsvd_hz(f.data.data(), m, m, g.data.data(), p, p, n, options);
  require(result.stats.converged,
          "--f {}, --g {}: the GSVD did not converge in {} sweeps (a sweep still made a proper "
          "transformation; raise --max-sweeps)",
          o.f, o.g, result.stats.sweeps);
  // The command's outputs are .npy (check_paths), which a FIFO, a device or "-" also take.
  const io::MatrixWriteOptions npy{.format = io::MatrixFormat::Npy};
  io::write_values<double>(o.output, result.values(), npy);
  if (!o.vectors.empty()) {
    io::write_matrix<T>(prefixed_npy(o.vectors, "u"), m, n, result.u, npy);
    io::write_matrix<T>(prefixed_npy(o.vectors, "v"), p, n, result.v, npy);
    io::write_matrix<T>(prefixed_npy(o.vectors, "x"), n, n, result.x, npy);
    io::write_values<double>(prefixed_npy(o.vectors, "sigma_f"), result.sigma_f, npy);
    io::write_values<double>(prefixed_npy(o.vectors, "sigma_g"), result.sigma_g, npy);
  }
  return {.stats = result.stats, .m = m, .p = p, .n = n, .seconds = clock.elapsed()};
}

void run(const GsvdCliOptions& o) {
  check_prefix("--vectors", o.vectors);
  std::vector<OutputPath> outputs{{"--output", o.output, OutputFormat::Npy}};
  for (const char* which : kVectorFiles)
    outputs.push_back({"--vectors", prefixed_npy(o.vectors, which), OutputFormat::Npy});
  check_paths({{"--f", o.f}, {"--g", o.g}}, outputs);
  svd::GsvdOptions options;
  options.compute_vectors = !o.vectors.empty();
  options.variant = parse_name<svd::Variant>(o.variant, "--variant");
  options.strategy = parse_name<svd::StrategyKind>(o.strategy, "--strategy");
  options.block_width = o.block_width;
  options.threads = o.threads;
  options.max_sweeps = o.max_sweeps;
  if (o.progress) options.progress = print_sweeps("gsvd", "transformations");
  options.backend = backend_option(o.backend, o.device);
  options.gpu.device = o.device;
  // The pair is computed in complex128 if either file is complex, else in float64.
  const bool complex = io::is_complex(io::matrix_element(
                           o.f, {.dataset = o.f_dataset, .dataset_option = "--f-dataset"})) ||
                       io::is_complex(io::matrix_element(
                           o.g, {.dataset = o.g_dataset, .dataset_option = "--g-dataset"}));
  const auto [stats, m, p, n, seconds] = complex ? solve_and_write<std::complex<double>>(o, options)
                                                 : solve_and_write<double>(o, options);
  const char* precision = complex ? "complex128" : "float64";
  if (o.json) {
    nlohmann::ordered_json out = {{"f", o.f},
                                  {"g", o.g},
                                  {"m", m},
                                  {"p", p},
                                  {"n", n},
                                  {"computed_in", precision},
                                  {"backend", o.backend},
                                  {"variant", o.variant},
                                  {"strategy", o.strategy},
                                  {"sweeps", stats.sweeps},
                                  {"transformations", stats.transformations},
                                  {"proper_transformations", stats.proper_transformations},
                                  {"converged", stats.converged},
                                  {"seconds", seconds},
                                  {"output", o.output}};
    if (!o.vectors.empty()) {
      nlohmann::ordered_json files = nlohmann::ordered_json::array();
      for (const char* which : kVectorFiles)
        files.push_back(prefixed_npy(o.vectors, which));
      out["vectors"] = files;
    }
    fmt::print("{}\n", out.dump());
    return;
  }
  fmt::print(
      "{}, {}: F {} x {}, G {} x {}, {} generalized singular values in {} (computed in {}; "
      "converged in {} sweeps, {} transformations, {} proper; {:.3g} s)\n",
      o.f, o.g, m, n, p, n, n, o.output, precision, stats.sweeps, stats.transformations,
      stats.proper_transformations, seconds);
  if (!o.vectors.empty())
    fmt::print("{}_{{u,v,x,sigma_f,sigma_g}}.npy: F = U diag(sigma_f) X, G = V diag(sigma_g) X\n",
               o.vectors);
}

}  // namespace

void add_gsvd_command(CLI::App& app) {
  auto o = std::make_shared<GsvdCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "gsvd",
      "Generalized singular values (and vectors) of a pair (F, G) by the implicit "
      "Hari-Zimmermann method");
  const std::string matrix_help =
      "a 2-D .npy array (float64, float32, complex128 or complex64; C or Fortran order) or an "
      "HDF5 file (.h5, .hdf5) with a 2-D dataset of those types; computed in FP64: float32 is "
      "promoted "
      "to float64, complex64 to complex128, and the pair is complex if either is";
  cmd->add_option("--f", o->f, "F (m x n): " + matrix_help)->required();
  cmd->add_option("--g", o->g, "G (p x n, full column rank, p >= n): " + matrix_help)->required();
  cmd->add_option("--output", o->output,
                  "the generalized singular values sigma_f / sigma_g, nonincreasing, as float64 "
                  ".npy (the square roots of the eigenvalues of (F^H F, G^H G))")
      ->required();
  cmd->add_option("--vectors", o->vectors,
                  "also write PREFIX_u.npy (m x n), PREFIX_v.npy (p x n), PREFIX_x.npy (n x n), "
                  "PREFIX_sigma_f.npy and PREFIX_sigma_g.npy: F = U diag(sigma_f) X, "
                  "G = V diag(sigma_g) X, sigma_f^2 + sigma_g^2 = 1");
  cmd->add_option("--f-dataset", o->f_dataset,
                  "the HDF5 dataset of --f (default: the file's only 2-D dataset at its root)");
  cmd->add_option("--g-dataset", o->g_dataset,
                  "the HDF5 dataset of --g (default: the file's only 2-D dataset at its root)");
  add_choice_option<svd::Variant>(cmd, "--variant", o->variant, "{}");
  add_choice_option<svd::StrategyKind>(cmd, "--strategy", o->strategy,
                                       "the outer pivot strategy: {} (modmod: the thesis' choice)");
  add_count_option(cmd, "--block-width", o->block_width,
                   "columns per block column of the blocked variants (0: chosen from n)",
                   kNonNegative);
  add_count_option(cmd, "--max-sweeps", o->max_sweeps,
                   "(block-)sweeps before giving up (0: the thesis' 50)", kNonNegative);
  add_backend_option(cmd, o->backend);
  add_device_option(cmd, o->device);
  add_threads_option(cmd, o->threads);
  add_json_flag(cmd, o->json);
  cmd->add_flag("--progress", o->progress,
                "print each (block-)sweep on stderr (CPU; the GPU runs every sweep in one launch)");
  cmd->callback([o] { run(*o); });
}

}  // namespace shiftop::app
