#pragma once
// `k3plan perf` (speed of one deployment), `k3plan plan` (the cheapest deployment that meets a
// service level) and `k3plan perf-validate` (predicted vs measured InferenceX rows): options ->
// one call into src/plan/ (plan.hpp) -> Report. The factors live in data/perf/efficiency.yaml, the
// measured rows in data/perf/measured-*.yaml and the default service levels in data/perf/sla.yaml.
#include <k3plan/catalogue.hpp>
#include <k3plan/plan.hpp>
#include <k3plan/report.hpp>

namespace k3plan {

Report run_perf(const Catalogue& cat, const PerfOptions& o);
// `perf` with --prefill-* / --decode-* (run_perf hands over when PerfOptions::disaggregated()).
Report run_perf_disagg(const Catalogue& cat, const PerfOptions& o);
Report run_plan(const Catalogue& cat, const PlanOptions& o);
// Per row, and the median and 90th-percentile absolute percentage error per GPU and engine.
Report run_perf_validate(const Catalogue& cat);

}  // namespace k3plan
