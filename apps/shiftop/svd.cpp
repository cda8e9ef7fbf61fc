// `shiftop svd`: the one-sided Jacobi SVD, or with --hyperbolic the hyperbolic SVD, of a dense
// matrix from .npy or HDF5 (shiftop/svd/jacobi.hpp, on the backend --backend names), computed in
// the file's precision; the singular values (and vectors) are written as .npy of that precision.
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
#include "shiftop/svd/jacobi.hpp"
#include "sweep_progress.hpp"

namespace shiftop::app {
namespace {

struct SvdOptions {
  std::string input, output, vectors, dataset;
  index_t hyperbolic = -1;
  std::string variant = "auto", strategy = "rc-closest-rev", backend = "cpu";
  int threads = 0, device = 0;
  bool json = false, progress = false;
};

constexpr const char* kVariantNames = "auto, pointwise, block-oriented or full-block";

// The checks that need the matrix: its size, finite entries, --hyperbolic's range.
void check_matrix(const io::DenseMatrix& a, const SvdOptions& o) {
  require(a.rows > 0 && a.cols > 0,
          "--input {}: the matrix is empty ({} x {}): expected at least one row and one column",
          o.input, a.rows, a.cols);
  const std::size_t scalars = io::is_complex(a.element) ? 2 : 1;
  for (std::size_t k = 0; k < a.data.size(); ++k) {
    if (std::isfinite(a.data[k])) continue;
    const auto element = static_cast<index_t>(k / scalars);
    fail("--input {}: {} at (row {}, column {}): expected finite values", o.input,
         std::isnan(a.data[k]) ? "NaN" : "infinity", element % a.rows, element / a.rows);
  }
  if (o.hyperbolic < 0) return;
  require(a.rows >= a.cols,
          "--hyperbolic: the hyperbolic SVD needs at least as many rows as columns, got {} x {}",
          a.rows, a.cols);
  require(o.hyperbolic <= a.cols,
          "--hyperbolic {}: expected 0 <= NPLUS <= {}, the columns of the matrix", o.hyperbolic,
          a.cols);
}

// The column-major matrix in T (doubles round to float for FP32 files, which held floats).
template <class T>
std::vector<T> to_elements(const io::DenseMatrix& a) {
  std::vector<T> out(static_cast<std::size_t>(a.rows * a.cols));
  for (std::size_t k = 0; k < out.size(); ++k) {
    if constexpr (std::is_same_v<T, svd::Real<T>>)
      out[k] = static_cast<T>(a.data[k]);
    else
      out[k] =
          T(static_cast<svd::Real<T>>(a.data[2 * k]), static_cast<svd::Real<T>>(a.data[2 * k + 1]));
  }
  return out;
}

// Values as the doubles io::write_npy takes (complex as (re, im) pairs).
template <class T>
std::vector<double> to_doubles(const std::vector<T>& values) {
  std::vector<double> out;
  out.reserve(values.size() * (std::is_same_v<T, svd::Real<T>> ? 1 : 2));
  for (const T& v : values) {
    if constexpr (std::is_same_v<T, svd::Real<T>>) {
      out.push_back(static_cast<double>(v));
    } else {
      out.push_back(static_cast<double>(v.real()));
      out.push_back(static_cast<double>(v.imag()));
    }
  }
  return out;
}

template <class T>
svd::JacobiStats solve_and_write(const io::DenseMatrix& a, const SvdOptions& o,
                                 const svd::JacobiOptions& options) {
  const std::vector<T> elements = to_elements<T>(a);
  const svd::JacobiResult<T> result = svd::jacobi(elements.data(), a.rows, a.cols, a.rows, options);
  require(result.stats.converged, "--input {}: the Jacobi {}SVD did not converge in {} sweeps{}",
          o.input, o.hyperbolic >= 0 ? "hyperbolic " : "", result.stats.sweeps,
          o.hyperbolic >= 0 ? " (it exists only when rank(A J A^T) = rank(A))"
                            : " (a sweep still rotated)");
  const index_t k = static_cast<index_t>(result.sigma.size());
  const io::Element real = io::is_single(a.element) ? io::Element::Float32 : io::Element::Float64;
  const std::vector<index_t> s_shape{k};
  io::write_npy(o.output, to_doubles(result.sigma), s_shape, real, false);
  if (!o.vectors.empty()) {
    // U (m x k) and V (n x k) are column-major: written in Fortran order as they are.
    const std::vector<index_t> u_shape{a.rows, k}, v_shape{a.cols, k};
    io::write_npy(prefixed_npy(o.vectors, "U"), to_doubles(result.u), u_shape, a.element, true);
    io::write_npy(prefixed_npy(o.vectors, "V"), to_doubles(result.v), v_shape, a.element, true);
  }
  return result.stats;
}

void run(const SvdOptions& o) {
  check_prefix("--vectors", o.vectors);
  check_paths({{"--input", o.input}},
              {{"--output", o.output, OutputFormat::Npy},
               {"--vectors", prefixed_npy(o.vectors, "U"), OutputFormat::Npy},
               {"--vectors", prefixed_npy(o.vectors, "V"), OutputFormat::Npy}});
  svd::JacobiOptions options;
  options.compute_u = options.compute_v = !o.vectors.empty();
  options.n_plus = o.hyperbolic;
  options.variant = svd::parse_variant(o.variant, "--variant");
  options.strategy = svd::parse_strategy_kind(o.strategy, "--strategy");
  options.threads = o.threads;
  if (o.progress) options.progress = print_sweeps("svd", "rotations");
  options.backend = parse_backend(o.backend, o.device);
  options.gpu.device = o.device;
  const bool cuda = options.backend == Backend::Cuda;
  require(
      !cuda || options.variant == svd::Variant::Auto || options.variant == svd::Variant::Pointwise,
      "--variant {}: --backend cuda runs auto or pointwise; the blocked variants run on the "
      "CPU only",
      o.variant);
  const io::DenseMatrix a = io::read_matrix_file(o.input, o.dataset, "--dataset");
  check_matrix(a, o);
  // The GPU's context is made before the clock starts, as its cost is not the SVD's: the library
  // runs on this shared context of the device (JacobiOptions::gpu).
  if (cuda) (void)gpu::shared_context(o.device);
  Stopwatch clock;  // on the GPU with the copies to and from it
  svd::JacobiStats stats;
  switch (a.element) {
    case io::Element::Float64:
      stats = solve_and_write<double>(a, o, options);
      break;
    case io::Element::Float32:
      stats = solve_and_write<float>(a, o, options);
      break;
    case io::Element::Complex128:
      stats = solve_and_write<std::complex<double>>(a, o, options);
      break;
    case io::Element::Complex64:
      stats = solve_and_write<std::complex<float>>(a, o, options);
      break;
  }
  const double seconds = clock.elapsed();
  if (o.json) {
    nlohmann::ordered_json out = {{"input", o.input},
                                  {"rows", a.rows},
                                  {"cols", a.cols},
                                  {"dtype", io::to_string(a.element)},
                                  {"backend", o.backend},
                                  {"hyperbolic", nullptr},
                                  {"variant", o.variant},
                                  {"strategy", o.strategy},
                                  {"sweeps", stats.sweeps},
                                  {"rotations", stats.rotations},
                                  {"converged", stats.converged},
                                  {"rank", stats.rank},
                                  {"seconds", seconds},
                                  {"output", o.output}};
    if (o.hyperbolic >= 0) out["hyperbolic"] = o.hyperbolic;
    if (!o.vectors.empty())
      out["vectors"] = {prefixed_npy(o.vectors, "U"), prefixed_npy(o.vectors, "V")};
    fmt::print("{}\n", out.dump());
    return;
  }
  fmt::print(
      "{}: {} x {} {}, {} {}singular values in {} ({} sweeps, {} rotations, rank {}, "
      "{:.3g} s)\n",
      o.input, a.rows, a.cols, io::to_string(a.element), std::min(a.rows, a.cols),
      o.hyperbolic >= 0 ? "hyperbolic " : "", o.output, stats.sweeps, stats.rotations, stats.rank,
      seconds);
  if (!o.vectors.empty())
    fmt::print("{}, {}: the singular vectors\n", prefixed_npy(o.vectors, "U"),
               prefixed_npy(o.vectors, "V"));
}

}  // namespace

void add_svd_command(CLI::App& app) {
  auto o = std::make_shared<SvdOptions>();
  CLI::App* cmd = app.add_subcommand(
      "svd", "Singular values (and vectors) of a dense matrix by the one-sided Jacobi method");
  cmd->add_option("--input", o->input,
                  "the matrix: a 2-D .npy array (float64, float32, complex128 or complex64; C or "
                  "Fortran order) or an HDF5 file (.h5) with a 2-D float64/float32 dataset")
      ->required();
  cmd->add_option("--output", o->output,
                  "the singular values, descending, as .npy (float32 for float32/complex64 "
                  "input, else float64)")
      ->required();
  cmd->add_option("--vectors", o->vectors,
                  "also write U to PREFIX_U.npy and V to PREFIX_V.npy (A = U diag(s) V^H; "
                  "hyperbolic: A = U diag(s) V^-1 with V^H J V = J)");
  cmd->add_option("--dataset", o->dataset,
                  "the HDF5 dataset that holds the matrix (default: the file's only 2-D dataset "
                  "at its root)");
  cmd->add_option("--hyperbolic", o->hyperbolic,
                  "the hyperbolic SVD with J = diag(I_NPLUS, -I_(n-NPLUS)) on the n columns "
                  "(needs rows >= columns); the values of the +1 part come first")
      ->check(kNonNegative);
  cmd->add_option("--variant", o->variant,
                  std::string(kVariantNames) + " (--backend cuda: auto or pointwise)")
      ->capture_default_str();
  cmd->add_option("--strategy", o->strategy,
                  "the parallel pivot strategy: rc-closest-rev, rc-closest or modmod")
      ->capture_default_str();
  add_backend_option(cmd, o->backend);
  add_device_option(cmd, o->device);
  add_threads_option(cmd, o->threads);
  add_json_flag(cmd, o->json);
  cmd->add_flag("--progress", o->progress,
                "print each sweep on stderr (CPU; the GPU runs every sweep in one launch)");
  cmd->callback([o] { run(*o); });
}

}  // namespace shiftop::app
