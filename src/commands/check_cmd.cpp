// `k3plan check`: deployment files, engine command lines and LeaderWorkerSet manifests through the
// schema, the engines' layout rules, `fit`, model correctness and budget rules. Findings carry
// file:line:column and render as compiler-style text, JSON or SARIF 2.1.0.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <k3plan/budget.hpp>
#include <k3plan/check.hpp>
#include <k3plan/cost.hpp>
#include <k3plan/deploy_fit.hpp>
#include <k3plan/engine_flags.hpp>
#include <k3plan/error.hpp>
#include <k3plan/units.hpp>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "common.hpp"

namespace k3plan {

namespace fs = std::filesystem;
using nlohmann::json;

// --- input limits ------------------------------------------------------------------------------

namespace {

// Length of the UTF-8 sequence starting at s[i], or 0 when it is not valid UTF-8.
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  std::uint32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1Fu;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0Fu;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07u;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0u) != 0x80u) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3Fu);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

std::size_t leading_spaces(const std::string& line) {
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  return i;
}

// True when a line's content (after the key or "- ") opens a block scalar: `|`, `>`, `|-`, `>+2`...
bool opens_block_scalar(const std::string& line) {
  std::size_t end = line.size();
  const auto hash = line.find(" #");
  if (hash != std::string::npos) end = hash;
  while (end > 0 && (line[end - 1] == ' ' || line[end - 1] == '\t' || line[end - 1] == '\r')) --end;
  std::size_t k = end;
  while (k > 0 && (line[k - 1] == '-' || line[k - 1] == '+' || std::isdigit(static_cast<unsigned char>(line[k - 1])))) --k;
  if (k == 0 || (line[k - 1] != '|' && line[k - 1] != '>')) return false;
  if (k - 1 == 0) return true;
  const char before = line[k - 2];
  return before == ' ' || before == ':' || before == '-';
}

}  // namespace

void check_yaml_limits(const std::string& text, const std::string& origin, std::size_t max_bytes, int max_depth) {
  if (text.size() > max_bytes)
    throw InputError(
        fmt::format("{}: {} bytes: larger than the {} MiB limit for this kind of file", origin, text.size(), max_bytes / (1024 * 1024)));
  // binary data: NUL, control characters other than tab/newline/CR, DEL, or invalid UTF-8
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F)
      throw InputError(fmt::format("{}: binary data (byte 0x{:02x} at offset {}), not a YAML text file", origin, c, i));
    const std::size_t n = utf8_length(text, i);
    if (n == 0) throw InputError(fmt::format("{}: binary data (invalid UTF-8 at offset {}), not a YAML text file", origin, i));
    i += n;
  }
  // nesting: flow brackets + block indentation levels + compact "- - -" / "? " markers
  std::vector<std::size_t> indents;
  int flow = 0;
  bool in_double = false, in_single = false;
  std::size_t block_scalar_indent = std::string::npos;  // lines indented deeper belong to a block scalar
  int line_no = 0;
  std::istringstream in(text);
  std::string line;
  auto too_deep = [&](int depth) {
    if (depth > max_depth)
      throw InputError(fmt::format("{}:{}: nesting deeper than {} levels; a deployment file needs a handful", origin, line_no, max_depth));
  };
  while (std::getline(in, line)) {
    ++line_no;
    const std::size_t ind = leading_spaces(line);
    const bool blank = ind == line.size() || line[ind] == '#' || line[ind] == '\r';
    if (block_scalar_indent != std::string::npos) {
      if (blank || ind > block_scalar_indent) continue;
      block_scalar_indent = std::string::npos;
    }
    if (blank && !in_double && !in_single) continue;
    if (flow == 0 && !in_double && !in_single) {
      while (!indents.empty() && indents.back() > ind) indents.pop_back();
      if (indents.empty() || indents.back() < ind) indents.push_back(ind);
    }
    // compact nested sequences / complex keys on one line: "- - - x", "? - x"
    int compact = 0;
    std::size_t k = ind;
    while (k + 1 < line.size() && (line[k] == '-' || line[k] == '?') && (line[k + 1] == ' ' || line[k + 1] == '\t')) {
      ++compact;
      k += 2;
      while (k < line.size() && line[k] == ' ') ++k;
    }
    int peak = flow;
    for (std::size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      const char prev = i == 0 ? ' ' : line[i - 1];
      if (in_double) {
        if (c == '\\')
          ++i;
        else if (c == '"')
          in_double = false;
        continue;
      }
      if (in_single) {
        if (c == '\'') {
          if (i + 1 < line.size() && line[i + 1] == '\'')
            ++i;
          else
            in_single = false;
        }
        continue;
      }
      const bool token_start = prev == ' ' || prev == '\t' || prev == '[' || prev == '{' || prev == ',' || prev == ':' || i == 0;
      if (c == '#' && (prev == ' ' || prev == '\t' || i == 0)) break;
      if (c == '"' && token_start)
        in_double = true;
      else if (c == '\'' && token_start)
        in_single = true;
      else if (c == '[' || c == '{')
        peak = std::max(peak, ++flow);
      else if ((c == ']' || c == '}') && flow > 0)
        --flow;
    }
    too_deep(static_cast<int>(indents.size()) + compact + peak);
    if (flow == 0 && !in_double && !in_single && opens_block_scalar(line)) block_scalar_indent = ind;
  }
}

// --- reading inputs ------------------------------------------------------------------------------

namespace {

std::string read_capped(const std::string& path, std::size_t max_bytes, const char* what) {
  std::error_code ec;
  const fs::path p(path);
  const auto st = fs::status(p, ec);
  if (ec || !fs::exists(st)) throw InputError(fmt::format("{}: no such file", path));
  if (fs::is_directory(st)) throw InputError(fmt::format("{}: is a directory, not a {}", path, what));
  if (!fs::is_regular_file(st)) throw InputError(fmt::format("{}: not a regular file", path));
  const auto size = fs::file_size(p, ec);
  if (ec) throw InputError(fmt::format("{}: cannot read: {}", path, ec.message()));
  if (size > max_bytes)
    throw InputError(fmt::format("{}: {} bytes: larger than the {} MiB limit for a {}", path, size, max_bytes / (1024 * 1024), what));
  std::ifstream in(p, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open", path));
  std::string text;
  text.resize(static_cast<std::size_t>(size));
  in.read(text.data(), static_cast<std::streamsize>(size));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.find('\0') != std::string::npos) throw InputError(fmt::format("{}: binary data, not a {}", path, what));
  return text;
}

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
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) s = s.substr(1, s.size() - 2);
  return s;
}

// A number no plan could hold (overflow, infinity, NaN) is unreadable input, not a finding.
bool unrepresentable_number(const std::string& raw) {
  std::string v;
  for (char c : raw) v += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == ".inf" || v == "-.inf" || v == "+.inf" || v == ".nan") return true;
  if (v.empty() || !(std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '-' || v[0] == '+' || v[0] == '.')) return false;
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (end == v.c_str()) return false;
  return !std::isfinite(x) || std::fabs(x) >= 9007199254740992.0;  // 2^53
}

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

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool contains(const std::string& s, const char* needle) { return s.find(needle) != std::string::npos; }

}  // namespace

