// `k3plan check`: examples pass and fail as documented, SARIF is well formed, engine command lines
// and LeaderWorkerSet manifests are read right, and hostile input ends in exit 2 or a finding,
// never a crash or a hang.
#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <k3plan/catalogue.hpp>
#include <k3plan/check.hpp>
#include <k3plan/deploy.hpp>
#include <k3plan/error.hpp>
#include <k3plan/input_file.hpp>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "support.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace k3plan;

using k3plan_test::kBinary;
const std::string kSourceDir = K3PLAN_SOURCE_DIR;

using k3plan_test::run;
using k3plan_test::Run;
using k3plan_test::slurp;
using k3plan_test::TempDir;

using k3plan_test::count_lines;

// exit 2, nothing on stdout, one line on stderr holding every needle
void expect_unreadable(const std::vector<std::string>& args, const std::vector<std::string>& needles) {
  k3plan_test::expect_usage_error(args, needles);
}

const Catalogue& catalogue() {
  static const Catalogue cat = Catalogue::embedded();
  return cat;
}

std::vector<std::string> yaml_files(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".yaml" || e.path().extension() == ".yml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<json> findings_of(const Report& r, const std::string& severity = "") {
  std::vector<json> out;
  for (const auto& f : r.data.at("findings"))
    if (severity.empty() || f.at("severity") == severity) out.push_back(f);
  return out;
}

bool has_rule(const Report& r, const std::string& rule, const std::string& severity = "") {
  for (const auto& f : findings_of(r, severity))
    if (f.at("rule") == rule) return true;
  return false;
}

std::string dump_findings(const Report& r) {
  std::string s;
  for (const auto& n : r.notes) s += n + "\n";
  return s;
}

Report check_command(const std::string& command, const std::string& gpu = "", bool strict = false) {
  CheckOptions o;
  o.commands = {command};
  o.gpu = gpu;
  o.strict = strict;
  return run_check(catalogue(), o);
}

Report check_file(const std::string& path, bool strict = false) {
  CheckOptions o;
  o.files = {path};
  o.strict = strict;
  return run_check(catalogue(), o);
}

const std::regex kLine(R"(^[^\n]+:[0-9]+:[0-9]+: (error|warning|note): [^\n]* \[[a-z0-9-]+/[a-z0-9-]+\]$)");

}  // namespace

TEST_CASE("check: every examples/deploy file passes, with no warnings", "[check]") {
  const auto files = yaml_files(fs::path(kSourceDir) / "examples" / "deploy");
  REQUIRE(files.size() >= 3);
  for (const auto& f : files) {
    const Report r = check_file(f, /*strict=*/true);
    INFO(f << "\n" << dump_findings(r));
    CHECK(r.exit_code == 0);
    CHECK(r.data.at("errors") == 0);
    CHECK(r.data.at("warnings") == 0);
    CHECK(r.data.at("inputs").at(0).at("fits") == true);
  }
}

TEST_CASE("check: text output is one compiler-style line per finding", "[check]") {
  const std::string bad = kSourceDir + "/examples/bad/tp-heads.yaml";
  const Run r = run({"check", bad});
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(r.out.find(
            bad +
            ":8:16: error: vLLM: Total number of attention heads (64) must be divisible by tensor parallel size (6). [engine/tp-heads]") !=
        std::string::npos);
  std::istringstream in(r.out);
  std::string line;
  int findings = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line.rfind("k3plan check:", 0) == 0) continue;
    INFO(line);
    CHECK(std::regex_match(line, kLine));
    ++findings;
  }
  CHECK(findings == 1);
  CHECK(r.out.find("k3plan check: 1 input, 1 error, 0 warnings, 0 notes: FAILED") != std::string::npos);
}

