// The meta_adj parser: the nine lines of FFTMatvec's matrix directory, every malformed variant
// refused with the file, the line and what was expected, and no crash on arbitrary bytes.
#include "io/fftmatvec_meta.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "support/io_test_support.hpp"

namespace shiftop::io {
namespace {

using shiftop::testing::contains;
using shiftop::testing::error_of;

constexpr std::string_view kValid = "5\n100\n400\nadj/vec_\n.h5\n1\n0\n1\n0\n";

TEST(MetaAdjTest, ParsesTheNineLines) {
  const MetaAdj meta = parse_meta_adj(kValid, "meta_adj");
  EXPECT_EQ(meta.nd, 5);
  EXPECT_EQ(meta.nm, 100);
  EXPECT_EQ(meta.nt, 400);
  EXPECT_EQ(meta.prefix, "adj/vec_");
  EXPECT_EQ(meta.extension, ".h5");
  EXPECT_TRUE(meta.reindexed);
  EXPECT_FALSE(meta.p2q);
  EXPECT_TRUE(meta.reverse_dof);
  EXPECT_EQ(meta.checksum, 0);
  EXPECT_EQ(format_meta_adj(meta), kValid);
}

// FFTMatvec's own test data (test/data/test_mat/binary/meta_adj at 13402264ed5e) has eight lines:
// its read_meta leaves the checksum at 0 when the ninth is absent.
TEST(MetaAdjTest, ParsesEightLinesAsFFTMatvecsOwnTestData) {
  const MetaAdj meta = parse_meta_adj("15\n289\n10\nadj/vec_\n.h5\n1\n0\n1\n", "test_mat");
  EXPECT_EQ(meta.nd, 15);
  EXPECT_EQ(meta.nm, 289);
  EXPECT_EQ(meta.nt, 10);
  EXPECT_EQ(meta.prefix, "adj/vec_");
  EXPECT_FALSE(meta.p2q);
  EXPECT_EQ(meta.checksum, 0);
  EXPECT_TRUE(parse_meta_adj("15\n289\n10\nadj/vec_\n.h5\n1\n1\n1", "test_mat_qoi").p2q);
}

// What std::stoi reads: leading white space, a sign, trailing white space (a '\r' on a number's
// line too); flags are C truth values; the prefix is the line as it is; lines after the ninth are
// never read.
TEST(MetaAdjTest, AcceptsWhatFFTMatvecsStoiAccepts) {
  const MetaAdj meta = parse_meta_adj(
      " 5 \r\n+100\t\n\v400\nvec_ x\n.h5\n2\n1\n-1\n-42  \r\nanything\n\n", "meta_adj");
  EXPECT_EQ(meta.nd, 5);
  EXPECT_EQ(meta.nm, 100);
  EXPECT_EQ(meta.nt, 400);
  EXPECT_EQ(meta.prefix, "vec_ x");
  EXPECT_TRUE(meta.reindexed);
  EXPECT_TRUE(meta.p2q);
  EXPECT_TRUE(meta.reverse_dof);
  EXPECT_EQ(meta.checksum, -42);
  EXPECT_EQ(parse_meta_adj("5\n100\n400\nadj/vec_\n.h5\n0\n0\n0\n2147483647\n", "m").checksum,
            2147483647);
  EXPECT_FALSE(parse_meta_adj("5\n100\n400\nadj/vec_\n.h5\n0\n0\n0\n", "m").reindexed);
  EXPECT_NO_THROW(parse_meta_adj("5\n100\n400\nadj/vec_\n.h5\n1\n0\n1\n0", "no final newline"));
  EXPECT_EQ(parse_meta_adj("5\n100\n400\n\n.h5\n1\n0\n1\n", "empty prefix").prefix, "");
}

TEST(MetaAdjTest, FormatsWhatItParses) {
  const MetaAdj meta{.nd = 3,
                     .nm = 7,
                     .nt = 11,
                     .prefix = "p2o/row_",
                     .extension = ".h5",
                     .reindexed = true,
                     .p2q = true,
                     .reverse_dof = true,
                     .checksum = 2024};
  const MetaAdj again = parse_meta_adj(format_meta_adj(meta), "round trip");
  EXPECT_EQ(format_meta_adj(again), format_meta_adj(meta));
  EXPECT_EQ(again.prefix, meta.prefix);
  EXPECT_EQ(again.checksum, 2024);
}

TEST(MetaAdjTest, BlockRowFilesHaveSixDigitIndices) {
  const MetaAdj meta = parse_meta_adj(kValid, "meta_adj");
  EXPECT_EQ(block_row_path(meta, 0), "binary/adj/vec_000000.h5");
  EXPECT_EQ(block_row_path(meta, 42), "binary/adj/vec_000042.h5");
  EXPECT_EQ(block_row_path(meta, 1234567), "binary/adj/vec_1234567.h5");
}

// Every refusal names the file and the line and says what was expected.
TEST(MetaAdjTest, RefusesMalformedFiles) {
  struct Case {
    std::string text;
    std::string words;
  };
  const auto lines = [](std::vector<std::string> values) {
    std::string text;
    for (const std::string& v : values)
      text += v + "\n";
    return text;
  };
  const std::vector<std::string> good = {"5", "100", "400", "adj/vec_", ".h5", "1", "0", "1", "0"};
  const auto with = [&](std::size_t line, std::string value) {
    std::vector<std::string> v = good;
    v[line] = std::move(value);
    return lines(v);
  };
  const std::vector<Case> cases = {
      {"", "line 1: expected Nd"},
      {"\n\n\n",
       "line 1: expected Nd, the number of observation blocks (a positive integer), "
       "found an empty line"},
      {lines({"5", "100", "400", "adj/vec_", ".h5", "1", "0"}),
       "line 8: expected the reverse-dof flag (an integer, 1), found the end of the file"},
      // std::stoi throws on an empty ninth line: FFTMatvec dies, it does not read "no checksum".
      {lines({"5", "100", "400", "adj/vec_", ".h5", "1", "0", "1", ""}),
       "line 9: expected the checksum (an integer, 0 for none; or no ninth line), found an empty "
       "line"},
      {lines({"5", "100"}), "line 3: expected Nt"},
      {with(0, "five"),
       "line 1: expected Nd, the number of observation blocks (a positive "
       "integer), found 'five'"},
      {with(0, "0"), "line 1: expected Nd"},
      {with(0, "-5"), "line 1: expected Nd"},
      {with(1, "100.0"), "line 2: expected Nm"},
      {with(1, "1e2"), "line 2: expected Nm"},
      {with(1, "+-100"), "line 2: expected Nm"},
      {with(1, "100 blocks"), "line 2: expected Nm"},  // std::stoi would read 100
      {with(2, ""),
       "line 3: expected Nt, the number of time steps (a positive integer), found an "
       "empty line"},
      {with(2, "4 00"), "line 3: expected Nt"},
      {with(2, "99999999999999999999999"), "line 3: expected Nt"},
      {with(0, "2147483648"), "line 1: expected Nd"},  // 2^31: std::stoi throws out_of_range
      {lines({"1000000000", "1000000000", "1000000000", "v_", ".h5", "1", "0", "1", "0"}),
       "absurdly large"},
      {with(3, "../outside_"), "line 4: expected the file-name prefix"},
      {with(3, "/abs/vec_"), "not a relative path below binary/"},
      {with(3, "a\tb_"), "line 4: expected the file-name prefix"},
      {with(3, "vec_\r"),
       "line 4: expected the file-name prefix of the block rows (e.g. adj/vec_), "
       "found 'vec_' and a carriage return (Windows line ends"},
      {with(3, "v\r_"), "without control characters"},
      {with(3, std::string("v\0_", 3)), "line 4: expected the file-name prefix"},
      {with(4, ".hdf5"), "line 5: expected the file extension '.h5', found '.hdf5'"},
      {with(4, ""), "line 5: expected the file extension"},
      {with(4, ".h5 "), "line 5: expected the file extension '.h5', found '.h5 '"},
      {with(4, ".h5\r"),
       "found '.h5' and a carriage return (Windows line ends, which FFTMatvec "
       "refuses: save the file with '\\n' line ends)"},
      {with(5, "yes"), "line 6: expected the reindexed flag (an integer, 1), found 'yes'"},
      {with(6, "2"), "line 7: expected the p2q flag"},
      {with(7, "1.0"), "line 8: expected the reverse-dof flag (an integer, 1)"},
      {with(8, "abc"),
       "line 9: expected the checksum (an integer, 0 for none; or no ninth "
       "line), found 'abc'"},
      {with(8, "4294967296"), "outside the range of a C int"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const std::string message = error_of([&] { parse_meta_adj(c.text, "DIR/binary/meta_adj"); });
    EXPECT_TRUE(contains(message, "DIR/binary/meta_adj: ")) << message;
    EXPECT_TRUE(contains(message, c.words)) << message;
    EXPECT_TRUE(contains(message, "expected")) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

// A fuzzing smoke test: mutated and truncated files may only ever raise shiftop::Error, and what
// is accepted is within the documented bounds.
TEST(MetaAdjTest, ArbitraryBytesOnlyRaiseShiftopErrors) {
  const auto parse = [](std::string_view text) {
    try {
      const MetaAdj meta = parse_meta_adj(text, "fuzz");
      EXPECT_GT(meta.nd, 0);
      EXPECT_GT(meta.nm, 0);
      EXPECT_GT(meta.nt, 0);
      EXPECT_EQ(meta.extension, ".h5");
    } catch (const Error&) {
    }
  };
  const std::string valid(kValid);
  for (std::size_t n = 0; n <= valid.size(); ++n)
    parse(std::string_view(valid).substr(0, n));
  std::mt19937 random(2024);
  constexpr std::string_view alphabet("0123456789-+.e/ \t\r\n\0\xffvh_", 25);
  std::uniform_int_distribution<std::size_t> letter(0, alphabet.size() - 1);
  std::uniform_int_distribution<std::size_t> position(0, valid.size() - 1);
  for (int trial = 0; trial < 20000; ++trial) {
    std::string text = valid;
    for (int edit = 0; edit < 1 + trial % 5; ++edit)
      text[position(random)] = alphabet[letter(random)];
    parse(text);
  }
}

}  // namespace
}  // namespace shiftop::io
