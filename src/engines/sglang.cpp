// SGLang as its code does it, per version window (data/engines/sglang.yaml). Sources, read at the
// commits the windows cite (docs/engine-sources/sglang.md has the detail):
//  - mem_fraction_static default: python/sglang/srt/server_args.py _handle_gpu_memory_settings
//    (0.5 on: reserved memory from chunked_prefill_size, cuda_graph_max_bs, TP x PP, DP attention;
//    0.4: a table by TP size), adjust_mem_fraction_for_vlm for multimodal models.
//  - KV pool: python/sglang/srt/model_executor/model_runner.py profile_max_num_token:
//    rest = free_after_weights - free_at_init x (1 - mem_fraction_static) (min over ranks);
//    max_total_num_tokens = rest // cell_size, cell_size over the full-attention layers.
//  - hybrid linear-attention models (Mamba2, GDN, KDA): handle_max_mamba_cache splits `rest`
//    between the state pool and the KV pool by mamba_full_memory_ratio (state : kv = r : 1); with
//    the radix cache disabled the state pool holds max_running_requests (default 512) slots; the
//    state slots cap the running requests.
//  - running requests: scheduler max_running_requests = max_total_num_tokens // 2 unless set,
//    capped by the request pool.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <k3plan/budget.hpp>
#include <k3plan/engine_log.hpp>
#include <k3plan/units.hpp>
#include <limits>
#include <regex>
#include <vector>

#include "engines_impl.hpp"

namespace k3plan {

namespace {

bool fp8_block(const std::string& p) { return p == "fp8-block"; }

// What torch's caching allocator adds to a weight tensor of `bytes` (c10/cuda/CUDACachingAllocator.cpp,
// the same hipified on ROCm: kMinLargeAlloc 10 MiB, kRoundLarge 2 MiB): an allocation of 10 MiB or
// more gets a segment of its own, rounded up to a multiple of 2 MiB; the smaller ones are packed
// into shared 2 MiB / 20 MiB segments (0 here). Weights are created one parameter at a time in
// model __init__ and never freed, so the rounding stays in use, and SGLang's "Load weight end ...
// mem usage" is the drop in free memory across load_model (torch.cuda.empty_cache + mem_get_info in
// utils.get_available_gpu_memory, model_runner.py load_model @ v0.4.6.post2, 9858113c3; the same
// at v0.4.3.post2 and v0.5.9; SGLang sets no PYTORCH_CUDA_ALLOC_CONF expandable_segments), so it
// counts the rounding too.
double allocator_slack(double bytes) {
  constexpr double mib = 1024.0 * 1024.0, large = 10 * mib, round = 2 * mib;
  if (bytes < large) return 0;
  return std::ceil(bytes / round - 1e-9) * round - bytes;
}

int nodes_for(const Gpu& g, int gpus) { return gpus <= g.gpus_per_node ? 1 : (gpus + g.gpus_per_node - 1) / g.gpus_per_node; }

// SGLang multimodal wrappers that expose start_layer / end_layer (a property or an attribute of
// the class or a base) at HaiShaw/sglang 0077f84d, python/sglang/srt/models/: their pipeline stages
// size the KV pool by their own layers (see fill_stage).
bool wrapper_knows_its_layers(const std::string& architecture) {
  static const char* const kArchs[] = {"Qwen3VLForConditionalGeneration",   "Qwen3VLMoeForConditionalGeneration",
                                       "Qwen3_5ForConditionalGeneration",   "Qwen3_5MoeForConditionalGeneration",
                                       "KimiK25ForConditionalGeneration",   "KimiK3ForConditionalGeneration",
                                       "MiniMaxM3SparseForConditionalGeneration"};
  for (const char* a : kArchs)
    if (architecture == a) return true;
  return false;
}

class Sglang final : public EngineModel {
 public:
  using EngineModel::EngineModel;
  Engine engine() const override { return Engine::sglang; }
  const char* display_name() const override { return "SGLang"; }

  // DP attention partitions the TP group: the instance is TP x PP GPUs
  int gpus(const Layout& l) const override {
    const long long n = 1LL * l.tp * l.pp;
    return n > 1000000000LL ? 1000000000 : static_cast<int>(n);
  }
  int attention_tp(const Layout& l) const override { return l.dp_attention ? std::max(1, l.tp / std::max(1, l.dp)) : l.tp; }
  int moe_group(const Layout& l) const override { return l.tp; }
  int kv_instances(const Layout& l) const override { return l.dp_attention ? l.dp : 1; }
  Layout effective_layout(const Model&, Layout l, bool) const override { return l; }

  std::vector<Refusal> refusals(const Model& m, const Gpu& gpu, const Layout& l) const override {
    auto r = common_refusals(m, gpu, l, gpus(l));
    if (!r.empty() && r.front().rule == "layout/degree") return r;
    const int heads = m.attention_heads();
    const int nodes = nodes_for(gpu, gpus(l));
    const int attn_tp = attention_tp(l);
    if (l.dp_attention && l.tp % l.dp != 0)
      r.push_back({"engine/dp-attention-tp", "parallel.dp",
                   fmt::format("tp_size ({}) must be divisible by dp_size ({}) with DP attention", l.tp, l.dp)});
    else if (attn_tp > 0 && heads % attn_tp != 0)
      r.push_back({"engine/tp-heads", "parallel.tp",
                   fmt::format("number of attention heads ({}) must be divisible by the attention TP size ({})", heads, attn_tp)});
    if (l.tp % l.ep != 0)
      r.push_back({"engine/ep-tp", "parallel.ep", fmt::format("tp_size {} must be divisible by ep_size {}", l.tp, l.ep)});
    if (l.dp > 1 && nodes > 1 && !l.dp_attention)
      r.push_back({"engine/dp-multinode", "parallel.dp", "multi-node data parallel is not supported unless dp attention!"});
    if (l.dp > 1 && !l.dp_attention)
      r.push_back({"engine/dp-replicas", "parallel.dp",
                   "SGLang --dp-size without --enable-dp-attention runs separate replicas; plan them as separate instances"});
    if ((l.tp * l.pp) % nodes != 0) r.push_back({"engine/nodes-tp", "nnodes", "tp_size must be divisible by number of nodes"});
    const bool moe_fp8_block = m.moe && fp8_block(m.precision_of(ParamGroup::routed_experts));
    if (moe_fp8_block && l.tp % l.ep == 0) {
      const int moe_tp = l.tp / l.ep;
      const auto inter = m.moe->expert_intermediate_size;
      if (inter % moe_tp != 0 || (inter / moe_tp) % 128 != 0)
        r.push_back({"engine/fp8-block", "parallel.tp",
                     fmt::format("For quantized MoE models, please make sure (moe_intermediate_size={} / moe_tp_size={}) % "
                                 "weight_block_size_n=128 == 0",
                                 inter, moe_tp)});
    }
    return r;
  }

