// One GPU as the data-space Hessian's dense space (inverse/dense_space.hpp): K, W and the
// workspaces in device memory counted in the context, cuSOLVER's Cholesky (potrf), cuBLAS's
// triangular solves and GEMM on the context's handles, small kernels for the rest; everything is
// queued in order on the context's stream, and only downloads wait for it. Compiled by nvcc:
// messages are built without fmt.
#include <cuda_runtime.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "backend/cuda/check.hpp"
#include "backend/cuda/context.cuh"
#include "backend/cuda/runtime.cuh"
#include "inverse/dense_space.hpp"
#include "shiftop/gpu/context.hpp"

namespace shiftop::inverse {
namespace {

constexpr int kThreads = 256;

unsigned grid_for(index_t count) {
  return static_cast<unsigned>(
      std::clamp<index_t>((count + kThreads - 1) / kThreads, 1, index_t{1} << 16));
}

__global__ void set_units_kernel(double* vectors, index_t length, const index_t* positions,
                                 index_t count) {
  const index_t r = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < count) vectors[r * length + positions[r]] = 1;
}

__global__ void gather_kernel(const double* vectors, index_t length, const index_t* positions,
                              index_t count, double* out) {
  const index_t r = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < count) out[r] = vectors[r * length + positions[r]];
}

__global__ void add_to_diagonal_kernel(double* a, index_t lda, index_t first, index_t count,
                                       const double* values) {
  const index_t c = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c < count) a[c * lda + first + c] += values[first + c];
}

__global__ void axpy_kernel(double alpha, const double* x, double* y, index_t count) {
  const index_t stride = static_cast<index_t>(gridDim.x) * blockDim.x;
  for (index_t k = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < count;
       k += stride)
    y[k] += alpha * x[k];
}

// One thread block per column: out[j] = a_j . b_j.
__global__ void column_dots_kernel(const double* a, const double* b, index_t rows, double* out) {
  __shared__ double partial[kThreads];
  const index_t j = blockIdx.x;
  const double* aj = a + j * rows;
  const double* bj = b + j * rows;
  double sum = 0;
  for (index_t i = threadIdx.x; i < rows; i += kThreads)
    sum += aj[i] * bj[i];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[j] = partial[0];
}

// Thread per destination entry, a (time) fastest: the writes run along phi's rows and the
// reads backwards along one series, both contiguous in a warp.
__global__ void scatter_reversed_kernel(const double* series, index_t count, index_t nm, index_t nt,
                                        const double* scale, double* phi, index_t ld) {
  const index_t total = count * nm * nt;
  const index_t stride = static_cast<index_t>(gridDim.x) * blockDim.x;
  for (index_t k = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < total;
       k += stride) {
    const index_t a = k % nt, r = (k / nt) % count, j = k / (nt * count);
    phi[j * ld + r * nt + a] = scale[j] * series[(r * nm + j) * nt + nt - 1 - a];
  }
}

// One thread per diagonal t - t' = d of block (blockIdx.y, blockIdx.z) (lower blocks only, and
// d >= 0 on the block diagonal), carrying the running sum in a register while it steps t' = 0,
// 1, ...: at each step the threads of a warp touch rows t'+d of one column, consecutive
// addresses (column-major), so every load and store is coalesced and no thread reads another's
// result.
__global__ void diagonal_prefix_sum_kernel(double* a, index_t nt, index_t n) {
  const index_t block_row = blockIdx.y, block_column = blockIdx.z;
  if (block_row < block_column) return;
  const index_t d = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x - (nt - 1);
  if (d > nt - 1 || (block_row == block_column && d < 0)) return;
  double* block = a + block_column * nt * n + block_row * nt;
  double sum = 0;
  for (index_t tc = d < 0 ? -d : 0; tc + d < nt && tc < nt; ++tc) {
    double* entry = block + tc * n + tc + d;
    sum += *entry;
    *entry = sum;
  }
}

constexpr int kTile = 32;

// Tile (blockIdx.y rows, blockIdx.x columns) of the lower triangle through shared memory into
// its mirror tile: reads down columns and writes down columns, both coalesced.
__global__ void copy_lower_to_upper_kernel(double* a, index_t n) {
  __shared__ double tile[kTile][kTile + 1];
  if (blockIdx.y < blockIdx.x) return;
  const index_t r0 = static_cast<index_t>(blockIdx.y) * kTile,
                c0 = static_cast<index_t>(blockIdx.x) * kTile;
  for (int y = threadIdx.y; y < kTile; y += blockDim.y) {
    const index_t r = r0 + threadIdx.x, c = c0 + y;
    if (r < n && c < n) tile[y][threadIdx.x] = a[c * n + r];
  }
  __syncthreads();
  for (int y = threadIdx.y; y < kTile; y += blockDim.y) {
    const index_t r = r0 + y, c = c0 + threadIdx.x;  // write a(c, r) = a(r, c)
    if (r < n && c < n && r > c) a[r * n + c] = tile[threadIdx.x][y];
  }
}

