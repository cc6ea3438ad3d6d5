// Disaggregated prefill / decode beyond `perf`: `plan --disagg` searches the pools and their ratio
// with the same targets and cost as the aggregated candidates, and `launch --prefill-* --decode-*`
// emits the engines' P/D pair and their router, checked against the flag tables of the release.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <k3plan/engine_flags.hpp>
#include <k3plan/launch.hpp>
#include <nlohmann/json.hpp>

#include "support.hpp"

using namespace k3plan;
using k3plan_test::expect_usage_error;
using k3plan_test::run;
using k3plan_test::run_shell;
using k3plan_test::split_nul;
using k3plan_test::TempDir;
namespace fs = std::filesystem;

namespace {

nlohmann::json json_of(const std::vector<std::string>& args, int code = 0) {
  const auto r = run(args);
  INFO(r.cmdline << "\n" << r.err.substr(0, 2000));
  REQUIRE(r.code == code);
  return nlohmann::json::parse(r.out);
}

std::vector<std::string> plan_args(bool disagg) {
  std::vector<std::string> a{"plan", "-m", "gpt-oss-120b", "--gpus-from", "h100", "--max-gpus", "16", "-f", "json", "--top", "100"};
  if (disagg) a.push_back("--disagg");
  return a;
}

std::vector<std::string> argv_of(const nlohmann::json& cmd) { return cmd["argv"].get<std::vector<std::string>>(); }

std::string value_after(const std::vector<std::string>& argv, const std::string& flag) {
  for (std::size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == flag) return argv[i + 1];
  return "<absent>";
}

bool has(const std::vector<std::string>& argv, const std::string& s) { return std::find(argv.begin(), argv.end(), s) != argv.end(); }

const nlohmann::json& command(const nlohmann::json& j, const std::string& role, int worker = 0, int rank = 0) {
  for (const auto& c : j["commands"])
    if (c["role"] == role && c["worker"] == worker && c["rank"] == rank) return c;
  FAIL("no command " << role << " " << worker << " " << rank);
  return j["commands"][0];
}

// Writes `script` and stub engines (each argument NUL-terminated on stdout) into `dir`.
void stage(const fs::path& dir, const std::string& script) {
  std::ofstream(dir / "run.sh") << script;
  k3plan_test::write_engine_stubs(dir);
}

}  // namespace

TEST_CASE("plan without --disagg searches no disaggregated layout") {
  const auto j = json_of(plan_args(false));
  CHECK(j["disagg"] == false);
  CHECK(j["search"]["disaggregated_candidates"] == 0);
  for (const auto& p : j["pareto"]) CHECK_FALSE(p.contains("disaggregated"));
}

TEST_CASE("plan --disagg ranks prefill / decode pools with the aggregated candidates at the same cost and targets") {
  const auto agg = json_of(plan_args(false));
  const auto j = json_of(plan_args(true));
  CHECK(j["disagg"] == true);
  CHECK(j["search"]["disaggregated_candidates"].get<double>() > 0);
  CHECK(j["search"]["candidates"].get<double>() > agg["search"]["candidates"].get<double>());
  // the aggregated winner is still a candidate: the winner costs no more per token
  REQUIRE(agg["winner"].is_object());
  REQUIRE(j["winner"].is_object());
  CHECK(j["winner"]["usd_per_million_tokens"].get<double>() <= agg["winner"]["usd_per_million_tokens"].get<double>() * (1 + 1e-9));
  // a disaggregated candidate: its GPUs are both pools, priced as the aggregated ones
  const nlohmann::json* d = nullptr;
  for (const auto& p : j["pareto"])
    if (p.contains("disaggregated")) d = &p;
  for (const auto& p : j["runners_up"])
    if (!d && p.contains("disaggregated")) d = &p;
  REQUIRE(d != nullptr);
  const auto& x = *d;
  const auto& pre = x["disaggregated"]["prefill"];
  const auto& dec = x["disaggregated"]["decode"];
  const int gpus = pre["workers"].get<int>() * pre["gpus_per_worker"].get<int>() + dec["workers"].get<int>() * dec["gpus_per_worker"].get<int>();
  CHECK(x["gpus"] == gpus);
  CHECK(gpus <= 16);
  const double gpu_hour = agg["winner"]["usd_per_hour"].get<double>() / agg["winner"]["gpus"].get<double>();
  CHECK(x["usd_per_hour"].get<double>() == Approx(gpu_hour * gpus));
  CHECK(x["usd_per_million_tokens"].get<double>() ==
        Approx(x["usd_per_hour"].get<double>() * 1e6 / (3600 * x["throughput_per_gpu"]["total"].get<double>() * gpus)));
  // the same pools through `perf` predict the same figures (one model, two commands)
  std::vector<std::string> perf{"perf", "-m", "gpt-oss-120b", "-g", "h100", "--engine", x["engine"].get<std::string>(), "-f", "json",
                                "-c", std::to_string(x["concurrency"].get<int>())};
  for (const auto& [name, s] : {std::pair<std::string, const nlohmann::json&>{"prefill", pre}, {"decode", dec}}) {
    perf.insert(perf.end(), {"--" + name + "-workers", std::to_string(s["workers"].get<int>()), "--" + name + "-tp",
                             std::to_string(s["tp"].get<int>()), "--" + name + "-ep", std::to_string(s["ep"].get<int>())});
    if (s["dp_attention"].get<bool>()) perf.push_back("--" + name + "-dp-attention");
  }
  const auto p = json_of(perf);
  INFO(p.dump().substr(0, 1500));
  CHECK(p["tpot_ms"].get<double>() == Approx(x["tpot_ms"].get<double>()).epsilon(0.02));
  CHECK(p["ttft_s"].get<double>() == Approx(x["ttft_s"].get<double>()).epsilon(0.02));
}

