#pragma once
// One error type for malformed input (files, flags, ids). Thrown anywhere, caught once in main()
// and printed as a single line `k3plan: error: ...` with exit code 2. "Does not fit" is never an
// error: calculators return it as a normal result.
#include <stdexcept>
#include <string>
#include <vector>

namespace k3plan {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Suggests the closest candidate (edit distance) for "did you mean"; empty when none is close.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace k3plan
