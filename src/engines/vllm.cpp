// vLLM as its code does it, per version window (data/engines/vllm.yaml). Sources, read at the
// commits the windows cite (docs/engine-sources/vllm.md has the detail):
//  - memory: vllm/v1/worker/gpu_worker.py determine_available_memory (V1) and
//    vllm/worker/worker.py determine_num_available_blocks (V0): the KV pool is
//    gpu_memory_utilization x total - (weights + torch peak increase + non-torch increase).
//  - KV pool layout: vllm/v1/core/kv_cache_utils.py get_kv_cache_config: one spec per layer,
//    layers of one spec type grouped into KV cache groups of equal size sharing one page pool;
//    num_blocks = available // (page_size x group_size); "GPU KV cache size" prints
//    num_blocks // num_groups x block_size; max concurrency from the blocks one request needs in
//    every group (get_max_concurrency_for_kv_cache_config).
//  - mamba-style layers: vllm/model_executor/models/config.py HybridAttentionMambaModelConfig:
//    the attention block size is raised (a multiple of the kernel alignment) until one attention
//    page holds one state, and the state page is padded to the attention page.
//  - defaults: vllm/config/cache.py (gpu_memory_utilization, block_size),
//    vllm/engine/arg_utils.py get_batch_defaults (max_num_batched_tokens, max_num_seqs).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <k3plan/ascii.hpp>
#include <k3plan/budget.hpp>
#include <k3plan/engine_flags.hpp>
#include <k3plan/engine_log.hpp>
#include <k3plan/units.hpp>

#include "engines_impl.hpp"

namespace k3plan {

namespace {

bool fp8_block(const std::string& p) { return p == "fp8-block"; }

std::int64_t cdiv(std::int64_t a, std::int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }

// The model classes that declare SupportsMambaPrefixCaching (vllm/model_executor/models: bamba.py,
// falcon_h1.py, granitemoehybrid.py, jamba.py, mamba.py, mamba2.py, nemotron_h.py, zamba2.py, the
// same set @ v0.12.0, v0.15.0, v0.21.0 and main 5ac268497). With prefix caching on they cache a
// state per block ("all"); every other hybrid (Gated DeltaNet, KDA, ...) is switched off (0.12-0.14)
// or runs "align" (0.15 on).
bool mamba_prefix_caching_all(const Model& m) {
  static const char* const kArchs[] = {"BambaForCausalLM",           "FalconH1ForCausalLM", "GraniteMoeHybridForCausalLM",
                                       "JambaForCausalLM",           "MambaForCausalLM",    "Mamba2ForCausalLM",
                                       "NemotronHForCausalLM",       "Zamba2ForCausalLM"};
  for (const char* a : kArchs)
    if (m.architecture == a) return true;
  return false;
}

class Vllm final : public EngineModel {
 public:
  using EngineModel::EngineModel;
  Engine engine() const override { return Engine::vllm; }
  const char* display_name() const override { return "vLLM"; }

  int gpus(const Layout& l) const override {
    const long long n = 1LL * l.tp * l.pp * l.dp;
    return n > 1000000000LL ? 1000000000 : static_cast<int>(n);
  }
  int attention_tp(const Layout& l) const override { return l.tp; }
  // expert parallel spans TP x DP (vllm/model_executor/layers/fused_moe FusedMoEParallelConfig)
  int moe_group(const Layout& l) const override { return l.tp * l.dp; }
  int kv_instances(const Layout& l) const override { return l.dp; }
  Layout effective_layout(const Model& m, Layout l, bool ep_given) const override {
    if (m.moe && !ep_given && l.tp * l.dp > 1 && l.ep == 1) return l;  // experts TP-sharded (no --enable-expert-parallel)
    if (m.moe && l.ep > 1) l.ep = l.tp * l.dp;
    return l;
  }

  std::vector<Refusal> refusals(const Model& m, const Gpu& gpu, const Layout& l) const override {
    auto r = common_refusals(m, gpu, l, gpus(l));
    if (!r.empty() && (r.front().rule == "layout/degree")) return r;
    const int heads = m.attention_heads();
    if (l.dp_attention)
      r.push_back({"engine/dp-attention", "parallel.dp_attention",
                   "vLLM has no --enable-dp-attention flag (attention is data-parallel across --data-parallel-size ranks)"});
    if (heads % l.tp != 0)
      r.push_back({"engine/tp-heads", "parallel.tp",
                   fmt::format("Total number of attention heads ({}) must be divisible by tensor parallel size ({}).", heads, l.tp)});
    if (m.moe && l.ep > 1 && l.ep != l.tp * l.dp)
      r.push_back(
          {"engine/ep-derived", "parallel.ep",
           fmt::format("vLLM derives EP_SIZE = TP_SIZE x DP_SIZE = {}; an expert-parallel degree of {} cannot be set", l.tp * l.dp, l.ep)});
    const bool moe_fp8_block = m.moe && fp8_block(m.precision_of(ParamGroup::routed_experts));
    if (moe_fp8_block && l.ep == 1) {
      const int moe_tp = l.tp * l.dp;
      const auto inter = m.moe->expert_intermediate_size;
      if (inter % moe_tp != 0 || (inter / moe_tp) % 128 != 0)
        r.push_back({"engine/fp8-block", "parallel.tp",
                     fmt::format("The output_size of gate's and up's weight = {} is not divisible by weight quantization block_n = 128.",
                                 inter / std::max(1, moe_tp))});
    }
    if (fp8_block(m.precision_of(ParamGroup::dense_mlp)) && m.dense_intermediate_size > 0) {
      const auto inter = m.dense_intermediate_size;
      if (inter % l.tp != 0 || (inter / l.tp) % 128 != 0)
        r.push_back({"engine/fp8-block", "parallel.tp",
                     fmt::format("The output_size of gate's and up's weight = {} is not divisible by weight quantization block_n = 128.",
                                 inter / l.tp)});
    }
    return r;
  }

  std::vector<Layout> layout_candidates(const Model& m, int n) const override {
    std::vector<Layout> out;
    for (int tp : tp_degrees(n)) {
      Layout l;
      l.tp = tp;
      l.pp = n / tp;
      if (m.moe) l.ep = tp;  // --enable-expert-parallel: EP = TP x DP
      out.push_back(l);
      if (auto dl = with_dcp(m, l)) out.push_back(*dl);
      if (m.moe && n / tp > 1) {
        Layout d = l;
        d.pp = 1;
        d.dp = n / tp;
        d.ep = tp * d.dp;
        out.push_back(d);
      }
    }
    return out;
  }