  std::vector<Layout> layout_candidates(const Model& m, int n) const override {
    std::vector<Layout> out;
    for (int tp : tp_degrees(n)) {
      Layout l;
      l.tp = tp;
      l.pp = n / tp;
      if (m.moe) {
        l.ep = tp;
        while (l.ep > 1 && (m.moe->routed_experts % l.ep != 0 || tp % l.ep != 0)) --l.ep;
      }
      out.push_back(l);
      if (auto d = with_dcp(m, l)) out.push_back(*d);
      if (m.moe && l.ep != 1) {
        Layout t = l;
        t.ep = 1;
        out.push_back(t);
      }
    }
    return out;
  }

  // DP attention (--enable-dp-attention --dp N) with the experts spread over every GPU of an MoE model
  std::vector<Layout> search_layout_candidates(const Model& m, int n) const override {
    if (!m.moe || n <= 1) return {};
    Layout d;
    d.tp = n;
    d.dp = n;
    d.ep = n;
    d.dp_attention = true;
    return {d};
  }

  // server_args: chunked_prefill_size and cuda_graph_max_bs by GPU memory
  static std::int64_t default_chunked_prefill(const Gpu& gpu) {
    const double gib = gpu.memory_reported_mib.value / 1024;
    if (gib < 35) return 2048;
    if (gib < 60) return 4096;
    if (gib < 160) return 8192;
    return 16384;
  }
  static int default_cuda_graph_max_bs(const Gpu& gpu, int tp) {
    const double gib = gpu.memory_reported_mib.value / 1024;
    if (gib < 20) return 8;
    if (gib < 35) return tp < 4 ? 24 : 80;
    if (gib < 60) return tp < 4 ? 32 : 160;
    if (gib < 160) return tp < 4 ? 256 : 512;
    return 512;
  }

  static bool on_rocm(const Gpu& gpu) { return gpu.vendor == "amd"; }

  // Prefill CUDA-graph token sizes up to `max` (server_args piecewise_cuda_graph_tokens).
  static int prefill_graph_sizes(std::int64_t max) {
    int n = 0;
    auto range = [&](std::int64_t from, std::int64_t to, std::int64_t step) {
      for (std::int64_t x = from; x <= to && x <= max; x += step) ++n;
    };
    range(4, 32, 4);
    range(48, 256, 16);
    range(288, 512, 32);
    range(576, 1024, 64);
    range(1280, 4096, 256);
    range(4608, max, 512);
    return n;
  }

  double default_mem_fraction(const Model& m, const Gpu& gpu, const Layout& l, std::int64_t chunked, int cgbs) const {
    const double gpu_mem = gpu.memory_reported_mib.value;  // MiB, as nvidia-smi / rocminfo report it
    const auto& rule = version().mem_fraction_rule;
    const int tp = l.tp, pp = l.pp, par = l.tp * l.pp;
    auto table = [](int n) { return n >= 16 ? 0.79 : n >= 8 ? 0.81 : n >= 4 ? 0.85 : n >= 2 ? 0.87 : 0.88; };
    double f = 0;
    if (rule == "by_tp") {
      f = table(tp);  // 0.4.0-0.4.5 ServerArgs.__post_init__
    } else if (rule == "by_tp_large") {
      // 0.4.6-0.4.7: the table on TP x PP up to 80 GiB, 0.88 above; more than 96 GiB keeps 18 GiB
      f = gpu_mem <= 81920 ? table(par) : 0.88;
      if (gpu_mem > 96 * 1024) f = std::min(f + 48 * 1024 * (1 - f) / gpu_mem, (gpu_mem - 18 * 1024) / gpu_mem);
    } else if (rule == "gpu_class") {
      // 0.4.8-0.5.2: reserved MiB by GPU class
      double reserved = gpu_mem < 35 * 1024    ? (2.8 + par / 10.0) * 1024
                        : gpu_mem < 90 * 1024  ? (9.5 + par / 2.0) * 1024
                        : gpu_mem < 160 * 1024 ? (12 + par / 2.0) * 1024
                                               : 32 * 1024;
      if (l.dp_attention) reserved += 4 * 1024;
      f = std::round((gpu_mem - reserved) / gpu_mem * 1000) / 1000;
    } else {
      // 0.5.3 on: _handle_gpu_memory_settings, reserved memory in MiB
      double reserved = 512 + static_cast<double>(std::max<std::int64_t>(chunked, 2048)) * 1.5 + cgbs * 2.0 + tp * pp / 8.0 * 1024;
      if (l.dp_attention) {
        reserved += cgbs * l.dp * 3.0;
        if (cgbs > 300) reserved += cgbs * l.dp * 1.5;
      }
      // prefill (piecewise) CUDA graphs, 0.5.10 on; off with DP attention, PP, multimodal models
      if (version().prefill_graph_reserve && !l.dp_attention && pp == 1 && m.vision_params <= 0)
        reserved += has_mla(m) ? 1536 : 8.0 * prefill_graph_sizes(chunked);
      if (gpu_mem > 60 * 1024) reserved = std::max(reserved, 10.0 * 1024);
      f = std::round((gpu_mem - reserved) / gpu_mem * 1000) / 1000;
    }
    // adjust_mem_fraction_for_vlm: f x 0.95 x clamp(1 - 0.1 (ratio - 1), 0.8, 1.05), ratio = the
    // vision tower's layers x hidden^2 against ViT-L/14 (24 x 1024^2); from its parameters here
    // (about 12 x layers x hidden^2)
    if (version().vlm_mem_fraction_adjust && m.vision_params > 0) {
      const double ratio = m.vision_params / (12.0 * 24 * 1024 * 1024);
      f *= 0.95 * std::clamp(1 - 0.1 * (ratio - 1), 0.8, 1.05);
    }
    return f;
  }

