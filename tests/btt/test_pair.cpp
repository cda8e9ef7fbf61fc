// The operator-pair tests of pair_test.hpp on CPU plans (against the dense matrices), and what
// only the CPU pair has: apply_device refused, the operation names.
#include "btt/pair_test.hpp"

namespace shiftop::btt::pair_test {

BackendUnderTest cpu() {
  return {.name = "cpu",
          .options = {.backend = Backend::Cpu, .planning = Planning::Estimate},
          .timed = {},
          .unavailable = {},
          .fp64_scale = 1.0,
          .precision_slack = 1.0};
}

SHIFTOP_PAIR_TESTS(Cpu, cpu());

TEST(CpuPair, DevicePointersAreRefused) {
  const PairCase c("both", Shape{1, 2, 3}, Shape{1, 2, 3}, true, 1);
  OperatorPair pair = OperatorPair::create(c.f.col, c.f.shape, c.g.col, c.g.shape,
                                           {.planning = Planning::Estimate});
  EXPECT_FALSE(pair.on_device());
  std::vector<double> x(6), y(6);
  testing::expect_error([&] { pair.apply_device(PairOp::GadjF, x.data(), y.data()); },
                        "apply_device needs plans on the CUDA backend");
}

TEST(PairOpNames, ParseAndPrint) {
  for (const PairOp op : kAllPairOps)
    EXPECT_EQ(parse_name<PairOp>(name_of(op), "op"), op);
  testing::expect_error([] { (void)parse_name<PairOp>("F", "op"); },
                        "op: expected G, Gadj, GadjF or FGadj, got 'F'");
}

}  // namespace shiftop::btt::pair_test
