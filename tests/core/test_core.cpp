#include <gtest/gtest.h>

#include <set>

#include "shiftop/core/error.hpp"
#include "shiftop/core/precision.hpp"
#include "shiftop/core/shape.hpp"

namespace shiftop {
namespace {

TEST(PrecisionConfig, ParsesAndPrintsEveryConfiguration) {
  const auto all = PrecisionConfig::all();
  ASSERT_EQ(all.size(), 32u);
  std::set<std::string> seen;
  for (const auto& config : all) {
    EXPECT_EQ(PrecisionConfig::parse(config.str()), config);
    seen.insert(config.str());
  }
  EXPECT_EQ(seen.size(), 32u);
  EXPECT_EQ(all.front().str(), "DDDDD");
  EXPECT_EQ(all.back().str(), "SSSSS");
}

TEST(PrecisionConfig, PhaseOrderMatchesTheString) {
  const auto config = PrecisionConfig::parse("dSsDd");
  EXPECT_EQ(config[Phase::Pad], Precision::Double);
  EXPECT_EQ(config[Phase::Fft], Precision::Single);
  EXPECT_EQ(config[Phase::Gemv], Precision::Single);
  EXPECT_EQ(config[Phase::Ifft], Precision::Double);
  EXPECT_EQ(config[Phase::Unpad], Precision::Double);
  EXPECT_EQ(config.str(), "DSSDD");
  EXPECT_FALSE(config.all_double());
  EXPECT_TRUE(PrecisionConfig().all_double());
}

TEST(PrecisionConfig, RejectsBadStringsWithAClearMessage) {
  for (const char* bad : {"", "DDDD", "DDDDDD", "DDXDD", "dd dd", "HSSDD"}) {
    try {
      PrecisionConfig::parse(bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("precision string"), std::string::npos) << e.what();
    }
  }
}

TEST(Shape, RejectsNonPositiveAndAbsurdSizes) {
  EXPECT_THROW((Shape{0, 1, 1}.validate()), Error);
  EXPECT_THROW((Shape{1, -2, 1}.validate()), Error);
  EXPECT_THROW((Shape{1, 1, 0}.validate()), Error);
  EXPECT_THROW((Shape{1 << 30, 1 << 30, 1 << 30}.validate()), Error);
  EXPECT_NO_THROW((Shape{1, 1, 1}.validate()));
}

}  // namespace
}  // namespace shiftop
