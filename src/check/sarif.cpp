// Renderings of findings: one compiler-style line each, and a SARIF 2.1.0 log whose rules come
// from the rule table (check_rules.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <k3plan/ascii.hpp>
#include <k3plan/check.hpp>
#include <k3plan/check_rules.hpp>
#include <map>

namespace k3plan {

namespace fs = std::filesystem;
using nlohmann::json;

std::string escape_control(const std::string& s) {
  std::string o;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n')
      o += "\\n";
    else if (c == '\r')
      o += "\\r";
    else if (c == '\t')
      o += "\\t";
    else if (c < 0x20 || c == 0x7F)
      o += fmt::format("\\x{:02x}", c);
    else
      o += static_cast<char>(c);
  }
  return o;
}

std::string finding_line(const Finding& f) {
  std::string where = escape_control(f.pos.file.empty() ? "<input>" : f.pos.file);
  if (f.pos.line > 0) where += fmt::format(":{}:{}", f.pos.line, std::max(1, f.pos.column));
  return fmt::format("{}: {}: {} [{}]", where, f.severity, escape_control(f.message), f.rule);
}

namespace {

std::string percent_encode_path(const std::string& s) {
  std::string o;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (ascii_is_alnum(static_cast<char>(c)) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~')
      o += static_cast<char>(c);
    else
      o += fmt::format("%{:02X}", c);
  }
  return o;
}

}  // namespace

json sarif_log(const std::vector<Finding>& findings) {
  json rules = json::array();
  std::map<std::string, std::size_t> index;
  auto rule_index = [&](const std::string& id, const std::string& severity) {
    const auto it = index.find(id);
    if (it != index.end()) return it->second;
    const RuleInfo* info = find_rule(id);
    json r = {{"id", id},
              {"shortDescription", {{"text", info ? info->text : id}}},
              {"defaultConfiguration", {{"level", info ? info->level : severity}}},
              {"properties", {{"category", id.substr(0, id.find('/'))}}}};
    rules.push_back(r);
    index[id] = rules.size() - 1;
    return rules.size() - 1;
  };
  for (const auto& r : check_rules()) rule_index(r.id, r.level);
  json results = json::array();
  for (const auto& f : findings) {
    json loc;
    const std::string& file = f.pos.file;
    if (!file.empty() && file.front() != '<') {
      json phys = {{"artifactLocation", fs::path(file).is_absolute()
                                            ? json{{"uri", "file://" + percent_encode_path(file)}}
                                            : json{{"uri", percent_encode_path(fs::path(file).lexically_normal().generic_string())},
                                                   {"uriBaseId", "%SRCROOT%"}}}};
      if (f.pos.line > 0) phys["region"] = {{"startLine", f.pos.line}, {"startColumn", std::max(1, f.pos.column)}};
      loc["physicalLocation"] = phys;
    } else {
      loc["logicalLocations"] = json::array({{{"name", file.empty() ? "<input>" : file}, {"kind", "module"}}});
    }
    results.push_back({{"ruleId", f.rule},
                       {"ruleIndex", rule_index(f.rule, f.severity)},
                       {"level", f.severity == "error"     ? "error"
                                 : f.severity == "warning" ? "warning"
                                                           : "note"},
                       {"message", {{"text", f.message}}},
                       {"locations", json::array({loc})}});
  }
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs",
           json::array({{{"tool", {{"driver", {{"name", "k3plan"}, {"version", "0.1.0"}, {"semanticVersion", "0.1.0"}, {"rules", rules}}}}},
                         {"columnKind", "unicodeCodePoints"},
                         {"results", results}}})}};
}

}  // namespace k3plan
