// The fixtures of `k3plan check`: every file under examples/bad/ (deployment files, engine command
// lines under commands/, LeaderWorkerSet manifests under manifests/) triggers the rules its first
// line names, every rule of the table has such a fixture (or a reasoned exemption), and the
// commands under examples/good-commands/, copied from the engines' own docs and recipes, pass.
//
// A fixture's leading comment block is its contract:
//   # FAILS rule/id[, rule/id]: why   exit 1; those rules are errors, and every error is one of them
//   # WARNS rule/id[, rule/id]: why   exit 0 (1 with --strict); no errors; those rules are the warnings
//   # NOTES rule/id[, rule/id]: why   exit 0 even with --strict; no errors or warnings; those are notes
//   # k3plan check [--gpu G] [--engine-version V] [--command|--manifest] PATH
//                                     how it is checked (required for command lines: they name no GPU)
// A good command has `# PASSES: what`, `# source: URL`, the `# k3plan check` line, and
// `# ALLOWS rule/id[, rule/id]: why` for each warning it may give (each must then appear).
#include <catch2/catch.hpp>
#include <filesystem>
#include <k3plan/catalogue.hpp>
#include <k3plan/check.hpp>
#include <k3plan/check_rules.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace k3plan;

const std::string kSourceDir = K3PLAN_SOURCE_DIR;

// Rules no file can trigger through `k3plan check`, with the reason. Keep this list small: an id
// here that a fixture does trigger fails the test, and so does a table id that is neither.
const std::map<std::string, std::string> kExempt{
    {"schema/duplicate-key",
     "a duplicate key is not valid YAML: check refuses the file as unreadable input (exit 2, one line on stderr, no "
     "findings; test_check.cpp 'unreadable input exits 2'); the id is the deployment reader's, which launch FILE reports"},
    {"layout/degree",
     "a guard of the engine models: the readers range-check every degree first (1-4,096: schema/range, command/value) "
     "and check refuses layouts over 100,000 GPUs as engine/parallel-product before an engine model sees them"},
};

const Catalogue& catalogue() {
  static const Catalogue cat = Catalogue::embedded();
  return cat;
}

enum class Kind { deployment, command, manifest };

struct Fixture {
  std::string path;  // absolute
  std::string rel;   // from the source dir, as the `# k3plan check` line names it
  Kind kind = Kind::deployment;
  std::string verdict;             // FAILS / WARNS / NOTES / PASSES
  std::vector<std::string> rules;  // the rules the header names (ALLOWS for good commands)
  std::string gpu, engine_version;
  bool has_check_line = false;
  std::string source;  // good commands: the URL
};

std::vector<std::string> split_rules(const std::string& listed) {
  std::vector<std::string> out;
  for (std::size_t p = 0; p != std::string::npos;) {
    const auto comma = listed.find(", ", p);
    out.push_back(listed.substr(p, comma == std::string::npos ? std::string::npos : comma - p));
    p = comma == std::string::npos ? comma : comma + 2;
  }
  return out;
}

// Reads the leading comment block of one fixture. Header mistakes are test failures (REQUIRE).
Fixture read_fixture(const fs::path& p, Kind kind) {
  Fixture f;
  f.path = p.string();
  f.rel = fs::relative(p, kSourceDir).generic_string();
  f.kind = kind;
  const std::string text = k3plan_test::slurp(p);
  std::istringstream in(text);
  std::string line;
  const std::regex verdict(R"(^# (FAILS|WARNS|NOTES) ([a-z0-9-]+/[a-z0-9-]+(, [a-z0-9-]+/[a-z0-9-]+)*): \S.*$)");
  const std::regex passes(R"(^# PASSES: \S.*$)");
  const std::regex allows(R"(^# ALLOWS ([a-z0-9-]+/[a-z0-9-]+(, [a-z0-9-]+/[a-z0-9-]+)*): \S.*$)");
  const std::regex source(R"(^# source: (https://\S+)$)");
  bool first = true;
  INFO(f.rel);
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) != 0) break;  // the header is the leading comment block
    std::smatch m;
    if (first) {
      if (std::regex_match(line, m, verdict)) {
        f.verdict = m[1];
        f.rules = split_rules(m[2]);
      } else if (std::regex_match(line, passes)) {
        f.verdict = "PASSES";
      }
      first = false;
      continue;
    }
    if (std::regex_match(line, m, allows)) {
      for (const auto& r : split_rules(m[1])) f.rules.push_back(r);
    } else if (std::regex_match(line, m, source)) {
      f.source = m[1];
    } else if (line.rfind("# k3plan check ", 0) == 0) {
      f.has_check_line = true;
      std::istringstream words(line.substr(std::string("# k3plan check ").size()));
      std::vector<std::string> w;
      for (std::string x; words >> x;) w.push_back(x);
      std::string named;
      for (std::size_t i = 0; i < w.size(); ++i) {
        const bool has_value = i + 1 < w.size();
        if (w[i] == "--gpu" && has_value) {
          f.gpu = w[++i];
        } else if (w[i] == "--engine-version" && has_value) {
          f.engine_version = w[++i];
        } else if (w[i] == "--command" && has_value) {
          CHECK(kind == Kind::command);
          named = w[++i];
        } else if (w[i] == "--manifest" && has_value) {
          CHECK(kind == Kind::manifest);
          named = w[++i];
        } else if (w[i].rfind("-", 0) != 0) {
          CHECK(kind == Kind::deployment);
          named = w[i];
        } else {
          FAIL("the `# k3plan check` line takes --gpu, --engine-version and the file only: " << line);
        }
      }
      CHECK(named == f.rel);  // the line users copy checks this very file
    }
  }
  REQUIRE_FALSE(f.verdict.empty());  // the first line says FAILS, WARNS, NOTES (or PASSES)
  if (kind == Kind::command) CHECK(f.has_check_line);
  return f;
}

