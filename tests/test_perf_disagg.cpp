// Disaggregated serving (prefill and decode workers on separate GPUs): `k3plan perf --prefill-* /
// --decode-*` through the real binary, the estimator's mechanism (calc/perf.cpp estimate_disagg), and
// the out-of-sample validation rows (data/perf/measured-disagg-dsr1.yaml, measured-disagg-gb.yaml),
// which nothing is fitted on.
#include <catch2/catch.hpp>
#include <cmath>
#include <k3plan/calibrate.hpp>
#include <k3plan/error.hpp>
#include <k3plan/perf.hpp>
#include <k3plan/parallel.hpp>
#include <k3plan/perf_cmd.hpp>

#include "support.hpp"

using namespace k3plan;
using k3plan_test::cat;
using k3plan_test::expect_usage_error;
using k3plan_test::run;

namespace {
nlohmann::json perf_json(const std::vector<std::string>& extra) {
  std::vector<std::string> args{"perf", "-m", "deepseek-r1-0528", "-f", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run(args);
  INFO(r.cmdline << "\n" << r.err);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out);
}
// GB200 Dynamo-TRT with NVFP4 experts and an FP8 KV cache: `prefill_workers` prefill workers of
// TP4 EP4 with DP attention and one decode worker of TP `decode_tp` = EP with DP attention, then `rest`
std::vector<std::string> gb200_trt_fp4(int prefill_workers, int decode_tp, const std::vector<std::string>& rest) {
  std::vector<std::string> a{"-g", "gb200", "--engine", "trt", "--expert-precision", "nvfp4", "--kv-dtype", "fp8",
                             "--prefill-workers", std::to_string(prefill_workers), "--prefill-tp", "4", "--prefill-ep", "4",
                             "--prefill-dp-attention", "--decode-tp", std::to_string(decode_tp), "--decode-ep",
                             std::to_string(decode_tp), "--decode-dp-attention"};
  a.insert(a.end(), rest.begin(), rest.end());
  return a;
}
const nlohmann::json& group(const nlohmann::json& summary, const std::string& name) {
  for (const auto& s : summary)
    if (s["group"] == name) return s;
  FAIL("no summary row " << name);
  return summary[0];
}
}  // namespace

