#pragma once
// `k3plan check`: a CI gate for deployment configs. Reads deployment YAML files, vLLM / SGLang
// command lines (or scripts holding one) and LeaderWorkerSet manifests, runs every rule on them
// (schema, engine layout rules, memory through the same code as `fit`, model correctness, budget)
// and reports findings with file:line:column as text, JSON or SARIF 2.1.0.
//
// Exit codes: 0 no errors; 1 errors (or warnings with --strict); 2 unreadable input (InputError:
// missing file, binary data, over the size cap, nesting too deep, malformed YAML, duplicate keys,
// numbers that no plan could hold).
#include <cstddef>
#include <k3plan/catalogue.hpp>
#include <k3plan/deploy.hpp>
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

Report run_check(const Catalogue& cat, const CheckOptions& o);

// --- building blocks (exposed for tests and the fuzzer) ----------------------------------------

inline constexpr std::size_t kMaxDeploymentBytes = 16u * 1024u * 1024u;  // 16 MiB
inline constexpr int kMaxYamlDepth = 256;

// Rejects (InputError, one line) text that is not worth handing to a YAML parser: NUL bytes or
// other binary data, invalid UTF-8, more than `max_bytes`, or nesting (flow brackets, block
// indentation, compact "- - -" sequences) deeper than `max_depth`.
void check_yaml_limits(const std::string& text, const std::string& origin, std::size_t max_bytes = kMaxDeploymentBytes,
                       int max_depth = kMaxYamlDepth);

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

// Reads every LeaderWorkerSet in a manifest (multi-document YAML; other kinds are skipped).
// Positions point into the manifest. `gpu` (may be empty) is used when no node selector names one.
std::vector<CheckTarget> parse_lws_manifest(const Catalogue& cat, const std::string& text, const std::string& origin,
                                            const std::string& gpu, std::vector<Finding>& findings);

// Runs every rule on one target; appends findings. `summary` (may be null) gets the figures.
void check_target(const Catalogue& cat, const CheckTarget& t, std::vector<Finding>& findings, nlohmann::json* summary);

// Renderings: one compiler-style line per finding (`file:line:col: severity: message [rule]`),
// and a SARIF 2.1.0 log.
std::string finding_line(const Finding& f);
nlohmann::json sarif_log(const std::vector<Finding>& findings);

}  // namespace k3plan
