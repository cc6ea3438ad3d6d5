// `k3plan report`: the SVG chart builder (escaping, log ticks, long labels, grey readability) and
// the report's numbers against fit and cost.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <k3plan/catalogue.hpp>
#include <k3plan/commands.hpp>
#include <k3plan/error.hpp>
#include <k3plan/perf_cmd.hpp>
#include <k3plan/report.hpp>
#include <k3plan/report_html.hpp>
#include <k3plan/report_plan.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support.hpp"

using namespace k3plan;
namespace fs = std::filesystem;

namespace {

using k3plan_test::cat;

struct SvgText {
  double x, y, font;
  std::string anchor, text;
  bool bold, rotated;
};

// Every <text> of a rendered chart with its position, size, anchor and (unescaped) content.
std::vector<SvgText> texts_of(const std::string& svg) {
  std::vector<SvgText> out;
  static const std::regex re(R"~(<text x="([-\d.]+)" y="([-\d.]+)" font-size="([\d.]+)"([^>]*)>([^<]*)</text>)~");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    const std::string attrs = m[4];
    std::string anchor = "start";
    if (attrs.find(R"(text-anchor="middle")") != std::string::npos) anchor = "middle";
    if (attrs.find(R"(text-anchor="end")") != std::string::npos) anchor = "end";
    std::string t = m[5];
    for (const auto& [from, to] :
         std::vector<std::pair<std::string, std::string>>{{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}}) {
      for (std::size_t p = t.find(from); p != std::string::npos; p = t.find(from, p + to.size())) t.replace(p, from.size(), to);
    }
    out.push_back({std::stod(m[1]), std::stod(m[2]), std::stod(m[3]), anchor, t, attrs.find("bold") != std::string::npos,
                   attrs.find("rotate(") != std::string::npos});
  }
  return out;
}

