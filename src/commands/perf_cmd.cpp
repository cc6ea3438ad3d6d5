// `k3plan perf`: the speed of one deployment (src/plan/deployment.cpp) as a report.
#include <k3plan/deploy.hpp>
#include <k3plan/engine_flags.hpp>
#include <k3plan/fit_render.hpp>
#include <k3plan/perf_cmd.hpp>
#include <k3plan/units.hpp>

#include "perf_common.hpp"

namespace k3plan {

Report run_perf(const Catalogue& cat, const PerfOptions& o) {
  if (o.disaggregated()) return run_perf_disagg(cat, o);
  const PerfEvaluation ev = evaluate_perf(cat, o);
  const Model& m = ev.model;
  const Gpu& g = *ev.gpu;
  const PerfEfficiency& eff = ev.eff;
  const MemCheck& mc = ev.mem;
  const FitResult& f = mc.full;
  const PerfConfig& c = ev.config;
  const PerfResult& p = ev.result;
  const PerfModel& pm = ev.pm;
  const Engine le = c.engine;
  const std::int64_t context = ev.context, avg_context = ev.avg_context;
  const std::string& prec = ev.precision;

  Report r;
  r.data = perf_json(m, g, o.engine, f.layout, c, p, prec);
  // the memory rules' window (sglang, vllm); trt and atom are checked with SGLang's newest
  const EngineModel* memory_rules = o.engine == "sglang" || o.engine == "vllm" ? &engine_model(le, o.engine_version) : nullptr;
  const std::string engine_text = memory_rules ? memory_rules->label() : o.engine;
  r.data["engine_version"] = memory_rules ? nlohmann::json(memory_rules->version().id) : nlohmann::json(nullptr);
  r.data["fits"] = mc.fits;
  r.data["max_running"] = mc.max_running;
  r.data["max_running_pool"] = mc.pool_running;
  r.data["max_running_engine"] = mc.engine_running;
  r.data["nodes"] = f.nodes;
  r.data["breakdown"] = {{"decode_batch", p.step.batch},
                         {"tokens_per_step", p.step.tokens_per_step},
                         {"step_ms", p.step.t_step_ms},
                         {"memory_ms", p.step.pass.t_memory_ms * f.layout.pp},
                         {"compute_ms", p.step.pass.t_compute_ms * f.layout.pp},
                         {"communication_ms", p.step.pass.t_comm_ms * f.layout.pp},
                         {"overhead_ms", p.step.pass.t_overhead_ms * f.layout.pp + eff.step_overhead_ms},
                         {"draft_ms", p.step.t_draft_ms},
                         {"weight_bytes_per_gpu", p.step.pass.weight_bytes},
                         {"kv_bytes_per_gpu", p.step.pass.kv_bytes},
                         {"experts_touched_per_rank", p.step.pass.experts_touched},
                         {"prefill_ms_one_request", p.prefill_ms},
                         {"prefill_share", p.prefill_share},
                         {"queued", p.queued}};
  r.data["efficiency"] = {{"family", eff.family},
                          {"engine", eff.engine},
                          {"hbm", eff.hbm},
                          {"decode_mfu", eff.decode_mfu},
                          {"prefill_mfu", eff.prefill_mfu},
                          {"step_overhead_ms", eff.step_overhead_ms},
                          {"layer_overhead_us", eff.layer_overhead_us},
                          {"layer_kernel_ratio", c.kernels.layer_kernel_ratio},
                          {"kernel_path", c.kernels.source}};

  // the error band of this slice, from out-of-sample validation (data/perf/accuracy.yaml)
  const PerfBand* band = band_for(embedded_accuracy(), eff.family, eff.engine, eff.calibrated);
  // the bands were measured on DeepSeek-R1 rows: for another model the table says so (the JSON
  // keeps the slice's figures, with validated_model false)
  // (data/perf/measured-*.yaml name deepseek-r1-0528, which the catalogue resolves to its architecture's entry)
  const Model* measured = cat.find_model("deepseek-r1-0528");
  const bool validated_model = measured && m.id == measured->id;
  r.data["validated_model"] = validated_model;
  auto bnd = [&](double med, double p90) {
    if (band && !validated_model) return fmt::format("not validated (R1: +/-{:.0f}%)", med);
    return band ? fmt::format("+/-{:.0f}% (p90 {:.0f}%)", med, p90) : std::string("not validated");
  };
  const std::string b_tput = band ? bnd(band->tput_median_pct, band->tput_p90_pct) : bnd(0, 0);
  const std::string b_tpot = band ? bnd(band->tpot_median_pct, band->tpot_p90_pct) : bnd(0, 0);
  const std::string b_ttft = band ? bnd(band->ttft_median_pct, band->ttft_p90_pct) : bnd(0, 0);
  const std::string slice = band ? fmt::format("{} {}/{} over {} rows", band->validation,
                                               band->family == "any" ? "every family" : band->family, band->engine, band->rows)
                                 : "no validation";
  r.data["error_band"] = band ? nlohmann::json{{"validation", band->validation},
                                               {"family", band->family},
                                               {"engine", band->engine},
                                               {"rows", band->rows},
                                               {"tput_median_pct", band->tput_median_pct},
                                               {"tput_p90_pct", band->tput_p90_pct},
                                               {"tpot_median_pct", band->tpot_median_pct},
                                               {"tpot_p90_pct", band->tpot_p90_pct},
                                               {"ttft_median_pct", band->ttft_median_pct},
                                               {"ttft_p90_pct", band->ttft_p90_pct}}
                              : nlohmann::json(nullptr);
  r.data["calibrated"] = eff.calibrated;
  if (!eff.calibrated) r.data["derived_from"] = eff.derived_from;

  Table t{fmt::format("{} on {} x {} ({}, {}, {}), ISL {} / OSL {}, {} users", m.id, f.gpus, g.id, engine_text, layout_text(f.layout), prec,
                      fmt_num(o.isl), fmt_num(o.osl), o.concurrency),
          {"measure", "value", "error band (" + slice + ")"},
          {},
          {false, true, false}};
  if (!eff.calibrated) t.rows.push_back({"calibration", "UNCALIBRATED", "factors derived from " + eff.derived_from});
  t.rows.push_back({"TTFT", fmt::format("{:.3f} s", p.ttft_s), b_ttft});
  t.rows.push_back({"TPOT (ITL)", fmt::format("{:.2f} ms", p.tpot_ms), b_tpot});
  t.rows.push_back({"interactivity", fmt::format("{:.1f} tok/s per user", p.interactivity), b_tpot});
  t.rows.push_back({"end-to-end latency", fmt::format("{:.2f} s", p.e2e_s), ""});
  t.rows.push_back({"throughput per GPU (total)", fmt::format("{} tok/s", fmt_num(p.tput_total_per_gpu)), b_tput});
  t.rows.push_back({"throughput per GPU (input / output)",
                    fmt::format("{} / {} tok/s", fmt_num(p.tput_input_per_gpu), fmt_num(p.tput_output_per_gpu)), ""});
  t.rows.push_back({"bound", p.bound, ""});
  const double usd_h = g.price_usd_per_hour.value * p.gpus;
  t.rows.push_back({"tok/s per USD/hour (total)",
                    fmt::format("{:.1f} at {:.2f} USD/GPU-hour", p.tput_total_per_gpu * p.gpus / usd_h, g.price_usd_per_hour.value),
                    b_tput});
  t.rows.push_back({"USD per million tokens (total)", fmt::format("{:.3f}", usd_h * 1e6 / (3600 * p.tput_total_per_gpu * p.gpus)), b_tput});
  // the value column holds figures; the pool's detail is a note (a long cell would squeeze the figures)
  t.rows.push_back({"memory", mc.fits ? "fits" : "DOES NOT FIT (see notes)", ""});
  if (mc.fits)
    r.notes.push_back(fmt::format("memory: the KV pool holds {} running requests (at {} tokens each on average; {} at most){}",
                                  fmt_int(static_cast<double>(mc.pool_running)), fmt_int(static_cast<double>(avg_context)),
                                  fmt_int(static_cast<double>(context)),
                                  mc.cap_by_engine
                                      ? fmt::format("; the engine runs at most {}", fmt_int(static_cast<double>(mc.engine_running)))
                                      : std::string()));
  r.tables.push_back(t);
  r.data["usd_per_million_tokens"] = usd_h * 1e6 / (3600 * p.tput_total_per_gpu * p.gpus);
  r.data["tok_s_per_usd_hour"] = p.tput_total_per_gpu * p.gpus / usd_h;

  Table b{"Decode step per GPU (one pipeline stage x PP)", {"part", "ms", "note"}, {}, {false, true, false}};
  b.rows.push_back({"weights + KV read", fmt::format("{:.3f}", p.step.pass.t_memory_ms * f.layout.pp),
                    fmt::format("{} weights + {} KV per GPU at {:.0f}% of {:g} TB/s", human_decimal(p.step.pass.weight_bytes),
                                human_decimal(p.step.pass.kv_bytes), eff.hbm * 100, g.hbm_bandwidth_tb_s.value)});
  b.rows.push_back({"compute", fmt::format("{:.3f}", p.step.pass.t_compute_ms * f.layout.pp),
                    fmt::format("{:.2f} TFLOP per GPU at {:.0f}% of dense peak", p.step.pass.flops / 1e12, eff.decode_mfu * 100)});
  b.rows.push_back(
      {"communication", fmt::format("{:.3f}", p.step.pass.t_comm_ms * f.layout.pp), "all-reduce / gather / PP send per layer"});
  b.rows.push_back({"overhead", fmt::format("{:.3f}", p.step.pass.t_overhead_ms * f.layout.pp + eff.step_overhead_ms),
                    c.kernels.source.empty()
                        ? fmt::format("{:g} us per layer + {:g} ms per step", eff.layer_overhead_us, eff.step_overhead_ms)
                        : fmt::format("{:g} us per layer x {:.2f} (kernels per layer on this GPU's engine path) + {:g} ms per step",
                                      eff.layer_overhead_us, c.kernels.layer_kernel_ratio, eff.step_overhead_ms)});
  if (p.step.t_draft_ms > 0)
    b.rows.push_back({"draft", fmt::format("{:.3f}", p.step.t_draft_ms), fmt::format("{} draft tokens", c.spec_tokens)});
  b.rows.push_back({"= step", fmt::format("{:.3f}", p.step.t_step_ms),
                    fmt::format("batch {:.1f}, {:.2f} tokens per sequence per step{}", p.step.batch, p.step.tokens_per_step,
                                p.prefill_share > 0.005 ? fmt::format(", prefill takes {:.0f}% of the time", p.prefill_share * 100) : "")});
  if (pm.experts > 0)
    b.rows.push_back({"experts touched", fmt::format("{:.1f}", p.step.pass.experts_touched),
                      fmt::format("of {} per EP rank per MoE layer", pm.experts / std::max(1, layout_shape(f.layout, le).ep))});
  r.tables.push_back(b);

  if (!eff.calibrated)
    r.notes.push_back(
        fmt::format("UNCALIBRATED: no measured rows of {}'s family; factors derived from {} by datasheet ratios, error band "
                    "widened to the leave-one-family-out one",
                    g.id, eff.derived_from));
  if (band && !validated_model)
    r.notes.push_back(fmt::format("error bands: measured on DeepSeek-R1-0528 rows only; {} is outside the validated set", m.id));
  if (!c.kernels.source.empty()) r.notes.push_back("kernel path: " + c.kernels.source);
  for (const auto& x : mc.reasons) r.notes.push_back("does not fit: " + x);
  for (const auto& x : f.warnings) r.notes.push_back("warning: " + x);
  if (p.queued)
    r.notes.push_back(
        fmt::format("{} users exceed the {} requests {}: the rest wait, which adds to TTFT", o.concurrency, mc.max_running,
                    mc.cap_by_engine ? "the engine runs at once (--max-running-requests / --max-num-seqs)" : "the KV pool holds"));
  const std::string path = shell_word(serve_model_path(m, o.model));
  r.notes.push_back("SGLang: " + shell_command("python3 -m sglang.launch_server --model-path " + path, f.sglang_args, f.sglang_env));
  r.notes.push_back("vLLM: " + shell_command("vllm serve " + path, f.vllm_args, f.vllm_env));
  for (const auto& x : f.flag_notes) r.notes.push_back("note: " + x);
  if (o.engine == "trt" || o.engine == "atom") r.notes.push_back(o.engine + ": layout and memory checked with SGLang's rules");
  r.assumptions.push_back(kModelAssumption);
  perf_factor_assumptions(r, eff, o.spec_tokens, o.spec_acceptance.has_value(), o.length_scale);
  add_lines(r, f.assumptions);
  add_assumptions(r, m.assumptions);
  gpu_assumptions(r, g, true);
  r.data["assumptions"] = r.assumptions;
  r.exit_code = mc.fits ? 0 : 1;
  return r;
}

}  // namespace k3plan
