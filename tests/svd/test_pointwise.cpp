// The pointwise one-sided Jacobi kernel (svd/pointwise.hpp) on random matrices, real and complex,
// FP64 and FP32, against long double products and LAPACK: relative orthogonality of the result,
// G_in V = G_out, V (J-)unitary, the column norms against LAPACK's singular values (hyperbolic:
// against the eigenvalues of G J G^H), thread-count invariance bit for bit, V's rows beyond v_rows
// untouched, exact sweep counts, extreme scalings, bad input; the rotation threshold eps sqrt(cols)
// at +-10% (exact rotation and sweep counts) and the cosines left at convergence; one sweep through
// a cancelled, recomputed norm against a textbook sweep in long double.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "support/expect_error.hpp"
#include "svd/column_norms.hpp"
#include "svd/pointwise.hpp"

namespace shiftop::svd::detail {
namespace {

using LongComplex = std::complex<long double>;

template <class T>
using R = Real<T>;

template <class T>
constexpr bool is_complex = !std::is_same_v<T, R<T>>;

template <class T>
std::vector<T> random_matrix(index_t rows, index_t cols, index_t ld, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<R<T>> normal;
  std::vector<T> g(static_cast<std::size_t>(ld * cols), T(std::numeric_limits<R<T>>::quiet_NaN()));
  for (index_t j = 0; j < cols; ++j)
    for (index_t i = 0; i < rows; ++i) {
      if constexpr (is_complex<T>)
        g[j * ld + i] = T(normal(engine), normal(engine));
      else
        g[j * ld + i] = normal(engine);
    }
  return g;
}

// The round-robin (circle) tournament: n - 1 steps (n even; odd n plays a dummy), each a set of
// disjoint pairs, every pair once.
Strategy round_robin(index_t n) {
  const index_t even = n + (n % 2);
  std::vector<std::vector<PivotPair>> steps;
  for (index_t s = 0; s + 1 < even; ++s) {
    std::vector<PivotPair> step;
    for (index_t k = 0; k < even / 2; ++k) {
      const index_t a = k == 0 ? even - 1 : (s + k) % (even - 1);
      const index_t b = (s + even - 1 - k) % (even - 1);
      if (a >= n || b >= n) continue;
      step.push_back(
          {static_cast<std::int32_t>(std::min(a, b)), static_cast<std::int32_t>(std::max(a, b))});
    }
    steps.push_back(step);
  }
  return Strategy::from_steps(StrategyKind::ReversedRowCyclicClosest, n, steps);
}

std::vector<std::int8_t> split_signs(index_t cols, index_t n_plus) {
  std::vector<std::int8_t> signs(static_cast<std::size_t>(cols), 1);
  for (index_t j = n_plus; j < cols; ++j)
    signs[j] = -1;
  return signs;
}

template <class T>
struct Run {
  std::vector<T> g, v;
  SweepCounts counts;
};

template <class T>
Run<T> run(const std::vector<T>& g_in, index_t rows, index_t cols, index_t ldg,
           std::span<const std::int8_t> signs, int threads, int max_sweeps = 60, bool sort = true,
           index_t ldv_extra = 3) {
  Run<T> result{g_in, {}, {}};
  const index_t ldv = cols + ldv_extra;
  // V = I on the used rows, NaN on the rows beyond them (which must stay untouched).
  result.v.assign(static_cast<std::size_t>(ldv * cols), T(std::numeric_limits<R<T>>::quiet_NaN()));
  for (index_t j = 0; j < cols; ++j)
    for (index_t i = 0; i < cols; ++i)
      result.v[j * ldv + i] = T(i == j ? 1 : 0);
  result.counts = orthogonalize_pointwise(result.g.data(), rows, cols, ldg, result.v.data(), cols,
                                          ldv, signs, round_robin(cols), max_sweeps, sort, threads);
  return result;
}

template <class T>
LongComplex wide(T x) {
  if constexpr (is_complex<T>)
    return {x.real(), x.imag()};
  else
    return {x, 0};
}

// max over p < q of |g_p^H g_q| / (||g_p|| ||g_q||), in long double.
template <class T>
long double largest_cosine(const std::vector<T>& g, index_t rows, index_t cols, index_t ldg) {
  long double worst = 0;
  for (index_t p = 0; p < cols; ++p)
    for (index_t q = p + 1; q < cols; ++q) {
      LongComplex dot = 0;
      long double np = 0, nq = 0;
      for (index_t i = 0; i < rows; ++i) {
        const LongComplex x = wide(g[p * ldg + i]), y = wide(g[q * ldg + i]);
        dot += std::conj(x) * y;
        np += std::norm(x);
        nq += std::norm(y);
      }
      if (np > 0 && nq > 0) worst = std::max(worst, std::abs(dot) / std::sqrt(np * nq));
    }
  return worst;
}

// ||G_in V - G_out||_F / ||G_in||_F in long double.
template <class T>
long double reconstruction_error(const std::vector<T>& g_in, const Run<T>& out, index_t rows,
                                 index_t cols, index_t ldg, index_t ldv) {
  long double error = 0, norm = 0;
  for (index_t j = 0; j < cols; ++j)
    for (index_t i = 0; i < rows; ++i) {
      LongComplex sum = 0;
      for (index_t k = 0; k < cols; ++k)
        sum += wide(g_in[k * ldg + i]) * wide(out.v[j * ldv + k]);
      error += std::norm(sum - wide(out.g[j * ldg + i]));
      norm += std::norm(wide(g_in[j * ldg + i]));
    }
  return std::sqrt(error / norm);
}

// max |V^H J V - J| in long double.
template <class T>
long double j_unitarity_error(const std::vector<T>& v, index_t cols, index_t ldv,
                              std::span<const std::int8_t> signs) {
  long double worst = 0;
  for (index_t a = 0; a < cols; ++a)
    for (index_t b = 0; b < cols; ++b) {
      LongComplex sum = 0;
      for (index_t k = 0; k < cols; ++k)
        sum += std::conj(wide(v[a * ldv + k])) * wide(v[b * ldv + k]) *
               static_cast<long double>(signs.empty() ? 1 : signs[k]);
      const long double target = a == b ? (signs.empty() ? 1 : signs[a]) : 0;
      worst = std::max(worst, std::abs(sum - LongComplex(target)));
    }
  return worst;
}

template <class T>
std::vector<double> norms_of(const std::vector<T>& g, index_t rows, index_t cols, index_t ldg) {
  std::vector<double> norms;
  for (index_t j = 0; j < cols; ++j)
    norms.push_back(column_norm(g.data() + j * ldg, rows));
  return norms;
}

// LAPACK's singular values (descending), in double from the matrix widened to double.
template <class T>
std::vector<double> lapack_singular_values(const std::vector<T>& g, index_t rows, index_t cols,
                                           index_t ldg) {
  const index_t k = std::min(rows, cols);
  std::vector<double> sigma(static_cast<std::size_t>(k)), superb(static_cast<std::size_t>(k));
  lapack_int info = 0;
  if constexpr (is_complex<T>) {
    std::vector<lapack_complex_double> a(static_cast<std::size_t>(rows * cols));
    for (index_t j = 0; j < cols; ++j)
      for (index_t i = 0; i < rows; ++i)
        a[j * rows + i] = lapack_make_complex_double(g[j * ldg + i].real(), g[j * ldg + i].imag());
    info = LAPACKE_zgesvd(LAPACK_COL_MAJOR, 'N', 'N', lapack_int(rows), lapack_int(cols), a.data(),
                          lapack_int(rows), sigma.data(), nullptr, 1, nullptr, 1, superb.data());
  } else {
    std::vector<double> a(static_cast<std::size_t>(rows * cols));
    for (index_t j = 0; j < cols; ++j)
      for (index_t i = 0; i < rows; ++i)
        a[j * rows + i] = g[j * ldg + i];
    info = LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', lapack_int(rows), lapack_int(cols), a.data(),
                          lapack_int(rows), sigma.data(), nullptr, 1, nullptr, 1, superb.data());
  }
  EXPECT_EQ(info, 0);
  return sigma;
}

// The eigenvalues of G J G^H (rows x rows, rank <= cols), ascending, from LAPACK in double.
template <class T>
std::vector<double> lapack_gjg_eigenvalues(const std::vector<T>& g, index_t rows, index_t cols,
                                           index_t ldg, std::span<const std::int8_t> signs) {
  std::vector<double> w(static_cast<std::size_t>(rows));
  lapack_int info = 0;
  const auto entry = [&](index_t a, index_t b) {
    std::complex<double> sum = 0;
    for (index_t k = 0; k < cols; ++k) {
      const LongComplex x = wide(g[k * ldg + a]), y = wide(g[k * ldg + b]);
      const LongComplex product = x * std::conj(y) * static_cast<long double>(signs[k]);
      sum += std::complex<double>(static_cast<double>(product.real()),
                                  static_cast<double>(product.imag()));
    }
    return sum;
  };
  if constexpr (is_complex<T>) {
    std::vector<lapack_complex_double> a(static_cast<std::size_t>(rows * rows));
    for (index_t b = 0; b < rows; ++b)
      for (index_t a_ = 0; a_ < rows; ++a_) {
        const auto e = entry(a_, b);
        a[b * rows + a_] = lapack_make_complex_double(e.real(), e.imag());
      }
    info = LAPACKE_zheev(LAPACK_COL_MAJOR, 'N', 'U', lapack_int(rows), a.data(), lapack_int(rows),
                         w.data());
  } else {
    std::vector<double> a(static_cast<std::size_t>(rows * rows));
    for (index_t b = 0; b < rows; ++b)
      for (index_t a_ = 0; a_ < rows; ++a_)
        a[b * rows + a_] = entry(a_, b).real();
    info = LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'U', lapack_int(rows), a.data(), lapack_int(rows),
                         w.data());
  }
  EXPECT_EQ(info, 0);
  return w;
}

