// `k3plan report`'s content (report_plan.hpp): the same calculators as fit (budgets, KV), cost
// (rent vs API), launch (commands) and perf (speed), every number put into one JSON value from which
// the page and its charts are drawn (src/render/report_html.cpp). plan_report() runs one named
// step per section: resolve_inputs, rank_candidates, then add_header / add_answer /
// add_candidates / add_kv / add_perf / add_cost / add_launch / add_sources, each writing its key
// of the JSON value, and report_assumptions.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <k3plan/budget.hpp>
#include <k3plan/calibrate.hpp>
#include <k3plan/cost.hpp>
#include <k3plan/cost_plan.hpp>
#include <k3plan/engine_flags.hpp>
#include <k3plan/error.hpp>
#include <k3plan/kernel_path.hpp>
#include <k3plan/kv.hpp>
#include <k3plan/launch.hpp>
#include <k3plan/perf.hpp>
#include <k3plan/perf_data.hpp>
#include <k3plan/plan.hpp>
#include <k3plan/report_plan.hpp>
#include <k3plan/units.hpp>
#include <limits>

namespace k3plan {

namespace {

using nlohmann::json;

// The same layout choice as `fit -g GPU [-n N]`.
FitResult fit_one(const Model& m, const Gpu& g, const EngineSettings& s, int n, std::int64_t context, std::int64_t users) {
  if (n <= 0) return search_fit(m, g, s, context, users);
  return fit_on_gpus(m, g, s, n, context, users);
}

std::string today() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

void add_unique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

void add_assumptions(std::vector<std::string>& v, const std::vector<Assumption>& as) {
  for (const auto& a : as) add_unique(v, a.what + ": " + a.reason);
}

// One concurrency sweep of the speed model for a deployment; empty when perf has no factors for it.
json pareto_curve(const EfficiencyTable& table, const Model& m, const Gpu& g, const FitResult& f, const ReportOptions& o,
                  const PlanTargets& sla, const PerfModel& pm, std::vector<std::string>& assumptions, std::string& why_not) {
  PerfEfficiency eff;
  try {
    eff = table.lookup(g, o.engine, precision_key(m));
  } catch (const InputError& e) {
    why_not = e.what();
    return nullptr;
  }
  for (const auto& a : eff.assumptions) add_unique(assumptions, a);
  EngineSettings s = f.settings;
  const auto ctx = static_cast<std::int64_t>(std::ceil(o.isl + o.osl));
  const FitResult at = evaluate_fit(m, g, f.layout, s, std::min<std::int64_t>(ctx, m.max_context), 1);
  const std::int64_t max_running = at.max_users;
  json pts = json::array();
  PerfConfig c;
  c.layout = f.layout;
  c.engine = f.settings.engine;
  c.isl = o.isl;
  c.osl = o.osl;
  c.max_running = max_running;
  c.kernels = kernel_path(o.engine, g, m);
  c.prefill_chunk = f.max_num_batched_tokens;  // the engine's resolved prefill chunk (vLLM batched tokens, SGLang chunked prefill)
  int best = -1;
  double best_tput = -1;
  for (std::int64_t conc = 1; conc <= std::min<std::int64_t>(max_running, 1024); conc *= 2) {
    c.concurrency = static_cast<int>(conc);
    const PerfResult p = estimate_perf(pm, g, eff, c);
    if (!std::isfinite(p.interactivity) || !std::isfinite(p.tput_total_per_gpu) || p.queued) continue;
    const bool ok = p.tpot_ms <= sla.tpot_ms && p.ttft_s * 1000 <= sla.ttft_ms;
    pts.push_back({{"concurrency", conc},
                   {"interactivity_tok_s_user", p.interactivity},
                   {"throughput_per_gpu", p.tput_total_per_gpu},
                   {"output_throughput_per_gpu", p.tput_output_per_gpu},
                   {"ttft_s", p.ttft_s},
                   {"tpot_ms", p.tpot_ms},
                   {"meets_sla", ok}});
    if (ok && p.tput_total_per_gpu > best_tput) {
      best_tput = p.tput_total_per_gpu;
      best = static_cast<int>(pts.size()) - 1;
    }
  }
  if (pts.empty()) {
    why_not = fmt::format("{} on {} x {}: no concurrency the KV pool holds at ISL + OSL", m.id, f.gpus, g.id);
    return nullptr;
  }
  return {{"gpu", g.id},
          {"gpus", f.gpus},
          {"layout", layout_json(f.layout)},
          {"label", fmt::format("{} x {} {}", f.gpus, g.id, layout_text(f.layout))},
          {"max_running", max_running},
          {"efficiency", {{"family", eff.family}, {"engine", eff.engine}}},
          {"points", pts},
          {"operating_point", best >= 0 ? json(best) : json(nullptr)}};
}

// What every section reads: the validated options and what they resolve to.
struct Inputs {
  const Catalogue& cat;
  const ReportOptions& o;
  Model m;
  EngineSettings s;
  std::int64_t context = 0;
  double ipo = 0, hit = 0;  // the API bill's input tokens per output token and cached share
  PlanTargets sla;
  double hours_month = 0;
};

// Validates the options (InputError) and resolves the model, engine, context and service level.
Inputs resolve_inputs(const Catalogue& cat, const ReportOptions& o) {
  Inputs in{cat, o, resolve_model(cat, o.model), {}, 0, 0, 0, {}, 0};
  const Model& m = in.m;
  EngineSettings& s = in.s;
  s.engine = parse_engine(o.engine);
  s.kv_dtype = o.kv_dtype;
  kv_dtype_bytes(o.kv_dtype, m);  // unknown dtype: InputError with a suggestion
  if (o.users < 1 || o.users > 10000000) throw InputError(fmt::format("--users {}: must be between 1 and 10,000,000", o.users));
  if (o.gpu_count < 0 || o.gpu_count > 100000) throw InputError("--gpus: out of range");
  if (o.rate_usd_per_gpu_hour && !(*o.rate_usd_per_gpu_hour > 0 && *o.rate_usd_per_gpu_hour <= 1e4))
    throw InputError("--rate: must be above 0 and at most 10,000");
  in.ipo = o.input_per_output.value_or(0);
  in.hit = o.cache_hit.value_or(0);
  if (!(in.ipo >= 0 && in.ipo <= 1e6)) throw InputError("--input-per-output: must be between 0 and 1,000,000");
  if (!(in.hit >= 0 && in.hit <= 1)) throw InputError("--cache-hit: must be between 0 and 1");
  if (!(o.isl >= 1 && o.isl <= 1e7) || !(o.osl >= 1 && o.osl <= 1e7))
    throw InputError("--isl and --osl: must be between 1 and 10,000,000 tokens");
  if (o.out.empty()) throw InputError("-o: give the HTML file to write");
  in.context = o.context.empty() ? std::min<std::int64_t>(m.max_context, 32768) : parse_context(o.context, "--context");
  PlanOptions sla_options;  // the service level of data/perf/sla.yaml, read as plan reads it
  sla_options.isl = o.isl;
  sla_options.workload = o.workload;
  in.sla = plan_targets(sla_options);
  in.hours_month = cat.prices().hours_per_month;
  return in;
}

// Every GPU asked for (or the catalogue's), fitted as `fit -g GPU [-n N]`: those that fit first,
// then by USD/hour.
std::vector<ReportCandidate> rank_candidates(const Inputs& in) {
  const ReportOptions& o = in.o;
  std::vector<const Gpu*> gpus;
  if (o.gpus.empty())
    for (const auto& g : in.cat.gpus()) gpus.push_back(&g);
  else
    for (const auto& id : o.gpus) {
      const Gpu* g = &in.cat.gpu(id);
      if (std::find(gpus.begin(), gpus.end(), g) == gpus.end()) gpus.push_back(g);
    }
  std::vector<ReportCandidate> cands;
  for (const Gpu* g : gpus) {
    ReportCandidate c;
    c.gpu = g;
    c.fit = fit_one(in.m, *g, in.s, o.gpu_count, in.context, o.users);
    c.usd_per_gpu_hour = o.rate_usd_per_gpu_hour.value_or(g->price_usd_per_hour.value);
    c.usd_per_hour = c.fit.gpus * c.usd_per_gpu_hour;
    c.usd_per_month = RentalScenario{c.fit.gpus, 24, in.hours_month / 24, c.usd_per_gpu_hour}.usd_per_month();
    cands.push_back(c);
  }
  std::stable_sort(cands.begin(), cands.end(), [](const ReportCandidate& a, const ReportCandidate& b) {
    if (a.fit.fits != b.fit.fits) return a.fit.fits;
    return a.usd_per_hour < b.usd_per_hour;
  });
  return cands;
}

// The page's header: the model, the engine and the load asked for.
void add_header(json& d, const Inputs& in, bool any_fit) {
  const Model& m = in.m;
  const ReportOptions& o = in.o;
  d["model"] = m.id;
  d["model_name"] = m.name;
  d["model_path"] = serve_model_path(m, o.model);
  d["engine"] = to_string(in.s.engine);
  d["kv_dtype"] = o.kv_dtype;
  d["context"] = in.context;
  d["users"] = o.users;
  d["gpu_count_requested"] = o.gpu_count;
  d["generated"] = today();
  d["version"] = "0.1.0";
  d["fits"] = any_fit;
}

// The answer: the recommended deployment, its budget and flags.
void add_answer(json& d, const Inputs& in, const ReportCandidate& sub) {
  const FitResult& f = sub.fit;
  const Gpu& g = *sub.gpu;
  const EngineSettings& s = in.s;
  const double hours_month = in.hours_month;
  json ans = {{"fits", f.fits},
              {"gpu", g.id},
              {"gpu_name", g.name},
              {"gpus", f.gpus},
              {"nodes", f.nodes},
              {"layout", layout_json(f.layout)},
              {"layout_text", layout_text(f.layout)},
              {"engine", to_string(s.engine)},
              {"usd_per_gpu_hour", sub.usd_per_gpu_hour},
              {"usd_per_hour", sub.usd_per_hour},
              {"usd_per_month", sub.usd_per_month},
              {"hours_per_month", hours_month},
              {"headroom", f.headroom},
              {"max_users", f.max_users},
              {"kv_cache_tokens", f.kv_cache_tokens},
              {"max_context_one_user", f.max_context_one_user},
              {"memory_fraction", f.utilization_used},
              {"stage", f.limiting.stage},
              {"stages", f.ranks.size()},
              {"per_gpu", budget_json(f.limiting)},
              {"flags", {{"sglang", f.sglang_flags}, {"vllm", f.vllm_flags}}},
              {"reasons", f.reasons},
              {"warnings", f.warnings},
              {"assumptions", f.assumptions}};
  d["answer"] = ans;
}

// Every candidate (the budget chart).
void add_candidates(json& d, const ReportPlan& plan) {
  const std::vector<ReportCandidate>& cands = plan.candidates;
  const ReportCandidate& sub = plan.recommended();
  const bool any_fit = plan.any_fit;
  json jc = json::array();
  for (const auto& c : cands) {
    jc.push_back({{"gpu", c.gpu->id},
                  {"gpus", c.fit.gpus},
                  {"nodes", c.fit.nodes},
                  {"layout", layout_json(c.fit.layout)},
                  {"layout_text", layout_text(c.fit.layout)},
                  {"fits", c.fit.fits},
                  {"recommended", any_fit && &c == &sub},
                  {"max_users", c.fit.max_users},
                  {"headroom", c.fit.headroom},
                  {"usd_per_gpu_hour", c.usd_per_gpu_hour},
                  {"usd_per_hour", c.usd_per_hour},
                  {"usd_per_month", c.usd_per_month},
                  {"memory_fraction", c.fit.utilization_used},
                  {"per_gpu", budget_json(c.fit.limiting)},
                  {"reasons", c.fit.reasons}});
  }
  d["candidates"] = jc;
}

// KV / state per user against context, on the limiting stage of the recommendation.
void add_kv(json& d, const Inputs& in, const ReportCandidate& sub) {
  const Model& m = in.m;
  const EngineSettings& s = in.s;
  const ReportOptions& o = in.o;
  const std::int64_t context = in.context;
  const FitResult& f = sub.fit;
  const Gpu& g = *sub.gpu;
  const EngineModel& em = s.model();
  const Layout& l = f.layout;
  const int attn_tp = em.attention_tp(l);
  const int dp_groups = em.kv_instances(l);
  const int L = m.num_layers();
  const int pp = std::max(1, std::min(l.pp, L));
  const int stage = std::clamp(f.limiting.stage, 0, pp - 1);
  const StageLayers sl = em.stage_layers(L, pp, stage, s.pp_layer_partition);
  KvOptions ko;
  ko.first_layer = sl.first;  // the limiting stage's own layers
  ko.last_layer = sl.first + sl.count;
  ko.tp = attn_tp;
  ko.dcp = l.dcp;
  ko.kv_dtype = s.kv_dtype;
  ko.state_dtype = s.state_dtype;
  ko.draft_layers = stage == pp - 1 ? s.draft_layers : 0;
  const KvProfile kv = kv_profile(m, ko);
  std::vector<std::int64_t> ctxs;
  for (std::int64_t c = 1024; c <= m.max_context; c *= 2) ctxs.push_back(c);
  if (ctxs.empty() || ctxs.back() != m.max_context) ctxs.push_back(m.max_context);
  if (context <= m.max_context && std::find(ctxs.begin(), ctxs.end(), context) == ctxs.end()) ctxs.push_back(context);
  std::sort(ctxs.begin(), ctxs.end());
  json series = json::array();
  for (const auto& lk : kv.layers) {
    const std::string kind = to_string(lk.kind);
    std::string name = lk.block == kind ? kind : fmt::format("{} ({})", lk.block, kind);
    if (lk.state_bytes_per_sequence > 0 && lk.bytes_per_token == 0 && lk.window == 0 && lk.compress_ratio == 0)
      name += " state";
    else if (lk.window > 0)
      name += fmt::format(", window {}", format_context(lk.window));
    name += fmt::format(", {} layer{}", lk.count, lk.count == 1 ? "" : "s");
    if (lk.draft) name += ", draft";
    json ys = json::array();
    for (auto c : ctxs) ys.push_back(lk.bytes_per_sequence(c));
    series.push_back({{"name", name}, {"kind", kind}, {"layers", lk.count}, {"bytes_per_user", ys}});
  }
  json total = json::array();
  for (auto c : ctxs) total.push_back(kv.bytes_per_sequence(c));
  const double pool = f.limiting.kv_pool_bytes + f.limiting.state_pool_bytes + std::max(0.0, f.limiting.free_bytes);
  json table = json::array();
  for (auto c : ctxs) {
    const FitResult x = evaluate_fit(m, g, l, s, c, o.users);
    table.push_back({{"context", c}, {"bytes_per_user", kv.bytes_per_sequence(c)}, {"max_users", x.max_users}});
  }
  d["kv"] = {{"gpu", g.id},
             {"stage", stage},
             {"stages", pp},
             {"layers", sl.count},
             {"attention_tp", attn_tp},
             {"dp_groups", dp_groups},
             {"kv_dtype", kv.kv_dtype},
             {"kv_bytes_per_token", kv.bytes_per_token},
             {"state_bytes_per_sequence", kv.state_bytes_per_sequence},
             {"pool_bytes", pool},
             {"contexts", ctxs},
             {"series", series},
             {"total_bytes_per_user", total},
             {"max_users", table}};
}

// Speed: throughput per GPU against interactivity for up to five candidates that fit, and the
// recommendation's operating point at the SLA. Adds the speed model's assumptions to
// `perf_assumptions`.
void add_perf(json& d, const Inputs& in, const ReportPlan& plan, std::vector<std::string>& perf_assumptions) {
  const Model& m = in.m;
  const ReportOptions& o = in.o;
  const PlanTargets& sla = in.sla;
  const std::vector<ReportCandidate>& cands = plan.candidates;
  const ReportCandidate& sub = plan.recommended();
  const FitResult& f = sub.fit;
  const bool any_fit = plan.any_fit;
  const double hours_month = in.hours_month;
  json curves = json::array();
  std::vector<std::string> skipped;
  try {
    const PerfModel pm = prepare_perf_model(m, o.kv_dtype);
    const EfficiencyTable table = efficiency_for(in.cat, "");  // embedded, with --data calibration files over it
    int shown = 0;
    for (const auto& c : cands) {
      if (shown >= 5) break;
      if (!c.fit.fits) continue;  // the speed of a deployment that cannot hold the load would mislead
      std::string why;
      json cur = pareto_curve(table, m, *c.gpu, c.fit, o, sla, pm, perf_assumptions, why);
      if (cur.is_null()) {
        skipped.push_back(why);
        continue;
      }
      cur["recommended"] = &c == &sub;
      curves.push_back(cur);
      ++shown;
    }
  } catch (const InputError& e) {
    skipped.push_back(e.what());
  }
  json sj = {{"itl_ms", std::isfinite(sla.tpot_ms) ? json(sla.tpot_ms) : json(nullptr)},
             {"ttft_ms", std::isfinite(sla.ttft_ms) ? json(sla.ttft_ms) : json(nullptr)},
             {"min_interactivity_tok_s_user", std::isfinite(sla.tpot_ms) ? json(1000.0 / sla.tpot_ms) : json(nullptr)},
             {"workload", o.workload},
             {"source", sla.sla_source}};
  if (curves.empty()) {
    if (!any_fit) skipped.insert(skipped.begin(), "no candidate holds the load, so there is no deployment to time");
    d["perf"] = {{"available", false}, {"reasons", skipped}, {"sla", sj}};
  } else {
    d["perf"] = {{"available", true}, {"isl", o.isl}, {"osl", o.osl}, {"sla", sj}, {"curves", curves}, {"skipped", skipped}};
    const json& rec = curves.front();
    if (rec["recommended"].get<bool>() && !rec["operating_point"].is_null()) {
      const json& op = rec["points"][rec["operating_point"].get<std::size_t>()];
      d["perf"]["operating_point"] = op;
      const double out_tok_month = op["output_throughput_per_gpu"].get<double>() * f.gpus * hours_month * 3600;
      d["perf"]["output_tokens_per_month_at_sla"] = out_tok_month;
    } else {
      d["perf"]["operating_point"] = nullptr;
      d["perf"]["output_tokens_per_month_at_sla"] = nullptr;
    }
  }
}

// The verdict in words: does renting pay at a load this deployment can serve?
std::string cost_verdict(const json& cj, const FitResult& f, const Model& m) {
  const json& be = cj["break_even_output_tokens_per_month"];
  const json& cap = cj["output_tokens_per_month_at_sla"];
  if (!f.fits) return "No candidate holds the load: these costs are those of the closest deployment tried.";
  if (cj["api_usd_per_million"].is_null()) return fmt::format("No API price for {} in the catalogue: only the rent is shown.", m.id);
  if (be.is_null()) return "The API costs nothing per token at these prices: renting never pays.";
  if (cap.is_number() && cap.get<double>() < be.get<double>())
    return fmt::format(
        "Renting never pays at this size: at the service level the cluster serves at most {} million output tokens a month, "
        "below the break-even of {} million; the API is cheaper at any load it can carry.",
        fmt_int(cap.get<double>() / 1e6), fmt_int(be.get<double>() / 1e6));
  if (cap.is_number())
    return fmt::format(
        "Renting pays between {} and {} million output tokens a month (the break-even and the cluster's capacity at the service level).",
        fmt_int(be.get<double>() / 1e6), fmt_int(cap.get<double>() / 1e6));
  return fmt::format("Renting pays above {} million output tokens a month, if the cluster can serve them.",
                     fmt_int(be.get<double>() / 1e6));
}

// Rent vs API, as `k3plan cost -g GPU -n GPUS` computes it (cost_plan.hpp), against the
// recommendation's capacity at the SLA (d["perf"], so after add_perf).
void add_cost(json& d, const Inputs& in, const ReportCandidate& sub) {
  const ReportOptions& o = in.o;
  const Prices& prices = in.cat.prices();
  const FitResult& f = sub.fit;
  const Gpu& g = *sub.gpu;
  const double ipo = in.ipo, hit = in.hit, hours_month = in.hours_month;
  const json& op = d["perf"].contains("operating_point") ? d["perf"]["operating_point"] : json(nullptr);
  CostOptions co;
  co.model = o.model;
  co.gpu = g.id;
  co.gpus = f.gpus;
  co.rate_usd_per_gpu_hour = o.rate_usd_per_gpu_hour;
  co.input_per_output = ipo;
  co.cache_hit = hit;
  if (!op.is_null() && op["output_throughput_per_gpu"].get<double>() > 0)
    co.throughput_tok_s = op["output_throughput_per_gpu"].get<double>() * f.gpus;  // output tokens a second at the SLA
  const CostPlan cost = plan_cost(in.cat, co);
  const double rent = cost.rent_usd_per_month();
  json api = nullptr;
  if (cost.api_price) {
    const ApiPrice& p = *cost.api_price;
    api = {{"provider", p.provider},
           {"output", p.output},
           {"input_cache_miss", p.input_cache_miss},
           {"input_cache_hit", p.input_cache_hit},
           {"date", p.date},
           {"source", p.source},
           {"verified", p.verified}};
  }
  double qlo = std::numeric_limits<double>::infinity(), qhi = 0;
  for (const auto& q : prices.rental)
    if (q.gpu == g.id && q.kind == "on-demand") {
      qlo = std::min(qlo, q.usd_per_hour);
      qhi = std::max(qhi, q.usd_per_hour);
    }
  auto rent_at = [&](double usd_per_gpu_hour) {  // the same cluster at another quote
    RentalScenario x = cost.base;
    x.usd_per_gpu_hour = usd_per_gpu_hour;
    return x.usd_per_month();
  };
  json cj = {{"gpu", g.id},
             {"gpus", f.gpus},
             {"usd_per_gpu_hour", cost.usd_per_gpu_hour},
             {"rate_source", o.rate_usd_per_gpu_hour ? "--rate" : "catalogue"},
             {"hours_per_month", hours_month},
             {"rent_usd_per_month", rent},
             {"input_per_output", ipo},
             {"cache_hit", hit},
             {"api_usd_per_million", api}};
  if (std::isfinite(qlo) && qhi > 0) {
    cj["on_demand_quotes"] = {{"usd_per_gpu_hour_min", qlo},
                              {"usd_per_gpu_hour_max", qhi},
                              {"rent_usd_per_month_min", rent_at(qlo)},
                              {"rent_usd_per_month_max", rent_at(qhi)}};
  } else {
    cj["on_demand_quotes"] = nullptr;
  }
  if (!api.is_null()) {
    const double be = cost.flip_output_tokens_per_month;
    cj["api_usd_per_output_token"] = cost.api_usd_per_output_token();
    cj["break_even_output_tokens_per_month"] = std::isfinite(be) ? json(be) : json(nullptr);
    cj["break_even_output_tokens_per_day"] = std::isfinite(be) ? json(be / cost.days_per_month) : json(nullptr);
  } else {
    cj["api_usd_per_output_token"] = nullptr;
    cj["break_even_output_tokens_per_month"] = nullptr;
    cj["break_even_output_tokens_per_day"] = nullptr;
  }
  cj["output_tokens_per_month_at_sla"] =
      d["perf"].contains("output_tokens_per_month_at_sla") ? d["perf"]["output_tokens_per_month_at_sla"] : json(nullptr);
  cj["rent_usd_per_million_output_at_sla"] = cost.throughput ? json(cost.throughput->usd_per_million_busy) : json(nullptr);
  cj["verdict"] = cost_verdict(cj, f, in.m);
  d["cost"] = cj;
}

// The launch commands of the recommendation (none when nothing fits).
void add_launch(json& d, const Inputs& in, const ReportCandidate& sub) {
  const ReportOptions& o = in.o;
  const Model& m = in.m;
  const EngineSettings& s = in.s;
  const std::int64_t context = in.context;
  const FitResult& f = sub.fit;
  const Gpu& g = *sub.gpu;
  if (!f.fits) {
    d["launch"] = nullptr;
    return;
  }
  Deployment dep;
  dep.file = "<report>";
  dep.model = o.model;
  dep.gpu = g.id;
  dep.gpus = f.gpus;
  dep.nodes = f.nodes;
  dep.engine = s.engine;
  dep.layout = f.layout;
  dep.layout_given = true;
  dep.context = context;
  dep.users = o.users;
  dep.kv_dtype = o.kv_dtype;
  dep.engine_version = s.engine_version;
  const LaunchPlan lp = make_launch_plan(dep, m, f.layout, f.gpus, f.nodes, g.gpus_per_node, context, f.utilization_used, f.max_num_seqs);
  d["launch"] = {{"script", emit_shell(lp)},
                 {"commands", launch_commands_json(lp)},
                 {"health_check", "curl -sf " + lp.health_url},
                 {"ready_line", lp.ready_line},
                 {"notes", lp.notes},
                 {"error", lp.error}};
}

// The sources of every figure the page uses.
void add_sources(json& d, const Inputs& in, const ReportPlan& plan) {
  const Model& m = in.m;
  const ReportOptions& o = in.o;
  const PlanTargets& sla = in.sla;
  const Prices& prices = in.cat.prices();
  const double hours_month = in.hours_month;
  const std::vector<ReportCandidate>& cands = plan.candidates;
  const Gpu& g = *plan.recommended().gpu;
  json src = json::array();
  auto add = [&](const std::string& what, const std::string& value, const std::string& date, const std::string& source, bool assumed) {
    src.push_back({{"what", what}, {"value", value}, {"date", date}, {"source", source}, {"assumed", assumed}});
  };
  add(fmt::format("{} geometry", m.id), m.hf_repo.empty() ? m.name : m.hf_repo, m.date, m.source.empty() ? m.origin : m.source, false);
  for (const auto& c : cands) {
    const Gpu& x = *c.gpu;
    add(fmt::format("{} memory", x.id), fmt::format("{:g} MiB reported", x.memory_reported_mib.value), "",
        x.memory_reported_mib.source.empty() ? x.source : x.memory_reported_mib.source, x.memory_reported_mib.assumed);
    add(fmt::format("{} price", x.id), fmt::format("{:.2f} USD/GPU-hour", x.price_usd_per_hour.value), x.price_date,
        x.price_usd_per_hour.source, x.price_usd_per_hour.assumed);
  }
  add(fmt::format("{} specifications", g.id), g.name, "", g.source, false);
  for (const auto& q : prices.rental)
    if (q.gpu == g.id)
      add(fmt::format("{} {} quote", g.id, q.kind), fmt::format("{:.2f} USD/GPU-hour", q.usd_per_hour), q.date, q.source, !q.verified);
  for (const auto& p : prices.api)
    if (p.model == m.id)
      add(fmt::format("{} API ({})", m.id, p.provider),
          fmt::format("output {:.2f}, input {:.2f}, cached input {:.3g} USD per 1M tokens", p.output, p.input_cache_miss,
                      p.input_cache_hit),
          p.date, p.source, !p.verified);
  add("hours per month", fmt::format("{:g}", hours_month), "", "data/prices.yaml", false);
  if (!sla.sla_source.empty())
    add(fmt::format("service level ({})", o.workload),
        fmt::format("ITL {:g} ms, TTFT {:g} ms at ISL {:g}", sla.tpot_ms, sla.ttft_ms, o.isl), "", "data/perf/sla.yaml: " + sla.sla_source,
        !sla.assumptions.empty());
  d["sources"] = src;
}

// Every assumption the page rests on (the speed model's only when it drew a curve).
std::vector<std::string> report_assumptions(const json& d, const Inputs& in, const ReportPlan& plan,
                                            const std::vector<std::string>& perf_assumptions) {
  const ReportOptions& o = in.o;
  const Prices& prices = in.cat.prices();
  const FitResult& f = plan.recommended().fit;
  const Gpu& g = *plan.recommended().gpu;
  const Model& m = in.m;
  std::vector<std::string> out = plan.assumptions;
  for (const auto& a : f.assumptions) add_unique(out, a);
  add_assumptions(out, m.assumptions);
  add_assumptions(out, g.assumptions);
  if (!o.rate_usd_per_gpu_hour && prices.default_usd_per_gpu_hour.assumed && g.price_usd_per_hour.value <= 0)
    add_unique(out, "rate: " + prices.default_usd_per_gpu_hour.reason);
  if (d["perf"]["available"].get<bool>())
    for (const auto& a : perf_assumptions) add_unique(out, a);
  return out;
}

}  // namespace

ReportPlan plan_report(const Catalogue& cat, const ReportOptions& o) {
  const Inputs in = resolve_inputs(cat, o);
  ReportPlan plan;
  plan.model_id = in.m.id;
  plan.engine = in.s.engine;
  plan.context = in.context;
  plan.users = o.users;
  plan.hours_per_month = in.hours_month;
  plan.candidates = rank_candidates(in);
  plan.any_fit = !plan.candidates.empty() && plan.candidates.front().fit.fits;
  const ReportCandidate& sub = plan.recommended();  // the recommendation (or, when nothing fits, the cheapest tried)
  json& d = plan.data;
  add_header(d, in, plan.any_fit);
  add_answer(d, in, sub);
  add_candidates(d, plan);
  add_kv(d, in, sub);
  std::vector<std::string> perf_assumptions = in.sla.assumptions;
  add_perf(d, in, plan, perf_assumptions);
  add_cost(d, in, sub);
  add_launch(d, in, sub);
  add_sources(d, in, plan);
  plan.assumptions = report_assumptions(d, in, plan, perf_assumptions);
  d["assumptions"] = plan.assumptions;
  return plan;
}

}  // namespace k3plan
