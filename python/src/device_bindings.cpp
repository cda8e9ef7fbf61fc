// shiftop._core.Plan.apply_device: btt::Plan::apply_device on the raw device pointers of a
// PyTorch tensor or CuPy array (python/shiftop/_device_arrays.py finds them, checks shapes,
// dtypes and contiguity, and allocates the output with the caller's library). The apply is queued
// on the caller's stream (Plan::apply_device orders the plan's stream after it and it after the
// plan's), so the caller synchronises exactly as after any of its library's own kernels. Here the
// pointers are checked against the CUDA runtime's record of them (device memory of the plan's
// GPU), so that a wrong pointer is refused instead of faulting on the device, and the caller's
// current CUDA device, which the plan's context switches to, is restored afterwards.
#include <nanobind/nanobind.h>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "current_device.hpp"
#include "shiftop/btt/op.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/core/error.hpp"

#ifdef SHIFTOP_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace shiftop::python {

#ifdef SHIFTOP_HAVE_CUDA
namespace {

void check_cuda(cudaError_t code, const char* call) {
  require(code == cudaSuccess, "{} failed: {}", call, cudaGetErrorString(code));
}

// `pointer` must be device (or managed) memory of GPU `device`: anything else would fault inside
// the plan's kernels (or read another GPU's memory without peer access).
void require_device_memory(const char* name, std::uintptr_t pointer, int device) {
  cudaPointerAttributes attributes{};
  check_cuda(cudaPointerGetAttributes(&attributes, reinterpret_cast<const void*>(pointer)),
             "cudaPointerGetAttributes");
  const bool on_device =
      attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
  require(on_device, "{} is not CUDA device memory (it is {} memory): expected an array on GPU {}",
          name, attributes.type == cudaMemoryTypeHost ? "pinned host" : "unregistered host",
          device);
  require(attributes.device == device, "{} is on GPU {}, the operator's plan on GPU {}", name,
          attributes.device, device);
}

}  // namespace
#endif

void apply_device(btt::Plan& plan, const std::string& op_name, std::uintptr_t x, std::uintptr_t y,
                  index_t nrhs, std::uintptr_t stream, int device) {
  const btt::Op op = parse_name<btt::Op>(op_name, "op");
#ifdef SHIFTOP_HAVE_CUDA
  require_device_memory("the input", x, device);
  require_device_memory("the output", y, device);
  const CurrentDevice restore;
#else
  (void)device;
#endif
  plan.apply_device(op, reinterpret_cast<const double*>(x), reinterpret_cast<double*>(y), nrhs,
                    reinterpret_cast<void*>(stream));
}

// Seconds of each of `repetitions` applies, each waited for on `stream` (what a caller's
// synchronise after `op @ x` waits for): the C++ side of bench/python_overhead.py.
std::vector<double> time_apply_device(btt::Plan& plan, const std::string& op, std::uintptr_t x,
                                      std::uintptr_t y, index_t nrhs, int repetitions,
                                      std::uintptr_t stream, int device) {
  require(repetitions >= 1, "repetitions {}: expected at least 1", repetitions);
#ifdef SHIFTOP_HAVE_CUDA
  std::vector<double> seconds;
  for (int k = 0; k < repetitions; ++k) {
    const auto start = std::chrono::steady_clock::now();
    apply_device(plan, op, x, y, nrhs, stream, device);
    check_cuda(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream)),
               "cudaStreamSynchronize");
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return seconds;
#else
  (void)plan, (void)op, (void)x, (void)y, (void)nrhs, (void)stream, (void)device;
  fail("time_apply_device needs a CUDA plan; this shiftop was built without CUDA");
#endif
}

void bind_device(nb::module_& m) {
  nb::object plan = m.attr("Plan");
  plan.attr("apply_device") = nb::cpp_function(
      &apply_device, nb::is_method(), nb::scope(plan), nb::name("apply_device"), "op"_a, "x"_a,
      "y"_a, "nrhs"_a, "stream"_a, "device"_a, nb::call_guard<nb::gil_scoped_release>(),
      "y = op(F) x on device memory (CUDA plans): x and y are the integer addresses of "
      "C-contiguous float64 arrays of nrhs*blocks*Nt values on GPU `device` (the plan's), queued "
      "on `stream` (a cudaStream_t as an integer, 0 for the legacy default stream) and "
      "asynchronous with respect to the host. Low-level: shiftop.Operator does the checks.");
  plan.attr("time_apply_device") = nb::cpp_function(
      &time_apply_device, nb::is_method(), nb::scope(plan), nb::name("time_apply_device"), "op"_a,
      "x"_a, "y"_a, "nrhs"_a, "repetitions"_a, "stream"_a, "device"_a,
      nb::call_guard<nb::gil_scoped_release>(),
      "Seconds of each of `repetitions` calls of apply_device (same arguments), each followed by "
      "a synchronisation of `stream`: the C++ time of an apply, without Python.");
}

}  // namespace shiftop::python
