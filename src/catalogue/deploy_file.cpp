// Deployment files and engine command lines -> Deployment (with positions for findings).
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <k3plan/ascii.hpp>
#include <k3plan/deploy.hpp>
#include <k3plan/engine_version.hpp>
#include <k3plan/error.hpp>
#include <k3plan/input_file.hpp>
#include <k3plan/number_text.hpp>
#include <k3plan/units.hpp>
#include <k3plan/yaml_reader.hpp>
#include <set>

namespace k3plan {

SourcePos Deployment::pos(const std::string& field) const {
  const auto it = where.find(field);
  if (it != where.end()) return it->second;
  return {file, 1, 1};
}

std::string shell_quote(const std::string& s) {
  // single quotes make everything literal; a single quote itself becomes '\''
  std::string o = "'";
  for (char c : s) {
    if (c == '\'')
      o += "'\\''";
    else
      o += c;
  }
  return o + "'";
}

std::string shell_word(const std::string& s) {
  if (s.empty()) return "''";
  for (const char c : s)
    if (!(ascii_is_alnum(c) || c == '_' || c == '-' || c == '.' || c == '/' || c == ':' || c == ',' || c == '+' || c == '@' || c == '%' ||
          c == '='))
      return shell_quote(s);
  return s;
}

std::string yaml_quote(const std::string& s) {
  std::string o = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        o += "\\\"";
        break;
      case '\\':
        o += "\\\\";
        break;
      case '\n':
        o += "\\n";
        break;
      case '\r':
        o += "\\r";
        break;
      case '\t':
        o += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f)
          o += fmt::format("\\x{:02x}", c);
        else
          o += static_cast<char>(c);
    }
  }
  return o + "\"";
}

namespace {

// yaml-cpp marks count bytes; findings (and SARIF, columnKind unicodeCodePoints) count code points.
thread_local const std::vector<std::string>* t_lines = nullptr;

SourcePos at(const std::string& file, const YAML::Node& n) {
  if (!n.IsDefined() || n.Mark().is_null()) return {file, 1, 1};
  int column = n.Mark().column + 1;
  if (t_lines && n.Mark().line >= 0 && static_cast<std::size_t>(n.Mark().line) < t_lines->size())
    column = code_point_column((*t_lines)[static_cast<std::size_t>(n.Mark().line)], column);
  return {file, n.Mark().line + 1, column};
}

// The engines' layer-split text ("19,21,21,19": get_pp_indices reads int(x) for each comma-separated
// entry); nullopt when an entry is not a whole number from 0 to 100,000.
std::optional<std::vector<int>> parse_layer_partition(const std::string& text) {
  std::vector<int> out;
  std::size_t at = 0;
  while (true) {
    const std::size_t comma = text.find(',', at);
    std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (item.empty() || item.size() > 6 || item.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    const int v = std::stoi(item);
    if (v > 100000) return std::nullopt;
    out.push_back(v);
    if (comma == std::string::npos) break;
    at = comma + 1;
    if (out.size() > 4096) return std::nullopt;
  }
  return out;
}

struct Reader {
  const std::string& file;
  std::vector<Finding>& findings;
  Deployment& d;

  void error(const std::string& rule, const std::string& msg, const YAML::Node& n) {
    findings.push_back({rule, "error", msg, at(file, n)});
  }

  void keys(const YAML::Node& map, std::initializer_list<const char*> allowed, const std::string& ctx) {
    std::vector<std::string> names(allowed.begin(), allowed.end());
    std::set<std::string> seen;
    for (const auto& kv : map) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
      const std::string field = ctx.empty() ? key : ctx + "." + key;
      if (!seen.insert(key).second) error("schema/duplicate-key", fmt::format("duplicate key '{}'", field), kv.first);
      if (std::find(names.begin(), names.end(), key) == names.end()) {
        const auto hint = closest_match(key, names);
        error("schema/unknown-key", fmt::format("unknown key '{}'{}", field, hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint)),
              kv.first);
      }
    }
  }

