#include "shiftop/core/available_memory.hpp"

#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <limits>
#include <string>

#include "shiftop/core/error.hpp"

namespace shiftop {

std::optional<std::uint64_t> available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  constexpr std::string_view kKey = "MemAvailable:";
  while (std::getline(meminfo, line)) {
    if (!line.starts_with(kKey)) continue;
    // "MemAvailable:   12345678 kB"
    const std::size_t begin = line.find_first_not_of(' ', kKey.size());
    if (begin == std::string::npos) return std::nullopt;
    std::uint64_t kib = 0;
    const auto [end, error] = std::from_chars(line.data() + begin, line.data() + line.size(), kib);
    if (error != std::errc() || std::string_view(end, line.data() + line.size()) != " kB")
      return std::nullopt;
    return kib * 1024;
  }
  return std::nullopt;
}

void require_available_memory(double bytes, std::string_view what) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  const double addressable = static_cast<double>(std::numeric_limits<std::ptrdiff_t>::max());
  require(bytes <= addressable,
          "{} needs {:.0f} bytes ({:.3g} GiB), more than this machine can address", what, bytes,
          bytes / kGiB);
  const std::optional<std::uint64_t> available = available_memory_bytes();
  if (!available) return;
  require(bytes <= static_cast<double>(*available),
          "{} needs {:.0f} bytes ({:.3g} GiB) but only {} bytes ({:.3g} GiB) are available "
          "(MemAvailable in /proc/meminfo)",
          what, bytes, bytes / kGiB, *available, static_cast<double>(*available) / kGiB);
}

}  // namespace shiftop