template <class T>
constexpr double eps() {
  return std::numeric_limits<R<T>>::epsilon() / 2;
}

struct Size {
  index_t rows, cols;
};
// 1x1, 2x2 (a single pair), odd sizes (a dummy in the round robin), 64 and 100 rows (above the
// kernel's parallel threshold of 64 rows), 33 (odd, a vector tail).
constexpr Size kSizes[] = {{1, 1}, {2, 2}, {5, 3}, {33, 17}, {64, 64}, {100, 31}};

template <class T>
class Pointwise : public ::testing::Test {};
using Types = ::testing::Types<double, float, std::complex<double>, std::complex<float>>;
TYPED_TEST_SUITE(Pointwise, Types);

TYPED_TEST(Pointwise, SvdMatchesLapackAndIsOrthogonal) {
  using T = TypeParam;
  for (const Size size : kSizes) {
    SCOPED_TRACE(::testing::Message() << size.rows << "x" << size.cols);
    const index_t ldg = size.rows + 2;
    const auto g_in = random_matrix<T>(size.rows, size.cols, ldg, 17 + size.rows);
    const Run<T> out = run(g_in, size.rows, size.cols, ldg, {}, 1);
    const double n = static_cast<double>(size.cols);
    EXPECT_TRUE(out.counts.converged);
    // Quadratic convergence: measured at most 13 sweeps (64 x 64, the last one rotating nothing,
    // which is what converged means); a method that lost it would need several times more.
    EXPECT_LE(out.counts.sweeps, 16);
    // At least 4x the worst measured over the native and the portable build (long double
    // references, all sizes and types), in units of eps n: largest cosine 0.43,
    // ||G_in V - G_out|| / ||G_in|| 1.05, max |V^H V - I| 2.96, singular values 1.76 (of
    // sigma_max, LAPACK's error included); the hyperbolic test below: eigenvalues 2.77,
    // reconstruction 1.45, J-unitarity 2.82.
    EXPECT_LE(largest_cosine(out.g, size.rows, size.cols, ldg), 4 * eps<T>() * n);
    EXPECT_LE(reconstruction_error(g_in, out, size.rows, size.cols, ldg, size.cols + 3),
              8 * eps<T>() * n);
    EXPECT_LE(j_unitarity_error(out.v, size.cols, size.cols + 3, {}), 12 * eps<T>() * n);
    // Rows of G beyond `rows` (the NaN poison in the leading dimension) untouched, V's too.
    for (index_t j = 0; j < size.cols; ++j) {
      for (index_t i = size.rows; i < ldg; ++i)
        EXPECT_TRUE(std::isnan(std::abs(out.g[j * ldg + i])));
      for (index_t i = size.cols; i < size.cols + 3; ++i)
        EXPECT_TRUE(std::isnan(std::abs(out.v[j * (size.cols + 3) + i])));
    }
    auto norms = norms_of(out.g, size.rows, size.cols, ldg);
    // Sorted by the rotations themselves (step 5): nonincreasing.
    EXPECT_TRUE(std::is_sorted(norms.rbegin(), norms.rend()));
    std::sort(norms.rbegin(), norms.rend());
    const auto sigma = lapack_singular_values(g_in, size.rows, size.cols, ldg);
    for (std::size_t i = 0; i < sigma.size(); ++i)
      EXPECT_NEAR(norms[i], sigma[i], 16 * eps<T>() * n * sigma[0]) << "sigma " << i;
  }
}

