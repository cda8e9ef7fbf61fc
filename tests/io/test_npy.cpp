// Tests of the .npy reader and writer: bit-exact round trips, files written by NumPy itself,
// refusal of malformed or unsupported files, and the write-to-temporary-then-rename guarantee.
#include "shiftop/io/npy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <bit>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shiftop/core/error.hpp"

namespace shiftop::io {
namespace {

namespace fs = std::filesystem;
using namespace std::string_view_literals;

// Each test gets its own empty directory, removed afterwards.
class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / fmt::format("shiftop_npy_{}_{}", ::getpid(), test->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(std::string_view file) const { return (dir_ / file).string(); }

  fs::path dir_;
};

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string dict(std::string_view descr, std::string_view fortran_order, std::string_view shape) {
  return fmt::format("{{'descr': '{}', 'fortran_order': {}, 'shape': {}, }}", descr, fortran_order,
                     shape);
}

// An .npy file of the given format version holding `dict_text` (not padded) and `data`.
std::string npy_bytes(std::string_view dict_text, std::string_view data = "", int major = 1) {
  const std::size_t length = dict_text.size() + 1;
  std::string out("\x93NUMPY");
  out += static_cast<char>(major);
  out += '\0';
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i)
    out += static_cast<char>(length >> (8 * i));
  return out.append(dict_text).append("\n").append(data);
}

template <typename T>
std::string raw_bytes(const std::vector<T>& values) {
  return {reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)};
}

// Values that a lossy reader or writer would change: signed zeros, denormals, NaN payloads.
std::vector<double> tricky_values(std::size_t n) {
  const std::vector<double> special = {
      -0.0,
      std::numeric_limits<double>::denorm_min(),
      -3 * std::numeric_limits<double>::denorm_min(),
      std::bit_cast<double>(std::uint64_t{0x7ff0000000000123}),  // signalling NaN
      std::bit_cast<double>(std::uint64_t{0xfff80000deadbeef}),  // negative quiet NaN
      std::numeric_limits<double>::infinity(),
      std::numeric_limits<double>::lowest(),
      0.1,
  };
  std::vector<double> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    values[i] = i < special.size() ? special[i] : static_cast<double>(i) / 3.0;
  }
  return values;
}

void expect_bits_equal(const std::vector<double>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    EXPECT_EQ(std::bit_cast<std::uint64_t>(actual[i]), std::bit_cast<std::uint64_t>(expected[i]))
        << "element " << i;
  }
}

// The message of the shiftop::Error thrown by `action`, or a note that none was thrown.
template <typename Action>
std::string error_of(Action action) {
  try {
    action();
  } catch (const Error& error) {
    return error.what();
  }
  return "(no shiftop::Error thrown)";
}

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

TEST_F(NpyTest, RoundTripIsBitExact) {
  const std::vector<std::vector<index_t>> shapes = {{},        {1}, {7},      {3, 4},
                                                    {2, 3, 5}, {0}, {4, 0, 2}};
  for (const auto& shape : shapes) {
    SCOPED_TRACE(fmt::format("shape ({})", fmt::join(shape, ", ")));
    index_t count = 1;
    for (const index_t n : shape)
      count *= n;
    const std::vector<double> values = tricky_values(static_cast<std::size_t>(count));
    const std::string file = path("round_trip.npy");
    write_npy(file, values, shape);

    const NpyHeader header = read_npy_header(file);
    EXPECT_EQ(header.dtype, DType::Float64);
    EXPECT_EQ(header.shape, shape);
    EXPECT_EQ(header.count(), count);
    EXPECT_EQ(header.data_offset % 64, 0u);
    EXPECT_EQ(fs::file_size(file), header.data_offset + 8 * values.size());

    const NpyArray array = read_npy(file);
    EXPECT_EQ(array.shape, shape);
    expect_bits_equal(array.data, values);
  }
}

