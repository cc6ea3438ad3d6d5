// The hostile corpus (tests/data/hostile/cases.txt): every case runs the real binary and must end
// with its expected exit code; exit 2 must be exactly one line "k3plan: error: ..." naming the
// option or field, with nothing on stdout and no raw control byte; no case may take more than 2 s
// of CPU (10 s under the sanitizers; a hang is killed after 30 s of wall time). Then the output side: stdout and stderr on a full disk,
// planted links, multi-file outputs that fail part-way.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <k3plan/output_file.hpp>
#include <k3plan/report.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "support.hpp"

namespace {

namespace fs = std::filesystem;
using k3plan_test::count_lines;
using k3plan_test::kBinary;
using k3plan_test::slurp;
using k3plan_test::TempDir;

const fs::path kHostile = fs::path(K3PLAN_TEST_DATA) / "hostile";

#if defined(__SANITIZE_ADDRESS__)
constexpr double kMaxSeconds = 10;
#else
constexpr double kMaxSeconds = 2;
#endif

struct Result {
  int code = -1;
  std::string out, err;
  double seconds = 0;
};

// Runs k3plan with stdin from /dev/null; stdout and stderr to files, or to `out_path` / `err_path`
// when given (e.g. /dev/full). Kills the process after `timeout_s` (code 124, as timeout(1)).
Result run_k3plan(const std::vector<std::string>& args, const std::string& out_path = "", const std::string& err_path = "",
                  double timeout_s = 30) {
  TempDir io;
  const std::string out_file = out_path.empty() ? (io.path() / "stdout").string() : out_path;
  const std::string err_file = err_path.empty() ? (io.path() / "stderr").string() : err_path;
  std::vector<std::string> store{kBinary};
  store.insert(store.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : store) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&fa, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  const auto start = std::chrono::steady_clock::now();
  const int rc = posix_spawn(&pid, kBinary.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("posix_spawn failed");
  Result r;
  int status = 0;
  struct rusage ru {};
  for (;;) {
    const pid_t w = wait4(pid, &status, WNOHANG, &ru);
    if (w == pid) break;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout_s) {
      kill(pid, SIGKILL);
      wait4(pid, &status, 0, &ru);
      r.code = 124;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // CPU seconds (user + system): the machine's load does not count against a case
  r.seconds =
      static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  if (r.code != 124) r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (out_path.empty()) r.out = slurp(out_file);
  if (err_path.empty()) r.err = slurp(err_file);
  return r;
}

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

// \xNN escapes in arguments become the byte (terminal-injection cases).
std::string unescape(const std::string& s) {
  std::string o;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() + 0 && s[i + 1] == 'x') {
      o += static_cast<char>(std::stoi(s.substr(i + 2, 2), nullptr, 16));
      i += 3;
    } else {
      o += s[i];
    }
  }
  return o;
}

struct Case {
  int line = 0;
  std::string parser, needle, args_text;
  int expected = 0;
};

std::vector<Case> load_cases() {
  std::ifstream in(kHostile / "cases.txt");
  std::vector<Case> cases;
  std::string l;
  int n = 0;
  while (std::getline(in, l)) {
    ++n;
    if (trim(l).empty() || trim(l)[0] == '#') continue;
    std::vector<std::string> parts;
    std::size_t pos = 0;
    for (int k = 0; k < 3; ++k) {
      const auto bar = l.find(" | ", pos);
      REQUIRE(bar != std::string::npos);
      parts.push_back(trim(l.substr(pos, bar - pos)));
      pos = bar + 3;
    }
    parts.push_back(trim(l.substr(pos)));
    cases.push_back({n, parts[0], parts[2] == "-" ? "" : parts[2], parts[3], std::stoi(parts[1])});
  }
  return cases;
}

// A scratch area with the runtime-only inputs: a FIFO, a directory, a --data dir with a symlink loop,
// and for each tests/data/hostile/safetensors-NAME.safetensors a model directory {shard:NAME}
// (Qwen3-0.6B's config.json and that file as model.safetensors), for each
// safetensors-index-NAME.json one {index:NAME} (that file as model.safetensors.index.json).
struct Scratch {
  TempDir dir;
  std::map<std::string, std::string> vars;
  Scratch() {
    const auto fifo = dir.path() / "input.fifo";
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    const auto fifo_json = dir.path() / "input.fifo.json";
    REQUIRE(mkfifo(fifo_json.c_str(), 0600) == 0);
    fs::create_directories(dir.path() / "a-directory");
    fs::create_directories(dir.path() / "loop");
    fs::create_symlink("loop-b.yaml", dir.path() / "loop" / "loop-a.yaml");
    fs::create_symlink("loop-a.yaml", dir.path() / "loop" / "loop-b.yaml");
    vars = {{"{fifo}", fifo.string()},
            {"{dir}", (dir.path() / "a-directory").string()},
            {"{loopdir}", (dir.path() / "loop").string()},
            {"{devnull}", "/dev/null"}};
    // a model directory whose shard, or whose index, is a FIFO (read: would block)
    for (const char* f : {"model.safetensors", "model.safetensors.index.json"}) {
      const auto m = dir.path() / (f == std::string("model.safetensors") ? "shard-fifo" : "index-fifo");
      fs::create_directories(m);
      fs::copy_file(fs::path(K3PLAN_TEST_DATA) / "Qwen--Qwen3-0.6B_config.json", m / "config.json");
      REQUIRE(mkfifo((m / f).c_str(), 0600) == 0);
      vars["{" + m.filename().string() + "}"] = m.string();
    }
    for (const auto& e : fs::directory_iterator(kHostile)) {
      const std::string f = e.path().filename().string();
      const bool shard = e.path().extension() == ".safetensors", index = f.rfind("safetensors-index-", 0) == 0;
      if (f.rfind("safetensors-", 0) != 0 || !(shard || index)) continue;
      const std::string name = e.path().stem().string().substr(index ? 18 : 12);
      const auto m = dir.path() / (index ? "index" : "shard") / name;
      fs::create_directories(m);
      fs::copy_file(fs::path(K3PLAN_TEST_DATA) / "Qwen--Qwen3-0.6B_config.json", m / "config.json");
      fs::copy_file(e.path(), m / (index ? "model.safetensors.index.json" : "model.safetensors"));
      vars[(index ? "{index:" : "{shard:") + name + "}"] = m.string();
    }
  }
};

std::vector<std::string> split_args(const std::string& text, const Scratch& s) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false, any = false;
  for (const char c : text) {
    if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (c == ' ' && !quoted) {
      if (any) out.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += c;
      any = true;
    }
  }
  if (any) out.push_back(cur);
  for (auto& a : out) {
    for (const auto& [k, v] : s.vars)
      for (auto at = a.find(k); at != std::string::npos; at = a.find(k)) a.replace(at, k.size(), v);
    if (a.size() > 1 && a[0] == '@') a = (kHostile / a.substr(1)).lexically_normal().string();
    a = unescape(a);
  }
  return out;
}

