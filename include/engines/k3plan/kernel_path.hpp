#pragma once
// The kernel path an engine takes for a model on a GPU, where it differs from the fused path the
// speed model's per-layer overhead was fitted on (see KernelPath in perf.hpp). Counted from the
// engines' source, never fitted: each path names the file and commit it was read from.
#include <k3plan/gpu.hpp>
#include <k3plan/model.hpp>
#include <k3plan/perf.hpp>
#include <string>

namespace k3plan {

// Kernels SGLang's DeepSeek MLA decoder layer launches in a decode step (fp8 block-quantised
// attention, aiter attention back-end, CUDA/HIP graph), on the gfx950 fused path and the extra
// ones on gfx942 (CDNA 3); kernel_path() uses their ratio.
constexpr int kSglangMlaLayerKernelsGfx950 = 23;
constexpr int kSglangMlaLayerExtraKernelsGfx942 = 9;

// Kernels per decoder layer in a CUDA-graph decode step at TP > 1 on Hopper (sm90), read from the
// engines' source (src/engines/kernel_path.cpp): DeepSeek-R1 FP8 on SGLang, the path the Hopper
// factors were fitted on (MoE layers and the first_k_dense_replace dense ones), and a dense
// Llama-shaped layer in BF16 on SGLang and on vLLM.
constexpr int kSglangDeepseekMoeLayerKernelsSm90 = 34;
constexpr int kSglangDeepseekDenseLayerKernelsSm90 = 22;
constexpr int kSglangDenseGqaLayerKernelsSm90 = 15;
constexpr int kVllmDenseGqaLayerKernelsSm90 = 14;

// Kernels per decoder layer in a CUDA-graph decode step at TP8 on Blackwell (sm100 / sm103), read
// from SGLang's source (docs/engine-sources/kernel-counts.md, section (5)): DeepSeek-R1-0528 with
// the InferenceX B200 flags, the path the Blackwell SGLang factors were fitted on (15 FP8 rows and
// 15 NVFP4 rows: per MoE layer and per first_k_dense_replace dense layer), and Kimi K3
// (models/kimi_k3.py, default flags: a KDA layer with its MoE, an MLA layer with its MoE, the KDA
// layer with the dense MLP); vLLM borrows the SGLang Blackwell factors, so its K3 count is set
// against the same fitted path.
constexpr int kSglangDeepseekFp8MoeLayerKernelsSm100 = 32;
constexpr int kSglangDeepseekFp8DenseLayerKernelsSm100 = 20;
constexpr int kSglangDeepseekFp4MoeLayerKernelsSm100 = 27;
constexpr int kSglangDeepseekFp4DenseLayerKernelsSm100 = 18;
constexpr int kSglangKimiK3KdaMoeLayerKernelsSm100 = 18;
constexpr int kSglangKimiK3MlaMoeLayerKernelsSm100 = 24;
constexpr int kSglangKimiK3KdaDenseLayerKernelsSm100 = 14;
// vLLM's Kimi K3 (vllm/models/kimi_k3/nvidia/, PR #50000): the same three layer kinds (section (6)).
constexpr int kVllmKimiK3KdaMoeLayerKernelsSm100 = 21;
constexpr int kVllmKimiK3MlaMoeLayerKernelsSm100 = 27;
constexpr int kVllmKimiK3KdaDenseLayerKernelsSm100 = 11;

// engine: sglang | vllm | trt | atom. Paths not counted return the defaults (ratio 1, BF16 prefill
// attention) with an empty source.
KernelPath kernel_path(const std::string& engine, const Gpu& gpu, const Model& m);

}  // namespace k3plan
