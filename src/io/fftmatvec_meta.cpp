#include "io/fftmatvec_meta.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <limits>
#include <vector>

#include "io/attribute_value.hpp"
#include "io/text.hpp"
#include "shiftop/core/error.hpp"

namespace shiftop::io {
namespace {

constexpr int kLines = 9;

// What each line holds, for "line N: expected ..." messages.
constexpr std::array<std::string_view, kLines> kExpected = {
    "Nd, the number of observation blocks (a positive integer)",
    "Nm, the number of parameter blocks (a positive integer)",
    "Nt, the number of time steps (a positive integer)",
    "the file-name prefix of the block rows (e.g. adj/vec_)",
    "the file extension '.h5'",
    "the reindexed flag (0 or 1)",
    "the p2q flag (0: parameter-to-observable, 1: parameter-to-quantity-of-interest)",
    "the reverse-dof flag (0 or 1)",
    "the checksum (an integer, 0 for none)",
};

// Longest prefix accepted; file names longer than this are refused by most file systems anyway.
constexpr std::size_t kMaxPrefix = 200;

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front()))
    text.remove_prefix(1);
  while (!text.empty() && is_space(text.back()))
    text.remove_suffix(1);
  return text;
}

class MetaParser {
 public:
  MetaParser(std::string_view text, std::string_view name) : name_(name) {
    std::size_t begin = 0;
    while (begin <= text.size()) {
      const std::size_t end = std::min(text.find('\n', begin), text.size());
      lines_.push_back(trim(text.substr(begin, end - begin)));
      begin = end + 1;
    }
    while (!lines_.empty() && lines_.back().empty())
      lines_.pop_back();
  }

  MetaAdj parse() {
    if (lines_.size() > kLines)
      fail("{}: line {}: expected the end of meta_adj after its nine lines, found '{}'", name_,
           kLines + 1, printable(lines_[kLines]));
    MetaAdj meta;
    meta.nd = size(0);
    meta.nm = size(1);
    meta.nt = size(2);
    const double entries =
        static_cast<double>(meta.nd) * static_cast<double>(meta.nm) * static_cast<double>(meta.nt);
    if (entries >= static_cast<double>(std::numeric_limits<index_t>::max() / 16))
      fail(
          "{}: lines 1-3: Nd*Nm*Nt = {}*{}*{} is absurdly large: expected an operator whose {} "
          "kernel entries can be indexed",
          name_, meta.nd, meta.nm, meta.nt, entries);
    meta.prefix = prefix(3);
    meta.extension = extension(4);
    meta.reindexed = flag(5);
    meta.p2q = flag(6);
    meta.reverse_dof = flag(7);
    meta.checksum = checksum(8);
    return meta;
  }

 private:
  [[noreturn]] void bad(int index, std::string_view found) const {
    fail("{}: line {}: expected {}, found {}", name_, index + 1, kExpected[index], found);
  }

  std::string_view line(int index) const {
    if (static_cast<std::size_t>(index) >= lines_.size()) bad(index, "the end of the file");
    return lines_[index];
  }

  std::string quoted(int index) const {
    const std::string_view text = line(index);
    return text.empty() ? std::string("an empty line") : fmt::format("'{}'", printable(text));
  }

  std::int64_t integer(int index) const {
    const std::string_view text = line(index);
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size())
      bad(index, quoted(index));
    return value;
  }

  index_t size(int index) const {
    const std::int64_t value = integer(index);
    if (value <= 0 || value > kMaxAttributeCount) bad(index, quoted(index));
    return value;
  }

  bool flag(int index) const {
    const std::int64_t value = integer(index);
    if (value != 0 && value != 1) bad(index, quoted(index));
    return value == 1;
  }

  std::int64_t checksum(int index) const {
    // FFTMatvec reads the checksum as a C int.
    const std::int64_t value = integer(index);
    if (value < std::numeric_limits<std::int32_t>::min() ||
        value > std::numeric_limits<std::int32_t>::max())
      bad(index, fmt::format("{} (outside the range of a 32-bit integer)", value));
    return value;
  }

  // A relative path below binary/: printable, no spaces or backslashes, no '..' component.
  std::string prefix(int index) const {
    const std::string_view text = line(index);
    bool ok = text.size() <= kMaxPrefix && !text.starts_with('/');
    for (const char c : text)
      ok = ok && c > 0x20 && c < 0x7f && c != '\\';
    for (std::size_t begin = 0; ok && begin <= text.size();) {
      const std::size_t end = std::min(text.find('/', begin), text.size());
      ok = text.substr(begin, end - begin) != "..";
      begin = end + 1;
    }
    if (!ok)
      bad(index, fmt::format("{}, which is not a relative path below binary/", quoted(index)));
    return std::string(text);
  }

  std::string extension(int index) const {
    // FFTMatvec opens only HDF5 block rows.
    if (line(index) != ".h5") bad(index, quoted(index));
    return std::string(line(index));
  }

  std::string_view name_;
  std::vector<std::string_view> lines_;
};

}  // namespace

MetaAdj parse_meta_adj(std::string_view text, std::string_view name) {
  return MetaParser(text, name).parse();
}

std::string format_meta_adj(const MetaAdj& meta) {
  return fmt::format("{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n", meta.nd, meta.nm, meta.nt, meta.prefix,
                     meta.extension, meta.reindexed ? 1 : 0, meta.p2q ? 1 : 0,
                     meta.reverse_dof ? 1 : 0, meta.checksum);
}

std::string block_row_path(const MetaAdj& meta, index_t row) {
  return fmt::format("binary/{}{:06d}{}", meta.prefix, row, meta.extension);
}

}  // namespace shiftop::io
