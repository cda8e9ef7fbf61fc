// MLEM, SIRT and CGLS (shiftop/circ/reconstruct.hpp) in FP32 and FP64 against references built
// here by plain loops on the explicit dense C (eq. 1 of sparse-block-circulant-spmv): the same
// iterations run densely, the least-squares solution from a long double Cholesky factor of C^T C,
// the residual and the Poisson negative log-likelihood recomputed from the returned image. On
// random nonnegative block-circulant matrices (k = 1, 3 and 150, odd block sizes, an empty row
// and an empty column of blocks) and on the ct2d scanner with a noiseless Shepp-Logan sinogram:
// MLEM's likelihood never decreases and its image stays >= 0; its error to the phantom falls
// below a measured bound; CGLS reaches the least-squares solution; SIRT converges.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "shiftop/circ/operator.hpp"
#include "shiftop/circ/reconstruct.hpp"
#include "shiftop/models/ct2d.hpp"
#include "support/expect_error.hpp"

namespace shiftop::circ {
namespace {

// A first block row and its explicit C (row-major, double).
struct Problem {
  circ::FirstBlockRow<double> a;
  std::vector<double> dense;

  index_t rows() const { return a.shape.rows(); }
  index_t cols() const { return a.shape.cols(); }
  double at(index_t i, index_t j) const { return dense[static_cast<std::size_t>(i * cols() + j)]; }
};

// Each entry of A is nonzero with probability `density`, uniform in [0.1, 1]. With `holes`, row
// 0 of A is empty (so row 0 of every block row of C is 0) and column 0 of every block is empty
// (so columns 0, nb, 2nb, ... of C are 0).
Problem random_problem(const Shape& s, double density, bool holes, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  Problem p{{s, {0}, {}, {}}, {}};
  for (index_t r = 0; r < s.mb; ++r) {
    for (index_t c = 0; c < s.cols(); ++c) {
      const bool keep = uniform(gen) < density;
      const double v = 0.1 + 0.9 * uniform(gen);
      if (!keep || (holes && (r == 0 || c % s.nb == 0))) continue;
      p.a.indices.push_back(c);
      p.a.data.push_back(v);
    }
    p.a.indptr.push_back(static_cast<std::int64_t>(p.a.indices.size()));
  }
  // Eq. (1): block (i, j) of C is A_{(j - i) mod k}; column c of A is column c mod nb of A_{c/nb}.
  p.dense.assign(static_cast<std::size_t>(s.rows() * s.cols()), 0.0);
  for (index_t i = 0; i < s.k; ++i)
    for (index_t j = 0; j < s.k; ++j)
      for (index_t r = 0; r < s.mb; ++r)
        for (auto e = p.a.indptr[r]; e < p.a.indptr[r + 1]; ++e) {
          const index_t c = p.a.indices[static_cast<std::size_t>(e)];
          if (c / s.nb != ((j - i) % s.k + s.k) % s.k) continue;
          p.dense[static_cast<std::size_t>((i * s.mb + r) * s.cols() + j * s.nb + c % s.nb)] +=
              p.a.data[static_cast<std::size_t>(e)];
        }
  return p;
}

template <class T>
circ::Operator<T> make_operator(const circ::FirstBlockRow<double>& a) {
  const circ::FirstBlockRow<T> rounded{a.shape, a.indptr, a.indices,
                                       std::vector<T>(a.data.begin(), a.data.end())};
  circ::Options options;
  options.planning = Planning::Estimate;
  return circ::Operator<T>::create(rounded, options);
}

std::vector<double> multiply(const Problem& p, const std::vector<double>& x) {
  std::vector<double> y(static_cast<std::size_t>(p.rows()), 0.0);
  for (index_t i = 0; i < p.rows(); ++i)
    for (index_t j = 0; j < p.cols(); ++j)
      y[static_cast<std::size_t>(i)] += p.at(i, j) * x[static_cast<std::size_t>(j)];
  return y;
}

std::vector<double> multiply_transpose(const Problem& p, const std::vector<double>& y) {
  std::vector<double> x(static_cast<std::size_t>(p.cols()), 0.0);
  for (index_t i = 0; i < p.rows(); ++i)
    for (index_t j = 0; j < p.cols(); ++j)
      x[static_cast<std::size_t>(j)] += p.at(i, j) * y[static_cast<std::size_t>(i)];
  return x;
}

double norm(const std::vector<double>& v) {
  double s = 0;
  for (const double x : v)
    s += x * x;
  return std::sqrt(s);
}

template <class T>
std::vector<double> widen(const std::vector<T>& v) {
  return {v.begin(), v.end()};
}

double relative_error(const std::vector<double>& got, const std::vector<double>& want) {
  double d = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    d += (got[i] - want[i]) * (got[i] - want[i]);
  return std::sqrt(d) / norm(want);
}

// sum_i (Cx)_i - b_i log (Cx)_i, terms with b_i = 0 counting (Cx)_i.
double poisson_nll(const std::vector<double>& p, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < p.size(); ++i)
    s += b[i] == 0 ? p[i] : p[i] - b[i] * std::log(p[i]);
  return s;
}

// The methods run densely, as the header states them.
std::vector<double> dense_mlem(const Problem& p, const std::vector<double>& b, int iterations) {
  const std::vector<double> s = multiply_transpose(p, std::vector<double>(b.size(), 1.0));
  std::vector<double> x(s.size());
  for (std::size_t j = 0; j < x.size(); ++j)
    x[j] = s[j] > 0 ? 1.0 : 0.0;
  for (int n = 0; n < iterations; ++n) {
    const std::vector<double> q = multiply(p, x);
    std::vector<double> ratio(q.size());
    for (std::size_t i = 0; i < q.size(); ++i)
      ratio[i] = q[i] > 0 ? b[i] / q[i] : 0.0;
    const std::vector<double> back = multiply_transpose(p, ratio);
    for (std::size_t j = 0; j < x.size(); ++j)
      x[j] = s[j] > 0 ? x[j] * back[j] / s[j] : 0.0;
  }
  return x;
}

// nonnegative = false: the same iteration without the projection on x >= 0 (only to show that a
// test's data make the projection matter).
std::vector<double> dense_sirt(const Problem& p, const std::vector<double>& b, int iterations,
                               bool nonnegative = true) {
  const std::vector<double> row = multiply(p, std::vector<double>(p.cols(), 1.0));
  const std::vector<double> col = multiply_transpose(p, std::vector<double>(b.size(), 1.0));
  std::vector<double> x(col.size(), 0.0);
  for (int n = 0; n < iterations; ++n) {
    const std::vector<double> q = multiply(p, x);
    std::vector<double> w(q.size());
    for (std::size_t i = 0; i < q.size(); ++i)
      w[i] = row[i] > 0 ? (b[i] - q[i]) / row[i] : 0.0;
    const std::vector<double> g = multiply_transpose(p, w);
    for (std::size_t j = 0; j < x.size(); ++j) {
      x[j] += col[j] > 0 ? g[j] / col[j] : 0.0;
      if (nonnegative) x[j] = std::max(0.0, x[j]);
    }
  }
  return x;
}

// argmin ||C x - b|| for a C of full column rank: C^T C x = C^T b by Cholesky in long double.
std::vector<double> least_squares(const Problem& p, const std::vector<double>& b) {
  const auto n = static_cast<std::size_t>(p.cols());
  std::vector<long double> g(n * n, 0.0L), rhs(n, 0.0L);
  for (index_t i = 0; i < p.rows(); ++i)
    for (std::size_t j = 0; j < n; ++j) {
      rhs[j] += static_cast<long double>(p.at(i, index_t(j))) * b[static_cast<std::size_t>(i)];
      for (std::size_t l = 0; l < n; ++l)
        g[j * n + l] += static_cast<long double>(p.at(i, index_t(j))) * p.at(i, index_t(l));
    }
  for (std::size_t j = 0; j < n; ++j) {  // G = L L^T, L in the lower triangle of g
    for (std::size_t l = 0; l < j; ++l)
      g[j * n + j] -= g[j * n + l] * g[j * n + l];
    if (!(g[j * n + j] > 0)) ADD_FAILURE() << "C^T C is not positive definite";
    g[j * n + j] = std::sqrt(g[j * n + j]);
    for (std::size_t i = j + 1; i < n; ++i) {
      for (std::size_t l = 0; l < j; ++l)
        g[i * n + j] -= g[i * n + l] * g[j * n + l];
      g[i * n + j] /= g[j * n + j];
    }
  }
  for (std::size_t j = 0; j < n; ++j) {  // L z = rhs
    for (std::size_t l = 0; l < j; ++l)
      rhs[j] -= g[j * n + l] * rhs[l];
    rhs[j] /= g[j * n + j];
  }
  for (std::size_t j = n; j-- > 0;) {  // L^T x = z
    for (std::size_t l = j + 1; l < n; ++l)
      rhs[j] -= g[l * n + j] * rhs[l];
    rhs[j] /= g[j * n + j];
  }
  return {rhs.begin(), rhs.end()};
}

std::vector<double> positive_vector(std::size_t n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> uniform(0.5, 2.0);
  std::vector<double> v(n);
  for (double& x : v)
    x = uniform(gen);
  return v;
}

template <class T>
std::vector<T> narrow(const std::vector<double>& v) {
  return {v.begin(), v.end()};
}

template <class T>
double eps() {
  return std::numeric_limits<T>::epsilon();
}

// Every method reports iterations 1, 2, ... through the callback, the same as its history, with
// the time nondecreasing; the last entry's residual (and MLEM's likelihood) is the returned
// image's, recomputed densely.
template <class T, class Method>
ReconResult<T> run_checked(Method method, circ::Operator<T>& op, const Problem& p,
                           const std::vector<T>& b, int iterations, bool mlem) {
  ReconOptions options;
  options.iterations = iterations;
  std::vector<ReconProgress> seen;
  options.progress = [&](const ReconProgress& progress) { seen.push_back(progress); };
  ReconResult<T> result = method(op, std::span<const T>(b), options);
  EXPECT_EQ(result.history.size(), seen.size());
  for (std::size_t n = 0; n < seen.size(); ++n) {
    EXPECT_EQ(seen[n].iteration, static_cast<int>(n) + 1);
    EXPECT_EQ(seen[n].relative_residual, result.history[n].relative_residual);
    EXPECT_EQ(seen[n].neg_log_likelihood, result.history[n].neg_log_likelihood);
    if (n > 0) {
      EXPECT_GE(seen[n].seconds, seen[n - 1].seconds);
    }
    if (!mlem) {
      EXPECT_EQ(seen[n].neg_log_likelihood, 0.0);
    }
  }
  const std::vector<double> image = widen(result.image);
  for (const double v : image)
    EXPECT_TRUE(std::isfinite(v));
  const std::vector<double> q = multiply(p, image), b64 = widen(b);
  std::vector<double> r(q.size());
  for (std::size_t i = 0; i < q.size(); ++i)
    r[i] = q[i] - b64[i];
  if (!result.history.empty()) {
    EXPECT_NEAR(result.history.back().relative_residual, norm(r) / norm(b64),
                1e3 * eps<T>() * (1 + norm(q) / norm(b64)));
    if (mlem) {
      const double nll = poisson_nll(q, b64);
      EXPECT_NEAR(result.history.back().neg_log_likelihood, nll,
                  1e2 * eps<T>() * (1 + std::fabs(nll)) * double(b.size()));
    }
  }
  return result;
}

const auto kMlem = [](auto& op, auto b, const ReconOptions& o) { return mlem(op, b, o); };
const auto kSirt = [](auto& op, auto b, const ReconOptions& o) { return sirt(op, b, o); };
const auto kCgls = [](auto& op, auto b, const ReconOptions& o) { return cgls(op, b, o); };

template <class T>
class Reconstruct : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Reconstruct, Precisions);

