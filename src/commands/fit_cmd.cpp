// `k3plan fit`: weights lower bounds for every GPU, and the per-GPU memory budget with engine-
// accurate KV capacity for a load (users x context), with the flags for both engines.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <k3plan/ascii.hpp>
#include <k3plan/budget.hpp>
#include <k3plan/commands.hpp>
#include <k3plan/deploy.hpp>
#include <k3plan/engine_flags.hpp>
#include <k3plan/error.hpp>
#include <k3plan/fit_plan.hpp>
#include <k3plan/params.hpp>
#include <k3plan/units.hpp>

#include "common.hpp"

namespace k3plan {

namespace {

// "prog --a 1 --b 2" as lines of one shell command: the program, then one "--flag value" per line,
// each but the last ending in " \\" (flags as serve_args() wrote them, already quoted).
// The launch command as a multi-line shell command: one flag (with its value) per line.
std::vector<std::string> shell_lines(const std::string& program, const std::vector<std::string>& words) {
  std::vector<std::string> out{"  " + program};
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string l = "    " + words[i];
    if (i + 1 < words.size() && words[i + 1].rfind("--", 0) != 0) l += " " + words[++i];
    out.push_back(l);
  }
  for (std::size_t i = 0; i + 1 < out.size(); ++i) out[i] += " \\";
  return out;
}

nlohmann::json fit_json(const FitResult& f) {
  nlohmann::json j = {{"model", f.model},
                      {"gpu", f.gpu},
                      {"engine", to_string(f.settings.engine)},
                      {"engine_version", f.settings.model().version().id},
                      {"engine_label", f.engine_label},
                      {"accuracy",
                       {{"validated", f.accuracy.validated},
                        {"scope", f.accuracy.scope},
                        {"logs", f.accuracy.logs},
                        {"median_abs_error_pct", f.accuracy.median_abs_error_pct},
                        {"max_abs_error_pct", f.accuracy.max_abs_error_pct},
                        {"text", f.accuracy.text()}}},
                      {"gpus", f.gpus},
                      {"nodes", f.nodes},
                      {"layout", layout_json(f.layout)},
                      {"per_gpu", budget_json(f.limiting)},
                      {"stages", nlohmann::json::array()},
                      {"kv_cache_tokens", f.kv_cache_tokens},
                      {"max_users", f.max_users},
                      {"max_context_one_user", f.max_context_one_user},
                      {"context", f.context},
                      {"users", f.users},
                      {"headroom", f.headroom},
                      {"memory_fraction", f.utilization_used},
                      {"kv_dtype", f.settings.kv_dtype},
                      {"max_num_batched_tokens", f.max_num_batched_tokens},
                      {"max_num_seqs", f.max_num_seqs},
                      {"fits", f.fits},
                      {"reasons", f.reasons},
                      {"warnings", f.warnings},
                      {"flags", {{"sglang", f.sglang_flags}, {"vllm", f.vllm_flags}}},
                      {"flag_notes", f.flag_notes},
                      {"assumptions", f.assumptions}};
  for (const auto& b : f.ranks) j["stages"].push_back(budget_json(b));
  return j;
}

EngineSettings settings_from(const FitOptions& o) {
  EngineSettings s;
  s.engine = parse_engine(o.engine);
  s.engine_version = o.engine_version;
  const EngineModel& em = s.model();  // an unknown version is a usage error listing the known ones
  auto engine_flag = [&](const char* setting, const char* flag) {
    if (!em.has_setting(setting))
      throw InputError(fmt::format("{} is not a {} flag (--engine {}); {} takes {}", flag, em.display_name(), to_string(s.engine),
                                   em.display_name(), em.memory_fraction_flag()));
  };
  if (o.gpu_memory_utilization && o.mem_fraction_static)
    throw InputError("--gpu-memory-utilization (vLLM) and --mem-fraction-static (SGLang) are contradictory; give the one for --engine");
  if (o.gpu_memory_utilization) {
    if (!(*o.gpu_memory_utilization > 0 && *o.gpu_memory_utilization <= 1)) throw InputError("--gpu-memory-utilization: must be in (0, 1]");
    engine_flag("gpu_memory_utilization", "--gpu-memory-utilization");
    s.gpu_memory_utilization = *o.gpu_memory_utilization;
  }
  if (o.mem_fraction_static) {
    if (!(*o.mem_fraction_static > 0 && *o.mem_fraction_static < 1)) throw InputError("--mem-fraction-static: must be in (0, 1)");
    engine_flag("mem_fraction_static", "--mem-fraction-static");
    s.mem_fraction_static = *o.mem_fraction_static;
  }
  if (o.max_num_batched_tokens) {
    if (*o.max_num_batched_tokens < 1 || *o.max_num_batched_tokens > (1 << 24)) throw InputError("--max-num-batched-tokens: out of range");
    s.max_num_batched_tokens = *o.max_num_batched_tokens;
  }
  if (o.max_num_seqs) {
    if (*o.max_num_seqs < 1 || *o.max_num_seqs > (1 << 20)) throw InputError("--max-num-seqs: out of range");
    s.max_num_seqs = *o.max_num_seqs;
  }
  if (o.cuda_graph_max_bs) {
    if (*o.cuda_graph_max_bs < 1 || *o.cuda_graph_max_bs > 65536) throw InputError("--cuda-graph-max-bs: out of range");
    s.cuda_graph_max_bs = *o.cuda_graph_max_bs;
  }
  const bool state_flags =
      o.mamba_full_memory_ratio || o.max_mamba_cache_size || !o.mamba_radix_cache_strategy.empty() || o.disable_radix_cache;
  if (state_flags && !em.has_setting("mamba_full_memory_ratio"))
    throw InputError(
        fmt::format("--mamba-full-memory-ratio, --max-mamba-cache-size, --mamba-radix-cache-strategy and "
                    "--disable-radix-cache are SGLang flags, not {} ones",
                    em.display_name()));
  if (o.mamba_full_memory_ratio) {
    if (!(*o.mamba_full_memory_ratio > 0 && *o.mamba_full_memory_ratio <= 100))
      throw InputError("--mamba-full-memory-ratio: must be in (0, 100]");
    s.mamba_full_memory_ratio = *o.mamba_full_memory_ratio;
  }
  if (o.max_mamba_cache_size) {
    if (*o.max_mamba_cache_size < 1 || *o.max_mamba_cache_size > (1 << 24)) throw InputError("--max-mamba-cache-size: out of range");
    s.max_mamba_cache_size = *o.max_mamba_cache_size;
  }
  if (!o.mamba_radix_cache_strategy.empty() && o.mamba_radix_cache_strategy != "auto" && o.mamba_radix_cache_strategy != "no_buffer" &&
      o.mamba_radix_cache_strategy != "extra_buffer" && o.mamba_radix_cache_strategy != "extra_buffer_lazy")
    throw InputError(fmt::format("--mamba-radix-cache-strategy {}: expected auto, no_buffer, extra_buffer or extra_buffer_lazy",
                                 o.mamba_radix_cache_strategy));
  s.mamba_radix_cache_strategy = o.mamba_radix_cache_strategy == "auto" ? "" : o.mamba_radix_cache_strategy;
  s.disable_radix_cache = o.disable_radix_cache;
  s.kv_dtype = o.kv_dtype;
  s.draft_layers = o.draft_layers;
  if (!o.precision.empty()) {
    precision_format(o.precision);
    s.precision = o.precision;
  }
  return s;
}

Table budget_table(const FitResult& f) {
  Table t{fmt::format("Per-GPU memory budget ({}, stage {} of {}; GiB = 2^30 B)", f.engine_label, f.limiting.stage + 1, f.ranks.size()),
          {"item", "GiB", "GB", "share"},
          {},
          {false, true, true, true}};
  const auto& b = f.limiting;
  auto row = [&](const std::string& name, double v) {
    t.rows.push_back(
        {name, fmt::format("{:.2f}", v / kGiB), fmt::format("{:.2f}", v / kGB), fmt::format("{:.1f}%", v / b.capacity_bytes * 100)});
  };
  const bool vllm = f.settings.engine == Engine::vllm;
  row(vllm ? fmt::format("reserved (1 - gpu_memory_utilization {:.2f})", f.utilization_used)
           : fmt::format("reserved (1 - mem_fraction_static {:.3f}): activations, CUDA graphs", f.utilization_used),
      b.reserved_bytes);
  row("weights", b.weights_bytes);
  if (vllm) row(fmt::format("activation peak ({} batched tokens)", f.max_num_batched_tokens), b.activation_bytes);
  row(vllm ? "non-torch (NCCL, all-reduce buffers)" : "CUDA context, NCCL", b.overhead_bytes);
  row(fmt::format("KV pool ({} tokens)", fmt_int(static_cast<double>(b.kv_tokens))), b.kv_pool_bytes);
  if (b.state_pool_bytes > 0) row("state pool (linear attention)", b.state_pool_bytes);
  row(b.free_bytes < 0 ? "SHORTFALL" : "free (block rounding)", b.free_bytes);
  row("= total memory the engine sees (torch)", b.capacity_bytes);
  return t;
}

void fit_summary(Report& r, const FitResult& f, const std::vector<FitAlternative>& alts, const Model& m, const std::string& spec) {
  r.tables.push_back(budget_table(f));
  Table s{"Answer", {"question", "answer"}, {}, {false, false}};
  s.rows.push_back({"verdict", f.fits ? "FITS" : "DOES NOT FIT"});
  s.rows.push_back({"GPUs", fmt::format("{} x {} ({} node{})", f.gpus, f.gpu, f.nodes, f.nodes > 1 ? "s" : "")});
  s.rows.push_back(
      {"layout", layout_text(f.layout)});
  const std::string kv_dtype = f.settings.kv_dtype.empty() || f.settings.kv_dtype == "auto" ? "" : ", " + f.settings.kv_dtype;
  s.rows.push_back({"KV cache tokens", fmt::format("{} per instance ({} B/token per GPU{})", fmt_int(static_cast<double>(f.kv_cache_tokens)),
                                                   fmt_int(f.limiting.kv_bytes_per_token), kv_dtype)});
  if (f.limiting.state_bytes_per_sequence > 0)
    s.rows.push_back({"state per sequence", human_binary(f.limiting.state_bytes_per_sequence) + " per GPU"});
  s.rows.push_back({"max users", fmt::format("{} at {} tokens ({} requested)", fmt_int(static_cast<double>(f.max_users)),
                                             format_context(f.context), f.users)});
  if (f.limiting.state_slots >= 0 || f.settings.engine == Engine::sglang)
    s.rows.push_back(
        {"engine caps",
         fmt::format("max_running_requests {}{} (as {} derives it unless set)", fmt_int(static_cast<double>(f.limiting.running_cap)),
                     f.limiting.state_slots >= 0 ? fmt::format(", {} state slots", f.limiting.state_slots) : "", f.engine_label)});
  for (const auto& a : alts)
    s.rows.push_back({"with " + a.flag, fmt::format("{} users at {} tokens, {} KV tokens per instance ({})", fmt_int(static_cast<double>(a.fit.max_users)),
                                                    format_context(a.fit.context), fmt_int(static_cast<double>(a.fit.kv_cache_tokens)),
                                                    layout_text(a.fit.layout))});
  s.rows.push_back({"accuracy", f.accuracy.text()});
  s.rows.push_back({"longest context, one user", fmt::format("{} tokens", fmt_int(static_cast<double>(f.max_context_one_user)))});
  s.rows.push_back(
      {"headroom", f.headroom >= 0 ? fmt::format("{:.1f}% of the KV/state pool free at the requested load", f.headroom * 100) : "-"});
  r.tables.push_back(s);
  // the launch commands as shell lines that stay copyable at any terminal width
  const std::string path = shell_word(serve_model_path(m, spec));
  r.notes.push_back("SGLang:");
  for (const auto& l : shell_lines("python3 -m sglang.launch_server --model-path " + path, f.sglang_args)) r.notes.push_back(l);
  r.notes.push_back("vLLM:");
  for (const auto& l : shell_lines("vllm serve " + path, f.vllm_args)) r.notes.push_back(l);
  for (const auto& x : f.reasons) r.notes.push_back("does not fit: " + x);
  for (const auto& x : f.warnings) r.notes.push_back("warning: " + x);
  for (const auto& x : f.flag_notes) r.notes.push_back("note: " + x);
  for (const auto& a : f.assumptions) r.assumptions.push_back(a);
}

}  // namespace