  // vllm/engine/arg_utils.py get_batch_defaults: GPUs with at least 70 GiB get 8192 batched
  // tokens and 1024 sequences for the OpenAI server, smaller ones 2048 / 256; from 0.9.0 an A100
  // gets the small ones whatever its memory ("a100" not in device_name, _set_default_args_v1 @
  // v0.9.0 .. v0.19.0 and main; 0.8.5 by memory alone). 0.8.0-0.8.4 chose by the name ("h100" /
  // "h200"; 1024 sequences everywhere up to 0.8.3): the window's batch_defaults.
  //
  // V0 (batch_defaults: v0) has no per-GPU defaults: EngineArgs.max_num_seqs = 256, and
  // SchedulerConfig sizes max_num_batched_tokens from max_model_len (v0_profile_tokens).
  EngineDefaults defaults(const Model& m, const Gpu& gpu, const Layout&, const EngineSettings& s, std::int64_t,
                          std::int64_t context) const override {
    EngineDefaults d;
    auto named = [&](const char* what) {
      for (const std::string& t : {gpu.id, gpu.name})
        if (ascii_lower(t).find(what) != std::string::npos) return true;
      return false;
    };
    const std::string& rule = version().batch_defaults;
    const bool big = rule == "memory" ? gpu.reported_bytes() >= 70 * kGiB && !(version().batch_defaults_skip_a100 && named("a100"))
                                      : named("h100") || named("h200");
    d.memory_fraction = s.gpu_memory_utilization > 0 ? s.gpu_memory_utilization : version().gpu_memory_utilization;
    std::int64_t tokens = big ? 8192 : 2048, seqs = big || rule == "name_seqs_1024" ? 1024 : 256;
    if (rule == "v0") {
      tokens = v0_profile_tokens(m, context);
      seqs = 256;
    }
    d.max_num_batched_tokens = s.max_num_batched_tokens > 0 ? s.max_num_batched_tokens : tokens;
    d.max_num_seqs = s.max_num_seqs > 0 ? s.max_num_seqs : seqs;
    d.cuda_graph_max_bs = s.cuda_graph_max_bs > 0 ? s.cuda_graph_max_bs : 512;
    d.block_size = s.block_size > 0 ? s.block_size : 16;
    // CacheConfig.enable_prefix_caching (default True) unless the model does not support it: hybrid
    // models up to the version that turned it on for them (see mamba_cache_mode)
    bool hybrid = false;
    for (const auto& blk : m.blocks) hybrid = hybrid || blk.is_linear();
    d.prefix_caching = s.prefix_caching >= 0 ? s.prefix_caching == 1 : (!hybrid || version().hybrid_prefix_caching_default);
    return d;
  }

  void fill_stage(const StageInput& in, const EngineDefaults& d, RankBudget& b) const override {
    const Model& m = *in.model;
    const auto& v = version();
    const double cap = b.capacity_bytes;
    b.reserved_bytes = (1 - d.memory_fraction) * cap;
    // the native top-k / top-p sort: when the log says FlashInfer is missing or off, and always off
    // CUDA (topk_topp_sampler.py @ v0.10.2 takes forward_native unless current_platform.is_cuda())
    const bool sampler_native = in.settings->sampler_native || in.gpu->vendor == "amd";
    b.activation_bytes =
        activation_bytes(m, *in.layout, d, in.context, in.stage == in.stages - 1, in.settings->mm_images_per_prompt, sampler_native);
    // non-torch memory: custom all-reduce and NCCL buffers exist with TP > 1; a pipeline rank of
    // TP 1 only has its send/recv buffers. Without GPU P2P, NCCL's intra-node transport is SHM,
    // whose buffers are host shared memory (NCCL src/transport/shm.cc, shmSendSetup: ncclShmOpen),
    // and the custom all-reduce is off, so a TP group holds what a single rank does. GPUs without
    // NVLink (Gpu::pcie_only) hold about as little: the custom all-reduce is off beyond 2 of them
    // (custom_all_reduce.py: world_size > 2 and not fully_connected) and at 2 its buffers are tens
    // of MiB, there is no NVLS (no multicast), the symm-mem and FlashInfer fusion workspaces are
    // sm90 / sm100 NVLink paths, and NCCL over PCIe opens a few channels where NVLink opens 24; the
    // few MiB that leaves are not counted (validated at TP4 on L40S; TP2 on PCIe is not).
    const bool tp_buffers_on_gpu = in.layout->tp > 1 && in.settings->gpu_p2p && !in.gpu->pcie_only();
    const double non_torch_gib = tp_buffers_on_gpu ? v.non_torch_tp_gib : in.layout->pp > 1 ? v.non_torch_pp_gib : v.non_torch_tp1_gib;
    b.overhead_bytes = (non_torch_gib + v.non_torch_context_gib) * kGiB + nvls_eager_bytes(*in.gpu, *in.layout, tp_buffers_on_gpu);
    // 0.20 on: the CUDA-graph memory estimate is subtracted too (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1)
    const double cudagraph = v.cudagraph_in_profile ? v.cudagraph_estimate_gib * kGiB : 0.0;
    b.activation_bytes += cudagraph;
    const double pool = d.memory_fraction * cap - b.weights_bytes - b.activation_bytes - b.overhead_bytes;
    b.block_size = d.block_size;
    const auto specs = layer_specs(in.kv);
    bool mamba = false, several = specs.size() > 1;
    for (const auto& s : specs) mamba = mamba || s.kind == LayerSpec::Kind::mamba;
    if (pool <= 0) {
      b.kv_pool_bytes = 0;
      b.free_bytes = pool;
      return;
    }
    if (!v.hybrid_kv_groups || !several) {
      uniform_pool(in, d, specs, pool, b);
      return;
    }
    grouped_pool(in, d, specs, pool, mamba, b);
  }

  // NVLS buffers of the communicators NCCL connects in full at init (the window's nccl.eager_comms:
  // NCCL_CUMEM_ENABLE=0 up to 0.10.1.1). The fitted TP > 1 figure is a TP2 run's (PR #10511, or
  // 0.19's lazily connected ones), which has none: NCCL turns NVLS on only above 2 GPUs on an
  // NVLink-multicast GPU, so at TP8 on an HGX H200 the V0 engine holds 2 x 1.125 GiB more.
  double nvls_eager_bytes(const Gpu& gpu, const Layout& l, bool tp_buffers_on_gpu) const {
    const auto& n = version().nccl;
    if (!tp_buffers_on_gpu || n.eager_comms <= 0) return 0;
    const auto per_comm = nvls_buffer_bytes(n.minor, gpu, std::min(l.tp, gpu.scaleup_domain_gpus));
    return per_comm ? n.eager_comms * *per_comm : 0.0;
  }