TEST_CASE("check: SARIF 2.1.0 is structurally valid", "[check][sarif]") {
  CheckOptions o;
  for (const auto& f : yaml_files(fs::path(kSourceDir) / "examples" / "bad")) o.files.push_back(f);
  o.commands = {"vllm serve moonshotai/Kimi-K3 --tensor-parallel-size 8"};
  o.format_hint = "sarif";
  const Report r = run_check(catalogue(), o);
  CHECK(r.exit_code == 1);
  const json& s = r.data;
  CHECK(s.at("version") == "2.1.0");
  CHECK(s.at("$schema").get<std::string>().find("sarif-2.1.0") != std::string::npos);
  REQUIRE(s.at("runs").is_array());
  REQUIRE(s.at("runs").size() == 1);
  const json& run0 = s.at("runs").at(0);
  CHECK(run0.at("tool").at("driver").at("name") == "k3plan");
  const json& rules = run0.at("tool").at("driver").at("rules");
  REQUIRE(rules.is_array());
  const json& results = run0.at("results");
  REQUIRE(results.size() >= o.files.size());
  bool saw_logical = false;
  for (const auto& res : results) {
    INFO(res.dump());
    REQUIRE(res.at("ruleId").is_string());
    const std::string level = res.at("level");
    CHECK((level == "error" || level == "warning" || level == "note"));
    CHECK(res.at("message").at("text").is_string());
    const auto idx = res.at("ruleIndex").get<std::size_t>();
    REQUIRE(idx < rules.size());
    CHECK(rules.at(idx).at("id") == res.at("ruleId"));
    REQUIRE(res.at("locations").is_array());
    REQUIRE(res.at("locations").size() == 1);
    const json& loc = res.at("locations").at(0);
    if (loc.contains("physicalLocation")) {
      const json& pl = loc.at("physicalLocation");
      const std::string uri = pl.at("artifactLocation").at("uri");
      CHECK(uri.find(' ') == std::string::npos);
      CHECK(uri.find("examples/bad/") != std::string::npos);
      CHECK(pl.at("region").at("startLine").get<int>() >= 1);
      CHECK(pl.at("region").at("startColumn").get<int>() >= 1);
    } else {
      saw_logical = true;  // the literal --command has no file
      CHECK(loc.at("logicalLocations").at(0).at("name") == "<command>");
    }
  }
  CHECK(saw_logical);
  for (const auto& rule : rules) {
    CHECK(rule.at("id").is_string());
    CHECK(rule.at("shortDescription").at("text").is_string());
  }
}

TEST_CASE("check --format sarif through the binary: JSON on stdout, exit code kept", "[check][sarif][cli]") {
  const Run bad = run({"check", kSourceDir + "/examples/bad/over-budget.yaml", "--format", "sarif"});
  INFO(bad.err);
  CHECK(bad.code == 1);
  json j;
  REQUIRE_NOTHROW(j = json::parse(bad.out));
  CHECK(j.at("version") == "2.1.0");
  bool over = false;
  for (const auto& res : j.at("runs").at(0).at("results")) over = over || (res.at("ruleId") == "budget/over" && res.at("level") == "error");
  CHECK(over);
  const Run good = run({"check", kSourceDir + "/examples/deploy/kimi-k3-b300-sglang.yaml", "-f", "sarif"});
  CHECK(good.code == 0);
  REQUIRE_NOTHROW(j = json::parse(good.out));
  CHECK(j.at("runs").at(0).at("results").empty());
  const Run js = run({"check", kSourceDir + "/examples/deploy/llama-70b-h100-vllm.yaml", "--command",
                      "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 8", "--gpu", "h100", "-f", "json"});
  INFO(js.err);
  CHECK(js.code == 0);
  REQUIRE_NOTHROW(j = json::parse(js.out));
  CHECK(j.at("inputs").size() == 2);
  CHECK(j.at("passed") == true);
}

