// Readers for the speed model's data: efficiency factors (data/perf/efficiency.yaml), measured
// benchmark rows (data/perf/measured-*.yaml) and service levels (data/perf/sla.yaml).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <k3plan/embedded.hpp>
#include <k3plan/error.hpp>
#include <k3plan/input_file.hpp>
#include <k3plan/perf_data.hpp>
#include <k3plan/yaml_reader.hpp>
#include <map>
#include <optional>
#include <sstream>

namespace k3plan {

namespace {

constexpr const char* kEfficiencyPath = "perf/efficiency.yaml";
constexpr const char* kSlaPath = "perf/sla.yaml";

std::string embedded_text(const char* path) {
  for (const auto& f : embedded_files())
    if (std::string(f.path) == path) return std::string(f.text);
  throw InputError(fmt::format("embedded data file {} is missing from this build", path));
}

// ---------------------------------------------------------------------------------------------
// efficiency factors

struct FactorSpec {
  const char* key;
  double PerfEfficiency::*field;
  double lo, hi;
};
const FactorSpec kFactors[] = {
    {"hbm", &PerfEfficiency::hbm, 0.05, 1.0},
    {"decode_mfu", &PerfEfficiency::decode_mfu, 0.01, 1.0},
    {"prefill_mfu", &PerfEfficiency::prefill_mfu, 0.01, 1.0},
    {"step_overhead_ms", &PerfEfficiency::step_overhead_ms, 0, 1000},
    {"layer_overhead_us", &PerfEfficiency::layer_overhead_us, 0, 10000},
    {"ttft_overhead_ms", &PerfEfficiency::ttft_overhead_ms, 0, 100000},
    {"comm_latency_us", &PerfEfficiency::comm_latency_us, 0, 10000},
    {"scaleout_latency_us", &PerfEfficiency::scaleout_latency_us, 0, 100000},
    {"comm_efficiency", &PerfEfficiency::comm_efficiency, 0.01, 1.0},
    {"scaleout_gb_s", &PerfEfficiency::scaleout_gb_s, 0.1, 10000},
    {"spec_acceptance", &PerfEfficiency::spec_acceptance, 0, 1},
};

struct ParsedFactors {
  std::map<std::string, Figure> figs;
  std::optional<Figure> spec_tokens;
};

ParsedFactors read_factors(const YamlReader& r, const YAML::Node& n, const std::string& ctx, const std::string& source) {
  ParsedFactors p;
  for (const auto& f : kFactors)
    if (r.has(n, f.key)) p.figs[f.key] = r.figure(n, f.key, ctx, true, source, f.lo, f.hi, nullptr, "");
  if (r.has(n, "spec_tokens")) p.spec_tokens = r.figure(n, "spec_tokens", ctx, true, source, 0, 16, nullptr, "");
  return p;
}

struct UsedFigure {
  Figure fig;
  bool from_defaults = false;
};

void apply(PerfEfficiency& e, const ParsedFactors& p, bool defaults, std::map<std::string, UsedFigure>& used,
           std::optional<UsedFigure>& used_spec) {
  for (const auto& f : kFactors) {
    const auto it = p.figs.find(f.key);
    if (it == p.figs.end()) continue;
    e.*(f.field) = it->second.value;
    used[f.key] = {it->second, defaults};
  }
  if (p.spec_tokens) {
    e.spec_tokens = static_cast<int>(p.spec_tokens->value);
    used_spec = UsedFigure{*p.spec_tokens, defaults};
  }
}

// Lines for the report: fitted factors on one line per source, assumed ones with their reason
// (factors every entry shares from `defaults` without the entry's name, so they list once).
std::vector<std::string> factor_lines(const std::string& key, const std::map<std::string, UsedFigure>& used,
                                      const std::optional<UsedFigure>& spec) {
  std::map<std::string, std::vector<std::string>> by_source;
  std::vector<std::string> out;
  auto one = [&](const std::string& name, const UsedFigure& u) {
    const Figure& f = u.fig;
    const std::string v = fmt::format("{} {:g}", name, f.value);
    if (f.assumed)
      out.push_back(u.from_defaults ? fmt::format("perf factor {} (every GPU family): assumed, {}", v, f.reason)
                                    : fmt::format("perf factor {} {}: assumed, {}", key, v, f.reason));
    else
      by_source[f.source].push_back(v);
  };
  for (const auto& f : kFactors) {
    const auto it = used.find(f.key);
    if (it != used.end()) one(f.key, it->second);
  }
  if (spec) one("spec_tokens", *spec);
  std::vector<std::string> head;
  for (const auto& [src, vals] : by_source) head.push_back(fmt::format("perf factors {} ({}): {}", key, src, fmt::join(vals, ", ")));
  head.insert(head.end(), out.begin(), out.end());
  return head;
}

}  // namespace

// through the one input boundary (regular files only, size cap, UTF-8): catalogue/input_file.hpp
std::string read_text_file(const std::string& path, const char* what) { return read_input_file(path, what); }

EfficiencyTable parse_efficiency(const std::string& text, const std::string& origin) {
  YamlReader r(origin);
  const YAML::Node root = r.parse(text);
  r.check_keys(root, {"families", "defaults", "entries"}, "");
  EfficiencyTable t;
  const YAML::Node fams = root["families"];
  r.require_list(fams, "families");
  for (const auto& f : fams) {
    r.check_keys(f, {"id", "gpus", "source"}, "families[]");
    t.families.push_back({r.str(f, "id", "families[]", true), r.strings(f, "gpus", "families[]")});
  }
  const YAML::Node defs = root["defaults"];
  r.check_keys(defs,
               {"source", "hbm", "decode_mfu", "prefill_mfu", "step_overhead_ms", "layer_overhead_us", "ttft_overhead_ms",
                "comm_latency_us", "scaleout_latency_us", "comm_efficiency", "scaleout_gb_s", "spec_tokens", "spec_acceptance"},
               "defaults");
  const ParsedFactors dflt = read_factors(r, defs, "defaults", r.str(defs, "source", "defaults", true));
  const YAML::Node ents = root["entries"];
  r.require_list(ents, "entries");
  for (const auto& n : ents) {
    r.check_keys(n,
                 {"family", "engine", "source", "rows", "hbm", "decode_mfu", "prefill_mfu", "step_overhead_ms", "layer_overhead_us",
                  "ttft_overhead_ms", "comm_latency_us", "scaleout_latency_us", "comm_efficiency", "scaleout_gb_s", "spec_tokens",
                  "spec_acceptance", "gpu", "precision", "versions"},
                 "entries[]");
    PerfEfficiency e;
    e.family = r.str(n, "family", "entries[]", true);
    e.engine = r.str(n, "engine", "entries[]", true);
    e.precision = r.str(n, "precision", "entries[]", false, "any");
    e.versions = r.str(n, "versions", "entries[]", false, "any");
    if (e.versions != "any" && e.versions.find("..") == std::string::npos)
      r.fail(n["versions"], "entries[].versions", "expected 'any' or FROM..TO (either side may be empty)");
    e.calibrated_on = r.str(n, "gpu", "entries[]", false);
    if (!e.calibrated_on.empty() && !r.has(n, "rows")) r.fail(n, "entries[].rows", "a fitted entry states how many rows fitted it");
    std::string key = e.family + "/" + e.engine;
    if (e.precision != "any") key += "/" + e.precision;
    if (e.versions != "any") key += "@" + e.versions;
    bool known = false;
    for (const auto& f : t.families) known = known || f.id == e.family;
    if (!known) r.fail(n["family"], "entries[].family", fmt::format("unknown family '{}'", e.family));
    const std::string src = r.str(n, "source", key, true);
    std::map<std::string, UsedFigure> used;
    std::optional<UsedFigure> used_spec;
    apply(e, dflt, true, used, used_spec);
    apply(e, read_factors(r, n, key, src), false, used, used_spec);
    e.assumptions = factor_lines(key, used, used_spec);
    for (const auto& x : t.entries)
      if (x.family == e.family && x.engine == e.engine && x.precision == e.precision && x.versions == e.versions)
        r.fail(n, key, "duplicate family/engine/precision/versions entry");
    t.entries.push_back(e);
  }
  return t;
}

std::string EfficiencyTable::family_of(const Gpu& gpu) const {
  for (const auto& f : families)
    for (const auto& g : f.gpus)
      if (g == gpu.id) return f.id;
  return "";
}

namespace {
// Dotted release numbers compared field by field as numbers ("0.5.12" > "0.5.9"); "" = unbounded.
int compare_versions(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    long x = 0, y = 0;
    while (i < a.size() && a[i] != '.') x = x * 10 + (std::isdigit(static_cast<unsigned char>(a[i])) ? a[i] - '0' : 0), ++i;
    while (j < b.size() && b[j] != '.') y = y * 10 + (std::isdigit(static_cast<unsigned char>(b[j])) ? b[j] - '0' : 0), ++j;
    if (x != y) return x < y ? -1 : 1;
    ++i, ++j;
  }
  return 0;
}
bool in_window(const std::string& window, const std::string& version) {
  if (window == "any" || version.empty()) return true;
  const auto dots = window.find("..");
  const std::string lo = window.substr(0, dots), hi = window.substr(dots + 2);
  return (lo.empty() || compare_versions(lo, version) <= 0) && (hi.empty() || compare_versions(version, hi) <= 0);
}
}  // namespace