double svg_attr(const std::string& svg, const std::string& name) {
  const std::regex re("<svg [^>]*? " + name + "=\"([\\d.]+)\"");
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, re));
  return std::stod(m[1]);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("k3plan-report-test-" + std::to_string(reinterpret_cast<std::uintptr_t>(this)) + "-" +
                                        std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// the chart builder

TEST_CASE("svg::escape makes any text safe in XML text and attributes", "[report][svg]") {
  CHECK(svg::escape(R"(a<b & "c" 'd'>)") == "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
  CHECK(svg::escape("8 \xC3\x97 b300") == "8 \xC3\x97 b300");      // valid UTF-8 stays
  CHECK(svg::escape("bad \xFF byte") == "bad ? byte");             // invalid UTF-8 does not
  CHECK(svg::escape(std::string("nul \x01 ctl")) == "nul ? ctl");  // XML 1.0 forbids control characters
  CHECK(svg::escape("\xE2\x82") == "??");                          // truncated sequence
}

TEST_CASE("chart titles, series names and labels are escaped", "[report][svg]") {
  svg::Chart ch;
  ch.id = "t\"1";
  ch.title = "<script>alert(1)</script> & co";
  ch.x.label = "x <unit>";
  ch.y.label = "y & more";
  svg::Series s;
  s.name = "series \"<b>\"";
  s.x = {1, 2, 3};
  s.y = {1, 4, 9};
  ch.series.push_back(s);
  ch.points.push_back({2, 4, "a<b>"});
  const std::string out = ch.render();
  CHECK(out.find("<script>") == std::string::npos);
  CHECK(out.find("&lt;script&gt;alert(1)&lt;/script&gt; &amp; co") != std::string::npos);
  CHECK(out.find("series &quot;&lt;b&gt;&quot;") != std::string::npos);
  CHECK(out.find("a&lt;b&gt;") != std::string::npos);
  CHECK(out.find("x &lt;unit&gt;") != std::string::npos);
  CHECK(out.find(R"(data-chart="t&quot;1")") != std::string::npos);
}

TEST_CASE("a log axis puts its ticks at powers of ten, evenly spaced", "[report][svg]") {
  svg::Chart ch;
  ch.id = "log";
  ch.x.log = true;
  svg::Series s;
  s.x = {1000, 1e4, 1e5, 1e6};
  s.y = {1, 2, 3, 4};
  ch.series.push_back(s);
  const auto ts = texts_of(ch.render());
  std::vector<double> xs;
  for (const char* label : {"1k", "10k", "100k", "1M"}) {
    bool found = false;
    for (const auto& t : ts)
      if (t.text == label && t.anchor == "middle") {
        xs.push_back(t.x);
        found = true;
      }
    INFO(label);
    CHECK(found);
  }
  REQUIRE(xs.size() == 4);
  CHECK(xs[1] - xs[0] == Approx(xs[2] - xs[1]).margin(0.2));
  CHECK(xs[3] - xs[2] == Approx(xs[2] - xs[1]).margin(0.2));
  CHECK(xs[1] > xs[0]);
  // context labels: k = 1,024 tokens
  CHECK(svg::context_label(131072) == "128k");
  CHECK(svg::context_label(1048576) == "1M");
  CHECK(svg::si_label(2.5e9) == "2.5B");
}

TEST_CASE("long model names are wrapped or truncated inside the chart width", "[report][svg]") {
  const std::string longname = "Qwen3-Next-80B-A3B-Instruct-FP8-Dynamic-With-An-Unreasonably-Long-Checkpoint-Name-For-Testing";
  svg::Chart ch;
  ch.id = "long";
  ch.width = 600;
  ch.title = longname + ": memory per GPU on every candidate " + longname;
  ch.subtitle = longname + " " + longname;
  ch.y.label = "memory per GPU, which is a long axis title that should not run off the chart at all";
  ch.y.unit = "GiB";
  for (int i = 0; i < 9; ++i) ch.categories.push_back(std::to_string(i + 1) + " x " + longname);
  for (int k = 0; k < 5; ++k) {
    svg::Series s;
    s.name = longname + " part " + std::to_string(k);
    s.kind = svg::SeriesKind::bar;
    s.y.assign(9, 10.0 + k);
    ch.series.push_back(s);
  }
  ch.bar_marks.assign(9, 80.0);
  ch.bar_mark_label = "capacity";
  const std::string out = ch.render();
  const double w = svg_attr(out, "width"), h = svg_attr(out, "height");
  CHECK(w == 600);
  const auto ts = texts_of(out);
  REQUIRE(ts.size() > 20);
  for (const auto& t : ts) {
    const double tw = svg::text_width(t.text, t.font, t.bold);
    const double x0 = t.anchor == "start" ? t.x : t.anchor == "middle" ? t.x - tw / 2 : t.x - tw;
    INFO(t.text);
    if (t.rotated) {  // the y-axis title runs vertically, centred on (x, y)
      CHECK(t.y - tw / 2 >= 0);
      CHECK(t.y + tw / 2 <= h);
      continue;
    }
    CHECK(x0 >= 0);
    CHECK(x0 + tw <= w);
  }
  // the helpers keep their promise
  for (double max_px : {40.0, 90.0, 300.0}) {
    for (const auto& line : svg::wrap_text(longname, max_px, 11, 3)) CHECK(svg::text_width(line, 11) <= max_px);
    CHECK(svg::text_width(svg::fit_text(longname, max_px, 12), 12) <= max_px);
  }
  CHECK(svg::wrap_text("8 x b300 (recommended)", 200, 11, 3).size() == 1);
  CHECK(svg::wrap_text("8 x b300 (recommended)", 110, 11, 3).size() == 2);
  CHECK(svg::fit_text("short", 100, 12) == "short");
}

TEST_CASE("series differ by dash pattern or hatch, not only by colour", "[report][svg]") {
  std::set<std::string> dashes, hatches, colours;
  for (int i = 0; i < svg::palette_size(); ++i) {
    dashes.insert(svg::style(i).dash);
    hatches.insert(svg::style(i).hatch);
    colours.insert(svg::style(i).colour);
  }
  CHECK(static_cast<int>(dashes.size()) == svg::palette_size());
  CHECK(static_cast<int>(hatches.size()) == svg::palette_size());
  CHECK(static_cast<int>(colours.size()) == svg::palette_size());

  svg::Chart ch;
  ch.id = "grey";
  for (int i = 0; i < 5; ++i) {
    svg::Series s;
    s.name = "line " + std::to_string(i);
    s.x = {1, 2, 3};
    s.y = {1.0 * i, 2.0 * i, 3.0 * i};
    ch.series.push_back(s);
  }
  const std::string out = ch.render();
  std::set<std::string> drawn;
  static const std::regex re(R"~(<polyline [^>]*?(stroke-dasharray="([^"]*)")?/>)~");
  int lines = 0;
  for (auto it = std::sregex_iterator(out.begin(), out.end(), re); it != std::sregex_iterator(); ++it) {
    drawn.insert((*it)[2].str());
    ++lines;
  }
  CHECK(lines == 5);
  CHECK(drawn.size() == 5);  // one solid, four distinct dash patterns
}

// ---------------------------------------------------------------------------------------------
// the report's numbers are fit's and cost's

TEST_CASE("report data equals fit and cost for Kimi K3 on B300", "[report]") {
  TempDir tmp;
  ReportOptions o;
  o.model = "kimi-k3";
  o.gpus = {"b300"};
  o.context = "128k";
  o.users = 32;
  o.out = (tmp.path / "plan.html").string();
  o.svg_dir = (tmp.path / "svg").string();
  const Report r = run_report(cat(), o);
  const auto& d = r.data;

  FitOptions fo;
  fo.model = "kimi-k3";
  fo.gpu = "b300";
  fo.context = "128k";
  fo.users = 32;
  const Report fit = run_fit(cat(), fo);
  const auto& a = d["answer"];
  CHECK(r.exit_code == fit.exit_code);
  CHECK(a["fits"] == fit.data["fits"]);
  CHECK(a["gpus"] == fit.data["gpus"]);
  CHECK(a["nodes"] == fit.data["nodes"]);
  for (const char* k : {"tp", "ep", "dp", "pp"}) CHECK(a["layout"][k] == fit.data["layout"][k]);
  CHECK(a["max_users"] == fit.data["max_users"]);
  CHECK(a["kv_cache_tokens"] == fit.data["kv_cache_tokens"]);
  CHECK(a["max_context_one_user"] == fit.data["max_context_one_user"]);
  CHECK(a["headroom"].get<double>() == Approx(fit.data["headroom"].get<double>()));
  CHECK(a["flags"]["sglang"] == fit.data["flags"]["sglang"]);
  for (const char* k : {"weights_bytes", "kv_pool_bytes", "state_pool_bytes", "reserved_bytes", "free_bytes", "capacity_bytes"})
    CHECK(a["per_gpu"][k].get<double>() == Approx(fit.data["per_gpu"][k].get<double>()));

  CostOptions co;
  co.model = "kimi-k3";
  co.gpu = "b300";
  co.gpus = a["gpus"].get<int>();
  const Report cost = run_cost(cat(), co);
  CHECK(a["usd_per_month"].get<double>() == Approx(cost.data["rental"][0]["usd_per_month"].get<double>()));
  CHECK(d["cost"]["rent_usd_per_month"].get<double>() == Approx(cost.data["rental"][0]["usd_per_month"].get<double>()));
  CHECK(d["cost"]["break_even_output_tokens_per_month"].get<double>() ==
        Approx(cost.data["break_even"]["output_tokens_per_month"].get<double>()));
  CHECK(d["cost"]["usd_per_gpu_hour"].get<double>() == Approx(cost.data["usd_per_gpu_hour"].get<double>()));

  // the KV curve is the budget's: at the requested context its total is the limiting stage's bytes
  // per sequence, and its max-users table agrees with fit
  const auto& kv = d["kv"];
  bool seen = false;
  for (std::size_t i = 0; i < kv["contexts"].size(); ++i)
    if (kv["contexts"][i] == d["context"]) {
      seen = true;
      CHECK(kv["total_bytes_per_user"][i].get<double>() == Approx(a["per_gpu"]["bytes_per_sequence"].get<double>()));
      CHECK(kv["max_users"][i]["max_users"] == a["max_users"]);
    }
  CHECK(seen);
  CHECK(kv["pool_bytes"].get<double>() ==
        Approx(a["per_gpu"]["kv_pool_bytes"].get<double>() + a["per_gpu"]["state_pool_bytes"].get<double>() +
               std::max(0.0, a["per_gpu"]["free_bytes"].get<double>())));

  // the files: the page and one SVG per chart, nothing half-written left behind
  REQUIRE(fs::exists(o.out));
  const std::string html = slurp(o.out);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("<script") == std::string::npos);
  for (const auto& id : d["charts"]) {
    CHECK(html.find("id=\"chart-" + id.get<std::string>() + "\"") != std::string::npos);
    CHECK(fs::exists(tmp.path / "svg" / (id.get<std::string>() + ".svg")));
  }
  for (const auto& e : fs::recursive_directory_iterator(tmp.path)) CHECK(e.path().extension() != ".tmp");
}

TEST_CASE("report recommends the cheapest GPU that fits, as fit ranks them", "[report]") {
  TempDir tmp;
  ReportOptions o;
  o.model = "llama-3.1-70b";
  o.context = "32k";
  o.users = 8;
  o.out = (tmp.path / "plan.html").string();
  const Report r = run_report(cat(), o);
  const auto& cands = r.data["candidates"];
  REQUIRE(cands.size() == cat().gpus().size());
  double cheapest = 1e300;
  std::string id;
  for (const auto& c : cands)
    if (c["fits"].get<bool>() && c["usd_per_hour"].get<double>() < cheapest) {
      cheapest = c["usd_per_hour"].get<double>();
      id = c["gpu"].get<std::string>();
    }
  CHECK(r.data["answer"]["gpu"] == id);
  CHECK(cands[0]["recommended"].get<bool>());
  FitOptions fo;
  fo.model = "llama-3.1-70b";
  fo.gpu = id;
  fo.context = "32k";
  fo.users = 8;
  const Report fit = run_fit(cat(), fo);
  CHECK(r.data["answer"]["gpus"] == fit.data["gpus"]);
  CHECK(r.data["answer"]["max_users"] == fit.data["max_users"]);
}

TEST_CASE("report on one H100 with -n 1 matches fit -n 1, and bad input is a usage error", "[report]") {
  TempDir tmp;
  ReportOptions o;
  o.model = "llama-3.1-8b";
  o.gpus = {"h100"};
  o.gpu_count = 1;
  o.context = "32k";
  o.users = 8;
  o.out = (tmp.path / "plan.html").string();
  const Report r = run_report(cat(), o);
  FitOptions fo;
  fo.model = "llama-3.1-8b";
  fo.gpu = "h100";
  fo.gpus = 1;
  fo.context = "32k";
  fo.users = 8;
  const Report fit = run_fit(cat(), fo);
  CHECK(r.data["answer"]["gpus"] == 1);
  CHECK(r.data["answer"]["max_users"] == fit.data["max_users"]);
  CHECK(r.data["answer"]["per_gpu"]["kv_tokens"] == fit.data["per_gpu"]["kv_tokens"]);

  // the speed chart's points are `k3plan perf` at the same deployment and concurrency
  REQUIRE(r.data["perf"]["available"].get<bool>());
  const auto& curve = r.data["perf"]["curves"][0];
  REQUIRE(curve["points"].size() >= 4);
  for (const auto& pt : curve["points"]) {
    PerfOptions po;
    po.model = "llama-3.1-8b";
    po.gpu = "h100";
    po.gpus = 1;
    po.concurrency = pt["concurrency"].get<int>();
    const Report perf = run_perf(cat(), po);
    INFO("concurrency " << po.concurrency);
    CHECK(pt["throughput_per_gpu"].get<double>() == Approx(perf.data["throughput_per_gpu"]["total"].get<double>()));
    CHECK(pt["interactivity_tok_s_user"].get<double>() == Approx(perf.data["interactivity_tok_s_user"].get<double>()));
    CHECK(pt["ttft_s"].get<double>() == Approx(perf.data["ttft_s"].get<double>()));
  }

  ReportOptions bad = o;
  bad.gpus = {"h1000"};
  CHECK_THROWS_AS(run_report(cat(), bad), InputError);
  bad = o;
  bad.users = 0;
  CHECK_THROWS_AS(run_report(cat(), bad), InputError);
  bad = o;
  bad.kv_dtype = "fp7";
  CHECK_THROWS_AS(run_report(cat(), bad), InputError);
  bad = o;
  bad.out = (tmp.path / "no-such-dir" / "plan.html").string();
  CHECK_THROWS_AS(run_report(cat(), bad), InputError);
  CHECK_FALSE(fs::exists(tmp.path / "no-such-dir"));
}

TEST_CASE("plan_report ranks the candidates and writes no file", "[report]") {
  TempDir tmp;
  ReportOptions o;
  o.model = "llama-3.1-70b";
  o.gpus = {"h100", "b200", "mi300x"};
  o.context = "32k";
  o.users = 8;
  o.out = (tmp.path / "plan.html").string();
  o.svg_dir = (tmp.path / "svg").string();
  const ReportPlan p = plan_report(cat(), o);
  CHECK_FALSE(fs::exists(o.out));
  CHECK_FALSE(fs::exists(o.svg_dir));
  CHECK_FALSE(p.data.contains("files"));

  // those that fit first, then by USD/hour; the recommendation is the first and the answer is its
  REQUIRE(p.candidates.size() == 3);
  CHECK(p.any_fit);
  for (std::size_t i = 1; i < p.candidates.size(); ++i) {
    const auto& a = p.candidates[i - 1];
    const auto& b = p.candidates[i];
    CHECK((a.fit.fits > b.fit.fits || (a.fit.fits == b.fit.fits && a.usd_per_hour <= b.usd_per_hour)));
  }
  const ReportCandidate& rec = p.recommended();
  CHECK(p.data["answer"]["gpu"] == rec.gpu->id);
  CHECK(p.data["answer"]["gpus"] == rec.fit.gpus);
  CHECK(p.data["answer"]["usd_per_month"].get<double>() == rec.usd_per_month);
  CHECK(rec.usd_per_hour == Approx(rec.fit.gpus * rec.usd_per_gpu_hour));
  CHECK(rec.usd_per_month == Approx(rec.usd_per_hour * p.hours_per_month));
  CHECK(p.data["assumptions"] == nlohmann::json(p.assumptions));
  CHECK(p.context == 32768);

  // the command writes what the plan computed, nothing else
  const Report r = run_report(cat(), o);
  for (const auto& [k, v] : p.data.items())
    if (k != "generated") CHECK(r.data[k] == v);
  CHECK(fs::exists(o.out));

  // -o is checked before anything is computed
  ReportOptions bad = o;
  bad.out.clear();
  CHECK_THROWS_AS(plan_report(cat(), bad), InputError);
}

// Table columns dropped for width are found by index: headers repeat ("pred" after each figure),
// and dropping by name once took the first "pred" (the throughput prediction of perf-validate's
// disaggregated table) instead of the one listed
TEST_CASE("a narrow table leaves out the listed column even when another column has the same header", "[render]") {
  k3plan::Table t{"t", {"name", "tput", "pred", "ttft", "pred"}, {{"a-long-row-name", "1111", "2222", "3333", "4444"}}, {}, {4}};
  const std::string narrow = k3plan::render_table(t, 30);
  CHECK(narrow.find("2222") != std::string::npos);
  CHECK(narrow.find("4444") == std::string::npos);
  CHECK(narrow.find("not shown at this width: pred") != std::string::npos);
  const std::string wide = k3plan::render_table(t, 0);
  CHECK(wide.find("4444") != std::string::npos);
}

TEST_CASE("a narrow table never cuts the words of a right-aligned column", "[render]") {
  // figures with units and phrases ("19 at 32k", "1.2 GiB") under a short header: the column
  // wraps at its spaces but keeps every word whole, however much the other columns must give
  k3plan::Table t{"t",
                  {"id", "n", "note"},
                  {{"kimi-k3", "19 users at 32k tokens", "a long explanation of the row that can wrap at any of its many spaces"},
                   {"qwen3", "1.25 GiB", "short"}},
                  {false, true, false},
                  {}};
  const std::string out = k3plan::render_table(t, 26);
  INFO(out);
  for (const char* word : {"users", "tokens", "1.25", "GiB", "32k"}) CHECK(out.find(word) != std::string::npos);
}
