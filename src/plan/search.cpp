// The cheapest deployment that meets a service level: every GPU x GPU count x engine layout
// (with the engine's search_layout_candidates, e.g. SGLang's DP attention) x precision x
// concurrency that fits, ranked by USD per million tokens; the Pareto front of throughput per GPU
// against interactivity; the best of each GPU and why it lost.
// Lower bounds prune the search: a layout is tried only where the memory check passes, and the
// concurrency sweep stops refining once the SLA breaks (bisection between two powers of two).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <k3plan/calibrate.hpp>
#include <k3plan/engine_flags.hpp>
#include <k3plan/error.hpp>
#include <k3plan/kernel_path.hpp>
#include <k3plan/params.hpp>
#include <k3plan/plan.hpp>
#include <k3plan/units.hpp>
#include <limits>

namespace k3plan {

namespace {

double rental_rate(const Catalogue& cat, const Gpu& g, const std::string& kind, std::string& note) {
  if (kind == "on-demand") return g.price_usd_per_hour.value;
  std::vector<double> q;
  for (const auto& x : cat.prices().rental)
    if (x.gpu == g.id && x.kind == kind) q.push_back(x.usd_per_hour);
  if (q.empty()) {
    note = fmt::format("{}: no {} quote, on-demand price used", g.id, kind);
    return g.price_usd_per_hour.value;
  }
  std::sort(q.begin(), q.end());
  return q.size() % 2 ? q[q.size() / 2] : (q[q.size() / 2 - 1] + q[q.size() / 2]) / 2;
}

struct PrecOption {
  std::string uniform, experts, label;
  bool requantised = false;
};

std::vector<PrecisionOption> precision_options(const Model& m, const Gpu& g, const std::vector<std::string>& wanted) {
  std::vector<PrecisionOption> out;
  auto bitsof = [&](ParamGroup grp) { return precision_format(m.precision_of(grp)).bits_per_weight; };
  if (!wanted.empty()) {
    for (const auto& w : wanted) {
      if (w == "as-shipped" || w == "shipped")
        out.push_back({"", "", precision_label(m, "", ""), false});
      else if (w.rfind("experts-", 0) == 0)
        out.push_back({"", w.substr(8), "experts " + w.substr(8), true});
      else
        out.push_back({w, "", w, true});
    }
    return out;
  }
  out.push_back({"", "", precision_label(m, "", ""), false});
  const double main_bits = m.moe ? bitsof(ParamGroup::routed_experts) : bitsof(ParamGroup::dense_mlp);
  if (main_bits > 8.5 && g.runs_natively("fp8")) out.push_back({"fp8", "", "fp8", true});
  if (m.moe && main_bits > 4.6) {
    if (g.runs_natively("mxfp4") && g.tflops_fp4.value > 0)
      out.push_back({"", "mxfp4", "experts mxfp4", true});
    else if (g.runs_natively("nvfp4") && g.tflops_fp4.value > 0)
      out.push_back({"", "nvfp4", "experts nvfp4", true});
  }
  return out;
}

std::vector<int> gpu_counts(const Gpu& g, int max_gpus) {
  std::vector<int> out;
  for (int n = 1; n <= std::min(max_gpus, g.gpus_per_node); n *= 2) out.push_back(n);
  for (int nodes = 2; nodes * g.gpus_per_node <= max_gpus; nodes *= 2) out.push_back(nodes * g.gpus_per_node);
  return out;
}


// A priced candidate's cost per million tokens at the pessimistic end of its throughput band, the
// replicas the load needs and whether the SLA holds at the pessimistic end of its latency bands:
// one rule for aggregated and disaggregated candidates (x.p, x.gpus, x.usd_per_hour and x.risk_*
// set before).
void price_and_judge(PlanCandidate& x, const PlanOptions& o, int c, double ttft_target, double tpot_target) {
  const double tok_s = x.p.tput_total_per_gpu * x.gpus * x.risk_tput;
  x.usd_per_m = x.usd_per_hour * 1e6 / (3600 * tok_s);
  if (o.users)
    x.replicas = std::ceil(*o.users / c);
  else if (o.requests_per_s)
    x.replicas = std::ceil(*o.requests_per_s / (c / x.p.e2e_s));
  x.sla_ok = x.p.ttft_s * 1000 * x.risk_ttft <= ttft_target && x.p.tpot_ms * x.risk_tpot <= tpot_target;
}

// The largest concurrency that still meets the SLA between the last one that passed (`last_ok`) and
// the first that failed after it (`fail_after`), to within 1/32 of it: a bisection over `eval`,
// which prices, judges and keeps the candidate it evaluates. One rule for the aggregated and the
// disaggregated sweep (both step in powers before it).
template <class Eval>
void largest_meeting_sla(int last_ok, int fail_after, Eval&& eval) {
  int lo = last_ok, hi = fail_after;
  while (lo > 0 && hi > lo + std::max(1, lo / 32)) {
    const int mid = lo + (hi - lo) / 2;
    if (eval(mid))
      lo = mid;
    else
      hi = mid;
  }
}
}  // namespace

PlanTargets plan_targets(const PlanOptions& o) {
  PlanTargets t;
  const Sla sla = o.sla_file.empty() ? embedded_sla() : parse_sla(read_text_file(o.sla_file, "--sla"), o.sla_file);
  t.ttft_ms = std::numeric_limits<double>::infinity();
  t.tpot_ms = std::numeric_limits<double>::infinity();
  t.ttft_source = "none";
  t.tpot_source = "none";
  t.sla_source = sla.source;
  const std::string file = o.sla_file.empty() ? "data/perf/sla.yaml" : o.sla_file;
  if (o.ttft_ms) {
    if (!(*o.ttft_ms > 0)) throw InputError("--ttft-ms: must be positive");
    t.ttft_ms = *o.ttft_ms;
    t.ttft_source = "--ttft-ms";
  } else {
    for (const auto& [max_prompt, fig] : sla.ttft_tiers)
      if (o.isl <= max_prompt) {
        t.ttft_ms = fig.value;
        t.ttft_tier_tokens = max_prompt;
        t.ttft_source = file;
        if (fig.assumed)
          t.assumptions.push_back(fmt::format("SLA TTFT {:g} ms for prompts up to {:.0f}: {}", fig.value, max_prompt, fig.reason));
        break;
      }
  }
  if (o.tpot_ms || o.interactivity) {
    const double v = o.tpot_ms ? *o.tpot_ms : 1000.0 / *o.interactivity;
    if (!(v > 0) || !std::isfinite(v)) throw InputError("--tpot-ms / --interactivity: must be positive");
    t.tpot_ms = v;
    t.tpot_source = o.tpot_ms ? "--tpot-ms" : "--interactivity";
  } else {
    const auto it = sla.itl.find(o.workload);
    if (it == sla.itl.end()) {
      std::vector<std::string> names;
      for (const auto& [k, v] : sla.itl) names.push_back(k);
      throw InputError(fmt::format("--workload '{}': the SLA file has ITL targets for {}", o.workload, fmt::join(names, ", ")));
    }
    t.tpot_ms = it->second.value;
    t.tpot_source = fmt::format("{} ITL ({})", o.workload, file);
    if (it->second.assumed) t.assumptions.push_back(fmt::format("SLA {} ITL {:g} ms: {}", o.workload, it->second.value, it->second.reason));
  }
  return t;
}

PlanResult search_plan(const Catalogue& cat, const PlanOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  PlanResult res;
  res.base = resolve_model(cat, o.model);
  const Model& base = res.base;
  if (!(o.isl >= 1 && o.isl <= 1e7) || !(o.osl >= 1 && o.osl <= 1e7))
    throw InputError("--isl and --osl: must be between 1 and 10,000,000 tokens");
  if (o.max_gpus < 1 || o.max_gpus > 4096) throw InputError("--max-gpus: must be between 1 and 4096");
  if (o.rate_source != "on-demand" && o.rate_source != "reserved" && o.rate_source != "spot")
    throw InputError(fmt::format("--rate-source '{}': use on-demand, reserved or spot", o.rate_source));
  if (o.tpot_ms && o.interactivity) throw InputError("--tpot-ms and --interactivity set the same target; give one");
  if (o.users && o.requests_per_s) throw InputError("--users and --requests-per-s describe the load twice; give one");
  if (o.users && !(*o.users >= 1 && *o.users <= 1e9)) throw InputError("--users: must be between 1 and 1e9");
  if (o.requests_per_s && !(*o.requests_per_s > 0 && *o.requests_per_s <= 1e9)) throw InputError("--requests-per-s: must be positive");
  if (o.risk != "median" && o.risk != "p90") throw InputError(fmt::format("--risk '{}': use median or p90", o.risk));
  res.targets = plan_targets(o);
  const double ttft_target = res.targets.ttft_ms, tpot_target = res.targets.tpot_ms;

  // search space
  std::vector<const Gpu*>& gpus = res.gpus;
  if (o.gpus_from.empty())
    for (const auto& g : cat.gpus()) gpus.push_back(&g);
  else
    for (const auto& id : o.gpus_from) gpus.push_back(&cat.gpu(id));
  res.engines = o.engines.empty() ? std::vector<std::string>{"sglang", "vllm"} : o.engines;
  const std::vector<std::string>& engines = res.engines;
  for (const auto& e : engines) layout_engine(e);
  const EfficiencyTable table = efficiency_for(cat, o.efficiency_file);

  auto& precs = res.precisions;
  precs.resize(gpus.size());
  // The search budget: every (GPU, precision, engine, GPU count) cell costs a handful of layouts,
  // each a memory check and up to ~20 speed estimates. The option ranges bound a search over the
  // embedded catalogue (at most ~700 cells at --max-gpus 4096), but a --data
  // catalogue with thousands of GPUs would not be: refuse it up front, before any work, with what
  // narrows it.
  std::size_t cells = 0;
  for (std::size_t gi = 0; gi < gpus.size(); ++gi) {
    precs[gi] = precision_options(base, *gpus[gi], o.precisions);
    cells += precs[gi].size() * engines.size() * gpu_counts(*gpus[gi], o.max_gpus).size();
    // --disagg: a cell per (prefill worker size, decode worker size)
    if (o.disagg) {
      const std::size_t w = gpu_counts(*gpus[gi], o.max_gpus / 2).size();
      cells += precs[gi].size() * engines.size() * w * w;
    }
  }
  if (cells > kMaxSearchCells)
    throw InputError(fmt::format("search space too large: {} GPUs x precisions x engines x GPU counts make {} cells, "
                                 "over the budget of {}; narrow it with --gpus-from, --engines, --precisions or --max-gpus",
                                 gpus.size(), fmt_int(static_cast<double>(cells)), fmt_int(static_cast<double>(kMaxSearchCells))));
  res.search_cells = cells;

  std::vector<PlanCandidate>& cands = res.candidates;
  cands.reserve(1 << 15);
  auto& no_fit = res.no_fit;
  std::map<std::string, PerfModel> pms;
  std::size_t evaluated = 0, fit_checks = 0, disagg_evaluated = 0;
  double perf_seconds = 0;
  for (std::size_t gi = 0; gi < gpus.size(); ++gi) {
    const Gpu& g = *gpus[gi];
    std::string pnote;
    const double rate = rental_rate(cat, g, o.rate_source, pnote);
    if (!pnote.empty()) res.price_notes.push_back(pnote);
    bool any_fit = false;
    for (std::size_t pi = 0; pi < precs[gi].size(); ++pi) {
      const PrecisionOption& po = precs[gi][pi];
      const Model m = with_precision(base, po.uniform, po.experts);
      const std::string pkey = po.uniform + "|" + po.experts;
      auto pit = pms.find(pkey);
      if (pit == pms.end()) pit = pms.emplace(pkey, prepare_perf_model(m, "auto")).first;
      const PerfModel& pm = pit->second;
      for (const auto& engine : engines) {
        const Engine le = layout_engine(engine);
        const PerfEfficiency eff = factors_for(table, cat.gpus(), g, engine, precision_key(m));
        const KernelPath kernels = kernel_path(engine, g, m);  // per GPU x precision x engine, not per layout
        double risk_tput = 1, risk_tpot = 1, risk_ttft = 1;
        if (o.risk == "p90") {
          if (const PerfBand* b = band_for(embedded_accuracy(), eff.family, eff.engine, eff.calibrated)) {
            risk_tput = std::max(0.05, 1 - b->tput_p90_pct / 100);
            risk_tpot = 1 + b->tpot_p90_pct / 100;
            risk_ttft = 1 + b->ttft_p90_pct / 100;
          }
        }
        EngineSettings s;
        s.engine = le;
        for (int n : gpu_counts(g, o.max_gpus)) {
          std::vector<Layout> layouts = candidate_layouts(m, g, le, n);
          for (const Layout& d : s.model().search_layout_candidates(m, n))  // e.g. SGLang's DP attention over every GPU
            if (layout_refusals(m, g, le, d).empty()) layouts.push_back(d);
          for (const auto& l : layouts) {
            MemCheck mc;
            try {
              mc = memory_check(m, g, l, s, o.isl, o.osl, 1.0, 1, false, FitCommands::refusals);
            } catch (const InputError& e) {  // e.g. the engine's default memory fraction leaves nothing
              mc.fits = false;
              mc.reasons = {e.what()};
            }
            const FitResult& f = mc.full;
            ++fit_checks;
            if (!mc.fits) {
              if (!no_fit.count(g.id) && !mc.reasons.empty()) no_fit[g.id] = {n, l, mc.reasons.front()};
              continue;
            }
            any_fit = true;
            const std::int64_t cap = std::min<std::int64_t>(mc.max_running, 4096);
            std::vector<int> concs;
            for (int c = 1; c <= cap; c *= 2) concs.push_back(c);
            if (concs.empty() || concs.back() != cap) concs.push_back(static_cast<int>(cap));
            PerfConfig pc;
            pc.layout = l;
            pc.engine = le;
            pc.isl = o.isl;
            pc.osl = o.osl;
            pc.max_running = mc.max_running;
            pc.prefill_chunk = f.max_num_batched_tokens > 0 ? f.max_num_batched_tokens : default_chunk(g, engine);
            pc.mixed_prefill = mixes_prefill(engine);
            pc.kernels = kernels;
            const auto tp0 = std::chrono::steady_clock::now();
            const PerfSetup setup = prepare_perf(pm, g, eff, l, le, pc.kernels);
            auto eval = [&](int c) {
              pc.concurrency = c;
              PlanCandidate x;
              x.p = estimate_perf(setup, pc);
              ++evaluated;
              x.gpu_index = static_cast<int>(gi);
              x.gpus = f.gpus;
              x.nodes = f.nodes;
              x.engine = engine;
              x.layout = l;
              x.prec = static_cast<int>(pi);
              x.conc = c;
              x.max_users = mc.max_running;
              x.usd_per_hour = rate * f.gpus;
              x.risk_tput = risk_tput;
              x.risk_tpot = risk_tpot;
              x.risk_ttft = risk_ttft;
              price_and_judge(x, o, c, ttft_target, tpot_target);
              cands.push_back(std::move(x));
              return cands.back().sla_ok;
            };
            int last_ok = 0, fail_after = 0;
            for (int c : concs) {
              const bool ok = eval(c);
              if (ok)
                last_ok = c;
              else if (last_ok > 0 && fail_after == 0)
                fail_after = c;
            }
            largest_meeting_sla(last_ok, fail_after, eval);
            perf_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - tp0).count();
          }
        }
        if (!o.disagg || o.max_gpus < 2) continue;
        // --disagg: prefill and decode pools (estimate_disagg, the model `perf --prefill-* --decode-*`
        // runs). A worker is n GPUs, TP n, EP n for a MoE model, with and without DP attention
        // (SGLang's --tp n --dp n --enable-dp-attention; not modelled for vLLM, as in perf); its
        // memory is checked once (a prefill worker holds one prompt, a decode worker's KV pool caps its
        // running sequences). The ratio: P prefill to D decode workers, P and D coprime up to 4 (a
        // multiple of a ratio is replicas of it), within --max-gpus.
        struct Side {
          DisaggSide side;
          Layout layout;
          int gpus = 0;
          std::int64_t max_running = 0;
          PerfSetup setup;
        };
        std::vector<Side> pre, dec;
        const bool dpa_ok = s.model().has_setting("dp_attention");  // SGLang-style DP attention inside a worker
        for (int n : gpu_counts(g, o.max_gpus / 2)) {
          std::vector<DisaggSide> forms{{1, n, m.moe ? n : 1, false}};
          if (m.moe && dpa_ok && n > 1) forms.push_back({1, n, n, true});
          for (const DisaggSide& ds : forms) {
            const Layout l = disagg_worker_layout(ds);
            if (!layout_refusals(m, g, le, l).empty()) continue;
            for (const bool prefill : {true, false}) {
              MemCheck mc;
              try {
                mc = prefill ? memory_check(m, g, l, s, o.isl, 1, 1.0, 1, true, FitCommands::none)
                             : memory_check(m, g, l, s, o.isl, o.osl, 1.0, 1, true, FitCommands::none);
              } catch (const InputError&) {
                mc.fits = false;
              }
              ++fit_checks;
              if (!mc.fits) continue;
              any_fit = true;
              (prefill ? pre : dec)
                  .push_back({ds, l, l.gpus(le), mc.max_running, prepare_perf(pm, g, eff, l, le, kernels)});
            }
          }
        }
        static constexpr std::pair<int, int> kRatios[] = {{1, 1}, {1, 2}, {1, 3}, {1, 4}, {2, 1}, {2, 3},
                                                          {3, 1}, {3, 2}, {3, 4}, {4, 1}, {4, 3}};
        const std::int64_t chunk = default_chunk(g, engine);
        const auto tp0 = std::chrono::steady_clock::now();
        for (const Side& ps : pre)
          for (const Side& dsd : dec)
            for (const auto& ratio : kRatios) {
              // named copies, not a structured binding: the lambdas below capture them (clang 14,
              // the fuzz build's compiler, refuses to capture structured bindings)
              const int np = ratio.first, nd = ratio.second;
              const int total = np * ps.gpus + nd * dsd.gpus;
              if (total > o.max_gpus) continue;
              DisaggConfig dc;
              for (PerfConfig* c : {&dc.prefill, &dc.decode}) {
                c->engine = le;
                c->isl = o.isl;
                c->osl = o.osl;
                c->prefill_chunk = chunk;
              }
              dc.prefill.layout = ps.layout;
              dc.decode.layout = dsd.layout;
              dc.decode.max_running = dsd.max_running;
              dc.decode.spec_acceptance = eff.spec_acceptance;
              dc.prefill_workers = np;
              dc.decode_workers = nd;
              const std::int64_t pool = std::min<std::int64_t>(dsd.max_running * nd, 16384);
              auto eval = [&](int c) {
                dc.concurrency = c;
                dc.prefill.concurrency = dc.decode.concurrency = c;
                const DisaggResult dr = estimate_disagg(ps.setup, dsd.setup, g, dc);
                ++evaluated;
                ++disagg_evaluated;
                PlanCandidate x;
                x.p = dr.total;
                x.gpu_index = static_cast<int>(gi);
                x.gpus = total;
                x.nodes = std::max(1, (total + g.gpus_per_node - 1) / g.gpus_per_node);
                x.engine = engine;
                x.layout = dsd.layout;
                x.prec = static_cast<int>(pi);
                x.conc = c;
                x.max_users = pool;
                x.usd_per_hour = rate * total;
                x.risk_tput = risk_tput;
                x.risk_tpot = risk_tpot;
                x.risk_ttft = risk_ttft;
                x.disagg = true;
                x.prefill_side = ps.side;
                x.prefill_side.workers = np;
                x.decode_side = dsd.side;
                x.decode_side.workers = nd;
                x.kv_transfer_ms = dr.kv_transfer_ms;
                x.disagg_limit = dr.limit;
                price_and_judge(x, o, c, ttft_target, tpot_target);
                cands.push_back(std::move(x));
                return cands.back().sla_ok;
              };
              // as the aggregated sweep, in powers of four (an estimate costs ~0.5 ms, its fixed point
              // and rate bisections): up to what the decode pools hold, then the largest concurrency
              // meeting the SLA between the last pass and the first miss. Once the pools saturate
              // (estimate_disagg's `queued`), more users only wait before prefill: the sweep stops.
              int last_ok = 0, fail_after = 0;
              for (std::int64_t c = 1;; c = std::min<std::int64_t>(c * 4, pool)) {
                const bool ok = eval(static_cast<int>(c));
                if (ok)
                  last_ok = static_cast<int>(c);
                else if (last_ok > 0 && fail_after == 0)
                  fail_after = static_cast<int>(c);
                if (c >= pool || cands.back().p.queued) break;
              }
              largest_meeting_sla(last_ok, fail_after, eval);
            }
        perf_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - tp0).count();
      }
    }
    if (!any_fit && !no_fit.count(g.id)) no_fit[g.id] = {0, Layout{}, fmt::format("no engine-valid layout up to {} GPUs", o.max_gpus)};
  }
  res.search_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  res.evaluated = evaluated;
  res.disagg_evaluated = disagg_evaluated;
  res.fit_checks = fit_checks;
  res.perf_seconds = perf_seconds;
  for (auto& c : cands) {
    c.misses_ttft = c.p.ttft_s * 1000 * c.risk_ttft > ttft_target;
    c.misses_tpot = c.p.tpot_ms * c.risk_tpot > tpot_target;
  }
  for (const Gpu* g : gpus)
    for (const auto& e : engines) {
      const auto lines = factors_for(table, cat.gpus(), *g, e).assumptions;
      for (const auto& l : lines)
        if (std::find(res.factor_assumptions.begin(), res.factor_assumptions.end(), l) == res.factor_assumptions.end())
          res.factor_assumptions.push_back(l);
    }

  // the winner: cheapest per million tokens among those that meet the SLA
  // cost, then interactivity, then fewer GPUs, then compute headroom (ties come from memory-bound
  // decode on GPUs with the same bandwidth and price)
  auto cheaper = [&](const PlanCandidate& a, const PlanCandidate& b) {
    if (std::abs(a.usd_per_m - b.usd_per_m) > 1e-9 * b.usd_per_m) return a.usd_per_m < b.usd_per_m;
    if (std::abs(a.p.interactivity - b.p.interactivity) > 1e-9 * b.p.interactivity) return a.p.interactivity > b.p.interactivity;
    if (a.gpus != b.gpus) return a.gpus < b.gpus;
    return gpus[static_cast<std::size_t>(a.gpu_index)]->tflops_bf16.value > gpus[static_cast<std::size_t>(b.gpu_index)]->tflops_bf16.value;
  };
  const int n = static_cast<int>(cands.size());
  auto at = [&](int i) -> const PlanCandidate& { return cands[static_cast<std::size_t>(i)]; };
  for (int i = 0; i < n; ++i)
    if (at(i).sla_ok && (res.winner < 0 || cheaper(at(i), at(res.winner)))) res.winner = i;
  const PlanCandidate* win = res.win();

  // Pareto front: throughput per GPU against interactivity over every candidate that fits
  std::vector<int> order(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    if (at(a).p.interactivity != at(b).p.interactivity) return at(a).p.interactivity > at(b).p.interactivity;
    return at(a).p.tput_total_per_gpu > at(b).p.tput_total_per_gpu;
  });
  double best_tput = -1;
  for (int i : order)
    if (at(i).p.tput_total_per_gpu > best_tput) {
      res.pareto.push_back(i);
      best_tput = at(i).p.tput_total_per_gpu;
    }

  // runners-up: the best of each GPU type (cheapest meeting the SLA, else the closest miss)
  struct Best {
    int ok = -1, closest = -1;
    double closest_gap = 1e300;
  };
  std::vector<Best> best(gpus.size());
  for (int i = 0; i < n; ++i) {
    const PlanCandidate& c = at(i);
    Best& b = best[static_cast<std::size_t>(c.gpu_index)];
    if (c.sla_ok && (b.ok < 0 || cheaper(c, at(b.ok)))) b.ok = i;
    const double gap = std::max(c.p.ttft_s * 1000 * c.risk_ttft / ttft_target, c.p.tpot_ms * c.risk_tpot / tpot_target);
    if (gap < b.closest_gap) {
      b.closest_gap = gap;
      b.closest = i;
    }
  }
  std::vector<std::size_t> gorder(gpus.size());
  for (std::size_t i = 0; i < gorder.size(); ++i) gorder[i] = i;
  std::stable_sort(gorder.begin(), gorder.end(), [&](std::size_t a, std::size_t b) {
    const bool wa = best[a].ok >= 0 && best[a].ok == res.winner, wb = best[b].ok >= 0 && best[b].ok == res.winner;
    if (wa != wb) return wa;
    const double ca = best[a].ok >= 0 ? at(best[a].ok).usd_per_m : (best[a].closest >= 0 ? 1e200 : 1e300);
    const double cb = best[b].ok >= 0 ? at(best[b].ok).usd_per_m : (best[b].closest >= 0 ? 1e200 : 1e300);
    return ca < cb;
  });
  for (std::size_t gi : gorder) {
    const Best& b = best[gi];
    PlanResult::RunnerUp ru;
    ru.gpu_index = static_cast<int>(gi);
    ru.cand = b.ok >= 0 ? b.ok : b.closest;
    if (b.ok >= 0 && b.ok == res.winner)
      ru.kind = PlanResult::RunnerUp::Kind::winner;
    else if (b.ok >= 0 && win && std::abs(at(b.ok).usd_per_m / win->usd_per_m - 1) < 5e-4)
      ru.kind = PlanResult::RunnerUp::Kind::ties;
    else if (b.ok >= 0 && win)
      ru.kind = PlanResult::RunnerUp::Kind::costlier;
    else if (b.closest >= 0)
      ru.kind = PlanResult::RunnerUp::Kind::misses;
    else
      ru.kind = PlanResult::RunnerUp::Kind::no_fit;
    res.runners_up.push_back(ru);
  }
  if (win) {
    std::vector<int> ok;
    for (int i = 0; i < n; ++i)
      if (at(i).sla_ok && i != res.winner) ok.push_back(i);
    std::sort(ok.begin(), ok.end(), [&](int a, int b) { return cheaper(at(a), at(b)); });
    for (std::size_t i = 0; i < ok.size() && static_cast<int>(i) < o.top; ++i) res.next_cheapest.push_back(ok[i]);
  }
  return res;
}

FitResult candidate_fit(const PlanResult& r, const PlanCandidate& c, double isl, double osl) {
  const PrecisionOption& po = r.precision_of(c);
  EngineSettings s;
  s.engine = layout_engine(c.engine);
  if (s.model().has_setting("max_num_seqs")) s.max_num_seqs = c.conc;  // vLLM sizes its batch by --max-num-seqs
  return evaluate_fit(with_precision(r.base, po.uniform, po.experts), r.gpu_of(c), c.layout, s,
                      static_cast<std::int64_t>(std::ceil(isl + osl)), c.conc);
}

}  // namespace k3plan
