#include "output_paths.hpp"

#include <filesystem>
#include <fstream>
#include <system_error>

#include "io/fftmatvec_format.hpp"
#include "io/file_identity.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/io/file_kind.hpp"

namespace shiftop::app {
namespace {

constexpr std::string_view kStandardStream = "-";

void refuse_overlap(const OutputPath& output, const NamedPath& other, io::Overlap overlap,
                    std::string_view expected) {
  const char* relation = overlap == io::Overlap::Same     ? "is the same file as"
                         : overlap == io::Overlap::Inside ? "lies inside"
                                                          : "contains";
  fail("{} '{}' {} {} '{}': expected {}", output.option, output.path, relation, other.option,
       other.path, expected);
}

// Refuses `output` if it is the input `other`, lies inside it or contains it (by file identity).
// A new file inside an input directory replaces nothing that is read, and is allowed.
void check_distinct_from_input(const OutputPath& output, const NamedPath& input) {
  const io::Overlap overlap = io::overlap(output.path, input.path);
  if (overlap == io::Overlap::None) return;
  if (std::error_code error;
      overlap == io::Overlap::Inside && !std::filesystem::exists(output.path, error))
    return;
  refuse_overlap(output, input, overlap, "a different output path");
}

// Refuses `output` if it is at or below the earlier output `other`, or `other` below it, whatever
// is on disk now: one output may create the directory the other lies in, or replace it.
void check_distinct_from_output(const OutputPath& output, const NamedPath& other) {
  const io::Overlap overlap = io::path_overlap(output.path, other.path);
  if (overlap != io::Overlap::None)
    refuse_overlap(output, other, overlap, "a different path for each output, none inside another");
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
    // "out/" names a directory, which AtomicOutput would write as the file "out".
    require(output.kind == io::AtomicOutput::Kind::Directory || !output.path.ends_with('/'),
            "{} '{}': ends in '/', which names a directory: expected a file name", output.option,
            output.path);
    if (output.path != kStandardStream) {
      for (const NamedPath& input : inputs)
        if (!input.path.empty()) check_distinct_from_input(output, input);
      for (const NamedPath& other : earlier)
        check_distinct_from_output(output, other);
    }
    try {
      // The one directory format written is FFTMatvec's: replaced only if shiftop could have
      // written it, as its writer checks again.
      io::check_output_path(output.path, output.kind, io::fftmatvec::check_replaceable);
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

void write_text_output(const std::string& option, const std::string& path,
                       const std::string& text) {
  io::AtomicOutput out(path, io::AtomicOutput::Kind::Stream);
  {
    std::ofstream file(out.path(), std::ios::binary);
    file << text;
    file.close();
    require(file.good(), "{} {}: cannot write the file", option, path);
  }
  out.commit();
}

}  // namespace shiftop::app
