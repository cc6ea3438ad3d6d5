#pragma once
// `k3plan validate`: the engine-accuracy table. Each case is a real vLLM / SGLang start-up log
// (data/validation/engine-logs.cases.yaml) replayed through the same code as `k3plan fit`:
//  - pieces:  the logged weights / activation / non-torch memory (or the logged pool) go through the
//             engine's pool formula and our per-token KV cost and block rounding; must be within 3 %.
//  - predict: the whole budget from our own model (evaluate_fit); the error is reported, no target.
// Report.data = {"cases": [...], "summary": {...}}; exit_code = 1 when a pieces case misses 3 %.
#include <k3plan/catalogue.hpp>
#include <k3plan/report.hpp>
#include <string>

namespace k3plan {

inline constexpr double kPiecesTolerancePct = 3.0;

// cases_path empty = the embedded data/validation/engine-logs.cases.yaml.
Report run_validate(const Catalogue& cat, const std::string& cases_path);

// The same from the text of a cases file; `origin` names it in errors.
Report run_validate_text(const Catalogue& cat, const std::string& text, const std::string& origin);

// `k3plan validate --log FILE`: one start-up log against the fit budget, term by term.
// Report.data = {"engine", "engine_version", "model", "gpu", "layout", "logged": {...},
// "predicted": {...}, "kv_cache_tokens_error", "terms": [{"term", "logged_bytes",
// "predicted_bytes"}], ...}; a figure the log does not print is absent from "logged".
struct ValidateLogOptions {
  std::string log_path;
  std::string model;           // -m: overrides the log's model argument
  std::string gpu;             // -g: when the log does not name the GPU
  std::string engine;          // optional: must match the log
  std::string engine_version;  // when the log does not print it (default: newest window)
};
Report run_validate_log(const Catalogue& cat, const ValidateLogOptions& o);

}  // namespace k3plan
