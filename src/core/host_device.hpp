// SHIFTOP_HOST_DEVICE marks small inline functions that CUDA kernels call as well as host code
// (the Jacobi rotation formulas of svd/rotation.hpp), so that the CPU and the GPU compute them
// with the same expressions; it is empty for the host compiler.
#pragma once

#ifdef __CUDACC__
#define SHIFTOP_HOST_DEVICE __host__ __device__
#else
#define SHIFTOP_HOST_DEVICE
#endif
