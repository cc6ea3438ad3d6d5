#pragma once
// Engine models (src/engines/): everything that differs between vLLM and SGLang, and between their
// versions, lives behind this one interface. The rest of the code asks an EngineModel; it never
// compares Engine values itself (ARCHITECTURE.md lists the exceptions).
//
// Versions are data: data/engines/vllm.yaml and data/engines/sglang.yaml hold one window per
// stretch of releases that behave alike, each citing the engine file and commit it follows.
// `--engine-version` takes a release number as users write it ("0.9.2", "0.5.8.post1", "main")
// and maps it to the window that covers it; the default is the newest window modelled.
//
// Memory accounting, per pipeline stage (one rank of the stage; ranks of a stage are identical):
//   reserved + weights + activation + overhead + kv_pool + state_pool + free == capacity
// (the invariant of budget.hpp). Each engine says how it fills the terms; see vllm.cpp and
// sglang.cpp for the formulas with their sources.
#include <cstdint>
#include <k3plan/gpu.hpp>
#include <k3plan/engine_version.hpp>
#include <k3plan/kv.hpp>
#include <k3plan/layout.hpp>
#include <k3plan/model.hpp>
#include <optional>
#include <string>
#include <vector>

namespace k3plan {

struct EngineSettings;
struct RankBudget;
struct EngineLog;

// One term of a start-up log against the budget (validate --log).
struct LogTerm {
  std::string term;
  std::optional<double> logged_bytes;  // absent when the log does not print it
  double predicted_bytes = 0;
  double pool_effect_bytes = 0;  // what our difference does to the KV pool (+ = we leave more)
};


// A refusal of a layout or setting: a rule id (stable, used by `check`), the field it concerns and
// the message in the engine's own words where the engine has them.
struct Refusal {
  std::string rule;
  std::string field;
  std::string message;
};

// Engine defaults resolved for one deployment.
struct EngineDefaults {
  double memory_fraction = 0;               // vLLM gpu_memory_utilization, SGLang mem_fraction_static
  std::int64_t max_num_batched_tokens = 0;  // vLLM; SGLang chunked_prefill_size
  std::int64_t max_num_seqs = 0;            // vLLM max_num_seqs, SGLang max_running_requests (0 = derived)
  int cuda_graph_max_bs = 0;
  int block_size = 16;  // tokens per KV page
  bool prefix_caching = false;  // vLLM: prefix caching on (enable_prefix_caching after the engine's defaults)
  std::string kv_dtype;  // what the engine turns an unset ("auto") KV dtype into, when not the model dtype; "" = unchanged
};

// The decoder layers [first, first + count) of one pipeline stage.
struct StageLayers {
  int first = 0, count = 0;
};

// What the shared fit code has computed for one pipeline stage before the engine fills the pools.
struct StageInput {
  const Model* model = nullptr;
  const Gpu* gpu = nullptr;
  const Layout* layout = nullptr;
  const EngineSettings* settings = nullptr;
  int stage = 0;
  int stages = 1;
  StageLayers layers;                   // the stage's decoder layers (EngineModel::stage_layers)
  std::int64_t context = 0;             // max model length
  std::int64_t users_per_instance = 0;  // requested users per KV instance (DP group)
  KvProfile kv;                         // this stage's layers at the engine's attention TP
};

class EngineModel {
 public:
  explicit EngineModel(EngineVersion v) : version_(std::move(v)) {}
  virtual ~EngineModel() = default;
  EngineModel(const EngineModel&) = delete;
  EngineModel& operator=(const EngineModel&) = delete;

  virtual Engine engine() const = 0;
  virtual const char* display_name() const = 0;  // "vLLM", "SGLang"
  const EngineVersion& version() const { return version_; }
  std::string label() const;  // "vLLM 0.11 (0.11.0-0.16.x)"

  // --- layout semantics
  virtual int gpus(const Layout& l) const = 0;          // GPUs one instance occupies
  virtual int attention_tp(const Layout& l) const = 0;  // ranks one attention layer is split over
  virtual int moe_group(const Layout& l) const = 0;     // ranks one layer's experts are spread over
  virtual int kv_instances(const Layout& l) const = 0;  // DP groups that hold their own KV pool
  // The layout the engine really runs for the flags given (vLLM derives EP = TP x DP when expert
  // parallel is on); `ep_given` says whether the user set EP.
  virtual Layout effective_layout(const Model& m, Layout l, bool ep_given) const = 0;
  virtual std::vector<Refusal> refusals(const Model& m, const Gpu& gpu, const Layout& l) const = 0;
  // Candidate layouts for exactly `gpus` GPUs in the engine's preferred order (unfiltered).
  virtual std::vector<Layout> layout_candidates(const Model& m, int gpus) const = 0;
  // Further layouts for exactly `gpus` GPUs that plan's cost search also tries, after
  // layout_candidates (unfiltered; fit keeps to layout_candidates). None unless the engine has one.
  virtual std::vector<Layout> search_layout_candidates(const Model&, int) const { return {}; }

