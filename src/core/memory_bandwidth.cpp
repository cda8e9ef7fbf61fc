#include "shiftop/core/memory_bandwidth.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "core/aligned_buffer.hpp"
#include "shiftop/core/timer.hpp"

namespace shiftop {
namespace {

// Sum of this thread's contiguous share of a[0, n) with 32 independent partial sums, so that the
// memory system, not an add-latency chain, sets the pace.
double sum_share(const double* a, std::int64_t n) {
  const int t = omp_get_thread_num(), nt = omp_get_num_threads();
  const std::int64_t lo = n * t / nt / 32 * 32, hi = n * (t + 1) / nt / 32 * 32;
  double acc[32] = {};
  for (std::int64_t i = lo; i < hi; i += 32) {
#pragma omp simd
    for (int v = 0; v < 32; ++v)
      acc[v] += a[i + v];
  }
  double sum = 0;
  for (double v : acc)
    sum += v;
  return sum;
}

}  // namespace

MemoryBandwidth measure_memory_bandwidth(std::size_t bytes, int threads, int repetitions) {
  const int nthreads = threads > 0 ? threads : omp_get_max_threads();
  const auto n = static_cast<std::int64_t>(bytes / sizeof(double)) / 32 * 32;
  AlignedBuffer<double> buffer_a(static_cast<std::size_t>(n)),
      buffer_b(static_cast<std::size_t>(n));
  double* a = buffer_a.data();
  double* b = buffer_b.data();
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
#pragma omp parallel num_threads(nthreads) reduction(+ : sum)
    sum += sum_share(a, n);
    best_read = std::min(best_read, watch.lap());
    sink = sink + sum;
#pragma omp parallel for simd num_threads(nthreads) schedule(static)
    for (std::int64_t i = 0; i < n; ++i)
      b[i] = a[i];
    best_copy = std::min(best_copy, watch.lap());
    sink = sink + b[rep % n];
  }
  MemoryBandwidth result;
  const double nbytes = static_cast<double>(n) * sizeof(double);
  result.read_GBs = nbytes / best_read / 1e9;
  result.copy_GBs = 2 * nbytes / best_copy / 1e9;
  result.array_bytes = static_cast<std::size_t>(nbytes);
  return result;
}

}  // namespace shiftop