  // vllm/v1/core/kv_cache_utils.py check_enough_kv_cache_memory
  bool refuses_context_beyond_pool() const override { return true; }

  std::vector<std::string> parallel_args(const Model& m, const Layout& l) const override {
    std::vector<std::string> a = {"--tensor-parallel-size", std::to_string(l.tp),   "--pipeline-parallel-size",
                                  std::to_string(l.pp),     "--data-parallel-size", std::to_string(l.dp)};
    if (m.moe && l.ep > 1) a.push_back("--enable-expert-parallel");
    if (l.dcp > 1) {
      a.push_back("--decode-context-parallel-size");
      a.push_back(std::to_string(l.dcp));
    }
    return a;
  }

  std::vector<std::string> memory_args(const EngineDefaults& d, std::int64_t context, std::int64_t max_running,
                                       const std::string& kv_dtype) const override {
    return {"--gpu-memory-utilization", fmt::format("{:.2f}", d.memory_fraction),
            "--max-model-len",          std::to_string(context),
            "--max-num-seqs",           std::to_string(std::max<std::int64_t>(1, max_running)),
            "--kv-cache-dtype",         kv_dtype};
  }
  std::string logged_model(const EngineLog& log) const override {
    for (const char* k : {"model", "model_tag"})
      if (log.has(k) && log.arg(k) != "None") return log.arg(k);
    return "";
  }
  // "non-default args" / Namespace / engine config keys (vllm/engine/arg_utils.py EngineArgs fields)
  void read_serving(const EngineLog& log, const Model& m, Layout& l, EngineSettings& s, std::int64_t& context) const override {
    l.tp = static_cast<int>(log.int_arg("tensor_parallel_size", 1, 1, 4096));
    l.pp = static_cast<int>(log.int_arg("pipeline_parallel_size", 1, 1, 4096));
    l.dp = static_cast<int>(log.int_arg("data_parallel_size", 1, 1, 4096));
    l.dcp = static_cast<int>(log.int_arg("decode_context_parallel_size", 1, 1, 4096));
    if (m.moe && log.flag_arg("enable_expert_parallel")) l.ep = l.tp * l.dp;
    s.gpu_memory_utilization = log.num_arg("gpu_memory_utilization", 0, 0.01, 1);
    s.block_size = static_cast<int>(log.int_arg("block_size", 16, 1, 1 << 20));
    s.max_num_batched_tokens = log.int_arg("max_num_batched_tokens", 0, 1, std::int64_t{1} << 34);
    s.max_num_seqs = log.int_arg("max_num_seqs", 0, 1, 1 << 24);
    s.cpu_offload_bytes = log.num_arg("cpu_offload_gb", 0, 0, 1e6) * kGiB;  // per GPU (vllm/config/cache.py)
    if (log.no_gpu_p2p) s.gpu_p2p = false;
    if (log.sampler_native) s.sampler_native = true;
    // --limit-mm-per-prompt: {'image': 50, 'video': 2} (Namespace / non-default args) or image=50,video=2
    if (log.has("limit_mm_per_prompt"))
      if (const auto images = limit_mm_images(log.arg("limit_mm_per_prompt"))) s.mm_images_per_prompt = *images;
    if (log.has("enable_prefix_caching") && log.arg("enable_prefix_caching") != "None")
      s.prefix_caching = log.flag_arg("enable_prefix_caching") ? 1 : 0;
    context = log.int_arg("max_model_len", 0, 1, std::int64_t{1} << 34);
    if (context == 0) context = log.int_arg("max_seq_len", 0, 1, std::int64_t{1} << 34);
    if (context == 0 && log.concurrency_tokens) context = *log.concurrency_tokens;
  }
  // With no capture sizes given, vLLM captures CUDA graphs up to min(2 x max_num_seqs x
  // decode_query_len, 512) tokens, the sizes being [1, 2, 4] + range(8, 256, 8) + range(256, max +
  // 1, 16) (vllm/config/vllm.py VllmConfig._set_cudagraph_sizes @ v0.19.0; SchedulerConfig
  // cuda_graph_sizes from PR #20628 in 0.10.x). The V1 engine-config line prints the resolved sizes
  // but not max_num_seqs, so when no args line was read (an args line gives max_num_seqs or leaves
  // the default, and a user may have set the sizes there) a largest size under 512 bounds it:
  // largest <= 2 x max_num_seqs < the next size of the list. The upper end is used (the larger
  // profile batch, the smaller pool). Speculative decoding multiplies by its query length: not inferred.
  std::vector<std::string> infer_logged_settings(const EngineLog& log, EngineSettings& s) const override {
    if (!version().cudagraph_sizes_follow_seqs || s.max_num_seqs > 0 || log.args_from.rfind("engine config", 0) != 0) return {};
    if (log.has("speculative_config") && log.arg("speculative_config") != "None") return {};
    const std::vector<std::int64_t> sizes = logged_capture_sizes(log);
    if (sizes.empty()) return {};
    const std::int64_t largest = *std::max_element(sizes.begin(), sizes.end());
    if (largest >= 512 || (s.max_num_batched_tokens > 0 && largest >= s.max_num_batched_tokens)) return {};
    const std::int64_t next = largest < 4 ? 2 * largest : largest < 8 ? 8 : largest < 256 ? largest + 8 : largest + 16;
    const std::int64_t lo = (largest + 1) / 2, hi = std::max(lo, (next - 1) / 2);
    s.max_num_seqs = hi;
    return {fmt::format("max_num_seqs {} from the logged CUDA-graph capture sizes (largest {}; with none given vLLM captures up to "
                        "min(2 x max_num_seqs, 512), config/vllm.py _set_cudagraph_sizes, so max_num_seqs is {}-{}); no args line says it",
                        hi, largest, lo, hi)};
  }
  // The capture sizes of the engine-config line: compilation_config's "cudagraph_capture_sizes"
  // list, or a bare cudagraph_capture_sizes=[...] where a paste has cut the dict; empty = none
  // (enforce_eager prints []).
  static std::vector<std::int64_t> logged_capture_sizes(const EngineLog& log) {
    std::string text = log.arg("cudagraph_capture_sizes");
    if (text.empty()) {
      const std::string cc = log.arg("compilation_config");
      const auto key = cc.find("cudagraph_capture_sizes");
      if (key == std::string::npos) return {};
      const auto open = cc.find('[', key), close = cc.find(']', key);
      if (open == std::string::npos || close == std::string::npos || close < open) return {};
      text = cc.substr(open, close - open + 1);
    }
    std::vector<std::int64_t> sizes;
    std::int64_t cur = -1;
    for (const char ch : text + " ") {
      if (ch >= '0' && ch <= '9') {
        cur = (cur < 0 ? 0 : cur) * 10 + (ch - '0');
        if (cur > (std::int64_t{1} << 30)) return {};
      } else if (cur >= 0) {
        sizes.push_back(cur);
        cur = -1;
      }
    }
    return sizes;
  }
  std::optional<std::pair<std::int64_t, std::string>> logged_kv_tokens(const EngineLog& log, int block_size) const override {
    if (log.kv_cache_tokens) return std::make_pair(*log.kv_cache_tokens, std::string("GPU KV cache size"));
    if (log.gpu_blocks) return std::make_pair(*log.gpu_blocks * block_size, fmt::format("# GPU blocks x {}", block_size));
    if (log.max_concurrency && log.concurrency_tokens)
      return std::make_pair(static_cast<std::int64_t>(std::llround(*log.max_concurrency * static_cast<double>(*log.concurrency_tokens))),
                            std::string("Maximum concurrency x tokens per request"));
    return std::nullopt;
  }
  std::vector<LogTerm> log_terms(const EngineLog& log, const RankBudget& b, double util) const override {
    std::optional<double> total = log.total_bytes;
    if (!total && log.requested_bytes) total = *log.requested_bytes / util;
    auto minus = [](const std::optional<double>& logged, double ours) { return logged ? -(ours - *logged) : 0.0; };
    return {{"capacity", total, b.capacity_bytes, total ? util * (b.capacity_bytes - *total) : 0.0},
            {"weights", log.weights_bytes, b.weights_bytes, minus(log.weights_bytes, b.weights_bytes)},
            {"activation", log.activation_bytes, b.activation_bytes, minus(log.activation_bytes, b.activation_bytes)},
            {"non_torch", log.non_torch_bytes, b.overhead_bytes, minus(log.non_torch_bytes, b.overhead_bytes)},
            {"kv_pool", log.kv_pool_bytes, b.kv_pool_bytes + b.state_pool_bytes + b.free_bytes, 0.0}};
  }

