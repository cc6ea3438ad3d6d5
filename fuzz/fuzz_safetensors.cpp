// libFuzzer target: one safetensors shard (8-byte little-endian header length, the JSON header,
// the data area) and the sharded index, as `weights` reads them from a checkpoint directory or
// the Hub. Besides "a value or an InputError", the reader's promise is checked: the tensors it
// returns lie inside the data area, so their bytes never add up to more than the file holds.
#include <cstdlib>
#include <k3plan/safetensors.hpp>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string t = k3plan_fuzz::text(data, size);
  k3plan_fuzz::expect_value_or_input_error([&] {
    if (size < 8) return;
    const std::uint64_t n = k3plan::safetensors_header_length(data, size, "fuzz.safetensors");
    const std::uint64_t data_bytes = size - 8 - n;
    std::uint64_t sum = 0;
    for (const auto& x : k3plan::parse_safetensors_header(t.substr(8, n), data_bytes, "fuzz.safetensors")) {
      if (x.bytes > data_bytes - sum) std::abort();  // more tensor bytes than the data area holds
      sum += x.bytes;
    }
  });
  k3plan_fuzz::expect_value_or_input_error([&] { (void)k3plan::parse_safetensors_index(t, "model.safetensors.index.json"); });
  return 0;
}
