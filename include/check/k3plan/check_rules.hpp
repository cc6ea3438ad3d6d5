#pragma once
// The rules of `k3plan check` (src/check/): one declarative table, the only list of rule ids.
// Each row: the id (stable: CI configurations and SARIF baselines key on it), its default level,
// a one-line text (SARIF shortDescription) and the function that evaluates it. Several ids share
// one function (a family, e.g. every memory rule is decided by one pass through `fit`); rules
// whose findings come from the readers (schema, command line, manifest structure) have none.
// Engine refusals keep the id the engine model gives them (engine.hpp `Refusal::rule`).
// tests/test_check_rules.cpp checks the table: unique ids, every id documented in
// examples/README.md, every id emitted anywhere in src/ listed here.
#include <k3plan/catalogue.hpp>
#include <k3plan/deploy.hpp>
#include <k3plan/gpu.hpp>
#include <k3plan/model.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace k3plan {

struct CheckTarget;
struct RuleContext;

using RuleFunction = void (*)(RuleContext&);

struct RuleInfo {
  const char* id;
  const char* level;  // error | warning | note (a finding may differ, e.g. model/unknown on a command line)
  const char* text;
  RuleFunction function;  // nullptr: emitted by a reader
};

// The table, in evaluation order of the functions.
const std::vector<RuleInfo>& check_rules();
// The row for `id`, or nullptr.
const RuleInfo* find_rule(const std::string& id);

// Runs every rule function once, in table order, on one target; appends findings. `summary`
// (may be null) gets the figures the rules computed (gpus, layout, fits, kv tokens...).
void check_target(const Catalogue& cat, const CheckTarget& t, std::vector<Finding>& findings, nlohmann::json* summary);

}  // namespace k3plan