  int default_port() const override { return 8000; }
  const char* pp_partition_env() const override { return "VLLM_PP_LAYER_PARTITION"; }
  bool has_setting(const std::string& n) const override {
    return n == "gpu_memory_utilization" || n == "max_num_batched_tokens" || n == "max_num_seqs" || n == "block_size" ||
           n == "prefix_caching" || n == "limit_mm_per_prompt";
  }
  std::string memory_fraction_flag() const override { return "--gpu-memory-utilization"; }
  std::string gpu_product_text() const override { return "TP x PP x DP"; }
  std::string default_image() const override { return "vllm/vllm-openai:latest"; }

  std::vector<std::string> assumptions(const Model& m) const override {
    std::vector<std::string> a;
    a.push_back(
        fmt::format("{}: torch activation peak fitted on three H100 vLLM 0.19 logs (Llama-3.1-8B, Qwen2.5-7B, Qwen3-14B); "
                    "non-torch {:.2f} GiB at world size 1, {:.2f} GiB above on NVLink GPUs (the world-size-1 figure at any TP "
                    "on GPUs without NVLink or P2P)",
                    label(), version().non_torch_tp1_gib, version().non_torch_tp_gib));
    if (version().non_torch_context_gib > 0)
      a.push_back(fmt::format("{}: counts the device-wide memory torch does not hold, so the CUDA context too: {:.2f} GiB, the context an "
                              "H100 shows in vLLM 0.19's start-up snapshot, taken for every GPU",
                              label(), version().non_torch_context_gib));
    if (version().nccl.eager_comms > 0)
      a.push_back(fmt::format("{}: NCCL {} connects {} communicators of the TP group in full at start-up (NCCL_CUMEM_ENABLE=0), so above "
                              "2 GPUs on NVLink-multicast GPUs their NVLS buffers count in non-torch memory; sized by the catalogue's "
                              "NCCL channel count (an NCCL topology result, not a datasheet figure), none where it is not given",
                              label(), version().nccl.release, version().nccl.eager_comms));
    bool hybrid = false;
    for (const auto& b : m.blocks) hybrid = hybrid || b.is_linear() || b.sliding_window > 0;
    if (hybrid && version().hybrid_kv_groups)
      a.push_back("hybrid KV cache manager: layers grouped by kind into equal groups sharing one page pool (kv_cache_utils.py)");
    if (m.vision.known() && m.vision_params > 0 && version().profile != "v0")
      a.push_back(fmt::format("{}: the memory profile runs dummy images of the largest size ({} tokens each) through the vision tower before the "
                              "language model (gpu_model_runner.py profile_run); how many follows --max-num-batched-tokens, --max-num-seqs and "
                              "--limit-mm-per-prompt",
                              label(), m.vision.tokens_per_image));
    return a;
  }

 protected:
  bool rope_cache_in_weights() const override { return version().rope_cache_full; }
  // vllm/config/multimodal.py mm_encoder_tp_mode: "weights" (shard the encoder by TP) by default
  bool vision_sharded() const override { return true; }

 private:
  // vllm/model_executor/models/config.py MambaModelConfig.verify_and_update_config: with prefix
  // caching on, "all" for the models that support it and "align" for the other hybrids (0.15 on,
  // PR #30877 5206e5e28); 0.12-0.14 keep it only for the former and switch it off for the others;
  // up to 0.11 it is off for every hybrid; main (PR #50991 f9c74b4b9) sets "align" for every
  // hybrid. Prefix caching is off by default for hybrid models (config/model.py
  // is_prefix_caching_supported @ v0.12.0 .. v0.21.0; arg_utils.py keeps it opt-in for hybrids
  // after PR #40996) and on by default at main (PR #50991, 2026-08-04).
  std::string mamba_cache_mode(const Model& m, const EngineDefaults& d) const {
    const std::string& v = version().mamba_prefix_caching;
    if (!d.prefix_caching || v == "off") return "none";
    if (v == "align_only") return "align";
    if (mamba_prefix_caching_all(m)) return "all";
    return v == "align" ? "align" : "none";
  }

