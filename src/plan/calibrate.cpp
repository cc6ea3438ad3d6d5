// Calibration of the speed model's factors on measured rows, and factors for a GPU whose family has
// no calibration of its own (derived from the nearest calibrated family by datasheet ratios).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <k3plan/calibrate.hpp>
#include <k3plan/error.hpp>
#include <k3plan/params.hpp>

namespace k3plan {

namespace {
double ape(double pred, double meas) { return meas > 0 ? std::abs(pred - meas) / meas * 100 : std::nan(""); }
double log_miss(double pred, double meas) { return meas > 0 && pred > 0 ? std::abs(std::log(pred / meas)) : 0; }
}  // namespace

CalibrationSet prepare_calibration(const Catalogue& cat, const std::vector<MeasuredRow>& rows) {
  CalibrationSet set;
  const Model& base = cat.model("deepseek-r1-0528");
  std::vector<std::string> keys;
  set.models.reserve(8);
  for (const auto& row : rows) {
    if (row.disagg)
      throw InputError(fmt::format("calibration: {} is a disaggregated row; those are validated out of sample, never fitted on", row.id));
    CalibrationRow x;
    x.row = row;
    x.gpu = &cat.gpu(row.gpu);
    const std::string experts = row.precision == "fp4" ? (x.gpu->vendor == "amd" ? "mxfp4" : "nvfp4") : "";
    const Model m = with_precision(base, "", experts);
    const std::string key = experts + "|" + row.kv_dtype;
    const auto it = std::find(keys.begin(), keys.end(), key);
    if (it == keys.end()) {
      keys.push_back(key);
      set.models.push_back(prepare_perf_model(m, row.kv_dtype));
      x.model = set.models.size() - 1;
    } else {
      x.model = static_cast<std::size_t>(it - keys.begin());
    }
    PerfConfig& c = x.config;
    c.layout.tp = row.tp;
    c.layout.ep = row.ep;
    c.layout.dp = row.dp_attention ? row.tp : 1;
    c.layout.dp_attention = row.dp_attention;
    c.engine = layout_engine(row.engine);
    c.isl = row.isl;
    c.osl = row.osl;
    c.length_scale = 0.9;  // InferenceX draws lengths at 80-100% of nominal (../shared/measured/README.md)
    c.concurrency = row.conc;
    c.prefill_chunk = default_chunk(*x.gpu, row.engine);
    c.mixed_prefill = mixes_prefill(row.engine);
    EngineSettings s;
    s.engine = c.engine;
    s.kv_dtype = row.kv_dtype;
    s.draft_layers = row.spec == "mtp" ? 1 : 0;
    const MemCheck mc = memory_check(m, *x.gpu, c.layout, s, row.isl, row.osl, c.length_scale, row.conc);
    c.max_running = mc.max_running;
    x.fits = mc.fits;
    set.rows.push_back(std::move(x));
  }
  return set;
}

RowScore score_row(const CalibrationSet& set, const CalibrationRow& x, const PerfEfficiency& eff) {
  PerfConfig c = x.config;
  if (x.row.spec == "mtp") {
    c.spec_tokens = eff.spec_tokens;
    c.spec_acceptance = eff.spec_acceptance;
  }
  RowScore s;
  s.pred = estimate_perf(set.models[x.model], *x.gpu, eff, c);
  s.ape_tput = ape(s.pred.tput_total_per_gpu, x.row.tput_total);
  s.ape_tpot = ape(s.pred.tpot_ms, x.row.tpot_ms);
  s.ape_ttft = ape(s.pred.ttft_s, x.row.ttft_s);
  return s;
}

namespace {

// The objective data/perf/efficiency.yaml states: |ln(pred/measured)| of throughput per GPU and of
// TPOT, plus 0.3 x that of TTFT on rows with at most 16 users.
double objective(const CalibrationSet& set, const std::vector<std::size_t>& rows, const PerfEfficiency& eff) {
  double sum = 0;
  for (std::size_t i : rows) {
    const CalibrationRow& x = set.rows[i];
    PerfConfig c = x.config;
    if (x.row.spec == "mtp") {
      c.spec_tokens = eff.spec_tokens;
      c.spec_acceptance = eff.spec_acceptance;
    }
    const PerfResult p = estimate_perf(set.models[x.model], *x.gpu, eff, c);
    sum += log_miss(p.tput_total_per_gpu, x.row.tput_total) + log_miss(p.tpot_ms, x.row.tpot_ms);
    if (x.row.conc <= 16) sum += 0.3 * log_miss(p.ttft_s, x.row.ttft_s);
  }
  return sum;
}

struct Bound {
  double PerfEfficiency::*field;
  double lo, hi;
  bool mtp_only;
};
// the fitted factors and their physical bounds (data/perf/efficiency.yaml header)
const Bound kFitted[] = {
    {&PerfEfficiency::hbm, 0.2, 0.95, false},           {&PerfEfficiency::decode_mfu, 0.25, 0.7, false},
    {&PerfEfficiency::prefill_mfu, 0.1, 0.7, false},    {&PerfEfficiency::layer_overhead_us, 1, 300, false},
    {&PerfEfficiency::ttft_overhead_ms, 1, 500, false}, {&PerfEfficiency::spec_acceptance, 0.2, 0.98, true},
};

}  // namespace

PerfEfficiency fit_factors(const CalibrationSet& set, const std::vector<std::size_t>& rows, PerfEfficiency start, double* objective_out) {
  bool any_mtp = false;
  std::vector<std::size_t> used;
  for (std::size_t i : rows)
    if (set.rows[i].row.exclude.empty() && set.rows[i].fits && !set.rows[i].row.disagg) {
      used.push_back(i);
      any_mtp = any_mtp || set.rows[i].row.spec == "mtp";
    }
  if (used.empty()) throw InputError("calibration: no usable measured rows");
  PerfEfficiency e = start;
  double best = objective(set, used, e);
  for (double step : {0.5, 0.25, 0.1, 0.05, 0.02, 0.01}) {
    for (int sweep = 0; sweep < 30; ++sweep) {
      bool moved = false;
      for (const auto& b : kFitted) {
        if (b.mtp_only && !any_mtp) continue;
        for (double f : {1 + step, 1 / (1 + step)}) {
          PerfEfficiency t = e;
          t.*(b.field) = std::clamp(e.*(b.field) * f, b.lo, b.hi);
          if (t.*(b.field) == e.*(b.field)) continue;
          const double v = objective(set, used, t);
          if (v < best - 1e-9) {
            best = v;
            e = t;
            moved = true;
            break;
          }
        }
      }
      if (!moved) break;
    }
  }
  if (objective_out) *objective_out = best;
  return e;
}

// --- factors for a family without calibration ---------------------------------------------------

namespace {
double datasheet_distance(const Gpu& a, const Gpu& b) {
  auto lr = [](double x, double y) { return x > 0 && y > 0 ? std::abs(std::log(x / y)) : 1.0; };
  return (a.vendor == b.vendor ? 0.0 : 2.0) + lr(a.hbm_bandwidth_tb_s.value, b.hbm_bandwidth_tb_s.value) +
         lr(a.tflops_bf16.value, b.tflops_bf16.value) + lr(a.tflops_fp8.value, b.tflops_fp8.value);
}
}  // namespace

PerfEfficiency derive_factors(const EfficiencyTable& t, const std::vector<Gpu>& gpus, const Gpu& target, const std::string& engine,
                              const std::string& exclude_family, const std::string& precision) {
  const PerfEfficiency* near = nullptr;
  const Gpu* ref = nullptr;
  double best = 1e300;
  // as in EfficiencyTable::lookup: an entry keyed to another precision never applies, and one keyed
  // to this precision is preferred over an `any` one (the fraction of an FP8 roofline an engine
  // reaches need not be the fraction of an FP4 one); among those, the nearest by datasheet
  int best_match = -1;
  for (const auto& e : t.entries) {
    if (e.family == exclude_family || e.engine != engine || e.calibrated_on.empty()) continue;
    if (e.precision != "any" && e.precision != precision) continue;
    const int match = e.precision != "any" ? 1 : 0;
    const auto it = std::find_if(gpus.begin(), gpus.end(), [&](const Gpu& g) { return g.id == e.calibrated_on; });
    if (it == gpus.end()) continue;
    const double dist = datasheet_distance(target, *it);
    if (match > best_match || (match == best_match && dist < best)) {
      best_match = match;
      best = dist;
      near = &e;
      ref = &*it;
    }
  }
  if (!near) throw InputError(fmt::format("no calibrated {} factors to derive {}'s from", engine, target.id));
  PerfEfficiency d = *near;
  d.calibrated = false;
  d.derived_from = near->family + "/" + near->engine + " (" + ref->id + ")";
  // Datasheet ratios. Fractions of peak bandwidth and FLOPS carry over (the ratio of the two
  // GPUs' peaks is applied by the roofline itself); fixed per-layer and per-step costs are
  // kernel-launch and synchronisation latencies that do not follow the datasheet, so they carry
  // over unchanged. Assumed, not fitted: the leave-one-family-out table measures what this costs.
  d.assumptions.insert(
      d.assumptions.begin(),
      fmt::format("perf factors for {} ({}): UNCALIBRATED: no measured rows of its family; the {} factors are used as fractions of "
                  "{}'s datasheet peaks (HBM {:g} vs {:g} TB/s, BF16 {:g} vs {:g} TFLOPS); the error band is the leave-one-family-out one",
                  target.id, engine, d.derived_from, target.id, target.hbm_bandwidth_tb_s.value, ref->hbm_bandwidth_tb_s.value,
                  target.tflops_bf16.value, ref->tflops_bf16.value));
  return d;
}

PerfEfficiency factors_for(const EfficiencyTable& t, const std::vector<Gpu>& gpus, const Gpu& gpu, const std::string& engine,
                           const std::string& precision) {
  const std::string fam = t.family_of(gpu);
  bool has = false;
  for (const auto& e : t.entries) has = has || (e.family == fam && !fam.empty());
  if (has) return t.lookup(gpu, engine, precision);
  std::string eng = engine;
  bool any = false;
  for (const auto& e : t.entries) any = any || (e.engine == engine && !e.calibrated_on.empty());
  if (!any) eng = "sglang";
  PerfEfficiency d = derive_factors(t, gpus, gpu, eng, fam.empty() ? "-" : fam, precision);
  if (eng != engine)
    d.assumptions.insert(d.assumptions.begin(), fmt::format("perf factors: no calibrated {} entry: sglang's used", engine));
  return d;
}

std::string precision_key(const Model& m) {
  const double bits = precision_format(m.precision_of(m.moe ? ParamGroup::routed_experts : ParamGroup::dense_mlp)).bits_per_weight;
  return bits <= 4.6 ? "fp4" : bits <= 8.6 ? "fp8" : "bf16";
}

}  // namespace k3plan