TEST_CASE("a disaggregated DeepSeek-R1 deployment on GB200 predicted through the CLI from its inputs") {
  // 2 prefill workers of TP4 EP4 DP-attention, 1 decode worker of TP16 EP16 DP-attention, MTP 3 at 0.5
  const auto j = perf_json(gb200_trt_fp4(2, 16, {"--isl", "8192", "--osl", "1024", "-c", "256", "--spec-tokens", "3", "--spec-acceptance", "0.5"}));
  CHECK(j["disaggregated"].get<bool>());
  CHECK(j["gpus"].get<int>() == 24);
  CHECK(j["prefill"]["gpus"].get<int>() == 8);
  CHECK(j["decode"]["gpus"].get<int>() == 16);
  const auto& b = j["breakdown"];
  const double rps = j["requests_per_s"].get<double>();
  const auto& tp = j["throughput_per_gpu"];
  // throughput per GPU = the system's request rate x tokens / all GPUs; per side as InferenceX counts it
  CHECK(tp["total"].get<double>() == Approx(rps * (8192 + 1024) / 24));
  CHECK(tp["input_per_prefill_gpu"].get<double>() == Approx(rps * 8192 / 8));
  CHECK(tp["output_per_decode_gpu"].get<double>() == Approx(rps * 1024 / 16));
  // KV transfer: ISL tokens of the KV calculator's per-GPU bytes (MLA latent replicated on every
  // rank), over NVLink (24 GPUs inside the NVL72 domain): 1800 / 2 GB/s one way x comm_efficiency
  const Gpu& g = cat().gpu("gb200");
  const PerfEfficiency eff = embedded_efficiency().lookup(g, "trt", "fp4");
  const Model m = with_precision(cat().model("deepseek-r1-0528"), "", "nvfp4");
  const PerfModel pm = prepare_perf_model(m, "fp8");
  const double kv = pm.kv_at(1).bytes_per_sequence(8192);
  CHECK(kv == Approx(pm.kv_at(4).bytes_per_sequence(8192)));  // MLA: the same on either side
  CHECK(b["kv_bytes_per_request_per_gpu"].get<double>() == Approx(kv));
  CHECK(b["kv_link"] == "scale-up");
  CHECK(b["kv_link_gb_s"].get<double>() == Approx(900 * eff.comm_efficiency));
  CHECK(b["kv_transfer_ms"].get<double>() == Approx((eff.comm_latency_us * 1e-6 + kv / (900e9 * eff.comm_efficiency)) * 1e3));
  // decode: the aggregated decode step of one TP16 EP16 DP16 worker at its batch, spread over 16 ranks
  const double per_worker = b["decode_batch_per_worker"].get<double>();
  CHECK(b["decode_batch_per_rank"].get<double>() == Approx(per_worker / 16));
  PerfConfig dc;
  dc.layout.tp = 16;
  dc.layout.ep = 16;
  dc.layout.dp = 16;
  dc.layout.dp_attention = true;
  dc.spec_tokens = 3;
  dc.spec_acceptance = 0.5;
  const DecodeStep step = decode_step(pm, g, eff, dc, per_worker, 8192 + 1024 / 2.0);
  CHECK(b["decode_step_ms"].get<double>() == Approx(step.t_step_ms));
  CHECK(b["tokens_per_step"].get<double>() == Approx(1.875));  // (1 - 0.5^4) / (1 - 0.5)
  const double tpot = j["tpot_ms"].get<double>();
  CHECK(tpot == Approx(step.t_step_ms / 1.875));
  // Little's law on the decode side, and the closed loop: 256 users = rate x end-to-end latency
  CHECK(per_worker == Approx(rps * 1023 * tpot / 1e3).epsilon(1e-4));
  CHECK(rps * j["e2e_latency_s"].get<double>() == Approx(256).epsilon(1e-4));
  // TTFT = prefill wait + the request's prefill batch + KV transfer + half a decode step + overhead
  CHECK(j["ttft_s"].get<double>() ==
        Approx(b["prefill_wait_s"].get<double>() + b["prefill_batch_ms"].get<double>() / 1e3 + b["kv_transfer_ms"].get<double>() / 1e3 +
               0.5 * step.t_step_ms / 1e3 + eff.ttft_overhead_ms / 1e3));
  // one prompt alone: the aggregated prefill of one TP4 EP4 DP4 worker (TensorRT-LLM's 8192-token batch)
  PerfConfig pc;
  pc.layout.tp = 4;
  pc.layout.ep = 4;
  pc.layout.dp = 4;
  pc.layout.dp_attention = true;
  pc.prefill_chunk = 8192;
  CHECK(b["prefill_alone_ms"].get<double>() == Approx(prefill_ms(pm, g, eff, pc, 8192)));
  CHECK(j["fits"].get<bool>());
}

TEST_CASE("disaggregated: outside one scale-up domain the KV cache crosses the scale-out link") {
  const auto j = perf_json(
      {"-g", "b200", "--prefill-tp", "8", "--decode-tp", "8", "--decode-workers", "2", "--isl", "1024", "--osl", "1024", "-c", "64"});
  const PerfEfficiency eff = embedded_efficiency().lookup(cat().gpu("b200"), "sglang", "fp8");
  CHECK(j["gpus"].get<int>() == 24);
  CHECK(j["breakdown"]["kv_link"] == "scale-out");
  CHECK(j["breakdown"]["kv_link_gb_s"].get<double>() == Approx(eff.scaleout_gb_s * eff.comm_efficiency));
  // 64 users over two decode workers of TP8 (no DP attention): one batch per worker
  CHECK(j["breakdown"]["decode_batch_per_rank"].get<double>() == Approx(j["breakdown"]["decode_batch_per_worker"].get<double>()));
}

