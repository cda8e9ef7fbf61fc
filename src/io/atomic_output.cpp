#include "io/atomic_output.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "shiftop/core/error.hpp"

namespace shiftop::io {
namespace {

namespace fs = std::filesystem;

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

}  // namespace

AtomicOutput::AtomicOutput(std::string target, Kind kind, std::string replaceable_entry)
    : target_(std::move(target)), kind_(kind), replaceable_entry_(std::move(replaceable_entry)) {
  fs::path path(target_);
  while (!path.empty() && path.filename().empty())  // "out/" names the directory "out"
    path = path.parent_path();
  require(!path.empty(), "'{}': expected a file or directory name to write", target_);
  target_ = path.string();
  const fs::path parent = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::error_code error;
  require(fs::is_directory(parent, error), "{}: cannot write: directory '{}' does not exist",
          target_, parent.string());
  if (kind_ == Kind::Directory) check_replaceable();
  temporary_ = temporary_name(path);
  if (kind_ == Kind::Directory && ::mkdir(temporary_.c_str(), 0777) != 0)
    fail("{}: cannot create the temporary directory '{}': {}", target_, temporary_,
         errno_message());
}

AtomicOutput::~AtomicOutput() {
  if (committed_) return;
  std::error_code ignored;
  fs::remove_all(temporary_, ignored);
}

void AtomicOutput::check_replaceable() const {
  std::error_code error;
  if (!fs::exists(fs::symlink_status(target_, error))) return;
  bool replaceable = fs::is_directory(target_, error) && !replaceable_entry_.empty();
  if (replaceable) {
    for (const auto& entry : fs::directory_iterator(target_, error))
      replaceable = replaceable && entry.path().filename() == replaceable_entry_;
  }
  require(replaceable && !error,
          "{}: already exists and is not a directory holding only '{}/': expected a new path "
          "(shiftop replaces only a directory it could have written)",
          target_, replaceable_entry_);
}

void AtomicOutput::commit() {
  if (kind_ == Kind::File) {
    if (std::rename(temporary_.c_str(), target_.c_str()) != 0)
      fail("{}: cannot rename the finished file '{}' to it: {}", target_, temporary_,
           errno_message());
    committed_ = true;
    return;
  }
  check_replaceable();
  std::error_code error;
  std::string previous;
  if (fs::exists(target_, error)) {
    previous = temporary_name(fs::path(target_));
    fs::rename(target_, previous, error);
    require(!error, "{}: cannot move the previous directory aside: {}", target_, error.message());
  }
  fs::rename(temporary_, target_, error);
  if (error) {
    std::error_code ignored;
    if (!previous.empty()) fs::rename(previous, target_, ignored);
    fail("{}: cannot rename the finished directory '{}' to it: {}", target_, temporary_,
         error.message());
  }
  committed_ = true;
  if (!previous.empty()) fs::remove_all(previous, error);
}

}  // namespace shiftop::io