bool has_raw_control(const std::string& s) {
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("hostile corpus: every case answers with its exit code and names the field", "[hostile]") {
  const auto cases = load_cases();
  REQUIRE(cases.size() >= 150);
  Scratch scratch;
  std::map<std::string, int> per_parser;
  double slowest = 0;
  std::string slowest_case;
  for (const auto& c : cases) {
    const auto args = split_args(c.args_text, scratch);
    const Result r = run_k3plan(args);
    ++per_parser[c.parser];
    if (r.seconds > slowest) {
      slowest = r.seconds;
      slowest_case = "cases.txt:" + std::to_string(c.line) + " " + c.args_text;
    }
    INFO("cases.txt:" << c.line << ": k3plan " << c.args_text);
    INFO("stderr: " << r.err.substr(0, 600));
    INFO("stdout: " << r.out.substr(0, 300));
    CHECK(r.code == c.expected);
    CHECK(r.seconds < kMaxSeconds);
    CHECK(!has_raw_control(r.err));
    CHECK(!has_raw_control(r.out));  // nothing echoed from input drives the terminal
    if (c.expected == 2) {
      CHECK(r.out.empty());
      CHECK(count_lines(r.err) == 1);
      CHECK(r.err.rfind("k3plan: error: ", 0) == 0);
      CHECK(r.err.find("internal") == std::string::npos);
    }
    if (!c.needle.empty()) CHECK(r.err.find(c.needle) != std::string::npos);
  }
  std::string summary;
  for (const auto& [p, n] : per_parser) summary += p + " " + std::to_string(n) + ", ";
  WARN("hostile corpus: " << cases.size() << " cases (" << summary << "slowest " << slowest << " s: " << slowest_case << ")");
}

TEST_CASE("standard output on a full disk is one error line and exit 2", "[hostile][output]") {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"launch", "-m", "llama-3.1-8b", "-g", "h100", "-n", "1"}, std::vector<std::string>{"gpus"},
        std::vector<std::string>{"fit", "--help"}, std::vector<std::string>{"completion", "bash"}}) {
    const Result r = run_k3plan(args, "/dev/full");
    INFO("k3plan " << args[0] << " > /dev/full; stderr: " << r.err);
    CHECK(r.code == 2);
    CHECK(count_lines(r.err) == 1);
    CHECK(r.err.find("standard output") != std::string::npos);
  }
}

