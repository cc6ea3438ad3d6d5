// `k3plan calibrate` through the real binary: per benchmark format (vLLM --save-result, SGLang
// bench_serving JSONL, guidellm report, InferenceX CSV; tests/data/bench/SOURCE.md) the round trip
// calibrate -o -> perf --data (the prediction for a row moves from the current factors' value to
// the fitted one), files it cannot read (exit 2, one line naming the field) and -o's refusals.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <cmath>
#include <fstream>
#include <k3plan/bench_result.hpp>
#include <nlohmann/json.hpp>
#include <tuple>

#include "support.hpp"

namespace {

using k3plan_test::run;
using k3plan_test::Run;
using k3plan_test::slurp;
using k3plan_test::TempDir;
namespace fs = std::filesystem;

std::string bench(const std::string& name) { return std::string(K3PLAN_TEST_DATA) + "/bench/" + name; }

struct Prediction {
  double tpot_ms = 0, tput_per_gpu = 0, ttft_s = 0;
};
struct RoundTrip {
  nlohmann::json cal;        // calibrate -f json
  Prediction before, after;  // perf without and with --data
};

Prediction prediction(const std::string& json_text) {
  const auto j = nlohmann::json::parse(json_text);
  return {j["tpot_ms"].get<double>(), j["throughput_per_gpu"]["total"].get<double>(), j["ttft_s"].get<double>()};
}

// calibrate FILE ARGS -o DIR/cal.yaml, then `perf PERF_ARGS` without and with --data DIR
RoundTrip round_trip(const std::vector<std::string>& cal_args, const std::vector<std::string>& perf_args) {
  TempDir dir;
  RoundTrip rt;
  std::vector<std::string> a{"calibrate"};
  a.insert(a.end(), cal_args.begin(), cal_args.end());
  const std::string out = (dir.path() / "cal.yaml").string();
  a.insert(a.end(), {"-o", out, "-f", "json"});
  const Run c = run(a);
  INFO(c.err);
  REQUIRE(c.code == 0);
  rt.cal = nlohmann::json::parse(c.out);
  REQUIRE(fs::exists(out));
  CHECK(rt.cal["written"] == out);
  CHECK(rt.cal["in_sample"] == true);
  std::vector<std::string> p{"perf"};
  p.insert(p.end(), perf_args.begin(), perf_args.end());
  p.insert(p.end(), {"-f", "json"});
  const Run before = run(p);
  INFO(before.err);
  REQUIRE(before.code == 0);
  p.insert(p.end(), {"--data", dir.path().string()});
  const Run after = run(p);
  INFO(after.err);
  REQUIRE(after.code == 0);
  rt.before = prediction(before.out);
  rt.after = prediction(after.out);
  // perf names the calibration file's entry among its assumptions
  CHECK(after.out.find("k3plan calibrate: fitted on") != std::string::npos);
  return rt;
}

// the row of calibrate's JSON at concurrency `conc`
const nlohmann::json& row_at(const nlohmann::json& cal, int conc) {
  for (const auto& r : cal["rows"])
    if (r["concurrency"] == conc && !r.contains("skipped")) return r;
  FAIL("no row at concurrency " << conc);
  return cal;
}

void check_moved(const RoundTrip& rt, const nlohmann::json& row) {
  // perf without --data predicts what calibrate called "before", with it what it fitted
  for (const auto& [name, b, a] : {std::tuple{"tpot_ms", rt.before.tpot_ms, rt.after.tpot_ms},
                                   std::tuple{"tput_tok_s_per_gpu", rt.before.tput_per_gpu, rt.after.tput_per_gpu},
                                   std::tuple{"ttft_s", rt.before.ttft_s, rt.after.ttft_s}}) {
    INFO(name);
    CHECK(b == Approx(row["before"][name].get<double>()).epsilon(1e-9));
    CHECK(a == Approx(row["after"][name].get<double>()).epsilon(1e-9));
  }
  // the fit moved the prediction, towards the measurement (TTFT: every file's largest miss before)
  const double meas = row["measured"]["ttft_s"].get<double>();
  CHECK(std::abs(rt.after.ttft_s - rt.before.ttft_s) > 0.05 * rt.before.ttft_s);
  CHECK(std::abs(rt.after.ttft_s - meas) < std::abs(rt.before.ttft_s - meas));
}

Run bad_file(const std::string& text, const std::string& name, const std::vector<std::string>& extra) {
  TempDir dir;
  const auto p = dir.path() / name;
  std::ofstream(p) << text;
  std::vector<std::string> a{"calibrate", p.string()};
  a.insert(a.end(), extra.begin(), extra.end());
  return run(a);
}

void check_field_error(const Run& r, const std::string& field) {
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("k3plan: error: ", 0) == 0);
  CHECK(r.err.find("field '" + field + "'") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

}  // namespace

TEST_CASE("calibrate round trip on a vLLM --save-result file: perf --data predicts the fitted TPOT", "[cli][calibrate]") {
  const RoundTrip rt = round_trip(
      {bench("vllm-llama8b-h100-c16.json"), "-g", "h100", "--tp", "1"},
      {"-m", "llama-3.1-8b", "-g", "h100", "--engine", "vllm", "--tp", "1", "--ep", "1", "--isl", "1000", "--osl", "1000", "-c", "16"});
  CHECK(rt.cal["format"] == "vllm");
  CHECK(rt.cal["model"] == "llama-3.1-8b");  // from the file's model_id
  REQUIRE(rt.cal["slices"].size() == 1);
  CHECK(rt.cal["slices"][0]["key"] == "nvidia-hopper/vllm/bf16");
  check_moved(rt, row_at(rt.cal, 16));
}

TEST_CASE("calibrate round trip on SGLang bench_serving JSONL: the layout and version come from server_info", "[cli][calibrate]") {
  const RoundTrip rt = round_trip(
      {bench("sglang-llama70b-h100-tp4.jsonl"), "-g", "h100"},
      {"-m", "llama-3.1-70b", "-g", "h100", "--engine", "sglang", "--tp", "4", "--ep", "1", "--isl", "2000", "--osl", "500", "-c", "8"});
  CHECK(rt.cal["format"] == "sglang");
  CHECK(rt.cal["model"] == "llama-3.1-70b");  // server_info.model_path
  CHECK(rt.cal["rows"].size() == 3);
  REQUIRE(rt.cal["slices"].size() == 1);
  CHECK(rt.cal["slices"][0]["key"] == "nvidia-hopper/sglang/bf16@0.5.12..0.5.12");
  const auto& s = rt.cal["slices"][0];
  CHECK(s["median_ape_after"]["tpot_pct"].get<double>() < s["median_ape_before"]["tpot_pct"].get<double>());
  check_moved(rt, row_at(rt.cal, 8));
}

TEST_CASE("calibrate round trip on a guidellm report: concurrency from the strategy and TPOT from inter_token_latency_ms",
          "[cli][calibrate]") {
  const RoundTrip rt = round_trip(
      {bench("guidellm-llama8b-h200.json"), "-m", "llama-3.1-8b", "-g", "h200", "--engine", "vllm", "--tp", "1"},
      {"-m", "llama-3.1-8b", "-g", "h200", "--engine", "vllm", "--tp", "1", "--ep", "1", "--isl", "512", "--osl", "256", "-c", "8"});
  CHECK(rt.cal["format"] == "guidellm");
  REQUIRE(rt.cal["rows"].size() == 2);
  CHECK(rt.cal["rows"][0]["concurrency"] == 1);  // synchronous
  CHECK(rt.cal["rows"][1]["concurrency"] == 8);  // concurrent, streams 8
  CHECK(rt.cal["rows"][1]["measured"]["tpot_ms"].get<double>() == Approx(7.6));
  check_moved(rt, row_at(rt.cal, 8));
}

TEST_CASE("calibrate round trip on InferenceX CSV rows with no option but -o: the file holds the deployment", "[cli][calibrate]") {
  const RoundTrip rt = round_trip({bench("inferencex-dsr1-h200-sglang.csv")},
                                  {"-m", "deepseek-r1-0528", "-g", "h200", "--engine", "sglang", "--tp", "8", "--ep", "1", "--isl", "1024",
                                   "--osl", "1024", "-c", "4", "--length-scale", "0.9"});
  CHECK(rt.cal["format"] == "inferencex");
  CHECK(rt.cal["length_scale"] == 0.9);
  REQUIRE(rt.cal["rows"].size() == 5);
  CHECK(rt.cal["rows"][4]["skipped"].get<std::string>().find("disaggregated") != std::string::npos);  // the Dynamo row
  REQUIRE(rt.cal["slices"].size() == 1);
  CHECK(rt.cal["slices"][0]["key"] == "nvidia-hopper/sglang/fp8@0.5.12..0.5.12");
  CHECK(rt.cal["slices"][0]["rows"] == 4);
  check_moved(rt, row_at(rt.cal, 4));
}

TEST_CASE("calibrate prints measured vs before and after per row and says the fit is in-sample", "[cli][calibrate]") {
  const Run r = run({"calibrate", bench("inferencex-dsr1-h200-sglang.csv")});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("measured / before / after") != std::string::npos);
  CHECK(r.out.find("median |error| TPOT") != std::string::npos);
  CHECK(r.out.find("in-sample") != std::string::npos);
  CHECK(r.out.find("nothing written: give -o FILE") != std::string::npos);
  CHECK(r.out.find("skipped 1 row: disaggregated") != std::string::npos);
}

