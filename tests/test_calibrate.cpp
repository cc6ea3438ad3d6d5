// Calibration of the speed model (src/plan/calibrate.cpp): the fit, factors for a GPU without a
// calibration of its own, the entry keys, the engine's running-request cap and the published bands.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <k3plan/calibrate.hpp>
#include <k3plan/error.hpp>
#include <k3plan/perf_cmd.hpp>
#include <map>
#include <sstream>

#include "support.hpp"

using namespace k3plan;

namespace {
using k3plan_test::cat;
std::string source_file(const std::string& rel) {
  std::ifstream in(std::string(K3PLAN_SOURCE_DIR) + "/" + rel);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
// data/perf/efficiency.yaml without its amd-cdna3 entry: CDNA3 then has no calibration of its own
std::string efficiency_without_cdna3() {
  const std::string text = source_file("data/perf/efficiency.yaml");
  const auto at = text.find("  - family: amd-cdna3");
  REQUIRE(at != std::string::npos);
  return text.substr(0, at);
}
}  // namespace

TEST_CASE("the fit recovers the factors that generated a set of rows") {
  // the 9 H200 SGLang rows without MTP, their measurements replaced by the model's own predictions
  // at known factors: the fit, started from the priors, must find factors that reproduce them
  std::vector<MeasuredRow> rows;
  for (const auto& r : embedded_measured())
    if (r.gpu == "h200" && r.engine == "sglang" && r.spec == "none") rows.push_back(r);
  REQUIRE(rows.size() == 9);
  CalibrationSet set = prepare_calibration(cat(), rows);
  PerfEfficiency truth = embedded_efficiency().lookup(cat().gpu("h200"), "sglang");
  truth.hbm = 0.6;
  truth.prefill_mfu = 0.3;
  truth.layer_overhead_us = 90;
  truth.ttft_overhead_ms = 60;
  std::vector<std::size_t> all;
  for (std::size_t i = 0; i < set.rows.size(); ++i) {
    const RowScore s = score_row(set, set.rows[i], truth);
    set.rows[i].row.tput_total = s.pred.tput_total_per_gpu;
    set.rows[i].row.tpot_ms = s.pred.tpot_ms;
    set.rows[i].row.ttft_s = s.pred.ttft_s;
    all.push_back(i);
  }
  PerfEfficiency start = truth;  // the priors of the defaults block
  start.hbm = 0.7;
  start.prefill_mfu = 0.45;
  start.layer_overhead_us = 60;
  start.ttft_overhead_ms = 50;
  double objective = 1;
  const PerfEfficiency fit = fit_factors(set, all, start, &objective);
  CHECK(objective < 0.05);  // sum of |ln| errors over 9 rows
  CHECK(fit.hbm == Approx(0.6).epsilon(0.03));
  CHECK(fit.layer_overhead_us == Approx(90).epsilon(0.05));
  for (const auto& x : set.rows) {
    const RowScore s = score_row(set, x, fit);
    CHECK(s.ape_tput < 2);
    CHECK(s.ape_tpot < 2);
  }
}

TEST_CASE("a GPU whose family has no calibration gets derived factors marked uncalibrated") {
  const EfficiencyTable t = parse_efficiency(efficiency_without_cdna3(), "efficiency.yaml");
  const PerfEfficiency d = factors_for(t, cat().gpus(), cat().gpu("mi325x"), "sglang");
  CHECK_FALSE(d.calibrated);
  CHECK(d.derived_from == "amd-cdna4/sglang (mi355x)");  // same vendor, nearest datasheet
  REQUIRE_FALSE(d.assumptions.empty());
  CHECK(d.assumptions.front().find("UNCALIBRATED") != std::string::npos);
  // a GPU in no family at all is derived the same way
  Gpu mine = cat().gpu("h200");
  mine.id = "my-h200-variant";
  const PerfEfficiency m = factors_for(t, cat().gpus(), mine, "sglang");
  CHECK_FALSE(m.calibrated);
  CHECK(m.derived_from == "nvidia-hopper/sglang (h200)");
  // the embedded table calibrates CDNA3 on its own MI325X rows
  const PerfEfficiency own = factors_for(embedded_efficiency(), cat().gpus(), cat().gpu("mi300x"), "sglang");
  CHECK(own.calibrated);
  CHECK(own.calibrated_on == "mi325x");
}

TEST_CASE("derived factors come from an entry of the row's precision where one exists and FP4 runs at BF16 peak without FP4 cores") {
  // a CDNA4 entry keyed to fp4 beside the `any` one: an fp4 target takes it, an fp8 target never does
  const std::string text = efficiency_without_cdna3() +
                           "  - family: amd-cdna4\n    engine: sglang\n    precision: fp4\n    gpu: mi355x\n    rows: 1\n"
                           "    source: \"test entry\"\n    hbm: 0.5\n";
  const EfficiencyTable t = parse_efficiency(text, "efficiency.yaml");
  const Gpu& mi325x = cat().gpu("mi325x");
  const PerfEfficiency any = t.lookup(cat().gpu("mi355x"), "sglang", "fp8");
  CHECK(derive_factors(t, cat().gpus(), mi325x, "sglang", "amd-cdna3", "fp4").hbm == Approx(0.5));
  CHECK(derive_factors(t, cat().gpus(), mi325x, "sglang", "amd-cdna3", "fp8").hbm == Approx(any.hbm));
  CHECK(factors_for(t, cat().gpus(), mi325x, "sglang", "fp4").hbm == Approx(0.5));
  // MI325X (CDNA3) has no FP4 matrix cores: mxfp4 experts are dequantised and multiplied at the BF16
  // peak; MI355X (CDNA4) runs them natively at its FP4 peak; FP8 natively on both
  CHECK(gemm_tflops(mi325x, "mxfp4") == Approx(mi325x.tflops_bf16.value));
  CHECK(gemm_tflops(mi325x, "fp8-block") == Approx(mi325x.tflops_fp8.value));
  CHECK(gemm_tflops(cat().gpu("mi355x"), "mxfp4") == Approx(cat().gpu("mi355x").tflops_fp4.value));
}

TEST_CASE("perf prints an UNCALIBRATED line and the leave-one-family-out band for a GPU without its own calibration") {
  k3plan_test::TempDir dir;
  const std::string file = (dir.path() / "eff.yaml").string();
  std::ofstream(file) << efficiency_without_cdna3();
  PerfOptions o;
  o.model = "deepseek-r1-0528";
  o.gpu = "mi325x";
  o.gpus = 8;
  o.concurrency = 16;
  o.efficiency_file = file;
  const Report r = run_perf(cat(), o);
  CHECK_FALSE(r.data["calibrated"].get<bool>());
  CHECK(r.data["error_band"]["validation"] == "leave-one-family-out");
  CHECK(r.data["error_band"]["family"] == "any");
  bool note = false;
  for (const auto& n : r.notes) note = note || n.rfind("UNCALIBRATED", 0) == 0;
  CHECK(note);
  CHECK(r.tables.front().rows.front()[1] == "UNCALIBRATED");
  // with its own calibration: the family's leave-one-shape-out band, no such line
  o.efficiency_file.clear();
  const Report c = run_perf(cat(), o);
  CHECK(c.data["calibrated"].get<bool>());
  CHECK(c.data["error_band"]["validation"] == "leave-one-shape-out");
  CHECK(c.data["error_band"]["family"] == "amd-cdna3");
  for (const auto& n : c.notes) CHECK(n.find("UNCALIBRATED") == std::string::npos);
}

TEST_CASE("factors are keyed by family, engine, precision and engine version window, the most specific first") {
  const std::string yaml = R"(families:
  - {id: hop, gpus: [h200], source: "test"}
defaults:
  source: "priors"
  hbm: 0.7
entries:
  - {family: hop, engine: sglang, source: "any", hbm: 0.5}
  - {family: hop, engine: sglang, precision: fp4, source: "fp4", hbm: 0.6}
  - {family: hop, engine: sglang, versions: "0.5.10..", source: "new", hbm: 0.8}
  - {family: hop, engine: sglang, precision: fp4, versions: "..0.5.9", source: "old fp4", hbm: 0.4}
)";
  const EfficiencyTable t = parse_efficiency(yaml, "t.yaml");
  const Gpu& g = cat().gpu("h200");
  CHECK(t.lookup(g, "sglang").hbm == 0.5);
  CHECK(t.lookup(g, "sglang", "fp8").hbm == 0.5);
  CHECK(t.lookup(g, "sglang", "fp4").hbm == 0.6);
  CHECK(t.lookup(g, "sglang", "fp8", "0.5.12").hbm == 0.8);  // 0.5.12 > 0.5.10 numerically, not as text
  CHECK(t.lookup(g, "sglang", "fp4", "0.5.9").hbm == 0.4);
  CHECK(t.lookup(g, "sglang", "fp4", "0.5.12").hbm == 0.6);
  CHECK(t.lookup(g, "sglang", "fp8", "0.5.9").hbm == 0.5);
  CHECK_THROWS_AS(parse_efficiency(yaml + "  - {family: hop, engine: sglang, source: \"dup\", hbm: 0.5}\n", "t.yaml"), InputError);
  CHECK_THROWS_AS(parse_efficiency(yaml + "  - {family: hop, engine: vllm, versions: \"0.5\", source: \"x\"}\n", "t.yaml"), InputError);
  CHECK_THROWS_AS(parse_efficiency(yaml + "  - {family: hop, engine: vllm, borrowed_from: x, source: \"x\"}\n", "t.yaml"), InputError);
}

