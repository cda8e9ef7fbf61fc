// Issue 17's GPU benchmark: shiftop's sparse block-circulant products (circ::Operator with
// Backend::Cuda) against the paper's cuSPARSE baselines, in FP32 and FP64, all on one device and
// in one run, on one first block row A (mb x k*nb) that is either
//   --pattern uniform: nnz nonzeros spread evenly over the rows at distinct uniformly random
//     columns, values in (0.1, 1] (the paper's Table 1 shapes; no locality at all, the worst
//     case for the reuse of X^ rows), or
//   --pattern ct2d: the system matrix of shiftop's CT scanner (models/ct2d.hpp) with --k
//     positions, --mb detectors, --rings and --sectors (the real pattern: a ray's voxels are
//     neighbours, and neighbouring rays share voxels).
// It measures:
//   * ceilings measured here: device read bandwidth (a read-only kernel over 2 GB), copy bandwidth
//     (cudaMemcpy device to device), L2 read bandwidth (ld.global.cg over 8 MB, many passes) and
//     the FMA rate per precision;
//   * shiftop: C (forward), C^T by the transposed index and by atomics (TransposeMethod forced),
//     and the paper's 20 alternating products (C, C^T, C, ...) with the Index transpose;
//   * cuSPARSE SpMV per block (eq. 2 without copies): x^ = (x x), then for each output block i one
//     cusparseSpMV of the whole A on the view x^ + i*nb. C^T: for each i one transposed SpMV of A
//     on y_i into the view x^ + i*nb of a zeroed doubled output (beta = 1), then the two halves
//     added;
//   * cuSPARSE SpMM on the duplicated input: Y (mb x k) = A X° with X° the column-major view of
//     x^ with ld = nb < rows (eq. 5). cuSPARSE is asked for that view first and whether it
//     accepts it is recorded (the paper found it refused). Where it refuses, X° is materialised
//     row-major (k*nb x k, each nonzero's k values contiguous, as in eq. 6; a kernel of this file,
//     timed with the product), multiplied row-major into Y (mb x k) and Y reordered to the
//     block-major y. C^T: X~ = A^T Y (k*nb x k, column-major, Y = y as it is), then
//     x_j = sum_i X~[block (j-i) mod k][column i] by a kernel of this file.
// Every baseline's output is compared with shiftop's (max |difference| / max |value|). Times are
// CUDA events around each call on one stream: median and minimum of --reps after --warmup, fewer
// (at least 3) where the calls would take more than 3 s; "calls" says how many.
// Prints one JSON object (bench/run_circ_gpu.py computes the floors and speed-ups from it); a case
// that does not fit in device memory is printed as {"skipped": reason}.
#include <cuda_runtime.h>
#include <cusparse.h>
#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "backend/cuda/check.hpp"
#include "backend/cuda/device_memory.cuh"
#include "backend/cuda/event_timer.cuh"
#include "backend/cuda/runtime.cuh"
#include "shiftop/circ/operator.hpp"
#include "shiftop/models/ct2d.hpp"

