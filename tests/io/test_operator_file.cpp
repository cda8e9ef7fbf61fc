// Operators in every format: bit-exact round trips, partial reads that touch only the requested
// slice, the same matvec from an FFTMatvec directory as from the original kernels, and every kind
// of bad input refused with the file and what was expected, leaving no partial output behind.
#include "shiftop/io/operator_file.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "io/fftmatvec_format.hpp"
#include "io/hdf5.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/io/npy.hpp"
#include "shiftop/io/vector_file.hpp"
#include "support/io_fixtures.hpp"
#include "support/io_test_support.hpp"

namespace shiftop::io {
namespace {

namespace fs = std::filesystem;
using shiftop::testing::contains;
using shiftop::testing::DatasetSpec;
using shiftop::testing::error_of;
using shiftop::testing::expect_bits_equal;
using shiftop::testing::fftmatvec_row;
using shiftop::testing::FileSizeLimit;
using shiftop::testing::tricky_values;

constexpr Shape kShape{3, 4, 5};

OperatorData make_operator(const Shape& shape, bool triangular, bool finite_only, unsigned seed) {
  OperatorData op;
  op.full_shape = op.shape = shape;
  op.triangular = triangular;
  const auto size = static_cast<std::size_t>(shape.kernel_size());
  op.first_column = tricky_values(size, seed, finite_only);
  if (!triangular) {
    op.first_row = tricky_values(size, seed + 1, finite_only);
    for (std::size_t k = 0; k < size; k += static_cast<std::size_t>(shape.nt))
      op.first_row[k] = op.first_column[k];
  }
  return op;
}

const OperatorReadOptions kAllowNonfinite{.slice = {}, .allow_nonfinite = true};

// entries of `op` in rows [r0, r1) and parameter blocks [c0, c1)
std::vector<double> sub_block(const std::vector<double>& values, const Shape& shape, index_t r0,
                              index_t r1, index_t c0, index_t c1) {
  std::vector<double> out;
  for (index_t r = r0; r < r1; ++r)
    for (index_t c = c0; c < c1; ++c)
      for (index_t t = 0; t < shape.nt; ++t)
        out.push_back(values[(r * shape.nm + c) * shape.nt + t]);
  return out;
}

class OperatorFileTest : public shiftop::testing::TempDirTest {
 protected:
  // FFTMatvec block rows of `op`, one DatasetSpec per row, for editing before writing.
  static std::vector<DatasetSpec> rows_of(const OperatorData& op) {
    std::vector<DatasetSpec> rows;
    const index_t n = op.shape.nm * op.shape.nt;
    for (index_t r = 0; r < op.shape.nd; ++r)
      rows.push_back(
          fftmatvec_row({op.first_column.begin() + r * n, op.first_column.begin() + (r + 1) * n},
                        op.shape.nm, op.shape.nt));
    return rows;
  }

  std::string meta(const Shape& s, std::string flags = "1\n0\n1\n0\n") const {
    return fmt::format("{}\n{}\n{}\nadj/vec_\n.h5\n{}", s.nd, s.nm, s.nt, flags);
  }

