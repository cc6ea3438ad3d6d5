// `k3plan fit`: weights lower bounds for every GPU, and the per-GPU memory budget with engine-
// accurate KV capacity for a load (users x context), with the flags for both engines. The content
// is plan_fit()'s (fit_plan.hpp); a fit reads as fit_render.hpp draws it.
#include <k3plan/commands.hpp>
#include <k3plan/deploy.hpp>
#include <k3plan/engine_flags.hpp>
#include <k3plan/fit_plan.hpp>
#include <k3plan/fit_render.hpp>
#include <k3plan/units.hpp>

#include "common.hpp"

namespace k3plan {

namespace {

void fit_summary(Report& r, const FitResult& f, const std::vector<FitAlternative>& alts, const Model& m, const std::string& spec) {
  r.tables.push_back(budget_table(f));
  Table s{"Answer", {"question", "answer"}, {}, {false, false}};
  s.rows.push_back({"verdict", f.fits ? "FITS" : "DOES NOT FIT"});
  s.rows.push_back({"GPUs", fmt::format("{} x {} ({} node{})", f.gpus, f.gpu, f.nodes, f.nodes > 1 ? "s" : "")});
  s.rows.push_back({"layout", layout_text(f.layout)});
  const std::string kv_dtype = f.settings.kv_dtype.empty() || f.settings.kv_dtype == "auto" ? "" : ", " + f.settings.kv_dtype;
  s.rows.push_back(
      {"KV cache tokens", fmt::format("{} per instance ({} B/token per GPU{})", fmt_int(static_cast<double>(f.kv_cache_tokens)),
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
    s.rows.push_back({"with " + a.flag, fmt::format("{} users at {} tokens, {} KV tokens per instance ({})",
                                                    fmt_int(static_cast<double>(a.fit.max_users)), format_context(a.fit.context),
                                                    fmt_int(static_cast<double>(a.fit.kv_cache_tokens)), layout_text(a.fit.layout))});
  s.rows.push_back({"accuracy", f.accuracy.text()});
  s.rows.push_back({"longest context, one user", fmt::format("{} tokens", fmt_int(static_cast<double>(f.max_context_one_user)))});
  s.rows.push_back(
      {"headroom", f.headroom >= 0 ? fmt::format("{:.1f}% of the KV/state pool free at the requested load", f.headroom * 100) : "-"});
  r.tables.push_back(s);
  // the launch commands as shell lines that stay copyable at any terminal width
  const std::string path = shell_word(serve_model_path(m, spec));
  r.notes.push_back("SGLang:");
  for (const auto& l : shell_lines("python3 -m sglang.launch_server --model-path " + path, f.sglang_args, f.sglang_env))
    r.notes.push_back(l);
  r.notes.push_back("vLLM:");
  for (const auto& l : shell_lines("vllm serve " + path, f.vllm_args, f.vllm_env)) r.notes.push_back(l);
  for (const auto& x : f.reasons) r.notes.push_back("does not fit: " + x);
  for (const auto& x : f.warnings) r.notes.push_back("warning: " + x);
  for (const auto& x : f.flag_notes) r.notes.push_back("note: " + x);
  for (const auto& a : f.assumptions) r.assumptions.push_back(a);
}

// No -g: every catalogue GPU, its lower bound for the weights, deployable layout, and the smallest
// that holds the load.
void every_gpu(Report& r, const FitPlan& p, const FitOptions& o) {
  const Model& m = p.model;
  const std::int64_t context = p.context;
  r.data = {{"model", m.id},
            {"weights_bytes", p.weights_bytes},
            {"precision", o.precision.empty() ? "as shipped" : o.precision},
            {"context", context},
            {"users", o.users},
            {"gpus", nlohmann::json::array()}};
  std::vector<std::vector<std::string>> table_rows;
  for (const auto& row : p.rows) {
    const Gpu& g = *row.gpu;
    const LowerBound& lb = row.lower_bound;
    nlohmann::json j = {{"gpu", g.id}, {"lower_bound_gpus", lb.lower_bound_gpus}, {"lower_bound_gpus_usable", lb.lower_bound_gpus_usable}};
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
  }
  Table t{fmt::format("{}: {} of weights ({}); GPUs for the weights alone{}{}", m.id, human_decimal(p.weights_bytes),
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
}

}  // namespace

Report run_fit(const Catalogue& cat, const FitOptions& o) {
  const FitPlan p = plan_fit(cat, o);
  Report r;
  add_assumptions(r, p.assumptions);
  if (!p.fit) {
    every_gpu(r, p, o);
    r.data["assumptions"] = r.assumptions;
    return r;
  }
  const FitResult& f = *p.fit;
  fit_summary(r, f, p.alternatives, p.model, o.model);
  r.data = fit_json(f);
  r.data["alternatives"] = nlohmann::json::array();
  for (const auto& a : p.alternatives)
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
