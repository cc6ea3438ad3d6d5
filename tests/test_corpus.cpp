// The public corpus: every config.json under tests/data (the Hugging Face copies, the
// ai-dynamo/aiconfigurator model_configs mirror and its history, see tests/data/aiconfigurator/
// SOURCE.md) imports through `k3plan weights -m FILE --format json`, the path users run; the ones
// whose model card publishes parameter counts (tests/data/model-cards.tsv, each line citing its
// card) come out within 2% of the published total and 5% of the published active count.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "support.hpp"

using namespace k3plan_test;
namespace fs = std::filesystem;

namespace {

struct Card {
  std::string file;
  double total = 0, active = 0;  // parameters; active 0 = not published separately (dense)
  std::string total_basis;       // lm | lm+towers | lm+mtp
  std::string active_basis;      // no-embedding | with-embedding
  std::string source;
  int line = 0;
};

std::vector<Card> cards() {
  std::vector<Card> out;
  std::istringstream in(slurp(fs::path(K3PLAN_TEST_DATA) / "model-cards.tsv"));
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, '\t');) f.push_back(x);
    INFO("model-cards.tsv line " << n << ": " << line);
    REQUIRE(f.size() == 6);
    Card c{f[0], std::stod(f[1]) * 1e9, f[2] == "-" ? 0 : std::stod(f[2]) * 1e9, f[3], f[4], f[5], n};
    REQUIRE((c.total_basis == "lm" || c.total_basis == "lm+towers" || c.total_basis == "lm+mtp"));
    REQUIRE((c.active_basis == "no-embedding" || c.active_basis == "with-embedding" || c.active_basis == "-"));
    REQUIRE(!c.source.empty());
    out.push_back(c);
  }
  return out;
}

