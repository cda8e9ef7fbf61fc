// The blocked one-sided Jacobi method on the GPU (svd/cuda/blocked_method.hpp): the slot layout,
// the pair kernel (the inner two-sided method on the pair's Gram matrix), the cuBLAS products, and
// the finish (norms, the sorted order, sigma, X and W).
#include "svd/cuda/blocked_method.hpp"

#include <cublas_v2.h>

#include <algorithm>
#include <complex>

#include "backend/cuda/check.hpp"
#include "backend/cuda/context.cuh"
#include "backend/cuda/runtime.cuh"
#include "svd/cuda/gram_jacobi.cuh"
#include "svd/cuda/group_ops.cuh"
#include "svd/cuda/strategy_table.hpp"
#include "svd/rotation.hpp"

namespace shiftop::svd::gpu_kernels {
namespace {

constexpr int kPairThreads = 512;

__host__ __device__ constexpr std::size_t aligned(std::size_t bytes) {
  return (bytes + 15) / 16 * 16;
}

// cuBLAS's names for an element type: its data type, the compute type (FP64 data on FP64 tensor
// cores; FP32 data in FP32, no TF32) and the scalar 1.
template <class V>
struct Blas;
template <>
struct Blas<float> {
  static constexpr cudaDataType data = CUDA_R_32F;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  static constexpr float one = 1, zero = 0;
};
template <>
struct Blas<double> {
  static constexpr cudaDataType data = CUDA_R_64F;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_64F;
  static constexpr double one = 1, zero = 0;
};
template <>
struct Blas<float2> {
  static constexpr cudaDataType data = CUDA_C_32F;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  static constexpr float2 one{1, 0}, zero{0, 0};
};
template <>
struct Blas<double2> {
  static constexpr cudaDataType data = CUDA_C_64F;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_64F;
  static constexpr double2 one{1, 0}, zero{0, 0};
};

// The update of one copy (G or W) in a step: the pointer arrays of the batched GEMM, two entries
// (the pair's two output blocks) per pair and matrix.
template <class V>
struct Update {
  const V* current = nullptr;  // rows x padded per matrix, the step's slot order
  V* next = nullptr;           // the next step's slot order
  index_t rows = 0;
  const V** a = nullptr;  // the pair's panel, rows x 2 width
  const V** b = nullptr;  // half of its rotation, 2 width x width
  V** c = nullptr;        // the block's place in the next step, rows x width
};

template <class V>
struct PairStep {
  const V* gram = nullptr;  // (count * pairs) x (c x c)
  V* rotation = nullptr;    // (count * pairs) x (c x c)
  index_t width = 0, c = 0;
  int pairs = 0;
  const int* filler = nullptr;     // pairs: 1 where the pair is no pair of the strategy
  const int* next_slot = nullptr;  // 2 pairs: the next step's slot of each slot of this step
  const int* negative = nullptr;   // 2 pairs: 1 where the slot's block is of J's negative part
  Update<V> g_update, w_update;    // w_update.current == nullptr: no W
  const int2* units = nullptr;     // the inner strategy (svd/cuda/strategy_table.hpp)
  int inner_steps = 0, units_per_step = 0, inner_sweeps = 1;
  double tolerance = 0;
  bool rotation_in_shared = false;
  const int* done = nullptr;                // per matrix
  unsigned long long* rotations = nullptr;  // per matrix
  unsigned long long* proper = nullptr;     // per matrix
  int* nonfinite = nullptr;                 // per matrix
};

// The blocked method's preprocessing (the one-block kernel's, preprocess_kernel.cu, over the whole
// GPU): per matrix the largest |Re|, |Im| of the finite entries (as the bits of a nonnegative
// double, which order as integers) and the column-major index in A of the first non-finite one.
// Blocks: x the matrix, y a part of its entries.
constexpr long long kNoEntry = 0x7f7f7f7f7f7f7f7fLL;  // cudaMemset's 0x7f bytes: beyond any index

template <class T>
__global__ void scan_kernel(Batch<T> batch, unsigned long long* max_bits, long long* first_bad) {
  __shared__ unsigned long long block_max;
  __shared__ long long block_bad;
  if (threadIdx.x == 0) block_max = 0, block_bad = kNoEntry;
  __syncthreads();
  const index_t b = blockIdx.x, entries = batch.m * batch.n;
  const DeviceType<T>* a = batch.a + b * batch.stride;
  double big = 0;
  for (index_t e = blockIdx.y * static_cast<index_t>(blockDim.x) + threadIdx.x; e < entries;
       e += static_cast<index_t>(gridDim.y) * blockDim.x) {
    const DeviceType<T> x = a[e % batch.m + e / batch.m * batch.lda];
    if (finite(x))
      big = fmax(big, fmax(fabs(real_of(x)), fabs(imag_of(x))));
    else
      atomicMin(&block_bad, static_cast<long long>(e));
  }
  atomicMax(&block_max, static_cast<unsigned long long>(__double_as_longlong(big)));
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicMax(max_bits + b, block_max);
    if (block_bad != kNoEntry) atomicMin(first_bad + b, block_bad);
  }
}

// The reports from the scan: A' is scaled by the power of two that brings its largest entry into
// [1, 2) (as preprocess_kernel.cu), the first non-finite entry, the rank (cols: no QR here).
template <class T>
__global__ void report_kernel(Batch<T> batch, const unsigned long long* max_bits,
                              const long long* first_bad) {
  using R = typename Device<T>::real;
  for (index_t b = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; b < batch.count;
       b += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const double largest = __longlong_as_double(static_cast<long long>(max_bits[b]));
    MatrixReport& report = batch.reports[b];
    report.scale_exponent =
        largest > 0 ? max(ilogb(largest), 3 - std::numeric_limits<R>::max_exponent) : 0;
    report.first_nonfinite = first_bad[b] == kNoEntry ? -1 : first_bad[b];
    report.rank = static_cast<int>(batch.cols);
  }
}

// work (rows x padded per matrix, slot order: slot s holds block layout[s], whose column t is
// A's column column_of[layout[s] width + t], padding from cols on) from A' (A, or A^H when wide)
// scaled by its report's power of two, non-finite entries as zeros (the driver refuses the
// matrix), the padding columns zero.
template <class T>
__global__ void load_slots_kernel(Batch<T> batch, index_t padded, index_t width, const int* layout,
                                  const int* column_of, DeviceType<T>* work) {
  using V = DeviceType<T>;
  using R = typename Device<T>::real;
  const index_t rows = batch.rows, cols = batch.cols, total = batch.count * rows * padded;
  for (index_t e = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t i = e % rows, column = (e / rows) % padded, b = e / (rows * padded);
    const index_t j = column_of[layout[column / width] * width + column % width];
    V value = zero<V>();
    if (j < cols) {
      const V* a = batch.a + b * batch.stride;
      const V x = batch.wide ? conj(a[j + i * batch.lda]) : a[i + j * batch.lda];
      const R factor = static_cast<R>(scalbn(1.0, -batch.reports[b].scale_exponent));
      if (finite(x)) value = scale(factor, x);
    }
    work[e] = value;
  }
}

// W (padded x padded per matrix, slot order; row j for A's column j, padding from cols on) = the
// identity.
template <class T>
__global__ void load_identity_kernel(index_t padded, index_t width, const int* layout,
                                     const int* column_of, index_t count, DeviceType<T>* work) {
  using V = DeviceType<T>;
  using R = typename Device<T>::real;
  for (index_t e = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
       e < count * padded * padded; e += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t i = e % padded, column = (e / padded) % padded;
    const index_t j = column_of[layout[column / width] * width + column % width];
    work[e] = i == j ? make<V>(R(1), R(0)) : zero<V>();
  }
}

// Writes the update's pointers of pair i of matrix b (its two output blocks).
template <class V>
__device__ void write_pointers(const Update<V>& u, const PairStep<V>& step, index_t b, index_t i,
                               const V* rotation) {
  const index_t padded = step.pairs * step.c;
  for (int half = 0; half < 2; ++half) {
    const index_t e = (b * step.pairs + i) * 2 + half;
    u.a[e] = u.current + b * u.rows * padded + i * step.c * u.rows;
    u.b[e] = rotation + half * step.width * step.c;
    u.c[e] = u.next + b * u.rows * padded + step.next_slot[2 * i + half] * step.width * u.rows;
  }
}

// One thread block per matrix (blockIdx.x) and pivot block pair (blockIdx.y): V_i from H_i.
template <class T>
__global__ void __launch_bounds__(kPairThreads) pair_kernel(PairStep<DeviceType<T>> step) {
  using V = DeviceType<T>;
  using R = typename Device<T>::real;
  extern __shared__ __align__(16) unsigned char shared[];
  __shared__ GramCounters counters;
  const index_t b = blockIdx.x, i = blockIdx.y;  // (x: batches beyond 65535)
  const int c = static_cast<int>(step.c), tid = static_cast<int>(threadIdx.x),
            threads = static_cast<int>(blockDim.x);
  const index_t pair = b * step.pairs + i;
  V* const global_rotation = step.rotation + pair * c * c;
  if (tid == 0) {
    write_pointers(step.g_update, step, b, i, global_rotation);
    if (step.w_update.current != nullptr)
      write_pointers(step.w_update, step, b, i, global_rotation);
  }
  // shared: H (c x c) | the step's units | the rotation (c x c) when it fits
  V* h = reinterpret_cast<V*>(shared);
  unsigned char* units = shared + aligned(c * c * sizeof(V));
  V* rotation =
      step.rotation_in_shared
          ? reinterpret_cast<V*>(units + aligned(StepUnits<V>::bytes(step.units_per_step)))
          : global_rotation;
  for (int e = tid; e < c * c; e += threads)
    rotation[e] = e % c == e / c ? make<V>(R(1), R(0)) : zero<V>();
  const bool skip = step.filler[i] != 0 || step.done[b] != 0;  // uniform over the block
  if (!skip) {
    // H from the Gram product's upper triangle, exactly Hermitian
    const V* gram = step.gram + pair * c * c;
    for (int e = tid; e < c * c; e += threads) {
      const int row = e % c, column = e / c;
      const V value = row <= column ? gram[e] : conj(gram[column + row * c]);
      h[e] = row == column ? make<V>(static_cast<R>(real_of(value)), R(0)) : value;
    }
    __syncthreads();
    const GramProblem<V> problem{
        .h = h,
        .w = rotation,
        .c = c,
        .units = step.units,
        .steps = step.inner_steps,
        .units_per_step = step.units_per_step,
        .step_units = units,
        .tolerance = step.tolerance,
        .max_sweeps = step.inner_sweeps,
        .negative = {step.negative[2 * i] != 0, step.negative[2 * i + 1] != 0}};
    gram_sweeps(problem, &counters);
    if (tid == 0) {
      atomicAdd(step.rotations + b, static_cast<unsigned long long>(counters.rotations));
      atomicAdd(step.proper + b, static_cast<unsigned long long>(counters.proper));
      if (counters.nonfinite != 0) atomicExch(step.nonfinite + b, 1);
    }
  }
  __syncthreads();
  if (step.rotation_in_shared)
    for (int e = tid; e < c * c; e += threads)
      global_rotation[e] = rotation[e];
}

// norm2[b * padded + j] = ||g_j||^2 (double) and, with W, pad[j] = the squared norm of W's column
// j below row cols (1 for a padding column, which no rotation touches; 0 for every other): one
// warp per column.
template <class V>
__global__ void norms_kernel(const V* g, index_t rows, index_t padded, const V* w, index_t cols,
                             index_t count, double* norm2, double* pad) {
  const int lane = static_cast<int>(threadIdx.x) % warpSize;
  const index_t warps = static_cast<index_t>(gridDim.x) * blockDim.x / warpSize;
  // (the loop's condition is uniform over a warp, as group_sum needs)
  for (index_t column = (blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x) / warpSize;
       column < count * padded; column += warps) {
    const V* x = g + column * rows;
    double sum = 0;
    for (index_t k = lane; k < rows; k += warpSize)
      sum += abs2(x[k]);
    sum = group_sum(sum, warpSize);
    double below = 0;
    if (w != nullptr) {
      const V* y = w + column * padded;
      for (index_t k = cols + lane; k < padded; k += warpSize)
        below += abs2(y[k]);
      below = group_sum(below, warpSize);
    }
    if (lane == 0) {
      norm2[column] = sum;
      if (pad != nullptr) pad[column] = below;
    }
  }
}

// The place of column j among the padded columns of its matrix and sign (negative[slot] for the
// blocks of width columns: J's positive part takes places [0, plus), the negative one [plus,
// cols)), by tier (positive norms, then NaN, then zero, then padding: W's rows below cols tell
// padding columns, so without W they rank as zeros, after any NaN, which stays among its part's
// places), then descending norm, then slot order. source[b * cols + place] = j for each part's
// places; a non-finite norm marks the matrix.
__global__ void order_kernel(const double* norm2, const double* pad, index_t padded, index_t width,
                             const int* negative, index_t cols, index_t plus, index_t count,
                             std::int32_t* source, int* nonfinite) {
  for (index_t e = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; e < count * padded;
       e += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t b = e / padded, j = e % padded;
    const double* norms = norm2 + b * padded;
    const auto tier = [&](index_t k) {
      if (pad != nullptr && pad[b * padded + k] > 0.5) return 3;
      return isnan(norms[k]) ? 1 : norms[k] > 0 ? 0 : 2;
    };
    const int tj = tier(j), part = negative[j / width];
    const double s = norms[j];
    index_t place = 0;
    for (index_t k = 0; k < padded; ++k) {
      if (negative[k / width] != part) continue;
      const int tk = tier(k);
      const double t = norms[k];
      place += tk != tj ? tk < tj : (tj == 0 && t > s) || ((tj != 0 || t == s) && k < j);
    }
    if (place < (part != 0 ? cols - plus : plus))
      source[b * cols + (part != 0 ? plus : 0) + place] = static_cast<std::int32_t>(j);
    if (!isfinite(norms[j])) atomicExch(nonfinite + b, 1);
  }
}

// sigma and, in the sorted order, X = G's columns normalised (into x when not null) and W's first
// cols rows (into w when not null).
template <class T>
__global__ void output_kernel(Batch<T> batch, const DeviceType<T>* g, const DeviceType<T>* w,
                              index_t padded, const double* norm2, const std::int32_t* source,
                              DeviceType<T>* x_out, DeviceType<T>* w_out) {
  using V = DeviceType<T>;
  using R = typename Device<T>::real;
  const index_t rows = batch.g_rows, cols = batch.cols;
  const index_t height = rows > cols ? rows : cols;
  const index_t total = batch.count * cols * height;
  for (index_t e = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t i = e % height, place = (e / height) % cols, b = e / (height * cols);
    const index_t j = source[b * cols + place];
    const double s = norm2[b * padded + j];
    if (i == 0)
      batch.sigma[b * cols + place] =
          static_cast<R>(scalbn(sqrt(s), batch.reports[b].scale_exponent));
    if (x_out != nullptr && i < rows)  // zero columns stay zero (the driver completes them)
      x_out[b * rows * cols + place * rows + i] =
          s > 0 ? scale_in_double(1.0 / sqrt(s), g[(b * padded + j) * rows + i]) : zero<V>();
    if (w_out != nullptr && i < cols)
      w_out[b * cols * cols + place * cols + i] = w[(b * padded + j) * padded + i];
  }
}

unsigned grid_for(index_t total, int threads) {
  return static_cast<unsigned>(std::clamp<index_t>((total + threads - 1) / threads, 1, 1 << 20));
}

// H, the units of a step (at most c) and the rotation when in shared memory (pair_kernel).
std::size_t pair_shared_bytes(index_t width, std::size_t element, bool rotation_in_shared) {
  const auto c = static_cast<std::size_t>(2 * width);
  const std::size_t units = aligned(StepUnits<double2>::bytes(c));  // (the same for every type)
  return aligned(c * c * element) + units + (rotation_in_shared ? c * c * element : 0);
}

template <class V>
void gemm_strided(cublasHandle_t handle, cublasOperation_t op_a, index_t m, index_t n, index_t k,
                  const V* a, index_t lda, long long stride_a, const V* b, index_t ldb,
                  long long stride_b, V* c, index_t ldc, long long stride_c, index_t batch) {
  SHIFTOP_CUDA_CHECK(cublasGemmStridedBatchedEx(
      handle, op_a, CUBLAS_OP_N, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
      &Blas<V>::one, a, Blas<V>::data, static_cast<int>(lda), stride_a, b, Blas<V>::data,
      static_cast<int>(ldb), stride_b, &Blas<V>::zero, c, Blas<V>::data, static_cast<int>(ldc),
      stride_c, static_cast<int>(batch), Blas<V>::compute, CUBLAS_GEMM_DEFAULT));
}

template <class V>
void gemm_pointers(cublasHandle_t handle, index_t m, index_t n, index_t k, const V* const* a,
                   index_t lda, const V* const* b, index_t ldb, V* const* c, index_t ldc,
                   index_t batch) {
  SHIFTOP_CUDA_CHECK(cublasGemmBatchedEx(
      handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(m), static_cast<int>(n),
      static_cast<int>(k), &Blas<V>::one, reinterpret_cast<const void* const*>(a), Blas<V>::data,
      static_cast<int>(lda), reinterpret_cast<const void* const*>(b), Blas<V>::data,
      static_cast<int>(ldb), &Blas<V>::zero, reinterpret_cast<void* const*>(c), Blas<V>::data,
      static_cast<int>(ldc), static_cast<int>(batch), Blas<V>::compute, CUBLAS_GEMM_DEFAULT));
}

template <class T>
void upload(cuda::DeviceMemory& memory, const gpu::Context& context, const std::vector<T>& host) {
  memory = cuda::allocate(context, std::max<std::size_t>(1, host.size()) * sizeof(T));
  SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(memory.as<T>(), host.data(), host.size() * sizeof(T),
                                     cudaMemcpyHostToDevice, cuda::stream_of(context)));
}

}  // namespace

