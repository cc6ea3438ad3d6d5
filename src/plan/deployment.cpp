// The speed of one deployment: options -> layout -> memory check -> the speed model (calc/perf.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <k3plan/calibrate.hpp>
#include <k3plan/engine_flags.hpp>
#include <k3plan/error.hpp>
#include <k3plan/kernel_path.hpp>
#include <k3plan/limits.hpp>
#include <k3plan/plan.hpp>

namespace k3plan {

Engine layout_engine(const std::string& engine) {
  if (engine == "vllm") return Engine::vllm;
  if (engine == "sglang" || engine == "trt" || engine == "atom") return Engine::sglang;
  const auto hint = closest_match(engine, {"sglang", "vllm", "trt", "atom"});
  throw InputError(fmt::format("unknown engine '{}'{}", engine,
                               hint.empty() ? " (use sglang, vllm, trt or atom)" : fmt::format("; did you mean '{}'?", hint)));
}

std::int64_t default_chunk(const Gpu& g, const std::string& engine) {
  if (engine == "vllm") return vllm_default_max_num_batched_tokens(g);
  if (engine == "trt") return 8192;  // TensorRT-LLM max_num_tokens default
  return sglang_default_chunked_prefill(g);
}

bool mixes_prefill(const std::string& engine) {
  // vLLM V1 schedules decode tokens first and fills the max_num_batched_tokens budget with prompt
  // chunks (vllm/v1/core/sched/scheduler.py); SGLang mixes only with --enable-mixed-chunk (default
  // False, python/sglang/srt/server_args.py); TensorRT-LLM and ATOM are fitted as they run in the
  // measured rows, with the stall model. A per-engine property for the engine models to own.
  return engine == "vllm";
}

MemCheck memory_check(const Model& m, const Gpu& g, const Layout& l, const EngineSettings& s, double isl, double osl, double scale,
                      int users, bool engine_cap, FitCommands commands) {
  MemCheck c;
  StageCache stages;  // the second, average-context evaluation reuses the stages' weights and KV
  c.full = evaluate_fit(m, g, l, s, static_cast<std::int64_t>(std::ceil(isl + osl)), std::max(1, users), commands, &stages);
  for (const auto& x : c.full.reasons)
    if (x.rfind("the KV/state pool holds", 0) != 0) c.reasons.push_back(x);
  if (c.full.max_context_one_user < static_cast<std::int64_t>(std::ceil(isl + osl)) && c.reasons.empty())
    c.reasons.push_back(
        fmt::format("one request of {} tokens does not fit the KV pool (at most {})", std::ceil(isl + osl), c.full.max_context_one_user));
  c.fits = c.reasons.empty();
  if (c.fits) {
    const FitResult avg = evaluate_fit(m, g, l, s, std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(scale * (isl + osl / 2)))),
                                       std::max(1, users), FitCommands::none, &stages);
    c.pool_running = std::max<std::int64_t>(avg.max_users, 1);
    c.max_running = c.pool_running;
    // the engine's own cap on running requests, per DP group that schedules its own batch: SGLang's
    // max_running_requests (flag, else its request-pool estimate, state slots; RankBudget::running_cap),
    // vLLM's max_num_seqs (flag, else its default)
    const std::int64_t per_group = avg.limiting.running_cap > 0 ? avg.limiting.running_cap : avg.max_num_seqs;
    if (engine_cap && per_group > 0) {
      c.engine_running = per_group * s.model().kv_instances(l);
      if (c.engine_running < c.max_running) {
        c.max_running = c.engine_running;
        c.cap_by_engine = true;
      }
    }
  }
  return c;
}

std::string precision_label(const Model& m, const std::string& uniform, const std::string& experts) {
  if (!uniform.empty()) return uniform;
  if (!experts.empty()) return "experts " + experts;
  std::string s = m.default_precision;
  if (m.moe && m.precision_of(ParamGroup::routed_experts) != m.default_precision)
    s += "+" + m.precision_of(ParamGroup::routed_experts) + " experts";
  return s + " (as shipped)";
}

