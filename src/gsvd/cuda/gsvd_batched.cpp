// The GPU driver of the batched implicit Hari-Zimmermann GSVD (shiftop/gsvd/gsvd.hpp with
// options.backend = Backend::Cuda, through svd/cuda/host_drivers.hpp): the
// checks the CPU driver makes, the pairs scaled by powers of two and packed, the strategy table,
// the kernels of gsvd/cuda/gsvd_kernels.hpp on the context's stream, Z^{-1} by cuBLAS, and the
// per-pair reports turned into statistics or errors.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <vector>

#include "backend/cuda/check.hpp"
#include "backend/cuda/context.cuh"
#include "gsvd/cuda/gsvd_kernels.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/svd/strategy.hpp"
#include "svd/cuda/host_drivers.hpp"
#include "svd/driver_checks.hpp"

namespace shiftop::svd {
namespace {

using gpu_kernels::DeviceType;
using gpu_kernels::GsvdBatch;
using gpu_kernels::GsvdReport;

// The CPU driver's checks and messages, and what the GPU does not run.
void validate(index_t batch, index_t m, index_t p, index_t n, index_t ldf, index_t stride_f,
              index_t ldg, index_t stride_g, const void* f, const void* g,
              const GsvdOptions& options) {
  detail::validate_gsvd(batch, m, p, n, ldf, stride_f, ldg, stride_g, f, g, options);
  require(options.variant == Variant::Auto || options.variant == Variant::Pointwise,
          "variant: the GPU GSVD runs the pointwise method (auto or pointwise); the blocked "
          "variants run on the CPU only");
}

// Lanes per group: about four rows of the longer of F and G per lane, 4..32, but narrower while
// that lets every pair of a step have a group of the block's 512 threads: each pair's 2 x 2
// transformation is a chain of dependent FP64 divisions and square roots, so a step costs about
// one such chain per round of groups, far more than the extra rows per lane (bench/NOTES.md).
int lanes_for(index_t rows, index_t pairs_per_step) {
  int lanes = 4;
  while (lanes < 32 && 4 * lanes < rows)
    lanes *= 2;
  while (lanes > 4 && pairs_per_step * lanes > 512)
    lanes /= 2;
  return lanes;
}

// The largest dynamic shared memory a block may opt in to, less room for the kernels' static
// shared variables.
std::size_t shared_limit(const gpu::Context& context) {
  int bytes = 0;
  SHIFTOP_CUDA_CHECK(
      cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, context.device()));
  return static_cast<std::size_t>(bytes) - 1024;
}

// The exponent e with 2^e max in [1, 2) (0 for max = 0): the exact scaling of section 16's
// "sums in double" that keeps the squared norms of the inner products in range.
int scaling_exponent(double max) {
  if (!(max > 0)) return 0;
  int k = 0;
  (void)std::frexp(max, &k);  // max = mantissa 2^k, mantissa in [0.5, 1)
  return 1 - k;
}

template <class T>
T scaled(T x, int e) {
  if constexpr (detail::kIsComplex<T>)
    return T(std::ldexp(x.real(), e), std::ldexp(x.imag(), e));
  else
    return std::ldexp(x, e);
}

template <class V>
V* buffer(cuda::DeviceMemory& memory, const gpu::Context& context, std::size_t count) {
  memory = cuda::allocate(context, std::max<std::size_t>(count, 1) * sizeof(V));
  return memory.as<V>();
}

// Z^{-1} for every pair by cuBLAS's batched LU with partial pivoting (getrfBatched, then
// getriBatched out of place): Z is the product of the 2 x 2 transformations, nonsingular and
// well-conditioned relative to G's columns (section 3.5); a per-block LU of our own would repeat
// what cuBLAS does for the whole batch at once. Returns the first pair whose Z is singular, or -1.
template <class T>
index_t invert_z(const gpu::Context& context, DeviceType<T>* z, DeviceType<T>* z_inverse,
                 index_t batch, index_t n, cudaStream_t stream) {
  const auto count = static_cast<std::size_t>(batch);
  std::vector<DeviceType<T>*> a(count), c(count);
  for (std::size_t b = 0; b < count; ++b) {
    a[b] = z + b * static_cast<std::size_t>(n * n);
    c[b] = z_inverse + b * static_cast<std::size_t>(n * n);
  }
  cuda::DeviceMemory a_memory, c_memory, pivot_memory, info_memory;
  auto** a_device = buffer<DeviceType<T>*>(a_memory, context, count);
  auto** c_device = buffer<DeviceType<T>*>(c_memory, context, count);
  int* pivots = buffer<int>(pivot_memory, context, count * static_cast<std::size_t>(n));
  int* info = buffer<int>(info_memory, context, count);
  SHIFTOP_CUDA_CHECK(
      cudaMemcpyAsync(a_device, a.data(), count * sizeof(a[0]), cudaMemcpyHostToDevice, stream));
  SHIFTOP_CUDA_CHECK(
      cudaMemcpyAsync(c_device, c.data(), count * sizeof(c[0]), cudaMemcpyHostToDevice, stream));
  cublasHandle_t handle = context.handles().cublas;
  const int order = static_cast<int>(n), size = static_cast<int>(batch);
  std::vector<int> host_info(count);
  if constexpr (detail::kIsComplex<T>) {
    auto** za = reinterpret_cast<cuDoubleComplex**>(a_device);
    auto** zc = reinterpret_cast<cuDoubleComplex**>(c_device);
    SHIFTOP_CUDA_CHECK(cublasZgetrfBatched(handle, order, za, order, pivots, info, size));
    SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(host_info.data(), info, count * sizeof(int),
                                       cudaMemcpyDeviceToHost, stream));
    SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (std::size_t b = 0; b < count; ++b)
      if (host_info[b] != 0) return static_cast<index_t>(b);
    SHIFTOP_CUDA_CHECK(
        cublasZgetriBatched(handle, order, za, order, pivots, zc, order, info, size));
  } else {
    SHIFTOP_CUDA_CHECK(cublasDgetrfBatched(handle, order, a_device, order, pivots, info, size));
    SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(host_info.data(), info, count * sizeof(int),
                                       cudaMemcpyDeviceToHost, stream));
    SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (std::size_t b = 0; b < count; ++b)
      if (host_info[b] != 0) return static_cast<index_t>(b);
    SHIFTOP_CUDA_CHECK(
        cublasDgetriBatched(handle, order, a_device, order, pivots, c_device, order, info, size));
  }
  SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream));  // before the pointer arrays are freed
  return -1;
}

}  // namespace

