// The block-circulant operator file: round trips in both value types and both index widths
// (files written by the HDF5 C API directly, not only by write_circulant), the header-only
// inspection, and every refusal with its one-line message.
#include "shiftop/io/circulant_file.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "support/expect_error.hpp"
#include "support/io_fixtures.hpp"
#include "support/io_test_support.hpp"

namespace shiftop::io {
namespace {

using shiftop::testing::DatasetSpec;
using shiftop::testing::expect_error;
using shiftop::testing::write_h5;

// A random first block row: k = 3, mb = 5 rows (row 2 empty), nb = 4, repeated columns allowed.
template <class T>
circ::FirstBlockRow<T> random_row(unsigned seed) {
  circ::FirstBlockRow<T> a;
  a.shape = {.k = 3, .mb = 5, .nb = 4};
  std::mt19937_64 engine(seed);
  std::uniform_int_distribution<std::int64_t> column(0, a.shape.cols() - 1);
  std::normal_distribution<double> value;
  a.indptr.push_back(0);
  for (index_t r = 0; r < a.shape.mb; ++r) {
    const int count = r == 2 ? 0 : static_cast<int>(r + 3);
    for (int e = 0; e < count; ++e) {
      a.indices.push_back(column(engine));
      a.data.push_back(static_cast<T>(value(engine)));
    }
    a.indptr.push_back(static_cast<std::int64_t>(a.indices.size()));
  }
  return a;
}

std::vector<double> as_doubles(const auto& values) {
  return {values.begin(), values.end()};
}

// The datasets of `a`, with the given file types.
std::vector<DatasetSpec> datasets(const circ::FirstBlockRow<double>& a, hid_t index_type,
                                  hid_t value_type) {
  return {{.name = "indptr",
           .dims = {static_cast<index_t>(a.indptr.size())},
           .values = as_doubles(a.indptr),
           .file_type = index_type},
          {.name = "indices",
           .dims = {a.nnz()},
           .values = as_doubles(a.indices),
           .file_type = index_type},
          {.name = "data", .dims = {a.nnz()}, .values = a.data, .file_type = value_type}};
}

testing::Attributes sizes(const circ::Shape& s) {
  return {{"mB", s.mb}, {"nB", s.nb}, {"k", s.k}};
}

class CirculantFile : public testing::TempDirTest {};

TEST_F(CirculantFile, RoundTripsBothPrecisions) {
  const circ::FirstBlockRow<double> a = random_row<double>(1);
  write_circulant(path("a64.h5"), a);
  const circ::FirstBlockRow<double> back = read_circulant<double>(path("a64.h5"));
  EXPECT_EQ(back.shape, a.shape);
  EXPECT_EQ(back.indptr, a.indptr);
  EXPECT_EQ(back.indices, a.indices);
  EXPECT_EQ(back.data, a.data);
  const CirculantInfo info = inspect_circulant(path("a64.h5"));
  EXPECT_EQ(info.shape, a.shape);
  EXPECT_EQ(info.nnz, a.nnz());
  EXPECT_EQ(info.value_type, "float64");
  EXPECT_EQ(info.index_bits, 32);
  EXPECT_EQ(info.stored_bytes, 4 * (a.shape.mb + 1) + 4 * a.nnz() + 8 * a.nnz());

  const circ::FirstBlockRow<float> f = random_row<float>(2);
  write_circulant(path("a32.h5"), f);
  EXPECT_EQ(inspect_circulant(path("a32.h5")).value_type, "float32");
  const circ::FirstBlockRow<float> fback = read_circulant<float>(path("a32.h5"));
  EXPECT_EQ(fback.indices, f.indices);
  EXPECT_EQ(fback.data, f.data);
  // float32 read as double: exact.
  const circ::FirstBlockRow<double> widened = read_circulant<double>(path("a32.h5"));
  for (std::size_t e = 0; e < f.data.size(); ++e)
    EXPECT_EQ(widened.data[e], static_cast<double>(f.data[e]));
  expect_error([&] { (void)read_circulant<float>(path("a64.h5")); },
               "stores float64 values: expected float32");
}

TEST_F(CirculantFile, RoundTripsAnOperatorWithoutNonzeros) {
  circ::FirstBlockRow<double> a;
  a.shape = {.k = 2, .mb = 3, .nb = 1};
  a.indptr.assign(4, 0);
  write_circulant(path("zero.h5"), a);
  const circ::FirstBlockRow<double> back = read_circulant<double>(path("zero.h5"));
  EXPECT_EQ(back.shape, a.shape);
  EXPECT_EQ(back.indptr, a.indptr);
  EXPECT_TRUE(back.indices.empty());
  EXPECT_EQ(inspect_circulant(path("zero.h5")).nnz, 0);
}

TEST_F(CirculantFile, ReadsInt32AndInt64IndicesWrittenByOthers) {
  const circ::FirstBlockRow<double> a = random_row<double>(3);
  write_h5(path("i64.h5"), datasets(a, H5T_STD_I64LE, H5T_IEEE_F64BE), sizes(a.shape));
  write_h5(path("i32.h5"), datasets(a, H5T_STD_I32BE, H5T_IEEE_F32LE), sizes(a.shape));
  EXPECT_EQ(inspect_circulant(path("i64.h5")).index_bits, 64);
  EXPECT_EQ(inspect_circulant(path("i32.h5")).index_bits, 32);
  const circ::FirstBlockRow<double> wide = read_circulant<double>(path("i64.h5"));
  EXPECT_EQ(wide.indptr, a.indptr);
  EXPECT_EQ(wide.indices, a.indices);
  EXPECT_EQ(wide.data, a.data);
  const circ::FirstBlockRow<float> narrow = read_circulant<float>(path("i32.h5"));
  EXPECT_EQ(narrow.indices, a.indices);
  for (std::size_t e = 0; e < a.data.size(); ++e)
    EXPECT_EQ(narrow.data[e], static_cast<float>(a.data[e]));
}

TEST_F(CirculantFile, RefusesAnExistingOutputUnlessAsked) {
  const circ::FirstBlockRow<double> a = random_row<double>(4);
  write_circulant(path("a.h5"), a);
  const circ::FirstBlockRow<double> other = random_row<double>(5);
  // The refusal names what replaces it in the caller's words only: no C++ name to Python users.
  try {
    write_circulant(path("a.h5"), other);
    ADD_FAILURE() << "an existing file was replaced";
  } catch (const shiftop::Error& e) {
    EXPECT_TRUE(std::string(e.what()).ends_with("a.h5: already exists: expected a new file"))
        << e.what();
  }
  expect_error([&] { write_circulant(path("a.h5"), other, {.overwrite_name = "overwrite=True"}); },
               "a.h5: already exists: expected a new file (overwrite=True replaces it)");
  EXPECT_EQ(read_circulant<double>(path("a.h5")).data, a.data);  // untouched
  write_circulant(path("a.h5"), other, {.overwrite = true});
  EXPECT_EQ(read_circulant<double>(path("a.h5")).data, other.data);
  EXPECT_EQ(entries(), (std::vector<std::string>{"a.h5"}));  // no temporary left
}

TEST_F(CirculantFile, RefusesToWriteAnInvalidOperator) {
  circ::FirstBlockRow<double> a = random_row<double>(6);
  a.data[1] = std::numeric_limits<double>::quiet_NaN();
  expect_error([&] { write_circulant(path("bad.h5"), a); }, "is not finite");
  EXPECT_TRUE(entries().empty());
}

TEST_F(CirculantFile, RefusesBrokenFiles) {
  const circ::FirstBlockRow<double> a = random_row<double>(7);
  const auto refuses = [&](std::vector<DatasetSpec> sets, testing::Attributes attributes,
                           const std::string& expected) {
    write_h5(path("bad.h5"), sets, attributes);
    expect_error([&] { (void)read_circulant<double>(path("bad.h5")); }, expected);
  };
  const auto good = [&] { return datasets(a, H5T_STD_I32LE, H5T_IEEE_F64LE); };

  std::vector<DatasetSpec> sets = good();
  sets.erase(sets.begin() + 1);
  refuses(sets, sizes(a.shape), "no dataset 'indices'");
  testing::Attributes attributes = sizes(a.shape);
  attributes.erase(attributes.begin());
  refuses(good(), attributes, "no attribute 'mB'");
  attributes = sizes(a.shape);
  attributes[2].second = std::int64_t{0};
  refuses(good(), attributes, "every size must be at least 1");
  attributes = sizes(a.shape);
  attributes[0].second = std::int64_t{6};
  refuses(good(), attributes, "expected mB+1 = 7");
  sets = good();
  sets[2].values.pop_back();
  sets[2].dims[0] -= 1;
  refuses(sets, sizes(a.shape), "one column per value");
  sets = good();
  sets[1].values[3] = static_cast<double>(a.shape.cols());
  refuses(sets, sizes(a.shape), "is outside [0, k*nb) = [0, 12)");
  sets = good();
  sets[1].values[0] = -1;
  refuses(sets, sizes(a.shape), "column index -1");
  sets = good();
  std::swap(sets[0].values[1], sets[0].values[2]);
  refuses(sets, sizes(a.shape), "indptr decreases at row 1");
  sets = good();
  sets[0].values.back() -= 1;
  refuses(sets, sizes(a.shape), "expected indptr[mb]");
  sets = good();
  sets[2].values[4] = std::nan("");
  refuses(sets, sizes(a.shape), "is not finite");
  sets = good();
  sets[2].file_type = H5T_STD_I32LE;
  refuses(sets, sizes(a.shape), "dataset 'data': stores int32: expected float32 or float64");
  sets = good();
  sets[1].file_type = H5T_IEEE_F64LE;
  refuses(sets, sizes(a.shape), "stores float64: expected int32 or int64");
  sets = good();
  sets[1].dims = {1, a.nnz()};
  refuses(sets, sizes(a.shape), "expected a 1-D array");
  // Absurd sizes are refused before anything is allocated.
  sets = good();
  const index_t huge = index_t{1} << 38;  // 4 TiB of int64 and float64
  sets[1] = {.name = "indices", .dims = {huge}, .file_type = H5T_STD_I64LE, .unwritten = true};
  sets[2] = {.name = "data", .dims = {huge}, .file_type = H5T_IEEE_F64LE, .unwritten = true};
  refuses(sets, sizes(a.shape), "are available");

  testing::write_text(path("text.h5"), "not an HDF5 file\n");
  expect_error([&] { (void)read_circulant<double>(path("text.h5")); }, "text.h5");
  expect_error([&] { (void)inspect_circulant(path("missing.h5")); }, "missing.h5");
}

}  // namespace
}  // namespace shiftop::io