TEST_CASE("the engine's running-request cap bounds the batch, and the flag raises it") {
  PerfOptions o;
  o.model = "deepseek-r1-0528";
  o.gpu = "h200";
  o.gpus = 8;
  o.engine = "vllm";
  o.isl = 1024;
  o.osl = 1024;
  o.concurrency = 2048;
  const Report r = run_perf(cat(), o);
  // vLLM's default max_num_seqs on a big GPU is 1024 (engines/vllm.cpp, arg_utils.py); the pool holds more
  CHECK(r.data["max_running_engine"].get<int>() == 1024);
  CHECK(r.data["max_running_pool"].get<int>() > 1024);
  CHECK(r.data["max_running"].get<int>() == 1024);
  CHECK(r.data["breakdown"]["queued"].get<bool>());
  o.max_running_requests = 4096;
  const Report big = run_perf(cat(), o);
  CHECK(big.data["max_running"].get<int>() == big.data["max_running_pool"].get<int>());
  CHECK(big.data["tpot_ms"].get<double>() > r.data["tpot_ms"].get<double>());  // a bigger batch per step
}

TEST_CASE("perf-validate: leave-one-family-out beside in-sample for every family with 10 or more rows") {
  const Report r = run_perf_validate(cat());
  std::map<std::string, nlohmann::json> fam;
  for (const auto& f : r.data["families"]) fam[f["group"].get<std::string>()] = f;
  for (const char* k : {"amd-cdna3/sglang", "amd-cdna4/sglang", "amd-cdna4/atom", "nvidia-blackwell/sglang", "nvidia-blackwell/trt",
                        "nvidia-hopper/sglang", "nvidia-hopper/trt"}) {
    INFO(k);
    REQUIRE(fam.count(k));
    const auto& f = fam[k];
    CHECK(f["rows"].get<int>() >= 10);
    // in-sample is fitted on the same rows: it must come out below the unseen error
    CHECK(f["tput_median_ape_pct"].get<double>() < f["unseen_tput_median_ape_pct"].get<double>());
    CHECK(f["unseen_from"].get<std::string>().find(std::string(k).substr(0, std::string(k).find('/'))) == std::string::npos);
  }
  // every row's in-sample factors are its own family's (none borrowed)
  for (const auto& x : r.data["rows"]) CHECK(x["calibrated"].get<bool>());
  // regression guards at what is reached today with the fit-on-the-others rule (fit_other_families;
  // the issue's target is 20% for every family), on rows with the KV-cache dtype each run used
  // (docs/sources/inferencex-kv-audit.md): the TensorRT-LLM families, Blackwell SGLang and both
  // CDNA4 engines reach it; Hopper SGLang (the one family whose rows ran a bf16 KV cache, predicted
  // from factors fitted on FP8-KV rows) and CDNA3 do not: see docs/perf-validation.md, issue 16
  for (const char* k : {"nvidia-hopper/trt", "nvidia-blackwell/sglang", "nvidia-blackwell/trt", "amd-cdna4/sglang", "amd-cdna4/atom"}) {
    INFO(k);
    CHECK(fam[k]["unseen_tput_median_ape_pct"].get<double>() <= 20);
    CHECK(fam[k]["unseen_tpot_median_ape_pct"].get<double>() <= 20);
  }
  CHECK(fam["amd-cdna3/sglang"]["tput_median_ape_pct"].get<double>() < 10);
  // 8.3% / 6.1% (27.2% / 45.2% when CDNA4 borrowed CDNA3's fitted entry)
  CHECK(fam["amd-cdna4/sglang"]["unseen_tput_median_ape_pct"].get<double>() < 9.5);
  CHECK(fam["amd-cdna4/sglang"]["unseen_tpot_median_ape_pct"].get<double>() < 7);
  // 16.3% / 16.6% (18.8% / 18.9% before the KV audit; 28.9% / 46.4% from CDNA3's entry)
  CHECK(fam["amd-cdna4/atom"]["unseen_tput_median_ape_pct"].get<double>() < 17.5);
  CHECK(fam["amd-cdna4/atom"]["unseen_tpot_median_ape_pct"].get<double>() < 17.5);
  // Hopper SGLang from the others: 20.2% / 26.4% (13.6% / 18.8% while the other families' rows were
  // wrongly taken as bf16-KV runs)
  CHECK(fam["nvidia-hopper/sglang"]["unseen_tput_median_ape_pct"].get<double>() < 21.5);
  CHECK(fam["nvidia-hopper/sglang"]["unseen_tpot_median_ape_pct"].get<double>() < 27.5);
  // CDNA3 from the others: 37.8% / 21.7% (48.0% / 28.8% from CDNA4's entry); the excluded MI325X
  // run is not among the scored rows
  CHECK(fam["amd-cdna3/sglang"]["rows"].get<int>() == 10);
  CHECK(fam["amd-cdna3/sglang"]["unseen_tput_median_ape_pct"].get<double>() < 39);
  CHECK(fam["amd-cdna3/sglang"]["unseen_tpot_median_ape_pct"].get<double>() < 23);
}

