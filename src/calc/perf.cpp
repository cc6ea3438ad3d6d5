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

// Attention parameters that every TP rank keeps whole (MLA's low-rank input projections, the DSA
// indexer keys; DeepSeek V4's q and kv down-projections), as the fit budget counts them.
double replicated_attention_params(const Model& m, const AttentionBlock& b) {
  const double h = d(m.hidden_size);
  if (b.kind == AttnKind::mla) {
    double p = h * (b.kv_lora_rank + b.qk_rope_head_dim) + b.kv_lora_rank;
    if (b.q_lora_rank > 0) p += h * b.q_lora_rank + b.q_lora_rank;
    if (b.indexer_heads > 0) p += h * b.indexer_head_dim + h * b.indexer_heads;
    return p;
  }
  if (b.kind == AttnKind::compressed) return h * b.q_lora_rank + h * b.head_dim * b.num_kv_heads;
  return 0;
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
struct Link {
  double bytes_per_s;
  double latency_s;
};
Link link_for(const Gpu& gpu, const PerfEfficiency& eff, int n) {
  const int domain = std::max(gpu.scaleup_domain_gpus, 1);
  if (n <= domain) return {gpu.scaleup_gb_s.value / 2 * 1e9 * eff.comm_efficiency, eff.comm_latency_us * 1e-6};
  return {eff.scaleout_gb_s * 1e9 * eff.comm_efficiency, eff.scaleout_latency_us * 1e-6};
}

// Ring all-reduce of `bytes` over n GPUs, seconds.
double all_reduce_s(const Gpu& gpu, const PerfEfficiency& eff, int n, double bytes) {
  if (n <= 1) return 0;
  const Link l = link_for(gpu, eff, n);
  return l.latency_s + 2.0 * (n - 1) / n * bytes / l.bytes_per_s;
}

// All-gather (or reduce-scatter, or all-to-all dispatch) where each GPU ends up with `bytes`.
double gather_s(const Gpu& gpu, const PerfEfficiency& eff, int n, double bytes) {
  if (n <= 1) return 0;
  const Link l = link_for(gpu, eff, n);
  return l.latency_s + (n - 1.0) / n * bytes / l.bytes_per_s;
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
    const double all = attention_params(m, b), rep = replicated_attention_params(m, b);
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
        if (b.sliding_window > 0) add_window(b.sliding_window, false, f);
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
  }
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
  return s;
}

