// The one place for "built without CUDA" (as Ginkgo's core/device_hooks/cuda_hooks.cpp): compiled
// instead of every CUDA source (src/{backend,btt,circ,svd,gsvd,inverse}/cuda/) when shiftop is
// configured with SHIFTOP_ENABLE_CUDA=OFF, it defines each symbol the CPU-only library needs from
// them, and each refuses with the same line. gpu::Context::create refuses, so no Context exists and
// its other members are never reached; they are defined so that code using a context (the Python
// bindings' stream ordering) links. A new CUDA entry point gets its refusal here; a HIP backend
// would have hip_hooks.cpp beside it (docs/backends.md).
#include <complex>
#include <memory>
#include <utility>

#include "btt/engines.hpp"
#include "btt/pair_device.hpp"
#include "circ/engine.hpp"
#include "inverse/dense_space.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/gpu/context.hpp"
#include "shiftop/gpu/devices.hpp"
#include "shiftop/inverse/noise.hpp"
#include "shiftop/inverse/prior.hpp"
#include "shiftop/svd/jacobi_gpu.hpp"
#include "svd/cuda/host_drivers.hpp"

namespace shiftop {
namespace {

[[noreturn]] void no_cuda() {
  fail("this shiftop was built without CUDA (SHIFTOP_ENABLE_CUDA=OFF); use the CPU backend");
}

}  // namespace

// --- backend/cuda: the GPU context, the device list, the roofline probes ----------------------

namespace gpu {

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

}  // namespace gpu

// --- btt/cuda: the plan's engine and the pair's device buffers --------------------------------

namespace btt {

std::unique_ptr<Engine> make_cuda_engine(const EngineInputs&) {
  no_cuda();
}

std::size_t cuda_host_bytes(const Shape&, const PlanOptions&, const PrecisionConfig&) {
  return 0;  // no GPU plan can be made; make_cuda_engine says why
}

std::unique_ptr<PairDevice> make_pair_device(const gpu::Context*, int, std::size_t, std::size_t,
                                             std::size_t) {
  no_cuda();
}

}  // namespace btt

// --- circ/cuda: the operator's engine ---------------------------------------------------------

namespace circ {

template <class T>
std::unique_ptr<Engine<T>> make_cuda_engine(Layout<T>, const Options&) {
  no_cuda();
}

template std::unique_ptr<Engine<float>> make_cuda_engine(Layout<float>, const Options&);
template std::unique_ptr<Engine<double>> make_cuda_engine(Layout<double>, const Options&);

}  // namespace circ

// --- inverse/cuda: the device methods of the noise and the priors, the data-space Hessian's GPU
// space ----------------------------------------------------------------------------------------

namespace inverse {

std::unique_ptr<DenseSpace> make_device_dense_space(std::shared_ptr<gpu::Context>, int) {
  no_cuda();
}
void GaussianNoise::apply_device(const double*, double*, index_t, void*) const {
  no_cuda();
}
void GaussianNoise::apply_inverse_device(const double*, double*, index_t, void*) const {
  no_cuda();
}
void DiagonalPrior::apply_covariance_device(const double*, double*, index_t, void*) const {
  no_cuda();
}
void TimeSmoothingPrior::apply_covariance_device(const double*, double*, index_t, void*) const {
  no_cuda();
}
void KernelPrior::apply_covariance_device(const double*, double*, index_t, void*) const {
  no_cuda();
}

}  // namespace inverse

// --- svd/cuda: the Jacobi SVD and GSVD on options.backend = Backend::Cuda
// (svd/cuda/host_drivers.hpp) and the device-array SVD (svd/jacobi_gpu.hpp) -------------------

namespace svd {

namespace {

[[noreturn]] void no_cuda_backend(const char* what) {
  fail(
      "{}: backend cuda: this shiftop was built without CUDA (SHIFTOP_ENABLE_CUDA=OFF); use "
      "backend cpu",
      what);
}

}  // namespace

template <class T>
BatchedJacobiResult<T> detail::jacobi_batched_cuda(const T*, index_t, index_t, index_t, index_t,
                                                   index_t, const JacobiOptions&) {
  no_cuda_backend("svd");
}

template <class T>
std::vector<JacobiStats> jacobi_batched_device(const gpu::Context&, const T*, index_t, index_t,
                                               index_t, index_t, index_t,
                                               const DeviceJacobiOutput<T>&, const JacobiOptions&) {
  no_cuda_backend("svd");
}

template <class T>
struct GpuPlan<T>::State {};
template <class T>
GpuPlan<T>::GpuPlan(const gpu::Context&, index_t, index_t, index_t, const JacobiOptions&) {
  no_cuda_backend("svd");
}
template <class T>
GpuPlan<T>::~GpuPlan() = default;
template <class T>
GpuPlan<T>::GpuPlan(GpuPlan&&) noexcept = default;
template <class T>
GpuPlan<T>& GpuPlan<T>::operator=(GpuPlan&&) noexcept = default;
template <class T>
std::vector<JacobiStats> GpuPlan<T>::execute(const T*, index_t, index_t,
                                             const DeviceJacobiOutput<T>&) {
  no_cuda_backend("svd");
}
template <class T>
index_t GpuPlan<T>::batch() const {
  no_cuda_backend("svd");
}
template <class T>
index_t GpuPlan<T>::m() const {
  no_cuda_backend("svd");
}
template <class T>
index_t GpuPlan<T>::n() const {
  no_cuda_backend("svd");
}
template <class T>
bool GpuPlan<T>::blocked() const {
  no_cuda_backend("svd");
}

template <class T>
BatchedGsvdResult<T> detail::gsvd_hz_batched_cuda(const T*, index_t, index_t, const T*, index_t,
                                                  index_t, index_t, index_t, index_t, index_t,
                                                  const GsvdOptions&) {
  no_cuda_backend("gsvd");
}

#define SHIFTOP_INSTANTIATE(T)                                                      \
  template class GpuPlan<T>;                                                        \
  template BatchedJacobiResult<T> detail::jacobi_batched_cuda<T>(                   \
      const T*, index_t, index_t, index_t, index_t, index_t, const JacobiOptions&); \
  template std::vector<JacobiStats> jacobi_batched_device<T>(                       \
      const gpu::Context&, const T*, index_t, index_t, index_t, index_t, index_t,   \
      const DeviceJacobiOutput<T>&, const JacobiOptions&);
SHIFTOP_INSTANTIATE(float)
SHIFTOP_INSTANTIATE(double)
SHIFTOP_INSTANTIATE(std::complex<float>)
SHIFTOP_INSTANTIATE(std::complex<double>)
#undef SHIFTOP_INSTANTIATE

#define SHIFTOP_INSTANTIATE(T)                                                                    \
  template BatchedGsvdResult<T> detail::gsvd_hz_batched_cuda<T>(                                  \
      const T*, index_t, index_t, const T*, index_t, index_t, index_t, index_t, index_t, index_t, \
      const GsvdOptions&);
SHIFTOP_INSTANTIATE(double)
SHIFTOP_INSTANTIATE(std::complex<double>)
#undef SHIFTOP_INSTANTIATE

}  // namespace svd

}  // namespace shiftop
