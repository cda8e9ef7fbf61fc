// circ::Operator on the CPU when OpenMP grants fewer threads than the operator was built for:
// the rows are split into `threads` parts once, at creation, and every part must still be
// computed when a parallel region runs with a smaller team (OMP_THREAD_LIMIT, dynamic
// adjustment, or an apply called from inside the caller's own parallel region without nested
// parallelism). Each kernel, C and C^T, must give the bits of the full team's product and agree
// with the dense C (circ_reference.hpp) within test_circ_cpu's bound, so that the test holds even
// where the environment already limits the full team.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "circ/circ_reference.hpp"
#include "shiftop/circ/operator.hpp"

namespace shiftop::circ {
namespace {

using testing::CircSpec;
using testing::every_length_to;
using testing::poisoned;

constexpr int kRequested = 3;

// The team size OpenMP grants a region asking for kRequested threads here.
int granted_team() {
  int team = 0;
#pragma omp parallel num_threads(kRequested)
  {
#pragma omp single
    team = omp_get_num_threads();
  }
  return team;
}

struct KernelCase {
  CpuKernel kernel;
  int width;
};
const KernelCase kKernels[] = {{CpuKernel::BlockSpmv, 0},
                               {CpuKernel::Mm, 0},
                               {CpuKernel::Mm2, 0},
                               {CpuKernel::Mm2s, 1},
                               {CpuKernel::Mm2s, 8}};

// Where y differs from want: "" when bit for bit equal, else the first entry that differs.
template <class T>
std::string first_difference(const std::vector<T>& y, const std::vector<T>& want) {
  for (std::size_t i = 0; i < y.size(); ++i)
    if (std::memcmp(&y[i], &want[i], sizeof(T)) != 0)
      return "entry " + std::to_string(i) + " of " + std::to_string(y.size()) + " is " +
             std::to_string(y[i]) + ", the full team's " + std::to_string(want[i]);
  return "";
}

// test_circ_cpu's bound on |y - C x| / (eps |C||x|): at least 4x the worst measured here over the
// native and portable builds (1.85 and 3.01).
constexpr double kProductBound = 13;

// The products of one operator built for kRequested threads, computed while `limit` holds (a
// functor that runs its argument under a smaller team), against the dense C and the same
// operator's products with every thread granted. Two inputs per operation: a part left out
// shows the workspace's NaN poison the first time and the previous product's rows after.
template <class T, class Limit>
void expect_every_part_computed(Limit limit) {
  const CircSpec spec{{3, 101, 97}, every_length_to(40), {}, 41};
  const auto a = testing::random_circ<T, std::int32_t>(spec);
  const Shape& s = spec.shape;
  const auto dense = testing::dense_circulant(s, a.view());
  const index_t nrhs = 3;
  for (const KernelCase& kc : kKernels) {
    SCOPED_TRACE(kc.kernel == CpuKernel::Mm2s ? "mm2s s=" + std::to_string(kc.width)
                                              : std::string(name_of(kc.kernel)));
    Operator<T> c = Operator<T>::create(
        s, a.view(),
        {.backend = Backend::Cpu,
         .planning = Planning::Estimate,
         .max_rhs = 2,
         .cpu = {.threads = kRequested, .kernel = kc.kernel, .maxpy_width = kc.width}});
    for (const Op op : {Op::C, Op::Ct}) {
      for (unsigned seed : {5U, 6U}) {
        const auto x = testing::random_circ_vector<T>(
            static_cast<std::size_t>(input_length(s, op) * nrhs), seed);
        std::vector<T> want = poisoned<T>(output_length(s, op) * nrhs), y = want;
        c.apply(op, x, want, nrhs);
        limit([&] { c.apply(op, x, y, nrhs); });
        const double ratio =
            testing::circ_error_ratio<T>(y, testing::dense_circ_apply<T>(dense, s, op, x, nrhs));
        EXPECT_LE(ratio, kProductBound)  // NaN (a row left unwritten) fails too
            << (op == Op::C ? "C" : "C^T") << " against the dense C, " << kRequested
            << " threads requested, fewer granted";
        EXPECT_EQ(first_difference(y, want), "")
            << (op == Op::C ? "C" : "C^T") << ", " << kRequested
            << " threads requested, fewer granted";
      }
    }
  }
}

template <class T>
class CircGrantedThreads : public ::testing::Test {};
using Reals = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CircGrantedThreads, Reals);

// max-active-levels 0 makes every parallel region inactive: a team of one thread, whatever
// num_threads asks (OpenMP 5.2, 2.6.1), as OMP_THREAD_LIMIT=1 would.
TYPED_TEST(CircGrantedThreads, OneThreadGrantedComputesEveryPart) {
  expect_every_part_computed<TypeParam>([](auto apply) {
    const int levels = omp_get_max_active_levels();
    omp_set_max_active_levels(0);
    EXPECT_EQ(granted_team(), 1) << "the limit did not hold: the test would prove nothing";
    apply();
    omp_set_max_active_levels(levels);
  });
}

// An apply from inside the caller's own parallel region of two threads, nested parallelism off
// (one active level): the operator's regions get a team of one.
TYPED_TEST(CircGrantedThreads, InsideTheCallersParallelRegion) {
  expect_every_part_computed<TypeParam>([](auto apply) {
    const int levels = omp_get_max_active_levels();
    omp_set_max_active_levels(1);
    int inner = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp single
      {
        inner = granted_team();
        apply();
      }
    }
    omp_set_max_active_levels(levels);
    EXPECT_EQ(inner, 1) << "nested regions were granted threads: the test would prove nothing";
  });
}

}  // namespace
}  // namespace shiftop::circ
