// One GPU as a distributed plan's memory space (device_space.hpp). Compiled by nvcc: messages are
// built without fmt (backend/cuda/check.hpp).
#include <cuda_runtime.h>

#include <string>

#include "backend/cuda/check.hpp"
#include "backend/cuda/context.cuh"
#include "backend/cuda/layout_kernels.cuh"
#include "backend/cuda/runtime.cuh"
#include "distributed/device_space.hpp"

namespace shiftop::distributed {
namespace {

class CudaSpace final : public DeviceSpace {
 public:
  explicit CudaSpace(std::shared_ptr<gpu::Context> context)
      : context_(std::move(context)),
        device_(context_->device()),
        stream_(cuda::stream_of(*context_)) {}

  const std::shared_ptr<gpu::Context>& context() const override { return context_; }
  int device() const override { return device_; }
  void* stream() const override { return stream_; }
  void wait_for(void* user) override { context_->wait_for(user); }
  void signal(void* user) override { context_->signal(user); }
  void copy_to_device(double* device, const double* host, std::size_t count) override {
    copy(device, host, count, cudaMemcpyHostToDevice);
  }
  void copy_to_host(double* host, const double* device, std::size_t count) override {
    copy(host, device, count, cudaMemcpyDeviceToHost);
  }

  void convert(const double* from, float* to, index_t count) override {
    activate();
    cuda::cast(from, to, count, stream_);
  }
  void convert(const float* from, double* to, index_t count) override {
    activate();
    cuda::cast(from, to, count, stream_);
  }
  void fill_zero(double* values, index_t count) override {
    if (count == 0) return;
    activate();
    SHIFTOP_CUDA_CHECK(
        cudaMemsetAsync(values, 0, static_cast<std::size_t>(count) * sizeof(double), stream_));
  }
  void apply(btt::Plan& plan, btt::Op op, const double* x, double* y, index_t nrhs) override {
    plan.apply_device(op, x, y, nrhs, stream_);
  }
  void synchronize() override { context_->synchronize(); }

 protected:
  std::shared_ptr<void> allocate_bytes(std::size_t bytes) override {
    if (bytes == 0) return nullptr;
    activate();
    void* memory = nullptr;
    const cudaError_t status = cudaMalloc(&memory, bytes);
    if (status != cudaSuccess) {
      (void)cudaGetLastError();
      throw Error("out of memory on CUDA device " + std::to_string(device_) +
                  ": could not allocate " + std::to_string(bytes) +
                  " bytes for the distributed plan's buffers (" + cudaGetErrorString(status) + ")");
    }
    // Counted in the context's allocated_bytes(); freed on its own device, leaving the caller's
    // current device as it was.
    context_->handles().allocated += bytes;
    return std::shared_ptr<void>(memory, [context = context_, bytes](void* p) {
      int current = 0;
      const bool known = cudaGetDevice(&current) == cudaSuccess;
      if (cudaSetDevice(context->device()) == cudaSuccess) cudaFree(p);
      if (known) cudaSetDevice(current);
      context->handles().allocated -= bytes;
    });
  }

 private:
  void activate() const { context_->activate(); }
  void copy(double* to, const double* from, std::size_t count, cudaMemcpyKind kind) {
    if (count == 0) return;
    activate();
    SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(to, from, count * sizeof(double), kind, stream_));
  }
  std::shared_ptr<gpu::Context> context_;
  int device_;
  cuda::stream_t stream_;
};

}  // namespace

std::unique_ptr<DeviceSpace> make_device_space(std::shared_ptr<gpu::Context> context) {
  return std::make_unique<CudaSpace>(std::move(context));
}

}  // namespace shiftop::distributed
