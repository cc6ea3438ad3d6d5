// `k3plan weights`: weight bytes at every precision, block scales included, plus the checkpoint
// as shipped (mixed precision by parameter group).
#include <k3plan/commands.hpp>
#include <k3plan/params.hpp>
#include <k3plan/units.hpp>

#include "common.hpp"

namespace k3plan {

Report run_weights(const Catalogue& cat, const WeightsOptions& o) {
  const Model m = resolve_model(cat, o.model);
  const auto p = count_params(m);
  std::vector<std::string> precs = o.precisions;
  if (precs.empty()) precs = {"bf16", "fp8", "fp8-block", "int8", "mxfp4", "nvfp4", "int4", "int4-g128", "int2"};
  for (const auto& x : precs) precision_format(x);  // validate before computing
  Report r;
  r.data["model"] = m.id;
  r.data["params_total"] = p.total;
  r.data["params_active"] = p.active;
  r.data["params_mtp"] = p.mtp;
  r.data["params_vision"] = p.vision;
  Table t{fmt::format("{}: {} parameters ({} active per token), derived from geometry", m.id, fmt_params(p.total), fmt_params(p.active)),
          {"precision", "bits/weight", "weights TB", "weights GB", "GiB", "note"},
          {},
          {false, true, true, true, true, false}};
  r.data["precisions"] = nlohmann::json::array();
  for (const auto& name : precs) {
    const auto& f = precision_format(name);
    const auto w = weights_uniform(p, name);
    t.rows.push_back({f.name, fmt::format("{:.3f}", f.bits_per_weight), fmt::format("{:.2f}", w.bytes / kTB),
                      fmt::format("{:.1f}", w.bytes / kGB), fmt::format("{:.1f}", w.bytes / kGiB), f.note});
    r.data["precisions"].push_back({{"precision", f.name}, {"bits_per_weight", f.bits_per_weight}, {"bytes", w.bytes}});
  }
  const auto s = weights_as_shipped(m, p);
  t.rows.push_back({"as shipped", fmt::format("{:.3f}", s.bytes * 8 / p.total), fmt::format("{:.2f}", s.bytes / kTB),
                    fmt::format("{:.1f}", s.bytes / kGB), fmt::format("{:.1f}", s.bytes / kGiB),
                    "each group in its shipped precision (below)"});
  r.tables.push_back(t);
  Table g{"As shipped, by parameter group", {"group", "params", "precision", "GB"}, {}, {}};
  nlohmann::json groups = nlohmann::json::array();
  for (int gi = 0; gi < kParamGroups; ++gi) {
    const auto grp = static_cast<ParamGroup>(gi);
    if (p[grp] <= 0 || grp == ParamGroup::mtp || grp == ParamGroup::vision) continue;
    const double b = s.by_group[static_cast<std::size_t>(gi)];
    std::string prec = m.precision_of(grp);
    if (grp == ParamGroup::norms && !m.precision.count(grp)) prec = m.dtype;
    g.rows.push_back({to_string(grp), fmt_params(p[grp]), prec, fmt::format("{:.2f}", b / kGB)});
    groups.push_back({{"group", to_string(grp)}, {"params", p[grp]}, {"precision", prec}, {"bytes", b}});
  }
  r.tables.push_back(g);
  r.data["as_shipped"] = {{"bytes", s.bytes}, {"bits_per_weight", s.bytes * 8 / p.total}, {"groups", groups}};
  if (m.published_checkpoint_bytes) {
    const double pub = m.published_checkpoint_bytes->value;
    const double extra = p.mtp * precision_format(m.precision_of(ParamGroup::mtp)).bits_per_weight / 8 + p.vision * 2;
    r.data["as_shipped"]["published_checkpoint_bytes"] = pub;
    r.notes.push_back(
        fmt::format("Published checkpoint: {} ({}). Derived: {} for the weights counted above{}; {:+.1f}% off.", human_decimal(pub),
                    m.published_checkpoint_bytes->source, human_decimal(s.bytes),
                    extra > 0 ? fmt::format(" + {} MTP/vision = {}", human_decimal(extra), human_decimal(s.bytes + extra)) : "",
                    (s.bytes + extra - pub) / pub * 100));
  }
  if (p.mtp > 0)
    r.notes.push_back(fmt::format("MTP layers ({} parameters) are not in the totals; engines load them only for speculative decoding.",
                                  fmt_params(p.mtp)));
  r.notes.push_back("TB = 1e12 B, GB = 1e9 B, GiB = 2^30 B.");
  add_assumptions(r, m.assumptions);
  r.data["assumptions"] = r.assumptions;
  return r;
}

}  // namespace k3plan
