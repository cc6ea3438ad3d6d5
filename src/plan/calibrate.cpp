// Calibration of the speed model's factors on measured rows, and factors for a GPU whose family has
// no calibration of its own (derived from the nearest calibrated family by datasheet ratios).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <k3plan/ascii.hpp>
#include <k3plan/bench_result.hpp>
#include <k3plan/calibrate.hpp>
#include <k3plan/error.hpp>
#include <k3plan/kernel_path.hpp>
#include <k3plan/number_text.hpp>
#include <k3plan/params.hpp>
#include <map>

namespace k3plan {

namespace {
double ape(double pred, double meas) { return meas > 0 ? std::abs(pred - meas) / meas * 100 : std::nan(""); }
double log_miss(double pred, double meas) { return meas > 0 && pred > 0 ? std::abs(std::log(pred / meas)) : 0; }
}  // namespace

CalibrationSet prepare_calibration(const Catalogue& cat, const std::vector<MeasuredRow>& rows, const Model* model, double length_scale) {
  CalibrationSet set;
  const Model& base = model ? *model : cat.model("deepseek-r1-0528");
  const std::string shipped = precision_key(base);
  std::vector<std::string> keys;
  set.models.reserve(8);
  for (const auto& row : rows) {
    if (row.disagg)
      throw InputError(fmt::format("calibration: {} is a disaggregated row; those are validated out of sample, never fitted on", row.id));
    CalibrationRow x;
    x.row = row;
    x.gpu = &cat.gpu(row.gpu);
    const std::string experts = row.precision == "fp4" ? (x.gpu->vendor == "amd" ? "mxfp4" : "nvfp4") : "";
    const std::string uniform = experts.empty() && !row.precision.empty() && row.precision != shipped ? row.precision : "";
    const Model m = with_precision(base, uniform, experts);
    const std::string key = uniform + "|" + experts + "|" + row.kv_dtype;
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
    c.length_scale = length_scale;  // InferenceX draws lengths at 80-100% of nominal: 0.9 (../shared/measured/README.md)
    c.concurrency = row.conc / std::max(row.replicas, 1);  // one replica's share of the users
    c.prefill_chunk = default_chunk(*x.gpu, row.engine);
    c.mixed_prefill = mixes_prefill(row.engine);
    c.kernels = kernel_path(row.engine, *x.gpu, m);
    EngineSettings s;
    s.engine = c.engine;
    s.kv_dtype = row.kv_dtype;
    s.draft_layers = row.spec == "mtp" ? 1 : 0;
    const MemCheck mc = memory_check(m, *x.gpu, c.layout, s, row.isl, row.osl, length_scale, c.concurrency);
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

PerfEfficiency fit_other_families(const CalibrationSet& set, const EfficiencyTable& t, const std::vector<Gpu>& gpus, const Gpu& target,
                                  const std::string& engine, const std::string& exclude_family) {
  // the rows of every family but the held-out one, for this engine; sglang's when no other family
  // runs it (ATOM runs on CDNA4 only)
  std::vector<std::size_t> rows;
  std::string used;
  for (const std::string& e : {engine, std::string("sglang")}) {
    for (std::size_t i = 0; i < set.rows.size(); ++i) {
      const CalibrationRow& x = set.rows[i];
      const std::string fam = t.family_of(*x.gpu);
      if (!fam.empty() && fam != exclude_family && x.row.engine == e && x.row.exclude.empty() && x.fits && !x.row.disagg) rows.push_back(i);
    }
    used = e;
    if (!rows.empty()) break;
  }
  if (rows.empty())
    throw InputError(fmt::format("no measured {} rows outside {} to fit {}'s factors on", engine, exclude_family, target.id));
  // start where bench/perf_fit.cpp starts a family without an entry: the nearest other family
  PerfEfficiency start = derive_factors(t, gpus, target, used, exclude_family);
  PerfEfficiency f = fit_factors(set, rows, start);
  std::vector<std::string> fams;
  for (std::size_t i : rows) {
    const std::string fam = t.family_of(*set.rows[i].gpu) + " (" + set.rows[i].gpu->id + ")";
    if (std::find(fams.begin(), fams.end(), fam) == fams.end()) fams.push_back(fam);
  }
  f.family = start.family;
  f.engine = used;
  f.precision = "any";
  f.versions = "any";
  f.calibrated = false;
  f.calibrated_on.clear();
  f.derived_from = fmt::format("{} rows of {} ({})", rows.size(), fmt::join(fams, ", "), used);
  f.assumptions.clear();
  f.assumptions.push_back(
      fmt::format("perf factors for {} ({}): fitted on the {} without any row of {}; fractions of {}'s own datasheet peaks (HBM {:g} TB/s, "
                  "BF16 {:g} / FP8 {:g} / FP4 {:g} TFLOPS, scale-up {:g} GB/s); hbm {:.3g}, decode_mfu {:.3g}, prefill_mfu {:.3g}, "
                  "layer_overhead_us {:.3g}, ttft_overhead_ms {:.3g}, spec_acceptance {:.3g}",
                  target.id, engine, f.derived_from, exclude_family, target.id, target.hbm_bandwidth_tb_s.value, target.tflops_bf16.value,
                  target.tflops_fp8.value, target.tflops_fp4.value, target.scaleup_gb_s.value, f.hbm, f.decode_mfu, f.prefill_mfu,
                  f.layer_overhead_us, f.ttft_overhead_ms, f.spec_acceptance));
  return f;
}

PerfEfficiency factors_for(const EfficiencyTable& t, const std::vector<Gpu>& gpus, const Gpu& gpu, const std::string& engine,
                           const std::string& precision, const std::string& version) {
  const std::string fam = t.family_of(gpu);
  bool has = false;
  for (const auto& e : t.entries) has = has || (e.family == fam && !fam.empty());
  if (has) return t.lookup(gpu, engine, precision, version);
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

// --- user calibration files ----------------------------------------------------------------------

void merge_efficiency(EfficiencyTable& base, const EfficiencyTable& user) {
  for (const auto& f : user.families) {
    for (auto& b : base.families)  // a GPU is in one family: the user's
      if (b.id != f.id)
        b.gpus.erase(std::remove_if(b.gpus.begin(), b.gpus.end(),
                                    [&](const std::string& g) { return std::find(f.gpus.begin(), f.gpus.end(), g) != f.gpus.end(); }),
                     b.gpus.end());
    const auto it = std::find_if(base.families.begin(), base.families.end(), [&](const auto& b) { return b.id == f.id; });
    if (it == base.families.end()) {
      base.families.push_back(f);
      continue;
    }
    for (const auto& g : f.gpus)
      if (std::find(it->gpus.begin(), it->gpus.end(), g) == it->gpus.end()) it->gpus.push_back(g);
  }
  auto same = [](const PerfEfficiency& a, const PerfEfficiency& b) {
    return a.family == b.family && a.engine == b.engine && a.precision == b.precision && a.versions == b.versions;
  };
  std::vector<PerfEfficiency> merged = user.entries;
  for (const auto& e : base.entries)
    if (std::none_of(user.entries.begin(), user.entries.end(), [&](const PerfEfficiency& u) { return same(u, e); })) merged.push_back(e);
  base.entries = std::move(merged);
}

EfficiencyTable efficiency_for(const Catalogue& cat, const std::string& efficiency_file) {
  EfficiencyTable t =
      efficiency_file.empty() ? embedded_efficiency() : parse_efficiency(read_text_file(efficiency_file, "--efficiency"), efficiency_file);
  for (const auto& f : cat.efficiency_files()) merge_efficiency(t, parse_efficiency(f.text, f.origin));
  return t;
}

// --- k3plan calibrate ----------------------------------------------------------------------------

namespace {

std::string yaml_quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
      continue;
    }
    out += c;
  }
  return out + "\"";
}

double median_of(std::vector<double> v) { return v.empty() ? std::nan("") : percentile(std::move(v), 0.5); }

// the value the file records, else the command line's; a file value the command line contradicts
// makes the row "another deployment" (the option selects rows), reported in `skip`
std::string pick(const std::string& file, const std::string& cli, const char* what, std::string& skip) {
  if (!file.empty() && !cli.empty() && ascii_lower(file) != ascii_lower(cli) && skip.empty())
    skip = fmt::format("the file's {} is {}, not {}", what, file, cli);
  return !file.empty() ? file : cli;
}
int pick(int file, int cli, const char* what, std::string& skip) {
  if (file && cli && file != cli && skip.empty()) skip = fmt::format("the file's {} is {}, not {}", what, file, cli);
  return file ? file : cli;
}

struct Held {
  const char* key;
  double PerfEfficiency::*field;
};
const Held kWritten[] = {
    {"hbm", &PerfEfficiency::hbm},
    {"decode_mfu", &PerfEfficiency::decode_mfu},
    {"prefill_mfu", &PerfEfficiency::prefill_mfu},
    {"layer_overhead_us", &PerfEfficiency::layer_overhead_us},
    {"ttft_overhead_ms", &PerfEfficiency::ttft_overhead_ms},
    {"spec_acceptance", &PerfEfficiency::spec_acceptance},
    {"step_overhead_ms", &PerfEfficiency::step_overhead_ms},
    {"comm_latency_us", &PerfEfficiency::comm_latency_us},
    {"scaleout_latency_us", &PerfEfficiency::scaleout_latency_us},
    {"comm_efficiency", &PerfEfficiency::comm_efficiency},
    {"scaleout_gb_s", &PerfEfficiency::scaleout_gb_s},
};

std::string calibration_yaml(const Calibration& c, const std::string& file) {
  std::string y = fmt::format(
      "# Speed-model factors written by `k3plan calibrate` from {} ({} format; fields as {}), model {}.\n"
      "# Use it with `--data DIR` (this file inside DIR): an entry replaces the embedded one of the same family x engine x\n"
      "# precision x versions and wins the lookup over the others. IN-SAMPLE: the factors were fitted on these rows, so\n"
      "# the errors in each entry's source are on the rows the fit saw, not a validation.\n"
      "# Schema: data/SCHEMA.md (data/perf/efficiency.yaml).\nfamilies:\n",
      file, c.format, c.fields_source, c.model);
  std::vector<std::string> fams;
  for (const auto& s : c.slices) {
    if (std::find(fams.begin(), fams.end(), s.family) != fams.end()) continue;
    fams.push_back(s.family);
    y += fmt::format("  - {{id: {}, gpus: [{}], source: {}}}\n", s.family, fmt::join(s.family_gpus, ", "),
                     yaml_quoted(s.new_family ? "k3plan calibrate: a family of its own for a GPU in none of data/perf/efficiency.yaml"
                                              : "the family of data/perf/efficiency.yaml"));
  }
  y += "defaults:\n  source: \"k3plan calibrate (every entry sets each factor)\"\nentries:\n";
  for (const auto& s : c.slices) {
    const bool mtp =
        std::any_of(c.rows.begin(), c.rows.end(), [&](const CalibratedRow& r) { return r.slice == s.key && r.row.spec == "mtp"; });
    y += fmt::format("  - family: {}\n    engine: {}\n    precision: {}\n", s.family, s.engine, s.precision);
    if (s.versions != "any") y += fmt::format("    versions: {}\n", yaml_quoted(s.versions));
    y += fmt::format("    gpu: {}\n    rows: {}\n", s.gpu, s.rows);
    y += fmt::format(
        "    source: {}\n",
        yaml_quoted(fmt::format("k3plan calibrate: fitted on {} row{} of {} ({}), model {}; in-sample median APE tput {:.1f}% -> "
                                "{:.1f}%, TPOT {:.1f}% -> {:.1f}%, TTFT {:.1f}% -> {:.1f}% (the fit saw these rows)",
                                s.rows, s.rows == 1 ? "" : "s", file, c.format, c.model, s.tput_before_pct, s.tput_after_pct,
                                s.tpot_before_pct, s.tpot_after_pct, s.ttft_before_pct, s.ttft_after_pct)));
    for (const auto& h : kWritten) {
      const bool fitted = std::string(h.key) == "spec_acceptance" ? mtp : &h - kWritten < 5;
      const double v = s.after.*(h.field);
      if (fitted)
        y += fmt::format("    {}: {:.6g}\n", h.key, v);
      else
        y += fmt::format("    {}: {{value: {:.6g}, assumed: true, reason: {}}}\n", h.key, v,
                         yaml_quoted(fmt::format("not fitted by k3plan calibrate: held at the value it started from ({})",
                                                 s.before.calibrated ? s.before.family + "/" + s.before.engine : s.before.derived_from)));
    }
    y += fmt::format(
        "    spec_tokens: {{value: {}, assumed: true, reason: \"not fitted by k3plan calibrate: held at the value it started from\"}}\n",
        s.after.spec_tokens);
  }
  return y;
}

}  // namespace

Calibration calibrate_results(const Catalogue& cat, const CalibrateOptions& o) {
  const BenchFile f = read_bench_file(o.file, o.input_format);
  Calibration out;
  out.format = f.format;
  out.fields_source = f.fields_source;

  // the model: -m, else the one the file names
  Model model;
  if (!o.model.empty()) {
    model = resolve_model(cat, o.model);
  } else {
    std::string named;
    for (const auto& p : f.points)
      if (!p.model.empty()) named = p.model;
    if (named.empty())
      throw InputError(fmt::format("{}: the file names no model: give -m (a catalogue id, model YAML or config.json)", o.file));
    const Model* m = cat.find_model(named);
    if (!m)
      throw InputError(fmt::format("{}: the file's model '{}' is not in the catalogue: give -m (a catalogue id, model YAML or config.json)",
                                   o.file, named));
    model = *m;
  }
  out.model = model.id;
  out.length_scale = f.points.front().nominal_lengths ? 0.9 : 1.0;
  const std::string default_engine = f.format == "vllm" || f.format == "sglang" ? f.format : "";
  const std::string cli_gpu = o.gpu.empty() ? "" : cat.gpu(o.gpu).id;

  const EfficiencyTable table = efficiency_for(cat, o.efficiency_file);
  std::vector<MeasuredRow> usable;
  std::vector<std::size_t> usable_at;
  for (const auto& p : f.points) {
    CalibratedRow cr;
    cr.where = p.where;
    MeasuredRow& r = cr.row;
    std::string& skip = cr.skipped;
    if (!p.model.empty() && !o.model.empty())
      if (const Model* fm = cat.find_model(p.model); fm && fm->id != model.id && skip.empty())
        skip = fmt::format("the file's model is {}, not {}", p.model, model.id);
    const std::string file_gpu = p.gpu.empty() ? "" : cat.gpu(p.gpu).id;
    r.gpu = pick(file_gpu, cli_gpu, "GPU", skip);
    if (r.gpu.empty()) throw InputError(fmt::format("{}: the file records no GPU: give -g", p.where));
    r.engine = ascii_lower(pick(p.engine, o.engine, "engine", skip));
    if (r.engine.empty()) r.engine = default_engine;
    if (r.engine.empty()) throw InputError(fmt::format("{}: the file records no serving engine: give --engine", p.where));
    r.precision = ascii_lower(pick(p.precision, o.precision, "precision", skip));
    if (r.precision.empty()) r.precision = precision_key(model);
    if (r.precision != "fp4" && r.precision != "fp8" && r.precision != "bf16")
      throw InputError(fmt::format("{}: field 'precision' '{}': expected fp4, fp8 or bf16", p.where, r.precision));
    r.spec = ascii_lower(pick(p.spec, o.spec, "speculative decoding", skip));
    if (r.spec.empty()) r.spec = "none";
    r.kv_dtype = pick(p.kv_dtype, o.kv_dtype, "KV dtype", skip);
    if (r.kv_dtype.empty()) r.kv_dtype = "auto";
    const std::string version = pick(p.engine_version, o.engine_version, "engine version", skip);
    r.tp = pick(p.tp, o.tp, "TP", skip);
    if (r.tp == 0) throw InputError(fmt::format("{}: the file records no tensor-parallel size: give --tp", p.where));
    r.ep = pick(p.ep, o.ep, "EP", skip);
    if (r.ep == 0) r.ep = 1;
    r.dp_attention = p.dp_attention ? *p.dp_attention : o.dp_attention;
    if (p.dp_attention && o.dp_attention && !*p.dp_attention && skip.empty()) skip = "the file's run has no DP attention";
    r.conc = pick(p.concurrency, o.concurrency, "concurrency", skip);
    if (r.conc == 0)
      throw InputError(
          fmt::format("{}: field '{}' is missing or null (an open-loop run): give --concurrency", p.where, p.concurrency_field));
    r.replicas = pick(p.replicas, o.dp, "data-parallel size", skip);
    if (r.replicas == 0) r.replicas = 1;
    // the replicas share the users evenly (round-robin / least-loaded dispatch); a share that is not
    // whole has no single-instance prediction to compare with
    if (r.conc % r.replicas != 0 && skip.empty())
      skip = fmt::format("{} users do not split evenly over {} data-parallel replicas", r.conc, r.replicas);
    r.gpus = r.tp * r.replicas;
    r.isl = p.isl_tokens;
    r.osl = p.osl_tokens;
    r.tput_total = p.tput_total_tok_s_per_gpu > 0 ? p.tput_total_tok_s_per_gpu : p.tput_total_tok_s / r.gpus;
    r.ttft_s = p.ttft_ms / 1000;
    r.tpot_ms = p.tpot_ms;
    r.date = p.date;
    r.exclude = p.exclude;
    r.id = fmt::format("{}/{}/{}/{}/tp{}ep{}{}{}/{:g}-{:g}/c{}", r.gpu, r.engine, r.precision, r.spec, r.tp, r.ep,
                       r.dp_attention ? "dpa" : "", r.replicas > 1 ? fmt::format("x{}", r.replicas) : "", r.isl, r.osl, r.conc);
    if (skip.empty() && !p.exclude.empty()) skip = p.exclude;
    if (skip.empty() && !p.length_spread.empty() &&
        std::find(out.length_notes.begin(), out.length_notes.end(), p.length_spread) == out.length_notes.end())
      out.length_notes.push_back(p.length_spread);
    if (skip.empty()) {
      const std::string fam = table.family_of(cat.gpu(r.gpu));
      cr.slice = fmt::format("{}/{}/{}{}", fam.empty() ? "user-" + r.gpu : fam, r.engine, r.precision,
                             version.empty() ? "" : "@" + version + ".." + version);
      layout_engine(r.engine);  // an engine k3plan does not model is an error naming it
      usable.push_back(r);
      usable_at.push_back(out.rows.size());
    }
    out.rows.push_back(std::move(cr));
  }
  if (usable.empty())
    throw InputError(fmt::format("{}: no row of the file is the deployment given ({})", o.file,
                                 out.rows.empty() ? "no rows" : out.rows.front().skipped));

  const CalibrationSet set = prepare_calibration(cat, usable, &model, out.length_scale);
  std::map<std::string, std::vector<std::size_t>> by_slice;  // slice -> indices into set.rows
  for (std::size_t i = 0; i < set.rows.size(); ++i) {
    CalibratedRow& cr = out.rows[usable_at[i]];
    if (!set.rows[i].fits) {
      cr.skipped = "does not fit in memory as given (k3plan's memory model)";
      cr.slice.clear();
      continue;
    }
    by_slice[cr.slice].push_back(i);
  }
  if (by_slice.empty()) throw InputError(fmt::format("{}: no row fits in memory as given: check -m, -g and --tp", o.file));
  for (const auto& [key, idx] : by_slice) {
    CalibratedSlice s;
    s.key = key;
    const CalibrationRow& first = set.rows[idx.front()];
    const Gpu& g = *first.gpu;
    s.gpu = g.id;
    s.engine = first.row.engine;
    s.precision = first.row.precision;
    const auto at = key.find('@');
    s.versions = at == std::string::npos ? "any" : key.substr(at + 1);
    s.family = key.substr(0, key.find('/'));
    s.new_family = table.family_of(g).empty();
    for (const auto& fam : table.families)
      if (fam.id == s.family) s.family_gpus = fam.gpus;
    if (s.family_gpus.empty()) s.family_gpus = {g.id};
    s.rows = static_cast<int>(idx.size());
    s.before = factors_for(table, cat.gpus(), g, s.engine, s.precision);
    s.objective_before = objective(set, idx, s.before);
    s.after = fit_factors(set, idx, s.before, &s.objective_after);
    for (const auto& h : kWritten) {  // at the precision the file holds, so `perf --data` predicts what is reported here
      double& v = s.after.*(h.field);
      v = parse_real(fmt::format("{:.6g}", v)).value_or(v);
    }
    s.objective_after = objective(set, idx, s.after);
    std::vector<double> tb, ta, pb, pa, fb, fa;
    for (std::size_t i : idx) {
      CalibratedRow& cr = out.rows[usable_at[i]];
      cr.before = score_row(set, set.rows[i], s.before);
      cr.after = score_row(set, set.rows[i], s.after);
      tb.push_back(cr.before.ape_tput), ta.push_back(cr.after.ape_tput);
      pb.push_back(cr.before.ape_tpot), pa.push_back(cr.after.ape_tpot);
      fb.push_back(cr.before.ape_ttft), fa.push_back(cr.after.ape_ttft);
    }
    s.tput_before_pct = median_of(tb), s.tput_after_pct = median_of(ta);
    s.tpot_before_pct = median_of(pb), s.tpot_after_pct = median_of(pa);
    s.ttft_before_pct = median_of(fb), s.ttft_after_pct = median_of(fa);
    for (const auto& a : s.before.assumptions)
      if (std::find(out.assumptions.begin(), out.assumptions.end(), a) == out.assumptions.end()) out.assumptions.push_back("before: " + a);
    out.slices.push_back(std::move(s));
  }
  out.yaml = calibration_yaml(out, o.file);
  parse_efficiency(out.yaml, "the calibration file k3plan calibrate writes");  // it reads back, or nothing is written
  return out;
}

}  // namespace k3plan
