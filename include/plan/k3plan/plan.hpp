#pragma once
// The planner layer (src/plan/): the speed of one deployment with its memory check
// (deployment.cpp), the cheapest deployment that meets a service level (search.cpp: GPU x count x
// layout x precision x engine x concurrency, the Pareto front and the runners-up) and predicted vs
// measured benchmark rows (validate.cpp). Values only: the commands (src/commands/perf_cmd.cpp,
// plan_cmd.cpp, perf_validate_cmd.cpp) turn them into a Report.
#include <cstdint>
#include <k3plan/budget.hpp>
#include <k3plan/catalogue.hpp>
#include <k3plan/perf.hpp>
#include <k3plan/perf_data.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace k3plan {

// --- one deployment ---------------------------------------------------------------------------

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
  // the engine release (0.19.0, 0.5.9): picks the memory window (sglang, vllm) and the factor entry
  // keyed to a version window (calibrate writes them); empty = the newest window, any entry
  std::string engine_version;
  double isl = 1024, osl = 1024;
  int concurrency = 1;
  int spec_tokens = 0;
  std::optional<double> spec_acceptance;
  double length_scale = 1.0;  // mean request length / nominal (InferenceX: 0.9)
  std::optional<std::int64_t> max_num_batched_tokens;
  std::optional<std::int64_t> max_running_requests;  // SGLang --max-running-requests / vLLM --max-num-seqs (default: the engine's)
  std::string efficiency_file;                       // empty = the embedded data/perf/efficiency.yaml
  // Disaggregated serving (prefill and decode on separate workers): any of these set selects it;
  // then both sides' TP (--<side>-tp, or a pool's GPU count --<side>-gpus that sets the workers or
  // the TP: parallel.hpp pool_size) are required and -n / --tp / --ep / --dp / --pp / --dcp /
  // --enable-dp-attention are refused. 0 / false = not given.
  int prefill_workers = 0, prefill_tp = 0, prefill_ep = 0, prefill_gpus = 0;
  int decode_workers = 0, decode_tp = 0, decode_ep = 0, decode_gpus = 0;
  bool prefill_dp_attention = false, decode_dp_attention = false;
  bool disaggregated() const {
    return prefill_workers || prefill_tp || prefill_ep || prefill_gpus || decode_workers || decode_tp || decode_ep || decode_gpus ||
           prefill_dp_attention || decode_dp_attention;
  }
};

// Memory for a load: one request of ISL + OSL tokens must fit (weights, engine reserve, the KV of
// one full request) and the KV pool caps the sequences that run at once. The engines hand out KV
// as tokens are produced, so the cap is taken at the average context a running request holds
// (ISL + OSL / 2, scaled), not at its final length.
// With `engine_cap`, the engine's running-request cap (engine.hpp: SGLang max_running_requests,
// vLLM max_num_seqs, per DP group) bounds it too; the planner sets that flag to its concurrency, so
// it passes false.
struct MemCheck {
  FitResult full;                   // at ISL + OSL for `users` (its flags)
  std::int64_t max_running = 0;     // sequences that run at once: min(pool, engine cap)
  std::int64_t pool_running = 0;    // sequences the pool holds at the average context
  std::int64_t engine_running = 0;  // the engine's cap (0 = not applied)
  bool cap_by_engine = false;
  bool fits = false;
  std::vector<std::string> reasons;
};
// `commands`: the launch commands `full` carries (the search needs only the asked engine's refusals).
MemCheck memory_check(const Model& m, const Gpu& g, const Layout& l, const EngineSettings& s, double isl, double osl, double scale,
                      int users, bool engine_cap = true, FitCommands commands = FitCommands::both);

// The layout engine of a serving engine name (trt and atom follow SGLang's rules); InputError with
// a suggestion for an unknown name.
Engine layout_engine(const std::string& engine);
// The engine's batch-token limit per prefill step (the size chunked prefill cuts prompts into).
std::int64_t default_chunk(const Gpu& g, const std::string& engine);
// Whether the engine mixes prompt chunks into decode steps (PerfConfig::mixed_prefill).
bool mixes_prefill(const std::string& engine);
// "fp8 (as shipped)", "experts nvfp4", ...
std::string precision_label(const Model& m, const std::string& uniform, const std::string& experts);

