// The one-sided Jacobi (H)SVD on the GPU (options.backend = Backend::Cuda,
// shiftop/svd/jacobi_gpu.hpp; label gpu, skipped without a device): singular values of graded
// matrices (B D and D B, kappa to 1e14) against the __float128 Jacobi of the same matrix
// (support/quad_reference.hpp) for every strategy, complex and FP32 graded matrices against the
// reference of their real embedding, the HSVD on the thesis' Lambda(3); U and V orthonormal and
// A = U S V^H (hyperbolic: A V = U S, V^H J V = J); the GPU against the CPU driver; a batch bit
// for bit equal to one matrix at a time; tiny, odd, wide, rank-deficient and zero matrices; sizes
// on both sides of the shared-memory limit; the device API (outputs poisoned with NaN, inputs left
// untouched, padded layouts); one matrix and a context of the caller's against a batch on the
// library's shared context; refusals; the empty batch.
//
// Bounds: the CPU suite's (test_relative_accuracy.cpp, test_accuracy_quad.cpp,
// test_jacobi_driver.cpp) times 2, as the GPU sums in another order; set before the first GPU run.
// Every test prints what it measured.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "backend/cuda/device_memory.cuh"
#include "shiftop/gpu/context.hpp"
#include "shiftop/gpu/devices.hpp"
#include "shiftop/svd/jacobi.hpp"
#include "shiftop/svd/jacobi_gpu.hpp"
#include "support/expect_error.hpp"
#include "support/graded_matrices.hpp"
#include "support/jacobi_checks.hpp"
#include "support/prescribed_spectra.hpp"
#include "support/quad_reference.hpp"

namespace {

using shiftop::index_t;
using shiftop::svd::BatchedJacobiResult;
using shiftop::svd::DeviceJacobiOutput;
using shiftop::svd::JacobiOptions;
using shiftop::svd::JacobiStats;
using shiftop::svd::Real;
using shiftop::svd::StrategyKind;
using shiftop::svd::Variant;
using shiftop::testing::orthogonality;
using shiftop::testing::random_entries;
using shiftop::testing::unit_roundoff;
using shiftop::testing::widen;

// Bounds in units of n eps (n: the columns of min(m, n)), the CPU suite's times 2.
constexpr double kGradedValues = 40;   // test_accuracy_quad: 20 n eps (measured <= 7.5)
constexpr double kEmbeddedValues = 4;  // test_relative_accuracy, complex and FP32: 2 n eps
constexpr double kHyperbolic = 32;     // test_relative_accuracy, Lambda(3): 16 n eps
constexpr double kOrthogonality = 12;  // test_relative_accuracy: 6 n eps (measured <= 1.69)
constexpr double kResidual = 8;        // test_relative_accuracy: 4 n eps (measured <= 1.08)
// GPU against CPU, per value relative: the CPU's own bound on random and graded matrices
// (test_relative_accuracy: 8 n eps) plus the GPU's (twice that).
constexpr double kAgainstCpu = 24;

constexpr StrategyKind kStrategies[] = {StrategyKind::ReversedRowCyclicClosest,
                                        StrategyKind::RowCyclicClosest,
                                        StrategyKind::ModifiedModulus};

// The device API's context, the test's own (the host API runs on the library's shared context
// unless given this one).
const std::shared_ptr<shiftop::gpu::Context>& shared_context() {
  static const std::shared_ptr<shiftop::gpu::Context> shared = shiftop::gpu::Context::create(0);
  return shared;
}
const shiftop::gpu::Context& context() {
  return *shared_context();
}

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (shiftop::gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

void cuda_ok(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

/// count elements of T in device memory of the context's GPU (at least one, so that every
/// buffer has an address).
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count) : count_(count), memory_(allocate(count)) {}
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) {
    cuda_ok(cudaMemcpy(get(), host.data(), count_ * sizeof(T), cudaMemcpyHostToDevice),
            "cudaMemcpy to the device");
  }

  T* get() const { return memory_.get(); }
  /// Every byte 0xFF: NaN in every element of a float, double or complex type.
  void poison() { cuda_ok(cudaMemset(get(), 0xFF, count_ * sizeof(T)), "cudaMemset"); }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    cuda_ok(cudaMemcpy(host.data(), get(), count_ * sizeof(T), cudaMemcpyDeviceToHost),
            "cudaMemcpy to the host");
    return host;
  }

 private:
  static shiftop::cuda::DeviceArray<T> allocate(std::size_t count) {
    context().activate();
    return shiftop::cuda::DeviceArray<T>(std::max<std::size_t>(count, 1));
  }

  std::size_t count_;
  shiftop::cuda::DeviceArray<T> memory_;
};

template <class T>
bool is_finite(T x) {
  return std::isfinite(std::real(x)) && std::isfinite(std::imag(x));
}

/// The batch on the GPU through the library's backend choice, on its shared context of GPU 0.
template <class T>
BatchedJacobiResult<T> on_gpu(const std::vector<T>& a, index_t batch, index_t m, index_t n,
                              index_t lda, index_t stride, JacobiOptions options) {
  options.backend = shiftop::Backend::Cuda;
  return shiftop::svd::jacobi_batched(a.data(), batch, m, n, lda, stride, options);
}

template <class T>
BatchedJacobiResult<T> on_cpu(const std::vector<T>& a, index_t batch, index_t m, index_t n,
                              index_t lda, index_t stride, const JacobiOptions& options) {
  return shiftop::svd::jacobi_batched(a.data(), batch, m, n, lda, stride, options);
}

struct Quality {
  double u = 0, v = 0;  // ||U^H U - I||_max, ||V^H V - I||_max
  double residual = 0;  // ||A - U S V^H||_F / ||A||_F (absolute for A = 0)
};

/// The quality of matrix b of a GPU result with U and V, A at a (leading dimension lda).
template <class T>
Quality quality(const T* a, index_t m, index_t n, index_t lda, const BatchedJacobiResult<T>& r,
                index_t b) {
  const index_t k = std::min(m, n);
  const Real<T>* sigma = r.sigma.data() + b * k;
  const T* u = r.u.data() + b * m * k;
  const T* v = r.v.data() + b * n * k;
  Quality q{orthogonality(u, m, k), orthogonality(v, n, k), 0};
  double difference = 0, norm = 0;
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) {
      std::complex<double> usv = 0;
      for (index_t l = 0; l < k; ++l)
        usv += widen(u[i + l * m]) * static_cast<double>(sigma[l]) * std::conj(widen(v[j + l * n]));
      difference += std::norm(widen(a[i + j * lda]) - usv);
      norm += std::norm(widen(a[i + j * lda]));
    }
  q.residual = std::sqrt(norm > 0 ? difference / norm : difference);
  return q;
}

/// Checks the quality of matrix b against the bounds, in units of min(m, n) eps; returns it in
/// those units.
template <class T>
Quality expect_quality(const T* a, index_t m, index_t n, index_t lda,
                       const BatchedJacobiResult<T>& r, index_t b, const std::string& where) {
  const double n_eps = static_cast<double>(std::min(m, n)) * unit_roundoff<T>();
  const Quality q = quality(a, m, n, lda, r, b);
  EXPECT_LT(q.u, kOrthogonality * n_eps) << where << ": U";
  EXPECT_LT(q.v, kOrthogonality * n_eps) << where << ": V";
  EXPECT_LT(q.residual, kResidual * n_eps) << where << ": A - U S V^H";
  return {q.u / n_eps, q.v / n_eps, q.residual / n_eps};
}

/// max_i |s_i - s*_i| / s*_i over the values of matrix b of both results (0 = 0 counts as exact,
/// a nonzero value against 0 as infinitely wrong); in units of min(m, n) eps.
template <class T>
double relative_difference(const BatchedJacobiResult<T>& gpu, const BatchedJacobiResult<T>& cpu,
                           index_t b) {
  const index_t k = std::min(gpu.m, gpu.n);
  double worst = 0;
  for (index_t i = b * k; i < (b + 1) * k; ++i) {
    const double got = gpu.sigma[i], want = cpu.sigma[i];
    if (want == 0)
      worst = std::max(worst, got == 0 ? 0.0 : std::numeric_limits<double>::infinity());
    else
      worst = std::max(worst, std::abs(got - want) / want);
  }
  return worst / (static_cast<double>(k) * unit_roundoff<T>());
}