TEST_F(NpyTest, WritesTheHeaderNumPyWrites) {
  write_npy(path("a.npy"), std::vector<double>(12, 1.0), std::vector<index_t>{3, 4});
  const std::string bytes = read_file(path("a.npy"));
  const std::string header = bytes.substr(0, bytes.size() - 12 * 8);
  EXPECT_EQ(header.size() % 64, 0u);
  EXPECT_EQ(header.substr(0, 8), std::string("\x93NUMPY\x01") + '\0');
  const std::string text = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }";
  EXPECT_EQ(header.substr(10), text + std::string(header.size() - 11 - text.size(), ' ') + '\n');
}

TEST_F(NpyTest, WritesVersion2OnlyWhenTheHeaderNeedsIt) {
  // 30000 dimensions of size 1 need a header longer than version 1.0's 65535 bytes.
  const std::vector<index_t> shape(30000, 1);
  write_npy(path("long.npy"), std::vector<double>{42.0}, shape);
  EXPECT_EQ(read_file(path("long.npy"))[6], '\x02');
  const NpyArray array = read_npy(path("long.npy"));
  EXPECT_EQ(array.shape, shape);
  EXPECT_EQ(array.data, std::vector<double>{42.0});
  EXPECT_EQ(read_npy_header(path("long.npy")).data_offset % 64, 0u);
}

TEST_F(NpyTest, ReadsFloat32Exactly) {
  const std::vector<float> values = {0.1f,
                                     -0.0f,
                                     std::numeric_limits<float>::denorm_min(),
                                     std::numeric_limits<float>::max(),
                                     std::numeric_limits<float>::infinity(),
                                     1.0f / 3.0f};
  write_file(path("f4.npy"), npy_bytes(dict("<f4", "False", "(2, 3)"), raw_bytes(values)));
  const NpyArray array = read_npy(path("f4.npy"));
  EXPECT_EQ(array.shape, (std::vector<index_t>{2, 3}));
  expect_bits_equal(array.data, std::vector<double>(values.begin(), values.end()));
}

TEST(NpyHeaderTest, AcceptsWhatPythonLiteralSyntaxAllows) {
  struct Case {
    std::string text;
    DType dtype;
    std::vector<index_t> shape;
  };
  const std::vector<Case> cases = {
      {"{'shape': (2, 3, 4), 'fortran_order': False, 'descr': '<f4'}", DType::Float32, {2, 3, 4}},
      {"{ \"descr\" : \"=f8\" ,'fortran_order':False,'shape':(5,)   ,  }   ", DType::Float64, {5}},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (), }", DType::Float64, {}},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': ( ), }", DType::Float64, {}},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (0,), }", DType::Float64, {0}},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,3,), }", DType::Float64, {2, 3}},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (3L, 4L), }", DType::Float64, {3, 4}},
      {"\t{'descr':'=f4',\n'fortran_order':False,'shape':( 7 , )}\r", DType::Float32, {7}},
  };
  for (const Case& c : cases) {
    for (const int major : {1, 2, 3}) {
      SCOPED_TRACE(fmt::format("version {}: {}", major, c.text));
      const std::string bytes = npy_bytes(c.text, "data after the header", major);
      const NpyHeader header = parse_npy_header(bytes, "case.npy");
      EXPECT_EQ(header.dtype, c.dtype);
      EXPECT_EQ(header.shape, c.shape);
      EXPECT_EQ(header.data_offset, (major == 1 ? 10 : 12) + c.text.size() + 1);
    }
  }
}

