// Output written under a temporary name next to its final path and renamed into place once
// complete, so that a failure (bad input found late, disk full, a crash, SIGINT/SIGTERM in the
// tool) never leaves a partial file or directory at the final path, nor changes what was there
// before. A symbolic link at the final path is kept: its target is replaced. Where atomicity
// cannot apply (a FIFO, a device, "-" for standard output) a format written front to back
// (Kind::Stream) is written there directly; formats that need a regular file refuse those.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

namespace shiftop::io {

class AtomicOutput {
 public:
  /// File: a regular file whose writer may seek (HDF5). Stream: a file written front to back
  /// (.npy, text), which may also go to a FIFO, a device or standard output. Directory: a
  /// directory tree (FFTMatvec matrix).
  enum class Kind { File, Stream, Directory };

  /// For a Directory: called with an existing directory at the target (its links followed);
  /// returns normally only if the writer could have written it, and so it may be replaced, else
  /// throws shiftop::Error, one line naming what is unexpected. None: never replace a directory.
  using Replaceable = std::function<void(const std::string& directory)>;

  /// Reserves a fresh temporary name in the directory of `target` (after following its links),
  /// after check_output_path(). For a File or Stream nothing is created yet (the writer creates
  /// it, exclusively); for a Directory the temporary directory is created.
  AtomicOutput(std::string target, Kind kind, Replaceable replaceable = {});
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;
  /// Removes the temporary file or directory (recursively) unless commit() succeeded.
  ~AtomicOutput();

  /// Where to write: the temporary, or the target itself when it is a FIFO or a device.
  const std::string& path() const { return temporary_; }
  const std::string& target() const { return target_; }

  /// For a Stream: path() opened for writing, or a duplicate of standard output for "-" (what
  /// was printed before is flushed first). Null, with errno set, where that fails.
  std::FILE* open_stream() const;

  /// Renames the temporary into place. A File replaces any file at the target atomically; a
  /// Directory replaces a previous directory of the same kind (moved aside, then removed).
  void commit();

 private:
  std::string target_;
  std::string resolved_;  // target_ with its symbolic links followed: what commit() replaces
  std::string temporary_;
  Kind kind_;
  Replaceable replaceable_;
  bool direct_ = false;  // written in place: a FIFO, a device or standard output
  bool committed_ = false;
};

/// What a FIFO, device or socket at `target` is ("a FIFO", "a character device", ...; the kernel
/// following its links, /dev/stdout's included), or null for anything else.
const char* special_file(const std::string& target);

/// Throws shiftop::Error unless `target` can be written as `kind`: a File or Stream is not named
/// with a trailing '/' (which names a directory); its directory exists and is writable; it is not
/// a directory (unless `kind` is Directory and `replaceable` accepts it: "out/" names the
/// directory "out"); it is a FIFO, a device or "-" only for a Stream. Cheap: the tool calls it
/// for every output before any long work.
void check_output_path(const std::string& target, AtomicOutput::Kind kind,
                       const AtomicOutput::Replaceable& replaceable = {});

/// Removes every temporary an AtomicOutput has reserved and not yet committed (directories
/// recursively) and keeps their list locked for good, so that no other thread creates or renames
/// an output afterwards: the process must end next. For a program ending on a signal (the tool's
/// signal thread, apps/shiftop/signal_cleanup.cpp); the library installs no signal handling of its
/// own. Not async-signal-safe: call it from a thread that received the signal with sigwait().
void remove_temporaries_for_exit();

}  // namespace shiftop::io
