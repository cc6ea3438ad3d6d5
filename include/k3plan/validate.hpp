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

}  // namespace k3plan
