#include "cli.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <k3plan/calibrate_cmd.hpp>
#include <k3plan/check.hpp>
#include <k3plan/commands.hpp>
#include <k3plan/engine.hpp>
#include <k3plan/error.hpp>
#include <k3plan/launch.hpp>
#include <k3plan/layout.hpp>
#include <k3plan/limits.hpp>
#include <k3plan/number_text.hpp>
#include <k3plan/output_file.hpp>
#include <k3plan/perf_cmd.hpp>
#include <k3plan/report_html.hpp>
#include <k3plan/units.hpp>
#include <k3plan/validate.hpp>
#include <k3plan/version.hpp>
#include <tuple>

namespace k3plan {

namespace {

using namespace limits;

// --- validators: a range per numeric option, checked on the text before conversion ---------------

// Whole numbers in [lo, hi]; the message names the range ("--gpus: 0 is out of range [1, 65536]").
CLI::Validator whole(std::int64_t lo, std::int64_t hi) {
  const std::string range = fmt::format("[{}, {}]", lo, hi);
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        errno = 0;
        char* end = nullptr;
        const long long v = std::strtoll(s.c_str(), &end, 10);
        if (s.empty() || end == s.c_str() || *end != '\0' || errno == ERANGE) return fmt::format("'{}' is not a whole number", s);
        if (v < lo || v > hi) return fmt::format("{} is out of range {}", s, range);
        return {};
      },
      range);
}

// Finite real numbers in [lo, hi] (or (lo, hi] with open_lo); NaN and infinities are refused.
CLI::Validator real(double lo, double hi, bool open_lo = false) {
  const std::string range = fmt::format("{}{:g}, {:g}]", open_lo ? "(" : "[", lo, hi);
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        const auto parsed = parse_real(s);  // the C locale's syntax whatever LC_NUMERIC says
        if (!parsed) return fmt::format("'{}' is not a number", s);
        const double v = *parsed;
        if (!std::isfinite(v) || v < lo || v > hi || (open_lo && v == lo)) return fmt::format("{} is out of range {}", s, range);
        return {};
      },
      range);
}

CLI::Option* choice(Cli& cli, CLI::Option* o, std::vector<std::string> values) {
  o->check(CLI::IsMember(values));
  cli.hints[o].choices = std::move(values);
  return o;
}
CLI::Option* file(Cli& cli, CLI::Option* o) {
  cli.hints[o].kind = ValueKind::file;
  return o;
}

// --- option groups shared by several commands --------------------------------------------------

constexpr const char* kModelHelp = "Catalogue id, model YAML, config.json, a directory holding one, or a Hub id org/name[@rev]";
const std::vector<std::string> kFormats{"table", "json", "yaml", "csv", "md", "markdown"};
const std::vector<std::string> kEngines{"sglang", "vllm"};

// how people read the table format (report.hpp TextOptions)
void text_options(CLI::App& sub, Cli& cli) {
  sub.add_flag("--wide", cli.global.wide, "Tables as wide as their content (default: fit 100 columns)");
  sub.add_flag("--assumptions", cli.global.all_assumptions, "List every assumption (default: the count and the first few)");
}
void output_options(CLI::App& sub, Cli& cli) {
  choice(cli, sub.add_option("--format,-f", cli.global.format, "Output: table, json, yaml, csv or md")->capture_default_str(), kFormats);
  text_options(sub, cli);
  auto* d = sub.add_option("--data", cli.global.data_dirs,
                           "Extra catalogue directory (repeatable); its entries add to or override the embedded ones");
  cli.hints[d].kind = ValueKind::directory;
}
void model_option(CLI::App& sub, Cli& cli, std::string& v, bool required, const char* help = kModelHelp) {
  auto* o = file(cli, sub.add_option("-m,--model", v, help));
  if (required) o->required();
}
void gpu_count(CLI::App& sub, int& v, const char* help, const char* names = "-n,--gpus") {
  sub.add_option(names, v, help)->check(whole(1, kMaxGpus));
}
void layout_options(CLI::App& sub, int& tp, int& ep, int& dp, int& pp, int& dcp, const char* dp_help = "Data parallel") {
  sub.add_option("--tp", tp, "Tensor parallel")->check(whole(1, kMaxDegree));
  sub.add_option("--ep", ep, "Expert parallel")->check(whole(1, kMaxDegree));
  sub.add_option("--dp", dp, dp_help)->check(whole(1, kMaxDegree));
  sub.add_option("--pp", pp, "Pipeline parallel")->check(whole(1, kMaxDegree));
  sub.add_option("--dcp", dcp, "Decode context parallel: split the MLA cache over this many TP ranks")->check(whole(1, kMaxDegree));
}
void users_option(CLI::App& sub, std::int64_t& v, const char* names = "--users,-u", const char* help = "Concurrent users") {
  sub.add_option(names, v, help)->capture_default_str()->check(whole(1, kMaxUsers));
}
void engine_option(CLI::App& sub, Cli& cli, std::string& v) {
  choice(cli, sub.add_option("--engine", v, "sglang or vllm")->capture_default_str(), kEngines);
}
void kv_dtype_option(CLI::App& sub, std::string& v) {
  sub.add_option("--kv-dtype", v, "auto, bf16, fp16, fp8, fp8_e4m3, fp8_e5m2, fp4")->capture_default_str();
}
void context_option(CLI::App& sub, std::string& v, const char* help = "Context length per user (default: model maximum, capped at 32k)") {
  sub.add_option("--context,-c", v, help);
}
void request_shape(CLI::App& sub, double& isl, double& osl, const char* what = "per request") {
  sub.add_option("--isl", isl, fmt::format("Input tokens {}", what))->capture_default_str()->check(real(1, kMaxTokens));
  sub.add_option("--osl", osl, fmt::format("Output tokens {}", what))->capture_default_str()->check(real(1, kMaxTokens));
}
void efficiency_option(CLI::App& sub, Cli& cli, std::string& v) {
  file(cli, sub.add_option("--efficiency", v, "Efficiency factors YAML (default: the embedded data/perf/efficiency.yaml)"));
}
template <class Options, class Run>
void run_with(CLI::App& sub, Cli& cli, std::shared_ptr<Options> o, Run run) {
  sub.callback([&cli, o, run] { cli.action = [o, run](const Catalogue& c) { return run(c, *o); }; });
}

