#include <map>
#include <memory>
#include <mutex>

#include "shiftop/gpu/context.hpp"

namespace shiftop::gpu {

namespace {

struct Slot {
  std::mutex mutex;
  std::shared_ptr<Context> context;
};

struct Slots {
  std::mutex mutex;
  std::map<int, Slot> by_device;  // a map's elements stay where they are
};

}  // namespace

SharedContext shared_context(int device) {
  static auto* const slots = new Slots();  // never freed: see gpu/context.hpp
  Slot* slot = nullptr;
  {
    const std::lock_guard lock(slots->mutex);
    slot = &slots->by_device[device];
  }
  std::unique_lock lock(slot->mutex);
  if (!slot->context) slot->context = Context::create(device);
  return {slot->context, std::move(lock)};
}

std::shared_ptr<Context> context_for(const GpuOptions& options) {
  return options.context ? options.context : Context::create(options.device);
}

}  // namespace shiftop::gpu
