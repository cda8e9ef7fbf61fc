// Typed dense matrix files (io::read_matrix<T>, io::write_matrix<T>): bit-exact round trips for
// every T and extension, the layout checked against the HDF5 C API and the .npy bytes, files
// written directly with the HDF5 C API (h5py's complex compound included), the conversions that
// are exact and the refusals of the others, and every bad input refused in one line naming the
// file, with a failed write leaving any previous file as it was.
#include "shiftop/io/matrix_file.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>

#include <bit>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "io/hdf5.hpp"
#include "support/io_fixtures.hpp"
#include "support/io_test_support.hpp"

namespace shiftop::io {
namespace {

using shiftop::testing::contains;
using shiftop::testing::DatasetSpec;
using shiftop::testing::error_of;
using shiftop::testing::FileSizeLimit;
using shiftop::testing::read_bytes;
using shiftop::testing::tricky_values;
using shiftop::testing::write_h5;
using shiftop::testing::write_truncated;

template <class T>
constexpr bool kComplex =
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

// The Element T is written as.
template <class T>
constexpr Element kElement = std::is_same_v<T, float>                 ? Element::Float32
                             : std::is_same_v<T, double>              ? Element::Float64
                             : std::is_same_v<T, std::complex<float>> ? Element::Complex64
                                                                      : Element::Complex128;

// rows x cols values of T from tricky_values (NaN payloads, infinities, -0, subnormals; rounded
// to float for the single-precision types), column-major.
template <class T>
Matrix<T> tricky_matrix(index_t rows, index_t cols, unsigned seed) {
  const auto n = static_cast<std::size_t>(rows * cols);
  const std::vector<double> v = tricky_values(2 * n, seed, false);
  Matrix<T> m{.rows = rows, .cols = cols, .data = std::vector<T>(n)};
  for (std::size_t k = 0; k < n; ++k) {
    if constexpr (kComplex<T>) {
      using R = typename T::value_type;
      m.data[k] = T(static_cast<R>(v[2 * k]), static_cast<R>(v[2 * k + 1]));
    } else {
      m.data[k] = static_cast<T>(v[k]);
    }
  }
  return m;
}

template <class T>
void expect_bits_equal(const std::vector<T>& a, const std::vector<T>& b) {
  ASSERT_EQ(a.size(), b.size());
  // Empty matrices (0 x n) have null data(), which memcmp must not be given even for 0 bytes.
  if (!a.empty()) {
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(T)), 0);
  }
}

const MatrixReadOptions kAllowNonfinite{.allow_nonfinite = true};

