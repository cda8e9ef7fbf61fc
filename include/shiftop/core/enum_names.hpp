// One table of names per enum: the names a value prints as, the words the CLI and Python accept,
// and the list both show in their help. A family declares its table once, next to the enum:
//
//   template <>
//   struct shiftop::EnumNames<btt::Op> {
//     static constexpr std::array<std::pair<btt::Op, std::string_view>, 4> table{{...}};
//   };
//
// and then name_of(value), parse_name<E>(text, "--op") and choices_of<E>() serve everywhere, so a
// new value appears in the library, the tool's --help and the Python bindings at once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace shiftop {

namespace detail {
// Out of line (src/core/enum_names.cpp) so that this header stays free of fmt, which nvcc 13 does
// not compile: CUDA sources include the family headers that declare enum tables.
[[noreturn]] void fail_unnamed_enumerator(int value);
[[noreturn]] void fail_unknown_name(std::string_view what, const std::string& choices,
                                    std::string_view text);
}  // namespace detail

/// Specialised per enum with `static constexpr std::array<std::pair<E, std::string_view>, N>
/// table`, every value once, in the order the help lists them.
template <class E>
struct EnumNames;

/// The name of `value`; an enumerator missing from its table is a bug and throws.
template <class E>
constexpr std::string_view name_of(E value) {
  for (const auto& [entry, name] : EnumNames<E>::table)
    if (entry == value) return name;
  detail::fail_unnamed_enumerator(static_cast<int>(value));
}

/// Every name of E, in table order.
template <class E>
std::vector<std::string_view> names_of() {
  std::vector<std::string_view> names;
  for (const auto& entry : EnumNames<E>::table)
    names.push_back(entry.second);
  return names;
}

/// The names as a reader expects them listed: "cpu or cuda", "mlem, sirt or cgls".
template <class E>
std::string choices_of() {
  const std::vector<std::string_view> names = names_of<E>();
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? " or " : ", ";
    text += names[i];
  }
  return text;
}

/// The value named `text`, or shiftop::Error "<what>: expected <choices>, got '<text>'", where
/// `what` names the input (the option, argument or attribute it came from).
template <class E>
E parse_name(std::string_view text, std::string_view what) {
  for (const auto& [entry, name] : EnumNames<E>::table)
    if (name == text) return entry;
  detail::fail_unknown_name(what, choices_of<E>(), text);
}

}  // namespace shiftop
