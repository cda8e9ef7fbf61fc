// Stage 2 of the batched Jacobi (H)SVD (svd/cuda/batched_kernels.hpp) for matrices whose G does
// not fit one thread block's shared memory: the blocked method of jacobi-svd-gsvd-gpu-thesis,
// section 2.3 (the full-block variant, `pStep`). G's columns are split into block columns of
// `width`; each outer step of the block strategy pairs them, and one thread block per pivot block
// pair (and matrix) runs the pointwise method (svd/cuda/pointwise_sweeps.cuh) to convergence on
//  * the pair's columns themselves, in shared memory, when rows x 2 width fit ("direct"), or
//  * their triangular factor R from the Gram matrix and its Cholesky factorisation (2.3.1,
//    `factorize`), the rotations accumulated in V' and the pair's columns then multiplied by V'
//    (2.3.5, `postmultiply`);
// W's columns of the pair are multiplied by the pair's V' in both cases. The rotations of each
// matrix are summed over the block-sweep: the driver stops a matrix after a block-sweep without
// one (every pair relatively orthogonal; svd/pointwise.cpp says why not 2.3.6's proper ones).
#include <algorithm>

#include "backend/cuda/check.hpp"
#include "svd/cuda/batched_kernels.hpp"
#include "svd/cuda/group_ops.cuh"
#include "svd/cuda/pointwise_sweeps.cuh"

