// Whether two paths name the same file, or one lies inside the other, by file identity (device
// and inode after following symbolic links), never by spelling: the tool refuses an output that
// is one of its own inputs (docs/architecture.md, "Outputs").
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

/// How the files or directories `a` and `b` overlap. Paths that do not exist are compared by the
/// canonical path of their resolved parent plus their name (two spellings of one new path).
Overlap overlap(const std::string& a, const std::string& b);

}  // namespace shiftop::io