TEST_CASE("calibrate -o refuses to replace a file unless --force", "[cli][calibrate]") {
  TempDir dir;
  const std::string out = (dir.path() / "cal.yaml").string();
  std::ofstream(out) << "keep me\n";
  const Run r = run({"calibrate", bench("inferencex-dsr1-h200-sglang.csv"), "-o", out});
  CHECK(r.code == 2);
  CHECK(r.err.find("--force") != std::string::npos);
  CHECK(slurp(out) == "keep me\n");
  const Run f = run({"calibrate", bench("inferencex-dsr1-h200-sglang.csv"), "-o", out, "--force"});
  CHECK(f.code == 0);
  CHECK(slurp(out).find("entries:") != std::string::npos);
}

TEST_CASE("calibrate names the field a vLLM result lacks or mistypes and exits 2", "[cli][calibrate]") {
  std::string v = slurp(bench("vllm-llama8b-h100-c16.json"));
  const auto drop = [](std::string s, const std::string& key) {
    const auto at = s.find("\"" + key + "\"");
    REQUIRE(at != std::string::npos);
    return s.erase(at, s.find('\n', at) - at + 1);
  };
  check_field_error(bad_file(drop(v, "median_tpot_ms"), "r.json", {"-g", "h100", "--tp", "1"}), "median_tpot_ms");
  std::string typed = v;
  typed.replace(typed.find("\"completed\": 160"), 16, "\"completed\": \"160\"");
  check_field_error(bad_file(typed, "r.json", {"-g", "h100", "--tp", "1"}), "completed");
  std::string open_loop = v;
  open_loop.replace(open_loop.find("\"max_concurrency\": 16"), 21, "\"max_concurrency\": null");
  check_field_error(bad_file(open_loop, "r.json", {"-g", "h100", "--tp", "1"}), "max_concurrency");
}

