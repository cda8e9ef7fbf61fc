// The CUDA backend of a plan (cuFFT, cuBLAS and shiftop's kernels in src/backend/cuda). Declared
// here without CUDA types so that plan.cpp builds with or without the CUDA toolkit.
#pragma once

#include <memory>
#include <span>

#include "shiftop/btt/plan.hpp"

namespace shiftop::btt {

/// Builds the GPU engine on options.device; throws shiftop::Error when shiftop was built without
/// CUDA, there is no such device, or the plan does not fit in its free memory.
std::unique_ptr<Engine> make_cuda_engine(std::span<const double> first_column,
                                         std::span<const double> first_row, const Shape& shape,
                                         const PlanOptions& options,
                                         const PrecisionConfig& precision);

}  // namespace shiftop::btt
