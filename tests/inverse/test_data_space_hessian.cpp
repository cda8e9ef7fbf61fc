// The data-space Hessian on the CPU (shiftop/inverse/data_space_hessian.hpp) against the dense
// answers of data_space_reference.hpp: K against Gamma_noise + F Gamma F^T and against its own
// column-by-column assembly, the MAP point against the parameter-space normal equations,
// posterior and QoI variances against the diagonal of H^-1, samples against Matheron's rule with
// the same normals and, statistically, against Gamma_post; all three priors, odd sizes, Nd = 1,
// Nm = 1, right-hand-side groups crossed; bad inputs refused with messages naming them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "data_space_reference.hpp"
#include "shiftop/inverse/data_space_hessian.hpp"
#include "support/expect_error.hpp"

namespace shiftop::inverse {
namespace {

using testing::DataSpaceCase;
using testing::PriorKind;

btt::PlanOptions cpu_options() {
  btt::PlanOptions options;
  options.planning = btt::Planning::Estimate;
  options.max_rhs = 3;  // groups of 5 right-hand sides per apply cross the plan's groups
  return options;
}

std::string case_name(const ::testing::TestParamInfo<DataSpaceCase>& info) {
  const DataSpaceCase& c = info.param;
  return std::string(testing::prior_name(c.prior)) + "_" + std::to_string(c.shape.nd) + "x" +
         std::to_string(c.shape.nm) + "x" + std::to_string(c.shape.nt) + "_q" +
         std::to_string(c.nq);
}

class DataSpaceHessianTest : public ::testing::TestWithParam<DataSpaceCase> {
 protected:
  void SetUp() override {
    problem_ = testing::make_problem(GetParam(), cpu_options(), 11);
    answers_ = testing::dense_answers(problem_);
  }
  DataSpaceHessian make(index_t rhs_per_apply, bool with_mean = true,
                        DataSpaceAssembly assembly = DataSpaceAssembly::Automatic) const {
    DataSpaceHessianOptions options;
    options.rhs_per_apply = rhs_per_apply;
    options.assembly = assembly;
    options.qoi = problem_.Q;
    if (with_mean) options.prior_mean = problem_.prior_mean;
    return DataSpaceHessian(problem_.F, GaussianNoise(problem_.noise_variances, problem_.shape.nt),
                            problem_.prior, std::move(options));
  }
  index_t data_size() const { return problem_.shape.nd * problem_.shape.nt; }
  index_t parameter_size() const { return problem_.shape.nm * problem_.shape.nt; }