TYPED_TEST(Pointwise, HyperbolicMatchesEigenvaluesOfGJGH) {
  using T = TypeParam;
  // The hyperbolic SVD needs full column rank: rows >= cols.
  for (const Size size : {Size{2, 2}, Size{5, 3}, Size{33, 17}, Size{64, 64}, Size{100, 31}}) {
    for (const index_t n_plus : {index_t{1}, size.cols / 2, size.cols - 1}) {
      SCOPED_TRACE(::testing::Message() << size.rows << "x" << size.cols << " n_plus " << n_plus);
      const index_t ldg = size.rows;
      const auto g_in = random_matrix<T>(size.rows, size.cols, ldg, 5 + size.cols);
      const auto signs = split_signs(size.cols, n_plus);
      const Run<T> out = run(g_in, size.rows, size.cols, ldg, signs, 1);
      const double n = static_cast<double>(size.cols);
      EXPECT_TRUE(out.counts.converged);
      const auto norms = norms_of(out.g, size.rows, size.cols, ldg);
      // Eigenvalues of G J G^H: sigma_j^2 J_jj and rows - cols zeros. Ascending from LAPACK: the
      // (cols - n_plus) negative ones first, the n_plus positive ones last.
      const auto w = lapack_gjg_eigenvalues(g_in, size.rows, size.cols, ldg, signs);
      std::vector<double> negative, positive;
      for (index_t j = 0; j < size.cols; ++j)
        (signs[j] > 0 ? positive : negative).push_back(norms[j] * norms[j] * signs[j]);
      std::sort(negative.begin(), negative.end());
      std::sort(positive.begin(), positive.end());
      const double scale = std::max(std::abs(w.front()), std::abs(w.back()));
      double worst = 0;
      for (std::size_t k = 0; k < negative.size(); ++k)
        worst = std::max(worst, std::abs(negative[k] - w[k]) / scale);
      for (std::size_t k = 0; k < positive.size(); ++k)
        worst = std::max(worst, std::abs(positive[k] - w[w.size() - positive.size() + k]) / scale);
      // Bounds: see SvdMatchesLapackAndIsOrthogonal (eigenvalues relative to the largest
      // |eigenvalue|, LAPACK's error included).
      EXPECT_LE(worst, 12 * eps<T>() * n);
      EXPECT_LE(reconstruction_error(g_in, out, size.rows, size.cols, ldg, size.cols + 3),
                8 * eps<T>() * n);
      EXPECT_LE(j_unitarity_error(out.v, size.cols, size.cols + 3, signs), 12 * eps<T>() * n);
    }
  }
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

TYPED_TEST(Pointwise, ThreadCountDoesNotChangeABit) {
  using T = TypeParam;
  for (const Size size : {Size{64, 64}, Size{100, 31}}) {
    SCOPED_TRACE(::testing::Message() << size.rows << "x" << size.cols);
    const auto g_in = random_matrix<T>(size.rows, size.cols, size.rows, 99);
    const auto signs = split_signs(size.cols, size.cols / 3);
    for (const bool hyperbolic : {false, true}) {
      const std::span<const std::int8_t> j =
          hyperbolic ? std::span<const std::int8_t>(signs) : std::span<const std::int8_t>();
      const Run<T> one = run(g_in, size.rows, size.cols, size.rows, j, 1);
      for (const int threads : {2, 3}) {
        const Run<T> many = run(g_in, size.rows, size.cols, size.rows, j, threads);
        EXPECT_TRUE(same_bits(one.g, many.g)) << threads << " threads, hyperbolic " << hyperbolic;
        EXPECT_TRUE(same_bits(one.v, many.v)) << threads << " threads, hyperbolic " << hyperbolic;
        EXPECT_EQ(one.counts.rotations, many.counts.rotations);
        EXPECT_EQ(one.counts.sweeps, many.counts.sweeps);
      }
    }
  }
}

TYPED_TEST(Pointwise, SweepsAreCountedExactly) {
  using T = TypeParam;
  const index_t rows = 33, cols = 17;
  const auto g_in = random_matrix<T>(rows, cols, rows, 3);
  // Each sweep starts from the norms of G itself, so the state between sweeps is G (and V):
  // two runs of one sweep are bitwise one run of two sweeps.
  const Run<T> first = run(g_in, rows, cols, rows, {}, 1, 1);
  EXPECT_EQ(first.counts.sweeps, 1);
  EXPECT_FALSE(first.counts.converged);
  EXPECT_EQ(first.counts.rotations, cols * (cols - 1) / 2);  // random columns: every pair rotates
  EXPECT_GT(first.counts.proper_rotations, 0);
  const Run<T> second = run(first.g, rows, cols, rows, {}, 1, 1);
  const Run<T> both = run(g_in, rows, cols, rows, {}, 1, 2);
  EXPECT_EQ(both.counts.sweeps, 2);
  EXPECT_TRUE(same_bits(second.g, both.g));
  // Without V the columns come out the same, bit for bit.
  std::vector<T> g = g_in;
  const SweepCounts counts = orthogonalize_pointwise<T>(g.data(), rows, cols, rows, nullptr, 0, 1,
                                                        {}, round_robin(cols), 60, true, 1);
  const Run<T> with_v = run(g_in, rows, cols, rows, {}, 1);
  EXPECT_TRUE(same_bits(g, with_v.g));
  EXPECT_EQ(counts.sweeps, with_v.counts.sweeps);
  EXPECT_TRUE(counts.converged);
  // Unsorted: the same singular values, not necessarily in order.
  const Run<T> unsorted = run(g_in, rows, cols, rows, {}, 1, 60, false);
  EXPECT_TRUE(unsorted.counts.converged);
  auto a = norms_of(unsorted.g, rows, cols, rows), b = norms_of(with_v.g, rows, cols, rows);
  std::sort(a.rbegin(), a.rend());
  for (index_t k = 0; k < cols; ++k)
    EXPECT_NEAR(a[k], b[k], 8 * eps<T>() * cols * b[0]);
}

// G scaled by 2^k so that h_pp = ||g_p||^2 overflows (k > 0) or the products of entries underflow
// (k < 0): the norms must come out as 2^k times the unscaled ones.
TYPED_TEST(Pointwise, ExtremeScalesNeitherOverflowNorUnderflow) {
  using T = TypeParam;
  using limits = std::numeric_limits<R<T>>;
  const index_t rows = 40, cols = 21;
  const auto g_in = random_matrix<T>(rows, cols, rows, 11);
  const Run<T> reference = run(g_in, rows, cols, rows, {}, 1);
  const auto reference_norms = norms_of(reference.g, rows, cols, rows);
  const auto signs = split_signs(cols, 7);
  const Run<T> hyperbolic_reference = run(g_in, rows, cols, rows, signs, 1);
  const auto hyperbolic_norms = norms_of(hyperbolic_reference.g, rows, cols, rows);
  // Entries near max / 2^8 and near min_normal * 2^8.
  for (const int k : {limits::max_exponent - 8, limits::min_exponent + 8}) {
    SCOPED_TRACE(::testing::Message() << "scale 2^" << k);
    std::vector<T> scaled = g_in;
    for (T& x : scaled)
      x *= std::ldexp(R<T>(1), k);
    for (const bool hyperbolic : {false, true}) {
      const Run<T> out =
          run(scaled, rows, cols, rows,
              hyperbolic ? std::span<const std::int8_t>(signs) : std::span<const std::int8_t>(), 1);
      EXPECT_TRUE(out.counts.converged);
      const auto& expected = hyperbolic ? hyperbolic_norms : reference_norms;
      const double largest = *std::max_element(expected.begin(), expected.end());
      for (index_t j = 0; j < cols; ++j) {
        const double norm =
            std::ldexp(static_cast<double>(column_norm(out.g.data() + j * rows, rows)), -k);
        EXPECT_NEAR(norm, expected[j], 8 * eps<T>() * cols * largest) << "column " << j;
      }
      EXPECT_LE(reconstruction_error(scaled, out, rows, cols, rows, cols + 3), 8 * eps<T>() * cols);
    }
  }
}

// gamma_k = k u / (1 - k u) (Higham, Accuracy and Stability, Lemma 3.1).
template <class T>
double gamma(index_t k) {
  const double ku = static_cast<double>(k) * eps<T>();
  return ku / (1 - ku);
}

// The rule "rotate (p, q) iff |cos| >= eps sqrt(cols), converged when a sweep rotates none"
// (pointwise.hpp), at its threshold. G = [2 e_0, c e_0 + e_1, e_2, .., e_{cols-1}] has one pair
// that is not orthogonal, (0, 1), and the kernel's cosine of it is exactly c: the dot product's
// only nonzero term is 2 c (times 2: exact), ||g_0|| = sqrt(4) = 2 exactly, and ||g_1|| =
// sqrt(fl(c^2 + 1)) = 1 exactly because c^2 < u, so 2 c / (2 * 1) = c with no rounding at all
// (the true cosine, c / sqrt(1 + c^2), is c to a relative c^2 / 2 < 1e-12). c = 0.9 and 1.1 times
// the tolerance then fall on either side of it by 10%, which no rounding can blur. cols = 64 is
// where eps sqrt(cols) and eps cols differ 8x, cols = 2 where they differ sqrt(2)x. The rotation
// of the norms 2 and 1 has |cot 2phi| = 0.75 / c above sqrt(2 / eps), so cos == 1: not proper, yet
// it must count (the stopping rule of issue 28).
TYPED_TEST(Pointwise, RotatesExactlyThePairsAtOrAboveEpsSqrtCols) {
  using T = TypeParam;
  for (const index_t cols : {index_t{2}, index_t{3}, index_t{64}}) {
    const R<T> tolerance = static_cast<R<T>>(eps<T>()) * std::sqrt(static_cast<R<T>>(cols));
    for (const double factor : {0.9, 1.1}) {
      SCOPED_TRACE(::testing::Message()
                   << "cols " << cols << ", cosine " << factor << " x eps sqrt(cols)");
      const R<T> c = static_cast<R<T>>(factor) * tolerance;
      std::vector<T> g_in(static_cast<std::size_t>(cols * cols), T(0));
      for (index_t j = 0; j < cols; ++j)
        g_in[j * cols + j] = T(j == 0 ? 2 : 1);
      g_in[cols] = T(c);  // g_1 = c e_0 + e_1
      const bool rotates = factor > 1;
      const Run<T> one = run(g_in, cols, cols, cols, {}, 1, 1);
      EXPECT_EQ(one.counts.rotations, rotates ? 1 : 0);
      EXPECT_EQ(one.counts.converged, !rotates);
      const Run<T> out = run(g_in, cols, cols, cols, {}, 1);
      EXPECT_TRUE(out.counts.converged);
      // A sweep that rotates the pair, then one that finds every pair orthogonal.
      EXPECT_EQ(out.counts.sweeps, rotates ? 2 : 1);
      EXPECT_EQ(out.counts.rotations, rotates ? 1 : 0);
      EXPECT_EQ(out.counts.proper_rotations, 0);
      const long double cosine = largest_cosine(out.g, cols, cols, cols);
      if (rotates) {
        // Annihilated: tan = -2c/3 (to the two roundings of 1 / (2 |cot 2phi|), cot 2phi =
        // -1.5 / (2c)) leaves g_0 = fl(2 - tan c) e_0 - tan e_1 and g_1 = fl(c + 2 tan) e_0 + e_1,
        // whose cosine is, to first order, c times (2/3 + 2) u. Measured: at most 1.05 u c.
        EXPECT_LE(cosine, 4 * eps<T>() * c);
      } else {
        EXPECT_TRUE(same_bits(g_in, out.g));  // not even a swap: the norms are 2, 1, 1, ..
        EXPECT_NEAR(static_cast<double>(cosine), static_cast<double>(c), 1e-12 * c);
      }
    }
  }
}

// After convergence the last sweep rotated nothing (it may only have swapped columns), so every
// pair of the output had a computed cosine below eps sqrt(cols). The true cosine is then bounded by
// that plus the rounding of the computation: with m the real length of a column (rows, complex
// 2 rows), the dot product is off by at most gamma_m ||g_p|| ||g_q|| (complex: its real and
// imaginary parts each by gamma_m times sums whose total is <= 2 ||g_p|| ||g_q||), each norm by a
// relative gamma_{m+1} (a sum of m squares, then sqrt), the quotient and product by u each:
//   |cos| <= eps sqrt(cols) (1 + gamma_{2m+4}) + k gamma_m,  k = 1 real, 2 complex.
// (Worst case, not the probabilistic sqrt(m) u: a bound the kernel can never exceed.) Measured:
// at most 7.99 u (64 x 64, every type; eps sqrt(64) = 8 u), against bounds of 72 u (real) and
// 264 u (complex) there.
TYPED_TEST(Pointwise, ConvergedCosinesStayBelowTheToleranceAndTheirRounding) {
  using T = TypeParam;
  for (const Size size : kSizes) {
    SCOPED_TRACE(::testing::Message() << size.rows << "x" << size.cols);
    const auto g_in = random_matrix<T>(size.rows, size.cols, size.rows, 41 + size.cols);
    const Run<T> out = run(g_in, size.rows, size.cols, size.rows, {}, 1);
    ASSERT_TRUE(out.counts.converged);
    const index_t m = (is_complex<T> ? 2 : 1) * size.rows;
    const double tolerance = eps<T>() * std::sqrt(static_cast<double>(size.cols));
    const double bound =
        tolerance * (1 + gamma<T>(2 * m + 4)) + (is_complex<T> ? 2 : 1) * gamma<T>(m);
    EXPECT_LE(largest_cosine(out.g, size.rows, size.cols, size.rows), bound);
  }
}

// What the reference sweep did to one pair: the exact new squared norms over the old ones, and
// whether the new columns were swapped.
struct PairEvent {
  long double factor_p = 1, factor_q = 1;
  bool swapped = false;
};

struct TextbookSweep {
  std::vector<LongComplex> g;     // rows x cols, leading dimension rows
  std::vector<PairEvent> events;  // one per pair of the strategy, in order
};

// One sweep of the textbook one-sided Jacobi method (Hestenes; the thesis' section 2.1) in long
// double, J = I (positive) or -I, over the strategy's pairs in order (the pairs of a step are
// disjoint, so sequential order is theirs): a pair is rotated iff |h_pq| / sqrt(h_pp h_qq) >=
// tolerance, by the rotation of svd/rotation.hpp's conventions that annihilates h_pq exactly
// (cot 2phi = (h_qq - h_pp) / (2 |h_pq|), tan phi = sign / (|cot 2phi| + sqrt(1 + cot^2 2phi)),
// phase e^{i theta} = h_pq / |h_pq|), with the norms computed afresh from the new columns, and the
// new columns are swapped when out of order (positive: ||g_p'|| < ||g_q'||; negative: >).
template <class T>
TextbookSweep textbook_sweep(const std::vector<T>& g_in, index_t rows, index_t cols,
                             const Strategy& strategy, bool positive, long double tolerance) {
  TextbookSweep out;
  out.g.resize(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < out.g.size(); ++i)
    out.g[i] = wide(g_in[i]);
  const auto column = [&](index_t j) { return out.g.data() + j * rows; };
  const auto squared_norm = [&](const LongComplex* x) {
    long double sum = 0;
    for (index_t i = 0; i < rows; ++i)
      sum += std::norm(x[i]);
    return sum;
  };
  for (const PivotPair pair : strategy.pairs()) {
    LongComplex* x = column(pair.p);
    LongComplex* y = column(pair.q);
    const long double h_pp = squared_norm(x), h_qq = squared_norm(y);
    LongComplex h_pq = 0;
    for (index_t i = 0; i < rows; ++i)
      h_pq += std::conj(x[i]) * y[i];
    PairEvent event;
    if (std::abs(h_pq) >= tolerance * std::sqrt(h_pp * h_qq)) {
      const long double cot2 = (h_qq - h_pp) / (2 * std::abs(h_pq));
      const long double tangent =
          std::copysign(1.0L, cot2) / (std::abs(cot2) + std::sqrt(1 + cot2 * cot2));
      const long double cosine = 1 / std::sqrt(1 + tangent * tangent);
      const LongComplex phase = h_pq / std::abs(h_pq);
      for (index_t i = 0; i < rows; ++i) {
        const LongComplex xi = x[i], yi = y[i];
        x[i] = cosine * (xi - tangent * std::conj(phase) * yi);
        y[i] = cosine * (yi + tangent * phase * xi);
      }
      event.factor_p = squared_norm(x) / h_pp;
      event.factor_q = squared_norm(y) / h_qq;
    }
    const long double new_p = squared_norm(x), new_q = squared_norm(y);
    event.swapped = positive ? new_p < new_q : new_p > new_q;
    if (event.swapped) std::swap_ranges(x, x + rows, y);
    out.events.push_back(event);
  }
  return out;
}

// dgsvj0's recomputation of a norm that the prediction lost to cancellation (pointwise.cpp: a
// predicted squared norm below sqrt(eps) of the old one) must read the column the new value lives
// in after the swap of step 5. The first pair, g_0 and g_0 + delta e_0, is nearly parallel: its
// rotation leaves one column of norm ~ delta / sqrt(2), which sorting moves to the other position
// when it is p under J = I (+1 columns nonincreasing), or q under J = -I (-1 columns
// nondecreasing); both orders of the pair are run under both J, so each of the two cases is hit
// once and each non-swapping case once. The small column then meets the other columns (random) in
// the same sweep (the row-cyclic order), whose rotations use its recorded norm; a norm read from
// the wrong column is ~ 1 / delta too large and turns those rotations into different ones.
// Compared with a textbook sweep in long double, one sweep (max_sweeps = 1).
//
// Bound. The computed small column s = c (g_p - tan g_q) carries absolute errors of the size
// u ||g_0|| from the subtraction and from the computed angle (tan's error is that of cot 2phi,
// which comes from the computed norms and cosine: a few gamma_{m+1}), i.e. a relative error of
// kappa (m + 4) u with kappa = ||g_0|| / ||s|| (m the real length of a column); the later
// rotations of s with columns of norm ~1 carry it over at most doubled (their angles are
// well-conditioned: cosines ~ 0.5, norms apart), and add their own few u. So each column agrees
// with the reference to a relative 4 kappa (m + 4) u, the long double reference's own error
// (u_long / u_T times smaller) included. Measured: at most 1.2 kappa u (float; double 0.7, complex
// 0.3 and 0.8), 34 to 250 times below the bound; a norm read from the wrong column: 250 to 5e5.
TYPED_TEST(Pointwise, CancelledNormIsRecomputedFromTheColumnItMovedTo) {
  using T = TypeParam;
  const index_t rows = 6, cols = 4;
  // delta^2 / ||g_0||^2 well below sqrt(u): the cancellation branch is taken.
  const R<T> delta = std::is_same_v<R<T>, double> ? std::ldexp(R<T>(1), -17) : R<T>(1) / 128;
  const Strategy strategy = Strategy::create(StrategyKind::RowCyclic, cols);
  const long double tolerance = eps<T>() * std::sqrt(static_cast<long double>(cols));
  const index_t m = (is_complex<T> ? 2 : 1) * rows;
  for (const bool positive : {true, false}) {
    for (const bool cancelled_is_p : {true, false}) {
      SCOPED_TRACE(::testing::Message() << "J = " << (positive ? "I" : "-I") << ", cancelled "
                                        << (cancelled_is_p ? "p" : "q"));
      std::vector<T> g_in = random_matrix<T>(rows, cols, rows, 23);
      g_in[0] = T(1);  // g_0's entry 0 real and positive: ||g_0 + delta e_0|| > ||g_0||
      // ||g_q|| > ||g_p|| makes tan > 0, which cancels p; the other order cancels q.
      const index_t large = cancelled_is_p ? 1 : 0;
      std::copy_n(g_in.begin(), rows, g_in.begin() + rows);
      g_in[large * rows] += delta;
      const std::vector<std::int8_t> signs(static_cast<std::size_t>(cols), positive ? 1 : -1);
      std::vector<T> g = g_in;
      const SweepCounts counts = orthogonalize_pointwise<T>(g.data(), rows, cols, rows, nullptr, 0,
                                                            1, signs, strategy, 1, true, 1);
      EXPECT_EQ(counts.rotations, cols * (cols - 1) / 2);
      const TextbookSweep reference =
          textbook_sweep(g_in, rows, cols, strategy, positive, tolerance);
      // The case is the intended one: the first pair's cancelled factor is below sqrt(u), and it
      // is swapped exactly when the small column must move.
      const PairEvent first = reference.events.front();
      const long double cancelled = cancelled_is_p ? first.factor_p : first.factor_q;
      ASSERT_LE(cancelled, std::sqrt(eps<T>()) / 16);
      ASSERT_EQ(first.swapped, cancelled_is_p == positive);
      // ||g_0|| / ||s|| (the factor is ||s||^2 over the cancelled column's old squared norm).
      const double kappa = static_cast<double>(1 / std::sqrt(cancelled));
      double worst = 0;
      for (index_t j = 0; j < cols; ++j) {
        long double error = 0, norm = 0;
        for (index_t i = 0; i < rows; ++i) {
          error += std::norm(wide(g[j * rows + i]) - reference.g[j * rows + i]);
          norm += std::norm(reference.g[j * rows + i]);
        }
        worst = std::max(worst, static_cast<double>(std::sqrt(error / norm)));
      }
      EXPECT_LE(worst, 4 * kappa * static_cast<double>(m + 4) * eps<T>());
    }
  }
}

TEST(PointwiseInput, BadArgumentsAreNamed) {
  std::vector<double> g(12, 1.0), v(9, 0.0);
  const Strategy strategy = round_robin(3);
  const auto call = [&](index_t rows, index_t cols, index_t ldg, index_t ldv,
                        std::vector<std::int8_t> signs, const Strategy& s, int sweeps,
                        int threads) {
    orthogonalize_pointwise<double>(g.data(), rows, cols, ldg, v.data(), 3, ldv, signs, s, sweeps,
                                    true, threads);
  };
  using shiftop::testing::expect_error;
  expect_error([&] { call(4, 3, 3, 3, {}, strategy, 1, 1); }, "ldg 3 must be >= rows 4");
  expect_error([&] { call(4, 3, 4, 2, {}, strategy, 1, 1); }, "ldv 2");
  expect_error([&] { call(4, 3, 4, 3, {1, -1}, strategy, 1, 1); }, "signs has 2 entries");
  expect_error([&] { call(4, 3, 4, 3, {1, 0, -1}, strategy, 1, 1); }, "signs must be +1 or -1");
  expect_error([&] { call(4, 3, 4, 3, {}, round_robin(4), 1, 1); }, "strategy of order 4");
  expect_error([&] { call(4, 3, 4, 3, {}, strategy, 0, 1); }, "max_sweeps 0");
  expect_error([&] { call(4, 3, 4, 3, {}, strategy, 1, 0); }, "threads 0");
}

}  // namespace
}  // namespace shiftop::svd::detail
