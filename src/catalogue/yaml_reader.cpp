#include <k3plan/yaml_reader.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <k3plan/error.hpp>
#include <k3plan/input_limits.hpp>
#include <k3plan/limits.hpp>
#include <k3plan/number_text.hpp>
#include <set>
#include <string_view>
#include <unordered_set>

namespace k3plan {

namespace {

// After parsing: every map key a plain scalar and unique; the tree, aliases expanded, within the
// node budget (an anchor used a million times counts a million times: the "billion laughs").
// The field path ("a.b[3].c") is built only when a check fails: walking a million expanded nodes
// must stay cheap (the fuzz targets' 10 s timeout runs it under the sanitizers).
struct PathStep {
  const PathStep* parent = nullptr;
  const std::string* key = nullptr;  // map key, or
  std::size_t index = 0;             // sequence index when key is null
};

std::string path_text(const PathStep* p) {
  std::vector<const PathStep*> steps;
  for (; p; p = p->parent) steps.push_back(p);
  std::string out;
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    if ((*it)->key) {
      if (!out.empty()) out += '.';
      out += *(*it)->key;
    } else {
      out += fmt::format("[{}]", (*it)->index);
    }
  }
  return out.empty() ? "<root>" : out;
}

void walk(const YamlReader& r, const YAML::Node& n, std::size_t& budget, const PathStep* at, int depth, bool dup_ok) {
  if (budget == 0 || --budget == 0)
    r.fail(n, path_text(at), fmt::format("more than {} YAML nodes once aliases are expanded", limits::kMaxYamlNodes));
  if (depth > kMaxYamlDepth) r.fail(n, path_text(at), fmt::format("nesting deeper than {} levels", kMaxYamlDepth));
  if (n.IsMap()) {
    std::vector<std::string_view> few;           // small maps: a linear scan, no allocation per key
    std::unordered_set<std::string_view> many;  // large ones: hashed
    const bool large = n.size() > 16;
    for (const auto& kv : n) {
      if (!kv.first.IsScalar()) r.fail(kv.first, path_text(at), "keys must be plain strings (complex keys are not read)");
      const std::string& key = kv.first.Scalar();
      const PathStep step{at, &key, 0};
      if (!dup_ok) {
        const bool dup = large ? !many.insert(key).second : std::find(few.begin(), few.end(), std::string_view(key)) != few.end();
        if (dup) r.fail(kv.first, path_text(&step), "duplicate key");
        if (!large) few.push_back(key);
      }
      walk(r, kv.second, budget, &step, depth + 1, dup_ok);
    }
  } else if (n.IsSequence()) {
    std::size_t i = 0;
    for (const auto& item : n) {
      const PathStep step{at, nullptr, i++};
      walk(r, item, budget, &step, depth + 1, dup_ok);
    }
  }
}

}  // namespace

namespace {
thread_local int t_trusted = 0;
}  // namespace

YamlReader::TrustedInput::TrustedInput() { ++t_trusted; }
YamlReader::TrustedInput::~TrustedInput() { --t_trusted; }

YAML::Node YamlReader::parse(const std::string& text, bool duplicate_keys_allowed) const {
  if (t_trusted == 0) check_yaml_limits(text, origin_, limits::kMaxInputBytes, kMaxYamlDepth);  // binary data, invalid UTF-8, size, nesting
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}:{}:{}: malformed YAML: {}", origin_, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  if (t_trusted == 0) check_tree(root, duplicate_keys_allowed);
  return root;
}

void YamlReader::check_tree(const YAML::Node& root, bool duplicate_keys_allowed) const {
  std::size_t budget = limits::kMaxYamlNodes;
  walk(*this, root, budget, nullptr, 0, duplicate_keys_allowed);
}

void YamlReader::fail(const YAML::Node& at, const std::string& field, const std::string& msg) const {
  int line = 0, column = 0;
  if (at.IsDefined() && !at.Mark().is_null()) {
    line = line_offset_ + at.Mark().line + 1;
    column = at.Mark().column + 1;
  }
  if (line > 0) throw InputError(fmt::format("{}:{}:{}: field '{}': {}", origin_, line, column, field, msg));
  throw InputError(fmt::format("{}: field '{}': {}", origin_, field, msg));
}

void YamlReader::require_map(const YAML::Node& n, const std::string& field) const {
  if (!n.IsDefined() || !n.IsMap()) fail(n, field, "expected a mapping");
}

void YamlReader::require_list(const YAML::Node& n, const std::string& field, const std::string& expected) const {
  if (!n.IsDefined()) fail(n, field, "missing (" + expected + ")");
  if (!n.IsSequence()) fail(n, field, expected);
}

