// The GPU driver of the batched Jacobi (H)SVD (shiftop/svd/jacobi_gpu.hpp; on host arrays through
// svd/cuda/host_drivers.hpp, on the context of options.gpu): the checks shared with
// the CPU driver (svd/driver_checks.hpp), the batch's choices (preprocessing, which of X and W
// the vectors need, the lanes per group and threads per block), the device buffers, the strategy
// table, the three stages (svd/cuda/batched_kernels.hpp) on the context's stream, and the reports.
#include <cuda_runtime.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <memory>
#include <vector>

#include "backend/cuda/check.hpp"
#include "backend/cuda/context.cuh"
#include "shiftop/svd/jacobi_gpu.hpp"
#include "shiftop/svd/strategy.hpp"
#include "svd/cuda/batched_kernels.hpp"
#include "svd/cuda/blocked_method.hpp"
#include "svd/cuda/host_drivers.hpp"
#include "svd/cuda/strategy_table.hpp"
#include "svd/driver_checks.hpp"
#include "svd/householder.hpp"

namespace shiftop::svd {
namespace {

using gpu_kernels::Batch;
using gpu_kernels::DeviceType;
using gpu_kernels::MatrixReport;
using gpu_kernels::Preprocessing;
using gpu_kernels::StrategyTable;

void check_gpu_options(const JacobiOptions& options) {
  require(options.rank_tolerance == 0,
          "rank_tolerance: the GPU keeps every singular value (0); a positive tolerance is "
          "supported on the CPU only, got {}",
          options.rank_tolerance);
}

// Lanes per group: about four rows of G per lane, 4..32.
int lanes_for(index_t rows) {
  int lanes = 4;
  while (lanes < 32 && 4 * lanes < rows)
    lanes *= 2;
  return lanes;
}

template <class V>
V* buffer(cuda::DeviceMemory& memory, const gpu::Context& context, std::size_t count) {
  memory = cuda::allocate(context, count * sizeof(V));
  return memory.as<V>();
}

// The largest dynamic shared memory a block may opt in to, less room for the kernels' own
// static shared variables.
std::size_t shared_limit(const gpu::Context& context) {
  int bytes = 0;
  SHIFTOP_CUDA_CHECK(
      cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, context.device()));
  return static_cast<std::size_t>(bytes) - 1024;
}

const int2* upload(const StrategyTable& table, cuda::DeviceMemory& memory,
                   const gpu::Context& context, cudaStream_t stream) {
  memory = cuda::allocate(context, table.pairs.size() * sizeof(int2));
  SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(memory.as<int2>(), table.pairs.data(),
                                     table.pairs.size() * sizeof(int2), cudaMemcpyHostToDevice,
                                     stream));
  return memory.as<int2>();
}

// Replaces the columns of zero singular values (sorted last) of the matrices' X-derived output by
// an orthonormal completion on the host, as the CPU driver does: X has zero columns there.
template <class T>
void complete_zero_columns(const std::vector<Real<T>>& sigma, index_t batch, index_t rows,
                           index_t cols, T* device, cudaStream_t stream) {
  std::vector<T> host(static_cast<std::size_t>(rows * cols));
  for (index_t b = 0; b < batch; ++b) {
    std::vector<bool> zero(static_cast<std::size_t>(cols));
    bool any = false;
    for (index_t j = 0; j < cols; ++j)
      any |= zero[j] = !(sigma[b * cols + j] > 0);
    if (!any) continue;
    T* matrix = device + b * rows * cols;
    SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(host.data(), matrix, host.size() * sizeof(T),
                                       cudaMemcpyDeviceToHost, stream));
    SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream));
    detail::complete_orthonormal(host.data(), rows, cols, rows, zero);
    SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(matrix, host.data(), host.size() * sizeof(T),
                                       cudaMemcpyHostToDevice, stream));
  }
  SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace

template <class T>
struct GpuPlan<T>::State {
  using V = DeviceType<T>;
  State(const gpu::Context& c, index_t batch, index_t m, index_t n, const JacobiOptions& o);

