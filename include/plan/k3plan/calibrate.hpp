#pragma once
// Calibration of the speed model (src/plan/calibrate.cpp): measured rows prepared once (memory
// check, layout, the model per precision), scored against a set of factors, and the factors fitted
// to them; and factors for a GPU whose family has no calibration, derived from the nearest
// calibrated family by datasheet ratios (marked uncalibrated).
#include <k3plan/plan.hpp>
#include <string>
#include <vector>

namespace k3plan {

struct CalibrationRow {
  MeasuredRow row;
  const Gpu* gpu = nullptr;
  std::size_t model = 0;  // index into CalibrationSet::models
  PerfConfig config;      // without the speculative factors (they come from the factors scored)
  bool fits = false;
};
struct CalibrationSet {
  std::vector<PerfModel> models;  // DeepSeek-R1-0528 per (expert precision, KV dtype)
  std::vector<CalibrationRow> rows;
};
// InferenceX rows of DeepSeek-R1-0528 (the only model the measured files hold).
CalibrationSet prepare_calibration(const Catalogue& cat, const std::vector<MeasuredRow>& rows);

struct RowScore {
  PerfResult pred;
  double ape_tput = 0, ape_tpot = 0, ape_ttft = 0;  // absolute percentage errors
};
RowScore score_row(const CalibrationSet& set, const CalibrationRow& x, const PerfEfficiency& eff);

// Coordinate descent from `start` over the fitted factors (hbm, decode_mfu, prefill_mfu,
// layer_overhead_us, ttft_overhead_ms, and spec_acceptance when MTP rows are present) on the
// usable rows among `rows`; the objective is the one data/perf/efficiency.yaml states.
PerfEfficiency fit_factors(const CalibrationSet& set, const std::vector<std::size_t>& rows, PerfEfficiency start,
                           double* objective = nullptr);

// Factors for `target` from the calibrated entry (for `engine`) whose reference GPU is nearest by
// datasheet (vendor, HBM bandwidth, BF16 and FP8 peaks), skipping `exclude_family` and entries keyed
// to a precision other than `precision` (an entry keyed to `precision` wins over an `any` one);
// marked uncalibrated with an assumption line naming the source.
PerfEfficiency derive_factors(const EfficiencyTable& t, const std::vector<Gpu>& gpus, const Gpu& target, const std::string& engine,
                              const std::string& exclude_family, const std::string& precision = "");
// The table's own factors when the GPU's family is calibrated, else derived ones. `precision` is
// the weight precision key of the entries (precision_key()).
PerfEfficiency factors_for(const EfficiencyTable& t, const std::vector<Gpu>& gpus, const Gpu& gpu, const std::string& engine,
                           const std::string& precision = "");
// fp4 when the routed experts (dense MLP for dense models) run in a 4-bit format, fp8 at 8 bits, else bf16.
std::string precision_key(const Model& m);

}  // namespace k3plan
