// --progress of svd, gsvd and spectrum: the library's per-sweep callback (svd/progress.hpp) as
// lines on stderr, as regpath's --progress prints its stages there, so that a run of tens of
// seconds shows how far it is and the results on stdout stay clean.
#pragma once

#include <string>

#include "shiftop/svd/progress.hpp"

namespace shiftop::app {

/// "svd: sweep 3 of at most 60: 1234 rotations" after every sweep of one matrix (`command` and
/// `what`, "rotations" or "transformations", name it).
svd::SweepCallback print_sweeps(std::string command, std::string what);

/// "spectrum: frequency 5 done after 7 sweeps (12 of 101)" once each frequency's SVD has
/// converged or stopped at its limit.
svd::SweepCallback print_finished_frequencies(index_t frequencies);

}  // namespace shiftop::app
