#pragma once
// Throughput and latency of one deployment, from first principles plus a few calibrated factors.
// Pure calculator: no I/O. The factors come from data/perf/efficiency.yaml (loaded by the command
// layer, see perf_cmd.hpp); every result lists the factors it used.
//
// One forward pass over T tokens on one pipeline stage costs, per GPU,
//   t = max(bytes / (HBM bandwidth x hbm),  sum_format FLOPs / (dense TFLOPS[format] x mfu))
//       + communication (TP all-reduce or DP-attention gather/scatter, EP dispatch/combine, PP send)
//       + per-layer overhead (kernel launches, synchronisation)
// where bytes = the weights the pass touches (attention, dense and shared MLP, LM head, and of the
// routed experts only those the T tokens pick: E x (1 - (1 - k/E)^T) per layer, spread over the EP
// ranks) + the KV cache and recurrent state of the sequences in the batch.
// A decode step is one such pass over B x (1 + draft tokens) tokens, plus a fixed per-step
// overhead and the draft passes; prefill is a pass over a chunk of prompt tokens. A closed-loop
// continuous-batching server with C users (InferenceX's fixed --max-concurrency) then settles
// where every user's request takes TTFT + (OSL - 1) x TPOT and prefill work steals its share of
// the decode time.
#include <array>
#include <cstdint>
#include <k3plan/gpu.hpp>
#include <k3plan/kv.hpp>
#include <k3plan/model.hpp>
#include <k3plan/parallel.hpp>
#include <string>
#include <vector>

