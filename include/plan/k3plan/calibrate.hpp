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
// Rows of `model` (null: DeepSeek-R1-0528, the only model data/perf/measured-*.yaml holds), each at
// its precision (fp4: routed experts in nvfp4 / mxfp4; fp8 / bf16: as shipped when the checkpoint
// is that, else every weight in it); `length_scale` is mean request length / nominal (InferenceX:
// 0.9; a benchmark that reports its measured mean lengths: 1).
CalibrationSet prepare_calibration(const Catalogue& cat, const std::vector<MeasuredRow>& rows, const Model* model = nullptr,
                                   double length_scale = 0.9);

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
// Leave-one-family-out ("fit on the others, test on one"): one factor set fitted (fit_factors, from
// the nearest other family's entry) on the usable rows of `set` of every family except
// `exclude_family`, for `engine` (sglang's rows when no other family runs it). The factors are
// fractions of each GPU's own datasheet peaks, so they apply to `target` through its datasheet;
// marked uncalibrated, derived_from names the rows.
PerfEfficiency fit_other_families(const CalibrationSet& set, const EfficiencyTable& t, const std::vector<Gpu>& gpus, const Gpu& target,
                                  const std::string& engine, const std::string& exclude_family);
// The table's own factors when the GPU's family is calibrated, else derived ones. `precision` is
// the weight precision key of the entries (precision_key()).
PerfEfficiency factors_for(const EfficiencyTable& t, const std::vector<Gpu>& gpus, const Gpu& gpu, const std::string& engine,
                           const std::string& precision = "", const std::string& version = "");
// The table `perf` and `plan` use: the embedded data/perf/efficiency.yaml (or `efficiency_file`),
// with the families and entries of every efficiency file under --data laid over it
// (Catalogue::efficiency_files(); merge_efficiency()).
EfficiencyTable efficiency_for(const Catalogue& cat, const std::string& efficiency_file);
// A user table over a base: an entry of the same family x engine x precision x versions replaces the
// base's, the others go first (so at equal specificity a user entry wins the lookup); a family's
// GPUs are added to the base family of that id, or the family is added.
void merge_efficiency(EfficiencyTable& base, const EfficiencyTable& user);

// `k3plan calibrate`: benchmark results the user ran (bench_result.hpp readers) with the deployment
// they ran, the factors fitted per GPU family x engine x precision x engine version on those rows,
// and the calibration file (efficiency.yaml schema) that `--data DIR` then uses.
struct CalibrateOptions {
  std::string file;
  std::string input_format = "auto";  // auto | vllm | sglang | guidellm | inferencex
  // the deployment, where the file does not record it (where it does, a value given here selects rows)
  std::string model, gpu, engine, engine_version, precision, kv_dtype, spec;
  int tp = 0, ep = 0, concurrency = 0;
  int dp = 0;  // data-parallel replicas of the instance (vLLM --data-parallel-size, SGLang --dp-size without DP attention)
  bool dp_attention = false;
  std::string efficiency_file;  // the factors to start from (default: embedded + --data)
};
struct CalibratedRow {
  std::string where;  // file and line / element
  MeasuredRow row;
  std::string slice;    // the entry key it fits, empty when skipped
  std::string skipped;  // why it is not used (excluded, other deployment, does not fit)
  RowScore before, after;
};
struct CalibratedSlice {
  std::string key;  // family/engine/precision[@versions]
  std::string family, engine, precision, versions, gpu;
  std::vector<std::string> family_gpus;
  bool new_family = false;
  int rows = 0;
  PerfEfficiency before, after;
  double objective_before = 0, objective_after = 0;
  double tput_before_pct = 0, tput_after_pct = 0, tpot_before_pct = 0, tpot_after_pct = 0, ttft_before_pct = 0, ttft_after_pct = 0;
};
struct Calibration {
  std::string format, fields_source, model;
  double length_scale = 1;
  std::vector<CalibratedRow> rows;
  std::vector<CalibratedSlice> slices;
  std::string yaml;  // the calibration file (read back by parse_efficiency before it is returned)
  std::vector<std::string> assumptions;
  std::vector<std::string> length_notes;  // distinct BenchPoint::length_spread of the rows used
};
Calibration calibrate_results(const Catalogue& cat, const CalibrateOptions& o);

// fp4 when the routed experts (dense MLP for dense models) run in a 4-bit format, fp8 at 8 bits, else bf16.
std::string precision_key(const Model& m);

}  // namespace k3plan
