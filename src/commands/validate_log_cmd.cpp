// `k3plan validate --log FILE`: reads a vLLM or SGLang start-up log and compares it with the plan
// term by term (check_start_up_log, src/engines/log_check.cpp: the serving context the log ran, the
// fit budget for it, the term that explains the difference); this command lays the result out. It
// closes the loop between the plan and the engine after a first start-up.
#include <fmt/format.h>

#include <k3plan/budget.hpp>
#include <k3plan/engine_log.hpp>
#include <k3plan/input_file.hpp>
#include <k3plan/limits.hpp>
#include <k3plan/log_check.hpp>
#include <k3plan/units.hpp>
#include <k3plan/validate.hpp>

#include "common.hpp"

namespace k3plan {

Report run_validate_log(const Catalogue& cat, const ValidateLogOptions& o) {
  const LogCheck c = check_start_up_log(cat, read_input_file(o.log_path, "engine log", limits::kMaxLogBytes), o.log_path, o);
  const EngineLog& log = c.log;
  const EngineModel& em = *c.engine;
  const Model& m = c.model;
  const Gpu& gpu = c.gpu;
  const Layout& l = c.layout;
  const EngineSettings& s = c.settings;
  const std::int64_t context = c.context;
  const FitResult& f = c.fit;
  const RankBudget& b = f.limiting;
  const std::vector<LogTerm>& terms = c.terms;
  const LogTerm* culprit = c.explained_by < 0 ? nullptr : &terms[static_cast<std::size_t>(c.explained_by)];
  const double err = c.kv_tokens_error_pct;
  std::vector<std::string> assumptions = c.assumptions;  // the comparison's own first, then the plan's
  assumptions.insert(assumptions.end(), f.assumptions.begin(), f.assumptions.end());
  Report r;
  nlohmann::json logged = nlohmann::json::object(), predicted = nlohmann::json::object(), jterms = nlohmann::json::array();
  logged["kv_cache_tokens"] = c.logged_kv_tokens;
  logged["kv_cache_tokens_from"] = c.logged_kv_from;
  predicted["kv_cache_tokens"] = c.predicted_kv_tokens;
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
            {"engine", to_string(s.engine)},
            {"engine_version", em.version().id},
            {"engine_version_logged", log.version},
            {"engine_label", em.label()},
            {"model", m.id},
            {"model_kind", model_kind(m)},
            {"gpu", gpu.id},
            {"layout", layout_json(l)},
            {"context_tokens", context},
            {"memory_fraction", f.utilization_used},
            {"kv_dtype", s.kv_dtype},
            {"args_from", log.args_from},
            {"logged", logged},
            {"predicted", predicted},
            {"kv_cache_tokens_error", err / 100.0},
            {"kv_cache_tokens_error_pct", err},
            {"explained_by", culprit ? culprit->term : ""},
            {"terms", jterms},
            {"fit_reasons", f.reasons},
            {"assumptions", assumptions}};

  Table t{fmt::format("{}: {} on {} x {}, {}, {} tokens context ({})", o.log_path, m.id, f.gpus, gpu.id, layout_text(l),
                      fmt_int(double(context)), em.label()),
          {"term", "logged GiB", "predicted GiB", "effect on KV pool GiB"},
          {},
          {false, true, true, true}};
  for (const auto& x : terms)
    t.rows.push_back({x.term, x.logged_bytes ? fmt::format("{:.2f}", *x.logged_bytes / kGiB) : "-",
                      fmt::format("{:.2f}", x.predicted_bytes / kGiB),
                      x.logged_bytes && x.term != "kv_pool" ? fmt::format("{:+.2f}", x.pool_effect_bytes / kGiB) : ""});
  t.rows.push_back({"KV tokens", fmt_int(static_cast<double>(c.logged_kv_tokens)), fmt_int(static_cast<double>(c.predicted_kv_tokens)),
                    fmt::format("{:+.2f}%", err)});
  r.tables.push_back(t);
  r.notes.push_back(fmt::format("logged tokens from '{}'; arguments from '{}'{}", c.logged_kv_from,
                                log.args_from.empty() ? "(none)" : log.args_from,
                                log.version.empty() ? "; the log does not print the engine version" : ""));
  if (culprit)
    r.notes.push_back(fmt::format("largest difference: {} ({:+.2f} GiB on the KV pool)", culprit->term, culprit->pool_effect_bytes / kGiB));
  r.assumptions = assumptions;
  return r;
}

}  // namespace k3plan