TEST_CASE("disaggregated: more decode workers shorten TPOT and fewer prefill workers lengthen TTFT") {
  auto with = [&](const std::string& isl, std::vector<std::string> extra) {
    std::vector<std::string> a{"-g", "h200", "--prefill-tp", "8", "--decode-tp", "8", "--isl", isl, "--osl", "1024"};
    a.insert(a.end(), extra.begin(), extra.end());
    return perf_json(a);
  };
  // 128 users of 1k/1k: the decode KV pools are not full, so spreading them over 3 workers shrinks the batch
  const auto one = with("1024", {"-c", "128", "--decode-workers", "1"});
  const auto three = with("1024", {"-c", "128", "--decode-workers", "3"});
  CHECK(one["limit"] == "users");
  CHECK(three["breakdown"]["decode_batch_per_worker"].get<double>() < one["breakdown"]["decode_batch_per_worker"].get<double>());
  CHECK(three["tpot_ms"].get<double>() < one["tpot_ms"].get<double>());
  // 256 users of 8k prompts: one TP8 prefill worker saturates, two share the queue
  const auto p1 = with("8192", {"-c", "256", "--prefill-workers", "1", "--decode-workers", "3"});
  const auto p2 = with("8192", {"-c", "256", "--prefill-workers", "2", "--decode-workers", "3"});
  CHECK(p1["ttft_s"].get<double>() > p2["ttft_s"].get<double>());
  CHECK(p1["breakdown"]["prefill_utilisation"].get<double>() > p2["breakdown"]["prefill_utilisation"].get<double>());
  CHECK(p1["limit"] == "prefill");
  // 8k prompts on one TP8 decode worker of H200 (bf16 KV): its KV pool, not the users, sets the rate
  const auto kv = with("8192", {"-c", "256", "--prefill-workers", "2", "--decode-workers", "1"});
  CHECK(kv["limit"] == "decode");
  CHECK(kv["breakdown"]["decode_batch_per_worker"].get<double>() == Approx(kv["breakdown"]["decode_max_running_per_worker"].get<double>()));
}

