// The tool's plots are drawn by the Python package (shiftop.plot, matplotlib) from what the tool
// writes for it (JSON, or a .npy array), all through draw_plot: `python -m shiftop.plot COMMAND
// JSON -o FILE --format FORMAT` in a child process. The interpreter is $SHIFTOP_PYTHON when set,
// else the one CMake found when the tool was built (the Python the package is built for; `pip
// install .` installs both), else python3 on PATH.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace shiftop::app {

/// The interpreter that runs the plots (see above).
std::string plot_python();

/// "png", "svg" or "pdf" from the extension of `path`; shiftop::Error naming `option` otherwise.
std::string plot_format(std::string_view option, const std::string& path);

/// Throws shiftop::Error, one line naming `option`, the interpreter, why the import failed and
/// how to install the package, unless plot_python() imports shiftop.plot (and so matplotlib).
/// Takes about as long as the import (a second at most): call it before the long work.
void require_python_plotter(std::string_view option);

/// Writes the plotter's input to `path`: the tool's JSON as text (text_input), or an array.
using PlotInputWriter = std::function<void(const std::string& path)>;

/// A PlotInputWriter of `text` (the JSON a plot reads).
PlotInputWriter text_input(std::string text);

/// Draws `plot_path`, the value of `option`, by `plot_python() -m shiftop.plot COMMAND INPUT -o
/// PLOT --format FORMAT ARGUMENTS...`, FORMAT from plot_path's extension: `write_input` writes
/// INPUT to a temporary next to the plot (removed afterwards or on a signal, whatever the tool's
/// other outputs are: they may be FIFOs or absent), and the plot is written under a temporary
/// name and renamed into place once the plotter succeeded. The plotter's messages go to the
/// tool's standard error. Throws shiftop::Error naming `option` if the input cannot be written
/// or the plotter fails.
void draw_plot(std::string_view option, const std::string& plot_path, std::string_view command,
               const PlotInputWriter& write_input, const std::vector<std::string>& arguments = {});

}  // namespace shiftop::app