  EngineDefaults defaults(const Model& m, const Gpu& gpu, const Layout& l, const EngineSettings& s,
                          std::int64_t users_per_instance, std::int64_t) const override {
    EngineDefaults d;
    d.max_num_batched_tokens = s.chunked_prefill_size > 0     ? s.chunked_prefill_size
                               : s.max_num_batched_tokens > 0 ? s.max_num_batched_tokens
                                                              : default_chunked_prefill(gpu);
    d.cuda_graph_max_bs = s.cuda_graph_max_bs > 0 ? s.cuda_graph_max_bs : default_cuda_graph_max_bs(gpu, l.tp);
    d.memory_fraction =
        s.mem_fraction_static > 0 ? s.mem_fraction_static : default_mem_fraction(m, gpu, l, d.max_num_batched_tokens, d.cuda_graph_max_bs);
    d.max_num_seqs = s.max_num_seqs > 0 ? s.max_num_seqs : std::max<std::int64_t>(users_per_instance, 1);
    d.block_size = s.page_size > 0 ? s.page_size : 1;
    // DeepSeek sparse attention (V3.2, GLM 5): server_args.py sets page_size 64 on CUDA and an fp8
    // KV cache on compute capability 10 and above when none is given (efbc687c2 "Support DeepSeek
    // V3.2 Exp", 2025-10-06; _set_default_dsa_kv_cache_dtype on main 65d3b47f, 2026-06-08)
    if (has_dsa(m) && !on_rocm(gpu)) {
      if (s.page_size <= 0) d.block_size = 64;
      if ((s.kv_dtype.empty() || s.kv_dtype == "auto") && gpu.compute_capability >= 10) d.kv_dtype = "fp8_e4m3";
    }
    return d;
  }

  // Memory in use when ModelRunner.load_model logs "Load weight begin. avail mem" (free memory,
  // of the total torch.cuda.mem_get_info reports). The window's figures are the device total
  // nvidia-smi / rocm-smi prints less that free memory (data/engines/sglang.yaml), so the part of
  // that total the driver never hands out (reported - engine total) is taken off again
  double context_bytes(const Gpu& gpu, int tp) const {
    const auto& v = version();
    // beyond 2 GPUs without NVLink: no custom all-reduce, NCCL over PCIe (its FIFOs in host memory);
    // the figure is already of the CUDA total
    if (!on_rocm(gpu) && tp > 2 && gpu.pcie_only()) return v.context_pcie_gib * kGiB;
    const double nvidia = tp >= 8 ? v.context_tp8_gib : tp > 1 ? v.context_tp4_gib : v.context_tp1_gib;
    const double fig = on_rocm(gpu) ? (tp > 1 ? v.context_rocm_tp8_gib : v.context_rocm_tp1_gib) : nvidia;
    return std::max(0.0, fig * kGiB - std::max(0.0, gpu.reported_bytes() - gpu.engine_bytes()));
  }

  // _calculate_mamba_ratio: 1 without the radix cache; else 3, +2 with extra_buffer (overlap
  // scheduler on), +1 with extra_buffer_lazy; `auto` is the version's default strategy
  int slots_per_request(const EngineSettings& s) const {
    if (s.disable_radix_cache) return 1;
    const std::string& st = s.mamba_radix_cache_strategy;
    const int base = version().mamba_slots_per_request;
    if (st == "no_buffer") return base;
    if (st == "extra_buffer") return base + 2;
    if (st == "extra_buffer_lazy") return base + 1;
    return base + (version().mamba_extra_buffer ? 2 : 0);
  }

  // The weight tensors one rank holds for decoder layer `i` (bytes of the values, scales apart),
  // as SGLang's model files build them: fused qkv_proj / gate_up_proj (QKVParallelLinear,
  // MergedColumnParallelLinear), MLA's q_a / q_b / kv_a / kv_b / o and the w_kc / w_vc copies, the
  // fused MoE's w13 and w2 (one tensor each for all the rank's experts). Linear-attention and other
  // blocks are not enumerated (no slack counted for them).
  std::vector<double> layer_tensors(const Model& m, const Gpu& gpu, const Layout& l, const std::string& uniform, int i) const {
    std::vector<double> t;
    auto eb = [&](ParamGroup g) { return std::floor(weight_bits(m, g, uniform)) / 8; };  // element bytes
    const double h = static_cast<double>(m.hidden_size);
    const int atp = attention_tp(l), tp = l.tp;
    const auto& b = m.blocks[static_cast<std::size_t>(m.layers[static_cast<std::size_t>(i)])];
    const double ea = eb(ParamGroup::attention);
    if (b.kind == AttnKind::gqa && b.q_lora_rank <= 0) {
      const double q = static_cast<double>(b.num_heads) / atp * b.head_dim;
      const double kvh = std::max(1.0, static_cast<double>(b.num_kv_heads) / atp);
      t.push_back(h * (q + kvh * b.head_dim + (b.k_eq_v ? 0.0 : kvh * b.v_head_dim)) * ea);
      t.push_back(static_cast<double>(b.num_heads) / atp * b.v_head_dim * h * ea);
    } else if (b.kind == AttnKind::mla) {
      const double heads = static_cast<double>(b.num_heads) / atp, qk = b.qk_nope_head_dim + b.qk_rope_head_dim;
      if (b.q_lora_rank > 0) {
        t.push_back(h * b.q_lora_rank * ea);
        t.push_back(static_cast<double>(b.q_lora_rank) * heads * qk * ea);
      } else {
        t.push_back(h * heads * qk * ea);
      }
      t.push_back(h * (b.kv_lora_rank + b.qk_rope_head_dim) * ea);
      t.push_back(static_cast<double>(b.kv_lora_rank) * heads * (b.qk_nope_head_dim + b.v_head_dim) * ea);
      t.push_back(heads * b.v_head_dim * h * ea);
      const double copy = ea >= 2 ? model_dtype_bytes(m) : ea;  // w_kc, w_vc
      t.push_back(static_cast<double>(b.kv_lora_rank) * heads * b.qk_nope_head_dim * copy);
      t.push_back(static_cast<double>(b.kv_lora_rank) * heads * b.v_head_dim * copy);
    }
    if (!b.has_mlp) return t;
    const double mats = m.mlp_matrices();
    if (m.is_moe_layer(i)) {
      const auto& e = *m.moe;
      const double in = e.latent_size > 0 ? e.latent_size : h;
      const bool whole = shared_experts_whole(m, gpu);
      // 0.4.6: the shared expert cloned into the fused MoE, whole on every rank
      const double width = static_cast<double>(e.expert_intermediate_size) * e.routed_experts / moe_group(l) +
                           (whole ? static_cast<double>(e.shared_intermediate_size) : 0.0);
      const double er = eb(ParamGroup::routed_experts);
      t.push_back((mats - 1) * in * width * er);
      t.push_back(in * width * er);
      if (e.shared_intermediate_size > 0 && !whole) {
        const double es = eb(ParamGroup::shared_experts), w = static_cast<double>(e.shared_intermediate_size) / tp;
        t.push_back((mats - 1) * h * w * es);
        t.push_back(h * w * es);
      }
    } else if (m.dense_intermediate_size > 0) {
      const double ed = eb(ParamGroup::dense_mlp), w = static_cast<double>(m.dense_intermediate_size) / tp;
      t.push_back((mats - 1) * h * w * ed);
      t.push_back(h * w * ed);
    }
    return t;
  }

