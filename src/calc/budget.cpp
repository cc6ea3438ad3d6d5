#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <k3plan/budget.hpp>
#include <k3plan/error.hpp>
#include <k3plan/params.hpp>
#include <k3plan/units.hpp>
#include <optional>

namespace k3plan {

namespace {

double gpu_mem_mib(const Gpu& g) { return g.memory_reported_mib.value; }

// vLLM v0.19 non-torch memory (NCCL, custom all-reduce buffers): llm-d-planner accuracy report,
// 0.25 GiB at TP1 and about 2.1 GiB at TP >= 2 (engine-logs.md V2-V4).
double vllm_non_torch_bytes(int world) { return (world > 1 ? 2.1 : 0.25) * kGiB; }

// vLLM v0.19 torch activation peak of the profile run, fitted on three H100 logs (Llama-3.1-8B
// 1.89 GiB, Qwen2.5-7B 2.21 GiB, Qwen3-14B 2.23 GiB at 8192 batched tokens, 1024 sequences):
// the sampler's fp32 logits and their copies dominate (about 15 B per sequence per vocab entry),
// plus the hidden states of the batched tokens. Within 1% on all three.
double vllm_activation_bytes(const Model& m, std::int64_t batched_tokens, std::int64_t seqs) {
  const double s = static_cast<double>(std::min(seqs, batched_tokens));
  return 15.0 * s * static_cast<double>(m.vocab_size) + 2.0 * static_cast<double>(batched_tokens) * static_cast<double>(m.hidden_size);
}

// CUDA context plus NCCL communicators before SGLang measures free memory: 0.82 GiB seen at TP1
// (engine-logs.md S3: 23.58 GiB total, 22.76 GiB at load begin); assumed 1.5 GiB with TP > 1.
double sglang_context_bytes(int world) { return (world > 1 ? 1.5 : 0.82) * kGiB; }

double bits(const Model& m, ParamGroup g, const std::string& uniform) {
  if (!uniform.empty()) return precision_format(uniform).bits_per_weight;
  std::string p = m.precision_of(g);
  if (g == ParamGroup::norms && !m.precision.count(g)) p = m.dtype;
  return precision_format(p).bits_per_weight;
}

// Weight bytes on one rank of pipeline stage [first, last).
double stage_weights(const Model& m, int first, int last, bool has_embed, bool has_head, int attn_tp, int tp, int moe_group,
                     const std::string& uniform) {
  const double h = static_cast<double>(m.hidden_size);
  double bytes = 0;
  auto add = [&](ParamGroup g, double params) { bytes += params * bits(m, g, uniform) / 8; };
  for (int l = first; l < last; ++l) {
    const auto& b = m.blocks[static_cast<std::size_t>(m.layers[static_cast<std::size_t>(l)])];
    const double all = attention_params(m, b), rep = attention_replicated_params(m, b);
    add(ParamGroup::attention, rep + (all - rep) / attn_tp);
    add(ParamGroup::norms, b.has_mlp && b.kind != AttnKind::none ? 2 * h : h);
    if (!b.has_mlp) continue;
    if (m.is_moe_layer(l)) {
      const auto& e = *m.moe;
      const double in = e.latent_size > 0 ? e.latent_size : h;
      add(ParamGroup::routed_experts, 3 * in * static_cast<double>(e.expert_intermediate_size) * e.routed_experts / moe_group);
      add(ParamGroup::shared_experts, 3 * h * static_cast<double>(e.shared_intermediate_size) / tp);
      add(ParamGroup::router, h * e.routed_experts + e.routed_experts);
      if (e.latent_size > 0) add(ParamGroup::latent_proj, (2 * h * e.latent_size) / tp + e.latent_size);
    } else {
      add(ParamGroup::dense_mlp, m.mlp_matrices() * h * static_cast<double>(m.dense_intermediate_size) / tp);
    }
  }
  const double vh = static_cast<double>(m.vocab_size) * h;
  if (has_embed) add(ParamGroup::embedding, vh / tp);  // vocab-parallel
  if (has_head && (!m.tie_word_embeddings || !has_embed)) add(ParamGroup::lm_head, vh / tp);
  if (has_head) add(ParamGroup::norms, h);
  return bytes;
}

std::int64_t floor_to(double x, std::int64_t unit) {
  if (x <= 0) return 0;
  return static_cast<std::int64_t>(std::floor(x / static_cast<double>(unit))) * unit;
}

}  // namespace

std::int64_t sglang_default_chunked_prefill(const Gpu& gpu) {
  const double gib = gpu_mem_mib(gpu) / 1024;
  if (gib < 35) return 2048;
  if (gib < 60) return 4096;
  if (gib < 160) return 8192;
  return 16384;
}

int sglang_default_cuda_graph_max_bs(const Gpu& gpu, int tp) {
  const double gib = gpu_mem_mib(gpu) / 1024;
  if (gib < 20) return 8;
  if (gib < 35) return tp < 4 ? 24 : 80;
  if (gib < 60) return tp < 4 ? 32 : 160;
  if (gib < 160) return tp < 4 ? 256 : 512;
  return 512;
}

// SGLang server_args._handle_gpu_memory_settings (engines.md 2.2, source id 271536807).
double sglang_default_mem_fraction(const Gpu& gpu, const Layout& l, std::int64_t chunked_prefill, int cgbs) {
  const double gpu_mem = gpu_mem_mib(gpu);
  double reserved = 512 + static_cast<double>(std::max<std::int64_t>(chunked_prefill, 2048)) * 1.5 + cgbs * 2.0 + l.tp * l.pp / 8.0 * 1024;
  if (l.dp_attention) {
    reserved += cgbs * l.dp * 3.0;
    if (cgbs > 300) reserved += cgbs * l.dp * 1.5;
  }
  if (gpu_mem > 60 * 1024) reserved = std::max(reserved, 10.0 * 1024);
  return std::round((gpu_mem - reserved) / gpu_mem * 1000) / 1000;
}

// vLLM arg_utils get_batch_defaults: GPUs with at least 70 GiB (not A100) get 8192 / 1024.
std::int64_t vllm_default_max_num_batched_tokens(const Gpu& gpu) { return gpu.reported_bytes() >= 70 * kGiB ? 8192 : 2048; }
std::int64_t vllm_default_max_num_seqs(const Gpu& gpu) { return gpu.reported_bytes() >= 70 * kGiB ? 1024 : 256; }

FitResult evaluate_fit(const Model& m, const Gpu& gpu, const Layout& l, const EngineSettings& s, std::int64_t context, std::int64_t users) {
  FitResult r;
  r.model = m.id;
  r.gpu = gpu.id;
  r.settings = s;
  r.layout = l;
  r.gpus = l.gpus(s.engine);
  r.nodes = r.gpus <= gpu.gpus_per_node ? 1 : (r.gpus + gpu.gpus_per_node - 1) / gpu.gpus_per_node;
  r.context = context;
  r.users = users;
  r.reasons = layout_refusals(m, gpu, s.engine, l, &r.warnings);
  if (context > m.max_context)
    r.reasons.push_back(
        fmt::format("context {} exceeds the model's maximum of {} tokens ({})", context, m.max_context, format_context(m.max_context)));

  const bool vllm = s.engine == Engine::vllm;
  const int attn_tp = (!vllm && l.dp_attention) ? std::max(1, l.tp / std::max(1, l.dp)) : l.tp;
  const int moe_group = vllm ? l.tp * l.dp : l.tp;
  const int dp_groups = vllm ? l.dp : (l.dp_attention ? l.dp : 1);
  const std::int64_t users_per_group = (users + dp_groups - 1) / dp_groups;

  // engine settings and their defaults
  r.max_num_batched_tokens = s.max_num_batched_tokens > 0 ? s.max_num_batched_tokens
                             : vllm                       ? vllm_default_max_num_batched_tokens(gpu)
                                    : (s.chunked_prefill_size > 0 ? s.chunked_prefill_size : sglang_default_chunked_prefill(gpu));
  r.max_num_seqs =
      s.max_num_seqs > 0 ? s.max_num_seqs : (vllm ? vllm_default_max_num_seqs(gpu) : std::max<std::int64_t>(users_per_group, 1));
  r.cuda_graph_max_bs = s.cuda_graph_max_bs > 0 ? s.cuda_graph_max_bs : sglang_default_cuda_graph_max_bs(gpu, l.tp);
  if (vllm) {
    r.utilization_used = s.gpu_memory_utilization > 0 ? s.gpu_memory_utilization : kVllmDefaultUtilization;
  } else {
    r.utilization_used = s.mem_fraction_static > 0 ? s.mem_fraction_static
                                                   : sglang_default_mem_fraction(gpu, l, r.max_num_batched_tokens, r.cuda_graph_max_bs);
  }
  if (r.utilization_used <= 0 || r.utilization_used > 1)
    throw InputError(fmt::format("memory fraction {} must be in (0, 1]", r.utilization_used));

  KvOptions ko;
  ko.tp = attn_tp;
  ko.dcp = l.dcp;
  ko.kv_dtype = s.kv_dtype;
  ko.state_dtype = s.state_dtype;

  const int L = m.num_layers();
  const int pp = std::max(1, std::min(l.pp, L));
  const double cap = gpu.engine_bytes();
  bool first_rank = true;
  int start = 0;
  for (int st = 0; st < pp; ++st) {
    const int n = L / pp + (st < L % pp ? 1 : 0);  // vLLM get_pp_indices: the extra layers go first
    RankBudget b;
    b.stage = st;
    b.layers = n;
    b.capacity_bytes = cap;
    b.weights_bytes = stage_weights(m, start, start + n, st == 0, st == pp - 1, attn_tp, l.tp, moe_group, s.precision);
    Model sub = m;
    sub.layers.assign(m.layers.begin() + start, m.layers.begin() + start + n);
    KvOptions kst = ko;
    kst.draft_layers = st == pp - 1 ? s.draft_layers : 0;
    const KvProfile kv = kv_profile(sub, kst);
    b.kv_bytes_per_token = kv.bytes_per_token;
    b.state_bytes_per_sequence = kv.state_bytes_per_sequence;
    b.bytes_per_sequence = kv.bytes_per_sequence(context);
    double pool = 0;
    if (vllm) {
      b.reserved_bytes = (1 - r.utilization_used) * cap;
      b.activation_bytes = vllm_activation_bytes(m, r.max_num_batched_tokens, r.max_num_seqs);
      b.overhead_bytes = vllm_non_torch_bytes(l.tp * l.pp * l.dp);
      pool = r.utilization_used * cap - b.weights_bytes - b.activation_bytes - b.overhead_bytes;
    } else {
      b.overhead_bytes = sglang_context_bytes(l.tp * l.pp);
      const double free_init = cap - b.overhead_bytes;
      b.reserved_bytes = (1 - r.utilization_used) * free_init;
      b.activation_bytes = 0;  // inside the (1 - mem_fraction_static) reserve with the CUDA graphs
      pool = r.utilization_used * free_init - b.weights_bytes;
    }
    // state pool for linear-attention layers: one state per running sequence on this rank
    const double state = b.state_bytes_per_sequence * static_cast<double>(users_per_group);
    b.state_pool_bytes = pool > 0 ? std::min(state, pool) : 0;
    const double kv_pool = pool - b.state_pool_bytes;
    const double per_token = b.kv_bytes_per_token > 0 ? b.kv_bytes_per_token : 0;
    if (kv_pool > 0 && per_token > 0) {
      b.kv_tokens = vllm ? floor_to(kv_pool / per_token, s.block_size) : static_cast<std::int64_t>(std::floor(kv_pool / per_token));
      b.kv_pool_bytes = static_cast<double>(b.kv_tokens) * per_token;
      b.free_bytes = kv_pool - b.kv_pool_bytes;
    } else if (kv_pool > 0) {
      b.kv_pool_bytes = kv_pool;  // a model with no growing cache (pure linear attention)
      b.kv_tokens = 0;
    } else {
      b.kv_pool_bytes = 0;
      b.free_bytes = kv_pool;  // negative: the shortfall
    }
    r.ranks.push_back(b);
    if (first_rank || b.kv_tokens < r.limiting.kv_tokens) r.limiting = b;
    first_rank = false;
    start += n;
  }

  // capacity at the requested context, minimum over stages
  std::int64_t max_users = -1, best_ctx = -1;
  for (const auto& b : r.ranks) {
    const double pool = b.kv_pool_bytes + b.state_pool_bytes + std::max(0.0, b.free_bytes);
    std::int64_t u = b.bytes_per_sequence > 0 ? static_cast<std::int64_t>(std::floor(pool / b.bytes_per_sequence)) : 0;
    if (pool <= 0) u = 0;
    max_users = max_users < 0 ? u : std::min(max_users, u);
    // the longest context a single user could get on this stage (binary search, capped at the model maximum)
    std::int64_t lo = 0, hi = m.max_context;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo + 1) / 2;
      // bytes for one sequence of `mid` tokens: rescale by the profile of this stage
      const double one = b.state_bytes_per_sequence + b.kv_bytes_per_token * static_cast<double>(mid);
      if (one <= pool)
        lo = mid;
      else
        hi = mid - 1;
    }
    best_ctx = best_ctx < 0 ? lo : std::min(best_ctx, lo);
  }
  r.max_users = std::max<std::int64_t>(0, max_users) * dp_groups;
  r.max_context_one_user = std::max<std::int64_t>(0, best_ctx);
  r.kv_cache_tokens = r.limiting.kv_tokens * dp_groups;
  const double pool_l = r.limiting.kv_pool_bytes + r.limiting.state_pool_bytes + std::max(0.0, r.limiting.free_bytes);
  r.headroom = pool_l > 0 ? 1.0 - r.limiting.bytes_per_sequence * static_cast<double>(users_per_group) / pool_l : -1;

  if (r.limiting.kv_pool_bytes <= 0 && r.limiting.free_bytes < 0)
    r.reasons.push_back(fmt::format("weights and engine reserve exceed the memory: {} short per GPU on stage {} ({} of weights per GPU)",
                                    human_binary(-r.limiting.free_bytes), r.limiting.stage, human_binary(r.limiting.weights_bytes)));
  else if (r.max_users < users)
    r.reasons.push_back(
        fmt::format("the KV/state pool holds {} users at {} tokens, fewer than the {} requested (the pool holds {} tokens per GPU)",
                    r.max_users, context, users, r.limiting.kv_tokens));
  if (vllm && context > 0 && r.max_num_batched_tokens < r.max_num_seqs)
    r.warnings.push_back(fmt::format("max_num_batched_tokens ({}) must be greater than or equal to max_num_seqs ({}).",
                                     r.max_num_batched_tokens, r.max_num_seqs));
  if (!s.precision.empty() && s.precision.find("fp4") != std::string::npos && !gpu.runs_natively(s.precision))
    r.warnings.push_back(fmt::format("{} has no native {}: weight-only kernels (Marlin, triton) run it, slower", gpu.id, s.precision));
  r.fits = r.reasons.empty();

  // flags for both engines
  const std::string kvd = s.kv_dtype == "auto" ? "auto" : s.kv_dtype;
  r.sglang_flags = sglang_parallel_flags(l);
  r.sglang_flags += fmt::format(
      " --mem-fraction-static {:.3f} --context-length {} --max-running-requests {} --kv-cache-dtype {}",
      vllm ? sglang_default_mem_fraction(gpu, l, sglang_default_chunked_prefill(gpu), sglang_default_cuda_graph_max_bs(gpu, l.tp))
           : r.utilization_used,
      context, std::max<std::int64_t>(users, 1), kvd);
  if (r.nodes > 1) r.sglang_flags += fmt::format(" --nnodes {}", r.nodes);
  r.vllm_flags = vllm_parallel_flags(m, l);
  r.vllm_flags += fmt::format(" --gpu-memory-utilization {:.2f} --max-model-len {} --max-num-seqs {} --kv-cache-dtype {}",
                              vllm ? r.utilization_used : kVllmDefaultUtilization, context,
                              vllm ? r.max_num_seqs : std::max<std::int64_t>(users_per_group, 1), kvd);
  if (r.nodes > 1) r.vllm_flags += fmt::format(" --nnodes {}", r.nodes);

  r.assumptions.push_back(vllm ? "vLLM v0.19 accounting: activation peak fitted on three H100 logs (engine-logs.md V3-V5); non-torch 0.25 "
                                 "GiB at TP1, 2.1 GiB at TP>=2"
                               : "SGLang accounting: CUDA context/NCCL 0.82 GiB at TP1 (log S3), 1.5 GiB assumed at TP>1; activations and "
                                 "CUDA graphs live in the (1 - mem_fraction_static) reserve");
  if (m.moe)
    r.assumptions.push_back(
        "weights per GPU: experts split evenly over the expert-parallel group, attention by TP with MLA's low-rank input projections "
        "replicated");
  for (const auto& b : m.blocks)
    if (b.is_linear()) {
      r.assumptions.push_back("linear-attention state pool: one state per running sequence (no radix-cache extra slots)");
      break;
    }
  return r;
}