// Shapes: k = 1 (C = A), odd blocks, and k = 150 (the paper's) with tiny blocks.
const std::vector<Shape> kShapes{{1, 9, 4}, {3, 7, 5}, {150, 3, 2}};

TYPED_TEST(Reconstruct, MlemEqualsTheDenseIterationAndNeverLosesLikelihood) {
  using T = TypeParam;
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(s.str());
    const Problem p = random_problem(s, 0.4, true, 7);
    auto op = make_operator<T>(p.a);
    // Poisson-like data: a positive image's projection, perturbed, with the empty rows at 0.
    std::vector<double> b = multiply(p, positive_vector(std::size_t(s.cols()), 8));
    const std::vector<double> wobble = positive_vector(b.size(), 9);
    for (std::size_t i = 0; i < b.size(); ++i)
      b[i] *= 0.5 + 0.5 * wobble[i];
    const std::vector<T> bt = narrow<T>(b);
    const int iterations = 40;
    const ReconResult<T> result = run_checked(kMlem, op, p, bt, iterations, true);
    ASSERT_EQ(result.history.size(), std::size_t(iterations));
    const double error = relative_error(widen(result.image), dense_mlem(p, widen(bt), iterations));
    std::printf("MLEM %s %s: %.2e from the dense iteration, NLL %.6g -> %.6g\n",
                sizeof(T) == 4 ? "fp32" : "fp64", s.str().c_str(), error,
                result.history.front().neg_log_likelihood,
                result.history.back().neg_log_likelihood);
    EXPECT_LT(error, sizeof(T) == 4 ? 1e-5 : 1e-13);  // measured 6.2e-7 and 5.1e-15
    for (std::size_t n = 1; n < result.history.size(); ++n) {
      const double before = result.history[n - 1].neg_log_likelihood;
      EXPECT_LE(result.history[n].neg_log_likelihood, before + 10 * eps<T>() * std::fabs(before))
          << "iteration " << n + 1;
    }
    EXPECT_LT(result.history.back().neg_log_likelihood, result.history.front().neg_log_likelihood);
    for (std::size_t j = 0; j < result.image.size(); ++j) {
      EXPECT_GE(result.image[j], T(0));
      if (j % std::size_t(s.nb) == 0) {
        EXPECT_EQ(result.image[j], T(0)) << "empty column " << j;
      }
    }
  }
}