int as_int(index_t value, const char* what) {
  if (value > std::numeric_limits<int>::max())
    throw Error(std::string(what) + " " + std::to_string(value) +
                " is beyond cuBLAS/cuSOLVER's 32-bit sizes");
  return static_cast<int>(value);
}

class DeviceDenseSpace final : public DenseSpace {
 public:
  explicit DeviceDenseSpace(std::shared_ptr<gpu::Context> context)
      : context_(std::move(context)), stream_(cuda::stream_of(*context_)) {}

  bool on_device() const override { return true; }

  double available_bytes() const override {
    context_->activate();
    std::size_t free = 0, total = 0;
    SHIFTOP_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return static_cast<double>(free);
  }

  double cholesky_workspace_bytes(index_t n) override {
    context_->activate();
    int count = 0;
    SHIFTOP_CUDA_CHECK(cusolverDnDpotrf_bufferSize(cuda::cusolver_of(*context_),
                                                   CUBLAS_FILL_MODE_LOWER, as_int(n, "order"),
                                                   nullptr, as_int(n, "order"), &count));
    return static_cast<double>(count) * sizeof(double) + sizeof(int);
  }

  SpaceVector allocate(std::size_t count, std::string_view what) override {
    context_->activate();
    try {
      auto memory =
          std::make_shared<cuda::DeviceMemory>(cuda::allocate(*context_, count * sizeof(double)));
      return SpaceVector(std::shared_ptr<void>(memory, memory->as<void>()), count);
    } catch (const Error& error) {
      throw Error(std::string(what) + " (" + std::to_string(count * sizeof(double)) +
                  " bytes) does not fit on CUDA device " + std::to_string(context_->device()) +
                  ": " + error.what());
    }
  }

