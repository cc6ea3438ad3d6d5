// `k3plan launch --prefill-* --decode-* --emit k8s`: the disaggregated pair as one manifest, read
// back with yaml-cpp and with `k3plan check --manifest`: a LeaderWorkerSet and leader Service per
// worker (group size and GPUs from the pool's fit), the engines' disaggregation flags per role, and
// the router as a Deployment + Service calling the workers by their Service names; the worker argv
// is the plan's (`-f json`), hostile strings stay inert, and -o writes through a temporary.
#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <k3plan/launch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "support.hpp"

using namespace k3plan;
using k3plan_test::kubelet;
using k3plan_test::printable_ascii;
using k3plan_test::run;
using k3plan_test::TempDir;
namespace fs = std::filesystem;

namespace {

const std::regex kRfc1123(R"(^[a-z0-9]([-a-z0-9]*[a-z0-9])?$)");

std::vector<std::string> strings(const YAML::Node& seq) {
  std::vector<std::string> v;
  for (const auto& x : seq) v.push_back(x.as<std::string>());
  return v;
}

std::string value_after(const std::vector<std::string>& argv, const std::string& flag) {
  for (std::size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == flag) return argv[i + 1];
  return "<absent>";
}

// The values after every occurrence of `flag`, each up to the next flag.
std::vector<std::string> values_after(const std::vector<std::string>& argv, const std::string& flag) {
  std::vector<std::string> v;
  for (std::size_t i = 0; i < argv.size(); ++i)
    if (argv[i] == flag)
      for (std::size_t j = i + 1; j < argv.size() && argv[j].rfind("--", 0) != 0; ++j) v.push_back(argv[j]);
  return v;
}

// A container's command after the kubelet: the LWS variables of pod `index` of a group of `size`.
std::vector<std::string> expanded(const YAML::Node& container, int index = 0, int size = 1) {
  const std::map<std::string, std::string> env{
      {"LWS_WORKER_INDEX", std::to_string(index)}, {"LWS_GROUP_SIZE", std::to_string(size)}, {"LWS_LEADER_ADDRESS", "leader.svc"}};
  std::vector<std::string> out;
  for (const auto& a : strings(container["command"])) out.push_back(kubelet(a, env));
  return out;
}

struct Manifest {
  std::string text;
  std::vector<YAML::Node> docs;
  nlohmann::json plan;  // the same launch's data (-f json)
  std::vector<YAML::Node> of(const std::string& kind) const {
    std::vector<YAML::Node> v;
    for (const auto& d : docs)
      if (d["kind"].as<std::string>() == kind) v.push_back(d);
    return v;
  }
  YAML::Node service(const std::string& name) const {
    for (const auto& d : of("Service"))
      if (d["metadata"]["name"].as<std::string>() == name) return d;
    FAIL("no Service " << name);
    return {};
  }
};

Manifest manifest(std::vector<std::string> args) {
  Manifest m;
  args.insert(args.end(), {"--emit", "k8s"});
  const auto r = run(args);
  INFO(r.cmdline << "\n" << r.err.substr(0, 2000));
  REQUIRE(r.code == 0);
  m.text = r.out;
  REQUIRE_NOTHROW(m.docs = YAML::LoadAll(m.text));
  args.insert(args.end(), {"-f", "json"});  // the plan behind that manifest (the same pinned release)
  const auto j = run(args);
  REQUIRE(j.code == 0);
  m.plan = nlohmann::json::parse(j.out);
  return m;
}

const nlohmann::json& command(const nlohmann::json& j, const std::string& role, int worker, int rank) {
  for (const auto& c : j["commands"])
    if (c["role"] == role && c["worker"] == worker && c["rank"] == rank) return c;
  FAIL("no command " << role << " " << worker << " " << rank);
  return j["commands"][0];
}

// The LeaderWorkerSets of a role, checked against the plan: one per worker, group size = the worker's
// nodes, GPUs per pod, the leader's argv = the plan's head command with the LWS variables for the
// head, and a leader Service selecting it. Returns the Service names, worker order.
std::vector<std::string> check_pool(const Manifest& m, const std::string& role) {
  const auto& side = m.plan["disaggregated"][role];
  const int workers = side["workers"], nodes = side["nodes_per_worker"], gpus = side["gpus_per_worker"];
  const std::string gpus_per_pod = std::to_string(nodes > 1 ? gpus / nodes : gpus);
  std::vector<std::string> services;
  for (int w = 0; w < workers; ++w) {
    INFO(role << " worker " << w);
    YAML::Node lws;
    for (const auto& d : m.of("LeaderWorkerSet"))
      if (d["metadata"]["name"].as<std::string>().find("-" + role + "-" + std::to_string(w)) != std::string::npos) lws = d;
    REQUIRE(lws.IsDefined());
    REQUIRE(lws.size() == 4);  // apiVersion, kind, metadata, spec
    const std::string name = lws["metadata"]["name"].as<std::string>();
    CHECK(std::regex_match(name, kRfc1123));
    CHECK(name.size() <= 63);
    const auto lwt = lws["spec"]["leaderWorkerTemplate"];
    CHECK(lwt["size"].as<int>() == nodes);
    const auto leader = lwt["leaderTemplate"]["spec"]["containers"][0];
    const auto worker = lwt["workerTemplate"]["spec"]["containers"][0];
    for (const auto& c : {leader, worker}) {
      CHECK(c["resources"]["limits"]["nvidia.com/gpu"].as<std::string>() == gpus_per_pod);
      CHECK(c["resources"]["requests"]["nvidia.com/gpu"].as<std::string>() == gpus_per_pod);
      CHECK(c["image"].as<std::string>() == m.plan["image"].get<std::string>());
    }
    // the leader runs the plan's head command; the head address is the LWS leader's
    auto want = command(m.plan, role, w, 0)["argv"].get<std::vector<std::string>>();
    for (auto& a : want)
      if (a.rfind("${", 0) == 0) a = "leader.svc" + a.substr(a.find('}') + 1);
    CHECK(expanded(leader, 0, nodes) == want);
    if (nodes > 1) {
      const auto wk = expanded(worker, 1, nodes);
      CHECK(value_after(wk, "--node-rank") == "1");
      CHECK(value_after(wk, "--nnodes") == std::to_string(nodes));
    }
    // the start-up budget of what this pool's pods load
    CHECK(leader["startupProbe"]["periodSeconds"].as<int>() * leader["startupProbe"]["failureThreshold"].as<int>() ==
          m.plan["startup_budget_s"][role].get<int>());
    const std::string svc = name + "-leader";
    const auto s = m.service(svc);
    CHECK(s["spec"]["selector"]["leaderworkerset.sigs.k8s.io/name"].as<std::string>() == name);
    CHECK(s["spec"]["selector"]["role"].as<std::string>() == "leader");
    CHECK(s["spec"]["ports"][0]["port"].as<int>() == side["port"].get<int>());
    services.push_back(svc);
  }
  return services;
}

// The router Deployment (and its Service selecting it); returns the router container.
YAML::Node check_router(const Manifest& m) {
  const auto deps = m.of("Deployment");
  REQUIRE(deps.size() == 1);
  const auto dep = deps[0];
  const auto labels = dep["spec"]["template"]["metadata"]["labels"];
  CHECK(dep["spec"]["selector"]["matchLabels"]["app"].as<std::string>() == labels["app"].as<std::string>());
  const auto c = dep["spec"]["template"]["spec"]["containers"][0];
  CHECK_FALSE(c["resources"].IsDefined());  // the router needs no GPU
  const std::string url = m.plan["router_url"];
  const std::string port = url.substr(url.rfind(':') + 1, url.find("/v1") - url.rfind(':') - 1);
  CHECK(value_after(expanded(c), "--port") == port);
  const auto s = m.service(dep["metadata"]["name"].as<std::string>());
  CHECK(s["spec"]["selector"]["app"].as<std::string>() == labels["app"].as<std::string>());
  CHECK(s["spec"]["ports"][0]["port"].as<std::string>() == port);
  return c;
}

void check_passes_check(const Manifest& m, const std::string& gpu) {
  TempDir t;
  const auto c = run({"check", "--manifest", t.write("pd.yaml", m.text), "-g", gpu, "-f", "json"});
  INFO(c.out.substr(0, 3000) << c.err);
  REQUIRE(c.code == 0);
  const auto j = nlohmann::json::parse(c.out);
  CHECK(j["errors"] == 0);
  CHECK(j["inputs"].size() == m.of("LeaderWorkerSet").size());  // every worker read back as a group
}

}  // namespace

