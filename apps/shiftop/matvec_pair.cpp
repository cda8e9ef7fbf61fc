// `shiftop matvec --aux G --op G|Gadj|GadjF|FGadj`: the operator pair (btt::OperatorPair) of
// --operator F and a second operator G on F's time grid, FFTMatvec's auxiliary matrix (a
// parameter-to-QoI map, or a prior-solved matrix such as F Gamma_prior), read from any operator
// format: shiftop .h5, an FFTMatvec matrix directory (p2o or p2q), .npy kernels.
//
// FFTMatvec reads the auxiliary matrix with the primary one's p2q type and sizes, and compares
// their checksums (Matrix::Matrix in src/Matrix.cpp of s769/FFTMatvec, commit 0da26a00: that
// comparison reads the auxiliary checksum twice, so it never fires). shiftop asks only what each
// product needs: G*F the same data space as F (block rows and p2q type), FG* the same parameter
// space (parameter blocks), both one time grid and, where both operators carry one, the same
// checksum. So FG* of a p2o F and a p2q G, a QoI-to-data cross term, is allowed.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "matvec.hpp"
#include "shiftop/btt/pair.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/timer.hpp"
#include "shiftop/gpu/context.hpp"
#include "shiftop/io/fftmatvec.hpp"
#include "shiftop/io/operator_file.hpp"
#include "shiftop/io/vector_file.hpp"