TEST_CASE("leave-one-family-out factors are fitted on the other families only: the held-out rows do not move them") {
  const std::vector<MeasuredRow> all = embedded_measured();
  std::vector<MeasuredRow> others, perturbed = all;
  for (const auto& r : all)
    if (r.gpu != "mi325x" && r.gpu != "mi300x") others.push_back(r);
  for (auto& r : perturbed)
    if (r.gpu == "mi325x") r.tpot_ms *= 3;  // a held-out row three times slower changes nothing
  const Gpu& mi325x = cat().gpu("mi325x");
  const EfficiencyTable& t = embedded_efficiency();
  const PerfEfficiency a = fit_other_families(prepare_calibration(cat(), all), t, cat().gpus(), mi325x, "sglang", "amd-cdna3");
  const PerfEfficiency b = fit_other_families(prepare_calibration(cat(), others), t, cat().gpus(), mi325x, "sglang", "amd-cdna3");
  const PerfEfficiency c = fit_other_families(prepare_calibration(cat(), perturbed), t, cat().gpus(), mi325x, "sglang", "amd-cdna3");
  for (const PerfEfficiency* x : {&b, &c}) {
    CHECK(x->hbm == a.hbm);
    CHECK(x->layer_overhead_us == a.layer_overhead_us);
    CHECK(x->prefill_mfu == a.prefill_mfu);
    CHECK(x->spec_acceptance == a.spec_acceptance);
  }
  CHECK_FALSE(a.calibrated);
  CHECK(a.derived_from.find("amd-cdna3") == std::string::npos);
  CHECK(a.derived_from.find("amd-cdna4") != std::string::npos);
  CHECK(a.derived_from.find("nvidia-hopper") != std::string::npos);
  // ATOM runs on CDNA4 only: held out, CDNA4 gets the other families' sglang rows
  const PerfEfficiency atom =
      fit_other_families(prepare_calibration(cat(), all), t, cat().gpus(), cat().gpu("mi355x"), "atom", "amd-cdna4");
  CHECK(atom.engine == "sglang");
  CHECK(atom.derived_from.find("amd-cdna4") == std::string::npos);
}

