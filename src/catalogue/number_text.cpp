// Locale-independent number reading (number_text.hpp).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <k3plan/number_text.hpp>
#include <limits>
#include <system_error>

namespace k3plan {

namespace {

// A well-formed literal from_chars found beyond a double: infinity when it overflows, zero when it
// underflows (as strtod answers), judged by its decimal magnitude.
double beyond_double(std::string_view s) {
  const bool negative = s[0] == '-';
  if (negative) s.remove_prefix(1);
  const auto e = s.find_first_of("eE");
  const std::string_view mantissa = s.substr(0, e);
  const auto dot = mantissa.find('.');
  const std::string_view whole = mantissa.substr(0, dot);
  long long magnitude = 0;  // about log10 |value|
  if (const auto first = whole.find_first_not_of('0'); first != std::string_view::npos) {
    magnitude = static_cast<long long>(whole.size() - first);
  } else if (dot != std::string_view::npos) {
    const std::string_view frac = mantissa.substr(dot + 1);
    magnitude = -static_cast<long long>(std::min(frac.find_first_not_of('0'), frac.size()));
  }
  if (e != std::string_view::npos) {
    std::string_view x = s.substr(e + 1);
    const bool down = !x.empty() && x[0] == '-';
    if (!x.empty() && (x[0] == '-' || x[0] == '+')) x.remove_prefix(1);
    long long exponent = 0;
    for (const char c : x) exponent = std::min<long long>(exponent * 10 + (c - '0'), 1'000'000'000);
    magnitude += down ? -exponent : exponent;
  }
  const double v = magnitude > 0 ? HUGE_VAL : 0.0;
  return negative ? -v : v;
}

}  // namespace

std::optional<double> parse_real(std::string_view s) {
  // from_chars takes no leading '+'; one is allowed before a digit or '.'
  if (s.size() > 1 && s[0] == '+' && s[1] != '-' && s[1] != '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
  if (end != s.data() + s.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) return beyond_double(s);
  if (ec != std::errc{}) return std::nullopt;
  return v;
}

std::optional<double> parse_yaml_real(std::string_view s) {
  for (std::string_view inf : {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"})
    if (s == inf) return HUGE_VAL;
  for (std::string_view inf : {"-.inf", "-.Inf", "-.INF"})
    if (s == inf) return -HUGE_VAL;
  for (std::string_view nan : {".nan", ".NaN", ".NAN"})
    if (s == nan) return std::numeric_limits<double>::quiet_NaN();
  return parse_real(s);
}

std::optional<std::uint64_t> parse_uint(std::string_view s) {
  if (s.empty() || s[0] < '0' || s[0] > '9') return std::nullopt;
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace k3plan
