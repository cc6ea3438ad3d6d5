#include "cli.hpp"

#include <k3plan/check.hpp>
#include <k3plan/commands.hpp>
#include <k3plan/engine.hpp>
#include <k3plan/launch.hpp>
#include <k3plan/layout.hpp>
#include <k3plan/perf_cmd.hpp>
#include <k3plan/report_html.hpp>
#include <k3plan/units.hpp>
#include <k3plan/validate.hpp>

namespace k3plan {

namespace {

void add_format(CLI::App* sub, GlobalOptions& g) {
  sub->add_option("--format,-f", g.format, "Output: table, json, yaml, csv or md")->capture_default_str();
  sub->add_option("--data", g.data_dirs, "Extra catalogue directory (repeatable); its entries add to or override the embedded ones");
}

}  // namespace

Cli::Cli() {
  app.require_subcommand(1);
  app.set_version_flag("--version", "k3plan 0.1.0");
  app.footer(
      "Exit codes: 0 ok / fits, 1 does not fit, 2 bad input or usage.\nSizes: GB = 1e9 B, GiB = 2^30 B; contexts: k = 1,024, M = 1,048,576 "
      "tokens.");

  auto* models = app.add_subcommand("models", "List the catalogue's models with derived and published parameter counts");
  add_format(models, global);
  models->callback([this] { action = [](const Catalogue& c) { return run_models(c); }; });

  auto* gpus = app.add_subcommand("gpus", "List the catalogue's accelerators");
  add_format(gpus, global);
  gpus->callback([this] { action = [](const Catalogue& c) { return run_gpus(c); }; });

  auto show_opts = std::make_shared<ShowOptions>();
  auto* show = app.add_subcommand("show", "One model or GPU in full, with sources and assumptions");
  show->add_option("id", show_opts->id, "Model or GPU id or alias, or whatever -m accepts (model YAML, config.json, directory, Hub id)")
      ->required();
  add_format(show, global);
  show->callback([this, show_opts] { action = [show_opts](const Catalogue& c) { return run_show(c, *show_opts); }; });

  auto w = std::make_shared<WeightsOptions>();
  auto* weights = app.add_subcommand("weights", "Weight bytes per precision (block scales included) and as shipped");
  weights->add_option("-m,--model", w->model, "Catalogue id, model YAML, config.json, a directory holding one, or a Hub id org/name[@rev]")
      ->required();
  weights
      ->add_option("--precision,-p", w->precisions,
                   "Precisions to show (repeatable): bf16 fp16 fp8 fp8-block int8 mxfp4 nvfp4 int4 int4-g128 int2")
      ->delimiter(',');
  weights->add_flag("--exact", w->exact,
                    "For a Hugging Face Hub id: fetch each safetensors shard's header (range requests, no tensor data) for exact bytes");
  add_format(weights, global);
  weights->callback([this, w] { action = [w](const Catalogue& c) { return run_weights(c, *w); }; });

  auto k = std::make_shared<KvCommandOptions>();
  auto* kv = app.add_subcommand("kv", "KV cache and recurrent state per token, per sequence and for N users");
  kv->add_option("-m,--model", k->model, "Catalogue id, model YAML, config.json or a directory holding one");
  kv->add_option("--tp", k->tp, "Tensor-parallel degree (per-GPU figures)")->capture_default_str();
  kv->add_option("--kv-dtype", k->kv_dtype, "auto, bf16, fp16, fp8, fp8_e4m3, fp8_e5m2, fp4")->capture_default_str();
  kv->add_option("--state-dtype", k->state_dtype,
                 "Recurrent-state dtype: fp32 (SGLang default; KDA in vLLM) or bf16 (vLLM 'auto' for GDN/Mamba)")
      ->capture_default_str();
  kv->add_option("--context,-c", k->contexts, "Context lengths, e.g. 8k,128k,1M (k = 1,024, M = 1,048,576)")->delimiter(',');
  kv->add_option("--users,-u", k->users, "Concurrent users (sequences)")->capture_default_str();
  kv->add_option("--draft-layers", k->draft_layers, "Speculative-decoding draft layers (MTP/EAGLE) with their own KV")
      ->capture_default_str();
  kv->add_option("--layers", k->layers, "What-if: number of full-attention layers");
  kv->add_option("--kv-heads", k->kv_heads, "What-if: KV heads");
  kv->add_option("--head-dim", k->head_dim, "What-if: head dimension");
  kv->add_flag("--csv-curve", k->csv_curve, "Add a table of bytes per user against context (doubling from 1k), per layer kind");
  add_format(kv, global);
  kv->callback([this, k] { action = [k](const Catalogue& c) { return run_kv(c, *k); }; });

  auto f = std::make_shared<FitOptions>();
  auto* fit = app.add_subcommand("fit", "Per-GPU memory budget, KV capacity and the smallest engine-valid layout");
  fit->add_option("-m,--model", f->model, "Catalogue id, model YAML, config.json or a directory holding one")->required();
  fit->add_option("-g,--gpu", f->gpu, "GPU id or alias (omit: every catalogue GPU, ranked by USD/hour)");
  fit->add_option("-n,--gpus", f->gpus, "Number of GPUs (omit: search for the smallest)");
  fit->add_option("--context,-c", f->context, "Context length per user (default: model maximum, capped at 32k)");
  fit->add_option("--users,-u", f->users, "Concurrent users")->capture_default_str();
  fit->add_option("--engine", f->engine, "sglang or vllm")->capture_default_str();
  fit->add_option("--engine-version", f->engine_version, "Engine release (0.10.1.1, 0.5.8.post1, main; default: the newest modelled)");
  fit->add_option("--tp", f->tp, "Tensor parallel");
  fit->add_option("--ep", f->ep, "Expert parallel");
  fit->add_option("--dp", f->dp, "Data parallel");
  fit->add_option("--pp", f->pp, "Pipeline parallel");
  fit->add_option("--dcp", f->dcp, "Decode context parallel: split the MLA cache over this many TP ranks");
  fit->add_flag("--enable-dp-attention", f->dp_attention, "SGLang DP-attention");
  fit->add_option("--kv-dtype", f->kv_dtype, "auto, bf16, fp16, fp8, fp8_e4m3, fp8_e5m2, fp4")->capture_default_str();
  fit->add_option("--gpu-memory-utilization", f->gpu_memory_utilization, "vLLM memory fraction (default 0.92, vLLM main @002f10e)");
  fit->add_option("--mem-fraction-static", f->mem_fraction_static, "SGLang static memory fraction (default: computed like server_args)");
  fit->add_option("--mamba-full-memory-ratio", f->mamba_full_memory_ratio, "SGLang: state pool : KV pool memory ratio (default 0.9)");
  fit->add_option("--max-mamba-cache-size", f->max_mamba_cache_size, "SGLang: linear-attention state slots");
  fit->add_option("--mamba-radix-cache-strategy", f->mamba_radix_cache_strategy,
                  "SGLang: auto, no_buffer, extra_buffer, extra_buffer_lazy");
  fit->add_flag("--disable-radix-cache", f->disable_radix_cache, "SGLang: no prefix cache (one state slot per request)");
  fit->add_option("--max-num-batched-tokens", f->max_num_batched_tokens, "vLLM batch-token limit / SGLang chunked prefill size");
  fit->add_option("--max-num-seqs", f->max_num_seqs, "vLLM maximum running sequences");
  fit->add_option("--cuda-graph-max-bs", f->cuda_graph_max_bs, "SGLang CUDA-graph max batch size");
  fit->add_option("--draft-layers", f->draft_layers, "Speculative-decoding draft layers with their own KV");
  fit->add_option("--precision,-p", f->precision, "Every weight in this format (default: as shipped)");
  fit->add_flag("--weights-only", f->weights_only, "Without -g: only the lower bounds for the weights");
  add_format(fit, global);
  fit->callback([this, f] { action = [f](const Catalogue& c) { return run_fit(c, *f); }; });
  auto co = std::make_shared<CostOptions>();
  auto* cost = app.add_subcommand("cost", "Rent vs API: monthly cost, break-even, tokens per dollar, cold start");
  cost->add_option("-m,--model", co->model, "Model whose API prices and checkpoint size apply")->capture_default_str();
  cost->add_option("-g,--gpu", co->gpu, "GPU whose catalogue price applies (default: the documented 2.50 USD/h)");
  cost->add_option("--gpus,-n", co->gpus, "GPUs rented");
  cost->add_option("--rate", co->rate_usd_per_gpu_hour, "USD per GPU-hour (overrides the catalogue)");
  cost->add_option("--hours-per-day", co->hours_per_day, "Hours a day the cluster runs");
  cost->add_option("--days", co->days, "Days a month (default 30: 720 hours)");
  cost->add_option("--output-tokens-per-month", co->output_tokens_per_month, "Workload: output tokens a month");
  cost->add_option("--input-tokens-per-month", co->input_tokens_per_month, "Workload: input tokens a month");
  cost->add_option("--cache-hit", co->cache_hit, "Fraction of input tokens that hit the API's cache (0-1)");
  cost->add_option("--api-output", co->api_output, "API price, USD per 1M output tokens");
  cost->add_option("--api-input", co->api_input, "API price, USD per 1M uncached input tokens");
  cost->add_option("--api-cache-hit", co->api_cache_hit, "API price, USD per 1M cached input tokens");
  cost->add_option("--throughput", co->throughput_tok_s, "Measured tok/s of the rented GPUs (all of them)");
  cost->add_option("--utilisation", co->utilisation, "Average load of the rented cluster (0-1]");
  cost->add_option("--download-gbps", co->download_gb_s, "Checkpoint download speed, GB/s (default 1)");
  cost->add_option("--svg", co->svg_path, "Write the rent-vs-API chart (SVG) to this file");
  add_format(cost, global);
  cost->callback([this, co] { action = [co](const Catalogue& c) { return run_cost(c, *co); }; });
  auto vpath = std::make_shared<std::string>();
  auto* validate = app.add_subcommand("validate", "Replay real engine start-up logs through fit and publish the error table");
  validate->add_option("--cases", *vpath, "A cases YAML (default: the embedded data/validation/engine-logs.cases.yaml)");
  auto vlog = std::make_shared<ValidateLogOptions>();
  validate->add_option("--log", vlog->log_path, "A vLLM or SGLang start-up log: compare it with the plan, term by term");
  validate->add_option("-m,--model", vlog->model,
                       "With --log: the model (catalogue id, config.json, model YAML) when the log's is unknown");
  validate->add_option("-g,--gpu", vlog->gpu, "With --log: the GPU when the log does not name it");
  validate->add_option("--engine", vlog->engine, "With --log: sglang or vllm (checked against the log)");
  validate->add_option("--engine-version", vlog->engine_version, "With --log: engine release when the log does not print it");
  add_format(validate, global);
  validate->callback([this, vpath, vlog] {
    if (vlog->log_path.empty() && (!vlog->model.empty() || !vlog->gpu.empty() || !vlog->engine_version.empty()))
      throw CLI::ValidationError("-m/-g/--engine-version", "need --log");
    if (!vlog->log_path.empty() && !vpath->empty()) throw CLI::ValidationError("--log", "give --log or --cases, not both");
    action = [vpath, vlog](const Catalogue& c) { return vlog->log_path.empty() ? run_validate(c, *vpath) : run_validate_log(c, *vlog); };
  });
  auto lo = std::make_shared<LaunchOptions>();
  auto lo_engine = std::make_shared<std::string>("sglang");
  auto lo_context = std::make_shared<std::string>();
  auto* launch =
      app.add_subcommand("launch", "Engine launch commands (per node), a LeaderWorkerSet manifest or JSON, for a deployment that fits");
  launch->add_option("file", lo->file, "Deployment YAML (see examples/); or give -m -g -n and the flags below");
  launch->add_option("-m,--model", lo->flags.model, "Model id, model YAML or config.json");
  launch->add_option("-g,--gpu", lo->flags.gpu, "GPU id");
  launch->add_option("-n,--gpus", lo->flags.gpus, "GPUs");
  launch->add_option("--nodes", lo->flags.nodes, "Nodes");
  launch->add_option("--engine", *lo_engine, "sglang or vllm")->capture_default_str();
  launch->add_option("--engine-version", lo->flags.engine_version, "Engine release (default: the newest modelled)");
  launch->add_option("--context,-c", *lo_context, "Context length (default: the model maximum)");
  launch->add_option("--users,-u", lo->flags.users, "Concurrent users")->capture_default_str();
  launch->add_option("--kv-dtype", lo->flags.kv_dtype, "KV cache dtype")->capture_default_str();
  launch->add_option("--model-path", lo->flags.model_path, "What the engine loads (default: the model's HF repo)");
  launch->add_option("--host", lo->flags.host, "Bind address")->capture_default_str();
  launch->add_option("--port", lo->flags.port, "Port (default: SGLang 30000, vLLM 8000)");
  launch->add_option("--head-address", lo->flags.head_address, "Head node address (default: $HEAD_ADDR at run time)");
  launch->add_option("--emit", lo->emit, "sh (one script, node rank as $1; with --out one per node), k8s (LeaderWorkerSet) or json")
      ->capture_default_str();
  launch->add_option("--out,-o", lo->out_dir, "Write the files into this directory");
  launch->add_option("--image", lo->image, "Container image for --emit k8s");
  add_format(launch, global);
  launch->callback([this, lo, lo_engine, lo_context] {
    action = [lo, lo_engine, lo_context](const Catalogue& c) {
      lo->flags.engine = parse_engine(*lo_engine);
      engine_model(lo->flags.engine, lo->flags.engine_version);
      if (!lo_context->empty()) lo->flags.context = parse_context(*lo_context, "--context");
      if (lo->emit == "json") lo->flags.file = "<flags>";
      return run_launch(c, *lo);
    };
  });
  auto ck = std::make_shared<CheckOptions>();
  auto ck_format = std::make_shared<std::string>("table");
  auto* check =
      app.add_subcommand("check", "CI gate: check deployment files, engine command lines and LeaderWorkerSet manifests (exit 1 on errors)");
  check->add_option("files", ck->files, "Deployment YAML files (see examples/deploy/)");
  check->add_option("--command", ck->commands, "A vLLM / SGLang command line, or a file holding a launch script (repeatable)")
      ->allow_extra_args(false);
  check->add_option("--manifest", ck->manifests, "A LeaderWorkerSet manifest (repeatable)")->allow_extra_args(false);
  check->add_option("-g,--gpu", ck->gpu, "GPU the command lines and manifests run on (a command line names none)");
  check->add_option("--engine-version", ck->engine_version,
                    "Engine release the command lines and manifests run, e.g. 0.5.8.post1 or 0.10.1.1 (default: the newest modelled)");
  check->add_flag("--strict", ck->strict, "Warnings fail too (exit 1)");
  check->add_option("--format,-f", *ck_format, "Output: table (compiler-style lines), json, sarif (SARIF 2.1.0), yaml, csv or md")
      ->capture_default_str();
  check->add_option("--data", global.data_dirs, "Extra catalogue directory (repeatable); its entries add to or override the embedded ones");
  check->callback([this, ck, ck_format] {
    ck->format_hint = *ck_format;
    global.format = *ck_format == "sarif" ? "json" : *ck_format;  // the SARIF log is the JSON data
    action = [ck](const Catalogue& c) { return run_check(c, *ck); };
  });
  auto po = std::make_shared<PerfOptions>();
  auto* perf =
      app.add_subcommand("perf", "Throughput and latency of one deployment (TTFT, TPOT, tok/s per GPU) from a calibrated roofline");
  perf->add_option("-m,--model", po->model, "Catalogue id, model YAML, config.json or a directory holding one")->required();
  perf->add_option("-g,--gpu", po->gpu, "GPU id or alias")->required();
  perf->add_option("-n,--gpus", po->gpus, "Number of GPUs (omit: the smallest that fits)");
  perf->add_option("--tp", po->tp, "Tensor parallel");
  perf->add_option("--ep", po->ep, "Expert parallel");
  perf->add_option("--dp", po->dp, "Data parallel (DP-attention size with --enable-dp-attention)");
  perf->add_option("--pp", po->pp, "Pipeline parallel");
  perf->add_flag("--enable-dp-attention", po->dp_attention, "SGLang DP-attention");
  perf->add_option("--dcp", po->dcp, "Decode context parallel: MLA cache split over this many TP ranks");
  perf->add_option("--precision,-p", po->precision, "Every weight in this format (default: as shipped)");
  perf->add_option("--expert-precision", po->expert_precision, "Only the routed experts in this format (nvfp4, mxfp4, fp8, ...)");
  perf->add_option("--kv-dtype", po->kv_dtype, "auto, bf16, fp16, fp8, fp8_e4m3, fp8_e5m2, fp4")->capture_default_str();
  perf->add_option("--engine", po->engine, "sglang, vllm, trt or atom")->capture_default_str();
  perf->add_option("--isl", po->isl, "Input tokens per request")->capture_default_str();
  perf->add_option("--osl", po->osl, "Output tokens per request")->capture_default_str();
  perf->add_option("--concurrency,-c", po->concurrency, "Concurrent users (closed loop)")->capture_default_str();
  perf->add_option("--spec-tokens", po->spec_tokens, "Speculative decoding: draft tokens per step (0 = off)");
  perf->add_option("--spec-acceptance", po->spec_acceptance,
                   "Per-token acceptance probability of a draft token (default: data/perf/efficiency.yaml)");
  perf->add_option("--length-scale", po->length_scale, "Mean request length / nominal (InferenceX random lengths: 0.9)");
  perf->add_option("--max-num-batched-tokens", po->max_num_batched_tokens, "Batch-token limit per prefill step (chunked prefill size)");
  perf->add_option("--efficiency", po->efficiency_file, "Efficiency factors YAML (default: the embedded data/perf/efficiency.yaml)");
  add_format(perf, global);
  perf->callback([this, po] { action = [po](const Catalogue& c) { return run_perf(c, *po); }; });

  auto pl = std::make_shared<PlanOptions>();
  auto* plan = app.add_subcommand("plan", "Cheapest deployment (GPU x count x layout x precision x engine) that meets a service level");
  plan->add_option("-m,--model", pl->model, "Catalogue id, model YAML, config.json or a directory holding one")->required();
  plan->add_option("--gpus-from", pl->gpus_from, "GPU ids to consider (default: every catalogue GPU)")->delimiter(',');
  plan->add_option("--max-gpus", pl->max_gpus, "Largest instance to consider")->capture_default_str();
  plan->add_option("--isl", pl->isl, "Input tokens per request")->capture_default_str();
  plan->add_option("--osl", pl->osl, "Output tokens per request")->capture_default_str();
  plan->add_option("--ttft-ms", pl->ttft_ms, "TTFT target, ms (default: the SLA file's tier for the prompt length)");
  plan->add_option("--tpot-ms", pl->tpot_ms, "TPOT / ITL target, ms (default: the SLA file's target for --workload)");
  plan->add_option("--interactivity", pl->interactivity, "Minimum tok/s per user (TPOT = 1000 / X)");
  plan->add_option("--workload", pl->workload, "chat or agentic: which ITL target applies")->capture_default_str();
  plan->add_option("--sla", pl->sla_file, "SLA YAML: tiered TTFT by prompt length, ITL per workload (default: data/perf/sla.yaml)");
  plan->add_option("--users", pl->users, "Concurrent users to serve (adds instances)");
  plan->add_option("--requests-per-s", pl->requests_per_s, "Request rate to serve (adds instances)");
  plan->add_option("--rate-source", pl->rate_source, "on-demand, reserved or spot prices")->capture_default_str();
  plan->add_option("--engines", pl->engines, "Engines to consider (default: sglang,vllm)")->delimiter(',');
  plan->add_option("--precisions", pl->precisions,
                   "Precisions to consider: as-shipped, fp8, experts-mxfp4, experts-nvfp4, ... (default: as shipped + native ones)")
      ->delimiter(',');
  plan->add_option("--top", pl->top, "Rows of next-cheapest configurations")->capture_default_str();
  plan->add_option("--efficiency", pl->efficiency_file, "Efficiency factors YAML (default: the embedded data/perf/efficiency.yaml)");
  add_format(plan, global);
  plan->callback([this, pl] { action = [pl](const Catalogue& c) { return run_plan(c, *pl); }; });

  auto* pv =
      app.add_subcommand("perf-validate", "Predicted vs measured throughput and latency (InferenceX DeepSeek-R1 rows): the accuracy table");
  add_format(pv, global);
  pv->callback([this] { action = [](const Catalogue& c) { return run_perf_validate(c); }; });

  auto ro = std::make_shared<ReportOptions>();
  auto* report = app.add_subcommand(
      "report", "A self-contained HTML plan with SVG charts (memory budget, KV per user, rent vs API, speed), launch commands and sources");
  report->add_option("-m,--model", ro->model, "Catalogue id, model YAML, config.json or a directory holding one")->required();
  report
      ->add_option("-g,--gpu", ro->gpus,
                   "Candidate GPU ids, comma-separated (default: every catalogue GPU; the cheapest that fits is recommended)")
      ->delimiter(',');
  report->add_option("-n,--gpus", ro->gpu_count, "Number of GPUs (omit: the smallest count that fits)");
  report->add_option("--context,-c", ro->context, "Context length per user (default: model maximum, capped at 32k)");
  report->add_option("--users,-u", ro->users, "Concurrent users")->capture_default_str();
  report->add_option("--engine", ro->engine, "sglang or vllm")->capture_default_str();
  report->add_option("--kv-dtype", ro->kv_dtype, "auto, bf16, fp16, fp8, fp8_e4m3, fp8_e5m2, fp4")->capture_default_str();
  report->add_option("-o,--out", ro->out, "HTML file to write (atomically)")->capture_default_str();
  report->add_option("--svg", ro->svg_dir, "Also write each chart as DIR/<chart>.svg");
  report->add_option("--rate", ro->rate_usd_per_gpu_hour, "USD per GPU-hour for every candidate (default: the catalogue prices)");
  report->add_option("--input-per-output", ro->input_per_output, "API bill: input tokens per output token (default 0)");
  report->add_option("--cache-hit", ro->cache_hit, "API bill: share of input tokens that hit the API cache (0-1, default 0)");
  report->add_option("--isl", ro->isl, "Speed chart: input tokens per request")->capture_default_str();
  report->add_option("--osl", ro->osl, "Speed chart: output tokens per request")->capture_default_str();
  report->add_option("--workload", ro->workload, "chat or agentic: which ITL target shades the speed chart")->capture_default_str();
  add_format(report, global);
  report->callback([this, ro] { action = [ro](const Catalogue& c) { return run_report(c, *ro); }; });
}

}  // namespace k3plan
