// Engine kernel paths per GPU instruction set (include/engines/k3plan/kernel_path.hpp).
#include <fmt/format.h>

#include <cmath>

#include <k3plan/kernel_path.hpp>
#include <k3plan/params.hpp>

#include "engines_impl.hpp"  // has_mla

namespace k3plan {

namespace {

// SGLang v0.5.12 (127b9e32, the image of the InferenceX MI325X and MI355X rows: lmsysorg/sglang:
// v0.5.12-rocm700-mi30x / -mi35x, SGLANG_USE_AITER=1, --attention-backend aiter) gates its fused
// DeepSeek kernels on gfx950: `_use_aiter_gfx95 = _use_aiter and _is_gfx95_supported`
// (python/sglang/srt/models/deepseek_common/utils.py:49). Per MLA decoder layer in a decode step:
//   gfx950 (23): fused add-RMSNorm + FP8 group quant before attention (layers/communicator.py:549);
//     qkv_a GEMM; fused q/kv-a RMSNorm + quant (attention_forward_methods/forward_mla.py:176-205);
//     q_b GEMM; w_kc a8w8 batched GEMM (forward_mla.py:317); fused RoPE + concat + KV-cache write
//     (fused_qk_rope_cat_and_cache_mla, forward_mla.py:503-531); aiter MLA decode + reduce (2);
//     w_vc a8w8 batched GEMM (forward_mla.py:585); fused flatten + FP8 quant (forward_mla.py:604);
//     o_proj GEMM; all-reduce; fused add-RMSNorm + quant before the MoE (communicator.py:594);
//     router GEMM, grouped top-k, shared-expert gate_up GEMM, activation, down GEMM, MoE sort,
//     two fused-MoE stages, shared + routed add, all-reduce (10).
//   gfx942 (+9): the checkpoint's e4m3fn weights are normalised to e4m3fnuz (is_fp8_fnuz), so every
//     `dtype == torch.float8_e4m3fn` fused branch above is skipped: add-RMSNorm and the GEMM's
//     activation quant separately, twice (+2: communicator.py:549 / 594 fall through); q/kv-a
//     RMSNorm (fused_qk_rmsnorm_bf16) and the q_b activation quant (+1); RoPE, two concatenations
//     and the KV-cache write instead of one fused kernel (+3: forward_mla.py:372, 527-528, the
//     backend's set_mla_kv_buffer); w_vc as a bf16 cast, a scale multiply and torch.bmm, then a
//     flatten copy and the o_proj activation quant (+3: forward_mla.py:596-600, 609). The w_kc GEMM
//     takes the same Triton kernel in graph capture on gfx942 (forward_mla.py:317-320), so no extra.
// The per-layer cost is kernel durations and launch gaps, so it is scaled by the kernel count; the
// MoE kernels (aiter fused_moe, FP8 on both) are the same on both.
// Not modelled (a finding, see docs/perf-validation.md): aiter's MLA prefill attention also runs in
// FP8 on gfx950 only (aiter_backend.py:70), and the fused RoPE kernel hands MLA decode an FP8 query
// there (forward_mla.py:525, q_out_dtype = the KV-cache dtype).
KernelPath sglang_path(const Gpu& gpu, const Model& m) {
  KernelPath k;
  if (gpu.vendor != "amd" || !has_mla(m)) return k;
  const double bits = precision_format(m.precision_of(ParamGroup::attention)).bits_per_weight;
  const bool fp8_attention = bits > 4.6 && bits <= 8.6;  // the e4m3fn branches count FP8 weights
  if (gpu.isa == "gfx942" && fp8_attention) {
    k.layer_kernel_ratio =
        static_cast<double>(kSglangMlaLayerKernelsGfx950 + kSglangMlaLayerExtraKernelsGfx942) / kSglangMlaLayerKernelsGfx950;
    k.source = fmt::format(
        "SGLang v0.5.12 on gfx942: the fused DeepSeek MLA kernels are gfx950-only (deepseek_common/utils.py:49 @127b9e32): {} kernels "
        "per layer against {} (per-layer overhead x {:.2f})",
        kSglangMlaLayerKernelsGfx950 + kSglangMlaLayerExtraKernelsGfx942, kSglangMlaLayerKernelsGfx950, k.layer_kernel_ratio);
  }
  return k;
}

// A dense decoder layer the Llama way: full GQA attention (no window, sinks, gate, low-rank query
// or indexer) and a dense MLP in every layer.
bool llama_shaped(const Model& m) {
  if (m.moe || m.blocks.empty()) return false;
  for (const auto& b : m.blocks)
    if (b.kind != AttnKind::gqa || b.sliding_window > 0 || b.chunked || b.sinks || b.k_eq_v || b.q_lora_rank > 0 || b.output_gate ||
        b.output_gate_width > 0 || b.indexer_heads > 0 || !b.has_mlp)
      return false;
  return true;
}

// Hopper (sm90), counted per decoder layer of a graph-captured decode step at TP 8 (read from the
// source, not profiled; the per-kernel list with file:line is docs/engine-sources/kernel-counts.md):
//   fitted path, SGLang DeepSeek-R1 FP8 (BBuf/sglang 65d3b47f, main after v0.5.10.post1; fa3 MLA,
//     DeepGEMM FP8 linears, Triton fused MoE with the shared expert fused, FlashInfer all-reduce +
//     RMSNorm fusion): 34 per MoE layer, 22 per dense layer, (3 x 22 + 58 x 34) / 61 on average.
//   SGLang v0.5.9 (e6ad58e5, main the day before the v0.5.9 image) Llama BF16: two fused_add_rmsnorm,
//     qkv / o / gate_up / down GEMMs, RoPE, KV store, a q copy, FA3 prepare + decode + combine,
//     silu_and_mul, two custom all-reduces: 15 (models/llama.py, flashattention_backend.py).
//   vLLM v0.15.0 (f1764434) Llama BF16 with its default -O2 compile (Inductor fuses add + RMSNorm,
//     RoPE, SiLU x mul; FA3 with precomputed scheduler metadata): 14.
// The per-layer cost is kernel durations and launch gaps, so it scales with the count, the same
// assumption as the gfx942 path above. Not counted: Blackwell, other dense shapes (sliding window,
// q/k norms), TP 1 (two all-reduces fewer in both counts); those keep ratio 1.
KernelPath hopper_dense_path(const std::string& engine, const Gpu& gpu, const Model& m) {
  KernelPath k;
  if (gpu.vendor != "nvidia" || std::abs(gpu.compute_capability - 9.0) > 0.05 || !llama_shaped(m)) return k;
  if (engine != "sglang" && engine != "vllm") return k;
  const double fitted = (3.0 * kSglangDeepseekDenseLayerKernelsSm90 + 58.0 * kSglangDeepseekMoeLayerKernelsSm90) / 61.0;
  const int dense = engine == "sglang" ? kSglangDenseGqaLayerKernelsSm90 : kVllmDenseGqaLayerKernelsSm90;
  k.layer_kernel_ratio = dense / fitted;
  k.source = fmt::format(
      "{} on sm90: a dense GQA layer launches {} kernels per decode step against {:.1f} per layer of the SGLang DeepSeek-R1 FP8 "
      "path the Hopper factors were fitted on (read from source: kernel_path.cpp; per-layer overhead x {:.2f})",
      engine == "sglang" ? "SGLang v0.5.9" : "vLLM v0.15.0", dense, fitted, k.layer_kernel_ratio);
  return k;
}

// Kimi K3's shape: KDA linear-attention and MLA layers with a latent MoE (SGLang's
// models/kimi_k3.py); the counts below are that file's.
bool kimi_k3_shaped(const Model& m) {
  bool kda = false, mla = false;
  for (const auto& b : m.blocks) {
    kda = kda || b.kind == AttnKind::kda;
    mla = mla || b.kind == AttnKind::mla;
  }
  return kda && mla && m.moe && m.moe->latent_size > 0;
}

// Blackwell (compute capability 10.x: B200, B300, GB200, GB300), counted per decoder layer of a
// graph-captured decode step at TP 8 (read from the source, not profiled; the per-kernel lists with
// file:line are in docs/engine-sources/kernel-counts.md, sections (5) and (6)):
//   fitted path, SGLang DeepSeek-R1-0528 (BBuf/sglang 65d3b47f, main after v0.5.10.post1, with the
//     InferenceX dsr1_fp8_b200.sh / dsr1_fp4_b200.sh flags: trtllm_mla attention, flashinfer_trtllm
//     MoE, FlashInfer all-reduce fusion): FP8 32 per MoE layer and 20 per dense one, NVFP4-V2 27
//     and 18; the Blackwell SGLang factors were fitted on 15 rows of each, so their mean.
//   SGLang Kimi K3 (HaiShaw/sglang 4d42deff, main at the v0.5.18 docs bump, models/kimi_k3.py,
//     default flags with K3's fused all-reduce): KDA + MoE 18 (fused KDA decode; merged front GEMM;
//     route + pack + MXFP8 quant in one launch), MLA + MoE 24, the first layer (KDA, dense MLP) 14.
//     Each fusion falls back to more kernels outside its conditions (an fp32 SSM state for the
//     fused KDA decode, small batches for two MoE fusions); --disable-custom-all-reduce gives 22.4
//     per layer instead of 19.5. Not counted: DCP, speculative decoding.
//   vLLM Kimi K3 (vllm/models/kimi_k3/nvidia/ model.py, kda.py, mla.py, latent_moe_runner.py @
//     EmbeddedLLM/vllm 5ac26849, upstream main 2026-08-07, the decode path of PR #50000 aeeb36b1f):
//     no torch.compile for K3 (breakable CUDA graphs, compilation mode NONE), hand-fused kernels:
//     KDA + MoE 21, MLA + MoE 27, the first layer 11 (22.4 on average; the router, the latent down
//     projection and the shared expert are separate GEMMs, routing from logits). vLLM has no
//     Blackwell factors of its own and borrows the SGLang entry, so the same fitted path is the
//     reference. The measured vLLM K3 runs used a pre-merge image that was not read.
// The per-layer cost is kernel durations and launch gaps, so it scales with the count, as for the
// paths above.
KernelPath blackwell_k3_path(const std::string& engine, const Gpu& gpu, const Model& m) {
  KernelPath k;
  const bool sglang = engine == "sglang";
  if ((!sglang && engine != "vllm") || gpu.vendor != "nvidia" || gpu.compute_capability < 9.95 || gpu.compute_capability >= 11.0 ||
      !kimi_k3_shaped(m))
    return k;
  const int kda_moe = sglang ? kSglangKimiK3KdaMoeLayerKernelsSm100 : kVllmKimiK3KdaMoeLayerKernelsSm100;
  const int kda_dense = sglang ? kSglangKimiK3KdaDenseLayerKernelsSm100 : kVllmKimiK3KdaDenseLayerKernelsSm100;
  const int mla_moe = sglang ? kSglangKimiK3MlaMoeLayerKernelsSm100 : kVllmKimiK3MlaMoeLayerKernelsSm100;
  double kernels = 0;
  for (int i = 0; i < m.num_layers(); ++i) {
    const auto& b = m.blocks[static_cast<std::size_t>(m.layers[static_cast<std::size_t>(i)])];
    const bool moe = m.is_moe_layer(i);
    if (b.kind == AttnKind::kda)
      kernels += moe ? kda_moe : kda_dense;
    else if (b.kind == AttnKind::mla && moe)
      kernels += mla_moe;
    else
      return k;  // a layer kind the count does not cover
  }
  const double layers = m.num_layers();
  const double per_layer = kernels / layers;
  const double fp8 = (3.0 * kSglangDeepseekFp8DenseLayerKernelsSm100 + 58.0 * kSglangDeepseekFp8MoeLayerKernelsSm100) / 61.0;
  const double fp4 = (3.0 * kSglangDeepseekFp4DenseLayerKernelsSm100 + 58.0 * kSglangDeepseekFp4MoeLayerKernelsSm100) / 61.0;
  const double fitted = (fp8 + fp4) / 2;
  k.layer_kernel_ratio = per_layer / fitted;
  k.source = fmt::format(
      "{} on sm100: Kimi K3 launches {:.1f} kernels per layer per decode step against {:.1f} per layer of the SGLang DeepSeek-R1 "
      "FP8 / NVFP4 paths the Blackwell factors were fitted on (read from source: kernel_path.cpp; per-layer overhead x {:.2f})",
      sglang ? "SGLang v0.5.18 (models/kimi_k3.py)" : "vLLM main of 2026-08 (models/kimi_k3/nvidia, PR #50000)", per_layer, fitted,
      k.layer_kernel_ratio);
  return k;
}

}  // namespace

KernelPath kernel_path(const std::string& engine, const Gpu& gpu, const Model& m) {
  if (KernelPath k = hopper_dense_path(engine, gpu, m); !k.source.empty()) return k;
  if (KernelPath k = blackwell_k3_path(engine, gpu, m); !k.source.empty()) return k;
  if (engine == "sglang") return sglang_path(gpu, m);
  return {};
}

}  // namespace k3plan
