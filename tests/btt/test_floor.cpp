// The roofline floor (btt/floor.hpp) against a count by hand for small shapes.
#include "shiftop/btt/floor.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "shiftop/core/error.hpp"

namespace shiftop::btt {
namespace {

// Nd = 2, Nm = 3, Nt = 4: F^ has Nt + 1 = 5 frequencies of 2 x 3 complex entries.
const Shape kShape{2, 3, 4};

TEST(Floor, FInFp64CountedByHand) {
  // 5 vectors in groups of at most 2: 3 passes, each reading all of F^.
  const ApplyFloor f = apply_floor(kShape, PrecisionConfig::parse("DDDDD"), Op::F, 5, 0, 2);
  EXPECT_EQ(f.groups, 3);
  EXPECT_EQ(f.spectrum_bytes, 5.0 * 2 * 3 * 16 * 3);  // frequencies * Nd * Nm * complex128 * passes
  EXPECT_EQ(f.input_bytes, 5.0 * 3 * 4 * 8);          // nrhs * Nm blocks * Nt * double
  EXPECT_EQ(f.output_bytes, 5.0 * 2 * 4 * 8);         // nrhs * Nd blocks * Nt * double
  EXPECT_EQ(f.bytes(), 1440.0 + 480.0 + 320.0);
  EXPECT_EQ(f.flops, 8.0 * 2 * 3 * 5 * 5);  // 8 flops per complex multiply-add, per frequency, rhs
  EXPECT_EQ(matrix_bytes(kShape, PrecisionConfig::parse("DDDDD"), Op::F, 3), f.spectrum_bytes);
}

TEST(Floor, NormalOperatorInFp32AtALongerFftCountedByHand) {
  // L = 16: 9 frequencies; an FP32 phase 3 reads complex64 (8 bytes); F*F reads F^ twice and maps
  // Nm blocks to Nm blocks.
  const ApplyFloor f = apply_floor(kShape, PrecisionConfig::parse("DDSDD"), Op::FadjF, 1, 16, 4);
  EXPECT_EQ(f.groups, 1);
  EXPECT_EQ(f.spectrum_bytes, 9.0 * 2 * 3 * 8 * 2);
  EXPECT_EQ(f.input_bytes, 3.0 * 4 * 8);
  EXPECT_EQ(f.output_bytes, 3.0 * 4 * 8);
  EXPECT_EQ(f.flops, 8.0 * 2 * 3 * 9 * 2);
  // Only phase 3's precision changes the bytes of F^.
  EXPECT_EQ(matrix_bytes(kShape, PrecisionConfig::parse("SSSSS"), Op::FadjF, 1, 16),
            f.spectrum_bytes);
  EXPECT_EQ(matrix_bytes(kShape, PrecisionConfig::parse("SSDSS"), Op::FadjF, 1, 16),
            2 * f.spectrum_bytes);
}

TEST(Floor, TimesAreBytesOverBandwidthAndFlopsOverRate) {
  const ApplyFloor f = apply_floor(kShape, PrecisionConfig::parse("DDDDD"), Op::F, 5, 0, 2);
  const FloorTimes memory = floor_times(f, 1000.0);  // no flop rate: memory-bound
  EXPECT_DOUBLE_EQ(memory.whole_apply, 2240.0 / 1000.0);
  EXPECT_DOUBLE_EQ(memory.spectrum_only, 1440.0 / 1000.0);
  EXPECT_EQ(memory.flops, 0.0);
  EXPECT_DOUBLE_EQ(memory.floor(), 2.24);
  EXPECT_FALSE(memory.flop_bound());
  const FloorTimes flops = floor_times(f, 1000.0, 100.0);  // 1200 flops at 100/s: 12 s
  EXPECT_DOUBLE_EQ(flops.flops, 12.0);
  EXPECT_DOUBLE_EQ(flops.floor(), 12.0);
  EXPECT_TRUE(flops.flop_bound());
}

TEST(Floor, OfAPlanUsesItsFftLengthAndGroupSize) {
  const std::vector<double> kernels(static_cast<std::size_t>(kShape.kernel_size()), 0.5);
  const Plan plan = Plan::create(
      kernels, kShape, {.precision = "DDSDD", .max_rhs = 2, .planning = Planning::Estimate});
  const PlanChoices choices = plan.choices();
  const ApplyFloor f = apply_floor(plan, Op::Fadj, 3);
  const ApplyFloor want = apply_floor(kShape, PrecisionConfig::parse("DDSDD"), Op::Fadj, 3,
                                      choices.fft_length, choices.group_size);
  EXPECT_EQ(f.spectrum_bytes, want.spectrum_bytes);
  EXPECT_EQ(f.bytes(), want.bytes());
  EXPECT_EQ(f.groups, 2);  // 3 vectors, at most 2 per group
}

TEST(Floor, RefusesWhatHasNoFloor) {
  EXPECT_THROW(apply_floor(kShape, PrecisionConfig{}, Op::F, 1, 0, 0), Error);
  const ApplyFloor f = apply_floor(kShape, PrecisionConfig{}, Op::F, 1, 0, 1);
  EXPECT_THROW(floor_times(f, 0.0), Error);
  EXPECT_THROW(floor_times(f, 1e9, -1.0), Error);
}

}  // namespace
}  // namespace shiftop::btt
