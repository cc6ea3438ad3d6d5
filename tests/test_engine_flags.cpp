// The engines' argument tables (data/engines/*-flags.yaml) and what k3plan generates from them:
// every flag and value of every generated command is one the engine release accepts, and every
// generated script is valid bash.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <k3plan/budget.hpp>
#include <k3plan/catalogue.hpp>
#include <k3plan/commands.hpp>
#include <k3plan/embedded.hpp>
#include <k3plan/engine_flags.hpp>
#include <k3plan/error.hpp>
#include <k3plan/launch.hpp>
#include <k3plan/report_html.hpp>
#include <map>
#include <set>
#include <sstream>

#include "support.hpp"

using namespace k3plan;
namespace fs = std::filesystem;

namespace {

using k3plan_test::cat;
using k3plan_test::TempDir;

// Every model k3plan ships: the catalogue and the validation models.
const std::vector<Model>& all_models() {
  static const std::vector<Model> ms = [] {
    std::vector<Model> out = cat().models();
    for (const auto& f : embedded_files()) {
      const std::string p = f.path;
      if (p.rfind("validation/models/", 0) == 0) out.push_back(parse_model_yaml(std::string(f.text), p));
    }
    return out;
  }();
  return ms;
}

const Model& model(const std::string& id) {
  for (const auto& m : all_models())
    if (m.id == id) return m;
  FAIL("no model " << id);
  throw std::logic_error("unreachable");
}

// `bash -n` on each file; returns "file: error" lines for the ones that fail (empty = all valid).
// quick = parse every file inside one bash process instead (each file's text as the body of a
// function that is never called: a syntax error, an unterminated quote included, stays inside
// that one eval), for the thousands of scripts of the gate below.
std::string bash_syntax_errors(const std::vector<std::string>& files, bool quick = false) {
  if (files.empty()) return "";
  TempDir t;
  std::string list;
  for (const auto& f : files) list += f + "\n";
  const std::string listfile = t.write("files.txt", list);
  const std::string cmd =
      quick
          ? "bash -c 'while IFS= read -r f; do IFS= read -r -d \"\" body < \"$f\"; eval \"k3plan_syntax_check() {\n$body\n}\" 2>/dev/null "
            "|| echo \"$f: syntax error\"; done' < " +
                listfile
          : "while IFS= read -r f; do bash -n \"$f\" 2>&1 | sed \"s|^|$f: |\"; done < " + listfile;
  return k3plan_test::run_shell(cmd);
}

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

TEST_CASE("the bash syntax checkers catch the apostrophe that ended the HEAD_ADDR quote", "[flags][bash]") {
  TempDir t;
  const std::string bad = t.write("bad.sh", "#!/usr/bin/env bash\n: \"${HEAD_ADDR:?set HEAD_ADDR to the head node's address}\"\necho hi\n");
  const std::string good = t.write("good.sh", "#!/usr/bin/env bash\necho 'it''s fine'\ncase x in\n  x) echo x ;;\nesac\n");
  // the next file's apostrophe must not close the first file's quote
  const std::string bad2 = t.write("bad2.sh", "echo 'open\n");
  CHECK(bash_syntax_errors({good}) == "");
  CHECK(bash_syntax_errors({good}, true) == "");
  CHECK(bash_syntax_errors({bad}).find("bad.sh") != std::string::npos);
  CHECK(bash_syntax_errors({bad, good}, true).find("bad.sh") != std::string::npos);
  CHECK(bash_syntax_errors({bad2, good}, true).find("bad2.sh") != std::string::npos);
  CHECK(bash_syntax_errors({bad2, good}, true).find("good.sh") == std::string::npos);
}

TEST_CASE("flag tables: a release maps to the window that covers it", "[flags]") {
  const FlagTable& v = flag_table(Engine::vllm);
  const FlagTable& g = flag_table(Engine::sglang);
  CHECK(v.resolve("0.10.1.1").window == "0.10");
  CHECK(v.resolve("0.10.1.1").release == "0.10.1.1");
  CHECK(v.resolve("0.13.0").window == "0.11");
  CHECK(v.resolve("main").window == "main");
  CHECK(v.resolve("").window == "main");
  CHECK(v.resolve("").release.empty());
  CHECK(v.resolve("0.17").window == "0.17");
  CHECK(v.resolve("0.17").release.empty());  // a window id: what every release of it accepts
  CHECK(g.resolve("0.5.8.post1").window == "0.5");
  CHECK(g.resolve("0.4.10.post2").window == "0.4");
  CHECK(g.resolve("main").window == "main");
  // newer than the releases read: upstream main, said so
  const FlagRelease newer = v.resolve("0.27.1");
  CHECK(newer.window == "main");
  CHECK_FALSE(newer.note.empty());
  CHECK(g.resolve("0.5.19").window == "main");
  // .postN after the release, rcN before it; absurd suffixes are just large
  // after 0.4.10.post2, the last 0.4 read, and before 0.5.1: what every 0.4 release accepts, said so
  CHECK(g.resolve("0.4.10.post3").window == "0.4");
  CHECK(g.resolve("0.4.10.post3").release.empty());
  CHECK_FALSE(g.resolve("0.4.10.post3").note.empty());
  CHECK(g.resolve("0.5.1rc1").window == "0.4");  // before 0.5.1: not read, the older window's common flags
  CHECK_FALSE(g.resolve("0.5.1rc1").note.empty());
  CHECK(g.resolve("0.5.4.post99999999999999").window == "0.5");
  // older than the releases read: no table, said so
  const FlagRelease older = v.resolve("0.8.5");
  CHECK_FALSE(older.known());
  CHECK_FALSE(older.note.empty());
}

TEST_CASE("flag tables: flags and values per release", "[flags]") {
  const FlagTable& v = flag_table(Engine::vllm);
  const FlagTable& g = flag_table(Engine::sglang);
  // --nnodes arrived in vLLM 0.11.1 (partial in the 0.11 window)
  CHECK_FALSE(v.has_flag("--nnodes", v.resolve("0.10.2")));
  CHECK_FALSE(v.has_flag("--nnodes", v.resolve("0.11.0")));
  CHECK(v.has_flag("--nnodes", v.resolve("0.11.1")));
  CHECK_FALSE(v.has_flag("--nnodes", v.resolve("0.11")));  // not every release of the window
  CHECK(v.has_flag("--nnodes", v.resolve("")));
  CHECK(v.has_flag("-tp", v.resolve("")));  // aliases
  CHECK(g.has_flag("--tensor-parallel-size", g.resolve("0.5.8.post1")));
  CHECK_FALSE(g.has_flag("--no-such-flag", g.resolve("")));
  CHECK(v.takes_value("--tensor-parallel-size", v.resolve("")));
  CHECK_FALSE(v.takes_value("--trust-remote-code", v.resolve("")));
  // typed values
  CHECK(v.accepts("--tensor-parallel-size", "8", v.resolve("")));
  CHECK_FALSE(v.accepts("--tensor-parallel-size", "eight", v.resolve("")));
  CHECK(v.accepts("--gpu-memory-utilization", "0.90", v.resolve("")));
  // KV cache dtypes: registries per window, *_since with a release
  CHECK(v.accepts("--kv-cache-dtype", "fp8", v.resolve("0.9.2")));
  CHECK_FALSE(v.accepts("--kv-cache-dtype", "bf16", v.resolve("")));
  CHECK(v.accepts("--kv-cache-dtype", "bfloat16", v.resolve("0.11.0")));
  CHECK_FALSE(v.accepts("--kv-cache-dtype", "nvfp4", v.resolve("0.19.0")));
  CHECK(v.accepts("--kv-cache-dtype", "nvfp4", v.resolve("0.20.0")));
  CHECK_FALSE(g.accepts("--kv-cache-dtype", "fp8_e4m3", g.resolve("0.4")));
  CHECK_FALSE(g.accepts("--kv-cache-dtype", "fp8_e4m3", g.resolve("0.4.1.post5")));
  CHECK(g.accepts("--kv-cache-dtype", "fp8_e4m3", g.resolve("0.4.1.post6")));
  CHECK_FALSE(g.accepts("--kv-cache-dtype", "fp8", g.resolve("")));
  // parsers: registries, with the release they arrived in
  CHECK_FALSE(g.in_registry(FlagRegistry::tool_call_parser, "kimi_k3", g.resolve("0.5.16")));
  CHECK(g.in_registry(FlagRegistry::tool_call_parser, "kimi_k3", g.resolve("0.5.17")));
  CHECK_FALSE(v.in_registry(FlagRegistry::tool_call_parser, "kimi_k3", v.resolve("0.21.0")));
  CHECK(v.in_registry(FlagRegistry::tool_call_parser, "kimi_k3", v.resolve("main")));
  CHECK_FALSE(g.in_registry(FlagRegistry::tool_call_parser, "minimax-m2", g.resolve("0.5.4")));
  CHECK(g.in_registry(FlagRegistry::tool_call_parser, "minimax-m2", g.resolve("0.5.4.post1")));
  CHECK(g.first_release_with(FlagRegistry::tool_call_parser, "kimi_k3") == "0.5.17");
  CHECK(v.first_release_with(FlagRegistry::tool_call_parser, "kimi_k3") == "main");
  CHECK(v.accepts("--tool-call-parser", "llama3_json", v.resolve("")));
  CHECK_FALSE(v.accepts("--tool-call-parser", "llama3", v.resolve("")));
  CHECK(g.accepts("--tool-call-parser", "llama3", g.resolve("")));
  CHECK_FALSE(g.accepts("--tool-call-parser", "llama3_json", g.resolve("")));
  // an unknown release accepts everything (nothing to check against)
  CHECK(v.accepts("--kv-cache-dtype", "whatever", v.resolve("0.8.5")));
}

TEST_CASE("check_command names each flag or value a release refuses", "[flags]") {
  const FlagRelease r = flag_release(Engine::vllm, "0.10.1.1");
  CHECK(unaccepted_flags({"vllm", "serve", "m", "--tensor-parallel-size", "8", "--kv-cache-dtype", "fp8"}, r).empty());
  const auto p = unaccepted_flags({"vllm", "serve", "m", "--nnodes", "2", "--kv-cache-dtype", "bf16", "--tool-call-parser", "llama3"}, r);
  REQUIRE(p.size() == 3);
  CHECK(p[0].find("--nnodes") != std::string::npos);
  CHECK(p[1].find("bf16") != std::string::npos);
  CHECK(p[2].find("llama3") != std::string::npos);
  CHECK_FALSE(
      unaccepted_flags({"python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp-size"}, flag_release(Engine::sglang, ""))
          .empty());
}

TEST_CASE("KV cache dtypes map to each engine's names, and a value a release lacks is refused", "[flags]") {
  auto kv = [](Engine e, const std::string& ver, const std::string& d, const std::string& model_dtype = "bf16") {
    return engine_kv_dtype(flag_release(e, ver), d, model_dtype);
  };
  CHECK(kv(Engine::sglang, "", "fp8").value == "fp8_e4m3");
  CHECK(kv(Engine::sglang, "", "fp8_e5m2").value == "fp8_e5m2");
  CHECK(kv(Engine::sglang, "", "auto").value == "auto");
  CHECK(kv(Engine::vllm, "", "fp8").value == "fp8");
  CHECK(kv(Engine::vllm, "", "fp8_e4m3").value == "fp8_e4m3");
  // bf16 / fp16: the engine's auto when the model's activations are in that dtype
  CHECK(kv(Engine::vllm, "0.9.2", "bf16").value == "auto");
  CHECK(kv(Engine::sglang, "0.4", "bf16").value == "auto");
  CHECK(kv(Engine::vllm, "0.9.2", "fp16", "fp16").value == "auto");
  const KvDtypeArg bad = kv(Engine::vllm, "0.9.2", "fp16", "bf16");
  CHECK(bad.value.empty());
  CHECK(bad.error.find("fp16") != std::string::npos);
  CHECK(bad.error.find("0.18.0") != std::string::npos);  // where float16 arrived
  CHECK(kv(Engine::vllm, "", "fp16", "bf16").value == "float16");
  // fp4 only where the registry has it
  CHECK(kv(Engine::vllm, "", "fp4").value == "nvfp4");
  CHECK_FALSE(kv(Engine::vllm, "0.19.0", "fp4").error.empty());
  CHECK(kv(Engine::sglang, "", "fp4").value == "nvfp4");
  CHECK(kv(Engine::sglang, "0.5.8.post1", "fp4").value == "fp4_e2m1");
  CHECK_FALSE(kv(Engine::sglang, "0.4", "fp4").error.empty());
  CHECK_FALSE(kv(Engine::sglang, "0.4", "fp8").error.empty());  // fp8_e4m3 only from 0.4.1.post6
}

TEST_CASE("the catalogue names each engine's own parsers, registered by the newest release", "[flags][catalogue]") {
  struct Want {
    const char* model;
    ParserNames sglang, vllm;
  };
  const Want wants[] = {
      {"llama-3.1-8b", {"llama3", ""}, {"llama3_json", ""}},
      {"llama-3.1-405b", {"llama3", ""}, {"llama3_json", ""}},
      {"gpt-oss-120b", {"gpt-oss", "gpt-oss"}, {"openai", ""}},
      {"deepseek-v3", {"deepseekv3", ""}, {"deepseek_v3", ""}},
      {"deepseek-v4-pro", {"deepseekv4", "deepseek-v4"}, {"deepseek_v4", "deepseek_v4"}},
      {"deepseek-v4-flash", {"deepseekv4", "deepseek-v4"}, {"deepseek_v4", "deepseek_v4"}},
      {"qwen3-235b-a22b", {"qwen25", "qwen3"}, {"hermes", "qwen3"}},
      {"kimi-k3", {"kimi_k3", "kimi_k3"}, {"kimi_k3", "kimi_k3"}},
      {"glm-4.5", {"glm45", "glm45"}, {"glm45", "glm45"}},
      {"minimax-m2", {"minimax-m2", "minimax-append-think"}, {"minimax_m2", "minimax_m2_append_think"}},
  };
  for (const auto& w : wants) {
    INFO(w.model);
    const Model& m = model(w.model);
    CHECK(m.engine.sglang.tool_call_parser == w.sglang.tool_call_parser);
    CHECK(m.engine.sglang.reasoning_parser == w.sglang.reasoning_parser);
    CHECK(m.engine.vllm.tool_call_parser == w.vllm.tool_call_parser);
    CHECK(m.engine.vllm.reasoning_parser == w.vllm.reasoning_parser);
  }
  CHECK(model("kimi-k3").engine.trust_remote_code);
  for (const auto& m : all_models())
    for (Engine e : kEngines) {
      INFO(m.id << " " << to_string(e));
      const FlagRelease newest = flag_release(e, "");
      const ParserNames& p = model_parsers(m, e);
      if (!p.tool_call_parser.empty()) CHECK(flag_table(e).in_registry(FlagRegistry::tool_call_parser, p.tool_call_parser, newest));
      if (!p.reasoning_parser.empty()) CHECK(flag_table(e).in_registry(FlagRegistry::reasoning_parser, p.reasoning_parser, newest));
    }
}

TEST_CASE("a model YAML with one parser for both engines is refused with the new shape named", "[flags][catalogue]") {
  std::string text;
  for (const auto& f : embedded_files())
    if (std::string(f.path) == "models/llama-3.1-8b.yaml") text = std::string(f.text);
  REQUIRE_FALSE(text.empty());
  const auto at = text.find("\nengine:");
  REQUIRE(at != std::string::npos);
  const auto eol = text.find('\n', at + 1);
  text.replace(at + 1, eol - at - 1, "engine: {tool_call_parser: llama3, trust_remote_code: false}");
  try {
    parse_model_yaml(text, "old.yaml");
    FAIL("accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("engine.sglang") != std::string::npos);
  }
}

TEST_CASE("launch leaves out a parser the release lacks, with a note, and refuses what it cannot run", "[flags][launch]") {
  LaunchOptions o;
  o.flags.model = "kimi-k3";
  o.flags.gpu = "b300";
  o.flags.gpus = 8;
  o.flags.engine = Engine::vllm;
  o.flags.engine_version = "0.17.0";
  o.flags.context = 32768;
  o.flags.users = 1;
  o.emit = "json";
  const Report r = run_launch(cat(), o);
  REQUIRE(r.exit_code == 0);
  const auto argv = r.data["commands"][0]["argv"].get<std::vector<std::string>>();
  CHECK(std::find(argv.begin(), argv.end(), "--tool-call-parser") == argv.end());
  CHECK(std::find(argv.begin(), argv.end(), "--enable-auto-tool-choice") == argv.end());
  CHECK(std::find(argv.begin(), argv.end(), "--trust-remote-code") != argv.end());
  bool noted = false;
  for (const auto& n : r.notes) noted = noted || n.find("kimi_k3") != std::string::npos;
  CHECK(noted);
  CHECK(unaccepted_flags(argv, flag_release(Engine::vllm, "0.17.0")).empty());

  // vLLM 0.10 has no --nnodes: a 2-node TP x PP launch is refused, not emitted half-right
  LaunchOptions o2;
  o2.flags.model = "llama-3.1-405b";
  o2.flags.gpu = "h100";
  o2.flags.gpus = 16;
  o2.flags.engine = Engine::vllm;
  o2.flags.engine_version = "0.10.1.1";
  o2.flags.context = 8192;
  const Report r2 = run_launch(cat(), o2);
  CHECK(r2.exit_code == 1);
  CHECK(r2.data["emitted"] == false);
  CHECK(r2.raw_text.empty());

  // a KV dtype the release has no name for
  LaunchOptions o3;
  o3.flags.model = "llama-3.1-8b";
  o3.flags.gpu = "h100";
  o3.flags.gpus = 1;
  o3.flags.engine = Engine::vllm;
  o3.flags.engine_version = "0.9.2";
  o3.flags.kv_dtype = "fp16";
  o3.flags.context = 8192;
  const Report r3 = run_launch(cat(), o3);
  CHECK(r3.exit_code == 1);
  CHECK(r3.data["emitted"] == false);
}

TEST_CASE("fit prints the model path as given, --trust-remote-code and the engine's parsers", "[flags][fit]") {
  FitOptions fo;
  fo.model = "kimi-k3";
  fo.gpu = "b300";
  fo.gpus = 8;
  fo.context = "32k";
  const Report r = run_fit(cat(), fo);
  const std::string sg = r.data["flags"]["sglang"], vl = r.data["flags"]["vllm"];
  CHECK(sg.find("--trust-remote-code") != std::string::npos);
  CHECK(sg.find("--tool-call-parser kimi_k3 --reasoning-parser kimi_k3") != std::string::npos);
  CHECK(vl.find("--enable-auto-tool-choice --tool-call-parser kimi_k3") != std::string::npos);
  // the same builder as launch: launch's argv holds fit's flags
  FitOptions fl = fo;
  fl.model = "llama-3.1-8b";
  fl.gpus = 1;
  const Report rl = run_fit(cat(), fl);
  CHECK(rl.data["flags"]["vllm"].get<std::string>().find("--tool-call-parser llama3_json") != std::string::npos);
  const auto sw = split_words(rl.data["flags"]["sglang"].get<std::string>());
  const auto tp = std::find(sw.begin(), sw.end(), "--tool-call-parser");
  REQUIRE(tp + 1 < sw.end());
  CHECK(*(tp + 1) == "llama3");

  // an imported config.json directory: the engine loads the directory, not the model_type
  TempDir t;
  t.write("my-model/config.json",
          R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
              "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
              "max_position_embeddings": 131072, "torch_dtype": "bfloat16", "rms_norm_eps": 1e-5})");
  const std::string dir = (t.path() / "my-model").string();
  const auto run = k3plan_test::run({"fit", "-m", dir, "-g", "h100", "-n", "1", "--context", "8k"});
  INFO(run.err);
  CHECK(run.out.find("--model-path " + dir + " ") != std::string::npos);
  CHECK(run.out.find("vllm serve " + dir + " ") != std::string::npos);
  CHECK(run.out.find("--model-path llama ") == std::string::npos);
}

TEST_CASE("every launch script is valid bash: both engines, one and several nodes, with and without --head-address",
          "[flags][launch][bash]") {
  TempDir t;
  std::vector<std::string> files;
  int n = 0;
  struct Case {
    const char* model;
    const char* gpu;
    int gpus;
    Engine engine;
  };
  const Case cases[] = {{"llama-3.1-8b", "h100", 1, Engine::sglang},    {"llama-3.1-8b", "h100", 1, Engine::vllm},
                        {"kimi-k3", "h100", 32, Engine::sglang},        {"kimi-k3", "h100", 32, Engine::vllm},
                        {"llama-3.1-405b", "h100", 16, Engine::sglang}, {"llama-3.1-405b", "h100", 16, Engine::vllm}};
  for (const auto& c : cases)
    for (const char* head : {"", "10.0.0.1"}) {
      INFO(c.model << " " << to_string(c.engine) << " head '" << head << "'");
      LaunchOptions o;
      o.flags.model = c.model;
      o.flags.gpu = c.gpu;
      o.flags.gpus = c.gpus;
      o.flags.engine = c.engine;
      o.flags.context = 8192;
      o.flags.head_address = head;
      const Report r = run_launch(cat(), o);
      REQUIRE(r.exit_code == 0);
      REQUIRE_FALSE(r.raw_text.empty());
      const std::string whole = t.write(fmt::format("s{}.sh", n++), r.raw_text);
      files.push_back(whole);
      // the per-node files of --out
      LaunchOptions od = o;
      od.out_dir = (t.path() / fmt::format("d{}", n++)).string();
      REQUIRE(run_launch(cat(), od).exit_code == 0);
      for (const auto& e : fs::directory_iterator(od.out_dir)) files.push_back(e.path().string());
      if (c.gpus > 8 && !*head) {
        CHECK(r.raw_text.find("HEAD_ADDR") != std::string::npos);
        // without HEAD_ADDR the script stops with its message before starting anything
        FILE* p = popen(("env -u HEAD_ADDR bash " + whole + " 0 2>&1; echo rc=$?").c_str(), "r");
        REQUIRE(p != nullptr);
        std::string out;
        char buf[512];
        while (std::size_t k = fread(buf, 1, sizeof buf, p)) out.append(buf, k);
        pclose(p);
        CHECK(out.find("set HEAD_ADDR") != std::string::npos);
        CHECK(out.find("rc=2") != std::string::npos);
      }
    }
  CHECK(bash_syntax_errors(files) == "");
}

TEST_CASE("the launch script embedded in the HTML report is valid bash", "[flags][report][bash]") {
  TempDir t;
  for (const char* engine : {"sglang", "vllm"}) {
    ReportOptions o;
    o.model = "kimi-k3";
    o.gpus = {"h100"};
    o.engine = engine;
    o.context = "32k";
    o.users = 4;
    o.out = (t.path() / fmt::format("{}.html", engine)).string();
    o.svg_dir = (t.path() / fmt::format("svg-{}", engine)).string();
    const Report r = run_report(cat(), o);
    REQUIRE(r.data["launch"].is_object());
    const std::string script = r.data["launch"]["script"];
    CHECK(script.find("HEAD_ADDR") != std::string::npos);
    // and as the page shows it: the <pre> of the launch section, entities decoded
    const std::string html = k3plan_test::slurp(o.out);
    const auto sec = html.find("id=\"launch\"");
    REQUIRE(sec != std::string::npos);
    const auto pre = html.find("<pre>", sec);
    const auto end = html.find("</pre>", pre);
    REQUIRE(pre != std::string::npos);
    std::string text = html.substr(pre + 5, end - pre - 5);
    std::string plain;
    for (std::size_t i = 0; i < text.size();) {
      if (text[i] == '<') {
        i = text.find('>', i) + 1;
        continue;
      }
      static const std::pair<const char*, char> ents[] = {{"&amp;", '&'},  {"&lt;", '<'},   {"&gt;", '>'},
                                                          {"&quot;", '"'}, {"&#39;", '\''}, {"&apos;", '\''}};
      bool ent = false;
      for (const auto& [k, ch] : ents)
        if (text.compare(i, std::strlen(k), k) == 0) {
          plain += ch;
          i += std::strlen(k);
          ent = true;
          break;
        }
      if (!ent) plain += text[i++];
    }
    CHECK(plain == script);
    CHECK(bash_syntax_errors({t.write(fmt::format("{}-json.sh", engine), script), t.write(fmt::format("{}-html.sh", engine), plain)}) ==
          "");
  }
}

// The CI gate over everything k3plan generates: every catalogue model x both engines x one and two
// nodes x KV dtypes auto / fp8 x every flag window (and releases inside them): every option and
// value of every command is in the engine's table for that release, fit's printed flags too, and
// every script passes `bash -n`.
TEST_CASE("every generated command uses only flags and values the engine release accepts", "[flags][gate]") {
  TempDir t;
  std::vector<std::string> scripts;
  std::map<std::string, int> refused;        // why a plan could not be emitted, for the record
  std::map<std::string, int> lines_checked;  // per engine and release
  std::set<std::string> shapes;
  std::vector<std::string> shape_scripts;
  const std::map<Engine, std::vector<std::string>> versions = {
      {Engine::sglang, {"", "0.4", "0.5", "main", "0.4.1.post6", "0.4.10.post2", "0.5.4.post1", "0.5.8.post1", "0.5.17", "0.5.19"}},
      {Engine::vllm, {"", "0.9", "0.10", "0.11", "0.17", "main", "0.9.2", "0.10.1.1", "0.11.1", "0.13.0", "0.20.0", "0.27.1"}}};
  const Gpu& gpu = cat().gpu("h100");
  std::size_t plans = 0, fits = 0;
  for (const auto& m : all_models()) {
    for (Engine e : kEngines) {
      for (const auto& ver : versions.at(e)) {
        for (const char* kv : {"auto", "fp8"}) {
          for (int nodes : {1, 2}) {
            // layouts: plain TP (+EP for MoE), TP x PP across nodes, and DP (+EP) across nodes
            std::vector<Layout> layouts;
            Layout a;
            a.tp = 8;
            a.ep = m.moe ? 8 : 1;
            if (nodes == 1) {
              layouts.push_back(a);
            } else {
              Layout b = a;
              b.pp = 2;
              layouts.push_back(b);
              Layout c = a;
              c.dp = 2;
              if (m.moe) c.ep = 16;
              if (e == Engine::sglang) {
                c.tp = 16;
                c.dp = 16;
                c.dp_attention = true;
              }
              layouts.push_back(c);
            }
            for (const Layout& l : layouts) {
              for (bool head : {false, true}) {
                Deployment d;
                d.model = m.id;
                d.gpu = "h100";
                d.engine = e;
                d.engine_version = ver;
                d.kv_dtype = kv;
                d.users = 4;
                d.head_address = head ? "10.0.0.1" : "";
                if (head) {
                  d.served_model_name = "my model";
                  d.chunked_prefill_size = 8192;
                  d.cuda_graph_max_bs = 64;
                  d.max_num_batched_tokens = 8192;
                }
                const int g = e == Engine::vllm ? l.tp * l.pp * l.dp : l.tp * l.pp;
                const LaunchPlan p = make_launch_plan(d, m, l, g, nodes, 8, 8192, 0.85, 256);
                ++plans;
                const FlagRelease rel = flag_release(e, ver);
                for (const auto& c : p.nodes_cmd) {
                  INFO(m.id << " " << to_string(e) << " '" << ver << "' kv " << kv << " nodes " << nodes << " tp" << l.tp << " pp" << l.pp
                            << " dp" << l.dp);
                  CHECK(unaccepted_flags(c.argv, rel) == std::vector<std::string>{});
                  ++lines_checked[fmt::format("{} {}", to_string(e), ver.empty() ? "newest" : ver)];
                }
                if (!p.error.empty()) {
                  ++refused[p.error.substr(0, 60)];
                  continue;
                }
                const std::string file = t.write(fmt::format("p{}.sh", scripts.size()), emit_shell(p));
                scripts.push_back(file);
                // one script of each shape also through a real `bash -n`
                const std::string shape = fmt::format("{}/{}/{}/{}/{}/{}/{}", to_string(e), ver, kv, nodes, l.pp, l.dp, head);
                if (shapes.insert(shape).second) {
                  shape_scripts.push_back(file);
                  // the LeaderWorkerSet manifest of the same plan: its commands, as the kubelet
                  // hands them to the engine (LWS variables substituted), pass the table too
                  const auto docs = YAML::LoadAll(emit_lws(p, "img", "nvidia.com/gpu"));
                  REQUIRE(docs.size() == 2);
                  for (const char* tmpl : {"leaderTemplate", "workerTemplate"}) {
                    std::vector<std::string> argv;
                    for (const auto& arg : docs[0]["spec"]["leaderWorkerTemplate"][tmpl]["spec"]["containers"][0]["command"]) {
                      std::string v = arg.as<std::string>();
                      for (const auto& [var, val] :
                           std::vector<std::pair<std::string, std::string>>{{"$(LWS_GROUP_SIZE)", std::to_string(nodes)},
                                                                            {"$(LWS_WORKER_INDEX)", "1"},
                                                                            {"$(LWS_LEADER_ADDRESS)", "10.0.0.1"}})
                        for (auto at = v.find(var); at != std::string::npos; at = v.find(var)) v.replace(at, var.size(), val);
                      argv.push_back(v);
                    }
                    // vLLM DP workers: a fixed `sh -c 'exec "$@" --data-parallel-start-rank ...' NAME ARGV...`
                    // wrapper computes the start rank from LWS_WORKER_INDEX; the engine gets ARGV and that flag
                    if (argv.size() > 4 && argv[0] == "/bin/sh" && argv[1] == "-c") {
                      argv.erase(argv.begin(), argv.begin() + 4);
                      argv.insert(argv.end(), {"--data-parallel-start-rank", "1"});
                    }
                    INFO("manifest " << tmpl << " " << shape);
                    CHECK(unaccepted_flags(argv, rel) == std::vector<std::string>{});
                  }
                }
              }
            }
          }
          // fit's printed flags for this engine and version (single node), and the other engine's
          EngineSettings s;
          s.engine = e;
          s.engine_version = ver;
          s.kv_dtype = kv;
          Layout l;
          l.tp = 8;
          l.ep = m.moe ? 8 : 1;
          const FitResult f = evaluate_fit(m, gpu, l, s, 8192, 4);
          ++fits;
          const std::string path = serve_model_path(m, m.id);
          for (Engine x : kEngines) {
            std::vector<std::string> argv = x == Engine::vllm ? std::vector<std::string>{"vllm", "serve", path}
                                                              : std::vector<std::string>{"python3", "-m", "sglang.launch_server"};
            if (x == Engine::sglang) argv.insert(argv.end(), {"--model-path", path});
            for (auto& w : split_words(x == Engine::vllm ? f.vllm_flags : f.sglang_flags)) argv.push_back(w);
            INFO("fit " << m.id << " " << to_string(e) << " '" << ver << "' kv " << kv << " flags of " << to_string(x));
            CHECK(unaccepted_flags(argv, flag_release(x, x == e ? ver : "")) == std::vector<std::string>{});
          }
        }
      }
    }
  }
  INFO(plans << " plans, " << fits << " fits, " << scripts.size() << " scripts");
  for (const auto& [why, count] : refused) WARN(count << " x refused: " << why);
  std::string per_release;
  for (const auto& [rel, count] : lines_checked) per_release += fmt::format("{}: {}; ", rel, count);
  WARN("generated command lines checked against the release's argument table: " << per_release << plans << " plans, " << fits
                                                                                  << " fits, " << scripts.size() << " scripts");
  CHECK(scripts.size() > plans / 2);
  CHECK(bash_syntax_errors(shape_scripts) == "");
  CHECK(bash_syntax_errors(scripts, true) == "");
}

TEST_CASE("fit prints the SGLang state-pool settings it planned with, where the release has them", "[flags][fit]") {
  FitOptions fo;
  fo.model = "qwen3-next-80b-a3b";
  fo.gpu = "h100";
  fo.gpus = 2;
  fo.engine = "sglang";
  fo.context = "32k";
  fo.max_mamba_cache_size = 64;
  fo.disable_radix_cache = true;
  const Report r = run_fit(cat(), fo);
  const std::string sg = r.data["flags"]["sglang"];
  CHECK(sg.find("--max-mamba-cache-size 64") != std::string::npos);
  CHECK(sg.find("--disable-radix-cache") != std::string::npos);
  CHECK(unaccepted_flags(split_words("python3 -m sglang.launch_server --model-path x " + sg), flag_release(Engine::sglang, "")).empty());
  // SGLang 0.5.1 has no --max-mamba-cache-size: the plan cannot be run as written
  fo.engine_version = "0.5.1";
  const Report old = run_fit(cat(), fo);
  CHECK(old.data["fits"] == false);
  CHECK(old.data["flags"]["sglang"].get<std::string>().find("--max-mamba-cache-size") == std::string::npos);
}
