// `k3plan check`: deployment files, engine command lines and LeaderWorkerSet manifests through the
// schema, the engines' layout rules, `fit`, model correctness and budget rules. Findings carry
// file:line:column and render as compiler-style text, JSON or SARIF 2.1.0.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <k3plan/budget.hpp>
#include <k3plan/check.hpp>
#include <k3plan/cost.hpp>
#include <k3plan/deploy_fit.hpp>
#include <k3plan/engine_flags.hpp>
#include <k3plan/error.hpp>
#include <k3plan/input_limits.hpp>
#include <k3plan/manifest.hpp>
#include <k3plan/units.hpp>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "common.hpp"

namespace k3plan {

namespace fs = std::filesystem;
using nlohmann::json;

// --- reading inputs ------------------------------------------------------------------------------

namespace {

std::string raw_scalar_at(const std::string& text, int line, int column) {
  if (line < 1 || column < 1) return "";
  std::size_t pos = 0;
  for (int l = 1; l < line; ++l) {
    pos = text.find('\n', pos);
    if (pos == std::string::npos) return "";
    ++pos;
  }
  pos += static_cast<std::size_t>(column - 1);
  if (pos >= text.size()) return "";
  std::string s;
  while (pos < text.size() && text[pos] != '\n' && text[pos] != ',' && text[pos] != '}' && text[pos] != ']' && text[pos] != '#')
    s += text[pos++];
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) s = s.substr(1, s.size() - 2);
  return s;
}

// A number no plan could hold (overflow, infinity, NaN) is unreadable input, not a finding.
bool unrepresentable_number(const std::string& raw) {
  std::string v;
  for (char c : raw) v += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == ".inf" || v == "-.inf" || v == "+.inf" || v == ".nan") return true;
  if (v.empty() || !(std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '-' || v[0] == '+' || v[0] == '.')) return false;
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (end == v.c_str()) return false;
  return !std::isfinite(x) || std::fabs(x) >= 9007199254740992.0;  // 2^53
}

std::string escape_control(const std::string& s) {
  std::string o;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n')
      o += "\\n";
    else if (c == '\r')
      o += "\\r";
    else if (c == '\t')
      o += "\\t";
    else if (c < 0x20 || c == 0x7F)
      o += fmt::format("\\x{:02x}", c);
    else
      o += static_cast<char>(c);
  }
  return o;
}

bool contains(const std::string& s, const char* needle) { return s.find(needle) != std::string::npos; }

}  // namespace

// --- rules ------------------------------------------------------------------------------------

namespace {

const std::set<std::string> kKvDtypes{"auto",     "bf16",     "bfloat16",   "fp16", "float16",  "half", "fp8",
                                      "fp8_e4m3", "fp8_e5m2", "fp8_ds_mla", "fp4",  "fp4_e2m1", "nvfp4"};

// Engine refusal text -> rule id and the field it is about.
std::pair<std::string, std::vector<const char*>> classify_refusal(const std::string& m) {
  if (contains(m, "heads")) return {"engine/tp-heads", {"parallel.tp", "parallel"}};
  if (contains(m, "routed experts")) return {"engine/ep-experts", {"parallel.ep", "parallel"}};
  if (contains(m, "Number of experts")) return {"engine/ep-dense", {"parallel.ep", "parallel"}};
  if (contains(m, "block_n") || contains(m, "weight_block_size")) return {"engine/fp8-block", {"parallel.tp", "parallel"}};
  if (contains(m, "number of nodes") || contains(m, "whole")) return {"engine/nodes", {"nodes", "gpus", "parallel.tp"}};
  if (contains(m, "dp_size") || contains(m, "data parallel") || contains(m, "dp-size") || contains(m, "dp-attention") ||
      contains(m, "dp attention"))
    return {"engine/dp", {"parallel.dp", "parallel.dp_attention", "parallel"}};
  if (contains(m, "ep_size") || contains(m, "EP_SIZE")) return {"engine/ep", {"parallel.ep", "parallel"}};
  if (contains(m, "pipeline")) return {"engine/pp", {"parallel.pp", "parallel"}};
  return {"engine/layout", {"parallel"}};
}

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

}  // namespace

