// Whether two paths name the same file, or one lies inside the other, by file identity (device
// and inode after following symbolic links), never by spelling: the tool refuses an output that
// is one of its own inputs (docs/cli.md, "Outputs").
#pragma once

#include <filesystem>
#include <string>

namespace shiftop::io {

/// `path` with the symbolic links of its last component followed (a link's target may be
/// relative to the link's directory, and may not exist yet). Throws shiftop::Error on a loop.
std::filesystem::path resolve_links(const std::string& path);

enum class Overlap {
  None,
  Same,    // one file or directory: same device and inode, or, not existing yet, one resolved path
  Inside,  // the first lies inside the second, a directory
  Contains,  // the second lies inside the first, a directory
};

/// `path` without its trailing slashes ("out/" names "out"; "/" stays "/").
std::string without_trailing_slashes(std::string path);

/// How the files or directories `a` and `b` overlap (trailing slashes ignored: "F/" is "F").
/// Paths that do not exist are compared by the canonical path of their resolved parent plus their
/// name (two spellings of one new path); Inside and Contains need the outer directory to exist.
Overlap overlap(const std::string& a, const std::string& b);

/// How `a` and `b` overlap whatever exists now: overlap() by file identity, else by spelling
/// (the canonical path of the resolved parent plus the name), so that a path below `b` is Inside
/// it even when `b` is not a directory yet. For two outputs, one of which may create the other's
/// directory.
Overlap path_overlap(const std::string& a, const std::string& b);

}  // namespace shiftop::io