/// The same batch on the GPU and the CPU: both converged, every value within kAgainstCpu, and
/// with U and V the quality of each GPU matrix. Prints the worst of each; returns the GPU result.
template <class T>
BatchedJacobiResult<T> expect_like_cpu(const std::string& name, const std::vector<T>& a,
                                       index_t batch, index_t m, index_t n, index_t lda,
                                       index_t stride, const JacobiOptions& options) {
  const auto gpu = on_gpu(a, batch, m, n, lda, stride, options);
  const auto cpu = on_cpu(a, batch, m, n, lda, stride, options);
  const index_t k = std::min(m, n);
  const bool sizes =
      gpu.batch == batch && gpu.stats.size() == static_cast<std::size_t>(batch) &&
      gpu.sigma.size() == static_cast<std::size_t>(batch * k) &&
      gpu.u.size() == (options.compute_u ? static_cast<std::size_t>(batch * m * k) : 0) &&
      gpu.v.size() == (options.compute_v ? static_cast<std::size_t>(batch * n * k) : 0);
  EXPECT_TRUE(sizes) << name << ": the result's sizes";
  if (!sizes || batch == 0) return gpu;
  double against_cpu = 0;
  Quality worst;
  for (index_t b = 0; b < batch; ++b) {
    const std::string where = name + ", matrix " + std::to_string(b);
    EXPECT_TRUE(gpu.stats[b].converged) << where;
    EXPECT_TRUE(cpu.stats[b].converged) << where;
    EXPECT_EQ(gpu.stats[b].rank, cpu.stats[b].rank) << where;
    EXPECT_TRUE(std::is_sorted(gpu.sigma.rend() - (b + 1) * k, gpu.sigma.rend() - b * k)) << where;
    const double difference = relative_difference(gpu, cpu, b);
    EXPECT_LT(difference, kAgainstCpu) << where << ": sigma against the CPU";
    against_cpu = std::max(against_cpu, difference);
    if (options.compute_u && options.compute_v) {
      const Quality q = expect_quality(a.data() + b * stride, m, n, lda, gpu, b, where);
      worst = {std::max(worst.u, q.u), std::max(worst.v, q.v),
               std::max(worst.residual, q.residual)};
    }
  }
  std::printf("%s: sigma against the CPU %.2f n eps", name.c_str(), against_cpu);
  if (options.compute_u && options.compute_v)
    std::printf(", U %.2f, V %.2f, residual %.2f n eps", worst.u, worst.v, worst.residual);
  std::printf(" (sweeps %d)\n", gpu.stats.front().sweeps);
  return gpu;
}

// ---------------------------------------------------------------------------------------------
// Relative accuracy against the __float128 reference.

struct GradedCase {
  std::string name;
  index_t m, n;
  std::vector<double> a;  // lda = m
};

// test_accuracy_quad's D B: normal B, rows scaled by 10^(-12 t), t in [0, 1], shuffled.
std::vector<double> row_graded(index_t m, index_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> a(static_cast<std::size_t>(m * n));
  for (double& x : a)
    x = normal(rng);
  std::vector<double> d(static_cast<std::size_t>(m));
  for (index_t i = 0; i < m; ++i)
    d[i] = std::pow(10.0, -12.0 * static_cast<double>(i) / static_cast<double>(m - 1));
  std::shuffle(d.begin(), d.end(), rng);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i)
      a[i + j * m] *= d[i];
  return a;
}

// The matrices (and seeds) of test_accuracy_quad's NextToLapack.GradedMatrices.
std::vector<GradedCase> graded_cases() {
  using shiftop::testing::column_graded_matrix;
  return {{"B D 40x40", 40, 40, column_graded_matrix(40, 40, 12, 1)},
          {"B D 60x33", 60, 33, column_graded_matrix(60, 33, 12, 2)},
          {"D B 40x40", 40, 40, row_graded(40, 40, 3)},
          {"D B 50x31", 50, 31, row_graded(50, 31, 4)}};
}

using GpuRelativeAccuracy = GpuTest;

TEST_F(GpuRelativeAccuracy, GradedEveryStrategy) {
  std::printf("| matrix | strategy | kappa | values / (n eps) | U | V | residual | sweeps |\n");
  for (const GradedCase& c : graded_cases()) {
    const std::vector<double> want =
        shiftop::testing::quad_singular_values(c.a.data(), c.m, c.n, c.m);
    const double n_eps = static_cast<double>(c.n) * unit_roundoff<double>();
    for (StrategyKind strategy : kStrategies) {
      const std::string where = c.name + ", " + std::string(shiftop::name_of(strategy));
      JacobiOptions options{.compute_u = true, .compute_v = true};
      options.strategy = strategy;
      const auto r = on_gpu(c.a, 1, c.m, c.n, c.m, c.m * c.n, options);
      ASSERT_EQ(r.sigma.size(), static_cast<std::size_t>(c.n)) << where;
      EXPECT_TRUE(r.stats[0].converged) << where;
      double values = 0;
      for (index_t i = 0; i < c.n; ++i)
        values = std::max(values, std::abs(r.sigma[i] - want[i]) / want[i]);
      const Quality q = expect_quality(c.a.data(), c.m, c.n, c.m, r, 0, where);
      std::printf("| %s | %s | %.1e | %.2f | %.2f | %.2f | %.2f | %d |\n", c.name.c_str(),
                  std::string(shiftop::name_of(strategy)).c_str(), want.front() / want.back(),
                  values / n_eps, q.u, q.v, q.residual, r.stats[0].sweeps);
      EXPECT_LT(values, kGradedValues * n_eps) << where;
      // Zero would mean the comparison saw the reference twice.
      EXPECT_GT(values, 0.0) << where;
    }
  }
}

// The CPU's test_graded_convergence on the GPU: D B and B D graded to 24 decades, sizes 2 to 64, as
// built and transposed, every strategy, values within the CPU's 16 n eps kappa times 2 and U, V
// orthonormal to 16 n eps times 2. Before the stopping rule counted rotations (not proper ones),
// a sweep of rotations with cos == 1 ended the method early on such matrices.
TEST_F(GpuRelativeAccuracy, GradedTo24DecadesBothOrders) {
  using shiftop::testing::Grading;
  unsigned seed = 1;
  for (const index_t n : {2, 3, 4, 5, 7, 8, 16, 33, 64})
    for (const Grading grading : {Grading::Rows, Grading::Columns})
      for (const double decades : {8.0, 16.0, 24.0}) {
        const std::vector<double> a = shiftop::testing::graded(n, n, grading, decades, seed++);
        const std::vector<double> want = shiftop::testing::graded_reference(a, n, n, grading);
        const double kappa = shiftop::testing::equilibrated_condition(a, n, n, grading);
        const double bound = 2 * 16 * static_cast<double>(n) * unit_roundoff<double>();
        for (const bool transposed : {false, true})
          for (StrategyKind strategy : kStrategies) {
            JacobiOptions options{.compute_u = true, .compute_v = true};
            options.strategy = strategy;
            const std::string where =
                std::to_string(n) + (grading == Grading::Rows ? " D B " : " B D ") +
                std::to_string(decades) + (transposed ? " transposed, " : ", ") +
                std::string(shiftop::name_of(strategy));
            const auto r = on_gpu(transposed ? shiftop::testing::transpose(a, n, n) : a, 1, n, n, n,
                                  n * n, options);
            EXPECT_TRUE(r.stats[0].converged) << where;
            double values = 0;
            for (index_t i = 0; i < n; ++i)
              values = std::max(values, std::abs(r.sigma[i] - want[i]) / want[i]);
            EXPECT_LE(values, bound * kappa) << where;
            EXPECT_LE(shiftop::testing::orthogonality_error(r.u, n, n), bound) << where;
            EXPECT_LE(shiftop::testing::orthogonality_error(r.v, n, n), bound) << where;
          }
      }
}

// Values beyond the type's range (sqrt(6) 1e308 from finite entries) refused as on the CPU.
TEST_F(GpuRelativeAccuracy, ValuesBeyondTheRangeAreRefused) {
  const std::vector<double> a = {1e308, 1e308, 1e308, -1e308, -1e308, -1e308};
  shiftop::testing::expect_error(
      [&] { on_gpu(a, 1, 3, 2, 3, 6, JacobiOptions{}); },
      "a: matrix 0: a singular value exceeds the largest finite float64");
}