index_t max_block_width(std::size_t element, std::size_t shared_limit) {
  index_t width = 1;
  while (pair_shared_bytes(width + 1, element, false) <= shared_limit)
    ++width;
  return width;
}

index_t default_block_width(std::size_t element, std::size_t shared_limit, index_t cols) {
  // 2 width columns per pair: wider pairs give the GEMMs more work per byte (2 width / 8 flops a
  // byte in FP64), narrower ones a cheaper inner step (its updates grow as width^2, and a
  // block-sweep has about 2 cols inner steps whatever the width). Measured on an H200 (FP64, n =
  // 2048 / 4096 / 8192, bench/NOTES.md issue 30): width 16 236 / 904 / 6040 ms, 24 215 / 785 /
  // 4360, 32 180 / 575 / 2978, 48 309 / 855 / 3734.
  const index_t cap = std::max<index_t>(1, (cols + 1) / 2);
  for (const index_t width : {32, 24, 16})
    if (width <= cap && pair_shared_bytes(width, element, true) <= shared_limit) return width;
  return std::min<index_t>(cap, 16);
}

template <class T>
BlockedMethod<T>::BlockedMethod(const gpu::Context& context, index_t count, index_t g_rows,
                                index_t cols, index_t n_plus, bool accumulate,
                                const BlockedChoices& choices, std::size_t shared_limit)
    : context_(context),
      count_(count),
      rows_(g_rows),
      cols_(cols),
      plus_(n_plus >= 0 ? n_plus : cols),
      accumulate_(accumulate),
      choices_(choices) {
  const std::size_t element = sizeof(V);
  width_ = choices.width > 0 ? choices.width : default_block_width(element, shared_limit, cols);
  // The blocks of J's positive part (the SVD's every column), then those of its negative part,
  // then a zero block for an even count: every block is in a pair at every step.
  const index_t plus_blocks = (plus_ + width_ - 1) / width_;
  const index_t minus_blocks = (cols - plus_ + width_ - 1) / width_;
  blocks_ = plus_blocks + minus_blocks;
  blocks_ += blocks_ % 2;
  pairs_ = blocks_ / 2;
  std::vector<int> column_of(static_cast<std::size_t>(blocks_ * width_));
  std::vector<int> negative(static_cast<std::size_t>(blocks_), 0);
  index_t padding = cols;  // the padding columns' indices follow A's
  for (index_t block = 0; block < blocks_; ++block) {
    negative[block] = block >= plus_blocks && block < plus_blocks + minus_blocks;
    const index_t start =
        negative[block] != 0 ? plus_ + (block - plus_blocks) * width_ : block * width_;
    const index_t end = block >= plus_blocks + minus_blocks ? start
                        : negative[block] != 0              ? std::min(cols, start + width_)
                                                            : std::min(plus_, start + width_);
    for (index_t t = 0; t < width_; ++t)
      column_of[block * width_ + t] = static_cast<int>(start + t < end ? start + t : padding++);
  }
  const index_t c = 2 * width_;
  rotation_in_shared_ = pair_shared_bytes(width_, element, true) <= shared_limit;
  shared_bytes_ = pair_shared_bytes(width_, element, rotation_in_shared_);

  // The outer steps as slot layouts: pairs of the strategy first, then the blocks the step leaves
  // idle, paired as fillers (their rotation is the identity), so every block has a slot.
  const Strategy outer = Strategy::create(choices.strategy, blocks_);
  steps_ = static_cast<int>(outer.steps());
  std::vector<std::vector<int>> layout(static_cast<std::size_t>(steps_));
  std::vector<int> filler(static_cast<std::size_t>(steps_ * pairs_), 1);
  for (int s = 0; s < steps_; ++s) {
    std::vector<bool> used(static_cast<std::size_t>(blocks_), false);
    const auto step = outer.step(s);
    for (std::size_t k = 0; k < step.size(); ++k) {
      layout[s].push_back(step[k].p);
      layout[s].push_back(step[k].q);
      used[step[k].p] = used[step[k].q] = true;
      filler[s * pairs_ + k] = 0;
    }
    for (index_t block = 0; block < blocks_; ++block)
      if (!used[block]) layout[s].push_back(static_cast<int>(block));
  }
  std::vector<int> next_slot(static_cast<std::size_t>(steps_ * blocks_));
  std::vector<int> slot_negative(static_cast<std::size_t>(steps_ * blocks_));
  for (int s = 0; s < steps_; ++s) {
    const std::vector<int>& next = layout[(s + 1) % steps_];
    std::vector<int> slot_of(static_cast<std::size_t>(blocks_));
    for (index_t k = 0; k < blocks_; ++k)
      slot_of[next[k]] = static_cast<int>(k);
    for (index_t k = 0; k < blocks_; ++k) {
      next_slot[s * blocks_ + k] = slot_of[layout[s][k]];
      slot_negative[s * blocks_ + k] = negative[layout[s][k]];
    }
  }
  const UnitTable inner = unit_table(choices.strategy, c);
  inner_steps_ = inner.steps;
  units_per_step_ = inner.units_per_step;
  // About four of a step's updates (H's unit blocks and the rotation's unit rows) per thread.
  threads_ = static_cast<int>(
      std::clamp<index_t>((c * units_per_step_ / 4 + 31) / 32 * 32, 32, kPairThreads));

  upload(first_layout_, context, layout.front());
  upload(next_slot_, context, next_slot);
  upload(filler_, context, filler);
  upload(units_, context, inner.units);
  upload(column_of_, context, column_of);
  upload(slot_negative_, context, slot_negative);

  const auto padded = static_cast<std::size_t>(blocks_ * width_);
  const auto n = static_cast<std::size_t>(count);
  for (auto& copy : g_work_)
    copy = cuda::allocate(context, n * static_cast<std::size_t>(rows_) * padded * element);
  if (accumulate_)
    for (auto& copy : w_work_)
      copy = cuda::allocate(context, n * padded * padded * element);
  gram_ = cuda::allocate(context, n * pairs_ * c * c * element);
  rotation_ = cuda::allocate(context, n * pairs_ * c * c * element);
  pointers_ = cuda::allocate(context, 6 * n * blocks_ * sizeof(void*));
  counters_ = cuda::allocate(context, n * (2 * sizeof(unsigned long long) + 2 * sizeof(int)));
  norms_ = cuda::allocate(context, 2 * n * padded * sizeof(double));
  source_ = cuda::allocate(context, n * static_cast<std::size_t>(cols_) * sizeof(std::int32_t));
  scan_ = cuda::allocate(context, n * (sizeof(unsigned long long) + sizeof(long long)));
  cuda::allow_dynamic_shared(pair_kernel<T>, shared_limit);
}