  std::optional<double> num(const YAML::Node& map, const char* key, const std::string& field, double lo, double hi, bool integer) {
    const YAML::Node n = map[key];
    if (!n.IsDefined() || n.IsNull()) return std::nullopt;
    d.where[field] = at(file, n);
    if (!n.IsScalar()) {
      error("schema/type", fmt::format("'{}' must be a number", field), n);
      return std::nullopt;
    }
    const auto parsed = parse_yaml_real(n.Scalar());  // not as<double>(): iostreams follow the global locale
    if (!parsed) {
      error("schema/type", fmt::format("'{}' must be a number, got '{}'", field, n.Scalar()), n);
      return std::nullopt;
    }
    const double v = *parsed;
    if (!std::isfinite(v) || v < lo || v > hi) {
      error("schema/range", fmt::format("'{}' = {} is out of range [{}, {}]", field, n.Scalar(), lo, hi), n);
      return std::nullopt;
    }
    if (integer && v != std::floor(v)) {
      error("schema/type", fmt::format("'{}' must be a whole number", field), n);
      return std::nullopt;
    }
    return v;
  }

  std::optional<std::string> str(const YAML::Node& map, const char* key, const std::string& field) {
    const YAML::Node n = map[key];
    if (!n.IsDefined() || n.IsNull()) return std::nullopt;
    d.where[field] = at(file, n);
    if (!n.IsScalar()) {
      error("schema/type", fmt::format("'{}' must be a string", field), n);
      return std::nullopt;
    }
    return n.Scalar();
  }

  std::optional<bool> boolean(const YAML::Node& map, const char* key, const std::string& field) {
    const YAML::Node n = map[key];
    if (!n.IsDefined() || n.IsNull()) return std::nullopt;
    d.where[field] = at(file, n);
    try {
      if (n.IsScalar()) return n.as<bool>();
    } catch (const YAML::Exception&) {
    }
    error("schema/type", fmt::format("'{}' must be true or false", field), n);
    return std::nullopt;
  }

  std::int64_t context(const YAML::Node& map) {
    const YAML::Node n = map["context"];
    if (!n.IsDefined() || n.IsNull()) return 0;
    d.where["context"] = at(file, n);
    if (!n.IsScalar()) {
      error("schema/type", "'context' must be a token count", n);
      return 0;
    }
    try {
      return parse_context(n.Scalar(), "context");
    } catch (const InputError& e) {
      error("schema/type", e.what(), n);
      return 0;
    }
  }
};

}  // namespace

