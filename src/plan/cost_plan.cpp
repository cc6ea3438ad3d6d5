// `k3plan cost`'s content (cost_plan.hpp): the defaults (rate, API prices, scenarios, the 8-GPU
// node) and the calculators of calc/cost.hpp over them.
#include <fmt/format.h>

#include <cmath>
#include <k3plan/cost.hpp>
#include <k3plan/cost_plan.hpp>
#include <k3plan/error.hpp>
#include <k3plan/kv.hpp>
#include <k3plan/params.hpp>

namespace k3plan {

namespace {

double check(const std::optional<double>& v, const char* flag, double lo, double hi, double fallback, bool lo_open = false) {
  if (!v) return fallback;
  const double x = *v;
  if (!std::isfinite(x) || x > hi || x < lo || (lo_open && x <= lo))
    throw InputError(fmt::format("{} {}: must be {} {} and at most {}", flag, x, lo_open ? "above" : "at least", lo, hi));
  return x;
}

void add_unique(std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v)
    if (x == s) return;
  v.push_back(s);
}

}  // namespace

CostPlan plan_cost(const Catalogue& cat, const CostOptions& o) {
  CostPlan p;
  const Prices& prices = cat.prices();
  // rate: flag > GPU's catalogue price (when -g) > documented default
  double rate = prices.default_usd_per_gpu_hour.value;
  p.rate_source = fmt::format("default {:.2f} USD/GPU-hour ({})", rate, prices.default_usd_per_gpu_hour.source);
  if (prices.default_usd_per_gpu_hour.assumed) p.assumptions.push_back("rate: " + prices.default_usd_per_gpu_hour.reason);
  if (!o.gpu.empty()) {
    const Gpu& gpu = cat.gpu(o.gpu);
    rate = gpu.price_usd_per_hour.value;
    p.rate_source =
        fmt::format("{} catalogue price {:.2f} USD/GPU-hour ({}, {})", gpu.id, rate, gpu.price_date, gpu.price_usd_per_hour.source);
    if (gpu.price_usd_per_hour.assumed) p.assumptions.push_back(gpu.id + " price: " + gpu.price_usd_per_hour.reason);
  }
  if (o.rate_usd_per_gpu_hour) {
    rate = check(o.rate_usd_per_gpu_hour, "--rate", 0, 1e4, rate, true);
    p.rate_source = fmt::format("--rate {:.2f} USD/GPU-hour (user)", rate);
  }
  p.usd_per_gpu_hour = rate;
  if (o.gpus < 0 || o.gpus > 100000) throw InputError(fmt::format("--gpus {}: must be between 1 and 100,000", o.gpus));
  const double hours = check(o.hours_per_day, "--hours-per-day", 0, 24, 24, true);
  const double days = p.days_per_month = check(o.days, "--days", 0, 31, prices.hours_per_month / 24, true);
  p.cache_hit = check(o.cache_hit, "--cache-hit", 0, 1, 0);
  p.utilisation = check(o.utilisation, "--utilisation", 0, 1, 1, true);
  p.output_tokens_per_month = check(o.output_tokens_per_month, "--output-tokens-per-month", 0, 1e18, 0);
  p.input_tokens_per_month = check(o.input_tokens_per_month, "--input-tokens-per-month", 0, 1e18, 0);
  p.input_per_output = o.input_per_output ? check(o.input_per_output, "--input-per-output", 0, 1e6, 0)
                      : p.output_tokens_per_month > 0 ? p.input_tokens_per_month / p.output_tokens_per_month
                                                      : 0;

  // API prices for the model
  p.model = resolve_model(cat, o.model);
  p.api_source = "none in the catalogue";
  for (const auto& a : prices.api)
    if (a.model == p.model.id) {
      p.api = {a.output, a.input_cache_miss, a.input_cache_hit};
      p.api_price = a;
      p.api_source = fmt::format("{} {} ({}, {}{})", a.provider, a.model, a.date, a.source, a.verified ? "" : ", unverified");
      break;
    }
  if (o.api_output) p.api.output = check(o.api_output, "--api-output", 0, 1e4, 0);
  if (o.api_input) p.api.input_cache_miss = check(o.api_input, "--api-input", 0, 1e4, 0);
  if (o.api_cache_hit) p.api.input_cache_hit = check(o.api_cache_hit, "--api-cache-hit", 0, 1e4, 0);
  if (o.api_output || o.api_input || o.api_cache_hit) p.api_source = "user flags";

  // rental scenarios: the seed table by default, or the one the flags describe; the break-even is
  // against the always-on cluster (8 GPUs by default: the seed's node)
  if (o.gpus > 0 || o.hours_per_day) {
    p.scenarios.push_back({o.gpus > 0 ? o.gpus : 8, hours, days, rate});
    p.base = p.scenarios.front();
  } else {
    p.scenarios = {{1, 24, days, rate}, {8, 4, days, rate}, {8, 24, days, rate}, {32, 24, days, rate}};
    p.base = RentalScenario{8, 24, days, rate};
  }
  const double rent_month = p.rent_usd_per_month();
  p.break_even = break_even_table(rent_month, p.api, p.input_per_output, p.cache_hit, days);
  p.flip_output_tokens_per_month = p.break_even.back().kind == BreakEven::output_only ? p.break_even.front().output_tokens_per_month
                                                                                      : p.break_even[1].output_tokens_per_month;

  // the workload's own bill
  if (p.output_tokens_per_month > 0 || p.input_tokens_per_month > 0)
    p.bill = api_bill(p.api, p.output_tokens_per_month, p.input_tokens_per_month, p.cache_hit);

  // tier 2: a smaller model on one accelerator (seed rule: 4-bit weights + KV + ~2 GB runtime < VRAM)
  for (double vram_gb : {16.0, 24.0, 48.0, 80.0}) {
    CostPlan::Tier2 t;
    t.vram_bytes = vram_gb * 1e9;
    for (const auto& cm : cat.models()) {
      const auto cp = count_params(cm);
      const double w = weights_uniform(cp, "int4").bytes;
      const double kv = kv_profile(cm, KvOptions{}).bytes_per_sequence(8192);
      if (!fits_single_accelerator(w, kv, t.vram_bytes)) continue;
      t.models.push_back(cm.id);
      if (cp.total > t.largest_params) {
        t.largest_params = cp.total;
        t.largest = cm.id;
      }
    }
    p.tier2.push_back(t);
  }

  // throughput per dollar
  if (o.throughput_tok_s) {
    CostPlan::Throughput t;
    t.tok_s = check(o.throughput_tok_s, "--throughput", 0, 1e9, 0, true);
    t.tokens_per_s_per_usd_hour = tokens_per_s_per_usd_hour(t.tok_s, p.base.gpus, rate);
    t.usd_per_million_busy = usd_per_million_tokens(t.tok_s, p.base.gpus, rate, 1.0);
    t.usd_per_million = usd_per_million_tokens(t.tok_s, p.base.gpus, rate, p.utilisation);
    p.throughput = t;
  }

  // cold start: the checkpoint download runs on the meter
  p.checkpoint_bytes = weights_as_shipped(p.model, count_params(p.model)).bytes;
  p.download_gb_s = check(o.download_gb_s, "--download-gbps", 0, 1e4, 1.0, true);
  p.cold_start_seconds = download_seconds(p.checkpoint_bytes, p.download_gb_s * 1e9);
  p.cold_start_usd = p.cold_start_seconds / 3600 * p.base.gpus * rate;
  for (const auto& a : p.model.assumptions) add_unique(p.assumptions, a.what + ": " + a.reason);
  return p;
}

}  // namespace k3plan
