#pragma once
// Character classes and case mapping for ASCII only, the same under every locale. <cctype>'s
// isalpha/isalnum/isspace/tolower follow LC_CTYPE once something calls setlocale: under
// tr_TR.ISO-8859-9 tolower('I') is 0xFD (dotless i), so "KIMI-K3" would stop matching "kimi-k3";
// under a Latin-1 locale isalnum(0xE9) is true, so a shell word or a SARIF URI would keep a byte
// it must quote or escape. Ids, flags, names and URIs are ASCII rules, so k3plan uses these
// (tests/test_locale.cpp runs the commands under tr_TR as well).
#include <string>
#include <string_view>

namespace k3plan {

constexpr bool ascii_is_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool ascii_is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
constexpr bool ascii_is_alnum(char c) { return ascii_is_alpha(c) || ascii_is_digit(c); }
// the white space of the C locale: space, \t, \n, \v, \f, \r
constexpr bool ascii_is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
constexpr char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = ascii_lower(c);
  return out;
}

}  // namespace k3plan
