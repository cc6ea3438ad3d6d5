// A small SVG chart builder: axes with ticks, labels and units, log axes, legends, lines, areas,
// (stacked) bars, reference lines, marked points and shaded regions. Every series carries a dash
// pattern or a hatch besides its colour so the chart reads in grey; text is measured (DejaVu Sans
// advance widths), wrapped, truncated and moved apart so labels neither overlap nor leave the box.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <k3plan/report_html.hpp>
#include <limits>
#include <utility>

namespace k3plan::svg {

namespace {

// Advance widths of ASCII 32..126 in 1/1000 em: DejaVu Sans Book and Bold (read from the TTFs'
// hmtx tables). Arial/Liberation, the usual fallbacks, are narrower, so estimates stay safe.
constexpr std::array<short, 95> kBook = {318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361,  318, 337, 636, 636, 636,
                                         636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684, 686, 698, 770, 632,
                                         575, 775, 752, 295, 295, 656, 557, 863, 748, 787, 603, 787, 695, 635,  611, 732, 684, 989, 685,
                                         611, 685, 390, 337, 390, 838, 500, 500, 613, 635, 550, 635, 615, 352,  635, 634, 278, 278, 579,
                                         278, 974, 634, 612, 635, 635, 411, 521, 392, 634, 592, 818, 592, 592,  525, 636, 337, 636, 838};
constexpr std::array<short, 95> kBold = {348, 456,  521, 838, 696, 1002, 872, 306, 457, 457, 523, 838, 380, 415,  380, 365, 696, 696,  696,
                                         696, 696,  696, 696, 696, 696,  696, 400, 400, 838, 838, 838, 580, 1000, 774, 762, 734, 830,  683,
                                         683, 821,  837, 372, 372, 775,  637, 995, 837, 850, 733, 850, 770, 720,  682, 812, 774, 1103, 771,
                                         724, 725,  457, 365, 457, 838,  500, 500, 675, 716, 593, 716, 678, 435,  716, 712, 343, 343,  665,
                                         343, 1042, 712, 687, 716, 716,  493, 595, 478, 712, 652, 924, 645, 652,  582, 712, 365, 712,  838};

constexpr double kFont = 12;       // tick labels, legend, annotations
constexpr double kTitleFont = 15;  // bold
constexpr double kCatFont = 11;    // category labels under bars
constexpr double kPad = 8;
constexpr double kSafety = 1.04;  // width estimates are padded by this factor before fitting

// Decodes one UTF-8 code point at s[i] and advances past it; invalid input yields 0 and
// advances one byte.
char32_t decode(std::string_view s, std::size_t& i) {
  const auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) {
    ++i;
    return b;
  }
  const std::size_t n = (b >> 5) == 0x6 ? 1 : (b >> 4) == 0xE ? 2 : (b >> 3) == 0x1E ? 3 : 0;
  if (n == 0 || i + n >= s.size()) {
    ++i;
    return 0;
  }
  char32_t cp = b & (0x3Fu >> n);
  for (std::size_t k = 1; k <= n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80) {
      ++i;
      return 0;
    }
    cp = (cp << 6) | (c & 0x3Fu);
  }
  i += n + 1;
  return cp > 0x10FFFF ? 0 : cp;
}

double char_em(char32_t c, bool bold) {
  if (c >= 32 && c < 127) return (bold ? kBold : kBook)[c - 32] / 1000.0;
  switch (c) {
    case 0xD7:
    case 0x2264:
    case 0x2265:
      return 0.838;  // x, <=, >=
    case 0xB7:
      return bold ? 0.38 : 0.318;
    case 0x2013:
      return 0.5;
    default:
      return 1.0;
  }
}

std::string num(double v) {
  if (!std::isfinite(v)) v = 0;
  std::string s = fmt::format("{:.1f}", v);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  if (s == "-0") s = "0";
  return s;
}

struct Box {
  double x0, y0, x1, y1;
  bool overlaps(const Box& o, double gap = 1) const { return x0 < o.x1 + gap && o.x0 < x1 + gap && y0 < o.y1 + gap && o.y0 < y1 + gap; }
};

// A text element with its estimated box (baseline at y; ascent ~0.93 em, descent ~0.24 em).
struct Text {
  Text() = default;
  Text(double x_, double y_, std::string s_, double font_ = kFont, bool bold_ = false, std::string anchor_ = "start",
       std::string fill_ = "#222")
      : x(x_), y(y_), s(std::move(s_)), font(font_), bold(bold_), anchor(std::move(anchor_)), fill(std::move(fill_)) {}
  double x = 0, y = 0;
  std::string s;
  double font = kFont;
  bool bold = false;
  std::string anchor = "start";  // start | middle | end
  std::string fill = "#222";
  std::string extra;  // extra attributes
  double w() const { return text_width(s, font, bold); }
  Box box() const {
    const double wd = w();
    const double x0 = anchor == "start" ? x : anchor == "middle" ? x - wd / 2 : x - wd;
    return {x0, y - font * 0.93, x0 + wd, y + font * 0.24};
  }
  // Moves the text horizontally so its box lies within [lo, hi] (when it can).
  void clamp_x(double lo, double hi) {
    const Box b = box();
    if (b.x1 > hi) x -= b.x1 - hi;
    if (b.x0 < lo) x += lo - b.x0;
  }
  std::string render() const {
    return fmt::format(R"~(<text x="{}" y="{}" font-size="{}"{}{} fill="{}"{}>{}</text>)~", num(x), num(y), num(font),
                       bold ? R"~( font-weight="bold")~" : "", anchor == "start" ? "" : fmt::format(R"~( text-anchor="{}")~", anchor), fill,
                       extra.empty() ? "" : " " + extra, escape(s));
  }
};

