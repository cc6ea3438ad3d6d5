// `k3plan validate --log`'s comparison (log_check.hpp): the serving context a start-up log ran,
// the fit budget for it and the engine model's reading of the log's memory lines, term by term.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <k3plan/ascii.hpp>
#include <k3plan/deploy.hpp>
#include <k3plan/engine_version.hpp>
#include <k3plan/error.hpp>
#include <k3plan/log_check.hpp>
#include <k3plan/units.hpp>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <utility>

namespace k3plan {

namespace {

// A pasted script sets what its command uses (`GPU_NUM=4` ... `--tp-size $GPU_NUM`): $NAME,
// ${NAME} and ${NAME:-default} expanded from the assignments the log shows (`NAME=value`,
// `export NAME=value`, the last one before the command wins), outside single quotes and not after
// a backslash, as the shell would; a name the log does not set stays as written
std::string expand_shell_variables(const EngineLog& log) {
  std::map<std::string, std::string> vars;
  const std::regex assignment(R"re(^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(?:"([^"$`\\]*)"|'([^']*)'|([^\s"'$`;&|]*))\s*$)re");
  const std::string first_line = log.command.substr(0, log.command.find('\n'));
  for (const auto& line : log.lines) {
    if (line == first_line) break;
    std::smatch m;  // short lines only: std::regex recurses per character
    if (line.size() <= 512 && line.find('=') != std::string::npos && std::regex_match(line, m, assignment))
      vars[m[1]] = m[2].matched ? m[2].str() : m[3].matched ? m[3].str() : m[4].str();
  }
  std::string out;
  bool single = false, dquote = false;
  const std::string& c = log.command;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (c[i] == '\\' && !single && i + 1 < c.size()) {  // \$ stays literal
      out += c.substr(i, 2);
      ++i;
      continue;
    }
    if (c[i] == '\'' && !dquote) single = !single;
    if (c[i] == '"' && !single) dquote = !dquote;
    if (single || c[i] != '$' || i + 1 >= c.size()) {
      out += c[i];
      continue;
    }
    const bool braced = c[i + 1] == '{';
    std::size_t b = i + (braced ? 2 : 1), e = b;
    while (e < c.size() && (ascii_is_alnum(c[e]) || c[e] == '_')) ++e;
    const std::string name = c.substr(b, e - b);
    std::optional<std::string> value;
    if (const auto it = vars.find(name); it != vars.end()) value = it->second;
    std::size_t end = e;  // last character of the expansion
    if (braced) {
      const std::size_t close = c.find('}', e);
      if (close == std::string::npos || close - e > 512)
        value.reset();
      else if (c.compare(e, 2, ":-") == 0 && !value)
        value = c.substr(e + 2, close - e - 2);
      else if (close != e)
        value.reset();  // other ${NAME...} forms are not read
      end = close;
    } else {
      end = e - 1;
    }
    if (name.empty() || !value) {
      out += c[i];
      continue;
    }
    out += *value;
    if (out.size() > (1u << 20)) throw InputError(fmt::format("{}: the launch command expands beyond 1 MiB", log.origin));
    i = end;
  }
  return out;
}

// Whether a finding of the launch-command reader is about a value that becomes an argument below:
// one the command gives but that cannot be read (`--tp-size $GPU_NUM` with no GPU_NUM= in the log)
// would leave the engine's default in its place, a guess; any other flag (--port, --host) does not
// change the memory. The reader records where each field's flag stands (Deployment::where, its own
// names), whatever the flag's spelling, so the finding is matched by position.
bool about_memory_field(const Deployment& d, const SourcePos& at) {
  static const char* const fields[] = {"parallel.tp",
                                       "parallel.pp",
                                       "parallel.dp",
                                       "parallel.ep",
                                       "parallel.dcp",
                                       "parallel.pp_layer_partition",
                                       "context",
                                       "kv_dtype",
                                       "engine_args.gpu_memory_utilization",
                                       "engine_args.mem_fraction_static",
                                       "engine_args.max_num_batched_tokens",
                                       "engine_args.max_num_seqs",
                                       "engine_args.cuda_graph_max_bs"};
  for (const char* f : fields)
    if (const auto it = d.where.find(f); it != d.where.end() && it->second.line == at.line && it->second.column == at.column) return true;
  return false;
}

// Arguments from a launch command, under the names the engine's own args line uses.
void args_from_command(EngineLog& log) {
  if (log.command.empty()) return;
  std::vector<Finding> findings;
  const std::string command = expand_shell_variables(log);
  const Deployment d = parse_launch_command(command, log.origin, findings);
  // refused only when the command is the log's one source of arguments: with an arguments line it
  // only fills in what that line leaves at the engine's default
  for (const auto& f : findings)
    if (f.severity == "error" && f.rule == "command/value" && log.args_from.empty() && about_memory_field(d, f.pos))
      throw InputError(fmt::format("{}: the launch command in the log: {}{}", log.origin, f.message,
                                   f.message.find('$') != std::string::npos
                                       ? " (the log sets no value for it; paste the command as it ran, or the engine's own arguments line)"
                                       : ""));
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
  // flags the deployment reader does not keep but the memory depends on (SGLang's
  // --max-total-tokens caps its pool; vLLM has no such flag)
  for (const auto& [flag, key] : {std::pair<const char*, const char*>{"--cpu-offload-gb", "cpu_offload_gb"},
                                  std::pair<const char*, const char*>{"--max-total-tokens", "max_total_tokens"}}) {
    const auto p = command.find(flag);
    if (p == std::string::npos) continue;
    std::istringstream in(command.substr(p + std::string(flag).size()));
    std::string v;
    in >> v;
    if (!v.empty() && v[0] == '=') v.erase(0, 1);
    put(key, v);
  }
  if (log.args_from.empty()) log.args_from = "launch command";
}

}  // namespace

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

// The tolerance: the same part's torch total moves with the driver and CUDA runtime by tens of MiB
// (A100-SXM4-40GB deviceQuery 40339 MiB against vLLM's 39.38 GiB = 40325 MiB; A10 22516 against
// 22599 MiB; data/validation/gpus.yaml cites both), and the log rounds to 0.01 GiB (+-5 MiB).
// 64 MiB keeps those together while parts whose totals differ by more (A100-80GB 81051 vs H100
// 81090 MiB are 39 apart and both match) are reported as ambiguous rather than guessed.
std::string gpu_from_engine_total(const Catalogue& cat, const EngineLog& log, std::string& assumption) {
  assumption.clear();
  if (!log.total_bytes || *log.total_bytes <= 0) return "";
  const double logged_mib = *log.total_bytes / 1048576.0;
  std::vector<const Gpu*> match;
  for (const std::vector<Gpu>* list : {&cat.gpus(), &cat.validation_gpus()})
    for (const Gpu& g : *list) {
      const double mib = g.memory_engine_total_mib.value;
      if (mib > 0 && std::abs(mib - logged_mib) <= kEngineTotalToleranceMiB) match.push_back(&g);
    }
  if (match.empty()) return "";
  double lo = match.front()->memory_engine_total_mib.value, hi = lo;
  for (const Gpu* g : match) {
    lo = std::min(lo, g->memory_engine_total_mib.value);
    hi = std::max(hi, g->memory_engine_total_mib.value);
  }
  if (hi - lo > 0.01 * 1024) return "";  // capacities the log could tell apart: ambiguous
  const Gpu* best = match.front();
  for (const Gpu* g : match)
    if (std::abs(g->memory_engine_total_mib.value - logged_mib) < std::abs(best->memory_engine_total_mib.value - logged_mib)) best = g;
  std::string others;
  for (const Gpu* g : match)
    if (g != best) others += (others.empty() ? "" : ", ") + g->id;
  assumption = fmt::format("GPU inferred from the logged total memory {:.2f} GiB: {} (engine total {:.0f} MiB{}); pass -g to name it",
                           *log.total_bytes / kGiB, best->id, best->memory_engine_total_mib.value,
                           others.empty() ? "" : fmt::format("; also matches {}", others));
  return best->id;
}

LogCheck check_start_up_log(const Catalogue& cat, const std::string& text, const std::string& origin, const LogCheckOptions& o) {
  LogCheck c;
  EngineLog& log = c.log;
  log = parse_engine_log(text, origin);
  if (!log.has("tensor_parallel_size") && !log.has("tp_size")) args_from_command(log);
  const Engine e = *log.engine;
  if (!o.engine.empty() && parse_engine(o.engine) != e)
    throw InputError(fmt::format("{}: the log is from {}, not {}", origin, to_string(e), o.engine));
  const std::string version = !o.engine_version.empty() ? o.engine_version : log.version;
  const EngineModel* pick = &engine_model(e, version);
  // a V0-engine start-up of a release that defaults to V1 (VLLM_USE_V1=0) follows the V0 rules
  if (log.v0_engine && pick->version().profile != "v0")
    for (const auto& v : engine_versions(e))
      if (v.profile == "v0") pick = &engine_model(e, v.id);
  c.engine = pick;
  const EngineModel& em = *pick;

  // the model: -m, else the log's model argument through the catalogue
  const std::string logged_model = em.logged_model(log);
  std::string spec = o.model;
  if (spec.empty()) {
    if (logged_model.empty()) throw InputError(fmt::format("{}: the log names no model (no arguments line); pass -m", origin));
    const Model* found = cat.find_model(logged_model);
    if (!found) {
      const auto slash = logged_model.find_last_of('/');
      if (slash != std::string::npos) found = cat.find_model(logged_model.substr(slash + 1));
    }
    if (!found)
      throw InputError(
          fmt::format("{}: model '{}' is not in the catalogue; pass -m with its config.json or a model YAML", origin, logged_model));
    spec = found->id;
  }
  Model& m = c.model;
  m = resolve_model(cat, spec);
  // --dtype: the dtype the model runs in, which `auto` KV follows; vLLM's engine-config line prints
  // the resolved torch dtype ("dtype=torch.bfloat16")
  std::string dtype = log.arg("dtype", "auto");
  if (dtype.rfind("torch.", 0) == 0) dtype.erase(0, 6);
  if (dtype == "float32" || dtype == "float" || dtype == "fp32") m.dtype = "fp32";
  if (dtype == "float16" || dtype == "half" || dtype == "fp16") m.dtype = "fp16";
  if (dtype == "bfloat16" || dtype == "bf16") m.dtype = "bf16";

  // --quantization fp8 on an unquantized checkpoint: the linear layers are quantized at load
  // (per-tensor fp8; embeddings, head, norms and router stay in the model dtype)
  // --quantization bitsandbytes on an unquantized checkpoint: vLLM quantizes the same linear layers
  // in flight to bitsandbytes NF4 with double quantization (params.cpp "nf4-dq")
  const std::string quant = log.arg("quantization", "None");
  const char* in_flight = quant == "fp8" || quant == "ptpc_fp8" ? "fp8" : quant == "bitsandbytes" ? "nf4-dq" : nullptr;
  if (in_flight)
    for (ParamGroup g :
         {ParamGroup::attention, ParamGroup::dense_mlp, ParamGroup::shared_experts, ParamGroup::routed_experts, ParamGroup::latent_proj})
      if (m.precision_of(g) == "bf16" || m.precision_of(g) == "fp16") m.precision[g] = in_flight;

  // the GPU: -g, else a catalogue GPU the log names, else one whose capacity is the total the log prints
  std::string gpu_id = o.gpu.empty() ? gpu_from_log(cat, log) : o.gpu;
  if (gpu_id.empty()) {
    std::string assumption;
    gpu_id = gpu_from_engine_total(cat, log, assumption);
    if (!assumption.empty()) c.assumptions.push_back(assumption);
  }
  if (gpu_id.empty()) throw InputError(fmt::format("{}: the log does not name a catalogue GPU; pass -g", origin));
  c.gpu = cat.validation_gpu(gpu_id);
  const Gpu& gpu = c.gpu;

  // the layout and the memory settings the engine ran with
  Layout& l = c.layout;
  EngineSettings& s = c.settings;
  s.engine = e;
  s.engine_version = em.version().id;
  std::int64_t& context = c.context;
  em.read_serving(log, m, l, s, context);
  for (auto& note : em.reconcile_logged_layout(log, l)) c.assumptions.push_back(std::move(note));
  for (auto& note : em.infer_logged_settings(log, s)) c.assumptions.push_back(std::move(note));
  std::string kvd = log.arg("kv_cache_dtype", "auto");
  if (kvd == "None" || kvd.empty()) kvd = "auto";
  s.kv_dtype = kvd;
  if (context <= 0) context = m.max_context;
  context = std::min(context, m.max_context);

  c.fit = evaluate_fit(m, gpu, l, s, context, 1);
  const RankBudget& b = c.fit.limiting;
  c.predicted_kv_tokens = b.reported_kv_tokens;  // what the engine prints (fill_stage sets it)

  // the logged token count, as the engine printed it
  const auto logged_kv = em.logged_kv_tokens(log, s.block_size);
  if (!logged_kv)
    throw InputError(
        fmt::format("{}: no KV cache size in the log (expected 'GPU KV cache size: N tokens', '# GPU blocks: N', "
                    "'max_total_num_tokens=N' or 'KV Cache is allocated. #tokens: N')",
                    origin));
  c.logged_kv_tokens = logged_kv->first;
  c.logged_kv_from = logged_kv->second;

  // term by term
  c.terms = em.log_terms(log, b, c.fit.utilization_used);
  for (std::size_t i = 0; i < c.terms.size(); ++i) {
    const LogTerm& t = c.terms[i];
    if (t.logged_bytes && t.term != "kv_pool" && std::abs(t.pool_effect_bytes) > 0.02 * kGiB &&
        (c.explained_by < 0 ||
         std::abs(t.pool_effect_bytes) > std::abs(c.terms[static_cast<std::size_t>(c.explained_by)].pool_effect_bytes)))
      c.explained_by = static_cast<int>(i);
  }
  c.kv_tokens_error_pct = (static_cast<double>(c.predicted_kv_tokens) - static_cast<double>(c.logged_kv_tokens)) /
                          std::max<double>(1.0, static_cast<double>(c.logged_kv_tokens)) * 100.0;
  return c;
}

}  // namespace k3plan
