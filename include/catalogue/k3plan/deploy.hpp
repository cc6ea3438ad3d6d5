#pragma once
// A deployment: the YAML file teams keep in review (examples/*.yaml, README "Deployment file"), or
// the same read back from a vLLM / SGLang command line or a LeaderWorkerSet manifest. Every field
// remembers where it came from so findings point at file:line:column.
#include <cstdint>
#include <k3plan/parallel.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace k3plan {

struct SourcePos {
  std::string file;
  int line = 0;    // 1-based; 0 = unknown
  int column = 0;  // 1-based
};

struct Finding {
  std::string rule;      // e.g. "schema/unknown-key", "engine/tp-heads", "memory/does-not-fit"
  std::string severity;  // error | warning | note
  std::string message;
  SourcePos pos;
};

struct Deployment {
  std::string file;
  std::string model;  // catalogue id, model YAML or config.json path
  std::string gpu;
  int gpus = 0;
  int nodes = 0;
  Engine engine = Engine::sglang;
  std::string engine_version;  // release or window id ("0.5.8.post1"); empty = newest modelled
  Layout layout;
  bool layout_given = false;
  std::vector<int> pp_layer_partition;  // layers per pipeline stage (VLLM_ / SGLANG_PP_LAYER_PARTITION); empty = the engine's split
  std::string pp_layer_partition_env;   // the variable a command line set it with (empty: from a deployment file)
  std::int64_t context = 0;  // 0 = engine default (model maximum)
  std::int64_t users = 1;
  std::string kv_dtype = "auto";
  std::optional<double> mem_fraction_static;
  std::optional<double> gpu_memory_utilization;
  std::optional<std::int64_t> chunked_prefill_size;
  std::optional<std::int64_t> max_num_batched_tokens;
  std::optional<std::int64_t> max_num_seqs;
  std::optional<int> cuda_graph_max_bs;
  std::string host = "0.0.0.0";
  int port = 0;            // 0 = engine default (SGLang 30000, vLLM 8000)
  std::string model_path;  // what the engine loads (HF repo or local path); default: the model's hf_repo
  std::string served_model_name;
  std::string head_address;  // multi-node: head node address
  std::optional<double> usd_per_month_max;
  std::optional<double> usd_per_gpu_hour;
  // Read back from a command line: what the operator passed.
  std::optional<bool> trust_remote_code;
  std::optional<std::string> tool_call_parser;
  std::optional<std::string> reasoning_parser;
  std::map<std::string, SourcePos> where;  // field name -> position

  SourcePos pos(const std::string& field) const;
};

// Parses a deployment YAML. Malformed YAML (or not a mapping) throws InputError (exit 2); schema
// problems (unknown keys, wrong types, missing fields) are returned as findings.
Deployment parse_deployment(const std::string& text, const std::string& origin, std::vector<Finding>& findings);

// Parses a `vllm serve ...` or `python3 -m sglang.launch_server ...` command line (or a script
// holding one; backslash-newline continuations, quotes and env assignments handled).
Deployment parse_launch_command(const std::string& text, const std::string& origin, std::vector<Finding>& findings);

// Quoting for generated shell and YAML: the result is inert whatever the input holds.
std::string shell_quote(const std::string& s);
// The same word bare when it is plain (ASCII letters, digits and _ - . / : , + @ % =), else
// shell_quote'd: readable commands, still inert.
std::string shell_word(const std::string& s);
std::string yaml_quote(const std::string& s);

}  // namespace k3plan
