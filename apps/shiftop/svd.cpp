// `shiftop svd`: the one-sided Jacobi SVD, or with --hyperbolic the hyperbolic SVD, of a dense
// matrix from .npy or HDF5 (shiftop/svd/jacobi.hpp, on the backend --backend names), computed in
// the file's precision; the singular values (and vectors) are written as .npy of that precision.
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

// The checks that need the matrix's size: not empty, --hyperbolic's range (io::read_matrix
// refuses non-finite entries).
void check_matrix(index_t rows, index_t cols, const SvdOptions& o) {
  require(rows > 0 && cols > 0,
          "--input {}: the matrix is empty ({} x {}): expected at least one row and one column",
          o.input, rows, cols);
  if (o.hyperbolic < 0) return;
  require(rows >= cols,
          "--hyperbolic: the hyperbolic SVD needs at least as many rows as columns, got {} x {}",
          rows, cols);
  require(o.hyperbolic <= cols,
          "--hyperbolic {}: expected 0 <= NPLUS <= {}, the columns of the matrix", o.hyperbolic,
          cols);
}

struct Solved {
  svd::JacobiStats stats;
  index_t rows = 0, cols = 0;
  double seconds = 0;
};

// Reads the matrix in T (the file's own precision), computes and writes; timed from after the
// read to after the writes.
template <class T>
Solved solve_and_write(const SvdOptions& o, const svd::JacobiOptions& options) {
  const io::Matrix<T> a = io::read_matrix<T>(o.input, {.dataset = o.dataset,
                                                       .dataset_option = "--dataset",
                                                       .allow_nonfinite = false,
                                                       .option = "--input"});
  check_matrix(a.rows, a.cols, o);
  // The GPU's context is made before the clock starts, as its cost is not the SVD's: the library
  // runs on this shared context of the device (JacobiOptions::gpu).
  if (options.backend == Backend::Cuda) (void)gpu::shared_context(o.device);
  Stopwatch clock;  // on the GPU with the copies to and from it
  const svd::JacobiResult<T> result = svd::jacobi(a.data.data(), a.rows, a.cols, a.rows, options);
  require(result.stats.converged, "--input {}: the Jacobi {}SVD did not converge in {} sweeps{}",
          o.input, o.hyperbolic >= 0 ? "hyperbolic " : "", result.stats.sweeps,
          o.hyperbolic >= 0 ? " (it exists only when rank(A J A^T) = rank(A))"
                            : " (a sweep still rotated)");
  const index_t k = static_cast<index_t>(result.sigma.size());
  // The command's outputs are .npy (check_paths), which a FIFO, a device or "-" also take.
  const io::MatrixWriteOptions npy{.format = io::MatrixFormat::Npy};
  io::write_values<svd::Real<T>>(o.output, result.sigma, npy);
  if (!o.vectors.empty()) {
    io::write_matrix<T>(prefixed_npy(o.vectors, "U"), a.rows, k, result.u, npy);
    io::write_matrix<T>(prefixed_npy(o.vectors, "V"), a.cols, k, result.v, npy);
  }
  return {.stats = result.stats, .rows = a.rows, .cols = a.cols, .seconds = clock.elapsed()};
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
  options.variant = parse_name<svd::Variant>(o.variant, "--variant");
  options.strategy = parse_name<svd::StrategyKind>(o.strategy, "--strategy");
  options.threads = o.threads;
  if (o.progress) options.progress = print_sweeps("svd", "rotations");
  options.backend = backend_option(o.backend, o.device);
  options.gpu.device = o.device;
  const bool cuda = options.backend == Backend::Cuda;
  require(
      !cuda || options.variant == svd::Variant::Auto || options.variant == svd::Variant::Pointwise,
      "--variant {}: --backend cuda runs auto or pointwise; the blocked variants run on the "
      "CPU only",
      o.variant);
  const io::Element element =
      io::matrix_element(o.input, {.dataset = o.dataset, .dataset_option = "--dataset"});
  Solved solved;
  switch (element) {
    case io::Element::Float64:
      solved = solve_and_write<double>(o, options);
      break;
    case io::Element::Float32:
      solved = solve_and_write<float>(o, options);
      break;
    case io::Element::Complex128:
      solved = solve_and_write<std::complex<double>>(o, options);
      break;
    case io::Element::Complex64:
      solved = solve_and_write<std::complex<float>>(o, options);
      break;
  }
  const auto& [stats, rows, cols, seconds] = solved;
  if (o.json) {
    nlohmann::ordered_json out = {{"input", o.input},
                                  {"rows", rows},
                                  {"cols", cols},
                                  {"dtype", name_of(element)},
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
      o.input, rows, cols, name_of(element), std::min(rows, cols),
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
                  "Fortran order) or an HDF5 file (.h5, .hdf5) with a 2-D dataset of those types")
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
  add_choice_option<svd::Variant>(cmd, "--variant", o->variant,
                                  "{} (--backend cuda: auto or pointwise)");
  add_choice_option<svd::StrategyKind>(cmd, "--strategy", o->strategy,
                                       "the parallel pivot strategy: {}");
  add_backend_option(cmd, o->backend);
  add_device_option(cmd, o->device);
  add_threads_option(cmd, o->threads);
  add_json_flag(cmd, o->json);
  cmd->add_flag("--progress", o->progress,
                "print each sweep on stderr (CPU; the GPU runs every sweep in one launch)");
  cmd->callback([o] { run(*o); });
}

}  // namespace shiftop::app
