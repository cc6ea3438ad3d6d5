// libFuzzer target: a Hugging Face config.json (and the JSON input boundary under it) -> Model.
#include <k3plan/input_file.hpp>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string t = k3plan_fuzz::text(data, size);
  k3plan_fuzz::expect_value_or_input_error([&] { (void)k3plan::parse_json_input(t, "fuzz.json"); });
  k3plan_fuzz::expect_value_or_input_error([&] { (void)k3plan::import_hf_config(t, "config.json", ""); });
  return 0;
}
