// `shiftop gsvd`: the generalized SVD of a pair of dense matrices F, G (same columns, G of full
// column rank) from .npy or HDF5 by the implicit Hari-Zimmermann method (shiftop/svd/gsvd.hpp, on
// the backend --backend names), in FP64:
// float32 inputs are promoted, complex ones computed in complex128. Writes the generalized
// singular values sigma_f / sigma_g (nonincreasing) and, with --vectors, U, V, X, sigma_f, sigma_g.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <complex>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "output_paths.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/timer.hpp"
#include "shiftop/gpu/context.hpp"
#include "shiftop/io/matrix_file.hpp"
#include "shiftop/svd/gsvd.hpp"
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

constexpr const char* kVariantNames = "auto, pointwise, block-oriented or full-block";
constexpr const char* kVectorFiles[] = {"u", "v", "x", "sigma_f", "sigma_g"};

// The checks that need the matrix: not empty, finite entries.
void check_matrix(const io::DenseMatrix& a, const char* option, const std::string& path) {
  require(a.rows > 0 && a.cols > 0,
          "{} {}: the matrix is empty ({} x {}): expected at least one row and one column", option,
          path, a.rows, a.cols);
  const std::size_t scalars = io::is_complex(a.element) ? 2 : 1;
  for (std::size_t k = 0; k < a.data.size(); ++k) {
    if (std::isfinite(a.data[k])) continue;
    const auto element = static_cast<index_t>(k / scalars);
    fail("{} {}: {} at (row {}, column {}): expected finite values", option, path,
         std::isnan(a.data[k]) ? "NaN" : "infinity", element % a.rows, element / a.rows);
  }
}

// The column-major matrix in T (double or complex<double>; a real file gives zero imaginary
// parts).
template <class T>
std::vector<T> to_elements(const io::DenseMatrix& a) {
  std::vector<T> out(static_cast<std::size_t>(a.rows * a.cols));
  const bool complex_file = io::is_complex(a.element);
  for (std::size_t k = 0; k < out.size(); ++k) {
    if constexpr (std::is_same_v<T, double>) {
      out[k] = a.data[k];
    } else {
      out[k] = complex_file ? T(a.data[2 * k], a.data[2 * k + 1]) : T(a.data[k], 0.0);
    }
  }
  return out;
}

// Values as the doubles io::write_npy takes (complex as (re, im) pairs).
template <class T>
std::vector<double> to_doubles(const std::vector<T>& values) {
  std::vector<double> out;
  out.reserve(values.size() * (std::is_same_v<T, double> ? 1 : 2));
  for (const T& v : values) {
    if constexpr (std::is_same_v<T, double>) {
      out.push_back(v);
    } else {
      out.push_back(v.real());
      out.push_back(v.imag());
    }
  }
  return out;
}

template <class T>
svd::GsvdStats solve_and_write(const io::DenseMatrix& f, const io::DenseMatrix& g,
                               const GsvdCliOptions& o, const svd::GsvdOptions& options) {
  const index_t m = f.rows, p = g.rows, n = f.cols;
  const std::vector<T> f_elements = to_elements<T>(f), g_elements = to_elements<T>(g);
  const svd::GsvdResult<T> result =
      svd::gsvd_hz(f_elements.data(), m, m, g_elements.data(), p, p, n, options);
  require(result.stats.converged,
          "--f {}, --g {}: the GSVD did not converge in {} sweeps (a sweep still made a proper "
          "transformation; raise --max-sweeps)",
          o.f, o.g, result.stats.sweeps);
  const std::vector<index_t> values_shape{n};
  io::write_npy(o.output, result.values(), values_shape, io::Element::Float64, false);
  if (!o.vectors.empty()) {
    const io::Element element =
        std::is_same_v<T, double> ? io::Element::Float64 : io::Element::Complex128;
    // U (m x n), V (p x n), X (n x n) are column-major: written in Fortran order as they are.
    const std::vector<index_t> u_shape{m, n}, v_shape{p, n}, x_shape{n, n};
    io::write_npy(prefixed_npy(o.vectors, "u"), to_doubles(result.u), u_shape, element, true);
    io::write_npy(prefixed_npy(o.vectors, "v"), to_doubles(result.v), v_shape, element, true);
    io::write_npy(prefixed_npy(o.vectors, "x"), to_doubles(result.x), x_shape, element, true);
    io::write_npy(prefixed_npy(o.vectors, "sigma_f"), result.sigma_f, values_shape,
                  io::Element::Float64, false);
    io::write_npy(prefixed_npy(o.vectors, "sigma_g"), result.sigma_g, values_shape,
                  io::Element::Float64, false);
  }
  return result.stats;
}