TEST_CASE("plan --disagg with one GPU, with vLLM and with a dense model") {
  // --max-gpus 1 leaves no room for two pools: the aggregated search alone
  auto a = plan_args(true);
  a[6] = "1";
  const auto r1 = run(a);
  REQUIRE((r1.code == 0 || r1.code == 1));
  const auto one = nlohmann::json::parse(r1.out);
  CHECK(one["search"]["disaggregated_candidates"] == 0);
  // vLLM: no DP attention inside a worker (as perf refuses it)
  auto v = plan_args(true);
  v.insert(v.end(), {"--engines", "vllm"});
  const auto vj = json_of(v);
  CHECK(vj["search"]["disaggregated_candidates"].get<double>() > 0);
  for (const auto& p : vj["pareto"])
    if (p.contains("disaggregated")) {
      CHECK(p["disaggregated"]["prefill"]["dp_attention"] == false);
      CHECK(p["disaggregated"]["decode"]["dp_attention"] == false);
    }
  // a dense model: EP 1 per worker
  const auto dj = json_of({"plan", "-m", "llama-3.1-8b", "--gpus-from", "h100", "--max-gpus", "8", "--disagg", "-f", "json"});
  for (const auto& p : dj["pareto"])
    if (p.contains("disaggregated")) CHECK(p["disaggregated"]["decode"]["ep"] == 1);
}

TEST_CASE("launch takes each pool as a GPU count: the same commands as workers x TP") {
  const std::vector<std::string> common{"launch", "-m",      "gpt-oss-120b", "-g",     "h100", "--engine",
                                        "sglang", "--users", "16",           "--emit", "json"};
  auto with = [&](std::vector<std::string> pools) {
    std::vector<std::string> a = common;
    a.insert(a.end(), pools.begin(), pools.end());
    return json_of(a);
  };
  const auto by_workers = with({"--prefill-workers", "2", "--prefill-tp", "1", "--decode-tp", "2", "--decode-ep", "2"});
  const auto by_gpus = with({"--prefill-gpus", "2", "--prefill-tp", "1", "--decode-gpus", "2", "--decode-ep", "2"});
  CHECK(by_gpus["gpus"] == 4);
  CHECK(by_gpus["commands"] == by_workers["commands"]);
  expect_usage_error({"launch", "-m", "gpt-oss-120b", "-g", "h100", "--prefill-gpus", "3", "--prefill-tp", "2", "--decode-tp", "2"},
                     {"--prefill-gpus 3 is not a multiple of --prefill-tp 2"});
}