std::vector<Layout> candidate_layouts(const Model& m, const Gpu& gpu, Engine e, int gpus) {
  std::vector<Layout> out;
  auto try_add = [&](Layout l) {
    if (l.gpus(e) != gpus) return;
    for (const auto& x : out)
      if (x.tp == l.tp && x.ep == l.ep && x.dp == l.dp && x.pp == l.pp && x.dp_attention == l.dp_attention && x.dcp == l.dcp) return;
    if (layout_refusals(m, gpu, e, l).empty()) out.push_back(l);
  };
  const int node = gpu.gpus_per_node;
  bool mla = false;
  for (const auto& b : m.blocks) mla = mla || b.kind == AttnKind::mla;
  // the same layout with the MLA cache split by decode context parallel (the recipes' "balanced")
  auto try_dcp = [&](Layout l) {
    if (!mla || l.tp < 2) return;
    l.dcp = l.tp;
    try_add(l);
  };
  int top = 1;
  while (top * 2 <= gpus) top *= 2;
  // TP a power of two (the engines' custom all-reduce and most attention kernels assume it),
  // the rest of the GPUs in PP (SGLang, vLLM) or DP (vLLM with expert parallel)
  for (int tp = top; tp >= 1; tp /= 2) {
    if (gpus % tp != 0) continue;
    const int rest = gpus / tp;
    Layout l;
    l.tp = tp;
    if (e == Engine::sglang) {
      l.pp = rest;
      if (m.moe) {
        l.ep = tp;
        while (l.ep > 1 && (m.moe->routed_experts % l.ep != 0 || tp % l.ep != 0)) --l.ep;
      }
      try_add(l);
      try_dcp(l);
      if (m.moe && l.ep != 1) {
        Layout t = l;
        t.ep = 1;
        try_add(t);
      }
    } else {
      // vLLM: TP x PP, or TP x DP with expert parallel
      l.pp = rest;
      if (m.moe) l.ep = tp;
      try_add(l);
      try_dcp(l);
      if (m.moe && rest > 1) {
        Layout d = l;
        d.pp = 1;
        d.dp = rest;
        d.ep = tp * rest;
        try_add(d);
      }
    }
    if (tp <= 1) break;
  }
  // prefer TP within a node (no cross-node all-reduce), then larger TP
  std::stable_sort(out.begin(), out.end(), [&](const Layout& a, const Layout& b) {
    const bool ia = a.tp <= node || a.tp <= gpu.scaleup_domain_gpus, ib = b.tp <= node || b.tp <= gpu.scaleup_domain_gpus;
    if (ia != ib) return ia;
    return a.pp < b.pp;
  });
  return out;
}