TYPED_TEST(Reconstruct, MlemStaysNonnegativeAfterEveryIteration) {
  using T = TypeParam;
  const Problem p = random_problem({3, 7, 5}, 0.4, false, 11);
  auto op = make_operator<T>(p.a);
  const std::vector<T> b = narrow<T>(multiply(p, positive_vector(std::size_t(p.cols()), 12)));
  for (int iterations = 1; iterations <= 6; ++iterations) {
    const ReconResult<T> result = run_checked(kMlem, op, p, b, iterations, true);
    for (const T v : result.image)
      EXPECT_GE(v, T(0)) << "after " << iterations << " iterations";
  }
}

TYPED_TEST(Reconstruct, SirtEqualsTheDenseIterationAndConverges) {
  using T = TypeParam;
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(s.str());
    const Problem p = random_problem(s, 0.4, true, 21);
    auto op = make_operator<T>(p.a);
    // Consistent data from a nonnegative image: SIRT's fixed points include it.
    std::vector<double> truth = positive_vector(std::size_t(s.cols()), 22);
    for (std::size_t j = 0; j < truth.size(); j += std::size_t(s.nb))
      truth[j] = 0;  // the empty columns
    const std::vector<T> b = narrow<T>(multiply(p, truth));
    const int iterations = 2000;
    const ReconResult<T> result = run_checked(kSirt, op, p, b, iterations, false);
    const double error = relative_error(widen(result.image), dense_sirt(p, widen(b), iterations));
    const double residual = result.history.back().relative_residual;
    std::printf("SIRT %s %s: %.2e from the dense iteration, residual %.3e -> %.3e\n",
                sizeof(T) == 4 ? "fp32" : "fp64", s.str().c_str(), error,
                result.history.front().relative_residual, residual);
    EXPECT_LT(error, sizeof(T) == 4 ? 1e-5 : 1e-13);  // measured 4.9e-7 and 6.3e-16
    // Measured: 5.5e-8 (k = 1) and 8.2e-8 (k = 3) in FP32, 1.7e-16 and 1.4e-16 in FP64; k = 150,
    // whose C is half empty columns, converges slowest: 3.03e-4 from 4.3e-2 in both precisions and
    // on the native and portable builds. That bound is the iteration's rate, not rounding (which
    // moves it by ~1e-7 in FP32), so it is not 4x the measured value.
    EXPECT_LT(residual, s.k == 150 ? 5e-4 : (sizeof(T) == 4 ? 1e-6 : 1e-14));
    for (const T v : result.image)
      EXPECT_GE(v, T(0));
  }
}

