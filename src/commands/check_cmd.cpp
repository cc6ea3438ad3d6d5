// `k3plan check`: options -> check_inputs (src/check/) -> Report (text lines, JSON, SARIF, table).
#include <fmt/format.h>

#include <k3plan/check.hpp>
#include <k3plan/check_rules.hpp>

namespace k3plan {

using nlohmann::json;

Report run_check(const Catalogue& cat, const CheckOptions& o) {
  const CheckResult res = check_inputs(cat, o);
  const auto& all = res.findings;
  int errors = 0, warnings = 0, notes = 0;
  for (const auto& f : all) {
    if (f.severity == "error")
      ++errors;
    else if (f.severity == "warning")
      ++warnings;
    else
      ++notes;
  }
  const bool failed = errors > 0 || (o.strict && warnings > 0);
  Report r;
  r.exit_code = failed ? 1 : 0;
  const std::size_t n_inputs = res.inputs.size();
  const std::string summary =
      fmt::format("k3plan check: {} input{}, {} error{}, {} warning{}, {} note{}: {}{}", n_inputs, n_inputs == 1 ? "" : "s", errors,
                  errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s", notes, notes == 1 ? "" : "s", failed ? "FAILED" : "passed",
                  o.strict ? " (--strict: warnings fail)" : "");
  if (o.format_hint == "sarif") {
    r.data = sarif_log(all);
  } else {
    json fj = json::array();
    for (const auto& f : all)
      fj.push_back({{"rule", f.rule},
                    {"severity", f.severity},
                    {"message", f.message},
                    {"file", f.pos.file},
                    {"line", f.pos.line},
                    {"column", f.pos.column}});
    r.data = {{"passed", !failed}, {"strict", o.strict},   {"errors", errors}, {"warnings", warnings},
              {"notes", notes},    {"inputs", res.inputs}, {"findings", fj}};
  }
  if (o.format_hint == "csv" || o.format_hint == "md") {
    Table t{"Findings", {"file", "line", "column", "severity", "rule", "message"}, {}, {false, true, true, false, false, false}};
    for (const auto& f : all)
      t.rows.push_back(
          {f.pos.file, std::to_string(f.pos.line), std::to_string(f.pos.column), f.severity, f.rule, escape_control(f.message)});
    r.tables.push_back(t);
  }
  for (const auto& f : all) r.notes.push_back(finding_line(f));
  r.notes.push_back(summary);
  // compiler-style lines stay one per finding at any width (editors and CI annotators parse them)
  for (const auto& n : r.notes) r.raw_text += n + "\n";
  return r;
}

}  // namespace k3plan
