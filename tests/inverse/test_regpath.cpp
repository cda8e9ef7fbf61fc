// The regularisation path (shiftop/inverse/regpath.hpp) against its definition, built densely and
// independently of the FFT and the GSVD: the block circulant C_F (period L = 2*Nt) of F's kernels,
// the regulariser C_R from its time-domain stencils (mass * I; time_weight * D^k with D the
// circulant first difference (D m)_t = m_t - m_{t-1}; space_weight * Lap kron I_L), the normal
// equations (C_F^T C_F + alpha^2 C_R^T C_R) m = C_F^T [d; 0] solved by LAPACK, the residual, the
// seminorm and the GCV with the dense influence matrix's trace. Also: the choices on synthetic
// paths and the refusals.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "shiftop/inverse/regpath.hpp"
#include "support/expect_error.hpp"

namespace shiftop::inverse {
namespace {

using testing::expect_error;

enum class Kind { Identity, Dt1, Dt2, LaplacianDt1 };

struct Case {
  Shape shape;
  bool general;  // a first block row (else block lower-triangular)
  Kind kind;
};

std::string name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  const char* kinds[] = {"identity", "dt1", "dt2", "laplacian_dt1"};
  return fmt::format("nd{}_nm{}_nt{}_{}_{}", c.shape.nd, c.shape.nm, c.shape.nt,
                     c.general ? "general" : "lower", kinds[static_cast<int>(c.kind)]);
}

// A path graph's Laplacian over the Nm parameter points (symmetric, singular).
std::vector<double> path_laplacian(index_t nm) {
  std::vector<double> lap(static_cast<std::size_t>(nm * nm), 0.0);
  for (index_t i = 0; i + 1 < nm; ++i) {
    lap[i * nm + i] += 1;
    lap[(i + 1) * nm + i + 1] += 1;
    lap[i * nm + i + 1] -= 1;
    lap[(i + 1) * nm + i] -= 1;
  }
  return lap;
}

Regulariser regulariser_for(Kind kind, index_t nm) {
  Regulariser r;
  r.mass = 0.7;
  switch (kind) {
    case Kind::Identity:
      break;
    case Kind::Dt1:
      r.time_derivative = 1, r.time_weight = 1.3;
      break;
    case Kind::Dt2:
      r.time_derivative = 2, r.time_weight = 0.9;
      break;
    case Kind::LaplacianDt1:
      r.time_derivative = 1, r.time_weight = 0.5;
      r.laplacian = path_laplacian(nm), r.space_weight = 1.7;
      break;
  }
  return r;
}

// Row-major dense matrices.
struct Dense {
  index_t rows = 0, cols = 0;
  std::vector<double> a;
  Dense(index_t r, index_t c) : rows(r), cols(c), a(static_cast<std::size_t>(r * c), 0.0) {}
  double& operator()(index_t i, index_t j) { return a[static_cast<std::size_t>(i * cols + j)]; }
  double operator()(index_t i, index_t j) const {
    return a[static_cast<std::size_t>(i * cols + j)];
  }
};

Dense transpose_times(const Dense& x, const Dense& y) {  // x^T y
  Dense z(x.cols, y.cols);
  for (index_t k = 0; k < x.rows; ++k)
    for (index_t i = 0; i < x.cols; ++i)
      for (index_t j = 0; j < y.cols; ++j)
        z(i, j) += x(k, i) * y(k, j);
  return z;
}

std::vector<double> times(const Dense& x, const std::vector<double>& v) {
  std::vector<double> out(static_cast<std::size_t>(x.rows), 0.0);
  for (index_t i = 0; i < x.rows; ++i)
    for (index_t j = 0; j < x.cols; ++j)
      out[i] += x(i, j) * v[j];
  return out;
}

double norm(const std::vector<double>& v) {
  double s = 0;
  for (double x : v)
    s += x * x;
  return std::sqrt(s);
}

struct Problem {
  Shape shape;
  std::vector<double> column, row, data;
  Regulariser regulariser;
  Dense cf{0, 0}, cr{0, 0};
};

Problem make_problem(const Case& c, unsigned seed) {
  Problem p;
  const Shape s = c.shape;
  p.shape = s;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  p.column.resize(static_cast<std::size_t>(s.kernel_size()));
  for (double& v : p.column)
    v = normal(rng);
  if (c.general) {
    p.row.resize(p.column.size());
    for (double& v : p.row)
      v = normal(rng);
    for (index_t k = 0; k < s.nd * s.nm; ++k)
      p.row[k * s.nt] = p.column[k * s.nt];
  }
  p.data.resize(static_cast<std::size_t>(s.nd * s.nt));
  for (double& v : p.data)
    v = normal(rng);
  p.regulariser = regulariser_for(c.kind, s.nm);

  // C_F: block (i, j) is the L x L circulant of the kernel f_ij padded to L: lags 0..Nt-1 at
  // 0..Nt-1, lags -(Nt-1)..-1 of a general F at L-(Nt-1)..L-1, zero at Nt.
  const index_t L = 2 * s.nt;
  p.cf = Dense(s.nd * L, s.nm * L);
  for (index_t i = 0; i < s.nd; ++i)
    for (index_t j = 0; j < s.nm; ++j) {
      std::vector<double> kernel(static_cast<std::size_t>(L), 0.0);
      for (index_t t = 0; t < s.nt; ++t)
        kernel[t] = p.column[(i * s.nm + j) * s.nt + t];
      for (index_t t = 1; c.general && t < s.nt; ++t)
        kernel[L - t] = p.row[(i * s.nm + j) * s.nt + t];
      for (index_t a = 0; a < L; ++a)
        for (index_t b = 0; b < L; ++b)
          p.cf(i * L + a, j * L + b) = kernel[(a - b + L) % L];
    }
  // C_R from the stencils, blocks stacked as in the symbol.
  const Regulariser& r = p.regulariser;
  const index_t n = s.nm * L;
  const bool time = r.time_derivative > 0, space = !r.laplacian.empty();
  p.cr = Dense(n * (1 + (time ? 1 : 0) + (space ? 1 : 0)), n);
  for (index_t k = 0; k < n; ++k)
    p.cr(k, k) = r.mass;
  index_t first = n;
  if (time) {
    Dense d(L, L), dk(L, L);
    for (index_t t = 0; t < L; ++t) {
      d(t, t) = 1;
      d(t, (t - 1 + L) % L) -= 1;
    }
    if (r.time_derivative == 1) {
      dk = d;
    } else {
      for (index_t a = 0; a < L; ++a)
        for (index_t b = 0; b < L; ++b)
          for (index_t q = 0; q < L; ++q)
            dk(a, b) += d(a, q) * d(q, b);
    }
    for (index_t j = 0; j < s.nm; ++j)
      for (index_t a = 0; a < L; ++a)
        for (index_t b = 0; b < L; ++b)
          p.cr(first + j * L + a, j * L + b) = r.time_weight * dk(a, b);
    first += n;
  }
  if (space)
    for (index_t i = 0; i < s.nm; ++i)
      for (index_t j = 0; j < s.nm; ++j)
        for (index_t t = 0; t < L; ++t)
          p.cr(first + i * L + t, j * L + t) = r.space_weight * r.laplacian[i * s.nm + j];
  return p;
}

struct Reference {
  std::vector<double> m;  // L steps per parameter
  double residual = 0, seminorm = 0, gcv = 0;
};

Reference dense_reference(const Problem& p, double alpha) {
  const Shape s = p.shape;
  const index_t L = 2 * s.nt, n = s.nm * L, nd = s.nd * L;
  const Dense ftf = transpose_times(p.cf, p.cf), rtr = transpose_times(p.cr, p.cr);
  Dense a(n, n);
  for (std::size_t k = 0; k < a.a.size(); ++k)
    a.a[k] = ftf.a[k] + alpha * alpha * rtr.a[k];
  std::vector<double> padded(static_cast<std::size_t>(nd), 0.0);
  for (index_t i = 0; i < s.nd; ++i)
    for (index_t t = 0; t < s.nt; ++t)
      padded[i * L + t] = p.data[i * s.nt + t];
  // Right-hand sides: C_F^T [d; 0], then C_F^T C_F (for trace(A^{-1} C_F^T C_F)).
  Dense rhs(n, 1 + n);
  for (index_t k = 0; k < nd; ++k)
    for (index_t j = 0; j < n; ++j)
      rhs(j, 0) += p.cf(k, j) * padded[k];
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < n; ++j)
      rhs(i, 1 + j) = ftf(i, j);
  const auto size = static_cast<lapack_int>(n);
  EXPECT_EQ(LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', size, static_cast<lapack_int>(1 + n), a.a.data(),
                          size, rhs.a.data(), static_cast<lapack_int>(1 + n)),
            0);
  Reference ref;
  // The solution itself from the stacked least-squares problem [C_F; alpha C_R] m ~ [d; 0] by
  // QR (LAPACK's dgels): its error grows with cond([C_F; alpha C_R]), not with its square as the
  // normal equations' does (2e-10 against 1e-13 at alpha = 1e-2 for 3x5x7).
  const index_t rows = nd + p.cr.rows;
  Dense stacked(rows, n);
  std::vector<double> target(static_cast<std::size_t>(rows), 0.0);
  for (index_t i = 0; i < nd; ++i) {
    for (index_t j = 0; j < n; ++j)
      stacked(i, j) = p.cf(i, j);
    target[i] = padded[i];
  }
  for (index_t i = 0; i < p.cr.rows; ++i)
    for (index_t j = 0; j < n; ++j)
      stacked(nd + i, j) = alpha * p.cr(i, j);
  EXPECT_EQ(LAPACKE_dgels(LAPACK_ROW_MAJOR, 'N', static_cast<lapack_int>(rows), size, 1,
                          stacked.a.data(), size, target.data(), 1),
            0);
  ref.m.assign(target.begin(), target.begin() + n);
  std::vector<double> r = times(p.cf, ref.m);
  for (index_t k = 0; k < nd; ++k)
    r[k] -= padded[k];
  ref.residual = norm(r);
  ref.seminorm = norm(times(p.cr, ref.m));
  double free = 0;  // trace(I - C_F A^{-1} C_F^T)
  if (s.nd >= s.nm) {
    double trace = 0;  // trace(C_F A^{-1} C_F^T) = trace(A^{-1} C_F^T C_F)
    for (index_t j = 0; j < n; ++j)
      trace += rhs(j, 1 + j);
    free = static_cast<double>(nd) - trace;
  } else {
    // A wide F nearly fits the data at small alpha: nd - trace would cancel. By Woodbury,
    // I - C_F A^{-1} C_F^T = alpha^2 (alpha^2 I + K)^{-1}, K = C_F (C_R^T C_R)^{-1} C_F^T.
    Dense m = rtr, y(n, nd);
    for (index_t i = 0; i < n; ++i)
      for (index_t k = 0; k < nd; ++k)
        y(i, k) = p.cf(k, i);
    EXPECT_EQ(LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', size, static_cast<lapack_int>(nd), m.a.data(),
                            size, y.a.data(), static_cast<lapack_int>(nd)),
              0);
    Dense b(nd, nd), identity(nd, nd);
    for (index_t i = 0; i < nd; ++i)
      for (index_t k = 0; k < nd; ++k) {
        for (index_t j = 0; j < n; ++j)
          b(i, k) += p.cf(i, j) * y(j, k);
        if (i == k) b(i, k) += alpha * alpha, identity(i, k) = 1;
      }
    EXPECT_EQ(LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', static_cast<lapack_int>(nd),
                            static_cast<lapack_int>(nd), b.a.data(), static_cast<lapack_int>(nd),
                            identity.a.data(), static_cast<lapack_int>(nd)),
              0);
    for (index_t i = 0; i < nd; ++i)
      free += alpha * alpha * identity(i, i);
  }
  ref.gcv = ref.residual * ref.residual / (free * free);
  return ref;
}