  // The MLA chunked-prefill workspace when it exists during the profile (the window's
  // mla_prefill_workspace_max_rows; vllm/v1/attention/backends/mla/common.py
  // MLACommonMetadataBuilder.__init__ @ v0.8.4): rows of the latent head (kv_lora_rank +
  // qk_rope_head_dim = 576 for DeepSeek V3) in the model dtype, 144 MiB at the 128Ki cap.
  double mla_prefill_workspace_bytes(const Model& m, const EngineDefaults& d, std::int64_t context) const {
    const std::int64_t cap = version().mla_prefill_workspace_max_rows;
    if (cap <= 0) return 0;
    for (const auto& blk : m.blocks)
      if (blk.kind == AttnKind::mla) {
        const std::int64_t rows = std::min(std::max(8 * context, 4 * d.max_num_seqs * d.block_size), cap);
        return static_cast<double>(rows) * static_cast<double>(blk.kv_lora_rank + blk.qk_rope_head_dim) * model_dtype_bytes(m);
      }
    return 0;
  }

  // V0's max_num_batched_tokens when the user sets none (vllm/config.py SchedulerConfig @
  // v0.6.4.post1): max(max_model_len, 2048), or 512 with chunked prefill, which
  // EngineArgs.create_engine_config (arg_utils.py, same tag) turns on by default above 32,768
  // tokens for text-only models without a sliding window. From v0.6.5 the chunked figure is 2048;
  // the window follows its v0.6.4 source.
  static std::int64_t v0_profile_tokens(const Model& m, std::int64_t context) {
    bool sliding = false;
    for (const auto& blk : m.blocks) sliding = sliding || blk.sliding_window > 0;
    const bool chunked = context > 32768 && m.vision_params <= 0 && !sliding;
    return chunked ? 512 : std::max<std::int64_t>(context, 2048);
  }

  // Torch activation peak of the profile run. V1: the sampler's logits and their copies dominate
  // (the window's sampler_bytes_per_entry per sequence per vocab entry: counted from the sampler's
  // code per release, 14 with FlashInfer's top-k / top-p, 38 with the native sort; from 0.17 the 15
  // fitted on three H100 vLLM 0.19 logs, in-sample: Llama-3.1-8B 1.89 GiB, Qwen2.5-7B 2.21 GiB,
  // Qwen3-14B 2.23 GiB at 8192 batched tokens and 1024 sequences, which the count of 14 + the Triton
  // scratch + the cuBLAS workspace reproduces), plus the hidden states of the batched tokens. V0 without chunked prefill runs
  // the profile at max(max_model_len, max_num_batched_tokens) tokens.
  // Only the last pipeline stage runs the sampler. MoE layers add the fused-MoE workspace
  // (vllm/model_executor/layers/fused_moe/fused_moe.py fused_experts_impl: cache13 of
  // M x top_k x max(N, K) plus cache2 of M x top_k x N/2 elements in the activation dtype, with
  // M = min(tokens, VLLM_FUSED_MOE_CHUNK_SIZE = 32768), N = 2 x the expert width on this rank,
  // K = hidden); it is live at a different time than the sampler, so the larger of the two counts.
  double activation_bytes(const Model& m, const Layout& l, const EngineDefaults& d, std::int64_t context, bool last_stage,
                          int images_per_prompt, bool sampler_native = false) const {
    std::int64_t tokens = d.max_num_batched_tokens;
    if (version().profile == "v0" && context > tokens && context <= 32768) tokens = context;
    const V0Multimodal mm = v0_multimodal(m, l, tokens, d.max_num_seqs, images_per_prompt);
    const double s = mm.seqs > 0 ? static_cast<double>(mm.seqs) : static_cast<double>(std::min(d.max_num_seqs, tokens));
    // bytes per sequence per vocabulary entry at the sampler's peak. V0 (vllm/worker/model_runner.py
    // _dummy_run samples with top_k = vocab - 1 and top_p = 0.99, so vllm/model_executor/layers/
    // sampler.py _apply_top_k_top_p runs; counted @ v0.8.1): the bf16 logits (2) and their fp32 copy
    // (4) stay live while the sort values (4) and int64 indices (8), the top-k mask (1), the top-p
    // softmax (4), cumsum (4) and mask (1) and the scattered result (4) exist: 32 B. V1: the window's
    // sampler_bytes_per_entry (counted per release, data/engines/vllm.yaml; 15 fitted from 0.17 on).
    // The model-dtype tensors (logits as computed, hidden states, MoE scratch) scale with the
    // dtype the model runs in: 2 B for bf16 / fp16, 4 B with --dtype float32.
    const double elem = model_dtype_bytes(m);
    const double v1_entry = sampler_native && version().sampler_native_bytes_per_entry > 0 ? version().sampler_native_bytes_per_entry
                                                                                           : version().sampler_bytes_per_entry;
    const double per_entry = (version().profile == "v0" ? 32.0 : v1_entry) + (elem - 2.0);
    const double sampler = last_stage ? per_entry * s * static_cast<double>(m.vocab_size) : 0.0;
    double moe = 0;
    const bool persistent = version().moe_workspace_persistent;
    if (m.moe) {
      const double mt = static_cast<double>(std::min<std::int64_t>(tokens, 32768));
      const double width = static_cast<double>(m.moe->expert_intermediate_size) / (l.ep > 1 ? 1.0 : std::max(1, l.tp * l.dp));
      const double n = 2 * width, k = static_cast<double>(m.moe->latent_size > 0 ? m.moe->latent_size : m.hidden_size);
      const double topk = m.moe->experts_per_token;
      if (!persistent) {
        // fused_experts_impl's cache13 and cache2 (above)
        moe = mt * topk * (std::max(n, k) + n / 2) * elem;
        // block-FP8 experts (use_fp8_w8a8 with a block shape): moe_kernel_prepare_input quantizes
        // both GEMM inputs with per_token_group_quant_fp8, 1 B per element plus an fp32 scale per
        // 128, and the first copy is still live at the second GEMM (fused_moe.py @ v0.8.4)
        if (fp8_block(m.precision_of(ParamGroup::routed_experts))) moe += mt * (k + topk * n / 2) * (1.0 + 4.0 / 128.0);
        // live around the experts call (deepseek_v2.py DeepseekV2DecoderLayer / DeepseekV2MoE.forward
        // @ v0.8.4): the residual, the layer's input (the experts write their sum into it in place)
        // and the shared experts' output, computed before the routed experts
        const double live = 2.0 + (m.moe->shared_experts > 0 ? 1.0 : 0.0);
        moe += live * static_cast<double>(tokens) * static_cast<double>(m.hidden_size) * elem;
      } else if (m.precision_of(ParamGroup::routed_experts) == "mxfp4")
        // OAITritonExperts (gpt_oss_triton_kernels_moe.py @ v0.19.0): its own scratch lives inside
        // the kernel; the modular kernel keeps M x top_k x N/2 and the M x K output
        moe = mt * (topk * n / 2 + k) * elem;
      else
        // the modular kernel's TritonExperts.workspace_shapes: workspace13 M x top_k x max(N/2, K)
        // and workspace2 M x top_k x max(N, K) (fused_moe.py @ v0.11.0 and v0.19.0)
        moe = mt * topk * (std::max(n / 2, k) + std::max(n, k)) * elem;
    }
    // A dense MLP's intermediates, live at its down projection (models/llama.py LlamaMLP.forward @
    // v0.6.4.post1 and v0.19.0: `gate_up` stays referenced while act_fn's output and down_proj's
    // result exist, beside the layer's input and residual: 3 x I/tp + 3 x hidden per token; an
    // ungated fc1 / act / fc2 MLP (models/phi.py, opt.py) rebinds its input, so 2 x I/tp or
    // I/tp + hidden, whichever is larger, + 2 x hidden). One hidden is the term added below. It
    // only dominates when the profile batch is long (V0 without chunked prefill runs max_model_len
    // tokens); at 8192 tokens the sampler's logits are larger for every model of the corpus.
    double mlp = 0;
    bool dense_mlp = false;
    for (int i = 0; i < static_cast<int>(m.layers.size()) && !dense_mlp; ++i)
      dense_mlp = !m.is_moe_layer(i) && m.blocks[static_cast<std::size_t>(m.layers[static_cast<std::size_t>(i)])].has_mlp;
    if (dense_mlp && m.dense_intermediate_size > 0) {
      const double width = static_cast<double>(m.dense_intermediate_size) / std::max(1, l.tp);
      const double h = static_cast<double>(m.hidden_size);
      const double live = m.gated_mlp ? 3 * width + h : std::max(2 * width, width + h);
      mlp = static_cast<double>(tokens) * (live + h) * elem;
    }
    const double peak = persistent ? std::max(sampler + moe, mlp) : std::max({sampler, moe, mlp});
    const double language = peak + elem * static_cast<double>(tokens) * static_cast<double>(m.hidden_size) + mla_prefill_workspace_bytes(m, d, context);
    // V1: the encoder's own peak, or the language model's with the encoder phase's leftovers
    const V1Encoder enc = v1_encoder(m, l, d, context, images_per_prompt);
    if (enc.items > 0) return std::max(enc.peak_bytes, language + enc.carry_bytes);
    if (mm.seqs <= 0) return language;
    // the multimodal profile: the language-model forward runs with the masks and the fp32 pixel
    // values still live; the vision tower and the mask building run before it
    return std::max({language + mm.lm_extra_bytes, mm.vision_bytes, mm.mask_bytes});
  }