// Noisy, inconsistent data from an image that is 0 on two thirds of its voxels: the unconstrained
// iteration goes negative there (the 9 x 4 case of kShapes stays positive, so other shapes), so
// SIRT's projection on x >= 0 decides the result. The image must equal the dense projected
// iteration (and so stay >= 0), not the unprojected one.
TYPED_TEST(Reconstruct, SirtOnNoisyDataEqualsTheProjectedDenseIteration) {
  using T = TypeParam;
  for (const Shape& s : {Shape{1, 30, 12}, Shape{3, 7, 5}, Shape{150, 3, 2}}) {
    SCOPED_TRACE(s.str());
    const Problem p = random_problem(s, 0.4, true, 51);
    auto op = make_operator<T>(p.a);
    std::vector<double> truth = positive_vector(std::size_t(s.cols()), 52);
    for (std::size_t j = 0; j < truth.size(); ++j)
      if (j % 3 != 1) truth[j] = 0;
    std::vector<double> b = multiply(p, truth);
    // Additive noise of 30% of the data's RMS (some values go negative); the empty rows stay 0.
    std::mt19937_64 gen(53);
    std::normal_distribution<double> noise(0.0, 0.3 * norm(b) / std::sqrt(double(b.size())));
    for (double& v : b)
      if (v != 0) v += noise(gen);
    const std::vector<T> bt = narrow<T>(b);
    const int iterations = 300;
    const ReconResult<T> result = run_checked(kSirt, op, p, bt, iterations, false);
    const std::vector<double> want = dense_sirt(p, widen(bt), iterations);
    const std::vector<double> unprojected = dense_sirt(p, widen(bt), iterations, false);
    const double error = relative_error(widen(result.image), want);
    const double projection = relative_error(unprojected, want);
    std::printf(
        "SIRT %s %s noisy: %.2e from the dense iteration (the unprojected one is %.2e "
        "away)\n",
        sizeof(T) == 4 ? "fp32" : "fp64", s.str().c_str(), error, projection);
    ASSERT_GT(projection, 1e-2) << "the projection does not matter on these data";
    EXPECT_LT(error, sizeof(T) == 4 ? 1e-5 : 1e-13);  // measured 2.5e-7 and 2.1e-16
    const auto lowest = std::min_element(result.image.begin(), result.image.end());
    EXPECT_GE(*lowest, T(0)) << "voxel " << lowest - result.image.begin();
  }
}