PassCost forward_pass(const PerfModel& pm, const Gpu& gpu, const PerfEfficiency& eff, const LayoutShape& ls, double tokens, double seqs,
                      double context, bool prefill) {
  PassCost c;
  c.tokens = tokens;
  const double f = 1.0 / ls.pp;  // this stage's share of the layers
  const double stage_layers = d(pm.layers) * f;

  // bytes read per GPU
  double w = pm.attn_sharded_bytes / ls.attn_tp + pm.attn_replicated_bytes + pm.tp_sharded_bytes / ls.tp + pm.replicated_bytes;
  w += pm.lm_head_bytes / ls.tp;
  if (pm.experts > 0) {
    const int moe_tp = std::max(1, ls.moe_group / ls.ep);
    const double per_rank = d(pm.experts) / ls.ep;
    c.experts_touched = per_rank * (1.0 - std::pow(1.0 - d(pm.top_k) / d(pm.experts), tokens));
    w += d(pm.moe_layers) * c.experts_touched * pm.expert_bytes / moe_tp;
  }
  c.weight_bytes = w * f;
  const KvProfile& kv = pm.kv_at(ls.attn_tp);
  const double seqs_g = seqs / ls.attn_groups;
  if (prefill) {
    c.kv_bytes = tokens / ls.attn_groups * kv.bytes_per_token * f;  // written once
  } else {
    const auto ctx = static_cast<std::int64_t>(std::llround(std::max(0.0, context)));
    c.kv_bytes = seqs_g * (kv.bytes_per_sequence(ctx) + kv.state_bytes_per_sequence) * f;  // state read and written
  }
  c.t_memory_ms = (c.weight_bytes + c.kv_bytes) / (gpu.hbm_bandwidth_tb_s.value * 1e12 * eff.hbm) * 1e3;

  // FLOPs per GPU, each GEMM at the rate its format runs at
  const double mfu = prefill ? eff.prefill_mfu : eff.decode_mfu;
  const double per_gpu = tokens * f / ls.stage_gpus;
  double t = 0, flops = 0;
  for (const auto& g : pm.active) {
    const double fl = 2.0 * g.params * per_gpu;
    flops += fl;
    t += fl / (gemm_tflops(gpu, g.precision) * 1e12 * mfu);
  }
  double attn = (prefill ? pm.attn_prefill_flops : pm.attn_decode_flops) * context + pm.linear_attn_flops;
  for (const auto& x : pm.windowed) attn += x.flops * (x.compressed ? context / x.window : std::min(context, d(x.window)));
  attn *= per_gpu;
  flops += attn;
  t += attn / (gpu.tflops_bf16.value * 1e12 * mfu);
  c.flops = flops;
  c.t_compute_ms = t * 1e3;

  // communication per layer on this stage
  const double act = tokens * pm.hidden * kActBytes;  // all tokens of the pass
  double per_layer = 0;
  if (ls.attn_groups <= 1) {
    per_layer = 2 * all_reduce_s(gpu, eff, ls.tp, act);  // after attention and after the MLP/MoE
  } else {
    per_layer = all_reduce_s(gpu, eff, ls.attn_tp, act / ls.attn_groups);  // inside an attention group
    per_layer += 2 * gather_s(gpu, eff, ls.moe_group, act);                 // gather/dispatch and scatter/combine
  }
  double comm = per_layer * stage_layers;
  if (ls.pp > 1) {  // send the activations to the next stage (over scale-out when the stages span nodes)
    const Link l = link_for(gpu, eff, ls.gpus);
    comm += l.latency_s + act / ls.stage_gpus / l.bytes_per_s;
  }
  c.t_comm_ms = comm * 1e3;
  c.t_overhead_ms = stage_layers * eff.layer_overhead_us * 1e-3;
  return c;
}

DecodeStep decode_step(const PerfModel& pm, const Gpu& gpu, const PerfEfficiency& eff, const PerfConfig& c, double batch, double context) {
  DecodeStep s;
  const LayoutShape ls = layout_shape(c.layout, c.engine);
  const int k = std::max(0, c.spec_tokens);
  s.batch = batch;
  const double micro = std::max(1.0, batch / ls.pp);  // PP keeps pp micro-batches in flight
  s.pass = forward_pass(pm, gpu, eff, ls, micro * (1 + k), micro, context, false);
  const double stage = s.pass.total_ms();
  if (k > 0) {
    // draft passes: one extra layer (MTP / EAGLE head) plus the LM head, one token per sequence
    double w = (pm.attn_sharded_bytes / ls.attn_tp + pm.attn_replicated_bytes + pm.tp_sharded_bytes / ls.tp + pm.replicated_bytes) / std::max(1, pm.layers);
    if (pm.experts > 0) {
      const int moe_tp = std::max(1, ls.moe_group / ls.ep);
      w += d(pm.experts) / ls.ep * (1.0 - std::pow(1.0 - d(pm.top_k) / d(pm.experts), micro)) * pm.expert_bytes / moe_tp;
    }
    w += pm.lm_head_bytes / ls.tp;
    const double one = w / (gpu.hbm_bandwidth_tb_s.value * 1e12 * eff.hbm) * 1e3 + eff.layer_overhead_us * 1e-3 +
                       2 * all_reduce_s(gpu, eff, ls.attn_groups <= 1 ? ls.tp : ls.attn_tp, micro * pm.hidden * kActBytes) * 1e3;
    s.t_draft_ms = k * one;
  }
  s.t_step_ms = ls.pp * stage + s.t_draft_ms + eff.step_overhead_ms;
  s.tokens_per_step = spec_tokens_per_step(k, c.spec_acceptance);
  const double roof = std::max(s.pass.t_memory_ms, s.pass.t_compute_ms);
  s.bound = s.pass.t_comm_ms > roof ? "communication" : (s.pass.t_memory_ms >= s.pass.t_compute_ms ? "memory" : "compute");
  return s;
}