TEST_CASE("calibrate names the field an SGLang line or a guidellm report or an InferenceX CSV lacks", "[cli][calibrate]") {
  std::string s = slurp(bench("sglang-llama70b-h100-tp4.jsonl"));
  const auto at = s.find("\"total_throughput\"");
  s.replace(at, 18, "\"total_throughputs\"");
  check_field_error(bad_file(s, "r.jsonl", {"--input-format", "sglang", "-g", "h100"}), "total_throughput");

  std::string g = slurp(bench("guidellm-llama8b-h200.json"));
  const auto gi = g.find("\"inter_token_latency_ms\"");
  g.replace(gi, 24, "\"inter_token_latency_us\"");
  check_field_error(bad_file(g, "r.json", {"-m", "llama-3.1-8b", "-g", "h200", "--engine", "vllm", "--tp", "1"}),
                    "metrics.inter_token_latency_ms.successful.median");

  std::string x = slurp(bench("inferencex-dsr1-h200-sglang.csv"));
  x.replace(x.find("median_tpot_ms"), 14, "mean_tpot_ms");
  check_field_error(bad_file(x, "r.csv", {}), "median_tpot_ms");
  std::string y = slurp(bench("inferencex-dsr1-h200-sglang.csv"));
  y.replace(y.find(",98.8,"), 6, ",n/a,");
  check_field_error(bad_file(y, "r.csv", {}), "tput_per_gpu");
}

TEST_CASE("calibrate refuses a file of no known format and names the fields it looked for", "[cli][calibrate]") {
  const Run r = bad_file("{\"hello\": 1}\n", "r.json", {});
  CHECK(r.code == 2);
  CHECK(r.err.find("field 'total_token_throughput'") != std::string::npos);
  CHECK(r.err.find("'benchmarks'") != std::string::npos);
}