  // The allocator rounding of this stage's weights (allocator_slack): decoder layers still on the
  // GPU after --cpu-offload-gb (SGLang's offloader moves whole layers, first ones first, while the
  // budget lasts: srt/utils.py maybe_offload_to_cpu), the input embedding on the first stage and
  // the lm_head on the last. The vision tower is not enumerated.
  double weights_rounding_bytes(const StageInput& in) const override {
    const Model& m = *in.model;
    const Layout& l = *in.layout;
    const std::string& uniform = in.settings->precision;
    const int pp = std::max(1, in.stages), first = in.layers.first, n = in.layers.count;
    double slack = 0, offload = in.settings->cpu_offload_bytes;
    // a layer's tensors computed once per weights kind (layer_weights_kind; plan runs this for
    // every candidate layout)
    struct Kind {
      int key;
      double bytes, slack;
    };
    std::vector<Kind> kinds;
    for (int i = first; i < first + n; ++i) {
      const int key = layer_weights_kind(m, i);
      auto it = std::find_if(kinds.begin(), kinds.end(), [key](const Kind& k) { return k.key == key; });
      if (it == kinds.end()) {
        Kind k{key, 0, 0};
        for (double x : layer_tensors(m, *in.gpu, l, uniform, i)) {
          k.bytes += x;
          k.slack += allocator_slack(x);
        }
        kinds.push_back(k);
        it = kinds.end() - 1;
      }
      if (offload > 0) {
        offload -= it->bytes;
        continue;
      }
      slack += it->slack;
    }
    const double vh = static_cast<double>(m.vocab_size) * static_cast<double>(m.hidden_size);
    const bool has_embed = in.stage == 0, has_head = in.stage == pp - 1;
    if (has_embed)
      slack += allocator_slack(vh / std::max(1, embedding_split(m, l)) * std::floor(weight_bits(m, ParamGroup::embedding, uniform)) / 8);
    if (has_head && (!m.tie_word_embeddings || !has_embed))
      slack += allocator_slack(vh / l.tp * std::floor(weight_bits(m, ParamGroup::lm_head, uniform)) / 8);
    return slack;
  }

  // The running-request cap speculative decoding sets when none is given
  // (arg_groups/speculative_hook.py @ abddb1c7e9)
  static constexpr std::int64_t kSpecMaxRunningDefault = 48;

  // How handle_max_mamba_cache charges the target-verify intermediate states (D per request) with
  // speculative decoding, by release (docs/engine-sources/sglang.md section 3.3):
  //   per_slot      0.5.4-0.5.7   K = budget // per_req // (1 + D), every slot with its D states
  //   reserve_first 0.5.8-0.5.12  per_req x (max_running_requests // dp) x D off `rest` first
  //   joint         0.5.13 on     K and the verify states of min(max_running // dp, K // slots)
  //                               requests solved together inside the ratio budget
  //                               (mem_cache/kv_cache_configurator.py _handle_max_mamba_cache
  //                               @ abddb1c7e9; the padding slot counted from 0.5.17)
  enum class SpecStateRule { per_slot, reserve_first, joint };
  SpecStateRule spec_state_rule() const {
    const std::string& r = version().spec_verify_states;  // data/engines/sglang.yaml, one per window
    if (r == "per_slot") return SpecStateRule::per_slot;
    if (r == "reserve_first") return SpecStateRule::reserve_first;
    return SpecStateRule::joint;
  }