TEST_CASE("disaggregated perf: bad input exits 2 with one line") {
  const std::vector<std::string> m{"perf", "-m", "deepseek-r1-0528", "-g", "b200"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = m;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  expect_usage_error(with({"--decode-tp", "8"}), {"--prefill-tp"});
  expect_usage_error(with({"--prefill-workers", "2", "--prefill-tp", "8"}), {"--decode-tp"});
  expect_usage_error(with({"--prefill-tp", "8", "--decode-tp", "8", "--tp", "8"}), {"per side"});
  expect_usage_error(with({"--prefill-tp", "8", "--decode-tp", "8", "-n", "16"}), {"per side"});
  expect_usage_error(with({"--prefill-tp", "8", "--decode-tp", "8", "--decode-ep", "16"}), {"--decode-ep 16"});
  expect_usage_error(with({"--prefill-tp", "8", "--decode-tp", "8", "--decode-workers", "0"}));
  expect_usage_error(with({"--engine", "vllm", "--prefill-tp", "8", "--decode-tp", "8", "--decode-dp-attention"}), {"vllm"});
}

TEST_CASE("a pool given by its GPU count is the same pool as workers x TP") {
  // --decode-gpus alone is one worker of that TP; beside --decode-tp it sets the workers
  const std::vector<std::string> base{"-g", "h200", "--isl", "1024", "--osl", "1024", "-c", "64"};
  auto with = [&](std::vector<std::string> pools) {
    std::vector<std::string> a = base;
    a.insert(a.end(), pools.begin(), pools.end());
    return perf_json(a);
  };
  const auto by_workers = with({"--prefill-workers", "2", "--prefill-tp", "8", "--decode-tp", "16"});
  const auto by_gpus = with({"--prefill-gpus", "16", "--prefill-tp", "8", "--decode-gpus", "16"});
  CHECK(by_gpus["gpus"] == 32);
  CHECK(by_gpus["gpus"] == by_workers["gpus"]);
  CHECK(by_gpus["tpot_ms"].get<double>() == by_workers["tpot_ms"].get<double>());
  CHECK(by_gpus["ttft_s"].get<double>() == by_workers["ttft_s"].get<double>());
  // --prefill-gpus with --prefill-workers sets the TP: 2 workers of TP 8 again
  const auto by_split = with({"--prefill-gpus", "16", "--prefill-workers", "2", "--decode-gpus", "16"});
  CHECK(by_split["tpot_ms"].get<double>() == by_workers["tpot_ms"].get<double>());
  CHECK(by_split["ttft_s"].get<double>() == by_workers["ttft_s"].get<double>());
}

TEST_CASE("a pool's GPU count that does not split into its workers is a usage error naming the flags") {
  CHECK(pool_size("decode", 0, 0, 16, 64).workers == 1);
  CHECK(pool_size("decode", 0, 0, 16, 64).tp == 16);
  CHECK(pool_size("decode", 0, 4, 16, 64).workers == 4);
  CHECK(pool_size("decode", 2, 0, 16, 64).tp == 8);
  CHECK(pool_size("decode", 3, 5, 0, 64).workers == 3);  // no GPU count: as given
  CHECK_THROWS_WITH(pool_size("prefill", 0, 8, 12, 64), Catch::Contains("--prefill-gpus 12 is not a multiple of --prefill-tp 8"));
  CHECK_THROWS_WITH(pool_size("prefill", 3, 8, 16, 64), Catch::Contains("2 workers, not --prefill-workers 3"));
  CHECK_THROWS_WITH(pool_size("decode", 3, 0, 16, 64), Catch::Contains("--decode-workers 3"));
  // bounded like the flags they stand for: workers per pool, a worker's TP
  CHECK_THROWS_WITH(pool_size("prefill", 0, 1, 65, 64), Catch::Contains("at most 64 workers"));
  CHECK_THROWS_WITH(pool_size("decode", 0, 0, 8192, 64), Catch::Contains("TP 8192: at most 4096"));
  expect_usage_error({"launch", "-m", "gpt-oss-120b", "-g", "h100", "--prefill-gpus", "262144", "--prefill-tp", "1", "--decode-tp", "1"},
                     {"at most 64 workers"});
  const std::vector<std::string> m{"perf", "-m", "deepseek-r1-0528", "-g", "h200"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = m;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  expect_usage_error(with({"--prefill-gpus", "12", "--prefill-tp", "8", "--decode-gpus", "16"}), {"--prefill-gpus 12"});
  expect_usage_error(with({"--prefill-gpus", "8", "--decode-workers", "2"}), {"--decode-tp or --decode-gpus"});
  expect_usage_error(with({"--prefill-gpus", "0", "--decode-gpus", "8"}));
}

TEST_CASE("disaggregated rows are never fitted on and are validated out of sample") {
  std::vector<std::string> src;
  const auto rows = embedded_measured(&src, true);
  // every disagg = 1 row of the latest InferenceX fixture (90) and every GB200 / GB300 one of the
  // InferenceX API snapshot (92, data/perf/measured-disagg-gb.yaml)
  CHECK(rows.size() == 182);
  REQUIRE(src.size() == 2);
  CHECK(src[0] == "data/perf/measured-disagg-dsr1.yaml");
  CHECK(src[1] == "data/perf/measured-disagg-gb.yaml");
  for (const auto& r : embedded_measured()) {
    CHECK_FALSE(r.disagg);    // what calibration and bench/perf_fit read
    CHECK(r.gpu != "gb200");  // GB200 / GB300 calibrate nothing: Blackwell is fitted on B200 rows
    CHECK(r.gpu != "gb300");
  }
  int excluded = 0, nvl72 = 0;
  for (const auto& r : rows) {
    INFO(r.id);
    CHECK(r.disagg);
    CHECK(r.run_url.rfind("https://github.com/SemiAnalysisAI/InferenceX/actions/runs/", 0) == 0);
    CHECK(r.gpus == r.prefill.gpus + r.decode.gpus);
    // throughput per GPU over all GPUs = input per prefill GPU and output per decode GPU, weighted (to the rounding)
    CHECK(r.tput_total * r.gpus ==
          Approx(r.tput_input * r.prefill.gpus + r.tput_output * r.decode.gpus).epsilon(0.003).margin(0.1 * r.gpus));  // 0.1 tok/s rounding
    // each side's GPUs = workers x the worker layout's GPUs, except the rows marked excluded
    const int pg = r.prefill.workers * disagg_worker_layout({r.prefill.workers, r.prefill.tp, r.prefill.ep, r.prefill.dp_attention}).tp;
    const int dg = r.decode.workers * disagg_worker_layout({r.decode.workers, r.decode.tp, r.decode.ep, r.decode.dp_attention}).tp;
    if (r.exclude.empty()) {
      CHECK(pg == r.prefill.gpus);
      CHECK(dg == r.decode.gpus);
    } else {
      ++excluded;
      CHECK((pg != r.prefill.gpus || dg != r.decode.gpus));
    }
    if (r.gpu == "gb200" || r.gpu == "gb300") {
      ++nvl72;
      CHECK_FALSE(r.image.empty());
    }
  }
  CHECK(excluded == 13);  // one MI355X row, 12 GB200 Dynamo-SGLang rows of December 2025 (placeholder tp 1 / ep 1)
  CHECK(nvl72 == 92);
  CHECK_THROWS_AS(prepare_calibration(cat(), {rows.front()}), InputError);
  CHECK_THROWS_AS(prepare_calibration(cat(), {rows.back()}), InputError);

  const Report r = run_perf_validate(cat());
  const auto& d = r.data["disaggregated"];
  CHECK(d["rows"].size() == 182);
  const auto& all = group(d["summary"], "all disaggregated");
  CHECK(all["rows"].get<int>() == 162);
  // what is reached today, out of sample (docs/perf-validation.md): about 20% / 19% median
  CHECK(all["tput_median_ape_pct"].get<double>() < 25);
  CHECK(all["tpot_median_ape_pct"].get<double>() < 25);
  for (const char* gname :
       {"b200/dynamo-trt", "b200/dynamo-sglang", "h200/dynamo-trt", "h200/dynamo-sglang", "mi355x/mori-sglang", "gb200/dynamo-trt",
        "gb200/dynamo-trt+mtp", "gb200/dynamo-sglang", "gb300/dynamo-trt", "gb300/dynamo-trt+mtp", "gb300/dynamo-sglang"}) {
    INFO(gname);
    CHECK(group(d["summary"], gname)["rows"].get<int>() >= 4);
  }
  // the GB200 / GB300 deployments fit in one NVL72 rack: their KV transfer is on NVLink, the
  // B200 / H200 / MI355X ones span more than an 8-GPU domain
  CHECK(group(d["summary"], "all, KV on the scale-up link")["rows"].get<int>() == 73);
  CHECK(group(d["summary"], "all, KV on the scale-out link")["rows"].get<int>() == 89);
  for (const auto& x : d["rows"]) {
    const std::string g = x["id"].get<std::string>().substr(0, 5);
    CHECK(x["predicted"]["kv_link"] == ((g == "gb200" || g == "gb300") ? "scale-up" : "scale-out"));
  }
  // the aggregated tables are what they were: disaggregated rows are in their own section
  CHECK(r.data["rows"].size() == 165);
}

TEST_CASE("a measured GB200 NVL72 disaggregated InferenceX row through perf --prefill-* / --decode-*") {
  // gb200 dynamo-trt fp4, 1 prefill worker TP4 EP4 DPA + 1 decode worker TP32 EP32 DPA, 1k/8k, 4,096
  // users (data/perf/measured-disagg-gb.yaml; InferenceX run 23438524239): 5,082.8 tok/s/GPU, TPOT
  // 23.68 ms measured
  const std::string id = "gb200/dynamo-trt/fp4/none/p1xtp4ep4dpa-d1xtp32ep32dpa/1024-8192/c4096";
  const MeasuredRow* row = nullptr;
  const auto rows = embedded_measured(nullptr, true);
  for (const auto& x : rows)
    if (x.id == id) row = &x;
  REQUIRE(row != nullptr);
  CHECK(row->tput_total == Approx(5082.8));
  CHECK(row->tpot_ms == Approx(23.68));
  const auto j = perf_json(gb200_trt_fp4(1, 32, {"--isl", "1024", "--osl", "8192", "-c", "4096", "--length-scale", "0.9"}));
  CHECK(j["gpus"].get<int>() == row->gpus);
  CHECK(j["prefill"]["gpus"].get<int>() == row->prefill.gpus);
  CHECK(j["decode"]["gpus"].get<int>() == row->decode.gpus);
  // 36 GPUs inside the 72-GPU NVLink domain (data/gpus.yaml scaleup_domain_gpus): KV on NVLink
  CHECK(j["breakdown"]["kv_link"] == "scale-up");
  const double tput = j["throughput_per_gpu"]["total"].get<double>(), tpot = j["tpot_ms"].get<double>();
  // the user's command predicts what perf-validate publishes for this row
  const Report r = run_perf_validate(cat());
  const nlohmann::json* v = nullptr;
  for (const auto& x : r.data["disaggregated"]["rows"])
    if (x["id"] == id) v = &x;
  REQUIRE(v != nullptr);
  CHECK(tput == Approx((*v)["predicted"]["tput_per_gpu"].get<double>()));
  CHECK(tpot == Approx((*v)["predicted"]["tpot_ms"].get<double>()));
  CHECK(j["ttft_s"].get<double>() == Approx((*v)["predicted"]["ttft_s"].get<double>()));
  // and the row's error lies inside its group's published p90 (docs/perf-validation.md): today
  // -10% on throughput, +19% on TPOT
  const auto& gsum = group(r.data["disaggregated"]["summary"], "gb200/dynamo-trt");
  CHECK(std::abs(tput - row->tput_total) / row->tput_total * 100 <= gsum["tput_p90_ape_pct"].get<double>());
  CHECK(std::abs(tpot - row->tpot_ms) / row->tpot_ms * 100 <= gsum["tpot_p90_ape_pct"].get<double>());
  CHECK(std::abs(tpot - row->tpot_ms) / row->tpot_ms < 0.25);
  CHECK(std::abs(tput - row->tput_total) / row->tput_total < 0.25);

  // the 72-GPU domain is what keeps the decode worker's EP32 all-to-all and the KV transfer on
  // NVLink: the same deployment on a GPU whose domain were 8 GPUs crosses the scale-out link
  Gpu g8 = cat().gpu("gb200");
  REQUIRE(g8.scaleup_domain_gpus == 72);
  g8.scaleup_domain_gpus = 8;
  const Model m = with_precision(cat().model("deepseek-r1-0528"), "", "nvfp4");
  const PerfModel pm = prepare_perf_model(m, "fp8");
  const PerfEfficiency eff = embedded_efficiency().lookup(cat().gpu("gb200"), "trt", "fp4");
  EngineSettings s;
  s.engine = layout_engine("trt");
  s.kv_dtype = "fp8";
  const DisaggSide p{1, 4, 4, true}, dd{1, 32, 32, true};
  const DisaggResult nvl72 =
      predict_disagg(pm, cat().gpu("gb200"), eff, disagg_deployment(m, cat().gpu("gb200"), "trt", p, dd, s, 1024, 8192, 0.9, 4096), 0, 0);
  const DisaggResult hgx = predict_disagg(pm, g8, eff, disagg_deployment(m, g8, "trt", p, dd, s, 1024, 8192, 0.9, 4096), 0, 0);
  CHECK(nvl72.total.tpot_ms == Approx(tpot));
  CHECK(nvl72.kv_scaleup);
  CHECK_FALSE(hgx.kv_scaleup);
  CHECK(hgx.kv_transfer_ms > nvl72.kv_transfer_ms);
  CHECK(hgx.total.tpot_ms > nvl72.total.tpot_ms);
}