// Every refusal: a shiftop::Error naming the file and saying what was expected.
// read_npy reads a whole array in either order (circ matvec's vectors, as svd reads matrices);
// the header, which readers of parts seek by, must stay C order.
TEST_F(NpyTest, ReadsWholeFortranOrderArraysInCOrder) {
  for (const std::vector<index_t>& shape :
       {std::vector<index_t>{3}, std::vector<index_t>{2, 3}, std::vector<index_t>{2, 3, 4}}) {
    std::vector<double> fortran;  // value i*100 + j*10 + k at (i, j, k), first index fastest
    std::vector<double> c_order;  // the same values, last index fastest
    const index_t n0 = shape[0], n1 = shape.size() > 1 ? shape[1] : 1,
                  n2 = shape.size() > 2 ? shape[2] : 1;
    for (index_t k = 0; k < n2; ++k)
      for (index_t j = 0; j < n1; ++j)
        for (index_t i = 0; i < n0; ++i)
          fortran.push_back(static_cast<double>(i * 100 + j * 10 + k));
    for (index_t i = 0; i < n0; ++i)
      for (index_t j = 0; j < n1; ++j)
        for (index_t k = 0; k < n2; ++k)
          c_order.push_back(static_cast<double>(i * 100 + j * 10 + k));
    const std::string tuple =
        shape.size() == 1 ? fmt::format("({},)", n0) : fmt::format("({})", fmt::join(shape, ", "));
    const std::string bytes = npy_bytes(dict("<f8", "True", tuple), raw_bytes(fortran));
    write_file(path("fortran.npy"), bytes);
    const NpyArray array = read_npy(path("fortran.npy"));
    EXPECT_EQ(array.shape, shape);
    EXPECT_EQ(array.data, c_order);
    EXPECT_TRUE(contains(error_of([&] { read_npy_header(path("fortran.npy")); }),
                         "expected a C-order array"));
    EXPECT_TRUE(contains(error_of([&] { parse_npy_header(bytes, "fortran.npy"); }),
                         "expected a C-order array"));
  }
}

TEST_F(NpyTest, RefusesMalformedAndUnsupportedFiles) {
  struct Case {
    std::string file;
    std::string bytes;
    std::string words;       // a fragment of the expected message
    bool header_ok = false;  // only the data section is wrong
  };
  const std::string f8 = dict("<f8", "False", "(3,)");
  const std::string magic_v1 = std::string("\x93NUMPY\x01") + '\0';
  const std::vector<Case> cases = {
      {"empty.npy", "", "magic string"},
      {"text.npy", "hello, world", "magic string"},
      {"bad_magic.npy", "\x93NUMPX" + npy_bytes(f8).substr(6), "magic string"},
      {"version_4.npy", "\x93NUMPY\x04" + npy_bytes(f8).substr(7), "expected 1.0, 2.0 or 3.0"},
      {"version_1_1.npy", "\x93NUMPY\x01\x01" + npy_bytes(f8).substr(8), "expected 1.0"},
      {"no_version.npy", "\x93NUMPY\x01", "expected a format version"},
      {"no_length.npy", magic_v1 + "\x05", "expected a 2-byte header length"},
      {"past_end.npy", magic_v1 + "\xe8\x03{'descr': '<f8'", "runs past the end"},
      {"past_end_v2.npy", std::string("\x93NUMPY\x02") + '\0' + "\xff\xff\xff\xff{",
       "runs past the end"},
      {"big_endian.npy", npy_bytes(dict(">f8", "False", "(3,)")), "'>f8' is not supported"},
      {"complex.npy", npy_bytes(dict("<c16", "False", "(3,)")), "expected little-endian"},
      {"integer.npy", npy_bytes(dict("<i8", "False", "(3,)")), "expected little-endian"},
      {"object.npy", npy_bytes(dict("|O", "False", "(3,)")), "expected little-endian"},
      {"half.npy", npy_bytes(dict("<f2", "False", "(3,)")), "expected little-endian"},
      {"no_byte_order.npy", npy_bytes(dict("|f8", "False", "(3,)")), "expected little-endian"},
      {"structured.npy",
       npy_bytes("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (3,), }"),
       "expected a dtype string"},
      {"fortran_int.npy", npy_bytes(dict("<f8", "0", "(3,)")), "expected True or False"},
      {"negative.npy", npy_bytes(dict("<f8", "False", "(-1,)")), "expected non-negative"},
      {"huge_dimension.npy", npy_bytes(dict("<f8", "False", "(99999999999999999999,)")),
       "too large: expected at most"},
      {"overflow.npy", npy_bytes(dict("<f8", "False", "(4294967296, 4294967296)")),
       "too large: expected at most"},
      {"not_a_tuple.npy", npy_bytes(dict("<f8", "False", "(5)")), "as in '(5,)'"},
      {"list_shape.npy", npy_bytes(dict("<f8", "False", "[3]")), "expected a tuple"},
      {"text_dimension.npy", npy_bytes(dict("<f8", "False", "(3, 'a')")),
       "expected an integer dimension"},
      {"missing_key.npy", npy_bytes("{'descr': '<f8', 'shape': (3,)}"), "no key 'fortran_order'"},
      {"unknown_key.npy",
       npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), "
                 "'extra': 1}"),
       "unknown key 'extra'"},
      {"duplicate_key.npy", npy_bytes("{'descr': '<f8', 'descr': '<f8', 'shape': (3,)}"),
       "'descr' twice"},
      {"unterminated.npy", npy_bytes("{'descr': '<f8"), "expected the closing quote"},
      {"escape.npy", npy_bytes("{'descr': '<f\\x38'}"), "expected a string without escapes"},
      {"no_dict.npy", npy_bytes("descr"), "expected '{'"},
      {"no_comma.npy", npy_bytes("{'descr': '<f8' 'shape': (3,)}"), "expected ',' or '}'"},
      {"trailing_text.npy", npy_bytes(f8 + " x"), "expected only space padding"},
      {"short_data.npy", npy_bytes(dict("<f8", "False", "(10,)"), std::string(40, '\0')),
       "expected 80 bytes", true},
      {"short_f4_data.npy", npy_bytes(dict("<f4", "False", "(2,)"), std::string(4, '\0')),
       "expected 8 bytes", true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    const std::string file = path(c.file);
    write_file(file, c.bytes);
    const std::string message = error_of([&] { read_npy(file); });
    EXPECT_TRUE(contains(message, file)) << message;
    EXPECT_TRUE(contains(message, c.words)) << message;
    EXPECT_TRUE(contains(message, "expected")) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    if (c.header_ok) {
      EXPECT_NO_THROW(parse_npy_header(c.bytes, c.file));
    } else {
      EXPECT_TRUE(contains(error_of([&] { read_npy_header(file); }), c.words));
      EXPECT_TRUE(contains(error_of([&] { parse_npy_header(c.bytes, c.file); }), c.words));
    }
  }
  const std::string short_data = error_of([&] { read_npy(path("short_data.npy")); });
  EXPECT_TRUE(contains(short_data, "found 40")) << short_data;
}

