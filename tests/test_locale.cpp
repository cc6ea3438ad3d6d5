// k3plan reads and prints the same numbers under every locale. Two ways a locale gets in:
// - the environment (LC_ALL=de_DE.UTF-8, LC_NUMERIC=fr_FR.UTF-8): it reaches strtod and printf only
//   if something calls setlocale(LC_ALL, ""); the binary must not, so its output stays byte-identical;
// - in-process: a dependency that calls setlocale or std::locale::global changes strtod, iostreams
//   and yaml-cpp's as<double>() (decimal comma, '.' grouping); the readers (number_text.hpp) and the
//   writers (fmt) must not notice.
#include <algorithm>
#include <cctype>
#include <clocale>
#include <cstdlib>
#include <k3plan/ascii.hpp>
#include <k3plan/check.hpp>
#include <k3plan/commands.hpp>
#include <k3plan/perf_cmd.hpp>
#include <k3plan/plan.hpp>
#include <k3plan/report.hpp>
#include <k3plan/validate.hpp>
#include <locale>
#include <optional>
#include <regex>

#include "support.hpp"

namespace {

using namespace k3plan;
using namespace k3plan_test;

const std::string kSource = K3PLAN_SOURCE_DIR;
const std::string kLog = std::string(K3PLAN_TEST_DATA) + "/logs/vllm/gemma3-27b-it-h100-tp1-v0190.log";
const std::string kLogConfig = std::string(K3PLAN_TEST_DATA) + "/google--gemma-3-27b-it_config.json";
const std::string kDeploy = kSource + "/examples/deploy/llama-70b-h100-vllm.yaml";
// its _name_or_path (meta-llama/Llama-3.1-8B-Instruct) becomes the lower-case model id
const std::string kInstructConfig = std::string(K3PLAN_TEST_DATA) + "/meta-llama--Llama-3.1-8B-Instruct_config.json";

// Where the test locales come from: the system when `locale -a` lists them; otherwise compiled once
// with localedef into the build tree (used through LOCPATH); `missing` says why when neither works.
// de_DE / fr_FR: a decimal comma and '.' grouping. tr_TR: Turkish case rules (tolower('I') is not
// 'i': unchanged in tr_TR.UTF-8, the dotless 0xFD in tr_TR.ISO-8859-9, where isalnum(0xE9) holds too).
struct TestLocale {
  const char* name;     // as setlocale takes it
  const char* source;   // localedef -i
  const char* charmap;  // localedef -f
};
constexpr TestLocale kTestLocales[] = {{"de_DE.UTF-8", "de_DE", "UTF-8"},
                                       {"fr_FR.UTF-8", "fr_FR", "UTF-8"},
                                       {"tr_TR.UTF-8", "tr_TR", "UTF-8"},
                                       {"tr_TR.ISO-8859-9", "tr_TR", "ISO-8859-9"}};

struct TestLocales {
  std::string locpath;  // empty: the system's
  std::string missing;  // why there are none
};

const TestLocales& test_locales() {
  static const TestLocales l = [] {
    TestLocales r;
    const std::string listed = run_shell("locale -a 2>/dev/null");
    auto listed_has = [&](const TestLocale& t) {
      std::string norm = std::string(t.source) + "." + t.charmap;  // `locale -a` prints utf8 / iso88599
      std::string alt = std::string(t.source) + ".";
      for (const char* c = t.charmap; *c; ++c)
        if (*c != '-') alt += static_cast<char>(ascii_lower(*c));
      return listed.find(norm) != std::string::npos || listed.find(alt) != std::string::npos;
    };
    if (std::all_of(std::begin(kTestLocales), std::end(kTestLocales), listed_has)) return r;
    const fs::path dir = fs::path(K3PLAN_BUILD_DIR) / "test-locales";
    for (const TestLocale& t : kTestLocales) {
      if (fs::exists(dir / t.name / "LC_CTYPE")) continue;
      // compiled into a private directory, then renamed: a parallel test never sees half a locale
      const fs::path tmp = dir / (std::string(t.name) + ".tmp" + std::to_string(::getpid()));
      fs::create_directories(dir);
      run_shell("localedef -i " + std::string(t.source) + " -f " + t.charmap + " '" + tmp.string() + "' >/dev/null 2>&1");
      std::error_code ec;
      if (fs::exists(tmp / "LC_NUMERIC")) fs::rename(tmp, dir / t.name, ec);
      fs::remove_all(tmp, ec);
    }
    if (std::all_of(std::begin(kTestLocales), std::end(kTestLocales),
                    [&](const TestLocale& t) { return fs::exists(dir / t.name / "LC_CTYPE"); }))
      r.locpath = dir.string();
    else
      r.missing = "de_DE.UTF-8 / fr_FR.UTF-8 / tr_TR are not in `locale -a` and localedef could not compile them (Debian: apt-get install locales)";
    return r;
  }();
  return l;
}

using EnvVars = std::vector<std::pair<std::string, std::string>>;

// Environment variables for one scope (the binary inherits them), restored afterwards.
class ScopedEnv {
 public:
  explicit ScopedEnv(const EnvVars& vars) {
    for (const auto& [k, v] : vars) {
      const char* old = std::getenv(k.c_str());
      saved_.push_back({k, old ? std::optional<std::string>(old) : std::nullopt});
      ::setenv(k.c_str(), v.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (const auto& [k, v] : saved_) v ? (void)::setenv(k.c_str(), v->c_str(), 1) : (void)::unsetenv(k.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// plan's JSON carries its search time (search.ms, perf_candidates_per_s): the one field that is
// not reproducible; everything else is compared byte for byte.
std::string without_timing(const std::string& s) {
  static const std::regex timing(R"re("(ms|perf_candidates_per_s)": [0-9.e+-]+)re");
  return std::regex_replace(s, timing, "\"$1\": 0");
}

const std::vector<std::vector<std::string>> kCommands = {
    {"fit", "-m", "kimi-k3", "-g", "b300", "-c", "128k", "-u", "32"},
    {"fit", "-m", "KIMI-K3", "-g", "MI355X", "-c", "32k"},
    {"fit", "-m", kInstructConfig, "-g", "H100", "--engine", "vllm"},
    {"fit", "-m", "llama-3.1-8b", "-g", "h100", "--engine", "vllm", "--gpu-memory-utilization", "0.85"},
    {"plan", "-m", "llama-3.1-8b", "--isl", "1024", "--osl", "256", "--tpot-ms", "40.5", "--format", "json"},
    {"validate", "--log", kLog, "-m", kLogConfig, "-g", "h100"},
    {"check", kDeploy},
    {"check", "--command", "vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0.9 --max-model-len 8192", "-g", "h100"},
};

// A decimal comma and '.' grouping, as de_DE.UTF-8 has, built from the classic locale: what a
// dependency calling std::locale::global does to every iostream, with no system locale needed.
struct CommaNumpunct : std::numpunct<char> {
  char do_decimal_point() const override { return ','; }
  char do_thousands_sep() const override { return '.'; }
  std::string do_grouping() const override { return "\3"; }
};

// The C locale (LC_ALL: strtod, printf) and the global C++ locale for one scope; "C" afterwards.
class ProcessLocale {
 public:
  ProcessLocale(const char* c_locale, const std::locale& cpp) : c_ok_(c_locale && std::setlocale(LC_ALL, c_locale) != nullptr) {
    std::locale::global(cpp);
  }
  ~ProcessLocale() {
    std::setlocale(LC_ALL, "C");
    std::locale::global(std::locale::classic());
  }
  ProcessLocale(const ProcessLocale&) = delete;
  ProcessLocale& operator=(const ProcessLocale&) = delete;
  bool c_locale_set() const { return c_ok_; }

 private:
  bool c_ok_;
};

// What the commands above print, computed in this process (the layers below the CLI).
std::vector<std::string> in_process_outputs() {
  std::vector<std::string> out;
  const Catalogue& c = cat();
  FitOptions fit;
  fit.model = "kimi-k3";
  fit.gpu = "b300";
  fit.context = "128k";
  fit.users = 32;
  out.push_back(render(run_fit(c, fit), Format::table));
  out.push_back(render(run_fit(c, fit), Format::json));
  // ids and GPU names match without regard to case, by ASCII rules (Turkish 'I' included)
  FitOptions upper;
  upper.model = "KIMI-K3";
  upper.gpu = "MI355X";
  upper.context = "32k";
  out.push_back(render(run_fit(c, upper), Format::json));
  FitOptions imported;
  imported.model = kInstructConfig;
  imported.gpu = "H100";
  imported.engine = "vllm";
  out.push_back(render(run_fit(c, imported), Format::json));
  PlanOptions plan;
  plan.model = "llama-3.1-8b";
  plan.isl = 1024;
  plan.osl = 256;
  plan.tpot_ms = 40.5;
  out.push_back(without_timing(render(run_plan(c, plan), Format::json)));
  ValidateLogOptions v;
  v.log_path = kLog;
  v.model = kLogConfig;
  v.gpu = "h100";
  out.push_back(render(run_validate_log(c, v), Format::table));
  CheckOptions ch;
  ch.files = {kDeploy};
  ch.commands = {"vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0.9 --max-model-len 8192"};
  ch.manifests = {kSource + "/examples/k8s/kimi-k3-2x8-h200-sglang-lws.yaml"};
  ch.gpu = "h100";
  out.push_back(render(run_check(c, ch), Format::json));
  // YAML numbers through YamlReader: the catalogue's GPUs, prices and models read as a --data directory
  const TempDir data;
  for (const char* f : {"gpus.yaml", "prices.yaml", "models"})
    fs::copy(kSource + "/data/" + f, data.path() / f, fs::copy_options::recursive);
  Catalogue with_data = Catalogue::embedded();
  with_data.add_directory(data.str());
  out.push_back(render(run_gpus(with_data), Format::json));
  out.push_back(render(run_models(with_data), Format::json));
  return out;
}

}  // namespace

TEST_CASE("numbers read and printed in-process do not follow a global locale with a decimal comma", "[locale]") {
  const std::vector<std::string> c_locale = in_process_outputs();
  SECTION("the global C++ locale has a decimal comma (iostreams and yaml-cpp)") {
    const ProcessLocale l(nullptr, std::locale(std::locale::classic(), new CommaNumpunct));
    const auto under = in_process_outputs();
    REQUIRE(under.size() == c_locale.size());
    for (std::size_t i = 0; i < under.size(); ++i) CHECK(under[i] == c_locale[i]);
  }
  SECTION("setlocale(LC_ALL) and the global C++ locale are de_DE.UTF-8 or fr_FR.UTF-8 (strtod and printf too)") {
    const TestLocales& tl = test_locales();
    if (!tl.missing.empty()) {
      WARN("SKIPPED: no de_DE.UTF-8 / fr_FR.UTF-8 locale: " << tl.missing << "; the decimal-comma C++ locale section still ran");
      return;
    }
    const ScopedEnv env(tl.locpath.empty() ? EnvVars{} : EnvVars{{"LOCPATH", tl.locpath}});
    for (const char* name : {"de_DE.UTF-8", "fr_FR.UTF-8"}) {
      INFO("locale " << name);
      const ProcessLocale l(name, std::locale(name));
      REQUIRE(l.c_locale_set());
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.1f", 1.5);
      REQUIRE(std::string(buf) == "1,5");  // the locale is really in force
      const auto under = in_process_outputs();
      REQUIRE(under.size() == c_locale.size());
      for (std::size_t i = 0; i < under.size(); ++i) CHECK(under[i] == c_locale[i]);
    }
  }
  SECTION("setlocale(LC_ALL) is Turkish (tr_TR.UTF-8, tr_TR.ISO-8859-9): case rules where tolower('I') is not 'i'") {
    const TestLocales& tl = test_locales();
    if (!tl.missing.empty()) {
      WARN("SKIPPED: no tr_TR locale: " << tl.missing);
      return;
    }
    const ScopedEnv env(tl.locpath.empty() ? EnvVars{} : EnvVars{{"LOCPATH", tl.locpath}});
    for (const char* name : {"tr_TR.UTF-8", "tr_TR.ISO-8859-9"}) {
      INFO("locale " << name);
      const ProcessLocale l(name, std::locale(name));
      REQUIRE(l.c_locale_set());
      REQUIRE(std::tolower('I') != 'i');  // the Turkish case rules are really in force
      const auto under = in_process_outputs();
      REQUIRE(under.size() == c_locale.size());
      for (std::size_t i = 0; i < under.size(); ++i) CHECK(under[i] == c_locale[i]);
    }
  }
}

TEST_CASE("the binary prints byte-identical output under LC_ALL=de_DE.UTF-8 or tr_TR.UTF-8 and LC_NUMERIC=fr_FR.UTF-8", "[locale]") {
  const TestLocales& tl = test_locales();
  if (!tl.missing.empty()) {
    WARN("SKIPPED the CLI part: " << tl.missing);
    return;
  }
  std::vector<Run> c_runs;
  {
    const ScopedEnv env(EnvVars{{"LC_ALL", "C"}});
    for (const auto& args : kCommands) c_runs.push_back(run(args));
  }
  const std::vector<EnvVars> envs = {
      {{"LC_ALL", "de_DE.UTF-8"}, {"LANG", "de_DE.UTF-8"}},
      {{"LC_ALL", "tr_TR.UTF-8"}, {"LANG", "tr_TR.UTF-8"}},
      {{"LC_ALL", ""}, {"LANG", "C"}, {"LC_NUMERIC", "fr_FR.UTF-8"}},
  };
  for (auto vars : envs) {
    if (!tl.locpath.empty()) vars.push_back({"LOCPATH", tl.locpath});
    const ScopedEnv env(vars);
    // the locale is in force for a program that asks for it (coreutils' printf calls setlocale)
    REQUIRE(run_shell("/usr/bin/printf '%.1f' 1.5") == "1,5");
    for (std::size_t i = 0; i < kCommands.size(); ++i) {
      const Run r = run(kCommands[i]);
      INFO(vars[0].first << "=" << vars[0].second << ": k3plan " << r.cmdline << "\nstderr: " << r.err);
      CHECK(r.code == c_runs[i].code);
      CHECK(r.err == c_runs[i].err);
      if (kCommands[i][0] == "plan")
        CHECK(without_timing(r.out) == without_timing(c_runs[i].out));
      else
        CHECK(r.out == c_runs[i].out);
    }
  }
}