namespace shiftop::app {
namespace {

std::string metadata_value(const Metadata& metadata, std::string_view key) {
  for (const auto& [name, value] : metadata)
    if (name == key) return value;
  return {};
}

bool is_p2q(const io::OperatorData& a) {
  return metadata_value(a.metadata, io::fftmatvec::kP2qKey) == "1";
}

std::string_view kind(const io::OperatorData& a) {
  return is_p2q(a) ? "parameter-to-QoI" : "parameter-to-observable";
}

// The checksum an operator carries from FFTMatvec's meta_adj, or "" for none.
std::string checksum_of(const io::OperatorData& a) {
  const std::string checksum = metadata_value(a.metadata, io::fftmatvec::kChecksumKey);
  return checksum == "0" ? std::string() : checksum;
}

void check_operators(const io::OperatorData& f, const io::OperatorData& g, btt::PairOp op,
                     const MatvecOptions& o) {
  require(g.shape.nt == f.shape.nt,
          "--aux {}: has Nt = {} time steps and --operator {} has Nt = {}: expected one time grid",
          o.aux_path, g.shape.nt, o.operator_path, f.shape.nt);
  if (op == btt::PairOp::GadjF) {
    require(g.shape.nd == f.shape.nd,
            "--aux {}: GadjF applies G* to F's output: G has {} block rows and --operator {} has "
            "Nd = {}: expected equal",
            o.aux_path, g.shape.nd, o.operator_path, f.shape.nd);
    require(is_p2q(g) == is_p2q(f),
            "--aux {}: GadjF applies G* to F's output: G is {} and --operator {} is {}: expected "
            "the same data space",
            o.aux_path, kind(g), o.operator_path, kind(f));
  }
  if (op == btt::PairOp::FGadj)
    require(g.shape.nm == f.shape.nm,
            "--aux {}: FGadj applies F to G*'s output: G has Nm = {} parameter blocks and "
            "--operator {} has Nm = {}: expected equal",
            o.aux_path, g.shape.nm, o.operator_path, f.shape.nm);
  const std::string fc = checksum_of(f), gc = checksum_of(g);
  require(fc.empty() || gc.empty() || fc == gc,
          "--aux {}: checksum {} differs from --operator {}'s checksum {}: expected matrices of "
          "one problem (FFTMatvec means to refuse this too)",
          o.aux_path, gc, o.operator_path, fc);
}

// What op reads and writes: spaces, blocks, and the operator whose marks (qoi, checksum) the
// input must carry and whose data-space marks the output gets.
struct Spaces {
  io::VectorSpace input, output;
  index_t input_blocks, output_blocks;
  const io::OperatorData* input_operator;
  const io::OperatorData* output_operator;
};

Spaces spaces_of(btt::PairOp op, const io::OperatorData& f, const io::OperatorData& g) {
  using S = io::VectorSpace;
  switch (op) {
    case btt::PairOp::G:
      return {S::Parameter, S::Data, g.shape.nm, g.shape.nd, &g, &g};
    case btt::PairOp::Gadj:
      return {S::Data, S::Parameter, g.shape.nd, g.shape.nm, &g, &g};
    case btt::PairOp::GadjF:
      return {S::Parameter, S::Parameter, f.shape.nm, g.shape.nm, &f, &g};
    case btt::PairOp::FGadj:
      return {S::Data, S::Data, g.shape.nd, f.shape.nd, &g, &f};
  }
  return {S::Unknown, S::Unknown, 0, 0, &f, &f};
}

void check_pair_input(const io::VectorData& x, const Spaces& spaces, index_t nt,
                      const MatvecOptions& o) {
  require(x.space == io::VectorSpace::Unknown || x.space == spaces.input,
          "{}: is a {}-space vector: {} expects a {}-space vector", o.input_path, name_of(x.space),
          o.op, name_of(spaces.input));
  const index_t blocks = spaces.input_blocks;
  require(x.blocks == blocks && x.nt == nt,
          "{}: input of {} must have shape ({}, {}) or (nrhs, {}, {}), got {}({}, {})",
          o.input_path, o.op, blocks, nt, blocks, nt, x.batched ? fmt::format("{}, ", x.nrhs) : "",
          x.blocks, x.nt);
  const io::OperatorData& a = *spaces.input_operator;
  if (x.space == io::VectorSpace::Data)
    require(x.qoi == is_p2q(a), "{}: {}: expected {} for the data of G, a {} operator",
            o.input_path, x.qoi ? "qoi = 1" : "no qoi = 1 mark",
            is_p2q(a) ? "qoi = 1" : "no qoi mark", kind(a));
  const std::string checksum = checksum_of(a);
  if (x.checksum != 0 && !checksum.empty())
    require(fmt::format("{}", x.checksum) == checksum,
            "{}: checksum {} does not match the operator's checksum {}: expected a vector of "
            "this operator",
            o.input_path, x.checksum, checksum);
}

btt::Plan make_plan(const io::OperatorData& a, const btt::PlanOptions& options) {
  return a.triangular ? btt::Plan::create(a.first_column, a.shape, options)
                      : btt::Plan::create_general(a.first_column, a.first_row, a.shape, options);
}

}  // namespace

void run_pair_matvec(const MatvecOptions& o, const io::OperatorData& f) {
  const btt::PairOp op = parse_name<btt::PairOp>(o.op, "--op");
  Stopwatch watch;
  const io::OperatorData g = io::read_operator(
      o.aux_path,
      {.slice = {}, .allow_nonfinite = o.allow_nonfinite, .allow_nonfinite_name = kAllowNonfinite});
  check_operators(f, g, op, o);
  const io::VectorData x = io::read_vector(o.input_path, {.allow_nonfinite = o.allow_nonfinite,
                                                          .allow_nonfinite_name = kAllowNonfinite});
  const Spaces spaces = spaces_of(op, f, g);
  check_pair_input(x, spaces, f.shape.nt, o);
  const io::VectorFormat format = output_format(o);
  const double read_seconds = watch.lap();

  btt::PlanOptions options = matvec_plan_options(o, x.nrhs);
  if (options.backend == btt::Backend::Cuda) options.gpu.context = gpu::context_for(options.gpu);
  btt::OperatorPair pair =
      btt::OperatorPair::create(std::make_shared<btt::Plan>(make_plan(f, options)),
                                std::make_shared<btt::Plan>(make_plan(g, options)),
                                {.max_rhs = options.max_rhs, .gpu = options.gpu});
  const double plan_seconds = watch.lap();

  io::VectorData y{.nrhs = x.nrhs,
                   .blocks = spaces.output_blocks,
                   .nt = f.shape.nt,
                   .batched = x.batched,
                   .values = {},
                   .space = spaces.output,
                   .qoi = spaces.output == io::VectorSpace::Data && is_p2q(*spaces.output_operator),
                   .checksum = 0,
                   .metadata = {}};
  y.values.resize(static_cast<std::size_t>(y.nrhs * y.blocks * y.nt));
  pair.apply(op, x.values, y.values, x.nrhs);
  const double apply_seconds = watch.lap();
  io::write_vector(o.output_path, y, format);
  const double write_seconds = watch.lap();

  const auto shape_json = [](const Shape& s) {
    return nlohmann::ordered_json{{"nd", s.nd}, {"nm", s.nm}, {"nt", s.nt}};
  };
  if (o.json) {
    nlohmann::ordered_json out{
        {"op", o.op},
        {"shape", shape_json(f.shape)},
        {"aux_shape", shape_json(g.shape)},
        {"aux_p2q", is_p2q(g)},
        {"nrhs", x.nrhs},
        {"precision", pair.f().precision().str()},
        {"operator_format", name_of(io::detect_operator_format(o.operator_path))},
        {"aux_format", name_of(io::detect_operator_format(o.aux_path))},
        {"output", o.output_path},
        {"output_format", name_of(format)},
        {"read_ms", read_seconds * 1e3},
        {"plan_ms", plan_seconds * 1e3},
        {"apply_ms", apply_seconds * 1e3},
        {"write_ms", write_seconds * 1e3}};
    fmt::print(summary_stream(o), "{}\n", out.dump());
  } else {
    fmt::print(summary_stream(o),
               "{} on F {} and G {} ({} rhs, precision {}): plan {:.1f} ms, apply {:.2f} ms; wrote "
               "{} ({})\n",
               o.op, f.shape.str(), g.shape.str(), x.nrhs, pair.f().precision().str(),
               plan_seconds * 1e3, apply_seconds * 1e3, o.output_path, name_of(format));
  }
}

}  // namespace shiftop::app