// --- LeaderWorkerSet manifests -----------------------------------------------------------------

namespace {

// yaml-cpp: a missing key of a const node is an invalid ("zombie") node whose IsMap() & co. throw;
// these accessors never throw.
bool defined(const YAML::Node& n) { return n.IsDefined(); }
bool is_map(const YAML::Node& n) { return n.IsDefined() && n.IsMap(); }
bool is_seq(const YAML::Node& n) { return n.IsDefined() && n.IsSequence(); }
bool is_scalar(const YAML::Node& n) { return n.IsDefined() && n.IsScalar(); }
YAML::Node child(const YAML::Node& n, const char* key) {
  if (!is_map(n)) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node c = n[key];
  if (!c.IsDefined()) return YAML::Node(YAML::NodeType::Undefined);
  return c;
}

// A manifest is loaded one document at a time (see parse_lws_manifest); marks are relative to the
// document, this is the 0-based file line where the current document starts.
thread_local int t_doc_line = 0;

SourcePos node_pos(const std::string& file, const YAML::Node& n) {
  if (!n.IsDefined()) return {file, t_doc_line + 1, 1};
  return {file, t_doc_line + n.Mark().line + 1, n.Mark().column + 1};
}

// Maps positions inside a command string taken from a YAML scalar back to the manifest.
struct ScriptMap {
  std::string file;
  int line = 1;    // 1-based line of the scalar (block scalar: of its indicator)
  int column = 1;  // 1-based column of the scalar's first character
  bool block = false;
  int indent = 0;  // block scalar content indentation
  bool quoted = false;

  SourcePos map(const SourcePos& p) const {
    if (p.line < 1) return {file, line, column};
    if (block) return {file, line + p.line, indent + p.column};
    if (p.line == 1) return {file, line, column + (quoted ? 1 : 0) + p.column - 1};
    return {file, line + p.line - 1, p.column};
  }
};

ScriptMap script_map(const std::string& file, const std::vector<std::string>& lines, const YAML::Node& n) {
  ScriptMap m;
  m.file = file;
  m.line = t_doc_line + n.Mark().line + 1;
  m.column = n.Mark().column + 1;
  const std::size_t li = static_cast<std::size_t>(std::max(0, t_doc_line + n.Mark().line));
  const std::size_t ci = static_cast<std::size_t>(std::max(0, n.Mark().column));
  if (li < lines.size() && ci < lines[li].size()) {
    const char c = lines[li][ci];
    m.quoted = c == '"' || c == '\'';
    m.block = c == '|' || c == '>';
  }
  if (m.block) {
    for (std::size_t k = li + 1; k < lines.size(); ++k) {
      const std::size_t ind = leading_spaces(lines[k]);
      if (ind < lines[k].size() && lines[k][ind] != '\r') {
        m.indent = static_cast<int>(ind);
        break;
      }
    }
  }
  return m;
}

// Kubernetes expands $(VAR) in command/args from the container's environment ($$(VAR) stays
// literal); a `sh -c` script expands ${VAR} and $VAR. LWS injects LWS_LEADER_ADDRESS,
// LWS_GROUP_SIZE and LWS_WORKER_INDEX (0 on the leader).
std::string expand_vars(const std::string& s, const std::map<std::string, std::string>& env) {
  std::string o;
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] == '$' && i + 1 < s.size() && s[i + 1] == '$' && i + 2 < s.size() && s[i + 2] == '(') {
      o += "$(";
      i += 3;
      continue;
    }
    if (s[i] == '$' && i + 1 < s.size() && (s[i + 1] == '(' || s[i + 1] == '{')) {
      const char close = s[i + 1] == '(' ? ')' : '}';
      const auto end = s.find(close, i + 2);
      if (end != std::string::npos) {
        const auto it = env.find(s.substr(i + 2, end - i - 2));
        if (it != env.end()) {
          o += it->second;
          i = end + 1;
          continue;
        }
      }
    } else if (s[i] == '$' && i + 1 < s.size() && (std::isalpha(static_cast<unsigned char>(s[i + 1])) || s[i + 1] == '_')) {
      std::size_t end = i + 1;
      while (end < s.size() && (std::isalnum(static_cast<unsigned char>(s[end])) || s[end] == '_')) ++end;
      const auto it = env.find(s.substr(i + 1, end - i - 1));
      if (it != env.end()) {
        o += it->second;
        i = end;
        continue;
      }
    }
    o += s[i++];
  }
  return o;
}

bool runs_engine(const std::string& s) {
  return (contains(s, "vllm") && (contains(s, "serve") || contains(s, "api_server"))) || contains(s, "sglang.launch_server") ||
         contains(s, "sglang_router.launch_server");
}

// GPUs a container requests: resources.limits (or requests) nvidia.com/gpu / amd.com/gpu.
std::optional<double> container_gpus(const YAML::Node& c) {
  const YAML::Node res = child(c, "resources");
  for (const char* section : {"limits", "requests"}) {
    const YAML::Node s = child(res, section);
    for (const char* key : {"nvidia.com/gpu", "amd.com/gpu"}) {
      const YAML::Node g = child(s, key);
      if (!is_scalar(g)) continue;
      char* end = nullptr;
      const double v = std::strtod(g.Scalar().c_str(), &end);
      if (end != g.Scalar().c_str() && *end == '\0' && std::isfinite(v)) return v;
      return -1.0;
    }
  }
  return std::nullopt;
}

// A GPU named by a node selector (nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3,
// cloud.google.com/gke-accelerator: nvidia-h100-80gb), if the catalogue knows it.
std::string selector_gpu(const Catalogue& cat, const YAML::Node& pod_spec) {
  const YAML::Node sel = child(pod_spec, "nodeSelector");
  for (const char* key : {"nvidia.com/gpu.product", "cloud.google.com/gke-accelerator", "amd.com/gpu.product", "amd.com/gpu.device-id"}) {
    const YAML::Node v = child(sel, key);
    if (!is_scalar(v)) continue;
    const std::string raw = lower(v.Scalar());
    std::string spaced = raw;
    for (auto& c : spaced)
      if (c == '-' || c == '_') c = ' ';
    std::vector<std::string> tries{raw, spaced};
    for (const char* prefix : {"nvidia-", "amd-", "nvidia ", "amd "}) {
      if (raw.rfind(prefix, 0) == 0) tries.push_back(raw.substr(std::string(prefix).size()));
      if (spaced.rfind(prefix, 0) == 0) tries.push_back(spaced.substr(std::string(prefix).size()));
    }
    for (const auto& t : tries) {
      try {
        return cat.gpu(t).id;
      } catch (const InputError&) {
      }
    }
  }
  return "";
}