// Complex and FP32 graded matrices (12 decades in FP64, 5 in FP32) against the __float128
// reference of their real embedding (each value twice), as test_relative_accuracy does, for
// every strategy.
template <class T>
class GpuGradedAccuracy : public GpuTest {};
using EmbeddedTypes = ::testing::Types<std::complex<double>, std::complex<float>, float>;
TYPED_TEST_SUITE(GpuGradedAccuracy, EmbeddedTypes);

TYPED_TEST(GpuGradedAccuracy, MatchesTheEmbeddingsReference) {
  using T = TypeParam;
  const index_t m = 30, n = 21;
  const double decades = std::is_same_v<Real<T>, double> ? 12 : 5;
  const std::vector<T> a = shiftop::testing::column_graded_matrix<T>(m, n, decades, 7);
  const auto reference = shiftop::testing::embedded_reference(a, m, n);
  ASSERT_LT(reference.pair_difference, 1e-25);
  const std::vector<double>& want = reference.sigma;
  const double n_eps = static_cast<double>(n) * unit_roundoff<T>();
  for (StrategyKind strategy : kStrategies) {
    JacobiOptions options;
    options.strategy = strategy;
    const auto r = on_gpu(a, 1, m, n, m, m * n, options);
    ASSERT_EQ(r.sigma.size(), static_cast<std::size_t>(n));
    EXPECT_TRUE(r.stats[0].converged);
    double worst = 0;
    for (index_t i = 0; i < n; ++i)
      worst = std::max(worst, std::abs(static_cast<double>(r.sigma[i]) - want[i]) / want[i]);
    std::printf("%s %s: max relative error %.2e = %.2f n eps (kappa %.1e)\n",
                ::testing::internal::GetTypeName<T>().c_str(),
                std::string(shiftop::name_of(strategy)).c_str(), worst, worst / n_eps,
                want.front() / want.back());
    EXPECT_LT(worst, kEmbeddedValues * n_eps) << shiftop::name_of(strategy);
    EXPECT_GT(worst, 0.0) << shiftop::name_of(strategy);
  }
}

// The hyperbolic SVD on the thesis' indefinite Lambda(3) = +-uniform(1e-7, 10), as
// test_relative_accuracy builds it: sigma_i^2 J_ii against the prescribed eigenvalues of G J G^T.
// n = 48 on the one-block path (Auto) and on the blocked one (blocks of 5: both parts end in a
// padded block), n = 192 on the blocked path Auto takes there (G is beyond a block's shared
// memory), with its default width.
void expect_lambda3(index_t n, Variant variant, index_t width, StrategyKind strategy) {
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> magnitude(1e-7, 10.0);
  std::vector<double> lambda(static_cast<std::size_t>(n));
  for (double& x : lambda)
    x = (rng() & 1 ? -1.0 : 1.0) * magnitude(rng);
  const shiftop::testing::JFactor f = shiftop::testing::j_factor_of_spectrum(lambda, 18);
  std::vector<double> plus, minus;  // |lambda| per sign, descending: the order of the result
  for (double x : lambda)
    (x > 0 ? plus : minus).push_back(std::abs(x));
  ASSERT_EQ(static_cast<index_t>(plus.size()), f.n_plus);
  std::sort(plus.begin(), plus.end(), std::greater<>());
  std::sort(minus.begin(), minus.end(), std::greater<>());
  plus.insert(plus.end(), minus.begin(), minus.end());
  const double n_eps = static_cast<double>(n) * unit_roundoff<double>();
  JacobiOptions options;
  options.n_plus = f.n_plus;
  options.strategy = strategy;
  options.variant = variant;
  options.block_width = width;
  const std::string where = "n " + std::to_string(n) + ", " +
                            std::string(shiftop::name_of(variant)) + ", " +
                            std::string(shiftop::name_of(strategy));
  const auto r = on_gpu(f.g, 1, n, n, n, n * n, options);
  ASSERT_EQ(r.sigma.size(), static_cast<std::size_t>(n));
  EXPECT_TRUE(r.stats[0].converged) << where;
  double worst = 0;
  for (index_t i = 0; i < n; ++i)
    worst = std::max(worst, std::abs(r.sigma[i] * r.sigma[i] - plus[i]) / plus[i]);
  std::printf(
      "HSVD Lambda(3) %s: %d sweeps, max |sigma^2 - |lambda|| / |lambda| = %.2e = %.2f n "
      "eps\n",
      where.c_str(), r.stats[0].sweeps, worst, worst / n_eps);
  EXPECT_LT(worst, kHyperbolic * n_eps) << where;
  EXPECT_GT(worst, 0.0) << where;
}

TEST_F(GpuRelativeAccuracy, HyperbolicLambda3) {
  for (StrategyKind strategy : kStrategies) {
    expect_lambda3(48, Variant::Auto, 0, strategy);
    expect_lambda3(48, Variant::BlockOriented, 5, strategy);
    expect_lambda3(48, Variant::FullBlock, 5, strategy);
  }
  JacobiOptions hsvd;
  hsvd.n_plus = 96;
  ASSERT_TRUE(shiftop::svd::GpuPlan<double>(context(), 1, 192, 192, hsvd).blocked());
  expect_lambda3(192, Variant::Auto, 0, StrategyKind::ReversedRowCyclicClosest);
}

// ---------------------------------------------------------------------------------------------
// Every type: against the CPU driver, batches, shapes.

