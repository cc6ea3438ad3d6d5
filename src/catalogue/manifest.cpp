// LeaderWorkerSet manifests read back for `k3plan check --manifest` (manifest.hpp).
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <k3plan/ascii.hpp>
#include <k3plan/error.hpp>
#include <k3plan/input_file.hpp>
#include <k3plan/input_limits.hpp>
#include <k3plan/manifest.hpp>
#include <k3plan/number_text.hpp>
#include <k3plan/yaml_reader.hpp>
#include <map>
#include <optional>
#include <sstream>

namespace k3plan {

namespace {

std::size_t leading_spaces(const std::string& line) {
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  return i;
}


bool contains(const std::string& s, const char* needle) { return s.find(needle) != std::string::npos; }

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
// The manifest's lines while it is parsed: yaml-cpp marks count bytes, findings (and SARIF,
// columnKind unicodeCodePoints) count code points.
thread_local const std::vector<std::string>* t_manifest_lines = nullptr;

int cp_column(int file_line0, int byte_column) {
  if (!t_manifest_lines || file_line0 < 0 || static_cast<std::size_t>(file_line0) >= t_manifest_lines->size()) return byte_column;
  return code_point_column((*t_manifest_lines)[static_cast<std::size_t>(file_line0)], byte_column);
}

SourcePos node_pos(const std::string& file, const YAML::Node& n) {
  if (!n.IsDefined()) return {file, t_doc_line + 1, 1};
  return {file, t_doc_line + n.Mark().line + 1, cp_column(t_doc_line + n.Mark().line, n.Mark().column + 1)};
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
  m.column = cp_column(t_doc_line + n.Mark().line, n.Mark().column + 1);
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
    } else if (s[i] == '$' && i + 1 < s.size() && (ascii_is_alpha(s[i + 1]) || s[i + 1] == '_')) {
      std::size_t end = i + 1;
      while (end < s.size() && (ascii_is_alnum(s[end]) || s[end] == '_')) ++end;
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
      const auto v = parse_real(g.Scalar());
      if (v && std::isfinite(*v)) return *v;
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
    const std::string raw = ascii_lower(v.Scalar());
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

// The kubelet's expansion of command/args (k8s.io/kubernetes third_party/forked/golang/expansion):
// "$$" is a literal '$', $(VAR) is the container variable when defined, anything else stays.
std::string kubelet_expand(const std::string& s, const std::map<std::string, std::string>& env) {
  std::string o;
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] == '$' && i + 1 < s.size() && s[i + 1] == '$') {
      o += '$';
      i += 2;
      continue;
    }
    if (s[i] == '$' && i + 1 < s.size() && s[i + 1] == '(') {
      const auto end = s.find(')', i + 2);
      if (end != std::string::npos) {
        const auto it = env.find(s.substr(i + 2, end - i - 2));
        if (it != env.end()) {
          o += it->second;
          i = end + 1;
          continue;
        }
      }
    }
    o += s[i++];
  }
  return o;
}

