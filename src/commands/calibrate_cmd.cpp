// `k3plan calibrate`: the fit of the speed model's factors on the user's benchmark results
// (src/plan/calibrate.cpp) as a report, and the calibration file written atomically.
#include <filesystem>
#include <k3plan/calibrate_cmd.hpp>
#include <k3plan/error.hpp>
#include <k3plan/output_file.hpp>
#include <map>

#include "perf_common.hpp"

namespace k3plan {

namespace {
nlohmann::json pred_json(const PerfResult& p) {
  return {{"tput_tok_s_per_gpu", p.tput_total_per_gpu}, {"tpot_ms", p.tpot_ms}, {"ttft_s", p.ttft_s}};
}
nlohmann::json ape_json(const RowScore& s) { return {{"tput_pct", s.ape_tput}, {"tpot_pct", s.ape_tpot}, {"ttft_pct", s.ape_ttft}}; }
nlohmann::json factors_json(const PerfEfficiency& e) {
  return {{"hbm", e.hbm},
          {"decode_mfu", e.decode_mfu},
          {"prefill_mfu", e.prefill_mfu},
          {"layer_overhead_us", e.layer_overhead_us},
          {"ttft_overhead_ms", e.ttft_overhead_ms},
          {"spec_acceptance", e.spec_acceptance},
          {"calibrated", e.calibrated},
          {"derived_from", e.derived_from}};
}
std::string three(double m, double b, double a, const char* f) {
  return fmt::format(fmt::runtime(std::string(f) + " / " + f + " / " + f), m, b, a);
}
}  // namespace

Report run_calibrate(const Catalogue& cat, const CalibrateCommandOptions& o) {
  if (!o.out.empty() && !o.force) {
    std::error_code ec;
    if (std::filesystem::symlink_status(o.out, ec).type() != std::filesystem::file_type::not_found && !ec)
      throw InputError(fmt::format("-o {}: the file exists; give --force to replace it", o.out));
  }
  const Calibration c = calibrate_results(cat, o.fit);
  Report r;
  r.data["file"] = o.fit.file;
  r.data["format"] = c.format;
  r.data["fields_source"] = c.fields_source;
  r.data["model"] = c.model;
  r.data["length_scale"] = c.length_scale;
  r.data["in_sample"] = true;

  // one slice: named in the title; several: a column
  const bool one_slice = c.slices.size() == 1;
  Table t{fmt::format("{} ({}, model {}{}): measured / before / after (IN-SAMPLE: the fit saw these rows)", o.fit.file, c.format, c.model,
                      one_slice ? ", " + c.slices.front().key : ""),
          {"row", "slice", "ISL/OSL x users", "tok/s per GPU", "TPOT ms", "TTFT s"},
          {},
          {false, false, false, true, true, true}};
  if (one_slice) {
    t.headers.erase(t.headers.begin() + 1);
    t.right_align.erase(t.right_align.begin() + 1);
  }
  nlohmann::json rows = nlohmann::json::array();
  std::map<std::string, int> skipped;
  for (const auto& x : c.rows) {
    nlohmann::json j{{"where", x.where},
                     {"id", x.row.id},
                     {"slice", x.slice},
                     {"isl", x.row.isl},
                     {"osl", x.row.osl},
                     {"concurrency", x.row.conc},
                     {"replicas", x.row.replicas},
                     {"measured", {{"tput_tok_s_per_gpu", x.row.tput_total}, {"tpot_ms", x.row.tpot_ms}, {"ttft_s", x.row.ttft_s}}}};
    if (x.slice.empty()) {
      j["skipped"] = x.skipped;
      ++skipped[x.skipped];
    } else {
      j["before"] = pred_json(x.before.pred);
      j["after"] = pred_json(x.after.pred);
      j["ape_before"] = ape_json(x.before);
      j["ape_after"] = ape_json(x.after);
      // the row by file name and line (the title names the file)
      std::string at = x.where.rfind(o.fit.file, 0) == 0 ? x.where.substr(o.fit.file.size()) : x.where;
      if (at.empty())
        at = "the run";
      else if (at[0] == ':' && at.size() > 1 && at[1] != ' ')
        at = "line " + at.substr(1);
      else if (at.rfind(": ", 0) == 0)
        at = at.substr(2);
      t.rows.push_back({at, x.slice,
                        fmt::format("{}/{} x {}{}", fmt_num(x.row.isl), fmt_num(x.row.osl), x.row.conc,
                                    x.row.replicas > 1 ? fmt::format(" over {} replicas", x.row.replicas) : ""),
                        fmt::format("{} / {} / {}", fmt_num(x.row.tput_total), fmt_num(x.before.pred.tput_total_per_gpu),
                                    fmt_num(x.after.pred.tput_total_per_gpu)),
                        three(x.row.tpot_ms, x.before.pred.tpot_ms, x.after.pred.tpot_ms, "{:.2f}"),
                        three(x.row.ttft_s, x.before.pred.ttft_s, x.after.pred.ttft_s, "{:.3f}")});
      if (one_slice) t.rows.back().erase(t.rows.back().begin() + 1);
    }
    rows.push_back(j);
  }
  r.data["rows"] = rows;
  r.tables.push_back(t);

  nlohmann::json slices = nlohmann::json::array();
  for (const auto& s : c.slices) {
    slices.push_back(
        {{"key", s.key},
         {"family", s.family},
         {"engine", s.engine},
         {"precision", s.precision},
         {"versions", s.versions},
         {"gpu", s.gpu},
         {"rows", s.rows},
         {"before", factors_json(s.before)},
         {"after", factors_json(s.after)},
         {"objective_before", s.objective_before},
         {"objective_after", s.objective_after},
         {"median_ape_before", {{"tput_pct", s.tput_before_pct}, {"tpot_pct", s.tpot_before_pct}, {"ttft_pct", s.ttft_before_pct}}},
         {"median_ape_after", {{"tput_pct", s.tput_after_pct}, {"tpot_pct", s.tpot_after_pct}, {"ttft_pct", s.ttft_after_pct}}}});
    Table f{fmt::format("{} on {} row{} of {}: factors and median |error|, before -> after (in-sample)", s.key, s.rows,
                        s.rows == 1 ? "" : "s", s.gpu),
            {"", "before", "after"},
            {},
            {false, true, true}};
    f.rows.push_back({"median |error| tok/s per GPU", fmt::format("{:.1f}%", s.tput_before_pct), fmt::format("{:.1f}%", s.tput_after_pct)});
    f.rows.push_back({"median |error| TPOT", fmt::format("{:.1f}%", s.tpot_before_pct), fmt::format("{:.1f}%", s.tpot_after_pct)});
    f.rows.push_back({"median |error| TTFT", fmt::format("{:.1f}%", s.ttft_before_pct), fmt::format("{:.1f}%", s.ttft_after_pct)});
    f.rows.push_back({"hbm", fmt::format("{:.3g}", s.before.hbm), fmt::format("{:.3g}", s.after.hbm)});
    f.rows.push_back({"decode_mfu", fmt::format("{:.3g}", s.before.decode_mfu), fmt::format("{:.3g}", s.after.decode_mfu)});
    f.rows.push_back({"prefill_mfu", fmt::format("{:.3g}", s.before.prefill_mfu), fmt::format("{:.3g}", s.after.prefill_mfu)});
    f.rows.push_back(
        {"layer_overhead_us", fmt::format("{:.3g}", s.before.layer_overhead_us), fmt::format("{:.3g}", s.after.layer_overhead_us)});
    f.rows.push_back(
        {"ttft_overhead_ms", fmt::format("{:.3g}", s.before.ttft_overhead_ms), fmt::format("{:.3g}", s.after.ttft_overhead_ms)});
    f.rows.push_back({"spec_acceptance", fmt::format("{:.3g}", s.before.spec_acceptance), fmt::format("{:.3g}", s.after.spec_acceptance)});
    r.tables.push_back(f);
  }
  r.data["slices"] = slices;

  r.notes.push_back(
      "in-sample: the factors were fitted on these rows, so 'after' is how well they fit, not a validation; the out-of-sample bands "
      "`k3plan perf` prints stay those of data/perf/accuracy.yaml");
  for (const auto& s : c.slices)
    if (s.rows < 5)
      r.notes.push_back(
          fmt::format("{}: {} row{} for 5 fitted factors: other factor sets fit them as well; request shapes and loads "
                      "unlike these may not follow",
                      s.key, s.rows, s.rows == 1 ? "" : "s"));
  for (const auto& [why, n] : skipped) r.notes.push_back(fmt::format("skipped {} row{}: {}", n, n == 1 ? "" : "s", why));
  for (const auto& l : c.length_notes) r.notes.push_back("lengths: " + l);
  r.data["length_notes"] = c.length_notes;
  if (o.out.empty()) {
    r.notes.push_back("nothing written: give -o FILE to write the calibration file");
    r.data["written"] = nullptr;
  } else {
    write_file_atomic(o.out, c.yaml);  // exclusive temporary, then rename: never a half-written file
    r.notes.push_back(fmt::format("wrote {}: put it in a directory DIR and pass --data DIR to perf, plan and report", o.out));
    r.data["written"] = o.out;
  }
  r.assumptions.push_back(fmt::format("fields read as {} defines them", c.fields_source));
  if (c.length_scale < 1)
    r.assumptions.push_back(fmt::format("request lengths: {:g} of the nominal ISL/OSL (InferenceX draws them at 80-100%)", c.length_scale));
  else
    r.assumptions.push_back("request lengths: the file's measured mean input and output tokens per request");
  r.assumptions.push_back(
      "throughput per GPU: the file's total tokens/s over its TP x data-parallel-replica GPUs (InferenceX: its per-GPU figure)");
  add_lines(r, c.assumptions);
  r.data["assumptions"] = r.assumptions;
  r.exit_code = 0;
  return r;
}

}  // namespace k3plan
