// libFuzzer harness for the FFTMatvec meta_adj parser (src/io/fftmatvec_meta.hpp): any text is
// either refused with shiftop::Error or gives sizes that are positive, block-row paths that stay
// below binary/, and a description that survives writing and reading back.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "io/attribute_value.hpp"
#include "io/fftmatvec_meta.hpp"
#include "shiftop/core/error.hpp"

namespace {

bool same(const shiftop::io::MetaAdj& a, const shiftop::io::MetaAdj& b) {
  return a.nd == b.nd && a.nm == b.nm && a.nt == b.nt && a.prefix == b.prefix &&
         a.extension == b.extension && a.reindexed == b.reindexed && a.p2q == b.p2q &&
         a.reverse_dof == b.reverse_dof && a.checksum == b.checksum;
}

// A refusal of what format_meta_adj wrote is a failure, not a refused input.
bool round_trips(const shiftop::io::MetaAdj& meta, std::string_view name) {
  try {
    return same(shiftop::io::parse_meta_adj(shiftop::io::format_meta_adj(meta), name), meta);
  } catch (const shiftop::Error&) {
    return false;
  }
}

bool has_parent_component(std::string_view path) {
  for (std::size_t begin = 0; begin <= path.size();) {
    const std::size_t end = std::min(path.find('/', begin), path.size());
    if (path.substr(begin, end - begin) == "..") return true;
    begin = end + 1;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using shiftop::fuzz::check;
  constexpr std::string_view name = "fuzz/binary/meta_adj";
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const shiftop::io::MetaAdj meta = shiftop::io::parse_meta_adj(text, name);
    for (const shiftop::index_t n : {meta.nd, meta.nm, meta.nt}) {
      check(n > 0 && n <= shiftop::io::kMaxAttributeCount,
            "Nd, Nm and Nt are positive and bounded");
    }
    const std::string last_row = shiftop::io::block_row_path(meta, meta.nd - 1);
    check(last_row.starts_with("binary/") && !has_parent_component(last_row),
          "block rows lie below binary/");
    check(round_trips(meta, name),
          "format_meta_adj then parse_meta_adj gives the same description");
  } catch (const shiftop::Error& error) {
    shiftop::fuzz::check_error_message(error.what(), name);
  }
  return 0;
}
