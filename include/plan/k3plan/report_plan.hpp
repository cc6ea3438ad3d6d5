#pragma once
// The content of `k3plan report` (src/plan/report_plan.cpp): fit for every candidate GPU (as
// `fit -g GPU [-n N]`), the KV curve of the recommendation, its speed sweep (as `perf`), rent vs API
// (as `cost`), its launch commands (as `launch`) and the sources, every number in one JSON value.
// The page and its charts are drawn from that value only (report_html.hpp), so the page and
// `--format json` cannot disagree; the command (src/commands/report_cmd.cpp) writes the files.
#include <cstdint>
#include <k3plan/budget.hpp>
#include <k3plan/catalogue.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace k3plan {

struct ReportOptions {
  std::string model;
  std::vector<std::string> gpus;  // -g; empty = every catalogue GPU
  int gpu_count = 0;              // -n; 0 = the smallest count that fits
  std::string context;            // empty = model maximum, capped at 32k (as fit)
  std::int64_t users = 1;
  std::string engine = "sglang";
  std::string kv_dtype = "auto";
  std::string out = "plan.html";                // the HTML file (written atomically)
  std::string svg_dir;                          // also write each chart as DIR/<id>.svg
  std::optional<double> rate_usd_per_gpu_hour;  // USD per GPU-hour for every candidate (default: each GPU's catalogue price)
  std::optional<double> input_per_output;       // API bill: input tokens per output token (default 0)
  std::optional<double> cache_hit;              // API bill: fraction of input tokens cached (default 0)
  double isl = 1024, osl = 1024;                // Pareto sweep: request shape
  std::string workload = "chat";                // which ITL target of data/perf/sla.yaml shades the SLA region
};

// One candidate GPU: its fit for the load and what it costs.
struct ReportCandidate {
  const Gpu* gpu = nullptr;
  FitResult fit;
  double usd_per_gpu_hour = 0;  // --rate, else the GPU's catalogue price
  double usd_per_hour = 0;      // fit.gpus x the rate
  double usd_per_month = 0;     // around the clock for the catalogue's hours per month
};

struct ReportPlan {
  std::string model_id;
  Engine engine = Engine::sglang;
  std::int64_t context = 0;  // the context asked for (default: model maximum, capped at 32k)
  std::int64_t users = 1;
  double hours_per_month = 0;
  // Every GPU asked for (or the catalogue's), those that fit first, then by USD/hour; never empty.
  std::vector<ReportCandidate> candidates;
  bool any_fit = false;
  // Every number the page shows: model, answer, candidates, kv, perf, cost, launch, sources and
  // assumptions (the command adds "files" and "charts").
  nlohmann::json data;
  std::vector<std::string> assumptions;  // as data["assumptions"]
  // The recommendation: the cheapest candidate that fits (when none fits, the cheapest tried).
  const ReportCandidate& recommended() const { return candidates.front(); }
};

// Validates the options (InputError: model, GPUs, KV dtype, ranges, workload, an empty -o) and
// computes the report's content; "does not fit" is a result (any_fit = false). No file is written.
ReportPlan plan_report(const Catalogue& cat, const ReportOptions& o);

}  // namespace k3plan