TEST_F(NpyTest, MissingFileIsAnError) {
  const std::string message = error_of([&] { read_npy(path("absent.npy")); });
  EXPECT_TRUE(contains(message, path("absent.npy"))) << message;
  EXPECT_TRUE(contains(message, "cannot open")) << message;
}

// A fuzzing smoke test: truncated and corrupted headers may only ever raise shiftop::Error.
TEST(NpyHeaderTest, CorruptHeadersOnlyRaiseShiftopErrors) {
  const auto parse = [](std::string_view bytes) {
    try {
      const NpyHeader header = parse_npy_header(bytes, "fuzz.npy");
      EXPECT_LE(header.data_offset, bytes.size());
      EXPECT_GE(header.count(), 0);
    } catch (const Error&) {
    }
  };
  std::mt19937 random(12345);
  for (const int major : {1, 2}) {
    const std::string valid = npy_bytes(dict("<f8", "False", "(2, 3)"), "", major);
    for (std::size_t n = 0; n <= valid.size(); ++n)
      parse(std::string_view(valid).substr(0, n));
    std::uniform_int_distribution<std::size_t> position(0, valid.size() - 1);
    constexpr std::string_view alphabet = "{}()[],:' \"-0123456789LTFx\n\x00\xff"sv;
    std::uniform_int_distribution<std::size_t> letter(0, alphabet.size() - 1);
    for (int trial = 0; trial < 20000; ++trial) {
      std::string bytes = valid;
      for (int edit = 0; edit < 1 + trial % 4; ++edit)
        bytes[position(random)] = alphabet[letter(random)];
      parse(bytes);
    }
  }
}

