// Throughput and latency estimator (see include/k3plan/perf.hpp for the model).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <k3plan/error.hpp>
#include <k3plan/params.hpp>
#include <k3plan/perf.hpp>

namespace k3plan {

namespace {

double d(std::int64_t v) { return static_cast<double>(v); }
double d(int v) { return static_cast<double>(v); }

constexpr double kActBytes = 2.0;  // activations exchanged between GPUs in bf16

double bits_of(const Model& m, ParamGroup g) {
  std::string p = m.precision_of(g);
  if (g == ParamGroup::norms && m.precision.find(g) == m.precision.end()) p = m.dtype;
  return precision_format(p).bits_per_weight;
}

int log2_floor(int x) {
  int r = 0;
  while (x > 1) {
    x >>= 1;
    ++r;
  }
  return r;
}

// One-way bandwidth (bytes/s) and latency (s) of a collective over `n` GPUs.
PerfLink link_for(const Gpu& gpu, const PerfEfficiency& eff, int n) {
  const int domain = std::max(gpu.scaleup_domain_gpus, 1);
  if (n <= domain) return {gpu.scaleup_gb_s.value / 2 * 1e9 * eff.comm_efficiency, eff.comm_latency_us * 1e-6};
  return {eff.scaleout_gb_s * 1e9 * eff.comm_efficiency, eff.scaleout_latency_us * 1e-6};
}

}  // namespace

const KvProfile& PerfModel::kv_at(int attn_tp) const {
  const int i = std::clamp(log2_floor(std::max(1, attn_tp)), 0, static_cast<int>(kv.size()) - 1);
  return kv[static_cast<std::size_t>(i)];
}

Model with_precision(const Model& m, const std::string& uniform, const std::string& experts) {
  Model r = m;
  if (!uniform.empty()) {
    const std::string f = precision_format(uniform).name;
    r.default_precision = f;
    for (int gi = 0; gi < kParamGroups; ++gi) r.precision[static_cast<ParamGroup>(gi)] = f;
  }
  if (!experts.empty()) {
    const std::string f = precision_format(experts).name;
    if (m.moe) r.precision[ParamGroup::routed_experts] = f;
  }
  return r;
}

PerfModel prepare_perf_model(const Model& m, const std::string& kv_dtype) {
  PerfModel pm;
  pm.id = m.id;
  pm.layers = m.num_layers();
  pm.hidden = d(m.hidden_size);
  const double h = pm.hidden;
  const ParamCounts p = count_params(m);
  auto bytes = [&](ParamGroup g, double params) { return params * bits_of(m, g) / 8; };

  for (int l = 0; l < m.num_layers(); ++l) {
    const auto& b = m.blocks[static_cast<std::size_t>(m.layers[static_cast<std::size_t>(l)])];
    const double all = attention_params(m, b), rep = attention_replicated_params(m, b);
    pm.attn_sharded_bytes += bytes(ParamGroup::attention, all - rep);
    pm.attn_replicated_bytes += bytes(ParamGroup::attention, rep);
    pm.replicated_bytes += bytes(ParamGroup::norms, b.has_mlp && b.kind != AttnKind::none ? 2 * h : h);
    if (!b.has_mlp) continue;
    if (m.is_moe_layer(l)) {
      const auto& e = *m.moe;
      ++pm.moe_layers;
      const double in = e.latent_size > 0 ? d(e.latent_size) : h;
      pm.expert_bytes = bytes(ParamGroup::routed_experts, 3 * in * d(e.expert_intermediate_size));
      pm.tp_sharded_bytes += bytes(ParamGroup::shared_experts, 3 * h * d(e.shared_intermediate_size));
      pm.replicated_bytes += bytes(ParamGroup::router, h * e.routed_experts + e.routed_experts);
      if (e.latent_size > 0) pm.tp_sharded_bytes += bytes(ParamGroup::latent_proj, 2 * h * e.latent_size);
    } else {
      pm.tp_sharded_bytes += bytes(ParamGroup::dense_mlp, m.mlp_matrices() * h * d(m.dense_intermediate_size));
    }
  }
  const double vh = d(m.vocab_size) * h;
  pm.lm_head_bytes = m.tie_word_embeddings ? bytes(ParamGroup::embedding, vh) : bytes(ParamGroup::lm_head, vh);
  pm.replicated_bytes += bytes(ParamGroup::norms, h);
  if (m.moe) {
    pm.experts = m.moe->routed_experts;
    pm.top_k = m.moe->experts_per_token;
  }

  // active parameters by group (input embedding is a lookup; MTP and vision not on the main path)
  for (int gi = 0; gi < kParamGroups; ++gi) {
    const auto g = static_cast<ParamGroup>(gi);
    if (g == ParamGroup::embedding || g == ParamGroup::mtp || g == ParamGroup::vision) continue;
    double params = p[g];
    if (g == ParamGroup::routed_experts && m.moe) params *= d(m.moe->experts_per_token) / d(m.moe->routed_experts);
    if (params <= 0) continue;
    std::string prec = m.precision_of(g);
    if (g == ParamGroup::norms && m.precision.find(g) == m.precision.end()) prec = m.dtype;
    pm.active.push_back({params, prec});
    pm.active_params += params;
  }
  if (m.tie_word_embeddings) {
    pm.active.push_back({vh, m.precision_of(ParamGroup::embedding)});
    pm.active_params += vh;
  }

  // attention FLOPs per (query token, attended token) pair, summed over layers
  auto add_window = [&](int w, bool compressed, double f) {
    for (auto& x : pm.windowed)
      if (x.window == w && x.compressed == compressed) {
        x.flops += f;
        return;
      }
    pm.windowed.push_back({w, compressed, f});
  };
  for (int l = 0; l < m.num_layers(); ++l) {
    const auto& b = m.blocks[static_cast<std::size_t>(m.layers[static_cast<std::size_t>(l)])];
    switch (b.kind) {
      case AttnKind::gqa: {
        const double f = 2.0 * b.num_heads * (d(b.head_dim) + (b.v_head_dim > 0 ? b.v_head_dim : b.head_dim));
        if (b.sliding_window > 0)
          add_window(b.sliding_window, false, f);
        else {
          pm.attn_decode_flops += f;
          pm.attn_prefill_flops += f;
        }
        break;
      }
      case AttnKind::mla: {
        // decode: absorbed form, scores over the latent + rope, values over the latent
        const double fd = 2.0 * b.num_heads * (2.0 * b.kv_lora_rank + b.qk_rope_head_dim);
        // prefill: expanded per-head form
        const double fp = 2.0 * b.num_heads * (d(b.qk_nope_head_dim) + b.qk_rope_head_dim + b.v_head_dim);
        if (b.indexer_heads > 0) {
          // DeepSeek sparse attention: the main attention sees the top 2048 tokens, the indexer all
          add_window(2048, false, fd);
          const double fi = 2.0 * b.indexer_heads * b.indexer_head_dim;
          pm.attn_decode_flops += fi;
          pm.attn_prefill_flops += fi;
        } else {
          pm.attn_decode_flops += fd;
          pm.attn_prefill_flops += fp;
        }
        break;
      }
      case AttnKind::compressed: {
        const double f = 2.0 * b.num_heads * 2.0 * b.head_dim;
        if (b.sliding_window > 0) add_window(b.sliding_window, false, f);
        if (b.compress_ratio > 0) add_window(b.compress_ratio, true, f);
        break;
      }
      case AttnKind::kda:
        pm.linear_attn_flops += 6.0 * b.num_heads * d(b.head_dim) * b.head_dim;
        break;
      case AttnKind::gdn:
        pm.linear_attn_flops += 6.0 * b.num_v_heads * d(b.head_k_dim) * b.head_v_dim;
        break;
      case AttnKind::mamba2:
        pm.linear_attn_flops += 6.0 * b.num_heads * d(b.head_dim) * b.state_size;
        break;
      case AttnKind::none:
        break;
    }
  }

  pm.kv_dtype = resolve_kv_dtype(kv_dtype, m);
  for (std::size_t i = 0; i < pm.kv.size(); ++i) {
    KvOptions o;
    o.tp = 1 << i;
    o.kv_dtype = kv_dtype;
    pm.kv[i] = kv_profile(m, o);
    for (const auto& l : pm.kv[i].layers)
      if (l.kind == AttnKind::mla && !l.draft) pm.mla_bytes_per_token[i] += l.bytes_per_token;
  }
  for (int l : m.layers)
    if (m.blocks[static_cast<std::size_t>(l)].kind == AttnKind::mla) ++pm.mla_layers;
  return pm;
}

double expected_experts_touched(int experts, int k, double tokens) {
  if (experts <= 0 || k <= 0 || tokens <= 0) return 0;
  const double miss = 1.0 - d(std::min(k, experts)) / d(experts);
  return d(experts) * (1.0 - std::pow(miss, tokens));
}

double spec_tokens_per_step(int draft_tokens, double acceptance) {
  if (draft_tokens <= 0) return 1;
  const double a = std::clamp(acceptance, 0.0, 1.0);
  if (a >= 1.0 - 1e-12) return draft_tokens + 1.0;
  return (1.0 - std::pow(a, draft_tokens + 1.0)) / (1.0 - a);
}

double gemm_tflops(const Gpu& gpu, const std::string& prec) {
  const double bf16 = gpu.tflops_bf16.value;
  if (prec == "mxfp4" || prec == "nvfp4") {
    if (gpu.tflops_fp4.value > 0 && gpu.runs_natively(prec)) return gpu.tflops_fp4.value;
    return bf16;  // weight-only kernels (Marlin, triton) dequantise to bf16
  }
  if (prec == "fp8" || prec == "fp8-block" || prec == "int8") {
    if (gpu.tflops_fp8.value > 0 && gpu.runs_natively("fp8")) return gpu.tflops_fp8.value;
    return bf16;
  }
  return bf16;  // bf16, fp16, fp32 (run as bf16 tensor-core GEMMs), int4 / int2 weight-only
}

LayoutShape layout_shape(const Layout& l, Engine e) {
  LayoutShape s;
  s.pp = std::max(1, l.pp);
  s.tp = std::max(1, l.tp);
  const int dp = std::max(1, l.dp);
  if (e == Engine::vllm) {
    s.gpus = s.tp * s.pp * dp;
    s.stage_gpus = s.tp * dp;
    s.attn_groups = dp;
    s.attn_tp = s.tp;
    s.moe_group = s.tp * dp;
    s.ep = l.ep > 1 ? s.moe_group : 1;
  } else {
    s.gpus = s.tp * s.pp;
    s.stage_gpus = s.tp;
    s.attn_groups = l.dp_attention ? std::min(dp, s.tp) : 1;
    s.attn_tp = std::max(1, s.tp / s.attn_groups);
    s.moe_group = s.tp;
    s.ep = std::clamp(l.ep, 1, s.tp);
  }
  s.dcp = std::clamp(l.dcp, 1, s.attn_tp);
  return s;
}

namespace {

LayoutShape shape_of(const PerfConfig& c) {
  LayoutShape ls = layout_shape(c.layout, c.engine);
  if (ls.pp > 1) ls.stage_layer_fraction = c.stage_layer_fraction;
  return ls;
}

PerfSetup prepare(const PerfModel& pm, const Gpu& gpu, const PerfEfficiency& eff, const LayoutShape& ls, const KernelPath& k) {
  PerfSetup p;
  p.pm = &pm;
  p.eff = &eff;
  p.ls = ls;
  p.stage_f = ls.stage_layer_fraction > 0 ? ls.stage_layer_fraction : 1.0 / ls.pp;
  p.stage_layers = d(pm.layers) * p.stage_f;
  p.bytes_per_s = gpu.hbm_bandwidth_tb_s.value * 1e12 * eff.hbm;
  const double dense = pm.attn_sharded_bytes / ls.attn_tp + pm.attn_replicated_bytes + pm.tp_sharded_bytes / ls.tp + pm.replicated_bytes;
  p.fixed_bytes = (dense + pm.lm_head_bytes / ls.tp) * p.stage_f;
  if (pm.experts > 0) {
    const int moe_tp = std::max(1, ls.moe_group / ls.ep);
    p.experts_rank = d(pm.experts) / ls.ep;
    p.log_miss = std::log1p(-d(std::min(pm.top_k, pm.experts)) / d(pm.experts));
    p.expert_bytes_touch = d(pm.moe_layers) * pm.expert_bytes / moe_tp * p.stage_f;
  }
  for (const auto& g : pm.active) {
    p.linear_s_per_token += 2.0 * g.params / (gemm_tflops(gpu, g.precision) * 1e12);
    p.linear_flops_per_token += 2.0 * g.params;
  }
  const double share = p.stage_f / ls.stage_gpus;
  p.linear_s_per_token *= share;
  p.linear_flops_per_token *= share;
  p.bf16_flops_per_s = gpu.tflops_bf16.value * 1e12;
  p.layer_overhead_us = eff.layer_overhead_us * k.layer_kernel_ratio;
  p.kv = &pm.kv_at(ls.attn_tp);
  const int kvi = std::clamp(log2_floor(std::max(1, ls.attn_tp)), 0, static_cast<int>(pm.kv.size()) - 1);
  p.mla_saved_per_token = pm.mla_bytes_per_token[static_cast<std::size_t>(kvi)] * (1.0 - 1.0 / ls.dcp);
  p.dcp_link = link_for(gpu, eff, ls.dcp);
  p.tp_link = link_for(gpu, eff, ls.tp);
  p.attn_link = link_for(gpu, eff, ls.attn_tp);
  p.moe_link = link_for(gpu, eff, ls.moe_group);
  p.pp_link = link_for(gpu, eff, ls.gpus);
  p.draft_fixed_bytes = dense / std::max(1, pm.layers) + pm.lm_head_bytes / ls.tp;
  return p;
}

double ring_all_reduce(const PerfLink& l, int n, double bytes) {
  return n <= 1 ? 0 : l.latency_s + 2.0 * (n - 1) / n * bytes / l.bytes_per_s;
}
double gather(const PerfLink& l, int n, double bytes) { return n <= 1 ? 0 : l.latency_s + (n - 1.0) / n * bytes / l.bytes_per_s; }

// Attention FLOPs per query token at an average attended context (decode or prefill form).
double attention_flops(const PerfModel& pm, double context, bool prefill) {
  double a = (prefill ? pm.attn_prefill_flops : pm.attn_decode_flops) * context + pm.linear_attn_flops;
  for (const auto& x : pm.windowed) a += x.flops * (x.compressed ? context / x.window : std::min(context, d(x.window)));
  return a;
}

// One pass of `tokens` tokens over one stage. kv_bytes_per_seq: the KV+state one sequence reads in
// decode (whole model, one GPU); attn_flops: per query token (whole model).
PassCost pass(const PerfSetup& p, double tokens, double seqs, double kv_bytes_per_seq, double attn_flops, bool prefill) {
  PassCost c;
  c.tokens = tokens;
  const LayoutShape& ls = p.ls;
  double w = p.fixed_bytes;
  if (p.experts_rank > 0) {
    c.experts_touched = p.experts_rank * -std::expm1(tokens * p.log_miss);
    w += c.experts_touched * p.expert_bytes_touch;
  }
  c.weight_bytes = w;
  c.kv_bytes = prefill ? tokens / ls.attn_groups * (p.kv->bytes_per_token - p.mla_saved_per_token) * p.stage_f
                       : seqs / ls.attn_groups * kv_bytes_per_seq * p.stage_f;
  c.t_memory_ms = (c.weight_bytes + c.kv_bytes) / p.bytes_per_s * 1e3;
  const double mfu = prefill ? p.eff->prefill_mfu : p.eff->decode_mfu;
  const double attn = attn_flops * tokens * p.stage_f / ls.stage_gpus;
  c.flops = p.linear_flops_per_token * tokens + attn;
  c.t_compute_ms = (p.linear_s_per_token * tokens + attn / p.bf16_flops_per_s) / mfu * 1e3;
  const double act = tokens * p.pm->hidden * kActBytes;
  double per_layer = 0;
  if (ls.attn_groups <= 1) {
    per_layer = 2 * ring_all_reduce(p.tp_link, ls.tp, act);  // after attention and after the MLP/MoE
  } else {
    per_layer = ring_all_reduce(p.attn_link, ls.attn_tp, act / ls.attn_groups);  // inside an attention group
    per_layer += 2 * gather(p.moe_link, ls.moe_group, act);                      // gather/dispatch, scatter/combine
  }
  double comm = per_layer * p.stage_layers;
  if (ls.dcp > 1 && !prefill)  // DCP: gather the queries, combine the partial outputs (per MLA layer)
    comm += 2 * gather(p.dcp_link, ls.dcp, act / ls.attn_groups) * p.pm->mla_layers * p.stage_f;
  if (ls.pp > 1) comm += p.pp_link.latency_s + act / ls.stage_gpus / p.pp_link.bytes_per_s;  // to the next stage
  c.t_comm_ms = comm * 1e3;
  c.t_overhead_ms = p.stage_layers * p.layer_overhead_us * 1e-3;
  return c;
}

DecodeStep step_at(const PerfSetup& p, int spec_tokens, double acceptance, double batch, double kv_bytes_per_seq, double attn_flops) {
  DecodeStep s;
  const LayoutShape& ls = p.ls;
  const int k = std::max(0, spec_tokens);
  s.batch = batch;
  const double micro = std::max(1.0, batch / ls.pp);  // PP keeps pp micro-batches in flight
  s.pass = pass(p, micro * (1 + k), micro, kv_bytes_per_seq, attn_flops, false);
  if (k > 0) {
    // draft passes: one extra layer (MTP / EAGLE head) plus the LM head, one token per sequence
    double w = p.draft_fixed_bytes;
    if (p.experts_rank > 0)
      w += p.experts_rank * -std::expm1(micro * p.log_miss) * p.expert_bytes_touch / std::max(1, p.pm->moe_layers) * ls.pp;
    const int n = ls.attn_groups <= 1 ? ls.tp : ls.attn_tp;
    const double one = w / p.bytes_per_s * 1e3 + p.layer_overhead_us * 1e-3 +
                       2 * ring_all_reduce(ls.attn_groups <= 1 ? p.tp_link : p.attn_link, n, micro * p.pm->hidden * kActBytes) * 1e3;
    s.t_draft_ms = k * one;
  }
  s.t_step_ms = ls.pp * s.pass.total_ms() + s.t_draft_ms + p.eff->step_overhead_ms;
  s.tokens_per_step = spec_tokens_per_step(k, acceptance);
  const double roof = std::max(s.pass.t_memory_ms, s.pass.t_compute_ms);
  s.bound = s.pass.t_comm_ms > roof ? "communication" : (s.pass.t_memory_ms >= s.pass.t_compute_ms ? "memory" : "compute");
  return s;
}

// What `ride` prompt tokens add to a decode step of `batch` sequences (mixed chunked prefill): the
// step re-run over decode + prompt tokens (more experts touched, more activations to communicate,
// more GEMM work; the prompt tokens' attention in its prefill form, all at decode efficiency) plus
// writing the prompt's KV.
double mixed_extra_ms(const PerfSetup& p, const DecodeStep& step, double batch, double ride, double attn_pf, double attn_dec) {
  if (ride <= 0) return 0;
  const LayoutShape& ls = p.ls;
  const double micro = std::max(1.0, batch / ls.pp);
  const PassCost& base = step.pass;
  const double tokens = base.tokens + ride / ls.pp;
  const double attn = (base.tokens * attn_dec + ride / ls.pp * attn_pf) / tokens;  // per token, decode and prompt tokens together
  const PassCost both = pass(p, tokens, micro, base.kv_bytes > 0 ? base.kv_bytes / (micro / ls.attn_groups * p.stage_f) : 0, attn, false);
  const double kv_write_ms = ride / ls.pp / ls.attn_groups * p.kv->bytes_per_token * p.stage_f / p.bytes_per_s * 1e3;
  return ls.pp * (std::max(0.0, both.total_ms() - base.total_ms()) + kv_write_ms);
}

double decode_kv_bytes(const PerfSetup& p, double context) {
  const auto ctx = static_cast<std::int64_t>(std::llround(std::max(0.0, context)));
  // state read and written; DCP leaves 1/dcp of each MLA cache on this GPU
  return p.kv->bytes_per_sequence(ctx) + p.kv->state_bytes_per_sequence - p.mla_saved_per_token * d(ctx);
}

// Prefill of `reqs` prompts of `isl` tokens batched together, in chunks of the batch-token limit, ms.
double prefill_batch(const PerfSetup& p, double chunk_tokens, double isl, double attn_flops, double reqs) {
  const double tokens = std::max(1.0, isl * reqs);
  const double n = std::ceil(tokens / chunk_tokens - 1e-9);
  const double tc = tokens / n;
  const PassCost c = pass(p, tc, tc / std::max(1.0, isl), 0, attn_flops, true);
  return (n + p.ls.pp - 1) * c.total_ms() + n * p.eff->step_overhead_ms;
}

}  // namespace

PassCost forward_pass(const PerfModel& pm, const Gpu& gpu, const PerfEfficiency& eff, const LayoutShape& ls, double tokens, double seqs,
                      double context, bool prefill) {
  const PerfSetup p = prepare(pm, gpu, eff, ls, {});
  return pass(p, tokens, seqs, prefill ? 0 : decode_kv_bytes(p, context), attention_flops(pm, context, prefill), prefill);
}

DecodeStep decode_step(const PerfModel& pm, const Gpu& gpu, const PerfEfficiency& eff, const PerfConfig& c, double batch, double context) {
  const PerfSetup p = prepare(pm, gpu, eff, shape_of(c), c.kernels);
  return step_at(p, c.spec_tokens, c.spec_acceptance, batch, decode_kv_bytes(p, context), attention_flops(pm, context, false));
}

double prefill_ms(const PerfModel& pm, const Gpu& gpu, const PerfEfficiency& eff, const PerfConfig& c, double isl) {
  const PerfSetup p = prepare(pm, gpu, eff, shape_of(c), c.kernels);
  return prefill_batch(p, d(std::max<std::int64_t>(c.prefill_chunk, 256)), isl, attention_flops(pm, isl / 2, true), 1);
}

PerfSetup prepare_perf(const PerfModel& pm, const Gpu& gpu, const PerfEfficiency& eff, const Layout& layout, Engine engine,
                       const KernelPath& kernels) {
  return prepare(pm, gpu, eff, layout_shape(layout, engine), kernels);
}

PerfResult estimate_perf(const PerfModel& pm, const Gpu& gpu, const PerfEfficiency& eff, const PerfConfig& c) {
  return estimate_perf(prepare(pm, gpu, eff, shape_of(c), c.kernels), c);
}

PerfResult estimate_perf(const PerfSetup& p, const PerfConfig& c) {
  const PerfModel& pm = *p.pm;
  const PerfEfficiency& eff = *p.eff;
  if (c.concurrency < 1) throw InputError(fmt::format("concurrency {}: must be at least 1", c.concurrency));
  if (!(c.isl >= 1) || !(c.osl >= 1)) throw InputError("input and output lengths must be at least 1 token");
  if (c.spec_tokens > 0 && !(c.spec_acceptance >= 0 && c.spec_acceptance <= 1))
    throw InputError("speculative acceptance must be in [0, 1]");
  PerfResult r;
  r.gpus = p.ls.gpus;
  const double isl = c.isl * c.length_scale, osl = std::max(1.0, c.osl * c.length_scale);
  const double users = c.concurrency;
  const double run = c.max_running > 0 ? std::min(users, d(c.max_running)) : users;
  r.queued = run < users;
  const double ctx = isl + osl / 2;  // average context a decoding sequence attends to
  const double kv_seq = decode_kv_bytes(p, ctx);
  const double attn_dec = attention_flops(pm, ctx, false), attn_pf = attention_flops(pm, isl / 2, true);
  const double chunk = d(std::max<std::int64_t>(c.prefill_chunk, 256));
  const double chunk_reqs = std::max(1.0, chunk / isl);
  const double overhead_s = eff.ttft_overhead_ms / 1e3;
  r.prefill_ms = prefill_batch(p, chunk, isl, attn_pf, 1);

  // fixed point of the closed loop: every user's request takes TTFT + (OSL - 1) x TPOT
  DecodeStep step = step_at(p, c.spec_tokens, c.spec_acceptance, run, kv_seq, attn_dec);
  double tpot = step.t_step_ms / step.tokens_per_step;
  double ttft = r.prefill_ms / 1e3 + overhead_s;
  double e2e = ttft + (osl - 1) * tpot / 1e3;
  double rho = 0;
  double last_batch = -1, pf_batch = r.prefill_ms, n_batch = 1;
  double e_prev = e2e, h_prev = 0;
  for (int it = 0; it < 60; ++it) {
    const double lambda = run / e2e;  // requests per second
    const double nb = std::clamp(lambda * step.t_step_ms / 1e3, 1.0, std::max(1.0, std::min(chunk_reqs, run)));
    if (std::abs(nb - n_batch) > 1e-3 * n_batch) {
      n_batch = nb;
      pf_batch = prefill_batch(p, chunk, isl, attn_pf, n_batch);
    }
    const double pf_req = pf_batch / n_batch;
    rho = std::min(0.95, lambda * pf_req / 1e3);
    const double decoding = std::max(1.0, run * std::max(0.0, 1.0 - ttft / e2e));
    if (std::abs(decoding - last_batch) > 1e-4 * decoding) {
      step = step_at(p, c.spec_tokens, c.spec_acceptance, decoding, kv_seq, attn_dec);
      last_batch = decoding;
    }
    if (c.mixed_prefill) {
      // prompt tokens ride in the decode steps: P per step = arrival rate x step time, up to the
      // budget left after the decode tokens; what does not fit runs as separate prefill steps
      const double dec_tokens = decoding * (1 + std::max(0, c.spec_tokens));
      const double room = std::max(0.0, chunk - dec_tokens);
      // prompts arrive whole: a step that carries one holds a slice of up to `room` tokens (more
      // prompts batched when they arrive faster than one per step); a fraction f of the steps carry one
      double t_mixed = step.t_step_ms, ride = 0, f = 0;
      for (int k = 0; k < 4; ++k) {
        const double arriving = lambda * isl * t_mixed / 1e3;  // prompt tokens per step, on average
        ride = std::min(room, std::max(isl, arriving));
        f = ride > 0 ? std::min(1.0, arriving / ride) : 0;
        t_mixed = step.t_step_ms + f * mixed_extra_ms(p, step, decoding, ride, attn_pf, attn_dec);
      }
      const double left_rate = std::max(0.0, lambda * isl - f * ride / (t_mixed / 1e3));  // prompt tokens/s left over
      rho = std::min(0.95, left_rate / isl * pf_req / 1e3);
      tpot = t_mixed / step.tokens_per_step / (1 - rho);
      // one request's prompt goes through in slices of the room left per step
      const double steps = room > 0 ? std::ceil(isl / std::max(1.0, ride)) : 0;
      const double wait = rho / (2 * (1 - rho)) * pf_req / 1e3;
      ttft = (room > 0 ? steps * t_mixed : pf_batch) / 1e3 + 0.5 * t_mixed / 1e3 + wait + overhead_s;
    } else {
      tpot = step.t_step_ms / step.tokens_per_step / (1 - rho);
      const double wait = rho / (2 * (1 - rho)) * pf_req / 1e3;  // M/D/1 queue for the prefill work
      ttft = pf_batch / 1e3 + 0.5 * step.t_step_ms / 1e3 + wait + overhead_s;
    }
    const double next = ttft + (osl - 1) * tpot / 1e3;
    const double h = next - e2e;
    if (std::abs(h) < 1e-4 * e2e) {
      e2e = next;
      break;
    }
    // secant step on h(E) = next(E) - E, falling back to a damped step when it overshoots
    double e_new = e2e + 0.5 * h;
    if (it > 0 && h != h_prev) {
      const double sec = e2e - h * (e2e - e_prev) / (h - h_prev);
      if (sec > 0.5 * e2e && sec < 2 * e2e) e_new = sec;
    }
    e_prev = e2e;
    h_prev = h;
    e2e = e_new;
  }
  r.running = step.batch;
  r.prefill_share = rho;
  r.step = step;
  r.tpot_ms = tpot;
  r.interactivity = 1000.0 / tpot;
  // users beyond what the KV pool holds wait for a running request to finish
  const double extra_wait = r.queued ? (users / run - 1) * e2e : 0;
  r.ttft_s = ttft + extra_wait;
  r.e2e_s = e2e + extra_wait;
  const double req_per_s = run / e2e;
  r.tput_input_per_gpu = req_per_s * isl / p.ls.gpus;
  r.tput_output_per_gpu = req_per_s * osl / p.ls.gpus;
  r.tput_total_per_gpu = r.tput_input_per_gpu + r.tput_output_per_gpu;
  r.bound = step.bound;
  return r;
}

DisaggResult estimate_disagg(const PerfSetup& pf, const PerfSetup& dec, const Gpu& gpu, const DisaggConfig& c) {
  const PerfModel& pm = *dec.pm;
  const PerfEfficiency& eff = *dec.eff;
  if (c.concurrency < 1) throw InputError(fmt::format("concurrency {}: must be at least 1", c.concurrency));
  if (c.prefill_workers < 1 || c.decode_workers < 1)
    throw InputError("disaggregated serving needs at least one prefill and one decode worker");
  const PerfConfig& pc = c.prefill;
  const PerfConfig& dc = c.decode;
  if (!(pc.isl >= 1) || !(pc.osl >= 1)) throw InputError("input and output lengths must be at least 1 token");
  if (dc.spec_tokens > 0 && !(dc.spec_acceptance >= 0 && dc.spec_acceptance <= 1))
    throw InputError("speculative acceptance must be in [0, 1]");
  DisaggResult r;
  r.prefill_gpus = pf.ls.gpus * c.prefill_workers;
  r.decode_gpus = dec.ls.gpus * c.decode_workers;
  const int all_gpus = r.prefill_gpus + r.decode_gpus;
  r.total.gpus = all_gpus;
  const double isl = pc.isl * pc.length_scale, osl = std::max(1.0, pc.osl * pc.length_scale);
  const double users = c.concurrency, pw = c.prefill_workers, dw = c.decode_workers;
  const double ctx = isl + osl / 2;
  const double kv_seq = decode_kv_bytes(dec, ctx);
  const double attn_dec = attention_flops(pm, ctx, false), attn_pf = attention_flops(*pf.pm, isl / 2, true);
  const double chunk = d(std::max<std::int64_t>(pc.prefill_chunk, 256));
  const double chunk_reqs = std::max(1.0, chunk / isl);
  const double overhead_s = eff.ttft_overhead_ms / 1e3;
  auto pf_ms = [&](double n) { return prefill_batch(pf, chunk, isl, attn_pf, n); };
  r.prefill_alone_ms = pf_ms(1);
  r.total.prefill_ms = r.prefill_alone_ms;
  const double mu = pw * chunk_reqs / pf_ms(chunk_reqs) * 1e3;  // requests/s the prefill workers finish at full batches

  // KV transfer of one request: each side's GPU holds the cache at its own attention-TP shard
  const auto isl_tokens = static_cast<std::int64_t>(std::llround(isl));
  const double send = pf.kv->bytes_per_sequence(isl_tokens) + pf.kv->state_bytes_per_sequence;
  const double recv = dec.kv->bytes_per_sequence(isl_tokens) + dec.kv->state_bytes_per_sequence;
  r.kv_bytes_per_request = std::max(send, recv);
  const PerfLink link = link_for(gpu, eff, all_gpus);
  r.kv_scaleup = all_gpus <= std::max(gpu.scaleup_domain_gpus, 1);
  r.kv_link_gb_s = link.bytes_per_s / 1e9;
  r.kv_transfer_ms = (link.latency_s + r.kv_bytes_per_request / link.bytes_per_s) * 1e3;

  // decode: TPOT at `b` sequences decoding over all decode workers
  const double cap = dc.max_running > 0 ? std::min(users, d(dc.max_running) * dw) : users;
  auto step_for = [&](double b) { return step_at(dec, dc.spec_tokens, dc.spec_acceptance, std::max(1.0, b / dw), kv_seq, attn_dec); };
  auto tpot_of = [&](const DecodeStep& s) { return s.t_step_ms / s.tokens_per_step; };
  const double decode_len = osl - 1;  // tokens after the first (which the prefill worker produces)
  const double lambda_dec = decode_len > 0 ? cap / (decode_len * tpot_of(step_for(cap)) / 1e3) : 1e300;

  struct State {
    double n = 1, batch_ms = 0, rho = 0, wait_s = 0, b = 0, tpot = 0, ttft_s = 0, e2e_s = 0;
    DecodeStep step;
  };
  auto at = [&](double lambda) {
    State st;
    const double lw = lambda / pw;
    st.batch_ms = pf_ms(1);
    for (int k = 0; k < 40; ++k) {  // the prompts that arrive while one batch runs make up the next
      const double n = std::clamp(lw * st.batch_ms / 1e3, 1.0, chunk_reqs);
      if (std::abs(n - st.n) < 1e-4 * st.n) break;
      st.n = n;
      st.batch_ms = pf_ms(n);
    }
    // gated batch service: a prompt waits for the batch in progress (busy a fraction u of the time,
    // half a batch on average), plus the M/D/1 queue against the full-batch capacity
    st.rho = lw * st.batch_ms / st.n / 1e3;
    const double full = lambda / mu;
    st.wait_s = full < 1 ? std::min(1.0, st.rho) * 0.5 * st.batch_ms / 1e3 + full / (2 * (1 - full)) * pw / mu : 1e300;
    // sequences decoding: b = lambda x (OSL - 1) x TPOT(b), between 0 and the decode pools' cap
    double lo = 0, hi = cap;
    if (decode_len <= 0) {
      hi = 0;
    } else if (lambda * decode_len * tpot_of(step_for(cap)) / 1e3 < cap) {
      for (int k = 0; k < 50; ++k) {
        const double mid = 0.5 * (lo + hi);
        (lambda * decode_len * tpot_of(step_for(mid)) / 1e3 > mid ? lo : hi) = mid;
      }
    }
    st.b = hi;
    st.step = step_for(st.b);
    st.tpot = tpot_of(st.step);
    st.ttft_s = st.wait_s + st.batch_ms / 1e3 + r.kv_transfer_ms / 1e3 + 0.5 * st.step.t_step_ms / 1e3 + overhead_s;
    st.e2e_s = st.ttft_s + decode_len * st.tpot / 1e3;
    return st;
  };
  // the rate C users sustain: lambda x E2E(lambda) = C (increasing in lambda), below both capacities
  const double top = std::min(mu, lambda_dec) * (1 - 1e-9);
  double lambda = top;
  State st = at(top);
  bool saturated = lambda * st.e2e_s <= users;
  if (!saturated) {
    double lo = top * 1e-9, hi = top;
    for (int k = 0; k < 100 && hi / lo > 1 + 1e-7; ++k) {
      const double mid = std::sqrt(lo * hi);
      (mid * at(mid).e2e_s < users ? lo : hi) = mid;
    }
    lambda = std::sqrt(lo * hi);
    st = at(lambda);
  }
  // users beyond what the system sustains wait before prefill
  const double extra_s = saturated ? std::max(0.0, users / lambda - st.e2e_s) : 0;
  r.requests_per_s = lambda;
  r.prefill_batch_ms = st.batch_ms;
  r.prefill_batch_requests = st.n;
  r.prefill_wait_s = st.wait_s + extra_s;
  r.prefill_utilisation = lambda / mu;
  r.decode_batch_per_worker = std::max(1.0, st.b / dw);
  r.decode_batch_per_rank = r.decode_batch_per_worker / dec.ls.attn_groups;
  r.decode_utilisation = st.b / cap;
  r.limit = saturated ? (lambda_dec < mu ? "decode" : "prefill") : (r.prefill_utilisation > 0.9 ? "prefill" : "users");

  PerfResult& t = r.total;
  t.step = st.step;
  t.running = st.b;
  t.tpot_ms = st.tpot;
  t.interactivity = 1000.0 / st.tpot;
  t.ttft_s = st.ttft_s + extra_s;
  t.e2e_s = st.e2e_s + extra_s;
  t.prefill_share = st.rho;
  t.queued = saturated;
  t.tput_input_per_gpu = lambda * isl / all_gpus;
  t.tput_output_per_gpu = lambda * osl / all_gpus;
  t.tput_total_per_gpu = t.tput_input_per_gpu + t.tput_output_per_gpu;
  t.bound = st.step.bound;
  r.input_per_prefill_gpu = lambda * isl / r.prefill_gpus;
  r.output_per_decode_gpu = lambda * osl / r.decode_gpus;
  return r;
}

}  // namespace k3plan
