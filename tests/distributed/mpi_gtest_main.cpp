// GoogleTest main for tests run under mpiexec. MPI is initialised around the whole run; rank 0
// prints GoogleTest's usual report, every other rank prints only its own failures, prefixed by
// its rank; and every rank exits with the same status, non-zero if a test failed on any rank.
// Tests compare after collective verdicts (every rank reaches every collective), so a failed
// expectation on one rank cannot leave the others waiting.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

namespace {

class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_,
                 result.file_name() ? result.file_name() : "?", result.line_number(),
                 result.summary());
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS ||
      provided < MPI_THREAD_FUNNELED) {
    std::fprintf(stderr, "MPI_Init_thread failed or gave less than MPI_THREAD_FUNNELED\n");
    return 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  // An unexpected exception on one rank would leave the others waiting in a collective until the
  // ctest timeout; uncaught, it ends this process and mpiexec ends the job at once.
  GTEST_FLAG_SET(catch_exceptions, false);
  int rank = 0;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int failed = MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS;
  if (rank != 0) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
  failed |= RUN_ALL_TESTS() != 0;
  int any_failed = 1;
  if (MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
    any_failed = 1;
  MPI_Finalize();
  return any_failed;
}
