// `k3plan launch --emit k8s|sh|json`: manifests an operator would apply (pinned image, RFC 1123
// names, model storage, probes budgeted from the checkpoint, shm, GPU resources), LeaderWorkerSet
// ranks from LWS_WORKER_INDEX for any group size (run through the real shell with stub engines),
// and a hostile-string matrix over every emitter and both engines.
#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <k3plan/check.hpp>
#include <k3plan/error.hpp>
#include <k3plan/launch.hpp>
#include <k3plan/params.hpp>
#include <nlohmann/json.hpp>
#include <regex>

#include "support.hpp"

using namespace k3plan;
namespace fs = std::filesystem;

namespace {
using k3plan_test::cat;
using k3plan_test::k3;
using k3plan_test::kubelet;
using k3plan_test::printable_ascii;
using k3plan_test::run_shell;
using k3plan_test::split_nul;
using k3plan_test::write_engine_stubs;

std::vector<std::string> strings(const YAML::Node& seq) {
  std::vector<std::string> v;
  for (const auto& x : seq) v.push_back(x.as<std::string>());
  return v;
}

std::string value_of(const std::vector<std::string>& argv, const std::string& flag) {
  for (std::size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == flag) return argv[i + 1];
  return "<absent>";
}

const std::regex kRfc1123(R"(^[a-z0-9]([-a-z0-9]*[a-z0-9])?$)");

}  // namespace

TEST_CASE("launch k8s: image pinned to the engine release, RFC 1123 names, storage, probes, shm and GPUs", "[launch][k8s]") {
  for (Engine e : {Engine::sglang, Engine::vllm}) {
    LaunchOptions o;
    o.flags = k3("b200", 16, e);
    o.emit = "k8s";
    const Report r = run_launch(cat(), o);
    INFO(to_string(e) << "\n" << r.raw_text.substr(0, 4000));
    REQUIRE(r.exit_code == 0);
    const auto docs = YAML::LoadAll(r.raw_text);
    REQUIRE(docs.size() == 2);
    const auto lws = docs[0];
    CHECK(lws["kind"].as<std::string>() == "LeaderWorkerSet");
    CHECK(docs[1]["kind"].as<std::string>() == "Service");
    const std::string name = lws["metadata"]["name"].as<std::string>();
    CHECK(std::regex_match(name, kRfc1123));
    CHECK(name.size() <= 40);
    CHECK(std::regex_match(docs[1]["metadata"]["name"].as<std::string>(), kRfc1123));
    const auto leader = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"];
    const auto c = leader["containers"][0];
    // the image: the engine model's repository at the release the flags were checked against
    const std::string image = c["image"].as<std::string>();
    const PinnedImage pin = launch_image(e, "");
    CHECK(image == pin.image);
    CHECK(std::regex_match(image, std::regex(R"(^[a-z0-9./-]+:v[0-9]+\.[0-9]+\.[0-9]+(\.post[0-9]+)?$)")));
    CHECK(r.data["engine_flags"].get<std::string>().find(pin.release) != std::string::npos);
    // GPUs per pod, requests = limits
    CHECK(c["resources"]["limits"]["nvidia.com/gpu"].as<std::string>() == "8");
    CHECK(c["resources"]["requests"]["nvidia.com/gpu"].as<std::string>() == "8");
    // model storage: an emptyDir sized from the checkpoint as shipped (+10% + 10 GB)
    const double ckpt = weights_as_shipped(*cat().find_model("kimi-k3"), count_params(*cat().find_model("kimi-k3"))).bytes;
    const std::string want_size = std::to_string(static_cast<long long>(std::ceil((ckpt * 1.1 + 10e9) / 1073741824.0))) + "Gi";
    bool models = false, shm = false;
    for (const auto& v : leader["volumes"]) {
      if (v["name"].as<std::string>() == "models") {
        models = true;
        CHECK(v["emptyDir"]["sizeLimit"].as<std::string>() == want_size);
      }
      if (v["name"].as<std::string>() == "dshm") {
        shm = true;
        CHECK(v["emptyDir"]["medium"].as<std::string>() == "Memory");
      }
    }
    CHECK(models);
    CHECK(shm);
    CHECK(c["resources"]["requests"]["ephemeral-storage"].as<std::string>() == want_size);
    // probes: the start-up budget covers downloading the checkpoint at 0.5 GB/s
    const int period = c["startupProbe"]["periodSeconds"].as<int>();
    const int threshold = c["startupProbe"]["failureThreshold"].as<int>();
    CHECK(period * threshold >= ckpt / 0.5e9);
    CHECK(period * threshold == r.data["startup_budget_s"].get<int>());
    CHECK(c["readinessProbe"]["httpGet"]["path"].as<std::string>() == "/health");
    CHECK(c["livenessProbe"]["httpGet"]["port"].as<int>() == engine_model(e).default_port());
    // the workers serve no HTTP: no probes there
    const auto w = lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0];
    CHECK_FALSE(w["startupProbe"].IsDefined());
  }
}

