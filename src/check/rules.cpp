// The rule table of `k3plan check` and the functions that evaluate it (check_rules.hpp). Each
// function reads and fills one RuleContext; a function that finds the rest cannot be evaluated
// sets `stop` (later functions are skipped).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <k3plan/budget.hpp>
#include <k3plan/check.hpp>
#include <k3plan/check_rules.hpp>
#include <k3plan/cost.hpp>
#include <k3plan/deploy_fit.hpp>
#include <k3plan/engine.hpp>
#include <k3plan/engine_flags.hpp>
#include <k3plan/error.hpp>
#include <k3plan/units.hpp>
#include <set>

#include <k3plan/units.hpp>

namespace k3plan {

namespace fs = std::filesystem;
using nlohmann::json;

// Everything the rule functions share for one target.
struct RuleContext {
  const Catalogue& cat;
  const CheckTarget& t;
  const Deployment& d;
  std::vector<Finding>& out;
  json s;  // the per-input summary
  bool stop = false;
  bool is_file = false;
  const char* engine_name = "";
  std::optional<Model> model;
  const Gpu* gpu = nullptr;
  std::string kv;      // KV dtype as given, "auto" when unknown
  std::string kv_fit;  // the same as fit names it
  int lg = 0;          // GPUs the layout occupies
  int declared = 0;    // GPUs the deployment has
  int nodes = 0;
  std::optional<DeploymentFit> fit;
  Gpu synth;  // stands in for the GPU when none is given
  Layout layout;
  std::vector<std::string> refusal_messages;
  std::vector<std::string> layout_warnings;

