#pragma once
// The rules the engines enforce on parallel layouts (the Layout type is in parallel.hpp).
#include <k3plan/gpu.hpp>
#include <k3plan/model.hpp>
#include <k3plan/parallel.hpp>
#include <optional>
#include <string>
#include <vector>

namespace k3plan {


// Reasons (in the engine's own words where it has them) that `engine` refuses `l` for `m` on
// `gpu` with `gpus` GPUs; empty = accepted. `warnings` gets non-fatal notes (TP across nodes).
std::vector<std::string> layout_refusals(const Model& m, const Gpu& gpu, Engine engine, const Layout& l,
                                         std::vector<std::string>* warnings = nullptr, const std::string& engine_version = "");

// The layout with decode context parallelism over its whole TP group (dcp = tp), for MLA models
// with TP > 1; none otherwise. The one DCP degree the engines' layout candidates and fit's
// "with --dcp" figure use.
std::optional<Layout> with_dcp(const Model& m, Layout l);

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
