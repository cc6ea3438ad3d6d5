// `k3plan report`: the plan as one self-contained HTML page. plan_report() (src/plan/report_plan.cpp)
// computes every number into Report::data (what `--format json` prints); the charts and the page
// are drawn from that data only (src/render/report_html.cpp), so the page and the JSON cannot
// disagree. This command writes the files and the terminal summary.
#include <fmt/format.h>

#include <filesystem>
#include <k3plan/commands.hpp>
#include <k3plan/error.hpp>
#include <k3plan/layout.hpp>
#include <k3plan/output_file.hpp>
#include <k3plan/report_html.hpp>
#include <k3plan/report_plan.hpp>
#include <k3plan/units.hpp>
#include <string>
#include <system_error>
#include <vector>

namespace k3plan {

namespace {

// The answer and the candidates, for the terminal (the page has the rest).
void add_tables(Report& r, const ReportPlan& p) {
  const ReportCandidate& sub = p.recommended();
  const FitResult& f = sub.fit;
  Table t{fmt::format("{}: {} users at {} tokens, {}", p.model_id, p.users, format_context(p.context), to_string(p.engine)),
          {"question", "answer"},
          {},
          {false, false}};
  t.rows.push_back({"verdict", f.fits ? "FITS" : "DOES NOT FIT"});
  t.rows.push_back({f.fits ? "recommended" : "closest tried",
                    fmt::format("{} x {} ({} node{}), {}", f.gpus, sub.gpu->id, f.nodes, f.nodes > 1 ? "s" : "", layout_text(f.layout))});
  t.rows.push_back({"monthly cost", fmt::format("{} USD ({:.2f} USD/GPU-hour, {:g} h)", fmt_int(sub.usd_per_month), sub.usd_per_gpu_hour,
                                                p.hours_per_month)});
  t.rows.push_back({"max users", fmt::format("{} at {} tokens", fmt_int(static_cast<double>(f.max_users)), format_context(p.context))});
  t.rows.push_back({"headroom", f.headroom >= 0 ? fmt::format("{:.1f}% of the KV/state pool", f.headroom * 100) : "-"});
  r.tables.push_back(t);
  Table ct{"Candidates (cheapest that fits first)",
           {"gpu", "GPUs", "layout", "fits", "max users", "USD/month"},
           {},
           {false, true, false, false, true, true}};
  for (const auto& c : p.candidates)
    ct.rows.push_back({c.gpu->id, std::to_string(c.fit.gpus), layout_text(c.fit.layout), c.fit.fits ? "yes" : "no",
                       fmt_int(static_cast<double>(c.fit.max_users)), fmt_int(c.usd_per_month)});
  r.tables.push_back(ct);
}

}  // namespace

Report run_report(const Catalogue& cat, const ReportOptions& o) {
  const ReportPlan p = plan_report(cat, o);
  Report r;
  r.data = p.data;
  r.assumptions = p.assumptions;
  nlohmann::json& d = r.data;

  // the charts, the page and the files, staged complete before any replaces an old one
  const std::vector<ReportChart> charts = report_charts(d);
  std::vector<std::string> svg_paths;
  if (!o.svg_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.svg_dir, ec);
    if (ec) throw InputError(fmt::format("--svg {}: {}", o.svg_dir, ec.message()));
    for (const auto& c : charts) svg_paths.push_back((std::filesystem::path(o.svg_dir) / (c.id + ".svg")).string());
  }
  d["files"] = {{"html", o.out}, {"svg", svg_paths}};
  d["charts"] = nlohmann::json::array();
  for (const auto& c : charts) d["charts"].push_back(c.id);
  std::vector<OutputFile> out_files{{o.out, render_report_html(d, charts), false}};
  for (std::size_t i = 0; i < svg_paths.size(); ++i) out_files.push_back({svg_paths[i], charts[i].svg, false});
  write_files_atomic(out_files);

  add_tables(r, p);
  r.notes.push_back("wrote " + o.out);
  for (const auto& s : svg_paths) r.notes.push_back("wrote " + s);
  const FitResult& f = p.recommended().fit;
  for (const auto& x : f.reasons) r.notes.push_back("does not fit: " + x);
  r.exit_code = f.fits ? 0 : 1;
  return r;
}

}  // namespace k3plan
