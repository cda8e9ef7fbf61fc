#include "runner.hpp"

#include <limits>

#include "shiftop/core/error.hpp"
#ifdef SHIFTOP_HAVE_CUDA
#include "shiftop/gpu/devices.hpp"
#endif

namespace shiftop::app {

#ifdef SHIFTOP_HAVE_CUDA
struct Runner::DeviceBuffers {
  gpu::DeviceArray x, y;
};
#else
struct Runner::DeviceBuffers {};
#endif

Runner::Runner(btt::Plan& plan, btt::Op op, const std::vector<double>& x, std::vector<double>& y,
               index_t nrhs, bool cuda, int device)
    : plan_(plan), op_(op), x_(x), y_(y), nrhs_(nrhs), device_(device) {
  if (!cuda) return;
#ifdef SHIFTOP_HAVE_CUDA
  device_buffers_.reset(
      new DeviceBuffers{gpu::DeviceArray(x.size(), device), gpu::DeviceArray(y.size(), device)});
  device_buffers_->x.upload(x.data());
  const std::vector<double> poison(y.size(), std::numeric_limits<double>::quiet_NaN());
  device_buffers_->y.upload(poison.data());
#else
  fail("--backend cuda: this shiftop was built without CUDA");
#endif
}

Runner::~Runner() = default;

void Runner::apply() {
#ifdef SHIFTOP_HAVE_CUDA
  if (device_buffers_) {
    plan_.apply_device(op_, device_buffers_->x.data(), device_buffers_->y.data(), nrhs_);
    gpu::synchronize(device_);
    return;
  }
#endif
  plan_.apply(op_, x_, y_, nrhs_);
}

const std::vector<double>& Runner::result() {
#ifdef SHIFTOP_HAVE_CUDA
  if (device_buffers_) device_buffers_->y.download(y_.data());
#endif
  return y_;
}

}  // namespace shiftop::app