TEST_CASE("check: published Kimi K3 recipes parse into the right layout", "[check][command]") {
  SECTION("SGLang TP16 EP16 on 2 x 8 H200 (cookbook H200 cell)") {
    const std::string cmd =
        "python3 -m sglang.launch_server --model-path moonshotai/Kimi-K3 --tp-size 16 --ep-size 16 --trust-remote-code "
        "--tool-call-parser kimi_k3 --reasoning-parser kimi_k3";
    std::vector<Finding> f;
    const Deployment d = parse_launch_command(cmd, "<command>", f);
    CHECK(f.empty());
    CHECK(d.engine == Engine::sglang);
    CHECK(d.model_path == "moonshotai/Kimi-K3");
    CHECK(d.layout.tp == 16);
    CHECK(d.layout.ep == 16);
    CHECK(d.layout.pp == 1);
    CHECK(d.trust_remote_code == true);
    CHECK(d.tool_call_parser == std::optional<std::string>("kimi_k3"));
    CHECK(d.reasoning_parser == std::optional<std::string>("kimi_k3"));
    const Report r = check_command(cmd, "h200");
    INFO(dump_findings(r));
    CHECK(r.exit_code == 0);
    CHECK(r.data.at("errors") == 0);
    CHECK(has_rule(r, "engine/nnodes", "warning"));      // 16 GPUs, no --nnodes
    CHECK(has_rule(r, "model/fp4-weights", "warning"));  // MXFP4 experts on Hopper: Marlin
    // no --context-length: the model's 1M does not fit one request; SGLang starts and caps it
    CHECK(has_rule(r, "memory/context-capped", "warning"));
    CHECK(check_command(cmd, "h200", /*strict=*/true).exit_code == 1);
    // the same with the node flags the cookbook injects
    const Report r2 = check_command(cmd + " --nnodes 2 --node-rank 0 --dist-init-addr 10.0.0.1:20000", "h200");
    CHECK_FALSE(has_rule(r2, "engine/nnodes"));
    CHECK(r2.exit_code == 0);
  }
  SECTION("vLLM TP8 + EP on 8 x B300 (recipes single_node_tp)") {
    const std::string cmd =
        "VLLM_USE_V2_MODEL_RUNNER=1 vllm serve moonshotai/Kimi-K3 --trust-remote-code --tensor-parallel-size 8 --enable-expert-parallel "
        "--gpu-memory-utilization 0.95 --max-model-len 131072 --kv-cache-dtype fp8 --max-num-seqs 16 "
        "--enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3";
    std::vector<Finding> f;
    const Deployment d = parse_launch_command(cmd, "<command>", f);
    CHECK(f.empty());
    CHECK(d.engine == Engine::vllm);
    CHECK(d.layout.tp == 8);
    CHECK(d.layout.ep == 8);
    CHECK(d.context == 131072);
    CHECK(d.kv_dtype == "fp8");
    REQUIRE(d.gpu_memory_utilization);
    CHECK(*d.gpu_memory_utilization == Approx(0.95));
    const Report r = check_command(cmd, "b300", /*strict=*/true);
    INFO(dump_findings(r));
    CHECK(r.exit_code == 0);
    CHECK(r.data.at("warnings") == 0);
  }
  SECTION("vLLM TP8 x PP2 over 2 x 8 B200 (recipes multi_node_tp_pp), multi-line script") {
    const std::string script =
        "#!/bin/sh\n# node 0\nvllm serve moonshotai/Kimi-K3 \\\n  --trust-remote-code -tp 8 -pp 2 \\\n  --nnodes 2 --node-rank 0 "
        "--master-addr 10.0.0.1 \\\n"
        "  --gpu-memory-utilization 0.90 --max-num-batched-tokens 8192 --max-model-len 128k \\\n"
        "  --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 --enable-auto-tool-choice\n";
    std::vector<Finding> f;
    const Deployment d = parse_launch_command(script, "node0.sh", f);
    CHECK(f.empty());
    CHECK(d.layout.tp == 8);
    CHECK(d.layout.pp == 2);
    CHECK(d.nodes == 2);
    CHECK(d.layout.ep == 1);  // no --enable-expert-parallel: experts TP-sharded
    CHECK(d.pos("parallel.tp").line == 4);
    const Report r = check_command(script, "b200");
    INFO(dump_findings(r));
    CHECK(r.exit_code == 0);
    CHECK(r.data.at("inputs").at(0).at("layout").at("ep") == 1);
  }
  SECTION("the example launch script passes") {
    const Report r = check_command(kSourceDir + "/examples/launch/kimi-k3-b300-vllm.sh", "b300", true);
    INFO(dump_findings(r));
    CHECK(r.exit_code == 0);
  }
}

TEST_CASE("check: model correctness rules on command lines", "[check][command]") {
  SECTION("--trust-remote-code and the parsers missing for Kimi K3") {
    const Report r =
        check_command("vllm serve moonshotai/Kimi-K3 --tensor-parallel-size 8 --enable-expert-parallel --max-model-len 32k", "b300");
    INFO(dump_findings(r));
    CHECK(r.exit_code == 1);
    CHECK(has_rule(r, "model/trust-remote-code", "error"));
    CHECK(has_rule(r, "model/tool-call-parser", "warning"));
    CHECK(has_rule(r, "model/reasoning-parser", "warning"));
    for (const auto& f : findings_of(r, "error")) {
      CHECK(f.at("line") == 1);
      CHECK(f.at("column") == 12);  // the model argument
    }
  }
  SECTION("no --gpu: a note, memory rules skipped, engine rules still run") {
    const Report r = check_command("vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 6");
    INFO(dump_findings(r));
    CHECK(has_rule(r, "check/no-gpu", "note"));
    CHECK(has_rule(r, "engine/tp-heads", "error"));
    CHECK_FALSE(r.data.at("inputs").at(0).contains("fits"));
  }
  SECTION("context above the model maximum") {
    const Report r = check_command("vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 8 --max-model-len 256k", "h200");
    CHECK(has_rule(r, "memory/context-max", "error"));
  }
  SECTION("SGLang ep larger than tp is refused, not a division by zero") {
    const Report r =
        check_command("python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 4 --ep 8 --trust-remote-code", "h200");
    INFO(dump_findings(r));
    CHECK(has_rule(r, "engine/ep-tp", "error"));
  }
  SECTION("positional model paths keep their underscores; flags accept them") {
    std::vector<Finding> f;
    const Deployment d = parse_launch_command("vllm serve /models/Kimi_K3_local --max_model_len 8192 --tensor_parallel_size 2", "<c>", f);
    CHECK(d.model_path == "/models/Kimi_K3_local");
    CHECK(d.context == 8192);
    CHECK(d.layout.tp == 2);
  }
  SECTION("the older vLLM entry point") {
    std::vector<Finding> f;
    const Deployment d = parse_launch_command(
        "python3 -m vllm.entrypoints.openai.api_server --model deepseek-ai/DeepSeek-V3 --tensor-parallel-size 8", "<c>", f);
    CHECK(d.engine == Engine::vllm);
    CHECK(d.model_path == "deepseek-ai/DeepSeek-V3");
    CHECK(d.layout.tp == 8);
  }
}