namespace {
// The options every `perf` run validates, the efficiency table it reads and the model at its precision.
struct PerfInputs {
  Model base, m;
  const Gpu* g = nullptr;
  Engine le = Engine::sglang;
  EfficiencyTable table;
};
PerfInputs perf_inputs(const Catalogue& cat, const PerfOptions& o) {
  PerfInputs in;
  in.base = resolve_model(cat, o.model);
  if (o.gpu.empty()) throw InputError("perf: give a GPU (-g)");
  in.g = &cat.gpu(o.gpu);
  in.le = layout_engine(o.engine);
  if (o.engine == "sglang" || o.engine == "vllm") engine_model(in.le, o.engine_version);  // an unknown release lists the known ones
  if (!(o.isl >= 1 && o.isl <= 1e7) || !(o.osl >= 1 && o.osl <= 1e7))
    throw InputError("--isl and --osl: must be between 1 and 10,000,000 tokens");
  if (o.concurrency < 1 || o.concurrency > 1000000)
    throw InputError(fmt::format("--concurrency {}: must be between 1 and 1,000,000", o.concurrency));
  if (o.spec_tokens < 0 || o.spec_tokens > 16) throw InputError("--spec-tokens: must be between 0 and 16");
  if (o.spec_acceptance && !(*o.spec_acceptance >= 0 && *o.spec_acceptance <= 1)) throw InputError("--spec-acceptance: must be in [0, 1]");
  if (!(o.length_scale > 0 && o.length_scale <= 1)) throw InputError("--length-scale: must be in (0, 1]");
  if (!o.precision.empty() && !o.expert_precision.empty())
    throw InputError("--precision (every weight) and --expert-precision are contradictory; give one");
  if (o.gpus < 0 || o.gpus > 100000) throw InputError("--gpus: out of range");
  in.m = with_precision(in.base, o.precision, o.expert_precision);
  in.table = efficiency_for(cat, o.efficiency_file);
  return in;
}
// The engine settings a perf run's options give (aggregated and disaggregated alike).
EngineSettings perf_settings(const PerfInputs& in, const PerfOptions& o) {
  EngineSettings s;
  s.engine = in.le;
  // trt and atom releases number their own engines; their memory is checked with SGLang's newest rules
  if (o.engine == "sglang" || o.engine == "vllm") s.engine_version = o.engine_version;
  s.kv_dtype = o.kv_dtype;
  s.draft_layers = o.spec_tokens > 0 ? std::max(1, in.m.mtp_layers) : 0;
  if (o.max_running_requests) {
    if (*o.max_running_requests < 1 || *o.max_running_requests > (1 << 24)) throw InputError("--max-running-requests: out of range");
    s.max_num_seqs = *o.max_running_requests;
  }
  if (o.max_num_batched_tokens) {
    if (*o.max_num_batched_tokens < 256 || *o.max_num_batched_tokens > (1 << 24))
      throw InputError("--max-num-batched-tokens: out of range");
    s.max_num_batched_tokens = *o.max_num_batched_tokens;
  }
  return s;
}
}  // namespace

