// Predicted vs measured: every row of the embedded data/perf/measured-*.yaml through the speed
// model, with its own family's factors (in-sample) and with factors derived from the nearest other
// family (leave-one-family-out: what a GPU without calibration of its own gets).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <k3plan/calibrate.hpp>
#include <k3plan/error.hpp>
#include <k3plan/plan.hpp>
#include <map>

namespace k3plan {

double percentile(std::vector<double> v, double q) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

PerfValidation validate_perf(const Catalogue& cat) {
  PerfValidation v;
  const CalibrationSet set = prepare_calibration(cat, embedded_measured(&v.sources));
  const EfficiencyTable& table = embedded_efficiency();
  std::map<std::string, PerfEfficiency> unseen_cache;  // family/engine
  for (const auto& x : set.rows) {
    const MeasuredRow& row = x.row;
    const PerfEfficiency own = factors_for(table, cat.gpus(), *x.gpu, row.engine, row.precision);
    PerfValidationRow out;
    out.row = row;
    out.layout = x.config.layout;
    out.family = table.family_of(*x.gpu);
    out.group = fmt::format("{}/{}{}", row.gpu, row.engine, row.spec == "mtp" ? "+mtp" : "");
    out.fits = x.fits;
    out.calibrated = own.calibrated;
    const RowScore in = score_row(set, x, own);
    out.pred = in.pred;
    out.ape_tput = in.ape_tput;
    out.ape_tpot = in.ape_tpot;
    out.ape_ttft = in.ape_ttft;
    // leave-one-family-out: one factor set fitted on the rows of every other family (this engine's,
    // sglang's when no other family runs it), applied through this GPU's datasheet peaks; none of
    // this family's rows enters the fit
    const std::string key = out.family + "/" + row.engine;
    auto uit = unseen_cache.find(key);
    if (uit == unseen_cache.end())
      uit = unseen_cache.emplace(key, fit_other_families(set, table, cat.gpus(), *x.gpu, row.engine, out.family)).first;
    const PerfEfficiency& unseen = uit->second;
    const RowScore u = score_row(set, x, unseen);
    out.pred_unseen = u.pred;
    out.unseen_tput = u.ape_tput;
    out.unseen_tpot = u.ape_tpot;
    out.unseen_ttft = u.ape_ttft;
    out.unseen_from = unseen.derived_from;
    v.rows.push_back(std::move(out));
  }
  // disaggregated rows, out of sample: the same model per precision and KV dtype, the same factors
  // lookup, the same memory rules per side
  const Model& base = cat.model("deepseek-r1-0528");
  std::vector<std::pair<std::string, PerfModel>> models;
  auto ape = [](double pred, double meas) { return meas > 0 ? std::abs(pred - meas) / meas * 100 : std::nan(""); };
  for (const auto& row : embedded_measured(&v.disagg_sources, true)) {
    const Gpu& g = cat.gpu(row.gpu);
    const std::string experts = row.precision == "fp4" ? (g.vendor == "amd" ? "mxfp4" : "nvfp4") : "";
    const Model m = with_precision(base, "", experts);
    const std::string key = experts + "|" + row.kv_dtype;
    auto it = std::find_if(models.begin(), models.end(), [&](const auto& x) { return x.first == key; });
    if (it == models.end()) {
      models.emplace_back(key, prepare_perf_model(m, row.kv_dtype));
      it = models.end() - 1;
    }
    EngineSettings s;
    s.engine = layout_engine(row.engine);
    s.kv_dtype = row.kv_dtype;
    s.draft_layers = row.spec == "mtp" ? 1 : 0;
    PerfDisaggValidationRow out;
    out.row = row;
    out.family = table.family_of(g);
    out.group = fmt::format("{}/{}{}", row.gpu, row.framework.empty() ? row.engine : row.framework, row.spec == "mtp" ? "+mtp" : "");
    const DisaggSide p{row.prefill.workers, row.prefill.tp, row.prefill.ep, row.prefill.dp_attention};
    const DisaggSide d{row.decode.workers, row.decode.tp, row.decode.ep, row.decode.dp_attention};
    out.deployment = disagg_deployment(m, g, row.engine, p, d, s, row.isl, row.osl, 0.9, row.conc);  // InferenceX: 80-100% lengths
    const PerfEfficiency eff = factors_for(table, cat.gpus(), g, row.engine, row.precision);
    out.calibrated = eff.calibrated;
    out.pred = predict_disagg(it->second, g, eff, out.deployment, row.spec == "mtp" ? eff.spec_tokens : 0, eff.spec_acceptance);
    out.ape_tput = ape(out.pred.total.tput_total_per_gpu, row.tput_total);
    out.ape_tpot = ape(out.pred.total.tpot_ms, row.tpot_ms);
    out.ape_ttft = ape(out.pred.total.ttft_s, row.ttft_s);
    v.disagg.push_back(std::move(out));
  }
  for (const auto& e : table.entries) v.assumptions.insert(v.assumptions.end(), e.assumptions.begin(), e.assumptions.end());
  return v;
}

}  // namespace k3plan