class RegPathDefinition : public ::testing::TestWithParam<Case> {};

TEST_P(RegPathDefinition, MatchesTheDenseEmbeddedTikhonovProblem) {
  const Case c = GetParam();
  const Shape s = c.shape;
  const Problem p = make_problem(c, 1234 + static_cast<unsigned>(s.nd * 100 + s.nm * 10 + s.nt));
  const RegularizationPath path(p.column, p.row, s, p.regulariser, p.data);
  EXPECT_EQ(path.shape(), s);
  const std::vector<double> alphas = {1e-2, 1e-1, 1.0, 10.0, 100.0};
  const std::vector<PathPoint> points = path.evaluate(alphas);
  ASSERT_EQ(points.size(), alphas.size());
  double worst_m = 0, worst_curve = 0;
  for (std::size_t k = 0; k < alphas.size(); ++k) {
    const Reference ref = dense_reference(p, alphas[k]);
    const std::vector<double> m = path.solve(alphas[k]);
    ASSERT_EQ(m.size(), static_cast<std::size_t>(s.nm * s.nt));
    double diff = 0, scale = 0;
    for (index_t j = 0; j < s.nm; ++j)
      for (index_t t = 0; t < s.nt; ++t) {
        const double e = ref.m[j * 2 * s.nt + t];
        diff = std::max(diff, std::abs(m[j * s.nt + t] - e));
        scale = std::max(scale, std::abs(e));
      }
    const double m_error = diff / scale;
    const PathPoint& q = points[k];
    EXPECT_EQ(q.alpha, alphas[k]);
    const double curve_error = std::max({std::abs(q.residual_norm - ref.residual) / ref.residual,
                                         std::abs(q.seminorm - ref.seminorm) / ref.seminorm,
                                         std::abs(q.gcv - ref.gcv) / ref.gcv});
    worst_m = std::max(worst_m, m_error);
    worst_curve = std::max(worst_curve, curve_error);
    // Measured over these cases (alphas 1e-2..1e2): solution at most 6.1e-14, curves 2.7e-11
    // (the GCV's reference trace, from the normal equations, limits the latter).
    EXPECT_LT(m_error, 1e-12) << "alpha " << alphas[k];
    EXPECT_LT(curve_error, 1e-9) << "alpha " << alphas[k] << ": residual " << q.residual_norm
                                 << " vs " << ref.residual << ", seminorm " << q.seminorm << " vs "
                                 << ref.seminorm << ", gcv " << q.gcv << " vs " << ref.gcv;
  }
  RecordProperty("worst_solution_error", fmt::format("{:.3g}", worst_m));
  RecordProperty("worst_curve_error", fmt::format("{:.3g}", worst_curve));
  std::printf("worst relative errors: solution %.3g, curves %.3g\n", worst_m, worst_curve);
  for (index_t w = 0; w <= s.nt; ++w) {
    const std::vector<double> values = path.generalized_values(w);
    ASSERT_EQ(values.size(), static_cast<std::size_t>(s.nm));
    EXPECT_TRUE(std::is_sorted(values.rbegin(), values.rend())) << "frequency " << w;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, RegPathDefinition,
    ::testing::Values(Case{{1, 1, 1}, false, Kind::Identity}, Case{{1, 1, 1}, true, Kind::Dt2},
                      Case{{2, 3, 4}, false, Kind::Identity}, Case{{2, 3, 4}, true, Kind::Dt1},
                      Case{{2, 3, 4}, false, Kind::Dt2}, Case{{2, 3, 4}, true, Kind::LaplacianDt1},
                      Case{{3, 5, 7}, true, Kind::Identity}, Case{{3, 5, 7}, false, Kind::Dt1},
                      Case{{3, 5, 7}, true, Kind::Dt2}, Case{{3, 5, 7}, false, Kind::LaplacianDt1},
                      Case{{4, 2, 5}, true, Kind::LaplacianDt1}, Case{{5, 3, 2}, false, Kind::Dt2},
                      // Nt+1 = 18 frequencies: the FFT series' stride pads to 20.
                      Case{{3, 4, 17}, true, Kind::Dt1}),
    name);

// A symbol against the dense stencils' DFT: R^[w] = sum_t R_t exp(-2 pi i w t / L).
TEST(Regulariser, SymbolRowsAndEntries) {
  const Regulariser r = regulariser_for(Kind::LaplacianDt1, 3);
  EXPECT_EQ(r.rows(3), 9);
  Regulariser plain;
  EXPECT_EQ(plain.rows(4), 4);
  plain.time_derivative = 2;
  EXPECT_EQ(plain.rows(4), 8);
  plain.time_weight = 0.0;  // a zero weight leaves the block out
  EXPECT_EQ(plain.rows(4), 4);
  const std::vector<std::complex<double>> symbol = r.symbol(3, 1, 8);
  ASSERT_EQ(symbol.size(), 27U);
  // delta(1) = 1 - exp(-i pi / 4)
  const std::complex<double> delta = 1.0 - std::polar(1.0, -std::numbers::pi / 4);
  EXPECT_EQ(symbol[0], std::complex<double>(0.7));
  EXPECT_EQ(symbol[1], std::complex<double>{});
  EXPECT_LT(std::abs(symbol[3 + 0] - 0.5 * delta), 1e-15);
  EXPECT_EQ(symbol[6 + 0], std::complex<double>(1.7));      // Lap(0,0) = 1
  EXPECT_EQ(symbol[6 + 1], std::complex<double>(-1.7));     // Lap(1,0) = -1
  EXPECT_EQ(symbol[9 + 6 + 1], std::complex<double>(3.4));  // Lap(1,1) = 2, column 1
}

// Every frequency is its own work item: the thread count changes nothing, bit for bit.
TEST(RegPathThreads, ResultsDoNotDependOnTheThreadCount) {
  const Problem p = make_problem({{3, 4, 9}, true, Kind::LaplacianDt1}, 99);
  RegPathOptions one, two;
  one.threads = 1;
  two.threads = 2;
  const RegularizationPath a(p.column, p.row, p.shape, p.regulariser, p.data, one);
  const RegularizationPath b(p.column, p.row, p.shape, p.regulariser, p.data, two);
  const std::vector<double> alphas = {1e-3, 0.3, 30.0};
  const auto pa = a.evaluate(alphas), pb = b.evaluate(alphas);
  for (std::size_t k = 0; k < alphas.size(); ++k) {
    EXPECT_EQ(pa[k].residual_norm, pb[k].residual_norm);
    EXPECT_EQ(pa[k].seminorm, pb[k].seminorm);
    EXPECT_EQ(pa[k].gcv, pb[k].gcv);
    EXPECT_EQ(a.solve(alphas[k]), b.solve(alphas[k]));
  }
}

// The GSVDs run in batches of frequencies (RegPathOptions::frequencies_per_batch): a batch of 1,
// of 3 (10 frequencies: 3 + 3 + 3 + 1) and all at once give the same path bit for bit, wide
// (Nd < Nm: X^{-1} kept to its first Nd columns) and tall.
TEST(RegPathBatches, ResultsDoNotDependOnTheBatch) {
  for (const Case c :
       {Case{{3, 5, 9}, true, Kind::LaplacianDt1}, Case{{5, 3, 9}, false, Kind::Dt2}}) {
    const Problem p = make_problem(c, 98);
    RegPathOptions one, three;
    one.frequencies_per_batch = 1;
    three.frequencies_per_batch = 3;
    const RegularizationPath all(p.column, p.row, p.shape, p.regulariser, p.data);
    const RegularizationPath a(p.column, p.row, p.shape, p.regulariser, p.data, one);
    const RegularizationPath b(p.column, p.row, p.shape, p.regulariser, p.data, three);
    const std::vector<double> alphas = {1e-3, 0.3, 30.0};
    const auto pa = a.evaluate(alphas), pb = b.evaluate(alphas), pall = all.evaluate(alphas);
    for (std::size_t k = 0; k < alphas.size(); ++k) {
      EXPECT_EQ(pa[k].residual_norm, pall[k].residual_norm);
      EXPECT_EQ(pb[k].residual_norm, pall[k].residual_norm);
      EXPECT_EQ(pa[k].gcv, pall[k].gcv);
      EXPECT_EQ(pb[k].seminorm, pall[k].seminorm);
      EXPECT_EQ(a.solve(alphas[k]), all.solve(alphas[k]));
      EXPECT_EQ(b.solve(alphas[k]), all.solve(alphas[k]));
    }
  }
}

// What a path keeps: per frequency sigma_f, sigma_g, the kept sigma_f and the coefficients (Nm
// each), the residual outside U, and X^{-1}'s first r = min(Nd, Nm) columns; not X's LU (Nm^2 per
// frequency), which the path kept before issue 31 and which made Nm = 2000, Nt = 1000 need 64 GB.
TEST(RegPathMemory, KeepsXInverseToTheRankOnly) {
  for (const Case c :
       {Case{{3, 8, 9}, true, Kind::LaplacianDt1}, Case{{6, 4, 9}, false, Kind::Dt1}}) {
    const Problem p = make_problem(c, 97);
    const RegularizationPath path(p.column, p.row, p.shape, p.regulariser, p.data);
    const std::size_t nfreq = static_cast<std::size_t>(p.shape.nt + 1);
    const auto nm = static_cast<std::size_t>(p.shape.nm);
    const auto r = static_cast<std::size_t>(std::min(p.shape.nd, p.shape.nm));
    EXPECT_EQ(path.bytes(), 8 * nfreq * (3 * nm + 1) + 16 * nfreq * (nm + nm * r)) << p.shape.str();
  }
}

std::vector<PathPoint> synthetic(const std::vector<double>& residual,
                                 const std::vector<double>& seminorm,
                                 const std::vector<double>& gcv) {
  std::vector<PathPoint> path(residual.size());
  for (std::size_t k = 0; k < path.size(); ++k)
    path[k] = {std::pow(10.0, static_cast<double>(k) - 3.0), residual[k], seminorm[k], gcv[k]};
  return path;
}

TEST(Choices, GcvMinimumFirstOnTies) {
  const auto path = synthetic({1, 1, 1, 1, 1}, {1, 1, 1, 1, 1}, {5, 2, 3, 2, 4});
  EXPECT_EQ(gcv_choice(path), 1U);
  EXPECT_EQ(gcv_choice(std::span(path).first(1)), 0U);
}

TEST(Choices, LCurveCornerAtTheKnee) {
  // An L: log seminorm falls steeply while log residual barely moves, then the residual grows
  // while the seminorm stays: the knee is at index 4.
  std::vector<double> residual, seminorm;
  for (int k = 0; k < 9; ++k) {
    const double x = k <= 4 ? 0.01 * k : 0.04 + 1.0 * (k - 4);
    const double y = k <= 4 ? 4.0 - 1.0 * k : 0.0 - 0.01 * (k - 4);
    residual.push_back(std::exp(x));
    seminorm.push_back(std::exp(y));
  }
  const auto path = synthetic(residual, seminorm, std::vector<double>(9, 1.0));
  EXPECT_EQ(lcurve_corner(path), std::optional<std::size_t>(4));
  // The same knee as the last point but one of its steep arm (the corner at the grid's end: the
  // best alpha may be beyond it) and the flat arm alone (no corner on it): none.
  EXPECT_EQ(lcurve_corner(std::span(path).first(6)), std::nullopt);
  EXPECT_EQ(lcurve_corner(std::span(path).last(5)), std::nullopt);
  // Fewer than 5 points: none.
  EXPECT_EQ(lcurve_corner(std::span(path).subspan(2, 4)), std::nullopt);
}

// Paths without a corner: a straight line in the log-log plane (both norms powers of alpha), and
// the parabola (x, y) = (s^2 + s, s^2 - s) of the next test on |s| <= 0.1, whose curvature peaks
// at s = 0 but whose tangent turns by only 22.6 degrees there (a bend, no L); on |s| <= 0.5 it
// turns by 90 degrees and has its corner at s = 0.
TEST(Choices, NoLCurveCornerOnStraightOrGentlePaths) {
  std::vector<double> residual, seminorm;
  for (int k = 0; k < 9; ++k) {
    residual.push_back(std::exp(0.5 * k));
    seminorm.push_back(std::exp(-0.3 * k));
  }
  EXPECT_EQ(lcurve_corner(synthetic(residual, seminorm, std::vector<double>(9, 1.0))),
            std::nullopt);
  for (const double half_width : {0.1, 0.5}) {
    std::vector<PathPoint> path;
    for (int k = 0; k < 9; ++k) {
      const double s = half_width * (k - 4) / 4.0;
      path.push_back({1e-3 * std::exp(s), std::exp(s * s + s), std::exp(s * s - s), 1.0});
    }
    if (half_width < 0.2)
      EXPECT_EQ(lcurve_corner(path), std::nullopt) << "|s| <= " << half_width;
    else
      EXPECT_EQ(lcurve_corner(path), std::optional<std::size_t>(4)) << "|s| <= " << half_width;
  }
}

// A corner known in closed form on uneven alpha grids. The curve (x, y) = (s^2 + s, s^2 - s),
// s = log alpha - log 1e-3, is a parabola with its vertex, the point of largest curvature
// kappa(s) = 4 / (8 s^2 + 2)^{3/2}, at s = 0; on -0.5 < s < 0.5 the residual grows and the
// seminorm falls, as on an L-curve. x and y are quadratic in log alpha, so three-point
// derivatives for the actual spacing are exact and the curvature at each grid point is kappa(s)
// to rounding: the corner is the grid point nearest s = 0. The plain centred difference
// (v_{k+1} - v_{k-1}) / (h_0 + h_1) is off by (h_1 - h_0) v'' there: it takes the neighbour
// with the even spacing (kappa 1.368 against the vertex's 1.189, the true 1.414 and 1.393).
TEST(Choices, LCurveCornerOnAnUnevenGrid) {
  const std::vector<double> left = {-0.45, -0.3, -0.15, -0.05, 0.0, 0.4, 0.48};
  std::vector<double> right;  // the mirror image: the long step on the other side
  for (auto s = left.rbegin(); s != left.rend(); ++s)
    right.push_back(-*s);
  for (const auto& grid : {left, right}) {
    std::vector<PathPoint> path;
    std::size_t vertex = 0;
    for (std::size_t k = 0; k < grid.size(); ++k) {
      const double s = grid[k];
      path.push_back({1e-3 * std::exp(s), std::exp(s * s + s), std::exp(s * s - s), 1.0});
      if (std::abs(s) < std::abs(grid[vertex])) vertex = k;
    }
    EXPECT_EQ(lcurve_corner(path), std::optional<std::size_t>(vertex))
        << "the vertex is at alpha " << path[vertex].alpha;
  }
}

TEST(RegPathRefusals, BadInputsAreNamed) {
  const Case c{{2, 3, 4}, true, Kind::Identity};
  const Problem p = make_problem(c, 7);
  const Shape s = p.shape;
  auto build = [&](const Regulariser& r, std::vector<double> data) {
    return [&p, s, r, data] { RegularizationPath(p.column, p.row, s, r, data); };
  };
  Regulariser r = p.regulariser;
  r.mass = 0.0;
  expect_error(build(r, p.data), "full column rank");
  r.mass = -1.0;
  expect_error(build(r, p.data), "mass");
  r = p.regulariser;
  r.time_derivative = 3;
  expect_error(build(r, p.data), "time derivative");
  r = p.regulariser;
  r.laplacian.assign(4, 0.0);
  expect_error(build(r, p.data), "Laplacian holds 4 values");
  r.laplacian = path_laplacian(3);
  r.laplacian[1] = 5.0;
  expect_error(build(r, p.data), "not symmetric");
  r.laplacian = path_laplacian(3);
  r.laplacian[4] = std::numeric_limits<double>::quiet_NaN();
  expect_error(build(r, p.data), "Laplacian");
  std::vector<double> short_data(p.data.begin(), p.data.end() - 1);
  expect_error(build(p.regulariser, short_data), "data hold 7 values");
  std::vector<double> bad = p.data;
  bad[3] = std::numeric_limits<double>::infinity();
  expect_error(build(p.regulariser, bad), "data");
  std::vector<double> column = p.column;
  column[0] = std::numeric_limits<double>::quiet_NaN();
  expect_error([&] { RegularizationPath(column, p.row, s, p.regulariser, p.data); },
               "first block column");
  const RegularizationPath path(p.column, p.row, s, p.regulariser, p.data);
  const std::vector<double> zero = {1.0, 0.0};
  expect_error([&] { (void)path.evaluate(zero); }, "alpha");
  const std::vector<double> nan = {std::numeric_limits<double>::quiet_NaN()};
  expect_error([&] { (void)path.evaluate(nan); }, "alpha");
  expect_error([&] { (void)path.solve(-1.0); }, "alpha");
  expect_error([&] { (void)path.generalized_values(5); }, "frequency");
  RegPathOptions negative;
  negative.frequencies_per_batch = -1;
  expect_error([&] { RegularizationPath(p.column, p.row, s, p.regulariser, p.data, negative); },
               "frequencies_per_batch = -1");
}

// options.backend = Cuda in a build without CUDA (the CPU CI's) is refused in one line saying
// why; with CUDA, test_regpath_cuda runs that backend.
TEST(RegPathRefusals, CudaBackendWithoutCudaIsRefused) {
#ifdef SHIFTOP_HAVE_CUDA
  GTEST_SKIP() << "built with CUDA: test_regpath_cuda runs the GPU backend";
#else
  const Problem p = make_problem({{2, 3, 4}, true, Kind::Identity}, 7);
  RegPathOptions options;
  options.backend = Backend::Cuda;
  expect_error(
      [&] { RegularizationPath(p.column, p.row, p.shape, p.regulariser, p.data, options); },
      "gsvd: backend cuda: this shiftop was built without CUDA (SHIFTOP_ENABLE_CUDA=OFF); use "
      "backend cpu");
#endif
}

// The one check of a Laplacian (the library's, the tool's --laplacian, Python's laplacian=): the
// caller's name for it, then the first entry that is not finite or not mirrored, exactly.
TEST(RequireLaplacian, NamesTheCallersArgumentAndTheEntry) {
  std::vector<double> lap = path_laplacian(3);
  EXPECT_NO_THROW(require_laplacian(lap, 3, "--laplacian l.npy"));
  expect_error([&] { require_laplacian(lap, 2, "--laplacian l.npy"); },
               "--laplacian l.npy holds 9 values, expected Nm*Nm = 4");
  lap[2 * 3 + 1] += 1e-15;  // (2, 1) against (1, 2)
  expect_error([&] { require_laplacian(lap, 3, "--laplacian l.npy"); },
               "--laplacian l.npy is not symmetric: (2, 1) = -0.999999999999999 but (1, 2) = -1");
  lap = path_laplacian(3);
  lap[1 * 3 + 2] = std::numeric_limits<double>::infinity();
  expect_error([&] { require_laplacian(lap, 3, "laplacian"); },
               "laplacian: entry (1, 2) is inf: expected finite numbers");
}

}  // namespace
}  // namespace shiftop::inverse
