// `k3plan cost`: rent vs API, break-even, tokens per dollar, cold start and tier advice.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <k3plan/commands.hpp>
#include <k3plan/cost.hpp>
#include <k3plan/error.hpp>
#include <k3plan/kv.hpp>
#include <k3plan/output_file.hpp>
#include <k3plan/params.hpp>
#include <k3plan/report_html.hpp>
#include <k3plan/units.hpp>

#include "common.hpp"

namespace k3plan {

namespace {
double check(const std::optional<double>& v, const char* flag, double lo, double hi, double fallback, bool lo_open = false) {
  if (!v) return fallback;
  const double x = *v;
  if (!std::isfinite(x) || x > hi || x < lo || (lo_open && x <= lo))
    throw InputError(fmt::format("{} {}: must be {} {} and at most {}", flag, x, lo_open ? "above" : "at least", lo, hi));
  return x;
}
}  // namespace

Report run_cost(const Catalogue& cat, const CostOptions& o) {
  Report r;
  const Prices& prices = cat.prices();
  // rate: flag > GPU's catalogue price (when -g) > documented default
  double rate = prices.default_usd_per_gpu_hour.value;
  std::string rate_src = fmt::format("default {:.2f} USD/GPU-hour ({})", rate, prices.default_usd_per_gpu_hour.source);
  if (prices.default_usd_per_gpu_hour.assumed) r.assumptions.push_back("rate: " + prices.default_usd_per_gpu_hour.reason);
  const Gpu* gpu = nullptr;
  if (!o.gpu.empty()) {
    gpu = &cat.gpu(o.gpu);
    rate = gpu->price_usd_per_hour.value;
    rate_src =
        fmt::format("{} catalogue price {:.2f} USD/GPU-hour ({}, {})", gpu->id, rate, gpu->price_date, gpu->price_usd_per_hour.source);
    if (gpu->price_usd_per_hour.assumed) r.assumptions.push_back(gpu->id + " price: " + gpu->price_usd_per_hour.reason);
  }
  if (o.rate_usd_per_gpu_hour) {
    rate = check(o.rate_usd_per_gpu_hour, "--rate", 0, 1e4, rate, true);
    rate_src = fmt::format("--rate {:.2f} USD/GPU-hour (user)", rate);
  }
  if (o.gpus < 0 || o.gpus > 100000) throw InputError(fmt::format("--gpus {}: must be between 1 and 100,000", o.gpus));
  const double hours = check(o.hours_per_day, "--hours-per-day", 0, 24, 24, true);
  const double days = check(o.days, "--days", 0, 31, prices.hours_per_month / 24, true);
  const double hit = check(o.cache_hit, "--cache-hit", 0, 1, 0);
  const double util = check(o.utilisation, "--utilisation", 0, 1, 1, true);
  const double out_tokens = check(o.output_tokens_per_month, "--output-tokens-per-month", 0, 1e18, 0);
  const double in_tokens = check(o.input_tokens_per_month, "--input-tokens-per-month", 0, 1e18, 0);

  // API prices for the model
  const Model model = resolve_model(cat, o.model);
  ApiRates api;
  std::string api_src = "none in the catalogue";
  for (const auto& p : prices.api)
    if (p.model == model.id) {
      api = {p.output, p.input_cache_miss, p.input_cache_hit};
      api_src = fmt::format("{} {} ({}, {}{})", p.provider, p.model, p.date, p.source, p.verified ? "" : ", unverified");
      break;
    }
  if (o.api_output) api.output = check(o.api_output, "--api-output", 0, 1e4, 0);
  if (o.api_input) api.input_cache_miss = check(o.api_input, "--api-input", 0, 1e4, 0);
  if (o.api_cache_hit) api.input_cache_hit = check(o.api_cache_hit, "--api-cache-hit", 0, 1e4, 0);
  if (o.api_output || o.api_input || o.api_cache_hit) api_src = "user flags";

  // rental scenarios: the seed table by default, or the one the flags describe
  std::vector<RentalScenario> sc;
  if (o.gpus > 0 || o.hours_per_day)
    sc.push_back({o.gpus > 0 ? o.gpus : 8, hours, days, rate});
  else
    sc = {{1, 24, days, rate}, {8, 4, days, rate}, {8, 24, days, rate}, {32, 24, days, rate}};
  Table rent{fmt::format("Rental at {:.2f} USD per GPU-hour, {:g} days a month", rate, days),
             {"GPUs", "hours/day", "GPU-hours/month", "USD/month"},
             {},
             {}};
  r.data["rental"] = nlohmann::json::array();
  for (const auto& s : sc) {
    rent.rows.push_back(
        {std::to_string(s.gpus), fmt::format("{:g}", s.hours_per_day), fmt_int(s.gpu_hours_per_month()), fmt_int(s.usd_per_month())});
    r.data["rental"].push_back({{"gpus", s.gpus},
                                {"hours_per_day", s.hours_per_day},
                                {"gpu_hours_per_month", s.gpu_hours_per_month()},
                                {"usd_per_month", s.usd_per_month()}});
  }
  r.tables.push_back(rent);

  // break-even against the always-on cluster (8 GPUs by default: the seed's node)
  const RentalScenario base = o.gpus > 0 || o.hours_per_day ? sc.front() : RentalScenario{8, 24, days, rate};
  const double rent_month = base.usd_per_month();
  const double ratio = out_tokens > 0 ? in_tokens / out_tokens : 0;
  Table be{
      fmt::format(
          "Break-even: {} GPUs x {:g} h/day ({} USD/month) vs API {} (USD per 1M tokens: output {:.2f}, input {:.2f}, cached input {:.2f})",
          base.gpus, base.hours_per_day, fmt_int(rent_month), model.id, api.output, api.input_cache_miss, api.input_cache_hit),
      {"workload", "output tokens/month", "output tokens/day"},
      {},
      {false, true, true}};
  nlohmann::json jbe;
  auto be_row = [&](const std::string& name, double inp, double h) {
    const double t = break_even_output_tokens(rent_month, api, inp, h);
    be.rows.push_back({name, std::isfinite(t) ? fmt_int(t) : "never", std::isfinite(t) ? fmt_int(t / days) : "never"});
    return t;
  };
  const double t0 = be_row("output only", 0, 0);
  jbe = {{"output_tokens_per_month", t0}, {"output_tokens_per_day", t0 / days}};
  if (ratio > 0) {
    const double tm = be_row(fmt::format("{:g} input per output, {:.0f}% cached", ratio, hit * 100), ratio, hit);
    const double tn = be_row(fmt::format("{:g} input per output, no cache hits", ratio), ratio, 0);
    jbe["with_input_mix"] = {
        {"input_per_output", ratio}, {"cache_hit", hit}, {"output_tokens_per_month", tm}, {"no_cache_output_tokens_per_month", tn}};
  }
  r.tables.push_back(be);
  r.data["break_even"] = jbe;
  r.notes.push_back(
      fmt::format("Below {} output tokens a month the API is cheaper; the cluster bills idle hours the same, so it pays only if kept busy.",
                  fmt_int(t0)));
  if (ratio > 0 && hit > 0)
    r.notes.push_back(
        "Cached prompt-heavy traffic makes the API cheaper per output token, which moves the break-even further out than uncached "
        "traffic.");

  // the workload's own bill
  if (out_tokens > 0 || in_tokens > 0) {
    const ApiBill bill = api_bill(api, out_tokens, in_tokens, hit);
    Table w{"This workload per month", {"tier", "USD/month", "detail"}, {}, {false, true, false}};
    w.rows.push_back({"API (tier 3)", fmt_int(bill.total()),
                      fmt::format("output {} + cached input {} + uncached input {}", fmt_int(bill.output_usd), fmt_int(bill.input_hit_usd),
                                  fmt_int(bill.input_miss_usd))});
    w.rows.push_back({"rent (tier 1)", fmt_int(rent_month), fmt::format("{} GPUs x {:g} h/day", base.gpus, base.hours_per_day)});
    r.tables.push_back(w);
    const bool rent_wins = rent_month < bill.total();
    r.data["tier"] = {{"cheapest", rent_wins ? "rent" : "api"},
                      {"api_usd_per_month", bill.total()},
                      {"rent_usd_per_month", rent_month},
                      {"api_parts_usd",
                       {{"output", bill.output_usd}, {"input_cache_hit", bill.input_hit_usd}, {"input_cache_miss", bill.input_miss_usd}}},
                      {"saving_usd_per_month", std::abs(rent_month - bill.total())}};
    r.notes.push_back(fmt::format("Cheapest for this workload: {} by {} USD/month; the answer flips at {} output tokens a month.",
                                  rent_wins ? "renting" : "the API", fmt_int(std::abs(rent_month - bill.total())),
                                  fmt_int(ratio > 0 ? break_even_output_tokens(rent_month, api, ratio, hit) : t0)));
  } else {
    r.data["tier"] = nullptr;
  }

  // tier 2: a smaller model on one accelerator (seed rule: 4-bit weights + KV + ~2 GB runtime < VRAM)
  {
    Table t2{"Tier 2: catalogue models that fit one accelerator at 4 bits (weights + KV for one 8k user + 2 GB runtime < VRAM)",
             {"VRAM GB", "fits", "largest"},
             {},
             {true, false, false}};
    nlohmann::json j2 = nlohmann::json::array();
    for (double vram_gb : {16.0, 24.0, 48.0, 80.0}) {
      std::vector<std::string> fit_ids;
      std::string largest = "-";
      double largest_p = 0;
      nlohmann::json ids = nlohmann::json::array();
      for (const auto& cm : cat.models()) {
        const auto cp = count_params(cm);
        const double w = weights_uniform(cp, "int4").bytes;
        const double kv = kv_profile(cm, KvOptions{}).bytes_per_sequence(8192);
        if (!fits_single_accelerator(w, kv, vram_gb * 1e9)) continue;
        fit_ids.push_back(cm.id);
        ids.push_back(cm.id);
        if (cp.total > largest_p) {
          largest_p = cp.total;
          largest = fmt::format("{} ({})", cm.id, fmt_params(cp.total));
        }
      }
      t2.rows.push_back({fmt::format("{:g}", vram_gb), fit_ids.empty() ? "-" : fmt::format("{}", fmt::join(fit_ids, ", ")), largest});
      j2.push_back({{"vram_bytes", vram_gb * 1e9}, {"models", ids}});
    }
    r.tables.push_back(t2);
    r.data["tier2"] = j2;
  }

  // throughput per dollar
  if (o.throughput_tok_s) {
    const double tps = check(o.throughput_tok_s, "--throughput", 0, 1e9, 0, true);
    const double per = tokens_per_s_per_usd_hour(tps, base.gpus, rate);
    const double usd_m = usd_per_million_tokens(tps, base.gpus, rate, 1.0);
    const double usd_m_u = usd_per_million_tokens(tps, base.gpus, rate, util);
    Table t{"Throughput per dollar", {"measure", "value"}, {}, {false, true}};
    t.rows.push_back({fmt::format("tok/s for {} GPUs", base.gpus), fmt::format("{:g}", tps)});
    t.rows.push_back({"tok/s per (USD/hour)", fmt::format("{:.1f}", per)});
    t.rows.push_back({"USD per million tokens (busy)", fmt::format("{:.3f}", usd_m)});
    if (util < 1) t.rows.push_back({fmt::format("USD per million tokens at {:.0f}% load", util * 100), fmt::format("{:.3f}", usd_m_u)});
    r.tables.push_back(t);
    r.data["tokens_per_s_per_usd_hour"] = per;
    r.data["usd_per_million_tokens"] = usd_m_u;
    r.data["usd_per_million_tokens_busy"] = usd_m;
  } else {
    r.data["tokens_per_s_per_usd_hour"] = nullptr;
    r.data["usd_per_million_tokens"] = nullptr;
  }

  // cold start: the checkpoint download runs on the meter
  const double ckpt = weights_as_shipped(model, count_params(model)).bytes;
  const double gbps = check(o.download_gb_s, "--download-gbps", 0, 1e4, 1.0, true);
  const double secs = download_seconds(ckpt, gbps * 1e9);
  const double cold_usd = secs / 3600 * base.gpus * rate;
  r.data["cold_start"] = {{"checkpoint_bytes", ckpt}, {"download_bytes_per_s", gbps * 1e9}, {"seconds", secs}, {"usd", cold_usd}};
  r.notes.push_back(
      fmt::format("Cold start: {} checkpoint at {:g} GB/s = {:.0f} minutes before the first token, {:.0f} USD of {}-GPU time; a staged "
                  "volume removes it on later starts.",
                  human_decimal(ckpt), gbps, secs / 60, cold_usd, base.gpus));
  r.notes.push_back("Prices: " + rate_src + "; API: " + api_src + ".");
  add_assumptions(r, model.assumptions);

  if (!o.svg_path.empty()) {
    const double usd_per_output_token = (api.output + ratio * (hit * api.input_cache_hit + (1 - hit) * api.input_cache_miss)) / 1e6;
    const std::string svg =
        cost_chart_svg(rent_month, usd_per_output_token, fmt::format("{}: rent {} GPUs vs API, monthly cost", model.id, base.gpus));
    try {
      write_file_atomic(o.svg_path, svg);  // exclusive temporary, never a half-written file
    } catch (const InputError& e) {
      throw InputError(fmt::format("--svg {}", e.what()));
    }
    r.notes.push_back("Chart written to " + o.svg_path);
  }
  r.data["model"] = model.id;
  r.data["usd_per_gpu_hour"] = rate;
  r.data["api_usd_per_million"] = {
      {"output", api.output}, {"input_cache_miss", api.input_cache_miss}, {"input_cache_hit", api.input_cache_hit}, {"source", api_src}};
  r.data["assumptions"] = r.assumptions;
  return r;
}

}  // namespace k3plan
