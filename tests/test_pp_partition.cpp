// The manual pipeline layer split (VLLM_PP_LAYER_PARTITION / SGLANG_PP_LAYER_PARTITION): the
// engines' get_pp_indices takes one count per stage summing to the decoder layers, and raises
// otherwise (vllm/distributed/utils.py @ v0.19.0, python/sglang/srt/distributed/utils.py @ 0077f84d).
// Checked through the paths a user runs: fit, launch (script run with a stub engine), check.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <k3plan/budget.hpp>
#include <k3plan/catalogue.hpp>
#include <k3plan/engine.hpp>
#include <k3plan/engine_version.hpp>
#include <nlohmann/json.hpp>

#include "support.hpp"

using namespace k3plan;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {
using k3plan_test::run;
using k3plan_test::run_shell;
using k3plan_test::TempDir;

std::vector<int> stage_counts(const json& fit) {
  std::vector<int> out;
  for (const auto& s : fit.at("stages")) out.push_back(s.at("layers").get<int>());
  return out;
}
}  // namespace

TEST_CASE("a layer split the engine accepts decides every stage's layers, in order, in every engine window") {
  const std::vector<int> split{19, 21, 21, 19};
  for (Engine e : kEngines)
    for (const auto& v : engine_versions(e)) {
      const EngineModel& em = engine_model(e, v.id);
      INFO(to_string(e) << " " << v.id);
      CHECK(EngineModel::pp_partition_error(split, 80, 4).empty());
      int first = 0;
      for (int st = 0; st < 4; ++st) {
        const StageLayers s = em.stage_layers(80, 4, st, split);
        CHECK(s.first == first);
        CHECK(s.count == split[static_cast<std::size_t>(st)]);
        first += s.count;
      }
      // one the engine refuses is not used: the version's own split (it does not start anyway)
      CHECK(em.stage_layers(80, 4, 0, {19, 21, 21}).count == em.stage_layers(80, 4, 0).count);
    }
}

TEST_CASE("the engines' own words for a layer split they refuse") {
  CHECK(EngineModel::pp_partition_error({19, 21, 21}, 80, 4) == "len(partitions)=3 does not match pp_size=4.");
  CHECK(EngineModel::pp_partition_error({19, 21, 21, 20}, 80, 4) == "sum(partitions)=81 does not match num_hidden_layers=80.");
  CHECK_FALSE(EngineModel::pp_partition_error({-1, 41, 20, 20}, 80, 4).empty());
  CHECK(EngineModel::pp_partition_error({0, 40, 20, 20}, 80, 4).empty());  // an empty stage: both engines take it
  CHECK(engine_model(Engine::vllm).pp_partition_refusal({19, 21, 21}, 80, 4) ==
        "VLLM_PP_LAYER_PARTITION=19,21,21: vLLM refuses to start (len(partitions)=3 does not match pp_size=4.)");
  CHECK(engine_model(Engine::sglang).pp_partition_refusal({}, 80, 4).empty());
}

TEST_CASE("fit with a layer split and no --pp runs one stage per entry and prints the variable before each engine") {
  const auto r = run({"fit", "-m", "llama-3.1-70b", "-g", "h100", "--tp", "2", "--pp-layer-partition", "19,21,21,19", "--engine", "vllm",
                      "--format", "json"});
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  CHECK(j.at("layout").at("pp") == 4);
  CHECK(stage_counts(j) == std::vector<int>{19, 21, 21, 19});
  CHECK(j.at("env").at("vllm") == json::array({"VLLM_PP_LAYER_PARTITION=19,21,21,19"}));
  CHECK(j.at("env").at("sglang") == json::array({"SGLANG_PP_LAYER_PARTITION=19,21,21,19"}));
  // the stage with the most layers is the one that limits the pool: 21 layers, against 20 unsplit
  const auto even = run({"fit", "-m", "llama-3.1-70b", "-g", "h100", "--tp", "2", "--pp", "4", "--engine", "vllm", "--format", "json"});
  REQUIRE(even.code == 0);
  CHECK(json::parse(even.out).at("kv_cache_tokens").get<std::int64_t>() > j.at("kv_cache_tokens").get<std::int64_t>());
  // the table's commands stay valid shell with the assignment on its own line
  const auto text = run({"fit", "-m", "llama-3.1-70b", "-g", "h100", "--tp", "2", "--pp-layer-partition", "19,21,21,19"});
  REQUIRE(text.code == 0);
  CHECK(text.out.find("  SGLANG_PP_LAYER_PARTITION=19,21,21,19 \\\n  python3 -m sglang.launch_server") != std::string::npos);
}

