// The rent-against-API chart of `k3plan cost --svg`.
#include <fmt/format.h>

#include <cmath>
#include <k3plan/report_html.hpp>

namespace k3plan {

std::string cost_chart_svg(double rent, double api_usd_per_output_token, const std::string& title) {
  const double be = api_usd_per_output_token > 0 ? rent / api_usd_per_output_token : NAN;
  svg::Chart ch;
  ch.id = "cost";
  ch.title = title;
  ch.subtitle =
      fmt::format("rent {:.0f} USD a month; API {:.2f} USD per 1M output tokens (input included)", rent, api_usd_per_output_token * 1e6);
  const double xmax = std::isfinite(be) ? be * 2.5 : 1e9;
  ch.x.label = "output tokens per month";
  ch.x.unit = "M = 10\u2076, B = 10\u2079";
  ch.x.min = 0;
  ch.x.max = xmax;
  ch.y.label = "cost per month";
  ch.y.unit = "USD";
  ch.y.min = 0;
  svg::Series r;
  r.name = fmt::format("rent ({:.0f} USD/month)", rent);
  r.x = {0, xmax};
  r.y = {rent, rent};
  r.style = 0;
  ch.series.push_back(r);
  svg::Series a;
  a.name = fmt::format("API ({:.2f} USD per 1M output tokens)", api_usd_per_output_token * 1e6);
  a.x = {0, xmax};
  a.y = {0, api_usd_per_output_token * xmax};
  a.style = 1;
  ch.series.push_back(a);
  if (std::isfinite(be)) ch.points.push_back({be, rent, fmt::format("break-even {} tokens/month", svg::si_label(be))});
  return ch.render();
}

}  // namespace k3plan
