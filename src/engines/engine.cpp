// The engine registry (one model per version window of catalogue/engine_version.hpp) and what both
// engines share (the weight layout per rank).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <k3plan/budget.hpp>
#include <k3plan/engine.hpp>
#include <k3plan/error.hpp>
#include <k3plan/params.hpp>
#include <memory>
#include <mutex>

#include "engines_impl.hpp"

namespace k3plan {

namespace {

// One engine model per version window, built once (the windows are read by the catalogue layer).
const std::vector<std::unique_ptr<EngineModel>>& models_of(Engine e) {
  static std::once_flag once;
  static std::vector<std::unique_ptr<EngineModel>> models[2];
  std::call_once(once, [] {
    for (Engine x : kEngines)
      for (const auto& v : engine_versions(x))
        models[static_cast<std::size_t>(x)].push_back(x == Engine::vllm ? make_vllm_model(v) : make_sglang_model(v));
  });
  return models[static_cast<std::size_t>(e)];
}

}  // namespace

const EngineModel& engine_model(Engine e, const std::string& version) {
  const EngineVersion& v = engine_version_for(e, version);
  for (const auto& m : models_of(e))
    if (m->version().id == v.id) return *m;  // each model holds a copy of its window
  throw std::logic_error(fmt::format("no engine model for {} window {}", to_string(e), v.id));
}

std::string EngineModel::label() const {
  const auto& v = version();
  return v.last.empty() ? fmt::format("{} {} ({} and later)", display_name(), v.id, v.first)
                        : fmt::format("{} {} ({}-{}.x)", display_name(), v.id, v.first, v.last);
}

std::string EngineModel::parallel_flags(const Model& m, const Layout& l) const {
  return fmt::format("{}", fmt::join(parallel_args(m, l), " "));
}

// ---------------------------------------------------------------------------------------------
// weights as the engines lay them out on one rank

namespace {
bool is_float_dtype(const std::string& p) { return p == "bf16" || p == "fp16" || p == "fp32"; }

// Unquantized parameters are created in the dtype the model runs in and the checkpoint's tensors
// cast into them (vLLM set_default_torch_dtype(model_config.dtype) around model init in
// model_executor/model_loader; SGLang the same in model_loader/loader.py): --dtype float32 doubles
// a bf16 checkpoint's unquantized weights. Quantized groups keep their format.
double weight_bits_impl(const Model& m, ParamGroup g, const std::string& uniform) {
  if (!uniform.empty()) return precision_format(uniform).bits_per_weight;
  const std::string* p = &m.precision_of(g);
  if (g == ParamGroup::norms && !m.precision.count(g)) p = &m.dtype;
  if (is_float_dtype(*p) && is_float_dtype(m.dtype)) p = &m.dtype;
  return precision_format(*p).bits_per_weight;
}

// Rotary dimension of the first attention block that rotates (MLA: qk_rope_head_dim).
double rotary_dim(const Model& m) {
  for (const auto& b : m.blocks) {
    if (b.kind == AttnKind::mla) return b.qk_rope_head_dim;
    if (b.kind == AttnKind::gqa && b.head_dim > 0) return b.head_dim;
  }
  return 0;
}
}  // namespace

double weight_bits(const Model& m, ParamGroup g, const std::string& uniform) { return weight_bits_impl(m, g, uniform); }

std::optional<EngineVersion::Pad> EngineModel::mxfp4_moe_pad(const Gpu& gpu) const {
  const double cc = gpu.compute_capability;
  const char* cls = gpu.vendor == "amd" ? "rocm" : cc <= 0 ? nullptr : cc < 9 ? "sm80" : cc < 10 ? "sm90" : cc < 12 ? "sm100" : "sm120";
  if (!cls) return std::nullopt;
  const auto it = version().mxfp4_moe_pad.find(cls);
  if (it == version().mxfp4_moe_pad.end()) return std::nullopt;
  return it->second;
}

std::string EngineModel::pp_partition_error(const std::vector<int>& partition, int num_layers, int stages) {
  // get_pp_indices @ vLLM v0.19.0 (vllm/distributed/utils.py) and SGLang 0077f84d
  // (python/sglang/srt/distributed/utils.py): the same two checks, the same words
  if (static_cast<int>(partition.size()) != stages) return fmt::format("len(partitions)={} does not match pp_size={}.", partition.size(), stages);
  long long sum = 0;
  for (int x : partition) {
    if (x < 0) return fmt::format("a stage of {} layers: every entry must be 0 or more", x);
    sum += x;
  }
  if (sum != num_layers) return fmt::format("sum(partitions)={} does not match num_hidden_layers={}.", sum, num_layers);
  return "";
}

std::string EngineModel::pp_partition_assignment(const std::vector<int>& partition) const {
  return std::string(pp_partition_env()) + "=" + fmt::format("{}", fmt::join(partition, ","));
}

std::string EngineModel::pp_partition_refusal(const std::vector<int>& partition, int num_layers, int stages) const {
  if (partition.empty()) return "";
  const std::string why = pp_partition_error(partition, num_layers, stages);
  if (why.empty()) return "";
  return pp_partition_assignment(partition) + ": " + display_name() + " refuses to start (" + why + ")";
}

std::string EngineModel::pp_partition_usage_error(const std::string& where, const std::vector<int>& partition, const std::string& model_id,
                                                  int num_layers, int stages, const std::string& stages_hint) const {
  const std::string why = pp_partition_error(partition, num_layers, stages);
  if (why.empty()) return "";
  return fmt::format("{} {}: {} would refuse {}: {} ({} has {} decoder layers; give one count per pipeline stage{})", where,
                     fmt::join(partition, ","), display_name(), pp_partition_env(), why, model_id, num_layers, stages_hint);
}

StageLayers EngineModel::stage_layers(int num_layers, int stages, int stage, const std::vector<int>& partition) const {
  const int L = std::max(0, num_layers), pp = std::max(1, stages);
  if (stage < 0 || stage >= pp) return {L, 0};
  if (!partition.empty() && pp_partition_error(partition, L, pp).empty()) {
    StageLayers s;
    for (int st = 0; st < stage; ++st) s.first += partition[static_cast<std::size_t>(st)];
    s.count = partition[static_cast<std::size_t>(stage)];
    return s;
  }
  const int base = L / pp, rest = L % pp;
  const std::string& rule = version().pp_layer_split;
  const bool last_takes_rest = rule == "last_takes_rest", last_ranks = rule == "last_ranks";
  // the stage's count and the layers of the stages before it
  auto count = [&](int st) {
    if (last_takes_rest) return base + (st == pp - 1 ? rest : 0);
    if (last_ranks) return base + (st >= pp - rest ? 1 : 0);
    // before_last: partitions[-i] += 1 for i in 2..rest+1, i.e. stages pp-1-rest .. pp-2
    return base + (st >= pp - 1 - rest && st <= pp - 2 ? 1 : 0);
  };
  StageLayers s;
  for (int st = 0; st < stage; ++st) s.first += count(st);
  s.count = count(stage);
  return s;
}

double EngineModel::stage_weights_bytes(const Model& m, const Gpu& gpu, const Layout& l, const EngineSettings& s, int first, int last,
                                        bool has_embed, bool has_head) const {
  const double h = static_cast<double>(m.hidden_size);
  const int attn_tp = attention_tp(l), tp = l.tp, group = moe_group(l);
  const std::string& uniform = s.precision;
  double bytes = 0;
  // bits per weight of each group, looked up once per call (precision_format is a string lookup and
  // this runs for every layer of every candidate layout); lazily, so an unknown precision in a group
  // the stage does not hold still goes unnoticed, as before
  std::array<double, kParamGroups> bits{};
  std::array<bool, kParamGroups> known{};
  auto add = [&](ParamGroup g, double params) {
    const auto i = static_cast<std::size_t>(g);
    if (!known[i]) bits[i] = weight_bits_impl(m, g, uniform), known[i] = true;
    bytes += params * bits[i] / 8;
  };
  // MXFP4 experts as the back-end lays them out: the expert width on this rank (all of it under
  // EP, else the TP share) and the hidden size rounded up to the back-end's multiples
  // (vllm/model_executor/layers/quantization/mxfp4.py Mxfp4MoEMethod.create_weights)
  std::optional<EngineVersion::Pad> pad;
  if (m.moe && m.precision_of(ParamGroup::routed_experts) == "mxfp4" && (uniform.empty() || uniform == "mxfp4")) pad = mxfp4_moe_pad(gpu);
  auto round_up = [](double x, int k) { return std::ceil(x / k) * k; };
  const bool shared_whole = m.moe && shared_experts_whole(m, gpu);
  double mla_copy_bytes = -1;  // per weight of kv_b_proj, looked up at the first MLA layer
  // each weights kind computed once, times the layers of that kind (layer_weights_kind)
  struct Kind {
    int key, layer, count;
  };
  std::vector<Kind> kinds;
  for (int i = first; i < last; ++i) {
    const int key = layer_weights_kind(m, i);
    auto it = std::find_if(kinds.begin(), kinds.end(), [key](const Kind& k) { return k.key == key; });
    if (it == kinds.end())
      kinds.push_back({key, i, 1});
    else
      ++it->count;
  }
  double times = 1;  // layers of the kind being added
  const auto add_layers = [&](ParamGroup g, double params) { add(g, params * times); };
  for (const Kind& k : kinds) {
    const int i = k.layer;
    times = k.count;
    const auto& b = m.blocks[static_cast<std::size_t>(m.layers[static_cast<std::size_t>(i)])];
    const double all = attention_params(m, b), rep = attention_replicated_params(m, b);
    add_layers(ParamGroup::attention, rep + (all - rep) / attn_tp);
    // w_kc / w_vc: contiguous copies of this rank's kv_b_proj next to it, in the format the
    // engine's rule gives them (mla_absorbed_copy_bytes)
    if (b.kind == AttnKind::mla) {
      if (mla_copy_bytes < 0)
        mla_copy_bytes = mla_absorbed_copy_bytes(m, gpu, uniform.empty() ? m.precision_of(ParamGroup::attention) : uniform);
      const double kv_b = static_cast<double>(b.kv_lora_rank) * b.num_heads * (static_cast<double>(b.qk_nope_head_dim) + b.v_head_dim);
      if (mla_copy_bytes > 0) bytes += kv_b / attn_tp * mla_copy_bytes * times;
    }
    add_layers(ParamGroup::norms, b.has_mlp && b.kind != AttnKind::none ? 2 * h : h);
    if (!b.has_mlp) continue;
    if (m.is_moe_layer(i)) {
      const auto& e = *m.moe;
      const double in = e.latent_size > 0 ? e.latent_size : h;
      if (pad) {  // the expert width on this rank: all of it under EP, else the TP share
        const bool ep = l.ep > 1;
        const int split = ep ? 1 : group;  // ranks one expert's width is split over
        const double width = round_up(static_cast<double>(e.expert_intermediate_size) / split, pad->intermediate);
        add_layers(ParamGroup::routed_experts, 3 * round_up(in, pad->hidden) * width * e.routed_experts * split / group);
      } else {
        add_layers(ParamGroup::routed_experts, 3 * in * static_cast<double>(e.expert_intermediate_size) * e.routed_experts / group);
      }
      add_layers(ParamGroup::shared_experts, 3 * h * static_cast<double>(e.shared_intermediate_size) / (shared_whole ? 1 : tp));
      add_layers(ParamGroup::router, h * e.routed_experts + e.routed_experts);
      // LatentMoE down/up projections between hidden and latent width: ReplicatedLinear in the
      // engines that say so (SGLang models/kimi_k3.py), else split by TP.
      if (e.latent_size > 0) add_layers(ParamGroup::latent_proj, (2 * h * e.latent_size) / (latent_proj_replicated() ? 1 : tp) + e.latent_size);
    } else {
      add_layers(ParamGroup::dense_mlp, m.mlp_matrices() * h * static_cast<double>(m.dense_intermediate_size) / tp);
    }
  }
  const double vh = static_cast<double>(m.vocab_size) * h;
  if (has_embed) add(ParamGroup::embedding, vh / std::max(1, embedding_split(m, l)));  // vocab-parallel
  if (has_head && (!m.tie_word_embeddings || !has_embed)) add(ParamGroup::lm_head, vh / tp);
  if (has_head) add(ParamGroup::norms, h);
  // vision tower on the first stage: split by TP where the engine shards it (vLLM
  // --mm-encoder-tp-mode weights, the default), else whole on every rank
  const double dtype_bytes = model_dtype_bytes(m);
  if (has_embed && m.vision_params > 0) bytes += m.vision_params * dtype_bytes / (vision_sharded() ? attn_tp : 1);
  // RoPE cos/sin caches, on every rank, sized by the model's max_position_embeddings (not the
  // context asked for; x the factor of linear scaling, one per distinct rope: Model::
  // rope_cache_positions) in the model dtype: vllm/model_executor/layers/rotary_embedding
  const double rope_positions = static_cast<double>(m.rope_cache_positions > 0 ? m.rope_cache_positions : m.max_context);
  if (has_embed && rope_cache_in_weights()) bytes += rope_positions * rotary_dim(m) * (rope_cache_fp32(gpu) ? 4.0 : dtype_bytes);
  return bytes;
}

}  // namespace k3plan