template <class T>
class GpuJacobi : public GpuTest {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(GpuJacobi, Types);

// Random tall and wide batches and a graded matrix, every strategy, with U and V.
TYPED_TEST(GpuJacobi, MatchesTheCpu) {
  using T = TypeParam;
  for (StrategyKind strategy : kStrategies) {
    JacobiOptions options{.compute_u = true, .compute_v = true};
    options.strategy = strategy;
    const std::string name(shiftop::name_of(strategy));
    expect_like_cpu(name + ", 37x29 batch 4", random_entries<T>(4 * 37 * 29, 1), 4, 37, 29, 37,
                    37 * 29, options);
    expect_like_cpu(name + ", 23x31 batch 2", random_entries<T>(2 * 23 * 31, 2), 2, 23, 31, 23,
                    23 * 31, options);
    const double decades = std::is_same_v<Real<T>, double> ? 12 : 5;
    expect_like_cpu(name + ", B D 40x33",
                    shiftop::testing::column_graded_matrix<T>(40, 33, decades, 3), 1, 40, 33, 40,
                    40 * 33, options);
  }
}

// A hyperbolic SVD on the GPU: each sign part descending, A V = U S with U orthonormal, V^H J V =
// J, the values against the CPU's (the same options). V is not orthogonal: its errors scale with
// ||V||_max^2, as in test_jacobi_driver (whose bounds in eps = 2 unit roundoffs, times 2, are used
// here).
template <class T>
void expect_hyperbolic(const std::string& where, index_t m, index_t n, const JacobiOptions& options,
                       unsigned seed) {
  const double eps = 2 * unit_roundoff<T>();
  const index_t n_plus = options.n_plus;
  const std::vector<T> a = random_entries<T>(m * n, seed);
  const auto r = on_gpu(a, 1, m, n, m, m * n, options);
  const auto cpu = on_cpu(a, 1, m, n, m, m * n, options);
  ASSERT_EQ(r.sigma.size(), static_cast<std::size_t>(n)) << where;
  ASSERT_EQ(r.u.size(), static_cast<std::size_t>(m * n)) << where;
  ASSERT_EQ(r.v.size(), static_cast<std::size_t>(n * n)) << where;
  EXPECT_TRUE(r.stats[0].converged) << where;
  EXPECT_TRUE(std::is_sorted(r.sigma.rend() - n_plus, r.sigma.rend())) << where;
  EXPECT_TRUE(std::is_sorted(r.sigma.rbegin(), r.sigma.rend() - n_plus)) << where;
  const auto [residual, j_error, v_norm] = shiftop::testing::hyperbolic_errors(
      a.data(), m, n, r.sigma.data(), r.u.data(), r.v.data(), n_plus);
  double against_cpu = 0;
  for (index_t i = 0; i < n; ++i)
    against_cpu = std::max(against_cpu, std::abs(static_cast<double>(r.sigma[i] - cpu.sigma[i])) /
                                            static_cast<double>(cpu.sigma[i]));
  const double u_error = orthogonality(r.u.data(), m, n);
  std::printf(
      "HSVD %s: %d sweeps, residual %.2f, V^H J V - J %.2f, U %.2f eps (||V||_max^2 %.1f); sigma "
      "against the CPU %.2f n eps\n",
      where.c_str(), r.stats[0].sweeps, residual / eps, j_error / eps, u_error / eps, v_norm,
      against_cpu / (static_cast<double>(n) * unit_roundoff<T>()));
  EXPECT_LE(residual, 80 * eps * (1 + v_norm)) << where;
  EXPECT_LE(j_error, 200 * eps * (1 + v_norm)) << where;
  EXPECT_LE(u_error, 80 * eps) << where;
  EXPECT_LT(against_cpu, kAgainstCpu * static_cast<double>(n) * unit_roundoff<T>() * (1 + v_norm))
      << where;
}

// The hyperbolic SVD on the one-block path: tall (QR without pivoting on the GPU), square (no
// preprocessing) and tall unpreprocessed.
TYPED_TEST(GpuJacobi, HyperbolicStructure) {
  for (const auto& [m, n, n_plus, preprocess] :
       {std::tuple<index_t, index_t, index_t, bool>{26, 19, 8, true},
        {19, 19, 7, true},
        {26, 19, 8, false}}) {
    JacobiOptions options{.compute_u = true, .compute_v = true, .n_plus = n_plus};
    options.preprocess = preprocess;
    expect_hyperbolic<TypeParam>(std::to_string(m) + "x" + std::to_string(n) + " n_plus " +
                                     std::to_string(n_plus) + " preprocess " +
                                     std::to_string(preprocess),
                                 m, n, options, 21);
  }
}

// The hyperbolic SVD on the blocked path (svd/cuda/blocked_method.hpp: J's parts in blocks of
// their own): both parts ending in a padded block and an odd block count (9 + 14 columns in
// blocks of 4: 3 + 4 blocks and a zero block), a square matrix, one positive column, J = -I and
// J = I; both variants.
TYPED_TEST(GpuJacobi, HyperbolicStructureBlocked) {
  unsigned seed = 90;
  for (const auto& [m, n, n_plus, width] :
       {std::tuple<index_t, index_t, index_t, index_t>{40, 23, 9, 4},
        {23, 23, 12, 5},
        {33, 20, 1, 3},
        {30, 17, 0, 4},
        {30, 17, 17, 4}})
    for (const Variant variant : {Variant::BlockOriented, Variant::FullBlock}) {
      JacobiOptions options{.compute_u = true, .compute_v = true, .n_plus = n_plus};
      options.variant = variant;
      options.block_width = width;
      expect_hyperbolic<TypeParam>(std::to_string(m) + "x" + std::to_string(n) + " n_plus " +
                                       std::to_string(n_plus) + " width " + std::to_string(width) +
                                       ", " + std::string(shiftop::name_of(variant)),
                                   m, n, options, seed++);
    }
}

// Five different matrices in one batch (padded: lda > m, stride > lda n; one with a zero column,
// completed on the host) against five calls with a batch of one: each matrix is one independent
// thread block, so the results are the same bit for bit. Tall and wide.
TYPED_TEST(GpuJacobi, BatchedEqualsOneAtATime) {
  using T = TypeParam;
  const index_t batch = 5;
  for (const auto& [m, n] : {std::pair<index_t, index_t>{40, 27}, {19, 31}}) {
    const index_t lda = m + 3, stride = lda * n + 5;
    std::vector<T> a = random_entries<T>(batch * stride, 9);
    // Matrix 3 gets rank min(m, n) - 1: a zero column when tall, a zero row when wide.
    for (index_t e = 0; e < (m >= n ? m : n); ++e)
      a[3 * stride + (m >= n ? e + 4 * lda : 4 + e * lda)] = T(0);
    const JacobiOptions options{.compute_u = true, .compute_v = true};
    const auto all = on_gpu(a, batch, m, n, lda, stride, options);
    const index_t k = std::min(m, n);
    ASSERT_EQ(all.sigma.size(), static_cast<std::size_t>(batch * k));
    ASSERT_EQ(all.u.size(), static_cast<std::size_t>(batch * m * k));
    ASSERT_EQ(all.v.size(), static_cast<std::size_t>(batch * n * k));
    EXPECT_EQ(all.stats[3].rank, k - 1);
    for (index_t b = 0; b < batch; ++b) {
      const std::vector<T> one_matrix(a.begin() + b * stride, a.begin() + b * stride + lda * n);
      const auto one = on_gpu(one_matrix, 1, m, n, lda, lda * n, options);
      const std::string where =
          std::to_string(m) + "x" + std::to_string(n) + ", matrix " + std::to_string(b);
      EXPECT_TRUE(std::equal(one.sigma.begin(), one.sigma.end(), all.sigma.begin() + b * k))
          << where;
      EXPECT_TRUE(std::equal(one.u.begin(), one.u.end(), all.u.begin() + b * m * k)) << where;
      EXPECT_TRUE(std::equal(one.v.begin(), one.v.end(), all.v.begin() + b * n * k)) << where;
      EXPECT_EQ(one.stats[0].sweeps, all.stats[b].sweeps) << where;
      EXPECT_EQ(one.stats[0].rotations, all.stats[b].rotations) << where;
      EXPECT_EQ(one.stats[0].proper_rotations, all.stats[b].proper_rotations) << where;
      EXPECT_EQ(one.stats[0].rank, all.stats[b].rank) << where;
      EXPECT_TRUE(all.stats[b].converged) << where;
    }
  }
}

// Each matrix is scaled by the power of two that brings its largest entry into [1, 2), exactly:
// the same matrix times 2^k (k = -560, about 1e-169, and +900 in FP64; -100 and +100 in FP32,
// no entry subnormal),
// tall and wide, gives sigma times 2^k and the same U and V, bit for bit (before, a 1e-170 FP64
// matrix gave sigma = 0). Also U alone and V alone equal those of both, bit for bit.
TYPED_TEST(GpuJacobi, ScaledCopiesAndSingleVectors) {
  using T = TypeParam;
  using R = Real<T>;
  const bool fp32 = std::is_same_v<R, float>;
  for (const auto& [m, n] : {std::pair<index_t, index_t>{37, 23}, {23, 37}}) {
    const std::vector<T> a = random_entries<T>(2 * m * n, 60);
    const JacobiOptions both{.compute_u = true, .compute_v = true};
    const auto reference = on_gpu(a, 2, m, n, m, m * n, both);
    for (const int k : {fp32 ? -100 : -560, fp32 ? 100 : 900}) {
      std::vector<T> scaled(a);
      for (T& x : scaled)
        x *= std::ldexp(R(1), k);
      const auto r = on_gpu(scaled, 2, m, n, m, m * n, both);
      const std::string where =
          std::to_string(m) + "x" + std::to_string(n) + " times 2^" + std::to_string(k);
      ASSERT_EQ(r.sigma.size(), reference.sigma.size()) << where;
      for (std::size_t i = 0; i < r.sigma.size(); ++i)
        ASSERT_EQ(r.sigma[i], std::ldexp(reference.sigma[i], k)) << where << ", sigma " << i;
      EXPECT_TRUE(r.u == reference.u) << where << ": U";
      EXPECT_TRUE(r.v == reference.v) << where << ": V";
      EXPECT_TRUE(r.stats[0].converged && r.stats[1].converged) << where;
    }
    const auto u_only = on_gpu(a, 2, m, n, m, m * n, JacobiOptions{.compute_u = true});
    const auto v_only = on_gpu(a, 2, m, n, m, m * n, JacobiOptions{.compute_v = true});
    EXPECT_TRUE(u_only.sigma == reference.sigma && u_only.u == reference.u && u_only.v.empty());
    EXPECT_TRUE(v_only.sigma == reference.sigma && v_only.v == reference.v && v_only.u.empty());
  }
}

// Tiny, odd and wide sizes (wide ones through A^H), a batch of 2 each.
TYPED_TEST(GpuJacobi, OddAndTinySizes) {
  using T = TypeParam;
  unsigned seed = 30;
  for (const auto& [m, n] :
       {std::pair<index_t, index_t>{1, 1}, {2, 1}, {1, 2}, {33, 17}, {17, 33}, {65, 65}}) {
    const JacobiOptions options{.compute_u = true, .compute_v = true};
    const auto r =
        expect_like_cpu(std::to_string(m) + "x" + std::to_string(n),
                        random_entries<T>(2 * m * n, seed++), 2, m, n, m, m * n, options);
    for (const JacobiStats& s : r.stats)
      EXPECT_EQ(s.rank, std::min(m, n));
  }
}

// A 3x3 matrix with a zero column has rank 2 and an exact zero singular value (whose vectors
// complete U and V); a zero matrix has every value 0 and U, V orthonormal all the same.
TYPED_TEST(GpuJacobi, ZeroColumnAndZeroMatrix) {
  using T = TypeParam;
  const JacobiOptions options{.compute_u = true, .compute_v = true};
  std::vector<T> a = random_entries<T>(9, 41);
  for (index_t i = 0; i < 3; ++i)
    a[i + 1 * 3] = T(0);
  const auto r = expect_like_cpu("3x3 with a zero column", a, 1, 3, 3, 3, 9, options);
  EXPECT_EQ(r.stats[0].rank, 2);
  EXPECT_EQ(r.sigma[2], Real<T>(0));
  EXPECT_GT(r.sigma[1], Real<T>(0));

  const double eps = 2 * unit_roundoff<T>();  // test_jacobi_driver's bound 4 eps, times 2
  for (const auto& [m, n] : {std::pair<index_t, index_t>{3, 2}, {2, 3}, {1, 1}, {7, 7}}) {
    const std::vector<T> zero(static_cast<std::size_t>(m * n), T(0));
    const auto z = on_gpu(zero, 1, m, n, m, m * n, options);
    const std::string where = "zero " + std::to_string(m) + "x" + std::to_string(n);
    const index_t k = std::min(m, n);
    ASSERT_EQ(z.sigma.size(), static_cast<std::size_t>(k)) << where;
    EXPECT_EQ(z.stats[0].rank, 0) << where;
    EXPECT_TRUE(z.stats[0].converged) << where;
    for (const Real<T> s : z.sigma)
      EXPECT_EQ(s, Real<T>(0)) << where;
    EXPECT_LT(orthogonality(z.u.data(), m, k), 8 * eps) << where;
    EXPECT_LT(orthogonality(z.v.data(), n, k), 8 * eps) << where;
  }
}

// ---------------------------------------------------------------------------------------------
// Both residencies. Each stage keeps its matrices in shared memory when they fit the opt-in limit
// (Hopper: 227 KiB per block, less 1 KiB for the kernels' own variables) and works in global
// memory otherwise; the results must not tell which.

using GpuResidency = GpuTest;

// 64x64 double with U and V: A (32 KiB) for the QR, G and W (64 KiB) for Jacobi, all shared.
TEST_F(GpuResidency, SharedMemory) {
  const JacobiOptions options{.compute_u = true, .compute_v = true};
  expect_like_cpu("64x64 double, shared", random_entries<double>(2 * 64 * 64, 50), 2, 64, 64, 64,
                  64 * 64, options);
}

// 400x128 double with U and V: the QR's 400x128 (400 KiB) and U' in global memory; G (128 KiB)
// shared, but not with W beside it (256 KiB together): W in global memory. (At 400x120, G and W,
// 225 KiB, would just fit.)
TEST_F(GpuResidency, QrAndRotationsInGlobalMemory) {
  const JacobiOptions options{.compute_u = true, .compute_v = true};
  expect_like_cpu("400x128 double, QR and W global", random_entries<double>(2 * 400 * 128, 51), 2,
                  400, 128, 400, 400 * 128, options);
}

// 130x130 complex<double>: G alone is 264 KiB, so the matrix goes to the blocked method
// (svd/cuda/blocked_method.hpp: blocks of 32 columns, 130 = 4 x 32 + 2, padded to 6 blocks);
// values only and with vectors give the same values within rounding.
TEST_F(GpuResidency, GInGlobalMemory) {
  using T = std::complex<double>;
  const std::vector<T> a = random_entries<T>(2 * 130 * 130, 52);
  const auto values = expect_like_cpu("130x130 complex<double>, values only, G global", a, 2, 130,
                                      130, 130, 130 * 130, JacobiOptions{});
  const auto both =
      expect_like_cpu("130x130 complex<double>, U and V, G and W global", a, 2, 130, 130, 130,
                      130 * 130, JacobiOptions{.compute_u = true, .compute_v = true});
  for (index_t b = 0; b < 2; ++b)
    EXPECT_LT(relative_difference(values, both, b), kAgainstCpu) << "matrix " << b;
}

// Without preprocessing G = A: 300x100 double (234 KiB) in global memory, and W with it; U = X
// and V = W.
TEST_F(GpuResidency, UnpreprocessedInGlobalMemory) {
  JacobiOptions options{.compute_u = true, .compute_v = true};
  options.preprocess = false;
  expect_like_cpu("300x100 double, no preprocessing, G global",
                  random_entries<double>(2 * 300 * 100, 53), 2, 300, 100, 300, 300 * 100, options);
}

// The spectrum's shape: 5000x100 complex<double>, a batch of 3 (QR and U' in global memory, G
// (156 KiB) shared, W global), and its transpose 100x5000 (through A^H): the same singular values.
TEST_F(GpuResidency, SpectrumShapeAndItsTranspose) {
  using T = std::complex<double>;
  const index_t batch = 3, m = 5000, n = 100;
  const std::vector<T> a = random_entries<T>(batch * m * n, 54);
  std::vector<T> transposed(a.size());
  for (index_t b = 0; b < batch; ++b)
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < m; ++i)
        transposed[b * m * n + j + i * n] = a[b * m * n + i + j * m];
  const JacobiOptions options{.compute_u = true, .compute_v = true};
  const auto tall =
      expect_like_cpu("5000x100 complex<double> batch 3", a, batch, m, n, m, m * n, options);
  const auto wide = expect_like_cpu("100x5000 complex<double> batch 3", transposed, batch, n, m, n,
                                    m * n, options);
  for (index_t b = 0; b < batch; ++b)
    EXPECT_LT(relative_difference(wide, tall, b), kAgainstCpu) << "A^T against A, matrix " << b;
}