PerfEvaluation evaluate_perf(const Catalogue& cat, const PerfOptions& o) {
  const PerfInputs in = perf_inputs(cat, o);
  const Model& base = in.base;
  const Model& m = in.m;
  const Gpu& g = *in.g;
  const Engine le = in.le;
  const EfficiencyTable& table = in.table;
  PerfEvaluation ev;
  ev.gpu = &g;
  ev.eff = factors_for(table, cat.gpus(), g, o.engine, precision_key(m), o.engine_version);
  const PerfEfficiency& eff = ev.eff;

  EngineSettings s = perf_settings(in, o);
  const auto context = static_cast<std::int64_t>(std::ceil(o.isl + o.osl));
  const auto avg_context = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(o.length_scale * (o.isl + o.osl / 2))));
  const bool explicit_layout = o.tp || o.ep || o.dp || o.pp || o.dp_attention || o.dcp;
  Layout layout;
  if (explicit_layout) {
    layout.tp = o.tp ? o.tp : 1;
    layout.ep = o.ep ? o.ep : 1;
    layout.dp = o.dp ? o.dp : 1;
    layout.pp = o.pp ? o.pp : 1;
    layout.dp_attention = o.dp_attention;
    layout.dcp = o.dcp ? o.dcp : 1;
    // EP not given: the expert-parallel degree the engine's own candidate of this TP / DP / PP has
    // (vLLM runs MoE with --enable-expert-parallel, EP = TP x DP; SGLang splits experts by TP)
    if (m.moe && o.ep == 0)
      for (const Layout& c : s.model().layout_candidates(m, layout.gpus(le)))
        if (c.tp == layout.tp && c.dp == layout.dp && c.pp == layout.pp && c.dcp == 1 && !c.dp_attention) {
          layout.ep = c.ep;
          break;
        }
    if (o.gpus > 0 && layout.gpus(le) != o.gpus)
      throw InputError(fmt::format("-n {} contradicts the layout: it needs {} GPUs", o.gpus, layout.gpus(le)));
  } else if (o.gpus > 0) {
    // the engine's preferred layout that holds the users at their average context, else the one holding most
    FitResult best;
    bool have = false;
    for (const auto& l : candidate_layouts(m, g, le, o.gpus)) {
      FitResult x = evaluate_fit(m, g, l, s, avg_context, o.concurrency);
      if (!have || (x.fits && !best.fits) || (!best.fits && x.max_users > best.max_users)) {
        best = x;
        have = true;
      }
      if (best.fits) break;
    }
    if (!have) throw InputError(fmt::format("no {} layout accepts {} x {} for {}", o.engine, o.gpus, g.id, m.id));
    layout = best.layout;
  } else {
    const FitResult x = search_fit(m, g, s, avg_context, o.concurrency);
    if (x.gpus == 0) throw InputError(fmt::format("no layout found for {} on {}", m.id, g.id));
    layout = x.layout;
  }
  const MemCheck mc = memory_check(m, g, layout, s, o.isl, o.osl, o.length_scale, o.concurrency);
  const FitResult& f = mc.full;

  const PerfModel pm = prepare_perf_model(m, o.kv_dtype);
  PerfConfig c;
  c.layout = f.layout;
  c.engine = le;
  c.isl = o.isl;
  c.osl = o.osl;
  c.length_scale = o.length_scale;
  c.concurrency = o.concurrency;
  c.spec_tokens = o.spec_tokens;
  c.spec_acceptance = o.spec_acceptance ? *o.spec_acceptance : eff.spec_acceptance;
  c.max_running = mc.max_running;
  c.prefill_chunk = s.max_num_batched_tokens > 0 ? s.max_num_batched_tokens : default_chunk(g, o.engine);
  c.mixed_prefill = mixes_prefill(o.engine);
  c.kernels = kernel_path(o.engine, g, m);
  if (f.layout.pp > 1 && m.num_layers() > 0) {
    int slowest = 0;
    for (const auto& r : f.ranks) slowest = std::max(slowest, r.layers);
    c.stage_layer_fraction = static_cast<double>(slowest) / m.num_layers();
  }

  ev.model = m;
  ev.precision = precision_label(base, o.precision, o.expert_precision);
  ev.pm = pm;
  ev.config = c;
  ev.mem = mc;
  ev.context = context;
  ev.avg_context = avg_context;
  ev.result = estimate_perf(ev.pm, g, ev.eff, ev.config);
  return ev;
}

Layout disagg_worker_layout(const DisaggSide& s) {
  Layout l;
  l.tp = std::max(s.tp, s.ep);
  l.ep = s.ep;
  l.dp = s.dp_attention ? l.tp : 1;
  l.dp_attention = s.dp_attention;
  return l;
}

DisaggDeployment disagg_deployment(const Model& m, const Gpu& g, const std::string& engine, const DisaggSide& prefill,
                                   const DisaggSide& decode, const EngineSettings& s, double isl, double osl, double scale, int users) {
  DisaggDeployment d;
  d.prefill_side = prefill;
  d.decode_side = decode;
  d.prefill = disagg_worker_layout(prefill);
  d.decode = disagg_worker_layout(decode);
  // a prefill worker holds the prompts of one batch; a decode worker its share of the users
  d.prefill_mem = memory_check(m, g, d.prefill, s, isl, 1, scale, 1, true, FitCommands::none);
  const int per_worker = static_cast<int>(std::ceil(static_cast<double>(users) / std::max(1, decode.workers)));
  d.decode_mem = memory_check(m, g, d.decode, s, isl, osl, scale, per_worker, true, FitCommands::none);
  for (const auto& x : d.prefill_mem.reasons) d.reasons.push_back("prefill worker: " + x);
  for (const auto& x : d.decode_mem.reasons) d.reasons.push_back("decode worker: " + x);
  d.fits = d.prefill_mem.fits && d.decode_mem.fits;
  const Engine le = layout_engine(engine);
  const std::int64_t chunk = s.max_num_batched_tokens > 0 ? s.max_num_batched_tokens : default_chunk(g, engine);
  for (PerfConfig* c : {&d.config.prefill, &d.config.decode}) {
    c->engine = le;
    c->isl = isl;
    c->osl = osl;
    c->length_scale = scale;
    c->concurrency = users;
    c->prefill_chunk = chunk;
    c->kernels = kernel_path(engine, g, m);
  }
  d.config.prefill.layout = d.prefill;
  d.config.decode.layout = d.decode;
  d.config.decode.max_running = d.decode_mem.max_running;
  d.config.prefill_workers = prefill.workers;
  d.config.decode_workers = decode.workers;
  d.config.concurrency = users;
  return d;
}