TEST_CASE("launch k8s: --engine-version pins that release, a PVC or host path replaces the emptyDir", "[launch][k8s]") {
  LaunchOptions o;
  o.flags = k3("b200", 16, Engine::vllm);
  o.flags.engine_version = "0.10.1.1";
  o.emit = "k8s";
  o.model_pvc = "kimi-weights";
  const Report r = run_launch(cat(), o);
  REQUIRE(r.exit_code == 0);
  const auto lws = YAML::LoadAll(r.raw_text)[0];
  const auto spec = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"];
  CHECK(spec["containers"][0]["image"].as<std::string>() == "vllm/vllm-openai:v0.10.1.1");
  bool pvc = false;
  for (const auto& v : spec["volumes"])
    if (v["name"].as<std::string>() == "models") pvc = v["persistentVolumeClaim"]["claimName"].as<std::string>() == "kimi-weights";
  CHECK(pvc);
  CHECK_FALSE(spec["containers"][0]["resources"]["requests"]["ephemeral-storage"].IsDefined());
}

TEST_CASE("k8s names are RFC 1123 labels whatever the id holds", "[launch][k8s]") {
  for (const std::string& id :
       std::vector<std::string>{"Kimi-K3", "evil\"\n- kind: Pod", "--", "", "a..b__c", std::string(200, 'x'), "\xc3\xa9t\xc3\xa9"}) {
    const std::string n = k8s_name(id);
    INFO(n);
    CHECK(std::regex_match(n, kRfc1123));
    CHECK(n.size() <= 40);
  }
}