struct EngineContainer {
  YAML::Node container;
  std::string script;  // the command text handed to parse_launch_command
  ScriptMap map;
  bool exec_form = false;
  SourcePos pos;
};

std::optional<EngineContainer> find_engine_container(const std::string& file, const std::vector<std::string>& lines,
                                                     const YAML::Node& pod_spec, const std::map<std::string, std::string>& lws_env) {
  const YAML::Node containers = child(pod_spec, "containers");
  if (!is_seq(containers)) return std::nullopt;
  for (const auto& item : containers) {
    const YAML::Node& c = item;
    if (!is_map(c)) continue;
    std::vector<YAML::Node> parts;
    for (const char* key : {"command", "args"}) {
      const YAML::Node n = child(c, key);
      if (is_seq(n)) {
        for (const auto& e : n)
          if (is_scalar(e)) parts.push_back(e);
      } else if (is_scalar(n)) {
        parts.push_back(n);
      }
    }
    std::string all;
    for (const auto& p : parts) all += p.Scalar() + " ";
    if (!runs_engine(all)) continue;
    std::map<std::string, std::string> env = lws_env;
    for (const auto& e : is_seq(child(c, "env")) ? child(c, "env") : YAML::Node(YAML::NodeType::Sequence))
      if (is_scalar(child(e, "name")) && is_scalar(child(e, "value")) && !lws_env.count(child(e, "name").Scalar()))
        env[child(e, "name").Scalar()] = child(e, "value").Scalar();
    EngineContainer ec;
    ec.container = c;
    ec.pos = node_pos(file, c);
    // `sh -c SCRIPT`: the script is one scalar; otherwise the exec form, one word per element
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
      if (parts[i].Scalar() == "-c" && runs_engine(parts[i + 1].Scalar())) {
        ec.script = expand_vars(parts[i + 1].Scalar(), env);
        ec.map = script_map(file, lines, parts[i + 1]);
        return ec;
      }
    }
    for (const auto& p : parts)
      if (runs_engine(p.Scalar()) && p.Scalar().find_first_of(" \n") != std::string::npos) {  // one element holds the whole line
        ec.script = expand_vars(p.Scalar(), env);
        ec.map = script_map(file, lines, p);
        return ec;
      }
    ec.exec_form = true;
    for (const auto& p : parts) ec.script += shell_quote(expand_vars(p.Scalar(), env)) + " ";
    ec.map.file = file;
    ec.map.line = ec.pos.line;
    ec.map.column = ec.pos.column;
    return ec;
  }
  return std::nullopt;
}

}  // namespace

