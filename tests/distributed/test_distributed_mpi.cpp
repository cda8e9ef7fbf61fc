// The distributed plan under mpiexec, on every grid the number of ranks allows (1x1; 1x2, 2x1;
// 1x3, 3x1; 1x4, 2x2, 4x1), against the single-process btt::Plan (FP64: relative error 1e-13)
// and the explicit dense matrix on small sizes: every operation, one and many right-hand sides,
// triangular and general operators, uneven splits with ranks that own nothing. Every rank knows
// the whole operator and the whole expected result (the sizes are small), applies its slice and
// compares its own output blocks; the verdict is a sum over ranks, so every rank reaches every
// collective whatever fails, and every rank sees the same failure. Last, the same from operator
// files (shiftop .h5, FFTMatvec directory, .npy) of which every rank reads only its slice.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "shiftop/btt/distributed_plan.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/btt/read_distributed_plan.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/distributed/collective_check.hpp"
#include "shiftop/distributed/grid.hpp"
#include "shiftop/distributed/partition.hpp"
#include "shiftop/io/operator_file.hpp"
#include "support/dense_reference.hpp"
#include "support/distributed_test_support.hpp"

namespace shiftop::distributed {
namespace {

using namespace mpi_testing;
using testing::dense_apply;
using testing::dense_block_toeplitz;
using testing::random_vector;

/// This rank's output blocks of op applied to the whole vectors x (each rank passes its slice).
std::vector<double> apply_distributed(DistributedPlan& plan, btt::Op op, std::span<const double> x,
                                      index_t nrhs) {
  const Shape& s = plan.shape();
  const auto local_x =
      slice_blocks(x, nrhs, input_blocks(op, s), s.nt, plan.local_input_blocks(op));
  std::vector<double> y(static_cast<std::size_t>(nrhs * plan.local_output_blocks(op).size() * s.nt),
                        std::numeric_limits<double>::quiet_NaN());  // unwritten entries fail
  plan.apply(op, local_x, y, nrhs);
  return y;
}

struct Case {
  Shape shape;
  bool triangular;
  index_t nrhs;
  index_t max_rhs;
};

std::string describe(const Case& c) {
  return fmt::format("nd{}_nm{}_nt{}_{}_rhs{}_max{}", c.shape.nd, c.shape.nm, c.shape.nt,
                     c.triangular ? "tri" : "gen", c.nrhs, c.max_rhs);
}
std::string name(const ::testing::TestParamInfo<Case>& info) {
  return describe(info.param);
}
void PrintTo(const Case& c, std::ostream* os) {
  *os << describe(c);
}

class DistributedVsSingleProcess : public ::testing::TestWithParam<Case> {};

TEST_P(DistributedVsSingleProcess, EveryOperationOnEveryGrid) {
  const Case c = GetParam();
  const Shape& s = c.shape;
  const Operator a = random_operator(s, c.triangular);
  btt::Plan whole = whole_plan(a, test_options(c.max_rhs));
  const bool small = s.nd * s.nm * s.nt * s.nt <= 200'000;
  const auto dense = small ? dense_block_toeplitz(a.column, a.row, s) : std::vector<double>{};
  const index_t rows = s.nd * s.nt, cols = s.nm * s.nt;

  for (const GridShape g : grids_of(world_size())) {
    const Grid grid(g);
    DistributedPlan plan = distributed_plan(grid, a, test_options(c.max_rhs));
    for (btt::Op op : btt::kAllOps) {
      SCOPED_TRACE(fmt::format("grid {} op {}", g.str(), name_of(op)));
      const auto x =
          random_vector(static_cast<std::size_t>(c.nrhs * input_blocks(op, s) * s.nt), 3);
      std::vector<double> want(static_cast<std::size_t>(c.nrhs * output_blocks(op, s) * s.nt));
      whole.apply(op, x, want, c.nrhs);
      const std::vector<double> got = apply_distributed(plan, op, x, c.nrhs);

      const Verdict v = judge(got, plan, op, want, c.nrhs);
      EXPECT_LT(v.relative_error, 1e-13);
      EXPECT_EQ(v.blocks_covered, static_cast<double>(output_blocks(op, s)));
      if (!small) continue;
      const bool fwd_first = op == btt::Op::F || op == btt::Op::FadjF;
      const auto first = dense_apply(dense, rows, cols, !fwd_first, x, c.nrhs);
      const auto exact = op == btt::Op::F || op == btt::Op::Fadj
                             ? first
                             : dense_apply(dense, rows, cols, fwd_first, first, c.nrhs);
      EXPECT_LT(judge(got, plan, op, exact, c.nrhs).relative_error, 1e-13) << "dense reference";
    }
  }
}

// Uneven sizes: 5 data blocks over 4 rows split 2, 2, 1, 0 and 3 parameter blocks over 4
// columns 1, 1, 1, 0; (1, 1) leaves every rank but one without blocks on 2x2, 1x4 and 4x1.
INSTANTIATE_TEST_SUITE_P(
    Sizes, DistributedVsSingleProcess,
    ::testing::Values(Case{{5, 3, 7}, true, 3, 2}, Case{{5, 3, 7}, false, 3, 2},
                      Case{{1, 1, 4}, true, 2, 16}, Case{{1, 1, 4}, false, 1, 16},
                      Case{{7, 13, 17}, true, 4, 4}, Case{{7, 13, 17}, false, 5, 2},
                      Case{{4, 9, 1}, false, 2, 16}, Case{{12, 8, 10}, true, 1, 16},
                      Case{{3, 40, 33}, false, 3, 3}),
    name);

// Mixed precision: "DSSDD" (FP32 FFT and GEMV, the mixed-precision paper's choice for F) and
// "SSSSS" (every phase, FP32 broadcast and reductions too) against the FP64 single-process
// result. Eq. (6) of that paper bounds the error by kappa(F^) times a few FP32 unit roundoffs
// (6e-8) times log2(2 Nt) or the GEMV length; measured here: at most 2.3e-7 on 1 to 4 ranks. The
// tolerance 2e-6 leaves a factor of about 10, and the lower limit 1e-10 fails if the FP32 phases
// silently ran in FP64.
TEST(DistributedMixedPrecision, StaysWithinFP32AccuracyOfTheFP64Result) {
  const Shape s{6, 50, 64};
  const index_t nrhs = 3;
  for (bool triangular : {true, false}) {
    const Operator a = random_operator(s, triangular);
    btt::Plan whole = whole_plan(a, test_options(2));
    for (const GridShape g : grids_of(world_size())) {
      const Grid grid(g);
      for (const char* precision : {"DSSDD", "SSSSS"}) {
        DistributedPlan plan = distributed_plan(grid, a, test_options(2, precision));
        for (btt::Op op : btt::kAllOps) {
          SCOPED_TRACE(fmt::format("grid {} {} {} {}", g.str(), precision, name_of(op),
                                   triangular ? "triangular" : "general"));
          const auto x =
              random_vector(static_cast<std::size_t>(nrhs * input_blocks(op, s) * s.nt), 4);
          std::vector<double> want(static_cast<std::size_t>(nrhs * output_blocks(op, s) * s.nt));
          whole.apply(op, x, want, nrhs);
          const Verdict v = judge(apply_distributed(plan, op, x, nrhs), plan, op, want, nrhs);
          EXPECT_LT(v.relative_error, 2e-6);
          EXPECT_GT(v.relative_error, 1e-10);
        }
      }
    }
  }
}

TEST(DistributedMixedPrecision, CommunicationPrecisionFollowsPhasesOneAndFive) {
  const auto p = [](const char* s) { return communication_precision(PrecisionConfig::parse(s)); };
  EXPECT_EQ(p("DDDDD").broadcast, Precision::Double);
  EXPECT_EQ(p("SDDDD").broadcast, Precision::Single);
  EXPECT_EQ(p("SDDDD").reduce, Precision::Double);
  EXPECT_EQ(p("SDDDD").allreduce, Precision::Double);
  EXPECT_EQ(p("DSSSS").broadcast, Precision::Double);
  EXPECT_EQ(p("DDDDS").reduce, Precision::Single);
  EXPECT_EQ(p("DDDDS").allreduce, Precision::Single);
}

// A reduction in FP32 sums FP32 values in FP32, so every output value is an FP32 number; the same
// sum carried out in FP64 would in general not be.
TEST(DistributedMixedPrecision, FP32ReductionSumsInFP32) {
  const Shape s{4, 6, 9};
  const Operator a = random_operator(s, true);
  for (const GridShape g : grids_of(world_size())) {
    const Grid grid(g);
    DistributedPlan plan = distributed_plan(grid, a, test_options(4, "DDDDS"));
    for (btt::Op op : {btt::Op::F, btt::Op::Fadj, btt::Op::FadjF, btt::Op::FFadj}) {
      const auto x = random_vector(static_cast<std::size_t>(2 * input_blocks(op, s) * s.nt), 5);
      double not_fp32 = 0;
      for (double v : apply_distributed(plan, op, x, 2))
        not_fp32 += static_cast<double>(static_cast<float>(v)) != v;
      EXPECT_EQ(sum_over_ranks({not_fp32, 0})[0], 0.0) << g.str() << " " << name_of(op);
    }
  }
}

TEST(DistributedPhaseTimes, CountTheBytesOfEachCollective) {
  const Shape s{5, 7, 6};
  const index_t nrhs = 3;
  const Operator a = random_operator(s, true);
  for (const GridShape g : grids_of(world_size())) {
    const Grid grid(g);
    const Partition part(s, g);
    // Values per vector of this rank's slices, and of the largest (first) ones.
    const auto nd = static_cast<double>(part.rows(grid.row()).size() * s.nt);
    const auto nm = static_cast<double>(part.cols(grid.col()).size() * s.nt);
    const auto nd0 = static_cast<double>(part.rows(0).size() * s.nt);
    const auto nm0 = static_cast<double>(part.cols(0).size() * s.nt);
    const auto vectors = static_cast<double>(nrhs);
    for (const auto& [precision, bytes] : {std::pair{"DDDDD", 8.0}, std::pair{"SDDDS", 4.0}}) {
      DistributedPlan plan = distributed_plan(grid, a, test_options(2, precision));
      const auto x = random_vector(static_cast<std::size_t>(nrhs * s.nm * s.nt), 6);
      (void)apply_distributed(plan, btt::Op::F, x, nrhs);
      // F: nm_j blocks broadcast down a column of pr ranks, nd_i reduced across a row of pc.
      const DistributedPhaseTimes t = plan.last_phase_times();
      EXPECT_EQ(t.broadcast_bytes, g.rows > 1 ? vectors * nm * bytes : 0.0) << g.str();
      EXPECT_EQ(t.reduce_bytes, g.cols > 1 ? vectors * nd * bytes : 0.0) << g.str();
      EXPECT_EQ(t.allreduce_bytes, 0.0);
      EXPECT_EQ(t.local.total() > 0, nd > 0 && nm > 0) << "local phases timed where work is done";
      const DistributedPhaseTimes m = plan.max_phase_times();
      EXPECT_EQ(m.broadcast_bytes, g.rows > 1 ? vectors * nm0 * bytes : 0.0) << g.str();
      EXPECT_EQ(m.reduce_bytes, g.cols > 1 ? vectors * nd0 * bytes : 0.0) << g.str();
      EXPECT_GE(m.local.total(), t.local.total());
    }
  }
}

TEST(DistributedCollectives, AxesOfEachOperation) {
  // F broadcasts m down the columns and reduces d across the rows; F* the mirror image; F*F and
  // FF* all-reduce the middle vector along the axis the first half reduced along.
  const auto axes = [](btt::Op op) {
    const CollectiveAxes a = collective_axes(op);
    return std::tuple(a.broadcast, a.allreduce, a.reduce);
  };
  EXPECT_EQ(axes(btt::Op::F), std::tuple(Axis::Column, std::optional<Axis>(), Axis::Row));
  EXPECT_EQ(axes(btt::Op::Fadj), std::tuple(Axis::Row, std::optional<Axis>(), Axis::Column));
  EXPECT_EQ(axes(btt::Op::FadjF), std::tuple(Axis::Column, std::optional(Axis::Row), Axis::Column));
  EXPECT_EQ(axes(btt::Op::FFadj), std::tuple(Axis::Row, std::optional(Axis::Column), Axis::Row));
}

TEST(DistributedCollectives, BusBandwidthFactorsOfNcclTests) {
  EXPECT_EQ(bus_bandwidth_factor(Collective::AllReduce, 1), 0.0);
  EXPECT_EQ(bus_bandwidth_factor(Collective::AllReduce, 2), 1.0);
  EXPECT_EQ(bus_bandwidth_factor(Collective::AllReduce, 8), 1.75);
  EXPECT_EQ(bus_bandwidth_factor(Collective::Broadcast, 8), 1.0);
  EXPECT_EQ(bus_bandwidth_factor(Collective::Reduce, 8), 1.0);
}

// The probe times the plan's own collectives along an axis of more than one rank, and nothing
// along an axis of one.
TEST(DistributedCollectives, TimeCollectiveAlongEachAxis) {
  const Shape s{4, 6, 9};
  const Operator a = random_operator(s, true);
  for (const GridShape g : grids_of(world_size())) {
    const Grid grid(g);
    DistributedPlan plan = distributed_plan(grid, a, test_options(2));
    for (Collective c : {Collective::Broadcast, Collective::Reduce, Collective::AllReduce}) {
      EXPECT_EQ(plan.time_collective(c, Axis::Row, 1 << 16, 2) > 0, g.cols > 1) << g.str();
      EXPECT_EQ(plan.time_collective(c, Axis::Column, 1 << 16, 2) > 0, g.rows > 1) << g.str();
    }
  }
}

#ifndef SHIFTOP_HAVE_NCCL
TEST(DistributedErrors, TheCudaBackendNeedsABuildWithNccl) {
  const Shape s{4, 6, 9};
  const Operator a = random_operator(s, true);
  const Grid grid({1, world_size()});
  try {
    (void)distributed_plan(grid, a, test_options(2, "DDDDD", btt::Backend::Cuda));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0: this shiftop was built without NCCL"),
              std::string::npos)
        << e.what();
  }
}
#endif

TEST(DistributedErrors, AGridOfTheWrongSizeIsRefusedOnEveryRank) {
  const int size = world_size();
  try {
    const Grid grid({size + 1, 1});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              fmt::format("process grid {}x1 needs {} MPI ranks, the communicator has {}", size + 1,
                          size + 1, size));
  }
}