TEST_CASE("an error line that cannot be written is no crash", "[hostile][output]") {
  const Result r = run_k3plan({"fit", "-m", "kimi-k3", "-g", "h20"}, "", "/dev/full");
  CHECK(r.code == 2);
  const Result both = run_k3plan({"fit", "-m", "kimi-k3", "-g", "b300"}, "/dev/full", "/dev/full");
  CHECK(both.code == 2);
}

TEST_CASE("files are written through an exclusive temporary: planted links are never followed", "[hostile][output]") {
  TempDir d;
  const std::string victim = d.write("victim.txt", "keep me\n");
  const fs::path out = d.path() / "cost.svg";
  // a link planted at the old fixed temporary name and a link at the target itself
  fs::create_symlink(victim, d.path() / "cost.svg.tmp");
  fs::create_symlink(victim, out);
  const Result r = run_k3plan({"cost", "--svg", out.string()});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(slurp(victim) == "keep me\n");
  CHECK(!fs::is_symlink(out));  // the link itself was replaced by the new file
  CHECK(slurp(out).find("<svg") != std::string::npos);
  for (const auto& e : fs::directory_iterator(d.path())) CHECK(e.path().filename().string().find(".cost.svg.") == std::string::npos);
}

TEST_CASE("a multi-file output that fails part-way replaces nothing and leaves nothing behind", "[hostile][output]") {
  TempDir d;
  const fs::path dir = d.path() / "out";
  fs::create_directories(dir / "node-1.sh");  // the second script cannot replace a directory
  const std::string old0 = d.write("out/node-0.sh", "old script\n");
  const Result r = run_k3plan({"launch", "-m", "kimi-k3", "-g", "b200", "-n", "16", "-c", "32k", "-o", dir.string()});
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(count_lines(r.err) == 1);
  CHECK(r.err.find("node-1.sh") != std::string::npos);
  CHECK(slurp(old0) == "old script\n");
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    ++entries;
    INFO(e.path());
    CHECK(e.path().filename().string().find(".tmp") == std::string::npos);
  }
  CHECK(entries == 2);
  // and the same command into a fresh directory writes every node script, executable
  const fs::path fresh = d.path() / "fresh";
  const Result ok = run_k3plan({"launch", "-m", "kimi-k3", "-g", "b200", "-n", "16", "-c", "32k", "-o", fresh.string()});
  INFO(ok.err);
  REQUIRE(ok.code == 0);
  for (const char* n : {"node-0.sh", "node-1.sh"}) {
    struct stat st {};
    REQUIRE(::stat((fresh / n).c_str(), &st) == 0);
    CHECK((st.st_mode & S_IXUSR) != 0);
    CHECK(st.st_size > 0);
  }
}