// --- one function per command ------------------------------------------------------------------

void define_models(CLI::App& sub, Cli& cli) {
  output_options(sub, cli);
  sub.callback([&cli] { cli.action = [](const Catalogue& c) { return run_models(c); }; });
}
void define_gpus(CLI::App& sub, Cli& cli) {
  output_options(sub, cli);
  sub.callback([&cli] { cli.action = [](const Catalogue& c) { return run_gpus(c); }; });
}
void define_show(CLI::App& sub, Cli& cli) {
  auto o = std::make_shared<ShowOptions>();
  sub.add_option("id", o->id, "Model or GPU id or alias, or whatever -m accepts (model YAML, config.json, directory, Hub id)")->required();
  output_options(sub, cli);
  run_with(sub, cli, o, run_show);
}
void define_weights(CLI::App& sub, Cli& cli) {
  auto o = std::make_shared<WeightsOptions>();
  model_option(sub, cli, o->model, true);
  sub.add_option("--precision,-p", o->precisions,
                 "Precisions to show (repeatable): bf16 fp16 fp8 fp8-block int8 mxfp4 nvfp4 int4 int4-g128 int2")
      ->delimiter(',');
  sub.add_flag("--exact", o->exact,
               "For a Hugging Face Hub id: fetch each safetensors shard's header (range requests, no tensor data) for exact bytes");
  output_options(sub, cli);
  run_with(sub, cli, o, run_weights);
}
void define_kv(CLI::App& sub, Cli& cli) {
  auto o = std::make_shared<KvCommandOptions>();
  model_option(sub, cli, o->model, false);
  sub.add_option("--tp", o->tp, "Tensor-parallel degree (per-GPU figures)")->capture_default_str()->check(whole(1, kMaxDegree));
  kv_dtype_option(sub, o->kv_dtype);
  choice(cli,
         sub.add_option("--state-dtype", o->state_dtype,
                        "Recurrent-state dtype: fp32 (SGLang default; KDA in vLLM) or bf16 (vLLM 'auto' for GDN/Mamba)")
             ->capture_default_str(),
         {"fp32", "bf16", "fp16"});
  sub.add_option("--context,-c", o->contexts, "Context lengths, e.g. 8k,128k,1M (k = 1,024, M = 1,048,576)")->delimiter(',');
  users_option(sub, o->users, "--users,-u", "Concurrent users (sequences)");
  sub.add_option("--draft-layers", o->draft_layers, "Speculative-decoding draft layers (MTP/EAGLE) with their own KV")
      ->capture_default_str()
      ->check(whole(0, 64));
  sub.add_option("--layers", o->layers, "What-if: number of full-attention layers")->check(whole(1, kMaxLayers));
  sub.add_option("--kv-heads", o->kv_heads, "What-if: KV heads")->check(whole(1, kMaxHeads));
  sub.add_option("--head-dim", o->head_dim, "What-if: head dimension")->check(whole(1, kMaxHeads));
  sub.add_flag("--csv-curve", o->csv_curve, "Add a table of bytes per user against context (doubling from 1k), per layer kind");
  output_options(sub, cli);
  run_with(sub, cli, o, run_kv);
}
void define_fit(CLI::App& sub, Cli& cli) {
  auto o = std::make_shared<FitOptions>();
  model_option(sub, cli, o->model, true);
  sub.add_option("-g,--gpu", o->gpu, "GPU id or alias (omit: every catalogue GPU, ranked by USD/hour)");
  gpu_count(sub, o->gpus, "Number of GPUs (omit: search for the smallest)");
  context_option(sub, o->context);
  users_option(sub, o->users);
  engine_option(sub, cli, o->engine);
  sub.add_option("--engine-version", o->engine_version, "Engine release (0.10.1.1, 0.5.8.post1, main; default: the newest modelled)");
  layout_options(sub, o->tp, o->ep, o->dp, o->pp, o->dcp);
  sub.add_flag("--enable-dp-attention", o->dp_attention, "SGLang DP-attention");
  kv_dtype_option(sub, o->kv_dtype);
  sub.add_option("--gpu-memory-utilization", o->gpu_memory_utilization, "vLLM memory fraction (default 0.92, vLLM main @002f10e)")
      ->check(real(0, 1, true));
  sub.add_option("--mem-fraction-static", o->mem_fraction_static, "SGLang static memory fraction (default: computed like server_args)")
      ->check(real(0, 1, true));
  sub.add_option("--mamba-full-memory-ratio", o->mamba_full_memory_ratio, "SGLang: state pool : KV pool memory ratio (default 0.9)")
      ->check(real(0, 100, true));
  sub.add_option("--max-mamba-cache-size", o->max_mamba_cache_size, "SGLang: linear-attention state slots")->check(whole(1, 1 << 24));
  choice(cli,
         sub.add_option("--mamba-radix-cache-strategy", o->mamba_radix_cache_strategy,
                        "SGLang: auto, no_buffer, extra_buffer, extra_buffer_lazy"),
         {"auto", "no_buffer", "extra_buffer", "extra_buffer_lazy"});
  sub.add_flag("--disable-radix-cache", o->disable_radix_cache, "SGLang: no prefix cache (one state slot per request)");
  sub.add_flag("--enable-prefix-caching", o->enable_prefix_caching,
               "vLLM: prefix caching on (hybrid models: 2 state blocks per request, align mode; default off for hybrids before main)");
  sub.add_flag("--no-enable-prefix-caching", o->no_enable_prefix_caching, "vLLM: prefix caching off");
  sub.add_option("--max-num-batched-tokens", o->max_num_batched_tokens, "vLLM batch-token limit / SGLang chunked prefill size")
      ->check(whole(1, kMaxBatchTokens));
  sub.add_option("--max-num-seqs", o->max_num_seqs, "vLLM maximum running sequences")->check(whole(1, 1 << 20));
  sub.add_option("--cuda-graph-max-bs", o->cuda_graph_max_bs, "SGLang CUDA-graph max batch size")->check(whole(1, 65536));
  sub.add_option("--max-total-tokens", o->max_total_tokens, "SGLang: cap on each KV pool's tokens (as the engine's flag)")
      ->check(whole(1, 1LL << 40));
  sub.add_option("--limit-mm-per-prompt", o->limit_mm_per_prompt,
                 "vLLM: media items per prompt, JSON '{\"image\": 4}' or image=4 (the profile run encodes that many images)");
  sub.add_flag("--no-gpu-p2p", o->no_gpu_p2p,
               "The GPUs cannot map each other's memory (vLLM logs 'lacks GPU P2P capability'; e.g. GeForce cards on the stock "
               "driver): NCCL's buffers stay in host memory, vLLM's non-torch memory is a single rank's");
  sub.add_option("--pp-layer-partition", o->pp_layer_partition,
                 "Decoder layers per pipeline stage, e.g. 23,24,23,23 (the engine's VLLM_PP_LAYER_PARTITION / "
                 "SGLANG_PP_LAYER_PARTITION; sets --pp; default: the release's own split)")
      ->delimiter(',')
      ->check(whole(0, kMaxLayers));
  sub.add_option("--draft-layers", o->draft_layers, "Speculative-decoding draft layers with their own KV")->check(whole(0, 64));
  sub.add_option("--speculative-num-draft-tokens", o->speculative_num_draft_tokens,
                 "SGLang speculative decoding: verify tokens per step (DSPARK: block size + 1); state pool and request cap")
      ->check(whole(1, 64));
  sub.add_option("--precision,-p", o->precision, "Every weight in this format (default: as shipped)");
  sub.add_flag("--weights-only", o->weights_only, "Without -g: only the lower bounds for the weights");
  output_options(sub, cli);
  run_with(sub, cli, o, run_fit);
}
void define_cost(CLI::App& sub, Cli& cli) {
  auto o = std::make_shared<CostOptions>();
  model_option(sub, cli, o->model, false, "Model whose API prices and checkpoint size apply");
  sub.get_option("--model")->capture_default_str();
  sub.add_option("-g,--gpu", o->gpu, "GPU whose catalogue price applies (default: the documented 2.50 USD/h)");
  gpu_count(sub, o->gpus, "GPUs rented", "--gpus,-n");
  sub.add_option("--rate", o->rate_usd_per_gpu_hour, "USD per GPU-hour (overrides the catalogue)")->check(real(0, 1e4, true));
  sub.add_option("--hours-per-day", o->hours_per_day, "Hours a day the cluster runs")->check(real(0, 24, true));
  sub.add_option("--days", o->days, "Days a month (default 30: 720 hours)")->check(real(0, 31, true));
  sub.add_option("--output-tokens-per-month", o->output_tokens_per_month, "Workload: output tokens a month")->check(real(0, 1e18));
  sub.add_option("--input-tokens-per-month", o->input_tokens_per_month, "Workload: input tokens a month")->check(real(0, 1e18));
  sub.add_option("--cache-hit", o->cache_hit, "Fraction of input tokens that hit the API's cache (0-1)")->check(real(0, 1));
  sub.add_option("--api-output", o->api_output, "API price, USD per 1M output tokens")->check(real(0, 1e6));
  sub.add_option("--api-input", o->api_input, "API price, USD per 1M uncached input tokens")->check(real(0, 1e6));
  sub.add_option("--api-cache-hit", o->api_cache_hit, "API price, USD per 1M cached input tokens")->check(real(0, 1e6));
  sub.add_option("--throughput", o->throughput_tok_s, "Measured tok/s of the rented GPUs (all of them)")->check(real(0, 1e12, true));
  sub.add_option("--utilisation", o->utilisation, "Average load of the rented cluster (0-1]")->check(real(0, 1, true));
  sub.add_option("--download-gbps", o->download_gb_s, "Checkpoint download speed, GB/s (default 1)")->check(real(0, 1e4, true));
  file(cli, sub.add_option("--svg", o->svg_path, "Write the rent-vs-API chart (SVG) to this file"));
  output_options(sub, cli);
  run_with(sub, cli, o, run_cost);
}
void define_validate(CLI::App& sub, Cli& cli) {
  auto o = std::make_shared<ValidateLogOptions>();
  file(cli, sub.add_option("--log", o->log_path, "A vLLM or SGLang start-up log: compare it with the plan, term by term"));
  model_option(sub, cli, o->model, false, "With --log: the model (catalogue id, config.json, model YAML) when the log's is unknown");
  sub.add_option(
      "-g,--gpu", o->gpu,
      "With --log: the GPU when the log does not name it (else the catalogue GPU of the total memory it prints, listed as an assumption)");
  choice(cli, sub.add_option("--engine", o->engine, "With --log: sglang or vllm (checked against the log)"), kEngines);
  sub.add_option("--engine-version", o->engine_version, "With --log: engine release when the log does not print it");
  output_options(sub, cli);
  sub.callback([&cli, o] {
    if (o->log_path.empty() && (!o->model.empty() || !o->gpu.empty() || !o->engine_version.empty()))
      throw CLI::ValidationError("-m/-g/--engine-version", "need --log");
    cli.action = [o](const Catalogue& c) { return o->log_path.empty() ? run_validate(c) : run_validate_log(c, *o); };
  });
}
void define_launch(CLI::App& sub, Cli& cli) {
  auto o = std::make_shared<LaunchOptions>();
  auto engine = std::make_shared<std::string>("sglang");
  auto context = std::make_shared<std::string>();
  file(cli, sub.add_option("file", o->file, "Deployment YAML (see examples/); or give -m -g -n and the flags below"));
  model_option(sub, cli, o->flags.model, false, "Model id, model YAML or config.json");
  sub.add_option("-g,--gpu", o->flags.gpu, "GPU id");
  gpu_count(sub, o->flags.gpus, "GPUs");
  sub.add_option("--nodes", o->flags.nodes, "Nodes")->check(whole(1, kMaxNodes));
  engine_option(sub, cli, *engine);
  sub.add_option("--engine-version", o->flags.engine_version, "Engine release (default: the newest modelled)");
  context_option(sub, *context, "Context length (default: model maximum, capped at 32k, as fit)");
  users_option(sub, o->flags.users);
  sub.add_option("--kv-dtype", o->flags.kv_dtype, "KV cache dtype")->capture_default_str();
  sub.add_option("--model-path", o->flags.model_path, "What the engine loads (default: the model's HF repo)");
  sub.add_option("--host", o->flags.host, "Bind address")->capture_default_str();
  sub.add_option("--port", o->flags.port, "Port (default: SGLang 30000, vLLM 8000)")->check(whole(1, 65535));
  sub.add_option("--head-address", o->flags.head_address, "Head node address (default: $HEAD_ADDR at run time)");
  choice(cli,
         sub.add_option("--emit", o->emit, "sh (one script, node rank as $1; with --out one per node), k8s (LeaderWorkerSet) or json")
             ->capture_default_str(),
         {"sh", "k8s", "json"});
  auto* out = sub.add_option("--out,-o", o->out_dir, "Write the files into this directory");
  cli.hints[out].kind = ValueKind::directory;
  sub.add_option("--image", o->image, "Container image for --emit k8s (default: the engine's image, pinned to the release)");
  sub.add_option("--model-pvc", o->model_pvc, "--emit k8s: PersistentVolumeClaim holding the weights (mounted at /models)");
  sub.add_option("--model-host-path", o->model_host_path, "--emit k8s: node directory holding the weights (mounted at /models)");
  sub.add_option("--node-selector", o->node_selectors, "--emit k8s: KEY=VALUE node label the pods need (repeatable)")
      ->allow_extra_args(false);
  sub.add_option("--toleration", o->tolerations, "--emit k8s: KEY[=VALUE][:EFFECT] taint the pods tolerate (repeatable)")
      ->allow_extra_args(false);
  // the layout flags `fit` takes
  Layout& l = o->flags.layout;
  layout_options(sub, l.tp, l.ep, l.dp, l.pp, l.dcp);
  sub.add_flag("--enable-dp-attention", l.dp_attention, "SGLang DP-attention");
  sub.add_option("--pp-layer-partition", o->flags.pp_layer_partition,
                 "Decoder layers per pipeline stage, e.g. 23,24,23,23: exported as the engine's VLLM_PP_LAYER_PARTITION / "
                 "SGLANG_PP_LAYER_PARTITION (sets --pp when it is not given)")
      ->delimiter(',')
      ->check(whole(0, kMaxLayers));
  // disaggregated prefill / decode: a pool of workers per side, the transfer back-end and the router
  for (auto [side, ls] : {std::pair{"prefill", &o->prefill}, std::pair{"decode", &o->decode}}) {
    const std::string s(side);
    sub.add_option("--" + s + "-workers", ls->workers, "Disaggregated: " + s + " workers (default 1)")->check(whole(1, kMaxLaunchWorkers));
    sub.add_option("--" + s + "-gpus", ls->gpus, "Disaggregated: GPUs of the " + s + " pool (workers x TP; sets whichever is not given)")
        ->check(whole(1, kMaxLaunchWorkers * kMaxDegree));
    sub.add_option("--" + s + "-tp", ls->tp, "Disaggregated: TP (GPUs) of one " + s + " worker")->check(whole(1, kMaxDegree));
    sub.add_option("--" + s + "-ep", ls->ep, "Disaggregated: EP of one " + s + " worker (default 1)")->check(whole(1, kMaxDegree));
    sub.add_flag("--" + s + "-dp-attention", ls->dp_attention, "Disaggregated: DP attention over the " + s + " worker's GPUs");
  }
  sub.add_option("--transfer-backend", o->disagg.transfer_backend,
                 "Disaggregated: KV transfer back-end (SGLang: mooncake by default, or nixl, ... as the release accepts; vLLM: nixl)");
  sub.add_option("--ib-device", o->disagg.ib_device, "Disaggregated, SGLang Mooncake: the RDMA devices for the KV transfer (e.g. mlx5_0,mlx5_1)");
  sub.add_option("--router-port", o->disagg.router_port, "Disaggregated: router / proxy port (default: SGLang 8000, vLLM 8192)")
      ->check(whole(1, 65535));
  output_options(sub, cli);
  sub.callback([&cli, &sub, o, engine, context] {
    for (const char* name : {"--tp", "--ep", "--dp", "--pp", "--dcp", "--enable-dp-attention"})
      if (sub.count(name) > 0) o->layout_given = true;
    if (sub.count("--ep") > 0) o->flags.where["parallel.ep"] = {"--ep", 0, 0};  // EP given: vLLM does not derive it
    if (sub.count("--pp-layer-partition") > 0) {
      o->layout_given = true;
      o->flags.where["parallel.pp_layer_partition"] = {"--pp-layer-partition", 0, 0};
      if (sub.count("--pp") == 0) o->flags.layout.pp = static_cast<int>(o->flags.pp_layer_partition.size());
    }
    cli.action = [o, engine, context](const Catalogue& c) {
      o->flags.engine = parse_engine(*engine);
      engine_model(o->flags.engine, o->flags.engine_version);
      if (!context->empty()) o->flags.context = parse_context(*context, "--context");
      if (o->emit == "json") o->flags.file = "<flags>";
      return run_launch(c, *o);
    };
  });
}
void define_check(CLI::App& sub, Cli& cli) {
  auto o = std::make_shared<CheckOptions>();
  auto format = std::make_shared<std::string>("table");
  file(cli, sub.add_option("files", o->files, "Deployment YAML files (see examples/deploy/)"));
  file(cli, sub.add_option("--command", o->commands, "A vLLM / SGLang command line, or a file holding a launch script (repeatable)")
                ->allow_extra_args(false));
  file(cli, sub.add_option("--manifest", o->manifests, "A LeaderWorkerSet manifest (repeatable)")->allow_extra_args(false));
  sub.add_option("-g,--gpu", o->gpu, "GPU the command lines and manifests run on (a command line names none)");
  sub.add_option("--engine-version", o->engine_version,
                 "Engine release the command lines and manifests run, e.g. 0.5.8.post1 or 0.10.1.1 (default: the newest modelled)");
  sub.add_flag("--strict", o->strict, "Warnings fail too (exit 1)");
  choice(cli,
         sub.add_option("--format,-f", *format, "Output: table (compiler-style lines), json, sarif (SARIF 2.1.0), yaml, csv or md")
             ->capture_default_str(),
         {"table", "json", "sarif", "yaml", "csv", "md", "markdown"});
  text_options(sub, cli);
  auto* d = sub.add_option("--data", cli.global.data_dirs,
                           "Extra catalogue directory (repeatable); its entries add to or override the embedded ones");
  cli.hints[d].kind = ValueKind::directory;
  sub.callback([&cli, o, format] {
    o->format_hint = *format;
    cli.global.format = *format == "sarif" ? "json" : *format;  // the SARIF log is the JSON data
    cli.action = [o](const Catalogue& c) { return run_check(c, *o); };
  });
}
void define_perf(CLI::App& sub, Cli& cli) {
  auto o = std::make_shared<PerfOptions>();
  model_option(sub, cli, o->model, true);
  sub.add_option("-g,--gpu", o->gpu, "GPU id or alias")->required();
  gpu_count(sub, o->gpus, "Number of GPUs (omit: the smallest that fits)");
  layout_options(sub, o->tp, o->ep, o->dp, o->pp, o->dcp, "Data parallel (DP-attention size with --enable-dp-attention)");
  sub.add_flag("--enable-dp-attention", o->dp_attention, "SGLang DP-attention");
  sub.add_option("--precision,-p", o->precision, "Every weight in this format (default: as shipped)");
  sub.add_option("--expert-precision", o->expert_precision, "Only the routed experts in this format (nvfp4, mxfp4, fp8, ...)");
  kv_dtype_option(sub, o->kv_dtype);
  choice(cli, sub.add_option("--engine", o->engine, "sglang, vllm, trt or atom")->capture_default_str(), {"sglang", "vllm", "trt", "atom"});
  sub.add_option("--engine-version", o->engine_version,
                 "Engine release, e.g. 0.19.0 or 0.5.9: the memory rules' window (sglang, vllm) and a calibration entry keyed to it "
                 "(default: the newest modelled, any entry)");
  request_shape(sub, o->isl, o->osl);
  sub.add_option("--concurrency,-c", o->concurrency, "Concurrent users (closed loop)")->capture_default_str()->check(whole(1, 1000000));
  sub.add_option("--spec-tokens", o->spec_tokens, "Speculative decoding: draft tokens per step (0 = off)")->check(whole(0, 16));
  sub.add_option("--spec-acceptance", o->spec_acceptance,
                 "Per-token acceptance probability of a draft token (default: data/perf/efficiency.yaml)")
      ->check(real(0, 1));
  sub.add_option("--length-scale", o->length_scale, "Mean request length / nominal (InferenceX random lengths: 0.9)")
      ->check(real(0, 1, true));
  sub.add_option("--max-num-batched-tokens", o->max_num_batched_tokens, "Batch-token limit per prefill step (chunked prefill size)")
      ->check(whole(1, kMaxBatchTokens));
  sub.add_option("--max-running-requests", o->max_running_requests,
                 "Running-request cap per DP group (SGLang --max-running-requests, vLLM --max-num-seqs; default: the engine's)")
      ->check(whole(1, 1000000));
  efficiency_option(sub, cli, o->efficiency_file);
  // disaggregated serving: a worker count and a layout per side (PerfOptions::disaggregated)
  for (auto [side, workers, gpus, tp, ep, dpa] :
       {std::tuple{"prefill", &o->prefill_workers, &o->prefill_gpus, &o->prefill_tp, &o->prefill_ep, &o->prefill_dp_attention},
        std::tuple{"decode", &o->decode_workers, &o->decode_gpus, &o->decode_tp, &o->decode_ep, &o->decode_dp_attention}}) {
    const std::string s(side);
    sub.add_option("--" + s + "-workers", *workers, "Disaggregated: " + s + " workers (default 1)")->check(whole(1, kMaxGpus));
    sub.add_option("--" + s + "-gpus", *gpus, "Disaggregated: GPUs of the " + s + " pool (workers x TP; sets whichever is not given)")
        ->check(whole(1, kMaxGpus));
    sub.add_option("--" + s + "-tp", *tp, "Disaggregated: TP (GPUs) of one " + s + " worker")->check(whole(1, kMaxDegree));
    sub.add_option("--" + s + "-ep", *ep, "Disaggregated: EP of one " + s + " worker (default 1)")->check(whole(1, kMaxDegree));
    sub.add_flag("--" + s + "-dp-attention", *dpa, "Disaggregated: DP attention over the " + s + " worker's GPUs");
  }
  output_options(sub, cli);
  run_with(sub, cli, o, run_perf);
}
void define_plan(CLI::App& sub, Cli& cli) {
  auto o = std::make_shared<PlanOptions>();
  model_option(sub, cli, o->model, true);
  sub.add_option("--gpus-from", o->gpus_from, "GPU ids to consider (default: every catalogue GPU)")->delimiter(',');
  sub.add_option("--max-gpus", o->max_gpus, "Largest instance to consider")->capture_default_str()->check(whole(1, 4096));
  request_shape(sub, o->isl, o->osl);
  sub.add_option("--ttft-ms", o->ttft_ms, "TTFT target, ms (default: the SLA file's tier for the prompt length)")
      ->check(real(0, 1e7, true));
  sub.add_option("--tpot-ms", o->tpot_ms, "TPOT / ITL target, ms (default: the SLA file's target for --workload)")
      ->check(real(0, 1e6, true));
  sub.add_option("--interactivity", o->interactivity, "Minimum tok/s per user (TPOT = 1000 / X)")->check(real(0, 1e6, true));
  choice(cli, sub.add_option("--workload", o->workload, "chat or agentic: which ITL target applies")->capture_default_str(),
         {"chat", "agentic"});
  file(cli, sub.add_option("--sla", o->sla_file, "SLA YAML: tiered TTFT by prompt length, ITL per workload (default: data/perf/sla.yaml)"));
  sub.add_option("--users", o->users, "Concurrent users to serve (adds instances)")->check(real(1, 1e9));
  sub.add_option("--requests-per-s", o->requests_per_s, "Request rate to serve (adds instances)")->check(real(0, 1e9, true));
  choice(cli, sub.add_option("--rate-source", o->rate_source, "on-demand, reserved or spot prices")->capture_default_str(),
         {"on-demand", "reserved", "spot"});
  sub.add_option("--engines", o->engines, "Engines to consider (default: sglang,vllm)")->delimiter(',');
  sub.add_option("--precisions", o->precisions,
                 "Precisions to consider: as-shipped, fp8, experts-mxfp4, experts-nvfp4, ... (default: as shipped + native ones)")
      ->delimiter(',');
  sub.add_option("--top", o->top, "Rows of next-cheapest configurations")->capture_default_str()->check(whole(0, 100));
  choice(cli,
         sub.add_option("--risk", o->risk, "median, or p90: meet the SLA and rank at the pessimistic end of each prediction's error band")
             ->capture_default_str(),
         {"median", "p90"});
  sub.add_flag("--disagg", o->disagg,
               "Also search disaggregated prefill / decode pools (worker sizes, DP attention, prefill:decode ratio), ranked with the rest");
  efficiency_option(sub, cli, o->efficiency_file);
  output_options(sub, cli);
  run_with(sub, cli, o, run_plan);
}
void define_perf_validate(CLI::App& sub, Cli& cli) {
  output_options(sub, cli);
  sub.callback([&cli] { cli.action = [](const Catalogue& c) { return run_perf_validate(c); }; });
}
void define_calibrate(CLI::App& sub, Cli& cli) {
  auto o = std::make_shared<CalibrateCommandOptions>();
  CalibrateOptions& f = o->fit;
  file(cli, sub.add_option("file", f.file,
                           "Benchmark result: the JSON vLLM's bench serve saves (save-result), the JSON lines SGLang's bench_serving "
                           "appends (output-file), a guidellm benchmarks JSON or InferenceX CSV rows")
                ->required());
  choice(cli, sub.add_option("--input-format", f.input_format, "Format of FILE (auto: from its content)")->capture_default_str(),
         {"auto", "vllm", "sglang", "guidellm", "inferencex"});
  model_option(sub, cli, f.model, false, "Model the benchmark served (default: the one the file names); as perf -m");
  sub.add_option("-g,--gpu", f.gpu, "GPU it ran on (default: the file's; with a file that names GPUs, selects its rows)");
  choice(cli, sub.add_option("--engine", f.engine, "Serving engine (default: the file's, else the benchmark tool's own)"),
         {"sglang", "vllm", "trt", "atom"});
  sub.add_option("--engine-version", f.engine_version,
                 "Engine release it ran, e.g. 0.19.0 (the entry is keyed to it; default: the file's)");
  choice(cli, sub.add_option("--precision,-p", f.precision, "fp8, fp4 (routed experts) or bf16 (default: the file's, else as shipped)"),
         {"fp8", "fp4", "bf16"});
  sub.add_option("--kv-dtype", f.kv_dtype, "KV cache dtype it ran (default: the file's, else auto)");
  choice(cli, sub.add_option("--spec", f.spec, "Speculative decoding it ran: none or mtp (default: the file's, else none)"),
         {"none", "mtp"});
  sub.add_option("--tp", f.tp, "Tensor parallel it ran (default: the file's)")->check(whole(1, kMaxDegree));
  sub.add_option("--ep", f.ep, "Expert parallel it ran (default: the file's, else 1)")->check(whole(1, kMaxDegree));
  sub.add_option("--dp", f.dp,
                 "Data-parallel replicas it ran behind one endpoint, the users split evenly (vLLM data_parallel_size, SGLang "
                 "dp_size without DP attention; default: the file's, else 1)")
      ->check(whole(1, kMaxDegree));
  sub.add_flag("--enable-dp-attention", f.dp_attention, "It ran SGLang DP-attention (default: the file's)");
  sub.add_option("--concurrency,-c", f.concurrency, "Concurrent requests it ran (default: the file's max concurrency)")
      ->check(whole(1, 1000000));
  efficiency_option(sub, cli, f.efficiency_file);
  file(cli, sub.add_option("-o,--out", o->out, "Calibration YAML to write (atomically; for --data DIR)"));
  sub.add_flag("--force", o->force, "Replace the -o file if it exists");
  output_options(sub, cli);
  run_with(sub, cli, o, run_calibrate);
}
void define_report(CLI::App& sub, Cli& cli) {
  auto o = std::make_shared<ReportOptions>();
  model_option(sub, cli, o->model, true);
  sub.add_option("-g,--gpu", o->gpus,
                 "Candidate GPU ids, comma-separated (default: every catalogue GPU; the cheapest that fits is recommended)")
      ->delimiter(',');
  gpu_count(sub, o->gpu_count, "Number of GPUs (omit: the smallest count that fits)");
  context_option(sub, o->context);
  users_option(sub, o->users);
  engine_option(sub, cli, o->engine);
  kv_dtype_option(sub, o->kv_dtype);
  file(cli, sub.add_option("-o,--out", o->out, "HTML file to write (atomically)")->capture_default_str());
  auto* svg = sub.add_option("--svg", o->svg_dir, "Also write each chart as DIR/<chart>.svg");
  cli.hints[svg].kind = ValueKind::directory;
  sub.add_option("--rate", o->rate_usd_per_gpu_hour, "USD per GPU-hour for every candidate (default: the catalogue prices)")
      ->check(real(0, 1e4, true));
  sub.add_option("--input-per-output", o->input_per_output, "API bill: input tokens per output token (default 0)")->check(real(0, 1e6));
  sub.add_option("--cache-hit", o->cache_hit, "API bill: share of input tokens that hit the API cache (0-1, default 0)")->check(real(0, 1));
  request_shape(sub, o->isl, o->osl, "per request (speed chart)");
  choice(cli, sub.add_option("--workload", o->workload, "chat or agentic: which ITL target shades the speed chart")->capture_default_str(),
         {"chat", "agentic"});
  output_options(sub, cli);
  run_with(sub, cli, o, run_report);
}
void define_completion(CLI::App& sub, Cli& cli) {
  auto shell = std::make_shared<std::string>();
  choice(cli, sub.add_option("shell", *shell, "bash, zsh or fish")->required(), {"bash", "zsh", "fish"});
  sub.callback([&cli, shell] { cli.text = [&cli, shell] { return completion_script(cli, *shell); }; });
}
void define_man(CLI::App& sub, Cli& cli) {
  sub.callback([&cli] { cli.text = [&cli] { return man_page(cli); }; });
}

}  // namespace

