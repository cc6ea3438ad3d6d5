// libFuzzer target: a file of a --data directory (GPUs, prices, models), read as each kind.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string t = k3plan_fuzz::text(data, size);
  for (const char* origin : {"data/gpus.yaml", "data/prices.yaml", "data/models/fuzz.yaml"}) {
    k3plan_fuzz::expect_value_or_input_error([&] {
      k3plan::Catalogue c = k3plan_fuzz::catalogue();  // a copy of the embedded one
      c.add_text(t, origin);
    });
  }
  return 0;
}
