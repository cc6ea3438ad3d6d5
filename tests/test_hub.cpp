// `-m org/name[@rev]` through the Hugging Face Hub client, end to end against a local server on
// 127.0.0.1 (tests/hub_server.hpp): config, index and shard headers by range requests, the cache
// and offline mode, HF_TOKEN, and the one-line errors.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "checkpoint_fixture.hpp"
#include "hub_server.hpp"
#include "support.hpp"

using namespace k3plan_test;
namespace fs = std::filesystem;

namespace {
// Sets environment variables for the k3plan processes a test starts; restores them at scope exit.
class Env {
 public:
  void set(const std::string& k, const std::string& v) {
    remember(k);
    ::setenv(k.c_str(), v.c_str(), 1);
  }
  void unset(const std::string& k) {
    remember(k);
    ::unsetenv(k.c_str());
  }
  ~Env() {
    for (const auto& [k, v] : saved_)
      if (v.first)
        ::setenv(k.c_str(), v.second.c_str(), 1);
      else
        ::unsetenv(k.c_str());
  }

 private:
  void remember(const std::string& k) {
    if (saved_.count(k)) return;
    const char* v = std::getenv(k.c_str());
    saved_[k] = {v != nullptr, v ? v : ""};
  }
  std::map<std::string, std::pair<bool, std::string>> saved_;
};

// The served tree: a Qwen3-0.6B checkpoint (config, index, two shards with sparse data) and the
// real Llama 4 Scout config.json from tests/data.
std::uint64_t make_hub(const fs::path& root) {
  const std::uint64_t total = write_qwen3_checkpoint(root / "k3plan-test" / "Qwen3-0.6B");
  fs::create_directories(root / "meta-llama" / "Llama-4-Scout-17B-16E-Instruct");
  fs::copy_file(std::string(K3PLAN_TEST_DATA) + "/meta-llama--Llama-4-Scout-17B-16E-Instruct_config.json",
                root / "meta-llama" / "Llama-4-Scout-17B-16E-Instruct" / "config.json");
  return total;
}

void hub_env(Env& env, const std::string& endpoint, const TempDir& cache) {
  env.set("HF_ENDPOINT", endpoint);
  env.set("HF_HOME", cache.str());
  env.unset("HF_TOKEN");
  env.unset("HF_HUB_OFFLINE");
}
}  // namespace