  void upload(std::span<const double> host, double* to) override {
    // From pageable memory the copy returns once the values are staged: the caller may reuse
    // `host` at once.
    SHIFTOP_CUDA_CHECK(
        cudaMemcpyAsync(to, host.data(), host.size_bytes(), cudaMemcpyHostToDevice, stream_));
  }
  void download(const double* from, std::span<double> host) override {
    SHIFTOP_CUDA_CHECK(
        cudaMemcpyAsync(host.data(), from, host.size_bytes(), cudaMemcpyDeviceToHost, stream_));
    SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void copy(const double* from, double* to, std::size_t count) override {
    SHIFTOP_CUDA_CHECK(
        cudaMemcpyAsync(to, from, count * sizeof(double), cudaMemcpyDeviceToDevice, stream_));
  }
  void fill_zero(double* values, std::size_t count) override {
    SHIFTOP_CUDA_CHECK(cudaMemsetAsync(values, 0, count * sizeof(double), stream_));
  }
  void fill_unit_vectors(double* vectors, index_t length,
                         std::span<const index_t> positions) override {
    const auto count = static_cast<index_t>(positions.size());
    fill_zero(vectors, positions.size() * static_cast<std::size_t>(length));
    const index_t* device_positions = stage(positions);
    set_units_kernel<<<grid_for(count), kThreads, 0, stream_>>>(vectors, length, device_positions,
                                                                count);
    SHIFTOP_CHECK_LAUNCH();
  }
  void gather(const double* vectors, index_t length, std::span<const index_t> positions,
              std::span<double> out) override {
    const auto count = static_cast<index_t>(positions.size());
    const index_t* device_positions = stage(positions);
    double* values = scratch(out.size());
    gather_kernel<<<grid_for(count), kThreads, 0, stream_>>>(vectors, length, device_positions,
                                                             count, values);
    SHIFTOP_CHECK_LAUNCH();
    download(values, out);
  }
  void add_to_diagonal(double* a, index_t lda, index_t first, index_t count,
                       const double* values) override {
    add_to_diagonal_kernel<<<grid_for(count), kThreads, 0, stream_>>>(a, lda, first, count, values);
    SHIFTOP_CHECK_LAUNCH();
  }
  void axpy(double alpha, const double* x, double* y, std::size_t count) override {
    const auto n = static_cast<index_t>(count);
    axpy_kernel<<<grid_for(n), kThreads, 0, stream_>>>(alpha, x, y, n);
    SHIFTOP_CHECK_LAUNCH();
  }

  void apply(btt::Plan& plan, btt::Op op, const double* x, double* y, index_t nrhs) override {
    plan.apply_device(op, x, y, nrhs, stream_);
  }
  void apply_prior(const Prior& prior, const double* x, double* y, index_t nrhs) override {
    context_->activate();  // a prior's first device call copies its variances to this device
    prior.apply_covariance_device(x, y, nrhs, stream_);
  }

  void scatter_reversed(const double* series, index_t count, index_t nm, index_t nt,
                        const double* scale, double* phi, index_t ld) override {
    scatter_reversed_kernel<<<grid_for(count * nm * nt), kThreads, 0, stream_>>>(
        series, count, nm, nt, scale, phi, ld);
    SHIFTOP_CHECK_LAUNCH();
  }
  void syrk_lower(const double* a, index_t n, index_t k, double* c) override {
    context_->activate();
    const double one = 1, zero = 0;
    const int order = as_int(n, "order");
    SHIFTOP_CUDA_CHECK(cublasDsyrk(context_->handles().cublas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                                   order, as_int(k, "inner size"), &one, a, order, &zero, c,
                                   order));
  }
  void diagonal_prefix_sum(double* a, index_t blocks, index_t nt) override {
    const dim3 grid(static_cast<unsigned>((2 * nt - 1 + kThreads - 1) / kThreads),
                    static_cast<unsigned>(blocks), static_cast<unsigned>(blocks));
    diagonal_prefix_sum_kernel<<<grid, kThreads, 0, stream_>>>(a, nt, blocks * nt);
    SHIFTOP_CHECK_LAUNCH();
  }
  void copy_lower_to_upper(double* a, index_t n) override {
    const auto tiles = static_cast<unsigned>((n + kTile - 1) / kTile);
    copy_lower_to_upper_kernel<<<dim3(tiles, tiles), dim3(kTile, 8), 0, stream_>>>(a, n);
    SHIFTOP_CHECK_LAUNCH();
  }

  void cholesky(double* a, index_t n) override {
    context_->activate();
    cusolverDnHandle_t handle = cuda::cusolver_of(*context_);
    const int order = as_int(n, "order");
    int count = 0;
    SHIFTOP_CUDA_CHECK(
        cusolverDnDpotrf_bufferSize(handle, CUBLAS_FILL_MODE_LOWER, order, a, order, &count));
    // The workspace and the status word, freed when the factor is done.
    SpaceVector work = allocate(static_cast<std::size_t>(count) + 1, "cuSOLVER's workspace");
    int* info = reinterpret_cast<int*>(work.data() + count);
    SHIFTOP_CUDA_CHECK(cusolverDnDpotrf(handle, CUBLAS_FILL_MODE_LOWER, order, a, order,
                                        work.data(), count, info));
    int status = 0;
    SHIFTOP_CUDA_CHECK(
        cudaMemcpyAsync(&status, info, sizeof(int), cudaMemcpyDeviceToHost, stream_));
    SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (status < 0)
      throw std::runtime_error("cusolverDnDpotrf rejected argument " + std::to_string(-status));
    if (status > 0) refuse_indefinite(status, n);
  }
  void triangular_solve(const double* factor, index_t n, double* b, index_t nrhs,
                        bool transpose) override {
    context_->activate();
    const double one = 1;
    const int order = as_int(n, "order");
    SHIFTOP_CUDA_CHECK(cublasDtrsm(context_->handles().cublas, CUBLAS_SIDE_LEFT,
                                   CUBLAS_FILL_MODE_LOWER, transpose ? CUBLAS_OP_T : CUBLAS_OP_N,
                                   CUBLAS_DIAG_NON_UNIT, order, as_int(nrhs, "right-hand sides"),
                                   &one, factor, order, b, order));
  }
  void gemm_transposed(const double* a, index_t rows, index_t cols, const double* x, double* y,
                       index_t nrhs) override {
    context_->activate();
    const double one = 1, zero = 0;
    const int m = as_int(cols, "columns"), k = as_int(rows, "rows");
    SHIFTOP_CUDA_CHECK(cublasDgemm(context_->handles().cublas, CUBLAS_OP_T, CUBLAS_OP_N, m,
                                   as_int(nrhs, "right-hand sides"), k, &one, a, k, x, k, &zero, y,
                                   m));
  }
  void column_dots(const double* a, const double* b, index_t rows, index_t cols,
                   std::span<double> out) override {
    double* values = scratch(out.size());
    column_dots_kernel<<<static_cast<unsigned>(cols), kThreads, 0, stream_>>>(a, b, rows, values);
    SHIFTOP_CHECK_LAUNCH();
    download(values, out);
  }
  void synchronize() override { context_->synchronize(); }

 private:
  // Device scratch of at least `count` doubles (grown as needed; stream order keeps earlier
  // users of the old one correct, and a download waits before it is reused from the host).
  double* scratch(std::size_t count) {
    if (scratch_.size() < count) {
      context_->synchronize();
      scratch_ = allocate(count, "the dense space's scratch");
    }
    return scratch_.data();
  }
  // `positions` copied to the device, in order on the stream.
  const index_t* stage(std::span<const index_t> positions) {
    const std::size_t doubles = (positions.size_bytes() + sizeof(double) - 1) / sizeof(double);
    if (positions_.size() < doubles) {
      context_->synchronize();
      positions_ = allocate(doubles, "the dense space's index scratch");
    }
    auto* device = reinterpret_cast<index_t*>(positions_.data());
    SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(device, positions.data(), positions.size_bytes(),
                                       cudaMemcpyHostToDevice, stream_));
    return device;
  }

  std::shared_ptr<gpu::Context> context_;
  cudaStream_t stream_;
  SpaceVector scratch_, positions_;
};

}  // namespace

std::unique_ptr<DenseSpace> make_device_dense_space(std::shared_ptr<gpu::Context> context,
                                                    int device) {
  if (context == nullptr) context = gpu::Context::create(device);
  return std::make_unique<DeviceDenseSpace>(std::move(context));
}

}  // namespace shiftop::inverse
