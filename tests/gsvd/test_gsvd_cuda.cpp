// The batched implicit Hari-Zimmermann GSVD on the GPU (options.backend = Backend::Cuda,
// shiftop/gsvd/gsvd.hpp; label gpu, skipped without a device), against the pairs of prescribed
// generalized singular values of support/prescribed_gsvd.hpp and against the CPU gsvd_hz_batched on
// the same pairs: the values, the residuals F - U diag(sigma_f) X and G - V diag(sigma_g) X, the
// orthogonality of V and of U's columns of nonzero sigma_f, sigma_f^2 + sigma_g^2 = 1 and the
// order; real and complex; n = 1, 2, odd, 32, 100 (F and G in shared memory, Z in global memory)
// and 200 (all in global memory), m < n; a batch of more pairs than the GPU has multiprocessors,
// bit for bit equal to its pairs one at a time; one pair by gsvd_hz and on a context of the
// caller's; every strategy; the scaling by powers of two; max_sweeps; the refusals.
//
// Bounds. The values' errors against the prescribed ones are dominated by the pair's own
// sensitivity (F and G are rounded to double once): a host replica of the kernels' arithmetic
// (the same hz_transform, sequential) measured 0 .. 1.4e3 n eps on these pairs with X of
// condition 10 (n = 2: 57, 7: 825, 32: 304, 100: 1360) and 1.3e4 n eps with condition 1e3, and
// the CPU gsvd_hz up to 2e4 n eps over 12 seeds (each case's `level` below). So the GPU is held
// to the CPU: error_gpu <= 4 max(error_cpu on the same pair, level) for the values; residuals
// <= 4 residual_cpu + 16 n eps (the replica: <= 2.3 n eps in max-norm for condition 10; a host
// emulation of the kernels themselves, threads and shuffles emulated, gave 0.5-1.3 n eps in
// Frobenius norm, the CPU 0.4-1.4); orthogonality of V <= 4 n eps (measured <= 0.05 n eps). Every
// test prints what it measured.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "shiftop/gpu/context.hpp"
#include "shiftop/gpu/devices.hpp"
#include "shiftop/gsvd/gsvd.hpp"
#include "support/expect_error.hpp"
#include "support/prescribed_gsvd.hpp"

