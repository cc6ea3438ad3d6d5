#pragma once
// Small helpers shared by the command implementations (assumption lines for tables).
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

}  // namespace k3plan
