// The GPU memory of an OperatorPair (btt/pair_device.hpp): three cuda::DeviceMemory blocks (NaN
// in test builds, core/poison.hpp) and synchronous copies on the default stream.
#include <cuda_runtime.h>

#include "backend/cuda/check.hpp"
#include "backend/cuda/context.cuh"
#include "backend/cuda/device_memory.cuh"
#include "btt/pair_device.hpp"

namespace shiftop::btt {
namespace {

int activated(int device) {
  SHIFTOP_CUDA_CHECK(cudaSetDevice(device));
  return device;
}

cuda::DeviceMemory allocate(const gpu::Context* context, std::size_t count) {
  const std::size_t bytes = count * sizeof(double);
  return context != nullptr ? cuda::allocate(*context, bytes) : cuda::DeviceMemory(bytes);
}

class CudaPairDevice final : public PairDevice {
 public:
  CudaPairDevice(const gpu::Context* context, int device, std::size_t middle, std::size_t input,
                 std::size_t output)
      : device_(activated(context != nullptr ? context->device() : device)),
        middle_(allocate(context, middle)),
        input_(allocate(context, input)),
        output_(allocate(context, output)) {}

  double* middle() override { return middle_.as<double>(); }
  double* input() override { return input_.as<double>(); }
  double* output() override { return output_.as<double>(); }

  void upload(const double* host, std::size_t count) override {
    SHIFTOP_CUDA_CHECK(cudaSetDevice(device_));
    SHIFTOP_CUDA_CHECK(cudaMemcpy(input(), host, count * sizeof(double), cudaMemcpyHostToDevice));
  }
  void download(double* host, std::size_t count) override {
    SHIFTOP_CUDA_CHECK(cudaSetDevice(device_));
    SHIFTOP_CUDA_CHECK(cudaMemcpy(host, output(), count * sizeof(double), cudaMemcpyDeviceToHost));
  }

 private:
  int device_;
  cuda::DeviceMemory middle_, input_, output_;
};

}  // namespace

std::unique_ptr<PairDevice> make_pair_device(const gpu::Context* context, int device,
                                             std::size_t middle, std::size_t input,
                                             std::size_t output) {
  return std::make_unique<CudaPairDevice>(context, device, middle, input, output);
}

}  // namespace shiftop::btt
