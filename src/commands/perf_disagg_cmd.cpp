// `k3plan perf` with --prefill-* / --decode-*: the speed of a disaggregated deployment
// (src/plan/deployment.cpp evaluate_perf_disagg, calc/perf.cpp estimate_disagg) as a report.
#include <k3plan/perf_cmd.hpp>
#include <k3plan/units.hpp>

#include "perf_common.hpp"

namespace k3plan {

Report run_perf_disagg(const Catalogue& cat, const PerfOptions& o) {
  const PerfDisaggEvaluation ev = evaluate_perf_disagg(cat, o);
  const Model& m = ev.model;
  const Gpu& g = *ev.gpu;
  const PerfEfficiency& eff = ev.eff;
  const DisaggDeployment& dd = ev.deployment;
  const DisaggResult& p = ev.result;
  const PerfResult& t = p.total;
  const std::string pre = side_text(dd.prefill_side, dd.prefill), dec = side_text(dd.decode_side, dd.decode);

  Report r;
  r.data = {{"model", m.id},
            {"gpu", g.id},
            {"engine", o.engine},
            {"precision", ev.precision},
            {"disaggregated", true},
            {"gpus", t.gpus},
            {"prefill", {{"workers", dd.prefill_side.workers}, {"layout", layout_json(dd.prefill)}, {"gpus", p.prefill_gpus}}},
            {"decode", {{"workers", dd.decode_side.workers}, {"layout", layout_json(dd.decode)}, {"gpus", p.decode_gpus}}},
            {"isl", o.isl},
            {"osl", o.osl},
            {"concurrency", o.concurrency},
            {"ttft_s", t.ttft_s},
            {"tpot_ms", t.tpot_ms},
            {"interactivity_tok_s_user", t.interactivity},
            {"e2e_latency_s", t.e2e_s},
            {"requests_per_s", p.requests_per_s},
            {"throughput_per_gpu",
             {{"input", t.tput_input_per_gpu},
              {"output", t.tput_output_per_gpu},
              {"total", t.tput_total_per_gpu},
              {"input_per_prefill_gpu", p.input_per_prefill_gpu},
              {"output_per_decode_gpu", p.output_per_decode_gpu}}},
            {"limit", p.limit},
            {"bound", t.bound},
            {"fits", dd.fits},
            {"breakdown",
             {{"prefill_alone_ms", p.prefill_alone_ms},
              {"prefill_batch_ms", p.prefill_batch_ms},
              {"prefill_batch_requests", p.prefill_batch_requests},
              {"prefill_wait_s", p.prefill_wait_s},
              {"prefill_utilisation", p.prefill_utilisation},
              {"kv_bytes_per_request_per_gpu", p.kv_bytes_per_request},
              {"kv_link_gb_s", p.kv_link_gb_s},
              {"kv_link", p.kv_scaleup ? "scale-up" : "scale-out"},
              {"kv_transfer_ms", p.kv_transfer_ms},
              {"decode_batch_per_worker", p.decode_batch_per_worker},
              {"decode_batch_per_rank", p.decode_batch_per_rank},
              {"decode_step_ms", t.step.t_step_ms},
              {"tokens_per_step", t.step.tokens_per_step},
              {"decode_utilisation", p.decode_utilisation},
              {"decode_max_running_per_worker", dd.decode_mem.max_running}}},
            {"calibrated", eff.calibrated}};
  if (!eff.calibrated) r.data["derived_from"] = eff.derived_from;

  Table s{fmt::format("{} disaggregated on {} x {} ({}, {}): prefill {}, decode {}; ISL {} / OSL {}, {} users", m.id, t.gpus, g.id,
                      o.engine, ev.precision, pre, dec, fmt_num(o.isl), fmt_num(o.osl), o.concurrency),
          {"measure", "value", "note"},
          {},
          {false, true, false}};
  if (!eff.calibrated) s.rows.push_back({"calibration", "UNCALIBRATED", "factors derived from " + eff.derived_from});
  s.rows.push_back({"TTFT", fmt::format("{:.3f} s", t.ttft_s),
                    fmt::format("prefill wait {:.3f} s + prefill {:.1f} ms + KV transfer {:.2f} ms + half a decode step + {:g} ms overhead",
                                p.prefill_wait_s, p.prefill_batch_ms, p.kv_transfer_ms, eff.ttft_overhead_ms)});
  s.rows.push_back({"TPOT (ITL)", fmt::format("{:.2f} ms", t.tpot_ms),
                    fmt::format("decode step {:.2f} ms / {:.2f} tokens per step", t.step.t_step_ms, t.step.tokens_per_step)});
  s.rows.push_back({"interactivity", fmt::format("{:.1f} tok/s per user", t.interactivity), ""});
  s.rows.push_back({"end-to-end latency", fmt::format("{:.2f} s", t.e2e_s), ""});
  s.rows.push_back({"throughput per GPU (total)", fmt::format("{} tok/s", fmt_num(t.tput_total_per_gpu)),
                    fmt::format("{:.2f} requests/s over all {} GPUs", p.requests_per_s, t.gpus)});
  s.rows.push_back({"input per prefill GPU / output per decode GPU",
                    fmt::format("{} / {} tok/s", fmt_num(p.input_per_prefill_gpu), fmt_num(p.output_per_decode_gpu)),
                    fmt::format("{} prefill + {} decode GPUs", p.prefill_gpus, p.decode_gpus)});
  const std::string limit_note = std::string(p.limit) == "prefill"
                                     ? "the prefill workers are (nearly) saturated: more users queue for prefill"
                                 : std::string(p.limit) == "decode" ? "the decode KV pools are full: more users wait"
                                                                    : "neither side saturated: the users set the rate (closed loop)";
  s.rows.push_back({"limited by", p.limit, limit_note});
  s.rows.push_back(
      {"memory", dd.fits ? "fits" : "DOES NOT FIT (see notes)",
       dd.fits ? fmt::format("a decode worker's KV pool runs {} requests", fmt_int(static_cast<double>(dd.decode_mem.max_running))) : ""});
  r.tables.push_back(s);

  Table b{"How it is built (one prefill worker, one decode worker)", {"part", "value", "note"}, {}, {false, true, false}};
  b.rows.push_back({"prefill, one request alone", fmt::format("{:.1f} ms", p.prefill_alone_ms), pre});
  b.rows.push_back({"prefill batch at the steady rate", fmt::format("{:.1f} ms", p.prefill_batch_ms),
                    fmt::format("{:.2f} requests per batch", p.prefill_batch_requests)});
  b.rows.push_back({"prefill utilisation", fmt::format("{:.0f}%", p.prefill_utilisation * 100), "of the full-batch capacity"});
  b.rows.push_back({"KV transfer per request", fmt::format("{:.2f} ms", p.kv_transfer_ms),
                    fmt::format("{} per GPU over the {} link at {:.1f} GB/s", human_decimal(p.kv_bytes_per_request),
                                p.kv_scaleup ? "scale-up" : "scale-out", p.kv_link_gb_s)});
  b.rows.push_back({"decode batch per worker", fmt::format("{:.1f}", p.decode_batch_per_worker),
                    dd.decode.dp_attention ? fmt::format("{:.1f} per DP-attention rank", p.decode_batch_per_rank) : std::string(dec)});
  b.rows.push_back({"decode step", fmt::format("{:.3f} ms", t.step.t_step_ms),
                    fmt::format("{} weights + {} KV per GPU; {}-bound", human_decimal(t.step.pass.weight_bytes),
                                human_decimal(t.step.pass.kv_bytes), t.bound)});
  r.tables.push_back(b);

  if (!eff.calibrated)
    r.notes.push_back(
        fmt::format("UNCALIBRATED: no measured rows of {}'s family; factors derived from {} by datasheet ratios", g.id, eff.derived_from));
  r.notes.push_back(
      "error: disaggregated predictions are validated out of sample on InferenceX rows (B200, H200, MI355X, GB200 and GB300 NVL72): `k3plan perf-validate`, "
      "disaggregated section; no factor was fitted on them");
  for (const auto& x : dd.reasons) r.notes.push_back("does not fit: " + x);
  if (o.engine == "trt" || o.engine == "atom") r.notes.push_back(o.engine + ": layout and memory checked with SGLang's rules");
  r.assumptions.push_back(kModelAssumption);
  add_lines(r, disagg_assumptions(g, eff, p));
  perf_factor_assumptions(r, eff, o.spec_tokens, o.spec_acceptance.has_value(), o.length_scale);
  add_assumptions(r, m.assumptions);
  gpu_assumptions(r, g, false);
  r.data["assumptions"] = r.assumptions;
  r.exit_code = dd.fits ? 0 : 1;
  return r;
}

}  // namespace k3plan
