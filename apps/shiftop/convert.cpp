// `shiftop convert IN OUT`: operators and vectors between shiftop's .h5, FFTMatvec's matrix
// directory and vector files, and .npy; optionally only some rows and parameter blocks of an
// operator (read without reading the rest). A block-circulant operator has one format, shiftop's
// .h5, and is copied to it.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <type_traits>
#include <variant>

#include "commands.hpp"
#include "output_paths.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/io/circulant_file.hpp"
#include "shiftop/io/fftmatvec.hpp"
#include "shiftop/io/file_kind.hpp"
#include "shiftop/io/operator_file.hpp"
#include "shiftop/io/vector_file.hpp"

namespace shiftop::app {
namespace {

struct ConvertOptions {
  std::string input, output, to = "auto", rows, cols, space;
  bool allow_nonfinite = false;
};

// "B:E", "B:" or ":E" (E exclusive), as in Python slices.
io::BlockRange parse_range(const std::string& text, std::string_view option) {
  const std::size_t colon = text.find(':');
  const auto number = [&](std::string_view part, index_t empty) {
    if (part.empty()) return empty;
    index_t value = 0;
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
    require(error == std::errc() && end == part.data() + part.size() && value >= 0,
            "{}: '{}' is not a block range: expected B:E, B: or :E with non-negative integers",
            option, text);
    return value;
  };
  require(colon != std::string::npos,
          "{}: '{}' is not a block range: expected B:E, B: or :E with non-negative integers",
          option, text);
  const std::string_view view(text);
  return {number(view.substr(0, colon), 0), number(view.substr(colon + 1), -1)};
}

// Adds "FFTMatvec attribute NAME" for each of `attributes` not yet in `dropped`.
void add_attribute_names(const io::Attributes& attributes, std::vector<std::string>& dropped) {
  for (const auto& [name, value] : attributes) {
    std::string item = fmt::format("FFTMatvec attribute {}", name);
    if (std::ranges::find(dropped, item) == dropped.end()) dropped.push_back(std::move(item));
  }
}

// Attributes of types shiftop cannot hold are dropped whatever the target.
void add_uncarried(const std::vector<std::string>& names, std::vector<std::string>& dropped) {
  for (const std::string& name : names)
    dropped.push_back(fmt::format("FFTMatvec attribute {} (of a type shiftop cannot hold)", name));
}

std::string dropped_note(const std::vector<std::string>& dropped) {
  return dropped.empty() ? std::string()
                         : fmt::format("; metadata this format cannot hold was dropped: {}",
                                       fmt::join(dropped, ", "));
}

void convert_operator(const ConvertOptions& o) {
  io::OperatorReadOptions read{
      .slice = {}, .allow_nonfinite = o.allow_nonfinite, .allow_nonfinite_name = kAllowNonfinite};
  if (!o.rows.empty()) read.slice.rows = parse_range(o.rows, "--rows");
  if (!o.cols.empty()) read.slice.cols = parse_range(o.cols, "--cols");
  io::OperatorData op = io::read_operator(o.input, read);
  // A block of a block Toeplitz operator is one too: written as a whole operator of its own.
  op.full_shape = op.shape;
  op.row_begin = op.col_begin = 0;
  const auto to = parse_name<io::OperatorFormat>(o.to, "--to");
  const io::OperatorFormat format =
      to == io::OperatorFormat::Auto ? io::output_operator_format(o.output) : to;
  // Formats other than shiftop's own have no place for free-form metadata: say what is dropped.
  std::vector<std::string> dropped;
  for (const auto& [key, value] : op.metadata) {
    const bool fftmatvec_key = key == io::fftmatvec::kPrefixKey || key == io::fftmatvec::kP2qKey ||
                               key == io::fftmatvec::kChecksumKey;
    if (format == io::OperatorFormat::Npy ||
        (format == io::OperatorFormat::FFTMatvec && !fftmatvec_key))
      dropped.push_back(key);
  }
  if (format == io::OperatorFormat::Npy)
    for (const io::Attributes& row : op.fftmatvec_attributes)
      add_attribute_names(row, dropped);
  add_uncarried(op.uncarried_attributes, dropped);
  io::write_operator(o.output, op, format);
  fmt::print("{}: wrote the {} operator {} from {} ({}){}\n", o.output, name_of(format),
             op.shape.str(), o.input, name_of(io::detect_operator_format(o.input)),
             dropped_note(dropped));
}

void convert_vector(const ConvertOptions& o) {
  require(o.rows.empty() && o.cols.empty(),
          "--rows/--cols select part of an operator: expected an operator, {} is a vector",
          o.input);
  io::VectorData vector = io::read_vector(
      o.input, {.allow_nonfinite = o.allow_nonfinite, .allow_nonfinite_name = kAllowNonfinite});
  if (!o.space.empty()) {
    const io::VectorSpace space =
        o.space == "parameter" ? io::VectorSpace::Parameter : io::VectorSpace::Data;
    require(vector.space == io::VectorSpace::Unknown || vector.space == space,
            "--space {}: {} is a {}-space vector: expected the space it was written with", o.space,
            o.input, name_of(vector.space));
    vector.space = space;
  }
  const auto to = parse_name<io::VectorFormat>(o.to, "--to");
  const io::VectorFormat format =
      to == io::VectorFormat::Auto ? io::output_vector_format(o.output) : to;
  // FFTMatvec's vector file has no place for free-form metadata, .npy for nothing but the values.
  std::vector<std::string> dropped;
  if (format != io::VectorFormat::Shiftop)
    for (const auto& [key, value] : vector.metadata)
      dropped.push_back(key);
  if (format == io::VectorFormat::Npy) {
    if (vector.space != io::VectorSpace::Unknown) dropped.emplace_back("space");
    if (vector.qoi) dropped.emplace_back("qoi");
    if (vector.checksum != 0) dropped.emplace_back("checksum");
    add_attribute_names(vector.fftmatvec_attributes, dropped);
  }
  add_uncarried(vector.uncarried_attributes, dropped);
  io::write_vector(o.output, vector, format);
  fmt::print("{}: wrote the {} vector ({}{} blocks x {} steps, {} space) from {} ({}){}\n",
             o.output, name_of(format), vector.batched ? fmt::format("{} x ", vector.nrhs) : "",
             vector.blocks, vector.nt, name_of(vector.space), o.input,
             name_of(io::detect_vector_format(o.input)), dropped_note(dropped));
}

// Checked and rewritten: its values keep their type, its indices become int32 where they fit.
void convert_circulant(const ConvertOptions& o) {
  require(o.rows.empty() && o.cols.empty(),
          "--rows/--cols select part of a block Toeplitz operator: {} is a block-circulant "
          "operator",
          o.input);
  require(o.space.empty(), "--space names the space of a vector: {} is a block-circulant operator",
          o.input);
  require(!o.allow_nonfinite,
          "{}: {} is a block-circulant operator, whose values shiftop keeps finite: expected no {}",
          kAllowNonfinite, o.input, kAllowNonfinite);
  std::visit(
      [&]<class T>(const circ::FirstBlockRow<T>& a) {
        // As for the other kinds, an existing output is replaced (atomically).
        io::write_circulant(o.output, a, {.overwrite = true});
        fmt::print("{}: wrote the block-circulant operator {} ({} nonzeros, {}) from {}\n",
                   o.output, a.shape.str(), a.nnz(),
                   std::is_same_v<T, float> ? "float32" : "float64", o.input);
      },
      io::read_stored_circulant(o.input));
}

void run(const ConvertOptions& o) {
  check_convert_paths(o.input, o.output, o.to);
  switch (io::detect_file_kind(o.input)) {
    case io::FileKind::Operator:
      convert_operator(o);
      break;
    case io::FileKind::Vector:
      convert_vector(o);
      break;
    case io::FileKind::Circulant:
      convert_circulant(o);
      break;
  }
}

}  // namespace

void add_convert_command(CLI::App& app) {
  auto o = std::make_shared<ConvertOptions>();
  CLI::App* cmd = app.add_subcommand(
      "convert", "Convert an operator or vector between shiftop .h5, FFTMatvec and .npy");
  cmd->add_option("input", o->input,
                  "operator (shiftop .h5, FFTMatvec directory, 3-D .npy), vector (shiftop .h5, "
                  "FFTMatvec .h5, 2-D .npy) or block-circulant operator (shiftop .h5)")
      ->required();
  cmd->add_option("output", o->output,
                  "where to write; the format follows the name unless --to says otherwise: .h5 "
                  "shiftop, .npy npy, any other name an FFTMatvec directory (operators)")
      ->required();
  add_choice_option<io::OperatorFormat>(cmd, "--to", o->to, "output format: {}");
  cmd->add_option("--rows", o->rows, "operator rows to keep, B:E (Python slice, E exclusive)");
  cmd->add_option("--cols", o->cols, "operator parameter blocks to keep, B:E");
  cmd->add_option("--space", o->space,
                  "the space of a vector whose file does not say (needed for FFTMatvec output)")
      ->check(CLI::IsMember({"parameter", "data"}));
  cmd->add_flag(kAllowNonfinite, o->allow_nonfinite,
                "copy NaN/Inf instead of refusing them (a matvec with the result then spreads a "
                "NaN anywhere in a series, through the FFT, to every output that series feeds)");
  cmd->callback([o] { run(*o); });
}

}  // namespace shiftop::app
