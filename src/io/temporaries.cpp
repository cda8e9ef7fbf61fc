#include "io/temporaries.hpp"

#include "shiftop/io/atomic_output.hpp"

#include <filesystem>
#include <system_error>
#include <vector>

namespace shiftop::io {
namespace {

struct Registry {
  std::recursive_mutex mutex;
  std::vector<std::string> paths;
};

// Never destroyed: a signal may arrive while static destructors run at exit.
Registry& registry() {
  static auto* instance = new Registry;
  return *instance;
}

}  // namespace

std::unique_lock<std::recursive_mutex> hold_temporaries() {
  return std::unique_lock(registry().mutex);
}

void add_temporary(const std::string& path) {
  const auto lock = hold_temporaries();
  registry().paths.push_back(path);
}

void forget_temporary(const std::string& path) {
  const auto lock = hold_temporaries();
  std::erase(registry().paths, path);
}

void remove_temporaries_for_exit() {
  registry().mutex.lock();  // never unlocked: see the header
  // Other threads still run: a writer may add files to a directory being removed. Renamed
  // first, it is out of their reach (they write by path), but for a file already being created.
  constexpr int kPasses = 100;
  namespace fs = std::filesystem;
  for (const std::string& path : registry().paths) {
    std::error_code error;
    fs::path doomed = path + ".removing";
    fs::rename(path, doomed, error);
    if (error) doomed = path;
    for (int pass = 0; pass < kPasses && fs::exists(fs::symlink_status(doomed, error)); ++pass)
      fs::remove_all(doomed, error);
  }
  registry().paths.clear();
}

}  // namespace shiftop::io
