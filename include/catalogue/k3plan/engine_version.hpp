#pragma once
// Engine version windows as data: data/engines/vllm.yaml and data/engines/sglang.yaml hold one
// window per stretch of releases that behave alike, each citing the engine file and commit it
// follows. This is the reader and the release-number mapping; what a window's fields mean for
// memory, flags and refusals is the engine models' business (engines/, engine.hpp).
#include <k3plan/parallel.hpp>
#include <map>
#include <string>
#include <vector>

namespace k3plan {

// One version window of one engine, as data/engines/<engine>.yaml states it.
struct EngineVersion {
  Engine engine = Engine::sglang;
  std::string id;      // window name, e.g. "0.11" or "main"
  std::string first;   // first release covered, e.g. "0.11.0"
  std::string last;    // last release covered ("" = open: every later release)
  std::string source;  // engine file(s) @ commit this window follows
  std::string date;    // date of that commit

  // --- vLLM
  double gpu_memory_utilization = 0.9;         // CacheConfig default
  std::string profile = "v1";                  // v0: peak includes weights, profile batch = max_model_len; v1: snapshot increase
  bool cudagraph_in_profile = false;           // CUDA-graph memory estimated and subtracted before the KV pool
  // 0.10.0 on: with no capture sizes given, the largest CUDA-graph capture size is
  // min(2 x max_num_seqs x decode_query_len, 512) (PR #20628; vllm/config/vllm.py
  // VllmConfig._set_cudagraph_sizes @ v0.19.0), so the sizes an engine-config line prints bound
  // max_num_seqs when no args line says it
  bool cudagraph_sizes_follow_seqs = false;
  // V1 profile: bytes per (dummy sequence x vocabulary entry) live at the dummy sampler's peak
  // (v1/worker/gpu_model_runner.py _dummy_sampler_run, v1/sample/): 14 with FlashInfer's top-k /
  // top-p (0.10.x), 38 with the native sort (0.11.1-0.16), 15 fitted on the 0.19 logs (0.17 on:
  // 14 counted + the Triton scratch and the cuBLAS workspace)
  double sampler_bytes_per_entry = 15;
  // the same when the log shows the sampler fell back to the native sort (EngineSettings::
  // sampler_native) in a window whose default is FlashInfer's (0.9.1-0.11.0: 38); 0 = no such case
  double sampler_native_bytes_per_entry = 0;
  std::string kv_tokens_report = "per_group";  // what "GPU KV cache size" prints: blocks | per_group | concurrency
  int kernel_block_alignment = 16;             // hybrid page-size unification rounds the attention block to this
  int mla_hybrid_alignment = 16;               // the same for MLA hybrids (Kimi Linear, K3): 64 in 0.12-0.19
  double group_size_factor = 0;                // hybrid groups: the largest bucket is the group size when max < factor x min (0 = never)
  double cudagraph_estimate_gib = 0;           // subtracted from the pool when cudagraph_in_profile (assumed figure)
  bool hybrid_kv_groups = true;                // hybrid KV cache manager (layers grouped, one shared page pool)
  double non_torch_tp1_gib = 0.25;             // NCCL / custom all-reduce buffers, world size 1
  double non_torch_tp_gib = 2.1;               // TP > 1
  double non_torch_pp_gib = 0.07;              // TP 1 with pipeline stages
  // 0.8.0-0.9.0 (V1): determine_available_memory counts every byte on the device that torch does not
  // hold (mem_get_info total - free - allocated, no start-up baseline), so the CUDA context counts
  // too, which the fitted figures above (increases over a snapshot) leave out
  double non_torch_context_gib = 0;
  // The NCCL release the window's torch pin ships (requirements/cuda.txt torch -> the
  // nvidia-nccl-cu12 that torch wheel requires), and how many NCCL communicators of the TP group
  // are fully connected at init: up to 0.10.x vLLM forces NCCL_CUMEM_ENABLE=0 (env_override.py),
  // which turns NCCL's runtime connect off, so ring, tree and NVLS buffers are all allocated when
  // the communicator is created and count in the profile's non-torch memory; 0 = connected lazily
  // by the first collective of each algorithm (0.11 on, PR #24141), inside the fitted figures.
  // docs/engine-sources/vllm-nontorch.md.
  struct Nccl {
    std::string release;  // "2.21.5"; "" = not stated
    int minor = 0;        // 21 for 2.21.5, parsed once when the window is read (0 = not stated)
    int eager_comms = 0;
  } nccl;
  bool rope_cache_full = true;                 // RoPE cos/sin cache sized by max_position_embeddings
  // MXFP4 MoE weights as the back-end lays them out: per GPU class (sm80 = compute capability
  // below 9, sm90, sm100 = 10.x-11.x, sm120 = 12.x, rocm) the multiples the back-end rounds the
  // expert width per rank and the hidden size up to (Marlin 128 / 256, Triton 64 / 1, FlashInfer
  // 256 / 256...). A class absent = not read for this window: no padding, and said so.
  struct Pad {
    int intermediate = 1, hidden = 1;
  };
  std::map<std::string, Pad> mxfp4_moe_pad;
  // 0.11 on: the fused-MoE scratch buffers persist across layers and calls (modular_kernel.py
  // SharedResizableBuffer, then v1/worker/workspace.py WorkspaceManager from 0.13), so they are
  // still allocated while the profile's sampler runs: the activation peak is their sum.
  bool moe_workspace_persistent = false;
  // 0.9.0 on: the large batch defaults (8192 batched tokens, 1024 sequences for the server) need
  // at least 70 GiB and a device name without "a100" (vllm/engine/arg_utils.py, PR #17885)
  bool batch_defaults_skip_a100 = false;
  // How the V1 batch defaults are chosen: memory (0.8.5 on: the device's memory, above) | name
  // (0.8.4: "h100" / "h200" in the device name -> 8192 / 1024, else 2048 / 256) |
  // name_seqs_1024 (0.8.0-0.8.3: batched tokens by the name, 1024 sequences on every GPU);
  // vllm/engine/arg_utils.py _set_default_args_v1 @ v0.8.0 (966f933ee1), v0.8.4 (dc1b4a6f13)
  // ... | v0 (the V0 engine: 256 sequences, batched tokens from max_model_len; vllm/config.py @
  // v0.6.4.post1)
  std::string batch_defaults = "memory";
  // Rows of the MLA chunked-prefill workspace that exist while the profile runs (0 = built after the
  // KV cache is sized): 0.8.0-0.8.5 build MLACommonMetadataBuilder, which allocates
  // min(max(8 x max_model_len, 4 x max_num_seqs x block_size), this) x head_size model-dtype
  // elements, in GPUModelRunner.__init__ (v1/attention/backends/mla/common.py,
  // v1/worker/gpu_model_runner.py @ v0.8.4); from 0.9.0 initialize_attn_backend builds it after
  // determine_available_memory.
  std::int64_t mla_prefill_workspace_max_rows = 0;
  // What an enabled prefix cache does to the state (mamba-style) layers of a hybrid model
  // (vllm/model_executor/models/config.py MambaModelConfig, vllm/v1/kv_cache_interface.py
  // MambaSpec.max_memory_usage_bytes): "off" = switched off for hybrids (one state block per
  // request, up to 0.11); "all" (0.12-0.14) = kept, as "all" (a state per block), only for the
  // models that declare SupportsMambaPrefixCaching, off for the others; "align" (0.15 on) = those
  // models "all", every other hybrid "align" (two state blocks per request); "align_only" (main,
  // PR #50991) = every hybrid "align".
  std::string mamba_prefix_caching = "off";
  // prefix caching on by default for hybrid models (vllm/engine/arg_utils.py
  // _set_default_chunked_prefill_and_prefix_caching_args: main, PR #50991)
  bool hybrid_prefix_caching_default = false;