namespace shiftop::svd::gpu_kernels {
namespace {

constexpr int kChunkRows = 32;  // rows of a column block staged in shared memory
// The Gram matrix of a pair (at most (2 kMaxBlockWidth)^2 entries) over kBlockPairThreads threads.
constexpr int kGramEntriesPerThread =
    (4 * kMaxBlockWidth * kMaxBlockWidth + kBlockPairThreads - 1) / kBlockPairThreads;

// The pair's global column of local column l (the first block's columns, then the second's).
struct PairColumns {
  index_t p0, wp, q0, wq;
  __device__ index_t operator()(index_t l) const { return l < wp ? p0 + l : q0 + (l - wp); }
  __device__ index_t count() const { return wp + wq; }
};

// a[:, pair columns] <- a[:, pair columns] * vp (a: rows x *, leading dimension rows; vp: c x c,
// shared), through `chunk` (kChunkRows x c shared scratch).
template <class V, class R>
__device__ void postmultiply(V* a, index_t rows, const PairColumns& columns, const V* vp,
                             V* chunk) {
  const index_t c = columns.count();
  const int tid = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  for (index_t first = 0; first < rows; first += kChunkRows) {
    const index_t height = min(static_cast<index_t>(kChunkRows), rows - first);
    for (index_t e = tid; e < height * c; e += threads)
      chunk[e] = a[first + e % height + columns(e / height) * rows];
    __syncthreads();
    for (index_t e = tid; e < height * c; e += threads) {
      const index_t i = e % height, j = e / height;
      Acc sum{0, 0};
      for (index_t k = 0; k < c; ++k)
        add_conj_product(sum, conj(chunk[i + k * height]), vp[k + j * c]);
      a[first + i + columns(j) * rows] = make<V>(static_cast<R>(sum.re), static_cast<R>(sum.im));
    }
    __syncthreads();
  }
}

template <class T>
__global__ void block_pair_kernel(Batch<T> batch, BlockedStep step, bool direct) {
  using V = DeviceType<T>;
  using R = typename Device<T>::real;
  extern __shared__ __align__(16) unsigned char shared[];
  __shared__ Counters counters;

  const index_t b = blockIdx.y;
  const int2 block_pair = step.block_pairs[step.index * step.block_pairs_per_step + blockIdx.x];
  if (block_pair.x < 0 || step.done[b] != 0) return;  // uniform over the thread block
  const index_t rows = batch.g_rows, cols = batch.cols;
  const index_t p0 = block_pair.x * static_cast<index_t>(step.width);
  const index_t q0 = block_pair.y * static_cast<index_t>(step.width);
  const PairColumns columns{p0, min(static_cast<index_t>(step.width), cols - p0), q0,
                            min(static_cast<index_t>(step.width), cols - q0)};
  const index_t c = columns.count();
  const Groups groups(step.lanes);
  const int tid = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  V* g = batch.g + b * rows * cols;
  V* w = batch.w != nullptr ? batch.w + b * cols * cols : nullptr;

  // shared: norm (2 width doubles) | V' (c x c) | the pair's columns (direct) or R and a chunk
  double* norm = reinterpret_cast<double*>(shared);
  V* vp = reinterpret_cast<V*>(shared + 2 * step.width * sizeof(double));
  V* work = vp + c * c;
  const bool need_vp = !direct || w != nullptr;
  for (index_t e = tid; e < c * c; e += threads)
    vp[e] = e % c == e / c ? make<V>(R(1), R(0)) : zero<V>();

  Pointwise<V> problem;
  problem.cols = c;
  problem.w = need_vp ? vp : nullptr;
  problem.w_rows = c;
  problem.norm = norm;
  problem.pairs = step.inner_pairs;
  problem.steps = step.inner_steps;
  problem.pairs_per_step = step.inner_pairs_per_step;
  problem.map = {columns.wp, p0, q0, batch.n_plus};
  problem.tolerance = detail::unit_roundoff<R>() * sqrt(static_cast<R>(cols));
  problem.max_sweeps = step.inner_sweeps;

  if (direct) {
    for (index_t e = tid; e < rows * c; e += threads)
      work[e] = g[e % rows + columns(e / rows) * rows];
    __syncthreads();
    problem.g = work;
    problem.rows = rows;
  } else {
    // factorize: H = [G_p G_q]^H [G_p G_q] over row chunks, then H = R^H R (Cholesky; a pivot
    // that is not positive leaves a zero row: that column depends on the previous ones).
    V* r = work;
    V* chunk = work + c * c;
    Acc h[kGramEntriesPerThread] = {};
    for (index_t first = 0; first < rows; first += kChunkRows) {
      const index_t height = min(static_cast<index_t>(kChunkRows), rows - first);
      for (index_t e = tid; e < height * c; e += threads)
        chunk[e] = g[first + e % height + columns(e / height) * rows];
      __syncthreads();
      for (int k = 0; k < kGramEntriesPerThread; ++k) {
        const index_t e = tid + k * threads;
        if (e >= c * c) continue;
        const index_t i = e % c, j = e / c;
        for (index_t row = 0; row < height; ++row)
          add_conj_product(h[k], chunk[row + i * height], chunk[row + j * height]);
      }
      __syncthreads();
    }
    for (int k = 0; k < kGramEntriesPerThread; ++k) {
      const index_t e = tid + k * threads;
      if (e < c * c) r[e] = make<V>(static_cast<R>(h[k].re), static_cast<R>(h[k].im));
    }
    __syncthreads();
    for (index_t k = 0; k < c; ++k) {  // r holds H; row k of R overwrites row k of H
      const double d = real_of(r[k + k * c]);
      const double pivot = d > 0 ? sqrt(d) : 0;
      __syncthreads();
      for (index_t j = k + tid; j < c; j += threads)
        r[k + j * c] = pivot > 0 ? scale(static_cast<R>(1.0 / pivot), r[k + j * c]) : zero<V>();
      __syncthreads();
      for (index_t e = tid; e < c * c; e += threads) {  // H_ij -= conj(R_ki) R_kj, k < i <= j
        const index_t i = e % c, j = e / c;
        if (i <= k || i > j) continue;
        Acc update{real_of(r[i + j * c]), imag_of(r[i + j * c])};
        const V rki = r[k + i * c], rkj = r[k + j * c];
        update.re -= real_of(rki) * real_of(rkj) + imag_of(rki) * imag_of(rkj);
        update.im -= real_of(rki) * imag_of(rkj) - imag_of(rki) * real_of(rkj);
        r[i + j * c] = make<V>(static_cast<R>(update.re), static_cast<R>(update.im));
      }
      __syncthreads();
    }
    for (index_t e = tid; e < c * c; e += threads)
      if (e % c > e / c) r[e] = zero<V>();
    __syncthreads();
    problem.g = r;
    problem.rows = c;
  }

  const SweepTotals totals = pointwise_sweeps<V, R>(problem, groups, &counters);
  if (tid == 0) {
    atomicAdd(step.proper + b, static_cast<unsigned long long>(totals.proper));
    atomicAdd(step.rotations + b, static_cast<unsigned long long>(totals.rotations));
    if (counters.nonfinite != 0) atomicExch(step.nonfinite + b, 1);
  }

  if (direct) {
    for (index_t e = tid; e < rows * c; e += threads)
      g[e % rows + columns(e / rows) * rows] = work[e];
    __syncthreads();
  } else {
    postmultiply<V, R>(g, rows, columns, vp, work + c * c);
  }
  if (w != nullptr) postmultiply<V, R>(w, cols, columns, vp, work);
}

template <class T>
__global__ void identity_kernel(Batch<T> batch) {
  using V = DeviceType<T>;
  using R = typename Device<T>::real;
  const index_t cols = batch.cols;
  V* w = batch.w + blockIdx.y * cols * cols;
  for (index_t e = blockIdx.x * blockDim.x + threadIdx.x; e < cols * cols;
       e += gridDim.x * blockDim.x)
    w[e] = e % cols == e / cols ? make<V>(R(1), R(0)) : zero<V>();
}

template <class T>
__global__ void finish_kernel(Batch<T> batch) {
  extern __shared__ __align__(16) unsigned char shared[];
  __shared__ Counters counters;
  const index_t b = blockIdx.x;
  if (threadIdx.x == 0) counters.nonfinite = 0;
  __syncthreads();
  finish_matrix(batch, b, batch.g + b * batch.g_rows * batch.cols,
                reinterpret_cast<double*>(shared), Groups(batch.lanes), &counters);
  __syncthreads();
  if (threadIdx.x == 0) batch.reports[b].converged = counters.nonfinite == 0;
}

}  // namespace

std::size_t block_pair_shared_bytes(index_t rows, int width, std::size_t element, bool direct) {
  const std::size_t c = 2 * static_cast<std::size_t>(width);
  const std::size_t work =
      direct ? std::max<std::size_t>(rows, kChunkRows) * c : c * c + kChunkRows * c;
  return 2 * width * sizeof(double) + (c * c + work) * element;
}

template <class T>
void launch_block_pairs(const Batch<T>& batch, const BlockedStep& step, bool direct,
                        cudaStream_t stream) {
  const std::size_t bytes =
      block_pair_shared_bytes(batch.g_rows, step.width, sizeof(DeviceType<T>), direct);
  SHIFTOP_CUDA_CHECK(cudaFuncSetAttribute(
      block_pair_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  const dim3 grid(static_cast<unsigned>(step.block_pairs_per_step),
                  static_cast<unsigned>(batch.count));
  block_pair_kernel<T><<<grid, kBlockPairThreads, bytes, stream>>>(batch, step, direct);
  SHIFTOP_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void launch_identity(const Batch<T>& batch, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((batch.cols * batch.cols + 255) / 256),
                  static_cast<unsigned>(batch.count));
  identity_kernel<T><<<grid, 256, 0, stream>>>(batch);
  SHIFTOP_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void launch_finish(const Batch<T>& batch, cudaStream_t stream) {
  const std::size_t bytes = batch.cols * sizeof(double);
  SHIFTOP_CUDA_CHECK(cudaFuncSetAttribute(
      finish_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  finish_kernel<T><<<static_cast<unsigned>(batch.count), batch.threads, bytes, stream>>>(batch);
  SHIFTOP_CUDA_CHECK(cudaGetLastError());
}

#define SHIFTOP_INSTANTIATE(T)                                                               \
  template void launch_block_pairs(const Batch<T>&, const BlockedStep&, bool, cudaStream_t); \
  template void launch_identity(const Batch<T>&, cudaStream_t);                              \
  template void launch_finish(const Batch<T>&, cudaStream_t);
SHIFTOP_INSTANTIATE(float)
SHIFTOP_INSTANTIATE(double)
SHIFTOP_INSTANTIATE(std::complex<float>)
SHIFTOP_INSTANTIATE(std::complex<double>)
#undef SHIFTOP_INSTANTIATE

}  // namespace shiftop::svd::gpu_kernels