TEST_CASE("weights -m org/name fetches config.json and the index from the Hub, then works offline from the cache") {
  TempDir root, cache;
  const std::uint64_t total = make_hub(root.path());
  Env env;
  {
    HubServer hub(root.path());
    hub_env(env, hub.endpoint(), cache);
    const Run r = run({"weights", "-m", "k3plan-test/Qwen3-0.6B", "--format", "json"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["model"] == "k3plan-test/qwen3-0.6b");
    CHECK(j["params_total"].get<double>() == Approx(0.596e9).epsilon(0.01));
    CHECK(j["as_shipped"]["basis"] == "index-total-size");
    CHECK(j["as_shipped"]["bytes"].get<double>() == static_cast<double>(total));
    bool asked_revision = false;
    for (const auto& l : hub.log()) asked_revision = asked_revision || l == "/api/models/k3plan-test/Qwen3-0.6B/revision/main";
    CHECK(asked_revision);
    // --exact: each shard's header by two range requests, no tensor data
    const Run e = run({"weights", "-m", "k3plan-test/Qwen3-0.6B", "--exact", "--format", "json"});
    INFO(e.err);
    REQUIRE(e.code == 0);
    const auto je = nlohmann::json::parse(e.out);
    CHECK(je["as_shipped"]["basis"] == "safetensors-headers");
    CHECK(je["as_shipped"]["bytes"].get<double>() == Approx(static_cast<double>(total)).epsilon(0.001));
    CHECK(je["as_shipped"]["shards"] == 2);
    int ranges = 0;
    for (const auto& l : hub.log()) ranges += l.find("range bytes=0-7") != std::string::npos;
    CHECK(ranges == 2);
    const Run table = run({"weights", "-m", "k3plan-test/Qwen3-0.6B", "--exact", "-p", "bf16,fp8"});
    CHECK(table.code == 0);
    CHECK(table.out.find("exact (safetensors headers)") != std::string::npos);
    WARN("k3plan weights -m k3plan-test/Qwen3-0.6B --exact -p bf16,fp8 (HF_ENDPOINT=" << hub.endpoint() << ")\n" << table.out);
  }
  // the server is gone: a fetched revision is served from the cache, and offline mode reads it too
  const Run down = run({"weights", "-m", "k3plan-test/Qwen3-0.6B", "--format", "json"});
  INFO(down.err);
  CHECK(down.code == 0);
  CHECK(down.err.find("using the cached snapshot") != std::string::npos);
  env.set("HF_HUB_OFFLINE", "1");
  const Run off = run({"weights", "-m", "k3plan-test/Qwen3-0.6B", "--exact", "--format", "json"});
  INFO(off.err);
  REQUIRE(off.code == 0);
  CHECK(nlohmann::json::parse(off.out)["as_shipped"]["basis"] == "safetensors-headers");
  expect_usage_error({"weights", "-m", "k3plan-test/not-cached"}, {"k3plan-test/not-cached", "HF_HUB_OFFLINE"});
}

TEST_CASE("a Hub id with a revision, through kv and show, reads Llama 4's chunked attention") {
  TempDir root, cache;
  make_hub(root.path());
  Env env;
  HubServer hub(root.path());
  hub_env(env, hub.endpoint(), cache);
  const Run s = run({"show", "meta-llama/Llama-4-Scout-17B-16E-Instruct@main", "--format", "json"});
  INFO(s.err);
  REQUIRE(s.code == 0);
  const auto j = nlohmann::json::parse(s.out);
  CHECK(j["params_total"].get<double>() == Approx(108e9).epsilon(0.02));
  const Run k = run({"kv", "-m", "meta-llama/Llama-4-Scout-17B-16E-Instruct@v1.0", "-c", "128k", "--format", "json"});
  INFO(k.err);
  CHECK(k.code == 0);
  bool asked = false;
  for (const auto& l : hub.log()) asked = asked || l == "/api/models/meta-llama/Llama-4-Scout-17B-16E-Instruct/revision/v1.0";
  CHECK(asked);
}

TEST_CASE("Hub errors are one line with exit 2: 404, 401 without HF_TOKEN, 403 with a wrong one, timeout, no network") {
  TempDir root, cache;
  make_hub(root.path());
  Env env;
  SECTION("404") {
    HubServer hub(root.path());
    hub_env(env, hub.endpoint(), cache);
    expect_usage_error({"weights", "-m", "k3plan-test/no-such-model"}, {"HTTP 404", "k3plan-test/no-such-model"});
  }
  SECTION("gated: 401, 403, then the token") {
    HubServer hub(root.path(), "hf_secret");
    hub_env(env, hub.endpoint(), cache);
    expect_usage_error({"weights", "-m", "k3plan-test/Qwen3-0.6B"}, {"HTTP 401", "HF_TOKEN"});
    env.set("HF_TOKEN", "hf_wrong");
    expect_usage_error({"weights", "-m", "k3plan-test/Qwen3-0.6B"}, {"HTTP 403"});
    env.set("HF_TOKEN", "hf_secret");
    CHECK(run({"weights", "-m", "k3plan-test/Qwen3-0.6B"}).code == 0);
  }
  SECTION("timeout") {
    HubServer mute(root.path(), "", true);
    hub_env(env, mute.endpoint(), cache);
    env.set("HF_HUB_DOWNLOAD_TIMEOUT", "1");
    expect_usage_error({"weights", "-m", "k3plan-test/Qwen3-0.6B"}, {"cannot fetch", "imeout"});
  }
  SECTION("no network") {
    std::string dead;
    {
      HubServer gone(root.path());
      dead = gone.endpoint();
    }
    hub_env(env, dead, cache);
    expect_usage_error({"weights", "-m", "k3plan-test/Qwen3-0.6B"}, {"cannot fetch"});
    // catalogue ids (and their Hub names) never touch the network
    CHECK(run({"weights", "-m", "kimi-k3"}).code == 0);
    CHECK(run({"weights", "-m", "moonshotai/Kimi-K3"}).code == 0);
  }
}
