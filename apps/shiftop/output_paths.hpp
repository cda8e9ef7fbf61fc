// The checks every subcommand makes on its file names before any long work: every output's name
// ends in the extension of the format written there (output_format), no output is one of the
// command's inputs (by file identity, io/file_identity.hpp; a new file inside an input
// directory is allowed), no output is at or below another (by identity and by canonical spelling,
// whatever exists now), no file output ends in '/', every output can be written as its format
// needs (io::check_output_path), and "-" is standard output only where a command streams .npy
// there; standard input is never read.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "shiftop/io/atomic_output.hpp"
#include "shiftop/io/operator_file.hpp"
#include "shiftop/io/vector_file.hpp"

namespace shiftop::app {

/// A file name given on the command line and the option (or argument) that gave it; an empty
/// path (an option not given) is skipped.
struct NamedPath {
  std::string option;
  std::string path;
};

/// What the tool writes, each format named by its extension: .npy; HDF5 (.h5 or .hdf5: shiftop's
/// and FFTMatvec's files); PNG written by shiftop (.png); a plot drawn by the Python plotter
/// (.png, .svg or .pdf); JSON (.json); FFTMatvec's matrix directory, named without any of these
/// extensions.
enum class OutputFormat { Npy, Hdf5, Png, Plot, Json, Directory };

/// How `format` is written: .npy, PNG and JSON front to back, so that a FIFO, a device or "-" can
/// take them too; HDF5 (which seeks) and plots (the plotter writes a file that is renamed into
/// place) as regular files only; a directory as one. One rule for every command.
io::AtomicOutput::Kind output_kind(OutputFormat format);

/// The format a file of `format` is written in (FFTMatvec's vector files are HDF5 files).
OutputFormat output_format(io::OperatorFormat format);
OutputFormat output_format(io::VectorFormat format);

/// An output and the format written there. Its name must end in that format's extension, and
/// a Directory's in none of them; `accepted`, when the command would write others for other
/// names, lists them all for the refusal. A FIFO, a device and "-" have no name to judge: a
/// format written front to back goes there directly, any other is refused as such.
struct OutputPath {
  std::string option;
  std::string path;
  OutputFormat format;
  std::vector<OutputFormat> accepted = {};
};

/// PREFIX_WHICH.npy, one of the files of an option that names a prefix (svd and gsvd --vectors);
/// "" for no prefix.
std::string prefixed_npy(const std::string& prefix, std::string_view which);

/// Refuses a prefix that ends in '/': it names a directory, whose files would be "_U.npy", ....
void check_prefix(const std::string& option, const std::string& prefix);

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