  // V1's multimodal profile (v1/worker/gpu_model_runner.py profile_run, read at upstream main of
  // 2026-05-24 through the local-inference-lab/vllm fork 28be48fa9; the budget at upstream
  // v1/core/encoder_cache_manager.py compute_mm_encoder_budget @ 003ad86e2 and
  // multimodal/encoder_budget.py MultiModalBudget @ 042a4d3ee): before the language model's dummy
  // run it feeds one batch of dummy items of the modality with the most tokens per item through the
  // encoder, keeps the outputs (encoder_cache) and the batched inputs (a local of profile_run) until
  // the sampler has run, then frees them. The batch: budget = max(max_num_batched_tokens, tokens of
  // one item); items = max(1, min(budget / item tokens, max_num_seqs x max(1, min(limit per prompt,
  // max_model_len / item tokens)))), the limit being 999 for a modality --limit-mm-per-prompt leaves
  // out in V1. gpu_worker.py determine_available_memory resets torch's peak before profile_run, so
  // the peak it subtracts is the larger of the encoder phase's and the language model's plus what
  // the encoder phase left allocated. Modelled for images through the towers Model::vision knows
  // (SigLIP, Qwen3-VL's); the encoder runs eagerly (no ViT CUDA graph or compile by default), its
  // blocks one after the other, so the peak is one block's live tensors per patch.
  struct V1Encoder {
    std::int64_t items = 0;    // dummy images in the profile's encoder batch (0 = no encoder profile)
    double peak_bytes = 0;     // torch peak while the tower runs
    double carry_bytes = 0;    // the batched pixel values and the encoder outputs, live through the LM dummy run
  };
  V1Encoder v1_encoder(const Model& m, const Layout& l, const EngineDefaults& d, std::int64_t context, int images_per_prompt) const {
    V1Encoder r;
    const auto& vt = m.vision;
    if (version().profile == "v0" || !vt.known() || m.vision_params <= 0) return r;
    const std::int64_t item = vt.tokens_per_image;
    const std::int64_t budget = std::max(d.max_num_batched_tokens, item);
    const std::int64_t limit = images_per_prompt > 0 ? images_per_prompt : 999;
    const std::int64_t per_prompt = std::max<std::int64_t>(1, std::min(limit, context > 0 ? context / item : limit));
    r.items = std::max<std::int64_t>(1, std::min(budget / item, std::max<std::int64_t>(1, d.max_num_seqs) * per_prompt));
    const double elem = model_dtype_bytes(m);
    const double patches = static_cast<double>(r.items) * static_cast<double>(vt.patches_per_image());
    // pixel values in the model dtype (multimodal/processing/context.py _postprocess_output casts
    // them), one row of channels x frames x patch^2 per patch; the outputs, item tokens x the
    // projector's width
    const double pixel_row = static_cast<double>(vt.channels * std::max<std::int64_t>(1, vt.temporal_patch) * vt.patch_size * vt.patch_size);
    const double pixels = patches * pixel_row * elem;
    const double out = static_cast<double>(vt.out_hidden > 0 ? vt.out_hidden : m.hidden_size);
    r.carry_bytes = pixels + static_cast<double>(r.items * item) * out * elem;
    r.peak_bytes = pixels + patches * vit_live_elements_per_patch(vt, l.tp, out) * elem;
    return r;
  }