  void fill_stage(const StageInput& in, const EngineDefaults& d, RankBudget& b) const override {
    const auto& v = version();
    const EngineSettings& s = *in.settings;
    const Layout& l = *in.layout;
    // pre_model_load_memory: free memory after the CUDA context and NCCL, before the weights
    b.overhead_bytes = context_bytes(*in.gpu, l.tp * l.pp);
    const double pre = b.capacity_bytes - b.overhead_bytes;
    // up to 0.4.9.post2 ModelRunner.__init__ multiplies the fraction it was given (the flag's or the
    // default) once more for a multimodal model: x 0.95 (bf53bf514, 2024-08) then x 0.90 (PR #4754,
    // 2025-04-01); the flag k3plan emits is the value before it, as users pass it
    const double fraction = d.memory_fraction * (in.model->vision_params > 0 ? v.vlm_runner_factor : 1.0);
    b.reserved_bytes = (1 - fraction) * pre;
    b.activation_bytes = 0;  // inside the (1 - mem_fraction_static) reserve with the CUDA graphs
    double rest = fraction * pre - b.weights_bytes;
    b.block_size = d.block_size;
    if (rest <= 0) {
      b.free_bytes = rest;
      return;
    }
    const auto specs = layer_specs(in.kv);
    const auto& archs = v.hybrid_swa_archs;
    const bool hybrid_swa = std::find(archs.begin(), archs.end(), in.model->architecture) != archs.end();
    double full_cell = 0, swa_cell = 0, per_req = 0;
    int swa_window = 0, swa_layers = 0;
    for (const auto& x : specs) {
      if (x.kind == LayerSpec::Kind::mamba) {
        per_req += x.state_bytes_per_layer * x.layers;
      } else if ((x.kind == LayerSpec::Kind::sliding || x.kind == LayerSpec::Kind::chunked) && hybrid_swa) {
        // Llama 4's chunked layers are its "swa_attention_layer_ids" once listed (0.5.8 on)
        swa_cell += x.bytes_per_token_per_layer * x.layers;
        swa_layers += x.layers;
        swa_window = std::max(swa_window, x.window);
      } else {
        // full attention, and Llama 4's chunked layers before 0.5.8: SGLang gave them a pool of
        // their own only with --hybrid-kvcache-ratio (configs/model_config.py is_hybrid_model, from
        // eb6c2c166 to PR #16399), which k3plan does not emit, so every token is cached in every layer; likewise the
        // sliding-window layers of an architecture outside is_hybrid_swa_model's allowlist (Gemma 2
        // and 3, Mistral, Phi-3...: MHATokenToKVPool over every layer, as the Gemma 3 start-up logs
        // of SGLang show: 34 layers x 4 heads x 256 x 2 x 2 B per token for gemma-3-4b-it)
        full_cell += x.bytes_per_token_per_layer * x.layers;
      }
    }
    // DeepSeek sparse attention (DSA/NSA) layers: the profile's cell is the plain 576-wide latent
    // (bf16 for "auto", 1 byte for fp8) plus the fp8 indexer; the 656-byte fp8 layout
    // (calculate_mla_kv_cache_dim) counts from 0.5.9 on CUDA only (HIP keeps 576)
    for (const auto& lk : in.kv.layers) {
      const AttentionBlock* blk = nullptr;
      for (const auto& mb : in.model->blocks)
        if (mb.name == lk.block) blk = &mb;
      if (!blk || blk->kind != AttnKind::mla || blk->indexer_heads <= 0) continue;
      const std::string& kvd = s.kv_dtype;
      const bool fp8 = kvd.find("fp8") != std::string::npos;
      const double dim = blk->kv_lora_rank + blk->qk_rope_head_dim;
      const double latent =
          fp8 ? ((v.dsa_fp8_656 && !on_rocm(*in.gpu)) ? blk->kv_lora_rank + blk->kv_lora_rank / 128.0 * 4 + blk->qk_rope_head_dim * 2.0
                                                      : dim)
              : dim * 2.0;
      const double indexer = blk->indexer_head_dim + blk->indexer_head_dim / 128.0 * 4;
      full_cell += (latent + indexer) * lk.count - lk.bytes_per_token;
    }
    // Pipeline stages of a multimodal wrapper that does not say which layers it holds: the pool is
    // sized by num_effective_layers = end_layer - start_layer, read as getattr(model, "start_layer",
    // 0) / getattr(model, "end_layer", num_layers) (model_runner_components/layer_setup.py
    // _resolve_pp_layer_range @ HaiShaw/sglang 0077f84d; model_runner.py before the split), so a
    // wrapper without them (Llava / Mistral 3, Gemma 3, Qwen2-VL, Qwen2.5-VL, Kimi-VL, Llama 4
    // there) gets a pool for every layer of the model on every stage. The wrappers that expose them
    // at 0077f84d are listed; text-only classes are not affected here.
    if (l.pp > 1 && in.model->vision_params > 0 && in.layers.count > 0 && !wrapper_knows_its_layers(in.model->architecture)) {
      const double whole = static_cast<double>(in.model->num_layers()) / in.layers.count;
      full_cell *= whole;
      swa_cell *= whole;
      per_req *= whole;
    }
    const int dp = l.dp_attention ? std::max(1, l.dp) : 1;
    // Speculative decoding (EAGLE, NEXTN, DFLASH, DSPARK...): speculative_num_draft_tokens D > 0.
    // arg_groups/speculative_hook.py @ abddb1c7e9 (the Kimi K3 merge, #32541; the same reset in
    // server_args.py since 0.4): an unset --max-running-requests becomes 48 ("Max running requests
    // is reset to 48 for speculative decoding")
    const int draft_tokens = std::max(0, s.speculative_draft_tokens);
    const std::int64_t max_running = s.max_num_seqs > 0 ? s.max_num_seqs : draft_tokens > 0 ? kSpecMaxRunningDefault : 0;
    // handle_max_mamba_cache: the state pool first
    b.state_slots = -1;
    std::int64_t per_request_slots = 1;
    if (per_req > 0) {
      per_request_slots = slots_per_request(s);
      const auto spec = spec_state_rule();
      const double pad = v.mamba_padding_slot ? 1.0 : 0.0;
      const double dtok = draft_tokens;
      // the target-verify intermediate states: per_req x D for each running request the state
      // slots admit (+ the padding slot from 0.5.17), set aside next to the state pool
      double intermediate = 0;
      auto verify_states = [&](std::int64_t reqs) { return per_req * (static_cast<double>(reqs) + pad) * dtok; };
      if (draft_tokens > 0 && spec == SpecStateRule::reserve_first) {
        // 0.5.8-0.5.12: per_req x (max_running_requests // dp) x D off `rest` before the split
        intermediate = std::min(rest, per_req * static_cast<double>(max_running / dp) * dtok);
        rest -= intermediate;
      }
      std::int64_t k = 0;
      if (s.max_mamba_cache_size > 0) {
        k = s.max_mamba_cache_size / dp;
        if (draft_tokens > 0 && spec == SpecStateRule::joint)
          intermediate = verify_states(std::min<std::int64_t>(max_running / dp, k / per_request_slots));
      } else if (s.disable_radix_cache) {
        k = (max_running > 0 ? max_running : v.mamba_no_radix_default_slots) / dp;
        if (draft_tokens > 0 && spec == SpecStateRule::joint) intermediate = verify_states(k);
      } else {
        const double ratio = s.mamba_full_memory_ratio > 0 ? s.mamba_full_memory_ratio : v.mamba_full_memory_ratio;
        const double budget = rest * ratio / (1 + ratio);
        if (draft_tokens > 0 && spec == SpecStateRule::joint) {
          // 0.5.13 on: K slots and their verify states share the budget,
          //   (K + pad) x per_req + (K / slots_per_request + pad) x D x per_req = budget
          k = static_cast<std::int64_t>(
              std::floor((budget - pad * per_req * (1 + dtok)) / (per_req * (1 + dtok / static_cast<double>(per_request_slots)))));
          intermediate = verify_states(std::min<std::int64_t>(max_running / dp, std::max<std::int64_t>(k, 0) / per_request_slots));
        } else if (draft_tokens > 0 && spec == SpecStateRule::per_slot) {
          // 0.5.4-0.5.7: every slot carries its D verify states: K = budget // per_req // (1 + D)
          k = static_cast<std::int64_t>(std::floor(std::floor(budget / per_req) / (1 + dtok)));
        } else {
          k = static_cast<std::int64_t>(std::floor((v.mamba_padding_slot ? budget - per_req : budget) / per_req));
        }
      }
      k = std::max<std::int64_t>(k, 0);
      b.state_slots = k;
      if (draft_tokens > 0 && spec == SpecStateRule::per_slot) intermediate = static_cast<double>(k) * per_req * dtok;
      if (spec != SpecStateRule::reserve_first) {
        intermediate = std::min(rest, intermediate);
        rest -= intermediate;
      }
      b.state_pool_bytes = std::min(rest, static_cast<double>(k + (v.mamba_padding_slot ? 1 : 0)) * per_req);
      rest -= b.state_pool_bytes;
      b.state_pool_bytes += intermediate;
    }
    // KV: one cell per token over the full-attention layers; sliding-window layers in their own
    // pool of swa_full_tokens_ratio (0.8) x the full tokens (hybrid SWA pool)
    const double ratio_swa = 0.8;
    double cell = full_cell + (swa_layers > 0 ? swa_cell * ratio_swa : 0.0);
    if (full_cell <= 0 && swa_cell > 0) cell = swa_cell;
    const int dcp = std::max(1, l.dcp);
    std::int64_t profiled = 0;  // before --max-total-tokens: the request-pool estimate reads it
    if (cell > 0) {
      auto tokens = static_cast<std::int64_t>(std::floor(rest / cell));
      profiled = tokens / dcp;
      // init_memory_pool: max_total_num_tokens = min(profiled, --max-total-tokens), then rounded
      // down to the page size; every DP-attention rank applies it to its own pool
      // (model_executor/model_runner.py @ v0.4.9, the same at v0.5.3; model_runner_kv_cache_mixin.py
      // @ v0.5.9)
      if (s.max_total_tokens > 0) tokens = std::min(tokens, s.max_total_tokens);
      if (d.block_size > 1) tokens = tokens / d.block_size * d.block_size;
      b.kv_tokens = tokens;
      b.kv_pool_bytes = static_cast<double>(tokens) * cell;
      b.free_bytes = rest - b.kv_pool_bytes;
      b.reported_kv_tokens = tokens / dcp;  // the log prints the per-rank physical pool under DCP
      b.max_sequences = in.context > 0 ? tokens / in.context : 0;
      if (swa_layers > 0 && full_cell <= 0 && swa_window > 0) b.max_sequences = tokens / std::min<std::int64_t>(in.context, swa_window);
      b.max_context_one_user = std::min<std::int64_t>(in.model->max_context, tokens);
    } else {
      b.kv_pool_bytes = rest;  // nothing grows per token
      b.free_bytes = 0;
      b.max_sequences = std::numeric_limits<std::int32_t>::max();
      b.max_context_one_user = in.model->max_context;
    }
    // max_running_requests (scheduler / _resolve_max_num_reqs): the flag per DP rank, else the
    // request-pool estimate clamp(tokens / context_len x 512, 2048, 4096); never above tokens / 2;
    // with linear layers never above the state slots / slots per request
    const std::int64_t phys = b.reported_kv_tokens;
    const std::int64_t estimate =
        std::clamp<std::int64_t>(static_cast<std::int64_t>(static_cast<double>(std::max(profiled, phys)) /
                                                           static_cast<double>(std::max<std::int64_t>(1, in.model->max_context)) * 512),
                                 2048, 4096);
    b.running_cap = max_running > 0 ? std::min<std::int64_t>(max_running / dp, phys / 2) : std::min(estimate, phys / 2);
    b.sequence_capacity = in.context > 0 && cell > 0 ? static_cast<double>(b.kv_tokens) / static_cast<double>(in.context) : 1e9;
    if (b.state_slots >= 0) {
      b.running_cap = std::min(b.running_cap, b.state_slots / per_request_slots);
      b.max_sequences = std::min(b.max_sequences, b.state_slots / per_request_slots);
      b.sequence_capacity = std::min(b.sequence_capacity, static_cast<double>(b.state_slots) / static_cast<double>(per_request_slots));
    }
    b.running_cap = std::max<std::int64_t>(b.running_cap, 0);
  }

