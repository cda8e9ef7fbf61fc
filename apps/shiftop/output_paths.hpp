// The checks every subcommand makes on its file names before any long work: no output is one of
// the command's inputs (by file identity, io/file_identity.hpp; a new file inside an input
// directory is allowed), no output is at or below another (by identity and by canonical spelling,
// whatever exists now), no file output ends in '/', every output
// can be written as its format needs (io::check_output_path), and "-" is standard output only
// where a command streams .npy there; standard input is never read.
#pragma once

#include <string>
#include <vector>

#include "io/atomic_output.hpp"
#include "shiftop/io/operator_file.hpp"
#include "shiftop/io/vector_file.hpp"

namespace shiftop::app {

/// A file name given on the command line and the option (or argument) that gave it; an empty
/// path (an option not given) is skipped.
struct NamedPath {
  std::string option;
  std::string path;
};

struct OutputPath {
  std::string option;
  std::string path;
  io::AtomicOutput::Kind kind = io::AtomicOutput::Kind::File;
};

/// How a file of `format` is written (the one Directory format is FFTMatvec's).
io::AtomicOutput::Kind output_kind(io::OperatorFormat format);
io::AtomicOutput::Kind output_kind(io::VectorFormat format);

enum class StandardOutput { Refused, Allowed };

/// Writes `text` to `path` through io::AtomicOutput as a stream (a FIFO or device works too);
/// a failed write throws shiftop::Error naming `option`.
void write_text_output(const std::string& option, const std::string& path, const std::string& text);

/// Throws shiftop::Error naming the option(s) unless every check above passes.
void check_paths(const std::vector<NamedPath>& inputs, const std::vector<OutputPath>& outputs,
                 StandardOutput standard_output = StandardOutput::Refused);

/// `convert IN OUT --to TO`: check_paths with the kind of output that convert will write.
void check_convert_paths(const std::string& input, const std::string& output,
                         const std::string& to);

}  // namespace shiftop::app
