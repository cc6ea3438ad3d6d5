#pragma once
// Units: bytes internally, always. GB = 1e9 B and GiB = 2^30 B, labelled wherever shown.
// Context suffixes: k = 1,024 tokens and M = 2^20 tokens (so 128k = 131,072 and 1M = 1,048,576).
#include <cstdint>
#include <string>
#include <string_view>

namespace k3plan {

inline constexpr double kGB = 1e9;
inline constexpr double kTB = 1e12;
inline constexpr double kGiB = 1073741824.0;
inline constexpr double kMiB = 1048576.0;

// Parses "128k", "1M", "32768". Throws InputError naming `what` on anything else.
std::int64_t parse_context(std::string_view text, std::string_view what = "context");

// "128k" for 131072, "1M" for 1048576, plain digits otherwise.
std::string format_context(std::int64_t tokens);

// Human size in decimal units: "1.56 TB", "195.0 GB".
std::string human_decimal(double bytes);
// "1453.8 GiB" style.
std::string human_binary(double bytes);

}  // namespace k3plan
