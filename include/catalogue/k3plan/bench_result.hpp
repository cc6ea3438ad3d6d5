#pragma once
// Readers of the result files serving benchmarks write (src/catalogue/bench_result.cpp), for
// `k3plan calibrate`: vLLM `vllm bench serve --save-result` JSON, SGLang `bench_serving
// --output-file` JSONL, guidellm's benchmarks report JSON and InferenceX CSV rows. Each file yields
// measured points in one form; the deployment a file does not record (model, GPU, layout, ...) is
// left empty for the command line to supply. A field that is missing or of the wrong type is an
// InputError naming the file and the field (exit 2).
#include <optional>
#include <string>
#include <vector>

namespace k3plan {

struct BenchPoint {
  std::string where;  // "FILE", "FILE:3" (JSONL line, CSV row), "FILE: benchmarks[2]"
  // the measurement
  double isl_tokens = 0, osl_tokens = 0;  // per request: the measured mean, or the nominal length (nominal_lengths)
  bool nominal_lengths = false;           // InferenceX: nominal ISL/OSL, requests drawn at 80-100% of them
  int concurrency = 0;                    // 0 = not recorded (an open-loop run records none)
  std::string concurrency_field;          // the field that would have held it
  double tput_total_tok_s = 0;            // input + output tokens/s of the whole deployment (0 when per GPU)
  double tput_total_tok_s_per_gpu = 0;    // InferenceX records it per GPU (0 otherwise)
  double ttft_ms = 0, tpot_ms = 0;        // medians; TPOT excludes the first token
  // the deployment, where the file records it (empty / 0 / nullopt = not recorded)
  std::string model, gpu, engine, engine_version, precision, spec, kv_dtype, date;
  int tp = 0, ep = 0, gpus = 0;
  int replicas = 0;  // data-parallel copies of the instance behind one endpoint (SGLang --dp-size without DP attention)
  std::optional<bool> dp_attention;
  std::string exclude;  // non-empty: read but not usable, with the reason (disaggregated rows)
  // non-empty: the tool drew request lengths over a range, not one length (what the reader takes
  // is their mean; said to the user)
  std::string length_spread;
};

struct BenchFile {
  std::string format;         // vllm | sglang | guidellm | inferencex
  std::string fields_source;  // the tool's file and commit that defines the fields read
  std::vector<BenchPoint> points;
};

// `format`: auto (from the content: a CSV header with `hardware`, an object with `benchmarks`,
// JSON lines with `total_throughput`, an object or JSON lines with `total_token_throughput`), vllm,
// sglang, guidellm or inferencex.
BenchFile read_bench_file(const std::string& path, const std::string& format = "auto");
BenchFile parse_bench_text(const std::string& text, const std::string& origin, const std::string& format = "auto");

}  // namespace k3plan
