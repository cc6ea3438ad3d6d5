// The public start-up log corpus (tests/data/logs/{vllm,sglang}/*.log) read through
// `k3plan validate --log` exactly as a user runs it after a first start-up: -m with the model's
// config.json, -g where the GPU is a catalogue one, --engine-version where the log's header says
// which release ran. The header lines (`# key: value`) are the hints a user would know; the binary
// reads only the log lines.
//
// Cases whose header carries `# in_sample:` set a constant of the engine models; they are reported
// apart and never count as validation. The table is written to
// ${build}/engine-validation-logs.md; `make validation-table` copies it to docs/.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "support.hpp"

using namespace k3plan_test;
using json = nlohmann::json;

namespace {

struct LogCase {
  std::string engine, file, path;
  std::map<std::string, std::string> header;
  bool in_sample = false;
  bool ran = false;
  std::string not_run;  // why it could not run
  double error_pct = 0;
  json out;
};

std::map<std::string, std::string> read_header(const fs::path& p) {
  std::map<std::string, std::string> h;
  std::istringstream in(slurp(p));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# ", 0) != 0) break;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(2, colon - 2);
    std::string value = line.substr(colon + 1);
    const auto comment = value.find("  #");
    if (comment != std::string::npos) value = value.substr(0, comment);
    while (!value.empty() && value.front() == ' ') value.erase(value.begin());
    while (!value.empty() && (value.back() == ' ' || value.back() == '\r')) value.pop_back();
    h.emplace(key, value);
  }
  return h;
}

std::string first_word(const std::string& s) { return s.substr(0, s.find(' ')); }

std::string lower(std::string s) {
  for (auto& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

std::vector<LogCase> run_corpus() {
  std::vector<LogCase> out;
  for (const char* engine : {"vllm", "sglang"}) {
    const fs::path dir = fs::path(K3PLAN_TEST_DATA) / "logs" / engine;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".log") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& p : files) {
      LogCase c;
      c.engine = engine;
      c.file = p.filename().string();
      c.path = p.string();
      c.header = read_header(p);
      c.in_sample = c.header.count("in_sample") > 0;
      std::vector<std::string> args = {"validate", "--log", c.path, "--format", "json"};
      const std::string cfg = first_word(c.header["config"]);
      if (cfg.empty() || cfg == "missing") {
        c.not_run = "no config.json for the model";
        out.push_back(c);
        continue;
      }
      const fs::path cfg_path = fs::path(K3PLAN_TEST_DATA) / cfg;
      if (!fs::exists(cfg_path)) {
        c.not_run = "config.json not stored";
        out.push_back(c);
        continue;
      }
      args.insert(args.end(), {"-m", cfg_path.string()});
      // the GPU as a user names it: "RTX 5090" -> rtx-5090 (an id or alias of the catalogue)
      std::string gpu = lower(c.header["gpu"].substr(0, c.header["gpu"].find_first_of("(;,")));
      while (!gpu.empty() && gpu.back() == ' ') gpu.pop_back();
      std::replace(gpu.begin(), gpu.end(), ' ', '-');
      if (!gpu.empty() && gpu.rfind("unknown", 0) != 0) args.insert(args.end(), {"-g", gpu});
      const std::string version = first_word(c.header["engine_version"]);
      if (!version.empty() && version != "unknown:" && version != "unknown") args.insert(args.end(), {"--engine-version", version});
      const Run r = run(args);
      if (r.code != 0) {
        c.not_run = r.err.substr(0, r.err.find('\n'));
        out.push_back(c);
        continue;
      }
      c.out = json::parse(r.out);
      c.ran = true;
      c.error_pct = c.out.at("kv_cache_tokens_error_pct").get<double>();
      out.push_back(c);
    }
  }
  return out;
}