namespace k3plan {

// Efficiency factors for one GPU family and serving engine (data/perf/efficiency.yaml).
struct PerfEfficiency {
  std::string family;                    // e.g. nvidia-hopper
  std::string engine;                    // sglang | vllm | trt | atom
  std::string precision = "any";         // the weight precision the entry was fitted at (fp8, fp4) or any
  std::string versions = "any";          // engine release window FROM..TO (either side open) or any
  double hbm = 0.7;                      // fraction of peak HBM bandwidth a decode pass reaches
  double decode_mfu = 0.35;              // fraction of dense peak FLOPS in decode GEMMs
  double prefill_mfu = 0.45;             // fraction of dense peak FLOPS in prefill
  double step_overhead_ms = 1.0;         // fixed per decode step (scheduler, sampling, graph launch)
  double layer_overhead_us = 20;         // per decoder layer per forward pass (kernel launches, syncs)
  double ttft_overhead_ms = 30;          // per request outside the GPU: HTTP, tokenisation, scheduling, first chunk
  double comm_latency_us = 10;           // per collective (all-reduce, all-to-all) start-up latency
  double scaleout_latency_us = 30;       // per collective when the group leaves the scale-up domain
  double comm_efficiency = 0.7;          // fraction of the link's one-way bandwidth a collective reaches
  double scaleout_gb_s = 50;             // per GPU, one way, when a group leaves the scale-up domain
  int spec_tokens = 3;                   // default draft tokens when speculative decoding is on
  double spec_acceptance = 0.7;          // default per-token acceptance probability
  std::vector<std::string> assumptions;  // one line per factor: value and how it was obtained
  std::string calibrated_on;             // the GPU whose measured rows fitted these factors ("" = priors only)
  bool calibrated = true;                // false: derived from another family (derived_from), not measured on this one
  std::string derived_from;
};

// Model constants the estimator needs, computed once per (model, weight precision, KV dtype).
struct PerfModel {
  std::string id;
  int layers = 0;
  int moe_layers = 0;
  double hidden = 0;
  // weight bytes over all layers, by how they are split across GPUs
  double attn_sharded_bytes = 0;     // attention, split by the attention-TP degree
  double attn_replicated_bytes = 0;  // MLA low-rank input projections, on every rank
  double tp_sharded_bytes = 0;       // dense MLP, shared experts, latent projections: split by TP
  double replicated_bytes = 0;       // router, norms
  double lm_head_bytes = 0;          // vocab-parallel, split by TP
  double expert_bytes = 0;           // one routed expert in one layer
  int experts = 0;                   // routed experts per MoE layer (0 = dense model)
  int top_k = 0;
  // active parameters per token with the weight format their GEMMs run in
  struct ActiveGroup {
    double params = 0;
    std::string precision;  // weight format name (bf16, fp8-block, mxfp4, ...)
  };
  std::vector<ActiveGroup> active;  // non-zero groups only
  double active_params = 0;
  // attention FLOPs per query token per attended context token, summed over full-attention layers
  double attn_decode_flops = 0;   // MLA absorbed (latent) form in decode
  double attn_prefill_flops = 0;  // MLA expanded (per-head) form in prefill
  struct WindowLayers {
    int window = 0;  // sliding window (tokens), or compress ratio when `compressed`
    bool compressed = false;
    double flops = 0;  // per query token per attended token, all such layers
  };
  std::vector<WindowLayers> windowed;
  double linear_attn_flops = 0;  // per token, constant (recurrent state update), all layers
  // KV cache and state per sequence per GPU, by attention-TP degree 1, 2, 4, ..., 128
  std::string kv_dtype;
  std::array<KvProfile, 8> kv;
  const KvProfile& kv_at(int attn_tp) const;
  int mla_layers = 0;                           // layers whose cache decode context parallel (DCP) can split
  std::array<double, 8> mla_bytes_per_token{};  // their share of kv[i].bytes_per_token
};

// A copy of `m` with every weight in `uniform` (when set) or the routed experts in `experts`
// (when set; the rest as shipped). Throws InputError on an unknown format.
Model with_precision(const Model& m, const std::string& uniform, const std::string& experts);

PerfModel prepare_perf_model(const Model& m, const std::string& kv_dtype = "auto");

// The engine's kernel path on this GPU where it differs from the path the per-layer overhead was
// fitted on (src/engines, kernel_path(): the engine models own it, with the source of each count):
// the fitted layer_overhead_us is per layer on the engine's fused path and scales with the number
// of kernels a layer launches.
struct KernelPath {
  double layer_kernel_ratio = 1.0;  // kernels per decoder layer on this GPU / on the fused path
  std::string source;               // why (engine file and commit); "" = the fused path, nothing differs
};

struct PerfConfig {
  Layout layout;
  KernelPath kernels;                  // engine kernel path on this GPU (engine models: kernel_path())
  Engine engine = Engine::sglang;      // layout semantics (GPU count, MoE group) and memory rules
  double isl = 1024, osl = 1024;       // nominal input / output tokens per request
  double length_scale = 1.0;           // mean request length / nominal (InferenceX draws 80-100%: 0.9)
  int concurrency = 1;                 // users in the closed loop (InferenceX --max-concurrency)
  int spec_tokens = 0;                 // draft tokens per step; 0 = no speculative decoding
  double spec_acceptance = 0;          // per-token acceptance probability of a draft token
  std::int64_t max_running = 0;        // sequences the KV pool holds at ISL+OSL (0 = no limit)
  std::int64_t prefill_chunk = 16384;  // batch-token limit per prefill step
  // Chunked prefill mixed into decode steps: one token budget per step (prefill_chunk), decode
  // tokens first, prompt chunks fill the rest (vLLM V1's scheduler; SGLang only with
  // --enable-mixed-chunk, default off in server_args.py, so by default its prefill batches run
  // between decode steps and stall them).
  bool mixed_prefill = false;
  // The slowest pipeline stage's share of the decoder layers, as the engine splits them (its
  // get_pp_indices rule when PP does not divide the layers, or a manual VLLM_ / SGLANG_PP_LAYER_
  // PARTITION); 0 = 1 / PP. Every micro-batch waits for that stage.
  double stage_layer_fraction = 0;
};

// One forward pass on one pipeline stage, per GPU.
struct PassCost {
  double tokens = 0;
  double weight_bytes = 0;
  double kv_bytes = 0;
  double experts_touched = 0;  // expected routed experts touched per MoE layer on one EP rank
  double flops = 0;
  double t_memory_ms = 0, t_compute_ms = 0, t_comm_ms = 0, t_overhead_ms = 0;
  double total_ms() const { return (t_memory_ms > t_compute_ms ? t_memory_ms : t_compute_ms) + t_comm_ms + t_overhead_ms; }
};

struct DecodeStep {
  double batch = 0;              // sequences decoding
  PassCost pass;                 // the verify/decode pass (one stage)
  double t_draft_ms = 0;         // draft passes (speculative decoding)
  double t_step_ms = 0;          // whole step, all pipeline stages, incl. per-step overhead
  double tokens_per_step = 1;    // accepted tokens per sequence per step
  const char* bound = "memory";  // memory | compute | communication
};

struct PerfResult {
  int gpus = 0;
  double ttft_s = 0;
  double tpot_ms = 0;
  double interactivity = 0;  // tok/s per user = 1000 / TPOT
  double e2e_s = 0;
  double tput_input_per_gpu = 0, tput_output_per_gpu = 0, tput_total_per_gpu = 0;
  double running = 0;        // sequences decoding at steady state
  double prefill_share = 0;  // fraction of GPU time spent in prefill
  double prefill_ms = 0;     // one request's prefill alone (ISL tokens)
  DecodeStep step;
  const char* bound = "memory";
  bool queued = false;  // concurrency above what the KV pool holds: requests wait
};

// Expected distinct experts picked per layer by `tokens` tokens each choosing k of E
// (independent, uniform routing): E x (1 - (1 - k/E)^tokens).
double expected_experts_touched(int experts, int k, double tokens);
// Expected tokens a sequence advances per speculative step with K draft tokens each accepted
// with probability a (stopping at the first rejection, plus the bonus token): (1 - a^(K+1)) / (1 - a).
double spec_tokens_per_step(int draft_tokens, double acceptance);
// Dense TFLOPS a weight format's GEMMs run at on `gpu`: FP4 only where the GPU runs that format
// natively (tflops_fp4 > 0); FP8 where fp8 is native; everything else at BF16 (weight-only kernels).
double gemm_tflops(const Gpu& gpu, const std::string& weight_precision);

// GPUs the layout occupies and its degrees as the estimator uses them.
struct LayoutShape {
  int gpus = 1, stage_gpus = 1, pp = 1;
  int attn_groups = 1;  // DP-attention groups (each holds its own sequences)
  int attn_tp = 1;
  int tp = 1;         // dense / shared MLP and LM head split
  int moe_group = 1;  // GPUs sharing the routed experts
  int ep = 1;         // expert-parallel degree inside the MoE group
  int dcp = 1;        // decode context parallel: each MLA cache split over dcp ranks
  double stage_layer_fraction = 0;  // PerfConfig::stage_layer_fraction (0 = 1 / PP)
};
LayoutShape layout_shape(const Layout& l, Engine e);

PassCost forward_pass(const PerfModel& pm, const Gpu& gpu, const PerfEfficiency& eff, const LayoutShape& ls, double tokens, double seqs,
                      double context, bool prefill);
DecodeStep decode_step(const PerfModel& pm, const Gpu& gpu, const PerfEfficiency& eff, const PerfConfig& c, double batch, double context);
// Prefill of one request of `isl` tokens on an otherwise idle instance, ms.
double prefill_ms(const PerfModel& pm, const Gpu& gpu, const PerfEfficiency& eff, const PerfConfig& c, double isl);

PerfResult estimate_perf(const PerfModel& pm, const Gpu& gpu, const PerfEfficiency& eff, const PerfConfig& c);

// Everything about (model, GPU, factors, layout) that does not change with the load, computed
// once so a sweep over concurrency and lengths costs a few hundred nanoseconds per point. The
// setup points into `pm` and `eff`: keep them alive while it is used.
struct PerfLink {
  double bytes_per_s = 0;  // one way, effective
  double latency_s = 0;
};
struct PerfSetup {
  const PerfModel* pm = nullptr;
  const PerfEfficiency* eff = nullptr;
  LayoutShape ls;
  double stage_f = 1;  // this stage's share of the layers (1 / PP)
  double stage_layers = 0;
  double bytes_per_s = 0;         // HBM, effective
  double fixed_bytes = 0;         // weights every pass reads on one GPU (one stage)
  double experts_rank = 0;        // routed experts on one EP rank
  double log_miss = 0;            // ln(1 - k/E)
  double expert_bytes_touch = 0;  // bytes on one GPU (one stage) per expert touched per layer
  double linear_s_per_token = 0;  // GEMM seconds per token on one GPU at 100% of peak
  double linear_flops_per_token = 0;
  double bf16_flops_per_s = 0;
  double layer_overhead_us = 0;  // per layer on this GPU's kernel path (eff x kernel ratio)
  const KvProfile* kv = nullptr;
  double mla_saved_per_token = 0;  // KV bytes per token per GPU that DCP moves to other ranks
  PerfLink tp_link, attn_link, moe_link, pp_link, dcp_link;
  double draft_fixed_bytes = 0;  // one draft layer + LM head on one GPU
};
PerfSetup prepare_perf(const PerfModel& pm, const Gpu& gpu, const PerfEfficiency& eff, const Layout& layout, Engine engine,
                       const KernelPath& kernels = {});
// As above; c.layout and c.engine are those of the setup.
PerfResult estimate_perf(const PerfSetup& setup, const PerfConfig& c);

// Disaggregated serving: prefill workers and decode workers on separate GPUs (SGLang PD, Dynamo,
// MoRI). A request is prefilled on one prefill worker, its KV cache (ISL tokens) sent to one decode
// worker, and decoded there. By mechanism, on the same calibrated roofline as estimate_perf():
//   prefill: each worker batches the prompts that arrive while a batch runs (up to its batch-token
//     limit); a prompt waits for the batch in progress (half a batch, when busy) plus the M/D/1 wait
//     rho / (2 (1 - rho)) x per-request time against the workers' full-batch capacity (rho = rate /
//     that capacity);
//   KV transfer: the request's cache, max(bytes a prefill GPU sends, bytes a decode GPU receives) at
//     the KV profile of each side's attention-TP degree, over one link per GPU: the scale-up link
//     (NVLink / Infinity Fabric, one way) when all the deployment's GPUs sit in one scale-up domain,
//     else the scale-out link (scaleout_gb_s per GPU); no contention between transfers;
//   TTFT = prefill wait + the request's prefill batch + KV transfer + half a decode step (the decode
//     worker admits it at its next step) + the per-request overhead (ttft_overhead_ms);
//   decode: the sequences decoding (lambda x decode time, Little's law) spread evenly over the decode
//     workers, and inside a worker over its DP-attention ranks; a decode step as in aggregated
//     serving, with no prefill work stealing its time;
//   closed loop: C users, each request TTFT + (OSL - 1) x TPOT; the rate lambda is what C users
//     sustain, bounded by the prefill workers' full-batch capacity and by the decode workers' KV
//     pools (max_running per worker); users beyond what either side sustains wait (in TTFT).
struct DisaggConfig {
  PerfConfig prefill;  // one prefill worker: layout, engine, isl / osl / length_scale, prefill_chunk
  PerfConfig decode;   // one decode worker: layout, engine, speculative decoding, max_running (per worker)
  int prefill_workers = 1, decode_workers = 1;
  int concurrency = 1;
};
struct DisaggResult {
  PerfResult total;  // gpus = all; TTFT, TPOT, E2E; throughput per GPU over all GPUs; step = the decode step
  int prefill_gpus = 0, decode_gpus = 0;
  double requests_per_s = 0;
  double input_per_prefill_gpu = 0, output_per_decode_gpu = 0;  // InferenceX's disaggregated definitions
  double prefill_alone_ms = 0;                                  // one request's prefill on an idle prefill worker
  double prefill_batch_ms = 0;                                  // the batch a request is prefilled in, at the steady rate
  double prefill_batch_requests = 0;                            // requests per prefill batch
  double prefill_wait_s = 0;                                    // queueing before prefill (incl. users beyond what the system sustains)
  double prefill_utilisation = 0;                               // rate / full-batch capacity of the prefill workers
  double kv_bytes_per_request = 0;                              // per GPU on the slower side of the transfer
  double kv_link_gb_s = 0;                                      // effective one-way link per GPU
  bool kv_scaleup = true;                                       // the transfer stays inside the scale-up domain
  double kv_transfer_ms = 0;
  double decode_batch_per_worker = 0, decode_batch_per_rank = 0;
  double decode_utilisation = 0;  // sequences decoding / what the decode KV pools hold
  const char* limit = "users";    // prefill | decode | users (neither side saturated: the closed loop sets the rate)
};
DisaggResult estimate_disagg(const PerfSetup& prefill, const PerfSetup& decode, const Gpu& gpu, const DisaggConfig& c);

}  // namespace k3plan