TEST_CASE("the published bands are current: their leave-one-family-out rows are what validation computes now") {
  const PerfValidation v = validate_perf(cat());
  std::map<std::string, std::vector<double>> tput, tpot;
  for (const auto& x : v.rows) {
    if (!x.row.exclude.empty()) continue;
    tput[x.row.engine].push_back(x.unseen_tput);
    tpot[x.row.engine].push_back(x.unseen_tpot);
  }
  int checked = 0;
  for (const auto& b : embedded_accuracy()) {
    if (b.family != "any") continue;
    INFO(b.engine);
    CHECK(b.rows == static_cast<int>(tput[b.engine].size()));
    CHECK(b.tput_median_pct == Approx(percentile(tput[b.engine], 0.5)).margin(0.051));
    CHECK(b.tpot_p90_pct == Approx(percentile(tpot[b.engine], 0.9)).margin(0.051));
    ++checked;
  }
  CHECK(checked == 3);  // sglang, trt, atom
  // every calibrated family and engine has its leave-one-shape-out band
  for (const auto& e : embedded_efficiency().entries) {
    INFO(e.family << "/" << e.engine);
    const PerfBand* b = band_for(embedded_accuracy(), e.family, e.engine, true);
    REQUIRE(b);
    CHECK(b->family == e.family);
    CHECK(b->validation == "leave-one-shape-out");
  }
}

