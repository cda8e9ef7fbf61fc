#include "sweep_progress.hpp"

#include <fmt/core.h>

#include <cstdio>
#include <memory>
#include <utility>

namespace shiftop::app {

svd::SweepCallback print_sweeps(std::string command, std::string what) {
  return [command = std::move(command), what = std::move(what)](const svd::SweepProgress& p) {
    fmt::print(stderr, "{}: sweep {} of at most {}: {} {}\n", command, p.sweep, p.max_sweeps,
               p.rotations, what);
    std::fflush(stderr);
  };
}

svd::SweepCallback print_finished_frequencies(index_t frequencies) {
  // The library makes the calls of a batch one at a time: a plain counter suffices.
  auto finished = std::make_shared<index_t>(0);
  return [frequencies, finished](const svd::SweepProgress& p) {
    if (p.rotations != 0 && p.sweep < p.max_sweeps) return;
    ++*finished;
    fmt::print(stderr, "spectrum: frequency {} done after {} sweeps ({} of {})\n", p.matrix,
               p.sweep, *finished, frequencies);
    std::fflush(stderr);
  };
}

}  // namespace shiftop::app
