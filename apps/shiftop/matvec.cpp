// `shiftop matvec`: y = op(F) x for operators and vectors stored in files.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "btt/plan.hpp"
#include "commands.hpp"
#include "core/error.hpp"
#include "core/timer.hpp"
#include "io/npy.hpp"

namespace shiftop::app {
namespace {

struct MatvecOptions {
  std::string operator_path, row_path, input_path, output_path;
  std::string op = "F", precision = "DDDDD";
  int threads = 0;
  bool json = false;
};

Shape operator_shape(const io::NpyArray& kernels, const std::string& path) {
  require(kernels.shape.size() == 3,
          "{}: operator kernels must be a 3-D array of shape (Nd, Nm, Nt), got shape ({})", path,
          fmt::join(kernels.shape, ", "));
  const Shape shape{kernels.shape[0], kernels.shape[1], kernels.shape[2]};
  require(shape.nd > 0 && shape.nm > 0 && shape.nt > 0,
          "{}: operator kernels have an empty dimension: shape ({})", path,
          fmt::join(kernels.shape, ", "));
  return shape;
}

void run(const MatvecOptions& o) {
  const Op op = parse_op(o.op);
  Stopwatch watch;
  const io::NpyArray kernels = io::read_npy(o.operator_path);
  const Shape shape = operator_shape(kernels, o.operator_path);
  io::NpyArray row;
  if (!o.row_path.empty()) {
    row = io::read_npy(o.row_path);
    require(row.shape == kernels.shape,
            "{}: first block row must have the kernels' shape ({}), got ({})", o.row_path,
            fmt::join(kernels.shape, ", "), fmt::join(row.shape, ", "));
  }
  const io::NpyArray x = io::read_npy(o.input_path);
  const index_t blocks = input_blocks(op, shape);
  const bool batched = x.shape.size() == 3;
  require((x.shape.size() == 2 || batched) && x.shape[x.shape.size() - 2] == blocks &&
              x.shape.back() == shape.nt,
          "{}: input of {} must have shape ({}, {}) or (nrhs, {}, {}), got ({})", o.input_path,
          o.op, blocks, shape.nt, blocks, shape.nt, fmt::join(x.shape, ", "));
  const index_t nrhs = batched ? x.shape[0] : 1;
  require(nrhs >= 1, "{}: input holds no right-hand side (shape ({}))", o.input_path,
          fmt::join(x.shape, ", "));
  const double read_seconds = watch.lap();

  const btt::PlanOptions options{.precision = o.precision,
                                 .threads = o.threads,
                                 .max_rhs = std::min<index_t>(nrhs, 16),
                                 .fft_planning = btt::FftPlanning::Estimate};
  btt::Plan plan = o.row_path.empty()
                       ? btt::Plan::create(kernels.data, shape, options)
                       : btt::Plan::create_general(kernels.data, row.data, shape, options);
  const double plan_seconds = watch.lap();
  std::vector<double> y(static_cast<std::size_t>(nrhs * output_blocks(op, shape) * shape.nt));
  plan.apply(op, x.data, y, nrhs);
  const double apply_seconds = watch.lap();
  std::vector<index_t> y_shape{output_blocks(op, shape), shape.nt};
  if (batched) y_shape.insert(y_shape.begin(), nrhs);
  io::write_npy(o.output_path, y, y_shape);
  const double write_seconds = watch.lap();

  if (o.json) {
    nlohmann::ordered_json out{{"op", o.op},
                               {"shape", {{"nd", shape.nd}, {"nm", shape.nm}, {"nt", shape.nt}}},
                               {"nrhs", nrhs},
                               {"precision", plan.precision().str()},
                               {"triangular", plan.triangular()},
                               {"output", o.output_path},
                               {"read_ms", read_seconds * 1e3},
                               {"plan_ms", plan_seconds * 1e3},
                               {"apply_ms", apply_seconds * 1e3},
                               {"write_ms", write_seconds * 1e3}};
    fmt::print("{}\n", out.dump());
  } else {
    fmt::print("{} on {} ({} rhs, precision {}): plan {:.1f} ms, apply {:.2f} ms; wrote {}\n", o.op,
               shape.str(), nrhs, plan.precision().str(), plan_seconds * 1e3, apply_seconds * 1e3,
               o.output_path);
  }
}

}  // namespace

void add_matvec_command(CLI::App& app) {
  auto o = std::make_shared<MatvecOptions>();
  CLI::App* cmd = app.add_subcommand("matvec", "Apply F, F*, F*F or FF* to vectors in files");
  cmd->add_option("--operator", o->operator_path,
                  "kernels of F: float64 .npy of shape (Nd, Nm, Nt), the first block column")
      ->required();
  cmd->add_option("--row", o->row_path,
                  "first block row (same shape) for a general, non-triangular block Toeplitz F");
  cmd->add_option("--input", o->input_path, ".npy of shape (blocks, Nt) or (nrhs, blocks, Nt)")
      ->required();
  cmd->add_option("--output", o->output_path, "output .npy (same rank as the input)")->required();
  cmd->add_option("--op", o->op, "F, Fadj, FadjF or FFadj")->capture_default_str();
  cmd->add_option("--precision", o->precision, "five-phase precision string, e.g. DSSDD")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "CPU threads (0: all)")
      ->capture_default_str()
      ->check(kNonNegative);
  cmd->add_flag("--json", o->json, "print a JSON summary on stdout");
  cmd->callback([o] { run(*o); });
}

}  // namespace shiftop::app
