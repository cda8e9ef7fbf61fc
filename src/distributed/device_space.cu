// One GPU as a distributed plan's memory space (device_space.hpp). Compiled by nvcc: messages are
// built without fmt (backend/cuda/check.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "backend/cuda/check.hpp"
#include "distributed/device_space.hpp"

namespace shiftop::distributed {
namespace {

constexpr int kThreads = 256;

template <typename From, typename To>
__global__ void cast_kernel(const From* __restrict__ from, To* __restrict__ to, index_t count) {
  for (index_t k = blockIdx.x * index_t{blockDim.x} + threadIdx.x; k < count;
       k += index_t{gridDim.x} * blockDim.x)
    to[k] = static_cast<To>(from[k]);  // round to nearest, as on the host
}

template <typename From, typename To>
void cast(const From* from, To* to, index_t count, cudaStream_t stream) {
  if (count == 0) return;
  const index_t blocks =
      std::clamp<index_t>((count + kThreads - 1) / kThreads, 1, index_t{1} << 16);
  cast_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(from, to, count);
  SHIFTOP_CUDA_CHECK(cudaGetLastError());
}

class CudaSpace final : public DeviceSpace {
 public:
  explicit CudaSpace(int device) : device_(device) {
    const int visible = cuda_device_count();
    if (device < 0 || device >= visible)
      throw Error("CUDA device " + std::to_string(device) + " is not available (" +
                  std::to_string(visible) + " visible); use the CPU backend");
    activate();
    try {
      SHIFTOP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
      SHIFTOP_CUDA_CHECK(cudaEventCreateWithFlags(&joined_, cudaEventDisableTiming));
      SHIFTOP_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
    } catch (...) {
      release();
      throw;
    }
  }
  ~CudaSpace() override { release(); }
  CudaSpace(const CudaSpace&) = delete;
  CudaSpace& operator=(const CudaSpace&) = delete;

  int device() const override { return device_; }
  void* stream() const override { return stream_; }

  void wait_for(void* user) override {
    activate();
    SHIFTOP_CUDA_CHECK(cudaEventRecord(joined_, static_cast<cudaStream_t>(user)));
    SHIFTOP_CUDA_CHECK(cudaStreamWaitEvent(stream_, joined_));
  }
  void signal(void* user) override {
    activate();
    SHIFTOP_CUDA_CHECK(cudaEventRecord(done_, stream_));
    SHIFTOP_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(user), done_));
  }
  void copy_to_device(double* device, const double* host, std::size_t count) override {
    copy(device, host, count, cudaMemcpyHostToDevice);
  }
  void copy_to_host(double* host, const double* device, std::size_t count) override {
    copy(host, device, count, cudaMemcpyDeviceToHost);
  }

  void convert(const double* from, float* to, index_t count) override {
    activate();
    cast(from, to, count, stream_);
  }
  void convert(const float* from, double* to, index_t count) override {
    activate();
    cast(from, to, count, stream_);
  }
  void fill_zero(double* values, index_t count) override {
    if (count == 0) return;
    activate();
    SHIFTOP_CUDA_CHECK(
        cudaMemsetAsync(values, 0, static_cast<std::size_t>(count) * sizeof(double), stream_));
  }
  void apply(btt::Plan& plan, Op op, const double* x, double* y, index_t nrhs) override {
    plan.apply_device(op, x, y, nrhs, stream_);
  }
  void synchronize() override {
    activate();
    SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

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
    // Freed on its own device, leaving the caller's current device as it was.
    return std::shared_ptr<void>(memory, [device = device_](void* p) {
      int current = 0;
      const bool known = cudaGetDevice(&current) == cudaSuccess;
      if (cudaSetDevice(device) == cudaSuccess) cudaFree(p);
      if (known) cudaSetDevice(current);
    });
  }

 private:
  void activate() const { SHIFTOP_CUDA_CHECK(cudaSetDevice(device_)); }
  void copy(double* to, const double* from, std::size_t count, cudaMemcpyKind kind) {
    if (count == 0) return;
    activate();
    SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(to, from, count * sizeof(double), kind, stream_));
  }
  void release() noexcept {
    if (done_ != nullptr) cudaEventDestroy(done_);
    if (joined_ != nullptr) cudaEventDestroy(joined_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  int device_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t joined_ = nullptr, done_ = nullptr;
};

}  // namespace

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver or no device: a normal situation on a CPU machine
    return 0;
  }
  return count;
}

std::unique_ptr<DeviceSpace> make_device_space(int device) {
  return std::make_unique<CudaSpace>(device);
}

}  // namespace shiftop::distributed