// $((EXPR)) of a fixed launch wrapper: integers, variables of `env`, + - * and parentheses.
// Returns nullopt for anything else.
std::optional<long long> shell_arith(const std::string& e, const std::map<std::string, std::string>& env) {
  std::size_t i = 0;
  std::function<std::optional<long long>()> sum;
  auto skip = [&] {
    while (i < e.size() && e[i] == ' ') ++i;
  };
  auto atom = [&]() -> std::optional<long long> {
    skip();
    if (i < e.size() && e[i] == '(') {
      ++i;
      auto v = sum();
      skip();
      if (!v || i >= e.size() || e[i] != ')') return std::nullopt;
      ++i;
      return v;
    }
    std::size_t j = i;
    if (j < e.size() && e[j] == '$') ++j;
    std::size_t k = j;
    while (k < e.size() && (ascii_is_alnum(e[k]) || e[k] == '_')) ++k;
    if (k == j) return std::nullopt;
    const std::string w = e.substr(j, k - j);
    i = k;
    if (std::isdigit(static_cast<unsigned char>(w[0]))) {
      for (char ch : w)
        if (!std::isdigit(static_cast<unsigned char>(ch))) return std::nullopt;
      return w.size() > 9 ? std::nullopt : std::optional<long long>(std::stoll(w));
    }
    const auto it = env.find(w);
    if (it == env.end()) return std::nullopt;
    try {
      return std::stoll(it->second);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  };
  auto product = [&]() -> std::optional<long long> {
    auto v = atom();
    for (skip(); v && i < e.size() && e[i] == '*'; skip()) {
      ++i;
      const auto w = atom();
      if (!w) return std::nullopt;
      *v *= *w;
    }
    return v;
  };
  sum = [&]() -> std::optional<long long> {
    auto v = product();
    for (skip(); v && i < e.size() && (e[i] == '+' || e[i] == '-'); skip()) {
      const char op = e[i++];
      const auto w = product();
      if (!w) return std::nullopt;
      *v = op == '+' ? *v + *w : *v - *w;
    }
    return v;
  };
  const auto v = sum();
  skip();
  if (!v || i != e.size()) return std::nullopt;
  return v;
}

// The words a shell would pass for a fixed wrapper script, with "$@" replaced by `rest` and
// $((...)) / $VAR / ${VAR} evaluated from `env`: enough for `exec "$@" --flag "$((LWS_WORKER_INDEX * 4))"`.
std::vector<std::string> wrapper_words(const std::string& script, const std::vector<std::string>& rest,
                                       const std::map<std::string, std::string>& env) {
  std::vector<std::string> out;
  std::string cur;
  bool have = false;
  for (std::size_t i = 0; i < script.size();) {
    const char c = script[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (have) out.push_back(cur);
      cur.clear();
      have = false;
      ++i;
      continue;
    }
    if (script.compare(i, 4, "\"$@\"") == 0) {
      out.insert(out.end(), rest.begin(), rest.end());
      i += 4;
      continue;
    }
    if (c == '"' || c == '\'') {
      const auto end = script.find(c, i + 1);
      if (end == std::string::npos) return {};
      std::string inner = script.substr(i + 1, end - i - 1);
      if (c == '"') inner = expand_vars(inner, env);
      cur += inner;
      have = true;
      i = end + 1;
      continue;
    }
    if (script.compare(i, 3, "$((") == 0) {
      const auto end = script.find("))", i + 3);
      if (end == std::string::npos) return {};
      cur += script.substr(i, end + 2 - i);
      have = true;
      i = end + 2;
      continue;
    }
    cur += c;
    have = true;
    ++i;
  }
  if (have) out.push_back(cur);
  for (auto& w : out) {
    // arithmetic inside a word
    for (std::size_t p = w.find("$(("); p != std::string::npos; p = w.find("$((", p + 1)) {
      const auto end = w.find("))", p + 3);
      if (end == std::string::npos) break;
      const auto v = shell_arith(w.substr(p + 3, end - p - 3), env);
      if (!v) break;
      w.replace(p, end + 2 - p, std::to_string(*v));
    }
    w = expand_vars(w, env);
  }
  if (!out.empty() && out.front() == "exec") out.erase(out.begin());
  return out;
}

// The argv a container runs, after the kubelet's expansion (exec form), through a fixed
// `sh -c 'exec "$@" ...' NAME ARGS...` wrapper, or the words of a `sh -c SCRIPT` that runs the
// engine (line continuations dropped; LWS variables expanded); empty for another kind of script.
std::vector<std::string> container_argv(const YAML::Node& c, const std::map<std::string, std::string>& env) {
  std::vector<std::string> parts;
  for (const char* key : {"command", "args"}) {
    const YAML::Node n = child(c, key);
    if (is_seq(n))
      for (const auto& e : n)
        if (is_scalar(e)) parts.push_back(kubelet_expand(e.Scalar(), env));
  }
  if (parts.size() >= 3 && (parts[0] == "sh" || parts[0] == "/bin/sh" || parts[0] == "bash" || parts[0] == "/bin/bash") &&
      parts[1] == "-c") {
    if (parts[2].find("\"$@\"") != std::string::npos) {
      if (parts.size() < 4) return {};
      return wrapper_words(parts[2], std::vector<std::string>(parts.begin() + 4, parts.end()), env);
    }
    if (!runs_engine(parts[2])) return {};
    auto words = wrapper_words(parts[2], {}, env);
    words.erase(std::remove(words.begin(), words.end(), "\\"), words.end());
    return words;
  }
  return parts;
}

std::string flag_value(const std::vector<std::string>& argv, const std::string& flag) {
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == flag && i + 1 < argv.size()) return argv[i + 1];
    if (argv[i].rfind(flag + "=", 0) == 0) return argv[i].substr(flag.size() + 1);
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

std::vector<LwsGroup> parse_lws_manifest(const Catalogue& cat, const std::string& text, const std::string& origin, const std::string& gpu,
                                         std::vector<Finding>& findings) {
  check_yaml_limits(text, origin);
  std::vector<std::string> lines;
  {
    std::istringstream in(text);
    std::string l;
    while (std::getline(in, l)) lines.push_back(l);
  }
  struct Lines {  // code-point columns for this parse, restored however it exits
    explicit Lines(const std::vector<std::string>* l) { t_manifest_lines = l; }
    ~Lines() { t_manifest_lines = nullptr; }
  } use_lines(&lines);
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
      YamlReader(origin, static_cast<int>(starts[k])).check_tree(docs.back());  // duplicate keys, complex keys, alias bombs
    } catch (const YAML::Exception& e) {
      throw InputError(
          fmt::format("{}:{}:{}: malformed YAML: {}", origin, static_cast<int>(starts[k]) + e.mark.line + 1, e.mark.column + 1, e.msg));
    }
  }
  struct DocLine {  // restores the document offset however this function exits
    ~DocLine() { t_doc_line = 0; }
  } restore;
  std::vector<LwsGroup> out;
  auto error = [&](const std::string& rule, const std::string& msg, const YAML::Node& n) {
    findings.push_back({rule, "error", msg, node_pos(origin, n)});
  };
  auto count = [&](const YAML::Node& parent, const char* key, const std::string& field) -> int {
    const YAML::Node n = child(parent, key);
    if (!defined(n) || n.IsNull()) return 1;
    const auto parsed = n.IsScalar() ? parse_real(n.Scalar()) : std::nullopt;
    const double v = parsed.value_or(0);
    if (!parsed || !std::isfinite(v) || v < 1 || v > 10000 || v != std::floor(v)) {
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
      LwsGroup t;
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
      // every worker's rank from its LWS_WORKER_INDEX (LWS injects 1..size-1 on the workers)
      if (has_leader && t.group_size > 1) {
        const auto wc = find_engine_container(origin, lines, child(worker, "spec"), lws_env);
        for (int i = 1; wc && i < std::min(t.group_size, 1025); ++i) {
          const std::map<std::string, std::string> env{{"LWS_GROUP_SIZE", std::to_string(t.group_size)},
                                                       {"LWS_WORKER_INDEX", std::to_string(i)},
                                                       {"LWS_LEADER_ADDRESS", "lws-leader"}};
          const auto argv = container_argv(wc->container, env);
          if (argv.empty()) break;  // a script of another shape: not evaluated
          const std::string dp_local = flag_value(argv, "--data-parallel-size-local");
          const std::string start = flag_value(argv, "--data-parallel-start-rank");
          const std::string node_rank = flag_value(argv, "--node-rank");
          // a value left as a variable this reader does not know (the pod's own env, a shell
          // variable) is not evaluated; a missing start rank is (it defaults to the leader's 0)
          auto numeric = [](const std::string& v) { return !v.empty() && std::all_of(v.begin(), v.end(), ascii_is_digit); };
          if ((!start.empty() && !numeric(start)) || (!node_rank.empty() && !numeric(node_rank))) break;
          std::string problem;
          if (!dp_local.empty()) {
            long long l = 0;
            try {
              l = std::stoll(dp_local);
            } catch (const std::exception&) {
              break;  // command/value reports it
            }
            const std::string want = std::to_string(l * i);
            if (start != want)
              problem = fmt::format(
                  "worker {} of the group runs --data-parallel-start-rank {}; it needs {} (LWS_WORKER_INDEX x --data-parallel-size-local "
                  "{}), e.g. sh -c 'exec \"$@\" --data-parallel-start-rank \"$((LWS_WORKER_INDEX * {}))\"'",
                  i, start.empty() ? "(none: 0, the leader's)" : start, want, l, l);
          } else if (!node_rank.empty() && node_rank != std::to_string(i)) {
            problem = fmt::format("worker {} of the group runs --node-rank {}; it needs {} (use $(LWS_WORKER_INDEX))", i, node_rank, i);
          }
          if (!problem.empty()) {
            error("manifest/worker-rank", problem, wc->container);
            break;
          }
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
      // the engine release the image is tagged with (vllm/vllm-openai:v0.10.1.1,
      // lmsysorg/sglang:v0.5.8.post1-cu129); check decides whether the engine models cover it
      if (const YAML::Node img = child(ec->container, "image"); is_scalar(img)) {
        const std::string& ref = img.Scalar();
        const auto colon = ref.rfind(':');
        if (colon != std::string::npos && colon + 2 < ref.size() && ref[colon + 1] == 'v' &&
            std::isdigit(static_cast<unsigned char>(ref[colon + 2]))) {
          t.image_release = ref.substr(colon + 2);
          if (const auto dash = t.image_release.find('-'); dash != std::string::npos) t.image_release.resize(dash);
          d.where["engine_version"] = node_pos(origin, img);
        }
      }
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

}  // namespace k3plan
