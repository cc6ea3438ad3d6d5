#pragma once
// A catalogue number with its provenance. Every figure carries a source; figures that are not
// published carry assumed = true and the reason, and outputs that depend on them say so.
#include <string>
#include <vector>

namespace k3plan {

struct Figure {
  double value = 0;
  std::string source;
  bool assumed = false;
  std::string reason;
};

struct Assumption {
  std::string what;    // e.g. "kimi-k3 architecture.attention.kda.full_rank_gate"
  std::string reason;  // why the value is not a published one
};

void add_assumption(std::vector<Assumption>& list, const Assumption& a);

}  // namespace k3plan