// The blocked method (cols x cols does not fit one block: many thread blocks per matrix, no QR).
// 256x256 double, a batch of 3 with U and V: blocks of 48 columns, 256 = 5 x 48 + 16.
TEST_F(GpuResidency, BlockedSquareBatch) {
  const JacobiOptions options{.compute_u = true, .compute_v = true};
  expect_like_cpu("256x256 double batch 3, blocked", random_entries<double>(3 * 256 * 256, 55), 3,
                  256, 256, 256, 256 * 256, options);
}

// 1200x300 double with U and V: tall pairs (1200 x 96), shortened to R by their Gram matrix and
// Cholesky (thesis 2.3.1) and multiplied by the rotations afterwards.
TEST_F(GpuResidency, BlockedTall) {
  const JacobiOptions options{.compute_u = true, .compute_v = true};
  expect_like_cpu("1200x300 double, blocked, Gram + Cholesky",
                  random_entries<double>(1200 * 300, 56), 1, 1200, 300, 1200, 1200 * 300, options);
}

// A wide complex<float> 200x700 (A^H: 700 x 200), blocked, every strategy.
TEST_F(GpuResidency, BlockedWideComplexFloat) {
  using T = std::complex<float>;
  const std::vector<T> a = random_entries<T>(2 * 200 * 700, 57);
  for (const StrategyKind kind : {StrategyKind::ReversedRowCyclicClosest,
                                  StrategyKind::RowCyclicClosest, StrategyKind::ModifiedModulus}) {
    JacobiOptions options{.compute_u = true, .compute_v = true};
    options.strategy = kind;
    expect_like_cpu("200x700 complex<float>, blocked, " + std::string(shiftop::name_of(kind)), a, 2,
                    200, 700, 200, 200 * 700, options);
  }
}

// ---------------------------------------------------------------------------------------------
// The device API.

