// `k3plan perf-validate`: predicted vs measured benchmark rows (src/plan/validate.cpp). Headline:
// the leave-one-family-out error per family (one factor set fitted on the other families' rows and
// applied through the held-out GPU's datasheet), the in-sample error (factors fitted on these rows)
// beside it.
#include <k3plan/perf_cmd.hpp>
#include <map>

#include "perf_common.hpp"

namespace k3plan {

namespace {
struct Errors {
  std::vector<double> tput, tpot, ttft, u_tput, u_tpot, u_ttft;
  void add(const PerfValidationRow& x) {
    tput.push_back(x.ape_tput);
    tpot.push_back(x.ape_tpot);
    ttft.push_back(x.ape_ttft);
    u_tput.push_back(x.unseen_tput);
    u_tpot.push_back(x.unseen_tpot);
    u_ttft.push_back(x.unseen_ttft);
  }
};
std::string pct(double v) { return std::isfinite(v) ? fmt::format("{:.1f}%", v) : "-"; }

// The table's short form of where a held-out family's factors came from: "N rows: GPU GPU ..."
// (the GPU ids in parentheses of fit_other_families' "N rows of FAMILY (GPU), ... (ENGINE)"); the
// JSON keeps the whole text. Any other text is shown as it is.
std::string unseen_from_short(const std::string& from) {
  const auto of = from.find(" rows of ");
  if (of == std::string::npos) return from;
  std::string gpus;
  std::size_t at = of;
  for (std::size_t open; (open = from.find('(', at)) != std::string::npos;) {
    const std::size_t close = from.find(')', open);
    if (close == std::string::npos) break;
    const bool last = from.find('(', close) == std::string::npos;  // the engine's
    if (!last) gpus += (gpus.empty() ? "" : " ") + from.substr(open + 1, close - open - 1);
    at = close + 1;
  }
  return from.substr(0, of) + " rows: " + gpus;
}
nlohmann::json errors_json(const std::string& name, const Errors& e) {
  return {{"group", name},
          {"rows", e.tput.size()},
          {"tput_median_ape_pct", percentile(e.tput, 0.5)},
          {"tput_p90_ape_pct", percentile(e.tput, 0.9)},
          {"tpot_median_ape_pct", percentile(e.tpot, 0.5)},
          {"tpot_p90_ape_pct", percentile(e.tpot, 0.9)},
          {"ttft_median_ape_pct", percentile(e.ttft, 0.5)},
          {"ttft_p90_ape_pct", percentile(e.ttft, 0.9)},
          {"unseen_tput_median_ape_pct", percentile(e.u_tput, 0.5)},
          {"unseen_tput_p90_ape_pct", percentile(e.u_tput, 0.9)},
          {"unseen_tpot_median_ape_pct", percentile(e.u_tpot, 0.5)},
          {"unseen_tpot_p90_ape_pct", percentile(e.u_tpot, 0.9)},
          {"unseen_ttft_median_ape_pct", percentile(e.u_ttft, 0.5)}};
}
}  // namespace

Report run_perf_validate(const Catalogue& cat) {
  const PerfValidation v = validate_perf(cat);
  std::map<std::string, Errors> groups, families;
  std::map<std::string, std::string> unseen_from;
  Errors all_plain, all_mtp;
  Report r;
  r.data["rows"] = nlohmann::json::array();
  Table t{"Predicted vs measured, per row (in-sample factors; 'unseen' = leave-one-family-out)",
          {"gpu/engine", "prec", "layout", "ISL/OSL", "conc", "tput/GPU", "pred", "unseen tput", "TPOT ms", "pred", "unseen TPOT", "TTFT s",
           "pred"},
          {},
          {false, false, false, false, true, true, true, true, true, true, true, true, true},
          {10, 7}};  // at 100 columns the leave-one-family-out columns go first (the family table has their medians)
  for (const auto& x : v.rows) {
    const MeasuredRow& row = x.row;
    const PerfResult& p = x.pred;
    const bool mtp = row.spec == "mtp";
    if (row.exclude.empty()) {
      groups[x.group].add(x);
      families[x.family + "/" + row.engine].add(x);
      unseen_from[x.family + "/" + row.engine] = x.unseen_from;
      (mtp ? all_mtp : all_plain).add(x);
    }
    r.data["rows"].push_back(
        {{"id", row.id},
         {"group", x.group},
         {"family", x.family},
         {"fits", x.fits},
         {"calibrated", x.calibrated},
         {"excluded", row.exclude},
         {"measured", {{"tput_per_gpu", row.tput_total}, {"tpot_ms", row.tpot_ms}, {"ttft_s", row.ttft_s}}},
         {"predicted", {{"tput_per_gpu", p.tput_total_per_gpu}, {"tpot_ms", p.tpot_ms}, {"ttft_s", p.ttft_s}, {"bound", p.bound}}},
         {"predicted_unseen",
          {{"tput_per_gpu", x.pred_unseen.tput_total_per_gpu},
           {"tpot_ms", x.pred_unseen.tpot_ms},
           {"ttft_s", x.pred_unseen.ttft_s},
           {"derived_from", x.unseen_from}}},
         {"ape_pct", {{"tput", x.ape_tput}, {"tpot", x.ape_tpot}, {"ttft", x.ape_ttft}}},
         {"unseen_ape_pct", {{"tput", x.unseen_tput}, {"tpot", x.unseen_tpot}, {"ttft", x.unseen_ttft}}}});
    t.rows.push_back({x.group, row.precision, layout_text(x.layout), fmt::format("{:g}/{:g}", row.isl, row.osl), std::to_string(row.conc),
                      fmt_num(row.tput_total), row.exclude.empty() ? fmt_num(p.tput_total_per_gpu) : "excl.",
                      fmt_num(x.pred_unseen.tput_total_per_gpu), fmt_num(row.tpot_ms), fmt_num(p.tpot_ms), fmt_num(x.pred_unseen.tpot_ms),
                      fmt_num(row.ttft_s), fmt_num(p.ttft_s)});
  }
  Table head{"Median |error| per family: leave-one-family-out (fitted on the other families' rows) vs in-sample (fitted on these rows)",
             {"family/engine", "rows", "unseen tput", "unseen TPOT", "in-sample tput", "in-sample TPOT", "unseen from"},
             {},
             {false, true, true, true, true, true, false}};
  r.data["families"] = nlohmann::json::array();
  for (const auto& [k, e] : families) {
    head.rows.push_back({k, std::to_string(e.tput.size()), pct(percentile(e.u_tput, 0.5)), pct(percentile(e.u_tpot, 0.5)),
                         pct(percentile(e.tput, 0.5)), pct(percentile(e.tpot, 0.5)), unseen_from_short(unseen_from[k])});
    nlohmann::json j = errors_json(k, e);
    j["unseen_from"] = unseen_from[k];
    r.data["families"].push_back(j);
  }
  Table sum{"In-sample |error| by GPU and engine (median / 90th percentile; the factors were fitted on these rows)",
            {"gpu/engine", "rows", "tput med", "p90", "TPOT med", "p90", "TTFT med", "p90"},
            {},
            {false, true, true, true, true, true, true, true}};
  r.data["summary"] = nlohmann::json::array();
  auto add = [&](const std::string& name, const Errors& e) {
    sum.rows.push_back({name, std::to_string(e.tput.size()), pct(percentile(e.tput, 0.5)), pct(percentile(e.tput, 0.9)),
                        pct(percentile(e.tpot, 0.5)), pct(percentile(e.tpot, 0.9)), pct(percentile(e.ttft, 0.5)),
                        pct(percentile(e.ttft, 0.9))});
    r.data["summary"].push_back(errors_json(name, e));
  };
  for (const auto& [k, e] : groups) add(k, e);
  add("all, no speculative decoding", all_plain);
  add("all, MTP", all_mtp);
  r.tables.push_back(head);
  r.tables.push_back(sum);
  r.tables.push_back(t);

  // disaggregated rows: out of sample (the factors were fitted on aggregated rows only)
  Table dsum{
      "Disaggregated (prefill / decode workers), OUT OF SAMPLE: median |error| by GPU and framework (no factor was fitted on "
      "these rows)",
      {"gpu/framework", "rows", "tput med", "p90", "TPOT med", "p90", "TTFT med", "p90"},
      {},
      {false, true, true, true, true, true, true, true}};
  Table drow{"Disaggregated rows: predicted vs measured (factors of the GPU family fitted on aggregated rows)",
             {"gpu/framework", "prec", "prefill", "decode", "GPUs", "ISL/OSL", "conc", "tput/GPU", "pred", "TPOT ms", "pred", "TTFT s",
              "pred", "limit"},
             {},
             {false, false, false, false, true, false, true, true, true, true, true, true, true, false},
             {13, 12, 1, 4}};  // at 100 columns: the limit, TTFT prediction, precision and GPU count go first (the JSON has them)
  std::map<std::string, Errors> dgroups;
  Errors dall, dscaleup, dscaleout;  // by where the KV transfer runs (inside one scale-up domain or not)
  r.data["disaggregated"] = {{"rows", nlohmann::json::array()}, {"summary", nlohmann::json::array()}};
  for (const auto& x : v.disagg) {
    const MeasuredRow& row = x.row;
    const DisaggResult& p = x.pred;
    const bool scored = row.exclude.empty() && x.deployment.fits;
    if (scored) {
      PerfValidationRow e;
      e.ape_tput = x.ape_tput;
      e.ape_tpot = x.ape_tpot;
      e.ape_ttft = x.ape_ttft;
      dgroups[x.group].add(e);
      dall.add(e);
      (p.kv_scaleup ? dscaleup : dscaleout).add(e);
    }
    r.data["disaggregated"]["rows"].push_back(
        {{"id", row.id},
         {"group", x.group},
         {"family", x.family},
         {"run_url", row.run_url},
         {"image", row.image},
         {"date", row.date},
         {"fits", x.deployment.fits},
         {"excluded", row.exclude},
         {"prefill", layout_json(x.deployment.prefill)},
         {"prefill_workers", row.prefill.workers},
         {"decode", layout_json(x.deployment.decode)},
         {"decode_workers", row.decode.workers},
         {"measured", {{"tput_per_gpu", row.tput_total}, {"tpot_ms", row.tpot_ms}, {"ttft_s", row.ttft_s}}},
         {"predicted",
          {{"tput_per_gpu", p.total.tput_total_per_gpu},
           {"tpot_ms", p.total.tpot_ms},
           {"ttft_s", p.total.ttft_s},
           {"limit", p.limit},
           {"kv_transfer_ms", p.kv_transfer_ms},
           {"kv_link", p.kv_scaleup ? "scale-up" : "scale-out"},
           {"prefill_utilisation", p.prefill_utilisation},
           {"decode_batch_per_worker", p.decode_batch_per_worker}}},
         {"ape_pct", {{"tput", x.ape_tput}, {"tpot", x.ape_tpot}, {"ttft", x.ape_ttft}}}});
    drow.rows.push_back({x.group, row.precision, side_text(x.deployment.prefill_side, x.deployment.prefill),
                         side_text(x.deployment.decode_side, x.deployment.decode), std::to_string(row.gpus),
                         fmt::format("{:g}/{:g}", row.isl, row.osl), std::to_string(row.conc), fmt_num(row.tput_total),
                         scored ? fmt_num(p.total.tput_total_per_gpu) : (row.exclude.empty() ? "no fit" : "excl."), fmt_num(row.tpot_ms),
                         fmt_num(p.total.tpot_ms), fmt_num(row.ttft_s), fmt_num(p.total.ttft_s), p.limit});
  }
  auto dadd = [&](const std::string& name, const Errors& e) {
    dsum.rows.push_back({name, std::to_string(e.tput.size()), pct(percentile(e.tput, 0.5)), pct(percentile(e.tput, 0.9)),
                         pct(percentile(e.tpot, 0.5)), pct(percentile(e.tpot, 0.9)), pct(percentile(e.ttft, 0.5)),
                         pct(percentile(e.ttft, 0.9))});
    r.data["disaggregated"]["summary"].push_back(errors_json(name, e));
  };
  for (const auto& [k, e] : dgroups) dadd(k, e);
  dadd("all, KV on the scale-up link", dscaleup);
  dadd("all, KV on the scale-out link", dscaleout);
  dadd("all disaggregated", dall);
  r.tables.push_back(dsum);
  r.tables.push_back(drow);
  r.notes.push_back(fmt::format(
      "Rows: {} (InferenceX DeepSeek-R1-0528, single node, aggregated). In-sample errors use factors fitted on the same rows and are "
      "not validation; the unseen columns predict each family with one factor set fitted on the other families' rows (none of its "
      "own), applied through its own datasheet peaks.",
      fmt::join(v.sources, ", ")));
  if (!v.disagg_sources.empty())
    r.notes.push_back(fmt::format(
        "Disaggregated rows: {} ({} rows; prefill and decode on separate workers). Out of sample: predicted with the factors fitted on "
        "the aggregated rows of the same GPU family and engine; none of them fitted anything. Rows marked 'excl.' or 'no fit' are not "
        "scored.",
        fmt::join(v.disagg_sources, ", "), v.disagg.size()));
  r.assumptions.push_back(kModelAssumption);
  r.assumptions.push_back(
      "validation: request lengths at 0.9 x nominal (InferenceX draws 80-100%); KV cache fp8 for trt and bf16 otherwise; fp4 rows = routed "
      "experts in nvfp4 (NVIDIA) / mxfp4 (AMD)");
  add_lines(r, v.assumptions);
  if (!v.disagg.empty()) {
    int out = 0;
    for (const auto& x : v.disagg) out += x.pred.kv_scaleup ? 0 : 1;
    const PerfDisaggValidationRow& x = v.disagg.front();
    std::vector<std::string> a =
        disagg_assumptions(cat.gpu(x.row.gpu), embedded_efficiency().lookup(cat.gpu(x.row.gpu), x.row.engine), x.pred);
    a[1] = fmt::format(
        "disaggregated KV transfer: ISL tokens of KV at each side's attention-TP shard, one link per GPU, no contention: {} of the {} rows "
        "span more GPUs than their GPU's scale-up domain (scaleup_domain_gpus, data/gpus.yaml), so the transfer runs over the scale-out "
        "link at scaleout_gb_s per GPU (assumed, data/perf/efficiency.yaml) x comm_efficiency; the others over the scale-up link",
        out, v.disagg.size());
    add_lines(r, a);
  }
  r.data["assumptions"] = r.assumptions;
  return r;
}

}  // namespace k3plan
