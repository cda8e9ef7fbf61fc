// The process-wide list of the temporary files and directories that AtomicOutput has reserved and
// not yet renamed into place, so that a program ending on a signal can remove them first
// (io::remove_temporaries_for_exit, declared with AtomicOutput in shiftop/io/atomic_output.hpp).
#pragma once

#include <mutex>
#include <string>

namespace shiftop::io {

/// Held while a temporary is created, renamed into place or removed, so that a clean-up never
/// sees half of a rename (AtomicOutput::commit moves a previous directory aside first).
std::unique_lock<std::recursive_mutex> hold_temporaries();

void add_temporary(const std::string& path);
void forget_temporary(const std::string& path);

}  // namespace shiftop::io
