// libFuzzer target: a validation cases file (`validate --cases`), replayed through fit.
#include <k3plan/validate.hpp>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string t = k3plan_fuzz::text(data, size);
  k3plan_fuzz::expect_value_or_input_error([&] { (void)k3plan::run_validate_text(k3plan_fuzz::catalogue(), t, "fuzz-cases.yaml"); });
  return 0;
}
