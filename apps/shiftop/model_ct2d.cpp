#include "model_ct2d.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "commands.hpp"
#include "output_paths.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/io/circulant_file.hpp"

namespace shiftop::app {
namespace {

using models::ct2d::Geometry;

// Scanners of the shapes of the paper's Table 1 (k = 150 blocks): "CT small", mB = 19,600 rows
// and k*nB = 150 * 535 * 16 = 1,284,000 columns; "CT medium", 19,600 and 150 * 1551 * 24 =
// 5,583,600; "CT large", 78,400 and 150 * 4134 * 48 = 29,764,800. A ray of this 2D scanner
// crosses about rings + sectors/3 voxels, so A has more nonzeros than the paper's matrices of the
// same shape: 24,976,448 (1274 per row) for CT small against the paper's 7,029,618 (359), and
// 51,790,638 (2642) for CT medium against 18,845,735 (962), 493,333,351 (6293) for CT large
// against 120,506,745 (1537): 15 s and 5.8 GB of memory on 16 cores.
Geometry preset(const std::string& name) {
  if (name == "ct-small")
    return {.positions = 150, .rings = 535, .sectors = 2400, .detectors = 19600};
  if (name == "ct-medium")
    return {.positions = 150, .rings = 1551, .sectors = 3600, .detectors = 19600};
  return {.positions = 150, .rings = 4134, .sectors = 7200, .detectors = 78400};
}

template <class T>
void trace_and_write(const Geometry& g, const Ct2dOptions& o, const std::string& output) {
  const bool terminal = isatty(fileno(stderr)) != 0;
  int shown = -1;
  const auto progress = [&](double fraction) {
    const int percent = static_cast<int>(100 * fraction);
    if (!terminal || percent == shown) return;
    shown = percent;
    fmt::print(stderr, "\rct2d: tracing {} rays x 2 passes: {:3d}%", g.detectors, percent);
    std::fflush(stderr);
  };
  const auto start = std::chrono::steady_clock::now();
  const circ::FirstBlockRow<T> a = models::ct2d::system_matrix<T>(g, progress);
  if (terminal) fmt::print(stderr, "\n");
  io::write_circulant(output, a, {.overwrite = o.overwrite, .overwrite_name = "--overwrite"});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print(
      "{}: wrote the ct2d system matrix, {}, {} nonzeros ({:.1f} per row, {}), {:.2f} s ({})\n",
      output, a.shape.str(), a.nnz(),
      static_cast<double>(a.nnz()) / static_cast<double>(a.shape.mb), o.precision, seconds,
      g.str());
}

}  // namespace

const char* const kCt2dOptionNames[9] = {"--positions", "--rings",     "--sectors",
                                         "--detectors", "--radius",    "--source-distance",
                                         "--preset",    "--precision", "--overwrite"};

void add_ct2d_options(CLI::App* cmd, Ct2dOptions& o) {
  Geometry& g = o.geometry;
  cmd->add_option("--positions", g.positions, "ct2d: rotation positions over 360 degrees, k")
      ->capture_default_str()
      ->check(kPositive);
  cmd->add_option("--rings", g.rings, "ct2d: rings of the polar image grid")
      ->capture_default_str()
      ->check(kPositive);
  cmd->add_option("--sectors", g.sectors, "ct2d: sectors of the polar grid, a multiple of k")
      ->capture_default_str()
      ->check(kPositive);
  cmd->add_option("--detectors", g.detectors, "ct2d: detector bins (rays per position), mB")
      ->capture_default_str()
      ->check(kPositive);
  cmd->add_option("--radius", g.radius, "ct2d: radius of the field of view")->capture_default_str();
  cmd->add_option("--source-distance", g.source_distance,
                  "ct2d: distance of the source from the centre (> radius)")
      ->capture_default_str();
  cmd->add_option("--preset", o.preset,
                  "ct2d: the shapes of the paper's CT small (k=150, mB=19600, k*nB=1284000), CT "
                  "medium (mB=19600, k*nB=5583600) or CT large (mB=78400, k*nB=29764800); "
                  "explicit options override them")
      ->check(CLI::IsMember({"ct-small", "ct-medium", "ct-large"}));
  cmd->add_option("--precision", o.precision, "ct2d: values stored as float32 or float64")
      ->capture_default_str()
      ->check(CLI::IsMember({"float32", "float64"}));
  cmd->add_flag("--overwrite", o.overwrite, "ct2d: replace an existing output file");
}

void run_ct2d(const CLI::App& cmd, Ct2dOptions o, const std::string& output) {
  if (!o.preset.empty()) {
    const Geometry sizes = preset(o.preset);
    Geometry& g = o.geometry;
    if (cmd.count("--positions") == 0) g.positions = sizes.positions;
    if (cmd.count("--rings") == 0) g.rings = sizes.rings;
    if (cmd.count("--sectors") == 0) g.sectors = sizes.sectors;
    if (cmd.count("--detectors") == 0) g.detectors = sizes.detectors;
  }
  o.geometry.validate();
  check_paths({}, {{"-o", output, OutputFormat::Hdf5}});
  std::error_code error;
  require(o.overwrite || !std::filesystem::exists(std::filesystem::symlink_status(output, error)),
          "{}: already exists: expected a new file (pass --overwrite to replace it)", output);
  if (o.precision == "float32")
    trace_and_write<float>(o.geometry, o, output);
  else
    trace_and_write<double>(o.geometry, o, output);
}

}  // namespace shiftop::app
