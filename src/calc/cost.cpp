#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <k3plan/cost.hpp>

namespace k3plan {

ApiBill api_bill(const ApiRates& r, double output_tokens, double input_tokens, double hit) {
  ApiBill b;
  b.output_usd = output_tokens / 1e6 * r.output;
  b.input_hit_usd = input_tokens * hit / 1e6 * r.input_cache_hit;
  b.input_miss_usd = input_tokens * (1 - hit) / 1e6 * r.input_cache_miss;
  return b;
}

double break_even_output_tokens(double rent, const ApiRates& r, double input_per_output, double hit) {
  const double usd_per_output_token = (r.output + input_per_output * (hit * r.input_cache_hit + (1 - hit) * r.input_cache_miss)) / 1e6;
  return usd_per_output_token > 0 ? rent / usd_per_output_token : INFINITY;
}

double tokens_per_s_per_usd_hour(double tok_s, int gpus, double rate) { return tok_s / (gpus * rate); }

double usd_per_million_tokens(double tok_s, int gpus, double rate, double utilisation) {
  const double per_gpu = tok_s / gpus * utilisation;
  return rate * 1e6 / (3600 * per_gpu);
}

double download_seconds(double bytes, double bytes_per_s) { return bytes / bytes_per_s; }

bool fits_single_accelerator(double weights, double kv, double vram, double runtime) { return weights + kv + runtime < vram; }

namespace {
std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '&')
      o += "&amp;";
    else if (c == '"')
      o += "&quot;";
    else
      o += c;
  }
  return o;
}
std::string tokens_label(double t) {
  if (t >= 1e9) return fmt::format("{:g}B", t / 1e9);
  if (t >= 1e6) return fmt::format("{:g}M", t / 1e6);
  return fmt::format("{:g}", t);
}
}  // namespace

std::string cost_chart_svg(double rent, const ApiRates& r, double input_per_output, double hit, const std::string& title) {
  const double be = break_even_output_tokens(rent, r, input_per_output, hit);
  const double xmax = std::isfinite(be) && be > 0 ? be * 2.5 : 1e9;
  const double usd_per_token = (r.output + input_per_output * (hit * r.input_cache_hit + (1 - hit) * r.input_cache_miss)) / 1e6;
  const double ymax = std::max(rent, usd_per_token * xmax) * 1.1;
  const double W = 720, H = 420, L = 80, R = 20, T = 50, B = 60;
  auto X = [&](double v) { return L + v / xmax * (W - L - R); };
  auto Y = [&](double v) { return H - B - v / ymax * (H - T - B); };
  std::string s = fmt::format(
      R"svg(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" font-family="sans-serif" font-size="12">)svg",
      W, H);
  s += fmt::format(R"svg(<rect width="{}" height="{}" fill="white"/><text x="{}" y="24" font-size="15" font-weight="bold">{}</text>)svg", W,
                   H, L, esc(title));
  // axes and ticks
  s += fmt::format(
      R"svg(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="black"/><line x1="{0}" y1="{3}" x2="{0}" y2="{1}" stroke="black"/>)svg", L,
      H - B, W - R, T);
  for (int i = 0; i <= 5; ++i) {
    const double xv = xmax * i / 5, yv = ymax * i / 5;
    s += fmt::format(
        R"svg(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="black"/><text x="{0}" y="{3}" text-anchor="middle">{4}</text>)svg", X(xv),
        H - B, H - B + 5, H - B + 20, tokens_label(xv));
    s += fmt::format(R"svg(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#ddd"/><text x="{3}" y="{4}" text-anchor="end">{5}</text>)svg",
                     L, Y(yv), W - R, L - 6, Y(yv) + 4, fmt::format("{:.0f}", yv));
  }
  s += fmt::format(R"svg(<text x="{}" y="{}" text-anchor="middle">output tokens per month</text>)svg", (L + W - R) / 2, H - 15);
  s += fmt::format(R"svg(<text x="18" y="{0}" text-anchor="middle" transform="rotate(-90 18 {0})">USD per month</text>)svg",
                   (T + H - B) / 2);
  // rent: flat; API: linear (dashed for grey-scale readability)
  s += fmt::format(R"svg(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#1f77b4" stroke-width="2.5"/>)svg", X(0), Y(rent), X(xmax), Y(rent));
  s += fmt::format(R"svg(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#d62728" stroke-width="2.5" stroke-dasharray="8 4"/>)svg", X(0),
                   Y(0), X(xmax), Y(usd_per_token * xmax));
  if (std::isfinite(be)) {
    s += fmt::format(R"svg(<circle cx="{}" cy="{}" r="5" fill="black"/><text x="{}" y="{}">break-even {} tokens/month</text>)svg", X(be),
                     Y(rent), X(be) + 8, Y(rent) - 10, tokens_label(be));
  }
  // legend
  s += fmt::format(
      R"svg(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#1f77b4" stroke-width="2.5"/><text x="{3}" y="{4}">rent ({5:.0f} USD/month)</text>)svg",
      L + 10, T + 10, L + 40, L + 46, T + 14, rent);
  s += fmt::format(
      R"svg(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#d62728" stroke-width="2.5" stroke-dasharray="8 4"/><text x="{3}" y="{4}">API ({5:.2f} USD per 1M output tokens incl. input)</text>)svg",
      L + 10, T + 28, L + 40, L + 46, T + 32, usd_per_token * 1e6);
  s += "</svg>\n";
  return s;
}

}  // namespace k3plan
