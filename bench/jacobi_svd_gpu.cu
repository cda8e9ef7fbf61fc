// Issue 16's GPU benchmark: shiftop's batched Jacobi SVD (svd/jacobi_gpu.hpp) against cuSOLVER's
// gesvdjBatched (m, n <= 32), gesvdj and gesvd (one call per matrix, round-robin over --streams
// streams with one handle per stream), on the same device batch of random or graded matrices.
// Per method: the median and minimum of --reps timed calls (CUDA events around the whole call,
// workspace queries included; workspaces and outputs are allocated once before, as a user plans
// once; the inputs that cuSOLVER overwrites are restored between calls, untimed), the largest
// relative error max_i |s_i - s*_i| / s*_i of the singular values over sampled matrices against a
// reference (shiftop's CPU jacobi_batched in FP64, relatively accurate on graded matrices; or
// cuSOLVER's FP64 gesvd, for orders where the CPU is too slow), sweeps (shiftop: the largest over
// the batch; gesvdj: over the sampled matrices, with its residual) and failures (info != 0, or
// shiftop not converged). The per-matrix methods can time only the first --timed-matrices
// matrices and scale linearly to the batch (said in the output as timed_matrices). One summary
// line per method (stderr with --json, else stdout); with --json one JSON object on stdout.
// A method that fails is recorded with its error and the exit status is 3; bad options exit 2
// (CLI11's own checks with its codes), a failure before the methods run 1.
// bench/run_jacobi_svd_gpu.py runs it over the issue's cases.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "backend/cuda/check.hpp"
#include "backend/cuda/device_memory.cuh"
#include "backend/cuda/event_timer.cuh"
#include "core/poison.hpp"
#include "shiftop/gpu/context.hpp"
#include "shiftop/svd/jacobi.hpp"
#include "shiftop/svd/jacobi_gpu.hpp"

