#include "shiftop/core/backend.hpp"

#include <fmt/format.h>

#include "shiftop/core/error.hpp"
#include "shiftop/gpu/devices.hpp"

namespace shiftop {

Backend parse_backend(std::string_view text, int device, std::string_view what,
                      std::string_view device_what) {
  const Backend backend = parse_name<Backend>(text, what);
  if (backend == Backend::Cpu) return backend;
#ifdef SHIFTOP_HAVE_CUDA
  const int count = gpu::device_count();
  require(count > 0,
          "{} cuda: no CUDA device: the CUDA driver sees no GPU on this machine; use {} cpu", what,
          what);
  require(device >= 0 && device < count, "{} {}: this machine has {} CUDA device{} ({})",
          device_what, device, count, count == 1 ? "" : "s",
          count == 1 ? "0" : fmt::format("0-{}", count - 1));
#else
  (void)device;
  (void)device_what;
  fail("{} cuda: this shiftop was built without CUDA (SHIFTOP_ENABLE_CUDA=OFF); use {} cpu", what,
       what);
#endif
  return backend;
}

}  // namespace shiftop
