// The engines a Plan runs on, one per backend (btt/cpu/, btt/cuda/), made here without their
// headers so that plan.cpp builds with or without the CUDA toolkit.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "shiftop/btt/plan.hpp"

namespace shiftop::btt {

/// What every engine is built from (Plan::create and create_general have checked it): the first
/// block column and row (empty for a block-triangular operator) of the kernels.
struct EngineInputs {
  std::span<const double> first_column, first_row;
  const Shape& shape;
  const PlanOptions& options;
  const PrecisionConfig& precision;
};

std::unique_ptr<Engine> make_cpu_engine(const EngineInputs& inputs);

/// Plan::host_bytes per backend (options checked, precision parsed): the CPU engine's layout
/// (btt/cpu/setup.cpp); the GPU engine holds nothing sizeable on the host (btt/cuda/setup.cu).
std::size_t cpu_host_bytes(const Shape& shape, const PlanOptions& options,
                           const PrecisionConfig& precision);
std::size_t cuda_host_bytes(const Shape& shape, const PlanOptions& options,
                            const PrecisionConfig& precision);

/// Builds the GPU engine on options.gpu.context (or a new context on options.gpu.device); throws
/// shiftop::Error when shiftop was built without CUDA, there is no such device, or the plan does
/// not fit in its free memory.
std::unique_ptr<Engine> make_cuda_engine(const EngineInputs& inputs);

}  // namespace shiftop::btt
