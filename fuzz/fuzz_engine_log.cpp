// libFuzzer target: a vLLM / SGLang start-up log (`validate --log`).
#include <k3plan/engine_log.hpp>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string t = k3plan_fuzz::text(data, size);
  k3plan_fuzz::expect_value_or_input_error([&] { (void)k3plan::parse_engine_log(t, "fuzz.log"); });
  return 0;
}
