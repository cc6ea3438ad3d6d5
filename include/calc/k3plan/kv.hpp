#pragma once
// KV cache (grows per token) and recurrent state (fixed per sequence) for every attention kind, per
// GPU at a given tensor-parallel degree, the way vLLM and SGLang allocate it:
//  - GQA/MHA: 2 x ceil(kv_heads / tp) x head_dim x bytes per token per layer (heads replicate
//    when tp > kv_heads) [vllm/config/model.py get_num_kv_heads].
//  - MLA: (kv_lora_rank + qk_rope_head_dim) x bytes, one copy, replicated on every TP rank
//    [vllm/v1/kv_cache_interface.py MLAAttentionSpec]. DeepSeek sparse attention stores the fp8
//    latent with scales plus bf16 rope (656 B) and an indexer cache of 132 B per token.
//  - Sliding window: capped at the window per sequence.
//  - Compressed (DeepSeek V4): one entry per `compress_ratio` tokens plus a sliding window.
//  - KDA / GDN / Mamba2: conv state (conv_kernel - 1) x channels plus recurrent state, per
//    sequence, split by TP [vllm mamba_utils.py, sglang configs/mamba_utils.py].
#include <cstdint>
#include <k3plan/model.hpp>
#include <string>
#include <vector>

namespace k3plan {

struct KvOptions {
  int tp = 1;
  int dcp = 1;                       // decode context parallel: MLA cache split over dcp ranks
  std::string kv_dtype = "auto";     // auto | bf16 | fp16 | fp8 | fp8_e4m3 | fp8_e5m2 | fp4
  std::string state_dtype = "fp32";  // recurrent state: fp32 (SGLang default, vLLM for KDA) | bf16
  std::string conv_dtype = "auto";   // conv state: auto = model dtype
  int draft_layers = 0;              // speculative-decoding draft layers (MTP/EAGLE) with their own KV
  int first_layer = 0;               // the layers [first_layer, last_layer) of m.layers (a pipeline stage's)
  int last_layer = -1;               // -1: to the last layer
};

// Per-GPU cache cost of the layers of one block kind.
struct LayerKv {
  std::string block;  // block name
  AttnKind kind = AttnKind::gqa;
  int count = 0;
  double bytes_per_token = 0;           // grows with every token (all `count` layers)
  int window = 0;                       // sliding window (tokens), 0 = none
  bool chunked = false;                 // the window is a Llama 4 attention chunk (AttentionBlock::chunked)
  double window_bytes_per_token = 0;    // bytes per token until the window fills
  int compress_ratio = 0;               // one entry per this many tokens, 0 = none
  double compressed_entry_bytes = 0;    // bytes per compressed entry (all `count` layers)
  double state_bytes_per_sequence = 0;  // fixed (linear attention), all `count` layers
  bool draft = false;                   // speculative-decoding draft layers

  // Bytes one sequence of `context` tokens holds on one GPU for these layers.
  double bytes_per_sequence(std::int64_t context) const;
  // Average bytes per token over a sequence, excluding fixed state.
  double average_bytes_per_token(std::int64_t context) const;
};

struct KvProfile {
  std::vector<LayerKv> layers;
  std::string kv_dtype;                 // resolved
  double bytes_per_token = 0;           // unbounded growth, per GPU (full, MLA, compressed average)
  double state_bytes_per_sequence = 0;  // fixed per sequence, per GPU
  double bytes_per_sequence(std::int64_t context) const;
  std::vector<std::string> notes;
};

KvProfile kv_profile(const Model& m, const KvOptions& opt);

// Bytes per element of a KV dtype (fp4 = 0.5 plus e4m3 scale per 16: 0.5625). Throws on unknown.
double kv_dtype_bytes(const std::string& dtype, const Model& m);
std::string resolve_kv_dtype(const std::string& dtype, const Model& m);

}  // namespace k3plan