TEST_CASE("launch emits SGLang's prefill / decode pair with the transfer back-end and the router") {
  const auto j =
      json_of({"launch",       "-m",     "gpt-oss-120b", "-g", "h100",        "--engine", "sglang",      "--prefill-workers", "2",
               "--prefill-tp", "1",      "--decode-tp",  "2",  "--decode-ep", "2",        "--ib-device", "mlx5_0,mlx5_1",     "--users",
               "16",           "--emit", "json"});
  CHECK(j["emitted"] == true);
  CHECK(j["gpus"] == 4);
  CHECK(j["transfer_backend"] == "mooncake");
  CHECK(j["address_variables"] == nlohmann::json{"PREFILL_0_ADDR", "PREFILL_1_ADDR", "DECODE_0_ADDR"});
  for (int w = 0; w < 2; ++w) {
    const auto a = argv_of(command(j, "prefill", w));
    CHECK(value_after(a, "-m") == "sglang.launch_server");
    CHECK(value_after(a, "--disaggregation-mode") == "prefill");
    CHECK(value_after(a, "--disaggregation-transfer-backend") == "mooncake");
    CHECK(value_after(a, "--disaggregation-ib-device") == "mlx5_0,mlx5_1");
    CHECK(value_after(a, "--port") == "30000");
  }
  const auto d = argv_of(command(j, "decode"));
  CHECK(value_after(d, "--disaggregation-mode") == "decode");
  // every worker flag is one the release's table accepts (the table launch checked them against)
  for (const auto& c : j["commands"])
    if (c["role"] != "router") CHECK(unaccepted_flags(argv_of(c), flag_release(Engine::sglang, "")).empty());
  CHECK(value_after(d, "--tp-size") == "2");
  CHECK(value_after(d, "--port") == "30001");
  const auto r = argv_of(command(j, "router"));
  CHECK(value_after(r, "-m") == "sglang_router.launch_router");
  CHECK(has(r, "--pd-disaggregation"));
  CHECK(value_after(r, "--prefill") == "http://${PREFILL_0_ADDR}:30000");
  CHECK(value_after(r, "http://${PREFILL_0_ADDR}:30000") == "8998");
  CHECK(value_after(r, "--decode") == "http://${DECODE_0_ADDR}:30001");
  CHECK(value_after(r, "--port") == "8000");
}

TEST_CASE("the SGLang P/D script passes bash -n and runs each role with the stub engines, a hostile path kept inert") {
  const std::string hostile = "evil path/it's \"q\" $(touch /tmp/k3plan-pd-pwned) `id` ${PREFILL_0_ADDR}\nx";
  const auto r = run({"launch", "-m", "gpt-oss-120b", "-g", "h100", "--prefill-tp", "1", "--decode-tp", "2", "--decode-ep", "2",
                      "--model-path", hostile});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const TempDir tmp;
  stage(tmp.path(), r.out);
  const std::string sh = (tmp.path() / "run.sh").string();
  std::remove("/tmp/k3plan-pd-pwned");
  CHECK(run_shell("bash -n " + sh + " 2>&1; echo rc=$?") == "rc=0\n");
  const std::string env = "PATH=" + tmp.path().string() + ":$PATH PREFILL_0_ADDR=10.0.0.1 DECODE_0_ADDR=10.0.0.2 ";
  const auto pre = split_nul(run_shell(env + "bash " + sh + " prefill 0 0"));
  CHECK(value_after(pre, "--model-path") == hostile);
  CHECK(value_after(pre, "--disaggregation-mode") == "prefill");
  const auto dec = split_nul(run_shell(env + "bash " + sh + " decode 0 0"));
  CHECK(value_after(dec, "--disaggregation-mode") == "decode");
  const auto rt = split_nul(run_shell(env + "bash " + sh + " router"));
  CHECK(value_after(rt, "--prefill") == "http://10.0.0.1:30000");
  CHECK(value_after(rt, "--decode") == "http://10.0.0.2:30001");
  CHECK_FALSE(fs::exists("/tmp/k3plan-pd-pwned"));
  // the router without the addresses, and an unknown role: exit 2, nothing started
  CHECK(run_shell("PATH=" + tmp.path().string() + ":$PATH bash " + sh + " router >/dev/null 2>&1; echo rc=$?") == "rc=2\n");
  CHECK(run_shell(env + "bash " + sh + " prefill 5 0 >/dev/null 2>&1; echo rc=$?") == "rc=2\n");
}

