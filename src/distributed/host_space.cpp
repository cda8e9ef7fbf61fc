// Host memory as a distributed plan's memory space (memory_space.hpp).
#include <algorithm>
#include <span>

#include "backend/cpu/cast.hpp"
#include "core/aligned_buffer.hpp"
#include "shiftop/distributed/memory_space.hpp"

namespace shiftop::distributed {
namespace {

class HostSpace final : public MemorySpace {
 public:
  void convert(const double* from, float* to, index_t count) override {
    cpu::cast(from, to, count);
  }
  void convert(const float* from, double* to, index_t count) override {
    cpu::cast(from, to, count);
  }
  void fill_zero(double* values, index_t count) override { std::fill(values, values + count, 0.0); }
  void apply(btt::Plan& plan, btt::Op op, const double* x, double* y, index_t nrhs) override {
    const Shape& s = plan.shape();
    plan.apply(op, std::span(x, static_cast<std::size_t>(nrhs * input_blocks(op, s) * s.nt)),
               std::span(y, static_cast<std::size_t>(nrhs * output_blocks(op, s) * s.nt)), nrhs);
  }
  void synchronize() override {}

 protected:
  std::shared_ptr<void> allocate_bytes(std::size_t bytes) override {
    if (bytes == 0) return nullptr;
    auto buffer = std::make_shared<AlignedBuffer<unsigned char>>(bytes);
    return std::shared_ptr<void>(buffer, buffer->data());
  }
};

}  // namespace

std::unique_ptr<MemorySpace> make_host_space() {
  return std::make_unique<HostSpace>();
}

}  // namespace shiftop::distributed