  // TpModelWorker: max_req_len = min(context_len - 1, max_total_num_tokens - 1): it starts and caps
  bool refuses_context_beyond_pool() const override { return false; }

  std::vector<std::string> parallel_args(const Model&, const Layout& l) const override {
    std::vector<std::string> a = {"--tp-size", std::to_string(l.tp)};
    auto add = [&](const char* f, int v) {
      a.push_back(f);
      a.push_back(std::to_string(v));
    };
    if (l.ep > 1) add("--ep-size", l.ep);
    if (l.pp > 1) add("--pp-size", l.pp);
    if (l.dp > 1) add("--dp-size", l.dp);
    if (l.dp_attention) a.push_back("--enable-dp-attention");
    if (l.dcp > 1) add("--dcp-size", l.dcp);
    return a;
  }

  std::vector<std::string> memory_args(const EngineDefaults& d, std::int64_t context, std::int64_t max_running,
                                       const std::string& kv_dtype) const override {
    return {"--mem-fraction-static",  fmt::format("{:.3f}", d.memory_fraction),
            "--context-length",       std::to_string(context),
            "--max-running-requests", std::to_string(std::max<std::int64_t>(1, max_running)),
            "--kv-cache-dtype",       kv_dtype};
  }
  std::string logged_model(const EngineLog& log) const override {
    return log.has("model_path") && log.arg("model_path") != "None" ? log.arg("model_path") : "";
  }
  // server_args=ServerArgs(...) keys (python/sglang/srt/server_args.py ServerArgs fields)
  void read_serving(const EngineLog& log, const Model& m, Layout& l, EngineSettings& s, std::int64_t& context) const override {
    l.tp = static_cast<int>(log.int_arg("tp_size", 1, 1, 4096));
    l.pp = static_cast<int>(log.int_arg("pp_size", 1, 1, 4096));
    l.dp = static_cast<int>(log.int_arg("dp_size", 1, 1, 4096));
    l.ep = static_cast<int>(log.int_arg("ep_size", 1, 1, 4096));
    l.dp_attention = log.flag_arg("enable_dp_attention");
    l.dcp = static_cast<int>(log.int_arg("dcp_size", 1, 1, 4096));
    if (!l.dp_attention && l.dp > 1) l.dp = 1;  // separate replicas: each prints its own pool
    if (m.moe && l.ep > l.tp) l.ep = l.tp;
    // the ServerArgs line is printed after __post_init__: its mem_fraction_static is the resolved one
    s.mem_fraction_static = log.num_arg("mem_fraction_static", 0, 0.01, 0.999);
    s.chunked_prefill_size = log.int_arg("chunked_prefill_size", 0, 1, std::int64_t{1} << 34);
    s.cuda_graph_max_bs = static_cast<int>(log.int_arg("cuda_graph_max_bs", 0, 1, 1 << 20));
    s.max_num_seqs = log.int_arg("max_running_requests", 0, 1, 1 << 24);
    s.page_size = static_cast<int>(log.int_arg("page_size", 0, 1, 1 << 20));
    s.mamba_full_memory_ratio = log.num_arg("mamba_full_memory_ratio", 0, 0.001, 100);
    s.max_mamba_cache_size = log.int_arg("max_mamba_cache_size", 0, 1, std::int64_t{1} << 30);
    s.disable_radix_cache = log.flag_arg("disable_radix_cache");
    for (const char* k : {"mamba_radix_cache_strategy", "mamba_scheduler_strategy"})
      if (log.has(k) && log.arg(k) != "auto" && log.arg(k) != "None") s.mamba_radix_cache_strategy = log.arg(k);
    // ServerArgs prints its speculative_num_draft_tokens default (64 or 8 in 0.4.x) with no
    // speculative algorithm: only an algorithm turns speculative decoding on
    const bool spec_on = log.has("speculative_algorithm") && log.arg("speculative_algorithm") != "None";
    s.speculative_draft_tokens = spec_on ? static_cast<int>(log.int_arg("speculative_num_draft_tokens", 0, 0, 1024)) : 0;
    s.cpu_offload_bytes = log.num_arg("cpu_offload_gb", 0, 0, 1e6) * kGiB;
    s.max_total_tokens = log.int_arg("max_total_tokens", 0, 1, std::int64_t{1} << 40);
    context = log.context_len ? *log.context_len : log.int_arg("context_length", 0, 1, std::int64_t{1} << 34);
  }
  // The scheduler names its process in every line: " DP{dp_rank}" when it has a DP rank, then
  // " TP{tp_rank}" when tp_size > 1 (managers/scheduler.py run_scheduler_process @ v0.4.6.post2,
  // 9858113c3, the same at v0.4.9 and v0.5.18). dp_rank is None only when dp_size == 1
  // (entrypoints/engine.py _launch_subprocesses starts the TP schedulers itself; the data-parallel
  // controller passes a DP rank to every scheduler, DP attention or not), and --enable-dp-attention
  // asserts dp_size > 1. So lines that carry " TP<n>" and never " DP<n>" were printed by a run with
  // dp_size 1: a pasted launch command that says otherwise is not the run that printed them. Only
  // for arguments from a launch command: a ServerArgs line is the run itself.
  std::vector<std::string> reconcile_logged_layout(const EngineLog& log, Layout& l) const override {
    if (log.args_from != "launch command" || l.dp <= 1) return {};
    static const std::regex prefix(R"(^\[[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:.]+((?: [A-Z_]+[0-9]+)+)\])");
    bool tp = false, dp = false;
    for (const auto& line : log.lines) {
      std::smatch mt;
      if (!std::regex_search(line, mt, prefix)) continue;
      const std::string ranks = mt[1];
      tp = tp || ranks.find(" TP") != std::string::npos;
      dp = dp || ranks.find(" DP") != std::string::npos;
    }
    if (!tp || dp) return {};
    std::vector<std::string> notes = {
        fmt::format("the log's lines name their ranks \"TP<n>\" with no \"DP<n>\", which SGLang prints only with dp_size 1 "
                    "(scheduler.py run_scheduler_process): compared as TP {} without data parallelism, not the launch command's "
                    "--dp-size {}{}",
                    l.tp, l.dp, l.dp_attention ? " --enable-dp-attention" : "")};
    l.dp = 1;
    l.dp_attention = false;
    return notes;
  }
  std::optional<std::pair<std::int64_t, std::string>> logged_kv_tokens(const EngineLog& log, int) const override {
    if (log.max_total_num_tokens) return std::make_pair(*log.max_total_num_tokens, std::string("max_total_num_tokens"));
    if (log.kv_allocated_tokens) return std::make_pair(*log.kv_allocated_tokens, std::string("KV Cache is allocated #tokens"));
    return std::nullopt;
  }
  std::vector<LogTerm> log_terms(const EngineLog& log, const RankBudget& b, double util) const override {
    const double init = b.capacity_bytes - b.overhead_bytes;
    std::optional<double> kv, st;
    if (log.kv_k_bytes && log.kv_v_bytes) kv = *log.kv_k_bytes + *log.kv_v_bytes;
    if (log.kv_bytes) kv = log.kv_bytes;
    if (log.mamba_conv_bytes && log.mamba_ssm_bytes) st = *log.mamba_conv_bytes + *log.mamba_ssm_bytes;
    auto minus = [](const std::optional<double>& logged, double ours) { return logged ? -(ours - *logged) : 0.0; };
    // before "mem usage" was printed (0.4.x), the weights are the drop in free memory over the load
    std::optional<double> weights = log.weights_usage_bytes;
    if (!weights && log.load_begin_avail_bytes && log.load_end_avail_bytes && *log.load_begin_avail_bytes >= *log.load_end_avail_bytes)
      weights = *log.load_begin_avail_bytes - *log.load_end_avail_bytes;
    return {
        {"free_at_init", log.load_begin_avail_bytes, init, log.load_begin_avail_bytes ? util * (init - *log.load_begin_avail_bytes) : 0.0},
        {"weights", weights, b.weights_bytes, minus(weights, b.weights_bytes)},
        {"kv_pool", kv, b.kv_pool_bytes, 0.0},
        {"state_pool", st, b.state_pool_bytes, minus(st, b.state_pool_bytes)}};
  }