  const gpu::Context& context;
  JacobiOptions options;
  Batch<T> plan;  // the shape, the choices and the workspaces (plan.a, sigma: per call)
  std::size_t limit = 0;
  bool blocked = false, transposed = false, want_u = false, want_v = false;
  cuda::DeviceMemory pairs_memory, qr_memory, tau_memory, col_perm_memory, row_perm_memory,
      keys_memory, g_memory, w_memory, order_memory, reports_memory, scratch_memory;
  V* scratch = nullptr;
  std::unique_ptr<gpu_kernels::BlockedMethod<T>> method;
};

template <class T>
GpuPlan<T>::State::State(const gpu::Context& c, index_t batch, index_t m, index_t n,
                         const JacobiOptions& o)
    : context(c), options(o) {
  detail::validate_sizes(m, n, m, options);
  require(batch >= 0, "batch: expected >= 0, got {}", batch);
  check_gpu_options(options);
  plan.count = batch;
  plan.m = m, plan.n = n;
  plan.wide = m < n;
  plan.rows = std::max(m, n);
  plan.cols = std::min(m, n);
  plan.n_plus = static_cast<int>(options.n_plus);
  if (batch == 0) return;
  context.activate();
  const cudaStream_t stream = cuda::stream_of(context);
  const bool hyperbolic = options.n_plus >= 0;
  // One thread block per matrix while its cols x cols factor fits the block's shared memory, or
  // while the batch alone fills the GPU (each block then works in global memory and L2: 2000
  // matrices of 256 x 256 took 1.1 ms each so, 1.9 ms each by the old blocked method; H100,
  // bench/NOTES.md). Otherwise, and for the blocked variants, the blocked method over many thread
  // blocks per matrix with its products on cuBLAS (svd/cuda/blocked_method.hpp), on A' itself
  // (the thesis' GPU algorithm has no preprocessing: a QR by one thread block would cost more
  // than the sweeps).
  limit = shared_limit(context);
  const std::size_t small = static_cast<std::size_t>(plan.cols) * sizeof(double) + 16;
  const bool fits = static_cast<std::size_t>(plan.cols * plan.cols) * sizeof(V) + small <= limit;
  blocked = options.variant == Variant::BlockOriented || options.variant == Variant::FullBlock ||
            (options.variant == Variant::Auto && !fits && batch < 2 * context.multiprocessors());
  plan.preprocessing = !options.preprocess || blocked ? Preprocessing::None
                       : !hyperbolic                  ? Preprocessing::PivotedQr
                       : plan.rows > plan.cols        ? Preprocessing::UnpivotedQr
                                                      : Preprocessing::None;
  // The kernels keep per-column arrays in shared memory: the column norms (8 bytes a column),
  // and in the pivoted QR its partial norms and permutation (20 bytes a column).
  const std::size_t per_column = plan.preprocessing != Preprocessing::None ? 20 : 8;
  require(static_cast<std::size_t>(plan.cols) * per_column + 16 <= limit,
          "svd: min(m, n) = {} is beyond what the GPU kernels hold per thread block (at most {} "
          "here); use the CPU backend",
          plan.cols, (limit - 16) / per_column);
  const bool qr = plan.preprocessing != Preprocessing::None;
  transposed = plan.preprocessing == Preprocessing::PivotedQr;
  plan.g_rows = qr ? plan.cols : plan.rows;
  // U', V' of A' (A' = A^H when wide); which of W and X they come from (svd/preprocess.hpp).
  want_u = plan.wide ? options.compute_v : options.compute_u;
  want_v = plan.wide ? options.compute_u : options.compute_v;
  const bool accumulate = transposed ? want_u : want_v;
  plan.keep_x = transposed ? want_v : want_u;
  plan.max_sweeps = options.max_sweeps > 0 ? options.max_sweeps : detail::kDefaultMaxSweeps;

  plan.lanes = lanes_for(plan.g_rows);

  const auto count = static_cast<std::size_t>(batch);
  const auto rows = static_cast<std::size_t>(plan.rows), cols = static_cast<std::size_t>(plan.cols);
  if (qr) plan.qr = buffer<V>(qr_memory, context, count * rows * cols);
  if (qr && want_u) plan.tau = buffer<V>(tau_memory, context, count * cols);
  if (transposed) {
    plan.col_perm = buffer<std::int32_t>(col_perm_memory, context, count * cols);
    plan.row_perm = buffer<std::int32_t>(row_perm_memory, context, count * rows);
    plan.row_keys = buffer<double>(keys_memory, context, count * rows);
  }
  // (the blocked method reads A' itself and writes X and W straight into the outputs, sorted)
  if (!blocked)
    plan.g = buffer<V>(g_memory, context, count * static_cast<std::size_t>(plan.g_rows) * cols);
  if (accumulate && !blocked) plan.w = buffer<V>(w_memory, context, count * cols * cols);
  if (!blocked) plan.order = buffer<std::int32_t>(order_memory, context, count * cols);
  plan.reports = buffer<MatrixReport>(reports_memory, context, count);
  scratch = qr && want_u ? buffer<V>(scratch_memory, context, count * rows * cols) : nullptr;

  if (!blocked) {
    const StrategyTable table = gpu_kernels::strategy_table(options.strategy, plan.cols);
    plan.pairs = upload(table, pairs_memory, context, stream);
    plan.steps = table.steps;
    plan.pairs_per_step = table.pairs_per_step;
    const int groups = std::clamp(std::max(plan.pairs_per_step, 1), 1, 512 / plan.lanes);
    plan.threads = std::max(32, (groups * plan.lanes + 31) / 32 * 32);
  }
  if (blocked) {
    const index_t widest = gpu_kernels::max_block_width(sizeof(V), limit);
    require(
        options.block_width <= widest,
        "block_width: at most {} columns per block on this GPU for this element type (the "
        "pair's 2 x block_width square Gram matrix in one thread block's shared memory), got {}",
        widest, options.block_width);
    gpu_kernels::BlockedChoices choices;
    choices.width = options.block_width;
    choices.max_sweeps = plan.max_sweeps;
    // Auto: block-oriented, one inner sweep per pair visit: 1.8-2.2x faster than full block on
    // random n = 1024..4096 FP64 (H200, 2026-12-02, bench/NOTES.md), for a sweep or two more.
    choices.inner_sweeps = options.variant == Variant::FullBlock ? plan.max_sweeps : 1;
    choices.strategy = options.strategy;
    method = std::make_unique<gpu_kernels::BlockedMethod<T>>(context, batch, plan.g_rows, plan.cols,
                                                             plan.n_plus, want_v, choices, limit);
  }
  // The tables and the plan's other uploads are complete before the first call's work.
  SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template <class T>
GpuPlan<T>::GpuPlan(const gpu::Context& context, index_t batch, index_t m, index_t n,
                    const JacobiOptions& options)
    : state_(std::make_unique<State>(context, batch, m, n, options)) {}

template <class T>
GpuPlan<T>::~GpuPlan() = default;
template <class T>
GpuPlan<T>::GpuPlan(GpuPlan&&) noexcept = default;
template <class T>
GpuPlan<T>& GpuPlan<T>::operator=(GpuPlan&&) noexcept = default;

template <class T>
index_t GpuPlan<T>::batch() const {
  return state_->plan.count;
}
template <class T>
index_t GpuPlan<T>::m() const {
  return state_->plan.m;
}
template <class T>
index_t GpuPlan<T>::n() const {
  return state_->plan.n;
}
template <class T>
bool GpuPlan<T>::blocked() const {
  return state_->blocked;
}

template <class T>
std::vector<JacobiStats> GpuPlan<T>::execute(const T* a, index_t lda, index_t stride,
                                             const DeviceJacobiOutput<T>& out) {
  using V = DeviceType<T>;
  State& st = *state_;
  Batch<T>& plan = st.plan;
  const JacobiOptions& options = st.options;
  const index_t batch = plan.count, m = plan.m, n = plan.n;
  require(lda >= m, "lda: expected >= m = {}, got {}", m, lda);
  detail::validate_batch(batch, n, lda, stride, a);
  require(batch == 0 || out.sigma != nullptr, "sigma: expected an output array, got null");
  require(batch == 0 || !options.compute_u || out.u != nullptr,
          "u: compute_u is set: expected an output array, got null");
  require(batch == 0 || !options.compute_v || out.v != nullptr,
          "v: compute_v is set: expected an output array, got null");
  if (batch == 0) return {};
  const gpu::Context& context = st.context;
  context.activate();
  const cudaStream_t stream = cuda::stream_of(context);
  plan.lda = lda;
  plan.stride = batch > 1 ? stride : lda * n;
  plan.a = reinterpret_cast<const V*>(a);
  plan.sigma = out.sigma;
  const bool blocked = st.blocked, transposed = st.transposed;
  const bool want_u = st.want_u, want_v = st.want_v;
  const auto count = static_cast<std::size_t>(batch);
  const auto cols = static_cast<std::size_t>(plan.cols);
  const std::size_t limit = st.limit;
  V* scratch = st.scratch;
  // U' and V' of A' in the caller's outputs (A' = A^H when wide: U = V', V = U').
  V* u_prime = reinterpret_cast<V*>(plan.wide ? out.v : out.u);
  V* v_prime = reinterpret_cast<V*>(plan.wide ? out.u : out.v);

  gpu_kernels::BlockedOutcome outcome;
  if (blocked) {
    outcome = st.method->run(plan, want_u ? u_prime : nullptr, want_v ? v_prime : nullptr);
  } else {
    gpu_kernels::launch_preprocess(plan, limit, stream);
    gpu_kernels::launch_orthogonalize(plan, limit, stream);
    // Only the requested outputs: a U or V buffer given without its flag is left untouched (the
    // kernel would otherwise form it from an X or W that was not kept).
    gpu_kernels::launch_vectors(plan, options.compute_u ? reinterpret_cast<V*>(out.u) : nullptr,
                                options.compute_v ? reinterpret_cast<V*>(out.v) : nullptr, scratch,
                                limit, stream);
  }
  std::vector<MatrixReport> reports(count);
  SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(reports.data(), plan.reports, count * sizeof(MatrixReport),
                                     cudaMemcpyDeviceToHost, stream));
  SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream));

  for (index_t b = 0; b < batch; ++b) {
    const long long at = reports[b].first_nonfinite;
    if (at < 0) continue;
    const index_t i = at % m, j = at / m;
    T value;
    SHIFTOP_CUDA_CHECK(
        cudaMemcpy(&value, a + b * plan.stride + i + j * lda, sizeof(T), cudaMemcpyDeviceToHost));
    const bool nan = std::isnan(std::real(value)) || std::isnan(std::imag(value));
    fail("a: matrix {}: entry ({}, {}) is {}; expected finite entries", b, i, j,
         nan ? "nan" : "inf");
  }
  std::vector<JacobiStats> stats(count);
  for (std::size_t b = 0; b < count; ++b) {
    stats[b].sweeps = blocked ? outcome.sweeps[b] : reports[b].sweeps;
    stats[b].rotations = blocked ? outcome.rotations[b] : reports[b].rotations;
    stats[b].proper_rotations = blocked ? outcome.proper[b] : reports[b].proper_rotations;
    stats[b].converged = blocked ? outcome.converged[b] : reports[b].converged != 0;
    stats[b].rank = reports[b].rank;
  }

  // X has zero columns where sigma is 0 (a rank-deficient matrix): complete that output.
  T* x_output = transposed ? (want_v ? (plan.wide ? out.u : out.v) : nullptr)
                           : (want_u ? (plan.wide ? out.v : out.u) : nullptr);
  if (x_output != nullptr) {
    std::vector<Real<T>> sigma(count * cols);
    SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(sigma.data(), out.sigma, sigma.size() * sizeof(Real<T>),
                                       cudaMemcpyDeviceToHost, stream));
    SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream));
    const index_t x_rows = transposed ? plan.cols : plan.rows;
    complete_zero_columns<T>(sigma, batch, x_rows, plan.cols, x_output, stream);
  }
  return stats;
}