namespace {

using shiftop::index_t;
using shiftop::cuda::DeviceArray;
using shiftop::cuda::EventTimer;
using shiftop::svd::Real;

struct Config {
  index_t batch = 1000, m = 32, n = 32;
  std::string type = "d";
  std::vector<std::string> methods{"shiftop", "gesvdj", "gesvd"};
  int reps = 5, warmup = 1, streams = 4, samples = 64;
  bool vectors = false, json = false;
  std::string matrix = "random", reference = "cpu";
  index_t timed_matrices = 0;  // per-matrix methods; 0: the whole batch
  shiftop::svd::Variant variant = shiftop::svd::Variant::Auto;
  index_t block_width = 0;
  unsigned seed = 42;
};

// cuSOLVER's and cuBLAS's entry points and types per element type; shiftop's std::complex and
// CUDA's cuComplex/cuDoubleComplex have the same layout.
template <class T>
struct Cuda;
template <>
struct Cuda<float> {
  using D = float;
  static constexpr auto gesvd_size = cusolverDnSgesvd_bufferSize;
  static constexpr auto gesvd = cusolverDnSgesvd;
  static constexpr auto gesvdj_size = cusolverDnSgesvdj_bufferSize;
  static constexpr auto gesvdj = cusolverDnSgesvdj;
  static constexpr auto batched_size = cusolverDnSgesvdjBatched_bufferSize;
  static constexpr auto batched = cusolverDnSgesvdjBatched;
  static constexpr auto gesvda_size = cusolverDnSgesvdaStridedBatched_bufferSize;
  static constexpr auto gesvda = cusolverDnSgesvdaStridedBatched;
  static constexpr auto geam = cublasSgeam;
  static constexpr cublasOperation_t adjoint = CUBLAS_OP_T;
};
template <>
struct Cuda<double> {
  using D = double;
  static constexpr auto gesvd_size = cusolverDnDgesvd_bufferSize;
  static constexpr auto gesvd = cusolverDnDgesvd;
  static constexpr auto gesvdj_size = cusolverDnDgesvdj_bufferSize;
  static constexpr auto gesvdj = cusolverDnDgesvdj;
  static constexpr auto batched_size = cusolverDnDgesvdjBatched_bufferSize;
  static constexpr auto batched = cusolverDnDgesvdjBatched;
  static constexpr auto gesvda_size = cusolverDnDgesvdaStridedBatched_bufferSize;
  static constexpr auto gesvda = cusolverDnDgesvdaStridedBatched;
  static constexpr auto geam = cublasDgeam;
  static constexpr cublasOperation_t adjoint = CUBLAS_OP_T;
};
template <>
struct Cuda<std::complex<float>> {
  using D = cuComplex;
  static constexpr auto gesvd_size = cusolverDnCgesvd_bufferSize;
  static constexpr auto gesvd = cusolverDnCgesvd;
  static constexpr auto gesvdj_size = cusolverDnCgesvdj_bufferSize;
  static constexpr auto gesvdj = cusolverDnCgesvdj;
  static constexpr auto batched_size = cusolverDnCgesvdjBatched_bufferSize;
  static constexpr auto batched = cusolverDnCgesvdjBatched;
  static constexpr auto gesvda_size = cusolverDnCgesvdaStridedBatched_bufferSize;
  static constexpr auto gesvda = cusolverDnCgesvdaStridedBatched;
  static constexpr auto geam = cublasCgeam;
  static constexpr cublasOperation_t adjoint = CUBLAS_OP_C;
};
template <>
struct Cuda<std::complex<double>> {
  using D = cuDoubleComplex;
  static constexpr auto gesvd_size = cusolverDnZgesvd_bufferSize;
  static constexpr auto gesvd = cusolverDnZgesvd;
  static constexpr auto gesvdj_size = cusolverDnZgesvdj_bufferSize;
  static constexpr auto gesvdj = cusolverDnZgesvdj;
  static constexpr auto batched_size = cusolverDnZgesvdjBatched_bufferSize;
  static constexpr auto batched = cusolverDnZgesvdjBatched;
  static constexpr auto gesvda_size = cusolverDnZgesvdaStridedBatched_bufferSize;
  static constexpr auto gesvda = cusolverDnZgesvdaStridedBatched;
  static constexpr auto geam = cublasZgeam;
  static constexpr cublasOperation_t adjoint = CUBLAS_OP_C;
};

template <class T>
typename Cuda<T>::D* device(T* p) {
  return reinterpret_cast<typename Cuda<T>::D*>(p);
}
template <class T>
const typename Cuda<T>::D* device(const T* p) {
  return reinterpret_cast<const typename Cuda<T>::D*>(p);
}

template <class T>
using Wide = std::conditional_t<std::is_same_v<T, Real<T>>, double, std::complex<double>>;

template <class T>
T draw(std::mt19937_64& rng, std::normal_distribution<double>& normal) {
  if constexpr (std::is_same_v<T, Real<T>>) {
    return static_cast<T>(normal(rng));
  } else {
    const double re = normal(rng);
    return T(static_cast<Real<T>>(re), static_cast<Real<T>>(normal(rng)));
  }
}

// The batch, matrix b from its own seed (independent of the thread count). "graded": A = B D with
// column scales 10^(-12 t), t in [0, 1] shuffled (bench/jacobi_svd_cpu.cpp's graded matrices).
template <class T>
std::vector<T> make_batch(const Config& c) {
  const auto size = static_cast<std::size_t>(c.m * c.n);
  std::vector<T> a(static_cast<std::size_t>(c.batch) * size);
  const auto fill = [&](index_t first, index_t last) {
    for (index_t b = first; b < last; ++b) {
      std::mt19937_64 rng(c.seed + static_cast<unsigned>(b));
      std::normal_distribution<double> normal;
      T* x = a.data() + b * size;
      for (std::size_t k = 0; k < size; ++k)
        x[k] = draw<T>(rng, normal);
      if (c.matrix != "graded") continue;
      std::vector<double> scale(static_cast<std::size_t>(c.n));
      for (index_t j = 0; j < c.n; ++j)
        scale[j] = c.n == 1 ? 1.0 : std::pow(10.0, -12.0 * double(j) / double(c.n - 1));
      std::shuffle(scale.begin(), scale.end(), rng);
      for (index_t j = 0; j < c.n; ++j)
        for (index_t i = 0; i < c.m; ++i)
          x[i + j * c.m] *= static_cast<Real<T>>(scale[j]);
    }
  };
  const index_t threads = std::max<index_t>(1, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (index_t t = 0; t < threads; ++t)
    pool.emplace_back(fill, c.batch * t / threads, c.batch * (t + 1) / threads);
  for (auto& thread : pool)
    thread.join();
  return a;
}

struct Outcome {
  std::string method;
  std::vector<float> ms;  // per timed call, scaled to the whole batch
  index_t timed_matrices = 0;
  int max_sweeps = -1;  // -1: not reported by the method
  double max_residual = -1;
  index_t failures = 0;
  double relative_error = std::numeric_limits<double>::quiet_NaN();
  std::string note;
};

// Times `reps` calls of `launch(stream)` after `warmup` untimed ones, `prepare()` (untimed,
// synchronous) before each; `launch` queues all its work so that it is done when `stream` is.
template <class Prepare, class Launch>
std::vector<float> time_calls(const Config& c, cudaStream_t stream, Prepare prepare,
                              Launch launch) {
  const EventTimer timer(2);
  std::vector<float> ms;
  for (int r = 0; r < c.warmup + c.reps; ++r) {
    prepare();
    const float elapsed = timer.time_ms(stream, [&] { launch(stream); });
    if (r >= c.warmup) ms.push_back(elapsed);
  }
  return ms;
}

// One stream per lane with its own cuSOLVER and cuBLAS handles, gesvdj parameters and workspace.
template <class T>
struct Lane {
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;
  cusolverDnHandle_t solver = nullptr;
  cublasHandle_t blas = nullptr;
  gesvdjInfo_t params = nullptr;
  DeviceArray<T> work;
  DeviceArray<Real<T>> rwork;
  DeviceArray<T> transposed;  // gesvd of a wide matrix runs on its conjugate transpose

  Lane() {
    SHIFTOP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    SHIFTOP_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    SHIFTOP_CUDA_CHECK(cusolverDnCreate(&solver));
    SHIFTOP_CUDA_CHECK(cusolverDnSetStream(solver, stream));
    SHIFTOP_CUDA_CHECK(cublasCreate(&blas));
    SHIFTOP_CUDA_CHECK(cublasSetStream(blas, stream));
    SHIFTOP_CUDA_CHECK(cusolverDnCreateGesvdjInfo(&params));  // cuSOLVER's defaults
  }
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;
  ~Lane() {
    cusolverDnDestroyGesvdjInfo(params);
    cublasDestroy(blas);
    cusolverDnDestroy(solver);
    cudaEventDestroy(done);
    cudaStreamDestroy(stream);
  }
};

// The batch on the device (`pristine`, never written), the working copy cuSOLVER overwrites, and
// the outputs of the method being run.
template <class T>
struct Problem {
  const Config& c;
  index_t r;
  DeviceArray<T> pristine, scratch;
  DeviceArray<Real<T>> sigma;
  DeviceArray<T> u, v;
  DeviceArray<int> info;

  Problem(const Config& config, index_t rank) : c(config), r(rank) {}
  std::size_t matrix_size() const { return static_cast<std::size_t>(c.m * c.n); }
  // cudaMemcpy between device buffers returns before the copy is done, and the methods' streams
  // do not wait for the legacy stream: hence the synchronisations after every upload and copy.
  void restore(index_t count) const {
    SHIFTOP_CUDA_CHECK(cudaMemcpy(scratch.get(), pristine.get(), count * matrix_size() * sizeof(T),
                                  cudaMemcpyDeviceToDevice));
    SHIFTOP_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void upload(const std::vector<T>& host) {
    pristine = DeviceArray<T>(host.size());
    SHIFTOP_CUDA_CHECK(
        cudaMemcpy(pristine.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
    SHIFTOP_CUDA_CHECK(cudaDeviceSynchronize());
  }
  std::vector<Real<T>> sigma_of(index_t b) const {
    std::vector<Real<T>> s(static_cast<std::size_t>(r));
    SHIFTOP_CUDA_CHECK(
        cudaMemcpy(s.data(), sigma.get() + b * r, r * sizeof(Real<T>), cudaMemcpyDeviceToHost));
    return s;
  }
  index_t failed(index_t count) const {
    std::vector<int> host(static_cast<std::size_t>(count));
    SHIFTOP_CUDA_CHECK(
        cudaMemcpy(host.data(), info.get(), count * sizeof(int), cudaMemcpyDeviceToHost));
    return std::count_if(host.begin(), host.end(), [](int i) { return i != 0; });
  }
};

template <class T>
Outcome run_shiftop(Problem<T>& p) {
  const Config& c = p.c;
  auto context = shiftop::gpu::Context::create(0);
  const auto stream = static_cast<cudaStream_t>(context->stream());
  shiftop::svd::JacobiOptions options;
  options.compute_u = options.compute_v = c.vectors;
  options.variant = c.variant;
  options.block_width = c.block_width;
  p.sigma = DeviceArray<Real<T>>(c.batch * p.r);
  p.u = DeviceArray<T>(c.vectors ? c.batch * c.m * p.r : 0);
  p.v = DeviceArray<T>(c.vectors ? c.batch * c.n * p.r : 0);
  const shiftop::svd::DeviceJacobiOutput<T> out{p.sigma.get(), p.u.get(), p.v.get()};
  std::vector<shiftop::svd::JacobiStats> stats;
  Outcome o{"shiftop"};
  o.timed_matrices = c.batch;
  o.ms = time_calls(
      c, stream, [] {},
      [&](cudaStream_t) {
        stats = shiftop::svd::jacobi_batched_device(*context, p.pristine.get(), c.batch, c.m, c.n,
                                                    c.m, c.m * c.n, out, options);
      });
  o.max_sweeps = 0;
  for (const auto& s : stats) {
    o.max_sweeps = std::max(o.max_sweeps, s.sweeps);
    o.failures += s.converged ? 0 : 1;
  }
  return o;
}

template <class T>
Outcome run_gesvdj_batched(Problem<T>& p, Lane<T>& lane) {
  const Config& c = p.c;
  const int m = static_cast<int>(c.m), n = static_cast<int>(c.n), batch = static_cast<int>(c.batch);
  const auto jobz = c.vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  // U (m x m) and V (n x n) per matrix are referenced whatever jobz says.
  p.sigma = DeviceArray<Real<T>>(c.batch * p.r);
  p.u = DeviceArray<T>(c.batch * c.m * c.m);
  p.v = DeviceArray<T>(c.batch * c.n * c.n);
  p.info = DeviceArray<int>(c.batch);
  int lwork = 0;
  SHIFTOP_CUDA_CHECK(Cuda<T>::batched_size(lane.solver, jobz, m, n, device(p.scratch.get()), m,
                                           p.sigma.get(), device(p.u.get()), m, device(p.v.get()),
                                           n, &lwork, lane.params, batch));
  lane.work = DeviceArray<T>(static_cast<std::size_t>(lwork));
  Outcome o{"gesvdj_batched"};
  o.timed_matrices = c.batch;
  o.ms = time_calls(
      c, lane.stream, [&] { p.restore(c.batch); },
      [&](cudaStream_t) {
        int query = 0;
        SHIFTOP_CUDA_CHECK(Cuda<T>::batched_size(lane.solver, jobz, m, n, device(p.scratch.get()),
                                                 m, p.sigma.get(), device(p.u.get()), m,
                                                 device(p.v.get()), n, &query, lane.params, batch));
        SHIFTOP_CUDA_CHECK(Cuda<T>::batched(lane.solver, jobz, m, n, device(p.scratch.get()), m,
                                            p.sigma.get(), device(p.u.get()), m, device(p.v.get()),
                                            n, device(lane.work.get()), lwork, p.info.get(),
                                            lane.params, batch));
      });
  o.failures = p.failed(c.batch);
  o.note = "cuSOLVER's defaults (tolerance eps, 100 sweeps); sweeps not reported for batches";
  return o;
}

// cuSOLVER's one-matrix SVDs: QR iteration (gesvd), Jacobi (gesvdj), and the approximate gesvda
// (Gram-based; on a batch of one here, so a matrix at a time like the others).
enum class Solver { Gesvd, Gesvdj, Gesvda };
const char* name_of(Solver solver) {
  return solver == Solver::Gesvd ? "gesvd" : solver == Solver::Gesvdj ? "gesvdj" : "gesvda";
}

// gesvd, gesvdj or gesvda on each of the first `count` matrices, matrix b on lane b % lanes.
// Starts after the work queued on `main` and queues on `main` the wait for every lane.
template <class T>
class PerMatrix {
 public:
  PerMatrix(Problem<T>& p, std::vector<Lane<T>>& lanes, Solver solver, index_t count)
      : p_(p), lanes_(lanes), jacobi_(solver == Solver::Gesvdj), solver_(solver), count_(count) {
    const Config& c = p.c;
    wide_ = !jacobi_ && c.m < c.n;  // gesvd and gesvda need m >= n
    rows_ = wide_ ? c.n : c.m;
    cols_ = wide_ ? c.m : c.n;
    p.sigma = DeviceArray<Real<T>>(count * p.r);
    // Economy-size vectors (gesvd: U rows_ x r and V^H r x cols_; gesvdj: U m x r and V n x r).
    // (gesvda refers to U and V also for values only: cuSOLVER's internal error 7 without them)
    const bool vectors = c.vectors || solver == Solver::Gesvda;
    p.u = DeviceArray<T>(vectors ? count * rows_ * p.r : 1);
    p.v = DeviceArray<T>(vectors ? count * cols_ * p.r : 1);
    p.info = DeviceArray<int>(count);
    SHIFTOP_CUDA_CHECK(cudaEventCreate(&start_));
    for (auto& lane : lanes) {
      lane.work = DeviceArray<T>(static_cast<std::size_t>(query(lane)));
      lane.rwork = DeviceArray<Real<T>>(std::max<index_t>(1, p.r - 1));
      lane.transposed = DeviceArray<T>(wide_ ? p.matrix_size() : 0);
    }
  }
  PerMatrix(const PerMatrix&) = delete;
  PerMatrix& operator=(const PerMatrix&) = delete;
  ~PerMatrix() { cudaEventDestroy(start_); }

  void launch(cudaStream_t main) {
    SHIFTOP_CUDA_CHECK(cudaEventRecord(start_, main));
    for (auto& lane : lanes_) {
      SHIFTOP_CUDA_CHECK(cudaStreamWaitEvent(lane.stream, start_));
      query(lane);  // part of the call, as a user runs it
    }
    for (index_t b = 0; b < count_; ++b)
      solve(lanes_[b % static_cast<index_t>(lanes_.size())], b);
    for (auto& lane : lanes_) {
      SHIFTOP_CUDA_CHECK(cudaEventRecord(lane.done, lane.stream));
      SHIFTOP_CUDA_CHECK(cudaStreamWaitEvent(main, lane.done));
    }
  }

  /// gesvdj on matrix b alone (its input restored), then its sweeps and residual.
  std::pair<int, double> jacobi_report(index_t b) {
    Lane<T>& lane = lanes_.front();
    SHIFTOP_CUDA_CHECK(cudaMemcpy(p_.scratch.get() + b * p_.matrix_size(),
                                  p_.pristine.get() + b * p_.matrix_size(),
                                  p_.matrix_size() * sizeof(T), cudaMemcpyDeviceToDevice));
    SHIFTOP_CUDA_CHECK(cudaDeviceSynchronize());
    solve(lane, b);
    SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(lane.stream));
    int sweeps = 0;
    double residual = 0;
    SHIFTOP_CUDA_CHECK(cusolverDnXgesvdjGetSweeps(lane.solver, lane.params, &sweeps));
    SHIFTOP_CUDA_CHECK(cusolverDnXgesvdjGetResidual(lane.solver, lane.params, &residual));
    return {sweeps, residual};
  }

 private:
  int query(Lane<T>& lane) const {
    const Config& c = p_.c;
    int lwork = 0;
    if (jacobi_) {
      SHIFTOP_CUDA_CHECK(Cuda<T>::gesvdj_size(lane.solver, jobz(), 1, int(c.m), int(c.n),
                                              device(p_.scratch.get()), int(c.m), p_.sigma.get(),
                                              device(p_.u.get()), int(c.m), device(p_.v.get()),
                                              int(c.n), &lwork, lane.params));
    } else if (solver_ == Solver::Gesvda) {
      SHIFTOP_CUDA_CHECK(Cuda<T>::gesvda_size(
          lane.solver, jobz(), int(cols_), int(rows_), int(cols_), device(p_.scratch.get()),
          int(rows_), rows_ * cols_, p_.sigma.get(), cols_, device(p_.u.get()), int(rows_),
          rows_ * cols_, device(p_.v.get()), int(cols_), cols_ * cols_, &lwork, 1));
    } else {
      SHIFTOP_CUDA_CHECK(Cuda<T>::gesvd_size(lane.solver, int(rows_), int(cols_), &lwork));
    }
    return lwork;
  }
  cusolverEigMode_t jobz() const {
    return p_.c.vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  }

  void solve(Lane<T>& lane, index_t b) {
    const Config& c = p_.c;
    const index_t r = p_.r;
    T* a = p_.scratch.get() + b * p_.matrix_size();
    Real<T>* s = p_.sigma.get() + b * r;
    const bool vectors = c.vectors || solver_ == Solver::Gesvda;
    T* u = vectors ? p_.u.get() + b * rows_ * r : p_.u.get();
    T* v = vectors ? p_.v.get() + b * cols_ * r : p_.v.get();
    const int lwork = static_cast<int>(lane.work.size());
    if (jacobi_) {
      SHIFTOP_CUDA_CHECK(Cuda<T>::gesvdj(
          lane.solver, jobz(), 1, int(c.m), int(c.n), device(a), int(c.m), s, device(u), int(c.m),
          device(v), int(c.n), device(lane.work.get()), lwork, p_.info.get() + b, lane.params));
      return;
    }
    if (wide_) {  // A^H (n x m) into the lane's buffer: the singular values are A's
      const T one(1), zero(0);
      SHIFTOP_CUDA_CHECK(Cuda<T>::geam(lane.blas, Cuda<T>::adjoint, CUBLAS_OP_N, int(c.n), int(c.m),
                                       device(&one), device(a), int(c.m), device(&zero),
                                       device(lane.transposed.get()), int(c.n),
                                       device(lane.transposed.get()), int(c.n)));
      a = lane.transposed.get();
    }
    if (solver_ == Solver::Gesvda) {  // full rank; U rows_ x r, V cols_ x r
      double residual_norm = 0;
      SHIFTOP_CUDA_CHECK(Cuda<T>::gesvda(
          lane.solver, jobz(), int(cols_), int(rows_), int(cols_), device(a), int(rows_),
          rows_ * cols_, s, cols_, device(u), int(rows_), rows_ * cols_, device(v), int(cols_),
          cols_ * cols_, device(lane.work.get()), lwork, p_.info.get() + b, &residual_norm, 1));
      return;
    }
    const signed char job = c.vectors ? 'S' : 'N';
    SHIFTOP_CUDA_CHECK(Cuda<T>::gesvd(lane.solver, job, job, int(rows_), int(cols_), device(a),
                                      int(rows_), s, device(u), int(rows_), device(v), int(r),
                                      device(lane.work.get()), lwork, lane.rwork.get(),
                                      p_.info.get() + b));
  }

  Problem<T>& p_;
  std::vector<Lane<T>>& lanes_;
  bool jacobi_;
  Solver solver_;
  bool wide_ = false;
  index_t count_, rows_ = 0, cols_ = 0;
  cudaEvent_t start_ = nullptr;
};

template <class T>
Outcome run_per_matrix(Problem<T>& p, std::vector<Lane<T>>& lanes, Solver solver, index_t count,
                       const std::vector<index_t>& samples) {
  const Config& c = p.c;
  const bool jacobi = solver == Solver::Gesvdj;
  cudaStream_t main = nullptr;
  SHIFTOP_CUDA_CHECK(cudaStreamCreateWithFlags(&main, cudaStreamNonBlocking));
  PerMatrix<T> runner(p, lanes, solver, count);
  Outcome o{name_of(solver)};
  o.timed_matrices = count;
  o.ms = time_calls(
      c, main, [&] { p.restore(count); }, [&](cudaStream_t s) { runner.launch(s); });
  const float scale = static_cast<float>(c.batch) / static_cast<float>(count);
  for (float& t : o.ms)
    t *= scale;
  o.failures = p.failed(count);
  if (jacobi) {  // sigma is unchanged by the reruns
    o.max_sweeps = 0;
    o.max_residual = 0;
    for (index_t b : samples) {
      const auto [sweeps, residual] = runner.jacobi_report(b);
      o.max_sweeps = std::max(o.max_sweeps, sweeps);
      o.max_residual = std::max(o.max_residual, residual);
    }
    o.note =
        "cuSOLVER's defaults (tolerance eps, 100 sweeps); sweeps and residual over the samples";
  }
  if (count < c.batch)
    o.note += (o.note.empty() ? "" : "; ") + std::string("time of the first ") +
              std::to_string(count) + " matrices scaled to the batch";
  SHIFTOP_CUDA_CHECK(cudaStreamDestroy(main));
  return o;
}

// The reference singular values of the sampled matrices, in FP64 from the same (rounded) entries.
template <class T>
std::vector<std::vector<double>> reference_sigma(const Config& c, const std::vector<T>& a,
                                                 const std::vector<index_t>& samples) {
  using W = Wide<T>;
  const auto size = static_cast<std::size_t>(c.m * c.n);
  const auto k = static_cast<index_t>(samples.size());
  const index_t r = std::min(c.m, c.n);
  std::vector<W> wide(static_cast<std::size_t>(k) * size);
  for (index_t j = 0; j < k; ++j)
    std::transform(a.begin() + samples[j] * size, a.begin() + (samples[j] + 1) * size,
                   wide.begin() + j * size, [](T x) { return static_cast<W>(x); });
  std::vector<double> sigma;
  if (c.reference == "cpu") {
    sigma = shiftop::svd::jacobi_batched(wide.data(), k, c.m, c.n, c.m, c.m * c.n).sigma;
  } else {  // cuSOLVER's gesvd in FP64, one stream
    Config fp64 = c;
    fp64.batch = k;
    fp64.vectors = false;
    Problem<W> p{fp64, r};
    p.upload(wide);
    p.scratch = DeviceArray<W>(wide.size());
    p.restore(k);
    std::vector<Lane<W>> lanes(1);
    PerMatrix<W> runner(p, lanes, Solver::Gesvd, k);
    runner.launch(lanes.front().stream);
    SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(lanes.front().stream));
    if (p.failed(k) != 0) throw std::runtime_error("the FP64 gesvd reference did not converge");
    sigma.resize(static_cast<std::size_t>(k * r));
    SHIFTOP_CUDA_CHECK(cudaMemcpy(sigma.data(), p.sigma.get(), sigma.size() * sizeof(double),
                                  cudaMemcpyDeviceToHost));
  }
  std::vector<std::vector<double>> out;
  for (index_t j = 0; j < k; ++j)
    out.emplace_back(sigma.begin() + j * r, sigma.begin() + (j + 1) * r);
  return out;
}

template <class T>
double relative_error(const Problem<T>& p, const std::vector<index_t>& samples,
                      const std::vector<std::vector<double>>& reference) {
  double worst = 0;
  for (std::size_t j = 0; j < samples.size(); ++j) {
    const auto s = p.sigma_of(samples[j]);
    for (std::size_t i = 0; i < s.size(); ++i) {
      const double exact = reference[j][i], error = std::abs(double(s[i]) - exact);
      worst = std::max(worst, exact > 0   ? error / exact
                              : error > 0 ? std::numeric_limits<double>::infinity()
                                          : 0.0);
    }
  }
  return worst;
}

template <class T>
nlohmann::json run(const Config& c) {
  const std::vector<T> host = make_batch<T>(c);
  Problem<T> p{c, std::min(c.m, c.n)};
  p.upload(host);
  const bool per_matrix = std::any_of(c.methods.begin(), c.methods.end(), [](const auto& m) {
    return m == "gesvdj" || m == "gesvd" || m == "gesvda";
  });
  const bool overwrites = per_matrix || std::count(c.methods.begin(), c.methods.end(),
                                                   std::string("gesvdj_batched")) > 0;
  const index_t timed =
      per_matrix && c.timed_matrices > 0 ? std::min(c.timed_matrices, c.batch) : c.batch;
  if (overwrites) p.scratch = DeviceArray<T>(host.size());

  // Samples spread over the matrices every method solved.
  std::vector<index_t> samples;
  const index_t k = std::min<index_t>(c.samples, timed);
  for (index_t j = 0; j < k; ++j)
    samples.push_back(j * timed / k);
  const auto reference = c.reference == "none" || k == 0 ? std::vector<std::vector<double>>{}
                                                         : reference_sigma(c, host, samples);

  std::vector<Lane<T>> lanes(overwrites ? static_cast<std::size_t>(c.streams) : 0);
  nlohmann::json methods = nlohmann::json::array();
  FILE* human = c.json ? stderr : stdout;
  for (const std::string& method : c.methods) {
    // A method that fails is recorded and the others still run (a sticky CUDA error fails them
    // too, each with its message).
    Outcome o;
    try {
      o = method == "shiftop"          ? run_shiftop(p)
          : method == "gesvdj_batched" ? run_gesvdj_batched(p, lanes.front())
                                       : run_per_matrix(p, lanes,
                                                        method == "gesvdj"   ? Solver::Gesvdj
                                                        : method == "gesvda" ? Solver::Gesvda
                                                                             : Solver::Gesvd,
                                                        timed, samples);
    } catch (const std::exception& e) {
      std::fprintf(human, "%-15s failed: %s\n", method.c_str(), e.what());
      methods.push_back({{"method", method}, {"error", e.what()}});
      continue;
    }
    if (!reference.empty()) o.relative_error = relative_error(p, samples, reference);
    std::vector<float> sorted = o.ms;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2], fastest = sorted.front();
    std::fprintf(human,
                 "%-15s %s %ldx%ld x %ld%s: median %.3f ms, min %.3f ms, rel. error %.2e, "
                 "sweeps %d, failures %ld%s%s\n",
                 o.method.c_str(), c.type.c_str(), long(c.m), long(c.n), long(c.batch),
                 c.vectors ? " +UV" : "", median, fastest, o.relative_error, o.max_sweeps,
                 long(o.failures), o.note.empty() ? "" : "; ", o.note.c_str());
    nlohmann::json entry{{"method", o.method},
                         {"median_ms", median},
                         {"min_ms", fastest},
                         {"times_ms", o.ms},
                         {"timed_matrices", o.timed_matrices},
                         {"failures", o.failures},
                         {"note", o.note}};
    entry["relative_error"] = std::isfinite(o.relative_error) ? nlohmann::json(o.relative_error)
                                                              : nlohmann::json(nullptr);
    entry["max_sweeps"] = o.max_sweeps >= 0 ? nlohmann::json(o.max_sweeps) : nlohmann::json();
    entry["max_residual"] = o.max_residual >= 0 ? nlohmann::json(o.max_residual) : nlohmann::json();
    methods.push_back(entry);
  }
  return {{"samples", k}, {"methods", methods}};
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at <= list.size();) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    out.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  CLI::App app{"Issue 16: shiftop's batched GPU Jacobi SVD against cuSOLVER",
               "bench_jacobi_svd_gpu"};
  std::string methods = "shiftop,gesvdj,gesvd";
  app.add_option("--batch", c.batch, "matrices in the batch")->check(CLI::PositiveNumber);
  app.add_option("--m", c.m, "rows")->check(CLI::PositiveNumber);
  app.add_option("--n", c.n, "columns")->check(CLI::PositiveNumber);
  app.add_option("--type", c.type, "d, s, z or c (LAPACK's letters)")
      ->check(CLI::IsMember({"d", "s", "z", "c"}));
  app.add_option("--methods", methods,
                 "comma-separated: shiftop, gesvdj_batched, gesvdj, gesvd, gesvda");
  std::string variant = "auto";
  app.add_option("--variant", variant,
                 "shiftop's variant: auto, pointwise, block-oriented or full-block")
      ->check(CLI::IsMember({"auto", "pointwise", "block-oriented", "full-block"}));
  app.add_option("--block-width", c.block_width,
                 "shiftop's blocked method: columns per block (0: its choice)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--reps", c.reps, "timed calls per method")->check(CLI::PositiveNumber);
  app.add_option("--warmup", c.warmup, "untimed calls first")->check(CLI::NonNegativeNumber);
  bool values_only = false;  // the default; the flag says so explicitly
  auto* values = app.add_flag("--values-only", values_only, "singular values only (the default)");
  app.add_flag("--vectors", c.vectors, "also U and V (economy size)")->excludes(values);
  app.add_option("--matrix", c.matrix, "random or graded (B D, 12 decades of column scales)")
      ->check(CLI::IsMember({"random", "graded"}));
  app.add_option("--streams", c.streams, "streams (one cuSOLVER handle each) for gesvdj, gesvd")
      ->check(CLI::PositiveNumber);
  app.add_option("--timed-matrices", c.timed_matrices,
                 "gesvdj, gesvd: time the first T matrices and scale to the batch (0: all)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--samples", c.samples, "matrices checked against the reference (0: none)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--reference", c.reference,
                 "cpu (shiftop's FP64 Jacobi on the CPU), gesvd (cuSOLVER's FP64 gesvd) or none")
      ->check(CLI::IsMember({"cpu", "gesvd", "none"}));
  app.add_option("--seed", c.seed, "matrix b is drawn from seed + b");
  app.add_flag("--json", c.json, "one JSON object on stdout (the summaries go to stderr)");
  CLI11_PARSE(app, argc, argv);
  c.methods = split(methods);
  c.variant = shiftop::parse_name<shiftop::svd::Variant>(variant, "--variant");
  for (const std::string& m : c.methods) {
    if (m != "shiftop" && m != "gesvdj_batched" && m != "gesvdj" && m != "gesvd" && m != "gesvda") {
      std::fprintf(stderr,
                   "--methods: unknown method '%s' (expected shiftop, gesvdj_batched, gesvdj, "
                   "gesvd, gesvda)\n",
                   m.c_str());
      return 2;
    }
    if (m == "gesvdj_batched" && (c.m > 32 || c.n > 32)) {
      std::fprintf(stderr, "--methods: gesvdj_batched takes m, n <= 32, got %ld x %ld\n", long(c.m),
                   long(c.n));
      return 2;
    }
  }
  try {
    cudaDeviceProp prop{};
    SHIFTOP_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    nlohmann::json result = c.type == "d"   ? run<double>(c)
                            : c.type == "s" ? run<float>(c)
                            : c.type == "z" ? run<std::complex<double>>(c)
                                            : run<std::complex<float>>(c);
    result["device"] = prop.name;
    result["type"] = c.type;
    result["m"] = c.m;
    result["n"] = c.n;
    result["batch"] = c.batch;
    result["matrix"] = c.matrix;
    result["vectors"] = c.vectors;
    result["streams"] = c.streams;
    result["reps"] = c.reps;
    result["warmup"] = c.warmup;
    result["variant"] = variant;
    result["block_width"] = c.block_width;
    // A test build fills every workspace shiftop allocates with NaN, inside its timed calls.
    result["poisoned_workspaces"] = shiftop::kPoisonWorkspaces;
    result["reference"] = c.reference == "cpu"     ? "shiftop CPU jacobi FP64"
                          : c.reference == "gesvd" ? "cuSOLVER gesvd FP64"
                                                   : "none";
    if (c.json) std::printf("%s\n", result.dump().c_str());
    for (const auto& entry : result["methods"])
      if (entry.contains("error")) return 3;  // the others' results are printed
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_jacobi_svd_gpu: %s\n", e.what());
    return 1;
  }
  return 0;
}