TEST_CASE("json output stays valid UTF-8 and escapes control characters from input", "[hostile][output]") {
  TempDir d;
  // a YAML escape (\e) and a JSON escape (\u001b) put a real ESC into the value: the boundary lets
  // them in (the file itself is clean text), the output must not let them out raw
  const std::string f = d.write("esc.yaml", "model: llama-3.1-8b\ngpu: h100\ngpus: 1\nengine: vllm\nserve: {model_path: \"x\\e[2Jy\"}\n");
  for (const std::string fmt : {"json", "table", "yaml"}) {
    const Result r = run_k3plan({"check", f, "-f", fmt});
    INFO(fmt << ": " << r.err);
    CHECK(r.code <= 1);
    CHECK(!has_raw_control(r.out));
    if (fmt == "json") CHECK_NOTHROW(nlohmann::json::parse(r.out));
  }
  const std::string cfg = (kHostile / "config-esc.json").string();
  const Result j = run_k3plan({"weights", "-m", cfg, "-f", "json"});
  REQUIRE(j.code == 0);
  CHECK_NOTHROW(nlohmann::json::parse(j.out));
  const Result t = run_k3plan({"weights", "-m", cfg});
  CHECK(!has_raw_control(t.out));
  CHECK(t.out.find("\\x1b") != std::string::npos);
}

TEST_CASE("make_printable: invalid UTF-8 and control characters never reach the renderers raw", "[hostile][output]") {
  k3plan::Report r;
  r.data = {{"id", std::string("ok\xff\xfe"
                               "bad")},
            {std::string("k\xc3"), std::string("\x1b[31m")}};
  r.tables.push_back({"t\x1b]0;x\x07", {"h"}, {{std::string("a\x1b[2Jb\xe2\x28")}}, {}});
  r.notes.push_back("line one\nline two\r\x9b");
  k3plan::make_printable(r);
  CHECK_NOTHROW((void)r.data.dump());  // nlohmann throws on invalid UTF-8
  CHECK(r.data.dump().find("ok\\\\xff\\\\xfebad") != std::string::npos);
  CHECK(r.tables[0].title == "t\\x1b]0;x\\x07");
  CHECK(r.tables[0].rows[0][0] == "a\\x1b[2Jb\\xe2(");
  CHECK(r.notes[0] == "line one\nline two\\x0d\\x9b");
  CHECK_NOTHROW((void)k3plan::render(r, k3plan::Format::json));
  CHECK(k3plan::escape_for_terminal("a\nb\x1b") == "a\\x0ab\\x1b");
}

TEST_CASE("the embedded catalogue passes the full input boundary when read as a --data directory", "[hostile]") {
  // Catalogue::embedded() skips the limits at start-up (YamlReader::TrustedInput); this is the check
  TempDir d;
  const fs::path data = fs::path(K3PLAN_SOURCE_DIR) / "data";
  for (const char* f : {"gpus.yaml", "prices.yaml"}) fs::copy_file(data / f, d.path() / f);
  fs::create_directories(d.path() / "validation");
  fs::copy_file(data / "validation" / "gpus.yaml", d.path() / "validation" / "gpus.yaml");
  fs::copy(data / "models", d.path() / "models", fs::copy_options::recursive);
  fs::copy(data / "validation" / "models", d.path() / "validation" / "models", fs::copy_options::recursive);
  const Result r = run_k3plan({"models", "--data", d.str()});
  INFO(r.err);
  CHECK(r.code == 0);
  const Result g = run_k3plan({"gpus", "--data", d.str()});
  INFO(g.err);
  CHECK(g.code == 0);
}