PerfEfficiency EfficiencyTable::lookup(const Gpu& gpu, const std::string& engine, const std::string& precision,
                                       const std::string& version) const {
  const std::string fam = family_of(gpu);
  if (fam.empty())
    throw InputError(fmt::format(
        "GPU '{}' belongs to no family in data/perf/efficiency.yaml: add it to a family (or a new family with its factors)", gpu.id));
  // the most specific entry: exact precision over "any", a version window over "any"
  auto pick = [&](const std::string& eng) -> const PerfEfficiency* {
    const PerfEfficiency* best = nullptr;
    int best_score = -1;
    for (const auto& e : entries) {
      if (e.family != fam || e.engine != eng) continue;
      if (e.precision != "any" && e.precision != precision) continue;
      if (!in_window(e.versions, version)) continue;
      const int score = (e.precision != "any" ? 2 : 0) + (e.versions != "any" && !version.empty() ? 1 : 0);
      if (score > best_score) {
        best = &e;
        best_score = score;
      }
    }
    return best;
  };
  if (const PerfEfficiency* e = pick(engine)) return *e;
  if (const PerfEfficiency* e = pick("sglang")) {
    PerfEfficiency x = *e;
    x.assumptions.insert(x.assumptions.begin(),
                         fmt::format("perf factors: no {} entry for {}: the {}/sglang factors are used", engine, fam, fam));
    return x;
  }
  throw InputError(fmt::format("data/perf/efficiency.yaml: no factors for family '{}'{}", fam,
                               precision.empty() ? "" : fmt::format(" at precision {}", precision)));
}

