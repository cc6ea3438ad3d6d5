// The engines' argument tables (data/engines/<engine>-flags.yaml, embedded): reading, the release
// to window mapping, and the lookups of engine_flags.hpp. The file headers state the semantics;
// this reader follows them: `versions` = every release of the window accepts the flag, `partial`
// = only the releases listed, `choices_since` / `*_since` = values accepted from a release on.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <k3plan/budget.hpp>
#include <k3plan/compiled.hpp>
#include <k3plan/embedded.hpp>
#include <k3plan/engine_flags.hpp>
#include <k3plan/error.hpp>
#include <k3plan/number_text.hpp>
#include <k3plan/yaml_reader.hpp>
#include <map>
#include <regex>
#include <set>
#include <unordered_map>

namespace k3plan {

namespace {

// A release as the tables order them: numeric parts, then rcN < plain < postN.
struct Rel {
  std::vector<int> parts;
  int suffix_rank = 0;  // -1 rc, 0 none, 1 post
  int suffix_n = 0;
  bool ok = false;
};

Rel parse_rel(const std::string& s) {
  Rel r;
  std::size_t i = (!s.empty() && (s[0] == 'v' || s[0] == 'V')) ? 1 : 0;
  auto digit = [&](std::size_t k) { return k < s.size() && std::isdigit(static_cast<unsigned char>(s[k])); };
  while (digit(i)) {
    int v = 0;
    while (digit(i)) {
      v = v * 10 + (s[i] - '0');
      if (v > 100000) return Rel{};
      ++i;
    }
    r.parts.push_back(v);
    if (i < s.size() && s[i] == '.' && digit(i + 1))
      ++i;
    else
      break;
  }
  if (r.parts.empty()) return r;
  std::string rest = s.substr(i);
  if (!rest.empty() && rest[0] == '.') rest.erase(0, 1);
  auto number_after = [&](std::size_t k) {
    int n = 0;
    for (; k < rest.size() && std::isdigit(static_cast<unsigned char>(rest[k])) && n <= 100000; ++k) n = n * 10 + (rest[k] - '0');
    return n;
  };
  if (rest.empty()) {
    r.ok = true;
  } else if (rest.rfind("post", 0) == 0) {
    r.suffix_rank = 1;
    r.suffix_n = number_after(4);
    r.ok = true;
  } else if (rest.rfind("rc", 0) == 0) {
    r.suffix_rank = -1;
    r.suffix_n = number_after(2);
    r.ok = true;
  }
  return r;
}

int cmp(const Rel& a, const Rel& b) {
  const std::size_t n = std::max(a.parts.size(), b.parts.size());
  for (std::size_t i = 0; i < n; ++i) {
    const int x = i < a.parts.size() ? a.parts[i] : 0, y = i < b.parts.size() ? b.parts[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  if (a.suffix_rank != b.suffix_rank) return a.suffix_rank < b.suffix_rank ? -1 : 1;
  if (a.suffix_n != b.suffix_n) return a.suffix_n < b.suffix_n ? -1 : 1;
  return 0;
}

struct Range {
  Rel lo, hi;
};

struct Entry {
  std::string name;
  std::vector<std::string> aliases;
  bool takes_value = false;
  std::string type;
  std::set<std::string> choices;
  std::set<std::string> windows;                                    // `versions`
  std::map<std::string, std::vector<Range>> partial;                // window -> releases
  std::map<std::string, std::map<std::string, Rel>> choices_since;  // window -> value -> first release
  std::set<std::string> known_values;
  std::string nargs;
};

struct Registry {
  std::map<std::string, std::set<std::string>> safe;        // window -> values
  std::map<std::string, std::map<std::string, Rel>> since;  // window -> value -> first release
  std::map<std::string, std::map<std::string, std::string>> since_text;
};

struct Window {
  std::string id, first, last;
};

const char* registry_key(FlagRegistry r) {
  switch (r) {
    case FlagRegistry::tool_call_parser:
      return "tool_call_parser";
    case FlagRegistry::reasoning_parser:
      return "reasoning_parser";
    case FlagRegistry::kv_cache_dtype:
      return "kv_cache_dtype";
  }
  return "";
}

class Table final : public FlagTable {
 public:
  // read from the build-time compiled form (catalogue/k3plan/compiled.hpp); load() reads the YAML
  explicit Table(Engine e) : e_(e) {
    compiled::load_or_read(
        fmt::format("engines/{}-flags", to_string(e)), *this, [](Table& t) { t.load(); },
        [](Table& t) { return std::tie(t.ids_, t.windows_, t.entries_, t.by_flag_, t.regs_); });
  }

  Engine engine() const override { return e_; }
  const std::vector<std::string>& windows() const override { return ids_; }
  std::string window_range(const std::string& w) const override {
    for (const auto& x : windows_)
      if (x.id == w) return x.first == x.last ? x.first : fmt::format("{}-{}", x.first, x.last);
    return "";
  }

  FlagRelease resolve(const std::string& version) const override {
    FlagRelease r;
    r.engine = e_;
    r.asked = version;
    if (version.empty() || version == "latest") {
      r.window = ids_.back();
      return r;
    }
    for (const auto& w : windows_)
      if (w.id == version) {
        r.window = w.id;
        return r;
      }
    const Rel v = parse_rel(version);
    if (!v.ok) {
      r.note = fmt::format("'{}' is not a release number: {} flags not checked against a table", version, name());
      return r;
    }
    const Window* before = nullptr;  // the newest numbered window wholly older than v
    const Window* oldest = nullptr;
    for (const auto& w : windows_) {
      const Rel lo = parse_rel(w.first), hi = parse_rel(w.last);
      if (!lo.ok || !hi.ok) continue;  // "main"
      if (!oldest) oldest = &w;
      if (cmp(v, lo) >= 0 && cmp(v, hi) <= 0) {
        r.window = w.id;
        r.release = version;
        return r;
      }
      if (cmp(v, hi) > 0) before = &w;
    }
    const bool newest = before && before == last_numbered();
    if (newest && has_main()) {
      r.window = "main";
      r.note = fmt::format("{} {} is newer than the releases the flag table read (up to {}); checked against upstream main", name(),
                           version, before->last);
    } else if (before) {
      r.window = before->id;
      r.note = fmt::format("{} {} was not read for the flag table; checked against what every release of {} ({}) accepts", name(), version,
                           before->id, window_range(before->id));
    } else {
      r.note = fmt::format("{} {} is older than the releases the flag table read (from {}); flags not checked", name(), version,
                           oldest ? oldest->first : "?");
    }
    return r;
  }

  bool has_flag(const std::string& flag, const FlagRelease& r) const override {
    if (!r.known()) return true;
    return valid_entry(flag, r) != nullptr;
  }

  bool takes_value(const std::string& flag, const FlagRelease& r) const override {
    if (const Entry* e = valid_entry(flag, r)) return e->takes_value;
    // unknown to this release: answer as any release of the table does
    const auto it = by_flag_.find(flag);
    return it != by_flag_.end() && entries_[it->second.front()].takes_value;
  }

  bool accepts(const std::string& flag, const std::string& value, const FlagRelease& r) const override {
    if (!r.known()) return true;
    if (flag == "--tool-call-parser") return has_flag(flag, r) && in_registry(FlagRegistry::tool_call_parser, value, r);
    if (flag == "--reasoning-parser") return has_flag(flag, r) && in_registry(FlagRegistry::reasoning_parser, value, r);
    if (flag == "--kv-cache-dtype") return has_flag(flag, r) && in_registry(FlagRegistry::kv_cache_dtype, value, r);
    const auto it = by_flag_.find(flag);
    if (it == by_flag_.end()) return false;
    for (const auto i : it->second) {
      const Entry& e = entries_[i];
      if (!valid(e, r)) continue;
      if (!e.takes_value) {
        if (value.empty()) return true;
        continue;
      }
      const auto since = e.choices_since.find(r.window);
      if (!e.choices.empty() || since != e.choices_since.end()) {
        if (e.choices.count(value)) return true;
        if (since != e.choices_since.end()) {
          const auto s = since->second.find(value);
          if (s != since->second.end() && !r.release.empty() && cmp(parse_rel(r.release), s->second) >= 0) return true;
        }
        continue;
      }
      if (!e.known_values.empty()) {
        if (e.known_values.count(value)) return true;
        continue;
      }
      if (typed_ok(e.type, value)) return true;
    }
    return false;
  }

  bool in_registry(FlagRegistry reg, const std::string& value, const FlagRelease& r) const override {
    if (!r.known()) return true;
    const Registry& g = regs_[static_cast<std::size_t>(reg)];
    const auto s = g.safe.find(r.window);
    if (s != g.safe.end() && s->second.count(value)) return true;
    if (r.release.empty()) return false;
    const auto w = g.since.find(r.window);
    if (w == g.since.end()) return false;
    const auto v = w->second.find(value);
    return v != w->second.end() && cmp(parse_rel(r.release), v->second) >= 0;
  }

  std::vector<std::string> registry(FlagRegistry reg, const FlagRelease& r) const override {
    std::vector<std::string> out;
    if (!r.known()) return out;
    const Registry& g = regs_[static_cast<std::size_t>(reg)];
    if (const auto s = g.safe.find(r.window); s != g.safe.end()) out.assign(s->second.begin(), s->second.end());
    if (const auto w = g.since.find(r.window); w != g.since.end() && !r.release.empty())
      for (const auto& [v, rel] : w->second)
        if (cmp(parse_rel(r.release), rel) >= 0) out.push_back(v);
    std::sort(out.begin(), out.end());
    return out;
  }

  std::string first_release_with(FlagRegistry reg, const std::string& value) const override {
    const Registry& g = regs_[static_cast<std::size_t>(reg)];
    for (const auto& w : windows_) {
      if (const auto s = g.safe.find(w.id); s != g.safe.end() && s->second.count(value)) return w.first;
      if (const auto t = g.since_text.find(w.id); t != g.since_text.end())
        if (const auto v = t->second.find(value); v != t->second.end()) return v->second;
    }
    return "";
  }

 private:
  const char* name() const { return e_ == Engine::vllm ? "vLLM" : "SGLang"; }
  bool has_main() const { return std::find(ids_.begin(), ids_.end(), "main") != ids_.end(); }
  const Window* last_numbered() const {
    const Window* out = nullptr;
    for (const auto& w : windows_)
      if (parse_rel(w.first).ok && parse_rel(w.last).ok) out = &w;
    return out;
  }

  static bool typed_ok(const std::string& type, const std::string& v) {
    if (v.empty()) return false;
    if (type == "int") {
      std::size_t i = v[0] == '-' ? 1 : 0;
      if (i >= v.size()) return false;
      for (; i < v.size(); ++i)
        if (!std::isdigit(static_cast<unsigned char>(v[i]))) return false;
      return true;
    }
    if (type == "float") {
      return parse_real(v).has_value();
    }
    return true;
  }

  bool valid(const Entry& e, const FlagRelease& r) const {
    if (e.windows.count(r.window)) return true;
    if (r.release.empty()) return false;
    const auto p = e.partial.find(r.window);
    if (p == e.partial.end()) return false;
    const Rel v = parse_rel(r.release);
    for (const auto& rg : p->second)
      if (cmp(v, rg.lo) >= 0 && cmp(v, rg.hi) <= 0) return true;
    return false;
  }

  const Entry* valid_entry(const std::string& flag, const FlagRelease& r) const {
    const auto it = by_flag_.find(flag);
    if (it == by_flag_.end()) return nullptr;
    for (const auto i : it->second)
      if (valid(entries_[i], r)) return &entries_[i];
    return nullptr;
  }

  void load() {
    const std::string path = fmt::format("engines/{}-flags.yaml", to_string(e_));
    const EmbeddedFile* file = nullptr;
    for (const auto& f : embedded_files())
      if (path == f.path) file = &f;
    if (!file) throw InputError(fmt::format("data/{}: missing from the embedded catalogue", path));
    YamlReader rd("data/" + path);
    const YAML::Node root = rd.parse(std::string(file->text));
    rd.check_keys(root, {"versions", "windows", "flags", "registries"}, "");
    ids_ = rd.strings(root, "versions", "");
    if (ids_.empty()) rd.fail(root["versions"], "versions", "empty");
    const YAML::Node wn = root["windows"];
    for (const auto& id : ids_) {
      const YAML::Node w = wn[id];
      if (!w.IsDefined() || !w.IsMap()) rd.fail(wn, "windows." + id, "missing");
      windows_.push_back({id, rd.str(w, "first", "windows." + id, true), rd.str(w, "last", "windows." + id, true)});
    }
    auto known_window = [&](const YAML::Node& at, const std::string& w, const std::string& ctx) {
      if (std::find(ids_.begin(), ids_.end(), w) == ids_.end()) rd.fail(at, ctx, fmt::format("unknown window '{}'", w));
    };
    auto release = [&](const YAML::Node& at, const std::string& s, const std::string& ctx) {
      Rel r = parse_rel(s);
      if (!r.ok) rd.fail(at, ctx, fmt::format("'{}' is not a release number", s));
      return r;
    };
    const YAML::Node flags = root["flags"];
    rd.require_list(flags, "flags");
    std::size_t i = 0;
    for (const auto& n : flags) {
      const std::string ctx = fmt::format("flags[{}]", i++);
      rd.check_keys(n,
                    {"name", "aliases", "takes_value", "type", "choices", "versions", "partial", "choices_since", "deprecated", "nargs",
                     "known_values"},
                    ctx);
      Entry e;
      e.name = rd.str(n, "name", ctx, true);
      if (e.name.rfind("--", 0) != 0) rd.fail(n["name"], ctx + ".name", "expected --flag");
      e.aliases = rd.strings(n, "aliases", ctx);
      e.takes_value = rd.boolean(n, "takes_value", ctx, false);
      e.type = rd.str(n, "type", ctx, false);
      for (auto& c : rd.strings(n, "choices", ctx)) e.choices.insert(c);
      for (auto& c : rd.strings(n, "known_values", ctx)) e.known_values.insert(c);
      for (auto& w : rd.strings(n, "versions", ctx)) {
        known_window(n["versions"], w, ctx + ".versions");
        e.windows.insert(w);
      }
      if (rd.has(n, "nargs")) e.nargs = rd.str(n, "nargs", ctx, false);
      if (rd.has(n, "partial")) {
        for (const auto& kv : n["partial"]) {
          const std::string w = kv.first.as<std::string>();
          known_window(kv.first, w, ctx + ".partial");
          std::string text = kv.second.as<std::string>();
          std::size_t pos = 0;
          while (pos <= text.size()) {
            std::size_t comma = text.find(',', pos);
            if (comma == std::string::npos) comma = text.size();
            std::string part = text.substr(pos, comma - pos);
            part.erase(0, part.find_first_not_of(' '));
            part.erase(part.find_last_not_of(' ') + 1);
            const auto dots = part.find("..");
            const std::string lo = dots == std::string::npos ? part : part.substr(0, dots);
            const std::string hi = dots == std::string::npos ? part : part.substr(dots + 2);
            e.partial[w].push_back({release(kv.second, lo, ctx + ".partial"), release(kv.second, hi, ctx + ".partial")});
            pos = comma + 1;
          }
        }
      }
      if (rd.has(n, "choices_since"))
        for (const auto& kv : n["choices_since"]) {
          const std::string w = kv.first.as<std::string>();
          known_window(kv.first, w, ctx + ".choices_since");
          for (const auto& v : kv.second)
            e.choices_since[w][v.first.as<std::string>()] = release(v.second, v.second.as<std::string>(), ctx + ".choices_since");
        }
      const std::size_t idx = entries_.size();
      by_flag_[e.name].push_back(idx);
      for (const auto& a : e.aliases) by_flag_[a].push_back(idx);
      entries_.push_back(std::move(e));
    }
    const YAML::Node regs = root["registries"];
    rd.require_map(regs, "registries");
    for (FlagRegistry reg : {FlagRegistry::tool_call_parser, FlagRegistry::reasoning_parser, FlagRegistry::kv_cache_dtype}) {
      const std::string key = registry_key(reg);
      Registry& g = regs_[static_cast<std::size_t>(reg)];
      const YAML::Node safe = regs[key];
      if (!safe.IsDefined() || !safe.IsMap()) rd.fail(regs, "registries." + key, "missing");
      for (const auto& kv : safe) {
        const std::string w = kv.first.as<std::string>();
        known_window(kv.first, w, "registries." + key);
        for (const auto& v : kv.second) g.safe[w].insert(v.as<std::string>());
      }
      const YAML::Node since = regs[key + "_since"];
      if (since.IsDefined() && since.IsMap())
        for (const auto& kv : since) {
          const std::string w = kv.first.as<std::string>();
          known_window(kv.first, w, "registries." + key + "_since");
          for (const auto& v : kv.second) {
            const std::string value = v.first.as<std::string>();
            if (value.rfind("__", 0) == 0) continue;  // __first_release_with_flag__
            const std::string rel = v.second.as<std::string>();
            g.since[w][value] = release(v.second, rel, "registries." + key + "_since");
            g.since_text[w][value] = rel;
          }
        }
    }
  }

  Engine e_;
  std::vector<std::string> ids_;
  std::vector<Window> windows_;
  std::vector<Entry> entries_;
  std::unordered_map<std::string, std::vector<std::size_t>> by_flag_;
  Registry regs_[3];
};

}  // namespace

std::string FlagRelease::label() const {
  const char* n = engine == Engine::vllm ? "vLLM" : "SGLang";
  if (!release.empty()) return fmt::format("{} {}", n, release);
  if (window.empty()) return fmt::format("{} {}", n, asked);
  if (window == "main") return fmt::format("{} main", n);
  return fmt::format("{} {} (every release {})", n, window, flag_table(engine).window_range(window));
}

const FlagTable& flag_table(Engine e) {
  // each engine's table on its first use (a command for one engine reads one)
  if (e == Engine::vllm) {
    static const Table vllm(Engine::vllm);
    return vllm;
  }
  static const Table sglang(Engine::sglang);
  return sglang;
}

std::vector<std::string> unaccepted_flags(const std::vector<std::string>& argv, const FlagRelease& r) {
  std::vector<std::string> problems;
  const FlagTable& t = flag_table(r.engine);
  std::size_t i = 0;
  if (r.engine == Engine::vllm) {
    if (argv.size() < 3 || argv[0] != "vllm" || argv[1] != "serve") return {"not a `vllm serve MODEL` command"};
    i = 3;
  } else {
    if (argv.size() < 3 || argv[0] != "python3" || argv[1] != "-m" || argv[2] != "sglang.launch_server")
      return {"not a `python3 -m sglang.launch_server` command"};
    i = 3;
  }
  while (i < argv.size()) {
    const std::string& a = argv[i];
    if (a.rfind("--", 0) != 0) {
      problems.push_back(fmt::format("'{}': not an option (a value without its flag)", a));
      ++i;
      continue;
    }
    if (!t.has_flag(a, r)) {
      problems.push_back(fmt::format("{}: not a flag of {}", a, r.label()));
      ++i;
      if (t.takes_value(a, r) && i < argv.size() && argv[i].rfind("--", 0) != 0) ++i;
      continue;
    }
    if (!t.takes_value(a, r)) {
      if (!t.accepts(a, "", r)) problems.push_back(fmt::format("{}: not accepted without a value by {}", a, r.label()));
      ++i;
      continue;
    }
    if (i + 1 >= argv.size()) {
      problems.push_back(fmt::format("{}: missing its value", a));
      break;
    }
    const std::string& v = argv[i + 1];
    if (!t.accepts(a, v, r)) problems.push_back(fmt::format("{} {}: value not accepted by {}", a, v, r.label()));
    i += 2;
  }
  return problems;
}

KvDtypeArg engine_kv_dtype(const FlagRelease& r, const std::string& kv_dtype, const std::string& model_dtype) {
  const FlagTable& t = flag_table(r.engine);
  const bool vllm = r.engine == Engine::vllm;
  const char* engine = vllm ? "vLLM" : "SGLang";
  auto norm = [](std::string d) {
    if (d == "bfloat16") return std::string("bf16");
    if (d == "float16" || d == "half") return std::string("fp16");
    return d;
  };
  const std::string want = norm(kv_dtype), mdt = norm(model_dtype);
  // candidates in order of preference for each k3plan value
  std::vector<std::string> cands;
  if (want == "auto")
    cands = {"auto"};
  else if (want == "bf16" || want == "fp16") {
    if (want == mdt) return {"auto", ""};  // the engine's auto is the model dtype
    cands = want == "bf16" ? std::vector<std::string>{"bfloat16", "bf16"} : std::vector<std::string>{"float16", "fp16"};
  } else if (want == "fp8")
    cands = vllm ? std::vector<std::string>{"fp8", "fp8_e4m3"} : std::vector<std::string>{"fp8_e4m3"};
  else if (want == "fp4")
    cands = vllm ? std::vector<std::string>{"nvfp4"} : std::vector<std::string>{"nvfp4", "fp4_e2m1"};
  else
    cands = {kv_dtype};
  if (!r.known()) {
    // no table for this release: the names every release of the engine has used
    if (want == "bf16" || want == "fp16") return {"auto", ""};
    return {cands.front(), ""};
  }
  for (const auto& c : cands)
    if (t.in_registry(FlagRegistry::kv_cache_dtype, c, r)) return {c, ""};
  std::string from;
  for (const auto& c : cands) {
    from = t.first_release_with(FlagRegistry::kv_cache_dtype, c);
    if (!from.empty()) {
      from = fmt::format(" ({} is accepted from {} {})", c, engine, from);
      break;
    }
  }
  const auto accepted = t.registry(FlagRegistry::kv_cache_dtype, r);
  std::string why = (want == "bf16" || want == "fp16") ? fmt::format("the model's activations are {}, so {}'s auto is not {}, and ",
                                                                     model_dtype.empty() ? "?" : model_dtype, engine, want)
                                                       : std::string();
  return {"", fmt::format("--kv-dtype {}: {}{} has no --kv-cache-dtype for it{}; it accepts {}", kv_dtype, why, r.label(), from,
                          fmt::join(accepted, ", "))};
}

std::string serve_model_path(const Model& m, const std::string& spec) {
  // a local config.json: the directory the user gave (or the file's), never its _name_or_path
  if (!m.local_path.empty()) return m.local_path;
  if (!m.hf_repo.empty()) return m.hf_repo;
  if (spec.empty()) return m.id;
  const auto slash = spec.find_last_of('/');
  const std::string base = slash == std::string::npos ? spec : spec.substr(slash + 1);
  if (base.size() > 5 && base.substr(base.size() - 5) == ".json") return slash == std::string::npos ? "." : spec.substr(0, slash);
  return spec;
}

void keep_accepted(std::vector<std::string>& args, std::size_t from, const FlagRelease& r, std::vector<std::string>& notes) {
  if (!r.known()) return;
  const FlagTable& t = flag_table(r.engine);
  std::vector<std::string> out(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(std::min(from, args.size())));
  for (std::size_t i = from; i < args.size();) {
    const std::string& a = args[i];
    const bool value = t.takes_value(a, r) && i + 1 < args.size();
    const std::string v = value ? args[i + 1] : "";
    const std::size_t next = i + (value ? 2 : 1);
    if (!t.has_flag(a, r)) {
      notes.push_back(fmt::format("left out {}{}: not a flag of {}", a, value ? " " + v : "", r.label()));
    } else if (!t.accepts(a, v, r)) {
      notes.push_back(fmt::format("left out {} {}: {} does not accept that value", a, v, r.label()));
    } else {
      out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(next));
    }
    i = next;
  }
  args = std::move(out);
}

std::optional<int> limit_mm_images(const std::string& value) {
  static const std::regex kImageCount(R"((?:^|[{,\s])['"]?image['"]?\s*[:=]\s*(\d{1,6}))");
  std::smatch mt;
  if (!std::regex_search(value, mt, kImageCount)) return std::nullopt;
  return std::stoi(mt[1].str());
}

ServeArgs serve_args(const ServeRequest& q) {
  ServeArgs s;
  const EngineModel& em = *q.engine;
  const Engine e = em.engine();
  const Model& m = *q.model;
  s.release = flag_release(e, q.engine_version);
  if (!s.release.note.empty()) s.notes.push_back(s.release.note);
  const FlagTable& t = flag_table(e);

  KvDtypeArg kv = engine_kv_dtype(s.release, q.kv_dtype, m.dtype);
  if (!kv.error.empty()) s.error = kv.error;
  std::vector<std::string>& a = s.args;
  a = em.parallel_args(m, q.layout);
  for (auto& x : em.memory_args(q.defaults, q.context, q.max_running, kv.value.empty() ? "auto" : kv.value)) a.push_back(std::move(x));
  if (!kv.error.empty()) {
    // leave the dtype out rather than emit a value the engine refuses
    for (std::size_t i = 0; i + 1 < a.size(); ++i)
      if (a[i] == "--kv-cache-dtype") {
        a.erase(a.begin() + static_cast<std::ptrdiff_t>(i), a.begin() + static_cast<std::ptrdiff_t>(i + 2));
        break;
      }
  }
  if (e == Engine::sglang) {
    if (q.chunked_prefill_size) a.insert(a.end(), {"--chunked-prefill-size", std::to_string(*q.chunked_prefill_size)});
    if (q.cuda_graph_max_bs) a.insert(a.end(), {"--cuda-graph-max-bs", std::to_string(*q.cuda_graph_max_bs)});
    if (const EngineSettings* st = q.settings) {
      if (st->mamba_full_memory_ratio > 0)
        a.insert(a.end(), {"--mamba-full-memory-ratio", fmt::format("{:g}", st->mamba_full_memory_ratio)});
      if (st->max_mamba_cache_size > 0) a.insert(a.end(), {"--max-mamba-cache-size", std::to_string(st->max_mamba_cache_size)});
      if (!st->mamba_radix_cache_strategy.empty()) a.insert(a.end(), {"--mamba-radix-cache-strategy", st->mamba_radix_cache_strategy});
      if (st->disable_radix_cache) a.push_back("--disable-radix-cache");
      if (st->max_total_tokens > 0) a.insert(a.end(), {"--max-total-tokens", std::to_string(st->max_total_tokens)});
    }
  } else {
    if (q.max_num_batched_tokens) a.insert(a.end(), {"--max-num-batched-tokens", std::to_string(*q.max_num_batched_tokens)});
    if (q.settings && q.settings->prefix_caching >= 0)
      a.push_back(q.settings->prefix_caching == 1 ? "--enable-prefix-caching" : "--no-enable-prefix-caching");
    // JSON in the flags windows read (0.9 on: the dict-typed config argument); the key=value pairs
    // of the older argument parser before them
    if (q.settings && q.settings->mm_images_per_prompt > 0)
      a.insert(a.end(), {"--limit-mm-per-prompt", s.release.known() ? fmt::format("{{\"image\": {}}}", q.settings->mm_images_per_prompt)
                                                                    : fmt::format("image={}", q.settings->mm_images_per_prompt)});
  }
  std::vector<std::string> dropped;
  keep_accepted(a, 0, s.release, dropped);
  if (!dropped.empty() && s.error.empty())
    s.error = fmt::format("{} cannot run this layout as planned: {}", s.release.label(), fmt::join(dropped, "; "));
  for (auto& d : dropped) s.notes.push_back(std::move(d));
  if (q.refusal_only) return s;

  if (m.engine.trust_remote_code) {
    if (t.has_flag("--trust-remote-code", s.release))
      a.push_back("--trust-remote-code");
    else
      s.notes.push_back(fmt::format("left out --trust-remote-code: not a flag of {}", s.release.label()));
  }
  const ParserNames& p = model_parsers(m, e);
  auto parser = [&](const std::string& name, const char* flag, FlagRegistry reg) {
    if (name.empty()) return;
    if (!t.has_flag(flag, s.release)) {
      s.notes.push_back(fmt::format("left out {} {}: {} has no {}", flag, name, s.release.label(), flag));
      return;
    }
    if (!t.in_registry(reg, name, s.release)) {
      const std::string from = t.first_release_with(reg, name);
      s.notes.push_back(fmt::format("left out {} {}: not registered in {}{}", flag, name, s.release.label(),
                                    from.empty() ? "" : fmt::format(" (registered from {} on)", from)));
      return;
    }
    if (reg == FlagRegistry::tool_call_parser && e == Engine::vllm) {
      if (!t.has_flag("--enable-auto-tool-choice", s.release)) {
        s.notes.push_back(fmt::format("left out {} {}: {} has no --enable-auto-tool-choice", flag, name, s.release.label()));
        return;
      }
      a.push_back("--enable-auto-tool-choice");
    }
    a.insert(a.end(), {flag, name});
  };
  parser(p.tool_call_parser, "--tool-call-parser", FlagRegistry::tool_call_parser);
  parser(p.reasoning_parser, "--reasoning-parser", FlagRegistry::reasoning_parser);
  if (!q.served_model_name.empty()) {
    const std::size_t at = a.size();
    a.insert(a.end(), {"--served-model-name", q.served_model_name});
    keep_accepted(a, at, s.release, s.notes);
  }
  return s;
}

}  // namespace k3plan