  // --- SGLang (docs/engine-sources/sglang.md has each rule with its commit)
  std::string mem_fraction_rule =
      "reserved";                          // by_tp (0.4.0-0.4.5) | by_tp_large (0.4.6-0.4.7) | gpu_class (0.4.8-0.5.2) | reserved (0.5.3+)
  bool prefill_graph_reserve = false;      // 0.5.10+: the prefill (piecewise) CUDA-graph term of the reserve
  double mamba_full_memory_ratio = 0.9;    // --mamba-full-memory-ratio default
  int mamba_no_radix_default_slots = 512;  // max_mamba_cache_size with the radix cache disabled and no cap given
  bool mamba_padding_slot = true;          // 0.5.17+: K = (budget - per_req) // per_req, K + 1 slots allocated
  int mamba_slots_per_request = 3;         // radix cache on: state slots one running request holds (base)
  bool mamba_extra_buffer = true;          // 0.5.8+: auto strategy = extra_buffer (+2 slots with the overlap scheduler)
  // how handle_max_mamba_cache charges speculative decoding's target-verify states: per_slot
  // (0.5.4-0.5.7) | reserve_first (0.5.8-0.5.12) | joint (0.5.13+); src/engines/sglang.cpp
  std::string spec_verify_states = "joint";
  bool latent_moe_replicated = true;       // LatentMoE up/down projections are ReplicatedLinear (bf16)
  bool shared_experts_cloned = false;      // 0.4.6-0.4.6.post5: DeepSeek V3's shared expert cloned tp_size times into the MoE
  bool dsa_fp8_656 = true;                 // 0.5.9+: fp8 DSA cell is 656 B/layer on CUDA (576 before, and on HIP)
  bool mla_copies_bf16_cuda = true;        // 0.4.6.post3+: w_kc / w_vc of a block-fp8 kv_b_proj dequantized to bf16 on CUDA
  bool vlm_mem_fraction_adjust = true;     // adjust_mem_fraction_for_vlm
  double vlm_runner_factor = 1.0;          // ModelRunner's own multiplier for multimodal models (0.95 / 0.90 up to 0.4.9.post2)
  // Architectures (config.json architectures[0]) whose sliding-window layers get the hybrid SWA
  // pool (configs/model_config.py is_hybrid_swa_model's allowlist at the window's commit); every
  // other model's sliding-window layers hold a full-length cache like its global ones.
  std::vector<std::string> hybrid_swa_archs;
  // memory used before the weights load (CUDA context, NCCL, custom all-reduce), GiB, by TP size
  double context_tp1_gib = 1.0;
  double context_tp4_gib = 1.2;  // TP 2-4
  double context_tp8_gib = 3.0;  // TP >= 8
  // TP > 2 on GPUs without NVLink (Gpu::pcie_only), CUDA: GiB of the CUDA total (not of
  // nvidia-smi's, unlike the three above). The custom all-reduce is off and NCCL's ring and tree
  // FIFOs sit in host memory (SHM transport), so only the CUDA context and NCCL's fixed part are on
  // the GPU: 0.34 from the 8 x L4 TP8 v0.2.13 log (CUDA total 21.99 GiB less 'Load weight begin.
  // avail mem=21.65 GB', tests/data/logs/sglang/mixtral-8x7b-instruct-l4-tp8-v0.2.13.log);
  // docs/engine-sources/nccl-memory.md sections 2.2 and 5
  double context_pcie_gib = 0.34;
  double context_rocm_tp1_gib = 0.65;
  double context_rocm_tp8_gib = 4.1;  // TP >= 2 on ROCm

