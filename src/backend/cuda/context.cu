// gpu::Context (include/shiftop/gpu/context.hpp) on CUDA.
#include <string>

#include "backend/cuda/context.cuh"
#include "shiftop/core/error_type.hpp"
#include "shiftop/gpu/devices.hpp"

namespace shiftop::gpu {

std::shared_ptr<Context> Context::create(int device) {
  const int visible = device_count();
  if (device < 0 || device >= visible)
    throw Error("CUDA device " + std::to_string(device) + " is not available (" +
                std::to_string(visible) + " visible); use the CPU backend or another device");
  auto handles = std::make_unique<Handles>();
  handles->device = device;
  // Owned by the context from here on: its destructor releases whatever was made.
  std::shared_ptr<Context> context(new Context(std::move(handles)));
  Handles& h = context->handles();
  SHIFTOP_CUDA_CHECK(cudaSetDevice(device));
  SHIFTOP_CUDA_CHECK(
      cudaDeviceGetAttribute(&h.multiprocessors, cudaDevAttrMultiProcessorCount, device));
  SHIFTOP_CUDA_CHECK(cudaStreamCreateWithFlags(&h.stream, cudaStreamNonBlocking));
  SHIFTOP_CUDA_CHECK(cublasCreate(&h.cublas));
  SHIFTOP_CUDA_CHECK(cublasSetStream(h.cublas, h.stream));
  h.cublas_workspace = cuda::allocate(*context, std::size_t{32} << 20);
  SHIFTOP_CUDA_CHECK(
      cublasSetWorkspace(h.cublas, h.cublas_workspace.as<void>(), h.cublas_workspace.bytes()));
  SHIFTOP_CUDA_CHECK(cudaEventCreateWithFlags(&h.fork, cudaEventDisableTiming));
  SHIFTOP_CUDA_CHECK(cudaEventCreateWithFlags(&h.join, cudaEventDisableTiming));
  return context;
}

Context::Context(std::unique_ptr<Handles> handles) : handles_(std::move(handles)) {}

Context::~Context() {
  Handles& h = *handles_;
  cudaSetDevice(h.device);
  if (h.join != nullptr) cudaEventDestroy(h.join);
  if (h.fork != nullptr) cudaEventDestroy(h.fork);
  if (h.cublas != nullptr) cublasDestroy(h.cublas);
  if (h.cusolver != nullptr) cusolverDnDestroy(h.cusolver);
  h.cublas_workspace = cuda::DeviceMemory();
  if (h.stream != nullptr) cudaStreamDestroy(h.stream);
}

int Context::device() const {
  return handles_->device;
}

void* Context::stream() const {
  return handles_->stream;
}

int Context::multiprocessors() const {
  return handles_->multiprocessors;
}

void Context::activate() const {
  SHIFTOP_CUDA_CHECK(cudaSetDevice(handles_->device));
}

void Context::wait_for(void* user) const {
  activate();
  SHIFTOP_CUDA_CHECK(cudaEventRecord(handles_->fork, static_cast<cudaStream_t>(user)));
  SHIFTOP_CUDA_CHECK(cudaStreamWaitEvent(handles_->stream, handles_->fork));
}

void Context::signal(void* user) const {
  activate();
  SHIFTOP_CUDA_CHECK(cudaEventRecord(handles_->join, handles_->stream));
  SHIFTOP_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(user), handles_->join));
}

void Context::synchronize() const {
  activate();
  SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(handles_->stream));
}

std::size_t Context::allocated_bytes() const {
  return handles_->allocated;
}

}  // namespace shiftop::gpu

namespace shiftop::cuda {

cusolverDnHandle_t cusolver_of(const gpu::Context& context) {
  gpu::Context::Handles& h = context.handles();
  if (h.cusolver == nullptr) {
    context.activate();
    SHIFTOP_CUDA_CHECK(cusolverDnCreate(&h.cusolver));
    SHIFTOP_CUDA_CHECK(cusolverDnSetStream(h.cusolver, h.stream));
  }
  return h.cusolver;
}

}  // namespace shiftop::cuda
