// `k3plan weights`: weight bytes at every precision, block scales included, plus the checkpoint
// as shipped (mixed precision by parameter group).
#include <k3plan/commands.hpp>
#include <k3plan/hub.hpp>
#include <k3plan/params.hpp>
#include <k3plan/safetensors.hpp>
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
  r.data["params_embedding"] = p[ParamGroup::embedding];
  r.data["params_vision"] = p.vision - p.audio;
  r.data["params_audio"] = p.audio;
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
  r.data["as_shipped"] = {{"bytes", s.bytes}, {"bits_per_weight", s.bytes * 8 / p.total}, {"groups", groups}, {"basis", "config-geometry"}};
  // Exact bytes when the model directory (or its Hub download) holds the safetensors index or shards
  const std::string dir = model_directory(o.model, m.origin, o.exact);
  if (const auto cb = dir.empty() ? std::nullopt : read_checkpoint_bytes(dir, m.num_layers())) {
    const double exact = static_cast<double>(cb->bytes);
    // what the files hold: every group, MTP layers and encoder towers included
    const double geometry = s.bytes + p.mtp * precision_format(m.precision_of(ParamGroup::mtp)).bits_per_weight / 8 + p.vision * 2;
    const char* label = cb->basis == "safetensors-headers" ? "exact (safetensors headers)" : "exact (index total_size)";
    t.rows.push_back({std::string("as shipped, ") + label, fmt::format("{:.3f}", exact * 8 / (p.total + p.mtp + p.vision)),
                      fmt::format("{:.2f}", exact / kTB), fmt::format("{:.1f}", exact / kGB), fmt::format("{:.1f}", exact / kGiB),
                      cb->basis == "safetensors-headers"
                          ? fmt::format("{} tensors in {} shards, MTP and towers included", cb->tensors, cb->shards)
                          : "model.safetensors.index.json metadata.total_size"});
    r.tables[0] = t;
    auto& a = r.data["as_shipped"];
    auto warn = [&](const std::string& w) {
      r.notes.push_back("Warning: " + w + ".");
      a["warnings"].push_back(w);
    };
    a["estimated_bytes"] = s.bytes;
    a["estimated_bytes_with_mtp_and_towers"] = geometry;
    a["bytes"] = exact;
    a["basis"] = cb->basis;
    a["directory"] = dir;
    if (cb->index_total_size > 0) a["index_total_size_bytes"] = cb->index_total_size;
    if (cb->basis == "safetensors-headers") {
      a["shards"] = cb->shards;
      a["tensors"] = cb->tensors;
      a["bytes_by_dtype"] = cb->bytes_by_dtype;
      a["bytes_by_group"] = cb->bytes_by_group;
      Table e{"As shipped, exact (safetensors headers), by parameter group", {"group", "GB", "share"}, {}, {false, true, true}};
      for (const auto& [grp, b] : cb->bytes_by_group)
        e.rows.push_back(
            {grp, fmt::format("{:.3f}", static_cast<double>(b) / kGB), fmt::format("{:.1f}%", 100.0 * static_cast<double>(b) / exact)});
      Table dt{"As shipped, exact (safetensors headers), by dtype", {"dtype", "GB", "share"}, {}, {false, true, true}};
      for (const auto& [d, b] : cb->bytes_by_dtype)
        dt.rows.push_back(
            {d, fmt::format("{:.3f}", static_cast<double>(b) / kGB), fmt::format("{:.1f}%", 100.0 * static_cast<double>(b) / exact)});
      r.tables.push_back(e);
      r.tables.push_back(dt);
      if (cb->index_total_size > 0 && std::abs(exact - static_cast<double>(cb->index_total_size)) > 0.001 * exact)
        warn(fmt::format("the shard headers hold {} but model.safetensors.index.json says total_size {}", human_decimal(exact),
                         human_decimal(static_cast<double>(cb->index_total_size))));
    }
    const double off = (geometry - exact) / exact * 100;
    a["estimate_error_pct"] = off;
    if (std::abs(off) > 2)
      warn(fmt::format("estimated (config geometry) {} differs from {} {} by {:+.1f}%", human_decimal(geometry), label,
                       human_decimal(exact), off));
    else
      r.notes.push_back(fmt::format("As shipped: {} {}; the config-geometry estimate {} is {:+.1f}% off.", label, human_decimal(exact),
                                    human_decimal(geometry), off));
  }
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