void run(const GsvdCliOptions& o) {
  check_prefix("--vectors", o.vectors);
  std::vector<OutputPath> outputs{{"--output", o.output, OutputFormat::Npy}};
  for (const char* which : kVectorFiles)
    outputs.push_back({"--vectors", prefixed_npy(o.vectors, which), OutputFormat::Npy});
  check_paths({{"--f", o.f}, {"--g", o.g}}, outputs);
  svd::GsvdOptions options;
  options.compute_vectors = !o.vectors.empty();
  options.variant = svd::parse_variant(o.variant, "--variant");
  options.strategy = svd::parse_strategy_kind(o.strategy, "--strategy");
  options.block_width = o.block_width;
  options.threads = o.threads;
  options.max_sweeps = o.max_sweeps;
  if (o.progress) options.progress = print_sweeps("gsvd", "transformations");
  options.backend = parse_backend(o.backend, o.device);
  options.gpu.device = o.device;
  const io::DenseMatrix f = io::read_matrix_file(o.f, o.f_dataset, "--f-dataset");
  check_matrix(f, "--f", o.f);
  const io::DenseMatrix g = io::read_matrix_file(o.g, o.g_dataset, "--g-dataset");
  check_matrix(g, "--g", o.g);
  require(f.cols == g.cols,
          "--g {}: G has {} columns but F ({}) has {}: the pair must have the same number of "
          "columns",
          o.g, g.cols, o.f, f.cols);
  require(g.rows >= g.cols,
          "--g {}: G is {} x {}: G must have full column rank, so at least as many rows as "
          "columns",
          o.g, g.rows, g.cols);
  const bool complex = io::is_complex(f.element) || io::is_complex(g.element);
  // The GPU's context is made before the clock starts, as its cost is not the GSVD's: the library
  // runs on this shared context of the device (GsvdOptions::gpu).
  if (options.backend == Backend::Cuda) (void)gpu::shared_context(o.device);
  Stopwatch clock;  // on the GPU with the copies to and from it
  const svd::GsvdStats stats = complex ? solve_and_write<std::complex<double>>(f, g, o, options)
                                       : solve_and_write<double>(f, g, o, options);
  const double seconds = clock.elapsed();
  const char* precision = complex ? "complex128" : "float64";
  if (o.json) {
    nlohmann::ordered_json out = {{"f", o.f},
                                  {"g", o.g},
                                  {"m", f.rows},
                                  {"p", g.rows},
                                  {"n", f.cols},
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
      o.f, o.g, f.rows, f.cols, g.rows, g.cols, f.cols, o.output, precision, stats.sweeps,
      stats.transformations, stats.proper_transformations, seconds);
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
      "HDF5 file (.h5) with a 2-D float64/float32 dataset; computed in FP64: float32 is promoted "
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
  cmd->add_option("--variant", o->variant, kVariantNames)->capture_default_str();
  cmd->add_option("--strategy", o->strategy,
                  "the outer pivot strategy: modmod (the thesis' choice), rc-closest-rev, "
                  "rc-closest or rc")
      ->capture_default_str();
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