void check_target(const Catalogue& cat, const CheckTarget& t, std::vector<Finding>& out, json* summary) {
  const Deployment& d = t.deployment;
  const bool is_file = t.kind == InputKind::deployment;
  auto add = [&](const std::string& rule, const char* sev, const std::string& msg, const SourcePos& p) {
    out.push_back({rule, sev, msg, p});
  };
  auto at = [&](std::initializer_list<const char*> fields) -> SourcePos {
    for (const char* f : fields) {
      const auto it = d.where.find(f);
      if (it != d.where.end()) return it->second;
    }
    return t.anchor.file.empty() ? SourcePos{d.file, 1, 1} : t.anchor;
  };
  const char* engine_name = d.engine == Engine::vllm ? "vLLM" : "SGLang";
  json s = {{"file", d.file}, {"kind", kind_name(t.kind)}, {"engine", to_string(d.engine)}, {"model", d.model}, {"gpu", d.gpu}};

  // model and GPU
  std::optional<Model> model;
  if (!d.model.empty()) {
    try {
      model = resolve_for(cat, d);
      s["model"] = model->id;
    } catch (const InputError& e) {
      add("model/unknown", is_file ? "error" : "warning",
          is_file ? std::string(e.what())
                  : fmt::format("{}; the model rules and memory check are skipped (add it with --data DIR)", e.what()),
          at({"model"}));
    }
  }
  const Gpu* gpu = nullptr;
  if (!d.gpu.empty()) {
    try {
      gpu = &cat.gpu(d.gpu);
      s["gpu"] = gpu->id;
    } catch (const InputError& e) {
      add("gpu/unknown", "error", e.what(), at({"gpu"}));
    }
  } else if (!is_file) {
    add("check/no-gpu", "note",
        "a command line names no GPU: pass --gpu ID (e.g. --gpu h200) to check memory, KV dtype, FP4 and budget rules; they are skipped",
        t.anchor);
  }

  // KV cache dtype
  std::string kv = d.kv_dtype;
  if (!kKvDtypes.count(kv)) {
    const auto hint = closest_match(kv, {"auto", "bf16", "fp16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp4"});
    add("schema/enum", "error",
        fmt::format("unknown KV cache dtype '{}'{}", kv,
                    hint.empty() ? " (use auto, bf16, fp16, fp8, fp8_e4m3, fp8_e5m2 or fp4)" : fmt::format("; did you mean '{}'?", hint)),
        at({"kv_dtype"}));
    kv = "auto";
  }
  std::string kv_fit = kv;
  if (kv == "fp4_e2m1" || kv == "nvfp4") kv_fit = "fp4";
  if (kv == "fp8_ds_mla") kv_fit = "fp8";

  // GPU counts
  const int gpn = gpu ? gpu->gpus_per_node : 0;
  const std::int64_t lg64 = std::int64_t{d.layout.tp} * d.layout.pp * (d.engine == Engine::vllm ? d.layout.dp : 1);
  if (lg64 > 100000) {  // Layout::gpus() would overflow an int; no such cluster exists
    add("engine/parallel-product", "error",
        fmt::format("the parallel layout needs {} GPUs; more than 100,000", fmt_int(static_cast<double>(lg64))),
        at({"parallel.tp", "parallel"}));
    if (summary) *summary = s;
    return;
  }
  const int lg = d.layout.gpus(d.engine);
  int declared = 0;  // the GPUs this deployment has
  int nodes = 0;
  if (t.kind == InputKind::deployment) {
    declared = d.gpus > 0 ? d.gpus : d.nodes * gpn;
    nodes = d.nodes > 0 ? d.nodes : (gpn > 0 && declared > gpn ? (declared + gpn - 1) / gpn : 1);
    if (gpu && d.gpus > 0 && d.nodes > 0) {
      const bool ok = d.nodes == 1 ? d.gpus <= gpn : d.gpus == d.nodes * gpn;
      if (!ok)
        add("engine/gpu-count", "error",
            fmt::format("gpus: {} does not match nodes: {} ({} node{} x {} GPUs per {} node = {})", d.gpus, d.nodes, d.nodes,
                        d.nodes > 1 ? "s" : "", gpn, gpu->id, d.nodes * gpn),
            at({"gpus", "nodes"}));
    }
  } else if (t.kind == InputKind::command) {
    declared = lg;
    nodes = d.nodes > 0 ? d.nodes : 1;
    if (d.nodes > 1) {
      if (lg % d.nodes != 0)
        add("engine/nodes", "error",
            fmt::format("{} GPUs ({}) do not split evenly over --nnodes {}", lg, d.engine == Engine::vllm ? "tp x pp x dp" : "tp x pp",
                        d.nodes),
            at({"nodes"}));
      else if (gpu && lg / d.nodes > gpn)
        add("engine/gpu-count", "error",
            fmt::format("{} GPUs over --nnodes {} is {} per node, but a {} node has {}", lg, d.nodes, lg / d.nodes, gpu->id, gpn),
            at({"nodes"}));
    } else if (gpu && lg > gpn) {
      nodes = (lg + gpn - 1) / gpn;
      add("engine/nnodes", "warning",
          fmt::format("{} GPUs span {} nodes of {} {} but the command has no --nnodes: each node needs {}", lg, nodes, gpn, gpu->id,
                      d.engine == Engine::vllm
                          ? fmt::format("--nnodes {} --node-rank R --master-addr HEAD (workers --headless), or a Ray cluster", nodes)
                          : fmt::format("--nnodes {} --node-rank R --dist-init-addr HEAD:PORT", nodes)),
          at({"parallel.tp", "model"}));
    }
  } else {
    declared = t.gpus_per_pod * t.group_size;
    nodes = t.group_size;
    if (gpu && t.gpus_per_pod > gpn)
      add("manifest/gpus", "error",
          fmt::format("each pod requests {} GPUs but a {} node has {}: the pods never schedule", t.gpus_per_pod, gpu->id, gpn),
          at({"gpus"}));
  }
  if (d.layout_given && declared > 0 && lg != declared && t.kind != InputKind::command) {
    add("engine/parallel-product", "error",
        d.engine == Engine::vllm
            ? fmt::format("tp x pp x dp = {} x {} x {} = {} (vLLM) but the deployment has {} GPUs", d.layout.tp, d.layout.pp, d.layout.dp,
                          lg, declared)
            : fmt::format("tp x pp = {} x {} = {} (SGLang; dp with DP-attention splits the TP group) but the deployment has {} GPUs",
                          d.layout.tp, d.layout.pp, lg, declared),
        at({"parallel.tp", "parallel", "gpus"}));
  }
  s["gpus"] = declared;
  s["nodes"] = nodes;

  const bool countable = declared > 0 || d.layout_given;
  if (!model || !countable) {
    if (summary) *summary = s;
    return;
  }
  const Model& m = *model;

  // the layout: from `fit` when the GPU is known, else the deployment's own on a GPU with the
  // per-node count the launch implies
  // SGLang keeps EP inside the TP group; with ep > tp the layout rules and the budget would divide by
  // moe_tp = tp / ep = 0 (layout.cpp), so this one is refused here and the rest skipped
  if (d.engine == Engine::sglang && d.layout_given && d.layout.ep > d.layout.tp) {
    add("engine/ep", "error",
        fmt::format("SGLang: tp_size {} must be divisible by ep_size {} (expert parallelism lives inside the TP group); other layout and "
                    "memory rules skipped",
                    d.layout.tp, d.layout.ep),
        at({"parallel.ep", "parallel"}));
    if (summary) *summary = s;
    return;
  }
  std::optional<DeploymentFit> fit;
  if (gpu) {
    Deployment d2 = d;
    d2.gpu = gpu->id;
    d2.kv_dtype = kv_fit;
    d2.gpus = declared > 0 ? declared : lg;
    d2.nodes = nodes;
    // a command line without --enable-expert-parallel runs the experts tensor-parallel: keep EP 1
    if (t.kind != InputKind::deployment && !d2.where.count("parallel.ep")) d2.where["parallel.ep"] = t.anchor;
    try {
      fit = fit_deployment(cat, d2);
    } catch (const InputError& e) {
      add("memory/error", "error", fmt::format("cannot evaluate the memory budget: {}", e.what()), at({"gpus", "model"}));
    }
  }
  Gpu synth;
  synth.id = "(GPU not given)";
  synth.gpus_per_node = t.gpus_per_pod > 0 ? t.gpus_per_pod : std::max(1, nodes > 1 ? lg / nodes : lg);
  synth.scaleup_domain_gpus = synth.gpus_per_node;
  const Gpu& rule_gpu = gpu ? *gpu : synth;
  Layout layout = fit ? fit->fit.layout : d.layout;
  if (!fit && d.engine == Engine::vllm && m.moe && d.layout_given && layout.ep == 1 && !d.where.count("parallel.ep") &&
      t.kind == InputKind::deployment && layout.tp * layout.dp > 1)
    layout.ep = layout.tp * layout.dp;
  s["layout"] = {{"tp", layout.tp}, {"ep", layout.ep}, {"dp", layout.dp}, {"pp", layout.pp}, {"dp_attention", layout.dp_attention}};

  // engine rules, in the engines' words
  std::vector<std::string> layout_warnings;
  const auto refusals = layout_refusals(m, rule_gpu, d.engine, layout, &layout_warnings);
  for (const auto& r : refusals) {
    const auto [rule, fields] = classify_refusal(r);
    SourcePos p = t.anchor;
    bool found = false;
    for (const char* f : fields)
      if (!found && d.where.count(f)) {
        p = d.where.at(f);
        found = true;
      }
    if (!found) p = at({"parallel", "gpus", "nodes"});
    const std::string said = r.rfind(engine_name, 0) == 0 ? r : fmt::format("{}: {}", engine_name, r);
    const std::string msg = d.layout_given || t.kind != InputKind::deployment
                                ? said
                                : fmt::format("{} (no 'parallel' given and no layout {} accepts exists for {} GPUs; tried {})", said,
                                              engine_name, declared, layout_text(layout));
    add(rule, "error", msg, p);
  }
  for (const auto& w : layout_warnings) add("engine/tp-across-nodes", "note", w, at({"parallel.tp", "parallel", "gpus"}));

  // context above the model's maximum
  if (d.context > m.max_context)
    add("memory/context-max", "error",
        fmt::format("context {} ({} tokens) exceeds {}'s maximum of {} ({} tokens){}", format_context(d.context),
                    fmt_int(static_cast<double>(d.context)), m.id, format_context(m.max_context),
                    fmt_int(static_cast<double>(m.max_context)),
                    d.engine == Engine::vllm ? ": vLLM refuses a max_model_len above the derived one" : ""),
        at({"context"}));

  // memory, through fit
  if (fit) {
    const FitResult& f = fit->fit;
    s["context"] = f.context;
    s["users"] = f.users;
    s["fits"] = f.fits;
    s["headroom"] = f.headroom;
    s["kv_cache_tokens"] = f.kv_cache_tokens;
    s["max_users"] = f.max_users;
    s["memory_fraction"] = f.utilization_used;
    for (const auto& r : f.reasons) {
      if (std::find(refusals.begin(), refusals.end(), r) != refusals.end()) continue;
      if (r.rfind("context ", 0) == 0) continue;  // reported above as memory/context-max
      if (contains(r, "KV/state pool holds") && f.users == 1 && f.max_users == 0 && !f.settings.model().refuses_context_beyond_pool())
        add("memory/context-capped", "warning",
            fmt::format("{} starts, but caps a request at {} tokens, below the {} context: {}", engine_name,
                        fmt_int(static_cast<double>(f.max_context_one_user)), format_context(f.context), r),
            at({"context", "users"}));
      else if (contains(r, "KV/state pool holds") && t.kind != InputKind::deployment && f.max_users >= 1)
        // a command line's --max-running-requests / --max-num-seqs is a cap, not a demand: the
        // engine starts and queues the requests beyond what the pool holds at full length
        add("memory/concurrency", "warning",
            fmt::format("{} starts; {} requests of {} tokens fit the KV/state pool at once, not the {} the command allows: the rest "
                        "queue (or are preempted) when every request is that long",
                        engine_name, f.max_users, format_context(f.context), f.users),
            at({"users", "context"}));
      else if (contains(r, "KV/state pool holds"))
        add("memory/kv-pool", "error", fmt::format("{} x {} tokens does not fit: {}", f.users, format_context(f.context), r),
            at({"users", "context"}));
      else
        add("memory/does-not-fit", "error", fmt::format("does not fit on {} x {}: {}", f.gpus, gpu->id, r),
            at({"gpus", "nodes", "gpu", "model"}));
    }
    if (f.fits && f.headroom >= 0 && f.headroom < 0.05)
      add("memory/headroom", "warning",
          fmt::format("fits with only {:.1f}% of the KV/state pool free at {} users x {} tokens (under 5%): a longer prompt or a memory "
                      "estimate off by a few "
                      "percent and requests queue or are preempted",
                      f.headroom * 100, f.users, format_context(f.context)),
          at({"users", "context"}));
    for (const auto& w : f.warnings) {
      if (std::find(layout_warnings.begin(), layout_warnings.end(), w) != layout_warnings.end()) continue;
      add("engine/warning", "warning", w, at({"engine_args.max_num_seqs", "engine_args.max_num_batched_tokens", "model"}));
    }
  }

  // correctness for the model: parsers and remote code (only a command line says what it passes).
  // Parser names are checked against the engine's registry for the release (engine_flags.hpp):
  // a name the release does not register is an error (argparse refuses it, or vLLM at start-up);
  // a registered name other than the catalogue's is a warning.
  if (t.kind == InputKind::deployment) {
    // a deployment file gives k3plan's KV dtype: the engine release must have a name for it
    const KvDtypeArg kva = engine_kv_dtype(flag_release(d.engine, d.engine_version), d.kv_dtype, m.dtype);
    if (kKvDtypes.count(d.kv_dtype) && !kva.error.empty()) add("engine/kv-cache-dtype", "error", kva.error, at({"kv_dtype"}));
  } else {
    const auto& hint = m.engine;
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
          add(bad_rule, "error",
              fmt::format("{} {}: not a parser {} registers, so it refuses to start{}", flag, *have, rel.label(),
                          !want.empty() && want_registered ? fmt::format("; {} uses '{}'", m.id, want)
                          : !hint_name.empty()             ? fmt::format("; did you mean '{}'?", hint_name)
                                                           : ""),
              at({field}));
        } else if (!want.empty() && *have != want) {
          add(rule, "warning", fmt::format("{} {}: the catalogue names '{}' for {} on {}", flag, *have, want, m.id, engine_name),
              at({field}));
        }
        return;
      }
      if (want.empty()) return;
      if (!want_registered) {
        const std::string from = table.first_release_with(reg, want);
        add(rule, "note",
            fmt::format("{}'s {} parser {} is not registered in {}{}: {} come back as plain text", m.id, engine_name, want, rel.label(),
                        from.empty() ? "" : fmt::format(" (registered from {})", from), what),
            t.anchor);
        return;
      }
      add(rule, "warning",
          fmt::format(
              "{} needs {} {} for {}; without it they come back as plain text{}", m.id, flag, want, what,
              reg == FlagRegistry::tool_call_parser && d.engine == Engine::vllm ? " (vLLM also needs --enable-auto-tool-choice)" : ""),
          t.anchor);
    };
    // the KV cache dtype as the command line spells it: one of the release's --kv-cache-dtype values
    if (kKvDtypes.count(d.kv_dtype) && !table.in_registry(FlagRegistry::kv_cache_dtype, d.kv_dtype, rel))
      add("engine/kv-cache-dtype", "error",
          fmt::format("--kv-cache-dtype {}: not a value {} accepts; it accepts {}", d.kv_dtype, rel.label(),
                      fmt::join(table.registry(FlagRegistry::kv_cache_dtype, rel), ", ")),
          at({"kv_dtype"}));
    parser(names.tool_call_parser, d.tool_call_parser, "--tool-call-parser", FlagRegistry::tool_call_parser, "model/tool-call-parser",
           "engine/tool-call-parser", "tool_call_parser", "tool calls");
    parser(names.reasoning_parser, d.reasoning_parser, "--reasoning-parser", FlagRegistry::reasoning_parser, "model/reasoning-parser",
           "engine/reasoning-parser", "reasoning_parser", "reasoning output");
    if (hint.trust_remote_code && d.trust_remote_code && !*d.trust_remote_code)
      add("model/trust-remote-code", "error",
          fmt::format("{} ships custom model code: the engine refuses to load it without --trust-remote-code", m.id), t.anchor);
  }

  // dtypes the GPU runs natively
  if (gpu) {
    if (kv_fit == "fp8" || kv_fit == "fp8_e4m3" || kv_fit == "fp8_e5m2") {
      if (!gpu->runs_natively("fp8"))
        add("model/kv-dtype", "error", fmt::format("KV cache dtype {}: {} has no native FP8; use bf16 (or auto)", kv, gpu->id),
            at({"kv_dtype"}));
    } else if (kv_fit == "fp4") {
      if (!gpu->runs_natively("nvfp4") && !gpu->runs_natively("mxfp4"))
        add("model/kv-dtype", "error", fmt::format("KV cache dtype {}: {} has no native FP4", kv, gpu->id), at({"kv_dtype"}));
    }
    std::set<std::string> fp4;
    if (m.moe) fp4.insert(m.precision_of(ParamGroup::routed_experts));
    fp4.insert(m.default_precision);
    for (const auto& p : fp4) {
      if ((p == "mxfp4" || p == "nvfp4") && !gpu->runs_natively(p))
        add("model/fp4-weights", "warning",
            fmt::format("{} ships {} in {}; {} has no native {}: they run through slower weight-only kernels (e.g. Marlin W4A16)", m.id,
                        m.moe && m.precision_of(ParamGroup::routed_experts) == p ? "its routed experts" : "its weights", p, gpu->id, p),
            at({"gpu", "model"}));
    }
  }

  // budget
  if (gpu && (d.usd_per_month_max || d.usd_per_gpu_hour)) {
    const bool own_rate = d.usd_per_gpu_hour.has_value();
    const bool catalogue_rate = !own_rate && gpu->price_usd_per_hour.value > 0;
    const double rate = own_rate         ? *d.usd_per_gpu_hour
                        : catalogue_rate ? gpu->price_usd_per_hour.value
                                         : cat.prices().default_usd_per_gpu_hour.value;
    RentalScenario r;
    r.gpus = fit ? fit->fit.gpus : declared;
    r.hours_per_day = 24;
    r.days_per_month = cat.prices().hours_per_month / 24;
    r.usd_per_gpu_hour = rate;
    const double monthly = r.usd_per_month();
    s["usd_per_month"] = monthly;
    s["usd_per_gpu_hour"] = rate;
    if (d.usd_per_month_max && monthly > *d.usd_per_month_max)
      add("budget/over", "error",
          fmt::format("{} x {} x {} h x {:.2f} USD/GPU-hour ({}) = {} USD/month, over the budget of {} USD/month", r.gpus, gpu->id,
                      fmt_int(cat.prices().hours_per_month), rate,
                      own_rate         ? "budget.usd_per_gpu_hour"
                      : catalogue_rate ? (gpu->price_usd_per_hour.assumed ? "catalogue price, assumed" : "catalogue price")
                                       : "default rate",
                      fmt_int(monthly), fmt_int(*d.usd_per_month_max)),
          at({"budget.usd_per_month_max"}));
  }
  if (summary) *summary = s;
}