TEST_CASE("LeaderWorkerSet vLLM data parallel over 4 pods: each worker's start rank from LWS_WORKER_INDEX", "[launch][k8s][multinode]") {
  LaunchOptions o;
  o.flags = k3("b200", 0, Engine::vllm);
  o.flags.layout.tp = 8;
  o.flags.layout.dp = 4;
  o.layout_given = true;
  o.emit = "k8s";
  const Report r = run_launch(cat(), o);
  INFO(r.raw_text.substr(0, 5000));
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.data["nodes"] == 4);
  const auto lws = YAML::LoadAll(r.raw_text)[0];
  CHECK(lws["spec"]["leaderWorkerTemplate"]["size"].as<int>() == 4);
  const auto worker = strings(lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["command"]);
  REQUIRE(worker.size() > 4);
  CHECK(worker[0] == "/bin/sh");
  CHECK(worker[1] == "-c");
  // run the worker command as the kubelet and the shell would, with stub engines, for every index
  k3plan_test::TempDir dir;
  write_engine_stubs(dir.path());
  for (int i = 1; i < 4; ++i) {
    const std::map<std::string, std::string> env{
        {"LWS_WORKER_INDEX", std::to_string(i)}, {"LWS_GROUP_SIZE", "4"}, {"LWS_LEADER_ADDRESS", "10.1.2.3"}};
    std::string cmd = "env LWS_WORKER_INDEX=" + std::to_string(i) + " PATH=" + dir.str() + ":$PATH";
    for (const auto& a : worker) cmd += " " + shell_quote(kubelet(a, env));
    const auto argv = split_nul(run_shell(cmd));
    INFO("worker " << i);
    REQUIRE(!argv.empty());
    CHECK(argv[0] == "serve");
    CHECK(value_of(argv, "--data-parallel-size-local") == "1");
    CHECK(value_of(argv, "--data-parallel-start-rank") == std::to_string(i));
    CHECK(value_of(argv, "--data-parallel-address") == "10.1.2.3");
    CHECK(std::find(argv.begin(), argv.end(), "--headless") != argv.end());
  }
  // check --manifest reads it back with no error, and a literal start rank is caught
  k3plan_test::TempDir t;
  const std::string good = t.write("lws.yaml", r.raw_text);
  CheckOptions co;
  co.manifests = {good};
  co.gpu = "b200";
  const Report ok = run_check(cat(), co);
  INFO(nlohmann::json(ok.notes).dump(1));
  CHECK(ok.data["errors"] == 0);
  // without --engine-version, check takes the release from the image tag: the same findings as
  // naming the release launch pinned
  co.engine_version = launch_image(Engine::vllm, "").release;
  REQUIRE(!co.engine_version.empty());
  CHECK(run_check(cat(), co).data["findings"] == ok.data["findings"]);
  co.engine_version.clear();
  std::string bad = r.raw_text;
  const auto from = bad.find("- \"/bin/sh\"");
  const auto to = bad.find("- \"vllm\"", from);
  bad.replace(from, to - from, "");
  bad.insert(bad.find("- \"--headless\"", from), "- \"--data-parallel-start-rank\"\n              - \"1\"\n              ");
  co.manifests = {t.write("bad.yaml", bad)};
  const Report ko = run_check(cat(), co);
  INFO(bad.substr(0, 6000) << "\n" << nlohmann::json(ko.notes).dump(1));
  bool found = false;
  for (const auto& f : ko.data["findings"]) found = found || f["rule"] == "manifest/worker-rank";
  CHECK(found);
}

TEST_CASE("LeaderWorkerSet SGLang over 4 pods: node ranks from LWS_WORKER_INDEX pass check, a literal rank fails",
          "[launch][k8s][multinode]") {
  LaunchOptions o;
  o.flags = k3("h100", 32, Engine::sglang);
  o.flags.context = 32768;
  o.flags.users = 4;
  o.emit = "k8s";
  const Report r = run_launch(cat(), o);
  REQUIRE(r.exit_code == 0);
  const auto lws = YAML::LoadAll(r.raw_text)[0];
  const auto worker = strings(lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["command"]);
  CHECK(value_of(worker, "--node-rank") == "$(LWS_WORKER_INDEX)");
  CHECK(value_of(worker, "--nnodes") == "$(LWS_GROUP_SIZE)");
  k3plan_test::TempDir t;
  CheckOptions co;
  co.gpu = "h100";
  co.manifests = {t.write("lws.yaml", r.raw_text)};
  CHECK(run_check(cat(), co).data["errors"] == 0);
  std::string bad = r.raw_text;
  const auto wt = bad.find("workerTemplate");
  const auto p = bad.find("\"$(LWS_WORKER_INDEX)\"", wt);
  REQUIRE(p != std::string::npos);
  bad.replace(p, std::string("\"$(LWS_WORKER_INDEX)\"").size(), "\"1\"");
  co.manifests = {t.write("bad.yaml", bad)};
  const Report ko = run_check(cat(), co);
  bool found = false;
  for (const auto& f : ko.data["findings"])
    if (f["rule"] == "manifest/worker-rank") found = f["message"].get<std::string>().find("worker 2") != std::string::npos;
  CHECK(found);
}