TEST(DistributedErrors, RanksThatDisagreeOnTheGridAreRefused) {
  const int size = world_size();
  if (size == 1) GTEST_SKIP() << "needs two ranks";
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    const Grid grid(rank == 0 ? GridShape{1, size} : GridShape{size, 1});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the ranks disagree on the process grid"),
              std::string::npos)
        << e.what();
  }
}

TEST(DistributedErrors, ABadSliceOnOneRankFailsEveryRank) {
  const Shape s{5, 3, 7};
  const Operator a = random_operator(s, true);
  const int last = world_size() - 1;
  for (const GridShape g : grids_of(world_size())) {
    const Grid grid(g);
    const Partition part(s, g);
    auto column = slice_kernels(a.column, s, part.rows(grid.row()), part.cols(grid.col()));
    if (grid.rank() == last) column.push_back(1.0);
    try {
      (void)DistributedPlan::create(grid, s, column, test_options(2));
      ADD_FAILURE() << "no error on " << g.str();
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(fmt::format("rank {}: its first block column slice holds", last)),
                std::string::npos)
          << message;
    }
  }
}

TEST(DistributedErrors, RanksThatDisagreeOnThePrecisionAreRefused) {
  if (world_size() == 1) GTEST_SKIP() << "needs two ranks";
  const Shape s{5, 3, 7};
  const Operator a = random_operator(s, true);
  const Grid grid({1, world_size()});
  const Partition part(s, grid.shape());
  const auto column = slice_kernels(a.column, s, part.rows(0), part.cols(grid.col()));
  try {
    (void)DistributedPlan::create(grid, s, column,
                                  test_options(2, grid.rank() == 0 ? "SDDDD" : "DDDDD"));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("disagree"), std::string::npos) << e.what();
  }
}

