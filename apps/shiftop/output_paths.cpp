#include "output_paths.hpp"

#include <filesystem>
#include <system_error>

#include "io/file_identity.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/io/file_kind.hpp"

namespace shiftop::app {
namespace {

constexpr std::string_view kStandardStream = "-";

// Refuses `output` if it is `other` (an input or an earlier output), lies inside it or contains it.
void check_distinct(const OutputPath& output, const NamedPath& other, std::string_view expected) {
  const char* relation = nullptr;
  switch (io::overlap(output.path, other.path)) {
    case io::Overlap::None:
      return;
    case io::Overlap::Same:
      relation = "is the same file as";
      break;
    case io::Overlap::Inside:
      // A new file inside an input directory replaces nothing that is read.
      if (std::error_code error; !std::filesystem::exists(output.path, error)) return;
      relation = "lies inside";
      break;
    case io::Overlap::Contains:
      relation = "contains";
      break;
  }
  fail("{} '{}' {} {} '{}': expected {}", output.option, output.path, relation, other.option,
       other.path, expected);
}

}  // namespace

io::AtomicOutput::Kind output_kind(io::OperatorFormat format) {
  using Kind = io::AtomicOutput::Kind;
  return format == io::OperatorFormat::Npy         ? Kind::Stream
         : format == io::OperatorFormat::FFTMatvec ? Kind::Directory
                                                   : Kind::File;
}

io::AtomicOutput::Kind output_kind(io::VectorFormat format) {
  return format == io::VectorFormat::Npy ? io::AtomicOutput::Kind::Stream
                                         : io::AtomicOutput::Kind::File;
}

void check_paths(const std::vector<NamedPath>& inputs, const std::vector<OutputPath>& outputs,
                 StandardOutput standard_output) {
  for (const NamedPath& input : inputs)
    require(input.path != kStandardStream,
            "{} '-': shiftop does not read standard input: expected a file name", input.option);
  std::vector<NamedPath> earlier;
  for (const OutputPath& output : outputs) {
    if (output.path.empty()) continue;
    require(output.path != kStandardStream || standard_output == StandardOutput::Allowed,
            "{} '-': this command does not write to standard output (matvec --output - "
            "--output-format npy does): expected a file name",
            output.option);
    require(output.path != kStandardStream || output.kind == io::AtomicOutput::Kind::Stream,
            "{} '-': only .npy is written to standard output: expected --output-format npy or a "
            "file name",
            output.option);
    if (output.path != kStandardStream) {
      for (const NamedPath& input : inputs)
        if (!input.path.empty()) check_distinct(output, input, "a different output path");
      for (const NamedPath& other : earlier)
        check_distinct(output, other, "a different path for each output");
    }
    try {
      // "binary" is the only entry of the one directory format written (FFTMatvec's).
      io::check_output_path(output.path, output.kind, "binary");
    } catch (const Error& e) {
      fail("{}: {}", output.option, e.what());
    }
    earlier.push_back({output.option, output.path});
  }
}

void check_convert_paths(const std::string& input, const std::string& output,
                         const std::string& to) {
  io::AtomicOutput::Kind kind{};
  if (input != kStandardStream && io::detect_file_kind(input) == io::FileKind::Operator)
    kind = output_kind(to == "auto"        ? io::output_operator_format(output)
                       : to == "shiftop"   ? io::OperatorFormat::Shiftop
                       : to == "fftmatvec" ? io::OperatorFormat::FFTMatvec
                                           : io::OperatorFormat::Npy);
  else
    kind = output_kind(to == "auto"  ? io::output_vector_format(output)
                       : to == "npy" ? io::VectorFormat::Npy
                                     : io::VectorFormat::Shiftop);
  check_paths({{"input", input}}, {{"output", output, kind}});
}

}  // namespace shiftop::app
