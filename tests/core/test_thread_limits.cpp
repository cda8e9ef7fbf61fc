// The thread counts every entry point accepts (core/threads.hpp): 100000 threads used to overflow
// the caller's stack inside libgomp (a segfault, issue 28); now each entry refuses it with
// shiftop::Error before starting a team.
#include "shiftop/core/threads.hpp"

#include <gtest/gtest.h>

#include <sched.h>

#include <string>
#include <vector>

#include "shiftop/btt/direct_product.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/circ/operator.hpp"
#include "shiftop/gsvd/gsvd.hpp"
#include "shiftop/inverse/circulant_preconditioner.hpp"
#include "shiftop/inverse/regpath.hpp"
#include "shiftop/svd/jacobi.hpp"
#include "shiftop/svd/spectrum.hpp"
#include "support/io_test_support.hpp"

namespace shiftop {
namespace {

using shiftop::testing::contains;
using shiftop::testing::error_of;

constexpr int kAbsurd = 100000;  // the count that crashed every entry point below

template <class F>
void expect_refused(F&& call, const std::string& what) {
  const std::string message = error_of(call);
  EXPECT_TRUE(
      contains(message, "invalid thread count 100000: expected 0 (OpenMP's default) or 1.."))
      << what << ": " << message;
}

TEST(ThreadLimits, HardwareThreadsAreTheAffinityMask) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  EXPECT_EQ(hardware_threads(), CPU_COUNT(&allowed));
  EXPECT_EQ(thread_limit(), std::max(hardware_threads(), kMinThreadLimit));
}

TEST(ThreadLimits, CheckAcceptsZeroToTheLimitOnly) {
  EXPECT_NO_THROW(check_threads(0, "threads"));
  EXPECT_NO_THROW(check_threads(1, "threads"));
  EXPECT_NO_THROW(check_threads(thread_limit(), "threads"));
  const std::string above = error_of([] { check_threads(thread_limit() + 1, "--x threads"); });
  EXPECT_TRUE(contains(
      above, "--x threads: invalid thread count " + std::to_string(thread_limit() + 1) +
                 ": expected 0 (OpenMP's default) or 1.." + std::to_string(thread_limit())))
      << above;
  EXPECT_TRUE(contains(error_of([] { check_threads(-1, "threads"); }), "invalid thread count -1"));
}

TEST(ThreadLimits, EveryEntryPointRefusesAnAbsurdCount) {
  const Shape shape{2, 3, 4};
  std::vector<double> kernels(static_cast<std::size_t>(shape.kernel_size()));
  for (std::size_t i = 0; i < kernels.size(); ++i)
    kernels[i] = 1.0 / static_cast<double>(i + 2);

  expect_refused([&] { (void)btt::Plan::create(kernels, shape, {.cpu = {.threads = kAbsurd}}); },
                 "btt::Plan::create");
  std::vector<double> m(static_cast<std::size_t>(shape.nm * shape.nt), 1.0);
  std::vector<double> d(static_cast<std::size_t>(shape.nd * shape.nt));
  expect_refused([&] { btt::direct_product(kernels, shape, m, d, kAbsurd); },
                 "btt::direct_product");

  svd::SpectrumOptions spectrum_options;
  spectrum_options.threads = kAbsurd;
  expect_refused([&] { (void)svd::spectrum(kernels, {}, shape, spectrum_options); },
                 "svd::spectrum");

  const std::vector<double> a = {4, 1, 2, 1, 3, 1, 2, 1, 5};  // 3 x 3
  svd::JacobiOptions jacobi_options;
  jacobi_options.threads = kAbsurd;
  expect_refused([&] { (void)svd::jacobi(a.data(), 3, 3, 3, jacobi_options); }, "svd::jacobi");
  expect_refused([&] { (void)svd::jacobi_batched(a.data(), 1, 3, 3, 3, 9, jacobi_options); },
                 "svd::jacobi_batched");
  svd::GsvdOptions gsvd_options;
  gsvd_options.threads = kAbsurd;
  expect_refused([&] { (void)svd::gsvd_hz(a.data(), 3, 3, a.data(), 3, 3, 3, gsvd_options); },
                 "svd::gsvd_hz");

  inverse::RegPathOptions path_options;
  path_options.threads = kAbsurd;
  expect_refused([&] { inverse::RegularizationPath(kernels, {}, shape, {}, d, path_options); },
                 "inverse::RegularizationPath");

  btt::Plan plan = btt::Plan::create(kernels, shape, {.planning = btt::Planning::Estimate});
  const inverse::GaussianNoise noise(std::vector<double>(shape.nd, 1.0), shape.nt);
  const inverse::DiagonalPrior prior(std::vector<double>(shape.nm, 1.0), shape.nt);
  expect_refused([&] { inverse::CirculantPreconditioner(plan, noise, prior, kAbsurd); },
                 "inverse::CirculantPreconditioner");

  // circ: A = [A_0 A_1] with k = 2 blocks of 2 x 2, one nonzero per row.
  const std::vector<std::int32_t> indptr = {0, 1, 2}, indices = {0, 3};
  const std::vector<double> values = {1.0, 2.0};
  circ::Options circ_options;
  circ_options.cpu.threads = kAbsurd;
  expect_refused(
      [&] {
        (void)circ::Operator<double>::create(
            {.k = 2, .mb = 2, .nb = 2},
            circ::CsrView<double, std::int32_t>{indptr, indices, values}, circ_options);
      },
      "circ::Operator::create");
}

}  // namespace
}  // namespace shiftop
