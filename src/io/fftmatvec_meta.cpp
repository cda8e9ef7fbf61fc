// What FFTMatvec does with meta_adj: Matrix::read_meta in src/Matrix.cpp of s769/FFTMatvec (read at
// commit 0da26a00b632205c445efe057892263f2935b9e2; the same loop without the checksum case at
// 13402264ed5e525e7d82ab823c2f50e9581a0a2a, whose test/data/test_mat*/binary/meta_adj have eight
// lines). It reads the file with std::getline and a line counter, and for line
//   1 g_num_rows = std::stoi(line)    Nd          5 ext = line          the extension, as is
//   2 g_num_cols = std::stoi(line)    Nm          6 reindexed = std::stoi(line)
//   3 block_sz = std::stoi(line)      Nt          7 is_p2q = std::stoi(line)
//   4 prefix = line                   as is       8 reverse_dof = std::stoi(line)
//   9 checksum = std::stoi(line)      (a member; stays 0 when the file has eight lines)
//  10... ignored (the switch's default case).
// Then it aborts unless reverse_dof != 0, reindexed != 0, ext == ".h5" exactly (so a CRLF file,
// whose line 5 is ".h5\r", is refused) and is_p2q == the p2q/p2o type asked for (0 or 1). It opens
// "<dir>/binary/" + prefix + six-digit row + ".h5" and, when checksum != 0, requires that value in
// each block row's "checksum" attribute. std::stoi skips leading white space, takes a sign and
// digits, throws (uncaught: FFTMatvec dies) on an empty or non-numeric line or one outside a C
// int, and ignores what follows the digits. With fewer than eight lines the flags it tests are
// uninitialised.
// shiftop accepts the same files, except that it refuses text after a number rather than ignore it
// (FFTMatvec reads "1e3" as 1), and sizes that are not positive (which FFTMatvec cannot use).
#include "io/fftmatvec_meta.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <vector>

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
    "the reindexed flag (an integer, 1)",
    "the p2q flag (0: parameter-to-observable, 1: parameter-to-quantity-of-interest)",
    "the reverse-dof flag (an integer, 1)",
    "the checksum (an integer, 0 for none; or no ninth line)",
};

// Longest prefix accepted; file names longer than this are refused by most file systems anyway.
constexpr std::size_t kMaxPrefix = 200;

// std::isspace in the "C" locale, which std::stoi skips before a number.
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || c == '\n';
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
  // The lines std::getline gives: split at '\n'; text after the last '\n' is a line if not empty.
  MetaParser(std::string_view text, std::string_view name) : name_(name) {
    std::size_t begin = 0;
    while (begin < text.size()) {
      const std::size_t end = std::min(text.find('\n', begin), text.size());
      lines_.push_back(text.substr(begin, end - begin));
      begin = end + 1;
    }
  }

  MetaAdj parse() {
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
    meta.reindexed = integer(5) != 0;
    meta.p2q = p2q(6);
    meta.reverse_dof = integer(7) != 0;
    if (lines_.size() >= kLines) meta.checksum = integer(8);
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

  // std::stoi's number, with nothing but white space after it.
  std::int64_t integer(int index) const {
    std::string_view text = trim(line(index));
    const bool plus = text.starts_with('+');
    if (plus) text.remove_prefix(1);  // std::from_chars takes '-' but not '+'
    std::int32_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error == std::errc::result_out_of_range)
      bad(index, fmt::format("{} (outside the range of a C int)", quoted(index)));
    if (text.empty() || error != std::errc() || end != text.data() + text.size() ||
        (plus && text.starts_with('-')))
      bad(index, quoted(index));
    return value;
  }

  index_t size(int index) const {
    const std::int64_t value = integer(index);
    if (value <= 0) bad(index, quoted(index));
    return value;
  }

  bool p2q(int index) const {
    // FFTMatvec compares the value with the type asked for, a bool: only 0 and 1 can match.
    const std::int64_t value = integer(index);
    if (value != 0 && value != 1) bad(index, quoted(index));
    return value == 1;
  }

  // A line FFTMatvec takes as it is: with Windows line ends it ends in '\r', and FFTMatvec looks
  // for block rows "adj/vec_\r000000.h5" and refuses the extension ".h5\r".
  std::string_view text_line(int index) const {
    const std::string_view text = line(index);
    if (text.ends_with('\r'))
      bad(index, fmt::format("'{}' and a carriage return (Windows line ends, which FFTMatvec "
                             "refuses: save the file with '\\n' line ends)",
                             printable(text.substr(0, text.size() - 1))));
    return text;
  }

  // The line as it is (FFTMatvec does not trim it): a relative path below binary/, no control
  // characters, no '..' component.
  std::string prefix(int index) const {
    const std::string_view text = text_line(index);
    bool ok = text.size() <= kMaxPrefix && !text.starts_with('/');
    for (const char c : text)
      ok = ok && static_cast<unsigned char>(c) >= 0x20 && c != 0x7f;
    for (std::size_t begin = 0; ok && begin <= text.size();) {
      const std::size_t end = std::min(text.find('/', begin), text.size());
      ok = text.substr(begin, end - begin) != "..";
      begin = end + 1;
    }
    if (!ok)
      bad(index, fmt::format("{}, which is not a relative path below binary/ without control "
                             "characters",
                             quoted(index)));
    return std::string(text);
  }

  std::string extension(int index) const {
    // FFTMatvec compares the line, as it is, with ".h5", and opens only HDF5 block rows.
    const std::string_view text = text_line(index);
    if (text != ".h5") bad(index, quoted(index));
    return std::string(text);
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