TEST_CASE("chunked prefill mixed into decode steps costs no more than stalling decode for it, and holds Little's law") {
  const PerfModel pm = prepare_perf_model(cat().model("deepseek-r1-0528"));
  const Gpu& g = cat().gpu("h200");
  const PerfEfficiency eff = embedded_efficiency().lookup(g, "sglang");
  PerfConfig c;
  c.layout.tp = 8;
  c.layout.ep = 8;
  c.prefill_chunk = 8192;
  for (double isl : {1024.0, 8192.0})
    for (int conc : {1, 16, 64, 256}) {
      INFO(isl << " tokens, " << conc << " users");
      c.isl = isl;
      c.osl = 1024;
      c.concurrency = conc;
      c.mixed_prefill = false;
      const PerfResult stall = estimate_perf(pm, g, eff, c);
      c.mixed_prefill = true;
      const PerfResult mixed = estimate_perf(pm, g, eff, c);
      // within 3%: the mixed step runs its prompt tokens at decode_mfu, the separate prefill at
      // prefill_mfu (0.35 vs 0.41 here), which can outweigh the weight reads it saves
      CHECK(mixed.tpot_ms <= stall.tpot_ms * 1.03);
      CHECK(mixed.prefill_share <= stall.prefill_share + 1e-9);
      CHECK(mixed.tput_output_per_gpu * mixed.gpus / 1024 * mixed.e2e_s == Approx(conc).epsilon(1e-3));
    }
  // one user: nothing to mix with, the two agree
  c.isl = 1024;
  c.concurrency = 1;
  c.mixed_prefill = false;
  const double one_stall = estimate_perf(pm, g, eff, c).tpot_ms;
  c.mixed_prefill = true;
  CHECK(estimate_perf(pm, g, eff, c).tpot_ms == Approx(one_stall).epsilon(0.01));
}

TEST_CASE("plan --risk p90 meets the SLA at the pessimistic end of each band and costs at least the median plan") {
  PlanOptions o;
  o.model = "deepseek-r1-0528";
  o.gpus_from = {"h200", "mi355x"};
  o.isl = 1024;
  o.osl = 1024;
  o.tpot_ms = 30;
  const Report med = run_plan(cat(), o);
  o.risk = "p90";
  const Report p90 = run_plan(cat(), o);
  REQUIRE(med.exit_code == 0);
  REQUIRE(p90.exit_code == 0);
  const auto& w = p90.data["winner"];
  const std::string family = w["gpu"] == "h200" ? "nvidia-hopper" : "amd-cdna4";
  const PerfBand* b = band_for(embedded_accuracy(), family, w["engine"], true);
  REQUIRE(b);
  CHECK(w["tpot_ms"].get<double>() * (1 + b->tpot_p90_pct / 100) <= 30 * (1 + 1e-9));
  CHECK(w["usd_per_million_tokens"].get<double>() >= med.data["winner"]["usd_per_million_tokens"].get<double>());
  o.risk = "p99";
  CHECK_THROWS_AS(run_plan(cat(), o), InputError);
}