// Device arrays with lda > m and stride > lda n, the padding and the gaps NaN (never read),
// outputs poisoned with NaN: every output entry written, the input's bytes unchanged, the results
// bit for bit those of the host API (which packs the same matrices). Tall and wide.
TYPED_TEST(GpuJacobi, DeviceArrays) {
  using T = TypeParam;
  const index_t batch = 3;
  for (const auto& [m, n] : {std::pair<index_t, index_t>{23, 17}, {17, 23}}) {
    const index_t lda = m + 3, stride = lda * n + 7, k = std::min(m, n);
    std::vector<T> a = random_entries<T>(batch * stride, 60);
    const T nan(std::numeric_limits<Real<T>>::quiet_NaN());
    for (index_t e = 0; e < batch * stride; ++e) {
      const index_t in_matrix = e % stride;
      if (in_matrix >= lda * n || in_matrix % lda >= m) a[e] = nan;
    }
    const std::string where = std::to_string(m) + "x" + std::to_string(n);
    const JacobiOptions options{.compute_u = true, .compute_v = true};
    const auto host = on_gpu(a, batch, m, n, lda, stride, options);

    const DeviceBuffer<T> device_a(a);
    DeviceBuffer<Real<T>> sigma(batch * k);
    DeviceBuffer<T> u(batch * m * k), v(batch * n * k);
    sigma.poison();
    u.poison();
    v.poison();
    // The copy and the poisoning went to the legacy default stream, which the context's
    // non-blocking stream does not wait for by itself.
    context().wait_for(nullptr);
    const std::vector<JacobiStats> stats = shiftop::svd::jacobi_batched_device(
        context(), device_a.get(), batch, m, n, lda, stride,
        DeviceJacobiOutput<T>{sigma.get(), u.get(), v.get()}, options);
    ASSERT_EQ(stats.size(), static_cast<std::size_t>(batch)) << where;
    const std::vector<Real<T>> got_sigma = sigma.download();
    const std::vector<T> got_u = u.download(), got_v = v.download();
    EXPECT_TRUE(std::all_of(got_sigma.begin(), got_sigma.end(), is_finite<Real<T>>)) << where;
    EXPECT_TRUE(std::all_of(got_u.begin(), got_u.end(), is_finite<T>)) << where;
    EXPECT_TRUE(std::all_of(got_v.begin(), got_v.end(), is_finite<T>)) << where;
    EXPECT_TRUE(std::equal(got_sigma.begin(), got_sigma.end(), host.sigma.begin())) << where;
    EXPECT_TRUE(std::equal(got_u.begin(), got_u.end(), host.u.begin())) << where;
    EXPECT_TRUE(std::equal(got_v.begin(), got_v.end(), host.v.begin())) << where;
    for (index_t b = 0; b < batch; ++b) {
      EXPECT_TRUE(stats[b].converged) << where;
      EXPECT_EQ(stats[b].rotations, host.stats[b].rotations) << where;
    }
    const std::vector<T> after = device_a.download();
    EXPECT_EQ(std::memcmp(after.data(), a.data(), a.size() * sizeof(T)), 0)
        << where << ": the input was modified";
  }
}

// svd::jacobi on one matrix with backend Cuda is the batch of one (bit for bit), and a context of
// the caller's (options.gpu.context) gives the results of the library's shared one: the same
// kernels on the same GPU. Tall and wide, with U and V.
TYPED_TEST(GpuJacobi, OneMatrixAndAGivenContext) {
  using T = TypeParam;
  for (const auto& [m, n] : {std::pair<index_t, index_t>{23, 17}, {17, 23}}) {
    const std::vector<T> a = random_entries<T>(m * n, 70);
    const std::string where = std::to_string(m) + "x" + std::to_string(n);
    JacobiOptions options{.compute_u = true, .compute_v = true};
    const auto batch = on_gpu(a, 1, m, n, m, m * n, options);
    options.backend = shiftop::Backend::Cuda;
    const shiftop::svd::JacobiResult<T> one = shiftop::svd::jacobi(a.data(), m, n, m, options);
    EXPECT_TRUE(one.m == m && one.n == n) << where;
    EXPECT_TRUE(one.sigma == batch.sigma) << where;
    EXPECT_TRUE(one.u == batch.u) << where;
    EXPECT_TRUE(one.v == batch.v) << where;
    EXPECT_EQ(one.stats.rotations, batch.stats[0].rotations) << where;
    EXPECT_TRUE(one.stats.converged) << where;
    options.gpu.context = shared_context();
    const auto given = shiftop::svd::jacobi_batched(a.data(), 1, m, n, m, m * n, options);
    EXPECT_TRUE(given.sigma == batch.sigma) << where << ", given context";
    EXPECT_TRUE(given.u == batch.u && given.v == batch.v) << where << ", given context";
  }
}

// ---------------------------------------------------------------------------------------------
// The blocked method with cuBLAS products (svd/cuda/blocked_method.hpp), forced by the variants at
// small sizes so that narrow block columns cross every boundary: a column count that is a multiple
// of the width and one that is not (the last block padded with zero columns), an odd block count
// (a whole zero block added), one column, wide matrices through A^H, batches (the pairs of all
// matrices in one GEMM), every strategy (steps whose idle blocks are paired as fillers), both
// variants (one inner sweep, or to convergence).

using GpuBlockedMethod = GpuTest;

TEST_F(GpuBlockedMethod, EveryRemainderAndShapeLikeTheCpu) {
  struct Case {
    index_t batch, m, n, width;
  };
  unsigned seed = 60;
  for (const Case c :
       {Case{1, 48, 48, 8}, Case{2, 50, 33, 4}, Case{1, 64, 7, 3}, Case{3, 40, 21, 5},
        Case{1, 33, 50, 4}, Case{2, 9, 1, 0}, Case{1, 1, 6, 0}, Case{1, 97, 97, 0}})
    for (const Variant variant : {Variant::BlockOriented, Variant::FullBlock}) {
      JacobiOptions options{.compute_u = true, .compute_v = true};
      options.variant = variant;
      options.block_width = c.width;
      const std::string name = std::to_string(c.batch) + " x " + std::to_string(c.m) + "x" +
                               std::to_string(c.n) + " width " + std::to_string(c.width) + ", " +
                               std::string(shiftop::name_of(variant));
      const std::vector<double> a = random_entries<double>(c.batch * c.m * c.n, seed++);
      expect_like_cpu(name, a, c.batch, c.m, c.n, c.m, c.m * c.n, options);
      const JacobiOptions values{.variant = variant, .block_width = c.width};
      const auto only =
          expect_like_cpu(name + ", values only", a, c.batch, c.m, c.n, c.m, c.m * c.n, values);
      EXPECT_TRUE(only.u.empty() && only.v.empty()) << name;
    }
}

// A small batch with a padded last block (14 = 4 x 3 + 2 columns, 5 blocks, padded to 6): small
// enough for compute-sanitizer's racecheck (scripts/gpu-check --svd-large).
TEST_F(GpuBlockedMethod, SmallBatch) {
  JacobiOptions options{.compute_u = true, .compute_v = true};
  options.variant = Variant::BlockOriented;
  options.block_width = 3;
  expect_like_cpu("2 x 20x14 width 3", random_entries<double>(2 * 20 * 14, 77), 2, 20, 14, 20,
                  20 * 14, options);
}

TEST_F(GpuBlockedMethod, EveryStrategyAndElementType) {
  for (const StrategyKind kind :
       {StrategyKind::ReversedRowCyclicClosest, StrategyKind::RowCyclicClosest,
        StrategyKind::ModifiedModulus, StrategyKind::RowCyclic}) {
    JacobiOptions options{.compute_u = true, .compute_v = true};
    options.variant = Variant::FullBlock;
    options.block_width = 6;
    options.strategy = kind;
    const std::string name = "70x45 width 6, " + std::string(shiftop::name_of(kind));
    expect_like_cpu(name + ", float", random_entries<float>(70 * 45, 70), 1, 70, 45, 70, 70 * 45,
                    options);
    expect_like_cpu(name + ", complex<double>", random_entries<std::complex<double>>(70 * 45, 71),
                    1, 70, 45, 70, 70 * 45, options);
    expect_like_cpu(name + ", complex<float>", random_entries<std::complex<float>>(45 * 70, 72), 1,
                    45, 70, 45, 45 * 70, options);
  }
}

