// Shared by the I/O tests: a fresh directory per test, and helpers to check refusals.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "shiftop/core/error.hpp"

namespace shiftop::testing {

namespace fs = std::filesystem;

/// Each test gets its own empty directory, removed afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           fmt::format("shiftop_{}_{}_{}", test->test_suite_name(), ::getpid(), test->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(std::string_view name) const { return (dir_ / name).string(); }

  /// Every file and directory under the test directory, relative and sorted: what a failed write
  /// must not have changed.
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& entry : fs::recursive_directory_iterator(dir_))
      out.push_back(fs::relative(entry.path(), dir_).string());
    std::ranges::sort(out);
    return out;
  }

  fs::path dir_;
};

/// The message of the shiftop::Error that `f` throws, or "no error".
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

inline bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

inline void write_text(const std::string& path, std::string_view text) {
  std::ofstream(path, std::ios::binary) << text;
}

/// Values a lossy reader or writer would change: signed zeros, denormals, extremes, NaN payloads
/// and infinities (finite_only leaves out the last two), then random normals.
inline std::vector<double> tricky_values(std::size_t n, unsigned seed, bool finite_only) {
  std::vector<double> special = {-0.0, std::numeric_limits<double>::denorm_min(),
                                 -std::numeric_limits<double>::max(), 1.0 / 3.0};
  if (!finite_only) {
    special.push_back(std::bit_cast<double>(std::uint64_t{0x7ff8000000abcdefULL}));
    special.push_back(-std::numeric_limits<double>::infinity());
  }
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal;
  std::vector<double> values(n);
  for (std::size_t k = 0; k < n; ++k)
    values[k] = k < special.size() ? special[k] : normal(engine);
  std::ranges::shuffle(values, engine);
  return values;
}

/// Bitwise equality, so that -0.0 and NaN payloads count.
inline void expect_bits_equal(const std::vector<double>& a, const std::vector<double>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k)
    ASSERT_EQ(std::bit_cast<std::uint64_t>(a[k]), std::bit_cast<std::uint64_t>(b[k])) << "at " << k;
}

// Lowers the file size limit so that writes fail as on a full disk (EFBIG instead of ENOSPC).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    previous_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, previous_handler_);
  }

 private:
  rlimit saved_{};
  void (*previous_handler_)(int) = nullptr;
};

}  // namespace shiftop::testing
