#pragma once
// Per-GPU memory budget as the engines account it at start-up, and the KV capacity it leaves.
//
// Invariant (checked in tests): for every rank,
//   reserved + weights + activation + overhead + kv_pool + state_pool + free == capacity
// where capacity is the memory the driver reports. "free" is what the engine leaves unused
// (block rounding) or, when nothing fits, negative (the shortfall).
//
// vLLM (v0.19 gpu_worker.py / kv_cache_utils.py):
//   reserved   = (1 - gpu_memory_utilization) x capacity
//   available  = util x capacity - weights - torch activation peak - non-torch (NCCL) memory
//   tokens     = floor(available / (block_size x bytes_per_token)) x block_size, min over ranks.
// SGLang (model_runner.py, server_args._handle_gpu_memory_settings):
//   free_at_init = capacity - CUDA context/NCCL
//   reserved     = (1 - mem_fraction_static) x free_at_init   (activations, CUDA graphs)
//   kv_pool      = mem_fraction_static x free_at_init - weights; tokens = pool / cell_size.
#include <cstdint>
#include <k3plan/engine.hpp>
#include <k3plan/gpu.hpp>
#include <k3plan/kv.hpp>
#include <k3plan/layout.hpp>
#include <k3plan/model.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace k3plan {

struct EngineSettings {
  Engine engine = Engine::sglang;
  std::string engine_version;               // release or window id; empty = newest modelled
  double gpu_memory_utilization = 0;        // vLLM; 0 = engine default
  double mem_fraction_static = 0;           // SGLang; 0 = computed like server_args
  std::int64_t max_num_batched_tokens = 0;  // 0 = engine default for this GPU
  std::int64_t max_num_seqs = 0;            // 0 = engine default
  int cuda_graph_max_bs = 0;                // 0 = engine default
  std::int64_t chunked_prefill_size = 0;    // SGLang; 0 = default for this GPU
  int block_size = 16;                      // vLLM KV block (page) size
  int prefix_caching = -1;                  // vLLM --enable-prefix-caching: -1 = engine default, 0 off, 1 on
  std::string kv_dtype = "auto";
  std::string state_dtype = "fp32";
  int draft_layers = 0;
  std::string precision;  // empty = as shipped; otherwise every weight in this format
  int page_size = 0;      // SGLang --page-size; 0 = default (1)
  // SGLang hybrid linear-attention state pool (handle_max_mamba_cache)
  double mamba_full_memory_ratio = 0;  // 0 = the version's default
  std::int64_t max_mamba_cache_size = 0;
  bool disable_radix_cache = false;
  std::string mamba_radix_cache_strategy;  // auto (empty) | no_buffer | extra_buffer | extra_buffer_lazy
  int speculative_draft_tokens = 0;
  double cpu_offload_bytes = 0;       // --cpu-offload-gb (per rank): weights kept in host memory
  int mm_images_per_prompt = 0;       // vLLM --limit-mm-per-prompt image=N; 0 = the engine default (1)
  std::int64_t max_total_tokens = 0;  // SGLang --max-total-tokens (per KV pool): caps the profiled token count; 0 = none
  // The GPUs of a TP group can map each other's memory (NVLink, or PCIe peer-to-peer). When they
  // cannot, NCCL has no P2P transport and stages through host memory (SHM), so its per-peer
  // connection buffers are not on the GPU (vLLM: set from the log's custom all-reduce P2P line).
  bool gpu_p2p = true;
  // vLLM V1's top-k / top-p sampler fell back to its PyTorch-native sort because FlashInfer is not
  // installed or not enabled (set from the log's topk_topp_sampler.py warning): the profile's dummy
  // sampler then holds the window's sampler_native_bytes_per_entry where it has one.
  bool sampler_native = false;
  // Decoder layers per pipeline stage as the engine's environment variable sets them
  // (EngineModel::pp_partition_env: VLLM_PP_LAYER_PARTITION / SGLANG_PP_LAYER_PARTITION); empty =
  // the version's own split. The stage count must equal PP and the sum the model's layers
  // (EngineModel::pp_partition_error), else the engine refuses to start.
  std::vector<int> pp_layer_partition;
  const EngineModel& model() const { return engine_model(engine, engine_version); }
};

// Engine defaults, each from the version named in the .cpp.
double sglang_default_mem_fraction(const Gpu& gpu, const Layout& l, std::int64_t chunked_prefill, int cuda_graph_max_bs,
                                   const std::string& engine_version = "");
std::int64_t sglang_default_chunked_prefill(const Gpu& gpu);
int sglang_default_cuda_graph_max_bs(const Gpu& gpu, int tp);
std::int64_t vllm_default_max_num_batched_tokens(const Gpu& gpu);
std::int64_t vllm_default_max_num_seqs(const Gpu& gpu);
// The newest vLLM window's default gpu_memory_utilization (data/engines/vllm.yaml).
double vllm_default_utilization();

