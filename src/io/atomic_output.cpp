#include "shiftop/io/atomic_output.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <system_error>

#include "io/temporaries.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/io/file_identity.hpp"

namespace shiftop::io {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kStandardOutput = "-";

// A hidden name next to `target` that no other process or call uses.
std::string temporary_name(const fs::path& target) {
  static std::atomic<unsigned> counter{0};
  const fs::path name = target.filename();
  return (target.parent_path() /
          fmt::format(".{}.shiftop-tmp-{}-{}", name.string(), ::getpid(), counter++))
      .string();
}

std::string errno_message() {
  return std::generic_category().message(errno);
}

// "out/" names the directory "out" (only a Directory is named so: check_output_path).
fs::path without_trailing_slash(const std::string& target) {
  const std::string path = without_trailing_slashes(target);
  require(!path.empty(), "'{}': expected a file or directory name to write", target);
  return path;
}

// A directory is replaced only if `replaceable` accepts it: one the writer could have written.
void check_replaceable(const fs::path& resolved, const AtomicOutput::Replaceable& replaceable,
                       const std::string& target) {
  std::error_code error;
  if (!fs::exists(fs::symlink_status(resolved, error))) return;
  require(fs::is_directory(resolved, error) && !error,
          "{}: already exists and is not a directory: expected a new path or a directory shiftop "
          "wrote (it replaces only those)",
          target);
  require(static_cast<bool>(replaceable),
          "{}: is an existing directory: expected a new path (shiftop does not replace it)",
          target);
  replaceable(resolved.string());
}

}  // namespace

const char* special_file(const std::string& target) {
  struct stat status {};
  if (::stat(target.c_str(), &status) != 0) return nullptr;
  if (S_ISFIFO(status.st_mode)) return "a FIFO";
  if (S_ISCHR(status.st_mode)) return "a character device";
  if (S_ISBLK(status.st_mode)) return "a block device";
  if (S_ISSOCK(status.st_mode)) return "a socket";
  return nullptr;
}

void check_output_path(const std::string& target, AtomicOutput::Kind kind,
                       const AtomicOutput::Replaceable& replaceable) {
  using Kind = AtomicOutput::Kind;
  if (target == kStandardOutput) {
    require(kind == Kind::Stream,
            "'-' (standard output): this format needs a regular file it can seek in: expected a "
            "file name (only .npy streams to standard output)");
    return;
  }
  require(kind == Kind::Directory || target.empty() || target.back() != '/',
          "{}: ends in '/', which names a directory: expected a file name", target);
  const fs::path path = without_trailing_slash(target);
  if (const char* special = special_file(path.string())) {
    require(kind == Kind::Stream,
            "{}: is {}: expected a regular file or a new path (this format seeks; only .npy is "
            "written to a FIFO or a device, directly)",
            target, special);
    require(std::string_view(special) != "a socket",
            "{}: is a socket: expected a regular file, a FIFO, a device or a new path", target);
    return;
  }
  const fs::path resolved = resolve_links(path.string());
  const fs::path parent = resolved.parent_path().empty() ? fs::path(".") : resolved.parent_path();
  std::error_code error;
  const fs::file_status status = fs::status(parent, error);
  require(fs::exists(status), "{}: cannot write: directory '{}' does not exist", target,
          parent.string());
  require(fs::is_directory(status), "{}: cannot write: '{}' is not a directory", target,
          parent.string());
  require(::access(parent.c_str(), W_OK | X_OK) == 0, "{}: cannot write in directory '{}': {}",
          target, parent.string(), errno_message());
  if (kind == Kind::Directory)
    check_replaceable(resolved, replaceable, target);
  else
    require(!fs::is_directory(resolved, error), "{}: is a directory: expected a file name", target);
}

AtomicOutput::AtomicOutput(std::string target, Kind kind, Replaceable replaceable)
    : target_(std::move(target)), kind_(kind), replaceable_(std::move(replaceable)) {
  check_output_path(target_, kind_, replaceable_);
  if (target_ != kStandardOutput) target_ = without_trailing_slash(target_).string();
  direct_ = target_ == kStandardOutput || special_file(target_) != nullptr;
  if (direct_) {
    temporary_ = resolved_ = target_;
    return;
  }
  const fs::path resolved = resolve_links(target_);
  resolved_ = resolved.string();
  temporary_ = temporary_name(resolved);
  // Registered before it exists, so that a signal never finds an unregistered temporary.
  const auto lock = hold_temporaries();
  add_temporary(temporary_);
  if (kind_ == Kind::Directory && ::mkdir(temporary_.c_str(), 0777) != 0) {
    const std::string reason = errno_message();
    forget_temporary(temporary_);
    fail("{}: cannot create the temporary directory '{}': {}", target_, temporary_, reason);
  }
}

AtomicOutput::~AtomicOutput() {
  if (committed_ || direct_) return;
  const auto lock = hold_temporaries();
  std::error_code ignored;
  fs::remove_all(temporary_, ignored);
  forget_temporary(temporary_);
}

std::FILE* AtomicOutput::open_stream() const {
  if (target_ != kStandardOutput) return std::fopen(temporary_.c_str(), direct_ ? "wb" : "wbx");
  std::fflush(stdout);
  const int descriptor = ::dup(STDOUT_FILENO);
  if (descriptor < 0) return nullptr;
  std::FILE* file = ::fdopen(descriptor, "wb");
  if (file == nullptr) ::close(descriptor);
  return file;
}

void AtomicOutput::commit() {
  if (direct_) {
    committed_ = true;
    return;
  }
  // A signal's clean-up waits until the target is whole again (see temporaries.hpp).
  const auto lock = hold_temporaries();
  if (kind_ != Kind::Directory) {
    if (std::rename(temporary_.c_str(), resolved_.c_str()) != 0)
      fail("{}: cannot rename the finished file '{}' to it: {}", target_, temporary_,
           errno_message());
    forget_temporary(temporary_);
    committed_ = true;
    return;
  }
  check_replaceable(resolved_, replaceable_, target_);
  std::error_code error;
  std::string previous;
  if (fs::exists(resolved_, error)) {
    previous = temporary_name(fs::path(resolved_));
    fs::rename(resolved_, previous, error);
    require(!error, "{}: cannot move the previous directory aside: {}", target_, error.message());
  }
  fs::rename(temporary_, resolved_, error);
  if (error) {
    std::error_code ignored;
    if (!previous.empty()) fs::rename(previous, resolved_, ignored);
    fail("{}: cannot rename the finished directory '{}' to it: {}", target_, temporary_,
         error.message());
  }
  forget_temporary(temporary_);
  committed_ = true;
  if (!previous.empty()) fs::remove_all(previous, error);
}

}  // namespace shiftop::io