  // Elements per patch live at the peak of one vision-tower block (blocks run one after the other,
  // so the tower's peak is one block's), TP-sharded like the decoder (mm_encoder_tp_mode
  // "weights", config/multimodal.py); the all-reduce after a row-parallel projection is out of
  // place (pynccl all_reduce: cuda_communicator.py, distributed/device_communicators @ v0.8.0).
  //   SigLIP (siglip.py SiglipEncoderLayer @ v0.8.0): at the attention's all-reduce the residual,
  //     layer_norm1's output, the fused qkv (3 h / tp, held through the call by its chunks), the
  //     attention output (h / tp; xFormers / SDPA / flash kernels keep no score matrix) and
  //     out_proj's output.
  //   Qwen3-VL (qwen3_vl.py Qwen3_VisionBlock, qwen2_5_vl.py Qwen2_5_VisionAttention, FLASH_ATTN ViT
  //     back-end): the residual, norm1's output, qkv (3h / tp), the contiguous q and k copies made
  //     before the rotary (2h / tp), the rotary outputs (2h / tp), the attention output (h / tp;
  //     varlen flash attention) and proj's output; through the whole forward also the position
  //     embeddings (h), the gathered rotary cos / sin (one head_dim) and each deepstack merger's
  //     output (out / merge^2).
  //   Both MLPs: the residual, the norm's output, fc1 and its activation (i / tp each), then fc2's
  //     output and its all-reduce.
  static double vit_live_elements_per_patch(const Model::VisionTower& vt, int tp_size, double out) {
    const double h = static_cast<double>(vt.hidden), inter = static_cast<double>(vt.intermediate);
    const double tp = std::max(1, tp_size), ar = tp_size > 1 ? h : 0.0;
    double attn = 2 * h + 4 * h / tp + h + ar, whole = 0;
    if (vt.qwen_vl) {
      attn = 2 * h + 8 * h / tp + h + ar;
      const double merge = static_cast<double>(std::max<std::int64_t>(1, vt.spatial_merge));
      whole = h + h / static_cast<double>(std::max<std::int64_t>(1, vt.heads)) + static_cast<double>(vt.deepstack) * out / (merge * merge);
    }
    const double mlp = std::max(2 * h + 2 * inter / tp, 2 * h + inter / tp + h + ar);
    return whole + std::max(attn, mlp);
  }

  // V0's multimodal profile run (vllm/worker/model_runner.py _dummy_run @ v0.8.0, the same from
  // v0.6.x on): max_num_seqs = max(1, min(max_num_seqs, max_num_batched_tokens //
  // get_max_multimodal_tokens)), get_max_multimodal_tokens = --limit-mm-per-prompt images (default
  // 1, vllm/config.py MultiModalConfig) x the tokens of the largest image, and every dummy sequence
  // of max_num_batched_tokens // max_num_seqs tokens carries that many images of the size with the
  // most features. Modelled for fixed-resolution ViT towers (Model::vision: each image is
  // (image_size / patch)^2 patches; Gemma 3 without pan-and-scan, gemma3_mm.py @ v0.8.0); V1 runs
  // the encoder in its own profile step (gpu_model_runner.py profile_run), not modelled here.
  struct V0Multimodal {
    std::int64_t seqs = 0;      // dummy sequences (0 = no multimodal profile)
    double vision_bytes = 0;    // peak while the vision tower runs
    double mask_bytes = 0;      // peak while Gemma 3's attention masks are built
    double lm_extra_bytes = 0;  // kept through the language-model forward
  };
  V0Multimodal v0_multimodal(const Model& m, const Layout& l, std::int64_t tokens, std::int64_t max_seqs, int images_per_prompt) const {
    V0Multimodal r;
    const auto& vt = m.vision;
    if (version().profile != "v0" || !vt.known() || vt.qwen_vl || m.vision_params <= 0 || tokens <= 0) return r;
    const auto per_prompt = static_cast<std::int64_t>(std::max(1, images_per_prompt));
    const std::int64_t mm_tokens = per_prompt * vt.tokens_per_image;
    r.seqs = std::max<std::int64_t>(1, std::min(max_seqs, tokens / mm_tokens));
    const double images = static_cast<double>(r.seqs * per_prompt);
    const double elem = model_dtype_bytes(m);
    // pixel values: the HF image processor's float32 batch, moved to the GPU as it is
    // (MultiModalKwargs.as_kwargs, multimodal/inputs.py @ v0.8.0) and held in the forward's
    // kwargs; the vision tower's call holds a model-dtype copy (_image_pixels_to_features)
    const double pixels = images * 3.0 * static_cast<double>(vt.image_size) * static_cast<double>(vt.image_size);
    r.lm_extra_bytes = 4.0 * pixels;
    // one SigLIP encoder layer at a time (vit_live_elements_per_patch)
    const double patches = images * static_cast<double>(vt.patches_per_image());
    r.vision_bytes = (4.0 + elem) * pixels + patches * vit_live_elements_per_patch(vt, l.tp, 0) * elem;
    // Gemma 3 (gemma3_mm.py Gemma3ForConditionalGeneration.prepare_attn_masks @ v0.8.0): a dense
    // seq_len x seq_len global and a local mask per sequence in the model dtype, built from a
    // zeros_like image mask, tril / where temporaries and two bool masks; at the local mask's
    // torch.where the global, image and local masks (2 B each), the bool condition (1 B) and the
    // result (2 B) are live, 9 B per entry, and the earlier sequences' two masks (4 B) are kept.
    // The inputs_embeds and the projected image embeddings are live meanwhile. The kept masks
    // feed naive_attn_with_masks (F.scaled_dot_product_attention with a float mask: the
    // memory-efficient kernel, no score matrix) through the whole language-model forward.
    if (m.architecture == "Gemma3ForConditionalGeneration") {
      const double len = static_cast<double>(tokens / r.seqs), sq = len * len;
      const double seqs = static_cast<double>(r.seqs);
      const double embeds = static_cast<double>(tokens) * static_cast<double>(m.hidden_size) * elem +
                            images * static_cast<double>(vt.tokens_per_image) * static_cast<double>(m.hidden_size) * elem;
      r.mask_bytes = 4.0 * pixels + embeds + 4.0 * elem / 2.0 * sq * (seqs - 1) + (4.0 * elem + 1.0) * sq;
      r.lm_extra_bytes += 2.0 * elem * sq * seqs;
    }
    return r;
  }

