#pragma once
// One plain options struct and one run_<command>() per subcommand. The CLI only fills the struct;
// every computation happens here, and each returns a Report (data + tables) to render.
#include <cstdint>
#include <k3plan/catalogue.hpp>
#include <k3plan/cost_plan.hpp>
#include <k3plan/fit_plan.hpp>
#include <k3plan/report.hpp>
#include <k3plan/report_plan.hpp>
#include <optional>
#include <string>
#include <vector>

namespace k3plan {

struct ListOptions {};
Report run_models(const Catalogue& cat);
Report run_gpus(const Catalogue& cat);

struct ShowOptions {
  std::string id;
};
Report run_show(const Catalogue& cat, const ShowOptions& o);

struct WeightsOptions {
  std::string model;
  std::vector<std::string> precisions;  // empty = the standard list
  bool exact = false;                   // Hub ids: fetch the safetensors shard headers (range requests)
};
Report run_weights(const Catalogue& cat, const WeightsOptions& o);

struct KvCommandOptions {
  std::string model;  // empty with the what-if geometry below
  int tp = 1;
  std::string kv_dtype = "auto";
  std::string state_dtype = "fp32";
  std::vector<std::string> contexts;  // "8k", "1M", ...
  std::int64_t users = 1;
  int draft_layers = 0;
  // quick what-if without a model file
  int layers = 0;
  int kv_heads = 0;
  int head_dim = 0;
  bool csv_curve = false;
};
Report run_kv(const Catalogue& cat, const KvCommandOptions& o);

// FitOptions: fit_plan.hpp
Report run_fit(const Catalogue& cat, const FitOptions& o);

Report run_cost(const Catalogue& cat, const CostOptions& o);

// `k3plan report`: plan_report() (report_plan.hpp), then the charts, the page and the SVGs drawn
// from its data and written atomically; Report::data carries every number the page shows.
Report run_report(const Catalogue& cat, const ReportOptions& o);

}  // namespace k3plan