const EfficiencyTable& embedded_efficiency() {
  static const EfficiencyTable t = parse_efficiency(embedded_text(kEfficiencyPath), std::string("embedded data/") + kEfficiencyPath);
  return t;
}

std::vector<MeasuredRow> parse_measured(const std::string& text, const std::string& origin) {
  YamlReader r(origin);
  const YAML::Node root = r.parse(text);
  r.check_keys(root, {"source", "rows"}, "");
  const YAML::Node rows = root["rows"];
  r.require_list(rows, "rows");
  std::vector<MeasuredRow> out;
  for (const auto& n : rows) {
    r.check_keys(n, {"gpu",      "engine",  "precision", "spec",    "tp",     "ep",      "dpa",    "gpus",    "isl",
                     "osl",      "conc",    "date",      "tput",    "input",  "output",  "ttft_s", "tpot_ms", "e2e_s",
                     "kv_dtype", "exclude", "framework", "prefill", "decode", "run_url", "image"},
                 "rows[]");
    MeasuredRow m;
    const std::string c = "rows[]";
    m.gpu = r.str(n, "gpu", c, true);
    m.engine = r.str(n, "engine", c, true);
    m.framework = r.str(n, "framework", c, false);
    m.precision = r.str(n, "precision", c, true);
    m.spec = r.str(n, "spec", c, false, "none");
    m.disagg = r.has(n, "prefill") || r.has(n, "decode");
    if (m.disagg) {
      for (const char* k : {"prefill", "decode"})
        if (!r.has(n, k))
          r.fail(n, std::string("rows[].") + k, fmt::format("a disaggregated row gives both prefill and decode; {} is missing", k));
      for (const char* k : {"tp", "ep", "dpa"})
        if (r.has(n, k)) r.fail(n[k], std::string("rows[].") + k, "a disaggregated row gives its layout per side (prefill / decode)");
      auto side = [&](const char* k, MeasuredSide& s) {
        const YAML::Node x = n[k];
        const std::string sc = std::string("rows[].") + k;
        r.require_map(x, sc);
        r.check_keys(x, {"tp", "ep", "dpa", "workers", "gpus"}, sc);
        s.tp = static_cast<int>(r.integer(x, "tp", sc, true, 1, 1, 1024));
        s.ep = static_cast<int>(r.integer(x, "ep", sc, false, 1, 1, 1024));
        s.dp_attention = r.integer(x, "dpa", sc, false, 0, 0, 1) != 0;
        s.workers = static_cast<int>(r.integer(x, "workers", sc, true, 1, 1, 4096));
        s.gpus = static_cast<int>(r.integer(x, "gpus", sc, true, 1, 1, 1 << 16));
      };
      side("prefill", m.prefill);
      side("decode", m.decode);
    } else {
      m.tp = static_cast<int>(r.integer(n, "tp", c, true, 1, 1, 1024));
      m.ep = static_cast<int>(r.integer(n, "ep", c, false, 1, 1, 1024));
      m.dp_attention = r.integer(n, "dpa", c, false, 0, 0, 1) != 0;
    }
    m.gpus = static_cast<int>(r.integer(n, "gpus", c, true, 1, 1, 1 << 16));
    m.isl = r.number(n, "isl", c, true, 0, 1, 1e7);
    m.osl = r.number(n, "osl", c, true, 0, 1, 1e7);
    m.conc = static_cast<int>(r.integer(n, "conc", c, true, 1, 1, 1 << 20));
    m.date = r.str(n, "date", c, false);
    m.image = r.str(n, "image", c, false);
    m.tput_total = r.number(n, "tput", c, true, 0, 0, 1e9);
    m.tput_input = r.number(n, "input", c, false, 0, 0, 1e9);
    m.tput_output = r.number(n, "output", c, false, 0, 0, 1e9);
    m.ttft_s = r.number(n, "ttft_s", c, false, 0, 0, 1e6);
    m.tpot_ms = r.number(n, "tpot_ms", c, false, 0, 0, 1e6);
    m.e2e_s = r.number(n, "e2e_s", c, false, 0, 0, 1e7);
    m.kv_dtype = r.str(n, "kv_dtype", c, false, "auto");
    m.exclude = r.str(n, "exclude", c, false);
    m.run_url = r.str(n, "run_url", c, false);
    auto lay = [](int tp, int ep, bool dpa) { return fmt::format("tp{}ep{}{}", tp, ep, dpa ? "dpa" : ""); };
    if (m.disagg)
      m.id = fmt::format("{}/{}/{}/{}/p{}x{}-d{}x{}/{}-{}/c{}", m.gpu, m.framework.empty() ? m.engine : m.framework, m.precision, m.spec,
                         m.prefill.workers, lay(m.prefill.tp, m.prefill.ep, m.prefill.dp_attention), m.decode.workers,
                         lay(m.decode.tp, m.decode.ep, m.decode.dp_attention), m.isl, m.osl, m.conc);
    else
      m.id = fmt::format("{}/{}/{}/{}/{}/{}-{}/c{}", m.gpu, m.engine, m.precision, m.spec, lay(m.tp, m.ep, m.dp_attention), m.isl, m.osl,
                         m.conc);
    out.push_back(m);
  }
  return out;
}