TEST(DistributedErrors, VectorsOfTheWrongSizeAreRefused) {
  const Shape s{5, 3, 7};
  const Operator a = random_operator(s, true);
  const Grid grid({world_size(), 1});
  DistributedPlan plan = distributed_plan(grid, a, test_options(2));
  // Every rank passes one value: wrong everywhere (holders expect multiples of Nt = 7, the others
  // nothing), so every rank throws before any collective.
  std::vector<double> x(1),
      y(static_cast<std::size_t>(plan.local_output_blocks(btt::Op::F).size() * s.nt));
  try {
    plan.apply(btt::Op::F, x, y, 1);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string expected = grid.holds_parameters()
                                     ? "expected 21 (its blocks)"
                                     : "expected 0 (nothing: parameter vectors live on grid row 0)";
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

// Operator files read in slices: rank 0 writes whole operators into a directory every rank sees,
// then every rank of every grid reads only its own blocks (read_distributed_plan).
class OperatorFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    int pid = ::getpid();
    EXPECT_EQ(MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    dir_ = std::filesystem::temp_directory_path() / fmt::format("shiftop_dist_{}", pid);
    run_collectively(MPI_COMM_WORLD, [&] {
      if (rank() == 0) std::filesystem::create_directories(dir_);
    });
  }
  void TearDown() override {
    EXPECT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
    if (rank() == 0) std::filesystem::remove_all(dir_);
  }

  static int rank() {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  /// Rank 0 writes `a`; every rank returns once the file is complete.
  void write(const std::string& file, const Operator& a, io::OperatorFormat format) const {
    run_collectively(MPI_COMM_WORLD, [&] {
      if (rank() != 0) return;
      io::write_operator(path(file),
                         {.full_shape = a.shape,
                          .shape = a.shape,
                          .triangular = a.triangular,
                          .first_column = a.column,
                          .first_row = a.row,
                          .metadata = {}},
                         format);
    });
  }

  std::filesystem::path dir_;
};

TEST_F(OperatorFiles, EveryRankReadsItsSliceOfShiftopH5FFTMatvecAndNpyFiles) {
  const Shape s{5, 7, 6};
  const index_t nrhs = 2;
  const Operator triangular = random_operator(s, true), general = random_operator(s, false);
  write("tri.h5", triangular, io::OperatorFormat::Shiftop);
  write("gen.h5", general, io::OperatorFormat::Shiftop);
  write("tri_fftmatvec", triangular, io::OperatorFormat::FFTMatvec);
  write("tri.npy", triangular, io::OperatorFormat::Npy);
  for (const auto& [file, a] : {std::pair<std::string, const Operator*>{"tri.h5", &triangular},
                                {"gen.h5", &general},
                                {"tri_fftmatvec", &triangular},
                                {"tri.npy", &triangular}}) {
    btt::Plan whole = whole_plan(*a, test_options(2));
    for (const GridShape g : grids_of(world_size())) {
      const Grid grid(g);
      DistributedPlan plan = read_distributed_plan(grid, path(file), test_options(2));
      EXPECT_EQ(plan.shape(), s);
      EXPECT_EQ(plan.triangular(), a->triangular);
      for (btt::Op op : btt::kAllOps) {
        SCOPED_TRACE(fmt::format("{} grid {} op {}", file, g.str(), name_of(op)));
        const auto x =
            random_vector(static_cast<std::size_t>(nrhs * input_blocks(op, s) * s.nt), 7);
        std::vector<double> want(static_cast<std::size_t>(nrhs * output_blocks(op, s) * s.nt));
        whole.apply(op, x, want, nrhs);
        const Verdict v = judge(apply_distributed(plan, op, x, nrhs), plan, op, want, nrhs);
        EXPECT_LT(v.relative_error, 1e-13);
      }
    }
  }
}

TEST_F(OperatorFiles, AMissingFileFailsEveryRank) {
  const Grid grid({1, world_size()});
  try {
    (void)read_distributed_plan(grid, path("nope.h5"), test_options(2));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("rank 0: ", 0), 0u) << message;
    EXPECT_NE(message.find("nope.h5"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace shiftop::distributed