TEST_CASE("hostile strings in every field, every emitter and both engines come out inert and unchanged", "[launch][robustness]") {
  const std::vector<std::string> hostile{"a'b",
                                         "a\"b",
                                         "$(touch PWN)",
                                         "`touch PWN`",
                                         "a;touch PWN",
                                         "a\ntouch PWN",
                                         "a\rb",
                                         "a\xc2\x85touch PWN",  // NEL
                                         "a\xe2\x80\xa8"
                                         "b",  // U+2028
                                         "a\xe2\x80\xa9"
                                         "b",  // U+2029
                                         "${HEAD_ADDR}",
                                         "a$$b",
                                         "${PWN:-$(touch PWN)}",
                                         "x: y # z { * & ! |",
                                         "-leading",
                                         "\x1b[31mred\x1b[0m",
                                         "\\\"\\n",
                                         "---\nkind: Pod"};
  k3plan_test::TempDir dir;
  write_engine_stubs(dir.path());
  const fs::path pwn = dir.path() / "PWN";
  int scripts = 0, manifests = 0, values = 0;
  for (Engine e : {Engine::sglang, Engine::vllm}) {
    for (const char* field : {"model_path", "served_model_name", "host", "head_address"}) {
      for (const auto& h : hostile) {
        LaunchOptions o;
        o.flags = k3("b200", 16, e);
        const std::string f = field;
        if (f == "model_path") o.flags.model_path = h;
        if (f == "served_model_name") o.flags.served_model_name = h;
        if (f == "host") o.flags.host = h;
        if (f == "head_address") o.flags.head_address = h;
        const std::string flag = f == "model_path"          ? (e == Engine::sglang ? "--model-path" : "serve")
                                 : f == "served_model_name" ? "--served-model-name"
                                 : f == "host"              ? "--host"
                                                            : (e == Engine::sglang ? "--dist-init-addr" : "<head>");
        INFO(to_string(e) << " " << f << " = " << nlohmann::json(h).dump());
        // shell
        o.emit = "sh";
        const Report r = run_launch(cat(), o);
        REQUIRE(r.exit_code == 0);
        const fs::path script = dir.path() / "run.sh";
        std::ofstream(script, std::ios::binary | std::ios::trunc) << r.raw_text;
        CHECK(run_shell("bash -n " + script.string() + " 2>&1; echo rc=$?") == "rc=0\n");
        for (int rank = 0; rank < 2; ++rank) {
          const auto argv = split_nul(
              run_shell("cd " + dir.str() + " && HEAD_ADDR=10.0.0.9 PATH=" + dir.str() + ":$PATH bash run.sh " + std::to_string(rank)));
          CHECK_FALSE(fs::exists(pwn));
          if (flag == "<head>") {
            const bool seen = value_of(argv, "--master-addr") == h || value_of(argv, "--data-parallel-address") == h;
            CHECK(seen);
          } else if (flag == "--dist-init-addr") {
            CHECK(value_of(argv, flag) == h + ":20000");
          } else {
            CHECK(value_of(argv, flag) == h);
          }
          ++values;
        }
        ++scripts;
        // manifest: parses into exactly the intended two objects, values unchanged after the kubelet
        o.emit = "k8s";
        const Report k = run_launch(cat(), o);
        REQUIRE(k.exit_code == 0);
        std::vector<YAML::Node> docs;
        REQUIRE_NOTHROW(docs = YAML::LoadAll(k.raw_text));
        REQUIRE(docs.size() == 2);
        CHECK(docs[0]["kind"].as<std::string>() == "LeaderWorkerSet");
        CHECK(docs[1]["kind"].as<std::string>() == "Service");
        CHECK(docs[0].size() == 4);  // apiVersion, kind, metadata, spec
        const std::map<std::string, std::string> env{{"LWS_WORKER_INDEX", "0"}, {"LWS_GROUP_SIZE", "2"}, {"LWS_LEADER_ADDRESS", "L"}};
        std::vector<std::string> argv;
        for (const auto& a : docs[0]["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]["command"])
          argv.push_back(kubelet(a.as<std::string>(), env));
        if (flag == "<head>") {
          const bool seen = value_of(argv, "--master-addr") == h || value_of(argv, "--data-parallel-address") == h;
          CHECK(seen);
        } else if (flag == "--dist-init-addr") {
          CHECK(value_of(argv, flag) == h + ":20000");
        } else {
          CHECK(value_of(argv, flag) == h);
        }
        // printable ASCII and newlines only: no line break or escape of any YAML version survives
        CHECK(printable_ascii(k.raw_text));
        ++manifests;
        // json: the same argv
        o.emit = "json";
        const Report j = run_launch(cat(), o);
        REQUIRE(j.exit_code == 0);
        CHECK(nlohmann::json::parse(j.raw_text)["commands"].size() == 2);
      }
    }
  }
  CHECK(scripts == 2 * 4 * static_cast<int>(hostile.size()));
  CHECK(manifests == scripts);
  CHECK(values == 2 * scripts);
  WARN("hostile matrix: " << scripts << " scripts, " << manifests << " manifests, " << values << " values checked");
}

TEST_CASE("invalid UTF-8 in a value that reaches a script or manifest is refused", "[launch][robustness]") {
  LaunchOptions o;
  o.flags = k3("b200", 16, Engine::sglang);
  o.flags.model_path = "bad\xff";
  o.emit = "k8s";
  CHECK_THROWS_AS(run_launch(cat(), o), InputError);
  o.emit = "sh";
  CHECK_THROWS_AS(run_launch(cat(), o), InputError);
}

TEST_CASE("launch through the binary: json on stdout without -o, layout flags as fit takes them", "[launch][cli]") {
  const auto j =
      k3plan_test::run({"launch", "-m", "llama-3.1-70b", "-g", "h100", "--engine", "vllm", "--tp", "4", "--pp", "2", "--emit", "json"});
  INFO(j.err);
  REQUIRE(j.code == 0);
  const auto data = nlohmann::json::parse(j.out);
  CHECK(data["gpus"] == 8);
  CHECK(data["layout"]["tp"] == 4);
  CHECK(data["layout"]["pp"] == 2);
  CHECK(data["context"] == 32768);  // fit's default: the model maximum capped at 32k
  const auto argv = data["commands"][0]["argv"].get<std::vector<std::string>>();
  CHECK(value_of(argv, "--tensor-parallel-size") == "4");
  CHECK(value_of(argv, "--pipeline-parallel-size") == "2");
  k3plan_test::expect_usage_error({"launch", "-m", "llama-3.1-70b", "-g", "h100", "-n", "4", "--tp", "8"}, {"-n 4", "8 GPUs"});
}

TEST_CASE("a hostile model id (from a model YAML) stays out of the script's code and the manifest's objects", "[launch][robustness]") {
  const std::string base = k3plan_test::slurp(fs::path(K3PLAN_SOURCE_DIR) / "data" / "models" / "llama-3.1-8b.yaml");
  REQUIRE(base.rfind("id: llama-3.1-8b\n", 0) == 0);
  const std::string id = "evil\"\n- kind: Pod $(touch PWN) \xc2\x85`id`\xe2\x80\xa8;x";
  k3plan_test::TempDir dir;
  write_engine_stubs(dir.path());
  const std::string model = dir.write("evil.yaml", "id: " + nlohmann::json(id).dump() + "\n" + base.substr(base.find('\n') + 1));
  for (Engine e : {Engine::sglang, Engine::vllm}) {
    INFO(to_string(e));
    LaunchOptions o;
    o.flags.model = model;
    o.flags.gpu = "h100";
    o.flags.gpus = 1;
    o.flags.engine = e;
    o.flags.context = 8192;
    o.flags.model_path = "/models/llama";
    const Report r = run_launch(cat(), o);
    REQUIRE(r.exit_code == 0);
    // the catalogue lower-cases ids; the newline and the rest reach the emitters
    REQUIRE(r.data["model"].get<std::string>().find("\"\n- kind: pod $(touch pwn)") != std::string::npos);
    const fs::path script = dir.path() / "run.sh";
    std::ofstream(script, std::ios::binary | std::ios::trunc) << r.raw_text;
    CHECK(run_shell("bash -n " + script.string() + " 2>&1; echo rc=$?") == "rc=0\n");
    const auto argv = split_nul(run_shell("cd " + dir.str() + " && PATH=" + dir.str() + ":$PATH bash run.sh"));
    CHECK_FALSE(fs::exists(dir.path() / "PWN"));
    CHECK(std::find(argv.begin(), argv.end(), "/models/llama") != argv.end());
    o.emit = "k8s";
    const Report k = run_launch(cat(), o);
    REQUIRE(k.exit_code == 0);
    const auto docs = YAML::LoadAll(k.raw_text);
    REQUIRE(docs.size() == 2);
    CHECK(docs[0]["kind"].as<std::string>() == "LeaderWorkerSet");
    CHECK(docs[1]["kind"].as<std::string>() == "Service");
    CHECK(std::regex_match(docs[0]["metadata"]["name"].as<std::string>(), kRfc1123));
  }
}

TEST_CASE("launch and check refuse the same unreadable deployment file with the same limit", "[launch][check][robustness][cli]") {
  k3plan_test::TempDir dir;
  const std::string nul = dir.write("nul.yaml", std::string("model: kimi-k3\ngpu: b300\x01\n"));
  const std::string deep = dir.write("deep.yaml", "a: " + std::string(300, '[') + std::string(300, ']') + "\n");
  for (const auto& f : {nul, deep}) {
    const auto l = k3plan_test::run({"launch", f});
    const auto c = k3plan_test::run({"check", f});
    INFO(l.err << c.err);
    CHECK(l.code == 2);
    CHECK(c.code == 2);
    CHECK(l.err == c.err);  // one line, the same words: the same reader
    CHECK(k3plan_test::count_lines(l.err) == 1);
  }
}

TEST_CASE("launch k8s: node selectors and tolerations, label syntax checked", "[launch][k8s][cli]") {
  const auto r = k3plan_test::run({"launch", "-m", "llama-3.1-70b", "-g", "h100", "-n", "8", "--emit", "k8s", "--node-selector",
                                   "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3", "--toleration", "nvidia.com/gpu:NoSchedule",
                                   "--toleration", "dedicated=llm:NoExecute"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto spec = YAML::LoadAll(r.out)[0]["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"];
  CHECK(spec["nodeSelector"]["nvidia.com/gpu.product"].as<std::string>() == "NVIDIA-H100-80GB-HBM3");
  REQUIRE(spec["tolerations"].size() == 2);
  CHECK(spec["tolerations"][0]["key"].as<std::string>() == "nvidia.com/gpu");
  CHECK(spec["tolerations"][0]["operator"].as<std::string>() == "Exists");
  CHECK(spec["tolerations"][0]["effect"].as<std::string>() == "NoSchedule");
  CHECK(spec["tolerations"][1]["operator"].as<std::string>() == "Equal");
  CHECK(spec["tolerations"][1]["value"].as<std::string>() == "llm");
  // the manifest's node selector names the GPU: check needs no --gpu
  k3plan_test::TempDir t;
  const auto c = k3plan_test::run({"check", "--manifest", t.write("lws.yaml", r.out)});
  INFO(c.out);
  CHECK(c.out.find("check/no-gpu") == std::string::npos);
  k3plan_test::expect_usage_error({"launch", "-m", "llama-3.1-70b", "-g", "h100", "-n", "8", "--emit", "k8s", "--node-selector", "a b=c"},
                                  {"--node-selector", "label key"});
  k3plan_test::expect_usage_error(
      {"launch", "-m", "llama-3.1-70b", "-g", "h100", "-n", "8", "--emit", "k8s", "--toleration", "x:Sometimes"},
      {"--toleration", "effect"});
}
