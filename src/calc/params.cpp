// Parameter counts from geometry. Conventions (the ones model cards use):
//  - total excludes MTP layers and vision towers (DeepSeek-V3: 671B + 14B MTP = 685B on disk);
//  - active = everything a token touches: non-expert weights, shared experts, k/E of the routed
//    experts, the LM head; the input embedding is a lookup, not a matmul, so it is excluded.
#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <k3plan/error.hpp>
#include <k3plan/params.hpp>

namespace k3plan {

namespace {
double d(std::int64_t v) { return static_cast<double>(v); }
double d(int v) { return static_cast<double>(v); }
}  // namespace

double attention_params(const Model& m, const AttentionBlock& b) {
  const double h = d(m.hidden_size);
  switch (b.kind) {
    case AttnKind::gqa: {
      const double q = d(b.num_heads) * b.head_dim, kv = d(b.num_kv_heads) * b.head_dim, vo = d(b.num_heads) * b.v_head_dim;
      const double vdim = b.k_eq_v ? 0.0 : d(b.num_kv_heads) * b.v_head_dim;  // Gemma 4: V = K, no v_proj
      // the query: h -> q directly, or (Step-3 MFA, q_lora_rank) h -> rank, inter_norm, rank -> q
      const double qproj = b.q_lora_rank > 0 ? h * b.q_lora_rank + b.q_lora_rank + d(b.q_lora_rank) * q : h * q;
      double p = qproj + h * kv + h * vdim + vo * h;
      if (b.qkv_bias) p += q + kv + vdim + h;
      if (b.sinks) p += b.num_heads;
      p += h * b.num_heads * b.output_gate_width;  // Laguna g_proj (no bias)
      return p;
    }
    case AttnKind::mla: {
      const double qk = d(b.qk_nope_head_dim) + b.qk_rope_head_dim;
      double p = 0;
      if (b.q_lora_rank > 0)
        p += h * b.q_lora_rank + b.q_lora_rank + d(b.q_lora_rank) * b.num_heads * qk;
      else
        p += h * b.num_heads * qk;
      p += h * (d(b.kv_lora_rank) + b.qk_rope_head_dim) + b.kv_lora_rank;             // kv_a + norm
      p += d(b.kv_lora_rank) * b.num_heads * (d(b.qk_nope_head_dim) + b.v_head_dim);  // kv_b
      p += d(b.num_heads) * b.v_head_dim * h;                                         // o_proj
      if (b.output_gate) p += h * b.num_heads * b.v_head_dim;                         // sigmoid gate
      if (b.indexer_heads > 0) {  // DSA lightning indexer: wq_b, wk, k_norm, weights_proj
        const double qin = b.q_lora_rank > 0 ? b.q_lora_rank : h;
        p += qin * b.indexer_heads * b.indexer_head_dim + h * b.indexer_head_dim + 2.0 * b.indexer_head_dim + h * b.indexer_heads;
      }
      return p;
    }
    case AttnKind::kda: {
      // Kimi Delta Attention (Kimi Linear modeling code): q, k, v, o projections; short convs on
      // q, k, v; forget gate f (low-rank head_dim, or full rank); output gate g (low-rank);
      // beta projection; A_log and dt_bias per channel; output norm.
      const double proj = d(b.num_heads) * b.head_dim;
      double p = 4 * h * proj + 3 * proj * b.conv_kernel;
      p += b.full_rank_gate ? h * proj : h * b.head_dim + d(b.head_dim) * proj;
      p += h * b.head_dim + d(b.head_dim) * proj;
      p += h * b.num_heads + b.num_heads + proj + b.head_dim;
      return p;
    }
    case AttnKind::gdn: {
      const double qk = d(b.num_k_heads) * b.head_k_dim, v = d(b.num_v_heads) * b.head_v_dim;
      double p = h * (2 * qk + 2 * v) + h * 2.0 * b.num_v_heads;  // in_proj_qkvz, in_proj_ba
      p += (2 * qk + v) * b.conv_kernel + v * h + 2.0 * b.num_v_heads + b.head_v_dim;
      return p;
    }
    case AttnKind::mamba2: {
      const double inner = d(b.num_heads) * b.head_dim, gs = d(b.n_groups) * b.state_size;
      return h * (2 * inner + 2 * gs + b.num_heads) + (inner + 2 * gs) * b.conv_kernel + inner * h + 3.0 * b.num_heads + inner;
    }
    case AttnKind::none:
      return 0;
    case AttnKind::compressed: {
      // DeepSeek V4: low-rank q, one shared K=V head of head_dim, grouped low-rank output
      // (o_groups x o_lora_rank), a compressor per compressed layer and the lightning indexer on
      // ratio-4 layers. The compressor and indexer sizes are approximations (see assumptions).
      const double qdim = d(b.num_heads) * b.head_dim;
      double p = h * b.q_lora_rank + b.q_lora_rank + d(b.q_lora_rank) * qdim;
      p += h * b.head_dim * b.num_kv_heads + b.head_dim;
      if (b.o_lora_rank > 0 && b.o_groups > 0)
        p += qdim * b.o_lora_rank + d(b.o_groups) * b.o_lora_rank * h;
      else
        p += qdim * h;
      if (b.compress_ratio > 0) {
        const double overlap = b.compress_ratio == 4 ? 2.0 : 1.0;
        p += 2 * h * b.head_dim * overlap;  // compressor kv + gate
      }
      if (b.indexer_heads > 0) {
        p += d(b.q_lora_rank) * b.indexer_heads * b.indexer_head_dim + h * b.indexer_heads + 2 * h * b.indexer_head_dim * 2.0;
      }
      if (b.sinks) p += b.num_heads;
      return p;
    }
  }
  return 0;
}

double attention_replicated_params(const Model& m, const AttentionBlock& b) {
  const double h = d(m.hidden_size);
  if (b.kind == AttnKind::mla) {
    double p = h * (b.kv_lora_rank + b.qk_rope_head_dim) + b.kv_lora_rank;
    if (b.q_lora_rank > 0) p += h * b.q_lora_rank + b.q_lora_rank;
    if (b.indexer_heads > 0) p += h * b.indexer_head_dim + h * b.indexer_heads;
    return p;
  }
  if (b.kind == AttnKind::compressed) return h * b.q_lora_rank + h * b.head_dim * b.num_kv_heads;
  // Step-3 MFA: the low-rank query and the K/V projections are one ReplicatedLinear (qkv_proj) and
  // inter_norm, whole on every TP rank; wq and o_proj are split
  if (b.kind == AttnKind::gqa && b.q_lora_rank > 0)
    return h * (b.q_lora_rank + d(b.num_kv_heads) * b.head_dim + (b.k_eq_v ? 0.0 : d(b.num_kv_heads) * b.v_head_dim)) + b.q_lora_rank;
  return 0;
}

namespace {

// One decoder layer's parameters split by group (attention, mlp kinds, norms).
void add_layer(const Model& m, int layer_block, bool moe_layer, std::array<double, kParamGroups>& g, double& routed) {
  const double h = d(m.hidden_size);
  auto at = [&](ParamGroup pg) -> double& { return g[static_cast<std::size_t>(pg)]; };
  at(ParamGroup::attention) += attention_params(m, m.blocks[static_cast<std::size_t>(layer_block)]);
  const auto& blk = m.blocks[static_cast<std::size_t>(layer_block)];
  at(ParamGroup::norms) += blk.has_mlp && blk.kind != AttnKind::none ? 2 * h : h;
  if (!blk.has_mlp) return;
  if (moe_layer) {
    const auto& e = *m.moe;
    const double in = e.latent_size > 0 ? d(e.latent_size) : h;
    // experts use the model's MLP form: gate/up/down, or up/down for relu^2 (Nemotron-H)
    const double per_expert = m.mlp_matrices() * in * d(e.expert_intermediate_size);
    routed += per_expert;
    at(ParamGroup::routed_experts) += per_expert * e.routed_experts;
    at(ParamGroup::shared_experts) += m.mlp_matrices() * h * d(e.shared_intermediate_size);
    at(ParamGroup::router) += h * e.routed_experts + e.routed_experts;  // gate + correction bias
    if (e.latent_size > 0) at(ParamGroup::latent_proj) += 2 * h * e.latent_size + e.latent_size;
  } else {
    at(ParamGroup::dense_mlp) += m.mlp_matrices() * h * d(m.dense_intermediate_size);
  }
}

}  // namespace

ParamCounts count_params(const Model& m) {
  ParamCounts p;
  auto at = [&](ParamGroup pg) -> double& { return p.by_group[static_cast<std::size_t>(pg)]; };
  const double h = d(m.hidden_size), v = d(m.vocab_size);
  at(ParamGroup::embedding) = v * h;
  at(ParamGroup::lm_head) = m.tie_word_embeddings ? 0 : v * h;
  at(ParamGroup::norms) = h;  // final norm
  double routed_one = 0;
  for (int l = 0; l < m.num_layers(); ++l) {
    double r = 0;
    add_layer(m, m.layers[static_cast<std::size_t>(l)], m.is_moe_layer(l), p.by_group, r);
    if (r > 0) routed_one = r;
  }
  p.routed_per_expert_layer = routed_one;
  if (m.mtp_layers > 0) {
    // An MTP module: one decoder layer (the last layer's kind, MoE if the model is) plus the
    // projection of [embedding; hidden] (2h x h) and three norms (embedding, hidden, output).
    std::array<double, kParamGroups> g{};
    double r = 0;
    add_layer(m, m.layers.back(), m.moe.has_value(), g, r);
    // DeepSeek-style checkpoints store the MTP module with its own copy of the embedding and the
    // output head (685B on disk = 671B + 14B MTP for DeepSeek-V3); MiMo's MTP layers use the main
    // model's (mtp_own_embeddings false)
    double one = 2 * h * h + 3 * h + (m.mtp_own_embeddings ? 2 * d(m.vocab_size) * h : 0.0);
    for (double x : g) one += x;
    p.mtp = one * m.mtp_layers;
    at(ParamGroup::mtp) = p.mtp;
  }
  p.vision = m.vision_params;
  p.audio = m.audio_params;
  at(ParamGroup::vision) = p.vision;
  for (int gi = 0; gi < kParamGroups; ++gi) {
    const auto g = static_cast<ParamGroup>(gi);
    if (g == ParamGroup::mtp || g == ParamGroup::vision) continue;
    p.total += p.by_group[static_cast<std::size_t>(gi)];
  }
  p.active = p.total - p[ParamGroup::embedding];
  if (m.moe) {
    const double frac = d(m.moe->experts_per_token) / d(m.moe->routed_experts);
    p.active -= p[ParamGroup::routed_experts] * (1.0 - frac);
  }
  return p;
}

const std::vector<PrecisionFormat>& precision_formats() {
  static const std::vector<PrecisionFormat> f = {
      {"bf16", 16, "2 bytes"},
      {"fp16", 16, "2 bytes"},
      {"fp32", 32, "4 bytes"},
      {"fp8", 8, "1 byte, per-tensor scale"},
      {"fp8-block", 8 + 32.0 / (128 * 128), "1 byte + fp32 scale per 128x128 block (DeepSeek style)"},
      {"int8", 8, "1 byte, per-channel scale (negligible)"},
      {"mxfp4", 4.25, "E2M1 + E8M0 scale per 32 (OCP MX)"},
      {"nvfp4", 4.5, "E2M1 + E4M3 scale per 16 + fp32 per tensor"},
      {"int4", 4, "pure 4 bits, no scales"},
      {"int4-g128", 4 + 16.0 / 128, "4 bits + fp16 scale per 128 (AWQ/GPTQ symmetric)"},
      {"int4-g64", 4 + 16.0 / 64, "4 bits + 16-bit scale per 64"},
      {"int4-g32", 4 + 16.0 / 32, "4 bits + 16-bit scale per 32 (compressed-tensors pack-quantized, Kimi K2 Thinking / K2.5)"},
      // bitsandbytes 4-bit (bitsandbytes functional.quantize_4bit: blocksize 64; with
      // compress_statistics the fp32 absmax per block is itself quantized to 8 bits, with an fp32
      // absmax per 256 blocks): vLLM's in-flight --quantization bitsandbytes uses the latter
      // (model_loader/loader.py BitsAndBytesModelLoader @ v0.5.0.post1: compress_statistics=True, nf4)
      {"nf4", 4 + 32.0 / 64, "4-bit NormalFloat + fp32 absmax per 64 (bitsandbytes, no double quantization)"},
      {"nf4-dq", 4 + 8.0 / 64 + 32.0 / (64 * 256),
       "4-bit NormalFloat + 8-bit absmax per 64 + fp32 per 256 blocks (bitsandbytes double quantization; vLLM --quantization "
       "bitsandbytes in flight)"},
      {"int2", 2, "pure 2 bits, no scales"},
  };
  return f;
}

const PrecisionFormat& precision_format(const std::string& name) {
  std::string_view n = name;  // no copy: this runs for every parameter group of every candidate layout
  if (n == "fp8-block128" || n == "fp8_block") n = "fp8-block";
  if (n == "w4a16" || n == "awq" || n == "gptq") n = "int4-g128";
  if (n == "bitsandbytes" || n == "bnb") n = "nf4-dq";  // what vLLM's in-flight --quantization bitsandbytes stores
  if (n == "bnb-nf4") n = "nf4";
  for (const auto& f : precision_formats())
    if (f.name == n) return f;
  std::vector<std::string> names;
  for (const auto& f : precision_formats()) names.push_back(f.name);
  const auto hint = closest_match(name, names);
  throw InputError(
      fmt::format("unknown precision '{}'{}", name,
                  hint.empty() ? fmt::format(" (known: {})", fmt::join(names, ", ")) : fmt::format("; did you mean '{}'?", hint)));
}

WeightBytes weights_uniform(const ParamCounts& p, const std::string& precision) {
  const double bits = precision_format(precision).bits_per_weight;
  WeightBytes w;
  for (int gi = 0; gi < kParamGroups; ++gi) {
    const auto g = static_cast<ParamGroup>(gi);
    if (g == ParamGroup::mtp || g == ParamGroup::vision) continue;
    w.by_group[static_cast<std::size_t>(gi)] = p.by_group[static_cast<std::size_t>(gi)] * bits / 8;
    w.bytes += w.by_group[static_cast<std::size_t>(gi)];
  }
  return w;
}

WeightBytes weights_as_shipped(const Model& m, const ParamCounts& p) {
  WeightBytes w;
  for (int gi = 0; gi < kParamGroups; ++gi) {
    const auto g = static_cast<ParamGroup>(gi);
    if (g == ParamGroup::mtp || g == ParamGroup::vision) continue;
    // norms and router stay in high precision in every checkpoint we know of
    std::string prec = m.precision_of(g);
    if ((g == ParamGroup::norms) && m.precision.find(g) == m.precision.end()) prec = m.dtype;
    const double bits = precision_format(prec).bits_per_weight;
    w.by_group[static_cast<std::size_t>(gi)] = p.by_group[static_cast<std::size_t>(gi)] * bits / 8;
    w.bytes += w.by_group[static_cast<std::size_t>(gi)];
  }
  return w;
}

}  // namespace k3plan