TEST_CASE("launch k8s SGLang P/D: a LeaderWorkerSet per worker with its role and the router on the Service names",
          "[launch][k8s][disagg]") {
  const Manifest m = manifest({"launch", "-m", "gpt-oss-120b", "-g", "h100", "--prefill-workers", "2", "--prefill-tp", "1", "--decode-tp",
                               "2", "--decode-ep", "2"});
  INFO(m.text.substr(0, 6000));
  CHECK(m.of("LeaderWorkerSet").size() == 3);
  CHECK(m.of("Service").size() == 4);
  CHECK(m.docs.size() == 8);
  CHECK(printable_ascii(m.text));
  CHECK(m.plan["image"] == launch_image(Engine::sglang, "").image);
  const auto prefill = check_pool(m, "prefill");
  const auto decode = check_pool(m, "decode");
  for (const auto& d : m.of("LeaderWorkerSet")) {
    const std::string name = d["metadata"]["name"].as<std::string>();
    const auto argv = expanded(d["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]);
    CHECK(value_after(argv, "--disaggregation-mode") == (name.find("-prefill-") != std::string::npos ? "prefill" : "decode"));
    CHECK(value_after(argv, "--disaggregation-transfer-backend") == "mooncake");
  }
  // the decode workers reach each prefill worker's bootstrap server through its Service
  for (const auto& svc : prefill) {
    const auto ports = m.service(svc)["spec"]["ports"];
    REQUIRE(ports.size() == 2);
    CHECK(ports[1]["name"].as<std::string>() == "bootstrap");
    CHECK(ports[1]["port"].as<int>() == 8998);
  }
  CHECK(m.service(decode[0])["spec"]["ports"].size() == 1);
  const auto r = expanded(check_router(m));
  CHECK(r[0] == "python3");
  CHECK(value_after(r, "-m") == "sglang_router.launch_router");
  CHECK(std::find(r.begin(), r.end(), "--pd-disaggregation") != r.end());
  // each prefill URL with its bootstrap port, as the script's router
  CHECK(values_after(r, "--prefill") ==
        std::vector<std::string>{"http://" + prefill[0] + ":30000", "8998", "http://" + prefill[1] + ":30000", "8998"});
  CHECK(values_after(r, "--decode") == std::vector<std::string>{"http://" + decode[0] + ":30001"});
  CHECK(m.text.find("${") == std::string::npos);  // no address variable is left for a shell
  check_passes_check(m, "h100");
}

TEST_CASE("launch k8s SGLang P/D over two nodes per worker: ranks and the head from the LeaderWorkerSet", "[launch][k8s][disagg]") {
  const Manifest m = manifest({"launch", "-m", "kimi-k3", "-g", "h200", "-c", "32k", "--prefill-tp", "16", "--decode-tp", "16"});
  INFO(m.text.substr(0, 4000));
  REQUIRE(m.plan["disaggregated"]["prefill"]["nodes_per_worker"] == 2);
  check_pool(m, "prefill");
  check_pool(m, "decode");
  for (const auto& d : m.of("LeaderWorkerSet")) {
    const auto w = strings(d["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["command"]);
    CHECK(value_after(w, "--node-rank") == "$(LWS_WORKER_INDEX)");
    CHECK(value_after(w, "--dist-init-addr") == "$(LWS_LEADER_ADDRESS):20000");
  }
  check_passes_check(m, "h200");
}

TEST_CASE("launch k8s vLLM P/D: NixlConnector workers on their pod IPs and the proxy fetched at the release", "[launch][k8s][disagg]") {
  const Manifest m = manifest(
      {"launch", "-m", "gpt-oss-120b", "-g", "h100", "--engine", "vllm", "--prefill-tp", "1", "--decode-tp", "2", "--decode-workers", "2"});
  INFO(m.text.substr(0, 6000));
  CHECK(m.of("LeaderWorkerSet").size() == 3);
  CHECK(printable_ascii(m.text));
  const PinnedImage pin = launch_image(Engine::vllm, "");
  CHECK(m.plan["image"] == pin.image);
  const auto prefill = check_pool(m, "prefill");
  const auto decode = check_pool(m, "decode");
  for (const auto& d : m.of("LeaderWorkerSet")) {
    const auto c = d["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0];
    const auto argv = expanded(c);
    CHECK(argv[0] == "vllm");
    CHECK(nlohmann::json::parse(value_after(argv, "--kv-transfer-config")) ==
          nlohmann::json{{"kv_connector", "NixlConnector"}, {"kv_role", "kv_both"}});
    bool side_channel = false;
    for (const auto& e : c["env"])
      if (e["name"].as<std::string>() == "VLLM_NIXL_SIDE_CHANNEL_HOST")
        side_channel = e["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>() == "status.podIP";
    CHECK(side_channel);
  }
  const auto rc = check_router(m);
  const auto r = expanded(rc);
  CHECK(r[1] == "tests/v1/kv_connector/nixl_integration/toy_proxy_server.py");
  CHECK(values_after(r, "--prefiller-hosts") == prefill);
  CHECK(values_after(r, "--prefiller-ports") == std::vector<std::string>{"8000"});
  CHECK(values_after(r, "--decoder-hosts") == decode);
  CHECK(values_after(r, "--decoder-ports") == std::vector<std::string>{"8001", "8001"});
  // the proxy is not in the image: an init container fetches it at the pinned release's tag into
  // the directory the router runs from
  CHECK(rc["workingDir"].as<std::string>() == "/router");
  const auto init = expanded(m.of("Deployment")[0]["spec"]["template"]["spec"]["initContainers"][0]);
  REQUIRE(init.size() == 5);
  CHECK(init[3] == "https://raw.githubusercontent.com/vllm-project/vllm/v" + pin.release + "/" + r[1]);
  CHECK(init[4] == "/router/" + r[1]);
  CHECK(m.text.find("${") == std::string::npos);
  check_passes_check(m, "h100");
  // a window named instead of a release: the proxy comes from the release the image is pinned to
  const Manifest w = manifest({"launch", "-m", "gpt-oss-120b", "-g", "h100", "--engine", "vllm", "--engine-version", "0.11", "--prefill-tp",
                               "1", "--decode-tp", "1"});
  const std::string image = w.plan["image"];
  const std::string tag = image.substr(image.rfind(':') + 1);
  CHECK(tag == "v" + launch_image(Engine::vllm, "0.11").release);
  CHECK(expanded(w.of("Deployment")[0]["spec"]["template"]["spec"]["initContainers"][0])[3].find("/vllm/" + tag + "/tests/") !=
        std::string::npos);
}

TEST_CASE("launch k8s vLLM P/D over two nodes per worker: every pod's side channel on its own IP", "[launch][k8s][disagg]") {
  const Manifest m =
      manifest({"launch", "-m", "kimi-k3", "-g", "h200", "-c", "32k", "--engine", "vllm", "--prefill-tp", "16", "--decode-tp", "16"});
  REQUIRE(m.plan["disaggregated"]["decode"]["nodes_per_worker"] == 2);
  check_pool(m, "prefill");
  check_pool(m, "decode");
  for (const auto& d : m.of("LeaderWorkerSet")) {
    const auto w = d["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0];
    CHECK(value_after(strings(w["command"]), "--master-addr") == "$(LWS_LEADER_ADDRESS)");
    bool own_ip = false;
    for (const auto& e : w["env"])
      if (e["name"].as<std::string>() == "VLLM_NIXL_SIDE_CHANNEL_HOST") own_ip = e["valueFrom"]["fieldRef"].IsDefined();
    CHECK(own_ip);
  }
  check_passes_check(m, "h200");
}

TEST_CASE("launch k8s P/D: a hostile model path or host comes out inert and unchanged", "[launch][k8s][disagg][robustness]") {
  const std::vector<std::string> hostile{"a'b",
                                         "a\"b\nkind: Pod",
                                         "$(touch PWN)",
                                         "`touch PWN`",
                                         "${PREFILL_0_ADDR}",
                                         "a$$b",
                                         "x: y # z { * & !",
                                         "a\xc2\x85"
                                         "b",
                                         "\\\"\\n",
                                         "---\nkind: Pod",
                                         "a\xe2\x80\xa8"
                                         "b"};
  int checked = 0;
  for (const std::string engine : {"sglang", "vllm"}) {
    for (const std::string field : {"--model-path", "--host"}) {
      for (const auto& h : hostile) {
        INFO(engine << " " << field << " = " << nlohmann::json(h).dump());
        const auto r = run({"launch", "-m", "gpt-oss-120b", "-g", "h100", "--engine", engine, "--prefill-tp", "1", "--decode-tp", "1",
                            field, h, "--emit", "k8s"});
        INFO(r.err);
        REQUIRE(r.code == 0);
        CHECK(printable_ascii(r.out));
        std::vector<YAML::Node> docs;
        REQUIRE_NOTHROW(docs = YAML::LoadAll(r.out));
        // exactly the intended objects, each with its four keys
        std::vector<std::string> kinds;
        for (const auto& d : docs) {
          kinds.push_back(d["kind"].as<std::string>());
          CHECK(d.size() == 4);
        }
        CHECK(kinds == std::vector<std::string>{"LeaderWorkerSet", "Service", "LeaderWorkerSet", "Service", "Deployment", "Service"});
        const std::string flag = field == "--host" ? "--host" : engine == "sglang" ? "--model-path" : "serve";
        for (std::size_t i = 0; i < docs.size(); ++i) {
          if (kinds[i] == "LeaderWorkerSet") {
            for (const char* t : {"leaderTemplate", "workerTemplate"})
              CHECK(value_after(expanded(docs[i]["spec"]["leaderWorkerTemplate"][t]["spec"]["containers"][0]), flag) == h);
          } else if (kinds[i] == "Deployment" && field == "--host") {
            CHECK(value_after(expanded(docs[i]["spec"]["template"]["spec"]["containers"][0]), "--host") == h);
          }
        }
        ++checked;
      }
    }
  }
  CHECK(checked == 2 * 2 * static_cast<int>(hostile.size()));
}

TEST_CASE("launch k8s P/D with -o writes lws-pd.yaml through a temporary, the planted link replaced", "[launch][k8s][disagg][output]") {
  TempDir t;
  const std::vector<std::string> base{"launch",      "-m", "gpt-oss-120b", "-g", "h100", "--prefill-tp", "1",
                                      "--decode-tp", "1",  "--emit",       "k8s"};
  const auto direct = run(base);
  REQUIRE(direct.code == 0);
  const fs::path dir = t.path() / "out";
  fs::create_directories(dir);
  const std::string victim = t.write("victim.txt", "keep me\n");
  fs::create_symlink(victim, dir / "lws-pd.yaml");
  auto args = base;
  args.insert(args.end(), {"-o", dir.string()});
  const auto r = run(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.rfind("wrote " + (dir / "lws-pd.yaml").string() + "\n", 0) == 0);  // what was written, not the manifest
  CHECK(k3plan_test::slurp(victim) == "keep me\n");
  CHECK_FALSE(fs::is_symlink(dir / "lws-pd.yaml"));
  CHECK(k3plan_test::slurp(dir / "lws-pd.yaml") == direct.out);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir)) left.push_back(e.path().filename().string());
  CHECK(left == std::vector<std::string>{"lws-pd.yaml"});  // no temporary left behind
}