// Found by tests/fuzz/fuzz_npy_header: count() multiplied the dimensions in order, overflowing
// before it reached the 0 (undefined behaviour, which the sanitizer build turns into a failure).
TEST(NpyHeaderTest, ZeroDimensionGivesCountZeroWhateverTheOthers) {
  const std::string bytes = npy_bytes(dict("<f8", "False", "(2147, 7699676992949626, 0)"), "", 1);
  EXPECT_EQ(parse_npy_header(bytes, "empty.npy").count(), 0);
}

TEST_F(NpyTest, WriteIntoMissingDirectoryThrowsAndLeavesNothing) {
  const std::string file = path("missing/out.npy");
  const std::string message =
      error_of([&] { write_npy(file, std::vector<double>{1.0}, std::vector<index_t>{1}); });
  EXPECT_TRUE(contains(message, file)) << message;
  EXPECT_TRUE(contains(message, "does not exist")) << message;
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(NpyTest, FailedWriteKeepsThePreviousFile) {
  const std::string file = path("keep.npy");
  write_npy(file, std::vector<double>{1.0, 2.0}, std::vector<index_t>{2});
  const std::string message = error_of([&] {
    write_npy(file, std::vector<double>{1.0, 2.0}, std::vector<index_t>{3});
  });
  EXPECT_TRUE(contains(message, "expected the same number")) << message;
  EXPECT_TRUE(contains(error_of([&] {
                         write_npy(file, std::vector<double>{}, std::vector<index_t>{-1, 0});
                       }),
                       "expected non-negative dimensions"));
  EXPECT_EQ(read_npy(file).data, (std::vector<double>{1.0, 2.0}));

  write_npy(file, std::vector<double>{3.0}, std::vector<index_t>{1});
  EXPECT_EQ(read_npy(file).data, std::vector<double>{3.0});
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

// Lowers the file size limit so that writes fail as on a full disk (EFBIG instead of ENOSPC).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    previous_handler_ = std::signal(SIGXFSZ, SIG_IGN);  // fail the write, not the process
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, previous_handler_);
  }

 private:
  rlimit saved_{};
  void (*previous_handler_)(int) = nullptr;
};

TEST_F(NpyTest, ShortWriteThrowsAndRemovesTheTemporaryFile) {
  const std::string file = path("big.npy");
  const std::vector<double> data(1 << 20, 1.0);
  std::string message;
  {
    const FileSizeLimit limit(1 << 16);
    message = error_of([&] { write_npy(file, data, std::vector<index_t>{1 << 20}); });
  }
  EXPECT_TRUE(contains(message, file)) << message;
  EXPECT_TRUE(contains(message, "write failed")) << message;
  EXPECT_TRUE(fs::is_empty(dir_));
}