namespace {

using shiftop::index_t;
using shiftop::cuda::DeviceArray;
using shiftop::cuda::EventTimer;
namespace circ = shiftop::circ;
using nlohmann::json;

void check_cusparse(cusparseStatus_t status, const char* call, int line) {
  if (status != CUSPARSE_STATUS_SUCCESS)
    throw std::runtime_error(std::string(call) + " (line " + std::to_string(line) +
                             "): " + cusparseGetErrorString(status));
}
#define CUSPARSE_CHECK(call) check_cusparse((call), #call, __LINE__)

struct Config {
  std::string name = "custom";
  std::string pattern = "uniform";
  index_t rings = 535, sectors = 2400;  // ct2d
  index_t mb = 19600, nb = 8560, k = 150, nnz = 7029618;
  std::vector<std::string> precisions{"s", "d"};
  int reps = 20, warmup = 3;
  unsigned seed = 17;
};

struct HostCsr {
  std::vector<std::int32_t> indptr, indices;
  std::vector<double> values;
};

// Row r has nnz/mb nonzeros (one more for the first nnz mod mb rows) at distinct columns drawn
// uniformly (sorted draws from [0, cols - n] plus their rank), each row from its own generator.
// The CT scanner's first block row (shapes and nnz taken from it).
HostCsr ct2d_first_block_row(Config& c) {
  namespace ct2d = shiftop::models::ct2d;
  const ct2d::Geometry g{
      .positions = c.k, .rings = c.rings, .sectors = c.sectors, .detectors = c.mb};
  g.validate();
  const shiftop::circ::FirstBlockRow<double> a = ct2d::system_matrix<double>(g);
  c.nb = a.shape.nb;
  c.nnz = a.nnz();
  if (c.nnz >= (index_t{1} << 31)) throw std::invalid_argument("nnz beyond 32-bit indices");
  return {{a.indptr.begin(), a.indptr.end()}, {a.indices.begin(), a.indices.end()}, a.data};
}

HostCsr random_first_block_row(const Config& c) {
  HostCsr a;
  const index_t cols = c.k * c.nb, base = c.nnz / c.mb, extra = c.nnz % c.mb;
  a.indptr.resize(static_cast<std::size_t>(c.mb + 1), 0);
  for (index_t r = 0; r < c.mb; ++r)
    a.indptr[r + 1] = a.indptr[r] + static_cast<std::int32_t>(base + (r < extra ? 1 : 0));
  a.indices.resize(static_cast<std::size_t>(c.nnz));
  a.values.resize(static_cast<std::size_t>(c.nnz));
#pragma omp parallel for schedule(dynamic, 16)
  for (index_t r = 0; r < c.mb; ++r) {
    std::mt19937_64 gen(c.seed * 1000003ull + static_cast<std::uint64_t>(r));
    const index_t begin = a.indptr[r], n = a.indptr[r + 1] - begin;
    std::uniform_int_distribution<index_t> column(0, cols - n);
    std::uniform_real_distribution<double> value(0.1, 1.0);
    std::vector<index_t> draws(static_cast<std::size_t>(n));
    for (index_t& d : draws)
      d = column(gen);
    std::sort(draws.begin(), draws.end());
    for (index_t e = 0; e < n; ++e) {
      a.indices[begin + e] = static_cast<std::int32_t>(draws[e] + e);
      a.values[begin + e] = value(gen);
    }
  }
  return a;
}

struct Timing {
  double median_ms = 0, min_ms = 0;
  int calls = 0;
  json to_json() const { return {{"median_ms", median_ms}, {"min_ms", min_ms}, {"calls", calls}}; }
};

// The 20 alternating products of a baseline: measured where one pair takes below 100 ms, else
// ten times the pair's medians (said so in the JSON), so that the largest cases stay short.
template <class Work>
json alternating20(cudaStream_t stream, const Timing& forward, const Timing& transpose,
                   Work&& work) {
  const double pair = forward.median_ms + transpose.median_ms;
  if (pair > 100) return {{"median_ms", 10 * pair}, {"estimated_from_single_products", true}};
  return time_calls(stream, 1, 3, work).to_json();
}

template <class Work>
Timing time_calls(cudaStream_t stream, int warmup, int reps, Work&& work) {
  // The first call, timed, caps the rest at about kBudgetMs of timed calls (at least 3): the
  // per-block baselines take a fraction of a second per product at the largest sizes.
  constexpr double kBudgetMs = 3000;
  const float first_ms = EventTimer(2).time_ms(stream, work);
  if (first_ms > 0) reps = std::clamp(static_cast<int>(kBudgetMs / first_ms), 3, reps);
  for (int i = 1; i < warmup && first_ms < 50; ++i)
    work();
  // Every call recorded between its own marks, one synchronisation for all.
  const EventTimer marks(static_cast<std::size_t>(2 * reps));
  for (int i = 0; i < reps; ++i) {
    marks.record(2 * i, stream);
    work();
    marks.record(2 * i + 1, stream);
  }
  SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> ms(static_cast<std::size_t>(reps));
  for (int i = 0; i < reps; ++i)
    ms[i] = marks.elapsed_ms(2 * i, 2 * i + 1);
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front(), reps};
}

// ---- ceilings ----

template <bool L2Only>
__global__ void read_kernel(const float4* __restrict__ p, std::size_t n, int passes, float* sink) {
  float acc = 0;
  for (int pass = 0; pass < passes; ++pass)
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
         i += std::size_t{gridDim.x} * blockDim.x) {
      const float4 v = L2Only ? __ldcg(p + i) : __ldg(p + i);
      acc += v.x + v.y + v.z + v.w;
    }
  if (acc == -1.0f) *sink = acc;  // never true for the zeros read; keeps the loads
}