namespace {

using shiftop::index_t;
using shiftop::svd::BatchedGsvdResult;
using shiftop::svd::GsvdOptions;
using shiftop::svd::Real;
using shiftop::svd::StrategyKind;
using shiftop::svd::Variant;
using shiftop::testing::expect_error;

using Complex = std::complex<double>;
constexpr double kEps = 0x1p-53;

class GsvdGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (shiftop::gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

/// `batch` prescribed pairs (seeds seed, seed + 1, ..) packed: F at b * m * n, G at b * p * n.
template <class T>
struct Batch {
  index_t batch = 0, m = 0, p = 0, n = 0;
  std::vector<T> f, g;
  std::vector<std::vector<double>> sigma;  // the prescribed values per pair, nonincreasing
};

template <class T>
Batch<T> prescribed_batch(index_t batch, index_t m, index_t p, index_t n, unsigned seed,
                          double x_condition = 10) {
  Batch<T> out{batch, m, p, n, {}, {}, {}};
  for (index_t b = 0; b < batch; ++b) {
    const auto pair = shiftop::testing::random_gsvd_pair<T>(
        m, p, n, seed + static_cast<unsigned>(b), x_condition);
    out.f.insert(out.f.end(), pair.f.begin(), pair.f.end());
    out.g.insert(out.g.end(), pair.g.begin(), pair.g.end());
    out.sigma.push_back(pair.sigma);
  }
  return out;
}

/// Options for the GPU: the library's backend choice, on its shared context of GPU 0.
GsvdOptions cuda(GsvdOptions options) {
  options.backend = shiftop::Backend::Cuda;
  return options;
}

template <class T>
BatchedGsvdResult<T> on_gpu(const Batch<T>& in, const GsvdOptions& options) {
  return shiftop::svd::gsvd_hz_batched(in.f.data(), in.m, in.m * in.n, in.g.data(), in.p,
                                       in.p * in.n, in.batch, in.m, in.p, in.n, cuda(options));
}

template <class T>
BatchedGsvdResult<T> on_cpu(const Batch<T>& in, const GsvdOptions& options) {
  GsvdOptions cpu = options;
  cpu.variant = Variant::Pointwise;  // the GPU's method
  return shiftop::svd::gsvd_hz_batched(in.f.data(), in.m, in.m * in.n, in.g.data(), in.p,
                                       in.p * in.n, in.batch, in.m, in.p, in.n, cpu);
}

/// What one pair of a result measures.
struct Quality {
  double values = 0;        ///< max relative error against the prescribed nonzero values
  double zero_values = 0;   ///< max sigma_f where the prescribed value is 0 (m < n)
  double residual_f = 0;    ///< ||F - U Sf X||_F / ||F||_F
  double residual_g = 0;    ///< ||G - V Sg X||_F / ||G||_F
  double orthogonal_v = 0;  ///< max |V^H V - I|
  double orthogonal_u = 0;  ///< max |U^H U - I| over the columns of nonzero prescribed values
  double unit = 0;          ///< max |sigma_f^2 + sigma_g^2 - 1|
  bool ordered = true;      ///< sigma_f / sigma_g nonincreasing, sigma_g > 0
  bool finite = true;       ///< every output finite
};

template <class T>
double orthogonality(const T* x, index_t rows, index_t cols, const std::vector<bool>& use) {
  double worst = 0;
  for (index_t i = 0; i < cols; ++i)
    for (index_t j = i; j < cols; ++j) {
      if (!use[static_cast<std::size_t>(i)] || !use[static_cast<std::size_t>(j)]) continue;
      Complex s = 0;
      for (index_t k = 0; k < rows; ++k)
        s += std::conj(Complex(x[k + i * rows])) * Complex(x[k + j * rows]);
      worst = std::max(worst, std::abs(s - (i == j ? 1.0 : 0.0)));
    }
  return worst;
}

/// ||A - W diag(s) X||_F / ||A||_F for A rows x n, W rows x n, X n x n.
template <class T>
double residual(const T* a, const T* w, const double* s, const T* x, index_t rows, index_t n) {
  double difference = 0, norm = 0;
  for (index_t c = 0; c < n; ++c)
    for (index_t r = 0; r < rows; ++r) {
      Complex sum = 0;
      for (index_t k = 0; k < n; ++k)
        sum += Complex(w[r + k * rows]) * s[k] * Complex(x[k + c * n]);
      difference += std::norm(Complex(a[r + c * rows]) - sum);
      norm += std::norm(Complex(a[r + c * rows]));
    }
  return std::sqrt(difference / norm);
}

template <class T>
Quality quality(const Batch<T>& in, const BatchedGsvdResult<T>& r, index_t b) {
  const index_t m = in.m, p = in.p, n = in.n;
  Quality q;
  const double* sf = r.sigma_f.data() + b * n;
  const double* sg = r.sigma_g.data() + b * n;
  const std::vector<double>& sigma = in.sigma[static_cast<std::size_t>(b)];
  std::vector<bool> nonzero(static_cast<std::size_t>(n)), all(static_cast<std::size_t>(n), true);
  for (index_t i = 0; i < n; ++i) {
    const double value = sf[i] / sg[i];
    q.finite = q.finite && std::isfinite(sf[i]) && std::isfinite(sg[i]);
    q.ordered = q.ordered && sg[i] > 0 && (i == 0 || value <= sf[i - 1] / sg[i - 1]);
    q.unit = std::max(q.unit, std::abs(sf[i] * sf[i] + sg[i] * sg[i] - 1));
    const double s = sigma[static_cast<std::size_t>(i)];
    nonzero[static_cast<std::size_t>(i)] = s > 0;
    if (s > 0)
      q.values = std::max(q.values, std::abs(value - s) / s);
    else
      q.zero_values = std::max(q.zero_values, sf[i]);
  }
  if (r.u.empty()) return q;
  const T* u = r.u.data() + b * m * n;
  const T* v = r.v.data() + b * p * n;
  const T* x = r.x.data() + b * n * n;
  for (const auto* data : {&r.u, &r.v, &r.x})
    for (const T& e : *data)
      q.finite = q.finite && std::isfinite(std::real(e)) && std::isfinite(std::imag(e));
  q.residual_f = residual(in.f.data() + b * m * n, u, sf, x, m, n);
  q.residual_g = residual(in.g.data() + b * p * n, v, sg, x, p, n);
  q.orthogonal_v = orthogonality(v, p, n, all);
  q.orthogonal_u = orthogonality(u, m, n, nonzero);
  return q;
}

void print(const char* what, const Quality& q, double n_eps) {
  std::printf(
      "[ measured ] %-4s values %.3g n eps (zero values %.3g), residuals F %.3g G %.3g n eps, "
      "orthogonality U %.3g V %.3g n eps, |sf^2+sg^2-1| %.3g eps\n",
      what, q.values / n_eps, q.zero_values, q.residual_f / n_eps, q.residual_g / n_eps,
      q.orthogonal_u / n_eps, q.orthogonal_v / n_eps, q.unit / kEps);
}

/// The GPU against the prescribed values and against the CPU on the same pairs.
/// `level`: the pair's sensitivity in units of n eps, the CPU's largest value error over 12 seeds
/// of the same sizes and condition (measured with the CPU gsvd_hz, pointwise): the GPU's value
/// error is held to 4 times the larger of that and of the CPU's on the same pair.
template <class T>
void check_against_cpu(const Batch<T>& in, const GsvdOptions& options, const std::string& name,
                       double level) {
  SCOPED_TRACE(name);
  const BatchedGsvdResult<T> gpu = on_gpu(in, options);
  const BatchedGsvdResult<T> cpu = on_cpu(in, options);
  ASSERT_EQ(gpu.sigma_f.size(), static_cast<std::size_t>(in.batch * in.n));
  ASSERT_EQ(gpu.stats.size(), static_cast<std::size_t>(in.batch));
  if (options.compute_vectors) {
    ASSERT_EQ(gpu.u.size(), static_cast<std::size_t>(in.batch * in.m * in.n));
    ASSERT_EQ(gpu.v.size(), static_cast<std::size_t>(in.batch * in.p * in.n));
    ASSERT_EQ(gpu.x.size(), static_cast<std::size_t>(in.batch * in.n * in.n));
  } else {
    EXPECT_TRUE(gpu.u.empty() && gpu.v.empty() && gpu.x.empty());
  }
  const double n_eps = static_cast<double>(in.n) * kEps;
  std::printf("[ measured ] %s (batch %lld, %lld x %lld, %lld x %lld):\n", name.c_str(),
              static_cast<long long>(in.batch), static_cast<long long>(in.m),
              static_cast<long long>(in.n), static_cast<long long>(in.p),
              static_cast<long long>(in.n));
  for (index_t b = 0; b < in.batch; ++b) {
    SCOPED_TRACE("pair " + std::to_string(b));
    const Quality g = quality(in, gpu, b), c = quality(in, cpu, b);
    print("gpu", g, n_eps);
    print("cpu", c, n_eps);
    std::printf("[ measured ] gpu sweeps %d (cpu %d), converged %d\n", gpu.stats[b].sweeps,
                cpu.stats[b].sweeps, gpu.stats[b].converged ? 1 : 0);
    EXPECT_TRUE(g.finite);
    EXPECT_TRUE(g.ordered);
    EXPECT_LE(g.unit, 8 * kEps);
    EXPECT_LE(g.values, 4 * std::max(c.values, level * n_eps));
    EXPECT_LE(g.zero_values, std::max(4 * c.zero_values, 1e-12));
    // (wide pairs too: F's noise columns are deflated to exact zeros, as on the CPU)
    EXPECT_TRUE(gpu.stats[b].converged);
    EXPECT_LE(gpu.stats[b].sweeps, 50);
    EXPECT_GE(gpu.stats[b].sweeps, in.n > 1 ? 1 : 0);  // n = 1: no pairs, no sweep
    EXPECT_EQ(gpu.stats[b].sweeps == 0, in.n == 1);
    if (options.compute_vectors) {
      EXPECT_LE(g.residual_f, 4 * c.residual_f + 16 * n_eps);
      EXPECT_LE(g.residual_g, 4 * c.residual_g + 16 * n_eps);
      EXPECT_LE(g.orthogonal_v, 4 * n_eps + 8 * kEps);
      EXPECT_LE(g.orthogonal_u, 4 * c.orthogonal_u + 4 * n_eps + 8 * kEps);
    }
  }
}

struct Case {
  index_t m, p, n;
  double x_condition;
  double level;  ///< the CPU's largest value error over 12 seeds, real or complex, in n eps
};

// n = 1, 2, odd, 32 (fits shared memory), 100 (real: F, G shared, Z global; complex: F shared,
// G and Z global), m < n (rank(F) = m: n - m values 0), m < p, a harder X.
// Levels measured: 1.5, 601, 3650, 3380, 901, 53, 7.7e4, 1.85.
constexpr Case kCases[] = {{1, 1, 1, 10, 4},       {2, 3, 2, 10, 700},        {7, 9, 7, 10, 4000},
                           {32, 32, 32, 10, 4000}, {100, 100, 100, 10, 1000}, {5, 40, 33, 10, 60},
                           {50, 64, 33, 1e3, 8e4}, {3, 5, 1, 10, 4}};

TEST_F(GsvdGpuTest, PrescribedRealAgainstCpu) {
  GsvdOptions options;
  options.compute_vectors = true;
  unsigned seed = 100;
  for (const Case& c : kCases)
    check_against_cpu(
        prescribed_batch<double>(3, c.m, c.p, c.n, seed += 10, c.x_condition), options,
        "real " + std::to_string(c.m) + " " + std::to_string(c.p) + " " + std::to_string(c.n),
        c.level);
}

TEST_F(GsvdGpuTest, PrescribedComplexAgainstCpu) {
  GsvdOptions options;
  options.compute_vectors = true;
  unsigned seed = 200;
  for (const Case& c : kCases)
    check_against_cpu(
        prescribed_batch<Complex>(3, c.m, c.p, c.n, seed += 10, c.x_condition), options,
        "complex " + std::to_string(c.m) + " " + std::to_string(c.p) + " " + std::to_string(c.n),
        c.level);
}

// The smallest pairs, all in shared memory (the racecheck cases of scripts/gpu-check): n = 1, 2,
// 3 and a short odd step, real and complex, with and without vectors.
TEST_F(GsvdGpuTest, TinyAndSmallPairs) {
  for (const bool vectors : {true, false}) {
    GsvdOptions options;
    options.compute_vectors = vectors;
    // levels measured: 1.5, 666, 1.98e4, 5700
    for (const Case& c : {Case{1, 1, 1, 10, 4}, Case{2, 2, 2, 10, 700}, Case{4, 3, 3, 10, 2e4},
                          Case{6, 9, 5, 10, 6000}}) {
      const std::string size = std::to_string(c.m) + " " + std::to_string(c.p) + " " +
                               std::to_string(c.n) + (vectors ? " vectors" : "");
      check_against_cpu(prescribed_batch<double>(2, c.m, c.p, c.n, 50), options, "real " + size,
                        c.level);
      check_against_cpu(prescribed_batch<Complex>(2, c.m, c.p, c.n, 60), options, "complex " + size,
                        c.level);
    }
  }
}

// F, G and Z of 200 columns do not fit a block's shared memory: everything in global memory.
TEST_F(GsvdGpuTest, GlobalMemoryPath) {
  GsvdOptions options;
  options.compute_vectors = true;
  // levels measured: 562 (200), 997 (130)
  check_against_cpu(prescribed_batch<double>(2, 200, 210, 200, 300), options, "real global 200",
                    700);
  check_against_cpu(prescribed_batch<Complex>(1, 130, 130, 130, 310), options, "complex global 130",
                    1000);
}

TEST_F(GsvdGpuTest, ValuesOnlyMatchValuesWithVectors) {
  const Batch<Complex> in = prescribed_batch<Complex>(4, 20, 25, 17, 400);
  GsvdOptions with, without;
  with.compute_vectors = true;
  check_against_cpu(in, without, "complex values only", 4200);  // level measured: 4140
  const BatchedGsvdResult<Complex> a = on_gpu(in, with), b = on_gpu(in, without);
  // Z is not accumulated without vectors; the values come from F Z and G Z alike: equal bits.
  EXPECT_EQ(a.sigma_f, b.sigma_f);
  EXPECT_EQ(a.sigma_g, b.sigma_g);
}

// More pairs than multiprocessors; each pair bit for bit as in a batch of one (the block's
// arithmetic does not depend on the batch), X to rounding (cuBLAS).
TEST_F(GsvdGpuTest, LargeBatchEqualsPairsOneAtATime) {
  const index_t batch = 2 * shiftop::gpu::shared_context(0).context->multiprocessors() + 7;
  const Batch<double> in = prescribed_batch<double>(batch, 16, 18, 16, 500);
  GsvdOptions options;
  options.compute_vectors = true;
  const BatchedGsvdResult<double> all = on_gpu(in, options);
  const BatchedGsvdResult<double> cpu = on_cpu(in, options);
  double worst = 0;
  for (index_t b = 0; b < batch; ++b) {
    const Quality q = quality(in, all, b), c = quality(in, cpu, b);
    worst = std::max(worst, q.values / (16 * kEps));
    EXPECT_LE(q.values, 4 * std::max(c.values, 3000 * 16 * kEps))  // level measured: 2910
        << "pair " << b;
    EXPECT_LE(q.residual_f, 4 * c.residual_f + 16 * 16 * kEps) << "pair " << b;
    EXPECT_LE(q.residual_g, 4 * c.residual_g + 16 * 16 * kEps) << "pair " << b;
  }
  std::printf("[ measured ] batch %lld of 16 x 16: worst value error %.3g n eps\n",
              static_cast<long long>(batch), worst);
  for (const index_t b : {index_t{0}, batch / 2, batch - 1}) {
    Batch<double> one{1, in.m, in.p, in.n, {}, {}, {in.sigma[static_cast<std::size_t>(b)]}};
    one.f.assign(in.f.begin() + b * in.m * in.n, in.f.begin() + (b + 1) * in.m * in.n);
    one.g.assign(in.g.begin() + b * in.p * in.n, in.g.begin() + (b + 1) * in.p * in.n);
    const BatchedGsvdResult<double> single = on_gpu(one, options);
    const auto part = [&](const std::vector<double>& v, index_t size) {
      return std::vector<double>(v.begin() + b * size, v.begin() + (b + 1) * size);
    };
    EXPECT_EQ(single.sigma_f, part(all.sigma_f, in.n)) << "pair " << b;
    EXPECT_EQ(single.sigma_g, part(all.sigma_g, in.n)) << "pair " << b;
    EXPECT_EQ(single.u, part(all.u, in.m * in.n)) << "pair " << b;
    EXPECT_EQ(single.v, part(all.v, in.p * in.n)) << "pair " << b;
    // X = diag(S) Z^{-1} comes from cuBLAS's batched LU, whose kernels may depend on the batch
    // size: Z itself is bitwise equal, its inverse to rounding.
    const std::vector<double> x = part(all.x, in.n * in.n);
    double difference = 0, largest = 0;
    for (std::size_t e = 0; e < x.size(); ++e) {
      difference = std::max(difference, std::abs(single.x[e] - x[e]));
      largest = std::max(largest, std::abs(x[e]));
    }
    EXPECT_LE(difference, 64 * 16 * kEps * largest) << "pair " << b;
    EXPECT_EQ(single.stats[0].sweeps, all.stats[static_cast<std::size_t>(b)].sweeps);
  }
}

TEST_F(GsvdGpuTest, EveryStrategyAndNoSorting) {
  const Batch<double> in = prescribed_batch<double>(2, 40, 45, 33, 600);
  for (const StrategyKind kind :
       {StrategyKind::ReversedRowCyclicClosest, StrategyKind::RowCyclicClosest,
        StrategyKind::ModifiedModulus, StrategyKind::RowCyclic}) {
    for (const bool sort : {true, false}) {
      GsvdOptions options;
      options.compute_vectors = true;
      options.strategy = kind;
      options.sort = sort;
      check_against_cpu(in, options,
                        std::string(shiftop::name_of(kind)) + (sort ? " sorted" : " unsorted"),
                        2100);  // level measured: 2090
    }
  }
}

// The pairs are scaled by powers of two (exactly) before the sweeps: F 2^300 and G 2^-300 give
// the values times 2^600, to rounding in the unscaling.
TEST_F(GsvdGpuTest, ScalingByPowersOfTwo) {
  const Batch<double> in = prescribed_batch<double>(2, 12, 14, 11, 700);
  Batch<double> big = in;
  for (double& x : big.f)
    x = std::ldexp(x, 300);
  for (double& x : big.g)
    x = std::ldexp(x, -300);
  GsvdOptions options;
  options.compute_vectors = true;
  const BatchedGsvdResult<double> a = on_gpu(in, options), b = on_gpu(big, options);
  double worst = 0;
  for (std::size_t i = 0; i < a.sigma_f.size(); ++i) {
    const double va = a.sigma_f[i] / a.sigma_g[i];
    const double vb = std::ldexp(b.sigma_f[i] / b.sigma_g[i], -600);
    worst = std::max(worst, std::abs(va - vb) / va);
  }
  std::printf("[ measured ] scaled by 2^300 / 2^-300: values agree to %.3g eps\n", worst / kEps);
  EXPECT_LE(worst, 8 * kEps);
  for (index_t pair = 0; pair < 2; ++pair) {
    big.sigma = in.sigma;
    const Quality q = quality(big, b, pair);
    EXPECT_LE(q.residual_f, 64 * 11 * kEps);
    EXPECT_LE(q.residual_g, 64 * 11 * kEps);
  }
}

TEST_F(GsvdGpuTest, MaxSweepsStopsUnconverged) {
  const Batch<double> in = prescribed_batch<double>(2, 32, 32, 32, 800);
  GsvdOptions options;
  options.max_sweeps = 1;
  const BatchedGsvdResult<double> r = on_gpu(in, options);
  for (const auto& s : r.stats) {
    EXPECT_EQ(s.sweeps, 1);
    EXPECT_FALSE(s.converged);
    EXPECT_GT(s.proper_transformations, 0);
    EXPECT_GE(s.transformations, s.proper_transformations);
  }
  for (const double x : r.sigma_f)
    EXPECT_TRUE(std::isfinite(x));
}

TEST_F(GsvdGpuTest, EmptyBatch) {
  const std::vector<double> none;
  const BatchedGsvdResult<double> r = shiftop::svd::gsvd_hz_batched(
      none.data(), 3, 6, none.data(), 3, 6, 0, 3, 3, 2, cuda(GsvdOptions{}));
  EXPECT_EQ(r.batch, 0);
  EXPECT_TRUE(r.sigma_f.empty() && r.stats.empty());
}

TEST_F(GsvdGpuTest, Refusals) {
  Batch<double> in = prescribed_batch<double>(2, 6, 7, 5, 900);
  const GsvdOptions defaults;
  const auto run = [&](const Batch<double>& pairs, const GsvdOptions& options) {
    return [&pairs, options] { (void)on_gpu(pairs, options); };
  };
  {  // p < n
    Batch<double> wide{1, 6, 4, 5, std::vector<double>(30, 1.0), std::vector<double>(20, 1.0), {}};
    expect_error(run(wide, defaults), "with p < n");
  }
  {  // a zero column of G in pair 1
    Batch<double> bad = in;
    for (index_t r = 0; r < bad.p; ++r)
      bad.g[static_cast<std::size_t>(bad.p * bad.n + 3 * bad.p + r)] = 0;
    expect_error(run(bad, defaults), "pair 1: g: column 3 of G is zero");
  }
  {
    // G with two equal columns in pair 1: 0 and 32, a pair of the first step of modified modulus
    // for n = 64 (k = 0: (0, n/2)), where both are still equal, so |b| = 1 to a few ulps,
    // within the n eps of the test. (Met later, after other transformations, such columns need
    // not look parallel: the iteration may instead end with an infinite value.)
    Batch<double> bad = prescribed_batch<double>(2, 64, 64, 64, 950);
    for (index_t r = 0; r < bad.p; ++r)
      bad.g[static_cast<std::size_t>(bad.p * bad.n + 32 * bad.p + r)] =
          bad.g[static_cast<std::size_t>(bad.p * bad.n + r)];
    GsvdOptions options;
    options.strategy = StrategyKind::ModifiedModulus;
    expect_error(run(bad, options),
                 "pair 1: g: G is numerically rank deficient (columns 0 and 32 became parallel");
  }
  {
    // Equal columns 0 and 4 of G in pair 1, met after other transformations mixed them: not a
    // parallel pair, but (with the vectors, Z at hand) G z_0 falls to rounding level, as the CPU
    // finds (the host emulation of the kernels reported column 0, as the CPU does).
    Batch<double> bad = prescribed_batch<double>(2, 6, 7, 5, 39);
    for (index_t r = 0; r < bad.p; ++r)
      bad.g[static_cast<std::size_t>(bad.p * bad.n + 4 * bad.p + r)] =
          bad.g[static_cast<std::size_t>(bad.p * bad.n + r)];
    GsvdOptions options;
    options.compute_vectors = true;
    expect_error(run(bad, options), "pair 1: g: G is numerically rank deficient (column ");
  }
  {  // non-finite entries name the pair, the matrix and the entry
    Batch<double> bad = in;
    bad.f[static_cast<std::size_t>(bad.m * bad.n + 2 + 3 * bad.m)] =
        std::numeric_limits<double>::quiet_NaN();
    expect_error(run(bad, defaults), "f: pair 1: F entry (2, 3) is nan");
    bad = in;
    bad.g[static_cast<std::size_t>(1 + 4 * bad.p)] = std::numeric_limits<double>::infinity();
    expect_error(run(bad, defaults), "g: pair 0: G entry (1, 4) is inf");
  }
  {  // F huge against G (1e300 / 1e-300 in pair 1): values beyond double's range, as on the CPU
    Batch<double> bad = in;
    for (std::size_t k = 0; k < static_cast<std::size_t>(bad.m * bad.n); ++k)
      bad.f[static_cast<std::size_t>(bad.m * bad.n) + k] *= 1e300;
    for (std::size_t k = 0; k < static_cast<std::size_t>(bad.p * bad.n); ++k)
      bad.g[static_cast<std::size_t>(bad.p * bad.n) + k] *= 1e-300;
    expect_error(run(bad, defaults), "f: pair 1: generalized singular value 0 is beyond double's");
  }
  for (const Variant variant : {Variant::BlockOriented, Variant::FullBlock}) {
    GsvdOptions options;
    options.variant = variant;
    expect_error(run(in, options), "variant");
  }
  {
    GsvdOptions options;
    options.max_sweeps = -1;
    expect_error(run(in, options), "max_sweeps");
  }
  expect_error(
      [&] {
        (void)shiftop::svd::gsvd_hz_batched(in.f.data(), 5, 30, in.g.data(), 7, 35, 2, 6, 7, 5,
                                            cuda(defaults));
      },
      "ldf");
  expect_error(
      [&] {
        (void)shiftop::svd::gsvd_hz_batched(in.f.data(), 6, 29, in.g.data(), 7, 35, 2, 6, 7, 5,
                                            cuda(defaults));
      },
      "stride_f");
  expect_error(
      [&] {
        (void)shiftop::svd::gsvd_hz_batched<double>(nullptr, 6, 30, in.g.data(), 7, 35, 2, 6, 7, 5,
                                                    cuda(defaults));
      },
      "f: expected a matrix");
}

// Padded layouts: leading dimensions and strides beyond the matrices give the packed result.
TEST_F(GsvdGpuTest, PaddedLayout) {
  const Batch<Complex> in = prescribed_batch<Complex>(3, 9, 11, 8, 1000);
  const index_t ldf = 12, ldg = 13, stride_f = ldf * 8 + 5, stride_g = ldg * 8 + 3;
  std::vector<Complex> f(static_cast<std::size_t>(3 * stride_f), Complex(7, 7));
  std::vector<Complex> g(static_cast<std::size_t>(3 * stride_g), Complex(7, 7));
  for (index_t b = 0; b < 3; ++b)
    for (index_t j = 0; j < 8; ++j) {
      for (index_t i = 0; i < 9; ++i)
        f[static_cast<std::size_t>(b * stride_f + i + j * ldf)] =
            in.f[static_cast<std::size_t>(b * 72 + i + j * 9)];
      for (index_t i = 0; i < 11; ++i)
        g[static_cast<std::size_t>(b * stride_g + i + j * ldg)] =
            in.g[static_cast<std::size_t>(b * 88 + i + j * 11)];
    }
  GsvdOptions options;
  options.compute_vectors = true;
  const BatchedGsvdResult<Complex> packed = on_gpu(in, options);
  const BatchedGsvdResult<Complex> padded = shiftop::svd::gsvd_hz_batched(
      f.data(), ldf, stride_f, g.data(), ldg, stride_g, 3, 9, 11, 8, cuda(options));
  EXPECT_EQ(packed.sigma_f, padded.sigma_f);
  EXPECT_EQ(packed.sigma_g, padded.sigma_g);
  EXPECT_EQ(packed.u, padded.u);
  EXPECT_EQ(packed.v, padded.v);
  EXPECT_EQ(packed.x, padded.x);
}

// svd::gsvd_hz on one pair with backend Cuda is the batch of one (bit for bit), and a context of
// the caller's (options.gpu.context) gives the results of the library's shared one: the same
// kernels on the same GPU.
TEST_F(GsvdGpuTest, OnePairAndAGivenContext) {
  const Batch<Complex> in = prescribed_batch<Complex>(1, 9, 11, 8, 1100);
  GsvdOptions options;
  options.compute_vectors = true;
  const BatchedGsvdResult<Complex> batch = on_gpu(in, options);
  const shiftop::svd::GsvdResult<Complex> one =
      shiftop::svd::gsvd_hz(in.f.data(), 9, 9, in.g.data(), 11, 11, 8, cuda(options));
  EXPECT_TRUE(one.m == 9 && one.p == 11 && one.n == 8);
  EXPECT_EQ(one.sigma_f, batch.sigma_f);
  EXPECT_EQ(one.sigma_g, batch.sigma_g);
  EXPECT_EQ(one.u, batch.u);
  EXPECT_EQ(one.v, batch.v);
  EXPECT_EQ(one.x, batch.x);
  EXPECT_EQ(one.stats.transformations, batch.stats[0].transformations);
  EXPECT_TRUE(one.stats.converged);
  options.gpu.context = shiftop::gpu::Context::create(0);
  const BatchedGsvdResult<Complex> given = on_gpu(in, options);
  EXPECT_EQ(given.sigma_f, batch.sigma_f);
  EXPECT_EQ(given.x, batch.x);
}

}  // namespace
