// `k3plan launch`: commands are correct flag by flag, and hostile strings come out inert.
#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <k3plan/catalogue.hpp>
#include <k3plan/launch.hpp>
#include <sstream>

#include "support.hpp"

using namespace k3plan;
namespace fs = std::filesystem;

namespace {
using k3plan_test::cat;
using k3plan_test::k3;
using k3plan_test::run_shell;
using k3plan_test::TempDir;
}  // namespace

TEST_CASE("launch emits SGLang commands for Kimi K3 on 2 x 8 B200 with node ranks and the head address") {
  LaunchOptions o;
  o.flags = k3("b200", 16, Engine::sglang);
  o.flags.head_address = "10.0.0.1";
  const Report r = run_launch(cat(), o);
  REQUIRE(r.exit_code == 0);
  const auto& cmds = r.data["commands"];
  REQUIRE(cmds.size() == 2);
  for (int rank = 0; rank < 2; ++rank) {
    const auto argv = cmds[static_cast<std::size_t>(rank)]["argv"].get<std::vector<std::string>>();
    auto value = [&](const std::string& flag) {
      for (std::size_t i = 0; i + 1 < argv.size(); ++i)
        if (argv[i] == flag) return argv[i + 1];
      return std::string("<absent>");
    };
    CHECK(argv[0] == "python3");
    CHECK(value("-m") == "sglang.launch_server");
    CHECK(value("--model-path") == "moonshotai/Kimi-K3");
    CHECK(std::stoi(value("--tp-size")) * (value("--pp-size") == "<absent>" ? 1 : std::stoi(value("--pp-size"))) == 16);
    CHECK(value("--nnodes") == "2");
    CHECK(value("--node-rank") == std::to_string(rank));
    CHECK(value("--dist-init-addr") == "10.0.0.1:20000");
    CHECK(value("--tool-call-parser") == "kimi_k3");
    CHECK(value("--reasoning-parser") == "kimi_k3");
    CHECK(value("--context-length") == "131072");
    CHECK(std::find(argv.begin(), argv.end(), "--trust-remote-code") != argv.end());
  }
}

TEST_CASE("launch emits vLLM commands for Kimi K3 on 8 x B300 with expert parallel") {
  LaunchOptions o;
  o.flags = k3("b300", 8, Engine::vllm);
  const Report r = run_launch(cat(), o);
  REQUIRE(r.exit_code == 0);
  const auto argv = r.data["commands"][0]["argv"].get<std::vector<std::string>>();
  CHECK(argv[0] == "vllm");
  CHECK(argv[1] == "serve");
  CHECK(argv[2] == "moonshotai/Kimi-K3");
  CHECK(std::find(argv.begin(), argv.end(), "--enable-expert-parallel") != argv.end());
  CHECK(std::find(argv.begin(), argv.end(), "--enable-auto-tool-choice") != argv.end());
  CHECK(std::find(argv.begin(), argv.end(), "--nnodes") == argv.end());
}

TEST_CASE("vLLM workers on other nodes run headless") {
  LaunchOptions o;
  o.flags = k3("h100", 32, Engine::vllm);
  o.flags.context = 32768;
  o.flags.users = 1;
  const Report r = run_launch(cat(), o);
  REQUIRE(r.exit_code == 0);
  const auto& cmds = r.data["commands"];
  REQUIRE(cmds.size() == 4);
  const auto head = cmds[0]["argv"].get<std::vector<std::string>>();
  const auto w3 = cmds[3]["argv"].get<std::vector<std::string>>();
  CHECK(std::find(head.begin(), head.end(), "--headless") == head.end());
  CHECK(std::find(w3.begin(), w3.end(), "--headless") != w3.end());
}

TEST_CASE("launch refuses a deployment that does not fit") {
  LaunchOptions o;
  o.flags = k3("b200", 8, Engine::sglang);
  const Report r = run_launch(cat(), o);
  CHECK(r.exit_code == 1);
  CHECK(r.data["emitted"] == false);
  CHECK(r.raw_text.empty());
}

TEST_CASE("a hostile model path comes out inert in the shell script and reaches the engine as one argument") {
  const std::string hostile = "evil path/it's \"quoted\" $(touch /tmp/k3plan-pwned) `id` ;rm -rf x\nnext line";
  LaunchOptions o;
  o.flags = k3("b200", 16, Engine::sglang);
  o.flags.model_path = hostile;
  o.flags.head_address = "10.0.0.1";
  const Report r = run_launch(cat(), o);
  REQUIRE(r.exit_code == 0);
  const TempDir tmp;
  const fs::path& dir = tmp.path();
  {
    std::ofstream(dir / "run.sh") << r.raw_text;
  }
  k3plan_test::write_engine_stubs(dir);
  std::remove("/tmp/k3plan-pwned");
  CHECK(run_shell("bash -n " + (dir / "run.sh").string() + " 2>&1; echo rc=$?") == "rc=0\n");
  const std::string out = run_shell("PATH=" + dir.string() + ":$PATH bash " + (dir / "run.sh").string() + " 1");
  const std::vector<std::string> args = k3plan_test::split_nul(out);
  auto it = std::find(args.begin(), args.end(), "--model-path");
  REQUIRE(it != args.end());
  CHECK(*(it + 1) == hostile);
  CHECK_FALSE(fs::exists("/tmp/k3plan-pwned"));
}

