// Predicted vs measured: every row of the embedded data/perf/measured-*.yaml through the speed
// model, with its own family's factors (in-sample) and with factors derived from the nearest other
// family (leave-one-family-out: what a GPU without calibration of its own gets).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <k3plan/calibrate.hpp>
#include <k3plan/error.hpp>
#include <k3plan/plan.hpp>

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
    // leave-one-family-out: the engine's entries of every other family (each fitted on its own
    // family's rows only) that apply at the row's precision, the nearest by datasheet; sglang's when
    // no other family has this engine
    PerfEfficiency unseen;
    try {
      unseen = derive_factors(table, cat.gpus(), *x.gpu, row.engine, out.family, row.precision);
    } catch (const InputError&) {
      unseen = derive_factors(table, cat.gpus(), *x.gpu, "sglang", out.family, row.precision);
    }
    const RowScore u = score_row(set, x, unseen);
    out.pred_unseen = u.pred;
    out.unseen_tput = u.ape_tput;
    out.unseen_tpot = u.ape_tpot;
    out.unseen_ttft = u.ape_ttft;
    out.unseen_from = unseen.derived_from;
    v.rows.push_back(std::move(out));
  }
  for (const auto& e : table.entries) v.assumptions.insert(v.assumptions.end(), e.assumptions.begin(), e.assumptions.end());
  return v;
}

}  // namespace k3plan
