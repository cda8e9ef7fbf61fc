// STREAM-like measurements of this machine's memory bandwidth, taken in the same run as a
// benchmark so that achieved times can be reported as a fraction of the hardware limit.
#pragma once

#include <cstddef>

namespace shiftop {

struct MemoryBandwidth {
  double read_GBs = 0;  ///< sum over a large array: bytes read / time
  double copy_GBs = 0;  ///< a = b over large arrays: (bytes read + bytes written) / time
  std::size_t array_bytes = 0;
};

/// Measures with arrays of `bytes` each (use several times the last-level cache), on `threads`
/// OpenMP threads (0 = all), best of `repetitions`.
MemoryBandwidth measure_memory_bandwidth(std::size_t bytes, int threads = 0, int repetitions = 7);

}  // namespace shiftop
