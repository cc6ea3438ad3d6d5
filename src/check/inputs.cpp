// `k3plan check` as a library call: reads every input (deployment files, command lines or launch
// scripts, LeaderWorkerSet manifests) through the catalogue readers and the input limits, runs the
// rule table on each, and returns the findings in file order with the per-input figures.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <k3plan/ascii.hpp>
#include <k3plan/check.hpp>
#include <k3plan/check_rules.hpp>
#include <k3plan/engine.hpp>
#include <k3plan/error.hpp>
#include <k3plan/input_limits.hpp>
#include <k3plan/manifest.hpp>
#include <k3plan/number_text.hpp>
#include <tuple>

namespace k3plan {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The raw scalar text at 1-based line/column (up to the end of the flow item).
std::string raw_scalar_at(const std::string& text, int line, int column) {
  if (line < 1 || column < 1) return "";
  std::size_t pos = 0;
  for (int l = 1; l < line; ++l) {
    pos = text.find('\n', pos);
    if (pos == std::string::npos) return "";
    ++pos;
  }
  pos += static_cast<std::size_t>(column - 1);
  if (pos >= text.size()) return "";
  std::string s;
  while (pos < text.size() && text[pos] != '\n' && text[pos] != ',' && text[pos] != '}' && text[pos] != ']' && text[pos] != '#')
    s += text[pos++];
  while (!s.empty() && ascii_is_space(s.back())) s.pop_back();
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) s = s.substr(1, s.size() - 2);
  return s;
}

// A number no plan could hold (overflow, infinity, NaN) is unreadable input, not a finding.
bool unrepresentable_number(const std::string& raw) {
  const std::string v = ascii_lower(raw);
  if (v == ".inf" || v == "-.inf" || v == "+.inf" || v == ".nan") return true;
  if (v.empty() || !(std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '-' || v[0] == '+' || v[0] == '.')) return false;
  // the longest numeric prefix, as strtod in the C locale reads it (from_chars: no locale)
  const std::size_t skip = v[0] == '+' ? 1 : 0;
  double ignored = 0;
  const char* end = std::from_chars(v.data() + skip, v.data() + v.size(), ignored).ptr;
  if (end == v.data() + skip) return false;
  const double x = parse_real(std::string_view(v.data() + skip, static_cast<std::size_t>(end - (v.data() + skip)))).value_or(0);
  return !std::isfinite(x) || std::fabs(x) >= 9007199254740992.0;  // 2^53
}
}  // namespace

CheckResult check_inputs(const Catalogue& cat, const CheckOptions& o) {
  if (o.files.empty() && o.commands.empty() && o.manifests.empty())
    throw InputError("check: nothing to check: give deployment files, --command \"vllm serve ...\" or --manifest lws.yaml");
  if (!o.gpu.empty()) (void)cat.gpu(o.gpu);  // an unknown --gpu is a usage error
  if (!o.engine_version.empty())             // an unknown --engine-version too (either engine's list)
    for (Engine e : kEngines) {
      try {
        (void)engine_model(e, o.engine_version);
        break;
      } catch (const InputError&) {
        if (e == kEngines[std::size(kEngines) - 1]) throw;
      }
    }

  CheckResult res;
  res.inputs = json::array();
  auto finish_input = [&](std::vector<Finding>& f) {
    std::stable_sort(f.begin(), f.end(), [](const Finding& a, const Finding& b) {
      return std::tie(a.pos.file, a.pos.line, a.pos.column) < std::tie(b.pos.file, b.pos.line, b.pos.column);
    });
    res.findings.insert(res.findings.end(), f.begin(), f.end());
  };

  for (const auto& file : o.files) {
    const std::string text = read_yaml_input(file, "deployment file");
    std::vector<Finding> f;
    Deployment d = parse_deployment(text, file, f);
    for (const auto& x : f) {
      // duplicate keys (not valid YAML) and numbers no plan could hold are unreadable input
      if (x.rule == "schema/duplicate-key")
        throw InputError(fmt::format("{}:{}:{}: {} (YAML mapping keys must be unique)", x.pos.file, x.pos.line, x.pos.column,
                                     escape_control(x.message)));
      if ((x.rule == "schema/range" || x.rule == "schema/type") && unrepresentable_number(raw_scalar_at(text, x.pos.line, x.pos.column)))
        throw InputError(fmt::format("{}:{}:{}: number out of range: {}", x.pos.file, x.pos.line, x.pos.column, escape_control(x.message)));
    }
    CheckTarget t;
    t.kind = InputKind::deployment;
    t.anchor = {file, 1, 1};
    t.deployment = std::move(d);
    json s;
    if (!t.deployment.model.empty())
      check_target(cat, t, f, &s);
    else
      s = {{"file", file}, {"kind", "deployment"}};
    res.inputs.push_back(s);
    finish_input(f);
  }

  for (std::size_t i = 0; i < o.commands.size(); ++i) {
    const std::string& c = o.commands[i];
    std::error_code ec;
    std::string text, origin;
    if (fs::is_regular_file(c, ec) || c.find_first_of(" \t\n") == std::string::npos) {
      if (!fs::exists(c, ec)) throw InputError(fmt::format("--command '{}': no such file, and not a command line", escape_control(c)));
      text = read_capped(c, kMaxScriptBytes, "launch script");
      origin = c;
    } else {
      text = c;
      origin = o.commands.size() == 1 ? "<command>" : fmt::format("<command-{}>", i + 1);
    }
    std::vector<Finding> f;
    CheckTarget t;
    t.kind = InputKind::command;
    t.deployment = parse_launch_command(text, origin, f);
    t.deployment.gpu = o.gpu;
    t.deployment.engine_version = o.engine_version;
    t.anchor = t.deployment.where.count("model") ? t.deployment.where.at("model") : SourcePos{origin, 1, 1};
    json s;
    if (!t.deployment.model.empty()) check_target(cat, t, f, &s);
    res.inputs.push_back(s);
    finish_input(f);
  }

  for (const auto& m : o.manifests) {
    const std::string text = read_yaml_input(m, "manifest");
    std::vector<Finding> f;
    const auto groups = parse_lws_manifest(cat, text, m, o.gpu, f);
    if (groups.empty() && f.empty())
      f.push_back({"manifest/structure", "error", "no LeaderWorkerSet (kind: LeaderWorkerSet) in this file", {m, 1, 1}});
    for (const auto& g : groups) {
      CheckTarget t;
      t.kind = InputKind::manifest;
      t.deployment = g.deployment;
      t.gpus_per_pod = g.gpus_per_pod;
      t.group_size = g.group_size;
      t.replicas = g.replicas;
      t.anchor = g.anchor;
      // --engine-version, else the release the image is tagged with when the engine models cover it
      t.deployment.engine_version = o.engine_version;
      if (o.engine_version.empty() && !g.image_release.empty()) {
        try {
          (void)engine_model(t.deployment.engine, g.image_release);
          t.deployment.engine_version = g.image_release;
        } catch (const InputError&) {
        }
      }
      json s;
      if (!t.deployment.model.empty()) check_target(cat, t, f, &s);
      s["replicas"] = t.replicas;
      s["group_size"] = t.group_size;
      s["gpus_per_pod"] = t.gpus_per_pod;
      res.inputs.push_back(s);
    }
    finish_input(f);
  }
  return res;
}

}  // namespace k3plan
