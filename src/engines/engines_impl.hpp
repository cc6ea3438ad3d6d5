#pragma once
// Private to src/engines/: the factories and what the two engine models share.
#include <k3plan/engine.hpp>
#include <memory>
#include <optional>

namespace k3plan {

std::unique_ptr<EngineModel> make_vllm_model(const EngineVersion& v);
std::unique_ptr<EngineModel> make_sglang_model(const EngineVersion& v);

// Whether any attention block is MLA (DeepSeek / Kimi latent attention).
bool has_mla(const Model& m);
// Whether any MLA block has a lightning indexer (DeepSeek sparse attention: V3.2, GLM 5).
bool has_dsa(const Model& m);
// Bytes of one element in the dtype the model runs in (4 with --dtype float32, else 2): the
// unquantized weights, the logits and the activations take it.
double model_dtype_bytes(const Model& m);
// Bits per weight of parameter group `g` as it is stored on the GPU (block scales included; the
// model dtype for unquantized groups; `uniform` overrides every group when set).
double weight_bits(const Model& m, ParamGroup g, const std::string& uniform);
// Layers of the same weights kind hold the same weights: the kind is the layer's block and
// whether its MLP is MoE. The stage weights and SGLang's allocator rounding compute one layer per
// kind (a 93-layer model has two or three kinds).
inline int layer_weights_kind(const Model& m, int layer) {
  return m.layers[static_cast<std::size_t>(layer)] * 2 + (m.is_moe_layer(layer) ? 1 : 0);
}
// The tensor-parallel degrees the search tries for `gpus` GPUs: powers of two dividing it, largest
// first (the engines' custom all-reduce and most attention kernels assume a power of two).
std::vector<int> tp_degrees(int gpus);

// NVLS (NVLink SHARP) buffer bytes one rank holds for one NCCL communicator of `local_ranks` GPUs
// in one NVLink domain, as NCCL 2.`nccl_minor` sizes them (src/transport/nvls.cc; each release
// with its lines in docs/engine-sources/nccl-memory.md section 2.1):
//   2.18-2.19  NVLS_NCHANNELS 16 x 2 x (buffSizes[SIMPLE] 4 MiB + memSize 2 MiB) x heads
//   2.20       the collective channel count (comm->nChannels) x 2 x (4 MiB + 2 MiB) x heads
//   2.21-2.22  collective channels x 2 x (NVLS_CHUNKSIZE 128 KiB x NCCL_STEPS 8 + 2 MiB) x heads
//   2.23 on    NVLS channels x 2 x 1 MiB x heads (credits apart, a few KiB); NVLS channels 16,
//              from 2.27 by architecture: SM90 16, SM100 32, SM100 in a multi-node NVLink domain 24
// heads = the communicator's GPUs in the domain (one NVLS head per local rank). 0 when NCCL leaves
// NVLS off: 2 GPUs or fewer, or a GPU without NVLink multicast (ncclNvlsInit). nullopt when the
// release sizes by the collective channel count and the catalogue does not give it for the GPU.
std::optional<double> nvls_buffer_bytes(int nccl_minor, const Gpu& gpu, int local_ranks);

// Refusals every engine applies (degrees, whole nodes, PP depth, EP on a dense model, DCP).
std::vector<Refusal> common_refusals(const Model& m, const Gpu& gpu, const Layout& l, int gpus);

// Per-layer cache specs as the engines' KV managers see them: one entry per distinct layer kind.
struct LayerSpec {
  enum class Kind { full, sliding, chunked, mamba } kind = Kind::full;
  int layers = 0;
  double bytes_per_token_per_layer = 0;  // full / sliding / chunked
  int window = 0;                        // sliding window or chunk (tokens)
  double state_bytes_per_layer = 0;      // mamba-style: conv + recurrent state of one sequence
};
std::vector<LayerSpec> layer_specs(const KvProfile& kv);

}  // namespace k3plan