double nice_step(double range, int target) {
  if (!(range > 0)) return 1;
  const double raw = range / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

struct Scale {
  double lo = 0, hi = 1;
  bool log = false;
  double p0 = 0, p1 = 1;  // pixel range
  double operator()(double v) const {
    if (log) {
      const double a = std::log10(lo), b = std::log10(hi);
      const double t = (std::log10(std::max(v, lo * 1e-6)) - a) / (b - a);
      return p0 + t * (p1 - p0);
    }
    return p0 + (v - lo) / (hi - lo) * (p1 - p0);
  }
};

// Range and ticks of one numeric axis from the data values it has to show.
void axis_range(const Axis& a, std::vector<double> vals, bool include_zero, double& lo, double& hi, std::vector<double>& ticks) {
  vals.erase(std::remove_if(vals.begin(), vals.end(), [&](double v) { return !std::isfinite(v) || (a.log && v <= 0); }), vals.end());
  double dmin = vals.empty() ? (a.log ? 1 : 0) : *std::min_element(vals.begin(), vals.end());
  double dmax = vals.empty() ? (a.log ? 10 : 1) : *std::max_element(vals.begin(), vals.end());
  if (a.min) dmin = *a.min;
  if (a.max) dmax = *a.max;
  if (a.log) {
    dmin = std::max(dmin, 1e-300);
    if (dmax <= dmin) dmax = dmin * 10;
    lo = a.min ? *a.min : std::pow(10.0, std::floor(std::log10(dmin) + 1e-9));
    hi = a.max ? *a.max : std::pow(10.0, std::ceil(std::log10(dmax) - 1e-9));
    if (hi <= lo) hi = lo * 10;
    ticks.clear();
    if (!a.ticks.empty()) {
      for (double t : a.ticks)
        if (t >= lo * (1 - 1e-9) && t <= hi * (1 + 1e-9)) ticks.push_back(t);
    } else {
      const double decades = std::log10(hi / lo);
      const int every = decades > 12 ? 3 : decades > 7 ? 2 : 1;
      int k = 0;
      for (double t = lo; t <= hi * (1 + 1e-9); t *= 10, ++k)
        if (k % every == 0) ticks.push_back(t);
      if (decades < 1.5) {  // a narrow range: 2 and 5 as well
        std::vector<double> more;
        for (double t = lo; t <= hi * (1 + 1e-9); t *= 10)
          for (double m : {1.0, 2.0, 5.0})
            if (t * m <= hi * (1 + 1e-9)) more.push_back(t * m);
        ticks = more;
      }
    }
    return;
  }
  if (include_zero && !a.min) dmin = std::min(dmin, 0.0);
  if (dmax <= dmin) dmax = dmin + 1;
  const double step = nice_step(dmax - dmin, 5);
  lo = a.min ? *a.min : std::floor(dmin / step + 1e-9) * step;
  hi = a.max ? *a.max : std::ceil(dmax / step - 1e-9) * step;
  if (hi <= lo) hi = lo + step;
  ticks.clear();
  if (!a.ticks.empty()) {
    for (double t : a.ticks)
      if (t >= lo - 1e-9 * std::abs(hi - lo) && t <= hi + 1e-9 * std::abs(hi - lo)) ticks.push_back(t);
  } else {
    for (double t = std::ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-6; t += step)
      ticks.push_back(std::abs(t) < step * 1e-9 ? 0 : t);
  }
}

std::string label_of(const Axis& a, double v) { return a.format ? a.format(v) : si_label(v); }

// Hatch drawing (in an 8 x 8 tile) for a pattern name.
std::string hatch_path(const std::string& h) {
  if (h == "diag") return "M-2,2 l4,-4 M0,8 l8,-8 M6,10 l4,-4";
  if (h == "back") return "M-2,6 l4,4 M0,0 l8,8 M6,-2 l4,4";
  if (h == "cross") return "M-2,2 l4,-4 M0,8 l8,-8 M6,10 l4,-4 M-2,6 l4,4 M0,0 l8,8 M6,-2 l4,4";
  if (h == "horiz") return "M0,2 h8 M0,6 h8";
  if (h == "vert") return "M2,0 v8 M6,0 v8";
  if (h == "grid") return "M0,4 h8 M4,0 v8";
  return "";
}

std::string marker_svg(const std::string& shape, double x, double y, const std::string& colour) {
  const double r = 3.5;
  if (shape == "circle")
    return fmt::format(R"~(<circle cx="{}" cy="{}" r="{}" fill="{}" stroke="#fff" stroke-width="0.8"/>)~", num(x), num(y), num(r), colour);
  if (shape == "square")
    return fmt::format(R"~(<rect x="{}" y="{}" width="{}" height="{}" fill="{}" stroke="#fff" stroke-width="0.8"/>)~", num(x - r),
                       num(y - r), num(2 * r), num(2 * r), colour);
  if (shape == "triangle")
    return fmt::format(R"~(<path d="M{},{} l{},{} h{} z" fill="{}" stroke="#fff" stroke-width="0.8"/>)~", num(x), num(y - r - 0.5),
                       num(r + 0.5), num(2 * r + 1), num(-2 * r - 1), colour);
  if (shape == "diamond")
    return fmt::format(R"~(<path d="M{},{} l{},{} l{},{} l{},{} z" fill="{}" stroke="#fff" stroke-width="0.8"/>)~", num(x),
                       num(y - r - 0.5), num(r + 0.5), num(r + 0.5), num(-r - 0.5), num(r + 0.5), num(-r - 0.5), num(-r - 0.5), colour);
  if (shape == "cross")
    return fmt::format(R"~(<path d="M{},{} l{},{} M{},{} l{},{}" stroke="{}" stroke-width="2"/>)~", num(x - r), num(y - r), num(2 * r),
                       num(2 * r), num(x - r), num(y + r), num(2 * r), num(-2 * r), colour);
  return "";
}

// Whether a pixel polyline passes within `margin` of a box.
bool crosses(const std::vector<std::pair<double, double>>& line, const Box& b, double margin) {
  for (std::size_t k = 0; k + 1 < line.size(); ++k) {
    // plain variables, not structured bindings: clang 14 cannot capture those in a lambda
    double x1 = line[k].first, y1 = line[k].second;
    double x2 = line[k + 1].first, y2 = line[k + 1].second;
    if (x2 < x1) {
      std::swap(x1, x2);
      std::swap(y1, y2);
    }
    const double lo = std::max(x1, b.x0 - margin), hi = std::min(x2, b.x1 + margin);
    if (lo > hi) continue;
    auto y_at = [&](double x) { return x2 - x1 < 1e-9 ? y1 : y1 + (y2 - y1) * (x - x1) / (x2 - x1); };
    double ya = y_at(lo), yb = y_at(hi);
    if (x2 - x1 < 1e-9) {
      ya = y1;
      yb = y2;
    }
    if (std::max(ya, yb) >= b.y0 - margin && std::min(ya, yb) <= b.y1 + margin) return true;
  }
  return false;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// text
// ---------------------------------------------------------------------------------------------

std::string escape(std::string_view s) {
  std::string o;
  o.reserve(s.size() + 8);
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t start = i;
    const char32_t c = decode(s, i);
    if (c == 0) {
      o += '?';
      continue;
    }
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&#39;";
        break;
      default:
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
          o += '?';
        else if (c == 0xFFFE || c == 0xFFFF || (c >= 0xD800 && c <= 0xDFFF))
          o += '?';
        else
          o.append(s.substr(start, i - start));
    }
  }
  return o;
}

double text_width(std::string_view s, double font_px, bool bold) {
  double em = 0;
  std::size_t i = 0;
  while (i < s.size()) em += char_em(decode(s, i), bold);
  return em * font_px;
}

std::string fit_text(std::string_view s, double max_px, double font_px, bool bold) {
  if (text_width(s, font_px, bold) * kSafety <= max_px) return std::string(s);
  static const std::string ell = "\xE2\x80\xA6";  // ellipsis
  std::vector<std::size_t> ends;                  // byte offset after each code point
  std::size_t i = 0;
  while (i < s.size()) {
    decode(s, i);
    ends.push_back(i);
  }
  for (std::size_t k = ends.size(); k-- > 0;) {
    std::string t(s.substr(0, ends[k]));
    while (!t.empty() && t.back() == ' ') t.pop_back();
    t += ell;
    if (text_width(t, font_px, bold) * kSafety <= max_px) return t;
  }
  return text_width(ell, font_px, bold) * kSafety <= max_px ? ell : std::string();
}

std::vector<std::string> wrap_text(std::string_view s, double max_px, double font_px, int max_lines, bool bold) {
  std::vector<std::string> out;
  if (max_lines < 1) return out;
  // pieces end after a break character: the space itself is dropped at a line end
  std::vector<std::string> pieces;
  std::string cur;
  for (char c : s) {
    cur += c;
    if (c == ' ' || c == '-' || c == '/') {
      pieces.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) pieces.push_back(cur);
  auto fits = [&](const std::string& t) {
    std::string u = t;
    while (!u.empty() && u.back() == ' ') u.pop_back();
    return text_width(u, font_px, bold) * kSafety <= max_px;
  };
  auto trim = [](std::string t) {
    while (!t.empty() && t.back() == ' ') t.pop_back();
    return t;
  };
  std::vector<std::string> lines;
  std::string line;
  for (const auto& p : pieces) {
    if (fits(line + p)) {
      line += p;
      continue;
    }
    if (!line.empty()) {
      lines.push_back(trim(line));
      line.clear();
    }
    if (fits(p)) {
      line = p;
      continue;
    }
    // a single piece wider than a line: break it by characters
    std::string part;
    std::size_t i = 0;
    while (i < p.size()) {
      const std::size_t st = i;
      decode(p, i);
      const std::string next = part + std::string(p.substr(st, i - st));
      if (!fits(next) && !part.empty()) {
        lines.push_back(part);
        part = std::string(p.substr(st, i - st));
      } else {
        part = next;
      }
    }
    line = part;
  }
  if (!trim(line).empty()) lines.push_back(trim(line));
  if (static_cast<int>(lines.size()) > max_lines) {
    std::string rest;
    for (std::size_t k = static_cast<std::size_t>(max_lines - 1); k < lines.size(); ++k) rest += (rest.empty() ? "" : " ") + lines[k];
    lines.resize(static_cast<std::size_t>(max_lines - 1));
    lines.push_back(rest);
  }
  for (auto& l : lines) out.push_back(fit_text(l, max_px, font_px, bold));
  return out;
}

std::string si_label(double v) {
  if (!std::isfinite(v)) return "-";
  const double a = std::abs(v);
  if (a == 0) return "0";
  if (a >= 1e12) return fmt::format("{:.3g}T", v / 1e12);
  if (a >= 1e9) return fmt::format("{:.3g}B", v / 1e9);
  if (a >= 1e6) return fmt::format("{:.3g}M", v / 1e6);
  if (a >= 1e3) return fmt::format("{:.3g}k", v / 1e3);
  return fmt::format("{:.3g}", v);
}

std::string context_label(double t) {
  if (!std::isfinite(t)) return "-";
  if (t >= 1048576) return fmt::format("{:.3g}M", t / 1048576);
  if (t >= 1024) return fmt::format("{:.3g}k", t / 1024);
  return fmt::format("{:.3g}", t);
}

// ---------------------------------------------------------------------------------------------
// palette
// ---------------------------------------------------------------------------------------------

const Style& style(int i) {
  // Okabe-Ito colours (colour-blind safe), in an order that alternates light and dark; dashes
  // and hatches differ for every entry so series stay apart in grey.
  static const std::vector<Style> p = {
      {"#0072B2", "", "diag", "circle"},           {"#E69F00", "8 4", "back", "square"},        {"#009E73", "2 3", "cross", "triangle"},
      {"#CC79A7", "10 3 2 3", "horiz", "diamond"}, {"#56B4E9", "4 2 1 2 1 2", "vert", "cross"}, {"#D55E00", "14 4", "dots", "circle"},
      {"#999999", "1 2", "grid", "square"},        {"#332288", "6 2 6 6", "none", "triangle"},
  };
  const int n = static_cast<int>(p.size());
  return p[static_cast<std::size_t>(((i % n) + n) % n)];
}

int palette_size() { return 8; }

// ---------------------------------------------------------------------------------------------
// the chart
// ---------------------------------------------------------------------------------------------

std::string Chart::render() const {
  const double W = width;
  const std::string pid = escape(id.empty() ? "chart" : id);
  const bool bars = !categories.empty();
  std::vector<Text> texts;  // drawn last, over the plot
  std::vector<Box> placed;  // boxes of annotation labels inside the plot

  // --- title ------------------------------------------------------------------------------
  double top = kPad;
  for (const auto& l : wrap_text(title, W - 2 * kPad, kTitleFont, 2, true)) {
    top += kTitleFont * 1.25;
    texts.push_back({kPad, top - 4, l, kTitleFont, true});
  }
  for (const auto& l : wrap_text(subtitle, W - 2 * kPad, kFont, 2)) {
    top += kFont * 1.35;
    texts.push_back({kPad, top - 3, l, kFont, false, "start", "#555"});
  }

  // --- ranges -------------------------------------------------------------------------------
  auto style_of = [&](const Series& s, std::size_t idx) { return s.style >= 0 ? s.style : static_cast<int>(idx); };
  std::vector<double> xs, ys;
  std::size_t ncat = categories.size();
  std::vector<double> stack_top(ncat, 0.0);
  for (const auto& s : series) {
    if (bars && s.kind == SeriesKind::bar) {
      for (std::size_t c = 0; c < ncat && c < s.y.size(); ++c)
        if (std::isfinite(s.y[c]) && s.y[c] > 0) stack_top[c] += s.y[c];
      continue;
    }
    for (std::size_t k = 0; k < s.x.size() && k < s.y.size(); ++k) {
      if (!std::isfinite(s.x[k]) || !std::isfinite(s.y[k])) continue;
      xs.push_back(s.x[k]);
      ys.push_back(s.y[k]);
      if (k < s.y0.size() && std::isfinite(s.y0[k])) ys.push_back(s.y0[k]);
    }
  }
  for (double v : stack_top) ys.push_back(v);
  for (double v : bar_marks)
    if (std::isfinite(v)) ys.push_back(v);
  for (const auto& r : refs) (r.vertical ? xs : ys).push_back(r.value);
  for (const auto& p : points) {
    xs.push_back(p.x);
    ys.push_back(p.y);
  }
  double xlo = 0, xhi = 1, ylo = 0, yhi = 1;
  std::vector<double> xt, yt;
  if (!bars) axis_range(x, xs, false, xlo, xhi, xt);
  axis_range(y, ys, !y.log, ylo, yhi, yt);

  // --- margins --------------------------------------------------------------------------------
  std::vector<std::string> ylabels;
  double ytw = 0;
  for (double t : yt) {
    ylabels.push_back(label_of(y, t));
    ytw = std::max(ytw, text_width(ylabels.back(), kFont));
  }
  const double L = kPad + kFont * 1.4 + 4 + ytw * kSafety + 8;
  // right-hand labels: line ends and horizontal reference lines
  struct Side {
    double want;
    std::string text;
    std::string colour;
    int priority;
  };
  std::vector<Side> side;
  double side_w = 0;
  const double side_max = W * 0.3;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const auto& s = series[i];
    if (s.kind == SeriesKind::line && s.label_end && !s.name.empty()) side_w = std::max(side_w, text_width(s.name, kFont) * kSafety);
  }
  for (const auto& r : refs)
    if (!r.vertical && !r.label.empty()) side_w = std::max(side_w, text_width(r.label, kFont) * kSafety);
  side_w = std::min(side_w, side_max);
  double R = W - kPad - (side_w > 0 ? side_w + 10 : 0);
  if (side_w == 0 && !bars && !xt.empty()) R = W - kPad - text_width(label_of(x, xt.back()), kFont) * kSafety / 2 - 2;
  R = std::min(R, W - kPad - 4);
  const double T = top + 10 + kFont / 2;
  const double B = T + plot_height;
  const Scale sx{xlo, xhi, x.log, L, R};
  const Scale sy{ylo, yhi, y.log, B, T};

  // --- below the plot: tick labels, axis title, legend ----------------------------------------
  double below = B + 6;
  std::vector<Text> xlab;
  if (bars) {
    const double slot = (R - L) / static_cast<double>(std::max<std::size_t>(ncat, 1));
    int max_lines = 1;
    std::vector<std::vector<std::string>> wrapped;
    for (std::size_t c = 0; c < ncat; ++c) {
      const bool bold = c < category_bold.size() && category_bold[c];
      wrapped.push_back(wrap_text(categories[c], slot - 6, kCatFont, 3, bold));
      max_lines = std::max(max_lines, static_cast<int>(wrapped.back().size()));
    }
    for (std::size_t c = 0; c < ncat; ++c) {
      const bool bold = c < category_bold.size() && category_bold[c];
      for (std::size_t k = 0; k < wrapped[c].size(); ++k)
        xlab.push_back({L + slot * (static_cast<double>(c) + 0.5), below + kCatFont + static_cast<double>(k) * (kCatFont + 2),
                        wrapped[c][k], kCatFont, bold, "middle"});
    }
    below += static_cast<double>(max_lines) * (kCatFont + 2) + 4;
  } else {
    // thin the tick labels until neighbours keep a gap
    std::vector<Text> all;
    for (double t : xt) all.push_back({sx(t), below + kFont, label_of(x, t), kFont, false, "middle"});
    for (auto& t : all) t.clamp_x(2, W - 2);
    std::size_t every = 1;
    for (; every < all.size(); ++every) {
      bool ok = true;
      for (std::size_t k = every; k < all.size(); k += every)
        if (all[k - every].box().overlaps(all[k].box(), 6)) ok = false;
      if (ok) break;
    }
    for (std::size_t k = 0; k < all.size(); k += every) xlab.push_back(all[k]);
    below += kFont + 6;
  }
  for (auto& t : xlab) texts.push_back(t);
  if (!x.title().empty() && !bars) {
    below += kFont + 4;
    Text t{(L + R) / 2, below, fit_text(x.title(), W - 2 * kPad, kFont), kFont, false, "middle", "#222"};
    t.clamp_x(kPad, W - kPad);
    texts.push_back(t);
  } else if (!x.title().empty()) {
    below += kFont + 2;
    Text t{(L + R) / 2, below, fit_text(x.title(), W - 2 * kPad, kFont), kFont, false, "middle", "#222"};
    t.clamp_x(kPad, W - kPad);
    texts.push_back(t);
  }
  // legend entries
  struct Entry {
    std::string name;
    std::string swatch;  // drawn at (0,0)-(26,12), translated
  };
  std::vector<Entry> legend;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const auto& s = series[i];
    if (s.name.empty()) continue;
    const int si = style_of(s, i);
    const Style& st = style(si);
    std::string sw;
    if (s.kind == SeriesKind::line) {
      sw = fmt::format(R"~(<line x1="0" y1="6" x2="26" y2="6" stroke="{}" stroke-width="2.5"{}/>)~", st.colour,
                       st.dash.empty() ? "" : fmt::format(R"~( stroke-dasharray="{}")~", st.dash));
      if (s.markers) sw += marker_svg(st.marker, 13, 6, st.colour);
    } else if (s.kind == SeriesKind::area) {
      sw = fmt::format(R"~(<rect x="1" y="1" width="24" height="10" fill="url(#{}-a{})" stroke="{}"{}/>)~", pid, si, st.colour,
                       st.dash.empty() ? "" : fmt::format(R"~( stroke-dasharray="{}")~", st.dash));
    } else {
      sw = fmt::format(R"~(<rect x="1" y="0" width="24" height="12" fill="url(#{}-b{})" stroke="#333" stroke-width="0.6"/>)~", pid, si);
    }
    legend.push_back({s.name, sw});
  }
  if (!bar_mark_label.empty())
    legend.push_back({bar_mark_label, R"~(<line x1="0" y1="6" x2="26" y2="6" stroke="#000" stroke-width="3.5"/>)~"});
  for (const auto& r : regions)
    if (!r.label.empty())
      legend.push_back({r.label, fmt::format(R"~(<rect x="1" y="1" width="24" height="10" fill="url(#{}-r)" stroke="#777"/>)~", pid)});
  std::string legend_svg;
  if (!legend.empty()) {
    below += 10;
    double lx = kPad, ly = below;
    const double row_h = kFont + 8;
    for (const auto& e : legend) {
      const std::string name = fit_text(e.name, W - 2 * kPad - 50, kFont);
      const double w = 26 + 6 + text_width(name, kFont) * kSafety + 16;
      if (lx > kPad && lx + w > W - kPad) {
        lx = kPad;
        ly += row_h;
      }
      legend_svg += fmt::format(R"~(<g transform="translate({},{})">{}</g>)~", num(lx), num(ly), e.swatch);
      texts.push_back({lx + 32, ly + 10.5, name, kFont});
      lx += w;
    }
    below = ly + row_h;
  }
  const double H = std::ceil(below + kPad - 4);

  // --- y axis title (rotated) ----------------------------------------------------------------
  std::string ytitle_svg;
  if (!y.title().empty()) {
    const std::string t = fit_text(y.title(), B - T + 20, kFont);
    const double cx = kPad + kFont, cy = (T + B) / 2;
    ytitle_svg = fmt::format(
        R"~(<text x="{0}" y="{1}" font-size="{2}" text-anchor="middle" fill="#222" transform="rotate(-90 {0} {1})">{3}</text>)~", num(cx),
        num(cy), num(kFont), escape(t));
  }

  // --- defs: hatches for bars, areas and regions ----------------------------------------------
  std::string defs = fmt::format(R"~(<clipPath id="{}-clip"><rect x="{}" y="{}" width="{}" height="{}"/></clipPath>)~", pid, num(L), num(T),
                                 num(R - L), num(B - T));
  for (int i = 0; i < palette_size(); ++i) {
    const Style& st = style(i);
    const std::string hp = hatch_path(st.hatch);
    std::string dots =
        st.hatch == "dots"
            ? R"~(<circle cx="2" cy="2" r="1.2" fill="#000" fill-opacity="0.55"/><circle cx="6" cy="6" r="1.2" fill="#000" fill-opacity="0.55"/>)~"
            : "";
    defs += fmt::format(
        R"~(<pattern id="{}-b{}" patternUnits="userSpaceOnUse" width="8" height="8"><rect width="8" height="8" fill="{}"/>{}{}</pattern>)~",
        pid, i, st.colour, hp.empty() ? "" : fmt::format(R"~(<path d="{}" stroke="#000" stroke-opacity="0.55" stroke-width="1.1"/>)~", hp),
        dots);
    std::string adots =
        st.hatch == "dots"
            ? fmt::format(R"~(<circle cx="2" cy="2" r="1.1" fill="{0}"/><circle cx="6" cy="6" r="1.1" fill="{0}"/>)~", st.colour)
            : "";
    defs += fmt::format(
        R"~(<pattern id="{}-a{}" patternUnits="userSpaceOnUse" width="8" height="8"><rect width="8" height="8" fill="{}" fill-opacity="0.18"/>{}{}</pattern>)~",
        pid, i, st.colour,
        hp.empty() ? "" : fmt::format(R"~(<path d="{}" stroke="{}" stroke-opacity="0.7" stroke-width="1"/>)~", hp, st.colour), adots);
  }
  defs += fmt::format(
      R"~(<pattern id="{}-r" patternUnits="userSpaceOnUse" width="8" height="8"><rect width="8" height="8" fill="#e8f4e8"/><path d="{}" stroke="#6a9" stroke-width="1"/></pattern>)~",
      pid, hatch_path("diag"));

  std::string body;
  // --- grid and ticks -----------------------------------------------------------------------
  for (std::size_t k = 0; k < yt.size(); ++k) {
    const double py = sy(yt[k]);
    body += fmt::format(R"~(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#e3e3e3"/>)~", num(L), num(py), num(R), num(py));
    body += fmt::format(R"~(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#333"/>)~", num(L - 4), num(py), num(L), num(py));
    texts.push_back({L - 7, py + kFont * 0.35, ylabels[k], kFont, false, "end"});
  }
  if (!bars)
    for (double t : xt) {
      const double px = sx(t);
      body += fmt::format(R"~(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#eeeeee"/>)~", num(px), num(T), num(px), num(B));
      body += fmt::format(R"~(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#333"/>)~", num(px), num(B), num(px), num(B + 4));
    }

  // --- regions --------------------------------------------------------------------------------
  for (const auto& r : regions) {
    const double x0 = bars ? L : std::clamp(sx(r.x0), L, R), x1 = bars ? R : std::clamp(sx(r.x1), L, R);
    const double y0 = std::clamp(sy(r.y1), T, B), y1 = std::clamp(sy(r.y0), T, B);
    if (x1 - x0 < 0.5 || y1 - y0 < 0.5) continue;
    body += fmt::format(
        R"~(<rect x="{}" y="{}" width="{}" height="{}" fill="url(#{}-r)" fill-opacity="0.8" stroke="#6a9" stroke-dasharray="4 3"/>)~",
        num(x0), num(y0), num(x1 - x0), num(y1 - y0), pid);
  }

  // --- series ---------------------------------------------------------------------------------
  std::vector<double> stack_base(ncat, 0.0);
  const double slot = bars ? (R - L) / static_cast<double>(ncat) : 0;
  const double bw = std::min(slot * 0.62, 90.0);
  std::string plot;
  std::vector<std::vector<std::pair<double, double>>> drawn;  // pixel polylines (labels keep off them)
  for (std::size_t i = 0; i < series.size(); ++i) {
    const auto& s = series[i];
    const int si = style_of(s, i);
    const Style& st = style(si);
    if (bars && s.kind == SeriesKind::bar) {
      for (std::size_t c = 0; c < ncat && c < s.y.size(); ++c) {
        const double v = s.y[c];
        if (!std::isfinite(v) || v <= 0) continue;
        const double y0 = sy(stack_base[c]), y1 = sy(stack_base[c] + v);
        stack_base[c] += v;
        const double bx = L + slot * (static_cast<double>(c) + 0.5) - bw / 2;
        body += fmt::format(
            R"~(<rect x="{}" y="{}" width="{}" height="{}" fill="url(#{}-b{})" stroke="#fff" stroke-width="0.6"><title>{}</title></rect>)~",
            num(bx), num(std::min(y0, y1)), num(bw), num(std::max(0.3, std::abs(y0 - y1))), pid, si, escape(s.name));
        if (bar_value_format) {
          Text t{bx + bw / 2, (y0 + y1) / 2 + kCatFont * 0.35, bar_value_format(v), kCatFont, false, "middle", "#000"};
          if (std::abs(y0 - y1) >= kCatFont + 4 && t.w() * kSafety <= bw - 4) {
            t.extra = R"~(stroke="#fff" stroke-width="3" stroke-opacity="0.9" paint-order="stroke")~";
            texts.push_back(t);
          }
        }
      }
      continue;
    }
    std::vector<std::pair<double, double>> pts;
    for (std::size_t k = 0; k < s.x.size() && k < s.y.size(); ++k) {
      if (!std::isfinite(s.x[k]) || !std::isfinite(s.y[k])) continue;
      if ((x.log && s.x[k] <= 0) || (y.log && s.y[k] <= 0)) continue;
      pts.emplace_back(sx(s.x[k]), sy(s.y[k]));
    }
    if (pts.empty()) continue;
    drawn.push_back(pts);
    if (s.kind == SeriesKind::area) {
      std::vector<std::pair<double, double>> lower;
      for (std::size_t k = 0; k < pts.size(); ++k)
        lower.emplace_back(pts[k].first, k < s.y0.size() && std::isfinite(s.y0[k]) ? sy(s.y0[k]) : B);
      drawn.push_back(lower);
    }
    const std::string dash = st.dash.empty() ? "" : fmt::format(R"~( stroke-dasharray="{}")~", st.dash);
    if (s.kind == SeriesKind::area) {
      std::string d = fmt::format("M{},{}", num(pts[0].first), num(pts[0].second));
      for (std::size_t k = 1; k < pts.size(); ++k) d += fmt::format(" L{},{}", num(pts[k].first), num(pts[k].second));
      for (std::size_t k = pts.size(); k-- > 0;) {
        const double lower = k < s.y0.size() && std::isfinite(s.y0[k]) ? sy(s.y0[k]) : B;
        d += fmt::format(" L{},{}", num(pts[k].first), num(lower));
      }
      d += " Z";
      plot += fmt::format(R"~(<path d="{}" fill="url(#{}-a{})" stroke="{}" stroke-width="1.2"{}/>)~", d, pid, si, st.colour, dash);
      continue;
    }
    std::string d;
    for (const auto& [px, py] : pts) d += fmt::format("{}{},{}", d.empty() ? "" : " ", num(px), num(py));
    plot += fmt::format(R"~(<polyline points="{}" fill="none" stroke="{}" stroke-width="2.4" stroke-linejoin="round"{}/>)~", d, st.colour,
                        dash);
    if (s.markers)
      for (const auto& [px, py] : pts) plot += marker_svg(st.marker, px, py, st.colour);
    if (s.label_end && !s.name.empty()) side.push_back({std::clamp(pts.back().second, T, B), s.name, st.colour, 10});
  }
  body += fmt::format(R"~(<g clip-path="url(#{}-clip)">{}</g>)~", pid, plot);
  // markers across bars (capacity)
  if (bars)
    for (std::size_t c = 0; c < ncat && c < bar_marks.size(); ++c) {
      if (!std::isfinite(bar_marks[c])) continue;
      const double bx = L + slot * (static_cast<double>(c) + 0.5) - bw / 2 - 5;
      body += fmt::format(R"~(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#000" stroke-width="3.5"/>)~", num(bx), num(sy(bar_marks[c])),
                          num(bx + bw + 10), num(sy(bar_marks[c])));
    }

  // --- reference lines ------------------------------------------------------------------------
  for (const auto& r : refs) {
    if (r.vertical) {
      if (r.value < xlo || r.value > xhi) continue;
      const double px = sx(r.value);
      body += fmt::format(R"~(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#444" stroke-width="1.2" stroke-dasharray="{}"/>)~", num(px),
                          num(T), num(px), num(B), r.dash);
      if (!r.label.empty()) {
        // top of the plot unless a horizontal line runs through the label there; else the bottom
        std::vector<double> hlines;
        for (const auto& o : refs)
          if (!o.vertical && o.value >= ylo && o.value <= yhi) hlines.push_back(sy(o.value));
        Text best;
        bool found = false;
        for (double ty : {T + kFont + 2, B - 6, T + 2 * kFont + 6}) {
          Text t{px + 4, ty, fit_text(r.label, (R - L) * 0.5, kFont), kFont, false, "start", "#222"};
          if (t.box().x1 > R - 2) {
            t.anchor = "end";
            t.x = px - 4;
          }
          t.clamp_x(L + 2, R - 2);
          const Box b = t.box();
          bool clash = false;
          for (double hy : hlines) clash = clash || (hy >= b.y0 - 3 && hy <= b.y1 + 3);
          for (const auto& line : drawn) clash = clash || crosses(line, b, 3);
          for (const auto& q : placed) clash = clash || b.overlaps(q, 2);
          if (!found || !clash) best = t;
          found = true;
          if (!clash) break;
        }
        best.extra = R"~(stroke="#fff" stroke-width="3" paint-order="stroke")~";
        placed.push_back(best.box());
        texts.push_back(best);
      }
    } else {
      if (r.value < ylo || r.value > yhi) continue;
      const double py = sy(r.value);
      body += fmt::format(R"~(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#555" stroke-width="1" stroke-dasharray="{}"/>)~", num(L),
                          num(py), num(R), num(py), r.dash);
      if (!r.label.empty()) side.push_back({py, r.label, "#333", r.priority});
    }
  }

  // --- right-hand labels, moved apart and dropped (lowest priority first) when crowded --------
  if (!side.empty()) {
    const double h = kFont + 3;
    std::vector<Side> keep = side;
    while (static_cast<double>(keep.size()) * h > (B - T) + h) {
      auto it = std::min_element(keep.begin(), keep.end(), [](const Side& a, const Side& b) { return a.priority < b.priority; });
      keep.erase(it);
    }
    std::sort(keep.begin(), keep.end(), [](const Side& a, const Side& b) { return a.want < b.want; });
    std::vector<double> yy;
    for (const auto& s : keep) yy.push_back(std::clamp(s.want, T + h / 2, B));
    for (std::size_t k = 1; k < yy.size(); ++k) yy[k] = std::max(yy[k], yy[k - 1] + h);
    if (!yy.empty() && yy.back() > B + h / 2) {
      yy.back() = B + h / 2;
      for (std::size_t k = yy.size() - 1; k-- > 0;) yy[k] = std::min(yy[k], yy[k + 1] - h);
    }
    for (std::size_t k = 0; k < keep.size(); ++k) {
      const std::string t = fit_text(keep[k].text, side_w, kFont);
      if (std::abs(yy[k] - keep[k].want) > 1)
        body +=
            fmt::format(R"~(<path d="M{},{} L{},{}" stroke="#999" fill="none"/>)~", num(R + 1), num(keep[k].want), num(R + 6), num(yy[k]));
      texts.push_back({R + 8, yy[k] + kFont * 0.35, t, kFont, false, "start", keep[k].colour == "#333" ? "#333" : "#222"});
    }
  }

  // --- marked points: the label goes to the first free spot around the point -----------------
  for (const auto& p : points) {
    if ((x.log && p.x <= 0) || (y.log && p.y <= 0)) continue;
    const double px = sx(p.x), py = sy(p.y);
    if (px < L - 1 || px > R + 1 || py < T - 1 || py > B + 1) continue;
    body += fmt::format(R"~(<circle cx="{}" cy="{}" r="5" fill="#000" stroke="#fff" stroke-width="1.5"/>)~", num(px), num(py));
    if (p.label.empty()) continue;
    const std::string s = fit_text(p.label, (R - L) * 0.6, kFont);
    const std::array<std::pair<double, double>, 6> offs = {{{8, -8}, {-8, -8}, {8, 16}, {-8, 16}, {8, -24}, {-8, 28}}};
    Text best;
    bool found = false;
    for (const auto& [dx, dy] : offs) {
      Text t{px + dx, py + dy, s, kFont, false, dx < 0 ? "end" : "start", "#000"};
      const Box b = t.box();
      if (b.x0 < L + 2 || b.x1 > R - 2 || b.y0 < T + 1 || b.y1 > B - 1) continue;
      bool clash = false;
      for (const auto& q : placed) clash = clash || b.overlaps(q, 2);
      if (clash) continue;
      best = t;
      found = true;
      break;
    }
    if (!found) {
      best = Text{px + 8, std::clamp(py - 8, T + kFont, B - 4), s, kFont, false, "start", "#000"};
      best.clamp_x(L + 2, R - 2);
    }
    best.extra = R"~(stroke="#fff" stroke-width="3" paint-order="stroke")~";
    placed.push_back(best.box());
    texts.push_back(best);
  }

  // --- region labels: top-left inside the region ----------------------------------------------
  // (their name is in the legend; nothing more is drawn inside the plot)

  // --- axes -----------------------------------------------------------------------------------
  body +=
      fmt::format(R"~(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#333"/><line x1="{0}" y1="{3}" x2="{0}" y2="{1}" stroke="#333"/>)~",
                  num(L), num(B), num(R), num(T));

  // --- assemble -------------------------------------------------------------------------------
  std::string out = fmt::format(
      R"~(<svg xmlns="http://www.w3.org/2000/svg" class="k3chart" data-chart="{0}" width="{1}" height="{2}" viewBox="0 0 {1} {2}" font-family="DejaVu Sans, Verdana, sans-serif" role="img" aria-label="{3}">)~",
      pid, num(W), num(H), escape(title));
  out += "<title>" + escape(title) + "</title>";
  out += "<defs>" + defs + "</defs>";
  out += fmt::format(R"~(<rect x="0" y="0" width="{}" height="{}" fill="#fff"/>)~", num(W), num(H));
  out += body;
  out += legend_svg;
  out += ytitle_svg;
  for (auto& t : texts) {
    t.clamp_x(1, W - 1);
    out += t.render();
  }
  out += "</svg>\n";
  return out;
}

}  // namespace k3plan::svg
