// The speed of one deployment: options -> layout -> memory check -> the speed model (calc/perf.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <k3plan/calibrate.hpp>
#include <k3plan/engine_flags.hpp>
#include <k3plan/error.hpp>
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
  c.full = evaluate_fit(m, g, l, s, static_cast<std::int64_t>(std::ceil(isl + osl)), std::max(1, users), commands);
  for (const auto& x : c.full.reasons)
    if (x.rfind("the KV/state pool holds", 0) != 0) c.reasons.push_back(x);
  if (c.full.max_context_one_user < static_cast<std::int64_t>(std::ceil(isl + osl)) && c.reasons.empty())
    c.reasons.push_back(
        fmt::format("one request of {} tokens does not fit the KV pool (at most {})", std::ceil(isl + osl), c.full.max_context_one_user));
  c.fits = c.reasons.empty();
  if (c.fits) {
    const FitResult avg = evaluate_fit(m, g, l, s, std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(scale * (isl + osl / 2)))),
                                       std::max(1, users), FitCommands::none);
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

PerfEvaluation evaluate_perf(const Catalogue& cat, const PerfOptions& o) {
  const Model base = resolve_model(cat, o.model);
  if (o.gpu.empty()) throw InputError("perf: give a GPU (-g)");
  const Gpu& g = cat.gpu(o.gpu);
  const Engine le = layout_engine(o.engine);
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
  const Model m = with_precision(base, o.precision, o.expert_precision);
  const EfficiencyTable table = efficiency_for(cat, o.efficiency_file);
  PerfEvaluation ev;
  ev.gpu = &g;
  ev.eff = factors_for(table, cat.gpus(), g, o.engine, precision_key(m));
  const PerfEfficiency& eff = ev.eff;

  EngineSettings s;
  s.engine = le;
  s.kv_dtype = o.kv_dtype;
  s.draft_layers = o.spec_tokens > 0 ? std::max(1, m.mtp_layers) : 0;
  if (o.max_running_requests) {
    if (*o.max_running_requests < 1 || *o.max_running_requests > (1 << 24)) throw InputError("--max-running-requests: out of range");
    s.max_num_seqs = *o.max_running_requests;
  }
  if (o.max_num_batched_tokens) {
    if (*o.max_num_batched_tokens < 256 || *o.max_num_batched_tokens > (1 << 24))
      throw InputError("--max-num-batched-tokens: out of range");
    s.max_num_batched_tokens = *o.max_num_batched_tokens;
  }
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

}  // namespace k3plan
