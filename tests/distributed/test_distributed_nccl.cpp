// The distributed plan on GPUs (Backend::Cuda: NCCL collectives on device buffers, FP32 casts as
// CUDA kernels) under mpiexec with one GPU per rank, on every grid of the ranks (1x2 and 2x1 on
// two GPUs), against the single-process CPU btt::Plan: every operation, many right-hand sides
// in groups, triangular and general operators, uneven splits with a rank that owns nothing; FP64
// to 1e-12 (cuFFT against FFTW), mixed precision as in test_dist_mpi. Vectors go through
// apply_device on a stream of the test's own, and through the host apply of a GPU plan. Every
// test skips, on every rank, when a node has fewer GPUs than ranks.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "backend/cuda/device_memory.cuh"
#include "distributed/device_space.hpp"
#include "shiftop/gpu/context.hpp"
#include "shiftop/gpu/devices.hpp"
#include "support/distributed_test_support.hpp"

namespace shiftop::distributed {
namespace {

using namespace mpi_testing;
using shiftop::testing::random_vector;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Whether every node has at least as many GPUs as ranks (the same answer on every rank).
bool enough_gpus() {
  MPI_Comm node = MPI_COMM_NULL;
  EXPECT_EQ(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
            MPI_SUCCESS);
  int node_size = 0;
  EXPECT_EQ(MPI_Comm_size(node, &node_size), MPI_SUCCESS);
  EXPECT_EQ(MPI_Comm_free(&node), MPI_SUCCESS);
  const int mine = gpu::device_count() >= node_size ? 1 : 0;
  int all = 0;
  EXPECT_EQ(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), MPI_SUCCESS);
  int rank = 0;
  EXPECT_EQ(MPI_Comm_rank(MPI_COMM_WORLD, &rank), MPI_SUCCESS);
  if (all == 0 && rank == 0)
    std::printf("skipped: fewer CUDA devices than ranks on a node (%d visible, %d ranks here)\n",
                gpu::device_count(), node_size);
  return all == 1;
}

class Nccl : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!enough_gpus()) GTEST_SKIP() << "fewer CUDA devices than ranks on a node";
  }
};