  // One spec type (or a version without the hybrid manager: every attention layer counted as
  // full attention, vllm/v1/core/kv_cache_utils.py unify_hybrid_kv_cache_specs).
  void uniform_pool(const StageInput& in, const EngineDefaults& d, const std::vector<LayerSpec>& specs, double pool, RankBudget& b) const {
    double per_token = 0, state = 0;
    for (const auto& s : specs) {
      if (s.kind == LayerSpec::Kind::mamba)
        state += s.state_bytes_per_layer * s.layers;
      else
        per_token += s.bytes_per_token_per_layer * s.layers;
    }
    // V0 / pre-hybrid: the state cache holds max_num_seqs sequences, allocated beside the KV pool
    b.state_pool_bytes = std::min(pool, state * static_cast<double>(d.max_num_seqs));
    const double kv = pool - b.state_pool_bytes;
    const std::int64_t block = std::max(1, d.block_size);
    if (per_token > 0) {
      const auto blocks = static_cast<std::int64_t>(std::floor(kv / (per_token * static_cast<double>(block))));
      b.kv_tokens = blocks * block;
      b.kv_pool_bytes = static_cast<double>(b.kv_tokens) * per_token;
      b.free_bytes = kv - b.kv_pool_bytes;
      b.reported_kv_tokens = b.kv_tokens;
      b.kv_groups = 1;
      const std::int64_t need = cdiv(in.context, block);
      if (version().kv_tokens_report == "concurrency" && need > 0)
        b.reported_kv_tokens =
            static_cast<std::int64_t>(static_cast<double>(blocks) / static_cast<double>(need) * static_cast<double>(in.context));
      b.max_sequences = need > 0 ? blocks / need : 0;
      b.sequence_capacity = need > 0 ? static_cast<double>(blocks) / static_cast<double>(need) : 0;
      b.max_context_one_user = std::min<std::int64_t>(in.model->max_context, b.kv_tokens);
      if (state > 0) b.max_sequences = std::min<std::int64_t>(b.max_sequences, d.max_num_seqs);
    } else {
      b.kv_pool_bytes = kv;
      b.max_sequences = state > 0 ? d.max_num_seqs : 0;
      b.max_context_one_user = in.model->max_context;
    }
  }

  void grouped_pool(const StageInput& in, const EngineDefaults& d, const std::vector<LayerSpec>& specs, double pool, bool mamba,
                    RankBudget& b) const {
    const auto& v = version();
    // attention page of one token and one layer (the largest attention spec)
    double attn_1 = 0, state_page = 0;
    for (const auto& s : specs) {
      if (s.kind == LayerSpec::Kind::mamba)
        state_page = std::max(state_page, s.state_bytes_per_layer);
      else
        attn_1 = std::max(attn_1, s.bytes_per_token_per_layer);
    }
    std::int64_t block = std::max(1, d.block_size);
    if (mamba && attn_1 > 0) {
      // HybridAttentionMambaModelConfig.verify_and_update_config: raise the attention block to a
      // multiple of the kernel alignment so that one attention page holds one state
      const std::int64_t align = has_mla(*in.model) ? v.mla_hybrid_alignment : v.kernel_block_alignment;
      const auto need = static_cast<std::int64_t>(std::ceil(state_page / (static_cast<double>(align) * attn_1) - 1e-12));
      const std::int64_t attn_block = align * std::max<std::int64_t>(1, need);
      if (d.block_size <= 0 || block < attn_block) block = attn_block;
    }
    const double page = attn_1 > 0 ? attn_1 * static_cast<double>(block) : state_page;
    // groups of equal size: the smallest spec's layer count, or the largest when the largest is
    // within 1.25x of the smallest (fewer padding layers)
    int min_layers = specs.front().layers, max_layers = specs.front().layers;
    for (const auto& s : specs) {
      min_layers = std::min(min_layers, s.layers);
      max_layers = std::max(max_layers, s.layers);
    }
    const int group_size = v.group_size_factor > 0 && max_layers < min_layers * v.group_size_factor ? max_layers : min_layers;
    std::int64_t groups = 0;
    for (const auto& s : specs) groups += cdiv(s.layers, group_size);
    const auto num_blocks = static_cast<std::int64_t>(std::floor(pool / (page * group_size)));
    b.block_size = static_cast<int>(block);
    b.kv_groups = static_cast<int>(groups);
    b.kv_pool_bytes = static_cast<double>(num_blocks) * page * group_size;
    b.free_bytes = pool - b.kv_pool_bytes;
    // tokens: every group's blocks come from the one pool; what the log prints
    b.kv_tokens = groups > 0 ? num_blocks / groups * block : 0;
    b.reported_kv_tokens = v.kv_tokens_report == "blocks" ? num_blocks * block : b.kv_tokens;
    // state blocks one request holds per mamba group (MambaSpec.max_memory_usage_bytes,
    // vllm/v1/kv_cache_interface.py @ v0.15.0 and main 5ac268497): 1 without prefix caching, 2 in
    // "align" mode, one per block of max_model_len in "all" mode (whose chunk-aligned block size,
    // lcm(mamba chunk_size, kernel alignment), is not modelled: the attention block is used)
    const std::string mode = mamba_cache_mode(*in.model, d);
    auto per_request = [&](std::int64_t ctx) {
      std::int64_t need = 0;
      for (const auto& s : specs) {
        const std::int64_t n = cdiv(s.layers, group_size);
        switch (s.kind) {
          case LayerSpec::Kind::full:
            need += n * cdiv(ctx, block);
            break;
          case LayerSpec::Kind::sliding:
          case LayerSpec::Kind::chunked:
            need += n * (cdiv(std::min<std::int64_t>(s.window - 1 + d.max_num_batched_tokens, ctx), block) + 1);
            break;
          case LayerSpec::Kind::mamba:
            need += n * (mode == "all" ? cdiv(in.context, block) : mode == "align" ? 2 : 1);
            break;
        }
      }
      return need;
    };
    const std::int64_t need = per_request(in.context);
    // 0.21 on: "GPU KV cache size" prints int(max_concurrency x max_model_len)
    if (v.kv_tokens_report == "concurrency" && need > 0)
      b.reported_kv_tokens =
          static_cast<std::int64_t>(static_cast<double>(num_blocks) / static_cast<double>(need) * static_cast<double>(in.context));
    b.max_sequences = need > 0 ? num_blocks / need : 0;
    b.sequence_capacity = need > 0 ? static_cast<double>(num_blocks) / static_cast<double>(need) : 0;
    if (mamba) b.max_sequences = std::min<std::int64_t>(b.max_sequences, d.max_num_seqs);
    std::int64_t lo = 0, hi = in.model->max_context;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo + 1) / 2;
      if (per_request(mid) <= num_blocks)
        lo = mid;
      else
        hi = mid - 1;
    }
    b.max_context_one_user = lo;
  }
};

}  // namespace

std::unique_ptr<EngineModel> make_vllm_model(const EngineVersion& v) { return std::make_unique<Vllm>(v); }

}  // namespace k3plan
