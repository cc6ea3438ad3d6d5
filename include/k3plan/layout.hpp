#pragma once
// Parallel layouts and the rules the engines enforce on them.
// Invariant: gpus() == tp * pp * dp for vLLM; for SGLang the instance is tp * pp GPUs and dp
// (DP-attention) partitions the TP group, so gpus() == tp * pp.
#include <k3plan/gpu.hpp>
#include <k3plan/model.hpp>
#include <string>
#include <vector>

namespace k3plan {

enum class Engine { sglang, vllm };  // the engine models are in engine.hpp

struct Layout {
  int tp = 1;
  int ep = 1;  // expert-parallel degree (1 = experts TP-sharded or dense model)
  int dp = 1;
  int pp = 1;
  bool dp_attention = false;
  // decode context parallel: the MLA cache of each sequence is split over dcp ranks of the TP
  // group (SGLang --dcp-size, vLLM --decode-context-parallel-size); adds no GPUs
  int dcp = 1;
  // GPUs one instance occupies, as the engine counts them (engine_model(e).gpus); computed wide
  // and clamped: absurd degrees from user input must not overflow
  int gpus(Engine e) const;
};

// Reasons (in the engine's own words where it has them) that `engine` refuses `l` for `m` on
// `gpu` with `gpus` GPUs; empty = accepted. `warnings` gets non-fatal notes (TP across nodes).
std::vector<std::string> layout_refusals(const Model& m, const Gpu& gpu, Engine engine, const Layout& l,
                                         std::vector<std::string>* warnings = nullptr, const std::string& engine_version = "");

struct EngineFlags {
  std::string sglang;
  std::string vllm;
};

// The parallel part of each engine's command line for one layout (no node or memory flags).
std::string sglang_parallel_flags(const Layout& l);
std::string vllm_parallel_flags(const Model& m, const Layout& l);

// Parallelism flags for both engines for one GPU count (sglang layout given; vLLM layout derived:
// TP within a node, PP across nodes, expert parallel on for MoE).
EngineFlags parallel_flags(const Model& m, const Gpu& gpu, const Layout& sglang_layout, int gpus);
Layout vllm_layout_for(const Model& m, const Gpu& gpu, int gpus);

struct LowerBound {
  std::string gpu;
  double weights_bytes = 0;
  int lower_bound_gpus = 0;         // weights / nominal HBM as sold, rounded up
  int lower_bound_gpus_usable = 0;  // weights / memory the driver reports, rounded up
  bool deployable_found = false;
  int gpus = 0;
  int nodes = 0;
  Layout layout;  // SGLang layout
  Layout vllm_layout;
  double weights_bytes_per_gpu = 0;
  EngineFlags flags;
};

// Lower bound for the weights alone and the smallest engine-valid layout at or above it.
LowerBound weights_lower_bound(const Model& m, const Gpu& gpu, double weights_bytes);

}  // namespace k3plan
