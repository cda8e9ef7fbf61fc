// `shiftop demo`: the README's main job. The p2o map of a 2D heat equation or a 2D acoustic wave
// equation (Venkat et al. section 2.1) is built by adjoint time stepping, then F and F* are applied
// both by time stepping (the independent reference) and by shiftop's FFT plan; the differences and
// timings are printed.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "memory_needs.hpp"
#include "random_operator.hpp"
#include "runner.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/core/available_memory.hpp"
#include "shiftop/core/timer.hpp"
#include "shiftop/models/heat2d.hpp"
#include "shiftop/models/wave2d.hpp"

namespace shiftop::app {
namespace {

struct ProblemSize {
  index_t n, sources, sensors, nt, substeps;
};

// Each model's defaults show the regime the paper targets: many more parameters than sensors and
// PDE time steps finer than the observations. For the wave, 400 observations of 3 CFL-limited
// steps (a total time of about 3) let the waves cross the square and leave through the sponge.
constexpr ProblemSize kHeatDefaults{
    .n = 256, .sources = 200, .sensors = 10, .nt = 500, .substeps = 20};
constexpr ProblemSize kWaveDefaults{
    .n = 256, .sources = 200, .sensors = 10, .nt = 400, .substeps = 3};

struct DemoOptions {
  std::string model = "heat2d";
  /// 0: the model's default.
  ProblemSize size{};
  std::string precision = "DDDDD";
  int threads = 0, repetitions = 10;
  bool json = false;
};

// Progress and results for a person; silent when the output is JSON.
template <typename... Args>
void say(const DemoOptions& o, fmt::format_string<Args...> format, Args&&... args) {
  if (!o.json) fmt::print(format, std::forward<Args>(args)...);
}

// Builds the kernels of `model`, then times and compares F and F* by time stepping and by shiftop.
// `heading` is printed once the run is known to fit in memory (a failure prints nothing else).
template <typename Model>
void compare(const DemoOptions& o, const Model& model, const std::string& heading) {
  const Shape shape = model.shape();
  const btt::PlanOptions options{.precision = o.precision, .cpu = {.threads = o.threads}};
  // The kernels, the plan, and m, d and their two results each (the model checks its own state).
  require_available_memory(double_bytes(static_cast<double>(shape.kernel_size())) +
                               static_cast<double>(btt::Plan::host_bytes(shape, options)) +
                               3 * vector_bytes(shape, btt::Op::F, 1),
                           fmt::format("demo: {} on {}", o.model, shape.str()));
  say(o, "{}", heading);

  Stopwatch watch;
  const std::vector<double> kernels = model.kernels();
  const double kernel_seconds = watch.lap();
  say(o, "  p2o kernels by {} adjoint solves: {:.2f} s\n", shape.nd, kernel_seconds);
  btt::Plan plan = btt::Plan::create(kernels, shape, options);
  const double plan_seconds = watch.lap();
  say(o, "  shiftop plan (FFT of the kernels, F^ frequency-major): {:.2f} s, {:.1f} MB\n",
      plan_seconds, static_cast<double>(plan.memory_bytes()) / 1e6);

  const std::vector<double> m = random_values(shape.nm * shape.nt, 7);
  const std::vector<double> d = random_values(shape.nd * shape.nt, 8);
  std::vector<double> d_step(d.size()), d_fft(d.size()), m_step(m.size()), m_fft(m.size());
  const int step_reps = std::max(1, o.repetitions / 5);
  const double step_f = median_seconds(step_reps, [&] { model.apply_forward(m, d_step); });
  const double fft_f = median_seconds(o.repetitions, [&] { plan.apply(btt::Op::F, m, d_fft); });
  const double step_a = median_seconds(step_reps, [&] { model.apply_adjoint(d, m_step); });
  const double fft_a = median_seconds(o.repetitions, [&] { plan.apply(btt::Op::Fadj, d, m_fft); });
  const double err_f = relative_difference(d_fft, d_step);
  const double err_a = relative_difference(m_fft, m_step);

  if (o.json) {
    nlohmann::ordered_json out{{"model", o.model},
                               {"grid", o.size.n},
                               {"substeps", o.size.substeps},
                               {"shape", {{"nd", shape.nd}, {"nm", shape.nm}, {"nt", shape.nt}}},
                               {"precision", plan.precision().str()},
                               {"kernel_build_s", kernel_seconds},
                               {"plan_s", plan_seconds},
                               {"F",
                                {{"time_stepping_ms", step_f * 1e3},
                                 {"shiftop_ms", fft_f * 1e3},
                                 {"speedup", step_f / fft_f},
                                 {"relative_difference", err_f}}},
                               {"Fadj",
                                {{"time_stepping_ms", step_a * 1e3},
                                 {"shiftop_ms", fft_a * 1e3},
                                 {"speedup", step_a / fft_a},
                                 {"relative_difference", err_a}}}};
    fmt::print("{}\n", out.dump());
    return;
  }
  fmt::print("  {:<5} {:>16} {:>12} {:>9} {:>22}\n", "op", "time stepping", "shiftop", "speed-up",
             "relative difference");
  fmt::print("  {:<5} {:>13.2f} ms {:>9.3f} ms {:>8.1f}x {:>22.2e}\n", "F", step_f * 1e3,
             fft_f * 1e3, step_f / fft_f, err_f);
  fmt::print("  {:<5} {:>13.2f} ms {:>9.3f} ms {:>8.1f}x {:>22.2e}\n", "F*", step_a * 1e3,
             fft_a * 1e3, step_a / fft_a, err_a);
}

void run(DemoOptions o) {
  const ProblemSize& defaults = o.model == "wave2d" ? kWaveDefaults : kHeatDefaults;
  ProblemSize& size = o.size;
  for (auto field : {&ProblemSize::n, &ProblemSize::sources, &ProblemSize::sensors,
                     &ProblemSize::nt, &ProblemSize::substeps})
    if (size.*field == 0) size.*field = defaults.*field;

  if (o.model == "wave2d") {
    const models::Wave2d model = models::Wave2d::with_default_layout(
        size.n, size.sources, size.sensors, size.nt, size.substeps);
    compare(o, model,
            fmt::format("shiftop demo: 2D acoustic wave equation on a {}x{} grid (sponge {} points "
                        "wide), {} sources, {} sensors, {} observation steps of {} PDE steps "
                        "each\n",
                        size.n, size.n, model.config().sponge_width, size.sources, size.sensors,
                        size.nt, size.substeps));
    return;
  }
  compare(o,
          models::Heat2d::with_default_layout(size.n, size.sources, size.sensors, size.nt,
                                              size.substeps),
          fmt::format("shiftop demo: 2D heat equation on a {}x{} grid, {} sources, {} sensors, {} "
                      "observation steps of {} PDE steps each\n",
                      size.n, size.n, size.sources, size.sensors, size.nt, size.substeps));
}

}  // namespace

void add_demo_command(CLI::App& app) {
  auto o = std::make_shared<DemoOptions>();
  CLI::App* cmd = app.add_subcommand(
      "demo", "Heat- or wave-equation p2o map: shiftop's F and F* against time stepping");
  const CLI::Validator known_model(
      [](std::string& text) -> std::string {
        if (text == "heat2d" || text == "wave2d") return {};
        return "must be heat2d or wave2d, got '" + text + "'";
      },
      "heat2d|wave2d");
  cmd->add_option("--model", o->model, "PDE whose p2o map is built: heat2d or wave2d")
      ->capture_default_str()
      ->check(known_model);
  // The problem sizes default per model; 0 in DemoOptions stands for "the model's default".
  const auto size_option = [&](const char* name, index_t ProblemSize::*field,
                               const char* description) {
    cmd->add_option(name, o->size.*field,
                    fmt::format("{} [heat2d: {}, wave2d: {}]", description, kHeatDefaults.*field,
                                kWaveDefaults.*field))
        ->check(kPositive);
  };
  size_option("--grid", &ProblemSize::n, "interior grid points per side");
  size_option("--sources", &ProblemSize::sources, "parameter blocks (source points)");
  size_option("--sensors", &ProblemSize::sensors, "observation blocks (sensor points)");
  size_option("--substeps", &ProblemSize::substeps, "PDE time steps per observation step");
  size_option("--nt", &ProblemSize::nt, "observation time steps");
  cmd->add_option("--precision", o->precision, "five-phase precision string")
      ->capture_default_str();
  add_threads_option(cmd, o->threads);
  add_count_option(cmd, "--reps", o->repetitions, "timed repetitions of shiftop's apply");
  add_json_flag(cmd, o->json);
  cmd->callback([o] { run(*o); });
}

}  // namespace shiftop::app