// U alone and V alone, through A and A^H: the finish writes only what is asked, and G's updates
// do not depend on W, so each is bit for bit the one of the run that computes both.
TEST_F(GpuBlockedMethod, OneSideOfTheVectors) {
  for (const auto& [m, n] : {std::pair<index_t, index_t>{60, 41}, {41, 60}}) {
    const std::vector<double> a = random_entries<double>(m * n, 78);
    const std::string name = std::to_string(m) + "x" + std::to_string(n) + " width 5";
    JacobiOptions both{.compute_u = true, .compute_v = true};
    both.variant = Variant::BlockOriented;
    both.block_width = 5;
    const auto reference = expect_like_cpu(name, a, 1, m, n, m, m * n, both);
    JacobiOptions u_only = both, v_only = both;
    u_only.compute_v = false;
    v_only.compute_u = false;
    const auto u = expect_like_cpu(name + ", U only", a, 1, m, n, m, m * n, u_only);
    const auto v = expect_like_cpu(name + ", V only", a, 1, m, n, m, m * n, v_only);
    EXPECT_TRUE(u.v.empty() && v.u.empty()) << name;
    EXPECT_TRUE(u.sigma == reference.sigma && v.sigma == reference.sigma) << name;
    EXPECT_TRUE(u.u == reference.u) << name << ": U alone";
    EXPECT_TRUE(v.v == reference.v) << name << ": V alone";
  }
}

// A batch whose matrices converge after different block-sweeps (orthogonal columns: one sweep;
// random; column-graded over 12 decades): a finished matrix is left alone while the others go on,
// and each matrix ends where the CPU does.
TEST_F(GpuBlockedMethod, MatricesOfABatchConvergeAtDifferentSweeps) {
  const index_t m = 64, n = 40;
  std::vector<double> a(static_cast<std::size_t>(3 * m * n), 0.0);
  for (index_t j = 0; j < n; ++j)  // orthogonal columns of distinct norms, sorted already
    a[j + j * m] = static_cast<double>(n - j);
  const std::vector<double> random = random_entries<double>(m * n, 79);
  const std::vector<double> graded = shiftop::testing::column_graded_matrix(m, n, 12, 80);
  std::copy(random.begin(), random.end(), a.begin() + m * n);
  std::copy(graded.begin(), graded.end(), a.begin() + 2 * m * n);
  JacobiOptions options{.compute_u = true, .compute_v = true};
  options.variant = Variant::BlockOriented;
  options.block_width = 6;
  const auto r = expect_like_cpu("3 x 64x40 width 6, mixed", a, 3, m, n, m, m * n, options);
  EXPECT_EQ(r.stats[0].sweeps, 1);
  EXPECT_EQ(r.stats[0].rotations, 0);
  EXPECT_GT(r.stats[1].sweeps, 2);
  EXPECT_GT(r.stats[2].sweeps, 1);
  for (index_t j = 0; j < n; ++j)
    EXPECT_EQ(r.sigma[j], static_cast<double>(n - j)) << "the orthogonal matrix, sigma " << j;
}

// The rotation in global memory (FP64 width 64: H and the rotation, 2 x 128 KB, do not both fit
// shared memory) and inner steps that leave columns alone (width 33: c = 66 is embedded in 68,
// whose steps lose the pairs of the two added columns), both variants.
TEST_F(GpuBlockedMethod, RotationInGlobalMemoryAndShortInnerSteps) {
  const index_t m = 180, n = 150;
  const std::vector<double> a = random_entries<double>(m * n, 81);
  for (const index_t width : {64, 33})
    for (const Variant variant : {Variant::BlockOriented, Variant::FullBlock}) {
      JacobiOptions options{.compute_u = true, .compute_v = true};
      options.variant = variant;
      options.block_width = width;
      expect_like_cpu(
          "180x150 width " + std::to_string(width) + ", " + std::string(shiftop::name_of(variant)),
          a, 1, m, n, m, m * n, options);
    }
}

// Rank 40 of 150 columns (a product of 200 x 40 and 40 x 150 factors) with a zero column: 110
// exact or rounding-level zeros, whose vectors the driver completes; a zero matrix.
TEST_F(GpuBlockedMethod, RankDeficientAndZero) {
  const index_t m = 200, n = 150, rank = 40;
  const std::vector<double> left = random_entries<double>(m * rank, 73);
  const std::vector<double> right = random_entries<double>(rank * n, 74);
  std::vector<double> a(static_cast<std::size_t>(m * n), 0.0);
  for (index_t j = 0; j < n; ++j)
    for (index_t l = 0; l < rank; ++l)
      for (index_t i = 0; i < m; ++i)
        a[i + j * m] += left[i + l * m] * right[l + j * rank];
  for (index_t i = 0; i < m; ++i)
    a[i + 17 * m] = 0;
  JacobiOptions options{.compute_u = true, .compute_v = true};
  options.variant = Variant::FullBlock;
  options.block_width = 16;
  const auto r = on_gpu(a, 1, m, n, m, m * n, options);
  ASSERT_EQ(r.sigma.size(), static_cast<std::size_t>(n));
  EXPECT_TRUE(r.stats[0].converged);
  const auto cpu = on_cpu(a, 1, m, n, m, m * n, JacobiOptions{});
  double leading = 0, tail = 0;
  for (index_t i = 0; i < rank; ++i)
    leading = std::max(leading, std::abs(r.sigma[i] - cpu.sigma[i]) / cpu.sigma[i]);
  for (index_t i = rank; i < n; ++i)
    tail = std::max(tail, r.sigma[i] / r.sigma[0]);
  const double n_eps = static_cast<double>(n) * unit_roundoff<double>();
  // The 40 nonzero values as the CPU's (the matrix is well conditioned on its range); the others
  // at rounding level of sigma_1 (the plain one-sided method's absolute error on a rank-deficient
  // matrix), U and V orthonormal with the completion, and A = U S V^T.
  EXPECT_LT(leading, kAgainstCpu * n_eps);
  EXPECT_LT(tail, 4 * n_eps);  // measured 4.1e-16 (H200), 160 times below
  const Quality q = expect_quality(a.data(), m, n, m, r, 0, "rank 40 of 200x150");
  std::printf(
      "rank 40 of 200x150: nonzero values %.2f n eps from the CPU, zeros <= %.2e sigma_1, "
      "U %.2f, V %.2f, residual %.2f n eps (sweeps %d)\n",
      leading / n_eps, tail, q.u, q.v, q.residual, r.stats[0].sweeps);

  const std::vector<double> zero(static_cast<std::size_t>(m * n), 0.0);
  const auto z = on_gpu(zero, 1, m, n, m, m * n, options);
  EXPECT_TRUE(z.stats[0].converged);
  EXPECT_TRUE(std::all_of(z.sigma.begin(), z.sigma.end(), [](double s) { return s == 0; }));
  EXPECT_LT(orthogonality(z.u.data(), m, n), 8 * unit_roundoff<double>());
  EXPECT_LT(orthogonality(z.v.data(), n, n), 8 * unit_roundoff<double>());
}

// Column-graded B D (12 decades) through the blocked method, both variants, against the
// __float128 reference: the plain one-sided method's relative accuracy (column scaling) kept by
// the inner two-sided method on the Gram matrices. Row-graded D B is printed, not bounded: the
// blocked path has no QR preprocessing (svd/jacobi_gpu.hpp).
TEST_F(GpuBlockedMethod, ColumnGradedRelativeAccuracy) {
  using shiftop::testing::column_graded_matrix;
  const index_t m = 90, n = 70;
  const std::vector<double> graded = column_graded_matrix(m, n, 12, 75);
  const std::vector<double> want = shiftop::testing::quad_singular_values(graded.data(), m, n, m);
  const std::vector<double> rows = row_graded(m, n, 76);
  const std::vector<double> rows_want =
      shiftop::testing::quad_singular_values(rows.data(), m, n, m);
  const double n_eps = static_cast<double>(n) * unit_roundoff<double>();
  for (const Variant variant : {Variant::BlockOriented, Variant::FullBlock})
    for (const index_t width : {4, 16}) {
      JacobiOptions options{.compute_u = true, .compute_v = true};
      options.variant = variant;
      options.block_width = width;
      const std::string where =
          std::string(shiftop::name_of(variant)) + ", width " + std::to_string(width);
      const auto r = on_gpu(graded, 1, m, n, m, m * n, options);
      EXPECT_TRUE(r.stats[0].converged) << where;
      double values = 0;
      for (index_t i = 0; i < n; ++i)
        values = std::max(values, std::abs(r.sigma[i] - want[i]) / want[i]);
      EXPECT_LT(values, kGradedValues * n_eps) << where;
      EXPECT_GT(values, 0.0) << where;  // zero: the comparison saw the reference twice
      const Quality q = expect_quality(graded.data(), m, n, m, r, 0, where);
      const auto d_b = on_gpu(rows, 1, m, n, m, m * n, options);
      double d_b_values = 0;
      for (index_t i = 0; i < n; ++i)
        d_b_values = std::max(d_b_values, std::abs(d_b.sigma[i] - rows_want[i]) / rows_want[i]);
      std::printf(
          "B D 90x70 (kappa %.1e), %s: values %.2f n eps, U %.2f, V %.2f, residual %.2f "
          "(sweeps %d); D B (kappa %.1e): values %.2e n eps (sweeps %d)\n",
          want.front() / want.back(), where.c_str(), values / n_eps, q.u, q.v, q.residual,
          r.stats[0].sweeps, rows_want.front() / rows_want.back(), d_b_values / n_eps,
          d_b.stats[0].sweeps);
    }
}