  int default_port() const override { return 30000; }
  const char* pp_partition_env() const override { return "SGLANG_PP_LAYER_PARTITION"; }
  bool has_setting(const std::string& n) const override {
    return n == "mem_fraction_static" || n == "chunked_prefill_size" || n == "max_running_requests" || n == "page_size" ||
           n == "mamba_full_memory_ratio" || n == "max_mamba_cache_size" || n == "mamba_radix_cache_strategy" || n == "disable_radix_cache" ||
           n == "dp_attention" ||  // --enable-dp-attention
           n == "speculative_num_draft_tokens" || n == "max_total_tokens";
  }
  std::string memory_fraction_flag() const override { return "--mem-fraction-static"; }
  std::string gpu_product_text() const override { return "TP x PP"; }
  std::string default_image() const override { return "lmsysorg/sglang:latest"; }

  std::vector<std::string> assumptions(const Model& m) const override {
    std::vector<std::string> a;
    a.push_back(
        fmt::format("{}: memory before the weights load (CUDA context, NCCL) {:.2f} / {:.2f} / {:.2f} GiB at TP1 / 2-4 / 8+ "
                    "of the device total nvidia-smi reports, {:.2f} GiB of the CUDA total beyond TP2 on GPUs without NVLink "
                    "(public start-up logs); activations and CUDA graphs live in the (1 - mem_fraction_static) reserve",
                    label(), version().context_tp1_gib, version().context_tp4_gib, version().context_tp8_gib,
                    version().context_pcie_gib));
    for (const auto& b : m.blocks)
      if (b.is_linear()) {
        a.push_back(
            fmt::format("linear-attention state pool: mamba_full_memory_ratio {} (state : KV) of the memory after weights, "
                        "{} state slots per running request (radix cache on, extra_buffer)",
                        version().mamba_full_memory_ratio, version().mamba_slots_per_request + (version().mamba_extra_buffer ? 2 : 0)));
        break;
      }
    return a;
  }