  // --- both engines
  // How the decoder layers are split over pipeline stages when the stage count does not divide
  // them (get_pp_indices, no VLLM_PP_LAYER_PARTITION / SGLANG_PP_LAYER_PARTITION given):
  //   last_takes_rest  every stage L / pp, the last one the rest as well (vLLM up to 0.7,
  //                    vllm/distributed/utils.py @ v0.6.4.post1; SGLang up to 0.5.5,
  //                    python/sglang/srt/distributed/utils.py @ 3e5a73c853)
  //   before_last      one extra layer each on the stages before the last, from the second last
  //                    backwards (vLLM 0.8.0 on: partitions[-i] for i in 2..rest+1, PR #13839)
  //   last_ranks       one extra layer each on the last L % pp stages (SGLang 0.5.6 on: PR #13977,
  //                    2025-11-26; srt/distributed/utils.py @ 1107be1128)
  std::string pp_layer_split = "before_last";
  bool covers(const std::string& release) const;
};

// The windows modelled for `e`, oldest first (read once from the embedded catalogue).
const std::vector<EngineVersion>& engine_versions(Engine e);

// The window that covers `version` (a release number as users write it, "0.10.1.1",
// "0.5.8.post1", or a window id such as "main"; empty or "latest" = the newest window).
// Throws InputError listing the known windows when none covers it.
const EngineVersion& engine_version_for(Engine e, const std::string& version);

}  // namespace k3plan
