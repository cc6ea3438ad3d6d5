#pragma once
// Small helpers shared by the command implementations (formatting numbers for tables).
#include <fmt/format.h>

#include <k3plan/budget.hpp>
#include <k3plan/engine.hpp>
#include <k3plan/figure.hpp>
#include <k3plan/layout.hpp>
#include <k3plan/report.hpp>
#include <k3plan/units.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace k3plan {

inline void add_assumptions(Report& r, const std::vector<Assumption>& as) {
  for (const auto& a : as) {
    const std::string s = a.what + ": " + a.reason;
    bool dup = false;
    for (const auto& x : r.assumptions) dup = dup || x == s;
    if (!dup) r.assumptions.push_back(s);
  }
}

// The JSON form of a per-GPU budget, shared by fit, perf, plan and report (a layout's forms are in
// parallel.hpp).
inline nlohmann::json budget_json(const RankBudget& b) {
  return {{"stage", b.stage},
          {"layers", b.layers},
          {"capacity_bytes", b.capacity_bytes},
          {"reserved_bytes", b.reserved_bytes},
          {"weights_bytes", b.weights_bytes},
          {"activation_bytes", b.activation_bytes},
          {"overhead_bytes", b.overhead_bytes},
          {"kv_pool_bytes", b.kv_pool_bytes},
          {"state_pool_bytes", b.state_pool_bytes},
          {"free_bytes", b.free_bytes},
          {"kv_bytes_per_token", b.kv_bytes_per_token},
          {"state_bytes_per_sequence", b.state_bytes_per_sequence},
          {"bytes_per_sequence", b.bytes_per_sequence},
          {"kv_tokens", b.kv_tokens},
          {"reported_kv_tokens", b.reported_kv_tokens},
          {"block_size", b.block_size},
          {"kv_cache_groups", b.kv_groups},
          {"state_slots", b.state_slots},
          {"max_running_requests", b.running_cap}};
}

}  // namespace k3plan