  // The layers stage `stage` of `stages` holds, as this version's get_pp_indices splits
  // `num_layers`: the user's partition (pp_partition_env(); layers per stage) when one is given and
  // the engine accepts it (pp_partition_error() empty), else the version's own split
  // (EngineVersion::pp_layer_split). Stages beyond the layer count hold none; the counts of all
  // stages add up to num_layers.
  StageLayers stage_layers(int num_layers, int stages, int stage, const std::vector<int>& partition = {}) const;
  // The environment variable get_pp_indices reads for a manual split ("23,24,23,23": decoder layers
  // per pipeline stage): VLLM_PP_LAYER_PARTITION (vllm/distributed/utils.py, from v0.5.4, PR #6920),
  // SGLANG_PP_LAYER_PARTITION (python/sglang/srt/distributed/utils.py, from d5b95cbb5, 2024-12).
  virtual const char* pp_partition_env() const = 0;
  // The split as the engine's environment holds it: "VLLM_PP_LAYER_PARTITION=19,21,21,19" (whole
  // numbers and commas only, so inert in shell and YAML as it stands).
  std::string pp_partition_assignment(const std::vector<int>& partition) const;
  // Why get_pp_indices would raise on `partition` for `num_layers` over `stages` (its ValueError
  // text: "len(partitions)=3 does not match pp_size=4."), or "" when it takes it. Both engines
  // check the count and the sum only; a negative entry, which would give a stage a negative range,
  // is refused here too.
  static std::string pp_partition_error(const std::vector<int>& partition, int num_layers, int stages);
  // The refusal as fit and check report it ("VLLM_PP_LAYER_PARTITION=19,21,21: vLLM refuses to start
  // (len(partitions)=3 does not match pp_size=4.)"), or "" (no partition, or one the engine takes).
  std::string pp_partition_refusal(const std::vector<int>& partition, int num_layers, int stages) const;
  // The same as a usage error, where the split is the user's input (`fit --pp-layer-partition`,
  // `launch`): "<where> 19,21,21: vLLM would refuse VLLM_PP_LAYER_PARTITION: <why> (<model> has 80
  // decoder layers; give one count per pipeline stage<stages_hint>)", or "" when the engine takes it.
  std::string pp_partition_usage_error(const std::string& where, const std::vector<int>& partition, const std::string& model_id,
                                       int num_layers, int stages, const std::string& stages_hint) const;

  // --- memory
  // `context` is the max model length (0 = not known: the figures that do not depend on it).
  virtual EngineDefaults defaults(const Model& m, const Gpu& gpu, const Layout& l, const EngineSettings& s,
                                  std::int64_t users_per_instance, std::int64_t context) const = 0;
  // Weight bytes on one rank of the stage covering layers [first, last).
  double stage_weights_bytes(const Model& m, const Gpu& gpu, const Layout& l, const EngineSettings& s, int first, int last,
                             bool has_embed, bool has_head) const;
  // The multiples this version's MXFP4 MoE back-end rounds the per-rank expert width and the
  // hidden size up to on `gpu` (EngineVersion::mxfp4_moe_pad by GPU class); none = not modelled.
  std::optional<EngineVersion::Pad> mxfp4_moe_pad(const Gpu& gpu) const;
  // What the allocator adds to the stage's weights as the engine's own memory figure counts them
  // (SGLang: torch's caching-allocator rounding of each large weight tensor); the caller adds it
  // to stage_weights_bytes. `in.kv` is not read: the figure depends on the weights alone.
  virtual double weights_rounding_bytes(const StageInput&) const { return 0; }
  // Fills reserved / activation / overhead / kv / state terms, kv_tokens and reported_kv_tokens
  // (what the engine prints) of `b`; capacity and weights (with weights_rounding_bytes) are set by
  // the caller. Also the running-request cap this stage allows.
  virtual void fill_stage(const StageInput& in, const EngineDefaults& d, RankBudget& b) const = 0;
  // The capacity the engine sizes its pools from on this GPU (torch total_memory).
  double capacity_bytes(const Gpu& gpu) const { return gpu.engine_bytes(); }
  // Whether the engine refuses to start when one request of the full context does not fit the KV
  // pool (vLLM check_enough_kv_cache_memory raises; SGLang caps max_req_len at the pool instead).
  virtual bool refuses_context_beyond_pool() const = 0;