namespace detail {

template <class T>
BatchedGsvdResult<T> gsvd_hz_batched_cuda(const T* f, index_t ldf, index_t stride_f, const T* g,
                                          index_t ldg, index_t stride_g, index_t batch, index_t m,
                                          index_t p, index_t n, const GsvdOptions& options) {
  using V = DeviceType<T>;
  using R = Real<T>;
  validate(batch, m, p, n, ldf, stride_f, ldg, stride_g, f, g, options);
  BatchedGsvdResult<T> result;
  result.batch = batch;
  result.m = m;
  result.p = p;
  result.n = n;
  if (batch == 0) return result;

  // Checked, scaled by powers of two (exact) and packed (leading dimensions m and p).
  const auto count = static_cast<std::size_t>(batch);
  const auto f_size = static_cast<std::size_t>(m * n), g_size = static_cast<std::size_t>(p * n);
  std::vector<T> f_host(count * f_size), g_host(count * g_size);
  std::vector<int2> exponents(count);
  for (index_t b = 0; b < batch; ++b) {
    const T* fb = f + b * stride_f;
    const T* gb = g + b * stride_g;
    const int ef =
        scaling_exponent(detail::check_entries(fb, m, n, ldf, fmt::format("f: pair {}: F ", b)));
    const int eg =
        scaling_exponent(detail::check_entries(gb, p, n, ldg, fmt::format("g: pair {}: G ", b)));
    exponents[b] = int2{ef, eg};
    for (index_t j = 0; j < n; ++j) {
      for (index_t i = 0; i < m; ++i)
        f_host[b * f_size + i + j * m] = scaled(fb[i + j * ldf], ef);
      for (index_t i = 0; i < p; ++i)
        g_host[b * g_size + i + j * p] = scaled(gb[i + j * ldg], eg);
    }
  }

  const gpu::SharedContext held = held_context(options.gpu);
  const gpu::Context& context = *held.context;
  context.activate();
  const cudaStream_t stream = cuda::stream_of(context);
  const std::size_t limit = shared_limit(context);
  require(static_cast<std::size_t>(n) * gpu_kernels::kGsvdFinishBytesPerColumn <= limit,
          "n: the GPU GSVD holds {} bytes per column in a thread block's shared memory, at most "
          "{} columns here, got {}; use the CPU backend",
          gpu_kernels::kGsvdFinishBytesPerColumn, limit / gpu_kernels::kGsvdFinishBytesPerColumn,
          n);
  const bool vectors = options.compute_vectors;
  const auto z_size = static_cast<std::size_t>(n * n);

  cuda::DeviceMemory g_norms_memory;
  cuda::DeviceMemory f_memory, g_memory, y_memory, z_memory, z_inverse_memory, exponents_memory,
      reports_memory, pairs_memory, sigma_f_memory, sigma_g_memory, u_memory, v_memory, x_memory;
  GsvdBatch<T> plan;
  plan.count = batch;
  plan.m = m, plan.p = p, plan.n = n;
  plan.f = buffer<V>(f_memory, context, count * f_size);
  plan.g = buffer<V>(g_memory, context, count * g_size);
  plan.y = buffer<V>(y_memory, context, count * z_size);
  if (vectors) {
    plan.z = buffer<V>(z_memory, context, count * z_size);
    plan.g_norms = buffer<double>(g_norms_memory, context, count * static_cast<std::size_t>(n));
  }
  auto* exponents_device = buffer<int2>(exponents_memory, context, count);
  plan.exponents = exponents_device;
  plan.reports = buffer<GsvdReport>(reports_memory, context, count);
  SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(plan.f, f_host.data(), f_host.size() * sizeof(T),
                                     cudaMemcpyHostToDevice, stream));
  SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(plan.g, g_host.data(), g_host.size() * sizeof(T),
                                     cudaMemcpyHostToDevice, stream));
  SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(exponents_device, exponents.data(), count * sizeof(int2),
                                     cudaMemcpyHostToDevice, stream));

  // The strategy as a steps x pairs_per_step table, short steps padded with i = -1.
  const Strategy strategy = Strategy::create(options.strategy, n);
  plan.steps = static_cast<int>(strategy.steps());
  for (index_t s = 0; s < strategy.steps(); ++s)
    plan.pairs_per_step = std::max(plan.pairs_per_step, static_cast<int>(strategy.step(s).size()));
  std::vector<int2> table(static_cast<std::size_t>(std::max(1, plan.steps * plan.pairs_per_step)),
                          int2{-1, -1});
  for (index_t s = 0; s < strategy.steps(); ++s) {
    const auto step = strategy.step(s);
    for (std::size_t k = 0; k < step.size(); ++k)
      table[static_cast<std::size_t>(s * plan.pairs_per_step) + k] =
          int2{static_cast<int>(step[k].p), static_cast<int>(step[k].q)};
  }
  auto* pairs_device = buffer<int2>(pairs_memory, context, table.size());
  SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(pairs_device, table.data(), table.size() * sizeof(int2),
                                     cudaMemcpyHostToDevice, stream));
  plan.pairs = pairs_device;
  plan.max_sweeps = options.max_sweeps > 0 ? options.max_sweeps : detail::kDefaultGsvdSweeps;
  plan.sort = options.sort;
  plan.lanes = lanes_for(std::max(m, p), plan.pairs_per_step);
  const int groups = std::clamp(plan.pairs_per_step, 1, 512 / plan.lanes);
  plan.threads = std::max(32, (groups * plan.lanes + 31) / 32 * 32);

  gpu_kernels::launch_gsvd_sweeps(plan, limit, stream);
  std::vector<GsvdReport> reports(count);
  SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(reports.data(), plan.reports, count * sizeof(GsvdReport),
                                     cudaMemcpyDeviceToHost, stream));
  SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream));
  for (std::size_t b = 0; b < count; ++b) {
    const GsvdReport& report = reports[b];
    if (report.status == gpu_kernels::kGsvdZeroColumn)
      fail(
          "pair {}: g: column {} of G is zero: the implicit Hari-Zimmermann GSVD needs G of full "
          "column rank",
          b, report.column_i);
    if (report.status == gpu_kernels::kGsvdParallel)
      fail(
          "pair {}: g: G is numerically rank deficient (columns {} and {} became parallel to "
          "working precision): the implicit Hari-Zimmermann GSVD needs G of full column rank",
          b, report.column_i, report.column_j);
    if (report.status == gpu_kernels::kGsvdRankDeficient)
      fail(
          "pair {}: g: G is numerically rank deficient (column {} of G Z fell to rounding level: "
          "||G z|| <= eps n sqrt(p) ||D z||, D = diag(||g_k||)): the implicit Hari-Zimmermann "
          "GSVD needs G of full column rank",
          b, report.column_i);
  }
  result.stats.resize(count);
  for (std::size_t b = 0; b < count; ++b) {
    result.stats[b].sweeps = reports[b].sweeps;
    result.stats[b].transformations = reports[b].transformations;
    result.stats[b].proper_transformations = reports[b].proper;
    result.stats[b].converged = reports[b].converged != 0;
  }

  if (vectors) {
    V* z_inverse = buffer<V>(z_inverse_memory, context, count * z_size);
    plan.z_inverse = z_inverse;
    const index_t singular = invert_z<T>(context, plan.z, z_inverse, batch, n, stream);
    require(singular < 0,
            "pair {}: gsvd: the accumulated transformation Z is singular to working precision; "
            "G is numerically rank deficient",
            singular);
    plan.u = buffer<V>(u_memory, context, count * f_size);
    plan.v = buffer<V>(v_memory, context, count * g_size);
    plan.x = buffer<V>(x_memory, context, count * z_size);
  }
  plan.sigma_f = buffer<R>(sigma_f_memory, context, count * static_cast<std::size_t>(n));
  plan.sigma_g = buffer<R>(sigma_g_memory, context, count * static_cast<std::size_t>(n));
  gpu_kernels::launch_gsvd_finish(plan, limit, stream);

  const auto download = [&](auto& host, const void* device, std::size_t size) {
    host.resize(size);
    SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(
        host.data(), device, size * sizeof(typename std::decay_t<decltype(host)>::value_type),
        cudaMemcpyDeviceToHost, stream));
  };
  download(result.sigma_f, plan.sigma_f, count * static_cast<std::size_t>(n));
  download(result.sigma_g, plan.sigma_g, count * static_cast<std::size_t>(n));
  if (vectors) {
    download(result.u, plan.u, count * f_size);
    download(result.v, plan.v, count * g_size);
    download(result.x, plan.x, count * z_size);
  }
  SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream));
  // As the CPU's finish: F and G are scaled separately, so a value sigma_f / sigma_g beyond
  // double's range (F huge against G) survives the iteration and shows only as a sigma_g that
  // underflows.
  using R = Real<T>;
  for (std::size_t k = 0; k < result.sigma_g.size(); ++k)
    require(result.sigma_g[k] >= std::numeric_limits<R>::min(),
            "f: pair {}: generalized singular value {} is beyond double's range (sigma_g "
            "underflows: F is too large against G); scale F down or G up",
            k / static_cast<std::size_t>(n), k % static_cast<std::size_t>(n));
  return result;
}

}  // namespace detail

#define SHIFTOP_INSTANTIATE(T)                                                                    \
  template BatchedGsvdResult<T> detail::gsvd_hz_batched_cuda<T>(                                  \
      const T*, index_t, index_t, const T*, index_t, index_t, index_t, index_t, index_t, index_t, \
      const GsvdOptions&);
SHIFTOP_INSTANTIATE(double)
SHIFTOP_INSTANTIATE(std::complex<double>)
#undef SHIFTOP_INSTANTIATE

}  // namespace shiftop::svd
