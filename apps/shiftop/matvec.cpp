// `shiftop matvec`: y = op(F) x for operators and vectors stored in files of any format shiftop
// reads (io/operator_file.hpp, io/vector_file.hpp), FFTMatvec's matrix directories included.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "btt/plan.hpp"
#include "commands.hpp"
#include "core/error.hpp"
#include "core/timer.hpp"
#include "io/fftmatvec_format.hpp"
#include "io/operator_file.hpp"
#include "io/vector_file.hpp"

namespace shiftop::app {
namespace {

struct MatvecOptions {
  std::string operator_path, row_path, input_path, output_path;
  std::string op = "F", precision = "DDDDD", output_format = "auto";
  int threads = 0;
  bool json = false, allow_nonfinite = false;
};

// The space of the input and of the output of `op`.
io::VectorSpace input_space(Op op) {
  return (op == Op::F || op == Op::FadjF) ? io::VectorSpace::Parameter : io::VectorSpace::Data;
}
io::VectorSpace output_space(Op op) {
  return (op == Op::F || op == Op::FFadj) ? io::VectorSpace::Data : io::VectorSpace::Parameter;
}

std::string metadata_value(const io::OperatorData& a, std::string_view key) {
  for (const auto& [name, value] : a.metadata)
    if (name == key) return value;
  return {};
}

io::OperatorData read_operator(const MatvecOptions& o) {
  io::OperatorData a =
      io::read_operator(o.operator_path, {.slice = {}, .allow_nonfinite = o.allow_nonfinite});
  if (o.row_path.empty()) return a;
  require(a.triangular, "--row: {} already holds a first block row: expected a triangular operator",
          o.operator_path);
  io::OperatorData row =
      io::read_operator(o.row_path, {.slice = {}, .allow_nonfinite = o.allow_nonfinite});
  require(row.shape == a.shape, "{}: first block row must have the kernels' shape {}, got {}",
          o.row_path, a.shape.str(), row.shape.str());
  a.first_row = std::move(row.first_column);
  a.triangular = false;
  return a;
}

// FFTMatvec's own checks of an input vector against the operator (io/fftmatvec_format.hpp): the
// space, the qoi mark of a parameter-to-QoI map's data, and the checksum.
void check_input(const io::VectorData& x, const io::OperatorData& a, Op op,
                 const MatvecOptions& o) {
  const io::VectorSpace expected = input_space(op);
  require(x.space == io::VectorSpace::Unknown || x.space == expected,
          "{}: is a {}-space vector: {} expects a {}-space vector", o.input_path,
          io::to_string(x.space), o.op, io::to_string(expected));
  const index_t blocks = input_blocks(op, a.shape);
  require(x.blocks == blocks && x.nt == a.shape.nt,
          "{}: input of {} must have shape ({}, {}) or (nrhs, {}, {}), got {}({}, {})",
          o.input_path, o.op, blocks, a.shape.nt, blocks, a.shape.nt,
          x.batched ? fmt::format("{}, ", x.nrhs) : "", x.blocks, x.nt);
  const bool p2q = metadata_value(a, io::fftmatvec::kP2qKey) == "1";
  if (x.space == io::VectorSpace::Data)
    require(x.qoi == p2q, "{}: {}: expected {} for the data of this {} operator", o.input_path,
            x.qoi ? "qoi = 1" : "no qoi = 1 mark", p2q ? "qoi = 1" : "no qoi mark",
            p2q ? "parameter-to-QoI" : "parameter-to-observable");
  const std::string checksum = metadata_value(a, io::fftmatvec::kChecksumKey);
  if (x.checksum != 0 && !checksum.empty() && checksum != "0")
    require(fmt::format("{}", x.checksum) == checksum,
            "{}: checksum {} does not match the operator's checksum {}: expected a vector of "
            "this operator",
            o.input_path, x.checksum, checksum);
}

io::VectorFormat output_format(const MatvecOptions& o) {
  if (o.output_format == "shiftop") return io::VectorFormat::Shiftop;
  if (o.output_format == "fftmatvec") return io::VectorFormat::FFTMatvec;
  if (o.output_format == "npy") return io::VectorFormat::Npy;
  // auto: .npy by name; otherwise the input's family, so FFTMatvec in gives FFTMatvec out.
  const io::VectorFormat by_name = io::output_vector_format(o.output_path);
  if (by_name == io::VectorFormat::Npy) return by_name;
  return io::detect_vector_format(o.input_path) == io::VectorFormat::FFTMatvec
             ? io::VectorFormat::FFTMatvec
             : io::VectorFormat::Shiftop;
}

void run(const MatvecOptions& o) {
  const Op op = parse_op(o.op);
  Stopwatch watch;
  const io::OperatorData a = read_operator(o);
  const Shape& shape = a.shape;
  const io::VectorData x = io::read_vector(o.input_path, {.allow_nonfinite = o.allow_nonfinite});
  check_input(x, a, op, o);
  const io::VectorFormat format = output_format(o);
  const double read_seconds = watch.lap();

  const btt::PlanOptions options{.precision = o.precision,
                                 .threads = o.threads,
                                 .max_rhs = std::min<index_t>(x.nrhs, 16),
                                 .fft_planning = btt::FftPlanning::Estimate};
  btt::Plan plan = a.triangular
                       ? btt::Plan::create(a.first_column, shape, options)
                       : btt::Plan::create_general(a.first_column, a.first_row, shape, options);
  const double plan_seconds = watch.lap();
  io::VectorData y{.nrhs = x.nrhs,
                   .blocks = output_blocks(op, shape),
                   .nt = shape.nt,
                   .batched = x.batched,
                   .values = {},
                   .space = output_space(op),
                   .qoi = output_space(op) == io::VectorSpace::Data &&
                          metadata_value(a, io::fftmatvec::kP2qKey) == "1",
                   .checksum = 0,
                   .metadata = {}};
  y.values.resize(static_cast<std::size_t>(y.nrhs * y.blocks * y.nt));
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
        {"operator_format", io::to_string(io::detect_operator_format(o.operator_path))},
        {"output", o.output_path},
        {"output_format", io::to_string(format)},
        {"read_ms", read_seconds * 1e3},
        {"plan_ms", plan_seconds * 1e3},
        {"apply_ms", apply_seconds * 1e3},
        {"write_ms", write_seconds * 1e3}};
    fmt::print("{}\n", out.dump());
  } else {
    fmt::print("{} on {} ({} rhs, precision {}): plan {:.1f} ms, apply {:.2f} ms; wrote {} ({})\n",
               o.op, shape.str(), x.nrhs, plan.precision().str(), plan_seconds * 1e3,
               apply_seconds * 1e3, o.output_path, io::to_string(format));
  }
}

}  // namespace

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
  cmd->add_option("--output", o->output_path, "output vector file (same rank as the input)")
      ->required();
  cmd->add_option("--output-format", o->output_format,
                  "auto: .npy by name, else FFTMatvec if the input is an FFTMatvec vector, else "
                  "shiftop")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "shiftop", "fftmatvec", "npy"}));
  cmd->add_option("--op", o->op, "F, Fadj, FadjF or FFadj")->capture_default_str();
  cmd->add_option("--precision", o->precision, "five-phase precision string, e.g. DSSDD")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "CPU threads (0: all)")
      ->capture_default_str()
      ->check(kNonNegative);
  cmd->add_flag("--allow-nonfinite", o->allow_nonfinite,
                "accept NaN/Inf in the operator or input instead of refusing them");
  cmd->add_flag("--json", o->json, "print a JSON summary on stdout");
  cmd->callback([o] { run(*o); });
}

}  // namespace shiftop::app
