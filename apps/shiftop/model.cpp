// `shiftop model heat2d|wave2d`: writes the p2o map of a PDE model (src/models) as an operator
// file, and optionally a smooth true parameter and the noisy data F m_true + noise it produces,
// the inputs of an inversion demo. `shiftop model ct2d`: the CT scanner (model_ct2d.cpp).
#include <fmt/core.h>

#include <cmath>
#include <span>

#include "commands.hpp"
#include "model_ct2d.hpp"
#include "output_paths.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/io/operator_file.hpp"
#include "shiftop/io/vector_file.hpp"
#include "shiftop/models/heat2d.hpp"
#include "shiftop/models/inversion_inputs.hpp"
#include "shiftop/models/wave2d.hpp"

namespace shiftop::app {
namespace {

struct ModelOptions {
  std::string model, output, truth, data;
  index_t n = 64, sources = 32, sensors = 4, nt = 200, substeps = 1;
  double noise = 0.01;
  std::uint64_t seed = 1;
  Ct2dOptions ct2d{};
};

// The options of heat2d and wave2d, which ct2d refuses (and the other way round).
constexpr const char* kPdeOptionNames[] = {"--grid", "--sources",  "--sensors",
                                           "--nt",   "--substeps", "--truth",
                                           "--data", "--noise",    "--seed"};

void refuse_options(const CLI::App& cmd, std::span<const char* const> names,
                    const std::string& model) {
  for (const char* name : names)
    require(cmd.count(name) == 0, "{}: not an option of model {}", name, model);
}

// d = F m + noise (models/inversion_inputs.hpp), F applied by the FFT plan as `matvec` does.
std::vector<double> noisy_data(const io::OperatorData& op, const std::vector<double>& m,
                               double relative, std::uint64_t seed) {
  btt::Plan plan = btt::Plan::create(op.first_column, op.shape,
                                     {.max_rhs = 1, .planning = btt::Planning::Estimate});
  std::vector<double> d(static_cast<std::size_t>(op.shape.nd * op.shape.nt));
  plan.apply(btt::Op::F, m, d);
  models::add_relative_noise(d, relative, seed);
  return d;
}

template <typename Model>
io::OperatorData build(const ModelOptions& o, const Model& model, std::vector<index_t>& sources,
                       double observation_interval) {
  io::OperatorData op;
  op.full_shape = op.shape = model.shape();
  op.first_column = model.kernels();
  const auto& config = model.config();
  sources = config.sources;
  op.metadata = {{"model", o.model},
                 {"grid", fmt::format("{}", config.n)},
                 {"substeps", fmt::format("{}", config.substeps)},
                 {"pde_time_step", fmt::format("{}", config.dt)},
                 {"observation_interval", fmt::format("{}", observation_interval)}};
  return op;
}

void run(const ModelOptions& o) {
  require(o.noise >= 0 && std::isfinite(o.noise), "--noise: expected a non-negative number, got {}",
          o.noise);
  const io::OperatorFormat format = io::output_operator_format(o.output);
  // Vectors go in the operator's family: FFTMatvec vector files next to an FFTMatvec directory.
  const auto vector_format = [&](const std::string& path) {
    const io::VectorFormat by_name = io::output_vector_format(path);
    return format == io::OperatorFormat::FFTMatvec && by_name != io::VectorFormat::Npy
               ? io::VectorFormat::FFTMatvec
               : by_name;
  };
  const std::vector<OutputFormat> vector_formats{OutputFormat::Npy, OutputFormat::Hdf5};
  check_paths({}, {{"-o",
                    o.output,
                    output_format(format),
                    {OutputFormat::Npy, OutputFormat::Hdf5, OutputFormat::Directory}},
                   {"--truth", o.truth, output_format(vector_format(o.truth)), vector_formats},
                   {"--data", o.data, output_format(vector_format(o.data)), vector_formats}});
  std::vector<index_t> sources;
  io::OperatorData op;
  if (o.model == "heat2d") {
    const auto model =
        models::Heat2d::with_default_layout(o.n, o.sources, o.sensors, o.nt, o.substeps);
    op = build(o, model, sources, static_cast<double>(model.config().substeps) * model.config().dt);
  } else {
    const auto model =
        models::Wave2d::with_default_layout(o.n, o.sources, o.sensors, o.nt, o.substeps);
    op = build(o, model, sources, model.observation_interval());
  }
  io::write_operator(o.output, op, format);
  fmt::print("{}: wrote the {} p2o map {} ({} operator)\n", o.output, o.model, op.shape.str(),
             name_of(format));
  if (o.truth.empty() && o.data.empty()) return;

  const std::vector<double> m_true = models::smooth_source(sources, o.n, o.nt);
  if (!o.truth.empty()) {
    io::write_vector(o.truth,
                     {.blocks = op.shape.nm,
                      .nt = op.shape.nt,
                      .values = m_true,
                      .space = io::VectorSpace::Parameter,
                      .metadata = {{"model", o.model}, {"content", "true parameter"}}},
                     vector_format(o.truth));
    fmt::print("{}: wrote the true parameter ({} blocks x {} steps)\n", o.truth, op.shape.nm,
               op.shape.nt);
  }
  if (!o.data.empty()) {
    io::write_vector(o.data,
                     {.blocks = op.shape.nd,
                      .nt = op.shape.nt,
                      .values = noisy_data(op, m_true, o.noise, o.seed),
                      .space = io::VectorSpace::Data,
                      .metadata = {{"model", o.model},
                                   {"content", "F m_true + noise"},
                                   {"relative_noise", fmt::format("{}", o.noise)},
                                   {"seed", fmt::format("{}", o.seed)}}},
                     vector_format(o.data));
    fmt::print("{}: wrote the data F m_true + noise ({} blocks x {} steps, noise {} of the RMS)\n",
               o.data, op.shape.nd, op.shape.nt, o.noise);
  }
}

}  // namespace

void add_model_command(CLI::App& app) {
  auto o = std::make_shared<ModelOptions>();
  CLI::App* cmd = app.add_subcommand(
      "model",
      "Write the p2o map of a PDE model (and optionally a true parameter and data), or the "
      "block-circulant system matrix of the ct2d CT scanner");
  cmd->add_option("model", o->model, "heat2d, wave2d or ct2d")
      ->required()
      ->check(CLI::IsMember({"heat2d", "wave2d", "ct2d"}));
  cmd->add_option("-o,--output", o->output,
                  "operator file: .h5 (shiftop), .npy, or a directory name (FFTMatvec); for ct2d "
                  "a block-circulant .h5 file")
      ->required();
  add_count_option(cmd, "--grid", o->n, "interior grid points per side");
  add_count_option(cmd, "--sources", o->sources, "parameters (point sources), Nm");
  add_count_option(cmd, "--sensors", o->sensors, "observation points, Nd");
  add_count_option(cmd, "--nt", o->nt, "observation time steps");
  add_count_option(cmd, "--substeps", o->substeps, "PDE time steps per observation step");
  cmd->add_option("--truth", o->truth, "also write a smooth true parameter m_true here");
  cmd->add_option("--data", o->data, "also write the data F m_true + noise here");
  cmd->add_option("--noise", o->noise, "noise standard deviation relative to the RMS of F m_true")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "seed of the noise")->capture_default_str();
  add_ct2d_options(cmd, o->ct2d);
  cmd->callback([o, cmd] {
    if (o->model == "ct2d") {
      refuse_options(*cmd, kPdeOptionNames, o->model);
      run_ct2d(*cmd, o->ct2d, o->output);
      return;
    }
    refuse_options(*cmd, kCt2dOptionNames, o->model);
    run(*o);
  });
}

}  // namespace shiftop::app