template <class T>
__global__ void fma_kernel(T* sink, int iterations) {
  T a[8];
#pragma unroll
  for (int j = 0; j < 8; ++j)
    a[j] = T(threadIdx.x + j);
  const T b = T(0.999), c = T(0.001);
  for (int it = 0; it < iterations; ++it)
#pragma unroll
    for (int j = 0; j < 8; ++j)
      a[j] = fma(a[j], b, c);
  T sum = 0;
  for (int j = 0; j < 8; ++j)
    sum += a[j];
  if (sum == T(-1)) *sink = sum;
}

json measure_ceilings(cudaStream_t stream, int sms) {
  const std::size_t big = std::size_t{2} << 30;  // 2 GB: far beyond the 50 MB L2
  DeviceArray<float4> buffer(big / sizeof(float4));
  DeviceArray<float4> copy(big / sizeof(float4));
  DeviceArray<double> sink(1);
  SHIFTOP_CUDA_CHECK(cudaMemsetAsync(buffer.get(), 0, big, stream));
  const int blocks = sms * 8, threads = 256;
  const Timing read = time_calls(stream, 2, 10, [&] {
    read_kernel<false><<<blocks, threads, 0, stream>>>(buffer.get(), buffer.size(), 1,
                                                       reinterpret_cast<float*>(sink.get()));
  });
  const Timing memcpy = time_calls(stream, 2, 10, [&] {
    SHIFTOP_CUDA_CHECK(
        cudaMemcpyAsync(copy.get(), buffer.get(), big, cudaMemcpyDeviceToDevice, stream));
  });
  const std::size_t small = std::size_t{8} << 20;  // 8 MB: inside L2, read 200 times
  const int passes = 200;
  const Timing l2 = time_calls(stream, 2, 10, [&] {
    read_kernel<true><<<blocks, threads, 0, stream>>>(buffer.get(), small / sizeof(float4), passes,
                                                      reinterpret_cast<float*>(sink.get()));
  });
  const int iterations = 4096;
  const double fma_flops = 2.0 * 8 * iterations * double(blocks) * threads;
  const Timing fma32 = time_calls(stream, 1, 5, [&] {
    fma_kernel<float>
        <<<blocks, threads, 0, stream>>>(reinterpret_cast<float*>(sink.get()), iterations);
  });
  const Timing fma64 = time_calls(stream, 1, 5, [&] {
    fma_kernel<double><<<blocks, threads, 0, stream>>>(sink.get(), iterations);
  });
  SHIFTOP_CHECK_LAUNCH();
  return {{"read_bytes_per_s", double(big) / (read.min_ms * 1e-3)},
          {"copy_bytes_per_s", 2.0 * double(big) / (memcpy.min_ms * 1e-3)},
          {"l2_read_bytes_per_s", double(small) * passes / (l2.min_ms * 1e-3)},
          {"fma_flops_per_s",
           {{"s", fma_flops / (fma32.min_ms * 1e-3)}, {"d", fma_flops / (fma64.min_ms * 1e-3)}}}};
}

// ---- helpers of the baselines ----

template <class T>
__global__ void add_halves(const T* __restrict__ doubled, T* __restrict__ x, index_t n) {
  for (index_t i = blockIdx.x * index_t{blockDim.x} + threadIdx.x; i < n;
       i += index_t{gridDim.x} * blockDim.x)
    x[i] = doubled[i] + doubled[i + n];
}

// x_j[l] = sum_i X~[((j - i) mod k)*nb + l][i], X~ column-major with ld = k*nb.
template <class T>
__global__ void fold_columns(const T* __restrict__ xt, T* __restrict__ x, int k, index_t nb) {
  const index_t n = k * nb;
  for (index_t idx = blockIdx.x * index_t{blockDim.x} + threadIdx.x; idx < n;
       idx += index_t{gridDim.x} * blockDim.x) {
    const int j = static_cast<int>(idx / nb);
    const index_t l = idx - j * nb;
    T sum = 0;
    for (int i = 0; i < k; ++i)
      sum += xt[index_t((j - i + k) % k) * nb + l + index_t(i) * n];
    x[idx] = sum;
  }
}

// X° row-major (ld = k): row c = d*nb + l holds x^[c + i*nb] for i < k.
template <class T>
__global__ void materialise_rows(const T* __restrict__ xhat, T* __restrict__ dense, int k,
                                 index_t nb) {
  const index_t n = index_t(k) * nb * k;
  for (index_t idx = blockIdx.x * index_t{blockDim.x} + threadIdx.x; idx < n;
       idx += index_t{gridDim.x} * blockDim.x) {
    const index_t c = idx / k, i = idx - c * k;
    dense[idx] = xhat[c + i * nb];
  }
}