template <class T>
BlockedOutcome BlockedMethod<T>::run(const Batch<T>& batch, V* x, V* w) {
  const cudaStream_t stream = cuda::stream_of(context_);
  cublasHandle_t handle = context_.handles().cublas;
  const auto count = static_cast<std::size_t>(count_);
  const index_t c = 2 * width_, padded = blocks_ * width_, entries = count_ * blocks_;
  V* g_work[2] = {g_work_[0].as<V>(), g_work_[1].as<V>()};
  V* w_work[2] = {w_work_[0].as<V>(), w_work_[1].as<V>()};
  auto* max_bits = scan_.as<unsigned long long>();
  auto* first_bad = reinterpret_cast<long long*>(max_bits + count);
  SHIFTOP_CUDA_CHECK(cudaMemsetAsync(max_bits, 0, count * sizeof(unsigned long long), stream));
  SHIFTOP_CUDA_CHECK(cudaMemsetAsync(first_bad, 0x7f, count * sizeof(long long), stream));
  // (about two waves of 256-thread blocks over the whole GPU, whatever the batch)
  const auto parts = static_cast<unsigned>(
      std::clamp<index_t>(4 * context_.multiprocessors() / count_, 1,
                          std::min<index_t>(65535, (batch.m * batch.n + 255) / 256)));
  scan_kernel<T>
      <<<dim3(static_cast<unsigned>(count_), parts), 256, 0, stream>>>(batch, max_bits, first_bad);
  SHIFTOP_CUDA_CHECK(cudaGetLastError());
  report_kernel<T><<<grid_for(count_, 256), 256, 0, stream>>>(batch, max_bits, first_bad);
  SHIFTOP_CUDA_CHECK(cudaGetLastError());
  load_slots_kernel<T><<<grid_for(count_ * rows_ * padded, 256), 256, 0, stream>>>(
      batch, padded, width_, first_layout_.as<int>(), column_of_.as<int>(), g_work[0]);
  SHIFTOP_CUDA_CHECK(cudaGetLastError());
  if (accumulate_) {
    load_identity_kernel<T><<<grid_for(count_ * padded * padded, 256), 256, 0, stream>>>(
        padded, width_, first_layout_.as<int>(), column_of_.as<int>(), count_, w_work[0]);
    SHIFTOP_CUDA_CHECK(cudaGetLastError());
  }

  auto* rotations = counters_.as<unsigned long long>();
  unsigned long long* proper = rotations + count;
  int* nonfinite = reinterpret_cast<int*>(proper + count);
  int* done = nonfinite + count;
  SHIFTOP_CUDA_CHECK(cudaMemsetAsync(nonfinite, 0, 2 * count * sizeof(int), stream));

  PairStep<V> step;
  step.gram = gram_.as<V>();
  step.rotation = rotation_.as<V>();
  step.width = width_;
  step.c = c;
  step.pairs = static_cast<int>(pairs_);
  step.units = units_.as<int2>();
  step.inner_steps = inner_steps_;
  step.units_per_step = units_per_step_;
  step.inner_sweeps = choices_.inner_sweeps;
  // The pair's columns are G's, g_rows long: the threshold of the pointwise method on G
  // (svd/rotation.hpp), not of a c x c matrix.
  step.tolerance = detail::orthogonality_tolerance<typename Device<T>::real>(rows_, cols_);
  step.rotation_in_shared = rotation_in_shared_;
  step.done = done;
  step.rotations = rotations;
  step.proper = proper;
  step.nonfinite = nonfinite;
  auto** pointers = pointers_.as<void*>();
  const auto arrays = [&](Update<V>& u, int k) {
    u.a = static_cast<const V**>(static_cast<void*>(pointers + (3 * k) * entries));
    u.b = static_cast<const V**>(static_cast<void*>(pointers + (3 * k + 1) * entries));
    u.c = static_cast<V**>(static_cast<void*>(pointers + (3 * k + 2) * entries));
  };
  arrays(step.g_update, 0);
  step.g_update.rows = rows_;
  if (accumulate_) {
    arrays(step.w_update, 1);
    step.w_update.rows = padded;
  }

  BlockedOutcome outcome{std::vector<int>(count), std::vector<long long>(count),
                         std::vector<long long>(count), std::vector<bool>(count)};
  std::vector<unsigned long long> host_counts(2 * count);
  std::vector<int> finished(count, 0);
  std::size_t remaining = count;
  int current = 0;
  for (int sweep = 0; sweep < choices_.max_sweeps && remaining > 0; ++sweep) {
    SHIFTOP_CUDA_CHECK(
        cudaMemsetAsync(rotations, 0, 2 * count * sizeof(unsigned long long), stream));
    for (int s = 0; s < steps_; ++s) {
      const V* panels = g_work[current];
      gemm_strided<V>(handle, CUBLAS_OP_C, c, c, rows_, panels, rows_, rows_ * c, panels, rows_,
                      rows_ * c, gram_.as<V>(), c, c * c, count_ * pairs_);
      step.filler = filler_.as<int>() + s * pairs_;
      step.next_slot = next_slot_.as<int>() + s * blocks_;
      step.negative = slot_negative_.as<int>() + s * blocks_;
      step.g_update.current = g_work[current];
      step.g_update.next = g_work[1 - current];
      if (accumulate_) {
        step.w_update.current = w_work[current];
        step.w_update.next = w_work[1 - current];
      }
      pair_kernel<T><<<dim3(static_cast<unsigned>(count_), static_cast<unsigned>(pairs_)), threads_,
                       shared_bytes_, stream>>>(step);
      SHIFTOP_CUDA_CHECK(cudaGetLastError());
      gemm_pointers<V>(handle, rows_, width_, c, step.g_update.a, rows_, step.g_update.b, c,
                       step.g_update.c, rows_, entries);
      if (accumulate_)
        gemm_pointers<V>(handle, padded, width_, c, step.w_update.a, padded, step.w_update.b, c,
                         step.w_update.c, padded, entries);
      current = 1 - current;
    }
    SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(host_counts.data(), rotations,
                                       host_counts.size() * sizeof(unsigned long long),
                                       cudaMemcpyDeviceToHost, stream));
    SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (std::size_t b = 0; b < count; ++b) {
      if (finished[b] != 0) continue;
      ++outcome.sweeps[b];
      outcome.rotations[b] += static_cast<long long>(host_counts[b]);
      outcome.proper[b] += static_cast<long long>(host_counts[count + b]);
      if (host_counts[b] == 0) {  // every pair relatively orthogonal (svd/pointwise.cpp)
        finished[b] = 1;
        outcome.converged[b] = true;
        --remaining;
      }
    }
    SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(done, finished.data(), count * sizeof(int),
                                       cudaMemcpyHostToDevice, stream));
  }

  double* norm2 = norms_.as<double>();
  double* pad = accumulate_ ? norm2 + count * padded : nullptr;
  const index_t columns = count_ * padded;
  norms_kernel<<<grid_for(columns * 32, 256), 256, 0, stream>>>(
      g_work[current], rows_, padded, accumulate_ ? w_work[current] : nullptr, cols_, count_, norm2,
      pad);
  SHIFTOP_CUDA_CHECK(cudaGetLastError());
  // (after whole sweeps G is in step 0's slot order)
  order_kernel<<<grid_for(columns, 256), 256, 0, stream>>>(
      norm2, pad, padded, width_, slot_negative_.as<int>(), cols_, plus_, count_,
      source_.as<std::int32_t>(), nonfinite);
  SHIFTOP_CUDA_CHECK(cudaGetLastError());
  output_kernel<T><<<grid_for(count_ * cols_ * std::max(rows_, cols_), 256), 256, 0, stream>>>(
      batch, g_work[current], accumulate_ ? w_work[current] : nullptr, padded, norm2,
      source_.as<std::int32_t>(), x, accumulate_ ? w : nullptr);
  SHIFTOP_CUDA_CHECK(cudaGetLastError());
  std::vector<int> host_nonfinite(count);
  SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(host_nonfinite.data(), nonfinite, count * sizeof(int),
                                     cudaMemcpyDeviceToHost, stream));
  SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream));
  for (std::size_t b = 0; b < count; ++b)
    outcome.converged[b] = outcome.converged[b] && host_nonfinite[b] == 0;
  return outcome;
}

template class BlockedMethod<float>;
template class BlockedMethod<double>;
template class BlockedMethod<std::complex<float>>;
template class BlockedMethod<std::complex<double>>;

}  // namespace shiftop::svd::gpu_kernels
