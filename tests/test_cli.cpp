// End-to-end tests of the k3plan binary: run the real executable, capture stdout, stderr and the
// exit code, and check the figures it prints (mostly through --format json).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <k3plan/plan.hpp>
#include <map>
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

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;

using k3plan_test::kBinary;
const std::string kTestData = K3PLAN_TEST_DATA;
const std::string kSourceDir = K3PLAN_SOURCE_DIR;

using k3plan_test::run;
using k3plan_test::Run;
using k3plan_test::slurp;
using k3plan_test::TempDir;

// Runs with `-f json` appended, requires `expected_code`, and parses stdout.
json run_json(std::vector<std::string> args, int expected_code = 0) {
  args.push_back("-f");
  args.push_back("json");
  const Run r = run(args);
  INFO("command: k3plan " << r.cmdline);
  INFO("stderr: " << r.err);
  REQUIRE(r.code == expected_code);
  json j;
  REQUIRE_NOTHROW(j = json::parse(r.out));
  return j;
}

using k3plan_test::count_lines;
using k3plan_test::expect_usage_error;

const json& precision_entry(const json& weights, const std::string& name) {
  for (const auto& p : weights.at("precisions"))
    if (p.at("precision") == name) return p;
  FAIL("precision " << name << " missing from the weights output");
  throw std::logic_error("unreachable");
}

const json& gpu_entry(const json& fit, const std::string& id) {
  for (const auto& g : fit.at("gpus"))
    if (g.at("gpu") == id) return g;
  FAIL("gpu " << id << " missing from the fit output");
  throw std::logic_error("unreachable");
}

double tb_one_decimal(double bytes) { return std::round(bytes / 1e12 * 10.0) / 10.0; }

double kv_bytes_per_token(const std::vector<std::string>& args) {
  std::vector<std::string> a{"kv"};
  a.insert(a.end(), args.begin(), args.end());
  return run_json(a).at("bytes_per_token").get<double>();
}

double kv_state_bytes(const std::vector<std::string>& args) {
  std::vector<std::string> a{"kv"};
  a.insert(a.end(), args.begin(), args.end());
  return run_json(a).at("state_bytes_per_sequence").get<double>();
}

// Parses "--flag N" out of an engine flag string; -1 when absent.
long flag_value(const std::string& flags, const std::string& name) {
  std::istringstream in(flags);
  std::string tok;
  while (in >> tok) {
    if (tok == name) {
      std::string v;
      if (in >> v) return std::stol(v);
    }
  }
  return -1;
}

std::string catalogue_file(const std::string& rel) { return slurp(fs::path(kSourceDir) / "data" / rel); }

std::string replace_once(std::string s, const std::string& from, const std::string& to) {
  const auto pos = s.find(from);
  REQUIRE(pos != std::string::npos);
  s.replace(pos, from.size(), to);
  return s;
}