DisaggResult predict_disagg(const PerfModel& pm, const Gpu& g, const PerfEfficiency& eff, const DisaggDeployment& d, int spec_tokens,
                            double spec_acceptance) {
  DisaggConfig c = d.config;
  c.decode.spec_tokens = spec_tokens;
  c.decode.spec_acceptance = spec_acceptance;
  const PerfSetup pf = prepare_perf(pm, g, eff, c.prefill.layout, c.prefill.engine, c.prefill.kernels);
  const PerfSetup dec = prepare_perf(pm, g, eff, c.decode.layout, c.decode.engine, c.decode.kernels);
  return estimate_disagg(pf, dec, g, c);
}

PerfDisaggEvaluation evaluate_perf_disagg(const Catalogue& cat, const PerfOptions& o) {
  const PoolSize ps = pool_size("prefill", o.prefill_workers, o.prefill_tp, o.prefill_gpus, limits::kMaxGpus);
  const PoolSize ds = pool_size("decode", o.decode_workers, o.decode_tp, o.decode_gpus, limits::kMaxGpus);
  if (!ps.tp)
    throw InputError(
        "disaggregated perf: give the prefill layout (--prefill-tp or --prefill-gpus, with --prefill-ep / --prefill-dp-attention)");
  if (!ds.tp)
    throw InputError("disaggregated perf: give the decode layout (--decode-tp or --decode-gpus, with --decode-ep / --decode-dp-attention)");
  if (o.gpus || o.tp || o.ep || o.dp || o.pp || o.dcp || o.dp_attention)
    throw InputError(
        "disaggregated perf: the layout is per side (--prefill-* / --decode-*); -n, --tp, --ep, --dp, --pp, --dcp and "
        "--enable-dp-attention do not apply");
  const PerfInputs in = perf_inputs(cat, o);
  const DisaggSide p{ps.workers ? ps.workers : 1, ps.tp, o.prefill_ep ? o.prefill_ep : 1, o.prefill_dp_attention};
  const DisaggSide d{ds.workers ? ds.workers : 1, ds.tp, o.decode_ep ? o.decode_ep : 1, o.decode_dp_attention};
  for (const auto& [side, x] : {std::pair<const char*, DisaggSide>{"prefill", p}, {"decode", d}})
    if (x.ep > x.tp)
      throw InputError(fmt::format("--{}-ep {} exceeds --{}-tp {}: a worker's EP group lies inside its TP group", side, x.ep, side, x.tp));
  // a worker's DP attention is SGLang's (--tp N --dp N --enable-dp-attention: N GPUs); vLLM's DP
  // multiplies the GPUs, which disagg_worker_layout does not express
  if (o.engine == "vllm" && (p.dp_attention || d.dp_attention))
    throw InputError("disaggregated perf: DP attention per worker is modelled for sglang, trt and atom, not vllm");
  PerfDisaggEvaluation ev;
  ev.model = in.m;
  ev.precision = precision_label(in.base, o.precision, o.expert_precision);
  ev.gpu = in.g;
  ev.eff = factors_for(in.table, cat.gpus(), *in.g, o.engine, precision_key(in.m), o.engine_version);
  EngineSettings s = perf_settings(in, o);
  ev.deployment = disagg_deployment(in.m, *in.g, o.engine, p, d, s, o.isl, o.osl, o.length_scale, o.concurrency);
  ev.pm = prepare_perf_model(in.m, o.kv_dtype);
  ev.result =
      predict_disagg(ev.pm, *in.g, ev.eff, ev.deployment, o.spec_tokens, o.spec_acceptance ? *o.spec_acceptance : ev.eff.spec_acceptance);
  return ev;
}

}  // namespace k3plan