// --- rendering --------------------------------------------------------------------------------

std::string finding_line(const Finding& f) {
  std::string where = escape_control(f.pos.file.empty() ? "<input>" : f.pos.file);
  if (f.pos.line > 0) where += fmt::format(":{}:{}", f.pos.line, std::max(1, f.pos.column));
  return fmt::format("{}: {}: {} [{}]", where, f.severity, escape_control(f.message), f.rule);
}

namespace {

struct RuleInfo {
  const char* id;
  const char* level;
  const char* text;
};

constexpr RuleInfo kRules[] = {
    {"schema/unknown-key", "error", "Unknown key in a deployment file (with a did-you-mean)"},
    {"schema/duplicate-key", "error", "A key appears twice in one mapping"},
    {"schema/type", "error", "A field has the wrong type"},
    {"schema/range", "error", "A number is outside the range the field allows"},
    {"schema/missing", "error", "A required field is missing"},
    {"schema/enum", "error", "A value is not one of the allowed names"},
    {"command/value", "error", "An engine flag has a missing or invalid value"},
    {"command/model", "error", "The command line names no model"},
    {"manifest/structure", "error", "The LeaderWorkerSet is missing a required part"},
    {"manifest/command", "error", "No container in the LeaderWorkerSet runs vLLM or SGLang"},
    {"manifest/gpus", "error", "GPU resource requests of the pods are missing or inconsistent"},
    {"model/unknown", "error", "The model is not in the catalogue and no model file was found"},
    {"gpu/unknown", "error", "The GPU is not in the catalogue"},
    {"check/no-gpu", "note", "No GPU type given: memory, dtype and budget rules skipped"},
    {"engine/gpu-count", "error", "GPU count does not equal nodes x GPUs per node"},
    {"engine/parallel-product", "error", "tp x pp (SGLang) or tp x pp x dp (vLLM) does not equal the GPUs"},
    {"engine/nnodes", "warning", "Multi-node launch without a matching --nnodes"},
    {"engine/nodes", "error", "The GPUs do not split into whole nodes the way the engine requires"},
    {"engine/tp-heads", "error", "Tensor parallel size does not divide the attention heads"},
    {"engine/ep-experts", "error", "Expert parallel size does not divide the routed experts"},
    {"engine/ep-dense", "error", "Expert parallelism on a model without experts"},
    {"engine/ep", "error", "Expert parallel size the engine cannot set"},
    {"engine/dp", "error", "Data parallel / DP-attention combination the engine refuses"},
    {"engine/pp", "error", "Pipeline parallel size the engine refuses"},
    {"engine/fp8-block", "error", "FP8 block-quantized weights split below the 128-wide block"},
    {"engine/layout", "error", "A parallel layout the engine refuses"},
    {"engine/tp-across-nodes", "note", "Tensor parallelism crosses the scale-out network"},
    {"engine/warning", "warning", "An engine setting the engine warns about"},
    {"memory/does-not-fit", "error", "Weights and engine reserve exceed the GPU memory"},
    {"memory/kv-pool", "error", "users x context is beyond the KV cache pool"},
    {"memory/concurrency", "warning", "The running-request cap allows more full-length requests than the pool holds"},
    {"memory/context-capped", "warning", "SGLang starts but caps requests below the context asked for"},
    {"memory/headroom", "warning", "Fits with under 5% of the KV/state pool free"},
    {"memory/context-max", "error", "Context above the model's maximum"},
    {"memory/error", "error", "The memory budget could not be evaluated"},
    {"model/tool-call-parser", "warning", "Tool-call parser missing or different from the model's"},
    {"engine/kv-cache-dtype", "error", "KV cache dtype the engine release has no --kv-cache-dtype value for"},
    {"engine/tool-call-parser", "error", "Tool-call parser the engine release does not register (it refuses to start)"},
    {"engine/reasoning-parser", "error", "Reasoning parser the engine release does not register (it refuses to start)"},
    {"model/reasoning-parser", "warning", "Reasoning parser missing or different from the model's"},
    {"model/trust-remote-code", "error", "--trust-remote-code missing for a model that ships custom code"},
    {"model/kv-dtype", "error", "KV cache dtype the GPU does not support natively"},
    {"model/fp4-weights", "warning", "FP4 weights on a GPU without native FP4 (slower weight-only kernels)"},
    {"budget/over", "error", "Monthly cost over budget.usd_per_month_max"},
};

std::string percent_encode_path(const std::string& s) {
  std::string o;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~')
      o += static_cast<char>(c);
    else
      o += fmt::format("%{:02X}", c);
  }
  return o;
}

}  // namespace