  // --- start-up logs (k3plan validate --log): what the engine's own lines mean
  virtual std::string logged_model(const EngineLog& log) const = 0;
  // The layout, memory settings and context the log's arguments give (settings.engine and the
  // version are left to the caller).
  virtual void read_serving(const EngineLog& log, const Model& m, Layout& l, EngineSettings& s, std::int64_t& context) const = 0;
  // The KV token count the log printed and the line it came from.
  virtual std::optional<std::pair<std::int64_t, std::string>> logged_kv_tokens(const EngineLog& log, int block_size) const = 0;
  virtual std::vector<LogTerm> log_terms(const EngineLog& log, const RankBudget& b, double memory_fraction) const = 0;
  // The layout read from a pasted launch command set right by what the engine's own lines show
  // (SGLang's rank prefixes); returns what it changed and why, for the comparison's assumptions.
  virtual std::vector<std::string> reconcile_logged_layout(const EngineLog&, Layout&) const { return {}; }
  // Settings no args line of the log gives but its other lines pin down (vLLM: max_num_seqs from
  // the CUDA-graph capture sizes of the engine-config line); returns what it set and why.
  virtual std::vector<std::string> infer_logged_settings(const EngineLog&, EngineSettings&) const { return {}; }

  // --- command line (the parallel part; the full builder is in render/)
  virtual std::vector<std::string> parallel_args(const Model& m, const Layout& l) const = 0;
  std::string parallel_flags(const Model& m, const Layout& l) const;  // joined with spaces
  virtual std::vector<std::string> memory_args(const EngineDefaults& d, std::int64_t context, std::int64_t max_running,
                                               const std::string& kv_dtype) const = 0;
  virtual int default_port() const = 0;
  // The engine-specific settings it has (the EngineSettings field names), for usage errors that
  // name the flag of the other engine.
  virtual bool has_setting(const std::string& name) const = 0;
  virtual std::string memory_fraction_flag() const = 0;  // --gpu-memory-utilization / --mem-fraction-static
  virtual std::string gpu_product_text() const = 0;      // how the engine counts GPUs: "TP x PP x DP" / "TP x PP"
  virtual std::string default_image() const = 0;

  // Assumptions this engine model rests on for `m` (listed by every output that uses it).
  virtual std::vector<std::string> assumptions(const Model& m) const = 0;

 protected:
  virtual bool latent_proj_replicated() const { return false; }
  // the whole shared expert on every rank (not its 1/TP share)
  virtual bool shared_experts_whole(const Model&, const Gpu&) const { return false; }
  virtual bool rope_cache_in_weights() const { return false; }
  virtual bool rope_cache_fp32(const Gpu&) const { return false; }  // the cos/sin cache kept in float32
  // MLA layers also hold the absorbed K/V up-projections (w_kc, w_vc) as copies of kv_b_proj:
  // bytes per element of those copies for a kv_b_proj stored in `precision` on `gpu`; 0 = none
  virtual double mla_absorbed_copy_bytes(const Model&, const Gpu&, const std::string& precision) const {
    (void)precision;
    return 0;
  }
  // ranks the input embedding is split over (vocab-parallel over the TP group unless the engine says)
  virtual int embedding_split(const Model&, const Layout& l) const { return l.tp; }
  virtual bool vision_sharded() const { return false; }

 private:
  EngineVersion version_;
};

// The engine model for `e` at `version` (a release number or window id; empty = newest).
// Throws InputError listing the known versions when none covers `version`.
const EngineModel& engine_model(Engine e, const std::string& version = "");
// Every engine, for code that iterates over them (plan, tests).
inline constexpr Engine kEngines[] = {Engine::sglang, Engine::vllm};

// The attention/MLP family a model belongs to for accuracy purposes, most specific first:
// hybrid (linear-attention layers), dsa, mla, sliding (windowed or chunked layers), moe, dense.
std::string model_kind(const Model& m);

// How close k3plan's KV-token predictions came to what the engine printed on out-of-sample public
// start-up logs (data/validation/log-accuracy.yaml, generated by tests/test_validate_logs.cpp).
struct AccuracyBand {
  bool validated = false;
  std::string scope;  // what the figures cover, e.g. "vLLM 0.18, moe models"
  int logs = 0;
  double median_abs_error_pct = 0;
  double max_abs_error_pct = 0;
  std::string text() const;  // "within 3.2% (median 1.1%) on 4 out-of-sample logs of vLLM 0.18, moe models" or "not validated: ..."
};
// One row of that table: engine ("sglang" | "vllm"), window ("*" = any), kind ("*" = any).
struct AccuracyRow {
  std::string engine, window, kind;
  int logs = 0;
  double median = 0, max = 0;  // |error| percent
};
const std::vector<AccuracyRow>& accuracy_table();
// The narrowest scope with at least one log: engine window and kind, then the engine and kind; no
// log of that kind for the engine = "not validated".
AccuracyBand accuracy_band(Engine e, const std::string& window, const std::string& kind);

}  // namespace k3plan