// ---------------------------------------------------------------------------------------------
// The plan (svd::GpuPlan): made once, executed on one batch after another with the workspaces of
// the first call, each result bit for bit that of a fresh jacobi_batched_device call (the same
// kernels on the same data), on both methods; the outputs poisoned before each call; lda and the
// outputs checked per call.

using GpuPlanTest = GpuTest;

TEST_F(GpuPlanTest, ExecutesManyBatchesLikeFreshCalls) {
  using shiftop::svd::GpuPlan;
  struct Case {
    index_t batch, m, n;
    Variant variant;
    bool blocked;
  };
  for (const Case c :
       {Case{3, 40, 30, Variant::Auto, false}, Case{2, 70, 90, Variant::BlockOriented, true}}) {
    const std::string name = std::to_string(c.batch) + " x " + std::to_string(c.m) + "x" +
                             std::to_string(c.n) + ", " + std::string(shiftop::name_of(c.variant));
    JacobiOptions options{.compute_u = true, .compute_v = true};
    options.variant = c.variant;
    options.block_width = c.blocked ? 8 : 0;
    const index_t k = std::min(c.m, c.n), lda = c.m + 1, stride = lda * c.n;
    GpuPlan<double> plan(context(), c.batch, c.m, c.n, options);
    EXPECT_EQ(plan.blocked(), c.blocked) << name;
    EXPECT_TRUE(plan.batch() == c.batch && plan.m() == c.m && plan.n() == c.n) << name;
    DeviceBuffer<double> sigma(c.batch * k), u(c.batch * c.m * k), v(c.batch * c.n * k);
    for (unsigned seed : {90u, 91u}) {
      const DeviceBuffer<double> a(random_entries<double>(c.batch * stride, seed));
      sigma.poison();
      u.poison();
      v.poison();
      context().wait_for(nullptr);
      const auto stats = plan.execute(a.get(), lda, stride,
                                      DeviceJacobiOutput<double>{sigma.get(), u.get(), v.get()});
      const std::vector<double> got_sigma = sigma.download(), got_u = u.download(),
                                got_v = v.download();
      sigma.poison();
      u.poison();
      v.poison();
      context().wait_for(nullptr);
      const auto fresh = shiftop::svd::jacobi_batched_device(
          context(), a.get(), c.batch, c.m, c.n, lda, stride,
          DeviceJacobiOutput<double>{sigma.get(), u.get(), v.get()}, options);
      const std::string where = name + ", seed " + std::to_string(seed);
      EXPECT_TRUE(got_sigma == sigma.download()) << where;
      EXPECT_TRUE(got_u == u.download() && got_v == v.download()) << where;
      ASSERT_EQ(stats.size(), fresh.size()) << where;
      for (std::size_t b = 0; b < stats.size(); ++b) {
        EXPECT_TRUE(stats[b].converged) << where;
        EXPECT_EQ(stats[b].rotations, fresh[b].rotations) << where;
        EXPECT_EQ(stats[b].sweeps, fresh[b].sweeps) << where;
      }
      EXPECT_TRUE(std::all_of(got_u.begin(), got_u.end(), is_finite<double>)) << where;
    }
    const DeviceBuffer<double> a(random_entries<double>(c.batch * stride, 92));
    shiftop::testing::expect_error(
        [&] {
          plan.execute(a.get(), c.m - 1, stride,
                       DeviceJacobiOutput<double>{sigma.get(), u.get(), v.get()});
        },
        "lda: expected >= m");
    shiftop::testing::expect_error(
        [&] {
          plan.execute(a.get(), lda, stride,
                       DeviceJacobiOutput<double>{sigma.get(), nullptr, v.get()});
        },
        "u: compute_u is set");
  }
}

// ---------------------------------------------------------------------------------------------
// Refusals and the empty batch.

using GpuJacobiErrors = GpuTest;

TEST_F(GpuJacobiErrors, BadInputIsNamed) {
  using shiftop::testing::expect_error;
  const auto& gpu = context();  // the device API's
  std::vector<double> a(40);    // two 5x4 matrices, lda 5, stride 20
  for (index_t e = 0; e < 40; ++e)
    a[e] = std::sin(static_cast<double>(e + 1));
  a[20 + 2 + 1 * 5] = std::nan("");
  expect_error([&] { on_gpu(a, 2, 5, 4, 5, 20, JacobiOptions{}); },
               "a: matrix 1: entry (2, 1) is nan");
  {  // the same found on the device, by the preprocessing kernel
    const DeviceBuffer<double> device_a(a);
    DeviceBuffer<double> sigma(2 * 4);
    gpu.wait_for(nullptr);  // after the copy on the default stream
    expect_error(
        [&] {
          shiftop::svd::jacobi_batched_device(gpu, device_a.get(), 2, 5, 4, 5, 20,
                                              DeviceJacobiOutput<double>{sigma.get()});
        },
        "a: matrix 1: entry (2, 1) is nan");
  }
  a[20 + 2 + 1 * 5] = 1.0;
  {  // a wide 3x5 matrix on the device (worked on as A^H): the entry is named in A
    std::vector<double> wide(15, 0.5);
    wide[1 + 4 * 3] = -std::numeric_limits<double>::infinity();
    const DeviceBuffer<double> device_a(wide);
    DeviceBuffer<double> sigma(3);
    gpu.wait_for(nullptr);
    expect_error(
        [&] {
          shiftop::svd::jacobi_batched_device(gpu, device_a.get(), 1, 3, 5, 3, 15,
                                              DeviceJacobiOutput<double>{sigma.get()});
        },
        "a: matrix 0: entry (1, 4) is inf");
  }
  JacobiOptions tolerance;
  tolerance.rank_tolerance = 1e-8;
  expect_error([&] { on_gpu(a, 2, 5, 4, 5, 20, tolerance); },
               "rank_tolerance: the GPU keeps every singular value");
  JacobiOptions too_wide;
  too_wide.variant = Variant::FullBlock;
  too_wide.block_width = 4096;
  expect_error([&] { on_gpu(a, 2, 5, 4, 5, 20, too_wide); }, "block_width: at most");
  expect_error([&] { on_gpu(a, 2, 0, 4, 5, 20, JacobiOptions{}); }, "at least 1 x 1, got 0 x 4");
  expect_error([&] { on_gpu(a, 2, 5, 4, 4, 20, JacobiOptions{}); },
               "lda: expected >= m = 5, got 4");
  // After the refusals (one of them found on the device) the contexts still work.
  const auto r = on_gpu(a, 2, 5, 4, 5, 20, JacobiOptions{});
  EXPECT_TRUE(r.stats[0].converged && r.stats[1].converged);
  JacobiOptions given;
  given.gpu.context = shared_context();
  const auto on_given = on_gpu(a, 2, 5, 4, 5, 20, given);
  EXPECT_TRUE(on_given.stats[0].converged && on_given.stats[1].converged);
}

TEST_F(GpuJacobiErrors, EmptyBatchGivesEmptyResults) {
  JacobiOptions options{.compute_u = true, .compute_v = true};
  options.backend = shiftop::Backend::Cuda;
  const auto r = shiftop::svd::jacobi_batched<double>(nullptr, 0, 6, 4, 6, 24, options);
  EXPECT_EQ(r.batch, 0);
  EXPECT_TRUE(r.sigma.empty() && r.u.empty() && r.v.empty() && r.stats.empty());
  const auto stats =
      shiftop::svd::jacobi_batched_device<double>(context(), nullptr, 0, 6, 4, 6, 24, {}, options);
  EXPECT_TRUE(stats.empty());
}

}  // namespace