const std::vector<LogCase>& corpus() {
  static const std::vector<LogCase> c = run_corpus();
  return c;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

std::string md_escape(std::string s) {
  // paths relative to the repository, so the published table does not depend on the checkout
  for (std::size_t p; (p = s.find(K3PLAN_SOURCE_DIR "/")) != std::string::npos;) s.erase(p, std::string(K3PLAN_SOURCE_DIR "/").size());
  std::string o;
  for (char ch : s) o += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return o;
}

std::string fmt_row(const std::string& name, const std::vector<double>& v,
                    const std::function<long(const std::vector<double>&, double)>& within) {
  std::ostringstream s;
  s << "| " << name << " | " << v.size() << " | " << std::round(median(v) * 100) / 100 << "% | " << within(v, 1) << " | " << within(v, 3)
    << " | " << within(v, 10) << " |\n";
  return s.str();
}

void write_table(const std::vector<LogCase>& cs) {
  std::ostringstream md;
  std::vector<double> oos, ins;
  for (const auto& c : cs)
    if (c.ran) (c.in_sample ? ins : oos).push_back(std::abs(c.error_pct));
  auto within = [](const std::vector<double>& v, double t) { return std::count_if(v.begin(), v.end(), [t](double x) { return x <= t; }); };
  md << "# Engine accuracy on public start-up logs (`k3plan validate --log`)\n\n"
     << "Generated by `tests/test_validate_logs.cpp` from `tests/data/logs/` (each log's source is in its header); update with "
        "`make validation-table`. Error = (predicted - logged) / logged KV tokens, as the engine printed them.\n\n"
     << "| set | logs run | median abs error | within 1% | within 3% | within 10% |\n|---|---|---|---|---|---|\n";
  md << fmt_row("out of sample", oos, within) << fmt_row("in sample (set a constant)", ins, within) << "\n";
  md << "| engine | log | kind | GPU | version window | logged | predicted | error | largest term | in sample |\n"
     << "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& c : cs) {
    if (!c.ran) continue;
    md << "| " << c.engine << " | " << c.file << " | " << md_escape(c.header.count("kind") ? c.header.at("kind") : "") << " | "
       << c.out.at("gpu").get<std::string>() << " | " << c.out.at("engine_version").get<std::string>() << " | "
       << c.out.at("logged").at("kv_cache_tokens").get<long long>() << " | " << c.out.at("predicted").at("kv_cache_tokens").get<long long>()
       << " | " << (c.error_pct >= 0 ? "+" : "") << std::round(c.error_pct * 100) / 100 << "% | "
       << c.out.at("explained_by").get<std::string>() << " | " << (c.in_sample ? md_escape(c.header.at("in_sample")) : "") << " |\n";
  }
  md << "\nOut-of-sample cases beyond 3% and what their terms say (the `# miss:` line of each log's header; required beyond 10%):\n\n"
     << "| engine | log | error | why |\n|---|---|---|---|\n";
  for (const auto& c : cs)
    if (c.ran && !c.in_sample && std::abs(c.error_pct) > 3)
      md << "| " << c.engine << " | " << c.file << " | " << (c.error_pct >= 0 ? "+" : "") << std::round(c.error_pct * 100) / 100 << "% | "
         << md_escape(c.header.count("miss") ? c.header.at("miss") : "not analysed") << " |\n";
  md << "\nLogs not run (the input a user would need is missing):\n\n| engine | log | why |\n|---|---|---|\n";
  for (const auto& c : cs)
    if (!c.ran) md << "| " << c.engine << " | " << c.file << " | " << md_escape(c.not_run) << " |\n";
  std::ofstream(fs::path(K3PLAN_BUILD_DIR) / "engine-validation-logs.md") << md.str();
}

}  // namespace

TEST_CASE("every public start-up log with its model's config runs through validate --log and names its version and terms",
          "[validate][logs]") {
  const auto& cs = corpus();
  write_table(cs);
  int ran = 0;
  for (const auto& c : cs) {
    if (!c.ran) continue;
    ++ran;
    INFO(c.file);
    CHECK(c.out.at("engine") == c.engine);
    CHECK_FALSE(c.out.at("engine_version").get<std::string>().empty());
    CHECK(c.out.at("terms").is_array());
    CHECK(c.out.at("logged").at("kv_cache_tokens").get<long long>() > 0);
    // a figure the log does not print is absent, never zero
    for (const auto& [k, v] : c.out.at("logged").items())
      if (v.is_number()) CHECK(v.get<double>() != 0);
  }
  CHECK(cs.size() >= 60);
  CHECK(ran >= 18);
}

TEST_CASE("every out-of-sample log beyond 10 percent says in its header what its terms show (the table's notes)", "[validate][logs]") {
  for (const auto& c : corpus()) {
    if (!c.ran || c.in_sample || std::abs(c.error_pct) <= 10) continue;
    INFO(c.file << " " << c.error_pct << "%: add a '# miss:' header line from its validate --log terms");
    CHECK(c.header.count("miss") == 1);
  }
}

TEST_CASE("out-of-sample logs: the median KV-token error stays within 3 percent (regression guard, not the target)", "[validate][logs]") {
  std::vector<double> oos;
  for (const auto& c : corpus())
    if (c.ran && !c.in_sample) oos.push_back(std::abs(c.error_pct));
  REQUIRE(oos.size() >= 12);
  CHECK(median(oos) <= 3.0);
}

namespace {
// Out-of-sample bands per (engine, window, kind), (engine, *, kind) and (engine, *, *), in the form
// of data/validation/log-accuracy.yaml.
std::string bands_yaml(const std::vector<LogCase>& cs) {
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<double>> g;
  for (const auto& c : cs) {
    if (!c.ran || c.in_sample) continue;
    const std::string w = c.out.at("engine_version").get<std::string>(), k = c.out.at("model_kind").get<std::string>();
    const double e = std::abs(c.error_pct);
    g[{c.engine, w, k}].push_back(e);
    g[{c.engine, "*", k}].push_back(e);
    g[{c.engine, "*", "*"}].push_back(e);
  }
  std::ostringstream y;
  y << "# Out-of-sample KV-token accuracy on the public start-up logs (tests/data/logs), per engine window and model kind.\n"
       "# Generated by tests/test_validate_logs.cpp; do not edit: run `make validation-table` after changing the corpus or the\n"
       "# engine models. Read by src/engines/accuracy.cpp for the error band `fit` prints.\n"
       "bands:\n";
  for (const auto& [key, v] : g) {
    const auto& [e, w, k] = key;
    char med[32], mx[32];
    std::snprintf(med, sizeof med, "%.2f", median(v));
    std::snprintf(mx, sizeof mx, "%.2f", *std::max_element(v.begin(), v.end()));
    y << "  - {engine: " << e << ", window: \"" << w << "\", kind: \"" << k << "\", logs: " << v.size() << ", median_abs_error_pct: " << med
      << ", max_abs_error_pct: " << mx << "}\n";
  }
  return y.str();
}
}  // namespace