TEST_CASE("launch emits vLLM's prefill / decode pair with NixlConnector and its proxy") {
  const auto j = json_of({"launch", "-m", "gpt-oss-120b", "-g", "h100", "--engine", "vllm", "--prefill-tp", "1", "--decode-tp", "2",
                          "--decode-workers", "2", "--emit", "json"});
  CHECK(j["transfer_backend"] == "NixlConnector");
  for (const auto& [role, port] : {std::pair{"prefill", "8000"}, std::pair{"decode", "8001"}}) {
    const auto& c = command(j, role);
    const auto a = argv_of(c);
    CHECK(a[0] == "vllm");
    CHECK(nlohmann::json::parse(value_after(a, "--kv-transfer-config")) ==
          nlohmann::json{{"kv_connector", "NixlConnector"}, {"kv_role", "kv_both"}});
    CHECK(value_after(a, "--port") == port);
    CHECK(unaccepted_flags(a, flag_release(Engine::vllm, "")).empty());
    bool side_channel = false;
    for (const auto& e : c["env"]) side_channel |= e.get<std::string>().rfind("VLLM_NIXL_SIDE_CHANNEL_HOST=", 0) == 0;
    CHECK(side_channel);
  }
  const auto r = argv_of(command(j, "router"));
  CHECK(r[1] == "tests/v1/kv_connector/nixl_integration/toy_proxy_server.py");
  CHECK(value_after(r, "--prefiller-hosts") == "${PREFILL_0_ADDR}");
  CHECK(value_after(r, "--decoder-hosts") == "${DECODE_0_ADDR}");
  CHECK(value_after(r, "${DECODE_0_ADDR}") == "${DECODE_1_ADDR}");
  CHECK(value_after(r, "--port") == "8192");
  const auto s = run({"launch", "-m", "gpt-oss-120b", "-g", "h100", "--engine", "vllm", "--prefill-tp", "1", "--decode-tp", "2"});
  REQUIRE(s.code == 0);
  const TempDir tmp;
  stage(tmp.path(), s.out);
  const std::string sh = (tmp.path() / "run.sh").string();
  CHECK(run_shell("bash -n " + sh + " 2>&1; echo rc=$?") == "rc=0\n");
  const auto pre = split_nul(run_shell("PATH=" + tmp.path().string() + ":$PATH PREFILL_0_ADDR=10.0.0.1 bash " + sh + " prefill 0 0"));
  CHECK(value_after(pre, "serve") == "openai/gpt-oss-120b");
}

TEST_CASE("launch refuses a P/D pair the engine release cannot run, naming the rule") {
  // SGLang 0.4.3 predates --disaggregation-mode (0.4.4.post2)
  const auto j = json_of({"launch", "-m", "gpt-oss-120b", "-g", "h100", "--engine-version", "0.4.3", "--prefill-tp", "1", "--decode-tp", "1",
                          "-f", "json"},
                         1);
  CHECK(j["emitted"] == false);
  CHECK(j["rule"] == "launch-disagg-flags");
  CHECK(j["reasons"][0].get<std::string>().find("--disaggregation-mode") != std::string::npos);
  // mori is a transfer back-end from 0.5.9 on
  const auto m = json_of({"launch", "-m", "gpt-oss-120b", "-g", "h100", "--engine-version", "0.5.8", "--prefill-tp", "1", "--decode-tp", "1",
                          "--transfer-backend", "mori", "-f", "json"},
                         1);
  CHECK(m["rule"] == "launch-disagg-flags");
  CHECK(m["reasons"][0].get<std::string>().find("mori") != std::string::npos);
  const auto ok = json_of({"launch", "-m", "gpt-oss-120b", "-g", "h100", "--engine-version", "0.5.9", "--prefill-tp", "1", "--decode-tp", "1",
                           "--transfer-backend", "mori", "--emit", "json"});
  CHECK(ok["transfer_backend"] == "mori");
}

TEST_CASE("launch P/D: bad input exits 2 with one line") {
  const std::vector<std::string> base{"launch", "-m", "gpt-oss-120b", "-g", "h100"};
  auto with = [&](std::vector<std::string> extra) {
    auto a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  expect_usage_error(with({"--prefill-tp", "1"}), {"--decode-tp"});
  expect_usage_error(with({"--prefill-tp", "1", "--decode-tp", "1", "-n", "2"}), {"per pool"});
  expect_usage_error(with({"--prefill-tp", "2", "--prefill-ep", "4", "--decode-tp", "1"}), {"--prefill-ep 4"});
  expect_usage_error(with({"--engine", "vllm", "--prefill-tp", "1", "--decode-tp", "2", "--decode-dp-attention"}), {"DP attention"});
  expect_usage_error(with({"--engine", "vllm", "--prefill-tp", "1", "--decode-tp", "1", "--transfer-backend", "mooncake"}), {"nixl"});
}