TEST_CASE("the SGLang reader takes Python's bare Infinity and NaN as null outside strings only", "[calibrate]") {
  const std::string line =
      R"({"tag": "NaN Infinity", "request_rate": Infinity, "accept_length": NaN, "max_concurrency": 4, "completed": 2, )"
      R"("total_input_tokens": 200, "total_output_tokens": 100, "total_throughput": 300.5, "median_ttft_ms": 20, )"
      R"("median_tpot_ms": 5.5, "server_info": null})";
  const k3plan::BenchFile f = k3plan::parse_bench_text(line + "\n", "x.jsonl");
  CHECK(f.format == "sglang");
  REQUIRE(f.points.size() == 1);
  CHECK(f.points[0].isl_tokens == 100);
  CHECK(f.points[0].osl_tokens == 50);
  CHECK(f.points[0].concurrency == 4);
  CHECK(f.points[0].tput_total_tok_s == 300.5);
  CHECK(f.points[0].tp == 0);  // no server_info: the command line supplies the layout
}

TEST_CASE("the InferenceX reader keeps a quoted field with commas in one cell", "[calibrate]") {
  const std::string csv =
      "hardware,framework,model,precision,spec,disagg,multinode,decode_tp,decode_ep,decode_dp_attn,total_gpus,isl,osl,conc,image,date,"
      "tput_per_gpu,median_ttft_s,median_tpot_ms,flags\n"
      "h200,sglang,DeepSeek-R1-0528,fp8,none,0,0,8,1,0,8,1024,1024,4,lmsysorg/sglang:v0.5.12-cu130,2026-05-17,98.8,0.0847,9.73,"
      "\"--a 1, --b \"\"x\"\"\"\n";
  const k3plan::BenchFile f = k3plan::parse_bench_text(csv, "x.csv");
  CHECK(f.format == "inferencex");
  REQUIRE(f.points.size() == 1);
  CHECK(f.points[0].tpot_ms == 9.73);
  CHECK(f.points[0].ttft_ms == Approx(84.7));
  CHECK(f.points[0].engine_version == "0.5.12");
  CHECK(f.points[0].tp == 8);
}

// --- real files (tests/data/bench/SOURCE.md: llm-benchmaq @ fef89116, Llama 3.1 70B on 8 x H100) ---