/// Device memory on `device` holding `values` (nothing for none).
class DeviceVector {
 public:
  DeviceVector(int device, std::span<const double> values)
      : memory_(allocate(device, values.size())) {
    if (values.empty()) return;
    EXPECT_EQ(cudaMemcpy(data(), values.data(), memory_.bytes(), cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  double* data() const { return memory_.get(); }
  std::vector<double> download(cudaStream_t stream) const {
    std::vector<double> host(memory_.size());
    if (!host.empty()) {
      EXPECT_EQ(
          cudaMemcpyAsync(host.data(), data(), memory_.bytes(), cudaMemcpyDeviceToHost, stream),
          cudaSuccess);
    }
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    return host;
  }

 private:
  static shiftop::cuda::DeviceArray<double> allocate(int device, std::size_t size) {
    EXPECT_EQ(cudaSetDevice(device), cudaSuccess);
    return shiftop::cuda::DeviceArray<double>(size);
  }

  shiftop::cuda::DeviceArray<double> memory_;
};

/// A CUDA stream of the test's own on `device`, to order apply_device after and before.
class Stream {
 public:
  explicit Stream(int device) {
    EXPECT_EQ(cudaSetDevice(device), cudaSuccess);
    EXPECT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { EXPECT_EQ(cudaStreamDestroy(stream_), cudaSuccess); }
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

/// This rank's output blocks of op applied to the whole vectors x: the rank's slice of x goes to
/// its GPU, through apply_device on a stream of the test's, or through the host apply.
std::vector<double> apply_on_gpus(DistributedPlan& plan, btt::Op op, std::span<const double> x,
                                  index_t nrhs, bool through_host) {
  const Shape& s = plan.shape();
  const auto local_x =
      slice_blocks(x, nrhs, input_blocks(op, s), s.nt, plan.local_input_blocks(op));
  std::vector<double> y(static_cast<std::size_t>(nrhs * plan.local_output_blocks(op).size() * s.nt),
                        kNaN);  // unwritten entries fail
  if (through_host) {
    plan.apply(op, local_x, y, nrhs);
    return y;
  }
  const Stream stream(plan.device());
  const DeviceVector device_x(plan.device(), local_x), device_y(plan.device(), y);
  plan.apply_device(op, device_x.data(), device_y.data(), nrhs, stream.get());
  return device_y.download(stream.get());
}

struct Case {
  Shape shape;
  bool triangular;
  index_t nrhs;
  index_t max_rhs;
  bool through_host;
};

std::string describe(const Case& c) {
  return fmt::format("nd{}_nm{}_nt{}_{}_rhs{}_max{}_{}", c.shape.nd, c.shape.nm, c.shape.nt,
                     c.triangular ? "tri" : "gen", c.nrhs, c.max_rhs,
                     c.through_host ? "host" : "device");
}

std::string name(const ::testing::TestParamInfo<Case>& info) {
  return describe(info.param);
}

class NcclVsSingleProcess : public Nccl, public ::testing::WithParamInterface<Case> {};

TEST_P(NcclVsSingleProcess, EveryOperationOnEveryGrid) {
  const Case c = GetParam();
  const Shape& s = c.shape;
  const Operator a = random_operator(s, c.triangular);
  btt::Plan whole = whole_plan(a, test_options(c.max_rhs));
  for (const GridShape g : grids_of(world_size())) {
    const Grid grid(g);
    DistributedPlan plan =
        distributed_plan(grid, a, test_options(c.max_rhs, "DDDDD", btt::Backend::Cuda));
    for (btt::Op op : btt::kAllOps) {
      SCOPED_TRACE(fmt::format("grid {} op {}", g.str(), name_of(op)));
      const auto x =
          random_vector(static_cast<std::size_t>(c.nrhs * input_blocks(op, s) * s.nt), 3);
      std::vector<double> want(static_cast<std::size_t>(c.nrhs * output_blocks(op, s) * s.nt));
      whole.apply(op, x, want, c.nrhs);
      const Verdict v =
          judge(apply_on_gpus(plan, op, x, c.nrhs, c.through_host), plan, op, want, c.nrhs);
      EXPECT_LT(v.relative_error, 1e-12);
      EXPECT_EQ(v.blocks_covered, static_cast<double>(output_blocks(op, s)));
    }
  }
}

// (1, 1, 4) leaves one of two ranks without blocks; 5 = 3 + 2 data blocks and 13 = 7 + 6
// parameter blocks split unevenly; max_rhs < nrhs runs groups of right-hand sides.
INSTANTIATE_TEST_SUITE_P(Sizes, NcclVsSingleProcess,
                         ::testing::Values(Case{{5, 3, 7}, true, 3, 2, false},
                                           Case{{5, 3, 7}, false, 3, 2, true},
                                           Case{{1, 1, 4}, true, 2, 16, false},
                                           Case{{7, 13, 17}, false, 5, 2, false},
                                           Case{{12, 40, 33}, true, 4, 4, true}),
                         name);

// "DSSDD" keeps the collectives in FP64; "SSSSS" sends FP32 messages (cast by CUDA kernels) in
// the broadcast, the all-reduce and the reduce. Tolerances as in test_dist_mpi: eq. (6) of the
// mixed-precision paper, and a lower limit that fails if the FP32 phases ran in FP64.
TEST_F(Nccl, MixedPrecisionStaysWithinFP32AccuracyOfTheFP64Result) {
  const Shape s{6, 50, 64};
  const index_t nrhs = 3;
  for (bool triangular : {true, false}) {
    const Operator a = random_operator(s, triangular);
    btt::Plan whole = whole_plan(a, test_options(2));
    for (const GridShape g : grids_of(world_size())) {
      const Grid grid(g);
      for (const char* precision : {"DSSDD", "SSSSS"}) {
        DistributedPlan plan =
            distributed_plan(grid, a, test_options(2, precision, btt::Backend::Cuda));
        for (btt::Op op : btt::kAllOps) {
          SCOPED_TRACE(fmt::format("grid {} {} {} {}", g.str(), precision, name_of(op),
                                   triangular ? "triangular" : "general"));
          const auto x =
              random_vector(static_cast<std::size_t>(nrhs * input_blocks(op, s) * s.nt), 4);
          std::vector<double> want(static_cast<std::size_t>(nrhs * output_blocks(op, s) * s.nt));
          whole.apply(op, x, want, nrhs);
          const Verdict v = judge(apply_on_gpus(plan, op, x, nrhs, false), plan, op, want, nrhs);
          EXPECT_LT(v.relative_error, 2e-6);
          EXPECT_GT(v.relative_error, 1e-10);
        }
      }
    }
  }
}

TEST_F(Nccl, EachRankDrivesTheGpuOfItsNodeRank) {
  const Shape s{4, 6, 9};
  const Operator a = random_operator(s, true);
  const Grid grid({1, world_size()});
  const DistributedPlan plan =
      distributed_plan(grid, a, test_options(2, "DDDDD", btt::Backend::Cuda));
  EXPECT_EQ(plan.backend(), btt::Backend::Cuda);
  EXPECT_EQ(plan.device(), grid.node_rank() % gpu::device_count());
}

// A context given in the options is the one the rank runs on: its local plan and its buffers are
// all allocated through it, so the context accounts for exactly the plan's memory.
TEST_F(Nccl, RunsOnTheGivenContextAndAccountsForItsMemory) {
  const Shape s{4, 6, 9};
  const Operator a = random_operator(s, false);
  const Grid grid({world_size(), 1});
  const auto context = gpu::Context::create(grid.node_rank() % gpu::device_count());
  btt::PlanOptions options = test_options(3, "DSSSS", btt::Backend::Cuda);
  options.gpu.context = context;
  {
    const DistributedPlan plan = distributed_plan(grid, a, options);
    EXPECT_EQ(plan.device(), context->device());
    EXPECT_GT(plan.memory_bytes(), 0u);
    EXPECT_EQ(context->allocated_bytes(), plan.memory_bytes());
  }
  // The cuBLAS workspace is the context's own; everything the plan allocated is returned.
  EXPECT_EQ(context->allocated_bytes(), std::size_t{32} << 20);
}

// With profiling, every communication phase is timed on the GPU and counts its bytes, and the
// bandwidth probe times the plan's own collectives (nothing to time along an axis of one rank).
TEST_F(Nccl, ProfiledPhasesAndTheCollectiveProbe) {
  const Shape s{5, 7, 6};
  const index_t nrhs = 3;
  const Operator a = random_operator(s, true);
  for (const GridShape g : grids_of(world_size())) {
    const Grid grid(g);
    const Partition part(s, g);
    btt::PlanOptions options = test_options(2, "DDDDD", btt::Backend::Cuda);
    options.gpu_engine.profile = true;
    DistributedPlan plan = distributed_plan(grid, a, options);
    const auto x = random_vector(static_cast<std::size_t>(nrhs * s.nm * s.nt), 6);
    (void)apply_on_gpus(plan, btt::Op::FadjF, x, nrhs, false);
    const DistributedPhaseTimes t = plan.max_phase_times();
    const double nm0 =
        static_cast<double>(part.cols(0).size() * s.nt) * 8.0 * static_cast<double>(nrhs);
    const double nd0 =
        static_cast<double>(part.rows(0).size() * s.nt) * 8.0 * static_cast<double>(nrhs);
    // F*F: broadcast m down columns, all-reduce d across rows, reduce m down columns.
    EXPECT_EQ(t.broadcast_bytes, g.rows > 1 ? nm0 : 0.0) << g.str();
    EXPECT_EQ(t.allreduce_bytes, g.cols > 1 ? nd0 : 0.0) << g.str();
    EXPECT_EQ(t.reduce_bytes, g.rows > 1 ? nm0 : 0.0) << g.str();
    EXPECT_EQ(t.broadcast > 0, g.rows > 1) << g.str();
    EXPECT_EQ(t.allreduce > 0, g.cols > 1) << g.str();
    EXPECT_EQ(t.reduce > 0, g.rows > 1) << g.str();
    EXPECT_GT(t.local.total(), 0.0);
    for (Collective c : {Collective::Broadcast, Collective::Reduce, Collective::AllReduce}) {
      EXPECT_EQ(plan.time_collective(c, Axis::Row, 1 << 20, 3) > 0, g.cols > 1) << g.str();
      EXPECT_EQ(plan.time_collective(c, Axis::Column, 1 << 20, 3) > 0, g.rows > 1) << g.str();
    }
  }
}

}  // namespace
}  // namespace shiftop::distributed