Report run_fit(const Catalogue& cat, const FitOptions& o) {
  const Model m = resolve_model(cat, o.model);
  const EngineSettings s = settings_from(o);
  // a KV cache dtype the engine release has no name for is a usage error, not "does not fit"
  if (const KvDtypeArg kv = engine_kv_dtype(flag_release(s.engine, s.engine_version), s.kv_dtype, m.dtype); !kv.error.empty())
    throw InputError(kv.error);
  if (o.users < 1 || o.users > 10000000) throw InputError(fmt::format("--users {}: must be between 1 and 10,000,000", o.users));
  std::int64_t context = o.context.empty() ? std::min<std::int64_t>(m.max_context, 32768) : parse_context(o.context, "--context");
  const auto p = count_params(m);
  const double weights = o.precision.empty() ? weights_as_shipped(m, p).bytes : weights_uniform(p, o.precision).bytes;
  Report r;
  add_assumptions(r, m.assumptions);
  const bool explicit_layout = o.tp || o.ep || o.dp || o.pp || o.dp_attention || o.dcp;
  if (o.gpus < 0 || o.gpus > 100000) throw InputError("--gpus: out of range");

  if (o.gpu.empty()) {
    if (explicit_layout) throw InputError("fit: --tp/--ep/--dp/--pp need a GPU (-g)");
    // every catalogue GPU: lower bound for the weights, deployable layout, and the smallest that holds the load
    r.data = {{"model", m.id},      {"weights_bytes", weights}, {"precision", o.precision.empty() ? "as shipped" : o.precision},
              {"context", context}, {"users", o.users},         {"gpus", nlohmann::json::array()}};
    std::vector<std::vector<std::string>> table_rows;
    for (const auto& row : fit_every_gpu(cat, m, s, weights, context, o.users, o.weights_only)) {
      const Gpu& g = *row.gpu;
      const LowerBound& lb = row.lower_bound;
      nlohmann::json j = {
          {"gpu", g.id}, {"lower_bound_gpus", lb.lower_bound_gpus}, {"lower_bound_gpus_usable", lb.lower_bound_gpus_usable}};
      if (lb.deployable_found)
        j["deployable"] = {{"gpus", lb.gpus},
                           {"nodes", lb.nodes},
                           {"layout", layout_json(lb.layout)},
                           {"weights_bytes_per_gpu", lb.weights_bytes_per_gpu},
                           {"vllm_layout", layout_json(lb.vllm_layout)},
                           {"flags", {{"sglang", lb.flags.sglang}, {"vllm", lb.flags.vllm}}}};
      else
        j["deployable"] = nullptr;
      std::string load = "-";
      if (row.fit) {
        const FitResult& f = *row.fit;
        j["fit"] = fit_json(f);
        if (f.fits) {
          load = fmt::format("{} ({}n) {} {:.0f} USD/h", f.gpus, f.nodes, layout_text(f.layout), row.usd_per_hour);
          j["fit"]["usd_per_hour"] = row.usd_per_hour;
        } else {
          load = "no fit";
        }
      }
      std::vector<std::string> cells{g.id,
                                     std::to_string(lb.lower_bound_gpus),
                                     std::to_string(lb.lower_bound_gpus_usable),
                                     lb.deployable_found ? std::to_string(lb.gpus) : "-",
                                     lb.deployable_found ? std::to_string(lb.nodes) : "-",
                                     lb.deployable_found ? fmt::format("{:.1f}", lb.weights_bytes_per_gpu / kGB) : "-",
                                     lb.deployable_found ? layout_text(lb.layout) : "-"};
      if (!o.weights_only) cells.push_back(load);
      table_rows.push_back(cells);
      r.data["gpus"].push_back(j);
      // only the GPU figures this table uses: memory (bounds) and price (ranking)
      std::vector<Assumption> used;
      for (const auto& a : g.assumptions)
        if (a.what.find("hbm_gb") != std::string::npos || a.what.find("memory_reported") != std::string::npos ||
            (!o.weights_only && a.what.find("price") != std::string::npos))
          used.push_back(a);
      add_assumptions(r, used);
    }
    Table t{fmt::format("{}: {} of weights ({}); GPUs for the weights alone{}{}", m.id, human_decimal(weights),
                        o.precision.empty() ? "as shipped" : o.precision, o.weights_only ? "" : " and for the load",
                        o.weights_only ? ""
                                       : fmt::format(" ({} user{} at {} tokens, {}; ranked by USD/hour)", o.users, o.users == 1 ? "" : "s",
                                                     format_context(context), o.engine)),
            {"gpu", "bound (sold GB)", "bound (driver)", "deployable", "nodes", "GB/GPU", "SGLang layout"},
            {},
            {false, true, true, true, true, true, false, false}};
    if (!o.weights_only) t.headers.push_back("fits the load");
    t.rows = std::move(table_rows);
    r.tables.push_back(t);
    r.notes.push_back(
        "Lower bounds: weights / memory per GPU, rounded up (sold GB = 1e9 B as vendors quote; driver = MiB the driver reports). "
        "Deployable: a GPU count the engines accept (TP a power of two dividing the attention heads, EP dividing the experts, whole "
        "nodes).");
    if (!o.weights_only) r.notes.push_back("`k3plan fit -m MODEL -g GPU` shows the full per-GPU budget and the launch flags for one GPU.");
    r.data["assumptions"] = r.assumptions;
    return r;
  }

  const Gpu& g = cat.gpu(o.gpu);
  add_assumptions(r, g.assumptions);
  FitRequest req;
  req.context = context;
  req.users = o.users;
  req.gpus = o.gpus;
  req.ep_given = o.ep != 0;
  if (explicit_layout) {
    Layout l;
    l.tp = o.tp ? o.tp : 1;
    l.ep = o.ep ? o.ep : 1;
    l.dp = o.dp ? o.dp : 1;
    l.pp = o.pp ? o.pp : 1;
    l.dcp = o.dcp ? o.dcp : 1;
    l.dp_attention = o.dp_attention;
    req.layout = l;
  }
  const FitResult f = fit_one_gpu(m, g, s, req);
  const std::vector<FitAlternative> alts = fit_alternatives(m, g, s, f);
  fit_summary(r, f, alts, m, o.model);
  r.data = fit_json(f);
  r.data["alternatives"] = nlohmann::json::array();
  for (const auto& a : alts)
    r.data["alternatives"].push_back({{"flag", a.flag},
                                      {"layout", layout_json(a.fit.layout)},
                                      {"max_users", a.fit.max_users},
                                      {"kv_cache_tokens", a.fit.kv_cache_tokens},
                                      {"fits", a.fit.fits}});
  r.data["assumptions"] = r.assumptions;
  r.exit_code = f.fits ? 0 : 1;
  return r;
}

}  // namespace k3plan
