// The fit searches (see fit_plan.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <k3plan/engine.hpp>
#include <k3plan/error.hpp>
#include <k3plan/fit_plan.hpp>
#include <k3plan/layout.hpp>
#include <limits>

namespace k3plan {

Layout complete_layout(const Model& m, const EngineSettings& s, Layout l, bool ep_given) {
  if (!m.moe || ep_given || l.ep != 1 || l.tp * l.dp <= 1) return l;
  Layout ep = l;
  ep.ep = 2;  // ask the engine what EP it derives when expert parallel is on
  const Layout derived = s.model().effective_layout(m, ep, false);
  if (derived.ep == l.tp * l.dp) l.ep = derived.ep;
  return l;
}

FitResult fit_one_gpu(const Model& m, const Gpu& g, const EngineSettings& s, const FitRequest& r) {
  if (r.layout) {
    const Layout l = complete_layout(m, s, *r.layout, r.ep_given);
    const EngineModel& em = s.model();
    if (r.gpus > 0 && em.gpus(l) != r.gpus)
      throw InputError(fmt::format("-n {} contradicts the layout: {} needs {} GPUs ({})", r.gpus, em.gpu_product_text(), em.gpus(l),
                                   em.display_name()));
    return evaluate_fit(m, g, l, s, r.context, r.users);
  }
  if (r.gpus > 0) return fit_on_gpus(m, g, s, r.gpus, r.context, r.users);
  return search_fit(m, g, s, r.context, r.users);
}

std::vector<FitAlternative> fit_alternatives(const Model& m, const Gpu& g, const EngineSettings& s, const FitResult& f) {
  std::vector<FitAlternative> out;
  auto consider = [&](const std::string& flag, const Layout& l) {
    if (!s.model().refusals(m, g, l).empty()) return;  // the release would not start it
    FitResult alt = evaluate_fit(m, g, l, s, f.context, f.users);
    if (!alt.reasons.empty() && !alt.fits) return;
    if (alt.max_users == f.max_users) return;  // no change to the answer: not worth a line
    out.push_back({flag, std::move(alt)});
  };
  const Layout& l = f.layout;
  if (l.dcp > 1) {
    Layout x = l;
    x.dcp = 1;
    consider("no DCP", x);
  } else if (const auto x = with_dcp(m, l)) {
    consider(fmt::format("--dcp {}", x->dcp), *x);
  }
  if (s.model().has_setting("dp_attention")) {
    Layout x = l;
    if (l.dp_attention) {
      x.dp_attention = false;
      x.dp = 1;
      consider("no DP-attention", x);
    } else if (l.tp > 1 && l.dp == 1) {
      x.dp_attention = true;
      x.dp = l.tp;
      consider(fmt::format("--enable-dp-attention --dp {}", x.dp), x);
    }
  }
  return out;
}

std::vector<GpuFitRow> fit_every_gpu(const Catalogue& cat, const Model& m, const EngineSettings& s, double weights_bytes,
                                     std::int64_t context, std::int64_t users, bool weights_only) {
  std::vector<GpuFitRow> rows;
  for (const auto& g : cat.gpus()) {
    GpuFitRow row;
    row.gpu = &g;
    row.lower_bound = weights_lower_bound(m, g, weights_bytes);
    if (!weights_only) {
      row.fit = search_fit(m, g, s, context, users);
      if (row.fit->fits) row.usd_per_hour = row.fit->gpus * g.price_usd_per_hour.value;
    } else if (row.lower_bound.deployable_found) {
      row.usd_per_hour = row.lower_bound.gpus * g.price_usd_per_hour.value;
    }
    rows.push_back(std::move(row));
  }
  // the catalogue order for weights-only tables (a bound is not a price comparison); else cheapest
  // first, with GPUs that do not hold the load last
  if (!weights_only) {
    auto key = [](const GpuFitRow& x) { return x.usd_per_hour > 0 ? x.usd_per_hour : std::numeric_limits<double>::infinity(); };
    std::stable_sort(rows.begin(), rows.end(), [&](const GpuFitRow& a, const GpuFitRow& b) { return key(a) < key(b); });
  }
  return rows;
}

}  // namespace k3plan
