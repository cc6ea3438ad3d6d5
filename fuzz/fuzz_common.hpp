#pragma once
// Shared by the libFuzzer targets: each hands arbitrary bytes to one input parser, which must
// answer with a value or a k3plan::InputError (exit 2) and nothing else: no crash, no sanitizer
// report, no other exception (libFuzzer reports an escaping exception as a crash), no hang.
#include <cstddef>
#include <cstdint>
#include <k3plan/catalogue.hpp>
#include <k3plan/error.hpp>
#include <string>

namespace k3plan_fuzz {

inline const k3plan::Catalogue& catalogue() {
  static const k3plan::Catalogue cat = k3plan::Catalogue::embedded();
  return cat;
}

inline std::string text(const std::uint8_t* data, std::size_t size) { return std::string(reinterpret_cast<const char*>(data), size); }

template <class F>
void expect_value_or_input_error(F&& f) {
  try {
    f();
  } catch (const k3plan::InputError&) {
  }
}

}  // namespace k3plan_fuzz
