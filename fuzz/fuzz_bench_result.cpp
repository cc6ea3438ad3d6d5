// libFuzzer target: the benchmark result readers of `k3plan calibrate` (vLLM --save-result JSON,
// SGLang bench_serving JSONL, guidellm report JSON, InferenceX CSV), each format forced and by
// content detection. Every input must give points or an InputError naming the field (exit 2).
#include <k3plan/bench_result.hpp>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string t = k3plan_fuzz::text(data, size);
  for (const char* format : {"auto", "vllm", "sglang", "guidellm", "inferencex"})
    k3plan_fuzz::expect_value_or_input_error([&] { (void)k3plan::parse_bench_text(t, "fuzz-bench", format); });
  return 0;
}
