#include "shiftop/core/threads.hpp"

#include <sched.h>

#include <algorithm>
#include <thread>

#include "shiftop/core/error.hpp"

namespace shiftop {

int hardware_threads() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) > 0)
    return CPU_COUNT(&allowed);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int thread_limit() {
  return std::max(hardware_threads(), kMinThreadLimit);
}

void check_threads(int threads, std::string_view option) {
  const int limit = thread_limit();
  require(threads >= 0 && threads <= limit,
          "{}: invalid thread count {}: expected 0 (OpenMP's default) or 1..{}", option, threads,
          limit);
}

}  // namespace shiftop