void YamlReader::check_keys(const YAML::Node& map, std::initializer_list<const char*> allowed, const std::string& ctx) const {
  require_map(map, ctx.empty() ? "<root>" : ctx);
  std::vector<std::string> names(allowed.begin(), allowed.end());
  std::set<std::string> seen;
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) fail(kv.first, ctx, "keys must be plain strings");
    const auto key = kv.first.as<std::string>();
    const std::string field = ctx.empty() ? key : ctx + "." + key;
    if (!seen.insert(key).second) fail(kv.first, field, "duplicate key");
    bool known = false;
    for (const auto& a : names) known = known || a == key;
    if (!known) {
      const auto hint = closest_match(key, names);
      fail(kv.first, field, hint.empty() ? "unknown key" : fmt::format("unknown key; did you mean '{}'?", hint));
    }
  }
}

double YamlReader::to_number(const YAML::Node& n, const std::string& field) const {
  if (!n.IsScalar()) fail(n, field, "expected a number");
  const auto parsed = parse_yaml_real(n.Scalar());  // not as<double>(): iostreams follow the global locale
  if (!parsed) fail(n, field, fmt::format("expected a number, got '{}'", n.Scalar()));
  const double v = *parsed;
  if (!std::isfinite(v)) fail(n, field, "must be a finite number");
  return v;
}

std::string YamlReader::str(const YAML::Node& map, const char* key, const std::string& ctx, bool required,
                            const std::string& fallback) const {
  const std::string field = ctx.empty() ? key : ctx + "." + key;
  const YAML::Node n = map[key];
  if (!n.IsDefined() || n.IsNull()) {
    if (required) fail(map, field, "missing");
    return fallback;
  }
  if (!n.IsScalar()) fail(n, field, "expected a string");
  return n.Scalar();
}

double YamlReader::number(const YAML::Node& map, const char* key, const std::string& ctx, bool required, double fallback, double min,
                          double max) const {
  const std::string field = ctx.empty() ? key : ctx + "." + key;
  const YAML::Node n = map[key];
  if (!n.IsDefined() || n.IsNull()) {
    if (required) fail(map, field, "missing");
    return fallback;
  }
  const double v = to_number(n, field);
  if (v < min || v > max) fail(n, field, fmt::format("{} is out of range [{}, {}]", n.Scalar(), min, max));
  return v;
}

std::int64_t YamlReader::integer(const YAML::Node& map, const char* key, const std::string& ctx, bool required, std::int64_t fallback,
                                 std::int64_t min, std::int64_t max) const {
  const std::string field = ctx.empty() ? key : ctx + "." + key;
  const double v = number(map, key, ctx, required, static_cast<double>(fallback), static_cast<double>(min), static_cast<double>(max));
  if (v != std::floor(v)) fail(map[key], field, "expected a whole number");
  return static_cast<std::int64_t>(v);
}

bool YamlReader::boolean(const YAML::Node& map, const char* key, const std::string& ctx, bool fallback) const {
  const std::string field = ctx.empty() ? key : ctx + "." + key;
  const YAML::Node n = map[key];
  if (!n.IsDefined() || n.IsNull()) return fallback;
  if (n.IsMap()) {  // a figure-style {value: 1, assumed: ...}
    return number(n, "value", field, true, 0, 0, 1) != 0;
  }
  if (!n.IsScalar()) fail(n, field, "expected true or false");
  try {
    return n.as<bool>();
  } catch (const YAML::Exception&) {
    fail(n, field, fmt::format("expected true or false, got '{}'", n.Scalar()));
  }
}

std::vector<std::string> YamlReader::strings(const YAML::Node& map, const char* key, const std::string& ctx) const {
  const std::string field = ctx.empty() ? key : ctx + "." + key;
  std::vector<std::string> out;
  const YAML::Node n = map[key];
  if (!n.IsDefined() || n.IsNull()) return out;
  if (!n.IsSequence()) fail(n, field, "expected a list of strings");
  for (const auto& item : n) {
    if (!item.IsScalar()) fail(item, field, "expected a string");
    out.push_back(item.Scalar());
  }
  return out;
}

Figure YamlReader::figure(const YAML::Node& map, const char* key, const std::string& ctx, bool required, const std::string& entry_source,
                          double min, double max, std::vector<Assumption>* assumptions, const std::string& owner) const {
  const std::string field = ctx.empty() ? key : ctx + "." + key;
  const YAML::Node n = map[key];
  Figure f;
  if (!n.IsDefined() || n.IsNull()) {
    if (required) fail(map, field, "missing");
    return f;
  }
  if (n.IsMap()) {
    check_keys(n, {"value", "source", "assumed", "reason"}, field);
    f.value = number(n, "value", field, true, 0, min, max);
    f.source = str(n, "source", field, false, entry_source);
    f.assumed = boolean(n, "assumed", field, false);
    f.reason = str(n, "reason", field, false);
    if (f.assumed && f.reason.empty()) fail(n, field + ".reason", "an assumed figure needs a reason");
    if (f.source.empty() && !f.assumed) fail(n, field + ".source", "missing (every figure needs a source)");
  } else {
    f.value = number(map, key, ctx, true, 0, min, max);
    f.source = entry_source;
  }
  if (f.assumed && assumptions) add_assumption(*assumptions, {owner + " " + field, f.reason});
  return f;
}

}  // namespace k3plan
