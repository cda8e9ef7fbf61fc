// `shiftop ct-recon`: a CT reconstruction end to end on the ct2d scanner
// (include/shiftop/models/ct2d.hpp): the system matrix C (traced, or read from a circulant file
// made by `shiftop model ct2d` with the same geometry), the Shepp-Logan phantom's sinogram C x,
// optional Poisson noise, and MLEM, SIRT or CGLS (include/shiftop/circ/reconstruct.hpp) with one
// progress line per iteration; the polar image as .npy (rings x sectors) and, optionally, a
// Cartesian PNG and a JSON summary with the history.
#include <fmt/core.h>
#include <omp.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "output_paths.hpp"
#include "shiftop/circ/operator.hpp"
#include "shiftop/circ/reconstruct.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/timer.hpp"
#include "shiftop/io/atomic_output.hpp"
#include "shiftop/io/circulant_file.hpp"
#include "shiftop/io/npy.hpp"
#include "shiftop/io/png.hpp"
#include "shiftop/models/ct2d.hpp"

namespace shiftop::app {
namespace {

namespace ct2d = models::ct2d;

struct CtReconOptions {
  ct2d::Geometry geometry{};
  std::string operator_path, precision, method = "mlem", backend = "cpu";
  int iterations = 20, device = 0, threads = 0;
  std::optional<double> counts;
  std::uint64_t seed = 0;
  std::string output, phantom, png, json;
  index_t pixels = 512;
  std::vector<double> window;
};

// A polar image in column order as a rings x sectors array (row-major), in float64.
template <class T>
std::vector<double> rings_by_sectors(const ct2d::Geometry& g, const std::vector<T>& image) {
  std::vector<double> out(static_cast<std::size_t>(g.rings * g.sectors));
  for (index_t ring = 0; ring < g.rings; ++ring)
    for (index_t sector = 0; sector < g.sectors; ++sector)
      out[static_cast<std::size_t>(ring * g.sectors + sector)] =
          static_cast<double>(image[static_cast<std::size_t>(ct2d::voxel_column(g, ring, sector))]);
  return out;
}

void write_polar_npy(const ct2d::Geometry& g, const std::string& path,
                     const std::vector<double>& polar) {
  const std::vector<index_t> shape{g.rings, g.sectors};
  io::write_npy(path, polar, shape);
}

// The first block row: read from --operator (its shape must be the geometry's) or traced.
template <class T>
circ::FirstBlockRow<T> system_matrix(const CtReconOptions& o) {
  const ct2d::Geometry& g = o.geometry;
  if (o.operator_path.empty()) return ct2d::system_matrix<T>(g);
  circ::FirstBlockRow<T> a = io::read_circulant<T>(o.operator_path);
  require(a.shape == g.shape(),
          "--operator {}: holds {}, but the geometry options give {}: pass the --positions, "
          "--rings, --sectors and --detectors the file was made with",
          o.operator_path, a.shape.str(), g.shape().str());
  return a;
}

template <class T>
void run(const CtReconOptions& o) {
  const ct2d::Geometry& g = o.geometry;
  Stopwatch watch;
  circ::Options options;
  options.backend = backend_option(o.backend, o.device);
  options.gpu.device = o.device;
  options.cpu.threads = o.threads;
  circ::Operator<T> c = circ::Operator<T>::create(system_matrix<T>(o), options);
  const double setup_seconds = watch.lap();

  // The data: the phantom's sinogram, with Poisson noise at --counts per unit line integral.
  const std::vector<double> phantom = ct2d::shepp_logan(g);
  std::vector<T> sinogram(static_cast<std::size_t>(c.shape().rows()));
  c.apply(circ::Op::C, std::vector<T>(phantom.begin(), phantom.end()), sinogram);
  if (o.counts) {
    const std::vector<double> noisy = ct2d::poisson_noise(
        std::vector<double>(sinogram.begin(), sinogram.end()), *o.counts, o.seed);
    std::copy(noisy.begin(), noisy.end(), sinogram.begin());
  }
  fmt::print("ct-recon: {} on {} ({} nonzeros in A, {}), {} iterations{}\n", o.method, g.str(),
             c.nnz(), c.choices().str(), o.iterations,
             o.counts ? fmt::format(", Poisson noise at {} counts (seed {})", *o.counts, o.seed)
                      : std::string(", noiseless"));

  circ::ReconOptions recon;
  recon.iterations = o.iterations;
  const circ::ReconMethod method = parse_name<circ::ReconMethod>(o.method, "--method");
  recon.progress = [method](const circ::ReconProgress& p) {
    const std::string nll = method == circ::ReconMethod::Mlem
                                ? fmt::format("{:.9e}", p.neg_log_likelihood)
                                : std::string("-");
    fmt::print("iteration {:4d}  relative residual {:.6e}  NLL {}  {:.3f} s\n", p.iteration,
               p.relative_residual, nll, p.seconds);
    std::fflush(stdout);
  };
  const std::span<const T> b(sinogram);
  const circ::ReconResult<T> result = method == circ::ReconMethod::Mlem   ? circ::mlem(c, b, recon)
                                      : method == circ::ReconMethod::Sirt ? circ::sirt(c, b, recon)
                                                                          : circ::cgls(c, b, recon);
  const double recon_seconds = watch.lap();

  double diff = 0, norm = 0;
  for (std::size_t j = 0; j < phantom.size(); ++j) {
    const double d = static_cast<double>(result.image[j]) - phantom[j];
    diff += d * d;
    norm += phantom[j] * phantom[j];
  }
  const double error = std::sqrt(diff / norm);

  write_polar_npy(g, o.output, rings_by_sectors(g, result.image));
  if (!o.phantom.empty()) write_polar_npy(g, o.phantom, rings_by_sectors(g, phantom));
  io::GrayWindow window{0.0, *std::max_element(phantom.begin(), phantom.end())};
  if (!o.window.empty()) window = {o.window[0], o.window[1]};
  if (!o.png.empty()) {
    const std::vector<double> image(result.image.begin(), result.image.end());
    io::write_png(o.png, ct2d::to_cartesian(g, image, o.pixels), o.pixels, o.pixels, window);
  }
  fmt::print(
      "{}: wrote the {} image ({} rings x {} sectors){}: relative error to the phantom "
      "{:.4e}, relative residual {:.4e}, {:.2f} s setup, {:.2f} s reconstruction\n",
      o.output, o.method, g.rings, g.sectors, o.png.empty() ? "" : " and " + o.png, error,
      result.history.empty() ? 1.0 : result.history.back().relative_residual, setup_seconds,
      recon_seconds);
  if (o.json.empty()) return;
  nlohmann::ordered_json history = nlohmann::ordered_json::array();
  for (const circ::ReconProgress& p : result.history)
    history.push_back({{"iteration", p.iteration},
                       {"relative_residual", p.relative_residual},
                       {"neg_log_likelihood", p.neg_log_likelihood},
                       {"seconds", p.seconds}});
  const nlohmann::ordered_json out{
      {"command", "ct-recon"},
      {"method", o.method},
      {"precision", sizeof(T) == 4 ? "float32" : "float64"},
      {"geometry",
       {{"positions", g.positions},
        {"rings", g.rings},
        {"sectors", g.sectors},
        {"detectors", g.detectors},
        {"radius", g.radius},
        {"source_distance", g.source_distance}}},
      {"shape", {{"k", c.shape().k}, {"mb", c.shape().mb}, {"nb", c.shape().nb}}},
      {"nnz", c.nnz()},
      {"choices", c.choices().str()},
      {"counts", o.counts ? nlohmann::ordered_json(*o.counts) : nullptr},
      {"seed", o.seed},
      {"iterations", o.iterations},
      {"history", history},
      {"relative_error_to_phantom", error},
      {"seconds", {{"setup", setup_seconds}, {"reconstruction", recon_seconds}}},
      {"output", o.output}};
  write_text_output("--json", o.json, out.dump() + "\n");
}

void check_and_run(const CtReconOptions& o) {
  o.geometry.validate();
  require(!o.counts || (std::isfinite(*o.counts) && *o.counts > 0),
          "--counts {}: expected a positive number of counts per unit line integral",
          o.counts.value_or(0));
  require(o.window.empty() || (std::isfinite(o.window[0]) && std::isfinite(o.window[1]) &&
                               o.window[0] < o.window[1]),
          "--window {} {}: expected two finite gray levels LO < HI",
          o.window.empty() ? 0 : o.window[0], o.window.empty() ? 0 : o.window[1]);
  require(o.png.empty() || o.pixels <= 32768, "--pixels {}: expected at most 32768", o.pixels);
  check_paths({{"--operator", o.operator_path}}, {{"--output", o.output, OutputFormat::Npy},
                                                  {"--phantom", o.phantom, OutputFormat::Npy},
                                                  {"--png", o.png, OutputFormat::Png},
                                                  {"--json", o.json, OutputFormat::Json}});
  if (o.threads > 0) omp_set_num_threads(o.threads);
  // The file decides the precision unless --precision says otherwise; a traced C is float32, as
  // `shiftop model ct2d` writes it.
  std::string precision = o.precision;
  if (precision.empty())
    precision =
        o.operator_path.empty() ? "float32" : io::inspect_circulant(o.operator_path).value_type;
  if (precision == "float32")
    run<float>(o);
  else
    run<double>(o);
}

}  // namespace

void add_ct_recon_command(CLI::App& app) {
  auto o = std::make_shared<CtReconOptions>();
  CLI::App* cmd = app.add_subcommand(
      "ct-recon",
      "reconstruct the Shepp-Logan phantom on the ct2d CT scanner (MLEM, SIRT or CGLS)");
  ct2d::Geometry& g = o->geometry;
  cmd->add_option("--operator", o->operator_path,
                  "the system matrix from `shiftop model ct2d` (default: trace it); the geometry "
                  "options must be the ones it was made with")
      ->check(CLI::ExistingFile);
  cmd->add_option("--positions", g.positions, "rotation positions over 360 degrees, k")
      ->capture_default_str()
      ->check(kPositive);
  cmd->add_option("--rings", g.rings, "rings of the polar image grid")
      ->capture_default_str()
      ->check(kPositive);
  cmd->add_option("--sectors", g.sectors, "sectors of the polar grid, a multiple of --positions")
      ->capture_default_str()
      ->check(kPositive);
  cmd->add_option("--detectors", g.detectors, "detector bins per position")
      ->capture_default_str()
      ->check(kPositive);
  cmd->add_option("--radius", g.radius, "radius of the field of view")->capture_default_str();
  cmd->add_option("--source-distance", g.source_distance,
                  "distance of the source from the centre (> radius)")
      ->capture_default_str();
  cmd->add_option("--precision", o->precision,
                  "float32 or float64 (default: the --operator file's, else float32)")
      ->check(CLI::IsMember({"float32", "float64"}));
  add_choice_option<circ::ReconMethod>(cmd, "--method", o->method, "{}");
  add_count_option(cmd, "--iterations", o->iterations, "iterations (one C and one C^T each)");
  cmd->add_option("--counts", o->counts,
                  "Poisson noise: counts per unit line integral (default: noiseless)");
  cmd->add_option("--seed", o->seed, "seed of the Poisson noise")->capture_default_str();
  add_backend_option(cmd, o->backend);
  add_device_option(cmd, o->device);
  add_threads_option(cmd, o->threads);
  cmd->add_option("-o,--output", o->output,
                  "the reconstruction as .npy, float64 of shape (rings, sectors)")
      ->required();
  cmd->add_option("--phantom", o->phantom, "also write the phantom as .npy (rings, sectors)");
  cmd->add_option("--png", o->png, "also write the image resampled to a Cartesian grid as PNG");
  add_count_option(cmd, "--pixels", o->pixels, "--png: width and height in pixels");
  cmd->add_option("--window", o->window,
                  "--png: the values shown black and white, LO HI (default: 0 and the phantom's "
                  "maximum)")
      ->expected(2);
  cmd->add_option("--json", o->json, "write a JSON summary with the per-iteration history here");
  cmd->callback([o] { check_and_run(*o); });
}

}  // namespace shiftop::app
