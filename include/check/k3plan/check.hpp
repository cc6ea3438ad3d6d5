#pragma once
// `k3plan check`: a CI gate for deployment configs. Reads deployment YAML files, vLLM / SGLang
// command lines (or scripts holding one) and LeaderWorkerSet manifests, runs every rule of the
// rule table (check_rules.hpp: schema, engine layout rules, memory through the same code as `fit`,
// model correctness, budget) and reports findings with file:line:column as text, JSON or SARIF 2.1.0.
//
// Exit codes: 0 no errors; 1 errors (or warnings with --strict); 2 unreadable input (InputError:
// missing file, binary data, over the size cap, nesting too deep, malformed YAML, duplicate keys,
// numbers that no plan could hold; the limits are input_limits.hpp's).
#include <k3plan/catalogue.hpp>
#include <k3plan/deploy.hpp>
#include <k3plan/input_limits.hpp>
#include <k3plan/manifest.hpp>
#include <k3plan/report.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace k3plan {

struct CheckOptions {
  std::vector<std::string> files;      // deployment YAML files
  std::vector<std::string> commands;   // command lines, or files holding a launch script
  std::vector<std::string> manifests;  // LeaderWorkerSet manifests
  std::string gpu;                     // GPU for commands and manifests (a command line names none)
  std::string engine_version;          // engine release the commands and manifests run (empty = newest modelled)
  bool strict = false;                 // warnings fail too
  std::string format_hint;             // "sarif": Report.data is a SARIF 2.1.0 log
};

// The command: options -> check_inputs -> Report (src/commands/check_cmd.cpp).
Report run_check(const Catalogue& cat, const CheckOptions& o);

// --- the library (src/check/) ------------------------------------------------------------------

// What a checked input was read from.
enum class InputKind { deployment, command, manifest };

// One deployment as read from an input, with what the rules need beyond the Deployment itself.
struct CheckTarget {
  Deployment deployment;
  InputKind kind = InputKind::deployment;
  int gpus_per_pod = 0;  // manifest: GPUs each pod requests (0 = not a manifest)
  int group_size = 0;    // manifest: spec.leaderWorkerTemplate.size
  int replicas = 0;      // manifest: spec.replicas
  SourcePos anchor;      // where findings without a field of their own point
};

struct CheckResult {
  std::vector<Finding> findings;  // every input's, each input's in file order
  nlohmann::json inputs;          // per input: file, kind, engine, model, gpu and the figures the rules computed
};

// Reads and checks every input of `o` (unreadable input: InputError).
CheckResult check_inputs(const Catalogue& cat, const CheckOptions& o);

// Renderings: one compiler-style line per finding (`file:line:col: severity: message [rule]`),
// and a SARIF 2.1.0 log listing every rule of the table.
std::string finding_line(const Finding& f);
nlohmann::json sarif_log(const std::vector<Finding>& findings);
// Control characters as \n, \r, \t, \xNN: a message or path stays on one line.
std::string escape_control(const std::string& s);

}  // namespace k3plan