TYPED_TEST(Reconstruct, CglsReachesTheLeastSquaresSolution) {
  using T = TypeParam;
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(s.str());
    const Problem p = random_problem(s, 0.5, false, 31);
    auto op = make_operator<T>(p.a);
    // Inconsistent data (more rows than columns): the residual at the solution is not 0.
    std::vector<double> b = positive_vector(std::size_t(s.rows()), 32);
    const std::vector<T> bt = narrow<T>(b);
    const std::vector<double> want = least_squares(p, widen(bt));
    const int iterations = 3 * int(s.cols());
    const ReconResult<T> result = run_checked(kCgls, op, p, bt, iterations, false);
    const double error = relative_error(widen(result.image), want);
    std::printf("CGLS %s %s: %zu iterations, %.2e from the least-squares solution\n",
                sizeof(T) == 4 ? "fp32" : "fp64", s.str().c_str(), result.history.size(), error);
    // Measured: at most 1.2e-4 (FP32, k = 150, condition 116) and 2.6e-14 (FP64).
    EXPECT_LT(error, sizeof(T) == 4 ? 1e-3 : 1e-12);
    // CGLS minimises ||b - C x|| over growing Krylov spaces: never increases.
    for (std::size_t n = 1; n < result.history.size(); ++n)
      EXPECT_LE(result.history[n].relative_residual,
                result.history[n - 1].relative_residual * (1 + 10 * eps<T>()));
    // The normal equations' residual C^T (b - C x), relative to C^T b, ends near rounding.
    std::vector<double> r = multiply(p, widen(result.image));
    for (std::size_t i = 0; i < r.size(); ++i)
      r[i] = double(bt[i]) - r[i];
    const double normal = norm(multiply_transpose(p, r)) / norm(multiply_transpose(p, widen(bt)));
    std::printf("  normal-equations residual %.2e\n", normal);
    // At least 4x the worst measured over the native and portable builds: 2.45e-7 and 5.0e-16.
    EXPECT_LT(normal, sizeof(T) == 4 ? 1e-6 : 1e-14);
  }
}