std::vector<fs::path> corpus() {
  std::vector<fs::path> files;
  for (const char* sub : {"", "aiconfigurator", "aiconfigurator/history"})
    for (const auto& e : fs::directory_iterator(fs::path(K3PLAN_TEST_DATA) / sub)) {
      const std::string n = e.path().filename().string();
      if (e.is_regular_file() && n.size() > 12 && n.compare(n.size() - 12, 12, "_config.json") == 0 &&
          n.find("_hf_quant_config.json") == std::string::npos)
        files.push_back(e.path());
    }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("every config.json of the public corpus imports through the CLI, within 2 and 5 percent of its model card") {
  const auto all = corpus();
  REQUIRE(all.size() >= 150);
  const auto cs = cards();
  std::map<std::string, const Card*> by_file;
  for (const auto& c : cs) by_file[c.file] = &c;
  std::set<std::string> used;
  int checked = 0;
  std::string table = "model | derived total / active | published total / active | error total / active\n";
  for (const auto& f : all) {
    const std::string rel = fs::relative(f, K3PLAN_TEST_DATA).string();
    const Run r = run({"weights", "-m", f.string(), "--format", "json", "-p", "bf16"});
    INFO(rel << ": " << r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    const double total = j["params_total"].get<double>(), active = j["params_active"].get<double>();
    CHECK(total > 0);
    CHECK(active > 0);
    CHECK(active <= total);
    // an architecture the table does not know is read generically, and the output says so
    bool generic = false;
    for (const auto& a : j["assumptions"]) generic = generic || a.get<std::string>().find("unrecognised architecture") != std::string::npos;
    const auto it = by_file.find(f.filename().string());
    if (it == by_file.end()) continue;
    const Card& c = *it->second;
    used.insert(c.file);
    INFO("model-cards.tsv line " << c.line << " (" << c.source << ")");
    CHECK(!generic);
    double t = total;
    if (c.total_basis == "lm+towers") t += j["params_vision"].get<double>() + j["params_audio"].get<double>();
    if (c.total_basis == "lm+mtp") t += j["params_mtp"].get<double>();
    CHECK(t == Approx(c.total).epsilon(0.02));
    std::string act = "-";
    double a = active;
    if (c.active > 0) {
      // the input embedding (a lookup) is outside k3plan's active count; some cards include it
      if (c.active_basis == "with-embedding") a += j["params_embedding"].get<double>();
      CHECK(a == Approx(c.active).epsilon(0.05));
      act = fmt::format("{:+.1f}%", (a - c.active) / c.active * 100);
    }
    ++checked;
    table += fmt::format("{} | {:.2f}B / {:.2f}B | {:.2f}B / {} | {:+.1f}% / {}\n", rel, t / 1e9, a / 1e9, c.total / 1e9,
                         c.active > 0 ? fmt::format("{:.2f}B", c.active / 1e9) : "-", (t - c.total) / c.total * 100, act);
  }
  WARN(table);
  for (const auto& c : cs) {
    INFO("model-cards.tsv line " << c.line << " names a file that is not in the corpus: " << c.file);
    CHECK(used.count(c.file) == 1);
  }
  CHECK(checked >= 60);
}

TEST_CASE("an unknown architecture is read generically and says so in its output") {
  TempDir t;
  const std::string cfg =
      t.write("config.json",
              R"({"architectures": ["FancyNewForCausalLM"], "model_type": "fancy_new", "hidden_size": 1024, "intermediate_size": 4096,
          "num_hidden_layers": 8, "num_attention_heads": 16, "num_key_value_heads": 4, "vocab_size": 32000,
          "max_position_embeddings": 8192})");
  for (const char* cmd : {"weights", "kv", "fit"}) {
    std::vector<std::string> args{cmd, "-m", cfg};
    if (std::string(cmd) == "fit") args.insert(args.end(), {"-g", "h100", "-n", "1"});
    const Run r = run(args);
    INFO(cmd << ": " << r.err);
    CHECK(r.code == 0);
    CHECK(r.out.find("unrecognised architecture: generic decoder assumptions") != std::string::npos);
  }
}

TEST_CASE("show accepts whatever -m accepts: a config.json, a model directory") {
  const std::string file = std::string(K3PLAN_TEST_DATA) + "/aiconfigurator/nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8_config.json";
  const Run r = run({"show", file, "--format", "json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["kind"] == "model");
  CHECK(j["layers"] == 88);
  TempDir t;
  fs::copy_file(std::string(K3PLAN_TEST_DATA) + "/google--gemma-3-4b-it_config.json", t.path() / "config.json");
  const Run d = run({"show", t.str(), "--format", "json"});
  INFO(d.err);
  REQUIRE(d.code == 0);
  CHECK(nlohmann::json::parse(d.out)["params_vision"].get<double>() > 0.3e9);
  expect_usage_error({"show", t.str() + "/missing.json"}, {"missing.json"});
}

TEST_CASE("Gemma 4 and MiMo-V2-Flash cache each layer kind with its own heads and head dimensions") {
  auto blocks = [](const std::string& file) {
    const Run r = run({"kv", "-m", std::string(K3PLAN_TEST_DATA) + "/aiconfigurator/" + file, "--format", "json", "-c", "8k"});
    INFO(file << ": " << r.err);
    REQUIRE(r.code == 0);
    std::map<std::string, nlohmann::json> out;
    const auto j = nlohmann::json::parse(r.out);
    for (const auto& b : j["layers"]) out[b["block"].get<std::string>()] = b;
    return out;
  };
  // Gemma 4 26B-A4B: 5 global layers of 2 K=V heads x 512 (global_head_dim, num_global_key_value_heads),
  // 25 sliding layers of 8 heads x 256 within 1,024 tokens; K and V both cached, bf16
  auto g = blocks("google--gemma-4-26B-A4B_config.json");
  CHECK(g["full"]["count"] == 5);
  CHECK(g["full"]["bytes_per_token"].get<double>() == 5 * 2 * (512 + 512) * 2);
  CHECK(g["sliding"]["count"] == 25);
  CHECK(g["sliding"]["window_tokens"] == 1024);
  CHECK(g["sliding"]["window_bytes_per_token"].get<double>() == 25 * 8 * (256 + 256) * 2);
  // MiMo-V2-Flash: hybrid_layer_pattern 1 = sliding (swa_num_key_value_heads 8), 0 = global (4 heads);
  // q/k head_dim 192, v_head_dim 128; window 128
  auto mi = blocks("XiaomiMiMo--MiMo-V2-Flash_config.json");
  CHECK(mi["full"]["count"] == 9);
  CHECK(mi["full"]["bytes_per_token"].get<double>() == 9 * 4 * (192 + 128) * 2);
  CHECK(mi["sliding"]["count"] == 39);
  CHECK(mi["sliding"]["window_tokens"] == 128);
  CHECK(mi["sliding"]["window_bytes_per_token"].get<double>() == 39 * 8 * (192 + 128) * 2);
}

TEST_CASE("engine commands load the config directory the user gave, never the config's _name_or_path") {
  // this config names its training machine's path in _name_or_path
  const std::string file = std::string(K3PLAN_TEST_DATA) + "/nvidia--Llama-3.1-70B-Instruct-FP8_config.json";
  REQUIRE(slurp(file).find("\"_name_or_path\": \"/opt/zhiyu_hf_ckpts/Llama-3.1-70B-Instruct/\"") != std::string::npos);
  TempDir t;
  fs::copy_file(file, t.path() / "config.json");
  const std::vector<std::string> fit_args{"-g", "h100", "-n", "8"};
  auto fit = [&](const std::string& m) {
    std::vector<std::string> a{"fit", "-m", m};
    a.insert(a.end(), fit_args.begin(), fit_args.end());
    const Run r = run(a);
    INFO(m << ": " << r.err);
    CHECK(r.code <= 1);
    CHECK(r.out.find("/opt/zhiyu_hf_ckpts") == std::string::npos);
    std::string flat;  // the assumptions wrap at the terminal width: one space for each run of blanks
    for (char ch : r.out)
      if (!(ch == ' ' || ch == '\n') || flat.empty() || flat.back() != ' ') flat += ch == '\n' ? ' ' : ch;
    return flat;
  };
  // a directory: loaded as given, no assumption needed
  std::string out = fit(t.str());
  CHECK(out.find("--model-path " + t.str() + " ") != std::string::npos);
  CHECK(out.find("vllm serve " + t.str() + " ") != std::string::npos);
  CHECK(out.find("is a config file") == std::string::npos);
  // its config.json: the directory, and the output says so
  out = fit(t.str() + "/config.json");
  CHECK(out.find("--model-path " + t.str() + " ") != std::string::npos);
  CHECK(out.find("vllm serve " + t.str() + " ") != std::string::npos);
  CHECK(out.find(t.str() + "/config.json is a config file: engine commands load its directory " + t.str()) != std::string::npos);
  // a flat copy under another name: the directory, and the engine reads config.json there, not that file
  out = fit(file);
  CHECK(out.find("vllm serve " + std::string(K3PLAN_TEST_DATA) + " ") != std::string::npos);
  CHECK(out.find("where the engine reads config.json (not nvidia--Llama-3.1-70B-Instruct-FP8_config.json) and the weights") !=
        std::string::npos);
  // launch writes the same path into its script
  const Run l = run({"launch", "-m", t.str() + "/config.json", "-g", "h100", "-n", "8", "--engine", "vllm"});
  INFO(l.err);
  REQUIRE(l.code == 0);
  CHECK(l.out.find("vllm serve " + t.str() + " ") != std::string::npos);
  CHECK(l.out.find("/opt/zhiyu_hf_ckpts") == std::string::npos);
}

TEST_CASE("Laguna counts each layer's query heads and output gate and caches the sliding layers within their window") {
  // poolside Laguna XS.2 (transformers models/laguna/modeling_laguna.py): 10 full-attention layers
  // of 48 query heads, 30 sliding-window layers of 64, all with 8 K/V heads x 128; a per-head
  // softplus gate g_proj (2048 -> heads); layer 0 a dense MLP of 8,192, layers 1-39 256 experts of
  // 512 (top 8) + one shared expert of 512 + router and correction bias. Counted by hand from that
  // code (the q/k norms, 2 x 128 per layer, are left out as for every q/k-norm model)
  const std::string file = std::string(K3PLAN_TEST_DATA) + "/aiconfigurator/history/poolside--Laguna-XS.2-FP8_config.json";
  const Run w = run({"weights", "-m", file, "--format", "json", "-p", "bf16"});
  INFO(w.err);
  REQUIRE(w.code == 0);
  const auto j = nlohmann::json::parse(w.out);
  const double h = 2048, hd = 128, kv = 8, vocab = 100352;
  auto attn = [&](double heads) { return 2 * h * heads * hd + 2 * h * kv * hd + h * heads; };
  const double attention = 10 * attn(48) + 30 * attn(64);
  const double expert = 3 * h * 512, moe_fixed = expert + h * 256 + 256;  // shared expert, router + bias
  const double common = attention + 40 * 2 * h + h + vocab * h;          // + norms, final norm, LM head
  CHECK(j["params_total"].get<double>() == Approx(common + vocab * h + 3 * h * 8192 + 39 * (256 * expert + moe_fixed)).epsilon(1e-9));
  CHECK(j["params_active"].get<double>() == Approx(common + 3 * h * 8192 + 39 * (8 * expert + moe_fixed)).epsilon(1e-9));
  for (const auto& a : j["assumptions"]) CHECK(a.get<std::string>().find("mlp_only_layers") == std::string::npos);

  const Run r = run({"kv", "-m", file, "--format", "json", "-c", "8k"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::map<std::string, nlohmann::json> b;
  const auto kvj = nlohmann::json::parse(r.out);
  for (const auto& x : kvj["layers"]) b[x["block"].get<std::string>()] = x;
  REQUIRE(b.size() == 2);
  CHECK(b["full"]["count"] == 10);
  CHECK(b["sliding"]["count"] == 30);
  CHECK(b["sliding"]["window_tokens"] == 512);
  // the query heads differ, the cache per token does not: 8 K/V heads x 128 on every layer
  CHECK(b["sliding"]["window_bytes_per_token"].get<double>() / 30 == b["full"]["bytes_per_token"].get<double>() / 10);

  const Run s = run({"show", file});
  INFO(s.err);
  REQUIRE(s.code == 0);
  CHECK(s.out.find("48 q heads, 8 kv heads x 128, gate per head") != std::string::npos);
  CHECK(s.out.find("64 q heads, 8 kv heads x 128, window 512, gate per head") != std::string::npos);
}

TEST_CASE("Laguna config fields out of shape are located input errors") {
  TempDir dir;
  auto cfg = nlohmann::json::parse(slurp(fs::path(K3PLAN_TEST_DATA) / "aiconfigurator/history/poolside--Laguna-XS.2-FP8_config.json"));
  auto bad = [&](const char* field, const nlohmann::json& v) {
    auto c = cfg;
    c[field] = v;
    const fs::path f = dir.path() / "config.json";
    std::ofstream(f) << c.dump();
    const Run r = run({"weights", "-m", f.string()});
    INFO(field << ": " << r.out << r.err);
    CHECK(r.code != 0);
    CHECK(r.err.find(field) != std::string::npos);
  };
  bad("num_attention_heads_per_layer", nlohmann::json::array({48, 64}));
  bad("mlp_layer_types", nlohmann::json::array({"dense"}));
  bad("gating", "per-channel");
}
