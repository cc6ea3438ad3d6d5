#pragma once
// `k3plan report`: one self-contained HTML page (inline CSS and SVG, no scripts, printable) with
// the plan and its charts, and the small SVG chart builder behind it (also used for `--svg DIR`).
//
// The page is rendered from the report's JSON data only (Report::data, what `--format json`
// prints), so every number on the page is one the JSON carries: numbers are written as
// <span data-k="json.path" data-scale="S">text</span>, where text is value / S rounded for
// display (the browser test in tests/report checks each against the JSON).
//
// Charts are readable in grey: every series differs by dash pattern (lines) or hatching (bars,
// areas), not only by colour. Text widths are estimated from DejaVu Sans advance widths (the font
// the page asks for first; the common fallbacks are narrower) so labels are wrapped, truncated
// and de-overlapped before they are drawn, and every text stays inside its chart's box.
#include <cstdint>
#include <functional>
#include <k3plan/catalogue.hpp>
#include <k3plan/report.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace k3plan {

namespace svg {

// Escapes & < > " ' for XML text and attribute values; drops control characters XML 1.0 forbids
// and invalid UTF-8 bytes (replaced by '?').
std::string escape(std::string_view s);

// Estimated rendered width in px of `s` at `font_px` (DejaVu Sans advance widths; non-ASCII
// characters count as a full em).
double text_width(std::string_view s, double font_px, bool bold = false);
// `s` cut to at most `max_px` wide with a trailing ellipsis when cut.
std::string fit_text(std::string_view s, double max_px, double font_px, bool bold = false);
// `s` broken at spaces, '-' and '/' into at most `max_lines` lines each at most `max_px` wide;
// the last line is truncated with an ellipsis when the text does not fit.
std::vector<std::string> wrap_text(std::string_view s, double max_px, double font_px, int max_lines, bool bold = false);

// Compact tick labels: 1.5k, 20M, 3B (SI), or 1k / 128k / 1M for context lengths (k = 1,024).
std::string si_label(double v);
std::string context_label(double tokens);

struct Style {
  std::string colour;  // stroke / fill colour
  std::string dash;    // stroke-dasharray ("" = solid)
  std::string hatch;   // hatch name: none, diag, back, cross, horiz, vert, dots, grid
  std::string marker;  // circle, square, triangle, diamond, cross, none
};
// The palette: 8 styles, each with its own colour (Okabe-Ito, varied lightness), dash pattern and
// hatch; style(i) wraps around.
const Style& style(int i);
int palette_size();

struct Axis {
  std::string label;  // "context length"
  std::string unit;   // "tokens": drawn as "context length (tokens)"
  bool log = false;
  std::optional<double> min, max;
  std::vector<double> ticks;                  // explicit tick values (empty = chosen automatically)
  std::function<std::string(double)> format;  // tick labels (default: si_label)
  std::string title() const { return unit.empty() ? label : label + " (" + unit + ")"; }
};

enum class SeriesKind { line, area, bar };

struct Series {
  std::string name;
  SeriesKind kind = SeriesKind::line;
  std::vector<double> x, y;  // line / area: points (x ascending); bar: y per category, stacked
  std::vector<double> y0;    // area: lower edge per point (empty = the axis floor)
  int style = -1;            // palette index (-1 = the series' position)
  bool markers = false;      // line: a marker shape at every point
  bool label_end = false;    // line: the name written at the right of the last point
};

struct RefLine {
  bool vertical = false;
  double value = 0;
  std::string label;
  std::string dash = "6 3";
  int priority = 0;  // labels that do not fit are dropped lowest priority first
};

struct Point {
  double x = 0, y = 0;
  std::string label;
};

struct Region {  // shaded, hatched rectangle in data coordinates (clipped to the plot)
  double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
  std::string label;
};

class Chart {
 public:
  std::string id;  // unique on the page: prefixes the pattern ids
  std::string title;
  std::string subtitle;
  double width = 940;
  double plot_height = 260;  // the plot area; the box grows for title, axis labels and legend
  Axis x, y;
  std::vector<std::string> categories;  // bar charts: one label per bar (wrapped, then truncated)
  std::vector<bool> category_bold;      // emphasised category labels (the recommendation)
  std::vector<Series> series;
  std::vector<RefLine> refs;
  std::vector<Point> points;
  std::vector<Region> regions;
  std::vector<double> bar_marks;  // one per category (NaN = none): a thick line across the bar
  std::string bar_mark_label;     // legend entry for bar_marks
  // bar charts: the value written inside each segment tall and wide enough to hold it
  std::function<std::string(double)> bar_value_format;

  // The standalone SVG element (with xmlns, width, height and viewBox).
  std::string render() const;
};

}  // namespace svg

// `k3plan cost --svg`: monthly cost against monthly output tokens, rent against the API, the
// break-even marked (a standalone SVG drawn with svg::Chart).
std::string cost_chart_svg(double rent_usd_per_month, double api_usd_per_output_token, const std::string& title);

struct ReportChart {
  std::string id;       // file stem for --svg, element id on the page
  std::string heading;  // section heading
  std::string caption;  // how to read it
  std::string svg;
};

// The page from the report data and the rendered charts (pure: no I/O).
std::string render_report_html(const nlohmann::json& data, const std::vector<ReportChart>& charts);

// The charts of a report, built from its data (pure: no I/O).
std::vector<ReportChart> report_charts(const nlohmann::json& data);

}  // namespace k3plan