TEST_CASE("check: dtype rules against what the GPU runs natively", "[check]") {
  Catalogue cat = Catalogue::embedded();
  cat.add_text(R"Y(gpus:
  - id: a100-test
    name: NVIDIA A100 SXM4 80GB (test entry)
    vendor: nvidia
    source: "test"
    hbm_gb: 80
    memory_reported_mib: 81920
    hbm_bandwidth_tb_s: 2.0
    tflops_dense: {bf16: 312, fp8: 0, fp4: 0}
    native_formats: [bf16, fp16]
    scaleup_gb_s: 600
    gpus_per_node: 8
    scaleup_domain_gpus: 8
    power_w: 400
    price: {usd_per_hour: 1.5, date: 2026-05, source: "test"}
)Y",
               "test-gpus.yaml");
  TempDir dir;
  const std::string f =
      dir.write("llama-a100.yaml",
                "model: llama-3.1-70b\ngpu: a100-test\ngpus: 8\nengine: vllm\nparallel: {tp: 8}\ncontext: 8k\nusers: 4\nkv_dtype: fp8\n");
  CheckOptions o;
  o.files = {f};
  const Report r = run_check(cat, o);
  INFO(dump_findings(r));
  CHECK(r.exit_code == 1);
  REQUIRE(has_rule(r, "model/kv-dtype", "error"));
  for (const auto& x : findings_of(r, "error"))
    if (x.at("rule") == "model/kv-dtype") CHECK(x.at("line") == 8);

  // FP4 experts on a GPU without FP4 run, slower: a warning that --strict turns into a failure
  const std::string k3 =
      dir.write("k3-h200.yaml",
                "model: kimi-k3\ngpu: h200\nnodes: 2\nengine: sglang\nparallel: {tp: 16, ep: 16}\ncontext: 32k\nusers: 4\nkv_dtype: fp8\n");
  const Report w = check_file(k3);
  INFO(dump_findings(w));
  CHECK(w.exit_code == 0);
  CHECK(has_rule(w, "model/fp4-weights", "warning"));
  CHECK(check_file(k3, /*strict=*/true).exit_code == 1);
}

TEST_CASE("check: memory headroom under 5% is a warning", "[check]") {
  TempDir dir;
  const std::string f =
      dir.write("tight.yaml",
                "model: kimi-k3\ngpu: b300\ngpus: 8\nengine: sglang\nparallel: {tp: 8, ep: 8}\ncontext: 138k\nusers: 8\nkv_dtype: fp8\n");
  const Report r = check_file(f);
  INFO(dump_findings(r));
  CHECK(r.exit_code == 0);
  CHECK(has_rule(r, "memory/headroom", "warning"));
  CHECK(check_file(f, true).exit_code == 1);
}

