// The CUDA devices this process can see, for `shiftop info --devices` and backend selection.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace shiftop::cuda {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  std::size_t total_memory_bytes = 0;
  std::size_t free_memory_bytes = 0;
  int multiprocessors = 0;
};

/// All visible devices; empty (not an error) when there is no driver or no GPU.
std::vector<DeviceInfo> visible_devices();

}  // namespace shiftop::cuda
