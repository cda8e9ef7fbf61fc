// `shiftop matvec`: y = op(F) x for operators and vectors stored in files of any format shiftop
// reads (io/operator_file.hpp, io/vector_file.hpp), FFTMatvec's matrix directories included.
// Under mpiexec, or with --grid, on a process grid instead (matvec_distributed.cpp); with --aux,
// the operator pair of F and a second operator G (matvec_pair.cpp).
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "commands.hpp"
#include "matvec.hpp"
#include "mpi_launch.hpp"
#include "output_paths.hpp"
#include "shiftop/btt/pair.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/timer.hpp"
#include "shiftop/io/fftmatvec.hpp"
#include "shiftop/io/operator_file.hpp"
#include "shiftop/io/vector_file.hpp"

namespace shiftop::app {
namespace {

// The space of the input and of the output of `op`.
io::VectorSpace input_space(btt::Op op) {
  return (op == btt::Op::F || op == btt::Op::FadjF) ? io::VectorSpace::Parameter
                                                    : io::VectorSpace::Data;
}
io::VectorSpace output_space(btt::Op op) {
  return (op == btt::Op::F || op == btt::Op::FFadj) ? io::VectorSpace::Data
                                                    : io::VectorSpace::Parameter;
}

std::string metadata_value(const Metadata& metadata, std::string_view key) {
  for (const auto& [name, value] : metadata)
    if (name == key) return value;
  return {};
}

io::OperatorData read_operator(const MatvecOptions& o) {
  io::OperatorData a = io::read_operator(
      o.operator_path,
      {.slice = {}, .allow_nonfinite = o.allow_nonfinite, .allow_nonfinite_name = kAllowNonfinite});
  if (o.row_path.empty()) return a;
  require(a.triangular, "--row: {} already holds a first block row: expected a triangular operator",
          o.operator_path);
  io::OperatorData row = io::read_operator(
      o.row_path,
      {.slice = {}, .allow_nonfinite = o.allow_nonfinite, .allow_nonfinite_name = kAllowNonfinite});
  require(row.shape == a.shape, "{}: first block row must have the kernels' shape {}, got {}",
          o.row_path, a.shape.str(), row.shape.str());
  a.first_row = std::move(row.first_column);
  a.triangular = false;
  return a;
}

void run(const MatvecOptions& o) {
  if (!o.aux_path.empty()) {
    run_pair_matvec(o, read_operator(o));
    return;
  }
  const btt::Op op = parse_name<btt::Op>(o.op, "--op");
  Stopwatch watch;
  const io::OperatorData a = read_operator(o);
  const Shape& shape = a.shape;
  const io::VectorData x = io::read_vector(o.input_path, {.allow_nonfinite = o.allow_nonfinite,
                                                          .allow_nonfinite_name = kAllowNonfinite});
  check_input(x, shape, a.metadata, op, o);
  const io::VectorFormat format = output_format(o);
  const double read_seconds = watch.lap();

  const btt::PlanOptions options = matvec_plan_options(o, x.nrhs);
  btt::Plan plan = a.triangular
                       ? btt::Plan::create(a.first_column, shape, options)
                       : btt::Plan::create_general(a.first_column, a.first_row, shape, options);
  const double plan_seconds = watch.lap();
  io::VectorData y = output_vector(x, shape, a.metadata, op);
  plan.apply(op, x.values, y.values, x.nrhs);
  const double apply_seconds = watch.lap();
  io::write_vector(o.output_path, y, format);
  const double write_seconds = watch.lap();

  if (o.json) {
    nlohmann::ordered_json out{
        {"op", o.op},
        {"shape", {{"nd", shape.nd}, {"nm", shape.nm}, {"nt", shape.nt}}},
        {"nrhs", x.nrhs},
        {"precision", plan.precision().str()},
        {"triangular", plan.triangular()},
        {"operator_format", name_of(io::detect_operator_format(o.operator_path))},
        {"output", o.output_path},
        {"output_format", name_of(format)},
        {"read_ms", read_seconds * 1e3},
        {"plan_ms", plan_seconds * 1e3},
        {"apply_ms", apply_seconds * 1e3},
        {"write_ms", write_seconds * 1e3}};
    fmt::print(summary_stream(o), "{}\n", out.dump());
  } else {
    fmt::print(summary_stream(o),
               "{} on {} ({} rhs, precision {}): plan {:.1f} ms, apply {:.2f} ms; wrote {} ({})\n",
               o.op, shape.str(), x.nrhs, plan.precision().str(), plan_seconds * 1e3,
               apply_seconds * 1e3, o.output_path, name_of(format));
  }
}

// --op names an operation of F alone, or with --aux one of the pair, before anything is read.
void check_op_and_aux(const MatvecOptions& o) {
  const auto named = [&](const std::vector<std::string_view>& names) {
    return std::ranges::find(names, o.op) != names.end();
  };
  const bool pair_op = named(names_of<btt::PairOp>());
  if (o.aux_path.empty()) {
    require(!pair_op, "--op {} needs --aux, the second operator G of the pair", o.op);
    require(named(names_of<btt::Op>()), "--op: expected {} (or, with --aux, {}), got '{}'",
            choices_of<btt::Op>(), choices_of<btt::PairOp>(), o.op);
    return;
  }
  require(pair_op, "--op {} with --aux: expected {} ({} apply --operator alone, without --aux)",
          o.op, choices_of<btt::PairOp>(), choices_of<btt::Op>());
  require(o.grid.empty() && !launched_by_mpi(),
          "--aux: the operator pair runs in one process: expected no --grid and no mpiexec");
}

}  // namespace

btt::PlanOptions matvec_plan_options(const MatvecOptions& o, index_t nrhs) {
  return {.backend = backend_option(o.backend),
          .precision = o.precision,
          .max_rhs = std::min<index_t>(nrhs, 16),
          .planning = btt::Planning::Estimate,
          .cpu = {.threads = o.threads}};
}

void check_input(const io::VectorData& x, const Shape& shape, const Metadata& metadata, btt::Op op,
                 const MatvecOptions& o) {
  const io::VectorSpace expected = input_space(op);
  require(x.space == io::VectorSpace::Unknown || x.space == expected,
          "{}: is a {}-space vector: {} expects a {}-space vector", o.input_path, name_of(x.space),
          o.op, name_of(expected));
  const index_t blocks = input_blocks(op, shape);
  require(x.blocks == blocks && x.nt == shape.nt,
          "{}: input of {} must have shape ({}, {}) or (nrhs, {}, {}), got {}({}, {})",
          o.input_path, o.op, blocks, shape.nt, blocks, shape.nt,
          x.batched ? fmt::format("{}, ", x.nrhs) : "", x.blocks, x.nt);
  const bool p2q = metadata_value(metadata, io::fftmatvec::kP2qKey) == "1";
  if (x.space == io::VectorSpace::Data)
    require(x.qoi == p2q, "{}: {}: expected {} for the data of this {} operator", o.input_path,
            x.qoi ? "qoi = 1" : "no qoi = 1 mark", p2q ? "qoi = 1" : "no qoi mark",
            p2q ? "parameter-to-QoI" : "parameter-to-observable");
  const std::string checksum = metadata_value(metadata, io::fftmatvec::kChecksumKey);
  if (x.checksum != 0 && !checksum.empty() && checksum != "0")
    require(fmt::format("{}", x.checksum) == checksum,
            "{}: checksum {} does not match the operator's checksum {}: expected a vector of "
            "this operator",
            o.input_path, x.checksum, checksum);
}

io::VectorFormat output_format(const MatvecOptions& o) {
  const auto format = parse_name<io::VectorFormat>(o.output_format, "--output-format");
  if (format != io::VectorFormat::Auto) return format;
  // auto: .npy by name; otherwise the input's family, so FFTMatvec in gives FFTMatvec out.
  const io::VectorFormat by_name = io::output_vector_format(o.output_path);
  if (by_name == io::VectorFormat::Npy) return by_name;
  return io::detect_vector_format(o.input_path) == io::VectorFormat::FFTMatvec
             ? io::VectorFormat::FFTMatvec
             : io::VectorFormat::Shiftop;
}

std::FILE* summary_stream(const MatvecOptions& o) {
  return o.output_path == "-" ? stderr : stdout;
}

io::VectorData output_vector(const io::VectorData& x, const Shape& shape, const Metadata& metadata,
                             btt::Op op) {
  io::VectorData y{.nrhs = x.nrhs,
                   .blocks = output_blocks(op, shape),
                   .nt = shape.nt,
                   .batched = x.batched,
                   .values = {},
                   .space = output_space(op),
                   .qoi = output_space(op) == io::VectorSpace::Data &&
                          metadata_value(metadata, io::fftmatvec::kP2qKey) == "1",
                   .checksum = 0,
                   .metadata = {}};
  y.values.resize(static_cast<std::size_t>(y.nrhs * y.blocks * y.nt));
  return y;
}

#ifndef SHIFTOP_HAVE_MPI
void run_distributed_matvec(const MatvecOptions&) {
  fail_without_mpi("matvec");
}
#endif

void add_matvec_command(CLI::App& app) {
  auto o = std::make_shared<MatvecOptions>();
  CLI::App* cmd = app.add_subcommand("matvec", "Apply F, F*, F*F or FF* to vectors in files");
  cmd->add_option("--operator", o->operator_path,
                  "F: shiftop .h5, FFTMatvec matrix directory (the one containing binary/), or "
                  ".npy kernels of shape (Nd, Nm, Nt)")
      ->required();
  cmd->add_option(
      "--row", o->row_path,
      "first block row (kernels' shape) for a general, non-triangular block Toeplitz F");
  cmd->add_option("--input", o->input_path,
                  "vector file: shiftop .h5, FFTMatvec .h5, or .npy of shape (blocks, Nt) or "
                  "(nrhs, blocks, Nt)")
      ->required();
  cmd->add_option("--output", o->output_path,
                  "output vector file (same rank as the input); - writes .npy to standard output "
                  "(with --output-format npy)")
      ->required();
  add_choice_option<io::VectorFormat>(cmd, "--output-format", o->output_format,
                                      "{}; auto: .npy by name, else FFTMatvec if the input is an "
                                      "FFTMatvec vector, else shiftop");
  cmd->add_option("--aux", o->aux_path,
                  fmt::format("G, a second operator on F's time grid (FFTMatvec's auxiliary "
                              "matrix: a p2q map or a prior-solved F), any operator format; with "
                              "--op {}",
                              choices_of<btt::PairOp>()));
  cmd->add_option("--op", o->op,
                  fmt::format("{}; with --aux {} (GadjF: G*F, FGadj: FG*)", choices_of<btt::Op>(),
                              choices_of<btt::PairOp>()))
      ->capture_default_str();
  cmd->add_option("--precision", o->precision, "five-phase precision string, e.g. DSSDD")
      ->capture_default_str();
  add_threads_option(cmd, o->threads);
  cmd->add_flag(kAllowNonfinite, o->allow_nonfinite,
                "accept NaN/Inf in the operator or input instead of refusing them; the FFT spreads "
                "a NaN anywhere in a series to every output that series feeds (usually all)");
  cmd->add_flag("--json", o->json, "print a JSON summary on stdout");
  add_backend_option(cmd, o->backend);
  cmd->add_option("--grid", o->grid,
                  "process grid PRxPC or auto (Algorithm 4), under mpiexec (the default there: "
                  "auto); every rank reads only its slice of the operator");
  cmd->callback([o] {
    check_op_and_aux(*o);
    const std::vector<NamedPath> inputs = {{"--operator", o->operator_path},
                                           {"--row", o->row_path},
                                           {"--aux", o->aux_path},
                                           {"--input", o->input_path}};
    check_paths(inputs, {});  // "-" as an input first: output_format() reads --input
    // --output-format auto writes what the name says; a named format, only that.
    const std::vector<OutputFormat> accepted =
        o->output_format == "auto"
            ? std::vector<OutputFormat>{OutputFormat::Npy, OutputFormat::Hdf5}
            : std::vector<OutputFormat>{};
    check_paths(inputs,
                {{"--output", o->output_path, app::output_format(output_format(*o)), accepted}},
                StandardOutput::Allowed);
    if (!o->grid.empty() || launched_by_mpi())
      run_distributed_matvec(*o);
    else
      run(*o);
  });
}

}  // namespace shiftop::app
