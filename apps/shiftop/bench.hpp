// `shiftop bench`: what its single-process run (bench.cpp) and its run on a process grid under
// mpiexec (bench_distributed.cpp) share.
#pragma once

#include <cstddef>
#include <string>

#include "shiftop/btt/plan.hpp"
#include "shiftop/core/memory_bandwidth.hpp"

namespace shiftop::app {

struct BenchOptions {
  index_t nd = 20, nm = 2000, nt = 500, nrhs = 1, fft_length = 0;
  /// --op GadjF|FGadj: block rows of the second operator G (0: Nd).
  index_t nq = 0;
  std::string precision = "DDDDD", op = "F", backend = "cpu", gemv = "auto", fft = "auto";
  int threads = 0, repetitions = 20, warmup = 3, device = 0;
  bool json = false, direct = false, estimate = false, profile = false, graphs = false;
  bool check = false;
  // Under MPI: the grid ("PRxPC" or "auto"; empty is auto), whether --nd/--nm are per grid row
  // and column (weak scaling), the bytes of the bandwidth probe, and whether --device was given.
  std::string grid;
  bool weak = false, device_given = false;
  index_t probe_bytes = index_t{256} << 20;
};

/// Each of the two arrays of the CPU's bandwidth probe: several times any last-level cache.
inline constexpr std::size_t kCpuProbeArrayBytes = std::size_t{512} << 20;

/// The plan options the flags ask for.
btt::PlanOptions plan_options(const BenchOptions& o);

/// The bandwidths that bound an apply on `backend`: on the CPU its read and copy bandwidth (arrays
/// of 512 MiB, `threads` threads); on GPU `device` the read-only streaming bandwidth and the
/// device-to-device copy bandwidth (1 GiB each). The floors divide by read_GBs on both.
MemoryBandwidth measure_bandwidth(btt::Backend backend, int device, int threads);

/// The complex GEMM rate (TFLOP/s) of GPU `device` in FP32 (`single`) or FP64 (cuBLAS cgemm or
/// zgemm, n = 4096); 0 on the CPU, where no flop ceiling is measured.
double measure_gemm_TFLOPs(btt::Backend backend, int device, bool single);

/// --op GadjF or FGadj: the operator pair in one call against two calls of its plans
/// (bench_pair.cpp).
void run_pair_bench(const BenchOptions& o);

/// The run on a process grid (MPI_Init to MPI_Finalize inside).
void run_distributed_bench(const BenchOptions& o);

}  // namespace shiftop::app