struct RankBudget {
  int stage = 0;  // pipeline stage
  int layers = 0;
  double capacity_bytes = 0;
  double reserved_bytes = 0;
  double weights_bytes = 0;
  double activation_bytes = 0;
  double overhead_bytes = 0;
  double kv_pool_bytes = 0;
  double state_pool_bytes = 0;
  double free_bytes = 0;
  double kv_bytes_per_token = 0;
  double state_bytes_per_sequence = 0;
  double bytes_per_sequence = 0;        // at the requested context, KV + state
  std::int64_t kv_tokens = 0;           // tokens every request can use (per KV cache group for vLLM)
  std::int64_t reported_kv_tokens = 0;  // what the engine prints ("GPU KV cache size", "#tokens")
  int block_size = 16;                  // tokens per KV page as the engine sets it (hybrid: raised)
  int kv_groups = 1;                    // vLLM KV cache groups sharing the page pool
  std::int64_t state_slots = -1;        // SGLang state-pool slots (-1 = no linear-attention layers)
  std::int64_t max_sequences = 0;       // sequences of the requested context this stage holds
  double sequence_capacity = 0;         // the same before rounding down (for the headroom)
  std::int64_t max_context_one_user = 0;
  std::int64_t running_cap = 0;  // the engine's running-request cap on this stage (0 = its flag)
  double sum() const {
    return reserved_bytes + weights_bytes + activation_bytes + overhead_bytes + kv_pool_bytes + state_pool_bytes + free_bytes;
  }
};
// The one JSON shape of a per-GPU budget (fit, perf, plan and report), units in the key names.
nlohmann::json budget_json(const RankBudget& b);

struct FitResult {
  std::string model, gpu;
  EngineSettings settings;
  Layout layout;
  int gpus = 0;
  int nodes = 0;
  std::int64_t context = 0;
  std::int64_t users = 0;
  double utilization_used = 0;  // util (vLLM) or mem_fraction_static (SGLang)
  std::int64_t max_num_batched_tokens = 0;
  std::int64_t max_num_seqs = 0;
  int cuda_graph_max_bs = 0;
  std::vector<RankBudget> ranks;     // one per pipeline stage (ranks within a stage are identical)
  RankBudget limiting;               // the stage with the fewest KV tokens
  std::int64_t kv_cache_tokens = 0;  // per instance (x DP groups that hold their own KV)
  std::int64_t max_users = 0;        // at `context`
  std::int64_t max_context_one_user = 0;
  double headroom = 0;  // fraction of the KV/state pool left after `users` at `context`
  bool fits = false;
  std::vector<std::string> reasons;
  std::vector<std::string> warnings;
  std::vector<std::string> assumptions;
  std::string engine_label;  // "SGLang 0.5 (0.5.0-0.5.x)": the version window assumed
  AccuracyBand accuracy;     // how close this engine window and model kind came on out-of-sample logs
  // Both engines' flags (after the model path), every name and value from the engine's flag table
  // (engine_flags.hpp); what was left out and why in flag_notes.
  std::string sglang_flags, vllm_flags;             // the words below joined by spaces (as printed in JSON)
  std::vector<std::string> sglang_args, vllm_args;  // the engine's flags and values, one word each, shell-ready
  // NAME=value words the engine reads from its environment (the manual layer split), shell-ready
  std::vector<std::string> sglang_env, vllm_env;
  std::vector<std::string> flag_notes;
};

// Which launch commands evaluate_fit builds: both engines' (what fit prints), none but the asked
// engine's refusals (its argument table still refuses what it would refuse, no command is kept:
// the planner's search), or none (a budget only).
enum class FitCommands { both, refusals, none };

// What evaluate_fit works out per pipeline stage that depends on neither the context nor the
// users: the stage's weights as the engine lays them out (with the allocator's rounding and the
// CPU offload) and its KV profile. A second evaluate_fit of the same layout at another context
// (memory_check's average-context pass) passes the same cache and reuses them. It is keyed by the
// model, GPU and settings objects (by address: do not change them between the calls), the layout
// and the resolved KV dtype; anything else refills it.
struct StageCache {
  const Model* model = nullptr;
  const Gpu* gpu = nullptr;
  const EngineSettings* settings = nullptr;
  Layout layout;
  std::string kv_dtype;
  std::vector<double> weights_bytes;  // per stage
  std::vector<KvProfile> kv;          // per stage
};

// Evaluates one layout. Never throws for "does not fit": sets fits = false with reasons.
FitResult evaluate_fit(const Model& m, const Gpu& gpu, const Layout& l, const EngineSettings& s, std::int64_t context, std::int64_t users,
                       FitCommands commands = FitCommands::both, StageCache* cache = nullptr);

// Candidate layouts for `gpus` GPUs that the engine accepts (best first).
std::vector<Layout> candidate_layouts(const Model& m, const Gpu& gpu, Engine e, int gpus);

// The layout the tool recommends for exactly `gpus` GPUs: candidates in the engines' preferred
// order, the first that fits wins; when none fits, the one that came closest (most users); when the
// engine accepts no layout for that many GPUs, plain TP over all of them, marked as not fitting.
FitResult fit_on_gpus(const Model& m, const Gpu& gpu, const EngineSettings& s, int gpus, std::int64_t context, std::int64_t users);

// Smallest GPU count (whole nodes beyond one node) whose best layout fits; fits = false when none
// up to max_gpus does (the result then describes the largest tried).
FitResult search_fit(const Model& m, const Gpu& gpu, const EngineSettings& s, std::int64_t context, std::int64_t users, int max_gpus = 512);

}  // namespace k3plan