json sarif_log(const std::vector<Finding>& findings) {
  json rules = json::array();
  std::map<std::string, std::size_t> index;
  auto rule_index = [&](const std::string& id, const std::string& severity) {
    const auto it = index.find(id);
    if (it != index.end()) return it->second;
    const RuleInfo* info = nullptr;
    for (const auto& r : kRules)
      if (id == r.id) info = &r;
    json r = {{"id", id},
              {"shortDescription", {{"text", info ? info->text : id}}},
              {"defaultConfiguration", {{"level", info ? info->level : severity}}},
              {"properties", {{"category", id.substr(0, id.find('/'))}}}};
    rules.push_back(r);
    index[id] = rules.size() - 1;
    return rules.size() - 1;
  };
  for (const auto& r : kRules) rule_index(r.id, r.level);
  json results = json::array();
  for (const auto& f : findings) {
    json loc;
    const std::string& file = f.pos.file;
    if (!file.empty() && file.front() != '<') {
      json phys = {{"artifactLocation", fs::path(file).is_absolute()
                                            ? json{{"uri", "file://" + percent_encode_path(file)}}
                                            : json{{"uri", percent_encode_path(fs::path(file).lexically_normal().generic_string())},
                                                   {"uriBaseId", "%SRCROOT%"}}}};
      if (f.pos.line > 0) phys["region"] = {{"startLine", f.pos.line}, {"startColumn", std::max(1, f.pos.column)}};
      loc["physicalLocation"] = phys;
    } else {
      loc["logicalLocations"] = json::array({{{"name", file.empty() ? "<input>" : file}, {"kind", "module"}}});
    }
    results.push_back({{"ruleId", f.rule},
                       {"ruleIndex", rule_index(f.rule, f.severity)},
                       {"level", f.severity == "error"     ? "error"
                                 : f.severity == "warning" ? "warning"
                                                           : "note"},
                       {"message", {{"text", f.message}}},
                       {"locations", json::array({loc})}});
  }
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs",
           json::array({{{"tool", {{"driver", {{"name", "k3plan"}, {"version", "0.1.0"}, {"semanticVersion", "0.1.0"}, {"rules", rules}}}}},
                         {"columnKind", "unicodeCodePoints"},
                         {"results", results}}})}};
}

