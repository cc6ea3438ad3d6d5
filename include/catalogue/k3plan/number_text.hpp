#pragma once
// Numbers read from text the same way under every locale. strtod, std::stod, iostream extraction
// (yaml-cpp's as<double>() included) and printf follow LC_NUMERIC or the global C++ locale: under
// de_DE.UTF-8 "0.85" stops at the '.' and "1.000" may read as one thousand. Everything k3plan reads
// goes through std::from_chars here; everything it prints goes through fmt (no 'L' specifier), which
// is locale-independent (tests/test_locale.cpp holds both to that).
#include <cstdint>
#include <optional>
#include <string_view>

namespace k3plan {

// The whole of `s` as a real number: an optional sign, digits with at most one '.', an optional
// exponent ("0.85", "-1e-3", "+.5"); "inf" and "nan" are returned as such (callers refuse them with
// their range). No white space, no hex, no thousands separators. nullopt when anything is left over.
std::optional<double> parse_real(std::string_view s);
// YAML 1.2 core-schema reals as well: ".inf", "-.inf", ".nan" (any case as the spec lists).
std::optional<double> parse_yaml_real(std::string_view s);
// Decimal digits only, no sign; nullopt on overflow.
std::optional<std::uint64_t> parse_uint(std::string_view s);

}  // namespace k3plan