TEST_CASE("the LeaderWorkerSet manifest parses as YAML and keeps hostile strings literal") {
  const std::string hostile = "evil\": $(LWS_LEADER_ADDRESS) 'x'\n- injected: true";
  LaunchOptions o;
  o.flags = k3("b200", 16, Engine::sglang);
  o.flags.model_path = hostile;
  o.emit = "k8s";
  const Report r = run_launch(cat(), o);
  REQUIRE(r.exit_code == 0);
  std::vector<YAML::Node> docs;
  REQUIRE_NOTHROW(docs = YAML::LoadAll(r.raw_text));
  REQUIRE(docs.size() == 2);
  const auto lws = docs[0];
  CHECK(lws["kind"].as<std::string>() == "LeaderWorkerSet");
  CHECK(lws["spec"]["leaderWorkerTemplate"]["size"].as<int>() == 2);
  const auto cmd = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]["command"];
  std::vector<std::string> argv;
  for (const auto& a : cmd) argv.push_back(a.as<std::string>());
  auto it = std::find(argv.begin(), argv.end(), "--model-path");
  REQUIRE(it != argv.end());
  // the kubelet turns $$( back into a literal $(, so the engine sees the path unchanged
  std::string expected = hostile;
  expected.replace(expected.find("$("), 2, "$$(");
  CHECK(*(it + 1) == expected);
  CHECK(std::find(argv.begin(), argv.end(), "$(LWS_WORKER_INDEX)") != argv.end());
  CHECK(std::find(argv.begin(), argv.end(), "$(LWS_LEADER_ADDRESS):20000") != argv.end());
  CHECK(lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"]
            .as<std::string>() == "8");
}

TEST_CASE("launch emits SGLang commands for Kimi K3 on 4 x 8 H100, one per node") {
  LaunchOptions o;
  o.flags = k3("h100", 32, Engine::sglang);
  o.flags.context = 32768;
  o.flags.users = 4;
  o.flags.head_address = "10.0.0.1";
  const Report r = run_launch(cat(), o);
  REQUIRE(r.exit_code == 0);
  const auto& cmds = r.data["commands"];
  REQUIRE(cmds.size() == 4);
  for (int rank = 0; rank < 4; ++rank) {
    const auto argv = cmds[static_cast<std::size_t>(rank)]["argv"].get<std::vector<std::string>>();
    auto value = [&](const std::string& flag) {
      for (std::size_t i = 0; i + 1 < argv.size(); ++i)
        if (argv[i] == flag) return argv[i + 1];
      return std::string("<absent>");
    };
    const int tp = std::stoi(value("--tp-size"));
    const int pp = value("--pp-size") == "<absent>" ? 1 : std::stoi(value("--pp-size"));
    CHECK(tp * pp == 32);
    CHECK(896 % std::stoi(value("--ep-size")) == 0);
    CHECK(value("--nnodes") == "4");
    CHECK(value("--node-rank") == std::to_string(rank));
    CHECK(value("--dist-init-addr") == "10.0.0.1:20000");
    CHECK(value("--context-length") == "32768");
  }
}

TEST_CASE("without --head-address only the head-address flags expand HEAD_ADDR, and a model path holding it stays literal") {
  const std::string hostile = "${HEAD_ADDR}$(touch /tmp/k3plan-pwned-head)";
  for (Engine e : {Engine::sglang, Engine::vllm}) {
    LaunchOptions o;
    o.flags = k3("h100", 32, e);
    o.flags.context = 32768;
    o.flags.users = 1;
    o.flags.model_path = hostile;
    const Report r = run_launch(cat(), o);
    REQUIRE(r.exit_code == 0);
    const TempDir tmp;
    const fs::path& dir = tmp.path();
    {
      std::ofstream(dir / "run.sh") << r.raw_text;
    }
    k3plan_test::write_engine_stubs(dir);
    std::remove("/tmp/k3plan-pwned-head");
    CHECK(run_shell("bash -n " + (dir / "run.sh").string() + " 2>&1; echo rc=$?") == "rc=0\n");
    // unset: the script refuses before running anything
    CHECK(run_shell("env -u HEAD_ADDR PATH=" + dir.string() + ":$PATH bash " + (dir / "run.sh").string() + " 1 2>&1; echo rc=$?")
              .find("rc=2") != std::string::npos);
    const std::string out = run_shell("HEAD_ADDR=10.9.8.7 PATH=" + dir.string() + ":$PATH bash " + (dir / "run.sh").string() + " 1");
    const std::vector<std::string> args = k3plan_test::split_nul(out);
    INFO(to_string(e) << ": " << r.raw_text.substr(0, 3000));
    CHECK(std::find(args.begin(), args.end(), hostile) != args.end());  // the path, unexpanded
    const bool head_seen = std::find(args.begin(), args.end(), "10.9.8.7:20000") != args.end() ||
                           std::find(args.begin(), args.end(), "10.9.8.7") != args.end();
    CHECK(head_seen);
    CHECK_FALSE(fs::exists("/tmp/k3plan-pwned-head"));
  }
}

TEST_CASE("launch scripts fit 100 columns: one flag per continuation line and still valid bash", "[launch]") {
  TempDir tmp;
  for (const char* file : {"examples/deploy/llama-70b-h100-vllm.yaml", "examples/deploy/kimi-k3-2x8-b200-sglang.yaml",
                           "examples/deploy/kimi-k3-b300-sglang.yaml"}) {
    INFO(file);
    const auto res = k3plan_test::run({"launch", std::string(K3PLAN_SOURCE_DIR) + "/" + file});
    REQUIRE(res.code == 0);
    std::istringstream in(res.out);
    std::string line;
    int continued = 0;
    while (std::getline(in, line)) {
      CHECK(line.size() <= 100);
      if (line.size() >= 2 && line.compare(line.size() - 2, 2, " \\") == 0) ++continued;
    }
    CHECK(continued >= 3);
    const fs::path script = tmp.path() / "run.sh";
    std::ofstream(script) << res.out;
    CHECK(run_shell("bash -n " + script.string() + " 2>&1; echo rc=$?") == "rc=0\n");
  }
}
