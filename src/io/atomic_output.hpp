// Output written under a temporary name next to its final path and renamed into place once
// complete, so that a failure (bad input found late, disk full, a crash) never leaves a partial
// file or directory at the final path, nor changes what was there before.
#pragma once

#include <string>

namespace shiftop::io {

class AtomicOutput {
 public:
  enum class Kind { File, Directory };

  /// Reserves a fresh temporary name in the directory of `target`. For a File nothing is created
  /// yet (the writer creates it, exclusively); for a Directory the temporary directory is
  /// created. Throws shiftop::Error if the parent directory does not exist, or, for a Directory,
  /// if `target` exists and is not a directory this class could have written (one holding only
  /// `replaceable_entry`).
  AtomicOutput(std::string target, Kind kind, std::string replaceable_entry = {});
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;
  /// Removes the temporary file or directory (recursively) unless commit() succeeded.
  ~AtomicOutput();

  /// Where to write.
  const std::string& path() const { return temporary_; }
  const std::string& target() const { return target_; }

  /// Renames the temporary into place. A File replaces any file at the target atomically; a
  /// Directory replaces a previous directory of the same kind (moved aside, then removed).
  void commit();

 private:
  void check_replaceable() const;

  std::string target_;
  std::string temporary_;
  Kind kind_;
  std::string replaceable_entry_;
  bool committed_ = false;
};

}  // namespace shiftop::io