TEST_CASE("check: LeaderWorkerSet manifests", "[check][manifest]") {
  const std::string example = kSourceDir + "/examples/k8s/kimi-k3-2x8-h200-sglang-lws.yaml";
  SECTION("the example: size 2 x 8 GPUs per pod, GPU from the node selector") {
    CheckOptions o;
    o.manifests = {example};
    const Report r = run_check(catalogue(), o);
    INFO(dump_findings(r));
    CHECK(r.exit_code == 0);
    const json& in = r.data.at("inputs").at(0);
    CHECK(in.at("gpus") == 16);
    CHECK(in.at("nodes") == 2);
    CHECK(in.at("gpus_per_pod") == 8);
    CHECK(in.at("gpu") == "h200");
    CHECK(in.at("layout").at("tp") == 16);
    CHECK(in.at("fits") == true);
    // a finding inside the args block points at the manifest line of the flag
    bool found = false;
    for (const auto& f : findings_of(r))
      if (f.at("rule") == "engine/tp-across-nodes") {
        found = true;
        CHECK(f.at("line") == 27);
        CHECK(f.at("column") == 19);
      }
    CHECK(found);
  }
  TempDir dir;
  const std::string text = slurp(example);
  SECTION("size and per-pod GPUs that do not match the layout") {
    std::string t = text;
    t.replace(t.find("size: 2"), 7, "size: 3");
    CheckOptions o;
    o.manifests = {dir.write("lws3.yaml", t)};
    const Report r = run_check(catalogue(), o);
    INFO(dump_findings(r));
    CHECK(r.exit_code == 1);
    CHECK(has_rule(r, "engine/parallel-product", "error"));
    CHECK(r.data.at("inputs").at(0).at("gpus") == 24);
  }
  SECTION("a literal --nnodes that disagrees with the group size") {
    std::string t = text;
    const auto p = t.find("--nnodes $(LWS_GROUP_SIZE)");
    t.replace(p, std::string("--nnodes $(LWS_GROUP_SIZE)").size(), "--nnodes 4");
    CheckOptions o;
    o.manifests = {dir.write("lws-nnodes.yaml", t)};
    const Report r = run_check(catalogue(), o);
    CHECK(has_rule(r, "engine/nnodes", "error"));
  }
  SECTION("pods without a GPU request") {
    std::string t = text;
    const auto p = t.find("limits: {nvidia.com/gpu: \"8\"}");
    t.replace(p, std::string("limits: {nvidia.com/gpu: \"8\"}").size(), "limits: {memory: 1Ti}");
    CheckOptions o;
    o.manifests = {dir.write("lws-nogpu.yaml", t)};
    const Report r = run_check(catalogue(), o);
    CHECK(has_rule(r, "manifest/gpus", "error"));
  }
  SECTION("exec-form vLLM manifest with the GPU from --gpu") {
    const std::string m = R"Y(apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm}
spec:
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers:
          - name: vllm
            image: vllm/vllm-openai:latest
            command: ["vllm", "serve", "meta-llama/Llama-3.1-405B-Instruct", "--tensor-parallel-size", "8", "--pipeline-parallel-size", "2",
                      "--nnodes", "$(LWS_GROUP_SIZE)", "--node-rank", "$(LWS_WORKER_INDEX)", "--master-addr", "$(LWS_LEADER_ADDRESS)",
                      "--max-model-len", "32768", "--enable-auto-tool-choice", "--tool-call-parser", "llama3_json"]
            resources:
              limits:
                nvidia.com/gpu: 8
)Y";
    CheckOptions o;
    o.manifests = {dir.write("lws-vllm.yaml", m)};
    o.gpu = "h100";
    const Report r = run_check(catalogue(), o);
    INFO(dump_findings(r));
    const json& in = r.data.at("inputs").at(0);
    CHECK(in.at("gpus") == 16);
    CHECK(in.at("layout").at("pp") == 2);
    // llama3_json is vLLM's name for Llama 3.1 (SGLang's is llama3): nothing to say
    CHECK_FALSE(has_rule(r, "model/tool-call-parser"));
    CHECK_FALSE(has_rule(r, "engine/tool-call-parser"));
    CHECK_FALSE(has_rule(r, "engine/nnodes"));
  }
  SECTION("not a LeaderWorkerSet") {
    CheckOptions o;
    o.manifests = {dir.write("svc.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: x}\n")};
    const Report r = run_check(catalogue(), o);
    CHECK(has_rule(r, "manifest/structure", "error"));
  }
}