Deployment parse_deployment(const std::string& text, const std::string& origin, std::vector<Finding>& findings) {
  YamlReader yr(origin);
  const YAML::Node root = yr.parse(text, true);  // duplicate keys: reported below as schema/duplicate-key
  std::vector<std::string> lines;
  for (std::size_t b = 0, e = 0; b <= text.size(); b = e + 1) {
    e = text.find('\n', b);
    if (e == std::string::npos) e = text.size();
    lines.push_back(text.substr(b, e - b));
  }
  struct Lines {  // code-point columns for this parse, restored however it exits
    explicit Lines(const std::vector<std::string>* l) { t_lines = l; }
    ~Lines() { t_lines = nullptr; }
  } use_lines(&lines);
  if (!root.IsMap()) throw InputError(fmt::format("{}: expected a mapping (a deployment file; see examples/)", origin));
  Deployment d;
  d.file = origin;
  Reader r{origin, findings, d};
  r.keys(root,
         {"model", "gpu", "gpus", "nodes", "engine", "engine_version", "parallel", "context", "users", "kv_dtype", "engine_args", "serve",
          "budget"},
         "");
  if (auto v = r.str(root, "model", "model"))
    d.model = *v;
  else
    r.error("schema/missing", "missing required field 'model'", root);
  if (auto v = r.str(root, "gpu", "gpu"))
    d.gpu = *v;
  else
    r.error("schema/missing", "missing required field 'gpu'", root);
  if (auto v = r.num(root, "gpus", "gpus", 1, 100000, true)) d.gpus = static_cast<int>(*v);
  if (auto v = r.num(root, "nodes", "nodes", 1, 10000, true)) d.nodes = static_cast<int>(*v);
  if (d.gpus == 0 && d.nodes == 0 && !root["gpus"].IsDefined() && !root["nodes"].IsDefined())
    r.error("schema/missing", "missing 'gpus' (or 'nodes')", root);
  if (auto v = r.str(root, "engine", "engine")) {
    if (*v == "sglang")
      d.engine = Engine::sglang;
    else if (*v == "vllm")
      d.engine = Engine::vllm;
    else {
      const auto hint = closest_match(*v, {"sglang", "vllm"});
      r.error("schema/enum",
              fmt::format("unknown engine '{}'{}", *v, hint.empty() ? " (use sglang or vllm)" : fmt::format("; did you mean '{}'?", hint)),
              root["engine"]);
    }
  }
  if (auto v = r.str(root, "engine_version", "engine_version")) {
    d.engine_version = *v;
    try {
      engine_version_for(d.engine, d.engine_version);
    } catch (const InputError& e) {
      r.error("schema/enum", e.what(), root["engine_version"]);
    }
  }
  if (root["parallel"].IsDefined()) {
    const YAML::Node p = root["parallel"];
    d.where["parallel"] = at(origin, p);
    if (!p.IsMap()) {
      r.error("schema/type", "'parallel' must be a mapping {tp, ep, dp, pp, dp_attention}", p);
    } else {
      r.keys(p, {"tp", "ep", "dp", "pp", "dp_attention", "dcp", "pp_layer_partition"}, "parallel");
      d.layout_given = true;
      if (auto v = r.num(p, "tp", "parallel.tp", 1, 4096, true)) d.layout.tp = static_cast<int>(*v);
      if (auto v = r.num(p, "ep", "parallel.ep", 1, 4096, true)) d.layout.ep = static_cast<int>(*v);
      if (auto v = r.num(p, "dp", "parallel.dp", 1, 4096, true)) d.layout.dp = static_cast<int>(*v);
      if (auto v = r.num(p, "pp", "parallel.pp", 1, 4096, true)) d.layout.pp = static_cast<int>(*v);
      if (auto v = r.boolean(p, "dp_attention", "parallel.dp_attention")) d.layout.dp_attention = *v;
      if (auto v = r.num(p, "dcp", "parallel.dcp", 1, 4096, true)) d.layout.dcp = static_cast<int>(*v);
      // decoder layers per pipeline stage (the engine's VLLM_ / SGLANG_PP_LAYER_PARTITION): a list
      // [19, 21, 21, 19] or the engine's own text "19,21,21,19"
      if (const YAML::Node n = p["pp_layer_partition"]; n.IsDefined() && !n.IsNull()) {
        d.where["parallel.pp_layer_partition"] = at(origin, n);
        std::string split;
        if (n.IsSequence()) {
          for (const auto& x : n) split += (split.empty() ? "" : ",") + (x.IsScalar() ? x.Scalar() : std::string("?"));
        } else if (n.IsScalar()) {
          split = n.Scalar();
        }
        if (const auto parts = parse_layer_partition(split))
          d.pp_layer_partition = *parts;
        else
          r.error("schema/type", "'parallel.pp_layer_partition' must be whole numbers of layers per pipeline stage, e.g. [19, 21, 21, 19]", n);
      }
    }
  }
  // the split gives the stage count when `pp` is left out (the engines count its entries)
  if (!d.pp_layer_partition.empty() && !d.where.count("parallel.pp")) d.layout.pp = static_cast<int>(d.pp_layer_partition.size());
  d.context = r.context(root);
  if (auto v = r.num(root, "users", "users", 1, 1e7, true)) d.users = static_cast<std::int64_t>(*v);
  if (auto v = r.str(root, "kv_dtype", "kv_dtype")) d.kv_dtype = *v;
  if (root["engine_args"].IsDefined()) {
    const YAML::Node e = root["engine_args"];
    if (!e.IsMap()) {
      r.error("schema/type", "'engine_args' must be a mapping", e);
    } else {
      r.keys(e,
             {"mem_fraction_static", "gpu_memory_utilization", "chunked_prefill_size", "max_num_batched_tokens", "max_num_seqs",
              "cuda_graph_max_bs", "max_running_requests"},
             "engine_args");
      d.mem_fraction_static = r.num(e, "mem_fraction_static", "engine_args.mem_fraction_static", 0.01, 0.999, false);
      d.gpu_memory_utilization = r.num(e, "gpu_memory_utilization", "engine_args.gpu_memory_utilization", 0.01, 1.0, false);
      if (auto v = r.num(e, "chunked_prefill_size", "engine_args.chunked_prefill_size", 1, 1 << 24, true))
        d.chunked_prefill_size = static_cast<std::int64_t>(*v);
      if (auto v = r.num(e, "max_num_batched_tokens", "engine_args.max_num_batched_tokens", 1, 1 << 24, true))
        d.max_num_batched_tokens = static_cast<std::int64_t>(*v);
      if (auto v = r.num(e, "max_num_seqs", "engine_args.max_num_seqs", 1, 1 << 20, true)) d.max_num_seqs = static_cast<std::int64_t>(*v);
      if (auto v = r.num(e, "max_running_requests", "engine_args.max_running_requests", 1, 1 << 20, true))
        d.max_num_seqs = static_cast<std::int64_t>(*v);
      if (auto v = r.num(e, "cuda_graph_max_bs", "engine_args.cuda_graph_max_bs", 1, 65536, true))
        d.cuda_graph_max_bs = static_cast<int>(*v);
    }
  }
  if (root["serve"].IsDefined()) {
    const YAML::Node s = root["serve"];
    if (!s.IsMap()) {
      r.error("schema/type", "'serve' must be a mapping", s);
    } else {
      r.keys(s, {"host", "port", "model_path", "served_model_name", "head_address"}, "serve");
      if (auto v = r.str(s, "host", "serve.host")) d.host = *v;
      if (auto v = r.num(s, "port", "serve.port", 1, 65535, true)) d.port = static_cast<int>(*v);
      if (auto v = r.str(s, "model_path", "serve.model_path")) d.model_path = *v;
      if (auto v = r.str(s, "served_model_name", "serve.served_model_name")) d.served_model_name = *v;
      if (auto v = r.str(s, "head_address", "serve.head_address")) d.head_address = *v;
    }
  }
  if (root["budget"].IsDefined()) {
    const YAML::Node b = root["budget"];
    if (!b.IsMap()) {
      r.error("schema/type", "'budget' must be a mapping", b);
    } else {
      r.keys(b, {"usd_per_month_max", "usd_per_gpu_hour"}, "budget");
      d.usd_per_month_max = r.num(b, "usd_per_month_max", "budget.usd_per_month_max", 0, 1e12, false);
      d.usd_per_gpu_hour = r.num(b, "usd_per_gpu_hour", "budget.usd_per_gpu_hour", 0.001, 1e4, false);
    }
  }
  return d;
}

