#include "shiftop/io/file_identity.hpp"

#include <sys/stat.h>

#include <optional>
#include <system_error>

#include "shiftop/core/error.hpp"

namespace shiftop::io {
namespace {

namespace fs = std::filesystem;

// Linux's own limit on the links followed in one path (SYMLOOP_MAX / ELOOP).
constexpr int kMaxLinks = 40;

struct Identity {
  dev_t device;
  ino_t inode;
  bool operator==(const Identity&) const = default;
};

std::optional<Identity> identity(const fs::path& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return std::nullopt;
  return Identity{status.st_dev, status.st_ino};
}

// The absolute, link-free spelling of `path`, which need not exist.
fs::path canonical_spelling(const std::string& path) {
  std::error_code error;
  const fs::path absolute = fs::absolute(resolve_links(without_trailing_slashes(path)), error);
  const fs::path canonical = fs::weakly_canonical(absolute, error);
  return error ? absolute.lexically_normal() : canonical;
}

// Whether `inner` lies below the directory `outer` (not equal to it).
bool lies_inside(const std::string& inner, const std::string& outer) {
  const std::optional<Identity> directory = identity(outer);
  std::error_code error;
  if (!directory || !fs::is_directory(outer, error)) return false;
  const fs::path spelling = canonical_spelling(inner);
  for (fs::path up = spelling.parent_path(); !up.empty(); up = up.parent_path()) {
    if (identity(up) == directory) return true;
    if (up == up.root_path()) break;
  }
  return false;
}

}  // namespace

fs::path resolve_links(const std::string& path) {
  fs::path resolved(path);
  std::error_code error;
  for (int links = 0; fs::is_symlink(fs::symlink_status(resolved, error)); ++links) {
    require(links < kMaxLinks,
            "{}: too many levels of symbolic links: expected a file or a link to one", path);
    const fs::path target = fs::read_symlink(resolved, error);
    require(!error, "{}: cannot read the symbolic link: {}", path, error.message());
    resolved = target.is_absolute() ? target : resolved.parent_path() / target;
  }
  return resolved;
}

std::string without_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  return path;
}

Overlap overlap(const std::string& a_spelled, const std::string& b_spelled) {
  // "m.npy/" fails to stat where "m.npy" does not: compare the names, not the spellings.
  const std::string a = without_trailing_slashes(a_spelled),
                    b = without_trailing_slashes(b_spelled);
  const std::optional<Identity> first = identity(a), second = identity(b);
  if (first && second && *first == *second) return Overlap::Same;
  if (!first && !second && canonical_spelling(a) == canonical_spelling(b)) return Overlap::Same;
  if (lies_inside(a, b)) return Overlap::Inside;
  if (lies_inside(b, a)) return Overlap::Contains;
  return Overlap::None;
}

Overlap path_overlap(const std::string& a, const std::string& b) {
  if (const Overlap by_identity = overlap(a, b); by_identity != Overlap::None) return by_identity;
  const fs::path first = canonical_spelling(a), second = canonical_spelling(b);
  if (first == second) return Overlap::Same;
  // Whether `inner` is `outer` followed by more components.
  const auto below = [](const fs::path& inner, const fs::path& outer) {
    auto i = inner.begin();
    for (auto o = outer.begin(); o != outer.end(); ++o, ++i)
      if (i == inner.end() || *i != *o) return false;
    return i != inner.end();
  };
  if (below(first, second)) return Overlap::Inside;
  if (below(second, first)) return Overlap::Contains;
  return Overlap::None;
}

}  // namespace shiftop::io
