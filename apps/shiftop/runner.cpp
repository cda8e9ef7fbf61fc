#include "runner.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

#include "shiftop/core/error.hpp"
#ifdef SHIFTOP_HAVE_CUDA
#include "shiftop/gpu/devices.hpp"
#endif

namespace shiftop::app {

#ifdef SHIFTOP_HAVE_CUDA
struct Runner::DeviceBuffers {
  std::optional<gpu::DeviceArray> x, y;
};
#else
struct Runner::DeviceBuffers {};
#endif

Runner::Runner(const std::vector<double>& x, std::vector<double>& y, btt::Backend backend,
               int device, HostApply host_apply, DeviceApply device_apply)
    : y_(y),
      device_(device),
      host_apply_(std::move(host_apply)),
      device_apply_(std::move(device_apply)) {
  if (backend == btt::Backend::Cpu) return;
#ifdef SHIFTOP_HAVE_CUDA
  device_buffers_ = std::make_unique<DeviceBuffers>();
  if (!x.empty()) {
    device_buffers_->x.emplace(x.size(), device);
    device_buffers_->x->upload(x.data());
  }
  if (!y.empty()) {
    device_buffers_->y.emplace(y.size(), device);
    const std::vector<double> poison(y.size(), std::numeric_limits<double>::quiet_NaN());
    device_buffers_->y->upload(poison.data());
  }
#else
  (void)x;
  fail("--backend cuda: this shiftop was built without CUDA");
#endif
}

Runner::~Runner() = default;

void Runner::apply() {
#ifdef SHIFTOP_HAVE_CUDA
  if (device_buffers_) {
    DeviceBuffers& d = *device_buffers_;
    device_apply_(d.x ? d.x->data() : nullptr, d.y ? d.y->data() : nullptr);
    gpu::synchronize(device_);
    return;
  }
#endif
  host_apply_();
}

const std::vector<double>& Runner::warm_up(int count) {
  for (int k = 0; k < std::max(count, 1); ++k)
    apply();
  return result();
}

const std::vector<double>& Runner::result() {
#ifdef SHIFTOP_HAVE_CUDA
  if (device_buffers_ && device_buffers_->y) device_buffers_->y->download(y_.data());
#endif
  return y_;
}

bool all_finite(std::span<const double> values) {
  return std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); });
}

SquaredNorms squared_norms(std::span<const double> a, std::span<const double> reference) {
  SquaredNorms sums;
  for (std::size_t k = 0; k < reference.size(); ++k) {
    sums.difference += (a[k] - reference[k]) * (a[k] - reference[k]);
    sums.reference += reference[k] * reference[k];
  }
  return sums;
}

}  // namespace shiftop::app
