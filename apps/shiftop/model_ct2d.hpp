// `shiftop model ct2d`: the CT scanner of src/models/ct2d written as a block-circulant operator
// file (include/shiftop/io/circulant_file.hpp), its options registered on the `model` command.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "shiftop/models/ct2d.hpp"

namespace shiftop::app {

struct Ct2dOptions {
  models::ct2d::Geometry geometry{};
  std::string preset;
  std::string precision = "float32";
  bool overwrite = false;
};

/// Registers --positions, --rings, --sectors, --detectors, --radius, --source-distance, --preset,
/// --precision and --overwrite on `cmd`.
void add_ct2d_options(CLI::App* cmd, Ct2dOptions& options);

/// The names of those options, which the other models refuse.
extern const char* const kCt2dOptionNames[9];

/// Traces the scanner given by the options (a preset, then the options given explicitly) and
/// writes its first block row A to `output`, with progress on a terminal and a summary line.
void run_ct2d(const CLI::App& cmd, Ct2dOptions options, const std::string& output);

}  // namespace shiftop::app
