// The `k3plan report` page and its charts, built from the report's JSON data only. The markup is
// XHTML-compatible (well-formed XML: every element closed, no named entities but XML's own), with
// inline CSS and SVG and no scripts, and prints on paper.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <k3plan/report_html.hpp>
#include <k3plan/units.hpp>
#include <limits>

namespace k3plan {

namespace {

using nlohmann::json;
using svg::escape;

const json& at(const json& d, const std::string& path) {
  static const json null_value = nullptr;
  const json* cur = &d;
  std::size_t i = 0;
  while (i <= path.size()) {
    const std::size_t j = std::min(path.find('.', i), path.size());
    const std::string key = path.substr(i, j - i);
    if (cur->is_array()) {
      const std::size_t k = static_cast<std::size_t>(std::stoul(key));
      if (k >= cur->size()) return null_value;
      cur = &(*cur)[k];
    } else if (cur->is_object() && cur->contains(key)) {
      cur = &(*cur)[key];
    } else {
      return null_value;
    }
    i = j + 1;
  }
  return *cur;
}

double dbl(const json& d, const std::string& path) {
  const json& v = at(d, path);
  return v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN();
}
std::string str(const json& d, const std::string& path) {
  const json& v = at(d, path);
  return v.is_string() ? v.get<std::string>() : std::string();
}

// 1234567.891 -> "1,234,567.9" at one decimal
std::string grouped(double v, int dp) {
  if (!std::isfinite(v)) return "-";
  std::string s = fmt::format("{:.{}f}", std::abs(v), dp);
  const std::size_t dot = s.find('.');
  std::string ip = s.substr(0, dot), fp = dot == std::string::npos ? "" : s.substr(dot);
  for (int i = static_cast<int>(ip.size()) - 3; i > 0; i -= 3) ip.insert(static_cast<std::size_t>(i), ",");
  const bool neg = v < 0 && s.find_first_not_of("0.,") != std::string::npos;
  return (neg ? "-" : "") + ip + fp;
}

// A number from the data, as the page shows it: value / scale at `dp` decimals, tagged with its
// JSON path so the browser test can compare it with the JSON output.
std::string N(const json& d, const std::string& path, int dp, double scale = 1) {
  const double v = dbl(d, path);
  if (!std::isfinite(v)) return "-";
  return fmt::format(R"~(<span class="num" data-k="{}" data-scale="{}" data-dp="{}">{}</span>)~", escape(path), scale, dp,
                     grouped(v / scale, dp));
}
// A string from the data, tagged the same way.
std::string S(const json& d, const std::string& path) {
  return fmt::format(R"~(<span data-s="{}">{}</span>)~", escape(path), escape(str(d, path)));
}

std::string bytes_label(double b) {
  if (b >= 1e12) return fmt::format("{:g} TB", b / 1e12);
  if (b >= 1e9) return fmt::format("{:g} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:g} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:g} kB", b / 1e3);
  return fmt::format("{:g} B", b);
}

std::string gpu_label(const json& c) { return fmt::format("{} \xC3\x97 {}", c["gpus"].get<int>(), c["gpu"].get<std::string>()); }

// --- charts ---------------------------------------------------------------------------------------

ReportChart budget_chart(const json& d) {
  svg::Chart ch;
  ch.id = "budget";
  const bool vllm = str(d, "engine") == "vllm";
  ch.title = fmt::format("{}: memory per GPU, by candidate GPU", str(d, "model_name"));
  ch.subtitle = fmt::format("{} users at {} tokens, {}; the stage with the least KV room; bars to scale, black line = capacity",
                            d["users"].get<std::int64_t>(), format_context(d["context"].get<std::int64_t>()), vllm ? "vLLM" : "SGLang");
  ch.y.label = "memory per GPU";
  ch.y.unit = "GiB";
  ch.y.min = 0;
  struct Part {
    const char* key;
    std::string name;
    int style;
  };
  const std::vector<Part> parts = {
      {"weights_bytes", "weights", 0},
      {"kv_pool_bytes", "KV cache pool", 2},
      {"state_pool_bytes", "state pool (linear attention)", 4},
      {"activation_bytes", "activation peak", 5},
      {"reserved_bytes", vllm ? "reserved (1 - gpu_memory_utilization)" : "reserve (1 - mem_fraction_static): activations, CUDA graphs", 1},
      {"overhead_bytes", vllm ? "non-torch (NCCL buffers)" : "CUDA context, NCCL", 3},
      {"free_bytes", "free (block rounding)", 6},
  };
  const json& cands = d["candidates"];
  for (const auto& c : cands) {
    std::string label = gpu_label(c);
    if (c["recommended"].get<bool>())
      label += cands.size() > 4 ? " (cheapest)" : " (recommended)";
    else if (!c["fits"].get<bool>())
      label += " (does not fit)";
    ch.categories.push_back(label);
    ch.category_bold.push_back(c["recommended"].get<bool>());
    ch.bar_marks.push_back(c["per_gpu"]["capacity_bytes"].get<double>() / kGiB);
  }
  ch.bar_mark_label = "capacity (memory the engine sees)";
  ch.bar_value_format = [](double v) { return fmt::format("{:.1f}", v); };
  for (const auto& p : parts) {
    svg::Series s;
    s.name = p.name;
    s.kind = svg::SeriesKind::bar;
    s.style = p.style;
    bool any = false;
    for (const auto& c : cands) {
      const double v = c["per_gpu"][p.key].get<double>() / kGiB;
      s.y.push_back(v);
      any = any || v > 0.005;
    }
    if (any) ch.series.push_back(s);
  }
  return {"budget", "Memory per GPU", "", ch.render()};
}

ReportChart kv_chart(const json& d) {
  const json& kv = d["kv"];
  svg::Chart ch;
  ch.id = "kv";
  ch.title = fmt::format("{}: KV cache and state per user against context", str(d, "model_name"));
  const int dpg = kv["dp_groups"].get<int>();
  ch.subtitle = fmt::format(
      "per GPU on {} (attention TP {}{}, KV {}); dashed lines: the pool shared by N users", gpu_label(d["answer"]),
      kv["attention_tp"].get<int>(),
      kv["stages"].get<int>() > 1 ? fmt::format(", pipeline stage {} of {}", kv["stage"].get<int>() + 1, kv["stages"].get<int>()) : "",
      kv["kv_dtype"].get<std::string>());
  ch.x.label = "context length per user";
  ch.x.unit = "tokens; k = 1,024";
  ch.x.log = true;
  ch.x.format = [](double v) { return svg::context_label(v); };
  ch.y.label = "bytes per user per GPU";
  ch.y.log = true;
  ch.y.format = bytes_label;
  std::vector<double> xs;
  for (const auto& c : kv["contexts"]) xs.push_back(c.get<double>());
  ch.x.min = xs.front();
  ch.x.max = xs.back();
  for (double t = 1024; t <= xs.back(); t *= 4) ch.x.ticks.push_back(t);
  if (ch.x.ticks.empty() || ch.x.ticks.back() < xs.back()) ch.x.ticks.push_back(xs.back());
  int idx = 1;
  double ymin = std::numeric_limits<double>::infinity();
  const auto& series = kv["series"];
  for (const auto& s : series) {
    svg::Series ls;
    ls.name = s["name"].get<std::string>();
    ls.x = xs;
    for (const auto& v : s["bytes_per_user"]) ls.y.push_back(v.get<double>());
    ls.style = idx++;
    bool any = false;
    for (double v : ls.y) any = any || v > 0;
    if (!any) continue;
    for (double v : ls.y)
      if (v > 0) ymin = std::min(ymin, v);
    if (series.size() > 1) ch.series.push_back(ls);
  }
  svg::Series tot;
  tot.name = series.size() > 1 ? "total per user" : "total per user (" + series[0]["name"].get<std::string>() + ")";
  tot.x = xs;
  for (const auto& v : kv["total_bytes_per_user"]) {
    tot.y.push_back(v.get<double>());
    if (v.get<double>() > 0) ymin = std::min(ymin, v.get<double>());
  }
  tot.style = 0;
  tot.markers = true;
  ch.series.insert(ch.series.begin(), tot);
  const double pool = kv["pool_bytes"].get<double>();
  double tmin = std::numeric_limits<double>::infinity();
  for (double v : tot.y)
    if (v > 0) tmin = std::min(tmin, v);
  if (pool > 0) {
    // user counts 1, 2, 5, 10, 20, 50, ... down to the smallest per-user total shown
    std::vector<double> ns;
    for (double dec = 1; dec <= 1e7; dec *= 10)
      for (double m : {1.0, 2.0, 5.0})
        if (pool / (dec * m) >= tmin / 1.5) ns.push_back(dec * m);
    while (ns.size() > 12) {  // too many lines: keep 1, 10, 100, ...
      std::vector<double> keep;
      for (double n : ns)
        if (std::abs(std::log10(n) - std::round(std::log10(n))) < 1e-9) keep.push_back(n);
      if (keep.size() == ns.size()) break;
      ns = keep;
    }
    int pri = 100;
    for (double n : ns) {
      svg::RefLine r;
      r.value = pool / n;
      const double users = n * dpg;
      r.label = n == 1 ? fmt::format("pool {:.1f} GiB: {} user{}", pool / kGiB, users, users == 1 ? "" : "s")
                       : fmt::format("{} users", grouped(users, 0));
      r.dash = n == 1 ? "" : "5 4";
      r.priority = pri--;
      ch.refs.push_back(r);
    }
    ymin = std::min(ymin, pool / (ns.empty() ? 1 : ns.back()));
  }
  ch.y.min = std::pow(10.0, std::floor(std::log10(std::max(ymin, 1.0)) + 1e-9));
  svg::RefLine req;
  req.vertical = true;
  req.value = d["context"].get<double>();
  req.label = "requested " + format_context(d["context"].get<std::int64_t>());
  req.dash = "2 3";
  ch.refs.push_back(req);
  return {"kv", "KV cache and state per user", "", ch.render()};
}

ReportChart cost_chart(const json& d) {
  const json& c = d["cost"];
  svg::Chart ch;
  ch.id = "cost";
  ch.title = fmt::format("{}: monthly cost, renting {} against the API", str(d, "model_name"), gpu_label(c));
  const double rent = c["rent_usd_per_month"].get<double>();
  const bool api = !c["api_usd_per_output_token"].is_null();
  const double per_tok = api ? c["api_usd_per_output_token"].get<double>() : 0;
  const double be = c["break_even_output_tokens_per_month"].is_number() ? c["break_even_output_tokens_per_month"].get<double>() : NAN;
  const double cap = c["output_tokens_per_month_at_sla"].is_number() ? c["output_tokens_per_month_at_sla"].get<double>() : NAN;
  ch.subtitle = api ? fmt::format("always on, {:g} h a month; API at {:.2f} USD per 1M output tokens{}", c["hours_per_month"].get<double>(),
                                  per_tok * 1e6, c["input_per_output"].get<double>() > 0 ? " including input" : "")
                    : fmt::format("always on, {:g} h a month; no API price in the catalogue for {}", c["hours_per_month"].get<double>(),
                                  str(d, "model"));
  double xmax = 0;
  if (std::isfinite(be)) xmax = std::max(xmax, be * 2.5);
  if (std::isfinite(cap)) xmax = std::max(xmax, cap * 1.25);
  if (!(xmax > 0)) xmax = 1e9;
  ch.x.label = "output tokens per month";
  ch.x.unit = "k = 10\u00B3, M = 10\u2076, B = 10\u2079";
  ch.x.min = 0;
  ch.x.max = xmax;
  ch.y.label = "cost per month";
  ch.y.unit = "USD";
  ch.y.min = 0;
  if (c["on_demand_quotes"].is_object() &&
      c["on_demand_quotes"]["usd_per_gpu_hour_max"].get<double>() > c["on_demand_quotes"]["usd_per_gpu_hour_min"].get<double>()) {
    svg::Series band;
    band.name =
        fmt::format("rent at on-demand quotes {:.2f}-{:.2f} USD/GPU-hour", c["on_demand_quotes"]["usd_per_gpu_hour_min"].get<double>(),
                    c["on_demand_quotes"]["usd_per_gpu_hour_max"].get<double>());
    band.kind = svg::SeriesKind::area;
    band.x = {0, xmax};
    band.y = {c["on_demand_quotes"]["rent_usd_per_month_max"].get<double>(), c["on_demand_quotes"]["rent_usd_per_month_max"].get<double>()};
    band.y0 = {c["on_demand_quotes"]["rent_usd_per_month_min"].get<double>(),
               c["on_demand_quotes"]["rent_usd_per_month_min"].get<double>()};
    band.style = 6;
    ch.series.push_back(band);
  }
  svg::Series r;
  r.name = fmt::format("rent {} at {:.2f} USD/GPU-hour", gpu_label(c), c["usd_per_gpu_hour"].get<double>());
  r.x = {0, xmax};
  r.y = {rent, rent};
  r.style = 0;
  ch.series.push_back(r);
  if (api) {
    svg::Series a;
    a.name = fmt::format("API ({})", str(d, "cost.api_usd_per_million.provider"));
    a.x = {0, xmax};
    a.y = {0, per_tok * xmax};
    a.style = 1;
    ch.series.push_back(a);
  }
  if (std::isfinite(be) && be <= xmax) ch.points.push_back({be, rent, fmt::format("break-even {} output tokens/month", svg::si_label(be))});
  if (std::isfinite(cap)) {
    svg::RefLine v;
    v.vertical = true;
    v.value = cap;
    v.label = fmt::format("capacity at the SLA: {}", svg::si_label(cap));
    ch.refs.push_back(v);
  }
  return {"cost", "Rent against API", "", ch.render()};
}

ReportChart pareto_chart(const json& d) {
  const json& p = d["perf"];
  svg::Chart ch;
  ch.id = "pareto";
  ch.title = fmt::format("{}: throughput per GPU against interactivity", str(d, "model_name"));
  ch.subtitle = fmt::format("ISL {} / OSL {} tokens, concurrency 1, 2, 4, ... per instance; modelled, not measured",
                            grouped(p["isl"].get<double>(), 0), grouped(p["osl"].get<double>(), 0));
  ch.x.label = "interactivity";
  ch.x.unit = "tok/s per user";
  ch.x.min = 0;
  ch.y.label = "throughput per GPU";
  ch.y.unit = "tok/s, input + output";
  ch.y.min = 0;
  int i = 0;
  for (const auto& c : p["curves"]) {
    svg::Series s;
    s.name = c["label"].get<std::string>() + (c["recommended"].get<bool>() ? " (recommended)" : "");
    for (const auto& pt : c["points"]) {
      s.x.push_back(pt["interactivity_tok_s_user"].get<double>());
      s.y.push_back(pt["throughput_per_gpu"].get<double>());
    }
    s.markers = true;
    s.style = i++;
    ch.series.push_back(s);
  }
  const json& sla = p["sla"];
  if (sla["min_interactivity_tok_s_user"].is_number()) {
    svg::Region reg;
    reg.x0 = sla["min_interactivity_tok_s_user"].get<double>();
    reg.x1 = 1e15;
    reg.y0 = -1e15;
    reg.y1 = 1e15;
    reg.label = fmt::format("SLA ({}): ITL {:g} ms or less{}", sla["workload"].get<std::string>(), sla["itl_ms"].get<double>(),
                            sla["ttft_ms"].is_number() ? fmt::format(", TTFT {:g} s or less", sla["ttft_ms"].get<double>() / 1000) : "");
    ch.regions.push_back(reg);
    ch.x.min = 0;
    double xmax = reg.x0 * 1.1;
    for (const auto& s : ch.series)
      for (double v : s.x) xmax = std::max(xmax, v);
    ch.x.max = xmax * 1.05;
  }
  if (p["operating_point"].is_object()) {
    const json& op = p["operating_point"];
    ch.points.push_back(
        {op["interactivity_tok_s_user"].get<double>(), op["throughput_per_gpu"].get<double>(),
         fmt::format("{} users: {} tok/s per GPU", op["concurrency"].get<int>(), grouped(op["throughput_per_gpu"].get<double>(), 0))});
  }
  return {"pareto", "Throughput against interactivity", "", ch.render()};
}

// --- page -----------------------------------------------------------------------------------------

const char* kCss = R"~(
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { font-family: "DejaVu Sans", Verdana, sans-serif; color: #1b1b1b; background: #fff; max-width: 1000px; margin: 0 auto; padding: 16px 24px 40px; line-height: 1.45; font-size: 14px; }
h1 { font-size: 22px; margin: 0 0 2px; }
h2 { font-size: 18px; border-bottom: 2px solid #ddd; padding-bottom: 3px; margin: 28px 0 10px; }
h3 { font-size: 15px; margin: 16px 0 6px; }
p.sub { color: #555; margin: 0 0 12px; }
.answer { border: 2px solid #0a6b2f; border-radius: 6px; padding: 4px 16px 12px; background: #f3faf5; }
.answer.nofit { border-color: #a11; background: #fdf3f3; }
.answer h2 { border: 0; margin-top: 10px; }
.verdict { font-size: 16px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 4px; color: #fff; background: #0a6b2f; font-weight: bold; }
.nofit .badge { background: #a11; }
.kpis { display: grid; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); gap: 8px 14px; margin: 12px 0; }
.kpi { background: #fff; border: 1px solid #cfd8d2; border-radius: 4px; padding: 6px 10px; }
.kpi .v { font-size: 19px; font-weight: bold; }
.kpi .l { color: #555; font-size: 12px; }
table { border-collapse: collapse; width: 100%; font-size: 12.5px; margin: 6px 0; }
table.narrow { width: auto; min-width: 50%; }
td.date { white-space: nowrap; }
.flag { color: #8a5a00; font-size: 11.5px; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 6px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.r, th.r { text-align: right; white-space: nowrap; }
tr.rec td { font-weight: bold; background: #f3faf5; }
pre { background: #f6f6f6; border: 1px solid #ddd; padding: 8px 10px; white-space: pre-wrap; overflow-wrap: anywhere; font-size: 12px; font-family: "DejaVu Sans Mono", monospace; user-select: all; }
code { font-family: "DejaVu Sans Mono", monospace; font-size: 12px; }
figure.chart { margin: 12px 0; break-inside: avoid; page-break-inside: avoid; }
figure.chart svg { max-width: 100%; height: auto; display: block; border: 1px solid #e2e2e2; }
figcaption { color: #444; font-size: 12.5px; margin-top: 4px; }
ul.assumptions li, td.src { font-size: 12.5px; }
.muted { color: #666; }
footer { margin-top: 30px; color: #666; font-size: 12px; border-top: 1px solid #ddd; padding-top: 6px; }
@media print {
  body { max-width: none; padding: 0; font-size: 10.5pt; }
  h2 { break-after: avoid; page-break-after: avoid; }
  .answer, table, pre { break-inside: avoid; page-break-inside: avoid; }
  figure.chart svg { border: 0; }
}
)~";

std::string figure(const std::vector<ReportChart>& charts, const std::string& id, const std::string& caption) {
  for (const auto& c : charts)
    if (c.id == id)
      return fmt::format(R"~(<figure class="chart" id="chart-{}">{}<figcaption>{}</figcaption></figure>)~", escape(id), c.svg, caption);
  return "";
}

std::string kpi(const std::string& value, const std::string& label) {
  return fmt::format(R"~(<div class="kpi"><div class="v">{}</div><div class="l">{}</div></div>)~", value, label);
}

std::string layout_html(const json& d, const std::string& base) {
  const json& l = at(d, base);
  std::string s = "TP" + N(d, base + ".tp", 0);
  if (l["ep"].get<int>() > 1) s += " EP" + N(d, base + ".ep", 0);
  if (l["dp"].get<int>() > 1) s += " DP" + N(d, base + ".dp", 0);
  if (l["pp"].get<int>() > 1) s += " PP" + N(d, base + ".pp", 0);
  if (l.value("dcp", 1) > 1) s += " DCP" + N(d, base + ".dcp", 0);
  if (l["dp_attention"].get<bool>()) s += " DP-attention";
  return s;
}

}  // namespace

std::vector<ReportChart> report_charts(const json& d) {
  std::vector<ReportChart> out;
  out.push_back(budget_chart(d));
  out.push_back(kv_chart(d));
  out.push_back(cost_chart(d));
  if (d.contains("perf") && d["perf"]["available"].get<bool>()) out.push_back(pareto_chart(d));
  return out;
}

std::string render_report_html(const json& d, const std::vector<ReportChart>& charts) {
  const json& a = d["answer"];
  const bool fits = a["fits"].get<bool>();
  const std::string model_path = str(d, "model_path");
  const bool one_user = d["users"].get<std::int64_t>() == 1;
  std::string h;
  h += "<!DOCTYPE html>\n";
  h += R"~(<html xmlns="http://www.w3.org/1999/xhtml" lang="en">)~";
  h += "\n<head>\n<meta charset=\"utf-8\"/>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n";
  h += fmt::format("<title>k3plan: {} on {}</title>\n", escape(str(d, "model_name")), escape(gpu_label(a)));
  h += fmt::format("<style>{}</style>\n</head>\n<body>\n", kCss);

  // header
  h += fmt::format(
      R"~(<header><h1>{} serving plan</h1><p class="sub">{} ({}): {} user{} at {} tokens ({}), {}, KV cache {}. Generated {} by k3plan {}.</p></header>)~",
      escape(str(d, "model_name")), S(d, "model_name"), S(d, "model"), N(d, "users", 0), one_user ? "" : "s",
      escape(format_context(d["context"].get<std::int64_t>())), N(d, "context", 0), S(d, "engine"), S(d, "kv_dtype"), S(d, "generated"),
      S(d, "version"));
  h += "\n";

  // --- the answer ---
  h += fmt::format(R"~(<section id="answer" class="answer {}"><h2>Answer</h2>)~", fits ? "ok" : "nofit");
  if (fits) {
    h += fmt::format(
        R"~(<p class="verdict"><span class="badge">FITS</span> Rent <b>{} &#215; {}</b> ({}), {} node{}, layout <b>{}</b> with {}{}.</p>)~",
        N(d, "answer.gpus", 0), S(d, "answer.gpu"), S(d, "answer.gpu_name"), N(d, "answer.nodes", 0), a["nodes"].get<int>() > 1 ? "s" : "",
        layout_html(d, "answer.layout"), S(d, "answer.engine"),
        d["candidates"].size() == 1 ? ": the smallest engine-valid deployment of this GPU that holds the load"
                                    : fmt::format(": the cheapest of {} candidate GPUs that holds the load", d["candidates"].size()));
  } else {
    h += fmt::format(
        R"~(<p class="verdict"><span class="badge">DOES NOT FIT</span> No candidate holds the load; closest: <b>{} &#215; {}</b>, layout {}.</p><ul>)~",
        N(d, "answer.gpus", 0), S(d, "answer.gpu"), layout_html(d, "answer.layout"));
    for (std::size_t i = 0; i < a["reasons"].size(); ++i) h += "<li>" + S(d, fmt::format("answer.reasons.{}", i)) + "</li>";
    h += "</ul>";
  }
  h += R"~(<div class="kpis">)~";
  h += kpi(N(d, "answer.usd_per_month", 0) + " USD",
           fmt::format("a month: {} USD/GPU-hour &#215; {} GPU{} &#215; {} h", N(d, "answer.usd_per_gpu_hour", 2), N(d, "answer.gpus", 0),
                       a["gpus"].get<int>() == 1 ? "" : "s", N(d, "answer.hours_per_month", 0)));
  h += kpi(N(d, "answer.max_users", 0) + " users",
           fmt::format("at most, at {} tokens each ({} requested)", N(d, "context", 0), N(d, "users", 0)));
  if (a["headroom"].get<double>() >= 0)
    h += kpi(N(d, "answer.headroom", 1, 0.01) + "%", fmt::format("headroom: KV/state pool left free with {} users", N(d, "users", 0)));
  h += kpi(N(d, "answer.kv_cache_tokens", 0) + " tokens", "KV cache per instance");
  h += kpi(N(d, "answer.max_context_one_user", 0) + " tokens", "longest context for one user");
  h += kpi(N(d, "answer.per_gpu.weights_bytes", 2, kGiB) + " GiB",
           fmt::format("weights per GPU, of {} GiB", N(d, "answer.per_gpu.capacity_bytes", 2, kGiB)));
  if (d["perf"]["available"].get<bool>() && d["perf"]["operating_point"].is_object())
    h += kpi(N(d, "perf.operating_point.throughput_per_gpu", 0) + " tok/s per GPU",
             fmt::format("at {} tok/s per user, {} users with {}-in / {}-out requests (modelled)",
                         N(d, "perf.operating_point.interactivity_tok_s_user", 1), N(d, "perf.operating_point.concurrency", 0),
                         N(d, "perf.isl", 0), N(d, "perf.osl", 0)));
  if (d["cost"]["break_even_output_tokens_per_month"].is_number())
    h += kpi(N(d, "cost.break_even_output_tokens_per_month", 0, 1e6) + " million",
             "output tokens a month where renting starts to beat the API");
  h += "</div>";
  h += "<p>Rent or API: " + S(d, "cost.verdict") + "</p>";
  h += "<h3>Engine flags</h3>";
  h += fmt::format("<pre>python3 -m sglang.launch_server --model-path {} {}\n\nvllm serve {} {}</pre>", escape(model_path),
                   S(d, "answer.flags.sglang"), escape(model_path), S(d, "answer.flags.vllm"));
  if (!a["warnings"].empty()) {
    h += "<ul>";
    for (std::size_t i = 0; i < a["warnings"].size(); ++i) h += "<li>warning: " + S(d, fmt::format("answer.warnings.{}", i)) + "</li>";
    h += "</ul>";
  }
  h += "<h3>What was assumed</h3><ul class=\"assumptions\">";
  h += fmt::format(
      "<li>Load: {} concurrent user{} at {} tokens each; KV cache dtype {}; engine {} with its default memory settings (memory fraction "
      "{}).</li>",
      N(d, "users", 0), one_user ? "" : "s", N(d, "context", 0), S(d, "kv_dtype"), S(d, "engine"), N(d, "answer.memory_fraction", 3));
  h += fmt::format("<li>Rented always on: {} hours a month at {} USD per GPU-hour ({}).</li>", N(d, "answer.hours_per_month", 0),
                   N(d, "answer.usd_per_gpu_hour", 2),
                   str(d, "cost.rate_source") == "--rate" ? "--rate" : "the catalogue's on-demand price, see Sources");
  for (std::size_t i = 0; i < a["assumptions"].size(); ++i) h += "<li>" + S(d, fmt::format("answer.assumptions.{}", i)) + "</li>";
  h += fmt::format(
      R"~(<li>Model geometry, GPU figures, prices and speed-model factors: {} further entries under <a href="#assumptions">Assumptions</a>.</li>)~",
      d["assumptions"].size());
  h += "</ul></section>\n";

  // --- budget ---
  h += R"~(<section id="budget"><h2>Memory per GPU</h2>)~";
  h += figure(charts, "budget",
              "Each bar is one GPU of the candidate deployment (the pipeline stage with the least KV room), split the way the engine "
              "accounts for it at start-up; "
              "the black line is the memory the engine sees. A bar above its line does not fit.");
  h += "<table><thead><tr><th>GPU</th><th class=\"r\">GPUs</th><th class=\"r\">nodes</th><th>layout</th><th>fits</th><th class=\"r\">max "
       "users</th>"
       "<th class=\"r\">weights GiB/GPU</th><th class=\"r\">KV pool GiB/GPU</th><th class=\"r\">capacity GiB</th><th "
       "class=\"r\">USD/hour</th><th class=\"r\">USD/month</th></tr></thead><tbody>";
  for (std::size_t i = 0; i < d["candidates"].size(); ++i) {
    const std::string b = fmt::format("candidates.{}", i);
    const json& c = d["candidates"][i];
    h += fmt::format(
        R"~(<tr{}><td>{}</td><td class="r">{}</td><td class="r">{}</td><td>{}</td><td>{}</td><td class="r">{}</td><td class="r">{}</td><td class="r">{}</td><td class="r">{}</td><td class="r">{}</td><td class="r">{}</td></tr>)~",
        c["recommended"].get<bool>() ? R"~( class="rec")~" : "", S(d, b + ".gpu"), N(d, b + ".gpus", 0), N(d, b + ".nodes", 0),
        layout_html(d, b + ".layout"), c["fits"].get<bool>() ? "yes" : "no", N(d, b + ".max_users", 0),
        N(d, b + ".per_gpu.weights_bytes", 2, kGiB), N(d, b + ".per_gpu.kv_pool_bytes", 2, kGiB),
        N(d, b + ".per_gpu.capacity_bytes", 2, kGiB), N(d, b + ".usd_per_hour", 2), N(d, b + ".usd_per_month", 0));
  }
  h += "</tbody></table><p class=\"muted\">GiB = 2<sup>30</sup> bytes. Max users at the requested context; candidates that fit come first, "
       "cheapest first.</p></section>\n";

  // --- KV ---
  const json& kv = d["kv"];
  h += R"~(<section id="kv"><h2>KV cache and state per user</h2>)~";
  h += figure(
      charts, "kv",
      fmt::format("Bytes one user holds on one GPU against its context length (both axes logarithmic), per layer kind and in total. The "
                  "solid horizontal line is the "
                  "KV/state pool of one GPU ({} GiB); each dashed line is the pool shared by that many users, so where the total crosses a "
                  "line is the longest "
                  "context that many users can have{}.",
                  N(d, "kv.pool_bytes", 2, kGiB), kv["dp_groups"].get<int>() > 1 ? " (counts include every data-parallel group)" : ""));
  h += "<table class=\"narrow\"><thead><tr><th class=\"r\">context (tokens)</th><th class=\"r\">per user GiB/GPU</th><th class=\"r\">max "
       "users</th></tr></thead><tbody>";
  for (std::size_t i = 0; i < kv["max_users"].size(); ++i) {
    const std::string b = fmt::format("kv.max_users.{}", i);
    h += fmt::format(R"~(<tr><td class="r">{}</td><td class="r">{}</td><td class="r">{}</td></tr>)~", N(d, b + ".context", 0),
                     N(d, b + ".bytes_per_user", 3, kGiB), N(d, b + ".max_users", 0));
  }
  h += fmt::format(
      "</tbody></table><p class=\"muted\">{} B per token per GPU growing with context{}; max users from the same engine accounting as "
      "<code>k3plan fit</code>.</p></section>\n",
      N(d, "kv.kv_bytes_per_token", 0),
      kv["state_bytes_per_sequence"].get<double>() > 0
          ? ", plus " + N(d, "kv.state_bytes_per_sequence", 1, kMiB) + " MiB of fixed state per sequence"
          : "");

  // --- cost ---
  const json& c = d["cost"];
  h += R"~(<section id="cost"><h2>Rent against API</h2>)~";
  h += figure(charts, "cost",
              "Monthly cost against monthly output tokens: the rented cluster costs the same however busy it is; the API bills per token. "
              "Renting pays beyond the break-even, and only up to what the cluster can serve.");
  h += "<table class=\"narrow\"><tbody>";
  h += fmt::format(R"~(<tr><td>rent, {} GPU{} always on</td><td class="r">{} USD/month</td></tr>)~", N(d, "cost.gpus", 0),
                   c["gpus"].get<int>() == 1 ? "" : "s", N(d, "cost.rent_usd_per_month", 0));
  if (c["on_demand_quotes"].is_object() &&
      c["on_demand_quotes"]["usd_per_gpu_hour_max"].get<double>() > c["on_demand_quotes"]["usd_per_gpu_hour_min"].get<double>())
    h += fmt::format(R"~(<tr><td>rent at the on-demand quotes ({} to {} USD/GPU-hour)</td><td class="r">{} to {} USD/month</td></tr>)~",
                     N(d, "cost.on_demand_quotes.usd_per_gpu_hour_min", 2), N(d, "cost.on_demand_quotes.usd_per_gpu_hour_max", 2),
                     N(d, "cost.on_demand_quotes.rent_usd_per_month_min", 0), N(d, "cost.on_demand_quotes.rent_usd_per_month_max", 0));
  if (c["api_usd_per_million"].is_object()) {
    h += fmt::format(R"~(<tr><td>API ({}, {}): output / input / cached input</td><td class="r">{} / {} / {} USD per 1M tokens</td></tr>)~",
                     S(d, "cost.api_usd_per_million.provider"), S(d, "cost.api_usd_per_million.date"),
                     N(d, "cost.api_usd_per_million.output", 2), N(d, "cost.api_usd_per_million.input_cache_miss", 2),
                     N(d, "cost.api_usd_per_million.input_cache_hit", 3));
    h += fmt::format(R"~(<tr><td>workload: input tokens per output token, share of input cached</td><td class="r">{}, {}%</td></tr>)~",
                     N(d, "cost.input_per_output", 2), N(d, "cost.cache_hit", 1, 0.01));
  } else {
    h += fmt::format("<tr><td>API</td><td class=\"r\">no price in the catalogue for {}</td></tr>", S(d, "model"));
  }
  if (c["break_even_output_tokens_per_month"].is_number())
    h += fmt::format(R"~(<tr><td>break-even</td><td class="r">{} million output tokens a month ({} million a day)</td></tr>)~",
                     N(d, "cost.break_even_output_tokens_per_month", 0, 1e6), N(d, "cost.break_even_output_tokens_per_day", 1, 1e6));
  if (c["output_tokens_per_month_at_sla"].is_number())
    h += fmt::format(
        R"~(<tr><td>capacity at the service level (modelled)</td><td class="r">{} million output tokens a month; rent is {} USD per million output tokens when full</td></tr>)~",
        N(d, "cost.output_tokens_per_month_at_sla", 0, 1e6), N(d, "cost.rent_usd_per_million_output_at_sla", 2));
  h += "</tbody></table><p>" + S(d, "cost.verdict") + "</p></section>\n";

  // --- speed ---
  const json& p = d["perf"];
  h += R"~(<section id="pareto"><h2>Throughput against interactivity</h2>)~";
  if (p["available"].get<bool>()) {
    h += figure(charts, "pareto",
                fmt::format("Modelled by <code>k3plan perf</code>: each point is one concurrency (1, 2, 4, ... users per instance), moving "
                            "right to left as the batch grows. "
                            "The shaded region meets the service level's inter-token latency ({} ms or less, {} tok/s per user or more); "
                            "the marked point is the "
                            "highest throughput per GPU that also meets its time to first token.",
                            N(d, "perf.sla.itl_ms", 0), N(d, "perf.sla.min_interactivity_tok_s_user", 1)));
    const json& rc = p["curves"][0];
    h += fmt::format("<h3>{}</h3>", S(d, "perf.curves.0.label"));
    h += "<table class=\"narrow\"><thead><tr><th class=\"r\">users</th><th class=\"r\">tok/s per user</th><th class=\"r\">tok/s per "
         "GPU</th><th class=\"r\">output tok/s per GPU</th>"
         "<th class=\"r\">TTFT s</th><th class=\"r\">TPOT ms</th><th>meets SLA</th></tr></thead><tbody>";
    for (std::size_t i = 0; i < rc["points"].size(); ++i) {
      const std::string b = fmt::format("perf.curves.0.points.{}", i);
      const bool op = rc["operating_point"].is_number() && rc["operating_point"].get<std::size_t>() == i;
      h += fmt::format(
          R"~(<tr{}><td class="r">{}</td><td class="r">{}</td><td class="r">{}</td><td class="r">{}</td><td class="r">{}</td><td class="r">{}</td><td>{}</td></tr>)~",
          op ? R"~( class="rec")~" : "", N(d, b + ".concurrency", 0), N(d, b + ".interactivity_tok_s_user", 1),
          N(d, b + ".throughput_per_gpu", 0), N(d, b + ".output_throughput_per_gpu", 0), N(d, b + ".ttft_s", 3), N(d, b + ".tpot_ms", 2),
          rc["points"][i]["meets_sla"].get<bool>() ? "yes" : "no");
    }
    h += "</tbody></table></section>\n";
  } else {
    h += "<p>No speed estimate for this deployment:</p><ul>";
    for (std::size_t i = 0; i < p["reasons"].size(); ++i) h += "<li>" + S(d, fmt::format("perf.reasons.{}", i)) + "</li>";
    h += "</ul></section>\n";
  }

  // --- launch ---
  h += R"~(<section id="launch"><h2>Launch commands</h2>)~";
  if (d["launch"].is_object()) {
    h += fmt::format(
        "<p>One script for every node; run it on node <i>r</i> as <code>bash run.sh r</code>. Ready when the server prints <i>{}</i>; "
        "health check: "
        "<code>{}</code>.</p>",
        S(d, "launch.ready_line"), S(d, "launch.health_check"));
    h += "<pre>" + S(d, "launch.script") + "</pre>";
  } else {
    h += "<p>None: <code>k3plan launch</code> emits commands only for deployments that fit.</p>";
  }
  h += "</section>\n";

  // --- sources ---
  h +=
      R"~(<section id="sources"><h2>Sources</h2><table><thead><tr><th>figure</th><th>value</th><th>date</th><th>source</th></tr></thead><tbody>)~";
  for (std::size_t i = 0; i < d["sources"].size(); ++i) {
    const std::string b = fmt::format("sources.{}", i);
    h += fmt::format(R"~(<tr><td>{}</td><td>{}{}</td><td class="date">{}</td><td class="src">{}</td></tr>)~", S(d, b + ".what"),
                     S(d, b + ".value"),
                     d["sources"][i]["assumed"].get<bool>() ? R"~( <span class="flag">assumed / unverified</span>)~" : "",
                     S(d, b + ".date"), S(d, b + ".source"));
  }
  h += "</tbody></table></section>\n";
  h +=
      R"~(<section id="assumptions"><h2>Assumptions</h2><p>Every figure the plan rests on that is not a published one, and how the speed model was calibrated:</p><ul class="assumptions">)~";
  for (std::size_t i = 0; i < d["assumptions"].size(); ++i) h += "<li>" + S(d, fmt::format("assumptions.{}", i)) + "</li>";
  h += "</ul></section>\n";
  h += fmt::format(
      "<footer>k3plan {}: every figure above comes from the catalogue and calculators named in Sources; GB = 10<sup>9</sup> B, GiB = "
      "2<sup>30</sup> B, "
      "k = 1,024 and M = 1,048,576 tokens (contexts). The same numbers: <code>k3plan report ... --format json</code>.</footer>\n",
      S(d, "version"));
  h += "</body>\n</html>\n";
  return h;
}

}  // namespace k3plan