template <class T>
class MatrixFileRoundTrip : public shiftop::testing::TempDirTest {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(MatrixFileRoundTrip, Types);

// Every extension (either case) and shape, written and read back bit for bit.
TYPED_TEST(MatrixFileRoundTrip, EveryExtensionAndShapeBitExact) {
  using T = TypeParam;
  const std::pair<index_t, index_t> shapes[] = {{1, 1}, {5, 3}, {3, 7}, {1, 9}, {0, 4}, {4, 0}};
  unsigned seed = 1;
  for (const char* extension : {".npy", ".h5", ".hdf5", ".NPY", ".H5"}) {
    for (const auto& [rows, cols] : shapes) {
      const std::string file = this->path(fmt::format("a_{}x{}{}", rows, cols, extension));
      SCOPED_TRACE(file);
      const Matrix<T> written = tricky_matrix<T>(rows, cols, ++seed);
      write_matrix(file, written);
      EXPECT_EQ(matrix_element(file), kElement<T>);
      const Matrix<T> read = read_matrix<T>(file, kAllowNonfinite);
      EXPECT_EQ(read.rows, rows);
      EXPECT_EQ(read.cols, cols);
      expect_bits_equal(read.data, written.data);
    }
  }
}

// A 1-D array of values, and the explicit format that a name without an extension needs.
TYPED_TEST(MatrixFileRoundTrip, ValuesAndAnExplicitFormat) {
  using T = TypeParam;
  const Matrix<T> m = tricky_matrix<T>(7, 1, 3);
  write_values<T>(this->path("s.npy"), m.data);
  EXPECT_TRUE(contains(read_bytes(this->path("s.npy")), "'fortran_order': False, 'shape': (7,)"));
  write_matrix(this->path("plain"), m, {.format = MatrixFormat::Hdf5});
  // No extension to read it by: the HDF5 C API sees the dataset.
  const h5::Handle file = h5::open_file(this->path("plain"));
  const h5::Handle dataset = h5::open_dataset(file.get(), "matrix", "plain");
  EXPECT_EQ(h5::dataset_dims(dataset.get(), "plain"), (std::vector<index_t>{7, 1}));
}

class MatrixFileTest : public shiftop::testing::TempDirTest {
 protected:
  void expect_refused(const std::string& message, const std::string& file,
                      const std::string& words) const {
    SCOPED_TRACE(words);
    EXPECT_TRUE(contains(message, file)) << message;
    EXPECT_TRUE(contains(message, words)) << message;
    EXPECT_TRUE(contains(message, "expected")) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
};

// The layout as others see it: .npy in Fortran order with shape (rows, cols); an HDF5 dataset
// "matrix" of dimensions (rows, cols) in C order, read back with the HDF5 C API.
TEST_F(MatrixFileTest, LayoutAsOtherReadersSeeIt) {
  const Matrix<double> m{.rows = 2, .cols = 3, .data = {1, 2, 3, 4, 5, 6}};  // (r, c) = r + 2c + 1
  write_matrix(path("a.npy"), m);
  const std::string bytes = read_bytes(path("a.npy"));
  EXPECT_TRUE(contains(bytes, "'fortran_order': True, 'shape': (2, 3)")) << bytes.substr(0, 128);
  write_matrix(path("a.h5"), m);
  const h5::Handle file = h5::open_file(path("a.h5"));
  const h5::Handle dataset = h5::open_dataset(file.get(), "matrix", "a.h5");
  EXPECT_EQ(h5::dataset_dims(dataset.get(), "a.h5"), (std::vector<index_t>{2, 3}));
  std::vector<double> c_order(6);
  ASSERT_GE(
      H5Dread(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, c_order.data()), 0);
  EXPECT_EQ(c_order, (std::vector<double>{1, 3, 5, 2, 4, 6}));
}

// Files written with the HDF5 C API: float32 and float64 datasets (either byte order), a named
// dataset among several, and h5py's complex compound {r, i} (as h5py writes complex128).
TEST_F(MatrixFileTest, ReadsHdf5WrittenDirectly) {
  write_h5(path("f.h5"),
           {{.name = "a", .dims = {2, 2}, .values = {1, 2, 3, 4}, .file_type = H5T_IEEE_F32BE},
            {.name = "b", .dims = {1, 3}, .values = {0.5, -1, 7}}});
  const Matrix<double> b = read_matrix<double>(path("f.h5"), {.dataset = "b"});
  EXPECT_EQ(b.rows, 1);
  EXPECT_EQ(b.data, (std::vector<double>{0.5, -1, 7}));
  const Matrix<float> a = read_matrix<float>(path("f.h5"), {.dataset = "a"});
  EXPECT_EQ(a.data, (std::vector<float>{1, 3, 2, 4}));
  EXPECT_EQ(matrix_element(path("f.h5"), {.dataset = "a"}), Element::Float32);
  expect_refused(error_of([&] { read_matrix<double>(path("f.h5"), {.dataset_option = "--pick"}); }),
                 path("f.h5"),
                 "expected exactly one 2-D dataset at the root, found 2 (a, b): "
                 "name it with --pick");

  // h5py's complex128: a compound of little-endian doubles "r" and "i".
  const std::string file = path("c.h5");
  {
    h5::Handle f = h5::create_file(file);
    const h5::Handle type(H5Tcreate(H5T_COMPOUND, 16), H5Tclose);
    H5Tinsert(type.get(), "r", 0, H5T_IEEE_F64LE);
    H5Tinsert(type.get(), "i", 8, H5T_IEEE_F64LE);
    const hsize_t dims[] = {2, 1};
    const h5::Handle space(H5Screate_simple(2, dims, nullptr), H5Sclose);
    const h5::Handle dataset(
        H5Dcreate2(f.get(), "z", type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
        H5Dclose);
    const double values[] = {1.5, -2.0, 0.25, 3.0};  // (1.5 - 2i), (0.25 + 3i)
    ASSERT_GE(H5Dwrite(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, values), 0);
  }
  const Matrix<std::complex<double>> z = read_matrix<std::complex<double>>(file);
  EXPECT_EQ(z.data, (std::vector<std::complex<double>>{{1.5, -2.0}, {0.25, 3.0}}));
  expect_refused(error_of([&] { read_matrix<double>(file); }), file,
                 "holds complex128 values, which have no real reading as float64");
  write_h5(path("i.h5"),
           {{.name = "n", .dims = {2, 2}, .values = {1, 2, 3, 4}, .file_type = H5T_STD_I32LE}});
  expect_refused(error_of([&] { read_matrix<double>(path("i.h5")); }), path("i.h5"),
                 "stores int32 values");
}

// Exact conversions are made (float32 into double, real into complex with zero imaginary parts,
// complex64 into complex128); rounding ones and complex into real are refused.
TEST_F(MatrixFileTest, ConversionsExactOrRefused) {
  const Matrix<float> f{.rows = 2, .cols = 1, .data = {0.1f, -3.0f}};
  write_matrix(path("f.npy"), f);
  const Matrix<double> d = read_matrix<double>(path("f.npy"));
  EXPECT_EQ(d.data, (std::vector<double>{double(0.1f), -3.0}));
  const Matrix<std::complex<float>> cf = read_matrix<std::complex<float>>(path("f.npy"));
  EXPECT_EQ(cf.data, (std::vector<std::complex<float>>{{0.1f, 0.0f}, {-3.0f, 0.0f}}));
  const Matrix<std::complex<double>> cd = read_matrix<std::complex<double>>(path("f.npy"));
  EXPECT_EQ(cd.data, (std::vector<std::complex<double>>{{double(0.1f), 0.0}, {-3.0, 0.0}}));

  write_matrix(path("d.h5"), Matrix<double>{.rows = 1, .cols = 1, .data = {0.1}});
  expect_refused(error_of([&] { read_matrix<float>(path("d.h5")); }), path("d.h5"),
                 "holds float64 values, which float32 would round: expected float32");
  write_matrix(path("c.npy"),
               Matrix<std::complex<double>>{.rows = 1, .cols = 1, .data = {{1.0, 2.0}}});
  expect_refused(error_of([&] { read_matrix<std::complex<float>>(path("c.npy")); }), path("c.npy"),
                 "holds complex128 values, which complex64 would round");
  expect_refused(error_of([&] { read_matrix<double>(path("c.npy"), {.option = "--f"}); }),
                 "--f " + path("c.npy"), "holds complex128 values, which have no real reading");
  const Matrix<std::complex<double>> widened = read_matrix<std::complex<double>>(path("c.npy"));
  EXPECT_EQ(widened.data.front(), std::complex<double>(1.0, 2.0));
}

// NaN and infinity are refused at their (row, column), the first in column-major order, behind
// the caller's option; allow_nonfinite reads them.
TEST_F(MatrixFileTest, NonfiniteEntriesRefusedWhereTheyAre) {
  for (const char* name : {"n.npy", "n.h5"}) {
    Matrix<std::complex<double>> m{.rows = 3, .cols = 4, .data = {}};
    m.data.assign(12, {1.0, 1.0});
    m.data[2 + 3 * 3] = {std::numeric_limits<double>::quiet_NaN(), 0.0};  // (2, 3)
    m.data[1 + 3 * 2] = {0.0, std::numeric_limits<double>::infinity()};   // (1, 2), first
    write_matrix(path(name), m);
    expect_refused(
        error_of([&] { read_matrix<std::complex<double>>(path(name), {.option = "--input"}); }),
        "--input " + path(name), "infinity at (row 1, column 2): expected finite values");
    EXPECT_TRUE(std::isinf(
        read_matrix<std::complex<double>>(path(name), kAllowNonfinite).data[1 + 3 * 2].imag()));
  }
}

// Names without .npy, .h5 or .hdf5 are refused for reading and writing before any file is made.
TEST_F(MatrixFileTest, UnknownExtensionsRefused) {
  const Matrix<double> m{.rows = 1, .cols = 1, .data = {1.0}};
  for (const char* name : {"a.txt", "a", "a.npz"}) {
    SCOPED_TRACE(name);
    shiftop::testing::write_text(path(name), "not a matrix");
    expect_refused(error_of([&] { read_matrix<double>(path(name)); }), path(name),
                   "expected a matrix file named .npy, .h5 or .hdf5");
    expect_refused(error_of([&] { matrix_element(path(name)); }), path(name),
                   "expected a matrix file named .npy, .h5 or .hdf5");
    expect_refused(error_of([&] { write_matrix(path(name), m); }), path(name),
                   "expected a matrix file named .npy, .h5 or .hdf5");
    EXPECT_EQ(read_bytes(path(name)), "not a matrix");
  }
}

// Truncated and missing files, other ranks and dtypes, a dataset named for an .npy file.
TEST_F(MatrixFileTest, BadFilesRefused) {
  const Matrix<double> m = tricky_matrix<double>(40, 30, 7);
  write_matrix(path("a.npy"), m);
  write_matrix(path("a.h5"), m);
  write_truncated(path("a.npy"), path("t.npy"), 0.5);
  write_truncated(path("a.h5"), path("t.h5"), 0.5);
  expect_refused(error_of([&] { read_matrix<double>(path("t.npy"), kAllowNonfinite); }),
                 path("t.npy"), ".npy data section is truncated");
  EXPECT_TRUE(contains(error_of([&] { read_matrix<double>(path("t.h5"), kAllowNonfinite); }),
                       path("t.h5")));
  EXPECT_TRUE(contains(error_of([&] { read_matrix<double>(path("none.h5")); }), path("none.h5")));
  EXPECT_TRUE(contains(error_of([&] { read_matrix<double>(path("none.npy")); }), path("none.npy")));
  write_values<double>(path("v.npy"), std::vector<double>{1.0, 2.0});
  expect_refused(error_of([&] { read_matrix<double>(path("v.npy")); }), path("v.npy"),
                 "expected a 2-D array (a matrix), got shape (2,)");
  write_values<double>(path("v.h5"), std::vector<double>{1.0, 2.0});
  expect_refused(error_of([&] { read_matrix<double>(path("v.h5"), {.dataset = "matrix"}); }),
                 path("v.h5"), "expected a 2-D dataset (a matrix), got 1 dimensions (2)");
  expect_refused(error_of([&] {
                   read_matrix<double>(path("a.npy"),
                                       {.dataset = "x", .dataset_option = "--dataset"});
                 }),
                 path("a.npy"), "--dataset x: ");
}

// A write that fails (the file size limit, as a full disk) or is refused leaves the previous
// file at the path as it was and no temporary beside it.
TEST_F(MatrixFileTest, FailedWriteKeepsThePreviousFile) {
  const Matrix<double> big = tricky_matrix<double>(300, 300, 9);
  for (const char* name : {"old.npy", "old.h5"}) {
    SCOPED_TRACE(name);
    shiftop::testing::write_text(path(name), "previous");
    const std::vector<std::string> before = entries();
    std::string message;
    {
      const FileSizeLimit limit(1 << 16);
      message = error_of([&] { write_matrix(path(name), big); });
    }
    EXPECT_TRUE(contains(message, path(name))) << message;
    EXPECT_EQ(read_bytes(path(name)), "previous");
    EXPECT_EQ(entries(), before);
    message = error_of([&] {
      write_matrix<double>(path(name), 2, 2, std::vector<double>{1.0, 2.0, 3.0});
    });
    expect_refused(message, path(name), "it has 4 elements but 3 values were given");
    EXPECT_EQ(read_bytes(path(name)), "previous");
  }
}

}  // namespace
}  // namespace shiftop::io
