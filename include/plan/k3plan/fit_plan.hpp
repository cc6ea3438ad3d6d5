#pragma once
// The fit searches behind `k3plan fit` (and deployment files): one GPU with a given layout, a GPU
// count or the smallest count that holds the load; and every catalogue GPU ranked by USD/hour.
// The budget itself is the engine models' (budget.hpp); this layer only chooses what to evaluate.
#include <k3plan/budget.hpp>
#include <k3plan/catalogue.hpp>
#include <optional>
#include <vector>

namespace k3plan {

struct FitRequest {
  std::int64_t context = 0;
  std::int64_t users = 1;
  int gpus = 0;                 // 0 = the smallest engine-valid count that holds the load
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

}  // namespace k3plan