namespace {

struct Token {
  std::string text;
  int line = 1, column = 1;
};

// POSIX-shell-like word splitting: quotes, backslash escapes, backslash-newline continuations,
// comments. No expansion: `$(...)` stays literal text. Columns count code points (as SARIF's
// columnKind says); an unterminated quote is unreadable input, located at the opening quote.
std::vector<Token> split_words(const std::string& s, const std::string& origin) {
  std::vector<Token> out;
  Token cur;
  bool in_word = false;
  int line = 1, col = 1;
  std::size_t i = 0;
  auto advance = [&](char c) {
    if (c == '\n') {
      ++line;
      col = 1;
    } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {  // UTF-8 continuation bytes take no column
      ++col;
    }
  };
  auto unterminated = [&](char quote, int at_line, int at_col) {
    throw InputError(fmt::format("{}:{}:{}: unterminated {} quote", origin, at_line, at_col, quote == '\'' ? "single" : "double"));
  };
  auto start = [&]() {
    if (!in_word) {
      cur = Token{"", line, col};
      in_word = true;
    }
  };
  auto finish = [&]() {
    if (in_word) out.push_back(cur);
    in_word = false;
  };
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\\' && i + 1 < s.size() && s[i + 1] == '\n') {
      advance(c);
      advance('\n');
      i += 2;
      continue;
    }
    if (!in_word && c == '#') {
      while (i < s.size() && s[i] != '\n') advance(s[i++]);
      continue;
    }
    if (c == '\n' || c == ';') {
      finish();
      out.push_back(Token{"\n", line, col});
      advance(c);
      ++i;
      continue;
    }
    if (ascii_is_space(c)) {
      finish();
      advance(c);
      ++i;
      continue;
    }
    start();
    if (c == '\'') {
      const int ql = line, qc = col;
      advance(c);
      ++i;
      while (i < s.size() && s[i] != '\'') {
        cur.text += s[i];
        advance(s[i++]);
      }
      if (i >= s.size()) unterminated(c, ql, qc);
      advance(s[i++]);
      continue;
    }
    if (c == '"') {
      const int ql = line, qc = col;
      advance(c);
      ++i;
      while (i < s.size() && s[i] != '"') {
        if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == '"' || s[i + 1] == '\\' || s[i + 1] == '$' || s[i + 1] == '`')) {
          advance(s[i++]);
        }
        cur.text += s[i];
        advance(s[i++]);
      }
      if (i >= s.size()) unterminated(c, ql, qc);
      advance(s[i++]);
      continue;
    }
    if (c == '\\' && i + 1 < s.size()) {
      advance(c);
      ++i;
    }
    cur.text += s[i];
    advance(s[i++]);
  }
  finish();
  return out;
}

}  // namespace

