// An SVG scatter plot of relative error (log scale) against time, one panel per operation, with
// the Pareto front highlighted and labelled: the figure of the mixed-precision paper, section 4.2.
#pragma once

#include <string>
#include <vector>

namespace shiftop::app {

struct TunePoint {
  std::string precision;
  std::string kernel;  // the phase-3 kernel on the GPU ("cublas", "fused ..."); empty on the CPU
  double milliseconds = 0;
  double relative_error = 0;
  bool on_front = false;
  /// "DDSDD", or "DDSDD fused" / "DDSDD cublas" on the GPU where phase 3 is FP32 (the two differ
  /// in accuracy there).
  std::string label() const;
};

struct TunePanel {
  std::string title;
  std::vector<TunePoint> points;
  double tolerance = 0;  // drawn as a horizontal line
};

/// The whole SVG document.
std::string pareto_svg(const std::vector<TunePanel>& panels);

}  // namespace shiftop::app