TEST_CASE("the error bands fit prints are the ones the corpus gives now (data/validation/log-accuracy.yaml is current)",
          "[validate][logs]") {
  const std::string now = bands_yaml(corpus());
  std::ofstream(fs::path(K3PLAN_BUILD_DIR) / "log-accuracy.yaml") << now;
  const std::string committed = slurp(fs::path(K3PLAN_SOURCE_DIR) / "data" / "validation" / "log-accuracy.yaml");
  INFO("data/validation/log-accuracy.yaml is stale: run `make validation-table` and commit the result");
  CHECK(committed == now);
}

TEST_CASE("in-sample logs reproduce the figures they set within 1 percent", "[validate][logs]") {
  for (const auto& c : corpus()) {
    if (!c.ran || !c.in_sample) continue;
    INFO(c.file << " " << c.error_pct << "%");
    CHECK(std::abs(c.error_pct) <= 1.0);
  }
}

TEST_CASE("vLLM V0 profile of a multimodal Gemma 3 counts the vision tower and the attention masks, V1 the encoder batch it keeps", "[validate][logs]") {
  // gemma3_mm.py / siglip.py / worker/model_runner.py _dummy_run @ v0.8.0: one dummy sequence of
  // 16,384 tokens (16,384 // (50 images x 256 tokens)) with 50 images of 4,096 SigLIP patches; the
  // mask building (9 B x 16,384^2) with the fp32 pixels and the embeddings live is the peak
  auto activation = [](const json& out) {
    for (const auto& t : out.at("terms"))
      if (t.at("term") == "activation") return t.at("predicted_bytes").get<double>();
    return -1.0;
  };
  bool v0 = false, v1 = false;
  for (const auto& c : corpus()) {
    if (!c.ran) continue;
    if (c.file == "gemma3-27b-a100-40gb-tp4-v080rc3-v0engine.log") {
      v0 = true;
      const double gib = activation(c.out) / (1024.0 * 1024 * 1024);
      CHECK(gib > 2.9);
      CHECK(gib < 3.1);
      CHECK(std::abs(c.error_pct) < 3.0);
    }
    if (c.file == "gemma3-27b-it-h100-tp1-v0190.log") {
      // V1 0.19: the fitted sampler peak (1,024 sequences), which is larger than SigLIP's over the
      // encoder batch of 8192 / 256 = 32 dummy images, plus what that batch leaves allocated through
      // the language model's run: the bf16 pixel values (3 x 896 x 896) and the 256 x 5,376 embeddings of each image
      v1 = true;
      const double carry = 32.0 * (3 * 896 * 896 * 2 + 256 * 5376 * 2);
      CHECK(std::abs(activation(c.out) - (4115595264.0 + carry)) < 1e6);
      // the log's own torch peak increase (3.99 GiB)
      double logged = 0;
      for (const auto& t : c.out.at("terms"))
        if (t.at("term") == "activation") logged = t.value("logged_bytes", 0.0);
      REQUIRE(logged > 0);
      CHECK(std::abs(activation(c.out) - logged) < 0.03 * logged);
    }
  }
  CHECK(v0);
  CHECK(v1);
}

TEST_CASE("a V0 log's terms are those of the rank that sized the cache, and the NVLS term closes most of the workers' non-torch", "[validate][logs]") {
  // every rank prints "Memory profiling results"; the executor takes the fewest blocks (the driver,
  // which also samples): 107.35 GiB of KV, 7.71 GiB non-torch, a 17.67 GiB torch peak over 16.46 of weights
  auto term = [](const json& out, const std::string& name, const char* key) {
    for (const auto& t : out.at("terms"))
      if (t.at("term") == name) return t.value(key, -1.0);
    return -1.0;
  };
  const double GiB = 1024.0 * 1024 * 1024;
  bool seen = false;
  for (const auto& c : corpus()) {
    if (!c.ran || c.file != "llama31-70b-instruct-141gb-tp8-v064post1.log") continue;
    seen = true;
    CHECK(term(c.out, "non_torch", "logged_bytes") / GiB == Approx(7.71).margin(0.005));
    CHECK(term(c.out, "activation", "logged_bytes") / GiB == Approx(17.67 - 16.46).margin(0.01));
    // 1.79 GiB above world size 1 + 2 communicators x 24 channels x 2 x 3 MiB x 8 heads (NCCL 2.21.5)
    CHECK(term(c.out, "non_torch", "predicted_bytes") / GiB == Approx(1.79 + 2.25).margin(0.001));
  }
  CHECK(seen);
}