std::vector<PerfBand> parse_accuracy(const std::string& text, const std::string& origin) {
  YamlReader r(origin);
  const YAML::Node root = r.parse(text);
  r.check_keys(root, {"source", "bands"}, "");
  const YAML::Node bands = root["bands"];
  r.require_list(bands, "bands");
  std::vector<PerfBand> out;
  const std::string c = "bands[]";
  for (const auto& n : bands) {
    r.check_keys(n,
                 {"family", "engine", "validation", "rows", "tput_median_pct", "tput_p90_pct", "tpot_median_pct", "tpot_p90_pct",
                  "ttft_median_pct", "ttft_p90_pct"},
                 c);
    PerfBand b;
    b.family = r.str(n, "family", c, true);
    b.engine = r.str(n, "engine", c, true);
    b.validation = r.str(n, "validation", c, true);
    if (b.validation != "leave-one-shape-out" && b.validation != "leave-one-family-out")
      r.fail(n["validation"], "bands[].validation", "expected leave-one-shape-out or leave-one-family-out");
    b.rows = static_cast<int>(r.integer(n, "rows", c, true, 0, 1, 1 << 20));
    b.tput_median_pct = r.number(n, "tput_median_pct", c, true, 0, 0, 1e4);
    b.tput_p90_pct = r.number(n, "tput_p90_pct", c, true, 0, 0, 1e4);
    b.tpot_median_pct = r.number(n, "tpot_median_pct", c, true, 0, 0, 1e4);
    b.tpot_p90_pct = r.number(n, "tpot_p90_pct", c, true, 0, 0, 1e4);
    b.ttft_median_pct = r.number(n, "ttft_median_pct", c, true, 0, 0, 1e4);
    b.ttft_p90_pct = r.number(n, "ttft_p90_pct", c, true, 0, 0, 1e4);
    out.push_back(b);
  }
  return out;
}