namespace {
// candidates come in the engines' preferred order (TP inside a node, no PP, EP = TP): the first
// that fits wins; when none fits, the one that came closest. Empty when there is no candidate.
std::optional<FitResult> best_candidate_fit(const Model& m, const Gpu& gpu, const EngineSettings& s, int gpus, std::int64_t context,
                                            std::int64_t users) {
  std::optional<FitResult> best;
  for (const auto& l : candidate_layouts(m, gpu, s.engine, gpus)) {
    FitResult f = evaluate_fit(m, gpu, l, s, context, users);
    if (!best || f.fits || f.max_users > best->max_users) best = std::move(f);
    if (best->fits) break;
  }
  return best;
}
}  // namespace

FitResult fit_on_gpus(const Model& m, const Gpu& gpu, const EngineSettings& s, int gpus, std::int64_t context, std::int64_t users) {
  if (auto best = best_candidate_fit(m, gpu, s, gpus, context, users)) return *best;
  Layout guess;
  guess.tp = gpus;
  FitResult f = evaluate_fit(m, gpu, guess, s, context, users);
  f.fits = false;
  if (f.reasons.empty()) f.reasons.push_back(fmt::format("no engine-valid layout for {} x {}", gpus, gpu.id));
  return f;
}

FitResult search_fit(const Model& m, const Gpu& gpu, const EngineSettings& s, std::int64_t context, std::int64_t users, int max_gpus) {
  FitResult last;
  bool any = false;
  for (int n = 1; n <= max_gpus; ++n) {
    if (n <= gpu.gpus_per_node) {
      if ((n & (n - 1)) != 0) continue;
    } else if (n % gpu.gpus_per_node != 0) {
      continue;
    }
    const std::optional<FitResult> found = best_candidate_fit(m, gpu, s, n, context, users);
    if (!found) continue;
    const FitResult& best = *found;
    if (best.fits) return best;
    last = best;
    any = true;
  }
  if (!any) {
    last.model = m.id;
    last.gpu = gpu.id;
    last.reasons.push_back(fmt::format("no engine-valid layout up to {} GPUs", max_gpus));
  }
  last.fits = false;
  if (std::find_if(last.reasons.begin(), last.reasons.end(), [](const std::string& x) { return x.rfind("no layout", 0) == 0; }) ==
      last.reasons.end())
    last.reasons.insert(last.reasons.begin(), fmt::format("no layout up to {} GPUs fits; the largest tried is shown", max_gpus));
  return last;
}

}  // namespace k3plan