// The scanner of include/shiftop/models/ct2d.hpp at a size the dense checks can afford.
models::ct2d::Geometry small_scanner() {
  models::ct2d::Geometry g;
  g.positions = 8;
  g.rings = 6;
  g.sectors = 32;
  g.detectors = 24;
  return g;
}

TYPED_TEST(Reconstruct, MlemReconstructsANoiselessPhantom) {
  using T = TypeParam;
  const models::ct2d::Geometry g = small_scanner();
  auto op = make_operator<T>(models::ct2d::system_matrix<double>(g));
  const std::vector<double> phantom = models::ct2d::shepp_logan(g);
  std::vector<T> b(static_cast<std::size_t>(op.shape().rows()));
  op.apply(circ::Op::C, narrow<T>(phantom), b);
  double previous = std::numeric_limits<double>::infinity();
  for (const int iterations : {10, 50, 200}) {
    ReconOptions options;
    options.iterations = iterations;
    const ReconResult<T> result = mlem(op, std::span<const T>(b), options);
    const double error = relative_error(widen(result.image), phantom);
    std::printf("MLEM %s ct2d %s, %d iterations: image error %.4f, residual %.3e\n",
                sizeof(T) == 4 ? "fp32" : "fp64", g.str().c_str(), iterations, error,
                result.history.back().relative_residual);
    EXPECT_LT(error, previous);
    previous = error;
    for (std::size_t n = 1; n < result.history.size(); ++n) {
      const double before = result.history[n - 1].neg_log_likelihood;
      EXPECT_LE(result.history[n].neg_log_likelihood, before + 10 * eps<T>() * std::fabs(before));
    }
  }
  // Measured 0.336, 0.282 and 0.234 after 10, 50 and 200 iterations, FP32 and FP64 alike and on
  // the native and portable builds: the 192 x 192 system of 6 rings is coarse, and MLEM converges
  // slowly in the image. The bound is MLEM's progress, not a rounding tolerance.
  EXPECT_LT(previous, 0.25);
}