namespace {

// Prefill of `reqs` prompts of `isl` tokens batched together, in chunks of the batch-token limit, ms.
double prefill_batch_ms(const PerfModel& pm, const Gpu& gpu, const PerfEfficiency& eff, const PerfConfig& c, const LayoutShape& ls, double isl,
                        double reqs) {
  const double tokens = std::max(1.0, isl * reqs);
  const double chunk = d(std::max<std::int64_t>(c.prefill_chunk, 256));
  const double n = std::ceil(tokens / chunk - 1e-9);
  const double tc = tokens / n;
  const PassCost p = forward_pass(pm, gpu, eff, ls, tc, tc / std::max(1.0, isl), isl / 2, true);
  return (n + ls.pp - 1) * p.total_ms() + n * eff.step_overhead_ms;
}

}  // namespace

double prefill_ms(const PerfModel& pm, const Gpu& gpu, const PerfEfficiency& eff, const PerfConfig& c, double isl) {
  return prefill_batch_ms(pm, gpu, eff, c, layout_shape(c.layout, c.engine), isl, 1);
}

PerfResult estimate_perf(const PerfModel& pm, const Gpu& gpu, const PerfEfficiency& eff, const PerfConfig& c) {
  if (c.concurrency < 1) throw InputError(fmt::format("concurrency {}: must be at least 1", c.concurrency));
  if (!(c.isl >= 1) || !(c.osl >= 1)) throw InputError("input and output lengths must be at least 1 token");
  if (c.spec_tokens > 0 && !(c.spec_acceptance >= 0 && c.spec_acceptance <= 1)) throw InputError("speculative acceptance must be in [0, 1]");
  PerfResult r;
  const LayoutShape ls = layout_shape(c.layout, c.engine);
  r.gpus = ls.gpus;
  const double isl = c.isl * c.length_scale, osl = std::max(1.0, c.osl * c.length_scale);
  const double users = c.concurrency;
  const double run = c.max_running > 0 ? std::min(users, d(c.max_running)) : users;
  r.queued = run < users;
  const double ctx = isl + osl / 2;
  const double chunk_reqs = std::max(1.0, d(c.prefill_chunk) / isl);
  r.prefill_ms = prefill_batch_ms(pm, gpu, eff, c, ls, isl, 1);

  // fixed point of the closed loop
  DecodeStep step = decode_step(pm, gpu, eff, c, run, ctx);
  double tpot = step.t_step_ms / step.tokens_per_step;
  double ttft = r.prefill_ms / 1e3 + eff.ttft_overhead_ms / 1e3;
  double e2e = ttft + (osl - 1) * tpot / 1e3;
  double rho = 0;
  for (int it = 0; it < 40; ++it) {
    const double lambda = run / e2e;  // requests per second
    const double n_batch = std::clamp(lambda * step.t_step_ms / 1e3, 1.0, std::max(1.0, std::min(chunk_reqs, run)));
    const double pf_batch = prefill_batch_ms(pm, gpu, eff, c, ls, isl, n_batch);
    const double pf_req = pf_batch / n_batch;
    rho = std::min(0.95, lambda * pf_req / 1e3);
    const double decoding = std::max(1.0, run * std::max(0.0, 1.0 - ttft / e2e));
    step = decode_step(pm, gpu, eff, c, decoding, ctx);
    tpot = step.t_step_ms / step.tokens_per_step / (1 - rho);
    const double wait = rho / (2 * (1 - rho)) * pf_req / 1e3;  // M/D/1 queue for the prefill server
    ttft = pf_batch / 1e3 + 0.5 * step.t_step_ms / 1e3 + wait + eff.ttft_overhead_ms / 1e3;
    const double next = ttft + (osl - 1) * tpot / 1e3;
    if (std::abs(next - e2e) < 1e-6 * e2e) {
      e2e = next;
      break;
    }
    e2e = 0.5 * e2e + 0.5 * next;
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
  r.tput_input_per_gpu = req_per_s * isl / ls.gpus;
  r.tput_output_per_gpu = req_per_s * osl / ls.gpus;
  r.tput_total_per_gpu = r.tput_input_per_gpu + r.tput_output_per_gpu;
  r.bound = step.bound;
  return r;
}

}  // namespace k3plan
