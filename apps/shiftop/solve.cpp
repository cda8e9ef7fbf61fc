// `shiftop solve`: the MAP point of the linear Gaussian inverse problem d = F m + e,
// e ~ N(0, Gamma_noise), m ~ N(m_prior, Gamma_prior) (mixed-precision-block-toeplitz-matvec,
// section 2.2, eq. 4), by preconditioned conjugate gradients on the Hessian
// (shiftop/inverse/map_cg.hpp), with the prior or the circulant approximation as preconditioner,
// or (--method dense) from the Cholesky factor of the data-space Hessian
// (shiftop/inverse/data_space_hessian.hpp).
#include <fmt/core.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <utility>

#include "commands.hpp"
#include "output_paths.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/timer.hpp"
#include "shiftop/inverse/data_space_hessian.hpp"
#include "shiftop/inverse/map_cg.hpp"
#include "shiftop/io/atomic_output.hpp"
#include "shiftop/io/operator_file.hpp"
#include "shiftop/io/vector_file.hpp"

namespace shiftop::app {
namespace {

struct SolveOptions {
  std::string operator_path, data_path, output_path, truth, json_path;
  std::string method = "cg", prior = "diagonal", prior_kernels, prior_mean;
  std::string preconditioner = "prior";
  std::optional<double> noise_variance, noise_std;
  double prior_variance = 1, correlation_steps = 0;
  double tolerance = 1e-8;
  index_t max_iterations = 1000;
  bool cg_options_given = false;  // --preconditioner, --tol or --maxiter on the command line
  int threads = 0;
  bool progress = false;
};

// One vector of `blocks` x Nt from `path` (`option` names it in messages).
std::vector<double> read_one_vector(const std::string& path, const std::string& option,
                                    index_t blocks, index_t nt, const char* what) {
  io::VectorData v = io::read_vector(path);
  require(v.nrhs == 1 && v.blocks == blocks && v.nt == nt,
          "{} {}: expected one {} vector of {} blocks x {} steps, got {} vector(s) of {} x {}",
          option, path, what, blocks, nt, v.nrhs, v.blocks, v.nt);
  return std::move(v.values);
}

std::shared_ptr<inverse::Prior> make_prior(const SolveOptions& o, const Shape& shape,
                                           const btt::PlanOptions& plan_options) {
  require(std::isfinite(o.prior_variance) && o.prior_variance > 0,
          "--prior-variance: expected a positive number, got {}", o.prior_variance);
  const std::vector<double> variances(static_cast<std::size_t>(shape.nm), o.prior_variance);
  if (o.prior == "diagonal") {
    require(o.correlation_steps == 0 && o.prior_kernels.empty(),
            "--prior diagonal takes --prior-variance only (not --correlation-steps or "
            "--prior-kernels)");
    return std::make_shared<inverse::DiagonalPrior>(variances, shape.nt);
  }
  if (o.prior == "smoothing") {
    require(o.correlation_steps > 0,
            "--prior smoothing needs --correlation-steps, a positive number of time steps");
    require(o.prior_kernels.empty(), "--prior smoothing does not take --prior-kernels");
    return std::make_shared<inverse::TimeSmoothingPrior>(variances, o.correlation_steps, shape.nt,
                                                         plan_options);
  }
  require(!o.prior_kernels.empty(),
          "--prior kernels needs --prior-kernels FILE, the Nm x Nm x Nt block Toeplitz covariance");
  require(o.correlation_steps == 0, "--prior kernels does not take --correlation-steps");
  const io::OperatorData kernels = io::read_operator(o.prior_kernels);
  require(kernels.triangular && kernels.shape == Shape{shape.nm, shape.nm, shape.nt},
          "--prior-kernels {}: expected the first block column of shape (Nm={}, Nm={}, Nt={}), "
          "got {}",
          o.prior_kernels, shape.nm, shape.nm, shape.nt, kernels.shape.str());
  return std::make_shared<inverse::KernelPrior>(kernels.first_column, kernels.shape, plan_options);
}

// The MAP point and how it was found: CG's iterations and residual history (none for the dense
// method), and the seconds of its phases.
struct Solution {
  std::vector<double> m;
  index_t iterations = 0;
  std::vector<double> residual_history;
  bool converged = true;
  nlohmann::ordered_json seconds;
};

Solution solve_by_cg(const SolveOptions& o, std::shared_ptr<btt::Plan> plan,
                     const inverse::GaussianNoise& noise, std::shared_ptr<inverse::Prior> prior,
                     const std::vector<double>& d, const std::vector<double>& m_prior,
                     bool show_progress) {
  inverse::Hessian hessian(std::move(plan), noise, std::move(prior));
  inverse::MapCgOptions options;
  options.tolerance = o.tolerance;
  options.max_iterations = o.max_iterations;
  options.preconditioner =
      parse_name<inverse::Preconditioner>(o.preconditioner, "--preconditioner");
  options.threads = o.threads;
  if (show_progress) {
    options.progress = [](index_t iteration, double residual) {
      fmt::print(stderr, "\rCG iteration {}: relative residual {:.3e}", iteration, residual);
      std::fflush(stderr);
    };
  }
  inverse::MapCgResult result = inverse::map_cg(hessian, d, m_prior, options);
  if (show_progress && result.iterations > 0) fmt::print(stderr, "\n");
  return {std::move(result.m), result.iterations, std::move(result.residual_history),
          result.converged,
          nlohmann::ordered_json{{"preconditioner_setup", result.setup_seconds},
                                 {"iterations", result.iteration_seconds}}};
}

// m_map = m_prior + Gamma_prior F* K^-1 (d - F m_prior) with K = Gamma_noise + F Gamma_prior F*
// assembled and factored (shiftop/inverse/data_space_hessian.hpp).
Solution solve_dense(std::shared_ptr<btt::Plan> plan, const inverse::GaussianNoise& noise,
                     std::shared_ptr<inverse::Prior> prior, const std::vector<double>& d,
                     const std::vector<double>& m_prior, bool show_progress) {
  inverse::DataSpaceHessianOptions options;
  options.prior_mean = m_prior;
  if (show_progress) {
    options.progress = [](const inverse::DataSpaceProgress& p) {
      fmt::print(stderr, "\r{}: {} of {} columns", p.stage, p.done, p.total);
      std::fflush(stderr);
    };
  }
  const Shape shape = plan->shape();
  Stopwatch watch;
  const inverse::DataSpaceHessian hessian(std::move(plan), noise, std::move(prior), options);
  if (show_progress) fmt::print(stderr, "\n");
  watch.lap();
  Solution solution;
  solution.m.resize(static_cast<std::size_t>(shape.nm * shape.nt));
  hessian.map_point(d, solution.m);
  solution.seconds = {{"assembly", hessian.times().assembly},
                      {"factor", hessian.times().factor},
                      {"map", watch.lap()}};
  return solution;
}

// A CG run that stopped at --maxiter is a failure (exit status 1), once its outputs are written:
// a script must not take the iterate for the MAP point.
void require_converged(const SolveOptions& o, const Solution& solution) {
  require(
      solution.converged,
      "--maxiter {}: CG did not converge: relative residual {:.3e} above --tol {:.3g} (the last "
      "iterate is written to {}): expected more iterations or a looser --tol",
      o.max_iterations, solution.residual_history.empty() ? 0.0 : solution.residual_history.back(),
      o.tolerance, o.output_path);
}

void run(const SolveOptions& o) {
  require(o.noise_variance.has_value() != o.noise_std.has_value(),
          "expected exactly one of --noise-variance and --noise-std");
  const auto [noise_option, noise_value] = o.noise_variance
                                               ? std::pair{"--noise-variance", *o.noise_variance}
                                               : std::pair{"--noise-std", *o.noise_std};
  require(std::isfinite(noise_value) && noise_value > 0, "{} {}: expected a positive number",
          noise_option, noise_value);
  require(std::isfinite(o.tolerance) && o.tolerance > 0 && o.tolerance < 1,
          "--tol: expected a number in (0, 1), got {}", o.tolerance);
  require(o.method == "cg" || !o.cg_options_given,
          "--preconditioner, --tol and --maxiter are options of --method cg, not --method {}",
          o.method);
  const io::VectorFormat vector_format = io::output_vector_format(o.output_path);
  check_paths({{"--operator", o.operator_path},
               {"--data", o.data_path},
               {"--prior-kernels", o.prior_kernels},
               {"--prior-mean", o.prior_mean},
               {"--truth", o.truth}},
              {{"--output",
                o.output_path,
                output_format(vector_format),
                {OutputFormat::Npy, OutputFormat::Hdf5}},
               {"--json", o.json_path, OutputFormat::Json}});

  Stopwatch watch;
  const io::OperatorData a = io::read_operator(o.operator_path);
  const Shape& shape = a.shape;
  const auto d = read_one_vector(o.data_path, "--data", shape.nd, shape.nt, "data");
  const auto m_prior = o.prior_mean.empty() ? std::vector<double>{}
                                            : read_one_vector(o.prior_mean, "--prior-mean",
                                                              shape.nm, shape.nt, "parameter");
  const auto truth = o.truth.empty()
                         ? std::vector<double>{}
                         : read_one_vector(o.truth, "--truth", shape.nm, shape.nt, "parameter");
  require(
      o.truth.empty() || std::any_of(truth.begin(), truth.end(), [](double v) { return v != 0; }),
      "--truth {}: all values are zero: the relative error needs a nonzero true parameter",
      o.truth);
  const double read_seconds = watch.lap();

  btt::PlanOptions plan_options;
  plan_options.cpu.threads = o.threads;
  auto plan = std::make_shared<btt::Plan>(
      a.triangular ? btt::Plan::create(a.first_column, shape, plan_options)
                   : btt::Plan::create_general(a.first_column, a.first_row, shape, plan_options));
  const double variance = o.noise_variance ? *o.noise_variance : *o.noise_std * *o.noise_std;
  const inverse::GaussianNoise noise(std::vector<double>(shape.nd, variance), shape.nt);
  const std::shared_ptr<inverse::Prior> prior = make_prior(o, shape, plan_options);
  const double plan_seconds = watch.lap();
  const bool show_progress = o.progress || isatty(STDERR_FILENO) != 0;

  Solution solution = o.method == "cg"
                          ? solve_by_cg(o, plan, noise, prior, d, m_prior, show_progress)
                          : solve_dense(plan, noise, prior, d, m_prior, show_progress);
  io::write_vector(o.output_path,
                   {.blocks = shape.nm,
                    .nt = shape.nt,
                    .values = solution.m,
                    .space = io::VectorSpace::Parameter,
                    .metadata = {{"content", "MAP point"},
                                 {"prior", std::string(prior->name())},
                                 {"method", o.method}}},
                   vector_format);
  const double write_seconds = watch.lap();

  double truth_error = 0;
  if (!truth.empty()) {
    double diff = 0, norm = 0;
    for (std::size_t k = 0; k < truth.size(); ++k) {
      diff += (solution.m[k] - truth[k]) * (solution.m[k] - truth[k]);
      norm += truth[k] * truth[k];
    }
    truth_error = std::sqrt(diff / norm);
  }
  const std::string truth_text =
      truth.empty() ? "" : fmt::format(", relative error to --truth {:.3e}", truth_error);
  if (o.method == "cg") {
    fmt::print(
        "{}: wrote the MAP point ({} prior, {} preconditioner): {} after {} iterations, relative "
        "residual {:.3e}{}\n",
        o.output_path, prior->name(), o.preconditioner,
        solution.converged ? "converged" : "NOT converged", solution.iterations,
        solution.residual_history.back(), truth_text);
  } else {
    fmt::print("{}: wrote the MAP point ({} prior, data-space Hessian of order {}){}\n",
               o.output_path, prior->name(), shape.nd * shape.nt, truth_text);
  }
  if (o.json_path.empty()) {
    require_converged(o, solution);
    return;
  }
  nlohmann::ordered_json seconds{{"read", read_seconds}, {"plan", plan_seconds}};
  seconds.update(solution.seconds);
  seconds["write"] = write_seconds;
  nlohmann::ordered_json out{
      {"command", "solve"},
      {"method", o.method},
      {"preconditioner", o.method == "cg" ? nlohmann::ordered_json(o.preconditioner) : nullptr},
      {"iterations", solution.iterations},
      {"residual_history", solution.residual_history},
      {"converged", solution.converged},
      {"seconds", seconds},
      {"shape", {{"nd", shape.nd}, {"nm", shape.nm}, {"nt", shape.nt}}},
      {"prior", prior->name()},
      {"output", o.output_path}};
  if (o.method == "cg") {
    out["tolerance"] = o.tolerance;
    out["max_iterations"] = o.max_iterations;
  }
  if (!truth.empty()) out["relative_error_to_truth"] = truth_error;
  write_text_output("--json", o.json_path, out.dump() + "\n");
  require_converged(o, solution);
}

}  // namespace

void add_solve_command(CLI::App& app) {
  auto o = std::make_shared<SolveOptions>();
  CLI::App* cmd = app.add_subcommand(
      "solve", "MAP point of the Bayesian inverse problem d = F m + noise (CG or data-space)");
  cmd->add_option("--operator", o->operator_path, "the p2o map F (any operator file)")->required();
  cmd->add_option("--data", o->data_path, "the observed data d (Nd x Nt)")->required();
  cmd->add_option("-o,--output", o->output_path, "where to write the MAP point (.h5 or .npy)")
      ->required();
  cmd->add_option("--noise-variance", o->noise_variance, "noise variance of every sensor");
  cmd->add_option("--noise-std", o->noise_std, "noise standard deviation of every sensor");
  cmd->add_option("--prior", o->prior, "prior covariance: diagonal, smoothing or kernels")
      ->capture_default_str()
      ->check(CLI::IsMember({"diagonal", "smoothing", "kernels"}));
  cmd->add_option("--prior-variance", o->prior_variance,
                  "prior variance of every parameter block (diagonal, smoothing)")
      ->capture_default_str();
  cmd->add_option("--correlation-steps", o->correlation_steps,
                  "smoothing prior: correlation length in time steps, exp(-|s-t|/L)");
  cmd->add_option("--prior-kernels", o->prior_kernels,
                  "kernels prior: operator file (Nm, Nm, Nt) of the covariance's lags");
  cmd->add_option("--prior-mean", o->prior_mean, "prior mean m_prior (Nm x Nt; default 0)");
  cmd->add_option("--method", o->method,
                  "cg: preconditioned CG on the Hessian; dense: Cholesky of the data-space "
                  "Hessian Gamma_noise + F Gamma_prior F* (Nd*Nt)^2")
      ->capture_default_str()
      ->check(CLI::IsMember({"cg", "dense"}));
  const std::vector<CLI::Option*> cg_options{
      add_choice_option<inverse::Preconditioner>(cmd, "--preconditioner", o->preconditioner,
                                                 "cg: {}"),
      cmd->add_option("--tol", o->tolerance,
                      "cg: relative residual (preconditioner norm) to stop at")
          ->capture_default_str(),
      add_count_option(cmd, "--maxiter", o->max_iterations, "cg: most iterations")};
  cmd->add_option("--truth", o->truth, "a true parameter: report the MAP point's relative error");
  cmd->add_option("--json", o->json_path, "write a JSON summary (residual history) here");
  cmd->add_flag("--progress", o->progress,
                "print CG's progress on stderr (default: only when stderr is a terminal)");
  add_threads_option(cmd, o->threads);
  cmd->callback([o, cg_options] {
    o->cg_options_given =
        std::ranges::any_of(cg_options, [](CLI::Option* option) { return option->count() > 0; });
    run(*o);
  });
}

}  // namespace shiftop::app