// y[i][r] = Y[r][i], Y row-major (mb x k).
template <class T>
__global__ void rows_to_blocks(const T* __restrict__ rows, T* __restrict__ y, int k, index_t mb) {
  const index_t n = index_t(k) * mb;
  for (index_t idx = blockIdx.x * index_t{blockDim.x} + threadIdx.x; idx < n;
       idx += index_t{gridDim.x} * blockDim.x) {
    const index_t r = idx / k, i = idx - r * k;
    y[i * mb + r] = rows[idx];
  }
}

template <class T>
__global__ void fill_random(T* v, index_t n, unsigned seed) {
  for (index_t i = blockIdx.x * index_t{blockDim.x} + threadIdx.x; i < n;
       i += index_t{gridDim.x} * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    v[i] = T(0.5) + T(h % 1000003u) / T(2000006);  // in [0.5, 1)
  }
}

template <class T>
double relative_difference(const DeviceArray<T>& got, const DeviceArray<T>& want) {
  std::vector<T> a(got.size()), b(want.size());
  SHIFTOP_CUDA_CHECK(cudaMemcpy(a.data(), got.get(), got.bytes(), cudaMemcpyDeviceToHost));
  SHIFTOP_CUDA_CHECK(cudaMemcpy(b.data(), want.get(), want.bytes(), cudaMemcpyDeviceToHost));
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i])) return INFINITY;
    diff = std::max(diff, std::fabs(double(a[i]) - double(b[i])));
    scale = std::max(scale, std::fabs(double(b[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

unsigned grid_for(index_t n) {
  return static_cast<unsigned>(std::clamp<index_t>((n + 255) / 256, 1, 65535));
}

// ---- one precision ----

template <class T>
json run_precision(const Config& c, const HostCsr& host, cudaStream_t stream) {
  const cudaDataType type = sizeof(T) == 4 ? CUDA_R_32F : CUDA_R_64F;
  const index_t k = c.k, mb = c.mb, nb = c.nb, nnz = c.nnz;
  const index_t in_len = k * nb, out_len = k * mb;
  const auto item = sizeof(T);
  // Device memory: two operators (layout + 3 max(nb,mb) k values each), cuSPARSE's CSR, the
  // vectors and doubled vectors, and for SpMM the k*nb x k dense operand (materialised or X~).
  const double layout = double(nnz) * (12 + item) + double(mb + nb + 2) * 8 +
                        3.0 * double(std::max(mb, nb)) * double(k) * item;
  const double csr = double(nnz) * (4 + item) + double(mb + 1) * 4;
  const double vectors = double(in_len) * item * 8 + double(out_len) * item * 7;
  const double dense_k = double(in_len) * double(k) * item;
  std::size_t free_bytes = 0, total_bytes = 0;
  SHIFTOP_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  json result{{"precision", sizeof(T) == 4 ? "s" : "d"}};
  const double need = 2 * layout + csr + vectors;
  if (need > 0.92 * double(free_bytes)) {
    result["skipped"] = "needs " + std::to_string(need / 1e9) + " GB of device memory, " +
                        std::to_string(double(free_bytes) / 1e9) + " GB free";
    return result;
  }

  std::vector<T> values(host.values.begin(), host.values.end());
  const circ::Shape shape{k, mb, nb};
  const circ::CsrView<T, std::int32_t> view{host.indptr, host.indices, values};
  const auto make = [&](circ::TransposeMethod method) {
    circ::Options options;
    options.backend = shiftop::Backend::Cuda;
    options.planning = shiftop::Planning::Estimate;
    options.max_rhs = 1;
    options.gpu_engine.transpose = method;
    return circ::Operator<T>::create(shape, view, options);
  };

  DeviceArray<T> x(in_len), y(out_len), xt(in_len);  // shiftop: x -> y, y -> xt
  DeviceArray<T> y_ref(out_len), xt_ref(in_len);     // baselines' outputs
  fill_random<T><<<grid_for(in_len), 256, 0, stream>>>(x.get(), in_len, 1);
  fill_random<T><<<grid_for(out_len), 256, 0, stream>>>(y.get(), out_len, 2);
  SHIFTOP_CHECK_LAUNCH();
  DeviceArray<T> y_in(out_len);  // the transpose's input, kept apart from the forward's output
  SHIFTOP_CUDA_CHECK(
      cudaMemcpyAsync(y_in.get(), y.get(), y.bytes(), cudaMemcpyDeviceToDevice, stream));

  json shiftop_json;
  {
    circ::Operator<T> index_op = make(circ::TransposeMethod::Index);
    circ::Operator<T> atomic_op = make(circ::TransposeMethod::Atomic);
    shiftop_json["memory_bytes"] = index_op.memory_bytes();
    const auto forward = [&] { index_op.apply_device(circ::Op::C, x.get(), y.get(), 1, stream); };
    const auto t_index = [&] {
      index_op.apply_device(circ::Op::Ct, y_in.get(), xt.get(), 1, stream);
    };
    const auto t_atomic = [&] {
      atomic_op.apply_device(circ::Op::Ct, y_in.get(), xt_ref.get(), 1, stream);
    };
    shiftop_json["forward"] = time_calls(stream, c.warmup, c.reps, forward).to_json();
    shiftop_json["transpose_index"] = time_calls(stream, c.warmup, c.reps, t_index).to_json();
    shiftop_json["transpose_atomic"] = time_calls(stream, c.warmup, c.reps, t_atomic).to_json();
    shiftop_json["atomic_vs_index_difference"] = relative_difference(xt_ref, xt);
    // The paper's MLEM-like sequence: 20 products alternating C (on x) and C^T (on y).
    shiftop_json["alternating20"] = time_calls(stream, 1, std::max(3, c.reps / 4), [&] {
                                      for (int i = 0; i < 10; ++i) {
                                        forward();
                                        t_index();
                                      }
                                    }).to_json();
  }
  result["shiftop"] = shiftop_json;

  // cuSPARSE's CSR of A (32-bit indices: nnz and k*nb are below 2^31 in every case).
  DeviceArray<std::int32_t> d_indptr(host.indptr.size()), d_indices(host.indices.size());
  DeviceArray<T> d_values(values.size());
  SHIFTOP_CUDA_CHECK(
      cudaMemcpy(d_indptr.get(), host.indptr.data(), d_indptr.bytes(), cudaMemcpyHostToDevice));
  SHIFTOP_CUDA_CHECK(
      cudaMemcpy(d_indices.get(), host.indices.data(), d_indices.bytes(), cudaMemcpyHostToDevice));
  SHIFTOP_CUDA_CHECK(
      cudaMemcpy(d_values.get(), values.data(), d_values.bytes(), cudaMemcpyHostToDevice));
  cusparseHandle_t handle = nullptr;
  CUSPARSE_CHECK(cusparseCreate(&handle));
  CUSPARSE_CHECK(cusparseSetStream(handle, stream));
  cusparseSpMatDescr_t a = nullptr;
  CUSPARSE_CHECK(cusparseCreateCsr(&a, mb, in_len, nnz, d_indptr.get(), d_indices.get(),
                                   d_values.get(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_BASE_ZERO, type));
  const T one = 1, zero = 0;
  DeviceArray<T> doubled(2 * in_len);  // x^ = (x x), or the transposes' doubled output

  json spmv;
  try {
    std::vector<cusparseDnVecDescr_t> x_view(k), y_block(k), yin_block(k), out_view(k);
    for (index_t i = 0; i < k; ++i) {
      CUSPARSE_CHECK(cusparseCreateDnVec(&x_view[i], in_len, doubled.get() + i * nb, type));
      CUSPARSE_CHECK(cusparseCreateDnVec(&y_block[i], mb, y_ref.get() + i * mb, type));
      CUSPARSE_CHECK(cusparseCreateDnVec(&yin_block[i], mb, y_in.get() + i * mb, type));
      CUSPARSE_CHECK(cusparseCreateDnVec(&out_view[i], in_len, doubled.get() + i * nb, type));
    }
    std::size_t bytes_n = 0, bytes_t = 0;
    CUSPARSE_CHECK(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a,
                                           x_view[0], &zero, y_block[0], type,
                                           CUSPARSE_SPMV_ALG_DEFAULT, &bytes_n));
    CUSPARSE_CHECK(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_TRANSPOSE, &one, a,
                                           yin_block[0], &one, out_view[0], type,
                                           CUSPARSE_SPMV_ALG_DEFAULT, &bytes_t));
    DeviceArray<char> work(std::max<std::size_t>({bytes_n, bytes_t, 1}));
    const auto forward = [&] {
      SHIFTOP_CUDA_CHECK(
          cudaMemcpyAsync(doubled.get(), x.get(), x.bytes(), cudaMemcpyDeviceToDevice, stream));
      SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(doubled.get() + in_len, x.get(), x.bytes(),
                                         cudaMemcpyDeviceToDevice, stream));
      for (index_t i = 0; i < k; ++i)
        CUSPARSE_CHECK(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, x_view[i],
                                    &zero, y_block[i], type, CUSPARSE_SPMV_ALG_DEFAULT,
                                    work.get()));
    };
    const auto transpose = [&] {
      SHIFTOP_CUDA_CHECK(cudaMemsetAsync(doubled.get(), 0, doubled.bytes(), stream));
      for (index_t i = 0; i < k; ++i)  // A^T y_i holds A_d^T y_i for every d: x_{i+d} gets it
        CUSPARSE_CHECK(cusparseSpMV(handle, CUSPARSE_OPERATION_TRANSPOSE, &one, a, yin_block[i],
                                    &one, out_view[i], type, CUSPARSE_SPMV_ALG_DEFAULT,
                                    work.get()));
      add_halves<T><<<grid_for(in_len), 256, 0, stream>>>(doubled.get(), xt_ref.get(), in_len);
    };
    const Timing spmv_forward = time_calls(stream, c.warmup, c.reps, forward);
    spmv["forward"] = spmv_forward.to_json();
    spmv["forward_difference"] = relative_difference(y_ref, y);
    const Timing spmv_transpose = time_calls(stream, c.warmup, c.reps, transpose);
    spmv["transpose"] = spmv_transpose.to_json();
    spmv["transpose_difference"] = relative_difference(xt_ref, xt);
    spmv["alternating20"] = alternating20(stream, spmv_forward, spmv_transpose, [&] {
      for (int i = 0; i < 10; ++i) {
        forward();
        transpose();
      }
    });
    for (auto* list : {&x_view, &y_block, &yin_block, &out_view})
      for (cusparseDnVecDescr_t d : *list)
        cusparseDestroyDnVec(d);
  } catch (const std::exception& e) {
    spmv["error"] = e.what();
  }
  result["cusparse_spmv_per_block"] = spmv;

  json spmm;
  if (dense_k + need > 0.92 * double(free_bytes)) {
    spmm["skipped"] = "the k*nb x k dense operand (" + std::to_string(dense_k / 1e9) +
                      " GB) does not fit beside the rest";
  } else {
    try {
      DeviceArray<T> dense(static_cast<std::size_t>(in_len * k)), y_rows(out_len);
      cusparseDnMatDescr_t y_mat = nullptr, yin_mat = nullptr, dense_mat = nullptr;
      cusparseDnMatDescr_t dense_rows = nullptr, y_rows_mat = nullptr;
      CUSPARSE_CHECK(
          cusparseCreateDnMat(&dense_rows, in_len, k, k, dense.get(), type, CUSPARSE_ORDER_ROW));
      CUSPARSE_CHECK(
          cusparseCreateDnMat(&y_rows_mat, mb, k, k, y_rows.get(), type, CUSPARSE_ORDER_ROW));
      CUSPARSE_CHECK(cusparseCreateDnMat(&y_mat, mb, k, mb, y_ref.get(), type, CUSPARSE_ORDER_COL));
      CUSPARSE_CHECK(
          cusparseCreateDnMat(&yin_mat, mb, k, mb, y_in.get(), type, CUSPARSE_ORDER_COL));
      CUSPARSE_CHECK(cusparseCreateDnMat(&dense_mat, in_len, k, in_len, dense.get(), type,
                                         CUSPARSE_ORDER_COL));
      SHIFTOP_CUDA_CHECK(
          cudaMemcpyAsync(doubled.get(), x.get(), x.bytes(), cudaMemcpyDeviceToDevice, stream));
      SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(doubled.get() + in_len, x.get(), x.bytes(),
                                         cudaMemcpyDeviceToDevice, stream));
      // Eq. (5): X° as a view of x^ with ld = nb < rows = k*nb.
      std::string refusal;
      cusparseDnMatDescr_t view_mat = nullptr;
      std::size_t view_bytes = 0;
      cusparseStatus_t status =
          cusparseCreateDnMat(&view_mat, in_len, k, nb, doubled.get(), type, CUSPARSE_ORDER_COL);
      if (status == CUSPARSE_STATUS_SUCCESS)
        status = cusparseSpMM_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                         CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, view_mat, &zero,
                                         y_mat, type, CUSPARSE_SPMM_ALG_DEFAULT, &view_bytes);
      DeviceArray<char> view_work;
      if (status == CUSPARSE_STATUS_SUCCESS) {
        view_work = DeviceArray<char>(std::max<std::size_t>(view_bytes, 1));
        status = cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                              CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, view_mat, &zero, y_mat,
                              type, CUSPARSE_SPMM_ALG_DEFAULT, view_work.get());
      }
      SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream));
      if (status != CUSPARSE_STATUS_SUCCESS) refusal = cusparseGetErrorString(status);
      const bool view_accepted = refusal.empty() && relative_difference(y_ref, y) < 1e-3;
      spmm["view_accepted"] = view_accepted;
      if (!refusal.empty())
        spmm["view_refusal"] = refusal;
      else if (!view_accepted)
        spmm["view_refusal"] = "accepted, but its product differs from shiftop's";
      spmm["forward_operand"] =
          view_accepted ? "column-major view of x^ with ld = nb"
                        : "X° materialised row-major (k*nb x k), Y row-major, reordered";
      spmm["transpose_operand"] = "A^T y (y as column-major mb x k) into column-major X~, folded";
      std::size_t bytes_n = 0, bytes_t = 0;
      CUSPARSE_CHECK(cusparseSpMM_bufferSize(
          handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a,
          dense_rows, &zero, y_rows_mat, type, CUSPARSE_SPMM_ALG_DEFAULT, &bytes_n));
      // A refused transposed SpMM leaves the forward's numbers standing.
      const cusparseStatus_t t_status = cusparseSpMM_bufferSize(
          handle, CUSPARSE_OPERATION_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, yin_mat,
          &zero, dense_mat, type, CUSPARSE_SPMM_ALG_DEFAULT, &bytes_t);
      if (t_status != CUSPARSE_STATUS_SUCCESS)
        spmm["transpose_error"] = cusparseGetErrorString(t_status);
      DeviceArray<char> work(std::max<std::size_t>({bytes_n, bytes_t, 1}));
      const auto materialise = [&] {
        SHIFTOP_CUDA_CHECK(
            cudaMemcpyAsync(doubled.get(), x.get(), x.bytes(), cudaMemcpyDeviceToDevice, stream));
        SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(doubled.get() + in_len, x.get(), x.bytes(),
                                           cudaMemcpyDeviceToDevice, stream));
        materialise_rows<T><<<grid_for(in_len * k), 256, 0, stream>>>(doubled.get(), dense.get(),
                                                                      static_cast<int>(k), nb);
      };
      const auto multiply = [&] {
        CUSPARSE_CHECK(cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                    CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, dense_rows, &zero,
                                    y_rows_mat, type, CUSPARSE_SPMM_ALG_DEFAULT, work.get()));
      };
      const auto reorder = [&] {
        rows_to_blocks<T><<<grid_for(out_len), 256, 0, stream>>>(y_rows.get(), y_ref.get(),
                                                                 static_cast<int>(k), mb);
      };
      const auto forward = [&] {
        if (view_accepted) {
          SHIFTOP_CUDA_CHECK(
              cudaMemcpyAsync(doubled.get(), x.get(), x.bytes(), cudaMemcpyDeviceToDevice, stream));
          SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(doubled.get() + in_len, x.get(), x.bytes(),
                                             cudaMemcpyDeviceToDevice, stream));
          CUSPARSE_CHECK(cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                      CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, view_mat, &zero,
                                      y_mat, type, CUSPARSE_SPMM_ALG_DEFAULT, view_work.get()));
        } else {
          materialise();
          multiply();
          reorder();
        }
      };
      const auto transpose = [&] {
        CUSPARSE_CHECK(cusparseSpMM(handle, CUSPARSE_OPERATION_TRANSPOSE,
                                    CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, yin_mat, &zero,
                                    dense_mat, type, CUSPARSE_SPMM_ALG_DEFAULT, work.get()));
        fold_columns<T><<<grid_for(in_len), 256, 0, stream>>>(dense.get(), xt_ref.get(),
                                                              static_cast<int>(k), nb);
      };
      const Timing spmm_forward = time_calls(stream, c.warmup, c.reps, forward);
      spmm["forward"] = spmm_forward.to_json();
      spmm["forward_difference"] = relative_difference(y_ref, y);
      if (!view_accepted) {
        spmm["materialise"] = time_calls(stream, c.warmup, c.reps, materialise).to_json();
        spmm["spmm_only"] = time_calls(stream, c.warmup, c.reps, multiply).to_json();
      }
      if (t_status == CUSPARSE_STATUS_SUCCESS) {
        const Timing spmm_transpose = time_calls(stream, c.warmup, c.reps, transpose);
        spmm["transpose"] = spmm_transpose.to_json();
        spmm["transpose_difference"] = relative_difference(xt_ref, xt);
        spmm["alternating20"] = alternating20(stream, spmm_forward, spmm_transpose, [&] {
          for (int i = 0; i < 10; ++i) {
            forward();
            transpose();
          }
        });
      }
      if (view_mat != nullptr) cusparseDestroyDnMat(view_mat);
      cusparseDestroyDnMat(y_mat);
      cusparseDestroyDnMat(yin_mat);
      cusparseDestroyDnMat(dense_mat);
      cusparseDestroyDnMat(dense_rows);
      cusparseDestroyDnMat(y_rows_mat);
    } catch (const std::exception& e) {
      spmm["error"] = e.what();
    }
  }
  result["cusparse_spmm"] = spmm;
  cusparseDestroySpMat(a);
  cusparseDestroy(handle);
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  CLI::App app{"Issue 17: shiftop's GPU block-circulant products against cuSPARSE"};
  app.add_option("--name", c.name, "case name for the JSON (e.g. ct-small)");
  app.add_option("--mb", c.mb, "rows of each block")->check(CLI::PositiveNumber);
  app.add_option("--nb", c.nb, "columns of each block")->check(CLI::PositiveNumber);
  app.add_option("--k", c.k, "blocks per block row")->check(CLI::PositiveNumber);
  app.add_option("--nnz", c.nnz, "nonzeros of A (uniform)")->check(CLI::PositiveNumber);
  app.add_option("--pattern", c.pattern, "uniform or ct2d")
      ->check(CLI::IsMember({"uniform", "ct2d"}));
  app.add_option("--rings", c.rings, "ct2d: rings")->check(CLI::PositiveNumber);
  app.add_option("--sectors", c.sectors, "ct2d: sectors (a multiple of k)")
      ->check(CLI::PositiveNumber);
  app.add_option("--precisions", c.precisions, "s and/or d")->delimiter(',');
  app.add_option("--reps", c.reps, "timed calls per method")->check(CLI::PositiveNumber);
  app.add_option("--warmup", c.warmup, "untimed calls first")->check(CLI::NonNegativeNumber);
  app.add_option("--seed", c.seed, "seed of the random first block row");
  CLI11_PARSE(app, argc, argv);
  try {
    const bool ct = c.pattern == "ct2d";
    if (!ct && (c.nnz > c.mb * c.k * c.nb || c.nnz >= (index_t{1} << 31) ||
                c.k * c.nb >= (index_t{1} << 31)))
      throw std::invalid_argument("nnz must fit the matrix and 32-bit indices");
    int device = 0, sms = 0;
    SHIFTOP_CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop{};
    SHIFTOP_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    sms = prop.multiProcessorCount;
    cudaStream_t stream = nullptr;
    SHIFTOP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const HostCsr host = ct ? ct2d_first_block_row(c) : random_first_block_row(c);
    json out{{"name", c.name},
             {"device", prop.name},
             {"shape", {{"k", c.k}, {"mb", c.mb}, {"nb", c.nb}, {"nnz", c.nnz}}},
             {"pattern", c.pattern},
             {"reps", c.reps}};
    if (ct) out["geometry"] = {{"rings", c.rings}, {"sectors", c.sectors}};
    out["ceilings"] = measure_ceilings(stream, sms);
    json runs = json::array();
    for (const std::string& p : c.precisions) {
      std::cerr << "[circ_gpu] " << c.name << " " << p << "\n";
      runs.push_back(p == "s" ? run_precision<float>(c, host, stream)
                              : run_precision<double>(c, host, stream));
    }
    out["runs"] = runs;
    std::cout << out.dump(1) << "\n";
    cudaStreamDestroy(stream);
  } catch (const std::exception& e) {
    std::cout << json{{"name", c.name}, {"error", e.what()}}.dump() << "\n";
    return 1;
  }
  return 0;
}