const std::vector<PerfBand>& embedded_accuracy() {
  static const std::vector<PerfBand> b = parse_accuracy(embedded_text("perf/accuracy.yaml"), "embedded data/perf/accuracy.yaml");
  return b;
}

const PerfBand* band_for(const std::vector<PerfBand>& bands, const std::string& family, const std::string& engine, bool calibrated) {
  const std::string fam = calibrated ? family : "any";
  for (const std::string& e : {engine, std::string("sglang")})
    for (const auto& b : bands)
      if (b.family == fam && b.engine == e) return &b;
  return nullptr;
}

std::vector<MeasuredRow> embedded_measured(std::vector<std::string>* sources, bool disaggregated) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& f : embedded_files()) {
    const std::string p(f.path);
    if (p.rfind("perf/measured-", 0) == 0) files.emplace_back(p, std::string(f.text));
  }
  std::sort(files.begin(), files.end());
  std::vector<MeasuredRow> out;
  for (const auto& [p, text] : files) {
    bool any = false;
    for (auto& x : parse_measured(text, "embedded data/" + p))
      if (x.disagg == disaggregated) {
        out.push_back(std::move(x));
        any = true;
      }
    if (sources && any) sources->push_back("data/" + p);
  }
  return out;
}

Sla parse_sla(const std::string& text, const std::string& origin) {
  YamlReader r(origin);
  const YAML::Node root = r.parse(text);
  r.check_keys(root, {"source", "ttft_tiers", "itl_ms"}, "");
  Sla s;
  s.source = r.str(root, "source", "", true);
  const YAML::Node tiers = root["ttft_tiers"];
  if (tiers.IsDefined()) {
    r.require_list(tiers, "ttft_tiers");
    for (const auto& t : tiers) {
      r.check_keys(t, {"max_prompt_tokens", "ttft_ms"}, "ttft_tiers[]");
      s.ttft_tiers.push_back({r.number(t, "max_prompt_tokens", "ttft_tiers[]", true, 0, 1, 1e9),
                              r.figure(t, "ttft_ms", "ttft_tiers[]", true, s.source, 1, 1e8, nullptr, "")});
    }
    std::sort(s.ttft_tiers.begin(), s.ttft_tiers.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  const YAML::Node itl = root["itl_ms"];
  if (itl.IsDefined()) {
    r.require_map(itl, "itl_ms");
    for (const auto& kv : itl) {
      const std::string w = kv.first.as<std::string>();
      s.itl[w] = r.figure(itl, w.c_str(), "itl_ms", true, s.source, 0.1, 1e6, nullptr, "");
    }
  }
  return s;
}

Sla embedded_sla() { return parse_sla(embedded_text(kSlaPath), std::string("embedded data/") + kSlaPath); }

}  // namespace k3plan