  // The refusal of reading `file`: it must name `file` and contain `words` and "expected".
  void expect_refused(const std::string& file, const std::string& words,
                      const OperatorReadOptions& options = {}) const {
    SCOPED_TRACE(file + ": " + words);
    const std::string message = error_of([&] { read_operator(file, options); });
    EXPECT_TRUE(contains(message, file)) << message;
    EXPECT_TRUE(contains(message, words)) << message;
    EXPECT_TRUE(contains(message, "expected") || contains(message, "available")) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
};

TEST_F(OperatorFileTest, RoundTripsEveryFormatBitExactly) {
  for (const std::string name : {"F.h5", "F.hdf5", "F_dir", "F.npy"}) {
    SCOPED_TRACE(name);
    OperatorData op = make_operator(kShape, true, false, 11);
    if (name == "F.h5") op.metadata = {{"units", "m/s"}, {"source", "heat solver, run 7"}};
    write_operator(path(name), op);
    const OperatorData back = read_operator(path(name), kAllowNonfinite);
    EXPECT_EQ(back.shape, kShape);
    EXPECT_EQ(back.full_shape, kShape);
    EXPECT_TRUE(back.triangular);
    expect_bits_equal(back.first_column, op.first_column);
    EXPECT_TRUE(back.first_row.empty());
    if (name == "F.h5") {
      EXPECT_EQ(back.metadata, op.metadata);
    }
  }
  EXPECT_EQ(detect_operator_format(path("F_dir")), OperatorFormat::FFTMatvec);
  EXPECT_TRUE(fs::is_regular_file(path("F_dir/binary/meta_adj")));
  EXPECT_TRUE(fs::is_regular_file(path("F_dir/binary/adj/vec_000002.h5")));
}

// A directory shiftop wrote is replaced as a whole: no block row of the old operator survives.
TEST_F(OperatorFileTest, ReplacesAPreviousFFTMatvecDirectory) {
  write_operator(path("F_dir"), make_operator(Shape{5, 2, 3}, true, true, 30));
  const OperatorData op = make_operator(kShape, true, true, 31);
  write_operator(path("F_dir/"), op);
  expect_bits_equal(read_operator(path("F_dir")).first_column, op.first_column);
  EXPECT_FALSE(fs::exists(path("F_dir/binary/adj/vec_000003.h5")));
  EXPECT_EQ(entries().size(), 7u);  // F_dir, binary, meta_adj, adj and the 3 block rows
}

TEST_F(OperatorFileTest, RoundTripsAGeneralOperator) {
  const OperatorData op = make_operator(kShape, false, false, 12);
  write_operator(path("G.h5"), op);
  const OperatorData back = read_operator(path("G.h5"), kAllowNonfinite);
  EXPECT_FALSE(back.triangular);
  expect_bits_equal(back.first_column, op.first_column);
  expect_bits_equal(back.first_row, op.first_row);
  EXPECT_FALSE(inspect_operator(path("G.h5")).triangular);
}

// FFTMatvec's meta_adj facts travel through shiftop's own file and back.
TEST_F(OperatorFileTest, FFTMatvecDirectorySurvivesAConversionRoundTrip) {
  const OperatorData op = make_operator(kShape, true, true, 13);
  auto rows = rows_of(op);
  for (auto& row : rows)
    row.attributes.emplace_back("checksum", std::int64_t{77});
  shiftop::testing::write_fftmatvec_dir(path("A"), "3\n4\n5\np2q/row_\n.h5\n1\n1\n1\n77\n",
                                        "p2q/row_", rows);
  const OperatorData a = read_operator(path("A"));
  write_operator(path("A.h5"), a);
  write_operator(path("B"), read_operator(path("A.h5")));
  EXPECT_EQ(shiftop::testing::read_bytes(path("A/binary/meta_adj")),
            shiftop::testing::read_bytes(path("B/binary/meta_adj")));
  const OperatorData b = read_operator(path("B"));
  expect_bits_equal(b.first_column, op.first_column);
  EXPECT_EQ(b.metadata, a.metadata);
  EXPECT_TRUE(fs::exists(path("B/binary/p2q/row_000002.h5")));
}

// Block-row attributes FFTMatvec ignores (a solver's prior_solved flag, grid and time metadata,
// values that differ from row to row, a checksum = 0) travel with their types through shiftop's
// own file, whole or sliced, and back into every block row.
TEST_F(OperatorFileTest, CarriesUninterpretedBlockRowAttributes) {
  const OperatorData op = make_operator(kShape, true, true, 14);
  auto rows = rows_of(op);
  const Attributes common = {{"prior_solved", std::int64_t{1}},
                             {"dt", 0.025},
                             {"grid", std::string("64x64 P1")},
                             {"grid_shape", std::vector<std::int64_t>{64, 64}},
                             {"times", std::vector<double>{0.0, 0.5, 1.25}},
                             {"checksum", std::int64_t{0}}};
  for (std::size_t r = 0; r < rows.size(); ++r) {
    rows[r].attributes.insert(rows[r].attributes.end(), common.begin(), common.end());
    rows[r].attributes.emplace_back("sensor_x", 0.5 * static_cast<double>(r));
  }
  shiftop::testing::write_fftmatvec_dir(path("A"), meta(kShape), "adj/vec_", rows);
  const OperatorData a = read_operator(path("A"));
  ASSERT_EQ(a.fftmatvec_attributes.size(), 3u);
  for (std::size_t r = 0; r < 3; ++r) {
    Attributes expected = common;
    expected.emplace_back("sensor_x", 0.5 * static_cast<double>(r));
    std::ranges::sort(expected);
    Attributes got = a.fftmatvec_attributes[r];
    std::ranges::sort(got);
    EXPECT_EQ(got, expected) << "row " << r;
  }
  write_operator(path("A.h5"), a);
  EXPECT_EQ(read_operator(path("A.h5")).fftmatvec_attributes, a.fftmatvec_attributes);
  const OperatorData rows12 = read_operator(
      path("A.h5"), {.slice = {.rows = {1, 3}, .cols = {}}, .allow_nonfinite = false});
  EXPECT_EQ(rows12.fftmatvec_attributes, std::vector<Attributes>(a.fftmatvec_attributes.begin() + 1,
                                                                 a.fftmatvec_attributes.end()));
  write_operator(path("B"), read_operator(path("A.h5")));
  for (std::size_t r = 0; r < 3; ++r) {
    const std::string row = fmt::format("/binary/adj/vec_{:06d}.h5", r);
    const auto attributes_of = [&](const std::string& file) {
      const h5::Handle f = h5::open_file(file);
      Attributes out = h5::read_attributes(h5::open_dataset(f.get(), "vec", file).get(), file);
      std::ranges::sort(out);
      return out;
    };
    EXPECT_EQ(attributes_of(path("B") + row), attributes_of(path("A") + row)) << row;
  }
  // Rows with the same attributes are stored once; a directory without extra attributes has none.
  OperatorData same = a;
  for (auto& row : same.fftmatvec_attributes)
    row = common;
  write_operator(path("same.h5"), same);
  EXPECT_EQ(read_operator(path("same.h5")).fftmatvec_attributes, same.fftmatvec_attributes);
  const auto groups_in = [](const std::string& file) {
    const h5::Handle f = h5::open_file(file);
    return h5::link_names(h5::open_group(f.get(), "fftmatvec_attributes", file).get(), file);
  };
  EXPECT_TRUE(groups_in(path("same.h5")).empty());
  EXPECT_EQ(groups_in(path("A.h5")),
            (std::vector<std::string>{"row_000000", "row_000001", "row_000002"}));
  write_operator(path("plain"), op);
  EXPECT_TRUE(read_operator(path("plain")).fftmatvec_attributes.empty());
}

TEST_F(OperatorFileTest, PartialReadsReturnTheRequestedBlock) {
  const Shape shape{5, 6, 4};
  const OperatorData general = make_operator(shape, false, true, 14);
  const OperatorData op = make_operator(shape, true, true, 15);
  write_operator(path("G.h5"), general);
  write_operator(path("F.h5"), op);
  write_operator(path("F.npy"), op);
  write_operator(path("F_dir"), op);
  const OperatorSlice slice{.rows = {1, 4}, .cols = {2, -1}};
  for (const std::string name : {"G.h5", "F.h5", "F.npy", "F_dir"}) {
    SCOPED_TRACE(name);
    const OperatorData& whole = name == "G.h5" ? general : op;
    const OperatorData part = read_operator(path(name), {.slice = slice, .allow_nonfinite = false});
    EXPECT_EQ(part.full_shape, shape);
    EXPECT_EQ(part.shape, (Shape{3, 4, 4}));
    EXPECT_EQ(part.row_begin, 1);
    EXPECT_EQ(part.col_begin, 2);
    expect_bits_equal(part.first_column, sub_block(whole.first_column, shape, 1, 4, 2, 6));
    if (name == "G.h5")
      expect_bits_equal(part.first_row, sub_block(whole.first_row, shape, 1, 4, 2, 6));
  }
  // float32 .npy kernels are read exactly too.
  std::vector<double> single(op.first_column.size());
  for (std::size_t k = 0; k < single.size(); ++k)
    single[k] = static_cast<float>(op.first_column[k]);
  const std::string f4 = path("F4.npy");
  {
    const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (5, 6, 4), }";
    std::string bytes = "\x93NUMPY\x01";
    bytes += '\0';
    const std::size_t length = header.size() + 1;
    bytes += static_cast<char>(length & 0xff);
    bytes += static_cast<char>(length >> 8);
    bytes += header + "\n";
    for (const double v : single) {
      const float f = static_cast<float>(v);
      bytes.append(reinterpret_cast<const char*>(&f), sizeof f);
    }
    shiftop::testing::write_bytes(f4, bytes);
  }
  expect_bits_equal(read_operator(f4, {.slice = slice, .allow_nonfinite = false}).first_column,
                    sub_block(single, shape, 1, 4, 2, 6));
}

// Values outside the slice are never read: NaN there is not seen, and block-row files of other
// rows may be missing altogether.
TEST_F(OperatorFileTest, PartialReadsTouchOnlyTheSlice) {
  const Shape shape{4, 5, 3};
  OperatorData op = make_operator(shape, true, true, 16);
  op.first_column[(0 * 5 + 0) * 3 + 1] = std::nan("");  // row 0, block 0: outside the slice
  op.first_column[(2 * 5 + 4) * 3 + 2] = std::nan("");  // row 2, block 4: outside the slice
  write_operator(path("F.h5"), op);
  write_operator(path("F_dir"), op);
  write_operator(path("F.npy"), op);
  fs::remove(path("F_dir/binary/adj/vec_000000.h5"));
  fs::remove(path("F_dir/binary/adj/vec_000003.h5"));
  const OperatorSlice slice{.rows = {1, 3}, .cols = {1, 4}};
  for (const std::string name : {"F.h5", "F_dir", "F.npy"}) {
    SCOPED_TRACE(name);
    const OperatorData part = read_operator(path(name), {.slice = slice, .allow_nonfinite = false});
    expect_bits_equal(part.first_column, sub_block(op.first_column, shape, 1, 3, 1, 4));
  }
  expect_refused(path("F_dir"), "vec_000000.h5: missing: expected block row 0 of Nd = 4",
                 {.slice = {.rows = {0, 2}, .cols = {}}, .allow_nonfinite = false});
  expect_refused(path("F.h5"), "NaN at (row 2, parameter block 4, time 2)",
                 {.slice = {.rows = {2, 3}, .cols = {}}, .allow_nonfinite = false});
}

TEST_F(OperatorFileTest, SliceOutsideTheOperatorIsRefused) {
  write_operator(path("F.h5"), make_operator(kShape, true, true, 17));
  expect_refused(path("F.h5"), "rows range [2, 5) is empty or outside the operator's 3 rows",
                 {.slice = {.rows = {2, 5}, .cols = {}}, .allow_nonfinite = false});
  expect_refused(path("F.h5"), "parameter blocks range [3, 3)",
                 {.slice = {.rows = {}, .cols = {3, 3}}, .allow_nonfinite = false});
  expect_refused(path("F.h5"), "rows range [-1, -1)",
                 {.slice = {.rows = {-1, -1}, .cols = {}}, .allow_nonfinite = false});
}

// An FFTMatvec directory and vector written by shiftop give the matvec of the original kernels.
TEST_F(OperatorFileTest, FFTMatvecFilesGiveTheSameMatvec) {
  const Shape shape{3, 7, 9};
  const OperatorData op = make_operator(shape, true, true, 18);
  write_operator(path("F_dir"), op);
  const std::vector<double> m =
      tricky_values(static_cast<std::size_t>(shape.nm * shape.nt), 19, true);
  write_vector(path("m.h5"),
               {.blocks = shape.nm, .nt = shape.nt, .values = m, .space = VectorSpace::Parameter},
               VectorFormat::FFTMatvec);
  const OperatorData a = read_operator(path("F_dir"));
  const VectorData x = read_vector(path("m.h5"));
  btt::Plan original = btt::Plan::create(op.first_column, shape);
  btt::Plan from_files = btt::Plan::create(a.first_column, a.shape);
  for (const btt::Op which : {btt::Op::F, btt::Op::FadjF}) {
    std::vector<double> want(static_cast<std::size_t>(output_blocks(which, shape) * shape.nt));
    std::vector<double> got(want.size());
    original.apply(which, m, want);
    from_files.apply(which, x.values, got);
    expect_bits_equal(got, want);
  }
}

TEST_F(OperatorFileTest, InspectReadsMetadataOnly) {
  const OperatorData op = make_operator(kShape, true, true, 20);
  write_operator(path("F.h5"), op);
  write_operator(path("F_dir"), op);
  write_operator(path("F.npy"), op);
  fs::remove(path("F_dir/binary/adj/vec_000001.h5"));
  for (const std::string name : {"F.h5", "F_dir", "F.npy"}) {
    const OperatorInfo info = inspect_operator(path(name));
    EXPECT_EQ(info.shape, kShape);
    EXPECT_EQ(info.stored_bytes, 8 * kShape.kernel_size());
  }
  // Details keep their types (info --json prints numbers and booleans as such).
  const auto value_of = [](const OperatorInfo& info, std::string_view key) {
    const auto found = std::ranges::find(info.details, key, &Detail::key);
    return found == info.details.end() ? Detail::Value(std::string("absent")) : found->value;
  };
  const OperatorInfo dir = inspect_operator(path("F_dir"));
  EXPECT_EQ(dir.format, OperatorFormat::FFTMatvec);
  EXPECT_EQ(value_of(dir, "first_missing_block_row"),
            Detail::Value(std::string("binary/adj/vec_000001.h5")));
  EXPECT_EQ(value_of(dir, "p2q"), Detail::Value(false));
  EXPECT_EQ(value_of(dir, "checksum"), Detail::Value(std::int64_t{0}));
  write_operator(path("G_dir"), op);
  EXPECT_EQ(value_of(inspect_operator(path("G_dir")), "first_missing_block_row"),
            Detail::Value(nullptr));
  EXPECT_EQ(value_of(inspect_operator(path("F.h5")), "format_version"),
            Detail::Value(std::int64_t{1}));
}

TEST_F(OperatorFileTest, ToleratesFloatAttributesAndExtraAttributes) {
  const OperatorData op = make_operator(kShape, true, true, 21);
  auto rows = rows_of(op);
  for (auto& row : rows) {
    row.attributes = {{"reindex", 1.0},
                      {"n_param", 4.0},
                      {"param_steps", 5.0},
                      {"solver", std::string("MFEM")},
                      {"tolerance", 1e-12}};
  }
  shiftop::testing::write_fftmatvec_dir(path("A"), meta(kShape), "adj/vec_", rows);
  expect_bits_equal(read_operator(path("A")).first_column, op.first_column);
  shiftop::testing::write_h5(path("F.h5"),
                             {{.name = "kernels", .dims = {3, 4, 5}, .values = op.first_column}},
                             {{"nd", 3.0},
                              {"nm", std::int64_t{4}},
                              {"nt", std::string("5")},
                              {"comment", std::string("x")}});
  expect_bits_equal(read_operator(path("F.h5")).first_column, op.first_column);
}

// FFTMatvec's own test data has eight-line meta_adj files (no checksum line) and its readers take
// any non-zero reindex as true: such directories read as FFTMatvec reads them.
TEST_F(OperatorFileTest, ReadsDirectoriesAsFFTMatvecReadsThem) {
  const OperatorData op = make_operator(kShape, true, true, 27);
  auto rows = rows_of(op);
  shiftop::testing::write_fftmatvec_dir(path("eight"), meta(kShape, "1\n0\n1\n"), "adj/vec_", rows);
  expect_bits_equal(read_operator(path("eight")).first_column, op.first_column);
  EXPECT_EQ(inspect_operator(path("eight")).shape, kShape);
  for (auto& row : rows)
    row.attributes[0].second = std::int64_t{2};
  shiftop::testing::write_fftmatvec_dir(path("truthy"), meta(kShape, "7\n1\n-1\n0\nnotes\n"),
                                        "adj/vec_", rows);
  const OperatorData truthy = read_operator(path("truthy"));
  expect_bits_equal(truthy.first_column, op.first_column);
  // FFTMatvec never reads past line 9, however long the rest; nine lines must be short.
  shiftop::testing::write_fftmatvec_dir(
      path("long_tail"), meta(kShape, "1\n0\n1\n0\n") + std::string(10000, '#') + "\n", "adj/vec_",
      rows_of(op));
  expect_bits_equal(read_operator(path("long_tail")).first_column, op.first_column);
  shiftop::testing::write_fftmatvec_dir(path("long_line"),
                                        std::string(5000, ' ') + meta(kShape, "1\n0\n1\n"),
                                        "adj/vec_", rows_of(op));
  expect_refused(path("long_line"), "the first nine lines are longer than 4096 bytes: expected");
  // FFTMatvec takes lines 4 and 5 as they are: a file with Windows line ends is refused.
  shiftop::testing::write_fftmatvec_dir(
      path("crlf"), "3\r\n4\r\n5\r\nadj/vec_\r\n.h5\r\n1\r\n0\r\n1\r\n", "adj/vec_", rows_of(op));
  expect_refused(path("crlf"),
                 "line 4: expected the file-name prefix of the block rows (e.g. adj/vec_), found "
                 "'adj/vec_' and a carriage return (Windows line ends");
}

TEST_F(OperatorFileTest, RefusesBadShiftopFiles) {
  const OperatorData op = make_operator(kShape, true, true, 22);
  const std::vector<double>& k = op.first_column;
  using shiftop::testing::write_h5;
  write_h5(path("vector_file.h5"), {{.name = "vector", .dims = {4, 5}, .values = k}});
  expect_refused(path("vector_file.h5"),
                 "no dataset 'kernels': expected shiftop's operator file with dataset 'kernels' of "
                 "shape (Nd, Nm, Nt); it has vector (a shiftop vector file)");
  write_h5(path("empty.h5"), {});
  expect_refused(path("empty.h5"), "no dataset 'kernels'");
  write_h5(path("rank2.h5"), {{.name = "kernels", .dims = {12, 5}, .values = k}});
  expect_refused(path("rank2.h5"),
                 "dataset 'kernels': has rank 2 (shape (12, 5)): expected rank 3, shape (Nd, Nm, "
                 "Nt)");
  write_h5(path("f32.h5"),
           {{.name = "kernels", .dims = {3, 4, 5}, .values = k, .file_type = H5T_IEEE_F32LE}});
  expect_refused(path("f32.h5"), "dataset 'kernels': stores float32 values: expected float64");
  write_h5(path("int.h5"),
           {{.name = "kernels", .dims = {3, 4, 5}, .values = k, .file_type = H5T_STD_I32LE}});
  expect_refused(path("int.h5"), "stores int32 values: expected float64");
  write_h5(path("empty_dim.h5"), {{.name = "kernels", .dims = {3, 0, 5}, .values = {}}});
  expect_refused(path("empty_dim.h5"), "has an empty dimension");
  write_h5(path("sizes.h5"), {{.name = "kernels", .dims = {3, 4, 5}, .values = k}},
           {{"nd", std::int64_t{3}}, {"nm", std::int64_t{9}}});
  expect_refused(path("sizes.h5"),
                 "attribute 'nm' = 9 disagrees with dataset 'kernels' of shape (3, 4, 5): expected "
                 "4");
  write_h5(path("bad_size.h5"), {{.name = "kernels", .dims = {3, 4, 5}, .values = k}},
           {{"nt", 5.5}});
  expect_refused(path("bad_size.h5"), "attribute 'nt': expected a non-negative integer count");
  write_h5(path("tri.h5"),
           {{.name = "kernels", .dims = {3, 4, 5}, .values = k},
            {.name = "first_row", .dims = {3, 4, 5}, .values = k}},
           {{"triangular", std::int64_t{1}}});
  expect_refused(path("tri.h5"), "attribute 'triangular' is 1 but dataset 'first_row' is present");
  write_h5(path("general.h5"), {{.name = "kernels", .dims = {3, 4, 5}, .values = k}},
           {{"triangular", std::int64_t{0}}});
  expect_refused(path("general.h5"),
                 "attribute 'triangular' is 0 but dataset 'first_row' is absent");
  write_h5(path("row_shape.h5"), {{.name = "kernels", .dims = {3, 4, 5}, .values = k},
                                  {.name = "first_row", .dims = {3, 5, 4}, .values = k}});
  expect_refused(
      path("row_shape.h5"),
      "dataset 'first_row': has shape (3, 5, 4): expected the shape of 'kernels', (3, 4, "
      "5)");
  std::vector<double> row = k;
  row[5] += 1;  // lag 0 of (row 0, parameter block 1)
  write_h5(path("lag0.h5"), {{.name = "kernels", .dims = {3, 4, 5}, .values = k},
                             {.name = "first_row", .dims = {3, 4, 5}, .values = row}});
  expect_refused(path("lag0.h5"),
                 "first_row and first block column disagree at lag 0, (row 0, parameter block 1)");
  // A later layout is refused, naming the version found and the one supported.
  write_h5(path("v99.h5"), {{.name = "kernels", .dims = {3, 4, 5}, .values = k}},
           {{"format_version", std::int64_t{99}}});
  expect_refused(path("v99.h5"),
                 "attribute 'format_version' is 99: expected 1, the only version of shiftop's "
                 "file layout this shiftop reads");
  EXPECT_TRUE(contains(error_of([&] { inspect_operator(path("v99.h5")); }), "is 99: expected 1"));
  write_h5(path("v_text.h5"), {{.name = "kernels", .dims = {3, 4, 5}, .values = k}},
           {{"format_version", std::string("1")}});
  expect_refused(path("v_text.h5"), "attribute 'format_version' is 1: expected 1");
  write_h5(path("group.h5"), {});
  {
    io::h5::Handle file(H5Fopen(path("group.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
    io::h5::create_group(file.get(), "kernels", "group.h5");
  }
  expect_refused(path("group.h5"), "'kernels' is not a dataset: expected a dataset");
}

TEST_F(OperatorFileTest, RefusesMissingTruncatedAndCorruptFiles) {
  expect_refused(path("absent.h5"), "no such file or directory: expected an operator");
  expect_refused(path("absent_dir/"),
                 "no such file or directory: expected an operator (shiftop .h5, .npy, or an "
                 "FFTMatvec directory)");
  fs::create_directories(path("not_fftmatvec"));
  expect_refused(path("not_fftmatvec"),
                 "no file binary/meta_adj: expected an FFTMatvec matrix directory");
  shiftop::testing::write_bytes(path("text.h5"), "Nd Nm Nt\n1 2 3\n");
  expect_refused(path("text.h5"), "not an HDF5 file (no HDF5 signature): expected an HDF5 file");
  const OperatorData op = make_operator(Shape{20, 30, 40}, true, true, 23);
  write_operator(path("F.h5"), op);
  shiftop::testing::write_truncated(path("F.h5"), path("truncated.h5"), 0.5);
  expect_refused(path("truncated.h5"), "the file is truncated or corrupt");
  shiftop::testing::write_truncated(path("F.h5"), path("header_only.h5"), 0.01);
  EXPECT_TRUE(contains(error_of([&] { read_operator(path("header_only.h5")); }), "header_only.h5"));
  shiftop::testing::write_corrupted(path("F.h5"), path("corrupt.h5"), '\x5a');
  expect_refused(path("corrupt.h5"), "the file is truncated or corrupt");
  write_operator(path("F.npy"), op);
  shiftop::testing::write_truncated(path("F.npy"), path("truncated.npy"), 0.5);
  expect_refused(path("truncated.npy"), ".npy data section is truncated");
  write_npy(path("vector.npy"), std::vector<double>(20), std::vector<index_t>{4, 5});
  expect_refused(path("vector.npy"),
                 "has shape (4, 5): expected operator kernels, a 3-D array of shape (Nd, Nm, Nt)");
}

TEST_F(OperatorFileTest, RefusesNonfiniteValuesNamingTheirLocation) {
  OperatorData op = make_operator(kShape, true, true, 24);
  op.first_column[(2 * 4 + 1) * 5 + 3] = std::numeric_limits<double>::infinity();
  for (const std::string name : {"F.h5", "F.npy"}) {
    write_operator(path(name), op);
    // The option that accepts them is named in the caller's words, and only by a caller that
    // has one (regpath and spectrum have none).
    const std::string where =
        "infinity at (row 2, parameter block 1, time 3): expected finite "
        "kernel values";
    expect_refused(
        path(name), where + " (--allow-nonfinite accepts them)",
        {.slice = {}, .allow_nonfinite = false, .allow_nonfinite_name = "--allow-nonfinite"});
    const std::string neutral = error_of([&] { read_operator(path(name)); });
    EXPECT_TRUE(neutral.ends_with(where)) << neutral;
    EXPECT_TRUE(std::isinf(read_operator(path(name), kAllowNonfinite).first_column[48]));
  }
  write_operator(path("F_dir"), op);
  expect_refused(path("F_dir"),
                 "F_dir/binary/adj/vec_000002.h5: dataset 'vec': infinity at (row 2, parameter "
                 "block 1, time 3)");
  OperatorData general = make_operator(kShape, false, true, 25);
  general.first_row[7] = std::nan("");
  write_operator(path("G.h5"), general);
  expect_refused(path("G.h5"), "dataset 'first_row': NaN at (row 0, parameter block 1, time 2)");
}

TEST_F(OperatorFileTest, RefusesBadFFTMatvecDirectories) {
  const OperatorData op = make_operator(kShape, true, true, 26);
  const auto dir = [&](const std::string& name, const std::string& meta_text,
                       std::vector<DatasetSpec> rows) {
    shiftop::testing::write_fftmatvec_dir(path(name), meta_text, "adj/vec_", rows);
    return path(name);
  };
  auto rows = rows_of(op);
  const std::string row1 = "/binary/adj/vec_000001.h5";

  expect_refused(dir("meta_text", "3\nfour\n5\nadj/vec_\n.h5\n1\n0\n1\n0\n", rows),
                 "meta_adj: line 2: expected Nm, the number of parameter blocks (a positive "
                 "integer), found 'four'");
  expect_refused(
      dir("meta_short", "3\n4\n5\nadj/vec_\n.h5\n1\n0\n", rows),
      "line 8: expected the reverse-dof flag (an integer, 1), found the end of the file");
  expect_refused(dir("not_reindexed", meta(kShape, "0\n0\n1\n0\n"), rows),
                 "line 6: reindexed flag is 0: expected 1");
  expect_refused(dir("not_reversed", meta(kShape, "1\n0\n0\n0\n"), rows),
                 "line 8: reverse-dof flag is 0: expected 1");
  expect_refused(dir("meta_nm", meta(Shape{3, 6, 5}), rows),
                 "dataset 'vec': has shape (20): expected length Nm*Nt = 6*5 = 30 "
                 "(binary/meta_adj)");
  expect_refused(dir("missing_row", meta(Shape{4, 4, 5}), rows),
                 "vec_000003.h5: missing: expected block row 3 of Nd = 4 (binary/meta_adj lists "
                 "one file per block row)");

  auto edited = rows;
  edited[1].attributes[1].second = std::int64_t{5};
  expect_refused(dir("n_param", meta(kShape), edited),
                 "n_param" + row1 + ": dataset 'vec': attribute 'n_param' is 5: expected Nm = 4");
  edited = rows;
  edited[1].attributes[2].second = std::int64_t{4};
  expect_refused(dir("steps", meta(kShape), edited),
                 "attribute 'param_steps' is 4: expected Nt = 5 (binary/meta_adj)");
  edited = rows;
  edited[1].attributes.erase(edited[1].attributes.begin());
  expect_refused(
      dir("no_reindex", meta(kShape), edited),
      "no_reindex" + row1 +
          ": dataset 'vec': no attribute 'reindex': expected one (FFTMatvec requires it)");
  edited = rows;
  edited[1].attributes[0].second = std::int64_t{0};
  expect_refused(dir("reindex0", meta(kShape), edited),
                 "attribute 'reindex' is 0: expected 1 (a block row in SOTI order)");
  edited = rows;
  edited[1].file_type = H5T_IEEE_F32LE;
  expect_refused(dir("f32_row", meta(kShape), edited),
                 "f32_row" + row1 + ": dataset 'vec': stores float32 values: expected float64");
  edited = rows;
  edited[1].name = "data";
  expect_refused(dir("no_vec", meta(kShape), edited),
                 "no dataset 'vec': expected FFTMatvec block row 1");
  edited = rows;
  edited[2].dims = {4, 5};
  expect_refused(dir("rank2_row", meta(kShape), edited),
                 "dataset 'vec': has shape (4, 5): expected length Nm*Nt");
  expect_refused(dir("no_checksum", meta(kShape, "1\n0\n1\n31\n"), rows),
                 "no attribute 'checksum': expected 31 (binary/meta_adj has a checksum)");
  edited = rows;
  for (auto& row : edited)
    row.attributes.emplace_back("checksum", std::int64_t{30});
  expect_refused(dir("checksum", meta(kShape, "1\n0\n1\n31\n"), edited),
                 "attribute 'checksum' is 30: expected 31");
  dir("truncated_row", meta(kShape), rows);
  shiftop::testing::write_truncated(path("truncated_row") + row1, path("truncated_row") + row1,
                                    0.3);
  expect_refused(path("truncated_row"), "truncated_row" + row1);
}

// Sizes that cannot fit in memory are refused before anything is allocated, with the bytes
// needed and the bytes available.
TEST_F(OperatorFileTest, RefusesAbsurdSizesBeforeAllocating) {
  shiftop::testing::write_h5(
      path("huge.h5"), {{.name = "kernels", .dims = {100000, 100000, 100000}, .unwritten = true}});
  EXPECT_LT(fs::file_size(path("huge.h5")), 100000u);
  expect_refused(path("huge.h5"),
                 "huge.h5: reading the operator slice (Nd=100000, Nm=100000, Nt=100000) needs "
                 "8000000000000000 bytes");
  expect_refused(path("huge.h5"), "are available (MemAvailable in /proc/meminfo)");
  EXPECT_EQ(inspect_operator(path("huge.h5")).stored_bytes, 8000000000000000);
  shiftop::testing::write_fftmatvec_dir(path("huge_dir"),
                                        "200000\n200000\n100000\nv_\n.h5\n1\n0\n1\n0\n", "v_", {});
  expect_refused(path("huge_dir"), "needs 32000000000000000 bytes");
  shiftop::testing::write_fftmatvec_dir(
      path("absurd_dir"), "2000000000\n2000000000\n9\nv_\n.h5\n1\n0\n1\n0\n", "v_", {});
  expect_refused(path("absurd_dir"), "absurdly large");
}

TEST_F(OperatorFileTest, FailedWritesLeaveNothingBehind) {
  const OperatorData big = make_operator(Shape{8, 64, 256}, true, true, 27);
  write_operator(path("keep.h5"), make_operator(kShape, true, true, 28));
  fs::create_directories(path("other/binary"));
  shiftop::testing::write_text(path("other/notes.txt"), "mine");
  const std::vector<std::string> before = entries();
  for (const std::string name : {"keep.h5", "new.h5", "new_dir", "new.npy"}) {
    SCOPED_TRACE(name);
    std::string message;
    {
      const FileSizeLimit limit(1 << 16);
      message = error_of([&] { write_operator(path(name), big); });
    }
    EXPECT_TRUE(contains(message, path(name))) << message;
    EXPECT_EQ(entries(), before);
  }
  struct Refusal {
    std::string name;
    bool general;
    std::string words;
  };
  const std::vector<Refusal> refusals = {
      {"missing/F.h5", false, "directory '" + path("missing") + "' does not exist"},
      {"other", false, "already exists and is not a directory holding only 'binary/'"},
      {"G_dir", true, "an FFTMatvec directory holds a block lower-triangular operator only"},
      {"G.npy", true, "an .npy file holds the kernels of a block lower-triangular operator only"},
  };
  for (const Refusal& r : refusals) {
    SCOPED_TRACE(r.name);
    const OperatorData op = make_operator(kShape, !r.general, true, 29);
    const std::string message = error_of([&] { write_operator(path(r.name), op); });
    EXPECT_TRUE(contains(message, r.words)) << message;
    EXPECT_EQ(entries(), before);
  }
  OperatorData slice = read_operator(
      path("keep.h5"), {.slice = {.rows = {1, 2}, .cols = {}}, .allow_nonfinite = false});
  EXPECT_TRUE(
      contains(error_of([&] { write_operator(path("slice.h5"), slice); }), "cannot write a slice"));
  EXPECT_EQ(read_operator(path("keep.h5")).shape, kShape);
}

}  // namespace
}  // namespace shiftop::io
