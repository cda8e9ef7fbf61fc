#include "io/file_identity.hpp"

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
  const fs::path absolute = fs::absolute(resolve_links(path), error);
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

Overlap overlap(const std::string& a, const std::string& b) {
  const std::optional<Identity> first = identity(a), second = identity(b);
  if (first && second && *first == *second) return Overlap::Same;
  if (!first && !second && canonical_spelling(a) == canonical_spelling(b)) return Overlap::Same;
  if (lies_inside(a, b)) return Overlap::Inside;
  if (lies_inside(b, a)) return Overlap::Contains;
  return Overlap::None;
}

}  // namespace shiftop::io
