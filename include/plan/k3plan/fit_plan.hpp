#pragma once
// The fit searches behind `k3plan fit` (and deployment files): one GPU with a given layout, a GPU
// count or the smallest count that holds the load; and every catalogue GPU ranked by USD/hour.
// The budget itself is the engine models' (budget.hpp); this layer only chooses what to evaluate.
#include <k3plan/budget.hpp>
#include <k3plan/catalogue.hpp>
#include <optional>
#include <string>
#include <vector>

namespace k3plan {

// `k3plan fit`'s options (the CLI fills them; run_fit in src/commands/fit_cmd.cpp renders the plan).
struct FitOptions {
  std::string model;
  std::string gpu;      // empty = every catalogue GPU
  int gpus = 0;         // 0 = search
  std::string context;  // empty = model maximum / default
  std::int64_t users = 1;
  std::string engine = "sglang";
  std::string engine_version;          // empty = newest modelled
  int tp = 0, ep = 0, dp = 0, pp = 0;  // 0 = search / default
  int dcp = 0;                         // decode context parallel (MLA)
  bool dp_attention = false;
  std::string kv_dtype = "auto";
  std::optional<double> gpu_memory_utilization;
  std::optional<double> mem_fraction_static;
  std::optional<std::int64_t> max_num_batched_tokens;
  std::optional<std::int64_t> max_num_seqs;
  std::optional<int> cuda_graph_max_bs;
  // SGLang linear-attention state pool (handle_max_mamba_cache)
  std::optional<double> mamba_full_memory_ratio;
  std::optional<std::int64_t> max_mamba_cache_size;
  std::string mamba_radix_cache_strategy;  // auto | no_buffer | extra_buffer | extra_buffer_lazy
  bool disable_radix_cache = false;
  // vLLM --enable-prefix-caching / --no-enable-prefix-caching (neither = the engine's default)
  bool enable_prefix_caching = false, no_enable_prefix_caching = false;
  std::optional<std::int64_t> max_total_tokens;  // SGLang --max-total-tokens: caps each KV pool's tokens
  std::string limit_mm_per_prompt;               // vLLM --limit-mm-per-prompt ('{"image": 4}' or image=4): images profiled
  bool no_gpu_p2p = false;                       // the GPUs cannot map each other's memory (EngineSettings::gpu_p2p)
  std::vector<int> pp_layer_partition;           // VLLM_PP_LAYER_PARTITION / SGLANG_PP_LAYER_PARTITION: layers per stage
  int draft_layers = 0;
  std::optional<int> speculative_num_draft_tokens;  // SGLang: D verify tokens per step (spec decoding on)
  std::string precision;                            // empty = as shipped
  bool weights_only = false;  // lower bounds only (the foundation view)
};

// The engine settings the options give: each engine flag checked against the engine it belongs to
// and its range (InputError naming the flag).
EngineSettings fit_settings(const FitOptions& o);

struct FitRequest {
  std::int64_t context = 0;
  std::int64_t users = 1;
  int gpus = 0;                  // 0 = the smallest engine-valid count that holds the load
  std::optional<Layout> layout;  // the degrees the user gave (the rest 1); none = the best for `gpus`
  bool ep_given = false;         // false: an MoE layout takes the EP the engine derives (vLLM: TP x DP)
};

// The layout as the engine runs it when expert parallel is on and EP was not given: vLLM derives
// EP = TP x DP (engine_model().effective_layout); SGLang keeps what it was given.
Layout complete_layout(const Model& m, const EngineSettings& s, Layout l, bool ep_given);

// One GPU. A layout whose GPU count contradicts `gpus` is an InputError naming both.
FitResult fit_one_gpu(const Model& m, const Gpu& g, const EngineSettings& s, const FitRequest& r);

// What decode context parallelism or DP-attention would change: the same GPUs with the MLA cache
// split over the TP group (--dcp, or back to none when `f` already uses it) and, for SGLang, with
// DP-attention over the TP group (or without it). Only alternatives the engine release accepts and
// that change the number of users at the requested context are returned; fit prints them beside
// its answer ("12 users; with --dcp 8: 96") instead of switching silently.
struct FitAlternative {
  std::string flag;  // "--dcp 8", "no DCP", "--enable-dp-attention --dp 8", "no DP-attention"
  FitResult fit;
};
std::vector<FitAlternative> fit_alternatives(const Model& m, const Gpu& g, const EngineSettings& s, const FitResult& f);

// Every catalogue GPU: the weights-only lower bound, the smallest deployable layout and (unless
// weights_only) the smallest fit for the load with its price. Ranked by USD/hour (deployable rows
// by the price of the deployable layout when weights_only); GPUs that hold nothing rank last.
struct GpuFitRow {
  const Gpu* gpu = nullptr;
  LowerBound lower_bound;
  std::optional<FitResult> fit;  // absent when weights_only
  double usd_per_hour = 0;       // of the fit (or of the deployable layout when weights_only); 0 = none
};
std::vector<GpuFitRow> fit_every_gpu(const Catalogue& cat, const Model& m, const EngineSettings& s, double weights_bytes,
                                     std::int64_t context, std::int64_t users, bool weights_only);

// `k3plan fit`'s content: the options validated (InputError), the weights, and either every
// catalogue GPU (no -g: fit_every_gpu) or one GPU's fit (fit_one_gpu) with its alternatives.
struct FitPlan {
  Model model;
  EngineSettings settings;
  std::int64_t context = 0;
  double weights_bytes = 0;             // as shipped, or at --precision
  std::vector<Assumption> assumptions;  // the model's, then those of the GPU figures the answer uses
  std::vector<GpuFitRow> rows;          // no -g
  const Gpu* gpu = nullptr;             // -g
  std::optional<FitResult> fit;         // -g
  std::vector<FitAlternative> alternatives;
};
FitPlan plan_fit(const Catalogue& cat, const FitOptions& o);

}  // namespace k3plan
