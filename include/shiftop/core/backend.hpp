// Where an object runs, on which GPU, and how hard its creation searches for the fastest way to
// apply it: shared by every family (btt, circ, svd, gsvd, the inverse-problem layer).
#pragma once

#include <array>
#include <memory>
#include <string_view>
#include <utility>

#include "shiftop/core/enum_names.hpp"

namespace shiftop {

namespace gpu {
class Context;
}

enum class Backend { Cpu, Cuda };

template <>
struct EnumNames<Backend> {
  static constexpr std::array<std::pair<Backend, std::string_view>, 2> table{
      {{Backend::Cpu, "cpu"}, {Backend::Cuda, "cuda"}}};
};

/// The backend named `text` ("cpu" or "cuda"), checked to be usable here: "cuda" needs a build
/// with CUDA and GPU `device` on this machine. Otherwise throws shiftop::Error naming the input:
/// `what` (the backend's option) or `device_what` (the device's).
Backend parse_backend(std::string_view text, int device = 0, std::string_view what = "backend",
                      std::string_view device_what = "device");

/// Where a GPU object runs (Backend::Cuda): on `context` when given (shared with other objects:
/// one stream, one set of handles, in order), else on a context of its own on GPU `device`.
struct GpuOptions {
  std::shared_ptr<gpu::Context> context{};
  int device = 0;
};

/// How hard creation searches for the fastest way to apply: Estimate takes the defaults; Measure
/// times the candidates on the operator's own data and keeps the fastest.
enum class Planning { Estimate, Measure };

template <>
struct EnumNames<Planning> {
  static constexpr std::array<std::pair<Planning, std::string_view>, 2> table{
      {{Planning::Estimate, "estimate"}, {Planning::Measure, "measure"}}};
};

}  // namespace shiftop
