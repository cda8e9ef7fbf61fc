// The tool's plots are drawn by the Python package (shiftop.plot, matplotlib) from the JSON the
// tool writes: `python -m shiftop.plot COMMAND JSON -o FILE --format FORMAT` in a child process.
// The interpreter is $SHIFTOP_PYTHON when set, else the one CMake found when the tool was built
// (the Python the package is built for; `pip install .` installs both), else python3 on PATH.
#pragma once

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

/// Runs plot_python() -m shiftop.plot with `arguments`; its messages go to the tool's standard
/// error. Throws shiftop::Error naming `option` and the exit status if it fails.
void run_python_plot(std::string_view option, const std::vector<std::string>& arguments);

}  // namespace shiftop::app
