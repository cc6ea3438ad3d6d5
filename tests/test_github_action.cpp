// The composite GitHub action (.github/actions/k3plan-check/action.yml): its check and verdict
// steps, run as the runner would (bash, inputs as environment variables) with the real binary.
#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "support.hpp"

namespace {
namespace fs = std::filesystem;

std::string step_script(const YAML::Node& action, const std::string& name) {
  for (const auto& s : action["runs"]["steps"])
    if (s["name"] && s["name"].as<std::string>() == name) return s["run"].as<std::string>();
  FAIL("no step " << name);
  return "";
}

int run_bash(const std::string& script, const std::string& env, const fs::path& dir) {
  const fs::path file = dir / "step.sh";
  std::ofstream(file) << script;
  const int status = std::system(
      ("cd " + std::string(K3PLAN_SOURCE_DIR) + " && env " + env + " bash -e " + file.string() + " >" + (dir / "log").string() + " 2>&1")
          .c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::map<std::string, std::string> outputs(const fs::path& file) {
  std::map<std::string, std::string> o;
  std::istringstream in(k3plan_test::slurp(file));
  for (std::string line; std::getline(in, line);)
    if (const auto eq = line.find('='); eq != std::string::npos) o[line.substr(0, eq)] = line.substr(eq + 1);
  return o;
}
}  // namespace

TEST_CASE("the GitHub action's check step writes SARIF and the exit code, the verdict step fails on errors", "[check][sarif][action]") {
  const auto action = YAML::LoadFile(std::string(K3PLAN_SOURCE_DIR) + "/.github/actions/k3plan-check/action.yml");
  const std::string check = step_script(action, "k3plan check");
  const std::string verdict = step_script(action, "Verdict");
  k3plan_test::TempDir tmp;
  fs::create_directories(tmp.path() / "k3plan-build");
  fs::copy_file(k3plan_test::kBinary, tmp.path() / "k3plan-build" / "k3plan");
  struct Case {
    std::string env;
    std::string code;
  };
  for (const Case& c : {Case{"FILES='examples/deploy/*.yaml' MANIFESTS='examples/k8s/*.yaml'", "0"},
                        // the example manifest's H200 runs Kimi K3's MXFP4 experts through slower kernels: a warning
                        Case{"FILES='examples/deploy/*.yaml' MANIFESTS='examples/k8s/*.yaml' STRICT=true", "1"},
                        Case{"FILES='examples/bad/tp-heads.yaml examples/deploy/*.yaml'", "1"},
                        Case{"COMMANDS=examples/launch/kimi-k3-b300-vllm.sh GPU=b300", "0"}, Case{"FILES=no-such-file.yaml", "2"}}) {
    INFO(c.env);
    const fs::path out = tmp.path() / "github_output";
    fs::remove(out);
    const std::string env = "RUNNER_TEMP=" + tmp.str() + " GITHUB_OUTPUT=" + out.string() + " " + c.env;
    CHECK(run_bash(check, env, tmp.path()) == 0);  // the step itself succeeds; the verdict decides
    INFO(k3plan_test::slurp(tmp.path() / "log"));
    const auto o = outputs(out);
    CHECK(o.at("exit-code") == c.code);
    if (c.code != "2") {
      const auto sarif = nlohmann::json::parse(k3plan_test::slurp(o.at("sarif")));
      CHECK(sarif.at("version") == "2.1.0");
      const auto& results = sarif.at("runs").at(0).at("results");
      bool error = false, warning = false;
      for (const auto& x : results) {
        error = error || x.at("level") == "error";
        warning = warning || x.at("level") == "warning";
      }
      CHECK(error == (c.env.find("bad/") != std::string::npos));
      if (c.code == "1") CHECK((error || warning));
    }
    CHECK(std::to_string(run_bash(verdict, "CODE=" + c.code, tmp.path())) == c.code);
  }
}