 protected:
  bool latent_proj_replicated() const override { return version().latent_moe_replicated; }
  // RoPE: one cos/sin cache per distinct rope (layers/rotary_embedding.py get_rope, _ROPE_DICT),
  // built on the GPU inside load_model's measurement and kept in float32 on CUDA ("cache needs to
  // be in FP32 for numerical stability"; cast to the model dtype elsewhere, e.g. ROCm) @ v0.4.6.post2
  // (9858113c3), the same at v0.5.9; 0.4.0-0.4.1 used vLLM's get_rope (model dtype), which the 0.4
  // window does not tell apart
  bool rope_cache_in_weights() const override { return true; }
  bool rope_cache_fp32(const Gpu& gpu) const override { return !on_rocm(gpu); }
  // MLA: DeepseekV2ForCausalLM.post_load_weights sets self_attn.w_kc =
  // w_kc.transpose(1, 2).contiguous().transpose(1, 2) and w_vc = w_vc.contiguous() from kv_b_proj's
  // weight while kv_b_proj stays for the MHA prefill path: one more copy of kv_b_proj per MLA layer
  // (models/deepseek_v2.py @ v0.4.6.post2, 9858113c3; the same lines from v0.4.0 to v0.5.9, then
  // models/deepseek_common/deepseek_weight_loader.py to v0.5.18). Its format:
  //  - fp8 with 128x128 blocks on CUDA: up to v0.4.6.post2 fp8 (DeepGEMM's block-scaled bmm, else
  //    block_quant_to_tensor_quant); from 5e02330137 (PR #5662, 2025-05-08, in v0.4.6.post3)
  //    block_quant_dequant to bf16 unless SGL_USE_DEEPGEMM_BMM is set (off by default), the same at
  //    v0.5.3 (a4b424c63) and v0.5.18. k3plan does not keep the block shape: every fp8-block
  //    checkpoint it reads (DeepSeek, Kimi K2, GLM) uses [128, 128].
  //  - fp8 on ROCm (not _is_cuda) and per-channel fp8: requantized per tensor, fp8.
  //  - int8 and AWQ: dequantized to bf16; unquantized: the model dtype.
  double mla_absorbed_copy_bytes(const Model& m, const Gpu& gpu, const std::string& p) const override {
    if (p.find("fp8") == std::string::npos) return model_dtype_bytes(m);
    return fp8_block(p) && !on_rocm(gpu) && version().mla_copies_bf16_cuda ? 2.0 : 1.0;
  }
  // DeepSeek's model file builds the input embedding with enable_tp=not enable_dp_attention (whole
  // on every rank; models/deepseek_v2.py DeepseekV2Model @ v0.4.6.post2, 9858113c3, the same from
  // v0.4.0 to v0.5.7) and from v0.5.8 with use_attn_tp_group (split over the attention-TP group of
  // tp / dp ranks); k3plan uses the attention-TP group for every window, the same when dp = tp.
  // The lm_head stays split over the TP group (enable_dp_lm_head is off by default). Taken for the
  // MLA models, which are the ones that file (and its derivatives) builds
  int embedding_split(const Model& m, const Layout& l) const override { return l.dp_attention && has_mla(m) ? attention_tp(l) : l.tp; }
  // Shared-experts fusion as 0.4.6-0.4.6.post5 do it (python/sglang/srt/models/deepseek_v2.py
  // DeepseekV3ForCausalLM.determine_n_share_experts_fusion and load_weights @ v0.4.6.post2,
  // 9858113c3; on by default from d9dd52985, PR #5571, until 81964328b, PR #6736, set it to
  // n_shared_experts): n_share_experts_fusion = tp_size when torch.cuda.get_device_capability()
  // >= (9, 0) (ROCm gfx942 / gfx950 report 9.4 / 9.5), the architecture is
  // DeepseekV3ForCausalLM with 256 routed experts and DeepEP is off; load_weights then clones the
  // shared expert tp_size times into the fused MoE (256 + tp_size experts), each clone TP-split,
  // so every rank holds the whole shared expert
  bool shared_experts_whole(const Model& m, const Gpu& gpu) const override {
    return version().shared_experts_cloned && m.architecture == "DeepseekV3ForCausalLM" && m.moe && m.moe->routed_experts == 256 &&
           m.moe->shared_intermediate_size > 0 && (on_rocm(gpu) || gpu.compute_capability >= 9.0);
  }
};

}  // namespace

std::unique_ptr<EngineModel> make_sglang_model(const EngineVersion& v) { return std::make_unique<Sglang>(v); }

}  // namespace k3plan