TEST_CASE("fit refuses a layer split that does not match the stages or the layers, as usage, naming the model's layers") {
  const auto count = run({"fit", "-m", "llama-3.1-70b", "-g", "h100", "--pp", "4", "--pp-layer-partition", "40,40"});
  CHECK(count.code == 2);
  CHECK(count.err.find("len(partitions)=2 does not match pp_size=4.") != std::string::npos);
  const auto sum = run({"fit", "-m", "llama-3.1-70b", "-g", "h100", "--pp-layer-partition", "40,41"});
  CHECK(sum.code == 2);
  CHECK(sum.err.find("llama-3.1-70b has 80 decoder layers") != std::string::npos);
  CHECK(run({"fit", "-m", "llama-3.1-70b", "-g", "h100", "--pp-layer-partition", "40,-40"}).code == 2);
}

TEST_CASE("launch exports the engine's own variable on every node, and the script runs it into the engine's environment") {
  for (const char* engine : {"vllm", "sglang"}) {
    INFO(engine);
    const auto r = run({"launch", "-m", "llama-3.1-70b", "-g", "h100", "--tp", "4", "--pp-layer-partition", "19,21,21,19", "--engine",
                        engine, "--head-address", "10.0.0.1"});
    REQUIRE(r.code == 0);
    const std::string var = std::string(engine) == "vllm" ? "VLLM_PP_LAYER_PARTITION" : "SGLANG_PP_LAYER_PARTITION";
    const TempDir tmp;
    const fs::path& dir = tmp.path();
    std::ofstream(dir / "run.sh") << r.out;
    // stub engines that print the variable the engine would read
    for (const char* prog : {"python3", "vllm"}) {
      std::ofstream(dir / prog) << "#!/bin/sh\nprintf '%s' \"${" << var << "-unset}\"\n";
      fs::permissions(dir / prog, fs::perms::owner_all);
    }
    CHECK(run_shell("bash -n " + (dir / "run.sh").string() + " 2>&1; echo rc=$?") == "rc=0\n");
    for (const char* rank : {"0", "1"})
      CHECK(run_shell("PATH=" + dir.string() + ":$PATH bash " + (dir / "run.sh").string() + " " + rank) == "19,21,21,19");
  }
}

TEST_CASE("check reads the split from a deployment file and from the variable before a command") {
  const TempDir tmp;
  const fs::path file = tmp.path() / "d.yaml";
  std::ofstream(file) << "model: llama-3.1-70b\ngpu: h100\ngpus: 8\nengine: vllm\nparallel: {tp: 2, pp_layer_partition: \"19,21,21,19\"}\n"
                         "context: 8k\n";
  const auto ok = run({"check", file.string(), "--format", "json"});
  CHECK(ok.code == 0);
  const auto bad = run({"check", "--gpu", "h100", "--command",
                        "VLLM_PP_LAYER_PARTITION=19,21,21 vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 2 "
                        "--pipeline-parallel-size 4 --max-model-len 8192 --enable-auto-tool-choice --tool-call-parser llama3_json"});
  CHECK(bad.code == 1);
  CHECK(bad.out.find("[engine/pp-layer-partition]") != std::string::npos);
  CHECK(bad.out.find("memory/does-not-fit") == std::string::npos);  // reported once, as the engine's refusal
}

TEST_CASE("launch refuses a layer split the engine would refuse as bad input, naming the flag or the file's field") {
  const auto flags = run({"launch", "-m", "llama-3.1-70b", "-g", "h100", "--tp", "2", "--pp", "4", "--pp-layer-partition", "19,21,21", "-o",
                          (fs::temp_directory_path() / "k3plan-pp-refused").string()});
  CHECK(flags.code == 2);
  CHECK(flags.err.find("k3plan: error: --pp-layer-partition 19,21,21: SGLang would refuse SGLANG_PP_LAYER_PARTITION: len(partitions)=3 "
                       "does not match pp_size=4.") != std::string::npos);
  CHECK_FALSE(fs::exists(fs::temp_directory_path() / "k3plan-pp-refused"));
  // an explicit --pp 1 is the stage count the split must match, not the split's own length
  const auto pp1 = run({"launch", "-m", "llama-3.1-70b", "-g", "h100", "--tp", "8", "--pp", "1", "--pp-layer-partition", "40,40", "-o",
                        (fs::temp_directory_path() / "k3plan-pp-refused").string()});
  CHECK(pp1.code == 2);
  CHECK(pp1.err.find("len(partitions)=2 does not match pp_size=1.") != std::string::npos);
  const std::string file = std::string(K3PLAN_SOURCE_DIR) + "/examples/bad/pp-layer-partition.yaml";
  const auto yaml = run({"launch", file});
  CHECK(yaml.code == 2);
  CHECK(yaml.err.find("pp-layer-partition.yaml:8:") != std::string::npos);
  CHECK(yaml.err.find("sum(partitions)=81 does not match num_hidden_layers=80.") != std::string::npos);
}