// Poisson data (about 100 counts per unit line integral, some bins 0): the likelihood still
// never decreases, and C^T 1 > 0 keeps every voxel the scanner sees.
TYPED_TEST(Reconstruct, MlemNeverLosesLikelihoodOnNoisyScans) {
  using T = TypeParam;
  const models::ct2d::Geometry g = small_scanner();
  const Problem p{models::ct2d::system_matrix<double>(g), {}};
  auto op = make_operator<T>(p.a);
  const std::vector<double> phantom = models::ct2d::shepp_logan(g);
  std::vector<T> clean(static_cast<std::size_t>(op.shape().rows()));
  op.apply(circ::Op::C, narrow<T>(phantom), clean);
  const std::vector<T> b = narrow<T>(models::ct2d::poisson_noise(widen(clean), 100.0, 5));
  ReconOptions options;
  options.iterations = 100;
  const ReconResult<T> result = mlem(op, std::span<const T>(b), options);
  ASSERT_EQ(result.history.size(), 100u);
  for (std::size_t n = 1; n < result.history.size(); ++n) {
    const double before = result.history[n - 1].neg_log_likelihood;
    EXPECT_LE(result.history[n].neg_log_likelihood, before + 10 * eps<T>() * std::fabs(before))
        << "iteration " << n + 1;
  }
  for (const T v : result.image)
    EXPECT_GE(v, T(0));
  std::printf("MLEM %s noisy ct2d: NLL %.8g -> %.8g, residual %.3e\n",
              sizeof(T) == 4 ? "fp32" : "fp64", result.history.front().neg_log_likelihood,
              result.history.back().neg_log_likelihood, result.history.back().relative_residual);
}

TYPED_TEST(Reconstruct, RefusesBadInput) {
  using T = TypeParam;
  const Problem p = random_problem({3, 4, 2}, 0.6, false, 41);
  auto op = make_operator<T>(p.a);
  std::vector<T> b(12, T(1));
  ReconOptions options;
  options.iterations = 0;
  using shiftop::testing::expect_error;
  expect_error([&] { mlem(op, std::span<const T>(b), options); },
               "MLEM: 0 iterations: expected at least 1");
  options.iterations = 3;
  const std::vector<T> short_b(11, T(1));
  expect_error([&] { sirt(op, std::span<const T>(short_b), options); },
               "SIRT: the sinogram holds 11 values, expected k*mb = 12");
  b[5] = T(-1);
  expect_error([&] { mlem(op, std::span<const T>(b), options); },
               "MLEM: sinogram value 5 is -1: expected counts >= 0");
  EXPECT_NO_THROW(cgls(op, std::span<const T>(b), options));  // least squares takes any sign
  b[5] = std::numeric_limits<T>::quiet_NaN();
  expect_error([&] { cgls(op, std::span<const T>(b), options); },
               "CGLS: sinogram value 5 is nan: expected finite numbers");
  const std::vector<T> zero(12, T(0));
  expect_error([&] { mlem(op, std::span<const T>(zero), options); }, "the sinogram is all zero");
  // A system matrix with a negative column sum is not one MLEM or SIRT can use.
  circ::FirstBlockRow<double> negative = p.a;
  for (double& v : negative.data)
    v = -v;
  auto bad = make_operator<T>(negative);
  std::fill(b.begin(), b.end(), T(1));
  expect_error([&] { mlem(bad, std::span<const T>(b), options); },
               "expected a nonnegative system matrix");
  expect_error([&] { sirt(bad, std::span<const T>(b), options); },
               "expected a nonnegative system matrix");
}

TEST(ReconMethod, ParsesTheThreeNames) {
  for (const ReconMethod m : {ReconMethod::Mlem, ReconMethod::Sirt, ReconMethod::Cgls})
    EXPECT_EQ(parse_name<ReconMethod>(name_of(m), "method"), m);
  shiftop::testing::expect_error([] { parse_name<ReconMethod>("art", "method"); },
                                 "method: expected mlem, sirt or cgls, got 'art'");
}

}  // namespace
}  // namespace shiftop::circ
