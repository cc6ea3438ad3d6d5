#pragma once
// The text and JSON of one plan candidate and of a runner-up's reason (src/commands/plan_cmd.cpp).
#include <k3plan/deploy.hpp>
#include <k3plan/engine_flags.hpp>
#include <k3plan/fit_render.hpp>

#include "perf_common.hpp"

namespace k3plan {

// Why a candidate misses the SLA, at the risk the plan ranks by.
inline std::string plan_miss(const PlanResult& res, const PlanCandidate& c) {
  const PlanTargets& tg = res.targets;
  std::vector<std::string> m;
  if (c.misses_ttft) m.push_back(fmt::format("TTFT {:.0f} ms > {:g}", c.p.ttft_s * 1000 * c.risk_ttft, tg.ttft_ms));
  if (c.misses_tpot) m.push_back(fmt::format("TPOT {:.1f} ms > {:g}", c.p.tpot_ms * c.risk_tpot, tg.tpot_ms));
  return fmt::format("{}", fmt::join(m, ", "));
}

// A disaggregated side: "2 x TP8 EP8 DP-attention".
inline std::string plan_side_text(const DisaggSide& s) { return fmt::format("{} x {}", s.workers, layout_text(disagg_worker_layout(s))); }

inline std::string plan_launch(const PlanResult& res, const PlanOptions& o, const PlanCandidate& c) {
  if (c.disagg) {
    // the pools, their disaggregation flags and the router come from `k3plan launch` (one home)
    std::string cmd = fmt::format("k3plan launch -m {} -g {} --engine {}", shell_word(o.model), shell_word(res.gpu_of(c).id), c.engine);
    for (const auto& [name, s] : {std::pair<const char*, const DisaggSide&>{"prefill", c.prefill_side}, {"decode", c.decode_side}}) {
      cmd += fmt::format(" --{0}-workers {1} --{0}-tp {2}", name, s.workers, s.tp);
      if (s.ep > 1) cmd += fmt::format(" --{}-ep {}", name, s.ep);
      if (s.dp_attention) cmd += fmt::format(" --{}-dp-attention", name);
    }
    return cmd + fmt::format(" --users {}", c.conc);
  }
  const FitResult f = candidate_fit(res, c, o.isl, o.osl);
  const std::string repo = shell_word(serve_model_path(res.base, o.model));
  return c.engine == "vllm" ? shell_command("vllm serve " + repo, f.vllm_args)
                            : shell_command("python3 -m sglang.launch_server --model-path " + repo, f.sglang_args);
}

inline std::string plan_config_text(const PlanResult& res, const PlanCandidate& c) {
  if (c.disagg)
    return fmt::format("{} x {} {} disaggregated: prefill {} + decode {} {}", c.gpus, res.gpu_of(c).id, c.engine,
                       plan_side_text(c.prefill_side), plan_side_text(c.decode_side), res.precision_of(c).label);
  return fmt::format("{} x {} {} {} {}", c.gpus, res.gpu_of(c).id, c.engine, layout_text(c.layout), res.precision_of(c).label);
}

// usd_per_million_tokens and tok_s_per_usd_hour are at the plan's risk (the throughput shown is the median)
inline nlohmann::json plan_candidate_json(const PlanResult& res, const PlanOptions& o, const PlanCandidate& c) {
  PerfConfig pc;
  pc.isl = o.isl;
  pc.osl = o.osl;
  pc.concurrency = c.conc;
  nlohmann::json j = perf_json(res.base, res.gpu_of(c), c.engine, c.layout, pc, c.p, res.precision_of(c).label);
  j["nodes"] = c.nodes;
  j["usd_per_hour"] = c.usd_per_hour;
  j["usd_per_million_tokens"] = c.usd_per_m;
  j["tok_s_per_usd_hour"] = c.p.tput_total_per_gpu * c.risk_tput * c.gpus / c.usd_per_hour;
  j["tok_s_per_node"] = c.p.tput_total_per_gpu * c.gpus / c.nodes;
  j["output_tok_s_per_node"] = c.p.tput_output_per_gpu * c.gpus / c.nodes;
  j["meets_sla"] = c.sla_ok;
  j["sla_miss"] = plan_miss(res, c);
  j["max_running"] = c.max_users;
  j["replicas"] = c.replicas;
  if (c.disagg) {
    auto side = [](const DisaggSide& s) {
      return nlohmann::json{{"workers", s.workers}, {"tp", s.tp}, {"ep", s.ep}, {"dp_attention", s.dp_attention},
                            {"gpus_per_worker", disagg_worker_layout(s).tp}};
    };
    j["disaggregated"] = {{"prefill", side(c.prefill_side)},
                          {"decode", side(c.decode_side)},
                          {"kv_transfer_ms", c.kv_transfer_ms},
                          {"limit", c.disagg_limit}};
  }
  return j;
}

// Why the best configuration of a GPU type lost to the winner.
inline std::string plan_why(const PlanResult& res, const PlanResult::RunnerUp& x) {
  const Gpu& g = *res.gpus[static_cast<std::size_t>(x.gpu_index)];
  const PlanCandidate* c = x.cand >= 0 ? &res.candidates[static_cast<std::size_t>(x.cand)] : nullptr;
  const PlanCandidate* win = res.win();
  std::string why;
  switch (x.kind) {
    case PlanResult::RunnerUp::Kind::winner:
      why = "winner";
      break;
    case PlanResult::RunnerUp::Kind::ties:
      why = fmt::format(
          "ties the winner on cost per token ({} tok/s/GPU at {:.2f} USD/GPU-h); ties go to more interactivity, fewer GPUs, then more "
          "compute",
          fmt_num(c->p.tput_total_per_gpu), c->usd_per_hour / c->gpus);
      break;
    case PlanResult::RunnerUp::Kind::costlier:
      why = fmt::format("{:.0f}% more per million tokens ({} tok/s/GPU at {:.2f} USD/GPU-h vs {} at {:.2f})",
                        (c->usd_per_m / win->usd_per_m - 1) * 100, fmt_num(c->p.tput_total_per_gpu), c->usd_per_hour / c->gpus,
                        fmt_num(win->p.tput_total_per_gpu), win->usd_per_hour / win->gpus);
      break;
    case PlanResult::RunnerUp::Kind::misses:
      why = "misses the SLA at every concurrency: " + plan_miss(res, *c);
      break;
    case PlanResult::RunnerUp::Kind::no_fit: {
      const auto it = res.no_fit.find(g.id);
      why = "does not fit: " + (it == res.no_fit.end() ? std::string("no layout")
                                : it->second.gpus == 0
                                    ? it->second.reason
                                    : fmt::format("{} GPUs {}: {}", it->second.gpus, layout_text(it->second.layout), it->second.reason));
      break;
    }
  }
  return why;
}

}  // namespace k3plan