  testing::DataSpaceProblem problem_;
  testing::DenseAnswers answers_;
};

// The bounds below are at least 4x the largest errors measured over these cases (printed) on the
// native and portable builds: K 6.6e-16 (5e-15), MAP points, variances and samples at most
// 7.2e-13 (1e-10, 1e-9), the seeded samples' group sizes 9.9e-15 (1e-12).
TEST_P(DataSpaceHessianTest, MatrixEqualsDenseAndColumnByColumnAssembly) {
  const auto grouped = make(5, true, DataSpaceAssembly::Applies).matrix();
  const auto one_by_one = make(1, true, DataSpaceAssembly::Applies).matrix();
  const double dense_error = testing::max_relative_difference(grouped, answers_.K);
  const double column_error = testing::max_relative_difference(grouped, one_by_one);
  std::printf("K: vs dense %.2e, grouped vs column by column %.2e\n", dense_error, column_error);
  EXPECT_LT(dense_error, 5e-15);
  EXPECT_LT(column_error, 5e-15);
  for (index_t i = 0; i < data_size(); ++i)  // symmetric, as returned
    for (index_t j = 0; j < i; ++j)
      EXPECT_EQ(grouped[i * data_size() + j], grouped[j * data_size() + i]);
}

// The Gram assembly (a DSYRK and diagonal prefix sums) against the dense K and the applies; it is
// the automatic choice exactly for the diagonal prior (F is block triangular here). F* of the
// sensors' unit vectors runs in groups of 2 and of 5 (crossing Nd = 3, 4, 5).
TEST_P(DataSpaceHessianTest, GramAssemblyEqualsDenseAndApplies) {
  const bool diagonal = GetParam().prior == PriorKind::Diagonal;
  EXPECT_EQ(make(5).gram_assembly(), diagonal);
  if (!diagonal) {
    testing::expect_error([&] { (void)make(5, true, DataSpaceAssembly::Gram); },
                          "the Gram assembly needs a diagonal prior and a block-triangular F");
    return;
  }
  const auto applies = make(5, true, DataSpaceAssembly::Applies).matrix();
  for (const index_t group : {index_t{2}, index_t{5}}) {
    const DataSpaceHessian gram = make(group, true, DataSpaceAssembly::Gram);
    EXPECT_TRUE(gram.gram_assembly());
    const auto k = gram.matrix();
    const double dense_error = testing::max_relative_difference(k, answers_.K);
    const double applies_error = testing::max_relative_difference(k, applies);
    std::printf("Gram K (groups of %ld): vs dense %.2e, vs applies %.2e\n",
                static_cast<long>(group), dense_error, applies_error);
    EXPECT_LT(dense_error, 5e-15);
    EXPECT_LT(applies_error, 5e-15);
    for (index_t i = 0; i < data_size(); ++i)
      for (index_t j = 0; j < i; ++j)
        EXPECT_EQ(k[i * data_size() + j], k[j * data_size() + i]);
  }
}

TEST_P(DataSpaceHessianTest, MapPointEqualsNormalEquations) {
  const DataSpaceHessian hessian = make(2);
  const index_t nrhs = 3;  // two groups of 2
  const auto d = testing::random_vector(static_cast<std::size_t>(nrhs * data_size()), 21);
  std::vector<double> m(static_cast<std::size_t>(nrhs * parameter_size()), std::nan(""));
  hessian.map_point(d, m, nrhs);
  double worst = 0;
  for (index_t r = 0; r < nrhs; ++r) {
    const auto want =
        testing::dense_map(problem_, answers_, std::span(d).subspan(r * data_size(), data_size()));
    worst =
        std::max(worst, testing::relative_error(
                            std::span(m).subspan(r * parameter_size(), parameter_size()), want));
  }
  std::printf("MAP: relative error %.2e\n", worst);
  EXPECT_LT(worst, 1e-10);
}

TEST_P(DataSpaceHessianTest, PosteriorVarianceEqualsDiagonalOfInverse) {
  const DataSpaceHessian hessian = make(4, false);
  const Shape& s = problem_.shape;
  std::vector<ParameterIndex> indices;
  for (index_t j = 0; j < s.nm; ++j)
    for (index_t t = 0; t < s.nt; t += 2)
      indices.push_back({j, t});
  indices.push_back({s.nm - 1, s.nt - 1});
  indices.push_back({0, 0});  // repeated
  const auto variance = hessian.posterior_variance(indices);
  ASSERT_EQ(variance.size(), indices.size());
  double worst = 0;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    const index_t j = indices[k].block * s.nt + indices[k].t;
    const double want = answers_.posterior[j * parameter_size() + j];
    worst = std::max(worst, std::abs(variance[k] - want) / want);
  }
  std::printf("posterior variance: relative error %.2e\n", worst);
  EXPECT_LT(worst, 1e-10);
}

TEST_P(DataSpaceHessianTest, QoiMapAndVarianceEqualDense) {
  const DataSpaceHessian hessian = make(3);
  const index_t nq = problem_.nq * problem_.shape.nt, m = parameter_size();
  const auto d = testing::random_vector(static_cast<std::size_t>(2 * data_size()), 23);
  std::vector<double> q(static_cast<std::size_t>(2 * nq), std::nan(""));
  hessian.qoi_map(d, q, 2);
  double map_error = 0;
  for (index_t r = 0; r < 2; ++r) {
    const auto m_map =
        testing::dense_map(problem_, answers_, std::span(d).subspan(r * data_size(), data_size()));
    const auto want = testing::dense_apply(problem_.dense_Q, nq, m, false, m_map, 1);
    map_error =
        std::max(map_error, testing::relative_error(std::span(q).subspan(r * nq, nq), want));
  }
  // diag(Q Gamma_post Q^T).
  const auto qp = testing::dense_product(problem_.dense_Q, answers_.posterior, nq, m, m);
  const auto covariance =
      testing::dense_product(qp, testing::dense_transpose(problem_.dense_Q, nq, m), nq, m, nq);
  const auto variance = hessian.qoi_variance();
  ASSERT_EQ(variance.size(), static_cast<std::size_t>(nq));
  double variance_error = 0;
  for (index_t k = 0; k < nq; ++k)
    variance_error = std::max(
        variance_error, std::abs(variance[k] - covariance[k * nq + k]) / covariance[k * nq + k]);
  std::printf("QoI: MAP relative error %.2e, variance %.2e\n", map_error, variance_error);
  EXPECT_LT(map_error, 1e-10);
  EXPECT_LT(variance_error, 1e-9);
}

TEST_P(DataSpaceHessianTest, SamplesFollowMatheronsRule) {
  const DataSpaceHessian hessian = make(2);
  const index_t count = 3, n = data_size(), m = parameter_size();
  const auto d = testing::random_vector(static_cast<std::size_t>(n), 25);
  const auto xi1 = testing::random_vector(static_cast<std::size_t>(count * m), 26);
  const auto xi2 = testing::random_vector(static_cast<std::size_t>(count * n), 27);
  std::vector<double> samples(static_cast<std::size_t>(count * m), std::nan(""));
  if (!problem_.prior->has_sqrt()) {  // the kernels prior
    testing::expect_error([&] { hessian.sample_from(d, xi1, xi2, samples, count); },
                          "samples need a prior with a square root");
    return;
  }
  hessian.sample_from(d, xi1, xi2, samples, count);
  double worst = 0;
  for (index_t r = 0; r < count; ++r) {
    const auto want = testing::dense_sample(problem_, answers_, d, std::span(xi1).subspan(r * m, m),
                                            std::span(xi2).subspan(r * n, n));
    worst = std::max(worst, testing::relative_error(std::span(samples).subspan(r * m, m), want));
  }
  std::printf("samples: relative error %.2e\n", worst);
  EXPECT_LT(worst, 1e-10);

  // The seeded generator: the same seed gives the same samples whatever the group size.
  std::vector<double> a(static_cast<std::size_t>(count * m)), b(a.size()), c(a.size());
  hessian.sample(d, count, 7, a);
  make(1).sample(d, count, 7, b);
  hessian.sample(d, count, 8, c);
  EXPECT_LT(testing::relative_error(b, a), 1e-12);
  EXPECT_GT(testing::relative_error(c, a), 0.1);
}

// Small sizes with all group boundaries crossed (rhs_per_apply 5 and 1 against the plan's
// max_rhs 3), Nd = 1, Nm = 1, Nt = 1, and more sensors than parameters.
INSTANTIATE_TEST_SUITE_P(Cpu, DataSpaceHessianTest,
                         ::testing::Values(DataSpaceCase{{3, 4, 7}, 2, PriorKind::Diagonal},
                                           DataSpaceCase{{3, 4, 7}, 2, PriorKind::Smoothing},
                                           DataSpaceCase{{3, 4, 7}, 2, PriorKind::Kernels},
                                           DataSpaceCase{{1, 5, 9}, 1, PriorKind::Smoothing},
                                           DataSpaceCase{{4, 1, 5}, 3, PriorKind::Diagonal},
                                           DataSpaceCase{{2, 3, 1}, 1, PriorKind::Kernels},
                                           DataSpaceCase{{5, 2, 6}, 2, PriorKind::Smoothing},
                                           DataSpaceCase{{5, 3, 9}, 2, PriorKind::Diagonal},
                                           DataSpaceCase{{1, 6, 11}, 1, PriorKind::Diagonal},
                                           DataSpaceCase{{3, 5, 1}, 1, PriorKind::Diagonal},
                                           DataSpaceCase{{1, 1, 1}, 1, PriorKind::Diagonal}),
                         case_name);

// The sample covariance of many seeded samples against Gamma_post from the normal equations (not
// from Matheron's rule): entries of the correlation-scaled difference have a standard deviation
// of at most sqrt(2/n), and the bound is 6 of them.
TEST(DataSpaceHessianStatistics, SampleMeanAndCovarianceMatchPosterior) {
  const auto problem =
      testing::make_problem({{2, 2, 4}, 1, PriorKind::Smoothing}, cpu_options(), 31);
  const auto answers = testing::dense_answers(problem);
  DataSpaceHessianOptions options;
  options.prior_mean = problem.prior_mean;
  options.rhs_per_apply = 2500;  // few groups: each costs a few OpenMP regions
  const DataSpaceHessian hessian(problem.F, GaussianNoise(problem.noise_variances, 4),
                                 problem.prior, options);
  const index_t m = 8, count = 10000;
  const auto d = testing::random_vector(8, 32);
  std::vector<double> samples(static_cast<std::size_t>(count * m));
  hessian.sample(d, count, 2024, samples);
  const auto m_map = testing::dense_map(problem, answers, d);
  std::vector<double> mean(m, 0.0), cov(static_cast<std::size_t>(m * m), 0.0);
  for (index_t r = 0; r < count; ++r)
    for (index_t i = 0; i < m; ++i)
      mean[i] += samples[r * m + i] / count;
  for (index_t r = 0; r < count; ++r)
    for (index_t i = 0; i < m; ++i)
      for (index_t j = 0; j < m; ++j)
        cov[i * m + j] +=
            (samples[r * m + i] - mean[i]) * (samples[r * m + j] - mean[j]) / (count - 1);
  const double scale = 1 / std::sqrt(static_cast<double>(count));
  double mean_worst = 0, cov_worst = 0;
  for (index_t i = 0; i < m; ++i) {
    const double sd = std::sqrt(answers.posterior[i * m + i]);
    mean_worst = std::max(mean_worst, std::abs(mean[i] - m_map[i]) / sd);
    for (index_t j = 0; j < m; ++j)
      cov_worst = std::max(cov_worst, std::abs(cov[i * m + j] - answers.posterior[i * m + j]) /
                                          (sd * std::sqrt(answers.posterior[j * m + j])));
  }
  std::printf("samples: mean off by %.2f, covariance by %.2f standard errors\n", mean_worst / scale,
              cov_worst / (std::sqrt(2.0) * scale));
  EXPECT_LT(mean_worst, 5 * scale);
  EXPECT_LT(cov_worst, 6 * std::sqrt(2.0) * scale);
}

TEST(DataSpaceHessianProgress, ReportsEveryGroupOfColumns) {
  const auto problem =
      testing::make_problem({{2, 3, 5}, 2, PriorKind::Diagonal}, cpu_options(), 41);
  std::vector<DataSpaceProgress> seen;
  std::vector<std::string> stages;
  DataSpaceHessianOptions options;
  options.rhs_per_apply = 4;
  options.assembly = DataSpaceAssembly::Applies;
  options.qoi = problem.Q;
  options.progress = [&](const DataSpaceProgress& p) {
    seen.push_back(p);
    stages.emplace_back(p.stage);
  };
  const DataSpaceHessian hessian(problem.F, GaussianNoise(problem.noise_variances, 5),
                                 problem.prior, options);
  // 10 columns of K in groups of 4, then 10 QoI columns.
  ASSERT_EQ(seen.size(), 6u);
  const std::vector<index_t> done = {4, 8, 10, 4, 8, 10};
  for (std::size_t k = 0; k < seen.size(); ++k) {
    EXPECT_EQ(stages[k], k < 3 ? "assembly" : "qoi");
    EXPECT_EQ(seen[k].done, done[k]);
    EXPECT_EQ(seen[k].total, 10);
  }
  EXPECT_GT(hessian.memory_bytes(), 8u * 100u);
  EXPECT_FALSE(hessian.on_device());

  // The Gram assembly is one step: one report of all columns.
  seen.clear();
  stages.clear();
  options.assembly = DataSpaceAssembly::Automatic;
  options.qoi = nullptr;
  const DataSpaceHessian gram(problem.F, GaussianNoise(problem.noise_variances, 5), problem.prior,
                              options);
  EXPECT_TRUE(gram.gram_assembly());
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(stages[0], "assembly");
  EXPECT_EQ(seen[0].done, 10);
}

TEST(DataSpaceHessianTiming, TimesTheAssemblyColumns) {
  const auto problem =
      testing::make_problem({{2, 3, 5}, 1, PriorKind::Smoothing}, cpu_options(), 45);
  EXPECT_GT(DataSpaceHessian::time_assembly(problem.F, *problem.prior, 10, 4), 0.0);
  EXPECT_GT(DataSpaceHessian::time_assembly(problem.F, *problem.prior, 3, 1), 0.0);
  testing::expect_error(
      [&] { (void)DataSpaceHessian::time_assembly(problem.F, *problem.prior, 11, 4); },
      "columns 11 is not in 1..Nd*Nt = 10");
  testing::expect_error(
      [&] { (void)DataSpaceHessian::time_assembly(problem.F, *problem.prior, 10, 0); },
      "rhs_per_apply 0 is not positive");
  testing::expect_error(
      [&] { (void)DataSpaceHessian::time_assembly(problem.F, DiagonalPrior({1.0}, 5), 10, 2); },
      "the prior has 1 blocks");
}

TEST(DataSpaceHessianInputs, RefusesWhatDoesNotFit) {
  const auto problem = testing::make_problem({{2, 3, 5}, 1, PriorKind::Kernels}, cpu_options(), 51);
  const GaussianNoise noise(problem.noise_variances, 5);
  auto build = [&](DataSpaceHessianOptions options) {
    return
        [&problem, &noise, options] { DataSpaceHessian(problem.F, noise, problem.prior, options); };
  };
  testing::expect_error(
      [&] {
        DataSpaceHessian(problem.F, GaussianNoise({1, 1, 1}, 5), problem.prior);
      },
      "the noise has 3 sensors");
  testing::expect_error(
      [&] {
        DataSpaceHessian(problem.F, noise,
                         std::make_shared<DiagonalPrior>(std::vector{1.0, 1.0}, 5));
      },
      "the prior has 2 blocks");
  testing::expect_error([&] { DataSpaceHessian(nullptr, noise, problem.prior); }, "F is null");
  testing::expect_error(build({.rhs_per_apply = -1}), "rhs_per_apply -1");
  testing::expect_error(build({.prior_mean = std::vector<double>(7)}),
                        "the prior mean has 7 values, expected Nm*Nt");
  const auto wrong_q =
      std::make_shared<btt::Plan>(btt::Plan::create(std::vector<double>(8, 1.0), {2, 2, 2}));
  testing::expect_error(build({.qoi = wrong_q}), "the QoI map has shape (Nq, Nm, Nt) = (2, 2, 2)");

  const DataSpaceHessian hessian(problem.F, noise, problem.prior);
  std::vector<double> d(10), m(15), q(5);
  testing::expect_error([&] { hessian.map_point(std::span(d).first(9), m); },
                        "map_point: the data hold 9 values, expected nrhs*Nd*Nt = 1*2*5 = 10");
  testing::expect_error([&] { hessian.map_point(d, std::span(m).first(14)); },
                        "map_point: the output holds 14 values");
  testing::expect_error([&] { hessian.qoi_map(d, q); }, "qoi_map needs a QoI map");
  testing::expect_error([&] { (void)hessian.qoi_variance(); }, "qoi_variance needs a QoI map");
  const std::vector<ParameterIndex> bad = {{0, 0}, {3, 0}};
  testing::expect_error([&] { (void)hessian.posterior_variance(bad); },
                        "index 1 is (block 3, t 0), expected 0 <= block < Nm = 3");
  std::vector<double> samples(30);
  testing::expect_error([&] { hessian.sample(d, 2, 1, samples); }, "the kernels prior has none");
}

TEST(DataSpaceHessianInputs, RefusesAnIndefiniteMatrix) {
  // Gamma_prior = C_0 ⊗ I with C_0 = [[1, 2], [2, 1]] (symmetric, eigenvalues 3 and -1) and F
  // = [1, -1] at lag 0: F Gamma_prior F^T = -2, so K = 1e-3 - 2 at every time step.
  const index_t nt = 4;
  std::vector<double> f(2 * nt, 0.0), c(4 * nt, 0.0);
  f[0] = 1;
  f[nt] = -1;
  c[0] = c[3 * nt] = 1;
  c[nt] = c[2 * nt] = 2;
  const auto F = std::make_shared<btt::Plan>(btt::Plan::create(f, {1, 2, nt}));
  const auto prior = std::make_shared<KernelPrior>(c, Shape{2, 2, nt});
  testing::expect_error([&] { DataSpaceHessian(F, GaussianNoise({1e-3}, nt), prior); },
                        "is not positive definite: its leading minor of order 1");
}

TEST(DataSpaceHessianInputs, RefusesAMatrixLargerThanMemory) {
  // K would be (1024 * 1024)^2 doubles = 8 TiB: refused before it is allocated (F's own plan
  // holds about 256 MiB).
  const Shape shape{1024, 1, 1024};
  std::vector<double> f(static_cast<std::size_t>(shape.nd * shape.nt), 0.0);
  f[0] = 1;
  const auto F = std::make_shared<btt::Plan>(
      btt::Plan::create(f, shape, {.max_rhs = 1, .planning = btt::Planning::Estimate}));
  const auto prior = std::make_shared<DiagonalPrior>(std::vector{1.0}, shape.nt);
  testing::expect_error(
      [&] {
        DataSpaceHessian(F, GaussianNoise(std::vector<double>(1024, 1.0), shape.nt), prior,
                         {.rhs_per_apply = 1});
      },
      "GiB of host memory (K = Gamma_noise + F Gamma_prior F* is Nd*Nt = 1048576 rows square");
}

}  // namespace
}  // namespace shiftop::inverse
