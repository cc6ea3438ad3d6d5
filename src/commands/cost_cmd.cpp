// `k3plan cost`: rent vs API, break-even, tokens per dollar, cold start and tier advice.
// plan_cost() (src/plan/cost_plan.cpp) computes every figure; this command lays them out and
// writes the chart (--svg).
#include <cmath>
#include <k3plan/commands.hpp>
#include <k3plan/cost_plan.hpp>
#include <k3plan/error.hpp>
#include <k3plan/output_file.hpp>
#include <k3plan/report_html.hpp>
#include <k3plan/units.hpp>

#include "common.hpp"

namespace k3plan {

namespace {

std::string tokens_or_never(double t) { return std::isfinite(t) ? fmt_int(t) : "never"; }

std::string break_even_label(const BreakEven& b) {
  switch (b.kind) {
    case BreakEven::output_only:
      return "output only";
    case BreakEven::input_mix:
      return fmt::format("{:g} input per output, {:.0f}% cached", b.input_per_output, b.cache_hit_fraction * 100);
    case BreakEven::input_mix_no_cache:
      return fmt::format("{:g} input per output, no cache hits", b.input_per_output);
  }
  return "";
}

}  // namespace

Report run_cost(const Catalogue& cat, const CostOptions& o) {
  const CostPlan p = plan_cost(cat, o);
  Report r;
  r.assumptions = p.assumptions;
  const RentalScenario& base = p.base;
  const double rent_month = p.rent_usd_per_month();

  Table rent{fmt::format("Rental at {:.2f} USD per GPU-hour, {:g} days a month", p.usd_per_gpu_hour, p.days_per_month),
             {"GPUs", "hours/day", "GPU-hours/month", "USD/month"},
             {},
             {}};
  r.data["rental"] = nlohmann::json::array();
  for (const auto& s : p.scenarios) {
    rent.rows.push_back(
        {std::to_string(s.gpus), fmt::format("{:g}", s.hours_per_day), fmt_int(s.gpu_hours_per_month()), fmt_int(s.usd_per_month())});
    r.data["rental"].push_back({{"gpus", s.gpus},
                                {"hours_per_day", s.hours_per_day},
                                {"gpu_hours_per_month", s.gpu_hours_per_month()},
                                {"usd_per_month", s.usd_per_month()}});
  }
  r.tables.push_back(rent);

  Table be{
      fmt::format(
          "Break-even: {} GPUs x {:g} h/day ({} USD/month) vs API {} (USD per 1M tokens: output {:.2f}, input {:.2f}, cached input {:.2f})",
          base.gpus, base.hours_per_day, fmt_int(rent_month), p.model.id, p.api.output, p.api.input_cache_miss, p.api.input_cache_hit),
      {"workload", "output tokens/month", "output tokens/day"},
      {},
      {false, true, true}};
  for (const auto& b : p.break_even)
    be.rows.push_back({break_even_label(b), tokens_or_never(b.output_tokens_per_month), tokens_or_never(b.output_tokens_per_day)});
  const BreakEven& b0 = p.break_even.front();
  nlohmann::json jbe = {{"output_tokens_per_month", b0.output_tokens_per_month}, {"output_tokens_per_day", b0.output_tokens_per_day}};
  if (p.break_even.size() > 1)
    jbe["with_input_mix"] = {{"input_per_output", p.input_per_output},
                             {"cache_hit", p.cache_hit},
                             {"output_tokens_per_month", p.break_even[1].output_tokens_per_month},
                             {"no_cache_output_tokens_per_month", p.break_even[2].output_tokens_per_month}};
  r.tables.push_back(be);
  r.data["break_even"] = jbe;
  r.notes.push_back(
      fmt::format("Below {} output tokens a month the API is cheaper; the cluster bills idle hours the same, so it pays only if kept busy.",
                  fmt_int(b0.output_tokens_per_month)));
  if (p.input_per_output > 0 && p.cache_hit > 0)
    r.notes.push_back(
        "Cached prompt-heavy traffic makes the API cheaper per output token, which moves the break-even further out than uncached "
        "traffic.");

  if (p.bill) {
    const ApiBill& bill = *p.bill;
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
                                  fmt_int(p.flip_output_tokens_per_month)));
  } else {
    r.data["tier"] = nullptr;
  }

  Table t2{"Tier 2: catalogue models that fit one accelerator at 4 bits (weights + KV for one 8k user + 2 GB runtime < VRAM)",
           {"VRAM GB", "fits", "largest"},
           {},
           {true, false, false}};
  r.data["tier2"] = nlohmann::json::array();
  for (const auto& t : p.tier2) {
    t2.rows.push_back({fmt::format("{:g}", t.vram_bytes / 1e9), t.models.empty() ? "-" : fmt::format("{}", fmt::join(t.models, ", ")),
                       t.largest.empty() ? "-" : fmt::format("{} ({})", t.largest, fmt_params(t.largest_params))});
    r.data["tier2"].push_back({{"vram_bytes", t.vram_bytes}, {"models", t.models}});
  }
  r.tables.push_back(t2);

  if (p.throughput) {
    const CostPlan::Throughput& tp = *p.throughput;
    Table t{"Throughput per dollar", {"measure", "value"}, {}, {false, true}};
    t.rows.push_back({fmt::format("tok/s for {} GPUs", base.gpus), fmt::format("{:g}", tp.tok_s)});
    t.rows.push_back({"tok/s per (USD/hour)", fmt::format("{:.1f}", tp.tokens_per_s_per_usd_hour)});
    t.rows.push_back({"USD per million tokens (busy)", fmt::format("{:.3f}", tp.usd_per_million_busy)});
    if (p.utilisation < 1)
      t.rows.push_back(
          {fmt::format("USD per million tokens at {:.0f}% load", p.utilisation * 100), fmt::format("{:.3f}", tp.usd_per_million)});
    r.tables.push_back(t);
    r.data["tokens_per_s_per_usd_hour"] = tp.tokens_per_s_per_usd_hour;
    r.data["usd_per_million_tokens"] = tp.usd_per_million;
    r.data["usd_per_million_tokens_busy"] = tp.usd_per_million_busy;
  } else {
    r.data["tokens_per_s_per_usd_hour"] = nullptr;
    r.data["usd_per_million_tokens"] = nullptr;
  }

  r.data["cold_start"] = {{"checkpoint_bytes", p.checkpoint_bytes},
                          {"download_bytes_per_s", p.download_gb_s * 1e9},
                          {"seconds", p.cold_start_seconds},
                          {"usd", p.cold_start_usd}};
  r.notes.push_back(
      fmt::format("Cold start: {} checkpoint at {:g} GB/s = {:.0f} minutes before the first token, {:.0f} USD of {}-GPU time; a staged "
                  "volume removes it on later starts.",
                  human_decimal(p.checkpoint_bytes), p.download_gb_s, p.cold_start_seconds / 60, p.cold_start_usd, base.gpus));
  r.notes.push_back("Prices: " + p.rate_source + "; API: " + p.api_source + ".");

  if (!o.svg_path.empty()) {
    const std::string svg = cost_chart_svg(rent_month, p.api_usd_per_output_token(),
                                           fmt::format("{}: rent {} GPUs vs API, monthly cost", p.model.id, base.gpus));
    try {
      write_file_atomic(o.svg_path, svg);  // exclusive temporary, never a half-written file
    } catch (const InputError& e) {
      throw InputError(fmt::format("--svg {}", e.what()));
    }
    r.notes.push_back("Chart written to " + o.svg_path);
  }
  r.data["model"] = p.model.id;
  r.data["usd_per_gpu_hour"] = p.usd_per_gpu_hour;
  r.data["api_usd_per_million"] = {{"output", p.api.output},
                                   {"input_cache_miss", p.api.input_cache_miss},
                                   {"input_cache_hit", p.api.input_cache_hit},
                                   {"source", p.api_source}};
  r.data["assumptions"] = r.assumptions;
  return r;
}

}  // namespace k3plan
