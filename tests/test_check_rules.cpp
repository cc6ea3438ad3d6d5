// The rule table of `k3plan check` (check_rules.hpp) is the only list of rule ids: ids are unique,
// each is documented in examples/README.md, every id any source file emits is in the table, each
// rule function runs once, and the SARIF log lists exactly the table.
#include <catch2/catch.hpp>
#include <filesystem>
#include <k3plan/check.hpp>
#include <k3plan/check_rules.hpp>
#include <regex>
#include <set>
#include <string>

#include "support.hpp"

namespace {
namespace fs = std::filesystem;
const std::string kSourceDir = K3PLAN_SOURCE_DIR;
}  // namespace

TEST_CASE("check rule table: ids are unique and well formed", "[check][rules]") {
  std::set<std::string> seen;
  const std::regex id(R"(^[a-z0-9-]+/[a-z0-9-]+$)");
  REQUIRE(k3plan::check_rules().size() >= 40);
  for (const auto& r : k3plan::check_rules()) {
    INFO(r.id);
    CHECK(std::regex_match(std::string(r.id), id));
    CHECK(seen.insert(r.id).second);
    const std::string level = r.level;
    CHECK((level == "error" || level == "warning" || level == "note"));
    CHECK(std::string(r.text).size() > 10);
    CHECK(k3plan::find_rule(r.id) == &r);
  }
  CHECK(k3plan::find_rule("engine/no-such-rule") == nullptr);
}

TEST_CASE("check rule table: every id is documented in examples/README.md", "[check][rules]") {
  const std::string doc = k3plan_test::slurp(fs::path(kSourceDir) / "examples" / "README.md");
  for (const auto& r : k3plan::check_rules()) {
    INFO(r.id);
    CHECK(doc.find(std::string("`") + r.id + "`") != std::string::npos);
  }
}

TEST_CASE("check rule table: every rule id a source file emits is in the table", "[check][rules]") {
  // rule ids are string literals "<family>/<name>" in the layers that emit findings: the readers
  // (catalogue/), the engine models' refusals (engines/) and the rules (check/)
  const std::regex literal(R"re("((schema|command|manifest|model|gpu|check|engine|memory|budget|layout)/[a-z0-9-]+)")re");
  std::set<std::string> emitted;
  std::vector<fs::directory_entry> files;
  for (const char* dir : {"catalogue", "engines", "check", "calc"})
    for (const auto& e : fs::recursive_directory_iterator(fs::path(kSourceDir) / "src" / dir)) files.push_back(e);
  REQUIRE(files.size() >= 10);
  for (const auto& e : files) {
    if (e.path().extension() != ".cpp" && e.path().extension() != ".hpp") continue;
    const std::string text = k3plan_test::slurp(e.path().string());
    for (auto it = std::sregex_iterator(text.begin(), text.end(), literal); it != std::sregex_iterator(); ++it) {
      const std::string id = (*it)[1];
      emitted.insert(id);
      INFO(e.path().string() << ": " << id);
      CHECK(k3plan::find_rule(id) != nullptr);
    }
  }
  // the scan sees the engines' refusal ids, not only check's own
  CHECK(emitted.count("engine/dp-replicas") == 1);
  CHECK(emitted.count("layout/whole-nodes") == 1);
}

TEST_CASE("check rule table: each rule function is one contiguous block, so it runs once", "[check][rules]") {
  std::set<k3plan::RuleFunction> done;
  k3plan::RuleFunction last = nullptr;
  for (const auto& r : k3plan::check_rules()) {
    INFO(r.id);
    if (r.function && r.function != last) CHECK(done.insert(r.function).second);
    last = r.function;
  }
  CHECK(done.size() >= 8);
}

TEST_CASE("check rule table: SARIF lists exactly the table's rules with their levels", "[check][rules][sarif]") {
  const auto log = k3plan::sarif_log({});
  const auto& rules = log.at("runs").at(0).at("tool").at("driver").at("rules");
  REQUIRE(rules.size() == k3plan::check_rules().size());
  for (std::size_t i = 0; i < rules.size(); ++i) {
    CHECK(rules[i].at("id") == k3plan::check_rules()[i].id);
    CHECK(rules[i].at("defaultConfiguration").at("level") == k3plan::check_rules()[i].level);
  }
}
