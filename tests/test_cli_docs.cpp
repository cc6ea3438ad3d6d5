// Completions and the man page are generated from the CLI's command table: every command and
// every option `--help` shows must appear in each; the scripts must parse in their shells (when
// the shell is installed); `cmake --install` must put them where the shells and man look.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <regex>
#include <set>

#include "support.hpp"

namespace {

namespace fs = std::filesystem;
using k3plan_test::run;
using k3plan_test::Run;
using k3plan_test::slurp;
using k3plan_test::TempDir;

const std::vector<std::string> kCommands{"models",        "gpus",      "show",   "weights",    "kv",   "fit",
                                         "cost",          "validate",  "launch", "check",      "perf", "plan",
                                         "perf-validate", "calibrate", "report", "completion", "man"};

// The long options `k3plan CMD --help` lists.
std::set<std::string> long_options(const std::string& cmd) {
  const Run r = run({cmd, "--help"});
  REQUIRE(r.code == 0);
  std::set<std::string> out;
  const std::regex re("--[a-z][a-z0-9-]+");
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), re); it != std::sregex_iterator(); ++it) out.insert(it->str());
  return out;
}

bool have(const char* program) {
  const std::string cmd = std::string("command -v ") + program + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

}  // namespace

TEST_CASE("completions and man page name every command and option of the command table", "[cli][docs]") {
  std::map<std::string, std::string> docs;
  for (const char* shell : {"bash", "zsh", "fish"}) {
    const Run r = run({"completion", shell});
    REQUIRE(r.code == 0);
    docs[shell] = r.out;
  }
  const Run man = run({"man"});
  REQUIRE(man.code == 0);
  docs["man"] = man.out;
  for (const auto& cmd : kCommands) {
    for (const auto& [kind, text] : docs) {
      INFO(kind << " names command " << cmd);
      CHECK(text.find(cmd) != std::string::npos);
    }
    for (const auto& opt : long_options(cmd)) {
      INFO(cmd << " " << opt);
      CHECK(docs["bash"].find(opt) != std::string::npos);
      CHECK(docs["zsh"].find(opt) != std::string::npos);
      CHECK(docs["fish"].find("-l " + opt.substr(2)) != std::string::npos);
      std::string roff;  // the man page escapes dashes
      for (char c : opt) roff += c == '-' ? std::string("\\-") : std::string(1, c);
      CHECK(docs["man"].find(roff) != std::string::npos);
    }
  }
  // fixed choices are completed (the same list the validator enforces)
  CHECK(docs["bash"].find("'table json yaml csv md markdown'") != std::string::npos);
  CHECK(docs["fish"].find("-l emit -r -a 'sh k8s json'") != std::string::npos);
  CHECK(docs["man"].rfind(".\\\"", 0) == 0);
  CHECK(docs["man"].find(".TH K3PLAN 1") != std::string::npos);
}

TEST_CASE("completion scripts parse in their shells", "[cli][docs]") {
  TempDir d;
  const Run bash = run({"completion", "bash"});
  const std::string f = d.write("k3plan.bash", bash.out);
  REQUIRE(have("bash"));
  CHECK(std::system(("bash -n " + f).c_str()) == 0);
  // sourcing defines the completion function and registers it
  CHECK(std::system(("bash -c 'source " + f + " && complete -p k3plan | grep -q _k3plan'").c_str()) == 0);
  if (have("zsh")) {
    const std::string z = d.write("_k3plan", run({"completion", "zsh"}).out);
    CHECK(std::system(("zsh -n " + z).c_str()) == 0);
  }
  if (have("fish")) {
    const std::string fi = d.write("k3plan.fish", run({"completion", "fish"}).out);
    CHECK(std::system(("fish --no-execute " + fi).c_str()) == 0);
  }
  if (have("groff")) {
    const std::string m = d.write("k3plan.1", run({"man"}).out);
    CHECK(std::system(("groff -man -Tutf8 -ww -z " + m + " 2>" + d.str() + "/groff.err").c_str()) == 0);
    CHECK(slurp(d.path() / "groff.err").empty());
  }
}

TEST_CASE("cmake --install puts the completions and the man page where shells and man look", "[cli][docs]") {
  TempDir prefix;
  const std::string cmd = "cmake --install " + std::string(K3PLAN_BUILD_DIR) + " --prefix " + prefix.str() + " >/dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const fs::path p = prefix.path();
  CHECK(fs::is_regular_file(p / "bin" / "k3plan"));
  CHECK(slurp(p / "share/bash-completion/completions/k3plan") == run({"completion", "bash"}).out);
  CHECK(slurp(p / "share/zsh/site-functions/_k3plan") == run({"completion", "zsh"}).out);
  CHECK(slurp(p / "share/fish/vendor_completions.d/k3plan.fish") == run({"completion", "fish"}).out);
  CHECK(slurp(p / "share/man/man1/k3plan.1") == run({"man"}).out);
}
