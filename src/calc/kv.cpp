#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <k3plan/error.hpp>
#include <k3plan/kv.hpp>

namespace k3plan {

namespace {
double d(std::int64_t v) { return static_cast<double>(v); }
int ceil_div(int a, int b) { return (a + b - 1) / b; }

double state_dtype_bytes(const std::string& s, const Model& m) {
  if (s == "fp32" || s == "float32") return 4;
  if (s == "bf16" || s == "fp16" || s == "bfloat16" || s == "float16") return 2;
  if (s == "auto") return m.dtype == "fp32" ? 4 : 2;
  const auto hint = closest_match(s, {"fp32", "bf16", "fp16", "auto"});
  throw InputError(fmt::format("unknown state dtype '{}'{}", s,
                               hint.empty() ? " (use fp32, bf16, fp16 or auto)" : fmt::format("; did you mean '{}'?", hint)));
}
}  // namespace

std::string resolve_kv_dtype(const std::string& dtype, const Model& m) {
  if (dtype == "auto") return m.dtype;
  if (dtype == "bfloat16") return "bf16";
  if (dtype == "float16" || dtype == "half") return "fp16";
  return dtype;
}

double kv_dtype_bytes(const std::string& dtype, const Model& m) {
  const std::string d_ = resolve_kv_dtype(dtype, m);
  if (d_ == "bf16" || d_ == "fp16") return 2;
  if (d_ == "fp32") return 4;
  if (d_ == "fp8" || d_ == "fp8_e4m3" || d_ == "fp8_e5m2") return 1;
  if (d_ == "fp4" || d_ == "nvfp4") return 0.5 + 1.0 / 16;  // packed e2m1 + e4m3 scale per 16 (vLLM NVFP4 KV)
  const auto hint = closest_match(dtype, {"auto", "bf16", "fp16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp4"});
  throw InputError(
      fmt::format("unknown KV cache dtype '{}'{}", dtype,
                  hint.empty() ? " (use auto, bf16, fp16, fp8, fp8_e4m3, fp8_e5m2 or fp4)" : fmt::format("; did you mean '{}'?", hint)));
}

double LayerKv::bytes_per_sequence(std::int64_t context) const {
  double b = bytes_per_token * d(context) + state_bytes_per_sequence;
  if (window > 0) b += window_bytes_per_token * d(std::min<std::int64_t>(context, window));
  if (compress_ratio > 0) b += compressed_entry_bytes * d((context + compress_ratio - 1) / compress_ratio);
  return b;
}

double LayerKv::average_bytes_per_token(std::int64_t context) const {
  return context > 0 ? (bytes_per_sequence(context) - state_bytes_per_sequence) / d(context) : 0;
}

double KvProfile::bytes_per_sequence(std::int64_t context) const {
  double b = 0;
  for (const auto& l : layers) b += l.bytes_per_sequence(context);
  return b;
}

namespace {

LayerKv block_kv(const Model& m, const AttentionBlock& b, const KvOptions& o, double elem, const std::string& requested,
                 std::vector<std::string>& notes) {
  LayerKv k;
  k.block = b.name;
  k.kind = b.kind;
  const int tp = o.tp;
  const double conv_b = state_dtype_bytes(o.conv_dtype, m);
  const double state_b = state_dtype_bytes(o.state_dtype, m);
  switch (b.kind) {
    case AttnKind::gqa: {
      const int heads = ceil_div(b.num_kv_heads, tp);  // replicate when tp > kv_heads
      const double per_token = heads * (d(b.head_dim) + b.v_head_dim) * elem;
      if (b.sliding_window > 0) {
        k.window = b.sliding_window;
        k.chunked = b.chunked;
        k.window_bytes_per_token = per_token;
      } else {
        k.bytes_per_token = per_token;
      }
      break;
    }
    case AttnKind::mla: {
      // one latent per token, replicated on every TP rank (not divided by tp)
      const int dim = b.kv_lora_rank + b.qk_rope_head_dim;
      if (b.indexer_heads > 0) {
        // DeepSeek sparse attention: "auto"/fp8 become fp8_ds_mla = 512 B fp8 latent + 16 B fp32
        // scales (one per 128) + 128 B bf16 rope = 656 B; the indexer keeps fp8 keys + one fp32
        // scale per 128 = 132 B [vllm flashmla_sparse.py; deepseek_v2.py Indexer].
        // vLLM DeepseekV32ForCausalLM.verify_and_update_config: "auto" and "fp8*" -> fp8_ds_mla;
        // an explicit bf16 keeps the plain 576-wide latent
        const bool bf16 = requested == "bf16" || requested == "bfloat16" || requested == "fp16";
        const bool ds_fp8 = !bf16;
        const double latent = ds_fp8 ? b.kv_lora_rank + b.kv_lora_rank / 128.0 * 4 + b.qk_rope_head_dim * 2.0 : dim * 2.0;
        const double indexer = b.indexer_head_dim + b.indexer_head_dim / 128.0 * 4;
        k.bytes_per_token = latent + indexer;
        if (ds_fp8)
          notes.push_back(
              fmt::format("{}: sparse MLA cache in fp8_ds_mla layout (656 B) plus indexer keys (132 B) per token per layer", b.name));
      } else {
        k.bytes_per_token = dim * elem;
      }
      k.bytes_per_token /= o.dcp;  // DCP interleaves each sequence's tokens over the dcp ranks
      break;
    }
    case AttnKind::compressed: {
      // DeepSeek V4: a sliding window of full entries plus one compressed entry per ratio tokens
      // (shared K=V head), and on ratio-4 layers the indexer's compressed keys.
      const int heads = ceil_div(b.num_kv_heads, tp);
      k.window = b.sliding_window;
      k.window_bytes_per_token = heads * d(b.head_dim) * elem;
      if (b.compress_ratio > 0) {
        k.compress_ratio = b.compress_ratio;
        k.compressed_entry_bytes = heads * d(b.head_dim) * elem + (b.indexer_heads > 0 ? b.indexer_head_dim * elem : 0.0);
      }
      break;
    }
    case AttnKind::kda: {
      const int heads = ceil_div(b.num_heads, tp);
      const double channels = 3.0 * heads * b.head_dim;  // q, k, v short convolutions
      k.state_bytes_per_sequence = (b.conv_kernel - 1) * channels * conv_b + d(heads) * b.head_dim * b.head_dim * 4.0;
      // KDA's recurrent state is fp32 in both engines (vLLM kda_state_dtype); --state-dtype bf16 halves it.
      if (o.state_dtype != "fp32")
        k.state_bytes_per_sequence = (b.conv_kernel - 1) * channels * conv_b + d(heads) * b.head_dim * b.head_dim * state_b;
      break;
    }
    case AttnKind::gdn: {
      const int kh = ceil_div(b.num_k_heads, tp), vh = ceil_div(b.num_v_heads, tp);
      const double conv_dim = 2.0 * kh * b.head_k_dim + d(vh) * b.head_v_dim;
      k.state_bytes_per_sequence = (b.conv_kernel - 1) * conv_dim * conv_b + d(vh) * b.head_v_dim * b.head_k_dim * state_b;
      break;
    }
    case AttnKind::none:
      break;
    case AttnKind::mamba2: {
      const int heads = ceil_div(b.num_heads, tp);
      const int groups = std::max(1, ceil_div(b.n_groups, tp));
      const double conv_dim = d(heads) * b.head_dim + 2.0 * groups * b.state_size;
      k.state_bytes_per_sequence = (b.conv_kernel - 1) * conv_dim * conv_b + d(heads) * b.head_dim * b.state_size * state_b;
      break;
    }
  }
  return k;
}

}  // namespace

KvProfile kv_profile(const Model& m, const KvOptions& o) {
  if (o.tp < 1 || o.tp > 4096) throw InputError(fmt::format("--tp {}: must be between 1 and 4096", o.tp));
  if (o.dcp < 1 || o.dcp > o.tp * 64) throw InputError(fmt::format("--dcp {}: must be between 1 and 64 x TP", o.dcp));
  if (o.draft_layers < 0 || o.draft_layers > 64)
    throw InputError(fmt::format("--draft-layers {}: must be between 0 and 64", o.draft_layers));
  KvProfile p;
  p.kv_dtype = resolve_kv_dtype(o.kv_dtype, m);
  const double elem = kv_dtype_bytes(o.kv_dtype, m);
  state_dtype_bytes(o.state_dtype, m);
  state_dtype_bytes(o.conv_dtype, m);
  const int n_layers = static_cast<int>(m.layers.size());
  const int first = std::clamp(o.first_layer, 0, n_layers);
  const int last = o.last_layer < 0 ? n_layers : std::clamp(o.last_layer, first, n_layers);
  // an asked range that holds no layer (also first_layer past the end with last_layer -1)
  if (first >= last && (o.first_layer != 0 || o.last_layer >= 0))
    throw InputError(fmt::format("kv_profile: layers [{}, {}) of {} hold no layer", o.first_layer, o.last_layer, m.id));
  const auto stage_layers = std::span<const int>(m.layers).subspan(static_cast<std::size_t>(first), static_cast<std::size_t>(last - first));
  std::vector<int> counts(m.blocks.size(), 0);
  for (int l : stage_layers) ++counts[static_cast<std::size_t>(l)];
  for (std::size_t i = 0; i < m.blocks.size(); ++i) {
    if (counts[i] == 0) continue;
    LayerKv one = block_kv(m, m.blocks[i], o, elem, o.kv_dtype, p.notes);
    one.count = counts[i];
    one.bytes_per_token *= counts[i];
    one.window_bytes_per_token *= counts[i];
    one.compressed_entry_bytes *= counts[i];
    one.state_bytes_per_sequence *= counts[i];
    p.layers.push_back(one);
  }
  if (o.draft_layers > 0) {
    // Draft layers (MTP / EAGLE) keep their own cache, one layer of the model's main attention kind.
    const AttentionBlock* main = nullptr;
    for (int l : stage_layers) {
      const auto& b = m.blocks[static_cast<std::size_t>(l)];
      if (!b.is_linear() && b.sliding_window == 0) main = &b;
    }
    if (!main) main = &m.blocks[static_cast<std::size_t>(stage_layers.back())];
    LayerKv dk = block_kv(m, *main, o, elem, o.kv_dtype, p.notes);
    dk.block = "draft (" + main->name + ")";
    dk.draft = true;
    dk.count = o.draft_layers;
    dk.bytes_per_token *= o.draft_layers;
    dk.window_bytes_per_token *= o.draft_layers;
    dk.compressed_entry_bytes *= o.draft_layers;
    dk.state_bytes_per_sequence *= o.draft_layers;
    p.layers.push_back(dk);
  }
  for (const auto& l : p.layers) {
    p.bytes_per_token += l.bytes_per_token + (l.compress_ratio > 0 ? l.compressed_entry_bytes / l.compress_ratio : 0.0);
    p.state_bytes_per_sequence += l.state_bytes_per_sequence;
  }
  // notes are per block; keep them unique
  std::sort(p.notes.begin(), p.notes.end());
  p.notes.erase(std::unique(p.notes.begin(), p.notes.end()), p.notes.end());
  return p;
}

}  // namespace k3plan