struct PerfEvaluation {
  Model model;  // with the precision applied
  std::string precision;
  const Gpu* gpu = nullptr;
  PerfEfficiency eff;
  PerfModel pm;
  PerfConfig config;
  MemCheck mem;
  std::int64_t context = 0, avg_context = 0;  // ISL + OSL and the average a running request holds
  PerfResult result;
};
// Validates the options (InputError), resolves the layout (given, preferred for -n, or the smallest
// that fits), checks memory and runs the speed model. A deployment that does not fit is a result
// (mem.fits = false), not an error.
PerfEvaluation evaluate_perf(const Catalogue& cat, const PerfOptions& o);

// --- disaggregated serving ----------------------------------------------------------------------

// One side of a disaggregated deployment: `workers` workers, each TP x EP with or without DP attention.
struct DisaggSide {
  int workers = 1, tp = 1, ep = 1;
  bool dp_attention = false;
};
// The engine layout of one worker: max(TP, EP) GPUs (InferenceX records some DP-attention workers as
// TP 1 x EP 8: 8 GPUs), DP attention over all of them (SGLang --tp N --dp N --enable-dp-attention).
Layout disagg_worker_layout(const DisaggSide& s);
struct DisaggDeployment {
  DisaggSide prefill_side, decode_side;
  Layout prefill, decode;            // one worker of each
  MemCheck prefill_mem, decode_mem;  // one worker: one request must fit; the decode pool caps its running sequences
  DisaggConfig config;               // speculative decoding left off (predict_disagg sets it)
  bool fits = false;
  std::vector<std::string> reasons;  // "prefill: ..." / "decode: ..."
};
// Memory of each side and the estimator's configuration. `s` carries the engine, KV dtype, draft
// layers, and the batch-token / running-request limits when given.
DisaggDeployment disagg_deployment(const Model& m, const Gpu& g, const std::string& engine, const DisaggSide& prefill,
                                   const DisaggSide& decode, const EngineSettings& s, double isl, double osl, double scale, int users);
DisaggResult predict_disagg(const PerfModel& pm, const Gpu& g, const PerfEfficiency& eff, const DisaggDeployment& d, int spec_tokens,
                            double spec_acceptance);

struct PerfDisaggEvaluation {
  Model model;  // with the precision applied
  std::string precision;
  const Gpu* gpu = nullptr;
  PerfEfficiency eff;
  PerfModel pm;
  DisaggDeployment deployment;
  DisaggResult result;
};
// `perf` with the prefill / decode options: validates them (InputError, exit 2), checks memory per
// side and runs estimate_disagg().
PerfDisaggEvaluation evaluate_perf_disagg(const Catalogue& cat, const PerfOptions& o);

// --- the search -------------------------------------------------------------------------------

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
  // median: rank and check the SLA on the predictions; p90: on their pessimistic end, each figure
  // moved by the 90th-percentile out-of-sample error of its slice (data/perf/accuracy.yaml)
  std::string risk = "median";
  // also search disaggregated prefill / decode pools (estimate_disagg): every worker size x DP
  // attention per side x a prefill:decode worker ratio, ranked with the aggregated candidates
  bool disagg = false;
};

struct PlanTargets {
  double ttft_ms = 0, tpot_ms = 0;       // infinity = no target
  std::string ttft_source, tpot_source;  // the option, or the SLA file
  double ttft_tier_tokens = 0;           // > 0: the TTFT target is the file's tier for prompts up to this many tokens
  std::string sla_source;                // the SLA file's own `source:` line
  std::vector<std::string> assumptions;  // assumed SLA figures with their reasons
};
// The SLA targets of the options (given, or the SLA file's tier and workload): the one reading of
// the SLA file, for plan and report (which sets only isl and workload).
PlanTargets plan_targets(const PlanOptions& o);

struct PrecisionOption {
  std::string uniform, experts, label;
  bool requantised = false;
};

struct PlanCandidate {
  int gpu_index = 0;
  int gpus = 0;
  int nodes = 1;
  std::string engine;
  Layout layout;
  int prec = 0;  // index into the GPU's precision options
  int conc = 1;
  PerfResult p;
  double usd_per_hour = 0;  // one instance
  double usd_per_m = 0;     // USD per million tokens (input + output)
  double replicas = 1;
  bool sla_ok = false;
  std::int64_t max_users = 0;
  bool misses_ttft = false, misses_tpot = false;
  // --risk p90: the factors applied to the prediction before ranking (1 = median)
  double risk_tput = 1, risk_tpot = 1, risk_ttft = 1;
  // --disagg: prefill and decode pools (gpus = all of both; layout = one decode worker; conc = users
  // over the whole deployment; max_users = what the decode pools hold)
  bool disagg = false;
  DisaggSide prefill_side, decode_side;
  double kv_transfer_ms = 0;
  const char* disagg_limit = "";  // prefill | decode | users (DisaggResult::limit)
};

