#include "core/memory_bandwidth.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "core/aligned_buffer.hpp"
#include "core/timer.hpp"

namespace shiftop {

MemoryBandwidth measure_memory_bandwidth(std::size_t bytes, int threads, int repetitions) {
  const int nthreads = threads > 0 ? threads : omp_get_max_threads();
  const auto n = static_cast<std::int64_t>(bytes / sizeof(double));
  AlignedBuffer<double> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n));
#pragma omp parallel for num_threads(nthreads) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {  // first touch by the threads that will read
    a[i] = 1.0 + static_cast<double>(i % 7);
    b[i] = 0.0;
  }
  double best_read = 1e30, best_copy = 1e30;
  volatile double sink = 0;  // keeps the reads observable
  for (int rep = 0; rep < repetitions; ++rep) {
    Stopwatch watch;
    double sum = 0;
#pragma omp parallel for num_threads(nthreads) schedule(static) reduction(+ : sum)
    for (std::int64_t i = 0; i < n; ++i)
      sum += a[i];
    best_read = std::min(best_read, watch.lap());
    sink = sink + sum;
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (std::int64_t i = 0; i < n; ++i)
      b[i] = a[i];
    best_copy = std::min(best_copy, watch.lap());
    sink = sink + b[static_cast<std::size_t>(rep) % static_cast<std::size_t>(n)];
  }
  MemoryBandwidth result;
  const double nbytes = static_cast<double>(n) * sizeof(double);
  result.read_GBs = nbytes / best_read / 1e9;
  result.copy_GBs = 2 * nbytes / best_copy / 1e9;
  result.array_bytes = static_cast<std::size_t>(nbytes);
  return result;
}

}  // namespace shiftop
