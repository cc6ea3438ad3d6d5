#pragma once
// The content of `k3plan cost` (src/plan/cost_plan.cpp): which rate and API prices apply, the
// rental scenarios, the break-even against the always-on cluster, the workload's API bill, the
// tier-2 models, throughput per dollar and the cold start. The formulas are calc/cost.hpp's (an API
// bill is the sum of its parts); this layer chooses the defaults and what to evaluate. The command
// (src/commands/cost_cmd.cpp) turns it into tables and writes the chart.
#include <k3plan/catalogue.hpp>
#include <k3plan/cost.hpp>
#include <optional>
#include <string>
#include <vector>

namespace k3plan {

struct CostOptions {
  std::string model = "kimi-k3";
  std::string gpu;
  int gpus = 0;
  std::optional<double> rate_usd_per_gpu_hour;
  std::optional<double> hours_per_day;
  std::optional<double> days;
  std::optional<double> output_tokens_per_month;
  std::optional<double> input_tokens_per_month;
  // the workload's input tokens per output token without its volume (report's --input-per-output);
  // unset: input / output tokens a month
  std::optional<double> input_per_output;
  std::optional<double> cache_hit;
  std::optional<double> api_output, api_input, api_cache_hit;
  std::optional<double> throughput_tok_s;
  std::optional<double> download_gb_s;
  std::optional<double> utilisation;
  std::string svg_path;
};

struct CostPlan {
  Model model;
  double usd_per_gpu_hour = 0;  // --rate, else the GPU's catalogue price (-g), else the documented default
  std::string rate_source;      // for people: which of those, with its date and source
  ApiRates api;                 // the catalogue's prices for the model, overridden by the --api-* flags
  std::string api_source;
  std::optional<ApiPrice> api_price;  // the catalogue's row for the model (its figures, before the --api-* flags)
  double days_per_month = 30;
  double cache_hit = 0;
  double utilisation = 1;
  double output_tokens_per_month = 0, input_tokens_per_month = 0;
  double input_per_output = 0;  // input tokens per output token of the workload (0 without output tokens)
  // the seed table (1 x 24 h, 8 x 4 h, 8 x 24 h, 32 x 24 h), or the one scenario -n / --hours-per-day give
  std::vector<RentalScenario> scenarios;
  // the always-on cluster the break-even, the bill, throughput and cold start are about (8 GPUs,
  // the seed's node, unless -n / --hours-per-day give one)
  RentalScenario base;
  std::vector<BreakEven> break_even;  // break_even_table() against base
  std::optional<ApiBill> bill;        // the workload's API bill, when it has tokens
  // the output tokens a month at which the cheapest choice for the workload flips (its input mix's
  // break-even; output only without one)
  double flip_output_tokens_per_month = 0;
  struct Tier2 {
    double vram_bytes = 0;
    std::vector<std::string> models;  // catalogue models that fit one accelerator of this size at 4 bits
    std::string largest;              // "" = none
    double largest_params = 0;
  };
  std::vector<Tier2> tier2;  // 16, 24, 48 and 80 GB
  struct Throughput {
    double tok_s = 0;
    double tokens_per_s_per_usd_hour = 0;
    double usd_per_million_busy = 0, usd_per_million = 0;  // at full load and at the utilisation
  };
  std::optional<Throughput> throughput;  // with --throughput
  double checkpoint_bytes = 0, download_gb_s = 1, cold_start_seconds = 0, cold_start_usd = 0;
  std::vector<std::string> assumptions;

  double rent_usd_per_month() const { return base.usd_per_month(); }
  double api_usd_per_output_token() const { return k3plan::api_usd_per_output_token(api, input_per_output, cache_hit); }
};

// Validates the options (InputError naming the flag) and computes every figure; writes nothing.
CostPlan plan_cost(const Catalogue& cat, const CostOptions& o);

}  // namespace k3plan