template <class T>
std::vector<JacobiStats> jacobi_batched_device(const gpu::Context& context, const T* a,
                                               index_t batch, index_t m, index_t n, index_t lda,
                                               index_t stride, const DeviceJacobiOutput<T>& out,
                                               const JacobiOptions& options) {
  detail::validate_sizes(m, n, lda, options);
  detail::validate_batch(batch, n, lda, stride, a);
  return GpuPlan<T>(context, batch, m, n, options).execute(a, lda, stride, out);
}

namespace detail {

template <class T>
BatchedJacobiResult<T> jacobi_batched_cuda(const T* a, index_t batch, index_t m, index_t n,
                                           index_t lda, index_t stride,
                                           const JacobiOptions& options) {
  detail::validate_sizes(m, n, lda, options);
  detail::validate_batch(batch, n, lda, stride, a);
  check_gpu_options(options);
  for (index_t b = 0; b < batch; ++b)
    detail::check_entries(a + b * stride, m, n, lda, fmt::format("a: matrix {}: ", b));

  const index_t r = std::min(m, n);
  BatchedJacobiResult<T> result;
  result.batch = batch;
  result.m = m;
  result.n = n;
  if (batch == 0) return result;
  const gpu::SharedContext held = held_context(options.gpu);
  const gpu::Context& context = *held.context;
  context.activate();
  const cudaStream_t stream = cuda::stream_of(context);
  // The batch packed (leading dimension m, stride m * n) on the device.
  const auto packed = static_cast<std::size_t>(m * n);
  cuda::DeviceMemory a_memory = cuda::allocate(context, batch * packed * sizeof(T));
  std::vector<T> staging(batch * packed);
  for (index_t b = 0; b < batch; ++b)
    for (index_t j = 0; j < n; ++j)
      std::memcpy(staging.data() + b * packed + j * m, a + b * stride + j * lda, m * sizeof(T));
  SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(a_memory.as<T>(), staging.data(), staging.size() * sizeof(T),
                                     cudaMemcpyHostToDevice, stream));
  cuda::DeviceMemory sigma_memory = cuda::allocate(context, batch * r * sizeof(Real<T>));
  cuda::DeviceMemory u_memory, v_memory;
  DeviceJacobiOutput<T> out{sigma_memory.as<Real<T>>()};
  if (options.compute_u) {
    u_memory = cuda::allocate(context, batch * m * r * sizeof(T));
    out.u = u_memory.as<T>();
  }
  if (options.compute_v) {
    v_memory = cuda::allocate(context, batch * n * r * sizeof(T));
    out.v = v_memory.as<T>();
  }
  result.stats =
      jacobi_batched_device(context, a_memory.as<T>(), batch, m, n, m, packed, out, options);
  const auto download = [&](auto& host, const cuda::DeviceMemory& memory, std::size_t size) {
    host.resize(size);
    SHIFTOP_CUDA_CHECK(
        cudaMemcpyAsync(host.data(), memory.as<void>(),
                        size * sizeof(typename std::decay_t<decltype(host)>::value_type),
                        cudaMemcpyDeviceToHost, stream));
  };
  download(result.sigma, sigma_memory, batch * r);
  if (options.compute_u) download(result.u, u_memory, batch * m * r);
  if (options.compute_v) download(result.v, v_memory, batch * n * r);
  SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (options.n_plus < 0)  // as the CPU driver: values beyond the type's range are refused
    for (index_t b = 0; b < batch; ++b)
      detail::check_values_in_range<Real<T>>(
          std::span<const Real<T>>(result.sigma.data() + b * r, static_cast<std::size_t>(r)), b);
  return result;
}

}  // namespace detail

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

}  // namespace shiftop::svd
