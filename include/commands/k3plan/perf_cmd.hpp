#pragma once
// `k3plan perf` (speed of one deployment), `k3plan plan` (the cheapest deployment that meets a
// service level) and `k3plan perf-validate` (predicted vs measured InferenceX rows).
// The efficiency factors live in data/perf/efficiency.yaml, the measured rows in
// data/perf/measured-dsr1.yaml and the default service levels in data/perf/sla.yaml (all embedded).
#include <cstdint>
#include <k3plan/catalogue.hpp>
#include <k3plan/perf.hpp>
#include <k3plan/report.hpp>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace k3plan {

struct PerfOptions {
  std::string model;
  std::string gpu;
  int gpus = 0;                        // 0 = the smallest GPU count that fits
  int tp = 0, ep = 0, dp = 0, pp = 0;  // 0 = the engine's preferred layout for the GPU count
  bool dp_attention = false;
  int dcp = 0;                   // decode context parallel (MLA cache split over dcp TP ranks)
  std::string precision;         // every weight in this format (as `fit --precision`); empty = as shipped
  std::string expert_precision;  // only the routed experts in this format (e.g. nvfp4, mxfp4)
  std::string kv_dtype = "auto";
  std::string engine = "sglang";  // sglang | vllm | trt | atom (trt and atom use SGLang's layout rules)
  double isl = 1024, osl = 1024;
  int concurrency = 1;
  int spec_tokens = 0;
  std::optional<double> spec_acceptance;
  double length_scale = 1.0;  // mean request length / nominal (InferenceX: 0.9)
  std::optional<std::int64_t> max_num_batched_tokens;
  std::string efficiency_file;  // empty = the embedded data/perf/efficiency.yaml
};
Report run_perf(const Catalogue& cat, const PerfOptions& o);

// Service levels (data/perf/sla.yaml or a user file): TTFT targets tiered by prompt length and ITL
// targets per workload, each a figure with its source.
struct Sla {
  std::vector<std::pair<double, Figure>> ttft_tiers;  // max prompt tokens (ascending), target ms
  std::map<std::string, Figure> itl;                  // workload -> ms
  std::string source;
};
Sla parse_sla(const std::string& text, const std::string& origin);
Sla embedded_sla();  // data/perf/sla.yaml as built in

struct PlanOptions {
  std::string model;
  std::vector<std::string> gpus_from;  // empty = every catalogue GPU
  int max_gpus = 64;
  double isl = 1024, osl = 1024;
  std::optional<double> ttft_ms;          // overrides the tiered TTFT target
  std::optional<double> tpot_ms;          // overrides the workload's ITL target
  std::optional<double> interactivity;    // tok/s per user; TPOT = 1000 / X
  std::string workload = "chat";          // chat | agentic: which ITL target of the SLA file applies
  std::string sla_file;                   // empty = the embedded data/perf/sla.yaml
  std::optional<double> users;            // concurrent users to serve (replicas added as needed)
  std::optional<double> requests_per_s;   // request rate to serve
  std::string rate_source = "on-demand";  // on-demand | reserved | spot: which price quote ranks
  std::vector<std::string> engines;       // empty = sglang and vllm
  std::vector<std::string> precisions;    // empty = as shipped, fp8, and fp4 experts where native
  int top = 8;                            // rows in the runners-up table
  std::string efficiency_file;
};
Report run_plan(const Catalogue& cat, const PlanOptions& o);

// Predicted vs measured for every usable row of data/perf/measured-dsr1.yaml: per row, and the
// median and 90th-percentile absolute percentage error per GPU and engine.
Report run_perf_validate(const Catalogue& cat);

// --- loaders (exposed for tests and benchmarks) --------------------------------------------------
struct EfficiencyTable {
  struct Family {
    std::string id;
    std::vector<std::string> gpus;
  };
  std::vector<Family> families;
  std::vector<PerfEfficiency> entries;
  // Factors for a GPU and engine: exact (family, engine), else the family's sglang entry (noted in
  // the returned assumptions). Throws InputError when the GPU belongs to no family.
  PerfEfficiency lookup(const Gpu& gpu, const std::string& engine) const;
  std::string family_of(const Gpu& gpu) const;
};
EfficiencyTable parse_efficiency(const std::string& text, const std::string& origin);
const EfficiencyTable& embedded_efficiency();

struct MeasuredRow {
  std::string id;  // gpu/engine/precision/spec/tp/ep/dpa/isl/osl/conc
  std::string gpu, engine, precision, spec;
  int tp = 1, ep = 1, gpus = 1;
  bool dp_attention = false;
  double isl = 0, osl = 0;
  int conc = 1;
  std::string date;
  double tput_total = 0, tput_input = 0, tput_output = 0;  // per GPU
  double ttft_s = 0, tpot_ms = 0, e2e_s = 0;
  std::string kv_dtype = "auto";
  std::string exclude;  // non-empty: not scored, with the reason
};
std::vector<MeasuredRow> parse_measured(const std::string& text, const std::string& origin);

}  // namespace k3plan
