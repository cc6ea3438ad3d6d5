#pragma once
// The data the speed model and the planner read (src/plan/perf_data.cpp): efficiency factors per
// GPU family and engine (data/perf/efficiency.yaml), measured benchmark rows
// (data/perf/measured-*.yaml) and service levels (data/perf/sla.yaml). All embedded at build time;
// `--efficiency` / `--sla` read user files of the same form.
#include <k3plan/figure.hpp>
#include <k3plan/gpu.hpp>
#include <k3plan/perf.hpp>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace k3plan {

struct EfficiencyTable {
  struct Family {
    std::string id;
    std::vector<std::string> gpus;
  };
  std::vector<Family> families;
  std::vector<PerfEfficiency> entries;
  // Factors for a GPU and engine: the family's entry for that engine whose precision ("any" or
  // the given one: fp8, fp4) and version window (FROM..TO, or any) match, the most specific
  // first; else the family's sglang entry (noted in the returned assumptions). Throws InputError
  // when the GPU belongs to no family; factors_for() (calibrate.hpp) derives uncalibrated ones.
  PerfEfficiency lookup(const Gpu& gpu, const std::string& engine, const std::string& precision = "",
                        const std::string& version = "") const;
  std::string family_of(const Gpu& gpu) const;
};
EfficiencyTable parse_efficiency(const std::string& text, const std::string& origin);
const EfficiencyTable& embedded_efficiency();

// One side of a disaggregated row: `workers` workers of TP x EP (DP attention), `gpus` on the side.
struct MeasuredSide {
  int tp = 1, ep = 1, workers = 1, gpus = 1;
  bool dp_attention = false;
};
struct MeasuredRow {
  std::string id;  // gpu/engine/precision/spec/tp/ep/dpa/isl/osl/conc (disaggregated: gpu/framework/.../pPxLAYOUT-dDxLAYOUT/...)
  std::string gpu, engine, precision, spec;
  std::string framework;  // as the source names it (dynamo-trt, mori-sglang, ...); "" = engine
  int tp = 1, ep = 1, gpus = 1;
  bool dp_attention = false;
  bool disagg = false;  // prefill and decode on separate workers: `prefill`, `decode` (tp / ep / dp_attention unused)
  MeasuredSide prefill, decode;
  std::string run_url;
  double isl = 0, osl = 0;
  int conc = 1;      // users of the whole deployment (closed loop)
  int replicas = 1;  // data-parallel copies of the instance sharing them evenly (conc / replicas each); gpus = tp x replicas
  std::string date;
  std::string image;  // the engine container image of the run, as the source records it ("" = not recorded)
  double tput_total = 0, tput_input = 0, tput_output = 0;  // per GPU
  double ttft_s = 0, tpot_ms = 0, e2e_s = 0;
  std::string kv_dtype = "auto";
  std::string exclude;  // non-empty: not scored, with the reason
};
std::vector<MeasuredRow> parse_measured(const std::string& text, const std::string& origin);
// Every row of the embedded data/perf/measured-*.yaml, in file-name order, aggregated rows only
// (the ones factors are fitted on) or, with `disaggregated`, the disaggregated rows only (never
// fitted on: validated out of sample); `sources` names the files that contributed.
std::vector<MeasuredRow> embedded_measured(std::vector<std::string>* sources = nullptr, bool disaggregated = false);

// Service levels (data/perf/sla.yaml or a user file): TTFT targets tiered by prompt length and ITL
// targets per workload, each a figure with its source.
struct Sla {
  std::vector<std::pair<double, Figure>> ttft_tiers;  // max prompt tokens (ascending), target ms
  std::map<std::string, Figure> itl;                  // workload -> ms
  std::string source;
};
Sla parse_sla(const std::string& text, const std::string& origin);
Sla embedded_sla();  // data/perf/sla.yaml as built in

// Out-of-sample error of the speed model per slice (data/perf/accuracy.yaml, written by
// bench/perf_fit.cpp): for a calibrated family and engine, the error on request shapes its fit did
// not see (each ISL/OSL predicted from factors fitted on the others); for a GPU without calibration
// of its own (family "any"), the leave-one-family-out error pooled over every family.
struct PerfBand {
  std::string family, engine;  // family "any": the uncalibrated band
  std::string validation;      // leave-one-shape-out | leave-one-family-out
  int rows = 0;
  double tput_median_pct = 0, tput_p90_pct = 0, tpot_median_pct = 0, tpot_p90_pct = 0, ttft_median_pct = 0, ttft_p90_pct = 0;
};
std::vector<PerfBand> parse_accuracy(const std::string& text, const std::string& origin);
const std::vector<PerfBand>& embedded_accuracy();
// The band of a slice: the family and engine's own when calibrated, else the uncalibrated one
// (the engine's, else sglang's); nullptr when the file has none.
const PerfBand* band_for(const std::vector<PerfBand>& bands, const std::string& family, const std::string& engine, bool calibrated);

// The text of a user file named on the command line (`what` names the option), InputError if unreadable.
std::string read_text_file(const std::string& path, const char* what);

}  // namespace k3plan
