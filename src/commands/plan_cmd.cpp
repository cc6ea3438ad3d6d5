// `k3plan plan`: the search of src/plan/search.cpp as a report (winner, Pareto front, runners-up).
#include <k3plan/engine_flags.hpp>
#include <k3plan/perf_cmd.hpp>

#include "plan_text.hpp"

namespace k3plan {

Report run_plan(const Catalogue& cat, const PlanOptions& o) {
  const PlanResult res = search_plan(cat, o);
  const PlanTargets& tg = res.targets;
  const PlanCandidate* win = res.win();
  auto target = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  const std::string ttft_src = tg.ttft_tier_tokens > 0
                                   ? fmt::format("tier up to {} prompt tokens ({})", fmt_int(tg.ttft_tier_tokens), tg.ttft_source)
                                   : tg.ttft_source;
  auto miss = [&](const PlanCandidate& c) { return plan_miss(res, c); };
  auto launch = [&](const PlanCandidate& c) { return plan_launch(res, o, c); };
  auto cfg_text = [&](const PlanCandidate& c) { return plan_config_text(res, c); };
  auto cand_json = [&](const PlanCandidate& c) { return plan_candidate_json(res, o, c); };
  auto cand = [&](int i) -> const PlanCandidate& { return res.candidates[static_cast<std::size_t>(i)]; };

  Report r;
  r.assumptions.push_back(kModelAssumption);
  add_lines(r, tg.assumptions);
  r.data["model"] = res.base.id;
  r.data["isl"] = o.isl;
  r.data["osl"] = o.osl;
  r.data["sla"] = {{"ttft_ms", target(tg.ttft_ms)},
                   {"ttft_source", ttft_src},
                   {"tpot_ms", target(tg.tpot_ms)},
                   {"tpot_source", tg.tpot_source},
                   {"workload", o.workload}};
  r.data["rate_source"] = o.rate_source;
  r.data["risk"] = o.risk;
  r.data["disagg"] = o.disagg;
  if (o.risk == "p90")
    r.notes.push_back(
        "--risk p90: every configuration is checked and ranked at the pessimistic end of its slice's out-of-sample band "
        "(data/perf/accuracy.yaml: TTFT and TPOT raised, throughput lowered by their 90th-percentile error); the figures shown are the "
        "median predictions");
  r.data["search"] = {{"cells", res.search_cells},
                      {"candidates", res.evaluated},
                      {"fit_checks", res.fit_checks},
                      {"disaggregated_candidates", res.disagg_evaluated},
                      {"ms", res.search_ms},
                      {"perf_candidates_per_s", res.perf_seconds > 0 ? static_cast<double>(res.evaluated) / res.perf_seconds : 0.0}};

  Table head{fmt::format("{}: ISL {} / OSL {}; SLA TTFT <= {} ms ({}), TPOT <= {} ms ({}); ranked by USD per million tokens ({} prices)",
                         res.base.id, fmt_num(o.isl), fmt_num(o.osl), fmt_num(tg.ttft_ms), ttft_src, fmt_num(tg.tpot_ms), tg.tpot_source,
                         o.rate_source),
             {"", ""},
             {},
             {false, false}};
  if (win) {
    const Gpu& g = res.gpu_of(*win);
    const PrecisionOption& po = res.precision_of(*win);
    head.title = "Winner. " + head.title;
    head.rows.push_back({"configuration", cfg_text(*win) + fmt::format(" ({} node{})", win->nodes, win->nodes > 1 ? "s" : "")});
    head.rows.push_back({"concurrency", fmt::format("{} users per instance (the KV pool holds {})", win->conc,
                                                    fmt_int(static_cast<double>(win->max_users)))});
    if (win->disagg)
      head.rows.push_back({"disaggregated", fmt::format("prefill {}, decode {}; KV transfer {:.1f} ms per request; the rate is set by {}",
                                                        plan_side_text(win->prefill_side), plan_side_text(win->decode_side),
                                                        win->kv_transfer_ms, win->disagg_limit)});
    head.rows.push_back(
        {"TTFT / TPOT", fmt::format("{:.3f} s / {:.2f} ms ({:.1f} tok/s per user)", win->p.ttft_s, win->p.tpot_ms, win->p.interactivity)});
    const int node = g.gpus_per_node;  // a node runs gpus_per_node / instance-size instances
    head.rows.push_back({"throughput", fmt::format("{} tok/s per GPU total ({} output); per {}-GPU node {} tok/s total, {} output",
                                                   fmt_num(win->p.tput_total_per_gpu), fmt_num(win->p.tput_output_per_gpu), node,
                                                   fmt_int(win->p.tput_total_per_gpu * node), fmt_int(win->p.tput_output_per_gpu * node))});
    head.rows.push_back({"cost", fmt::format("{:.3f} USD per million tokens; tok/s per USD/hour {:.1f} total, {:.1f} output; {:.2f} "
                                             "USD/hour per instance ({:.2f} per GPU-hour)",
                                             win->usd_per_m, win->p.tput_total_per_gpu * win->gpus / win->usd_per_hour,
                                             win->p.tput_output_per_gpu * win->gpus / win->usd_per_hour, win->usd_per_hour,
                                             win->usd_per_hour / win->gpus)});
    if (o.users || o.requests_per_s)
      head.rows.push_back(
          {"fleet", fmt::format("{:.0f} instance(s) = {:.0f} GPUs, {:.2f} USD/hour for {}", win->replicas, win->replicas * win->gpus,
                                win->replicas * win->usd_per_hour,
                                o.users ? fmt::format("{:g} users", *o.users) : fmt::format("{:g} requests/s", *o.requests_per_s))});
    head.rows.push_back({"bound", win->p.bound});
    head.rows.push_back({"launch", launch(*win)});
    if (po.requantised)
      head.rows.push_back(
          {"note", fmt::format("weights requantised to {}: needs a checkpoint in that format (not the one shipped)", po.label)});
    r.data["winner"] = cand_json(*win);
    r.data["winner"]["launch"] = launch(*win);
    r.data["winner"]["requantised"] = po.requantised;
    r.exit_code = 0;
  } else {
    head.title = "No configuration meets the SLA. " + head.title;
    head.rows.push_back(
        {"result", res.candidates.empty() ? "nothing fits" : "every configuration that fits misses the SLA; see the closest below"});
    r.data["winner"] = nullptr;
    r.exit_code = 1;
  }
  r.tables.push_back(head);

  // Pareto front: throughput per GPU against interactivity over every configuration that fits
  Table pt{"Pareto front: throughput per GPU against interactivity (every configuration that fits)",
           {"tok/s/user", "tok/s/GPU", "configuration", "conc", "TTFT s", "USD/M tok", "SLA"},
           {},
           {true, true, false, true, true, true, false}};
  r.data["pareto"] = nlohmann::json::array();
  const std::size_t max_rows = 16, nf = res.pareto.size();
  for (std::size_t i = 0; i < nf; ++i) {
    const PlanCandidate& c = cand(res.pareto[i]);
    r.data["pareto"].push_back(cand_json(c));
    const bool show = nf <= max_rows || i % ((nf + max_rows - 1) / max_rows) == 0 || i + 1 == nf || &c == win;
    if (show)
      pt.rows.push_back({fmt_num(c.p.interactivity), fmt_num(c.p.tput_total_per_gpu), cfg_text(c), std::to_string(c.conc),
                         fmt_num(c.p.ttft_s), fmt::format("{:.3f}", c.usd_per_m), c.sla_ok ? (&c == win ? "ok (winner)" : "ok") : miss(c)});
  }
  if (nf > max_rows) pt.title += fmt::format(" ({} of {} points shown; all in JSON)", pt.rows.size(), nf);
  r.tables.push_back(pt);

  // why the runners-up lost: the best of every GPU type
  Table ru{"Runners-up: the best of each GPU and why it lost",
           {"gpu", "best configuration", "conc", "tok/s/GPU", "TPOT ms", "USD/M tok", "why it lost"},
           {},
           {false, false, true, true, true, true, false}};
  r.data["runners_up"] = nlohmann::json::array();
  for (const auto& x : res.runners_up) {
    const Gpu& g = *res.gpus[static_cast<std::size_t>(x.gpu_index)];
    const PlanCandidate* c = x.cand >= 0 ? &cand(x.cand) : nullptr;
    const std::string why = plan_why(res, x);
    nlohmann::json j = c ? cand_json(*c) : nlohmann::json{{"gpu", g.id}};
    j["why"] = why;
    r.data["runners_up"].push_back(j);
    if (c)
      ru.rows.push_back({g.id, cfg_text(*c), std::to_string(c->conc), fmt_num(c->p.tput_total_per_gpu), fmt_num(c->p.tpot_ms),
                         fmt::format("{:.3f}", c->usd_per_m), why});
    else
      ru.rows.push_back({g.id, "-", "-", "-", "-", "-", why});
  }
  r.tables.push_back(ru);
  if (win && !res.next_cheapest.empty()) {
    Table nx{"Next-cheapest configurations that meet the SLA",
             {"configuration", "conc", "tok/s/GPU", "TPOT ms", "TTFT s", "USD/M tok", "vs winner"},
             {},
             {false, true, true, true, true, true, true}};
    for (int i : res.next_cheapest) {
      const PlanCandidate& c = cand(i);
      nx.rows.push_back({cfg_text(c), std::to_string(c.conc), fmt_num(c.p.tput_total_per_gpu), fmt_num(c.p.tpot_ms), fmt_num(c.p.ttft_s),
                         fmt::format("{:.3f}", c.usd_per_m), fmt::format("+{:.1f}%", (c.usd_per_m / win->usd_per_m - 1) * 100)});
    }
    r.tables.push_back(nx);
  }

  r.notes.push_back(fmt::format(
      "Searched {} GPU types x GPU counts up to {} x engine layouts (incl. DP attention) x precisions x concurrency: {} configurations "
      "({} memory checks); the search time is in --format json (search.ms), the speed targets in k3plan_bench.",
      res.gpus.size(), o.max_gpus, fmt_int(static_cast<double>(res.evaluated)), res.fit_checks));
  if (o.disagg)
    r.notes.push_back(fmt::format(
        "--disagg: {} of them disaggregated (prefill and decode pools of 1-4 workers each, P:D coprime, worker sizes as above, with "
        "and without DP attention; the model of `perf --prefill-* --decode-*`, validated out of sample on InferenceX's disaggregated "
        "rows: `k3plan perf-validate`); a disaggregated deployment is one instance, its GPUs all of both pools",
        fmt_int(static_cast<double>(res.disagg_evaluated))));
  r.notes.push_back(
      "USD per million tokens counts input + output tokens (InferenceX: USD per GPU-hour x 1e6 / (3600 x tok/s per GPU)); idle hours not "
      "included.");
  for (const auto& n : res.price_notes) r.notes.push_back(n);
  add_lines(r, res.factor_assumptions);
  for (const Gpu* g : res.gpus) gpu_assumptions(r, *g, true);
  add_assumptions(r, res.base.assumptions);
  r.data["assumptions"] = r.assumptions;
  return r;
}

}  // namespace k3plan