std::vector<fs::path> files_in(const fs::path& dir, std::initializer_list<const char*> exts) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file())
      for (const char* x : exts)
        if (e.path().extension() == x) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Every fixture under examples/bad/, every kind.
std::vector<Fixture> bad_fixtures() {
  const fs::path bad = fs::path(kSourceDir) / "examples" / "bad";
  std::vector<Fixture> out;
  for (const auto& p : files_in(bad, {".yaml", ".yml"})) out.push_back(read_fixture(p, Kind::deployment));
  for (const auto& p : files_in(bad / "commands", {".sh"})) out.push_back(read_fixture(p, Kind::command));
  for (const auto& p : files_in(bad / "manifests", {".yaml", ".yml"})) out.push_back(read_fixture(p, Kind::manifest));
  return out;
}

Report check_fixture(const Fixture& f, bool strict = false) {
  CheckOptions o;
  (f.kind == Kind::deployment ? o.files : f.kind == Kind::command ? o.commands : o.manifests) = {f.path};
  o.gpu = f.gpu;
  o.engine_version = f.engine_version;
  o.strict = strict;
  return run_check(catalogue(), o);
}

std::set<std::string> rules_at(const Report& r, const std::string& severity) {
  std::set<std::string> out;
  for (const auto& x : r.data.at("findings"))
    if (x.at("severity") == severity) out.insert(x.at("rule").get<std::string>());
  return out;
}

std::string findings_text(const Report& r) {
  std::string s;
  for (const auto& n : r.notes) s += n + "\n";
  return s;
}

}  // namespace

TEST_CASE("check: every examples/bad fixture gives exactly what its first line documents", "[check][fixtures]") {
  const auto fixtures = bad_fixtures();
  std::map<Kind, int> per_kind;
  for (const auto& f : fixtures) ++per_kind[f.kind];
  CHECK(per_kind[Kind::deployment] >= 30);
  CHECK(per_kind[Kind::command] >= 12);
  CHECK(per_kind[Kind::manifest] >= 5);
  for (const auto& f : fixtures) {
    const Report r = check_fixture(f);
    INFO(f.rel << ": " << f.verdict << "\n" << findings_text(r));
    const std::set<std::string> listed(f.rules.begin(), f.rules.end());
    for (const auto& rule : f.rules) CHECK(find_rule(rule) != nullptr);  // ids of the table only
    if (f.verdict == "FAILS") {
      CHECK(r.exit_code == 1);
      CHECK(rules_at(r, "error") == listed);  // every documented rule is an error, every error documented
    } else if (f.verdict == "WARNS") {
      CHECK(r.exit_code == 0);
      CHECK(rules_at(r, "error").empty());
      CHECK(rules_at(r, "warning") == listed);
      CHECK(check_fixture(f, /*strict=*/true).exit_code == 1);
    } else {
      REQUIRE(f.verdict == "NOTES");
      CHECK(r.exit_code == 0);
      CHECK(rules_at(r, "error").empty());
      CHECK(rules_at(r, "warning").empty());
      for (const auto& rule : f.rules) CHECK(rules_at(r, "note").count(rule) == 1);
      CHECK(check_fixture(f, /*strict=*/true).exit_code == 0);
    }
  }
}

TEST_CASE("check: every rule in the table has a fixture that triggers it", "[check][fixtures][rules]") {
  std::map<std::string, std::vector<std::string>> triggered_by;  // documented and produced
  std::set<std::string> produced;                                // any finding of any fixture
  for (const auto& f : bad_fixtures()) {
    const Report r = check_fixture(f);
    std::set<std::string> seen;
    for (const auto& x : r.data.at("findings")) seen.insert(x.at("rule").get<std::string>());
    produced.insert(seen.begin(), seen.end());
    for (const auto& rule : f.rules)
      if (seen.count(rule)) triggered_by[rule].push_back(f.rel);
  }
  CHECK(kExempt.size() <= 3);
  for (const auto& [id, why] : kExempt) {
    INFO(id << ": " << why);
    CHECK(find_rule(id) != nullptr);
    CHECK(why.size() > 40);
    CHECK(produced.count(id) == 0);  // a fixture triggers it now: drop the exemption
  }
  for (const auto& r : check_rules()) {
    INFO(r.id);
    CHECK((triggered_by.count(r.id) == 1) != (kExempt.count(r.id) == 1));
  }
}

TEST_CASE("check: commands copied from the engines' docs and recipes pass", "[check][fixtures][command]") {
  const auto files = files_in(fs::path(kSourceDir) / "examples" / "good-commands", {".sh"});
  REQUIRE(files.size() >= 6);
  std::set<std::string> engines;
  for (const auto& p : files) {
    const Fixture f = read_fixture(p, Kind::command);
    INFO(f.rel);
    REQUIRE(f.verdict == "PASSES");
    CHECK_FALSE(f.source.empty());
    CHECK_FALSE(f.gpu.empty());  // checked with the GPU the doc runs it on: every rule applies
    const Report r = check_fixture(f);
    INFO(findings_text(r));
    CHECK(r.exit_code == 0);
    CHECK(rules_at(r, "error").empty());
    // the warnings a correct doc command gives are named in its header, with the reason
    CHECK(rules_at(r, "warning") == std::set<std::string>(f.rules.begin(), f.rules.end()));
    const json& in = r.data.at("inputs").at(0);
    CHECK(in.contains("fits"));  // the model resolved and the memory rules ran
    engines.insert(in.at("engine").get<std::string>());
  }
  CHECK(engines == std::set<std::string>{"sglang", "vllm"});
}
