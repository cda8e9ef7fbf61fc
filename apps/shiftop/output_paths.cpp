#include "output_paths.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <span>
#include <system_error>

#include "shiftop/core/error.hpp"
#include "shiftop/io/extension.hpp"
#include "shiftop/io/fftmatvec.hpp"
#include "shiftop/io/file_identity.hpp"
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

// The extensions that name `format` (none for a directory).
std::span<const std::string_view> extensions(OutputFormat format) {
  static constexpr std::string_view npy[] = {".npy"}, hdf5[] = {".h5", ".hdf5"}, png[] = {".png"},
                                    plot[] = {".png", ".svg", ".pdf"}, json[] = {".json"};
  switch (format) {
    case OutputFormat::Npy:
      return npy;
    case OutputFormat::Hdf5:
      return hdf5;
    case OutputFormat::Png:
      return png;
    case OutputFormat::Plot:
      return plot;
    case OutputFormat::Json:
      return json;
    case OutputFormat::Directory:
      break;
  }
  return {};
}

bool names(OutputFormat format, std::string_view extension) {
  return std::ranges::find(extensions(format), extension) != extensions(format).end();
}

// A directory's name must not look like a file of another format.
bool names_a_file_format(std::string_view extension) {
  return std::ranges::any_of(
      std::initializer_list<OutputFormat>{OutputFormat::Npy, OutputFormat::Hdf5, OutputFormat::Plot,
                                          OutputFormat::Json},
      [&](OutputFormat format) { return names(format, extension); });
}

// "a name ending in .npy, .h5 or .hdf5", and where a directory is written too, "..., or a
// directory name without these".
std::string expected_names(const OutputPath& output) {
  std::vector<std::string_view> listed;
  bool directory = false;
  for (const OutputFormat format :
       output.accepted.empty() ? std::vector<OutputFormat>{output.format} : output.accepted) {
    directory = directory || format == OutputFormat::Directory;
    for (const std::string_view extension : extensions(format))
      if (std::ranges::find(listed, extension) == listed.end()) listed.push_back(extension);
  }
  if (listed.empty()) return "a directory name without a file extension";
  std::string text = "a name ending in ";
  for (std::size_t k = 0; k < listed.size(); ++k)
    text += fmt::format("{}{}", k == 0 ? "" : k + 1 == listed.size() ? " or " : ", ", listed[k]);
  if (directory) text += " (a file), or a directory name without these";
  return text;
}

// The name's extension must be one of its format's. FIFOs, devices and "-" are judged by what
// they are (io::check_output_path), not by a name the user did not choose for the format.
void check_extension(const OutputPath& output) {
  if (output.path == kStandardStream || io::special_file(output.path) != nullptr) return;
  const std::string extension = io::lowercase_extension(io::without_trailing_slashes(output.path));
  if (output.format == OutputFormat::Directory ? !names_a_file_format(extension)
                                               : names(output.format, extension))
    return;
  fail("{} '{}': {}: expected {}", output.option, output.path,
       extension.empty() ? std::string("has no extension to name its format")
                         : fmt::format("ends in '{}'", extension),
       expected_names(output));
}

}  // namespace

io::AtomicOutput::Kind output_kind(OutputFormat format) {
  using Kind = io::AtomicOutput::Kind;
  switch (format) {
    case OutputFormat::Npy:
    case OutputFormat::Png:
    case OutputFormat::Json:
      return Kind::Stream;
    case OutputFormat::Hdf5:
    case OutputFormat::Plot:
      break;
    case OutputFormat::Directory:
      return Kind::Directory;
  }
  return Kind::File;
}

OutputFormat output_format(io::OperatorFormat format) {
  return format == io::OperatorFormat::Npy         ? OutputFormat::Npy
         : format == io::OperatorFormat::FFTMatvec ? OutputFormat::Directory
                                                   : OutputFormat::Hdf5;
}

OutputFormat output_format(io::VectorFormat format) {
  return format == io::VectorFormat::Npy ? OutputFormat::Npy : OutputFormat::Hdf5;
}

std::string prefixed_npy(const std::string& prefix, std::string_view which) {
  return prefix.empty() ? std::string() : fmt::format("{}_{}.npy", prefix, which);
}

void check_prefix(const std::string& option, const std::string& prefix) {
  require(!prefix.ends_with('/'),
          "{} '{}': ends in '/', which names a directory: expected a prefix of file names "
          "(PREFIX_U.npy, ...)",
          option, prefix);
}

void check_paths(const std::vector<NamedPath>& inputs, const std::vector<OutputPath>& outputs,
                 StandardOutput standard_output) {
  for (const NamedPath& input : inputs)
    require(input.path != kStandardStream,
            "{} '-': shiftop does not read standard input: expected a file name", input.option);
  std::vector<NamedPath> earlier;
  for (const OutputPath& output : outputs) {
    if (output.path.empty()) continue;
    const io::AtomicOutput::Kind kind = output_kind(output.format);
    require(output.path != kStandardStream || standard_output == StandardOutput::Allowed,
            "{} '-': this command does not write to standard output (matvec --output - "
            "--output-format npy does): expected a file name",
            output.option);
    require(output.path != kStandardStream || kind == io::AtomicOutput::Kind::Stream,
            "{} '-': only .npy is written to standard output: expected --output-format npy or a "
            "file name",
            output.option);
    // "out/" names a directory, which AtomicOutput would write as the file "out".
    require(kind == io::AtomicOutput::Kind::Directory || !output.path.ends_with('/'),
            "{} '{}': ends in '/', which names a directory: expected a file name", output.option,
            output.path);
    if (output.path != kStandardStream) {
      for (const NamedPath& input : inputs)
        if (!input.path.empty()) check_distinct_from_input(output, input);
      for (const NamedPath& other : earlier)
        check_distinct_from_output(output, other);
    }
    check_extension(output);
    try {
      // The one directory format written is FFTMatvec's: replaced only if shiftop could have
      // written it, as its writer checks again.
      io::check_output_path(output.path, kind, io::fftmatvec::check_replaceable);
    } catch (const Error& e) {
      fail("{}: {}", output.option, e.what());
    }
    earlier.push_back({output.option, output.path});
  }
}

void check_convert_paths(const std::string& input, const std::string& output,
                         const std::string& to) {
  // --to auto writes whatever the name says, which may be any of the formats.
  const bool automatic = to == "auto";
  OutputPath out{.option = "output", .path = output, .format = OutputFormat::Npy};
  const io::FileKind kind =
      input == kStandardStream ? io::FileKind::Vector : io::detect_file_kind(input);
  if (kind == io::FileKind::Circulant) {
    require(to == "auto" || to == "shiftop",
            "--to {}: {} is a block-circulant operator, which shiftop stores only in its own .h5 "
            "(the CSR of its first block row): expected --to auto or shiftop",
            to, input);
    out.format = OutputFormat::Hdf5;
  } else if (kind == io::FileKind::Operator) {
    out.format = output_format(automatic ? io::output_operator_format(output)
                                         : parse_name<io::OperatorFormat>(to, "--to"));
    if (automatic) out.accepted = {OutputFormat::Npy, OutputFormat::Hdf5, OutputFormat::Directory};
  } else {
    out.format = output_format(automatic ? io::output_vector_format(output)
                                         : parse_name<io::VectorFormat>(to, "--to"));
    if (automatic) out.accepted = {OutputFormat::Npy, OutputFormat::Hdf5};
  }
  check_paths({{"input", input}}, {out});
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
