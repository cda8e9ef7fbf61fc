#include "io/temporaries.hpp"

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
  for (const std::string& path : registry().paths) {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  registry().paths.clear();
}

}  // namespace shiftop::io