std::vector<CheckTarget> parse_lws_manifest(const Catalogue& cat, const std::string& text, const std::string& origin,
                                            const std::string& gpu, std::vector<Finding>& findings) {
  check_yaml_limits(text, origin);
  std::vector<std::string> lines;
  {
    std::istringstream in(text);
    std::string l;
    while (std::getline(in, l)) lines.push_back(l);
  }
  // One YAML::Load per document, the other documents' lines blanked so marks stay file positions.
  // (YAML::LoadAll is not used: yaml-cpp 0.7 loops forever on some malformed input, e.g. "!,".)
  std::vector<std::size_t> starts{0};
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (i > 0 && l.rfind("---", 0) == 0 && (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r')) starts.push_back(i);
  }
  if (starts.size() > 256) throw InputError(fmt::format("{}: {} YAML documents; a manifest file holds a handful", origin, starts.size()));
  std::vector<YAML::Node> docs;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const std::size_t end = k + 1 < starts.size() ? starts[k + 1] : lines.size();
    std::string piece;
    for (std::size_t i = starts[k]; i < end; ++i) piece += lines[i] + '\n';
    try {
      docs.push_back(YAML::Load(piece));
    } catch (const YAML::Exception& e) {
      throw InputError(
          fmt::format("{}:{}:{}: malformed YAML: {}", origin, static_cast<int>(starts[k]) + e.mark.line + 1, e.mark.column + 1, e.msg));
    }
  }
  struct DocLine {  // restores the document offset however this function exits
    ~DocLine() { t_doc_line = 0; }
  } restore;
  std::vector<CheckTarget> out;
  auto error = [&](const std::string& rule, const std::string& msg, const YAML::Node& n) {
    findings.push_back({rule, "error", msg, node_pos(origin, n)});
  };
  auto count = [&](const YAML::Node& parent, const char* key, const std::string& field) -> int {
    const YAML::Node n = child(parent, key);
    if (!defined(n) || n.IsNull()) return 1;
    char* end = nullptr;
    const std::string s = n.IsScalar() ? n.Scalar() : "";
    const double v = std::strtod(s.c_str(), &end);
    if (!n.IsScalar() || end == s.c_str() || *end != '\0' || !std::isfinite(v) || v < 1 || v > 10000 || v != std::floor(v)) {
      error("manifest/structure", fmt::format("'{}' must be a whole number from 1 to 10,000", field), n);
      return 0;
    }
    return static_cast<int>(v);
  };
  try {
    for (std::size_t k = 0; k < docs.size(); ++k) {
      const YAML::Node& doc = docs[k];
      t_doc_line = static_cast<int>(starts[k]);
      if (!is_scalar(child(doc, "kind")) || child(doc, "kind").Scalar() != "LeaderWorkerSet") continue;
      const YAML::Node spec = child(doc, "spec");
      if (!is_map(spec)) {
        error("manifest/structure", "LeaderWorkerSet without a 'spec' mapping", doc);
        continue;
      }
      const YAML::Node lwt = child(spec, "leaderWorkerTemplate");
      if (!is_map(lwt)) {
        error("manifest/structure", "missing 'spec.leaderWorkerTemplate'", spec);
        continue;
      }
      CheckTarget t;
      t.kind = InputKind::manifest;
      t.replicas = count(spec, "replicas", "spec.replicas");
      t.group_size = count(lwt, "size", "spec.leaderWorkerTemplate.size");
      if (t.replicas == 0 || t.group_size == 0) continue;
      const YAML::Node worker = child(lwt, "workerTemplate");
      const YAML::Node leader = child(lwt, "leaderTemplate");
      if (!is_map(child(worker, "spec"))) {
        error("manifest/structure", "missing 'spec.leaderWorkerTemplate.workerTemplate.spec'", lwt);
        continue;
      }
      const bool has_leader = is_map(child(leader, "spec"));
      const YAML::Node pod = has_leader ? child(leader, "spec") : child(worker, "spec");
      const std::map<std::string, std::string> lws_env{
          {"LWS_GROUP_SIZE", std::to_string(t.group_size)}, {"LWS_WORKER_INDEX", "0"}, {"LWS_LEADER_ADDRESS", "lws-leader"}};
      const auto ec = find_engine_container(origin, lines, pod, lws_env);
      if (!ec) {
        error("manifest/command",
              fmt::format("no container in the {} template runs `vllm serve` or `python3 -m sglang.launch_server`",
                          has_leader ? "leader" : "worker"),
              pod);
        continue;
      }
      std::vector<Finding> local;
      Deployment d;
      try {
        d = parse_launch_command(ec->script, origin, local);
      } catch (const InputError& e) {
        findings.push_back({"manifest/command", "error", e.what(), ec->pos});
        continue;
      }
      const int command_nodes = d.nodes;
      for (auto& f : local) {
        f.pos = ec->exec_form ? ec->pos : ec->map.map(f.pos);
        findings.push_back(f);
      }
      for (auto& [field, p] : d.where) p = ec->exec_form ? ec->pos : ec->map.map(p);
      d.file = origin;
      t.anchor = d.where.count("model") ? d.where.at("model") : ec->pos;
      // GPUs per pod, leader and workers alike
      const auto per_pod = container_gpus(ec->container);
      if (!per_pod || *per_pod < 1 || *per_pod != std::floor(*per_pod) || *per_pod > 1024) {
        error("manifest/gpus",
              "the engine container requests no GPUs: set resources.limits nvidia.com/gpu (or amd.com/gpu) to the GPUs per pod",
              ec->container);
      } else {
        t.gpus_per_pod = static_cast<int>(*per_pod);
        d.where["gpus"] = node_pos(origin, child(ec->container, "resources"));
      }
      if (has_leader && t.gpus_per_pod > 0) {
        const auto wc = find_engine_container(origin, lines, child(worker, "spec"), lws_env);
        if (wc) {
          const auto wg = container_gpus(wc->container);
          if (!wg || *wg != *per_pod)
            error("manifest/gpus",
                  fmt::format("worker pods request {} GPUs but the leader requests {}; every pod of a group runs one node's share",
                              wg ? fmt::format("{}", *wg) : "no", t.gpus_per_pod),
                  wc->container);
        }
      }
      if (command_nodes > 0 && command_nodes != t.group_size)
        findings.push_back({"engine/nnodes", "error",
                            fmt::format("--nnodes {} but the LeaderWorkerSet group has size {} (use --nnodes $(LWS_GROUP_SIZE))",
                                        command_nodes, t.group_size),
                            d.pos("nodes")});
      d.where["nodes"] = node_pos(origin, defined(child(lwt, "size")) ? child(lwt, "size") : lwt);
      d.nodes = t.group_size;
      d.gpus = t.gpus_per_pod * t.group_size;
      d.gpu = gpu.empty() ? selector_gpu(cat, pod) : gpu;
      if (!d.gpu.empty() && gpu.empty()) d.where["gpu"] = node_pos(origin, child(pod, "nodeSelector"));
      t.deployment = std::move(d);
      out.push_back(std::move(t));
    }
  } catch (const YAML::Exception& e) {
    throw InputError(
        fmt::format("{}:{}:{}: unexpected manifest structure: {}", origin, t_doc_line + e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  return out;
}

// --- rules ------------------------------------------------------------------------------------

namespace {

const std::set<std::string> kKvDtypes{"auto",     "bf16",     "bfloat16",   "fp16", "float16",  "half", "fp8",
                                      "fp8_e4m3", "fp8_e5m2", "fp8_ds_mla", "fp4",  "fp4_e2m1", "nvfp4"};

// Engine refusal text -> rule id and the field it is about.
std::pair<std::string, std::vector<const char*>> classify_refusal(const std::string& m) {
  if (contains(m, "heads")) return {"engine/tp-heads", {"parallel.tp", "parallel"}};
  if (contains(m, "routed experts")) return {"engine/ep-experts", {"parallel.ep", "parallel"}};
  if (contains(m, "Number of experts")) return {"engine/ep-dense", {"parallel.ep", "parallel"}};
  if (contains(m, "block_n") || contains(m, "weight_block_size")) return {"engine/fp8-block", {"parallel.tp", "parallel"}};
  if (contains(m, "number of nodes") || contains(m, "whole")) return {"engine/nodes", {"nodes", "gpus", "parallel.tp"}};
  if (contains(m, "dp_size") || contains(m, "data parallel") || contains(m, "dp-size") || contains(m, "dp-attention") ||
      contains(m, "dp attention"))
    return {"engine/dp", {"parallel.dp", "parallel.dp_attention", "parallel"}};
  if (contains(m, "ep_size") || contains(m, "EP_SIZE")) return {"engine/ep", {"parallel.ep", "parallel"}};
  if (contains(m, "pipeline")) return {"engine/pp", {"parallel.pp", "parallel"}};
  return {"engine/layout", {"parallel"}};
}

const char* kind_name(InputKind k) {
  switch (k) {
    case InputKind::deployment:
      return "deployment";
    case InputKind::command:
      return "command";
    case InputKind::manifest:
      return "manifest";
  }
  return "deployment";
}

Model resolve_for(const Catalogue& cat, const Deployment& d) {
  if (!cat.find_model(d.model) && !d.file.empty() && d.file.front() != '<') {
    // a model file named relative to the deployment file
    std::error_code ec;
    const fs::path rel(d.model);
    if (rel.is_relative()) {
      const fs::path beside = fs::path(d.file).parent_path() / rel;
      if (!fs::exists(rel, ec) && fs::exists(beside, ec)) return resolve_model(cat, beside.string());
    }
  }
  return resolve_model(cat, d.model);
}

}  // namespace

void check_target(const Catalogue& cat, const CheckTarget& t, std::vector<Finding>& out, json* summary) {
  const Deployment& d = t.deployment;
  const bool is_file = t.kind == InputKind::deployment;
  auto add = [&](const std::string& rule, const char* sev, const std::string& msg, const SourcePos& p) {
    out.push_back({rule, sev, msg, p});
  };
  auto at = [&](std::initializer_list<const char*> fields) -> SourcePos {
    for (const char* f : fields) {
      const auto it = d.where.find(f);
      if (it != d.where.end()) return it->second;
    }
    return t.anchor.file.empty() ? SourcePos{d.file, 1, 1} : t.anchor;
  };
  const char* engine_name = d.engine == Engine::vllm ? "vLLM" : "SGLang";
  json s = {{"file", d.file}, {"kind", kind_name(t.kind)}, {"engine", to_string(d.engine)}, {"model", d.model}, {"gpu", d.gpu}};

  // model and GPU
  std::optional<Model> model;
  if (!d.model.empty()) {
    try {
      model = resolve_for(cat, d);
      s["model"] = model->id;
    } catch (const InputError& e) {
      add("model/unknown", is_file ? "error" : "warning",
          is_file ? std::string(e.what())
                  : fmt::format("{}; the model rules and memory check are skipped (add it with --data DIR)", e.what()),
          at({"model"}));
    }
  }
  const Gpu* gpu = nullptr;
  if (!d.gpu.empty()) {
    try {
      gpu = &cat.gpu(d.gpu);
      s["gpu"] = gpu->id;
    } catch (const InputError& e) {
      add("gpu/unknown", "error", e.what(), at({"gpu"}));
    }
  } else if (!is_file) {
    add("check/no-gpu", "note",
        "a command line names no GPU: pass --gpu ID (e.g. --gpu h200) to check memory, KV dtype, FP4 and budget rules; they are skipped",
        t.anchor);
  }

  // KV cache dtype
  std::string kv = d.kv_dtype;
  if (!kKvDtypes.count(kv)) {
    const auto hint = closest_match(kv, {"auto", "bf16", "fp16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp4"});
    add("schema/enum", "error",
        fmt::format("unknown KV cache dtype '{}'{}", kv,
                    hint.empty() ? " (use auto, bf16, fp16, fp8, fp8_e4m3, fp8_e5m2 or fp4)" : fmt::format("; did you mean '{}'?", hint)),
        at({"kv_dtype"}));
    kv = "auto";
  }
  std::string kv_fit = kv;
  if (kv == "fp4_e2m1" || kv == "nvfp4") kv_fit = "fp4";
  if (kv == "fp8_ds_mla") kv_fit = "fp8";

  // GPU counts
  const int gpn = gpu ? gpu->gpus_per_node : 0;
  const std::int64_t lg64 = std::int64_t{d.layout.tp} * d.layout.pp * (d.engine == Engine::vllm ? d.layout.dp : 1);
  if (lg64 > 100000) {  // Layout::gpus() would overflow an int; no such cluster exists
    add("engine/parallel-product", "error",
        fmt::format("the parallel layout needs {} GPUs; more than 100,000", fmt_int(static_cast<double>(lg64))),
        at({"parallel.tp", "parallel"}));
    if (summary) *summary = s;
    return;
  }
  const int lg = d.layout.gpus(d.engine);
  int declared = 0;  // the GPUs this deployment has
  int nodes = 0;
  if (t.kind == InputKind::deployment) {
    declared = d.gpus > 0 ? d.gpus : d.nodes * gpn;
    nodes = d.nodes > 0 ? d.nodes : (gpn > 0 && declared > gpn ? (declared + gpn - 1) / gpn : 1);
    if (gpu && d.gpus > 0 && d.nodes > 0) {
      const bool ok = d.nodes == 1 ? d.gpus <= gpn : d.gpus == d.nodes * gpn;
      if (!ok)
        add("engine/gpu-count", "error",
            fmt::format("gpus: {} does not match nodes: {} ({} node{} x {} GPUs per {} node = {})", d.gpus, d.nodes, d.nodes,
                        d.nodes > 1 ? "s" : "", gpn, gpu->id, d.nodes * gpn),
            at({"gpus", "nodes"}));
    }
  } else if (t.kind == InputKind::command) {
    declared = lg;
    nodes = d.nodes > 0 ? d.nodes : 1;
    if (d.nodes > 1) {
      if (lg % d.nodes != 0)
        add("engine/nodes", "error",
            fmt::format("{} GPUs ({}) do not split evenly over --nnodes {}", lg, d.engine == Engine::vllm ? "tp x pp x dp" : "tp x pp",
                        d.nodes),
            at({"nodes"}));
      else if (gpu && lg / d.nodes > gpn)
        add("engine/gpu-count", "error",
            fmt::format("{} GPUs over --nnodes {} is {} per node, but a {} node has {}", lg, d.nodes, lg / d.nodes, gpu->id, gpn),
            at({"nodes"}));
    } else if (gpu && lg > gpn) {
      nodes = (lg + gpn - 1) / gpn;
      add("engine/nnodes", "warning",
          fmt::format("{} GPUs span {} nodes of {} {} but the command has no --nnodes: each node needs {}", lg, nodes, gpn, gpu->id,
                      d.engine == Engine::vllm
                          ? fmt::format("--nnodes {} --node-rank R --master-addr HEAD (workers --headless), or a Ray cluster", nodes)
                          : fmt::format("--nnodes {} --node-rank R --dist-init-addr HEAD:PORT", nodes)),
          at({"parallel.tp", "model"}));
    }
  } else {
    declared = t.gpus_per_pod * t.group_size;
    nodes = t.group_size;
    if (gpu && t.gpus_per_pod > gpn)
      add("manifest/gpus", "error",
          fmt::format("each pod requests {} GPUs but a {} node has {}: the pods never schedule", t.gpus_per_pod, gpu->id, gpn),
          at({"gpus"}));
  }
  if (d.layout_given && declared > 0 && lg != declared && t.kind != InputKind::command) {
    add("engine/parallel-product", "error",
        d.engine == Engine::vllm
            ? fmt::format("tp x pp x dp = {} x {} x {} = {} (vLLM) but the deployment has {} GPUs", d.layout.tp, d.layout.pp, d.layout.dp,
                          lg, declared)
            : fmt::format("tp x pp = {} x {} = {} (SGLang; dp with DP-attention splits the TP group) but the deployment has {} GPUs",
                          d.layout.tp, d.layout.pp, lg, declared),
        at({"parallel.tp", "parallel", "gpus"}));
  }
  s["gpus"] = declared;
  s["nodes"] = nodes;

  const bool countable = declared > 0 || d.layout_given;
  if (!model || !countable) {
    if (summary) *summary = s;
    return;
  }
  const Model& m = *model;

  // the layout: from `fit` when the GPU is known, else the deployment's own on a GPU with the
  // per-node count the launch implies
  // SGLang keeps EP inside the TP group; with ep > tp the layout rules and the budget would divide by
  // moe_tp = tp / ep = 0 (layout.cpp), so this one is refused here and the rest skipped
  if (d.engine == Engine::sglang && d.layout_given && d.layout.ep > d.layout.tp) {
    add("engine/ep", "error",
        fmt::format("SGLang: tp_size {} must be divisible by ep_size {} (expert parallelism lives inside the TP group); other layout and "
                    "memory rules skipped",
                    d.layout.tp, d.layout.ep),
        at({"parallel.ep", "parallel"}));
    if (summary) *summary = s;
    return;
  }
  std::optional<DeploymentFit> fit;
  if (gpu) {
    Deployment d2 = d;
    d2.gpu = gpu->id;
    d2.kv_dtype = kv_fit;
    d2.gpus = declared > 0 ? declared : lg;
    d2.nodes = nodes;
    // a command line without --enable-expert-parallel runs the experts tensor-parallel: keep EP 1
    if (t.kind != InputKind::deployment && !d2.where.count("parallel.ep")) d2.where["parallel.ep"] = t.anchor;
    try {
      fit = fit_deployment(cat, d2);
    } catch (const InputError& e) {
      add("memory/error", "error", fmt::format("cannot evaluate the memory budget: {}", e.what()), at({"gpus", "model"}));
    }
  }
  Gpu synth;
  synth.id = "(GPU not given)";
  synth.gpus_per_node = t.gpus_per_pod > 0 ? t.gpus_per_pod : std::max(1, nodes > 1 ? lg / nodes : lg);
  synth.scaleup_domain_gpus = synth.gpus_per_node;
  const Gpu& rule_gpu = gpu ? *gpu : synth;
  Layout layout = fit ? fit->fit.layout : d.layout;
  if (!fit && d.engine == Engine::vllm && m.moe && d.layout_given && layout.ep == 1 && !d.where.count("parallel.ep") &&
      t.kind == InputKind::deployment && layout.tp * layout.dp > 1)
    layout.ep = layout.tp * layout.dp;
  s["layout"] = {{"tp", layout.tp}, {"ep", layout.ep}, {"dp", layout.dp}, {"pp", layout.pp}, {"dp_attention", layout.dp_attention}};

  // engine rules, in the engines' words
  std::vector<std::string> layout_warnings;
  const auto refusals = layout_refusals(m, rule_gpu, d.engine, layout, &layout_warnings);
  for (const auto& r : refusals) {
    const auto [rule, fields] = classify_refusal(r);
    SourcePos p = t.anchor;
    bool found = false;
    for (const char* f : fields)
      if (!found && d.where.count(f)) {
        p = d.where.at(f);
        found = true;
      }
    if (!found) p = at({"parallel", "gpus", "nodes"});
    const std::string said = r.rfind(engine_name, 0) == 0 ? r : fmt::format("{}: {}", engine_name, r);
    const std::string msg = d.layout_given || t.kind != InputKind::deployment
                                ? said
                                : fmt::format("{} (no 'parallel' given and no layout {} accepts exists for {} GPUs; tried {})", said,
                                              engine_name, declared, layout_text(layout));
    add(rule, "error", msg, p);
  }
  for (const auto& w : layout_warnings) add("engine/tp-across-nodes", "note", w, at({"parallel.tp", "parallel", "gpus"}));

  // context above the model's maximum
  if (d.context > m.max_context)
    add("memory/context-max", "error",
        fmt::format("context {} ({} tokens) exceeds {}'s maximum of {} ({} tokens){}", format_context(d.context),
                    fmt_int(static_cast<double>(d.context)), m.id, format_context(m.max_context),
                    fmt_int(static_cast<double>(m.max_context)),
                    d.engine == Engine::vllm ? ": vLLM refuses a max_model_len above the derived one" : ""),
        at({"context"}));

  // memory, through fit
  if (fit) {
    const FitResult& f = fit->fit;
    s["context"] = f.context;
    s["users"] = f.users;
    s["fits"] = f.fits;
    s["headroom"] = f.headroom;
    s["kv_cache_tokens"] = f.kv_cache_tokens;
    s["max_users"] = f.max_users;
    s["memory_fraction"] = f.utilization_used;
    for (const auto& r : f.reasons) {
      if (std::find(refusals.begin(), refusals.end(), r) != refusals.end()) continue;
      if (r.rfind("context ", 0) == 0) continue;  // reported above as memory/context-max
      if (contains(r, "KV/state pool holds") && f.users == 1 && f.max_users == 0 && !f.settings.model().refuses_context_beyond_pool())
        add("memory/context-capped", "warning",
            fmt::format("{} starts, but caps a request at {} tokens, below the {} context: {}", engine_name,
                        fmt_int(static_cast<double>(f.max_context_one_user)), format_context(f.context), r),
            at({"context", "users"}));
      else if (contains(r, "KV/state pool holds") && t.kind != InputKind::deployment && f.max_users >= 1)
        // a command line's --max-running-requests / --max-num-seqs is a cap, not a demand: the
        // engine starts and queues the requests beyond what the pool holds at full length
        add("memory/concurrency", "warning",
            fmt::format("{} starts; {} requests of {} tokens fit the KV/state pool at once, not the {} the command allows: the rest "
                        "queue (or are preempted) when every request is that long",
                        engine_name, f.max_users, format_context(f.context), f.users),
            at({"users", "context"}));
      else if (contains(r, "KV/state pool holds"))
        add("memory/kv-pool", "error", fmt::format("{} x {} tokens does not fit: {}", f.users, format_context(f.context), r),
            at({"users", "context"}));
      else
        add("memory/does-not-fit", "error", fmt::format("does not fit on {} x {}: {}", f.gpus, gpu->id, r),
            at({"gpus", "nodes", "gpu", "model"}));
    }
    if (f.fits && f.headroom >= 0 && f.headroom < 0.05)
      add("memory/headroom", "warning",
          fmt::format("fits with only {:.1f}% of the KV/state pool free at {} users x {} tokens (under 5%): a longer prompt or a memory "
                      "estimate off by a few "
                      "percent and requests queue or are preempted",
                      f.headroom * 100, f.users, format_context(f.context)),
          at({"users", "context"}));
    for (const auto& w : f.warnings) {
      if (std::find(layout_warnings.begin(), layout_warnings.end(), w) != layout_warnings.end()) continue;
      add("engine/warning", "warning", w, at({"engine_args.max_num_seqs", "engine_args.max_num_batched_tokens", "model"}));
    }
  }

  // correctness for the model: parsers and remote code (only a command line says what it passes).
  // Parser names are checked against the engine's registry for the release (engine_flags.hpp):
  // a name the release does not register is an error (argparse refuses it, or vLLM at start-up);
  // a registered name other than the catalogue's is a warning.
  if (t.kind == InputKind::deployment) {
    // a deployment file gives k3plan's KV dtype: the engine release must have a name for it
    const KvDtypeArg kva = engine_kv_dtype(flag_release(d.engine, d.engine_version), d.kv_dtype, m.dtype);
    if (kKvDtypes.count(d.kv_dtype) && !kva.error.empty()) add("engine/kv-cache-dtype", "error", kva.error, at({"kv_dtype"}));
  } else {
    const auto& hint = m.engine;
    const ParserNames& names = model_parsers(m, d.engine);
    const FlagRelease rel = flag_release(d.engine, d.engine_version);
    const FlagTable& table = flag_table(d.engine);
    auto parser = [&](const std::string& want, const std::optional<std::string>& have, const char* flag, FlagRegistry reg, const char* rule,
                      const char* bad_rule, const char* field, const char* what) {
      const bool want_registered = want.empty() || table.in_registry(reg, want, rel);
      if (have) {
        if (!table.in_registry(reg, *have, rel)) {
          const auto known = table.registry(reg, rel);
          const std::string hint_name = closest_match(*have, known);
          add(bad_rule, "error",
              fmt::format("{} {}: not a parser {} registers, so it refuses to start{}", flag, *have, rel.label(),
                          !want.empty() && want_registered ? fmt::format("; {} uses '{}'", m.id, want)
                          : !hint_name.empty()             ? fmt::format("; did you mean '{}'?", hint_name)
                                                           : ""),
              at({field}));
        } else if (!want.empty() && *have != want) {
          add(rule, "warning", fmt::format("{} {}: the catalogue names '{}' for {} on {}", flag, *have, want, m.id, engine_name),
              at({field}));
        }
        return;
      }
      if (want.empty()) return;
      if (!want_registered) {
        const std::string from = table.first_release_with(reg, want);
        add(rule, "note",
            fmt::format("{}'s {} parser {} is not registered in {}{}: {} come back as plain text", m.id, engine_name, want, rel.label(),
                        from.empty() ? "" : fmt::format(" (registered from {})", from), what),
            t.anchor);
        return;
      }
      add(rule, "warning",
          fmt::format(
              "{} needs {} {} for {}; without it they come back as plain text{}", m.id, flag, want, what,
              reg == FlagRegistry::tool_call_parser && d.engine == Engine::vllm ? " (vLLM also needs --enable-auto-tool-choice)" : ""),
          t.anchor);
    };
    // the KV cache dtype as the command line spells it: one of the release's --kv-cache-dtype values
    if (kKvDtypes.count(d.kv_dtype) && !table.in_registry(FlagRegistry::kv_cache_dtype, d.kv_dtype, rel))
      add("engine/kv-cache-dtype", "error",
          fmt::format("--kv-cache-dtype {}: not a value {} accepts; it accepts {}", d.kv_dtype, rel.label(),
                      fmt::join(table.registry(FlagRegistry::kv_cache_dtype, rel), ", ")),
          at({"kv_dtype"}));
    parser(names.tool_call_parser, d.tool_call_parser, "--tool-call-parser", FlagRegistry::tool_call_parser, "model/tool-call-parser",
           "engine/tool-call-parser", "tool_call_parser", "tool calls");
    parser(names.reasoning_parser, d.reasoning_parser, "--reasoning-parser", FlagRegistry::reasoning_parser, "model/reasoning-parser",
           "engine/reasoning-parser", "reasoning_parser", "reasoning output");
    if (hint.trust_remote_code && d.trust_remote_code && !*d.trust_remote_code)
      add("model/trust-remote-code", "error",
          fmt::format("{} ships custom model code: the engine refuses to load it without --trust-remote-code", m.id), t.anchor);
  }

  // dtypes the GPU runs natively
  if (gpu) {
    if (kv_fit == "fp8" || kv_fit == "fp8_e4m3" || kv_fit == "fp8_e5m2") {
      if (!gpu->runs_natively("fp8"))
        add("model/kv-dtype", "error", fmt::format("KV cache dtype {}: {} has no native FP8; use bf16 (or auto)", kv, gpu->id),
            at({"kv_dtype"}));
    } else if (kv_fit == "fp4") {
      if (!gpu->runs_natively("nvfp4") && !gpu->runs_natively("mxfp4"))
        add("model/kv-dtype", "error", fmt::format("KV cache dtype {}: {} has no native FP4", kv, gpu->id), at({"kv_dtype"}));
    }
    std::set<std::string> fp4;
    if (m.moe) fp4.insert(m.precision_of(ParamGroup::routed_experts));
    fp4.insert(m.default_precision);
    for (const auto& p : fp4) {
      if ((p == "mxfp4" || p == "nvfp4") && !gpu->runs_natively(p))
        add("model/fp4-weights", "warning",
            fmt::format("{} ships {} in {}; {} has no native {}: they run through slower weight-only kernels (e.g. Marlin W4A16)", m.id,
                        m.moe && m.precision_of(ParamGroup::routed_experts) == p ? "its routed experts" : "its weights", p, gpu->id, p),
            at({"gpu", "model"}));
    }
  }

  // budget
  if (gpu && (d.usd_per_month_max || d.usd_per_gpu_hour)) {
    const bool own_rate = d.usd_per_gpu_hour.has_value();
    const bool catalogue_rate = !own_rate && gpu->price_usd_per_hour.value > 0;
    const double rate = own_rate         ? *d.usd_per_gpu_hour
                        : catalogue_rate ? gpu->price_usd_per_hour.value
                                         : cat.prices().default_usd_per_gpu_hour.value;
    RentalScenario r;
    r.gpus = fit ? fit->fit.gpus : declared;
    r.hours_per_day = 24;
    r.days_per_month = cat.prices().hours_per_month / 24;
    r.usd_per_gpu_hour = rate;
    const double monthly = r.usd_per_month();
    s["usd_per_month"] = monthly;
    s["usd_per_gpu_hour"] = rate;
    if (d.usd_per_month_max && monthly > *d.usd_per_month_max)
      add("budget/over", "error",
          fmt::format("{} x {} x {} h x {:.2f} USD/GPU-hour ({}) = {} USD/month, over the budget of {} USD/month", r.gpus, gpu->id,
                      fmt_int(cat.prices().hours_per_month), rate,
                      own_rate         ? "budget.usd_per_gpu_hour"
                      : catalogue_rate ? (gpu->price_usd_per_hour.assumed ? "catalogue price, assumed" : "catalogue price")
                                       : "default rate",
                      fmt_int(monthly), fmt_int(*d.usd_per_month_max)),
          at({"budget.usd_per_month_max"}));
  }
  if (summary) *summary = s;
}

// --- rendering --------------------------------------------------------------------------------

std::string finding_line(const Finding& f) {
  std::string where = escape_control(f.pos.file.empty() ? "<input>" : f.pos.file);
  if (f.pos.line > 0) where += fmt::format(":{}:{}", f.pos.line, std::max(1, f.pos.column));
  return fmt::format("{}: {}: {} [{}]", where, f.severity, escape_control(f.message), f.rule);
}

namespace {

struct RuleInfo {
  const char* id;
  const char* level;
  const char* text;
};

constexpr RuleInfo kRules[] = {
    {"schema/unknown-key", "error", "Unknown key in a deployment file (with a did-you-mean)"},
    {"schema/duplicate-key", "error", "A key appears twice in one mapping"},
    {"schema/type", "error", "A field has the wrong type"},
    {"schema/range", "error", "A number is outside the range the field allows"},
    {"schema/missing", "error", "A required field is missing"},
    {"schema/enum", "error", "A value is not one of the allowed names"},
    {"command/value", "error", "An engine flag has a missing or invalid value"},
    {"command/model", "error", "The command line names no model"},
    {"manifest/structure", "error", "The LeaderWorkerSet is missing a required part"},
    {"manifest/command", "error", "No container in the LeaderWorkerSet runs vLLM or SGLang"},
    {"manifest/gpus", "error", "GPU resource requests of the pods are missing or inconsistent"},
    {"model/unknown", "error", "The model is not in the catalogue and no model file was found"},
    {"gpu/unknown", "error", "The GPU is not in the catalogue"},
    {"check/no-gpu", "note", "No GPU type given: memory, dtype and budget rules skipped"},
    {"engine/gpu-count", "error", "GPU count does not equal nodes x GPUs per node"},
    {"engine/parallel-product", "error", "tp x pp (SGLang) or tp x pp x dp (vLLM) does not equal the GPUs"},
    {"engine/nnodes", "warning", "Multi-node launch without a matching --nnodes"},
    {"engine/nodes", "error", "The GPUs do not split into whole nodes the way the engine requires"},
    {"engine/tp-heads", "error", "Tensor parallel size does not divide the attention heads"},
    {"engine/ep-experts", "error", "Expert parallel size does not divide the routed experts"},
    {"engine/ep-dense", "error", "Expert parallelism on a model without experts"},
    {"engine/ep", "error", "Expert parallel size the engine cannot set"},
    {"engine/dp", "error", "Data parallel / DP-attention combination the engine refuses"},
    {"engine/pp", "error", "Pipeline parallel size the engine refuses"},
    {"engine/fp8-block", "error", "FP8 block-quantized weights split below the 128-wide block"},
    {"engine/layout", "error", "A parallel layout the engine refuses"},
    {"engine/tp-across-nodes", "note", "Tensor parallelism crosses the scale-out network"},
    {"engine/warning", "warning", "An engine setting the engine warns about"},
    {"memory/does-not-fit", "error", "Weights and engine reserve exceed the GPU memory"},
    {"memory/kv-pool", "error", "users x context is beyond the KV cache pool"},
    {"memory/concurrency", "warning", "The running-request cap allows more full-length requests than the pool holds"},
    {"memory/context-capped", "warning", "SGLang starts but caps requests below the context asked for"},
    {"memory/headroom", "warning", "Fits with under 5% of the KV/state pool free"},
    {"memory/context-max", "error", "Context above the model's maximum"},
    {"memory/error", "error", "The memory budget could not be evaluated"},
    {"model/tool-call-parser", "warning", "Tool-call parser missing or different from the model's"},
    {"engine/kv-cache-dtype", "error", "KV cache dtype the engine release has no --kv-cache-dtype value for"},
    {"engine/tool-call-parser", "error", "Tool-call parser the engine release does not register (it refuses to start)"},
    {"engine/reasoning-parser", "error", "Reasoning parser the engine release does not register (it refuses to start)"},
    {"model/reasoning-parser", "warning", "Reasoning parser missing or different from the model's"},
    {"model/trust-remote-code", "error", "--trust-remote-code missing for a model that ships custom code"},
    {"model/kv-dtype", "error", "KV cache dtype the GPU does not support natively"},
    {"model/fp4-weights", "warning", "FP4 weights on a GPU without native FP4 (slower weight-only kernels)"},
    {"budget/over", "error", "Monthly cost over budget.usd_per_month_max"},
};

std::string percent_encode_path(const std::string& s) {
  std::string o;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~')
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
    const RuleInfo* info = nullptr;
    for (const auto& r : kRules)
      if (id == r.id) info = &r;
    json r = {{"id", id},
              {"shortDescription", {{"text", info ? info->text : id}}},
              {"defaultConfiguration", {{"level", info ? info->level : severity}}},
              {"properties", {{"category", id.substr(0, id.find('/'))}}}};
    rules.push_back(r);
    index[id] = rules.size() - 1;
    return rules.size() - 1;
  };
  for (const auto& r : kRules) rule_index(r.id, r.level);
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

// --- the command ------------------------------------------------------------------------------

Report run_check(const Catalogue& cat, const CheckOptions& o) {
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

  std::vector<Finding> all;
  json inputs = json::array();
  auto finish_input = [&](std::vector<Finding>& f) {
    std::stable_sort(f.begin(), f.end(), [](const Finding& a, const Finding& b) {
      return std::tie(a.pos.file, a.pos.line, a.pos.column) < std::tie(b.pos.file, b.pos.line, b.pos.column);
    });
    all.insert(all.end(), f.begin(), f.end());
  };

  for (const auto& file : o.files) {
    const std::string text = read_capped(file, kMaxDeploymentBytes, "deployment file");
    check_yaml_limits(text, file);
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
    inputs.push_back(s);
    finish_input(f);
  }

  for (std::size_t i = 0; i < o.commands.size(); ++i) {
    const std::string& c = o.commands[i];
    std::error_code ec;
    std::string text, origin;
    if (fs::is_regular_file(c, ec) || c.find_first_of(" \t\n") == std::string::npos) {
      if (!fs::exists(c, ec)) throw InputError(fmt::format("--command '{}': no such file, and not a command line", escape_control(c)));
      text = read_capped(c, 1u << 20, "launch script");
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
    inputs.push_back(s);
    finish_input(f);
  }

  for (const auto& m : o.manifests) {
    const std::string text = read_capped(m, kMaxDeploymentBytes, "manifest");
    std::vector<Finding> f;
    auto targets = parse_lws_manifest(cat, text, m, o.gpu, f);
    if (targets.empty() && f.empty())
      f.push_back({"manifest/structure", "error", "no LeaderWorkerSet (kind: LeaderWorkerSet) in this file", {m, 1, 1}});
    for (auto& t : targets) {
      t.deployment.engine_version = o.engine_version;
      json s;
      if (!t.deployment.model.empty()) check_target(cat, t, f, &s);
      s["replicas"] = t.replicas;
      s["group_size"] = t.group_size;
      s["gpus_per_pod"] = t.gpus_per_pod;
      inputs.push_back(s);
    }
    finish_input(f);
  }

  int errors = 0, warnings = 0, notes = 0;
  for (const auto& f : all) {
    if (f.severity == "error")
      ++errors;
    else if (f.severity == "warning")
      ++warnings;
    else
      ++notes;
  }
  const bool failed = errors > 0 || (o.strict && warnings > 0);
  Report r;
  r.exit_code = failed ? 1 : 0;
  const std::size_t n_inputs = inputs.size();
  const std::string summary =
      fmt::format("k3plan check: {} input{}, {} error{}, {} warning{}, {} note{}: {}{}", n_inputs, n_inputs == 1 ? "" : "s", errors,
                  errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s", notes, notes == 1 ? "" : "s", failed ? "FAILED" : "passed",
                  o.strict ? " (--strict: warnings fail)" : "");
  if (o.format_hint == "sarif") {
    r.data = sarif_log(all);
  } else {
    json fj = json::array();
    for (const auto& f : all)
      fj.push_back({{"rule", f.rule},
                    {"severity", f.severity},
                    {"message", f.message},
                    {"file", f.pos.file},
                    {"line", f.pos.line},
                    {"column", f.pos.column}});
    r.data = {{"passed", !failed}, {"strict", o.strict}, {"errors", errors}, {"warnings", warnings},
              {"notes", notes},    {"inputs", inputs},   {"findings", fj}};
  }
  if (o.format_hint == "csv" || o.format_hint == "md") {
    Table t{"Findings", {"file", "line", "column", "severity", "rule", "message"}, {}, {false, true, true, false, false, false}};
    for (const auto& f : all)
      t.rows.push_back(
          {f.pos.file, std::to_string(f.pos.line), std::to_string(f.pos.column), f.severity, f.rule, escape_control(f.message)});
    r.tables.push_back(t);
  }
  for (const auto& f : all) r.notes.push_back(finding_line(f));
  r.notes.push_back(summary);
  return r;
}

}  // namespace k3plan