// The llama-3.1-8b catalogue entry: a small model YAML to corrupt in the bad-input tests.
std::string llama8b_yaml() { return catalogue_file("models/llama-3.1-8b.yaml"); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// weights
// ---------------------------------------------------------------------------------------------

TEST_CASE("weights reproduces the seed table for Kimi K3 through the CLI", "[cli][weights]") {
  const json w = run_json({"weights", "-m", "kimi-k3"});

  CHECK(tb_one_decimal(precision_entry(w, "bf16").at("bytes").get<double>()) == Approx(5.6));
  CHECK(tb_one_decimal(precision_entry(w, "fp8").at("bytes").get<double>()) == Approx(2.8));
  CHECK(tb_one_decimal(precision_entry(w, "int4").at("bytes").get<double>()) == Approx(1.4));
  CHECK(tb_one_decimal(precision_entry(w, "int2").at("bytes").get<double>()) == Approx(0.7));

  const double mxfp4 = precision_entry(w, "mxfp4").at("bytes").get<double>();
  CHECK(mxfp4 > 1.45e12);
  CHECK(mxfp4 < 1.55e12);

  // K3 ships routed experts in MXFP4 and everything else in bf16; the checkpoint measures 1561.0 GB.
  CHECK(w.at("as_shipped").at("bytes").get<double>() == Approx(1561.0e9).epsilon(0.01));
  CHECK(w.at("params_total").get<double>() == Approx(2.78e12).epsilon(0.02));
  CHECK(w.at("params_active").get<double>() == Approx(104e9).epsilon(0.02));
}

TEST_CASE("weights -p limits the output to the requested precisions", "[cli][weights]") {
  const json w = run_json({"weights", "-m", "kimi-k3", "-p", "int4", "-p", "bf16"});
  std::vector<std::string> names;
  for (const auto& p : w.at("precisions")) names.push_back(p.at("precision").get<std::string>());
  CHECK(names.size() == 2);
  CHECK(std::find(names.begin(), names.end(), "int4") != names.end());
  CHECK(std::find(names.begin(), names.end(), "bf16") != names.end());
}

// ---------------------------------------------------------------------------------------------
// fit --weights-only
// ---------------------------------------------------------------------------------------------

TEST_CASE("fit --weights-only reproduces the seed GPU lower bounds for Kimi K3 at int4", "[cli][fit]") {
  const json f = run_json({"fit", "-m", "kimi-k3", "--precision", "int4", "--weights-only"});

  CHECK(gpu_entry(f, "h100").at("lower_bound_gpus") == 18);
  CHECK(gpu_entry(f, "h200").at("lower_bound_gpus") == 10);
  CHECK(gpu_entry(f, "b200").at("lower_bound_gpus") == 8);
  CHECK(gpu_entry(f, "gb300").at("lower_bound_gpus") == 5);
}

TEST_CASE("fit --weights-only gives every GPU a deployable layout whose TP x PP is its GPU count", "[cli][fit]") {
  const json f = run_json({"fit", "-m", "kimi-k3", "--precision", "int4", "--weights-only"});
  const json gpus = run_json({"gpus"});
  std::map<std::string, double> reported;
  for (const auto& g : gpus.at("gpus")) reported[g.at("id").get<std::string>()] = g.at("memory_reported_bytes").get<double>();

  REQUIRE(f.at("gpus").size() == gpus.at("gpus").size());
  for (const auto& g : f.at("gpus")) {
    const std::string id = g.at("gpu").get<std::string>();
    INFO("gpu " << id << ": " << g.dump());
    REQUIRE(g.contains("deployable"));
    const json& d = g.at("deployable");
    for (const char* key : {"gpus", "nodes", "layout", "vllm_layout", "weights_bytes_per_gpu", "flags"}) {
      INFO("key " << key);
      CHECK(d.contains(key));
    }
    REQUIRE(d.at("flags").contains("sglang"));
    REQUIRE(d.at("flags").contains("vllm"));
    CHECK_FALSE(d.at("flags").at("sglang").get<std::string>().empty());
    CHECK_FALSE(d.at("flags").at("vllm").get<std::string>().empty());

    const long n = d.at("gpus").get<long>();
    const long tp = d.at("layout").at("tp").get<long>();
    const long pp = d.at("layout").at("pp").get<long>();
    CHECK(n >= g.at("lower_bound_gpus_usable").get<long>());
    CHECK(tp * pp == n);
    CHECK(d.at("nodes").get<long>() >= 1);
    CHECK(d.at("layout").at("ep").get<long>() >= 1);
    CHECK(d.at("layout").at("dp").get<long>() >= 1);
    CHECK(d.at("layout").at("dcp").get<long>() == 1);  // one layout shape everywhere, dcp included

    // the weights on each GPU fit in what the driver reports
    const double per_gpu = d.at("weights_bytes_per_gpu").get<double>();
    CHECK(per_gpu > 0);
    REQUIRE(reported.count(id) == 1);
    CHECK(per_gpu <= reported[id]);
    CHECK(per_gpu * static_cast<double>(n) >= f.at("weights_bytes").get<double>() * 0.999);

    // the SGLang flags describe the same layout
    const std::string sg = d.at("flags").at("sglang").get<std::string>();
    CHECK(flag_value(sg, "--tp-size") == tp);
    if (pp > 1) CHECK(flag_value(sg, "--pp-size") == pp);
    if (d.at("nodes").get<long>() > 1) CHECK(flag_value(sg, "--nnodes") == d.at("nodes").get<long>());
    // and the vLLM flags use the same number of GPUs
    const std::string vl = d.at("flags").at("vllm").get<std::string>();
    const long vtp = flag_value(vl, "--tensor-parallel-size");
    const long vpp = flag_value(vl, "--pipeline-parallel-size");
    const long vdp = flag_value(vl, "--data-parallel-size");
    CHECK(vtp * (vpp > 0 ? vpp : 1) * (vdp > 0 ? vdp : 1) == n);
  }
}

// ---------------------------------------------------------------------------------------------
// kv
// ---------------------------------------------------------------------------------------------

TEST_CASE("kv what-if of 64 layers x 8 KV heads x 128 in fp8 costs exactly 1, 4, 16 and 128 GiB", "[cli][kv]") {
  const json k = run_json({"kv", "--layers", "64", "--kv-heads", "8", "--head-dim", "128", "--kv-dtype", "fp8", "-c", "8k,32k,128k,1M"});
  CHECK(k.at("bytes_per_token").get<double>() == 131072.0);
  const auto& rows = k.at("rows");
  REQUIRE(rows.size() == 4);
  const long long ctx[] = {8192, 32768, 131072, 1048576};
  const double gib[] = {1, 4, 16, 128};
  for (std::size_t i = 0; i < 4; ++i) {
    INFO("row " << i << ": " << rows[i].dump());
    CHECK(rows[i].at("context").get<long long>() == ctx[i]);
    CHECK(rows[i].at("bytes_per_user").get<double>() == gib[i] * kGiB);
  }
}

TEST_CASE("kv of DeepSeek V3 MLA is 70,272 B per token whatever the TP, and fp8 halves it", "[cli][kv]") {
  CHECK(kv_bytes_per_token({"-m", "deepseek-v3", "--tp", "1"}) == 70272.0);
  CHECK(kv_bytes_per_token({"-m", "deepseek-v3", "--tp", "8"}) == 70272.0);
  CHECK(kv_bytes_per_token({"-m", "deepseek-v3", "--kv-dtype", "fp8"}) == 70272.0 / 2);
}

TEST_CASE("kv of Llama 3.1 70B GQA is 327,680 B per token at TP 1 and 40,960 at TP 8", "[cli][kv]") {
  CHECK(kv_bytes_per_token({"-m", "llama-3.1-70b", "--tp", "1"}) == 327680.0);
  CHECK(kv_bytes_per_token({"-m", "llama-3.1-70b", "--tp", "8"}) == 40960.0);
}

TEST_CASE("kv of Qwen3 235B at TP 8 replicates its 4 KV heads to one per rank", "[cli][kv]") {
  CHECK(kv_bytes_per_token({"-m", "qwen3-235b-a22b", "--tp", "8"}) == 94.0 * 2 * 1 * 128 * 2);
}

TEST_CASE("kv of Kimi K3 is 27,648 B per token plus 428.6 MiB of KDA state, the state split by TP", "[cli][kv]") {
  const json k1 = run_json({"kv", "-m", "kimi-k3", "--tp", "1"});
  CHECK(k1.at("bytes_per_token").get<double>() == 27648.0);
  CHECK(k1.at("state_bytes_per_sequence").get<double>() == 449372160.0);
  CHECK(k1.at("state_bytes_per_sequence").get<double>() / kMiB == Approx(428.6).margin(0.05));

  const json k8 = run_json({"kv", "-m", "kimi-k3", "--tp", "8"});
  CHECK(k8.at("bytes_per_token").get<double>() == 27648.0);
  CHECK(k8.at("state_bytes_per_sequence").get<double>() == 449372160.0 / 8);
  CHECK(k8.at("state_bytes_per_sequence").get<double>() / kMiB == Approx(53.6).margin(0.05));
}

TEST_CASE("kv of Kimi Linear 48B carries 43,417,600 B of recurrent state per sequence", "[cli][kv]") {
  CHECK(kv_state_bytes({"-m", "kimi-linear-48b-a3b"}) == 43417600.0);
}

TEST_CASE("kv of Qwen3-Next 80B keeps fp32 recurrent state by default and about half in bf16", "[cli][kv]") {
  CHECK(kv_state_bytes({"-m", "qwen3-next-80b-a3b"}) == 77266944.0);
  const double bf16 = kv_state_bytes({"-m", "qwen3-next-80b-a3b", "--state-dtype", "bf16"});
  CHECK(bf16 == 36.0 * (49152 + 1048576));
  CHECK(bf16 / kMiB == Approx(37.7).margin(0.05));
}

TEST_CASE("kv of DeepSeek V4 Pro costs about 9.62 GiB for one 1M-token sequence", "[cli][kv]") {
  const json k = run_json({"kv", "-m", "deepseek-v4-pro", "-c", "1M"});
  REQUIRE(k.at("rows").size() == 1);
  CHECK(k.at("rows")[0].at("context").get<long long>() == 1048576);
  CHECK(k.at("rows")[0].at("bytes_per_user").get<double>() == Approx(9.62 * kGiB).epsilon(0.005));
}

TEST_CASE("kv of DeepSeek V3.2 in fp8 is 61 x (656 + 132) B per token", "[cli][kv]") {
  // 656 B = the fp8_ds_mla sparse-MLA record, 132 B = the lightning indexer's fp8 key with its scale.
  // With --kv-dtype auto the latent stays bf16 (vLLM's default for V3.2), so fp8 is asked for here.
  CHECK(kv_bytes_per_token({"-m", "deepseek-v3.2", "--kv-dtype", "fp8"}) == 61.0 * (656 + 132));
}

TEST_CASE("kv counts users: N users need N times one user's bytes", "[cli][kv]") {
  const json k = run_json({"kv", "-m", "kimi-k3", "-c", "32k", "-u", "10"});
  REQUIRE(k.at("rows").size() == 1);
  const auto& row = k.at("rows")[0];
  CHECK(row.at("bytes_per_user").get<double>() == 27648.0 * 32768 + 449372160.0);
  CHECK(row.at("bytes_all_users").get<double>() == 10 * row.at("bytes_per_user").get<double>());
}

// ---------------------------------------------------------------------------------------------
// -m with a config.json path or a directory
// ---------------------------------------------------------------------------------------------

TEST_CASE("a model given as a DeepSeek V3 config.json path or as its directory gives 70,272 B per token and 671B parameters", "[cli][hf]") {
  const std::string cfg = kTestData + "/deepseek-ai--DeepSeek-V3_config.json";
  CHECK(kv_bytes_per_token({"-m", cfg}) == 70272.0);

  TempDir dir;
  dir.write("config.json", slurp(cfg));
  CHECK(kv_bytes_per_token({"-m", dir.str()}) == 70272.0);

  const json w = run_json({"weights", "-m", cfg});
  CHECK(w.at("params_total").get<double>() == Approx(671e9).epsilon(0.01));
  CHECK(w.at("params_active").get<double>() == Approx(37e9).epsilon(0.03));
}

TEST_CASE("a model given as the Llama 3.1 70B config.json derives 70.6B parameters", "[cli][hf]") {
  const json w = run_json({"weights", "-m", kTestData + "/meta-llama--Meta-Llama-3.1-70B_config.json"});
  CHECK(w.at("params_total").get<double>() == Approx(70.6e9).epsilon(0.01));
}

TEST_CASE("a model given as the Kimi K3 config.json gives 27,648 B per token over 24 MLA and 69 KDA layers", "[cli][hf]") {
  const json k = run_json({"kv", "-m", kTestData + "/moonshotai--Kimi-K3_config.json"});
  CHECK(k.at("bytes_per_token").get<double>() == 27648.0);
  std::map<std::string, long> by_kind;
  long total = 0;
  for (const auto& l : k.at("layers")) {
    by_kind[l.at("kind").get<std::string>()] += l.at("count").get<long>();
    total += l.at("count").get<long>();
  }
  CHECK(total == 93);
  CHECK(by_kind["mla"] == 24);
  CHECK(by_kind["kda"] == 69);
}

// ---------------------------------------------------------------------------------------------
// output formats
// ---------------------------------------------------------------------------------------------

TEST_CASE("every command accepts every output format and exits 0", "[cli][format]") {
  const std::vector<std::vector<std::string>> commands = {
      {"models"},
      {"gpus"},
      {"show", "kimi-k3"},
      {"show", "h200"},
      {"weights", "-m", "kimi-k3"},
      {"kv", "-m", "kimi-k3"},
      {"kv", "--layers", "64", "--kv-heads", "8", "--head-dim", "128"},
      {"fit", "-m", "kimi-k3", "-g", "b300", "-n", "8", "-c", "8k"},
      {"fit", "-m", "kimi-k3", "--precision", "int4", "--weights-only"},
      {"fit", "-m", "llama-3.1-8b"},
  };
  for (const auto& cmd : commands) {
    for (const std::string fmt : {"table", "json", "yaml", "csv", "md"}) {
      auto args = cmd;
      args.push_back("--format");
      args.push_back(fmt);
      const Run r = run(args);
      INFO("command: k3plan " << r.cmdline);
      INFO("stderr: " << r.err);
      CHECK(r.code == 0);
      CHECK_FALSE(r.out.empty());
      if (fmt == "json") {
        CHECK_NOTHROW(json::parse(r.out));
      } else if (fmt == "yaml") {
        CHECK(r.out.rfind("error", 0) != 0);
        YAML::Node node;
        CHECK_NOTHROW(node = YAML::Load(r.out));
        CHECK(node.IsMap());
      } else if (fmt == "csv") {
        CHECK(r.out.find(',') != std::string::npos);
      } else if (fmt == "md") {
        CHECK(r.out.find('|') != std::string::npos);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// bad input: exit 2, one line on stderr, nothing on stdout
// ---------------------------------------------------------------------------------------------

TEST_CASE("an unknown GPU, model, precision or KV dtype is a usage error with a suggestion", "[cli][errors]") {
  expect_usage_error({"fit", "-m", "kimi-k3", "-g", "h20"}, {"did you mean 'h200'"});
  expect_usage_error({"weights", "-m", "kimi-k4"}, {"kimi-k4", "did you mean"});
  expect_usage_error({"weights", "-m", "kimi-k3", "-p", "fp5"}, {"fp5"});
  expect_usage_error({"kv", "-m", "kimi-k3", "--kv-dtype", "fp7"}, {"fp7"});
  expect_usage_error({"fit", "-m", "kimi-k3", "-g", "b300", "--kv-dtype", "int3"}, {"int3"});
}

TEST_CASE("a malformed context, user count or what-if geometry is a usage error", "[cli][errors]") {
  expect_usage_error({"kv", "-m", "kimi-k3", "-c", "12q"}, {"12q"});
  expect_usage_error({"kv", "-m", "kimi-k3", "-c", "-5"});
  expect_usage_error({"kv", "--layers", "0", "--kv-heads", "8", "--head-dim", "128"});
  expect_usage_error({"kv", "-m", "kimi-k3", "--users", "0"});
  expect_usage_error({"fit", "-m", "kimi-k3", "-g", "b300", "--users", "0"});
}

TEST_CASE("a missing, malformed or binary model file is a usage error", "[cli][errors]") {
  expect_usage_error({"kv", "-m", "/nonexistent/config.json"}, {"/nonexistent/config.json"});
  expect_usage_error({"weights", "-m", "/nonexistent/config.json"}, {"/nonexistent/config.json"});

  TempDir dir;
  const std::string bad_json = dir.write("broken/config.json", "{\"hidden_size\": 4096, \"num_hidden_layers\": ");
  expect_usage_error({"kv", "-m", bad_json}, {bad_json});
  expect_usage_error({"weights", "-m", (dir.path() / "broken").string()});

  std::string junk;
  for (int i = 0; i < 4096; ++i) junk.push_back(static_cast<char>((i * 7919 + 13) % 256));
  const std::string junk_json = dir.write("junk.json", junk);
  const std::string junk_yaml = dir.write("junk.yaml", junk);
  expect_usage_error({"kv", "-m", junk_json}, {junk_json});
  expect_usage_error({"weights", "-m", junk_yaml}, {junk_yaml});
}

TEST_CASE("a model YAML with an unknown key names the file, the line and the field with a suggestion", "[cli][errors]") {
  TempDir dir;
  const std::string f = dir.write("typo.yaml", replace_once(llama8b_yaml(), "  vocab_size:", "  vocab_sise:"));
  const std::string err = expect_usage_error({"kv", "-m", f}, {f, "vocab_sise", "did you mean 'vocab_size'"});
  // the line number of the bad key (1-based)
  const std::string text = slurp(f);
  const auto pos = text.find("vocab_sise");
  const long line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n');
  CHECK(err.find(":" + std::to_string(line)) != std::string::npos);

  // the same file under --data
  TempDir data;
  data.write("models/llama-3.1-8b.yaml", slurp(f));
  expect_usage_error({"models", "--data", data.str()}, {"vocab_sise", "did you mean 'vocab_size'"});
}

TEST_CASE("a model YAML with a negative size, a NaN or a duplicate key is a usage error", "[cli][errors]") {
  TempDir dir;
  const std::string neg = dir.write("neg.yaml", replace_once(llama8b_yaml(), "  hidden_size: 4096", "  hidden_size: -4096"));
  expect_usage_error({"kv", "-m", neg}, {neg, "hidden_size"});

  const std::string nan = dir.write("nan.yaml", replace_once(llama8b_yaml(), "  hidden_size: 4096", "  hidden_size: .nan"));
  expect_usage_error({"weights", "-m", nan}, {nan, "hidden_size"});

  const std::string dup =
      dir.write("dup.yaml", replace_once(llama8b_yaml(), "  vocab_size: 128256\n", "  vocab_size: 128256\n  vocab_size: 128256\n"));
  expect_usage_error({"kv", "-m", dup}, {dup, "vocab_size"});
}

TEST_CASE("contradictory fit flags are a usage error", "[cli][errors]") {
  expect_usage_error({"fit", "-m", "kimi-k3", "-g", "b300", "--engine", "sglang", "--gpu-memory-utilization", "0.9"});
  expect_usage_error({"fit", "-m", "kimi-k3", "-g", "b300", "-n", "8", "--tp", "4"});
}

TEST_CASE("a missing --data directory, an unknown subcommand or format is a usage error", "[cli][errors]") {
  expect_usage_error({"models", "--data", "/nonexistent"}, {"/nonexistent"});
  expect_usage_error({"fit", "-m", "kimi-k3", "-g", "b300", "--data", "/nonexistent"}, {"/nonexistent"});
  expect_usage_error({"frobnicate"});
  expect_usage_error({});
  expect_usage_error({"models", "--format", "xml"}, {"xml"});
  expect_usage_error({"kv", "-m", "kimi-k3", "--format", "xml"}, {"xml"});
}

// ---------------------------------------------------------------------------------------------
// exit codes of fit
// ---------------------------------------------------------------------------------------------

TEST_CASE("fit exits 1 when 8 x B200 cannot hold Kimi K3 with its KV cache", "[cli][fit]") {
  const json f = run_json({"fit", "-m", "kimi-k3", "-g", "b200", "-n", "8"}, 1);
  CHECK(f.at("fits") == false);
  REQUIRE(f.at("reasons").is_array());
  CHECK_FALSE(f.at("reasons").empty());
}

TEST_CASE("fit exits 0 for Kimi K3 on 8 x B300 and on 8 x MI355X at 8k context", "[cli][fit]") {
  for (const std::string gpu : {"b300", "mi355x"}) {
    const json f = run_json({"fit", "-m", "kimi-k3", "-g", gpu, "-n", "8", "-c", "8k"}, 0);
    INFO("gpu " << gpu);
    CHECK(f.at("fits") == true);
    CHECK(f.at("reasons").empty());
    CHECK(f.at("gpus") == 8);
    CHECK(f.at("context") == 8192);
  }
}

// ---------------------------------------------------------------------------------------------
// --data
// ---------------------------------------------------------------------------------------------

TEST_CASE("a user GPU in a --data directory can be used by fit under its new id", "[cli][data]") {
  // a copy of the catalogue's B300 under a new id (without its aliases)
  const std::string all = catalogue_file("gpus.yaml");
  const auto start = all.find("  - id: b300\n");
  REQUIRE(start != std::string::npos);
  const auto end = all.find("\n  - id: ", start + 1);
  std::string block = all.substr(start, end == std::string::npos ? std::string::npos : end + 1 - start);
  block = replace_once(block, "  - id: b300\n", "  - id: lab-b300\n");
  std::istringstream lines(block);
  std::string copy = "gpus:\n", line;
  while (std::getline(lines, line))
    if (line.find("    aliases:") != 0) copy += line + "\n";

  TempDir data;
  data.write("gpus.yaml", copy);

  const json mine = run_json({"fit", "-m", "kimi-k3", "-g", "lab-b300", "-n", "8", "-c", "8k", "--data", data.str()});
  const json theirs = run_json({"fit", "-m", "kimi-k3", "-g", "b300", "-n", "8", "-c", "8k"});
  CHECK(mine.at("gpu") == "lab-b300");
  CHECK(mine.at("fits") == true);
  CHECK(mine.at("kv_cache_tokens") == theirs.at("kv_cache_tokens"));
  CHECK(mine.at("max_users") == theirs.at("max_users"));

  // without --data the id is unknown
  expect_usage_error({"fit", "-m", "kimi-k3", "-g", "lab-b300"}, {"lab-b300"});

  // and the catalogue keeps its own GPUs next to the new one
  const json gpus = run_json({"gpus", "--data", data.str()});
  const json base = run_json({"gpus"});
  CHECK(gpus.at("gpus").size() == base.at("gpus").size() + 1);
}

TEST_CASE("plan refuses a search space beyond its budget up front and names what narrows it", "[cli][data][plan]") {
  // 400 copies of the catalogue's H100 under new ids: with the embedded GPUs, far more
  // (GPU, precision, engine, GPU count) cells than the search budget at --max-gpus 4096
  const std::string all = catalogue_file("gpus.yaml");
  const auto start = all.find("  - id: h100\n");
  REQUIRE(start != std::string::npos);
  const auto end = all.find("\n  - id: ", start + 1);
  const std::string block = all.substr(start, end + 1 - start);
  std::string copy = "gpus:\n";
  for (int i = 0; i < 400; ++i) {
    std::istringstream lines(replace_once(block, "  - id: h100\n", "  - id: lab-h100-" + std::to_string(i) + "\n"));
    std::string line;
    while (std::getline(lines, line))
      if (line.find("    aliases:") != 0) copy += line + "\n";
  }
  TempDir data;
  data.write("gpus.yaml", copy);

  expect_usage_error({"plan", "-m", "llama-3.1-8b", "--max-gpus", "4096", "--data", data.str()},
                     {"search space too large", "--gpus-from", "--max-gpus"});

  // narrowed to a few of them, the same catalogue searches
  const json narrowed = run_json({"plan", "-m", "llama-3.1-8b", "--max-gpus", "16", "--gpus-from", "lab-h100-7,h100", "--data", data.str()});
  CHECK(narrowed.at("search").at("cells").get<int>() > 0);
  CHECK(narrowed.at("search").at("cells").get<std::size_t>() <= k3plan::kMaxSearchCells);
}

TEST_CASE("output is byte-identical across runs and working directories", "[cli][hostile]") {
  // every input named by an absolute path, so only the working directory differs between runs
  const std::string deploy = kSourceDir + "/examples/deploy/llama-70b-h100-vllm.yaml";
  const std::string config = kSourceDir + "/tests/data/meta-llama--Llama-3.1-8B-Instruct_config.json";
  const std::string log = kSourceDir + "/tests/data/logs/vllm/gemma3-27b-it-h100-tp1-v0190.log";
  const std::string log_config = kSourceDir + "/tests/data/google--gemma-3-27b-it_config.json";
  const std::vector<std::vector<std::string>> commands = {
      {"fit", "-m", "kimi-k3"},
      {"fit", "-m", config, "-g", "h100", "--engine", "vllm", "--format", "json"},
      {"weights", "-m", config},
      {"plan", "-m", "llama-3.1-8b", "--format", "json"},
      {"launch", deploy, "--emit", "sh"},
      {"launch", deploy, "--emit", "k8s"},
      {"check", deploy, "--format", "sarif"},
      {"validate", "--log", log, "-m", log_config, "-g", "h100"},
      {"cost", "-m", "kimi-k3"},
  };
  // plan's JSON carries its search time: the one field that is not reproducible
  const std::regex timing(R"re("(ms|perf_candidates_per_s)": [0-9.e+-]+)re");
  auto stable = [&](const std::string& out) { return std::regex_replace(out, timing, "\"$1\": 0"); };
  TempDir elsewhere;
  for (const auto& args : commands) {
    const Run first = run(args);
    const Run again = run(args);
    const Run moved = run(args, elsewhere.str());
    const Run nested = run(args, kSourceDir + "/tests/data");
    INFO("k3plan " << first.cmdline << "\nstderr: " << first.err);
    CHECK(first.code == 0);
    for (const Run* r : {&again, &moved, &nested}) {
      CHECK(r->code == first.code);
      CHECK(stable(r->out) == stable(first.out));
      CHECK(r->err == first.err);
    }
  }
  CHECK(fs::is_empty(elsewhere.path()));  // nothing written where it ran
}

TEST_CASE("a user model YAML in a --data directory overrides the catalogue model with the same id", "[cli][data]") {
  // llama-3.1-8b with half its layers: the KV per token halves
  TempDir data;
  data.write("models/llama-3.1-8b.yaml", replace_once(llama8b_yaml(), "{repeat: 32, of: [full]}", "{repeat: 16, of: [full]}"));

  CHECK(kv_bytes_per_token({"-m", "llama-3.1-8b"}) == 32.0 * 2 * 8 * 128 * 2);
  CHECK(kv_bytes_per_token({"-m", "llama-3.1-8b", "--data", data.str()}) == 16.0 * 2 * 8 * 128 * 2);

  // an override, not a second entry
  const json models = run_json({"models", "--data", data.str()});
  const json base = run_json({"models"});
  CHECK(models.at("models").size() == base.at("models").size());
  long layers = -1;
  for (const auto& m : models.at("models"))
    if (m.at("id") == "llama-3.1-8b") layers = m.at("layers").get<long>();
  CHECK(layers == 16);
}

TEST_CASE("Llama 4 Scout: SGLang caches every token of the chunked layers up to 0.5.7, a SWA pool after, while vLLM keeps only the chunk",
          "[cli][fit][llama4]") {
  // SGLang gave chunked local attention a pool of its own only with --hybrid-kvcache-ratio
  // (configs/model_config.py is_hybrid_model) until PR #16399 listed Llama 4 in is_hybrid_swa_model
  // (0.5.8): all 48 layers a full cell before, 1 KV head x (128 + 128) x 2 B per layer per GPU at TP8
  // = 512 B, so 24,576 B/token; from 0.5.8 the 36 chunked layers at swa_full_tokens_ratio 0.8
  const std::string cfg = std::string(K3PLAN_TEST_DATA) + "/meta-llama--Llama-4-Scout-17B-16E-Instruct_config.json";
  auto cell = [](const json& j) { return j.at("per_gpu").at("kv_pool_bytes").get<double>() / j.at("per_gpu").at("kv_tokens").get<double>(); };
  const json old_sg = run_json({"fit", "-m", cfg, "-g", "h100", "--tp", "8", "--engine", "sglang", "--engine-version", "0.5.7", "-c", "128k"});
  CHECK(cell(old_sg) == Approx(24576.0).epsilon(0.001));
  const json sg = run_json({"fit", "-m", cfg, "-g", "h100", "--tp", "8", "--engine", "sglang", "-c", "128k"});
  CHECK(cell(sg) == Approx((12 + 36 * 0.8) * 512).epsilon(0.001));
  // vLLM keeps the 36 chunked layers to their chunk: per token beyond it only the 12 global layers grow
  const json vl = run_json({"fit", "-m", cfg, "-g", "h100", "--tp", "8", "--engine", "vllm", "-c", "128k"});
  CHECK(vl.at("max_users").get<double>() > old_sg.at("max_users").get<double>());
}

TEST_CASE("fit --max-total-tokens caps SGLang's pool and the command carries it and vLLM refuses it", "[cli][fit]") {
  const Run base = run({"fit", "-m", "llama-3.1-8b", "-g", "h100", "-f", "json"});
  REQUIRE(base.code == 0);
  const auto b = json::parse(base.out);
  REQUIRE(b["kv_cache_tokens"].get<std::int64_t>() > 100000);
  const Run capped = run({"fit", "-m", "llama-3.1-8b", "-g", "h100", "--max-total-tokens", "100000", "-f", "json"});
  INFO(capped.err);
  REQUIRE(capped.code == 0);
  const auto c = json::parse(capped.out);
  CHECK(c["kv_cache_tokens"] == 100000);
  CHECK(c["flags"]["sglang"].get<std::string>().find("--max-total-tokens 100000") != std::string::npos);
  const Run v = run({"fit", "-m", "llama-3.1-8b", "-g", "h100", "--engine", "vllm", "--max-total-tokens", "100000"});
  CHECK(v.code == 2);
  CHECK(v.err == "k3plan: error: --max-total-tokens is an SGLang flag, not a vLLM one (--engine vllm)\n");
}

TEST_CASE("fit --limit-mm-per-prompt: the vLLM command carries it in its release's spelling and stays valid shell", "[cli][fit]") {
  const std::string cfg = kTestData + "/google--gemma-3-27b-it_config.json";
  for (const auto& [version, spelling] : {std::pair<std::string, std::string>{"", "'{\"image\": 3}'"}, {"0.9.2", "'{\"image\": 3}'"},
                                          {"0.6.4", "image=3"}}) {
    INFO(version);
    std::vector<std::string> a{"fit", "-m", cfg, "-g", "h100", "--engine", "vllm", "--limit-mm-per-prompt", "{\"image\": 3}"};
    if (!version.empty()) a.insert(a.end(), {"--engine-version", version});
    const Run r = run(a);
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto at = r.out.find("vllm serve");
    REQUIRE(at != std::string::npos);
    // the command as printed, from `vllm serve` to its last continuation line
    std::string cmd;
    std::istringstream in(r.out.substr(at));
    for (std::string line; std::getline(in, line);) {
      cmd += line + "\n";
      if (line.empty() || line.back() != '\\') break;
    }
    CHECK(cmd.find("--limit-mm-per-prompt " + spelling) != std::string::npos);
    TempDir dir;
    const std::string sh = (dir.path() / "serve.sh").string();
    std::ofstream(sh) << cmd;
    CHECK(std::system(("bash -n " + sh).c_str()) == 0);
    // what bash hands vLLM is the JSON itself
    const std::string words = k3plan_test::run_shell("printf '%s\\n' " + cmd.substr(cmd.find("--limit-mm-per-prompt") + 22, spelling.size()));
    CHECK(words == (version == "0.6.4" ? "image=3\n" : "{\"image\": 3}\n"));
  }
  const Run bad = run({"fit", "-m", cfg, "-g", "h100", "--engine", "vllm", "--limit-mm-per-prompt", "video=2"});
  CHECK(bad.code == 2);
  CHECK(bad.err.find("expected the images per prompt") != std::string::npos);
  CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
  const Run sg = run({"fit", "-m", cfg, "-g", "h100", "--limit-mm-per-prompt", "image=3"});
  CHECK(sg.code == 2);
  CHECK(sg.err.find("is a vLLM flag, not a SGLang one") != std::string::npos);
}

TEST_CASE("fit --no-gpu-p2p: a vLLM TP group without GPU P2P holds a single rank's non-torch memory and the pool gains it", "[cli][fit]") {
  auto per_gpu = [](const std::vector<std::string>& extra) {
    std::vector<std::string> a{"fit", "-m", "llama-3.1-8b", "-g", "h100", "--engine", "vllm", "-f", "json"};
    a.insert(a.end(), extra.begin(), extra.end());
    const Run r = run(a);
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto j = json::parse(r.out);
    return j["per_gpu"].is_array() ? j["per_gpu"][0] : j["per_gpu"];
  };
  const auto p2p = per_gpu({"--tp", "2"});
  const auto host = per_gpu({"--tp", "2", "--no-gpu-p2p"});
  const auto tp1 = per_gpu({"--tp", "1"});
  // the non-torch term falls to the world-size-1 figure; everything else stays
  CHECK(host["overhead_bytes"].get<double>() == Approx(tp1["overhead_bytes"].get<double>()));
  CHECK(host["overhead_bytes"].get<double>() < p2p["overhead_bytes"].get<double>());
  CHECK(host["kv_pool_bytes"].get<double>() - p2p["kv_pool_bytes"].get<double>() ==
        Approx(p2p["overhead_bytes"].get<double>() - host["overhead_bytes"].get<double>()).margin(host["kv_bytes_per_token"].get<double>() * 16));
  CHECK(per_gpu({"--tp", "1", "--no-gpu-p2p"})["kv_tokens"] == tp1["kv_tokens"]);  // nothing to change without a TP group
}

TEST_CASE("perf shows an error band only for the model kind it was measured on and says not validated for others", "[cli][perf]") {
  const Run llama = run({"perf", "-m", "llama-3.1-70b", "-g", "h100", "--tp", "8"});
  INFO(llama.err);
  REQUIRE(llama.code == 0);
  CHECK(llama.out.find("not validated (R1: +/-") != std::string::npos);
  CHECK(llama.out.find("memory: the KV pool holds") != std::string::npos);
  const Run j = run({"perf", "-m", "llama-3.1-70b", "-g", "h100", "--tp", "8", "-f", "json"});
  CHECK(json::parse(j.out)["validated_model"] == false);
  const Run r1 = run({"perf", "-m", "deepseek-r1-0528", "-g", "h200", "--tp", "8"});
  INFO(r1.err);
  REQUIRE(r1.code == 0);
  CHECK(r1.out.find("not validated") == std::string::npos);
  CHECK(r1.out.find("+/-") != std::string::npos);
}