const std::vector<Command>& command_table() {
  static const std::vector<Command> table{
      {"models", "List the catalogue's models with derived and published parameter counts", define_models},
      {"gpus", "List the catalogue's accelerators", define_gpus},
      {"show", "One model or GPU in full, with sources and assumptions", define_show},
      {"weights", "Weight bytes per precision (block scales included) and as shipped", define_weights},
      {"kv", "KV cache and recurrent state per token, per sequence and for N users", define_kv},
      {"fit", "Per-GPU memory budget, KV capacity and the smallest engine-valid layout", define_fit},
      {"cost", "Rent vs API: monthly cost, break-even, tokens per dollar, cold start", define_cost},
      {"validate", "The engine-accuracy table on public start-up logs; with --log, replay one log term by term", define_validate},
      {"launch", "Engine launch commands (per node), a LeaderWorkerSet manifest or JSON, for a deployment that fits", define_launch},
      {"check", "CI gate: check deployment files, engine command lines and LeaderWorkerSet manifests (exit 1 on errors)", define_check},
      {"perf", "Throughput and latency of one deployment (TTFT, TPOT, tok/s per GPU) from a calibrated roofline", define_perf},
      {"plan", "Cheapest deployment (GPU x count x layout x precision x engine) that meets a service level", define_plan},
      {"perf-validate", "Predicted vs measured throughput and latency (InferenceX DeepSeek-R1 rows): the accuracy table",
       define_perf_validate},
      {"calibrate",
       "Fit the speed model to your own benchmark results (vLLM, SGLang, guidellm, InferenceX): error before and after, and a "
       "calibration file for --data",
       define_calibrate},
      {"report", "A self-contained HTML plan with SVG charts (memory budget, KV per user, rent vs API, speed), launch commands and sources",
       define_report},
      {"completion", "Print a shell completion script: bash, zsh or fish", define_completion},
      {"man", "Print the k3plan(1) man page (roff)", define_man},
  };
  return table;
}

Cli::Cli() {
  app.require_subcommand(1);
  app.set_version_flag("--version", std::function<std::string()>(version_text));
  app.footer(
      "Exit codes: 0 ok / fits, 1 does not fit, 2 bad input or usage.\nSizes: GB = 1e9 B, GiB = 2^30 B; contexts: k = 1,024, M = 1,048,576 "
      "tokens.");
  for (const auto& c : command_table()) c.define(*app.add_subcommand(c.name, c.summary), *this);
}

int Cli::parse(int argc, char** argv) {
  if (argc > 1 && argv[1][0] != '-') {  // name the unknown command instead of CLI11's "A subcommand is required"
    std::vector<std::string> names;
    for (const auto& c : command_table()) names.emplace_back(c.name);
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      const auto hint = closest_match(argv[1], names);
      print_error_line(
          fmt::format("unknown command '{}'{}", argv[1],
                      hint.empty() ? fmt::format(" (commands: {})", fmt::join(names, ", ")) : fmt::format("; did you mean '{}'?", hint)));
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
    return -1;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    print_error_line(e.what());
    return 2;
  }
}

}  // namespace k3plan