struct PlanResult {
  Model base;
  PlanTargets targets;
  std::vector<const Gpu*> gpus;
  std::vector<std::string> engines;
  std::vector<std::vector<PrecisionOption>> precisions;  // per GPU
  std::vector<PlanCandidate> candidates;                 // every configuration that fits
  int winner = -1;                                       // index into candidates, -1 = none meets the SLA
  std::vector<int> pareto;                               // throughput per GPU against interactivity, most interactive first
  // the best of each GPU type, the winner's GPU first, then by cost
  struct RunnerUp {
    int gpu_index = 0;
    int cand = -1;  // its cheapest candidate meeting the SLA, else the closest miss, else -1 (nothing fits)
    enum class Kind { winner, ties, costlier, misses, no_fit } kind = Kind::no_fit;
  };
  std::vector<RunnerUp> runners_up;
  std::vector<int> next_cheapest;  // other candidates meeting the SLA, cheapest first (at most `top`)
  struct NoFit {
    int gpus = 0;  // 0 = no engine-valid layout at all
    Layout layout;
    std::string reason;
  };
  std::map<std::string, NoFit> no_fit;  // gpu id -> the first reason nothing fit
  std::vector<std::string> price_notes;
  std::vector<std::string> factor_assumptions;  // of every (GPU, engine) searched
  std::size_t search_cells = 0;                 // (GPU, precision, engine, GPU count) cells searched: at most kMaxSearchCells
  std::size_t evaluated = 0, fit_checks = 0;
  std::size_t disagg_evaluated = 0;  // of `evaluated`: disaggregated estimates (--disagg)
  double search_ms = 0, perf_seconds = 0;
  const PlanCandidate* win() const { return winner < 0 ? nullptr : &candidates[static_cast<std::size_t>(winner)]; }
  const Gpu& gpu_of(const PlanCandidate& c) const { return *gpus[static_cast<std::size_t>(c.gpu_index)]; }
  const PrecisionOption& precision_of(const PlanCandidate& c) const {
    return precisions[static_cast<std::size_t>(c.gpu_index)][static_cast<std::size_t>(c.prec)];
  }
};
// A search over more cells than this is refused up front ("search space too large", exit 2) instead
// of running for minutes. A cell costs about 1-1.5 ms in a release build (the embedded catalogue's
// widest searches, --max-gpus 4096, are 260-680 cells in 0.35-0.75 s), so the budget is a few seconds.
inline constexpr std::size_t kMaxSearchCells = 5000;
PlanResult search_plan(const Catalogue& cat, const PlanOptions& o);
// The fit of a candidate at its concurrency (its engine flags for the launch line).
FitResult candidate_fit(const PlanResult& r, const PlanCandidate& c, double isl, double osl);

// --- validation against measured rows -----------------------------------------------------------

struct PerfValidationRow {
  MeasuredRow row;
  Layout layout;
  std::string family;  // the GPU's family in the efficiency table
  std::string group;   // gpu/engine[+mtp]
  bool fits = false;
  bool calibrated = false;  // in-sample factors are the family's own (false: derived, so out-of-sample too)
  // in-sample: the shipped factors of the row's own family (fitted on these rows, so not validation);
  // unseen: factors derived from the nearest other family by datasheet ratios (leave-one-family-out)
  PerfResult pred, pred_unseen;
  double ape_tput = 0, ape_tpot = 0, ape_ttft = 0;
  double unseen_tput = 0, unseen_tpot = 0, unseen_ttft = 0;
  std::string unseen_from;  // the family/engine the unseen factors were derived from
};
// A disaggregated row: predicted with the factors of its family fitted on aggregated rows only, so
// out of sample (no disaggregated row fits any factor).
struct PerfDisaggValidationRow {
  MeasuredRow row;
  DisaggDeployment deployment;
  std::string family;
  std::string group;  // gpu/framework[+mtp]
  bool calibrated = false;
  DisaggResult pred;
  double ape_tput = 0, ape_tpot = 0, ape_ttft = 0;
};
struct PerfValidation {
  std::vector<PerfValidationRow> rows;
  std::vector<PerfDisaggValidationRow> disagg;
  std::vector<std::string> disagg_sources;
  std::vector<std::string> sources;  // the measured files
  std::vector<std::string> assumptions;
};
// Every measured row predicted with the embedded factors, in-sample and leave-one-family-out.
PerfValidation validate_perf(const Catalogue& cat);

double percentile(std::vector<double> v, double q);

}  // namespace k3plan