TEST_CASE("check: hostile strings in model paths stay inert and on one line", "[check][robustness]") {
  TempDir dir;
  const std::string marker = (dir.path() / "pwned").string();
  const std::vector<std::string> hostile{"$(touch " + marker + ")",   "`touch " + marker + "`", "a b\"c'd",
                                         "line1\nline2\r\x1b[31mred", "../../../../etc/passwd", "; rm -rf / #"};
  for (const auto& h : hostile) {
    INFO(h);
    // a command line, with the model path quoted for the shell
    const Report r = check_command("vllm serve " + shell_quote(h) + " --tensor-parallel-size 8", "h100");
    CHECK(has_rule(r, "model/unknown", "warning"));
    for (const auto& n : r.notes) CHECK(n.find('\n') == std::string::npos);
    for (const auto& n : r.notes)
      if (n.rfind("k3plan check:", 0) != 0) CHECK(std::regex_match(n, kLine));
    // a deployment file
    const std::string f = dir.write("hostile.yaml", "model: " + yaml_quote(h) + "\ngpu: h100\ngpus: 8\nengine: vllm\nparallel: {tp: 8}\n");
    const Report d = check_file(f);
    CHECK(d.exit_code == 1);
    CHECK(has_rule(d, "model/unknown", "error"));
    for (const auto& n : d.notes) CHECK(n.find('\n') == std::string::npos);
  }
  // through the binary as well
  const Run r = run({"check", "--gpu", "h100", "--command", "vllm serve '$(touch " + marker + ")' -tp 8", "--format", "sarif"});
  CHECK(r.code == 0);
  CHECK_NOTHROW(json::parse(r.out));
  CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("check: unreadable input exits 2 with one clear message", "[check][robustness][cli]") {
  TempDir dir;
  SECTION("a 100 MB file is refused by size before it is read") {
    const std::string p = (dir.path() / "huge.yaml").string();
    {
      std::ofstream out(p, std::ios::binary);
      out << "model: kimi-k3\ngpu: b300\ngpus: 8\n";
      const std::string pad(1 << 20, '#');
      for (int i = 0; i < 100; ++i) out << pad << '\n';
    }
    REQUIRE(fs::file_size(p) > 100u * 1000u * 1000u);
    expect_unreadable({"check", p}, {"huge.yaml", "larger than the 16 MiB limit"});
    expect_unreadable({"check", "--manifest", p}, {"larger than the 16 MiB limit"});
  }
  SECTION("10,000-deep nesting") {
    const std::string deep = std::string(10000, '[') + std::string(10000, ']') + "\n";
    expect_unreadable({"check", dir.write("deep.yaml", deep)}, {"nesting deeper than 256"});
    expect_unreadable({"check", "--manifest", dir.write("deep-lws.yaml", deep)}, {"nesting deeper than 256"});
    std::string dashes;
    for (int i = 0; i < 10000; ++i) dashes += "- ";
    expect_unreadable({"check", dir.write("dashes.yaml", dashes + "x\n")}, {"nesting deeper than 256"});
    std::string mapping = "model:\n";
    for (int i = 1; i < 300; ++i) mapping += std::string(static_cast<std::size_t>(i), ' ') + "k:\n";
    expect_unreadable({"check", dir.write("indent.yaml", mapping)}, {"nesting deeper than 256"});
    CHECK_THROWS_AS(check_yaml_limits(deep, "x"), InputError);
    CHECK_NOTHROW(check_yaml_limits(std::string(200, '[') + std::string(200, ']'), "x"));
  }
  SECTION("binary junk, malformed YAML, duplicate keys, absurd numbers, missing files") {
    std::string junk;
    for (int i = 0; i < 4096; ++i) junk += static_cast<char>((i * 131 + 7) % 256);
    expect_unreadable({"check", dir.write("junk.yaml", junk)}, {"binary data"});
    expect_unreadable({"check", dir.write("latin1.yaml", "model: caf\xe9\n")}, {"invalid UTF-8"});
    expect_unreadable({"check", dir.write("malformed.yaml", "model: [kimi-k3\ngpu: b300\n")}, {"malformed YAML"});
    expect_unreadable({"check", dir.write("scalar.yaml", "just a string\n")}, {"expected a mapping"});
    expect_unreadable({"check", dir.write("dup.yaml", "model: kimi-k3\ngpu: b300\ngpus: 8\ngpus: 16\n")},
                      {"dup.yaml:4:1", "duplicate key 'gpus'"});
    expect_unreadable({"check", dir.write("big-number.yaml", "model: kimi-k3\ngpu: b300\ngpus: 1e400\n")},
                      {"big-number.yaml:3:7", "number out of range"});
    expect_unreadable({"check", dir.write("inf.yaml", "model: kimi-k3\ngpu: b300\ngpus: 8\nusers: .inf\n")}, {"number out of range"});
    expect_unreadable({"check", (dir.path() / "missing.yaml").string()}, {"no such file"});
    expect_unreadable({"check", dir.path().string()}, {"is a directory"});
    expect_unreadable({"check", "/dev/zero"}, {"not a regular file"});
    expect_unreadable({"check", "--command", "no-such-launch.sh"}, {"no such file"});
    expect_unreadable({"check", "--command", "echo hello world"}, {"no `vllm serve`"});
    expect_unreadable({"check"}, {"nothing to check"});
    expect_unreadable({"check", "--gpu", "h1000", "--command", "vllm serve x"}, {"unknown GPU"});
    const Run hang = run({"check", "--manifest", dir.write("hang.yaml", "!,")});  // yaml-cpp's LoadAll loops forever on this one
    CHECK(hang.code == 1);
    CHECK(hang.out.find("no LeaderWorkerSet") != std::string::npos);
  }
  SECTION("an ordinary out-of-range value is a finding, not exit 2") {
    const Run r = run({"check", dir.write("zero.yaml", "model: kimi-k3\ngpu: b300\ngpus: 0\n")});
    CHECK(r.code == 1);
    CHECK(r.out.find("zero.yaml:3:7: error: 'gpus' = 0 is out of range [1, 100000] [schema/range]") != std::string::npos);
  }
}

TEST_CASE("check: parser names against each engine's registry, per release", "[check][command][flags]") {
  auto check_at = [](const std::string& command, const std::string& version) {
    CheckOptions o;
    o.commands = {command};
    o.gpu = "h100";
    o.engine_version = version;
    return run_check(catalogue(), o);
  };
  const std::string vllm = "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 --enable-auto-tool-choice --tool-call-parser ";
  const std::string sglang =
      "python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --context-length 8192 --tool-call-parser ";
  SECTION("the right name for each engine passes") {
    for (const auto& [cmd, version] : std::vector<std::pair<std::string, std::string>>{
             {vllm + "llama3_json", ""}, {vllm + "llama3_json", "0.9.2"}, {sglang + "llama3", ""}, {sglang + "llama3", "0.4.2"}}) {
      const Report r = check_at(cmd, version);
      INFO(cmd << " @ '" << version << "'\n" << dump_findings(r));
      CHECK_FALSE(has_rule(r, "engine/tool-call-parser"));
      CHECK_FALSE(has_rule(r, "model/tool-call-parser"));
    }
  }
  SECTION("the other engine's name is one the engine refuses") {
    const Report a = check_at(vllm + "llama3", "");
    INFO(dump_findings(a));
    CHECK(has_rule(a, "engine/tool-call-parser", "error"));
    CHECK(a.exit_code == 1);
    const Report b = check_at(sglang + "llama3_json", "");
    INFO(dump_findings(b));
    CHECK(has_rule(b, "engine/tool-call-parser", "error"));
  }
  SECTION("a registered name other than the catalogue's is a warning") {
    const Report r = check_at(vllm + "hermes", "");
    INFO(dump_findings(r));
    CHECK(has_rule(r, "model/tool-call-parser", "warning"));
    CHECK_FALSE(has_rule(r, "engine/tool-call-parser"));
  }
  SECTION("per release: Kimi K3's parsers arrived in SGLang 0.5.17 and vLLM main") {
    const std::string k3 =
        "python3 -m sglang.launch_server --model-path moonshotai/Kimi-K3 --tp-size 8 --trust-remote-code --context-length 32768 "
        "--tool-call-parser kimi_k3 --reasoning-parser kimi_k3";
    const Report ok = check_at(k3, "0.5.17");
    INFO(dump_findings(ok));
    CHECK_FALSE(has_rule(ok, "engine/tool-call-parser"));
    CHECK_FALSE(has_rule(ok, "engine/reasoning-parser"));
    const Report old = check_at(k3, "0.5.16");
    INFO(dump_findings(old));
    CHECK(has_rule(old, "engine/tool-call-parser", "error"));
    CHECK(has_rule(old, "engine/reasoning-parser", "error"));
    // without the parsers on a release that lacks them: a note, not a warning to add what would fail
    const std::string v =
        "vllm serve moonshotai/Kimi-K3 --tensor-parallel-size 8 --enable-expert-parallel --trust-remote-code "
        "--max-model-len 32768";
    const Report none = check_at(v, "0.17.0");
    INFO(dump_findings(none));
    CHECK(has_rule(none, "model/tool-call-parser", "note"));
    CHECK_FALSE(has_rule(none, "model/tool-call-parser", "warning"));
    const Report newest = check_at(v, "");
    CHECK(has_rule(newest, "model/tool-call-parser", "warning"));
  }
  SECTION("DeepSeek-V3 is not a reasoning model: no reasoning parser asked for") {
    const Report r = check_at(
        "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --trust-remote-code --tool-call-parser "
        "deepseekv3",
        "");
    INFO(dump_findings(r));
    CHECK_FALSE(has_rule(r, "model/reasoning-parser"));
    CHECK_FALSE(has_rule(r, "model/tool-call-parser"));
  }
}

TEST_CASE("check: the KV cache dtype against the engine release's values", "[check][flags]") {
  auto check_at = [](const std::string& command, const std::string& version) {
    CheckOptions o;
    o.commands = {command};
    o.gpu = "h100";
    o.engine_version = version;
    return run_check(catalogue(), o);
  };
  const std::string vllm =
      "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 --enable-auto-tool-choice "
      "--tool-call-parser llama3_json --kv-cache-dtype ";
  CHECK_FALSE(has_rule(check_at(vllm + "fp8", ""), "engine/kv-cache-dtype"));
  CHECK(has_rule(check_at(vllm + "bf16", ""), "engine/kv-cache-dtype", "error"));  // vLLM spells it bfloat16 (0.11+)
  CHECK_FALSE(has_rule(check_at(vllm + "bfloat16", "0.11.0"), "engine/kv-cache-dtype"));
  CHECK(has_rule(check_at(vllm + "bfloat16", "0.10.2"), "engine/kv-cache-dtype", "error"));
  const std::string sglang =
      "python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --context-length 8192 "
      "--tool-call-parser llama3 --kv-cache-dtype ";
  CHECK(has_rule(check_at(sglang + "fp8", ""), "engine/kv-cache-dtype", "error"));  // SGLang: fp8_e4m3 / fp8_e5m2
  CHECK_FALSE(has_rule(check_at(sglang + "fp8_e4m3", ""), "engine/kv-cache-dtype"));
}

TEST_CASE("yaml-cpp byte columns become code-point columns for findings and SARIF", "[check][sarif]") {
  // deployment files and manifests alike (node_pos in manifest.cpp counted bytes before)
  const std::string line = "metadata: {name: \"ll\xc3\xa4m\xc3\xa4\", size: 3}";
  const int byte_column = static_cast<int>(line.find("size")) + 1;
  CHECK(byte_column == 29);
  CHECK(k3plan::code_point_column(line, byte_column) == 27);
  CHECK(k3plan::code_point_column("plain ascii", 7) == 7);
  CHECK(k3plan::code_point_column("", 1) == 1);
}

TEST_CASE("check: a KV dtype the release has no value for is one engine/kv-cache-dtype error", "[check][flags]") {
  // fit refuses the dtype too; check reported that reason again as memory/does-not-fit
  TempDir dir;
  const std::string f = dir.write("old-sglang.yaml",
                                  "model: llama-3.1-70b\ngpu: h200\ngpus: 4\nengine: sglang\nengine_version: 0.4.0\nparallel: {tp: 4}\n"
                                  "context: 32k\nusers: 16\nkv_dtype: fp8_e4m3\n");
  const Report r = check_file(f);
  INFO(dump_findings(r));
  CHECK(r.exit_code == 1);
  CHECK(has_rule(r, "engine/kv-cache-dtype", "error"));
  CHECK_FALSE(has_rule(r, "memory/does-not-fit"));
  CHECK(r.data.at("errors") == 1);
  CheckOptions o;
  o.commands = {
      "python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --tp 4 --context-length 32768 "
      "--tool-call-parser llama3 --kv-cache-dtype fp8_e4m3"};
  o.gpu = "h200";
  o.engine_version = "0.4.0";
  const Report c = run_check(catalogue(), o);
  INFO(dump_findings(c));
  CHECK(has_rule(c, "engine/kv-cache-dtype", "error"));
  CHECK_FALSE(has_rule(c, "memory/does-not-fit"));
  CHECK(c.data.at("errors") == 1);
  o.engine_version = "0.4.1.post6";  // the first release with fp8_e4m3
  CHECK(run_check(catalogue(), o).exit_code == 0);
}

TEST_CASE("check: vLLM refuses max_num_seqs above max_num_batched_tokens", "[check][command]") {
  // vllm/config/scheduler.py: "max_num_batched_tokens (256) must be greater than or equal to
  // max_num_seqs (512)." is a ValueError at start-up; check passed it as a warning
  const std::string base =
      "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 --enable-auto-tool-choice "
      "--tool-call-parser llama3_json ";
  const Report both = check_command(base + "--max-num-seqs 512 --max-num-batched-tokens 256", "h100");
  INFO(dump_findings(both));
  CHECK(both.exit_code == 1);
  CHECK(has_rule(both, "engine/max-num-seqs", "error"));
  CHECK_FALSE(has_rule(both, "engine/warning"));
  // max_num_seqs set, the token budget left to vLLM's default (8192 on an H100): still refused
  CHECK(has_rule(check_command(base + "--max-num-seqs 16384", "h100"), "engine/max-num-seqs", "error"));
  // only the token budget set: max_num_seqs is vLLM's own default, a warning as before
  const Report tokens = check_command(base + "--max-num-batched-tokens 512", "h100");
  INFO(dump_findings(tokens));
  CHECK(tokens.exit_code == 0);
  CHECK_FALSE(has_rule(tokens, "engine/max-num-seqs"));
  CHECK(has_rule(tokens, "engine/warning", "warning"));
  // within the limit: nothing
  const Report ok = check_command(base + "--max-num-seqs 256 --max-num-batched-tokens 8192", "h100");
  CHECK(ok.exit_code == 0);
  CHECK_FALSE(has_rule(ok, "engine/max-num-seqs"));
  CHECK_FALSE(has_rule(ok, "engine/warning"));
}

TEST_CASE("check --manifest: worker ranks inside a sh -c script are checked", "[check][manifest]") {
  // the repository's own example runs its workers through `sh -c SCRIPT`: a literal rank there was
  // never evaluated (only exec form and the `exec "$@"` wrapper were)
  const std::string example = slurp(kSourceDir + "/examples/k8s/kimi-k3-2x8-h200-sglang-lws.yaml");
  const std::string worker_rank = "--node-rank $(LWS_WORKER_INDEX)\n            resources";
  REQUIRE(example.find(worker_rank) != std::string::npos);
  auto with_worker_rank = [&](const std::string& rank, int size) {
    std::string t = example;
    t.replace(t.rfind(worker_rank), worker_rank.size(), "--node-rank " + rank + "\n            resources");
    t.replace(t.find("size: 2"), 7, "size: " + std::to_string(size));
    t.replace(t.find("--tp-size 16 --ep-size 16"), 25, fmt::format("--tp-size {} --ep-size {}", 8 * size, 8 * size));
    t.replace(t.rfind("--tp-size 16 --ep-size 16"), 25, fmt::format("--tp-size {} --ep-size {}", 8 * size, 8 * size));
    TempDir dir;
    CheckOptions o;
    o.manifests = {dir.write("lws.yaml", t)};
    return run_check(catalogue(), o);
  };
  const Report literal = with_worker_rank("1", 4);  // right for worker 1, wrong for workers 2 and 3
  INFO(dump_findings(literal));
  CHECK(has_rule(literal, "manifest/worker-rank", "error"));
  CHECK_FALSE(has_rule(with_worker_rank("1", 2), "manifest/worker-rank"));                    // one worker: 1 is its rank
  CHECK_FALSE(has_rule(with_worker_rank("${LWS_WORKER_INDEX}", 4), "manifest/worker-rank"));  // the shell's form of the variable
  CHECK_FALSE(has_rule(with_worker_rank("$NODE_RANK", 4), "manifest/worker-rank"));           // a variable k3plan cannot see
}