  RuleContext(const Catalogue& c, const CheckTarget& target, std::vector<Finding>& findings)
      : cat(c), t(target), d(target.deployment), out(findings) {}
  void add(const std::string& rule, const char* sev, const std::string& msg, const SourcePos& p) { out.push_back({rule, sev, msg, p}); }
  SourcePos at(std::initializer_list<const char*> fields) const {
    for (const char* f : fields) {
      const auto it = d.where.find(f);
      if (it != d.where.end()) return it->second;
    }
    return t.anchor.file.empty() ? SourcePos{d.file, 1, 1} : t.anchor;
  }
  const Gpu& rule_gpu() const { return gpu ? *gpu : synth; }
};

namespace {

bool contains(const std::string& s, const char* needle) { return s.find(needle) != std::string::npos; }

const std::set<std::string> kKvDtypes{"auto",     "bf16",     "bfloat16",   "fp16", "float16",  "half", "fp8",
                                      "fp8_e4m3", "fp8_e5m2", "fp8_ds_mla", "fp4",  "fp4_e2m1", "nvfp4"};

Model resolve_for(const Catalogue& cat, const Deployment& d) {
  if (!cat.find_model(d.model) && !d.file.empty() && d.file.front() != '<') {
    // a model file named relative to the deployment file
    std::error_code ec;
    const fs::path rel(d.model);
    if (rel.is_relative()) {
      const fs::path beside = fs::path(d.file).parent_path() / rel;
      if (!fs::exists(rel, ec) && fs::exists(beside, ec)) return resolve_model(cat, beside.string());
    }
  }
  return resolve_model(cat, d.model);
}

// The engine model for the target's release; an --engine-version only the other engine knows
// falls back to this engine's newest (run_check has rejected versions neither knows).
const EngineModel& engine_for(const Deployment& d) {
  try {
    return engine_model(d.engine, d.engine_version);
  } catch (const InputError&) {
    return engine_model(d.engine);
  }
}

// --- the rule functions, in evaluation order ---------------------------------------------------

void inputs(RuleContext& c) {
  const Deployment& d = c.d;
  if (!d.model.empty()) {
    try {
      c.model = resolve_for(c.cat, d);
      c.s["model"] = c.model->id;
    } catch (const InputError& e) {
      c.add("model/unknown", c.is_file ? "error" : "warning",
            c.is_file ? std::string(e.what())
                      : fmt::format("{}; the model rules and memory check are skipped (add it with --data DIR)", e.what()),
            c.at({"model"}));
    }
  }
  if (!d.gpu.empty()) {
    try {
      c.gpu = &c.cat.gpu(d.gpu);
      c.s["gpu"] = c.gpu->id;
    } catch (const InputError& e) {
      c.add("gpu/unknown", "error", e.what(), c.at({"gpu"}));
    }
  } else if (!c.is_file) {
    c.add("check/no-gpu", "note",
          "a command line names no GPU: pass --gpu ID (e.g. --gpu h200) to check memory, KV dtype, FP4 and budget rules; they are skipped",
          c.t.anchor);
  }
}

void kv_dtype_name(RuleContext& c) {
  c.kv = c.d.kv_dtype;
  if (!kKvDtypes.count(c.kv)) {
    const auto hint = closest_match(c.kv, {"auto", "bf16", "fp16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp4"});
    c.add("schema/enum", "error",
          fmt::format("unknown KV cache dtype '{}'{}", c.kv,
                      hint.empty() ? " (use auto, bf16, fp16, fp8, fp8_e4m3, fp8_e5m2 or fp4)" : fmt::format("; did you mean '{}'?", hint)),
          c.at({"kv_dtype"}));
    c.kv = "auto";
  }
  c.kv_fit = c.kv;
  if (c.kv == "fp4_e2m1" || c.kv == "nvfp4") c.kv_fit = "fp4";
  if (c.kv == "fp8_ds_mla") c.kv_fit = "fp8";
}

void gpu_counts(RuleContext& c) {
  const Deployment& d = c.d;
  const CheckTarget& t = c.t;
  const Gpu* gpu = c.gpu;
  const int gpn = gpu ? gpu->gpus_per_node : 0;
  const EngineModel& em = engine_for(d);
  const std::int64_t lg64 = std::int64_t{d.layout.tp} * d.layout.pp * (d.engine == Engine::vllm ? d.layout.dp : 1);
  if (lg64 > 100000) {  // Layout::gpus() would overflow an int; no such cluster exists
    c.add("engine/parallel-product", "error",
          fmt::format("the parallel layout needs {} GPUs; more than 100,000", fmt_int(static_cast<double>(lg64))),
          c.at({"parallel.tp", "parallel"}));
    c.stop = true;
    return;
  }
  const int lg = em.gpus(d.layout);
  c.lg = lg;
  int declared = 0;
  int nodes = 0;
  if (t.kind == InputKind::deployment) {
    declared = d.gpus > 0 ? d.gpus : d.nodes * gpn;
    nodes = d.nodes > 0 ? d.nodes : (gpn > 0 && declared > gpn ? (declared + gpn - 1) / gpn : 1);
    if (gpu && d.gpus > 0 && d.nodes > 0) {
      const bool ok = d.nodes == 1 ? d.gpus <= gpn : d.gpus == d.nodes * gpn;
      if (!ok)
        c.add("engine/gpu-count", "error",
              fmt::format("gpus: {} does not match nodes: {} ({} node{} x {} GPUs per {} node = {})", d.gpus, d.nodes, d.nodes,
                          d.nodes > 1 ? "s" : "", gpn, gpu->id, d.nodes * gpn),
              c.at({"gpus", "nodes"}));
    }
  } else if (t.kind == InputKind::command) {
    declared = lg;
    nodes = d.nodes > 0 ? d.nodes : 1;
    if (d.nodes > 1) {
      if (lg % d.nodes != 0)
        c.add("engine/nodes", "error", fmt::format("{} GPUs ({}) do not split evenly over --nnodes {}", lg, em.gpu_product_text(), d.nodes),
              c.at({"nodes"}));
      else if (gpu && lg / d.nodes > gpn)
        c.add("engine/gpu-count", "error",
              fmt::format("{} GPUs over --nnodes {} is {} per node, but a {} node has {}", lg, d.nodes, lg / d.nodes, gpu->id, gpn),
              c.at({"nodes"}));
    } else if (gpu && lg > gpn) {
      nodes = (lg + gpn - 1) / gpn;
      c.add("engine/nnodes", "warning",
            fmt::format("{} GPUs span {} nodes of {} {} but the command has no --nnodes: each node needs {}", lg, nodes, gpn, gpu->id,
                        d.engine == Engine::vllm
                            ? fmt::format("--nnodes {} --node-rank R --master-addr HEAD (workers --headless), or a Ray cluster", nodes)
                            : fmt::format("--nnodes {} --node-rank R --dist-init-addr HEAD:PORT", nodes)),
            c.at({"parallel.tp", "model"}));
    }
  } else {
    declared = t.gpus_per_pod * t.group_size;
    nodes = t.group_size;
    if (gpu && t.gpus_per_pod > gpn)
      c.add("manifest/gpus", "error",
            fmt::format("each pod requests {} GPUs but a {} node has {}: the pods never schedule", t.gpus_per_pod, gpu->id, gpn),
            c.at({"gpus"}));
  }
  if (d.layout_given && declared > 0 && lg != declared && t.kind != InputKind::command) {
    c.add("engine/parallel-product", "error",
          d.engine == Engine::vllm
              ? fmt::format("tp x pp x dp = {} x {} x {} = {} (vLLM) but the deployment has {} GPUs", d.layout.tp, d.layout.pp, d.layout.dp,
                            lg, declared)
              : fmt::format("tp x pp = {} x {} = {} (SGLang; dp with DP-attention splits the TP group) but the deployment has {} GPUs",
                            d.layout.tp, d.layout.pp, lg, declared),
          c.at({"parallel.tp", "parallel", "gpus"}));
  }
  c.declared = declared;
  c.nodes = nodes;
  c.s["gpus"] = declared;
  c.s["nodes"] = nodes;
  if (!c.model || !(declared > 0 || d.layout_given)) c.stop = true;
}

// The layout: from `fit` when the GPU is known, else the deployment's own on a GPU with the
// per-node count the launch implies. The memory rules are decided here too (one pass of fit).
void evaluate_fit(RuleContext& c) {
  const Deployment& d = c.d;
  const CheckTarget& t = c.t;
  const Model& m = *c.model;
  // SGLang keeps EP inside the TP group; with ep > tp the layout rules and the budget would divide
  // by moe_tp = tp / ep = 0 (layout.cpp): refused here with the engine's own rule id, rest skipped
  if (d.engine == Engine::sglang && d.layout_given && d.layout.ep > d.layout.tp) {
    c.add("engine/ep-tp", "error",
          fmt::format("SGLang: tp_size {} must be divisible by ep_size {} (expert parallelism lives inside the TP group); other layout and "
                      "memory rules skipped",
                      d.layout.tp, d.layout.ep),
          c.at({"parallel.ep", "parallel"}));
    c.stop = true;
    return;
  }
  if (c.gpu) {
    Deployment d2 = d;
    d2.gpu = c.gpu->id;
    d2.kv_dtype = c.kv_fit;
    d2.gpus = c.declared > 0 ? c.declared : c.lg;
    d2.nodes = c.nodes;
    // a command line without --enable-expert-parallel runs the experts tensor-parallel: keep EP 1
    if (t.kind != InputKind::deployment && !d2.where.count("parallel.ep")) d2.where["parallel.ep"] = t.anchor;
    try {
      c.fit = fit_deployment(c.cat, d2);
    } catch (const InputError& e) {
      c.add("memory/error", "error", fmt::format("cannot evaluate the memory budget: {}", e.what()), c.at({"gpus", "model"}));
    }
  }
  c.synth.id = "(GPU not given)";
  c.synth.gpus_per_node = t.gpus_per_pod > 0 ? t.gpus_per_pod : std::max(1, c.nodes > 1 ? c.lg / c.nodes : c.lg);
  c.synth.scaleup_domain_gpus = c.synth.gpus_per_node;
  c.layout = c.fit ? c.fit->fit.layout : d.layout;
  if (!c.fit && d.engine == Engine::vllm && m.moe && d.layout_given && c.layout.ep == 1 && !d.where.count("parallel.ep") &&
      t.kind == InputKind::deployment && c.layout.tp * c.layout.dp > 1)
    c.layout.ep = c.layout.tp * c.layout.dp;
  c.s["layout"] = layout_json(c.layout);
}

// Engine refusals are values with ids (engine.hpp Refusal): the id is the rule, the field says
// where in the input it points.
void engine_layout(RuleContext& c) {
  const Deployment& d = c.d;
  const Model& m = *c.model;
  (void)layout_refusals(m, c.rule_gpu(), d.engine, c.layout, &c.layout_warnings,
                        d.engine_version.empty() ? "" : engine_for(d).version().id);
  for (const auto& r : engine_for(d).refusals(m, c.rule_gpu(), c.layout)) {
    c.refusal_messages.push_back(r.message);
    const std::string field = r.field == "nnodes" ? "nodes" : r.field;
    SourcePos p = c.at({"parallel", "gpus", "nodes"});
    if (d.where.count(field))
      p = d.where.at(field);
    else if (field.rfind("parallel.", 0) == 0 && d.where.count("parallel"))
      p = d.where.at("parallel");
    const std::string said = r.message.rfind(c.engine_name, 0) == 0 ? r.message : fmt::format("{}: {}", c.engine_name, r.message);
    const std::string msg = d.layout_given || c.t.kind != InputKind::deployment
                                ? said
                                : fmt::format("{} (no 'parallel' given and no layout {} accepts exists for {} GPUs; tried {})", said,
                                              c.engine_name, c.declared, layout_text(c.layout));
    c.add(r.rule, "error", msg, p);
  }
  for (const auto& w : c.layout_warnings) c.add("engine/tp-across-nodes", "note", w, c.at({"parallel.tp", "parallel", "gpus"}));
}

// The manual layer split (VLLM_PP_LAYER_PARTITION / SGLANG_PP_LAYER_PARTITION): one the engine's
// get_pp_indices raises on, or one set through the variable the other engine reads
void layer_partition(RuleContext& c) {
  const Deployment& d = c.d;
  if (d.pp_layer_partition.empty()) return;
  const EngineModel& em = engine_for(d);
  const SourcePos p = c.at({"parallel.pp_layer_partition", "parallel"});
  if (!d.pp_layer_partition_env.empty() && d.pp_layer_partition_env != em.pp_partition_env()) {
    c.add("engine/pp-layer-partition-env", "warning",
          fmt::format("{} reads {}, not {}: the split {} is ignored and the release's own split runs", c.engine_name, em.pp_partition_env(),
                      d.pp_layer_partition_env, fmt::format("{}", fmt::join(d.pp_layer_partition, ","))),
          p);
    return;
  }
  const std::string why = em.pp_partition_refusal(d.pp_layer_partition, c.model->num_layers(), std::max(1, c.layout.pp));
  if (why.empty()) return;
  c.refusal_messages.push_back(why);  // the fit's reason: reported here, not as a memory finding
  c.add("engine/pp-layer-partition", "error", why, p);
}

void context_max(RuleContext& c) {
  const Model& m = *c.model;
  if (c.d.context > m.max_context)
    c.add("memory/context-max", "error",
          fmt::format("context {} ({} tokens) exceeds {}'s maximum of {} ({} tokens){}", format_context(c.d.context),
                      fmt_int(static_cast<double>(c.d.context)), m.id, format_context(m.max_context),
                      fmt_int(static_cast<double>(m.max_context)),
                      c.d.engine == Engine::vllm ? ": vLLM refuses a max_model_len above the derived one" : ""),
          c.at({"context"}));
}

// The engine/kv-cache-dtype refusal of this target, or "": a deployment file gives k3plan's KV
// dtype, which the release must have a --kv-cache-dtype value for; a command line gives the
// engine's own value, which must be one the release accepts.
std::string kv_dtype_refusal(const RuleContext& c) {
  const Deployment& d = c.d;
  if (!c.model || !kKvDtypes.count(d.kv_dtype)) return "";
  const FlagRelease rel = flag_release(d.engine, d.engine_version);
  if (c.t.kind == InputKind::deployment) return engine_kv_dtype(rel, d.kv_dtype, c.model->dtype).error;
  const FlagTable& table = flag_table(d.engine);
  if (table.in_registry(FlagRegistry::kv_cache_dtype, d.kv_dtype, rel)) return "";
  return fmt::format("--kv-cache-dtype {}: not a value {} accepts; it accepts {}", d.kv_dtype, rel.label(),
                     fmt::join(table.registry(FlagRegistry::kv_cache_dtype, rel), ", "));
}

// Memory as the engine refuses it: vLLM refuses to start when one request of max_model_len does
// not fit the KV pool (check_enough_kv_cache_memory); the running-request cap of a command line is
// a scheduling limit (a warning with the figure).
void memory(RuleContext& c) {
  if (!c.fit) return;
  const FitResult& f = c.fit->fit;
  json& s = c.s;
  s["context"] = f.context;
  s["users"] = f.users;
  s["fits"] = f.fits;
  s["headroom"] = f.headroom;
  s["kv_cache_tokens"] = f.kv_cache_tokens;
  s["max_users"] = f.max_users;
  s["memory_fraction"] = f.utilization_used;
  const auto& refusals = c.refusal_messages;
  // fit refuses a KV dtype the release has no value for; engine/kv-cache-dtype reports it
  const std::string kv_refused =
      kv_dtype_refusal(c).empty() ? "" : engine_kv_dtype(flag_release(c.d.engine, c.d.engine_version), c.kv_fit, c.model->dtype).error;
  for (const auto& r : f.reasons) {
    if (std::find(refusals.begin(), refusals.end(), r) != refusals.end()) continue;
    if (!kv_refused.empty() && r == kv_refused) continue;
    if (r.rfind("context ", 0) == 0) continue;  // reported as memory/context-max
    if (contains(r, "KV/state pool holds") && f.users == 1 && f.max_users == 0 && !f.settings.model().refuses_context_beyond_pool())
      c.add("memory/context-capped", "warning",
            fmt::format("{} starts, but caps a request at {} tokens, below the {} context: {}", c.engine_name,
                        fmt_int(static_cast<double>(f.max_context_one_user)), format_context(f.context), r),
            c.at({"context", "users"}));
    else if (contains(r, "KV/state pool holds") && c.t.kind != InputKind::deployment && f.max_users >= 1)
      c.add("memory/concurrency", "warning",
            fmt::format("{} starts; {} requests of {} tokens fit the KV/state pool at once, not the {} the command allows: the rest "
                        "queue (or are preempted) when every request is that long",
                        c.engine_name, f.max_users, format_context(f.context), f.users),
            c.at({"users", "context"}));
    else if (contains(r, "KV/state pool holds"))
      c.add("memory/kv-pool", "error", fmt::format("{} x {} tokens does not fit: {}", f.users, format_context(f.context), r),
            c.at({"users", "context"}));
    else
      c.add("memory/does-not-fit", "error", fmt::format("does not fit on {} x {}: {}", f.gpus, c.gpu->id, r),
            c.at({"gpus", "nodes", "gpu", "model"}));
  }
  if (f.fits && f.headroom >= 0 && f.headroom < 0.05)
    c.add("memory/headroom", "warning",
          fmt::format("fits with only {:.1f}% of the KV/state pool free at {} users x {} tokens (under 5%): a longer prompt or a memory "
                      "estimate off by a few percent and requests queue or are preempted",
                      f.headroom * 100, f.users, format_context(f.context)),
          c.at({"users", "context"}));
  // vLLM's SchedulerConfig raises ValueError when max_num_batched_tokens < max_num_seqs and the user
  // set max_num_seqs (vllm/config/scheduler.py _verify_args; the defaults never lower a value the
  // user gave, docs/engine-sources/vllm.md 1.2): it does not start
  const bool batch_refused = c.d.engine == Engine::vllm && c.d.max_num_seqs && f.max_num_batched_tokens < f.max_num_seqs;
  if (batch_refused)
    c.add("engine/max-num-seqs", "error",
          fmt::format("vLLM: max_num_batched_tokens ({}) must be greater than or equal to max_num_seqs ({}): SchedulerConfig refuses to "
                      "start; raise --max-num-batched-tokens or lower --max-num-seqs",
                      f.max_num_batched_tokens, f.max_num_seqs),
          c.at({"engine_args.max_num_seqs", "engine_args.max_num_batched_tokens", "model"}));
  for (const auto& w : f.warnings) {
    if (std::find(c.layout_warnings.begin(), c.layout_warnings.end(), w) != c.layout_warnings.end()) continue;
    if (batch_refused && w.rfind("max_num_batched_tokens (", 0) == 0) continue;  // the error above
    c.add("engine/warning", "warning", w, c.at({"engine_args.max_num_seqs", "engine_args.max_num_batched_tokens", "model"}));
  }
}

// Parser names against the engine's registry for the release (engine_flags.hpp): a name the
// release does not register is an error (argparse refuses it, or vLLM at start-up); a registered
// name other than the catalogue's is a warning. Only a command line says what it passes.
void engine_values(RuleContext& c) {
  const Deployment& d = c.d;
  const Model& m = *c.model;
  const std::string kv_refused = kv_dtype_refusal(c);
  if (!kv_refused.empty()) c.add("engine/kv-cache-dtype", "error", kv_refused, c.at({"kv_dtype"}));
  if (c.t.kind == InputKind::deployment) return;
  const ParserNames& names = model_parsers(m, d.engine);
  const FlagRelease rel = flag_release(d.engine, d.engine_version);
  const FlagTable& table = flag_table(d.engine);
  auto parser = [&](const std::string& want, const std::optional<std::string>& have, const char* flag, FlagRegistry reg, const char* rule,
                    const char* bad_rule, const char* field, const char* what) {
    const bool want_registered = want.empty() || table.in_registry(reg, want, rel);
    if (have) {
      if (!table.in_registry(reg, *have, rel)) {
        const auto known = table.registry(reg, rel);
        const std::string hint_name = closest_match(*have, known);
        c.add(bad_rule, "error",
              fmt::format("{} {}: not a parser {} registers, so it refuses to start{}", flag, *have, rel.label(),
                          !want.empty() && want_registered ? fmt::format("; {} uses '{}'", m.id, want)
                          : !hint_name.empty()             ? fmt::format("; did you mean '{}'?", hint_name)
                                                           : ""),
              c.at({field}));
      } else if (!want.empty() && *have != want) {
        c.add(rule, "warning", fmt::format("{} {}: the catalogue names '{}' for {} on {}", flag, *have, want, m.id, c.engine_name),
              c.at({field}));
      }
      return;
    }
    if (want.empty()) return;
    if (!want_registered) {
      const std::string from = table.first_release_with(reg, want);
      c.add(rule, "note",
            fmt::format("{}'s {} parser {} is not registered in {}{}: {} come back as plain text", m.id, c.engine_name, want, rel.label(),
                        from.empty() ? "" : fmt::format(" (registered from {})", from), what),
            c.t.anchor);
      return;
    }
    c.add(rule, "warning",
          fmt::format(
              "{} needs {} {} for {}; without it they come back as plain text{}", m.id, flag, want, what,
              reg == FlagRegistry::tool_call_parser && d.engine == Engine::vllm ? " (vLLM also needs --enable-auto-tool-choice)" : ""),
          c.t.anchor);
  };
  parser(names.tool_call_parser, d.tool_call_parser, "--tool-call-parser", FlagRegistry::tool_call_parser, "model/tool-call-parser",
         "engine/tool-call-parser", "tool_call_parser", "tool calls");
  parser(names.reasoning_parser, d.reasoning_parser, "--reasoning-parser", FlagRegistry::reasoning_parser, "model/reasoning-parser",
         "engine/reasoning-parser", "reasoning_parser", "reasoning output");
  if (m.engine.trust_remote_code && d.trust_remote_code && !*d.trust_remote_code)
    c.add("model/trust-remote-code", "error",
          fmt::format("{} ships custom model code: the engine refuses to load it without --trust-remote-code", m.id), c.t.anchor);
}

// dtypes the GPU runs natively
void native_dtypes(RuleContext& c) {
  const Gpu* gpu = c.gpu;
  if (!gpu) return;
  const Model& m = *c.model;
  if (c.kv_fit == "fp8" || c.kv_fit == "fp8_e4m3" || c.kv_fit == "fp8_e5m2") {
    if (!gpu->runs_natively("fp8"))
      c.add("model/kv-dtype", "error", fmt::format("KV cache dtype {}: {} has no native FP8; use bf16 (or auto)", c.kv, gpu->id),
            c.at({"kv_dtype"}));
  } else if (c.kv_fit == "fp4") {
    if (!gpu->runs_natively("nvfp4") && !gpu->runs_natively("mxfp4"))
      c.add("model/kv-dtype", "error", fmt::format("KV cache dtype {}: {} has no native FP4", c.kv, gpu->id), c.at({"kv_dtype"}));
  }
  std::set<std::string> fp4;
  if (m.moe) fp4.insert(m.precision_of(ParamGroup::routed_experts));
  fp4.insert(m.default_precision);
  for (const auto& p : fp4)
    if ((p == "mxfp4" || p == "nvfp4") && !gpu->runs_natively(p))
      c.add("model/fp4-weights", "warning",
            fmt::format("{} ships {} in {}; {} has no native {}: they run through slower weight-only kernels (e.g. Marlin W4A16)", m.id,
                        m.moe && m.precision_of(ParamGroup::routed_experts) == p ? "its routed experts" : "its weights", p, gpu->id, p),
            c.at({"gpu", "model"}));
}

void budget(RuleContext& c) {
  const Deployment& d = c.d;
  const Gpu* gpu = c.gpu;
  if (!gpu || !(d.usd_per_month_max || d.usd_per_gpu_hour)) return;
  const Catalogue& cat = c.cat;
  const bool own_rate = d.usd_per_gpu_hour.has_value();
  const bool catalogue_rate = !own_rate && gpu->price_usd_per_hour.value > 0;
  const double rate = own_rate         ? *d.usd_per_gpu_hour
                      : catalogue_rate ? gpu->price_usd_per_hour.value
                                       : cat.prices().default_usd_per_gpu_hour.value;
  RentalScenario r;
  r.gpus = c.fit ? c.fit->fit.gpus : c.declared;
  r.hours_per_day = 24;
  r.days_per_month = cat.prices().hours_per_month / 24;
  r.usd_per_gpu_hour = rate;
  const double monthly = r.usd_per_month();
  c.s["usd_per_month"] = monthly;
  c.s["usd_per_gpu_hour"] = rate;
  if (d.usd_per_month_max && monthly > *d.usd_per_month_max)
    c.add("budget/over", "error",
          fmt::format("{} x {} x {} h x {:.2f} USD/GPU-hour ({}) = {} USD/month, over the budget of {} USD/month", r.gpus, gpu->id,
                      fmt_int(cat.prices().hours_per_month), rate,
                      own_rate         ? "budget.usd_per_gpu_hour"
                      : catalogue_rate ? (gpu->price_usd_per_hour.assumed ? "catalogue price, assumed" : "catalogue price")
                                       : "default rate",
                      fmt_int(monthly), fmt_int(*d.usd_per_month_max)),
          c.at({"budget.usd_per_month_max"}));
}

// clang-format off
const std::vector<RuleInfo> kRules = {
    // readers: deployment file schema, command lines, manifests
    {"schema/unknown-key", "error", "Unknown key in a deployment file (with a did-you-mean)", nullptr},
    {"schema/duplicate-key", "error", "A key appears twice in one mapping", nullptr},
    {"schema/type", "error", "A field has the wrong type", nullptr},
    {"schema/range", "error", "A number is outside the range the field allows", nullptr},
    {"schema/missing", "error", "A required field is missing", nullptr},
    {"command/value", "error", "An engine flag has a missing or invalid value", nullptr},
    {"command/model", "error", "The command line names no model", nullptr},
    {"manifest/structure", "error", "The LeaderWorkerSet is missing a required part", nullptr},
    {"manifest/command", "error", "No container in the LeaderWorkerSet runs vLLM or SGLang", nullptr},
    {"manifest/worker-rank", "error", "A worker pod's rank or data-parallel start rank is not the one its LWS_WORKER_INDEX needs", nullptr},
    // model and GPU
    {"model/unknown", "error", "The model is not in the catalogue and no model file was found", inputs},
    {"gpu/unknown", "error", "The GPU is not in the catalogue", inputs},
    {"check/no-gpu", "note", "No GPU type given: memory, dtype and budget rules skipped", inputs},
    {"schema/enum", "error", "A value is not one of the allowed names", kv_dtype_name},
    // GPU counts
    {"engine/gpu-count", "error", "GPU count does not equal nodes x GPUs per node", gpu_counts},
    {"engine/parallel-product", "error", "tp x pp (SGLang) or tp x pp x dp (vLLM) does not equal the GPUs", gpu_counts},
    {"engine/nnodes", "warning", "Multi-node launch without a matching --nnodes", gpu_counts},
    {"engine/nodes", "error", "The GPUs do not split evenly over --nnodes", gpu_counts},
    {"manifest/gpus", "error", "GPU resource requests of the pods are missing, inconsistent or larger than a node", gpu_counts},
    {"memory/error", "error", "The memory budget could not be evaluated", evaluate_fit},
    // engine refusals (ids from the engine models, src/engines/)
    {"layout/degree", "error", "A parallel degree below 1 or beyond any deployment", engine_layout},
    {"layout/whole-nodes", "error", "The GPUs do not fill whole nodes", engine_layout},
    {"engine/pp-layers", "error", "Pipeline parallel size above the number of layers", engine_layout},
    {"engine/ep-dense", "error", "Expert parallelism on a model without experts", engine_layout},
    {"engine/ep-experts", "error", "Expert parallel size does not divide the routed experts", engine_layout},
    {"engine/dcp-kind", "error", "Decode context parallel on a model kind it is not modelled for", engine_layout},
    {"engine/dcp-tp", "error", "Decode context parallel size does not divide the TP size", engine_layout},
    {"engine/tp-heads", "error", "Tensor parallel size does not divide the attention heads", engine_layout},
    {"engine/dp-attention-tp", "error", "SGLang: the DP size does not divide the TP size with DP attention", engine_layout},
    {"engine/ep-tp", "error", "SGLang: the EP size does not divide the TP size", engine_layout},
    {"engine/dp-multinode", "error", "SGLang: multi-node data parallel without DP attention", engine_layout},
    {"engine/dp-replicas", "error", "SGLang: --dp-size without DP attention runs separate replicas", engine_layout},
    {"engine/nodes-tp", "error", "SGLang: the TP x PP size does not divide over the nodes", engine_layout},
    {"engine/fp8-block", "error", "FP8 block-quantized weights split below the 128-wide block", engine_layout},
    {"engine/dp-attention", "error", "vLLM has no DP-attention flag", engine_layout},
    {"engine/ep-derived", "error", "vLLM derives EP = TP x DP: another EP size cannot be set", engine_layout},
    {"engine/tp-across-nodes", "note", "Tensor parallelism crosses the scale-out network", engine_layout},
    {"engine/pp-layer-partition", "error", "The manual layer split does not give one count per pipeline stage summing to the layers", layer_partition},
    {"engine/pp-layer-partition-env", "warning", "The layer split is set through the other engine's variable and is ignored", layer_partition},
    // memory, through fit
    {"memory/context-max", "error", "Context above the model's maximum", context_max},
    {"memory/does-not-fit", "error", "Weights and engine reserve exceed the GPU memory", memory},
    {"memory/kv-pool", "error", "users x context is beyond the KV cache pool", memory},
    {"memory/concurrency", "warning", "The running-request cap allows more full-length requests than the pool holds", memory},
    {"memory/context-capped", "warning", "SGLang starts but caps requests below the context asked for", memory},
    {"memory/headroom", "warning", "Fits with under 5% of the KV/state pool free", memory},
    {"engine/max-num-seqs", "error", "vLLM: max_num_seqs set above max_num_batched_tokens (SchedulerConfig refuses to start)", memory},
    {"engine/warning", "warning", "An engine setting the engine warns about", memory},
    // values the engine release accepts, and the model's needs
    {"engine/kv-cache-dtype", "error", "KV cache dtype the engine release has no --kv-cache-dtype value for", engine_values},
    {"engine/tool-call-parser", "error", "Tool-call parser the engine release does not register (it refuses to start)", engine_values},
    {"engine/reasoning-parser", "error", "Reasoning parser the engine release does not register (it refuses to start)", engine_values},
    {"model/tool-call-parser", "warning", "Tool-call parser missing or different from the model's", engine_values},
    {"model/reasoning-parser", "warning", "Reasoning parser missing or different from the model's", engine_values},
    {"model/trust-remote-code", "error", "--trust-remote-code missing for a model that ships custom code", engine_values},
    {"model/kv-dtype", "error", "KV cache dtype the GPU does not support natively", native_dtypes},
    {"model/fp4-weights", "warning", "FP4 weights on a GPU without native FP4 (slower weight-only kernels)", native_dtypes},
    {"budget/over", "error", "Monthly cost over budget.usd_per_month_max", budget},
};
// clang-format on

const char* kind_name(InputKind k) {
  switch (k) {
    case InputKind::deployment:
      return "deployment";
    case InputKind::command:
      return "command";
    case InputKind::manifest:
      return "manifest";
  }
  return "deployment";
}

}  // namespace

const std::vector<RuleInfo>& check_rules() { return kRules; }

const RuleInfo* find_rule(const std::string& id) {
  for (const auto& r : kRules)
    if (id == r.id) return &r;
  return nullptr;
}

void check_target(const Catalogue& cat, const CheckTarget& t, std::vector<Finding>& findings, json* summary) {
  const Deployment& d = t.deployment;
  RuleContext c(cat, t, findings);
  c.is_file = t.kind == InputKind::deployment;
  c.engine_name = engine_for(d).display_name();
  c.s = {{"file", d.file}, {"kind", kind_name(t.kind)}, {"engine", to_string(d.engine)}, {"model", d.model}, {"gpu", d.gpu}};
  RuleFunction last = nullptr;
  for (const auto& r : kRules) {
    if (c.stop) break;
    if (!r.function || r.function == last) continue;
    last = r.function;
    r.function(c);
  }
  if (summary) *summary = c.s;
}

}  // namespace k3plan
