// libFuzzer target: a k3plan model YAML (`-m model.yaml`) -> Model.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string t = k3plan_fuzz::text(data, size);
  k3plan_fuzz::expect_value_or_input_error([&] { (void)k3plan::parse_model_yaml(t, "fuzz-model.yaml"); });
  return 0;
}
