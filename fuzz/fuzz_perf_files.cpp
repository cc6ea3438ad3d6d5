// libFuzzer target: the SLA file (`plan --sla`) and the efficiency file (`perf/plan --efficiency`).
#include <k3plan/perf_cmd.hpp>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string t = k3plan_fuzz::text(data, size);
  k3plan_fuzz::expect_value_or_input_error([&] { (void)k3plan::parse_sla(t, "fuzz-sla.yaml"); });
  k3plan_fuzz::expect_value_or_input_error([&] { (void)k3plan::parse_efficiency(t, "fuzz-efficiency.yaml"); });
  return 0;
}