Deployment parse_launch_command(const std::string& text, const std::string& origin, std::vector<Finding>& findings) {
  if (text.size() > (1u << 20)) throw InputError(fmt::format("{}: command line longer than 1 MiB", origin));
  check_text(text, origin, "command line");  // NUL bytes, invalid UTF-8
  const auto words = split_words(text, origin);
  // find the engine invocation: `vllm serve` or `-m sglang.launch_server`
  Deployment d;
  d.file = origin;
  std::size_t i = 0, begin = words.size();
  for (; i < words.size(); ++i) {
    if (words[i].text == "vllm" && i + 1 < words.size() && words[i + 1].text == "serve") {
      d.engine = Engine::vllm;
      begin = i + 2;
      break;
    }
    if (words[i].text == "vllm.entrypoints.openai.api_server") {  // `python3 -m vllm.entrypoints.openai.api_server --model M`
      d.engine = Engine::vllm;
      begin = i + 1;
      break;
    }
    if (words[i].text == "sglang.launch_server" || words[i].text == "sglang_router.launch_server") {
      d.engine = Engine::sglang;
      begin = i + 1;
      break;
    }
  }
  if (begin >= words.size() && begin == words.size() && i == words.size())
    throw InputError(fmt::format("{}: no `vllm serve` or `python3 -m sglang.launch_server` command found", origin));
  auto pos = [&](const Token& t) { return SourcePos{origin, t.line, t.column}; };
  auto number = [&](const Token& flag, const std::string& v, double lo, double hi) -> std::optional<double> {
    const auto parsed = parse_real(v);
    const double x = parsed.value_or(0);
    if (!parsed || !std::isfinite(x) || x < lo || x > hi) {
      findings.push_back({"command/value", "error", fmt::format("{} {}: expected a number in [{}, {}]", flag.text, v, lo, hi), pos(flag)});
      return std::nullopt;
    }
    return x;
  };
  // environment assignments before the engine (`VLLM_PP_LAYER_PARTITION=19,21,21,19 vllm serve`,
  // or an `export` line of a script): the manual layer split; whether the name is the one this
  // engine reads is the check rules' question (engine models)
  for (std::size_t k = 0; k < i && k < words.size(); ++k) {
    const std::string& w = words[k].text;
    const auto eq = w.find('=');
    if (eq == std::string::npos || eq < 19 || w.compare(eq - 19, 19, "_PP_LAYER_PARTITION") != 0) continue;
    d.pp_layer_partition_env = w.substr(0, eq);
    d.where["parallel.pp_layer_partition"] = pos(words[k]);
    if (const auto parts = parse_layer_partition(w.substr(eq + 1)))
      d.pp_layer_partition = *parts;
    else
      findings.push_back({"command/value", "error",
                          fmt::format("{}: expected whole numbers of layers per pipeline stage, e.g. 19,21,21,19", w), pos(words[k])});
  }
  bool ep_enabled = false;
  int ep_size = 0;
  d.layout_given = true;
  for (std::size_t k = begin; k < words.size(); ++k) {
    const Token& t = words[k];
    if (t.text == "\n") break;
    std::string flag = t.text, value;
    const auto eq = flag.find('=');
    bool has_inline = false;
    if (flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_inline = true;
    }
    if (flag.rfind("-", 0) == 0)  // --max_model_len == --max-model-len; a positional model path keeps its underscores
      for (auto& c : flag)
        if (c == '_') c = '-';
    auto take = [&]() -> std::string {
      if (has_inline) return value;
      if (k + 1 < words.size() && words[k + 1].text != "\n") return words[++k].text;
      findings.push_back({"command/value", "error", fmt::format("{} needs a value", flag), pos(t)});
      return "";
    };
    const Token ft{flag, t.line, t.column};
    if (flag.rfind("-", 0) != 0) {  // positional: vLLM's model
      if (d.engine == Engine::vllm && d.model_path.empty()) {
        d.model_path = flag;
        d.where["model"] = pos(t);
      }
      continue;
    }
    if (flag == "--model-path" || flag == "--model") {
      d.model_path = take();
      d.where["model"] = pos(t);
    } else if (flag == "--tp-size" || flag == "--tp" || flag == "--tensor-parallel-size" || flag == "-tp") {
      if (auto v = number(ft, take(), 1, 4096)) d.layout.tp = static_cast<int>(*v);
      d.where["parallel.tp"] = pos(t);
    } else if (flag == "--ep-size" || flag == "--ep" || flag == "--expert-parallel-size") {
      if (auto v = number(ft, take(), 1, 4096)) ep_size = static_cast<int>(*v);
      d.where["parallel.ep"] = pos(t);
    } else if (flag == "--dp-size" || flag == "--dp" || flag == "--data-parallel-size" || flag == "-dp") {
      if (auto v = number(ft, take(), 1, 4096)) d.layout.dp = static_cast<int>(*v);
      d.where["parallel.dp"] = pos(t);
    } else if (flag == "--pp-size" || flag == "--pp" || flag == "--pipeline-parallel-size" || flag == "-pp") {
      if (auto v = number(ft, take(), 1, 4096)) d.layout.pp = static_cast<int>(*v);
      d.where["parallel.pp"] = pos(t);
    } else if (flag == "--dcp-size" || flag == "--decode-context-parallel-size" || flag == "-dcp") {
      if (auto v = number(ft, take(), 1, 4096)) d.layout.dcp = static_cast<int>(*v);
      d.where["parallel.dcp"] = pos(t);
    } else if (flag == "--enable-dp-attention") {
      d.layout.dp_attention = true;
      d.where["parallel.dp_attention"] = pos(t);
    } else if (flag == "--enable-expert-parallel" || flag == "-ep") {
      ep_enabled = true;
      d.where["parallel.ep"] = pos(t);
    } else if (flag == "--mem-fraction-static") {
      d.mem_fraction_static = number(ft, take(), 0.01, 0.999);
      d.where["engine_args.mem_fraction_static"] = pos(t);
    } else if (flag == "--gpu-memory-utilization") {
      d.gpu_memory_utilization = number(ft, take(), 0.01, 1.0);
      d.where["engine_args.gpu_memory_utilization"] = pos(t);
    } else if (flag == "--context-length" || flag == "--max-model-len") {
      const std::string v = take();
      try {
        d.context = parse_context(v, flag);
      } catch (const InputError& e) {
        findings.push_back({"command/value", "error", e.what(), pos(t)});
      }
      d.where["context"] = pos(t);
    } else if (flag == "--max-running-requests" || flag == "--max-num-seqs") {
      if (auto v = number(ft, take(), 1, 1 << 20)) {
        d.max_num_seqs = static_cast<std::int64_t>(*v);
        d.users = *d.max_num_seqs;
      }
      d.where["engine_args.max_num_seqs"] = pos(t);
      d.where["users"] = pos(t);
    } else if (flag == "--max-num-batched-tokens" || flag == "--chunked-prefill-size") {
      if (auto v = number(ft, take(), 1, 1 << 24)) d.max_num_batched_tokens = static_cast<std::int64_t>(*v);
      d.where["engine_args.max_num_batched_tokens"] = pos(t);
    } else if (flag == "--cuda-graph-max-bs") {
      if (auto v = number(ft, take(), 1, 65536)) d.cuda_graph_max_bs = static_cast<int>(*v);
      d.where["engine_args.cuda_graph_max_bs"] = pos(t);
    } else if (flag == "--kv-cache-dtype") {
      d.kv_dtype = take();
      d.where["kv_dtype"] = pos(t);
    } else if (flag == "--nnodes") {
      if (auto v = number(ft, take(), 1, 10000)) d.nodes = static_cast<int>(*v);
      d.where["nodes"] = pos(t);
    } else if (flag == "--host") {
      d.host = take();
    } else if (flag == "--port") {
      if (auto v = number(ft, take(), 1, 65535)) d.port = static_cast<int>(*v);
    } else if (flag == "--trust-remote-code") {
      d.trust_remote_code = true;
    } else if (flag == "--tool-call-parser") {
      d.tool_call_parser = take();
      d.where["tool_call_parser"] = pos(t);
    } else if (flag == "--reasoning-parser") {
      d.reasoning_parser = take();
      d.where["reasoning_parser"] = pos(t);
    } else if (flag == "--served-model-name") {
      d.served_model_name = take();
    } else if (flag == "--dist-init-addr" || flag == "--master-addr") {
      d.head_address = take();
    } else if (!has_inline && k + 1 < words.size() && words[k + 1].text != "\n" && words[k + 1].text.rfind("-", 0) != 0) {
      ++k;  // an unknown flag with a value: skip the value
    }
  }
  if (d.engine == Engine::vllm)
    d.layout.ep = ep_enabled ? d.layout.tp * d.layout.dp : 1;
  else
    d.layout.ep = ep_size > 0 ? ep_size : 1;
  if (d.model_path.empty())
    findings.push_back({"command/model", "error", "no model given (--model-path / positional model)", {origin, 1, 1}});
  d.model = d.model_path;
  if (d.trust_remote_code == std::nullopt) d.trust_remote_code = false;
  return d;
}

}  // namespace k3plan
