// `shiftop regpath`: the Tikhonov regularisation path of d = F m for many weights alpha at once
// (shiftop/inverse/regpath.hpp: the GSVD of every frequency pair of the circulant embedding; with
// --backend cuda the GSVDs on a GPU), the residual norm, seminorm and GCV per alpha as a table or
// JSON, the alpha chosen by GCV or the L-curve corner, its solution written as a vector file, and
// the L-curve + GCV plot (python -m shiftop.plot regpath, python_plotter.hpp).
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "output_paths.hpp"
#include "python_plotter.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/timer.hpp"
#include "shiftop/inverse/regpath.hpp"
#include "shiftop/io/matrix_file.hpp"
#include "shiftop/io/operator_file.hpp"
#include "shiftop/io/vector_file.hpp"

namespace shiftop::app {
namespace {

struct RegPathOptions {
  std::string operator_path, data_path, output, plot, laplacian, backend = "cpu";
  std::string reg = "identity", alphas, choose = "gcv";  // alphas empty: the path's default
  double mass = 1.0, time_weight = 1.0, space_weight = 1.0;
  int threads = 0, device = 0;
  bool json = false, progress = false;
};

double parse_number(const std::string& text, const std::string& what) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  require(ec == std::errc() && end == text.data() + text.size() && !text.empty(),
          "--alphas: {} '{}' is not a number", what, text);
  return value;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t at = text.find(separator, start);
    parts.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

// "a,b,c" (increasing) or "LOG:MIN:MAX:COUNT" (COUNT values log-spaced from MIN to MAX).
std::vector<double> parse_alphas(const std::string& text) {
  std::vector<double> alphas;
  if (text.starts_with("LOG:") || text.starts_with("log:")) {
    const std::vector<std::string> parts = split(text.substr(4), ':');
    require(parts.size() == 3, "--alphas '{}': expected LOG:MIN:MAX:COUNT", text);
    const double low = parse_number(parts[0], "MIN"), high = parse_number(parts[1], "MAX");
    const double count = parse_number(parts[2], "COUNT");
    require(std::isfinite(low) && std::isfinite(high) && low > 0 && high >= low,
            "--alphas '{}': expected 0 < MIN <= MAX, finite", text);
    require(count >= 1 && count <= 100000 && count == std::floor(count),
            "--alphas '{}': expected COUNT an integer from 1 to 100000", text);
    const auto n = static_cast<int>(count);
    require(n > 1 || low == high, "--alphas '{}': COUNT 1 needs MIN = MAX", text);
    require(n == 1 || low < high, "--alphas '{}': COUNT {} needs MIN < MAX", text, n);
    for (int k = 0; k < n; ++k) {
      const double t = n == 1 ? 0.0 : static_cast<double>(k) / static_cast<double>(n - 1);
      alphas.push_back(k == n - 1 ? high : std::exp(std::log(low) + t * std::log(high / low)));
    }
    return alphas;
  }
  for (const std::string& part : split(text, ','))
    alphas.push_back(parse_number(part, "value"));
  for (std::size_t k = 0; k < alphas.size(); ++k) {
    require(std::isfinite(alphas[k]) && alphas[k] > 0,
            "--alphas '{}': value {} is {}: expected positive finite numbers", text, k + 1,
            alphas[k]);
    require(k == 0 || alphas[k] > alphas[k - 1],
            "--alphas '{}': expected increasing values, got {} after {}", text, alphas[k],
            alphas[k - 1]);
  }
  return alphas;
}

// The Nm x Nm Laplacian, row-major, from a real .npy or HDF5 matrix (its entries checked below,
// with the symmetry, in the option's words).
std::vector<double> read_laplacian(const std::string& path, index_t nm) {
  const io::Matrix<double> a =
      io::read_matrix<double>(path, {.allow_nonfinite = true, .option = "--laplacian"});
  require(a.rows == nm && a.cols == nm,
          "--laplacian {}: expected an Nm x Nm = {} x {} matrix, got {} x {}", path, nm, nm, a.rows,
          a.cols);
  std::vector<double> lap(static_cast<std::size_t>(nm * nm));
  for (index_t i = 0; i < nm; ++i)
    for (index_t j = 0; j < nm; ++j)
      lap[static_cast<std::size_t>(i * nm + j)] = a.data[static_cast<std::size_t>(i + j * nm)];
  inverse::require_laplacian(lap, nm, fmt::format("--laplacian {}", path));
  return lap;
}

// The first or last alpha of the grid as GCV's choice: the best alpha may then lie beyond it. (An
// L-curve corner is never there: inverse::lcurve_corner finds none then.)
bool at_grid_end(std::size_t chosen, std::size_t size) {
  return size >= 2 && (chosen == 0 || chosen == size - 1);
}

nlohmann::ordered_json path_or_null(const std::string& path) {
  return path.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(path);
}

// The exact Toeplitz problem for the identity regulariser: Tikhonov with alpha * mass * I is the
// MAP point with noise variance 1 and prior variance 1 / (alpha * mass)^2 (shiftop solve).
std::string exact_solve_command(const RegPathOptions& o, double alpha) {
  if (o.reg != "identity" || !o.laplacian.empty()) return {};
  const double scale = alpha * o.mass;
  return fmt::format(
      "shiftop solve --operator {} --data {} --noise-variance 1 --prior diagonal "
      "--prior-variance {:.17g} --preconditioner circulant -o m_exact.h5",
      o.operator_path, o.data_path, 1.0 / (scale * scale));
}

void write_plot(const RegPathOptions& o, const nlohmann::ordered_json& curves, const Shape& shape) {
  draw_plot("--plot", o.plot, "regpath", text_input(curves.dump()),
            {"--title", fmt::format("{} ({}, {})", o.operator_path, shape.str(), o.reg)});
}

void run(const RegPathOptions& o) {
  const io::VectorFormat vector_format =
      o.output.empty() ? io::VectorFormat::Auto : io::output_vector_format(o.output);
  check_paths({{"OPERATOR", o.operator_path}, {"DATA", o.data_path}, {"--laplacian", o.laplacian}},
              {{"--output",
                o.output,
                output_format(vector_format),
                {OutputFormat::Npy, OutputFormat::Hdf5}},
               {"--plot", o.plot, OutputFormat::Plot}});
  require(std::isfinite(o.mass) && o.mass > 0,
          "--mass: expected a positive number (the identity block keeps R^[0] of full column "
          "rank), got {}",
          o.mass);
  require(std::isfinite(o.time_weight) && o.time_weight >= 0,
          "--time-weight: expected a finite number >= 0, got {}", o.time_weight);
  require(std::isfinite(o.space_weight) && o.space_weight >= 0,
          "--space-weight: expected a finite number >= 0, got {}", o.space_weight);
  std::vector<double> alphas = o.alphas.empty() ? std::vector<double>{} : parse_alphas(o.alphas);
  const Backend backend = backend_option(o.backend, o.device);
  if (!o.plot.empty()) {
    plot_format("--plot", o.plot);
    require_python_plotter("--plot");
  }
  auto stage = [&](const std::string& text) {
    if (o.progress) {
      fmt::print(stderr, "regpath: {}\n", text);
      std::fflush(stderr);
    }
  };

  Stopwatch watch;
  stage("reading the operator and the data");
  const io::OperatorData op = io::read_operator(o.operator_path);
  const Shape& shape = op.shape;
  io::VectorData d = io::read_vector(o.data_path);
  require(d.nrhs == 1 && d.blocks == shape.nd && d.nt == shape.nt,
          "DATA {}: expected one data vector of Nd = {} blocks x Nt = {} steps, got {} vector(s) "
          "of {} x {}",
          o.data_path, shape.nd, shape.nt, d.nrhs, d.blocks, d.nt);
  for (std::size_t k = 0; k < d.values.size(); ++k)
    require(std::isfinite(d.values[k]),
            "DATA {}: value {} (block {}, step {}) is {}: expected finite numbers", o.data_path, k,
            static_cast<index_t>(k) / shape.nt, static_cast<index_t>(k) % shape.nt, d.values[k]);
  inverse::Regulariser regulariser;
  regulariser.mass = o.mass;
  regulariser.time_derivative = o.reg == "dt1" ? 1 : o.reg == "dt2" ? 2 : 0;
  regulariser.time_weight = o.time_weight;
  regulariser.space_weight = o.space_weight;
  if (!o.laplacian.empty()) regulariser.laplacian = read_laplacian(o.laplacian, shape.nm);
  const double read_seconds = watch.lap();

  inverse::RegPathOptions options;
  options.threads = o.threads;
  options.backend = backend;
  options.gpu.device = o.device;
  stage(
      fmt::format("F^ and the GSVDs of {} frequency pairs ({} backend)", shape.nt + 1, o.backend));
  const inverse::RegularizationPath path(op.first_column, op.first_row, shape, regulariser,
                                         d.values, options);
  const double gsvd_seconds = watch.lap();
  if (alphas.empty()) alphas = path.default_alphas();
  stage(fmt::format("the path at {} alphas", alphas.size()));
  const std::vector<inverse::PathPoint> points = path.evaluate(alphas);
  const std::size_t by_gcv = inverse::gcv_choice(points);
  const std::optional<std::size_t> by_lcurve = inverse::lcurve_corner(points);
  require(o.choose == "gcv" || by_lcurve.has_value(),
          "--choose lcurve: the L-curve of these {} alphas has no corner (fewer than 5 alphas, its "
          "largest curvature at an end of the grid, or no 45-degree turn as an L's around it); "
          "widen --alphas{} or use --choose gcv",
          points.size(), o.alphas.empty() ? "" : " (the default spans the generalized values)");
  const std::size_t chosen = o.choose == "gcv" ? by_gcv : *by_lcurve;
  const double alpha = points[chosen].alpha;
  const bool at_end = o.choose == "gcv" && at_grid_end(chosen, points.size());
  if (at_end)
    fmt::print(stderr,
               "shiftop: warning: {} chose alpha {:.6g}, at the {} end of the {} alphas: the best "
               "alpha may lie beyond them; widen --alphas{}\n",
               o.choose == "gcv" ? "GCV" : "the L-curve corner", alpha,
               chosen < points.size() / 2 ? "small" : "large", points.size(),
               o.alphas.empty() ? "" : " (the default spans the generalized singular values)");
  const double path_seconds = watch.lap();
  if (!o.output.empty()) {
    stage(fmt::format("the solution at alpha {:.6g}", alpha));
    const std::vector<double> m = path.solve(alpha);
    io::write_vector(o.output,
                     {.blocks = shape.nm,
                      .nt = shape.nt,
                      .values = m,
                      .space = io::VectorSpace::Parameter,
                      .metadata = {{"content", "circulant-embedded Tikhonov solution"},
                                   {"regulariser", o.reg},
                                   {"alpha", fmt::format("{:.17g}", alpha)}}},
                     vector_format);
  }
  const double solve_seconds = watch.lap();

  nlohmann::ordered_json curves{{"alphas", nlohmann::ordered_json::array()},
                                {"residual_norms", nlohmann::ordered_json::array()},
                                {"seminorms", nlohmann::ordered_json::array()},
                                {"gcv", nlohmann::ordered_json::array()},
                                {"gcv_choice", by_gcv},
                                {"lcurve_corner", by_lcurve ? nlohmann::ordered_json(*by_lcurve)
                                                            : nlohmann::ordered_json(nullptr)}};
  for (const inverse::PathPoint& p : points) {
    curves["alphas"].push_back(p.alpha);
    curves["residual_norms"].push_back(p.residual_norm);
    curves["seminorms"].push_back(p.seminorm);
    curves["gcv"].push_back(p.gcv);
  }
  if (!o.plot.empty()) write_plot(o, curves, shape);
  const std::string exact = exact_solve_command(o, alpha);

  if (o.json) {
    nlohmann::ordered_json out{{"command", "regpath"},
                               {"operator", o.operator_path},
                               {"data", o.data_path},
                               {"shape", {{"nd", shape.nd}, {"nm", shape.nm}, {"nt", shape.nt}}},
                               {"triangular", op.first_row.empty()},
                               {"regulariser",
                                {{"time", o.reg},
                                 {"mass", o.mass},
                                 {"time_weight", o.time_weight},
                                 {"laplacian", path_or_null(o.laplacian)},
                                 {"space_weight", o.space_weight}}},
                               {"backend", o.backend},
                               {"approximation", "circulant"},
                               {"choose", o.choose},
                               {"chosen", chosen},
                               {"alpha", alpha},
                               {"chosen_at_grid_end", at_end}};
    out.update(curves);
    out["exact_solve"] = path_or_null(exact);
    out["output"] = path_or_null(o.output);
    out["plot"] = path_or_null(o.plot);
    out["seconds"] = {{"read", read_seconds},
                      {"gsvd", gsvd_seconds},
                      {"path", path_seconds},
                      {"solve", solve_seconds}};
    fmt::print("{}\n", out.dump());
    return;
  }
  fmt::print("{}: {}, regulariser {} (mass {:g}", o.operator_path, shape.str(), o.reg, o.mass);
  if (o.reg != "identity") fmt::print(", time weight {:g}", o.time_weight);
  if (!o.laplacian.empty()) fmt::print(", Laplacian {} weight {:g}", o.laplacian, o.space_weight);
  fmt::print("), GSVDs of {} frequency pairs in {:.3g} s\n", shape.nt + 1, gsvd_seconds);
  fmt::print("  {:>12}  {:>12}  {:>12}  {:>12}\n", "alpha", "residual", "seminorm", "GCV");
  for (std::size_t k = 0; k < points.size(); ++k) {
    const inverse::PathPoint& p = points[k];
    std::string mark;
    if (k == by_gcv) mark += " <- GCV";
    if (by_lcurve && k == *by_lcurve) mark += " <- L-curve";
    if (k == chosen) mark += " (chosen)";
    fmt::print("  {:12.4e}  {:12.4e}  {:12.4e}  {:12.4e}{}\n", p.alpha, p.residual_norm, p.seminorm,
               p.gcv, mark);
  }
  fmt::print("chosen by {}: alpha {:.6g}\n", o.choose == "gcv" ? "GCV" : "the L-curve corner",
             alpha);
  fmt::print(
      "note: this is the CIRCULANT APPROXIMATION of the Tikhonov problem (the block-circulant "
      "embedding of period 2*Nt, data padded with zeros), not its exact Toeplitz solution\n");
  if (!exact.empty())
    fmt::print("the exact Toeplitz solution for this alpha: {}\n", exact);
  else
    fmt::print(
        "the exact Toeplitz solution with this regulariser is not a `shiftop solve` prior; use "
        "the path's solution as a starting point\n");
  if (!o.output.empty())
    fmt::print("{}: the circulant-embedded solution at alpha {:.6g}, {} x {}\n", o.output, alpha,
               shape.nm, shape.nt);
  if (!o.plot.empty()) fmt::print("{}: the L-curve and GCV plot\n", o.plot);
}

}  // namespace

void add_regpath_command(CLI::App& app) {
  auto o = std::make_shared<RegPathOptions>();
  CLI::App* cmd = app.add_subcommand(
      "regpath",
      "Tikhonov regularisation path of d = F m for many alphas at once (the circulant "
      "approximation, through the GSVD of every frequency pair), the GCV or L-curve choice and "
      "its solution");
  cmd->add_option("OPERATOR", o->operator_path,
                  "the operator F: shiftop .h5, FFTMatvec matrix directory or .npy kernels")
      ->required();
  cmd->add_option("DATA", o->data_path, "the data d (Nd x Nt vector file)")->required();
  cmd->add_option("--reg", o->reg,
                  "the time part of the regulariser: identity (none), dt1 (first difference) or "
                  "dt2 (second difference), beside mass * I")
      ->capture_default_str()
      ->check(CLI::IsMember({"identity", "dt1", "dt2"}));
  cmd->add_option("--mass", o->mass, "weight of the identity block (> 0)")->capture_default_str();
  cmd->add_option("--time-weight", o->time_weight, "weight of the time-difference block (dt1, dt2)")
      ->capture_default_str();
  cmd->add_option(
      "--laplacian", o->laplacian,
      "a symmetric Nm x Nm graph Laplacian of the parameter points (.npy, .h5 or .hdf5): "
      "adds space_weight * Lap to the regulariser");
  cmd->add_option("--space-weight", o->space_weight, "weight of the Laplacian block")
      ->capture_default_str();
  cmd->add_option("--alphas", o->alphas,
                  "the weights: an increasing comma list, or LOG:MIN:MAX:COUNT log-spaced "
                  "(default: 40 log-spaced over the generalized singular values of every "
                  "frequency, at most 12 decades, as Python's shiftop.regpath)");
  cmd->add_option("--choose", o->choose, "how alpha is chosen: gcv or lcurve (the corner)")
      ->capture_default_str()
      ->check(CLI::IsMember({"gcv", "lcurve"}));
  cmd->add_option("-o,--output", o->output,
                  "write the chosen alpha's solution (Nm x Nt; .npy or .h5)");
  cmd->add_option("--plot", o->plot,
                  "draw the L-curve and the GCV (.png, .svg or .pdf), with the Python package "
                  "shiftop (python -m shiftop.plot; $SHIFTOP_PYTHON picks the interpreter)");
  add_backend_option(cmd, o->backend);
  add_device_option(cmd, o->device);
  add_threads_option(cmd, o->threads);
  add_json_flag(cmd, o->json);
  cmd->add_flag("--progress", o->progress, "print the stages on stderr");
  cmd->callback([o] { run(*o); });
}

}  // namespace shiftop::app
