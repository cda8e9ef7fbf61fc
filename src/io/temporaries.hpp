// The process-wide list of the temporary files and directories that AtomicOutput has reserved and
// not yet renamed into place, so that a program ending on a signal can remove them first (the
// tool's signal thread, apps/shiftop/signal_cleanup.cpp). The library installs no signal handling
// of its own: a program that wants the clean-up calls remove_temporaries_for_exit().
#pragma once

#include <mutex>
#include <string>

namespace shiftop::io {

/// Held while a temporary is created, renamed into place or removed, so that a clean-up never
/// sees half of a rename (AtomicOutput::commit moves a previous directory aside first).
std::unique_lock<std::recursive_mutex> hold_temporaries();

void add_temporary(const std::string& path);
void forget_temporary(const std::string& path);

/// Removes every registered temporary (directories recursively) and keeps the list locked for
/// good, so that no other thread creates or renames an output afterwards: the process must end
/// next. Not async-signal-safe: call it from a thread that received the signal with sigwait().
void remove_temporaries_for_exit();

}  // namespace shiftop::io
