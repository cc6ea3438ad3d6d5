// k3plan_fit: refits the speed model's factors on the measured rows (data/perf/measured-*.yaml),
// per family and engine, with the method data/perf/efficiency.yaml states; prints the fitted values
// to paste into that file, the in-sample error, and the error of a 3-fold split by request shape
// (each fold's rows predicted with factors fitted on the other folds). Not a test: fitting takes
// seconds. `./build/bench/k3plan_fit [family/engine]`; `k3plan_fit --accuracy > data/perf/accuracy.yaml`
// writes the out-of-sample bands `k3plan perf` prints (leave-one-shape-out per calibrated family
// and engine; leave-one-family-out, fitted on the other families, pooled per engine for GPUs without calibration).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <k3plan/calibrate.hpp>
#include <k3plan/error.hpp>
#include <map>
#include <string>

using namespace k3plan;

namespace {
void band_line(const char* family, const std::string& engine, const char* validation, const std::vector<double>& tput,
               const std::vector<double>& tpot, const std::vector<double>& ttft) {
  std::printf(
      "  - {family: %s, engine: %s, validation: %s, rows: %zu, tput_median_pct: %.1f, tput_p90_pct: %.1f, tpot_median_pct: %.1f, "
      "tpot_p90_pct: %.1f, ttft_median_pct: %.1f, ttft_p90_pct: %.1f}\n",
      family, engine.c_str(), validation, tput.size(), percentile(tput, 0.5), percentile(tput, 0.9), percentile(tpot, 0.5),
      percentile(tpot, 0.9), percentile(ttft, 0.5), percentile(ttft, 0.9));
}
}  // namespace

int main(int argc, char** argv) {
  const bool accuracy = argc > 1 && std::string(argv[1]) == "--accuracy";
  if (accuracy)
    std::printf(
        "# Out-of-sample error bands of `k3plan perf`, written by bench/perf_fit.cpp (`k3plan_fit --accuracy`); do not edit by hand.\n"
        "# leave-one-shape-out: each ISL/OSL of a family and engine predicted with factors fitted on its other shapes;\n"
        "# leave-one-family-out (family any): every family predicted with one factor set fitted on the other families' rows, pooled per\n"
        "# engine: the band of a GPU without calibration of its own. Absolute percentage errors, rows without `exclude`.\n"
        "source: \"data/perf/measured-*.yaml through src/plan/calibrate.cpp and src/plan/validate.cpp\"\nbands:\n");
  const Catalogue cat = Catalogue::embedded();
  const EfficiencyTable& table = embedded_efficiency();
  const CalibrationSet set = prepare_calibration(cat, embedded_measured());
  std::map<std::string, std::vector<std::size_t>> by_key;
  for (std::size_t i = 0; i < set.rows.size(); ++i) {
    const auto& x = set.rows[i];
    by_key[table.family_of(*x.gpu) + "/" + x.row.engine].push_back(i);
  }
  for (const auto& [key, rows] : by_key) {
    if (argc > 1 && !accuracy && key != argv[1]) continue;
    const Gpu& g = *set.rows[rows.front()].gpu;
    const std::string engine = set.rows[rows.front()].row.engine;
    // start from the priors (the `defaults` block: an entry of this family is not used as a start)
    PerfEfficiency start;
    try {
      start = table.lookup(g, engine);
    } catch (const InputError&) {
      start = derive_factors(table, cat.gpus(), g, engine == "atom" ? "sglang" : engine, table.family_of(g));
    }
    double obj = 0;
    const PerfEfficiency f = fit_factors(set, rows, start, &obj);
    std::vector<double> tput, tpot, k_tput, k_tpot, k_ttft;
    int mtp = 0;
    for (std::size_t i : rows) {
      const RowScore s = score_row(set, set.rows[i], f);
      if (!set.rows[i].row.exclude.empty()) continue;
      tput.push_back(s.ape_tput);
      tpot.push_back(s.ape_tpot);
      mtp += set.rows[i].row.spec == "mtp";
    }
    // 3 folds by request shape (ISL/OSL): predict each shape from the others
    std::map<std::string, std::vector<std::size_t>> shapes;
    for (std::size_t i : rows) shapes[std::to_string(set.rows[i].row.isl) + "/" + std::to_string(set.rows[i].row.osl)].push_back(i);
    for (const auto& [shape, test] : shapes) {
      std::vector<std::size_t> train;
      for (std::size_t i : rows)
        if (std::find(test.begin(), test.end(), i) == test.end()) train.push_back(i);
      const PerfEfficiency ff = fit_factors(set, train, start);
      for (std::size_t i : test) {
        if (!set.rows[i].row.exclude.empty()) continue;
        const RowScore s = score_row(set, set.rows[i], ff);
        k_tput.push_back(s.ape_tput);
        k_tpot.push_back(s.ape_tpot);
        k_ttft.push_back(s.ape_ttft);
      }
    }
    if (accuracy) {
      band_line(table.family_of(g).c_str(), engine, "leave-one-shape-out", k_tput, k_tpot, k_ttft);
      continue;
    }
    std::printf("%s (%s, %zu rows, %d with MTP): objective %.3f\n", key.c_str(), g.id.c_str(), tput.size(), mtp, obj);
    std::printf("    hbm: %.3g\n    decode_mfu: %.3g\n    prefill_mfu: %.3g\n    layer_overhead_us: %.3g\n    ttft_overhead_ms: %.3g\n",
                f.hbm, f.decode_mfu, f.prefill_mfu, f.layer_overhead_us, f.ttft_overhead_ms);
    if (mtp) std::printf("    spec_acceptance: %.3g\n", f.spec_acceptance);
    std::printf("  in-sample median APE tput %.1f%%, TPOT %.1f%%; leave-one-shape-out tput %.1f%% (p90 %.1f%%), TPOT %.1f%% (p90 %.1f%%)\n",
                percentile(tput, 0.5), percentile(tpot, 0.5), percentile(k_tput, 0.5), percentile(k_tput, 0.9), percentile(k_tpot, 0.5),
                percentile(k_tpot, 0.9));
  }
  if (accuracy) {
    const PerfValidation v = validate_perf(cat);
    std::map<std::string, std::vector<double>> tput, tpot, ttft;
    for (const auto& x : v.rows) {
      if (!x.row.exclude.empty()) continue;
      tput[x.row.engine].push_back(x.unseen_tput);
      tpot[x.row.engine].push_back(x.unseen_tpot);
      ttft[x.row.engine].push_back(x.unseen_ttft);
    }
    for (const auto& [e, t] : tput) band_line("any", e, "leave-one-family-out", t, tpot[e], ttft[e]);
  }
  return 0;
}