// NumPy interoperability: files written by NumPy are read, files written here load in NumPy.
class NumPyTest : public NpyTest {
 protected:
  void SetUp() override {
    NpyTest::SetUp();
    if (std::system("python3 -c 'import numpy' >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "python3 with numpy is not available";
    }
  }

  // Runs a Python script with `d` bound to the test directory; returns its exit status.
  int run_python(std::string_view body) const {
    write_file(path("script.py"),
               fmt::format("import sys\nimport numpy as np\nd = '{}'\n{}", dir_.string(), body));
    return std::system(fmt::format("python3 '{}'", path("script.py")).c_str());
  }
};

TEST_F(NumPyTest, ReadsFilesWrittenByNumPy) {
  ASSERT_EQ(run_python(R"(
a = np.arange(12, dtype=np.float64).reshape(3, 4) / 7 - 0.5
np.save(d + '/f64.npy', a)
np.save(d + '/f32.npy', (np.arange(6, dtype=np.float32) / np.float32(3)).reshape(2, 3))
for v in (2, 3):
    with open(d + f'/v{v}.npy', 'wb') as f:
        np.lib.format.write_array(f, a, version=(v, 0))
np.save(d + '/scalar.npy', np.float64(-2.5))
np.save(d + '/empty.npy', np.zeros((0, 3)))
np.save(d + '/big_endian.npy', a.astype('>f8'))
np.save(d + '/int.npy', np.arange(4, dtype='<i8'))
np.save(d + '/complex.npy', a.astype('<c16'))
np.save(d + '/fortran.npy', np.asfortranarray(a))
np.save(d + '/object.npy', np.array([1, 'x'], dtype=object), allow_pickle=True)
)"),
            0);

  std::vector<double> a(12);
  for (std::size_t i = 0; i < a.size(); ++i)
    a[i] = static_cast<double>(i) / 7 - 0.5;
  // numpy's Fortran-order file holds the same array: read in C order (only its header, which
  // readers of parts use, is refused).
  for (const char* file : {"f64.npy", "v2.npy", "v3.npy", "fortran.npy"}) {
    SCOPED_TRACE(file);
    const NpyArray array = read_npy(path(file));
    EXPECT_EQ(array.shape, (std::vector<index_t>{3, 4}));
    expect_bits_equal(array.data, a);
  }
  EXPECT_TRUE(contains(error_of([&] { read_npy_header(path("fortran.npy")); }), "fortran_order"));
  EXPECT_EQ(read_file(path("v2.npy"))[6], '\x02');
  EXPECT_EQ(read_file(path("v3.npy"))[6], '\x03');

  const NpyArray f32 = read_npy(path("f32.npy"));
  EXPECT_EQ(read_npy_header(path("f32.npy")).dtype, DType::Float32);
  EXPECT_EQ(f32.shape, (std::vector<index_t>{2, 3}));
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(f32.data[i], static_cast<double>(static_cast<float>(i) / 3.0f)) << i;
  }

  const NpyArray scalar = read_npy(path("scalar.npy"));
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(scalar.data, std::vector<double>{-2.5});
  const NpyArray empty = read_npy(path("empty.npy"));
  EXPECT_EQ(empty.shape, (std::vector<index_t>{0, 3}));
  EXPECT_TRUE(empty.data.empty());

  for (const auto& [file, words] :
       std::vector<std::pair<std::string, std::string>>{{"big_endian.npy", "'>f8'"},
                                                        {"int.npy", "'<i8'"},
                                                        {"complex.npy", "'<c16'"},
                                                        {"object.npy", "'|O'"}}) {
    const std::string refused = path(file);
    const std::string message = error_of([&] { read_npy(refused); });
    EXPECT_TRUE(contains(message, refused)) << message;
    EXPECT_TRUE(contains(message, words)) << message;
    EXPECT_TRUE(contains(message, "expected")) << message;
  }
}

TEST_F(NumPyTest, NumPyReadsFilesWrittenHere) {
  std::vector<double> values(30);
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<double>(i) * 0.25 - 3;
  write_npy(path("cube.npy"), values, std::vector<index_t>{2, 3, 5});
  write_npy(path("zero.npy"), std::vector<double>{-0.0}, std::vector<index_t>{});
  write_npy(path("nan.npy"), std::vector<double>{std::bit_cast<double>(0x7ff8000000abcdefULL)},
            std::vector<index_t>{1});
  EXPECT_EQ(run_python(R"(
a = np.load(d + '/cube.npy')
expected = np.arange(30, dtype=np.float64).reshape(2, 3, 5) * 0.25 - 3
ok = a.dtype == np.float64 and a.shape == (2, 3, 5) and a.flags.c_contiguous
ok = ok and np.array_equal(a, expected)
z = np.load(d + '/zero.npy')
ok = ok and z.shape == () and z == 0 and np.signbit(z)
n = np.load(d + '/nan.npy')
ok = ok and n.shape == (1,) and n.view(np.uint64)[0] == 0x7ff8000000abcdef
sys.exit(0 if ok else 3)
)"),
            0);
}

}  // namespace
}  // namespace shiftop::io
