#include "shiftop/io/npy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <system_error>
#include <utility>

#include "io/regular_input.hpp"
#include "io/text.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/io/atomic_output.hpp"
#include "shiftop/io/file_kind.hpp"

namespace shiftop::io {
namespace {

// Elements are copied to and from the file as raw bytes.
static_assert(std::endian::native == std::endian::little,
              "the .npy reader and writer assume a little-endian host");
static_assert(std::numeric_limits<double>::is_iec559 && std::numeric_limits<float>::is_iec559);

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr std::size_t kAlignment = 64;
// Largest element count whose float64 byte size still fits in index_t.
constexpr index_t kMaxCount = std::numeric_limits<index_t>::max() / 8;
// Float32 data is converted through a buffer of this many elements.
constexpr std::size_t kChunk = std::size_t{1} << 16;

std::size_t itemsize(DType dtype) {
  return dtype == DType::Float64 ? 8 : 4;
}

std::string_view dtype_name(DType dtype) {
  return dtype == DType::Float64 ? "float64" : "float32";
}

// Python's repr of a shape tuple: (), (5,), (2, 3).
std::string format_shape(std::span<const index_t> shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

// Untrusted header text shown in an error message: at most this many bytes (io/text.hpp).
constexpr std::size_t kShownHeaderBytes = 24;

std::string last_error() {
  return std::generic_category().message(errno);
}

// The product of `shape`, or nothing if a dimension is negative or the product exceeds kMaxCount.
std::optional<index_t> element_count(std::span<const index_t> shape) {
  if (std::ranges::any_of(shape, [](index_t n) { return n < 0; })) return std::nullopt;
  if (std::ranges::find(shape, 0) != shape.end()) return 0;
  index_t count = 1;
  for (const index_t n : shape) {
    if (n > kMaxCount / count) return std::nullopt;
    count *= n;
  }
  return count;
}

// The header dictionary's three values; shape checked to fit kMaxCount elements.
struct HeaderDict {
  std::string_view descr;
  bool fortran_order = false;
  std::vector<index_t> shape;
};

DType parse_dtype(std::string_view descr, std::string_view name) {
  // '=' is native byte order, which is little-endian (see the static_assert above).
  if (descr == "<f8" || descr == "=f8") return DType::Float64;
  if (descr == "<f4" || descr == "=f4") return DType::Float32;
  fail(
      "{}: dtype '{}' is not supported: expected little-endian float64 ('<f8') or float32 "
      "('<f4'); convert with numpy.save(path, a.astype('<f8'))",
      name, printable(descr, kShownHeaderBytes));
}

// Where the header dictionary starts and ends, from the fixed-size part of the header.
struct Preamble {
  std::size_t dict_begin;
  std::size_t data_offset;
};

Preamble parse_preamble(std::string_view bytes, std::string_view name) {
  require(bytes.substr(0, kMagic.size()) == kMagic,
          "{}: not an .npy file: expected it to start with the magic string \\x93NUMPY", name);
  require(bytes.size() >= 8,
          "{}: truncated .npy header: expected a format version after the magic string", name);
  const int major = static_cast<unsigned char>(bytes[6]);
  const int minor = static_cast<unsigned char>(bytes[7]);
  require(major >= 1 && major <= 3 && minor == 0,
          "{}: .npy format version {}.{} is not supported: expected 1.0, 2.0 or 3.0", name, major,
          minor);
  // Version 1.0 stores the header length in 2 little-endian bytes, later versions in 4.
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  const std::size_t dict_begin = 8 + length_bytes;
  require(bytes.size() >= dict_begin,
          "{}: truncated .npy header: expected a {}-byte header length after the version", name,
          length_bytes);
  std::size_t length = 0;
  for (std::size_t i = length_bytes; i-- > 0;) {
    length = length << 8 | static_cast<unsigned char>(bytes[8 + i]);
  }
  return {dict_begin, dict_begin + length};
}

void require_header_fits(const Preamble& preamble, std::uintmax_t file_size,
                         std::string_view name) {
  require(preamble.data_offset <= file_size,
          "{}: .npy header length {} runs past the end of the file ({} bytes): expected a "
          "complete header",
          name, preamble.data_offset - preamble.dict_begin, file_size);
}

// Parser for the Python dict literal of an .npy header, as NumPy writes it:
//   {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }
// plus what Python's literal syntax allows around it (any key order, either quote, any spacing,
// an optional trailing comma). Every access is bounds-checked: the input is untrusted.
class DictParser {
 public:
  DictParser(std::string_view text, std::string_view name) : text_(text), name_(name) {}

  HeaderDict parse() {
    std::optional<std::string_view> descr;
    std::optional<bool> fortran_order;
    std::optional<std::vector<index_t>> shape;
    skip_space();
    expect('{', "'{' opening the header dictionary");
    skip_space();
    while (!at('}')) {
      const std::string_view key = parse_string("a quoted key");
      skip_space();
      expect(':', "':' after the key");
      skip_space();
      if (key == "descr") {
        require_once(descr.has_value(), key);
        descr = parse_string("a dtype string such as '<f8'");
      } else if (key == "fortran_order") {
        require_once(fortran_order.has_value(), key);
        fortran_order = parse_bool();
      } else if (key == "shape") {
        require_once(shape.has_value(), key);
        shape = parse_shape();
      } else {
        fail(
            "{}: .npy header has unknown key '{}': expected only 'descr', 'fortran_order' and "
            "'shape'",
            name_, printable(key, kShownHeaderBytes));
      }
      skip_space();
      if (!at(',')) break;
      ++pos_;
      skip_space();
    }
    expect('}', "',' or '}' after a value");
    skip_space();
    if (pos_ != text_.size()) malformed("only space padding after the dictionary");

    require_present(descr.has_value(), "descr");
    require_present(fortran_order.has_value(), "fortran_order");
    require_present(shape.has_value(), "shape");
    require(element_count(*shape).has_value(),
            "{}: .npy shape {} is too large: expected at most {} elements", name_,
            format_shape(*shape), kMaxCount);
    return {*descr, *fortran_order, std::move(*shape)};
  }

 private:
  [[noreturn]] void malformed(std::string_view expected) const {
    const std::string found =
        pos_ < text_.size() ? fmt::format("'{}'", printable(text_.substr(pos_), kShownHeaderBytes))
                            : std::string("the end of the header");
    fail("{}: malformed .npy header: expected {} at byte {} of the dictionary, found {}", name_,
         expected, pos_, found);
  }

  void require_once(bool seen, std::string_view key) const {
    require(!seen, "{}: .npy header has key '{}' twice: expected it once", name_, key);
  }

  void require_present(bool seen, std::string_view key) const {
    require(seen, "{}: .npy header has no key '{}': expected 'descr', 'fortran_order' and 'shape'",
            name_, key);
  }

  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  bool at_digit() const { return pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9'; }

  void skip_space() {
    while (at(' ') || at('\t') || at('\n') || at('\r'))
      ++pos_;
  }

  void expect(char c, std::string_view what) {
    if (!at(c)) malformed(what);
    ++pos_;
  }

  // A quoted string without escapes (none of the accepted keys or values needs one).
  std::string_view parse_string(std::string_view what) {
    if (!at('\'') && !at('"')) malformed(what);
    const char quote = text_[pos_++];
    const std::size_t begin = pos_;
    while (pos_ < text_.size() && !at(quote) && !at('\n')) {
      if (at('\\')) malformed("a string without escapes");
      ++pos_;
    }
    if (!at(quote)) malformed("the closing quote of a string");
    return text_.substr(begin, pos_++ - begin);
  }

  bool parse_bool() {
    const std::string_view rest = text_.substr(pos_);
    if (rest.starts_with("True")) {
      pos_ += 4;
      return true;
    }
    if (rest.starts_with("False")) {
      pos_ += 5;
      return false;
    }
    malformed("True or False for 'fortran_order'");
  }

  std::vector<index_t> parse_shape() {
    expect('(', "a tuple for 'shape'");
    skip_space();
    std::vector<index_t> shape;
    while (!at(')')) {
      shape.push_back(parse_dimension());
      skip_space();
      if (!at(',')) {
        // Python reads "(5)" as the integer 5, not as a tuple.
        if (shape.size() == 1) malformed("',' after the only dimension, as in '(5,)'");
        break;
      }
      ++pos_;
      skip_space();
    }
    expect(')', "',' or ')' in the shape tuple");
    return shape;
  }

  index_t parse_dimension() {
    require(!at('-'), "{}: .npy shape has a negative dimension: expected non-negative integers",
            name_);
    if (!at_digit()) malformed("an integer dimension");
    index_t value = 0;
    while (at_digit()) {
      const int digit = text_[pos_] - '0';
      require(value <= (kMaxCount - digit) / 10,
              "{}: .npy shape has a dimension that is too large: expected at most {} elements",
              name_, kMaxCount);
      value = value * 10 + digit;
      ++pos_;
    }
    // NumPy under Python 2 wrote long integers with an 'L' suffix, as in (3L, 4L).
    if (at('L')) ++pos_;
    return value;
  }

  std::string_view text_;
  std::string_view name_;
  std::size_t pos_ = 0;
};

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

struct OpenFile {
  File file;
  std::uintmax_t size;
};

OpenFile open_for_reading(const std::string& path) {
  require_regular_input(path, "a .npy file");
  File file(std::fopen(path.c_str(), "rb"));
  if (file == nullptr) fail("{}: cannot open for reading: {}", path, last_error());
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  require(!error, "{}: cannot read the file size: {}", path, error.message());
  return {std::move(file), size};
}

void read_exact(std::FILE* file, void* buffer, std::size_t bytes, const std::string& path) {
  if (bytes == 0) return;  // `buffer` may be null then, which fread does not allow
  if (std::fread(buffer, 1, bytes, file) != bytes) {
    fail("{}: read failed: {}", path,
         std::ferror(file) ? last_error() : std::string("unexpected end of file"));
  }
}

void write_exact(std::FILE* file, const void* buffer, std::size_t bytes, const std::string& path) {
  if (bytes == 0) return;
  if (std::fwrite(buffer, 1, bytes, file) != bytes) {
    fail("{}: write failed (disk full?): {}", path, last_error());
  }
}

// Reads only as many bytes as the header occupies, after checking that against the file size.
std::string read_header_bytes(std::FILE* file, std::uintmax_t file_size, const std::string& path) {
  constexpr std::size_t kLongestPreamble = 12;
  std::string bytes(std::min<std::uintmax_t>(file_size, kLongestPreamble), '\0');
  read_exact(file, bytes.data(), bytes.size(), path);
  const Preamble preamble = parse_preamble(bytes, path);
  require_header_fits(preamble, file_size, path);
  bytes.resize(preamble.data_offset);
  std::rewind(file);
  read_exact(file, bytes.data(), bytes.size(), path);
  return bytes;
}

NpyHeader read_header(std::FILE* file, std::uintmax_t file_size, const std::string& path) {
  return parse_npy_header(read_header_bytes(file, file_size, path), path);
}

// The values of an array stored in Fortran order (first index fastest) in C order (last index
// fastest).
std::vector<double> fortran_to_c_order(const std::vector<double>& values,
                                       std::span<const index_t> shape) {
  const std::size_t rank = shape.size();
  if (rank < 2) return values;
  std::vector<std::size_t> c_stride(rank);
  std::size_t stride = 1;
  for (std::size_t d = rank; d-- > 0;) {
    c_stride[d] = stride;
    stride *= static_cast<std::size_t>(shape[d]);
  }
  std::vector<double> out(values.size());
  std::vector<index_t> at(rank, 0);  // the multi-index of values[k]
  for (const double value : values) {
    std::size_t c = 0;
    for (std::size_t d = 0; d < rank; ++d)
      c += static_cast<std::size_t>(at[d]) * c_stride[d];
    out[c] = value;
    for (std::size_t d = 0; d < rank && ++at[d] == shape[d]; ++d)
      at[d] = 0;
  }
  return out;
}

HeaderDict parse_dict(std::string_view bytes, std::string_view name) {
  const Preamble preamble = parse_preamble(bytes, name);
  require_header_fits(preamble, bytes.size(), name);
  return DictParser(bytes.substr(preamble.dict_begin, preamble.data_offset - preamble.dict_begin),
                    name)
      .parse();
}

// The matrix elements: NumPy's descr, the bytes of one real scalar, the scalars per element.
struct ElementLayout {
  std::string_view descr;
  std::size_t scalar_bytes;
  std::size_t scalars;
};

ElementLayout layout_of(Element element) {
  switch (element) {
    case Element::Float64:
      return {"<f8", 8, 1};
    case Element::Float32:
      return {"<f4", 4, 1};
    case Element::Complex128:
      return {"<c16", 8, 2};
    case Element::Complex64:
      return {"<c8", 4, 2};
  }
  fail("unknown .npy element type {}", static_cast<int>(element));
}

Element parse_element(std::string_view descr, std::string_view name) {
  // '=' is native byte order, which is little-endian (see the static_assert above).
  for (const Element e :
       {Element::Float64, Element::Float32, Element::Complex128, Element::Complex64}) {
    const std::string_view little = layout_of(e).descr;
    if (descr == little ||
        (descr.size() == little.size() && descr[0] == '=' && descr.substr(1) == little.substr(1)))
      return e;
  }
  fail(
      "{}: dtype '{}' is not supported: expected little-endian float64, float32, complex128 or "
      "complex64 ('<f8', '<f4', '<c16', '<c8')",
      name, printable(descr, kShownHeaderBytes));
}

// Magic string, version, header length and the dictionary padded with spaces and a final '\n' so
// that the data starts at a multiple of kAlignment bytes.
std::string encode_header(std::span<const index_t> shape, std::string_view descr,
                          bool fortran_order) {
  const std::string dict =
      fmt::format("{{'descr': '{}', 'fortran_order': {}, 'shape': {}, }}", descr,
                  fortran_order ? "True" : "False", format_shape(shape));
  const auto padded_length = [&](std::size_t length_bytes) {
    const std::size_t prefix = 8 + length_bytes;
    const std::size_t total = (prefix + dict.size() + 1 + kAlignment - 1) / kAlignment * kAlignment;
    return total - prefix;
  };
  // Version 1.0 has room for a 16-bit header length; longer headers need version 2.0.
  const std::size_t length_bytes = padded_length(2) > 0xffff ? 4 : 2;
  const std::size_t length = padded_length(length_bytes);
  std::string header(kMagic);
  header += static_cast<char>(length_bytes == 2 ? 1 : 2);
  header += '\0';
  for (std::size_t i = 0; i < length_bytes; ++i) {
    header += static_cast<char>(length >> (8 * i) & 0xff);
  }
  header += dict;
  header.append(length - dict.size() - 1, ' ');
  header += '\n';
  return header;
}

}  // namespace

index_t NpyHeader::count() const {
  // A zero dimension makes the count 0 even where the product of the others would overflow.
  if (std::ranges::find(shape, 0) != shape.end()) return 0;
  return std::accumulate(shape.begin(), shape.end(), index_t{1}, std::multiplies<>());
}

NpyHeader parse_npy_header(std::string_view bytes, std::string_view name) {
  HeaderDict dict = parse_dict(bytes, name);
  const DType dtype = parse_dtype(dict.descr, name);  // named before the order
  require(!dict.fortran_order,
          "{}: fortran_order=True is not supported: expected a C-order array; save "
          "numpy.ascontiguousarray(a) instead",
          name);
  return {.dtype = dtype,
          .shape = std::move(dict.shape),
          .data_offset = parse_preamble(bytes, name).data_offset};
}

NpyHeader read_npy_header(const std::string& path) {
  const OpenFile in = open_for_reading(path);
  return read_header(in.file.get(), in.size, path);
}

NpyArray read_npy(const std::string& path) {
  const OpenFile in = open_for_reading(path);
  const std::string bytes = read_header_bytes(in.file.get(), in.size, path);
  HeaderDict dict = parse_dict(bytes, path);
  NpyHeader header{.dtype = parse_dtype(dict.descr, path),
                   .shape = std::move(dict.shape),
                   .data_offset = bytes.size()};
  const auto count = static_cast<std::size_t>(header.count());
  const std::uintmax_t expected = count * itemsize(header.dtype);
  const std::uintmax_t found = in.size - header.data_offset;
  require(found >= expected,
          "{}: .npy data section is truncated: expected {} bytes for {} {} values of shape {} "
          "after the {}-byte header, found {}",
          path, expected, count, dtype_name(header.dtype), format_shape(header.shape),
          header.data_offset, found);

  NpyArray array{
      .dtype = header.dtype, .shape = std::move(header.shape), .data = std::vector<double>(count)};
  if (header.dtype == DType::Float64) {
    read_exact(in.file.get(), array.data.data(), expected, path);
  } else {
    std::vector<float> chunk(std::min(count, kChunk));
    for (std::size_t done = 0; done < count;) {
      const std::size_t n = std::min(chunk.size(), count - done);
      read_exact(in.file.get(), chunk.data(), n * sizeof(float), path);
      std::copy_n(chunk.begin(), n, array.data.begin() + done);
      done += n;
    }
  }
  if (dict.fortran_order) array.data = fortran_to_c_order(array.data, array.shape);
  return array;
}

bool is_complex(Element element) {
  return layout_of(element).scalars == 2;
}

bool is_single(Element element) {
  return layout_of(element).scalar_bytes == 4;
}

namespace {

// The element type of a 2-D array's header, which read_npy_matrix reads.
Element header_matrix_element(const HeaderDict& dict, const std::string& path) {
  const Element element = parse_element(dict.descr, path);
  require(dict.shape.size() == 2, "{}: expected a 2-D array (a matrix), got shape {}", path,
          format_shape(dict.shape));
  return element;
}

}  // namespace

Element read_npy_matrix_element(const std::string& path) {
  const OpenFile in = open_for_reading(path);
  return header_matrix_element(parse_dict(read_header_bytes(in.file.get(), in.size, path), path),
                               path);
}

DenseMatrix read_npy_matrix(const std::string& path) {
  const OpenFile in = open_for_reading(path);
  const std::string bytes = read_header_bytes(in.file.get(), in.size, path);
  const HeaderDict dict = parse_dict(bytes, path);
  const Element element = header_matrix_element(dict, path);
  const ElementLayout layout = layout_of(element);
  DenseMatrix matrix{.element = element, .rows = dict.shape[0], .cols = dict.shape[1], .data = {}};
  const auto scalars = static_cast<std::size_t>(matrix.rows * matrix.cols) * layout.scalars;
  const std::uintmax_t expected = scalars * layout.scalar_bytes;
  const std::uintmax_t found = in.size - bytes.size();
  require(found >= expected,
          "{}: .npy data section is truncated: expected {} bytes for a {} array of shape {} "
          "after the {}-byte header, found {}",
          path, expected, name_of(element), format_shape(dict.shape), bytes.size(), found);
  std::vector<double> stored(scalars);
  if (layout.scalar_bytes == 8) {
    read_exact(in.file.get(), stored.data(), expected, path);
  } else {
    std::vector<float> chunk(std::min(scalars, kChunk));
    for (std::size_t done = 0; done < scalars;) {
      const std::size_t n = std::min(chunk.size(), scalars - done);
      read_exact(in.file.get(), chunk.data(), n * sizeof(float), path);
      std::copy_n(chunk.begin(), n, stored.begin() + static_cast<std::ptrdiff_t>(done));
      done += n;
    }
  }
  if (dict.fortran_order) {
    matrix.data = std::move(stored);
    return matrix;
  }
  // C order (row-major) to column-major, element by element (an element is `scalars` doubles).
  matrix.data.resize(scalars);
  const std::size_t rows = static_cast<std::size_t>(matrix.rows), k = layout.scalars;
  const std::size_t cols = static_cast<std::size_t>(matrix.cols);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c)
      std::copy_n(stored.begin() + static_cast<std::ptrdiff_t>((r * cols + c) * k), k,
                  matrix.data.begin() + static_cast<std::ptrdiff_t>((c * rows + r) * k));
  return matrix;
}

void write_npy(const std::string& path, std::span<const double> data,
               std::span<const index_t> shape) {
  write_npy(path, data, shape, Element::Float64, false);
}

void write_npy(const std::string& path, std::span<const double> data,
               std::span<const index_t> shape, Element element, bool fortran_order) {
  const ElementLayout layout = layout_of(element);
  const std::optional<index_t> count = element_count(shape);
  require(count.has_value(),
          "{}: cannot write shape {}: expected non-negative dimensions and at most {} elements",
          path, format_shape(shape), kMaxCount);
  require(static_cast<std::size_t>(*count) * layout.scalars == data.size(),
          "{}: cannot write shape {}: it has {} elements but {} values were given, expected the "
          "same number",
          path, format_shape(shape), *count, data.size() / layout.scalars);
  const std::string header = encode_header(shape, layout.descr, fortran_order);

  AtomicOutput output(path, AtomicOutput::Kind::Stream);
  File file(output.open_stream());
  if (file == nullptr) {
    fail("{}: cannot open '{}' for writing: {}", path, output.path(), last_error());
  }
  write_exact(file.get(), header.data(), header.size(), path);
  if (layout.scalar_bytes == 8) {
    write_exact(file.get(), data.data(), data.size_bytes(), path);
  } else {
    std::vector<float> chunk(std::min(data.size(), kChunk));
    for (std::size_t done = 0; done < data.size();) {
      const std::size_t n = std::min(chunk.size(), data.size() - done);
      std::transform(data.begin() + static_cast<std::ptrdiff_t>(done),
                     data.begin() + static_cast<std::ptrdiff_t>(done + n), chunk.begin(),
                     [](double v) { return static_cast<float>(v); });
      write_exact(file.get(), chunk.data(), n * sizeof(float), path);
      done += n;
    }
  }
  // fclose flushes the buffered tail: a full disk may only show up here.
  if (std::fclose(file.release()) != 0) {
    fail("{}: write failed (disk full?): {}", path, last_error());
  }
  output.commit();
}

}  // namespace shiftop::io