TEST_CASE("calibrate reads a real vLLM --append-result file: one row per run and each names its line", "[cli][calibrate]") {
  const Run r = run({"calibrate", bench("vllm-llama70b-h100-tp8-in1024-append.jsonl"), "-m", "llama-3.1-70b", "-g", "h100", "--tp", "8",
                     "--engine-version", "0.15.0", "-f", "json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["format"] == "vllm");
  REQUIRE(j["rows"].size() == 4);
  const int conc[] = {10, 25, 50, 200};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& row = j["rows"][i];
    INFO(row.dump());
    CHECK(row["where"].get<std::string>().size() > 2);
    CHECK(row["where"].get<std::string>().substr(row["where"].get<std::string>().size() - 2) == ":" + std::to_string(i + 1));
    CHECK(row["concurrency"] == conc[i]);
    CHECK(row["replicas"] == 1);
    CHECK(row["isl"].get<double>() == Approx(1023));  // 1,023,000 input tokens over 1,000 requests
    CHECK(row["osl"].get<double>() == Approx(128));
  }
  // the c10 run: total_token_throughput 6210.30 tok/s over 8 GPUs, median TPOT 11.52 ms, TTFT 388 ms
  CHECK(j["rows"][0]["measured"]["tput_tok_s_per_gpu"].get<double>() == Approx(6210.301112906846 / 8));
  CHECK(j["rows"][0]["measured"]["tpot_ms"].get<double>() == Approx(11.518876960200412));
  CHECK(j["rows"][0]["measured"]["ttft_s"].get<double>() == Approx(0.38838476792443544));
  REQUIRE(j["slices"].size() == 1);
  CHECK(j["slices"][0]["key"] == "nvidia-hopper/vllm/bf16@0.15.0..0.15.0");
}

TEST_CASE("a vLLM --save-result object pretty-printed over many lines is one run and not JSON lines", "[calibrate]") {
  const std::string one = slurp(bench("vllm-llama70b-h100-tp8-in1024-c10.json"));
  const auto pretty = nlohmann::json::parse(one).dump(2);
  const k3plan::BenchFile a = k3plan::parse_bench_text(one, "one.json");
  const k3plan::BenchFile b = k3plan::parse_bench_text(pretty, "pretty.json");
  REQUIRE(a.points.size() == 1);
  REQUIRE(b.points.size() == 1);
  CHECK(a.format == "vllm");
  CHECK(b.points[0].tpot_ms == a.points[0].tpot_ms);
  CHECK(b.points[0].where == "pretty.json");
  // two objects, one per line: two runs
  const k3plan::BenchFile c = k3plan::parse_bench_text(one + "\n" + one, "two.jsonl");
  CHECK(c.points.size() == 2);
  CHECK(c.points[1].where == "two.jsonl:2");
}

TEST_CASE("calibrate round trip on a real vLLM file: perf picks the entry of the engine version it was fitted on", "[cli][calibrate]") {
  const std::vector<std::string> perf{"-m",     "llama-3.1-70b", "-g",    "h100", "--engine", "vllm", "--tp", "8",
                                      "--isl",  "1023",          "--osl", "128",  "-c",       "10"};
  std::vector<std::string> with_version = perf;
  with_version.insert(with_version.end(), {"--engine-version", "0.15.0"});
  const RoundTrip rt = round_trip({bench("vllm-llama70b-h100-tp8-in1024-append.jsonl"), "-m", "llama-3.1-70b", "-g", "h100", "--tp", "8",
                                   "--engine-version", "0.15.0"},
                                  with_version);
  check_moved(rt, row_at(rt.cal, 10));
  // the TPOT k3plan's shipped factors give this dense model is far off (out of sample: docs/perf-validation.md); the fit closes it
  const auto& row = row_at(rt.cal, 10);
  CHECK(std::abs(rt.before.tpot_ms / row["measured"]["tpot_ms"].get<double>() - 1) > 0.3);
  CHECK(std::abs(rt.after.tpot_ms / row["measured"]["tpot_ms"].get<double>() - 1) < 0.05);
  // another release's window does not take the 0.15.0 entry
  TempDir dir;
  const std::string out = (dir.path() / "cal.yaml").string();
  const Run c = run({"calibrate", bench("vllm-llama70b-h100-tp8-in1024-append.jsonl"), "-m", "llama-3.1-70b", "-g", "h100", "--tp", "8",
                     "--engine-version", "0.15.0", "-o", out});
  REQUIRE(c.code == 0);
  std::vector<std::string> other{"perf"};
  other.insert(other.end(), perf.begin(), perf.end());
  other.insert(other.end(), {"--engine-version", "0.19.0", "--data", dir.path().string(), "-f", "json"});
  const Run o19 = run(other);
  INFO(o19.err);
  REQUIRE(o19.code == 0);
  const auto j19 = nlohmann::json::parse(o19.out);
  CHECK(j19["tpot_ms"].get<double>() == Approx(rt.before.tpot_ms));
  CHECK(j19["engine_version"] == "0.18");
}

TEST_CASE("perf names the engine version window it assumed and refuses an unknown release", "[cli][perf]") {
  const Run d = run({"perf", "-m", "llama-3.1-70b", "-g", "h100", "--engine", "vllm", "--tp", "8", "-f", "json"});
  INFO(d.err);
  REQUIRE(d.code == 0);
  CHECK(!nlohmann::json::parse(d.out)["engine_version"].get<std::string>().empty());
  const Run t = run({"perf", "-m", "llama-3.1-70b", "-g", "h100", "--engine", "vllm", "--engine-version", "0.15.0", "--tp", "8"});
  CHECK(t.out.find("vLLM 0.15 (0.15.0-") != std::string::npos);
  const Run bad = run({"perf", "-m", "llama-3.1-70b", "-g", "h100", "--engine", "vllm", "--engine-version", "0.3.0", "--tp", "8"});
  CHECK(bad.code == 2);
  CHECK(bad.err.find("unknown vllm version '0.3.0'") != std::string::npos);
}

TEST_CASE("calibrate on real SGLang bench_serving lines: the version from server_info and lengths as drawn", "[cli][calibrate]") {
  const RoundTrip rt = round_trip({bench("sglang-llama70b-h100-tp8-sweep.jsonl"), "-m", "llama-3.1-70b", "-g", "h100"},
                                  {"-m", "llama-3.1-70b", "-g", "h100", "--engine", "sglang", "--engine-version", "0.5.9", "--tp", "8",
                                   "--isl", "504.61", "--osl", "61.08", "-c", "100"});
  CHECK(rt.cal["format"] == "sglang");
  REQUIRE(rt.cal["rows"].size() == 4);
  REQUIRE(rt.cal["slices"].size() == 1);
  CHECK(rt.cal["slices"][0]["key"] == "nvidia-hopper/sglang/bf16@0.5.9..0.5.9");
  // random_range_ratio 0: lengths drawn up to the nominal 1024 / 128, the means are about half
  const auto& first = rt.cal["rows"][0];
  CHECK(first["isl"].get<double>() == Approx(504.61));
  CHECK(first["osl"].get<double>() == Approx(61.08));
  CHECK(first["replicas"] == 1);
  CHECK(first["measured"]["tput_tok_s_per_gpu"].get<double>() == Approx(14210.90678420482 / 8));
}

TEST_CASE("SGLang dp_size without DP attention is replicas: each runs its share of the users on its own GPUs", "[cli][calibrate]") {
  const Run r = run({"calibrate", bench("sglang-llama70b-h100-tp4-dp2.jsonl"), "-m", "llama-3.1-70b", "-g", "h100", "-f", "json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["rows"].size() == 2);
  const auto& row = j["rows"][0];
  CHECK(row["replicas"] == 2);
  CHECK(row["concurrency"] == 100);
  CHECK(row["id"].get<std::string>().find("tp4ep1x2/") != std::string::npos);
  // per GPU over tp_size x dp_size = 8 GPUs
  CHECK(row["measured"]["tput_tok_s_per_gpu"].get<double>() == Approx(13625.536718060821 / 8));
  // the prediction is one TP4 instance at 50 users
  const Run p = run({"perf", "-m", "llama-3.1-70b", "-g", "h100", "--engine", "sglang", "--engine-version", "0.5.9", "--tp", "4", "--isl",
                     fmt::format("{}", row["isl"].get<double>()), "--osl", fmt::format("{}", row["osl"].get<double>()), "-c", "50", "-f", "json"});
  INFO(p.err);
  REQUIRE(p.code == 0);
  const auto pj = nlohmann::json::parse(p.out);
  CHECK(pj["tpot_ms"].get<double>() == Approx(row["before"]["tpot_ms"].get<double>()).epsilon(1e-6));
  CHECK(pj["throughput_per_gpu"]["total"].get<double>() == Approx(row["before"]["tput_tok_s_per_gpu"].get<double>()).epsilon(1e-6));
}

TEST_CASE("calibrate --dp: users that do not split evenly over the replicas leave no row to fit", "[cli][calibrate]") {
  const Run r = run({"calibrate", bench("vllm-llama70b-h100-tp8-in1024-c10.json"), "-m", "llama-3.1-70b", "-g", "h100", "--tp", "4",
                     "--dp", "3"});
  CHECK(r.code == 2);
  CHECK(r.err.find("10 users do not split evenly over 3 data-parallel replicas") != std::string::npos);
  const Run ok = run({"calibrate", bench("vllm-llama70b-h100-tp4-dp2-in1024-append.jsonl"), "-m", "llama-3.1-70b", "-g", "h100", "--tp",
                      "4", "--dp", "2", "-f", "json"});
  INFO(ok.err);
  REQUIRE(ok.code == 0);
  const auto j = nlohmann::json::parse(ok.out);
  REQUIRE(j["rows"].size() == 3);
  CHECK(j["rows"][2]["replicas"] == 2);
  CHECK(j["rows"][2]["measured"]["tput_tok_s_per_gpu"].get<double>() == Approx(23173.19331061795 / 8));
}

TEST_CASE("calibrate says when bench_serving drew the lengths over a range and the fit takes their means", "[cli][calibrate]") {
  const Run r = run({"calibrate", bench("sglang-llama70b-h100-tp8-sweep.jsonl"), "-m", "llama-3.1-70b", "-g", "h100", "-f", "json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["length_notes"].size() == 1);  // the same for all four lines: said once
  CHECK(j["length_notes"][0].get<std::string>().find("random_range_ratio 0") != std::string::npos);
  // a file that ran fixed lengths (the hand-built one has no ratio below 1) says nothing
  const Run fixed = run({"calibrate", bench("sglang-llama70b-h100-tp4.jsonl"), "-g", "h100", "-f", "json"});
  REQUIRE(fixed.code == 0);
  CHECK(nlohmann::json::parse(fixed.out)["length_notes"].empty());
}
