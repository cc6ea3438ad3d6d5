#pragma once
// Helpers shared by `perf`, `plan` and `perf-validate` (src/commands/perf_cmd.cpp, plan_cmd.cpp,
// perf_validate_cmd.cpp): number formatting, the JSON of one prediction, the assumption lines.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <k3plan/plan.hpp>
#include <k3plan/report.hpp>
#include <string>
#include <vector>

#include "common.hpp"

namespace k3plan {

inline std::string fmt_num(double v) {
  if (!std::isfinite(v)) return "-";
  const double a = std::abs(v);
  if (a >= 1000) return fmt_int(v);
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}

inline void add_lines(Report& r, const std::vector<std::string>& lines) {
  for (const auto& s : lines)
    if (std::find(r.assumptions.begin(), r.assumptions.end(), s) == r.assumptions.end()) r.assumptions.push_back(s);
}

// Catalogue figures the speed model rests on: bandwidth, FLOPS, links (and price when ranking).
inline void gpu_assumptions(Report& r, const Gpu& g, bool price) {
  std::vector<Assumption> used;
  for (const auto& a : g.assumptions)
    if (a.what.find("bandwidth") != std::string::npos || a.what.find("tflops") != std::string::npos ||
        a.what.find("scaleup") != std::string::npos || a.what.find("memory_reported") != std::string::npos ||
        (price && a.what.find("price") != std::string::npos))
      used.push_back(a);
  add_assumptions(r, used);
}

inline const char* kModelAssumption =
    "perf model: decode = max(bytes/HBM, FLOPs/TFLOPS) + collectives + per-layer and per-step overhead; uniform expert routing "
    "(E x (1 - (1 - k/E)^T) experts touched per layer, no load imbalance); closed-loop continuous batching at steady state";

// "2 x TP8 EP8 DP8 DP-attention": one side of a disaggregated deployment
// The speed model's assumptions every perf run lists: the factors' own, the speculative acceptance
// when it comes from the factors, and the length scale.
inline void perf_factor_assumptions(Report& r, const PerfEfficiency& eff, int spec_tokens, bool acceptance_given, double length_scale) {
  add_lines(r, eff.assumptions);
  if (spec_tokens > 0 && !acceptance_given)
    r.assumptions.push_back(fmt::format("speculative acceptance {:g} per draft token from data/perf/efficiency.yaml ({}/{})",
                                        eff.spec_acceptance, eff.family, eff.engine));
  if (length_scale < 1) r.assumptions.push_back(fmt::format("request lengths scaled by {:g} of nominal", length_scale));
}

inline std::string side_text(const DisaggSide& s, const Layout& l) { return fmt::format("{} x {}", s.workers, layout_text(l)); }

// What the disaggregated estimate assumes, beyond the aggregated model (calc/perf.hpp, estimate_disagg).
inline std::vector<std::string> disagg_assumptions(const Gpu& g, const PerfEfficiency& eff, const DisaggResult& p) {
  std::vector<std::string> a;
  a.push_back(
      "disaggregated: decode TPOT from one decode worker's step at its share of the decoding sequences (spread evenly over the decode "
      "workers and, with DP attention, over its ranks), no prefill work in decode steps; TTFT = prefill wait (half the batch in "
      "progress when busy, plus M/D/1 against the full-batch capacity) + the request's prefill batch + KV transfer + half a decode step + "
      "the per-request overhead; the rate is what the users "
      "sustain in the closed loop, capped by the prefill workers' full-batch capacity and the decode KV pools; throughput per GPU = "
      "(input + output tokens/s) / all GPUs");
  a.push_back(fmt::format(
      "disaggregated KV transfer: ISL tokens of KV at each side's attention-TP shard, one link per GPU, no contention between "
      "transfers: {}; no transfer-engine set-up cost beyond the link latency",
      p.kv_scaleup ? fmt::format("all {} GPUs in one scale-up domain ({} GPUs): {:g} GB/s one way x comm_efficiency {:g}", p.total.gpus,
                                 g.scaleup_domain_gpus, g.scaleup_gb_s.value / 2, eff.comm_efficiency)
                   : fmt::format("{} GPUs exceed the scale-up domain of {}: the scale-out link, scaleout_gb_s {:g} GB/s per GPU (assumed, "
                                 "data/perf/efficiency.yaml) x comm_efficiency {:g}",
                                 p.total.gpus, g.scaleup_domain_gpus, eff.scaleout_gb_s, eff.comm_efficiency)));
  a.push_back(
      "disaggregated: the factors are the aggregated ones of the GPU family and engine (no disaggregated row fitted them); the prefill "
      "and decode workers run the same engine build");
  return a;
}

inline nlohmann::json perf_json(const Model& m, const Gpu& g, const std::string& engine, const Layout& l, const PerfConfig& c,
                                const PerfResult& p, const std::string& precision) {
  return {{"model", m.id},
          {"gpu", g.id},
          {"gpus", p.gpus},
          {"engine", engine},
          {"precision", precision},
          {"layout", layout_json(l)},
          {"isl", c.isl},
          {"osl", c.osl},
          {"concurrency", c.concurrency},
          {"ttft_s", p.ttft_s},
          {"tpot_ms", p.tpot_ms},
          {"interactivity_tok_s_user", p.interactivity},
          {"e2e_latency_s", p.e2e_s},
          {"throughput_per_gpu", {{"input", p.tput_input_per_gpu}, {"output", p.tput_output_per_gpu}, {"total", p.tput_total_per_gpu}}},
          {"bound", p.bound}};
}

}  // namespace k3plan
