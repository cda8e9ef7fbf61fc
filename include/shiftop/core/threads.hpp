// The CPU thread counts the library accepts. A count in the tens of thousands used to crash every
// entry point: libgomp places each new thread's start data on the calling thread's stack
// (gomp_team_start's alloca), and 100000 threads overflowed an 8 MiB stack (a segfault inside
// GOMP_parallel, issue 28). The command line and the Python package apply the stricter rule of
// at most hardware_threads(); the library also lets tests and experiments oversubscribe a small
// machine (uneven splits, more parts than cores) up to kMinThreadLimit.
#pragma once

#include <string_view>

namespace shiftop {

/// The oversubscription the library allows on any machine: about 0.1 MiB of libgomp's start data
/// on the caller's stack, far below the crash.
inline constexpr int kMinThreadLimit = 1024;

/// The hardware threads this process may run on: the CPUs of its affinity mask
/// (sched_getaffinity), else std::thread::hardware_concurrency(); at least 1.
int hardware_threads();

/// The largest thread count the library accepts: max(hardware_threads(), kMinThreadLimit).
int thread_limit();

/// Throws shiftop::Error "<option>: invalid thread count N: expected 0 (OpenMP's default) or
/// 1..thread_limit()" unless 0 <= threads <= thread_limit().
void check_threads(int threads, std::string_view option);

}  // namespace shiftop