// --- the command ------------------------------------------------------------------------------

Report run_check(const Catalogue& cat, const CheckOptions& o) {
  if (o.files.empty() && o.commands.empty() && o.manifests.empty())
    throw InputError("check: nothing to check: give deployment files, --command \"vllm serve ...\" or --manifest lws.yaml");
  if (!o.gpu.empty()) (void)cat.gpu(o.gpu);  // an unknown --gpu is a usage error
  if (!o.engine_version.empty())             // an unknown --engine-version too (either engine's list)
    for (Engine e : kEngines) {
      try {
        (void)engine_model(e, o.engine_version);
        break;
      } catch (const InputError&) {
        if (e == kEngines[std::size(kEngines) - 1]) throw;
      }
    }

  std::vector<Finding> all;
  json inputs = json::array();
  auto finish_input = [&](std::vector<Finding>& f) {
    std::stable_sort(f.begin(), f.end(), [](const Finding& a, const Finding& b) {
      return std::tie(a.pos.file, a.pos.line, a.pos.column) < std::tie(b.pos.file, b.pos.line, b.pos.column);
    });
    all.insert(all.end(), f.begin(), f.end());
  };

  for (const auto& file : o.files) {
    const std::string text = read_yaml_input(file, "deployment file");
    std::vector<Finding> f;
    Deployment d = parse_deployment(text, file, f);
    for (const auto& x : f) {
      // duplicate keys (not valid YAML) and numbers no plan could hold are unreadable input
      if (x.rule == "schema/duplicate-key")
        throw InputError(fmt::format("{}:{}:{}: {} (YAML mapping keys must be unique)", x.pos.file, x.pos.line, x.pos.column,
                                     escape_control(x.message)));
      if ((x.rule == "schema/range" || x.rule == "schema/type") && unrepresentable_number(raw_scalar_at(text, x.pos.line, x.pos.column)))
        throw InputError(fmt::format("{}:{}:{}: number out of range: {}", x.pos.file, x.pos.line, x.pos.column, escape_control(x.message)));
    }
    CheckTarget t;
    t.kind = InputKind::deployment;
    t.anchor = {file, 1, 1};
    t.deployment = std::move(d);
    json s;
    if (!t.deployment.model.empty())
      check_target(cat, t, f, &s);
    else
      s = {{"file", file}, {"kind", "deployment"}};
    inputs.push_back(s);
    finish_input(f);
  }

  for (std::size_t i = 0; i < o.commands.size(); ++i) {
    const std::string& c = o.commands[i];
    std::error_code ec;
    std::string text, origin;
    if (fs::is_regular_file(c, ec) || c.find_first_of(" \t\n") == std::string::npos) {
      if (!fs::exists(c, ec)) throw InputError(fmt::format("--command '{}': no such file, and not a command line", escape_control(c)));
      text = read_capped(c, kMaxScriptBytes, "launch script");
      origin = c;
    } else {
      text = c;
      origin = o.commands.size() == 1 ? "<command>" : fmt::format("<command-{}>", i + 1);
    }
    std::vector<Finding> f;
    CheckTarget t;
    t.kind = InputKind::command;
    t.deployment = parse_launch_command(text, origin, f);
    t.deployment.gpu = o.gpu;
    t.deployment.engine_version = o.engine_version;
    t.anchor = t.deployment.where.count("model") ? t.deployment.where.at("model") : SourcePos{origin, 1, 1};
    json s;
    if (!t.deployment.model.empty()) check_target(cat, t, f, &s);
    inputs.push_back(s);
    finish_input(f);
  }

  for (const auto& m : o.manifests) {
    const std::string text = read_yaml_input(m, "manifest");
    std::vector<Finding> f;
    const auto groups = parse_lws_manifest(cat, text, m, o.gpu, f);
    if (groups.empty() && f.empty())
      f.push_back({"manifest/structure", "error", "no LeaderWorkerSet (kind: LeaderWorkerSet) in this file", {m, 1, 1}});
    for (const auto& g : groups) {
      CheckTarget t;
      t.kind = InputKind::manifest;
      t.deployment = g.deployment;
      t.gpus_per_pod = g.gpus_per_pod;
      t.group_size = g.group_size;
      t.replicas = g.replicas;
      t.anchor = g.anchor;
      t.deployment.engine_version = o.engine_version;
      json s;
      if (!t.deployment.model.empty()) check_target(cat, t, f, &s);
      s["replicas"] = t.replicas;
      s["group_size"] = t.group_size;
      s["gpus_per_pod"] = t.gpus_per_pod;
      inputs.push_back(s);
    }
    finish_input(f);
  }

  int errors = 0, warnings = 0, notes = 0;
  for (const auto& f : all) {
    if (f.severity == "error")
      ++errors;
    else if (f.severity == "warning")
      ++warnings;
    else
      ++notes;
  }
  const bool failed = errors > 0 || (o.strict && warnings > 0);
  Report r;
  r.exit_code = failed ? 1 : 0;
  const std::size_t n_inputs = inputs.size();
  const std::string summary =
      fmt::format("k3plan check: {} input{}, {} error{}, {} warning{}, {} note{}: {}{}", n_inputs, n_inputs == 1 ? "" : "s", errors,
                  errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s", notes, notes == 1 ? "" : "s", failed ? "FAILED" : "passed",
                  o.strict ? " (--strict: warnings fail)" : "");
  if (o.format_hint == "sarif") {
    r.data = sarif_log(all);
  } else {
    json fj = json::array();
    for (const auto& f : all)
      fj.push_back({{"rule", f.rule},
                    {"severity", f.severity},
                    {"message", f.message},
                    {"file", f.pos.file},
                    {"line", f.pos.line},
                    {"column", f.pos.column}});
    r.data = {{"passed", !failed}, {"strict", o.strict}, {"errors", errors}, {"warnings", warnings},
              {"notes", notes},    {"inputs", inputs},   {"findings", fj}};
  }
  if (o.format_hint == "csv" || o.format_hint == "md") {
    Table t{"Findings", {"file", "line", "column", "severity", "rule", "message"}, {}, {false, true, true, false, false, false}};
    for (const auto& f : all)
      t.rows.push_back(
          {f.pos.file, std::to_string(f.pos.line), std::to_string(f.pos.column), f.severity, f.rule, escape_control(f.message)});
    r.tables.push_back(t);
  }
  for (const auto& f : all) r.notes.push_back(finding_line(f));
  r.notes.push_back(summary);
  return r;
}

}  // namespace k3plan
