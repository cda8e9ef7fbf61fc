#include "shiftop/core/enum_names.hpp"

#include "shiftop/core/error.hpp"

namespace shiftop::detail {

void fail_unnamed_enumerator(int value) {
  fail("internal: an enumerator ({}) has no name in its EnumNames table", value);
}

void fail_unknown_name(std::string_view what, const std::string& choices, std::string_view text) {
  fail("{}: expected {}, got '{}'", what, choices, text);
}

}  // namespace shiftop::detail
