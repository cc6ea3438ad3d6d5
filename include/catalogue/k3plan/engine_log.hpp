#pragma once
// Reader for vLLM and SGLang start-up logs as users have them (copied from a terminal, a pod log,
// an issue). It pulls the serving arguments and the memory lines the engines print; everything
// else is ignored. A logged figure the log does not print stays absent (never zero).
//
// Lines read (both engines print binary units: "GB" in SGLang and old vLLM is GiB):
//  vLLM   "non-default args: {...}" | "args: Namespace(...)" | "Initializing a V1 LLM engine (v0.8.5)
//         with config: model=..., ..." | "vLLM API server version X" | "Model loading took X GiB" |
//         "Memory profiling takes ... Total non KV cache memory: ...; torch peak memory increase: ...;
//         non-torch forward increase memory: ...; weights memory: ..." | V0 "Memory profiling
//         results: total_gpu_memory=... peak_torch_memory=... non_torch_memory=... kv_cache_size=..." |
//         "Initial free memory: X GiB; Requested memory: U (util), Y GiB" | "Available KV cache memory:
//         X GiB" | "GPU KV cache size: N tokens" | "Maximum concurrency for N tokens per request: Xx" |
//         "# GPU blocks: N" | V1 "worker init memory snapshot: ..., total_memory=X GiB, ..."
//  SGLang "server_args=ServerArgs(...)" | "Load weight begin. avail mem=X GB" | "Load weight end. ...
//         avail mem=X GB, mem usage=Y GB" | "KV Cache is allocated. #tokens: N, K size: X GB, V size:
//         Y GB" (or "KV size") | "Mamba Cache is allocated. max_mamba_cache_size: N, conv_state size:
//         X GB, ssm_state size: Y GB" | "max_total_num_tokens=N, ..., max_running_requests=M,
//         context_len=L, ..." | "Memory pool end. avail mem=X GB"
#include <cstdint>
#include <k3plan/parallel.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace k3plan {

struct EngineLog {
  std::string origin;
  std::optional<Engine> engine;             // absent when nothing engine-specific was found
  std::string version;                      // as logged ("0.10.1.1"); empty when the log does not say
  std::string args_from;                    // which line the arguments came from
  bool v0_engine = false;                   // vLLM "Initializing an LLM engine" (the V0 engine, VLLM_USE_V1=0)
  bool sampler_native = false;  // vLLM V1: "FlashInfer is not available. Falling back to the PyTorch-native implementation of top-p & top-k
                                // sampling" (or "... not enabled")
  bool no_gpu_p2p = false;                  // "Custom allreduce is disabled because your platform lacks GPU P2P capability"
  std::map<std::string, std::string> args;  // serving arguments, values unquoted (None = "None")
  std::string command;                      // a `vllm serve` / `sglang.launch_server` command found in the log (continuations joined)

  // vLLM (bytes, tokens)
  std::optional<double> total_bytes, initial_free_bytes, requested_bytes, weights_bytes, activation_bytes, non_torch_bytes, non_kv_bytes,
      kv_pool_bytes, cudagraph_bytes;
  std::optional<std::int64_t> kv_cache_tokens, gpu_blocks, concurrency_tokens;
  std::optional<double> max_concurrency;
  // SGLang
  std::optional<double> load_begin_avail_bytes, load_end_avail_bytes, weights_usage_bytes, kv_k_bytes, kv_v_bytes, kv_bytes,
      pool_end_avail_bytes, mamba_conv_bytes, mamba_ssm_bytes;
  std::optional<std::int64_t> max_total_num_tokens, kv_allocated_tokens, max_running_requests, context_len, mamba_cache_size;

  std::vector<std::string> lines;  // every non-comment line (for GPU-name matching)

  bool has(const std::string& key) const { return args.count(key) > 0; }
  std::string arg(const std::string& key, const std::string& fallback = "") const;
  // Typed arguments; an absent or None value gives `fallback`; a value out of [lo, hi] or not a
  // number is an InputError naming the log and the argument.
  std::int64_t int_arg(const std::string& key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) const;
  double num_arg(const std::string& key, double fallback, double lo, double hi) const;
  bool flag_arg(const std::string& key) const;  // True / true / 1
};

// Parses `text`; throws InputError (naming `origin`) when it is not a start-up log of either engine.
EngineLog parse_engine_log(const std::string& text, const std::string& origin);

// Key/value pairs of a Python repr: "{'a': 1, 'b': 'x'}" or "Name(a=1, b='x')" or a bare
// "a=1, b=x" list; nested values are kept as their raw text. A repr cut before its closing
// bracket keeps only the items a comma closes (the last one may be cut mid-value). Exposed for tests.
std::map<std::string, std::string> parse_python_pairs(const std::string& text);

}  // namespace k3plan
