// Built instead of backend/cuda/*.cu when shiftop is configured without CUDA. create() refuses, so
// no Context exists and the other members are never reached; they are defined so that code using a
// context (the Python bindings' stream ordering) links in such a build.
#include <memory>
#include <utility>

#include "shiftop/core/error.hpp"
#include "shiftop/gpu/context.hpp"
#include "shiftop/gpu/devices.hpp"

namespace shiftop::gpu {

namespace {

[[noreturn]] void no_cuda() {
  fail("this shiftop was built without CUDA (SHIFTOP_ENABLE_CUDA=OFF): no GPU context");
}

}  // namespace

// Nothing to hold without CUDA.
struct Context::Handles {};

std::shared_ptr<Context> Context::create(int) {
  no_cuda();
}

Context::Context(std::unique_ptr<Handles> handles) : handles_(std::move(handles)) {}

Context::~Context() = default;

int Context::device() const {
  no_cuda();
}

void* Context::stream() const {
  no_cuda();
}

int Context::multiprocessors() const {
  no_cuda();
}

void Context::activate() const {
  no_cuda();
}

void Context::wait_for(void*) const {
  no_cuda();
}

void Context::signal(void*) const {
  no_cuda();
}

void Context::synchronize() const {
  no_cuda();
}

std::size_t Context::allocated_bytes() const {
  no_cuda();
}

int device_count() {
  return 0;
}

double measure_copy_bandwidth_GBs(std::size_t, int, int) {
  no_cuda();
}

double measure_read_bandwidth_GBs(std::size_t, int, int) {
  no_cuda();
}

double measure_complex_gemm_TFLOPs(bool, int) {
  no_cuda();
}

}  // namespace shiftop::gpu
