// `k3plan validate --log FILE`: reads a vLLM or SGLang start-up log, rebuilds the serving context
// from its arguments (model, layout, memory flags; -m / -g / --engine-version where the log does
// not say), runs the fit budget for it and compares term by term, naming the term that explains
// the difference. It closes the loop between the plan and the engine after a first start-up.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <k3plan/ascii.hpp>
#include <k3plan/budget.hpp>
#include <k3plan/deploy.hpp>
#include <k3plan/engine_log.hpp>
#include <k3plan/error.hpp>
#include <k3plan/input_file.hpp>
#include <k3plan/units.hpp>
#include <k3plan/validate.hpp>
#include <sstream>

#include "common.hpp"

namespace k3plan {

namespace {

std::string read_log(const std::string& path) { return read_input_file(path, "engine log", limits::kMaxLogBytes); }

// A catalogue GPU named in the log (nvidia-smi, device names), longest alias first.
std::string gpu_from_log(const Catalogue& cat, const EngineLog& log) {
  std::string best;
  std::size_t best_len = 0;
  std::vector<Gpu> all = cat.gpus();
  all.insert(all.end(), cat.validation_gpus().begin(), cat.validation_gpus().end());
  for (const auto& g : all) {
    std::vector<std::string> names = g.aliases;
    names.push_back(g.name);
    for (const auto& n : names) {
      if (n.size() < 6 || n.size() <= best_len) continue;
      const std::string key = ascii_lower(n);
      for (const auto& line : log.lines)
        if (ascii_lower(line).find(key) != std::string::npos) {
          best = g.id;
          best_len = n.size();
          break;
        }
    }
  }
  return best;
}

// Arguments from a launch command, under the names the engine's own args line uses.
void args_from_command(EngineLog& log) {
  if (log.command.empty()) return;
  std::vector<Finding> findings;
  const Deployment d = parse_launch_command(log.command, log.origin, findings);
  auto put = [&](const char* k, const std::string& v) { log.args.emplace(k, v); };
  // the command's flags under the args-line names of the engine that runs it
  const bool vllm = d.engine == Engine::vllm;  // exception (ARCHITECTURE.md): naming the other engine's args-line keys
  if (!d.model_path.empty()) put(vllm ? "model" : "model_path", d.model_path);
  put(vllm ? "tensor_parallel_size" : "tp_size", std::to_string(d.layout.tp));
  put(vllm ? "pipeline_parallel_size" : "pp_size", std::to_string(d.layout.pp));
  put(vllm ? "data_parallel_size" : "dp_size", std::to_string(d.layout.dp));
  if (vllm && d.layout.ep > 1) put("enable_expert_parallel", "True");
  if (!vllm && d.layout.ep > 1) put("ep_size", std::to_string(d.layout.ep));
  if (d.layout.dp_attention) put("enable_dp_attention", "True");
  if (d.layout.dcp > 1) put(vllm ? "decode_context_parallel_size" : "dcp_size", std::to_string(d.layout.dcp));
  if (d.context > 0) put(vllm ? "max_model_len" : "context_length", std::to_string(d.context));
  if (d.kv_dtype != "auto") put("kv_cache_dtype", d.kv_dtype);
  if (d.gpu_memory_utilization) put("gpu_memory_utilization", fmt::format("{}", *d.gpu_memory_utilization));
  if (d.mem_fraction_static) put("mem_fraction_static", fmt::format("{}", *d.mem_fraction_static));
  if (d.chunked_prefill_size) put("chunked_prefill_size", std::to_string(*d.chunked_prefill_size));
  if (d.max_num_batched_tokens) put("max_num_batched_tokens", std::to_string(*d.max_num_batched_tokens));
  if (d.max_num_seqs) put(vllm ? "max_num_seqs" : "max_running_requests", std::to_string(*d.max_num_seqs));
  if (d.cuda_graph_max_bs) put("cuda_graph_max_bs", std::to_string(*d.cuda_graph_max_bs));
  // flags the deployment reader does not keep but the memory depends on
  for (const char* flag : {"--cpu-offload-gb"}) {
    const auto p = log.command.find(flag);
    if (p == std::string::npos) continue;
    std::istringstream in(log.command.substr(p + std::string(flag).size()));
    std::string v;
    in >> v;
    if (!v.empty() && v[0] == '=') v.erase(0, 1);
    put("cpu_offload_gb", v);
  }
  if (log.args_from.empty()) log.args_from = "launch command";
}

}  // namespace

Report run_validate_log(const Catalogue& cat, const ValidateLogOptions& o) {
  EngineLog log = parse_engine_log(read_log(o.log_path), o.log_path);
  if (!log.has("tensor_parallel_size") && !log.has("tp_size")) args_from_command(log);
  const Engine e = *log.engine;
  if (!o.engine.empty() && parse_engine(o.engine) != e)
    throw InputError(fmt::format("{}: the log is from {}, not {}", o.log_path, to_string(e), o.engine));
  const std::string version = !o.engine_version.empty() ? o.engine_version : log.version;
  const EngineModel* pick = &engine_model(e, version);
  // a V0-engine start-up of a release that defaults to V1 (VLLM_USE_V1=0) follows the V0 rules
  if (log.v0_engine && pick->version().profile != "v0")
    for (const auto& v : engine_versions(e))
      if (v.profile == "v0") pick = &engine_model(e, v.id);
  const EngineModel& em = *pick;

  // the model: -m, else the log's model argument through the catalogue
  const std::string logged_model = em.logged_model(log);
  std::string spec = o.model;
  if (spec.empty()) {
    if (logged_model.empty()) throw InputError(fmt::format("{}: the log names no model (no arguments line); pass -m", o.log_path));
    const Model* found = cat.find_model(logged_model);
    if (!found) {
      const auto slash = logged_model.find_last_of('/');
      if (slash != std::string::npos) found = cat.find_model(logged_model.substr(slash + 1));
    }
    if (!found)
      throw InputError(
          fmt::format("{}: model '{}' is not in the catalogue; pass -m with its config.json or a model YAML", o.log_path, logged_model));
    spec = found->id;
  }
  Model m = resolve_model(cat, spec);
  // --dtype: the dtype the model runs in, which `auto` KV follows
  const std::string dtype = log.arg("dtype", "auto");
  if (dtype == "float32" || dtype == "float" || dtype == "fp32") m.dtype = "fp32";
  if (dtype == "float16" || dtype == "half" || dtype == "fp16") m.dtype = "fp16";
  if (dtype == "bfloat16" || dtype == "bf16") m.dtype = "bf16";

  // --quantization fp8 on an unquantized checkpoint: the linear layers are quantized at load
  // (per-tensor fp8; embeddings, head, norms and router stay in the model dtype)
  const std::string quant = log.arg("quantization", "None");
  if (quant == "fp8" || quant == "ptpc_fp8")
    for (ParamGroup g :
         {ParamGroup::attention, ParamGroup::dense_mlp, ParamGroup::shared_experts, ParamGroup::routed_experts, ParamGroup::latent_proj})
      if (m.precision_of(g) == "bf16" || m.precision_of(g) == "fp16") m.precision[g] = "fp8";

  // the GPU: -g, else a catalogue GPU the log names
  std::string gpu_id = o.gpu.empty() ? gpu_from_log(cat, log) : o.gpu;
  if (gpu_id.empty()) throw InputError(fmt::format("{}: the log does not name a catalogue GPU; pass -g", o.log_path));
  const Gpu gpu = cat.validation_gpu(gpu_id);

  // the layout and the memory settings the engine ran with
  Layout l;
  EngineSettings s;
  s.engine = e;
  s.engine_version = em.version().id;
  std::int64_t context = 0;
  em.read_serving(log, m, l, s, context);
  std::string kvd = log.arg("kv_cache_dtype", "auto");
  if (kvd == "None" || kvd.empty()) kvd = "auto";
  s.kv_dtype = kvd;
  if (context <= 0) context = m.max_context;
  context = std::min(context, m.max_context);

  const FitResult f = evaluate_fit(m, gpu, l, s, context, 1);
  const RankBudget& b = f.limiting;
  const std::int64_t predicted_tokens = b.reported_kv_tokens;  // what the engine prints (fill_stage sets it)

  // the logged token count, as the engine printed it
  const auto logged_kv = em.logged_kv_tokens(log, s.block_size);
  if (!logged_kv)
    throw InputError(
        fmt::format("{}: no KV cache size in the log (expected 'GPU KV cache size: N tokens', '# GPU blocks: N', "
                    "'max_total_num_tokens=N' or 'KV Cache is allocated. #tokens: N')",
                    o.log_path));
  const std::optional<std::int64_t> logged_tokens = logged_kv->first;
  const std::string logged_from = logged_kv->second;

  // term by term
  const double util = f.utilization_used;
  const std::vector<LogTerm> terms = em.log_terms(log, b, util);
  const LogTerm* culprit = nullptr;
  for (const auto& t : terms)
    if (t.logged_bytes && t.term != "kv_pool" && std::abs(t.pool_effect_bytes) > 0.02 * kGiB &&
        (!culprit || std::abs(t.pool_effect_bytes) > std::abs(culprit->pool_effect_bytes)))
      culprit = &t;
  const double err = (static_cast<double>(predicted_tokens) - static_cast<double>(*logged_tokens)) /
                     std::max<double>(1.0, static_cast<double>(*logged_tokens)) * 100.0;

  Report r;
  nlohmann::json logged = nlohmann::json::object(), predicted = nlohmann::json::object(), jterms = nlohmann::json::array();
  logged["kv_cache_tokens"] = *logged_tokens;
  logged["kv_cache_tokens_from"] = logged_from;
  predicted["kv_cache_tokens"] = predicted_tokens;
  for (const auto& t : terms) {
    const std::string key = t.term + "_bytes";
    if (t.logged_bytes) logged[key] = *t.logged_bytes;
    predicted[key] = t.predicted_bytes;
    nlohmann::json jt = {{"term", t.term}, {"predicted_bytes", t.predicted_bytes}};
    if (t.logged_bytes) {
      jt["logged_bytes"] = *t.logged_bytes;
      jt["kv_pool_effect_bytes"] = t.pool_effect_bytes;
    }
    jterms.push_back(jt);
  }
  if (log.max_running_requests) logged["max_running_requests"] = *log.max_running_requests;
  if (log.mamba_cache_size) logged["state_slots"] = *log.mamba_cache_size;
  if (log.max_concurrency) logged["max_concurrency"] = *log.max_concurrency;
  if (b.running_cap > 0) predicted["max_running_requests"] = b.running_cap;
  if (b.state_slots >= 0) predicted["state_slots"] = b.state_slots;
  predicted["block_size"] = b.block_size;
  predicted["kv_cache_groups"] = b.kv_groups;
  predicted["max_concurrency"] = context > 0 ? static_cast<double>(b.max_sequences) : 0.0;
  r.data = {{"log", o.log_path},
            {"engine", to_string(e)},
            {"engine_version", em.version().id},
            {"engine_version_logged", log.version},
            {"engine_label", em.label()},
            {"model", m.id},
            {"model_kind", model_kind(m)},
            {"gpu", gpu.id},
            {"layout", layout_json(l)},
            {"context_tokens", context},
            {"memory_fraction", util},
            {"kv_dtype", s.kv_dtype},
            {"args_from", log.args_from},
            {"logged", logged},
            {"predicted", predicted},
            {"kv_cache_tokens_error", err / 100.0},
            {"kv_cache_tokens_error_pct", err},
            {"explained_by", culprit ? culprit->term : ""},
            {"terms", jterms},
            {"fit_reasons", f.reasons},
            {"assumptions", f.assumptions}};

  Table t{fmt::format("{}: {} on {} x {}, {}, {} tokens context ({})", o.log_path, m.id, f.gpus, gpu.id, layout_text(l),
                      fmt_int(double(context)), em.label()),
          {"term", "logged GiB", "predicted GiB", "effect on KV pool GiB"},
          {},
          {false, true, true, true}};
  for (const auto& x : terms)
    t.rows.push_back({x.term, x.logged_bytes ? fmt::format("{:.2f}", *x.logged_bytes / kGiB) : "-",
                      fmt::format("{:.2f}", x.predicted_bytes / kGiB),
                      x.logged_bytes && x.term != "kv_pool" ? fmt::format("{:+.2f}", x.pool_effect_bytes / kGiB) : ""});
  t.rows.push_back({"KV tokens", fmt_int(static_cast<double>(*logged_tokens)), fmt_int(static_cast<double>(predicted_tokens)),
                    fmt::format("{:+.2f}%", err)});
  r.tables.push_back(t);
  r.notes.push_back(fmt::format("logged tokens from '{}'; arguments from '{}'{}", logged_from,
                                log.args_from.empty() ? "(none)" : log.args_from,
                                log.version.empty() ? "; the log does not print the engine version" : ""));
  if (culprit)
    r.notes.push_back(fmt::format("largest difference: {} ({:+.2f} GiB on the KV pool)", culprit->term, culprit->pool_effect_bytes / kGiB));
  for (const auto& a : f.assumptions) r.assumptions.push_back(a);
  return r;
}

}  // namespace k3plan
