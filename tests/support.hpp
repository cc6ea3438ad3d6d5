#pragma once
// Shared by the end-to-end tests: run the real k3plan binary (no shell), capture stdout, stderr and
// the exit code; temporary directories that clean up after themselves.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <k3plan/catalogue.hpp>
#include <k3plan/deploy.hpp>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace k3plan_test {

namespace fs = std::filesystem;

inline const std::string kBinary = K3PLAN_BINARY;

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh directory from mkdtemp, removed with everything in it at scope exit.
// The launch tests' deployment: Kimi K3 at 128k context for 8 users.
inline k3plan::Deployment k3(const std::string& gpu, int gpus, k3plan::Engine e) {
  k3plan::Deployment d;
  d.model = "kimi-k3";
  d.gpu = gpu;
  d.gpus = gpus;
  d.engine = e;
  d.context = 131072;
  d.users = 8;
  return d;
}

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/k3plan-test-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + tmpl);
    path_ = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

  // Writes `content` to `name` (sub-directories created) and returns the full path.
  std::string write(const std::string& name, const std::string& content) const {
    const fs::path p = path_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << content;
    out.close();
    if (!out) throw std::runtime_error("cannot write " + p.string());
    return p.string();
  }

 private:
  fs::path path_;
};

struct Run {
  int code = -1;  // exit status; 128 + signal if killed by a signal
  std::string out;
  std::string err;
  std::string cmdline;
};

// Runs the real binary with `args`: stdin from /dev/null, stdout and stderr to files in a private
// temp dir; in `cwd` when given (else the test's own working directory).
inline Run run(const std::vector<std::string>& args, const std::string& cwd = "") {
  TempDir io;
  const std::string out_path = (io.path() / "stdout").string();
  const std::string err_path = (io.path() / "stderr").string();
  std::vector<std::string> argv_store{kBinary};
  argv_store.insert(argv_store.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_store) argv.push_back(a.data());
  argv.push_back(nullptr);
  Run r;
  for (std::size_t i = 1; i < argv_store.size(); ++i) r.cmdline += (i > 1 ? " " : "") + argv_store[i];
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, kBinary.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("posix_spawn " + kBinary + " failed: " + std::to_string(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  if (WIFEXITED(status))
    r.code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    r.code = 128 + WTERMSIG(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

// The kubelet's expansion of a manifest's command / args / env value: "$$" -> "$", $(VAR) from `env`
// (an unknown $(VAR) stays as written).
inline std::string kubelet(const std::string& s, const std::map<std::string, std::string>& env) {
  std::string o;
  for (std::size_t i = 0; i < s.size();) {
    if (s.compare(i, 2, "$$") == 0) {
      o += '$';
      i += 2;
    } else if (s.compare(i, 2, "$(") == 0 && s.find(')', i) != std::string::npos && env.count(s.substr(i + 2, s.find(')', i) - i - 2))) {
      const auto end = s.find(')', i);
      o += env.at(s.substr(i + 2, end - i - 2));
      i = end + 1;
    } else {
      o += s[i++];
    }
  }
  return o;
}

// A manifest holds printable ASCII and newlines only: no line break or escape of any YAML version.
inline bool printable_ascii(const std::string& text) {
  for (const char ch : text)
    if (ch != '\n' && (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) > 0x7e)) return false;
  return true;
}

// The embedded catalogue, loaded once per test binary.
// Runs `cmd` through /bin/sh and returns what it wrote to stdout (the exit status is not kept).
inline std::string run_shell(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  pclose(p);
  return out;
}

inline const k3plan::Catalogue& cat() {
  static const k3plan::Catalogue c = k3plan::Catalogue::embedded();
  return c;
}

inline std::size_t count_lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  if (!s.empty() && s.back() != '\n') ++n;
  return n;
}

// Bad input: exit 2, nothing on stdout, exactly one line on stderr starting "k3plan: error: ",
// containing every string in `needles`. Returns stderr for further checks.
inline std::string expect_usage_error(const std::vector<std::string>& args, const std::vector<std::string>& needles = {}) {
  const Run r = run(args);
  INFO("command: k3plan " << r.cmdline.substr(0, 300));
  INFO("stdout: " << r.out.substr(0, 2000));
  INFO("stderr: " << r.err.substr(0, 2000));
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(count_lines(r.err) == 1);
  CHECK(r.err.rfind("k3plan: error: ", 0) == 0);
  for (const auto& n : needles) {
    INFO("expected in stderr: " << n);
    CHECK(r.err.find(n) != std::string::npos);
  }
  return r.err;
}

// The arguments a stub engine printed, each NUL-terminated (write_engine_stubs): NULs keep
// arguments with newlines or spaces whole.
inline std::vector<std::string> split_nul(const std::string& out) {
  std::vector<std::string> args;
  std::string cur;
  for (char c : out) {
    if (c == '\0') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return args;
}

// Stub engines in `dir` (python3 and vllm, what generated launch scripts exec): each prints its
// arguments NUL-terminated on stdout, so a test runs the real script and reads back the argv.
inline void write_engine_stubs(const fs::path& dir) {
  for (const char* prog : {"python3", "vllm"}) {
    std::ofstream(dir / prog) << "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done\n";
    fs::permissions(dir / prog, fs::perms::owner_all);
  }
}

}  // namespace k3plan_test
