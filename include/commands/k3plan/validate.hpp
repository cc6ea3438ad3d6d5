#pragma once
// `k3plan validate`: the published engine-accuracy table (data/validation/log-accuracy.yaml: the
// out-of-sample public start-up logs of tests/data/logs, per engine window and model kind).
// Report.data = {"bands": [{"engine", "window", "kind", "logs", "median_abs_error_pct",
// "max_abs_error_pct"}]}.
#include <k3plan/catalogue.hpp>
#include <k3plan/log_check.hpp>
#include <k3plan/report.hpp>
#include <string>

namespace k3plan {

Report run_validate(const Catalogue& cat);

// `k3plan validate --log FILE`: one start-up log against the fit budget, term by term.
// Report.data = {"engine", "engine_version", "model", "gpu", "layout", "logged": {...},
// "predicted": {...}, "kv_cache_tokens_error", "terms": [{"term", "logged_bytes",
// "predicted_bytes"}], ...}; a figure the log does not print is absent from "logged".
struct ValidateLogOptions : LogCheckOptions {  // -m, -g, --engine, --engine-version
  std::string log_path;
};
Report run_validate_log(const Catalogue& cat, const ValidateLogOptions& o);

}  // namespace k3plan
