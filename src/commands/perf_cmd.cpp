// `k3plan perf`, `k3plan plan` and `k3plan perf-validate`: speed of a deployment from the
// calculator in calc/perf.cpp with the factors of data/perf/efficiency.yaml, the cheapest
// deployment that meets a service level, and the accuracy table against measured InferenceX rows.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <k3plan/budget.hpp>
#include <k3plan/embedded.hpp>
#include <k3plan/engine_flags.hpp>
#include <k3plan/error.hpp>
#include <k3plan/params.hpp>
#include <k3plan/perf_cmd.hpp>
#include <k3plan/units.hpp>
#include <map>
#include <set>
#include <sstream>

#include <k3plan/yaml_reader.hpp>
#include "common.hpp"

namespace k3plan {

namespace {

constexpr const char* kEfficiencyPath = "perf/efficiency.yaml";
constexpr const char* kMeasuredPath = "perf/measured-dsr1.yaml";
constexpr const char* kSlaPath = "perf/sla.yaml";

std::string embedded_text(const char* path) {
  for (const auto& f : embedded_files())
    if (std::string(f.path) == path) return std::string(f.text);
  throw InputError(fmt::format("embedded data file {} is missing from this build", path));
}

std::string read_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{} {}: cannot read", what, path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string fmt_num(double v) {
  if (!std::isfinite(v)) return "-";
  const double a = std::abs(v);
  if (a >= 1000) return fmt_int(v);
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
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

EfficiencyTable parse_efficiency(const std::string& text, const std::string& origin) {
  YamlReader r(origin);
  const YAML::Node root = r.parse(text);
  r.check_keys(root, {"families", "defaults", "entries"}, "");
  EfficiencyTable t;
  const YAML::Node fams = root["families"];
  if (!fams.IsSequence()) r.fail(fams, "families", "expected a list");
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
  if (!ents.IsSequence()) r.fail(ents, "entries", "expected a list");
  for (const auto& n : ents) {
    r.check_keys(n,
                 {"family", "engine", "source", "rows", "hbm", "decode_mfu", "prefill_mfu", "step_overhead_ms", "layer_overhead_us",
                  "ttft_overhead_ms", "comm_latency_us", "scaleout_latency_us", "comm_efficiency", "scaleout_gb_s", "spec_tokens",
                  "spec_acceptance", "borrowed_from", "reason"},
                 "entries[]");
    PerfEfficiency e;
    e.family = r.str(n, "family", "entries[]", true);
    e.engine = r.str(n, "engine", "entries[]", true);
    const std::string key = e.family + "/" + e.engine;
    bool known = false;
    for (const auto& f : t.families) known = known || f.id == e.family;
    if (!known) r.fail(n["family"], "entries[].family", fmt::format("unknown family '{}'", e.family));
    const std::string src = r.str(n, "source", key, true);
    std::map<std::string, UsedFigure> used;
    std::optional<UsedFigure> used_spec;
    apply(e, dflt, true, used, used_spec);
    apply(e, read_factors(r, n, key, src), false, used, used_spec);
    e.assumptions = factor_lines(key, used, used_spec);
    if (r.has(n, "borrowed_from"))
      e.assumptions.insert(e.assumptions.begin(), fmt::format("perf factors {}: no measured rows; taken from {} ({})", key,
                                                              r.str(n, "borrowed_from", key, true), r.str(n, "reason", key, true)));
    for (const auto& x : t.entries)
      if (x.family == e.family && x.engine == e.engine) r.fail(n, key, "duplicate family/engine entry");
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

PerfEfficiency EfficiencyTable::lookup(const Gpu& gpu, const std::string& engine) const {
  const std::string fam = family_of(gpu);
  if (fam.empty())
    throw InputError(fmt::format(
        "GPU '{}' belongs to no family in data/perf/efficiency.yaml: add it to a family (or a new family with its factors)", gpu.id));
  for (const auto& e : entries)
    if (e.family == fam && e.engine == engine) return e;
  for (const auto& e : entries)
    if (e.family == fam && e.engine == "sglang") {
      PerfEfficiency x = e;
      x.assumptions.insert(x.assumptions.begin(),
                           fmt::format("perf factors: no {} entry for {}: the {}/sglang factors are used", engine, fam, fam));
      return x;
    }
  throw InputError(fmt::format("data/perf/efficiency.yaml: no factors for family '{}'", fam));
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
  if (!rows.IsSequence()) r.fail(rows, "rows", "expected a list");
  std::vector<MeasuredRow> out;
  for (const auto& n : rows) {
    r.check_keys(n, {"gpu",  "engine", "precision", "spec",  "tp",     "ep",     "dpa",     "gpus",  "isl",      "osl",
                     "conc", "date",   "tput",      "input", "output", "ttft_s", "tpot_ms", "e2e_s", "kv_dtype", "exclude"},
                 "rows[]");
    MeasuredRow m;
    const std::string c = "rows[]";
    m.gpu = r.str(n, "gpu", c, true);
    m.engine = r.str(n, "engine", c, true);
    m.precision = r.str(n, "precision", c, true);
    m.spec = r.str(n, "spec", c, false, "none");
    m.tp = static_cast<int>(r.integer(n, "tp", c, true, 1, 1, 1024));
    m.ep = static_cast<int>(r.integer(n, "ep", c, false, 1, 1, 1024));
    m.dp_attention = r.integer(n, "dpa", c, false, 0, 0, 1) != 0;
    m.gpus = static_cast<int>(r.integer(n, "gpus", c, true, 1, 1, 4096));
    m.isl = r.number(n, "isl", c, true, 0, 1, 1e7);
    m.osl = r.number(n, "osl", c, true, 0, 1, 1e7);
    m.conc = static_cast<int>(r.integer(n, "conc", c, true, 1, 1, 1 << 20));
    m.date = r.str(n, "date", c, false);
    m.tput_total = r.number(n, "tput", c, true, 0, 0, 1e9);
    m.tput_input = r.number(n, "input", c, false, 0, 0, 1e9);
    m.tput_output = r.number(n, "output", c, false, 0, 0, 1e9);
    m.ttft_s = r.number(n, "ttft_s", c, false, 0, 0, 1e6);
    m.tpot_ms = r.number(n, "tpot_ms", c, false, 0, 0, 1e6);
    m.e2e_s = r.number(n, "e2e_s", c, false, 0, 0, 1e7);
    m.kv_dtype = r.str(n, "kv_dtype", c, false, "auto");
    m.exclude = r.str(n, "exclude", c, false);
    m.id = fmt::format("{}/{}/{}/{}/tp{}ep{}{}/{}-{}/c{}", m.gpu, m.engine, m.precision, m.spec, m.tp, m.ep, m.dp_attention ? "dpa" : "",
                       m.isl, m.osl, m.conc);
    out.push_back(m);
  }
  return out;
}

namespace {

// ---------------------------------------------------------------------------------------------
// shared helpers

Engine layout_engine(const std::string& engine) {
  if (engine == "vllm") return Engine::vllm;
  if (engine == "sglang" || engine == "trt" || engine == "atom") return Engine::sglang;
  const auto hint = closest_match(engine, {"sglang", "vllm", "trt", "atom"});
  throw InputError(fmt::format("unknown engine '{}'{}", engine,
                               hint.empty() ? " (use sglang, vllm, trt or atom)" : fmt::format("; did you mean '{}'?", hint)));
}

// The engine's batch-token limit per prefill step (the size chunked prefill cuts prompts into).
std::int64_t default_chunk(const Gpu& g, const std::string& engine) {
  if (engine == "vllm") return vllm_default_max_num_batched_tokens(g);
  if (engine == "trt") return 8192;  // TensorRT-LLM max_num_tokens default
  return sglang_default_chunked_prefill(g);
}

// Memory for a load: one request of ISL + OSL tokens must fit (weights, engine reserve, the KV of
// one full request) and the KV pool caps the sequences that run at once. The engines hand out KV
// as tokens are produced, so the cap is taken at the average context a running request holds
// (ISL + OSL / 2, scaled), not at its final length.
struct MemCheck {
  FitResult full;                // at ISL + OSL for `users` (its flags)
  std::int64_t max_running = 0;  // sequences the pool holds at the average context
  bool fits = false;
  std::vector<std::string> reasons;
};
MemCheck memory_check(const Model& m, const Gpu& g, const Layout& l, const EngineSettings& s, double isl, double osl, double scale,
                      int users) {
  MemCheck c;
  c.full = evaluate_fit(m, g, l, s, static_cast<std::int64_t>(std::ceil(isl + osl)), std::max(1, users));
  for (const auto& x : c.full.reasons)
    if (x.rfind("the KV/state pool holds", 0) != 0) c.reasons.push_back(x);
  if (c.full.max_context_one_user < static_cast<std::int64_t>(std::ceil(isl + osl)) && c.reasons.empty())
    c.reasons.push_back(
        fmt::format("one request of {} tokens does not fit the KV pool (at most {})", std::ceil(isl + osl), c.full.max_context_one_user));
  c.fits = c.reasons.empty();
  if (c.fits) {
    const FitResult avg = evaluate_fit(m, g, l, s, std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(scale * (isl + osl / 2)))),
                                       std::max(1, users));
    c.max_running = std::max<std::int64_t>(avg.max_users, 1);
  }
  return c;
}

std::string precision_label(const Model& m, const std::string& uniform, const std::string& experts) {
  if (!uniform.empty()) return uniform;
  if (!experts.empty()) return "experts " + experts;
  std::string s = m.default_precision;
  if (m.moe && m.precision_of(ParamGroup::routed_experts) != m.default_precision)
    s += "+" + m.precision_of(ParamGroup::routed_experts) + " experts";
  return s + " (as shipped)";
}

void add_lines(Report& r, const std::vector<std::string>& lines) {
  for (const auto& s : lines)
    if (std::find(r.assumptions.begin(), r.assumptions.end(), s) == r.assumptions.end()) r.assumptions.push_back(s);
}

// Catalogue figures the speed model rests on: bandwidth, FLOPS, links (and price when ranking).
void gpu_assumptions(Report& r, const Gpu& g, bool price) {
  std::vector<Assumption> used;
  for (const auto& a : g.assumptions)
    if (a.what.find("bandwidth") != std::string::npos || a.what.find("tflops") != std::string::npos ||
        a.what.find("scaleup") != std::string::npos || a.what.find("memory_reported") != std::string::npos ||
        (price && a.what.find("price") != std::string::npos))
      used.push_back(a);
  add_assumptions(r, used);
}

const char* kModelAssumption =
    "perf model: decode = max(bytes/HBM, FLOPs/TFLOPS) + collectives + per-layer and per-step overhead; uniform expert routing "
    "(E x (1 - (1 - k/E)^T) experts touched per layer, no load imbalance); closed-loop continuous batching at steady state";

nlohmann::json perf_json(const Model& m, const Gpu& g, const std::string& engine, const Layout& l, const PerfConfig& c, const PerfResult& p,
                         const std::string& precision) {
  return {{"model", m.id},
          {"gpu", g.id},
          {"gpus", p.gpus},
          {"engine", engine},
          {"precision", precision},
          {"layout", layout_json(l)},
          {"isl", c.isl},
          {"osl", c.osl},
          {"concurrency", c.concurrency},
          {"ttft_s", p.ttft_s},
          {"tpot_ms", p.tpot_ms},
          {"interactivity_tok_s_user", p.interactivity},
          {"e2e_latency_s", p.e2e_s},
          {"throughput_per_gpu", {{"input", p.tput_input_per_gpu}, {"output", p.tput_output_per_gpu}, {"total", p.tput_total_per_gpu}}},
          {"bound", p.bound}};
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// k3plan perf

Report run_perf(const Catalogue& cat, const PerfOptions& o) {
  const Model base = resolve_model(cat, o.model);
  if (o.gpu.empty()) throw InputError("perf: give a GPU (-g)");
  const Gpu& g = cat.gpu(o.gpu);
  const Engine le = layout_engine(o.engine);
  if (!(o.isl >= 1 && o.isl <= 1e7) || !(o.osl >= 1 && o.osl <= 1e7))
    throw InputError("--isl and --osl: must be between 1 and 10,000,000 tokens");
  if (o.concurrency < 1 || o.concurrency > 1000000)
    throw InputError(fmt::format("--concurrency {}: must be between 1 and 1,000,000", o.concurrency));
  if (o.spec_tokens < 0 || o.spec_tokens > 16) throw InputError("--spec-tokens: must be between 0 and 16");
  if (o.spec_acceptance && !(*o.spec_acceptance >= 0 && *o.spec_acceptance <= 1)) throw InputError("--spec-acceptance: must be in [0, 1]");
  if (!(o.length_scale > 0 && o.length_scale <= 1)) throw InputError("--length-scale: must be in (0, 1]");
  if (!o.precision.empty() && !o.expert_precision.empty())
    throw InputError("--precision (every weight) and --expert-precision are contradictory; give one");
  if (o.gpus < 0 || o.gpus > 100000) throw InputError("--gpus: out of range");
  const Model m = with_precision(base, o.precision, o.expert_precision);
  const EfficiencyTable table =
      o.efficiency_file.empty() ? embedded_efficiency() : parse_efficiency(read_file(o.efficiency_file, "--efficiency"), o.efficiency_file);
  const PerfEfficiency eff = table.lookup(g, o.engine);

  EngineSettings s;
  s.engine = le;
  s.kv_dtype = o.kv_dtype;
  s.draft_layers = o.spec_tokens > 0 ? std::max(1, m.mtp_layers) : 0;
  if (o.max_num_batched_tokens) {
    if (*o.max_num_batched_tokens < 256 || *o.max_num_batched_tokens > (1 << 24))
      throw InputError("--max-num-batched-tokens: out of range");
    s.max_num_batched_tokens = *o.max_num_batched_tokens;
  }
  const auto context = static_cast<std::int64_t>(std::ceil(o.isl + o.osl));
  const auto avg_context = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(o.length_scale * (o.isl + o.osl / 2))));
  const bool explicit_layout = o.tp || o.ep || o.dp || o.pp || o.dp_attention || o.dcp;
  Layout layout;
  if (explicit_layout) {
    layout.tp = o.tp ? o.tp : 1;
    layout.ep = o.ep ? o.ep : 1;
    layout.dp = o.dp ? o.dp : 1;
    layout.pp = o.pp ? o.pp : 1;
    layout.dp_attention = o.dp_attention;
    layout.dcp = o.dcp ? o.dcp : 1;
    if (le == Engine::vllm && m.moe && o.ep == 0 && layout.tp * layout.dp > 1) layout.ep = layout.tp * layout.dp;
    if (o.gpus > 0 && layout.gpus(le) != o.gpus)
      throw InputError(fmt::format("-n {} contradicts the layout: it needs {} GPUs", o.gpus, layout.gpus(le)));
  } else if (o.gpus > 0) {
    // the engine's preferred layout that holds the users at their average context, else the one holding most
    FitResult best;
    bool have = false;
    for (const auto& l : candidate_layouts(m, g, le, o.gpus)) {
      FitResult x = evaluate_fit(m, g, l, s, avg_context, o.concurrency);
      if (!have || (x.fits && !best.fits) || (!best.fits && x.max_users > best.max_users)) {
        best = x;
        have = true;
      }
      if (best.fits) break;
    }
    if (!have) throw InputError(fmt::format("no {} layout accepts {} x {} for {}", o.engine, o.gpus, g.id, m.id));
    layout = best.layout;
  } else {
    const FitResult x = search_fit(m, g, s, avg_context, o.concurrency);
    if (x.gpus == 0) throw InputError(fmt::format("no layout found for {} on {}", m.id, g.id));
    layout = x.layout;
  }
  const MemCheck mc = memory_check(m, g, layout, s, o.isl, o.osl, o.length_scale, o.concurrency);
  const FitResult& f = mc.full;

  const PerfModel pm = prepare_perf_model(m, o.kv_dtype);
  PerfConfig c;
  c.layout = f.layout;
  c.engine = le;
  c.isl = o.isl;
  c.osl = o.osl;
  c.length_scale = o.length_scale;
  c.concurrency = o.concurrency;
  c.spec_tokens = o.spec_tokens;
  c.spec_acceptance = o.spec_acceptance ? *o.spec_acceptance : eff.spec_acceptance;
  c.max_running = mc.max_running;
  c.prefill_chunk = s.max_num_batched_tokens > 0 ? s.max_num_batched_tokens : default_chunk(g, o.engine);
  const PerfResult p = estimate_perf(pm, g, eff, c);

  Report r;
  const std::string prec = precision_label(base, o.precision, o.expert_precision);
  r.data = perf_json(m, g, o.engine, f.layout, c, p, prec);
  r.data["fits"] = mc.fits;
  r.data["max_running"] = mc.max_running;
  r.data["nodes"] = f.nodes;
  r.data["breakdown"] = {{"decode_batch", p.step.batch},
                         {"tokens_per_step", p.step.tokens_per_step},
                         {"step_ms", p.step.t_step_ms},
                         {"memory_ms", p.step.pass.t_memory_ms * f.layout.pp},
                         {"compute_ms", p.step.pass.t_compute_ms * f.layout.pp},
                         {"communication_ms", p.step.pass.t_comm_ms * f.layout.pp},
                         {"overhead_ms", p.step.pass.t_overhead_ms * f.layout.pp + eff.step_overhead_ms},
                         {"draft_ms", p.step.t_draft_ms},
                         {"weight_bytes_per_gpu", p.step.pass.weight_bytes},
                         {"kv_bytes_per_gpu", p.step.pass.kv_bytes},
                         {"experts_touched_per_rank", p.step.pass.experts_touched},
                         {"prefill_ms_one_request", p.prefill_ms},
                         {"prefill_share", p.prefill_share},
                         {"queued", p.queued}};
  r.data["efficiency"] = {{"family", eff.family},
                          {"engine", eff.engine},
                          {"hbm", eff.hbm},
                          {"decode_mfu", eff.decode_mfu},
                          {"prefill_mfu", eff.prefill_mfu},
                          {"step_overhead_ms", eff.step_overhead_ms},
                          {"layer_overhead_us", eff.layer_overhead_us}};

  Table t{fmt::format("{} on {} x {} ({}, {}, {}), ISL {} / OSL {}, {} users", m.id, f.gpus, g.id, o.engine, layout_text(f.layout), prec,
                      fmt_num(o.isl), fmt_num(o.osl), o.concurrency),
          {"measure", "value"},
          {},
          {false, true}};
  t.rows.push_back({"TTFT", fmt::format("{:.3f} s", p.ttft_s)});
  t.rows.push_back({"TPOT (ITL)", fmt::format("{:.2f} ms", p.tpot_ms)});
  t.rows.push_back({"interactivity", fmt::format("{:.1f} tok/s per user", p.interactivity)});
  t.rows.push_back({"end-to-end latency", fmt::format("{:.2f} s", p.e2e_s)});
  t.rows.push_back({"throughput per GPU (total)", fmt::format("{} tok/s", fmt_num(p.tput_total_per_gpu))});
  t.rows.push_back(
      {"throughput per GPU (input / output)", fmt::format("{} / {} tok/s", fmt_num(p.tput_input_per_gpu), fmt_num(p.tput_output_per_gpu))});
  t.rows.push_back({"bound", p.bound});
  const double usd_h = g.price_usd_per_hour.value * p.gpus;
  t.rows.push_back({"tok/s per USD/hour (total)",
                    fmt::format("{:.1f} at {:.2f} USD/GPU-hour", p.tput_total_per_gpu * p.gpus / usd_h, g.price_usd_per_hour.value)});
  t.rows.push_back({"USD per million tokens (total)", fmt::format("{:.3f}", usd_h * 1e6 / (3600 * p.tput_total_per_gpu * p.gpus))});
  t.rows.push_back({"memory", mc.fits
                                  ? fmt::format("fits; the KV pool holds {} running requests (at {} tokens each on average; {} at most)",
                                                fmt_int(static_cast<double>(mc.max_running)), fmt_int(static_cast<double>(avg_context)),
                                                fmt_int(static_cast<double>(context)))
                                  : "DOES NOT FIT (see notes)"});
  r.tables.push_back(t);
  r.data["usd_per_million_tokens"] = usd_h * 1e6 / (3600 * p.tput_total_per_gpu * p.gpus);
  r.data["tok_s_per_usd_hour"] = p.tput_total_per_gpu * p.gpus / usd_h;

  Table b{"Decode step per GPU (one pipeline stage x PP)", {"part", "ms", "note"}, {}, {false, true, false}};
  b.rows.push_back({"weights + KV read", fmt::format("{:.3f}", p.step.pass.t_memory_ms * f.layout.pp),
                    fmt::format("{} weights + {} KV per GPU at {:.0f}% of {:g} TB/s", human_decimal(p.step.pass.weight_bytes),
                                human_decimal(p.step.pass.kv_bytes), eff.hbm * 100, g.hbm_bandwidth_tb_s.value)});
  b.rows.push_back({"compute", fmt::format("{:.3f}", p.step.pass.t_compute_ms * f.layout.pp),
                    fmt::format("{:.2f} TFLOP per GPU at {:.0f}% of dense peak", p.step.pass.flops / 1e12, eff.decode_mfu * 100)});
  b.rows.push_back(
      {"communication", fmt::format("{:.3f}", p.step.pass.t_comm_ms * f.layout.pp), "all-reduce / gather / PP send per layer"});
  b.rows.push_back({"overhead", fmt::format("{:.3f}", p.step.pass.t_overhead_ms * f.layout.pp + eff.step_overhead_ms),
                    fmt::format("{:g} us per layer + {:g} ms per step", eff.layer_overhead_us, eff.step_overhead_ms)});
  if (p.step.t_draft_ms > 0)
    b.rows.push_back({"draft", fmt::format("{:.3f}", p.step.t_draft_ms), fmt::format("{} draft tokens", c.spec_tokens)});
  b.rows.push_back({"= step", fmt::format("{:.3f}", p.step.t_step_ms),
                    fmt::format("batch {:.1f}, {:.2f} tokens per sequence per step{}", p.step.batch, p.step.tokens_per_step,
                                p.prefill_share > 0.005 ? fmt::format(", prefill takes {:.0f}% of the time", p.prefill_share * 100) : "")});
  if (pm.experts > 0)
    b.rows.push_back({"experts touched", fmt::format("{:.1f}", p.step.pass.experts_touched),
                      fmt::format("of {} per EP rank per MoE layer", pm.experts / std::max(1, layout_shape(f.layout, le).ep))});
  r.tables.push_back(b);

  for (const auto& x : mc.reasons) r.notes.push_back("does not fit: " + x);
  for (const auto& x : f.warnings) r.notes.push_back("warning: " + x);
  if (p.queued)
    r.notes.push_back(
        fmt::format("{} users exceed the {} requests the KV pool holds: the rest wait, which adds to TTFT", o.concurrency, mc.max_running));
  r.notes.push_back("SGLang: python3 -m sglang.launch_server --model-path " + serve_model_path(m, o.model) + " " + f.sglang_flags);
  r.notes.push_back("vLLM: vllm serve " + serve_model_path(m, o.model) + " " + f.vllm_flags);
  for (const auto& x : f.flag_notes) r.notes.push_back("note: " + x);
  if (o.engine == "trt" || o.engine == "atom") r.notes.push_back(o.engine + ": layout and memory checked with SGLang's rules");
  r.assumptions.push_back(kModelAssumption);
  add_lines(r, eff.assumptions);
  if (o.spec_tokens > 0 && !o.spec_acceptance)
    r.assumptions.push_back(fmt::format("speculative acceptance {:g} per draft token from data/perf/efficiency.yaml ({}/{})",
                                        eff.spec_acceptance, eff.family, eff.engine));
  if (o.length_scale < 1) r.assumptions.push_back(fmt::format("request lengths scaled by {:g} of nominal", o.length_scale));
  add_lines(r, f.assumptions);
  add_assumptions(r, m.assumptions);
  gpu_assumptions(r, g, true);
  r.data["assumptions"] = r.assumptions;
  r.exit_code = mc.fits ? 0 : 1;
  return r;
}

// ---------------------------------------------------------------------------------------------
// k3plan perf-validate

namespace {

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

double ape(double pred, double meas) { return meas > 0 ? std::abs(pred - meas) / meas * 100 : std::nan(""); }

}  // namespace

Report run_perf_validate(const Catalogue& cat) {
  const auto rows = parse_measured(embedded_text(kMeasuredPath), std::string("embedded data/") + kMeasuredPath);
  const EfficiencyTable& table = embedded_efficiency();
  const Model& base = cat.model("deepseek-r1-0528");
  std::map<std::string, PerfModel> models;  // by precision/kv
  struct Group {
    std::vector<double> tput, tpot, ttft;
  };
  std::map<std::string, Group> groups;
  Group all_plain, all_mtp;
  Report r;
  r.data["rows"] = nlohmann::json::array();
  Table t{"Predicted vs measured, InferenceX DeepSeek-R1-0528, single node, aggregated",
          {"gpu", "engine", "prec", "spec", "layout", "ISL/OSL", "conc", "tput/GPU meas", "pred", "err", "TPOT meas", "pred", "err",
           "TTFT meas", "pred"},
          {},
          {}};
  for (const auto& row : rows) {
    const Gpu& g = cat.gpu(row.gpu);
    const PerfEfficiency eff = table.lookup(g, row.engine);
    const std::string experts = row.precision == "fp4" ? (g.vendor == "amd" ? "mxfp4" : "nvfp4") : "";
    const Model m = with_precision(base, "", experts);
    const std::string key = experts + "|" + row.kv_dtype;
    auto it = models.find(key);
    if (it == models.end()) it = models.emplace(key, prepare_perf_model(m, row.kv_dtype)).first;
    PerfConfig c;
    c.layout.tp = row.tp;
    c.layout.ep = row.ep;
    c.layout.dp = row.dp_attention ? row.tp : 1;
    c.layout.dp_attention = row.dp_attention;
    c.engine = layout_engine(row.engine);
    c.isl = row.isl;
    c.osl = row.osl;
    c.length_scale = 0.9;  // InferenceX draws lengths at 80-100% of nominal
    c.concurrency = row.conc;
    const bool mtp = row.spec == "mtp";
    c.spec_tokens = mtp ? eff.spec_tokens : 0;
    c.spec_acceptance = eff.spec_acceptance;
    c.prefill_chunk = default_chunk(g, row.engine);
    EngineSettings s;
    s.engine = c.engine;
    s.kv_dtype = row.kv_dtype;
    s.draft_layers = mtp ? 1 : 0;
    const MemCheck mc = memory_check(m, g, c.layout, s, row.isl, row.osl, c.length_scale, row.conc);
    c.max_running = mc.max_running;
    const PerfResult p = estimate_perf(it->second, g, eff, c);
    const double e_tput = ape(p.tput_total_per_gpu, row.tput_total), e_tpot = ape(p.tpot_ms, row.tpot_ms),
                 e_ttft = ape(p.ttft_s, row.ttft_s);
    const std::string gk = fmt::format("{}/{}{}", row.gpu, row.engine, mtp ? "+mtp" : "");
    if (row.exclude.empty()) {
      auto& gr = groups[gk];
      gr.tput.push_back(e_tput);
      gr.tpot.push_back(e_tpot);
      gr.ttft.push_back(e_ttft);
      auto& a = mtp ? all_mtp : all_plain;
      a.tput.push_back(e_tput);
      a.tpot.push_back(e_tpot);
      a.ttft.push_back(e_ttft);
    }
    r.data["rows"].push_back(
        {{"id", row.id},
         {"group", gk},
         {"fits", mc.fits},
         {"excluded", row.exclude},
         {"measured", {{"tput_per_gpu", row.tput_total}, {"tpot_ms", row.tpot_ms}, {"ttft_s", row.ttft_s}, {"e2e_s", row.e2e_s}}},
         {"predicted",
          {{"tput_per_gpu", p.tput_total_per_gpu}, {"tpot_ms", p.tpot_ms}, {"ttft_s", p.ttft_s}, {"e2e_s", p.e2e_s}, {"bound", p.bound}}},
         {"ape_pct", {{"tput", e_tput}, {"tpot", e_tpot}, {"ttft", e_ttft}}}});
    t.rows.push_back({row.gpu, row.engine, row.precision, row.spec, layout_text(c.layout), fmt::format("{:g}/{:g}", row.isl, row.osl),
                      std::to_string(row.conc), fmt_num(row.tput_total), fmt_num(p.tput_total_per_gpu),
                      row.exclude.empty() ? fmt::format("{:.0f}%", e_tput) : "excl.", fmt_num(row.tpot_ms), fmt_num(p.tpot_ms),
                      fmt::format("{:.0f}%", e_tpot), fmt_num(row.ttft_s), fmt_num(p.ttft_s)});
  }
  Table sum{"Absolute percentage error by GPU and engine (median / 90th percentile)",
            {"gpu/engine", "rows", "tput/GPU median", "p90", "TPOT median", "p90", "TTFT median", "p90"},
            {},
            {false, true, true, true, true, true, true, true}};
  r.data["summary"] = nlohmann::json::array();
  auto add = [&](const std::string& name, const Group& gr) {
    sum.rows.push_back({name, std::to_string(gr.tput.size()), fmt::format("{:.1f}%", percentile(gr.tput, 0.5)),
                        fmt::format("{:.1f}%", percentile(gr.tput, 0.9)), fmt::format("{:.1f}%", percentile(gr.tpot, 0.5)),
                        fmt::format("{:.1f}%", percentile(gr.tpot, 0.9)), fmt::format("{:.1f}%", percentile(gr.ttft, 0.5)),
                        fmt::format("{:.1f}%", percentile(gr.ttft, 0.9))});
    r.data["summary"].push_back({{"group", name},
                                 {"rows", gr.tput.size()},
                                 {"tput_median_ape_pct", percentile(gr.tput, 0.5)},
                                 {"tput_p90_ape_pct", percentile(gr.tput, 0.9)},
                                 {"tpot_median_ape_pct", percentile(gr.tpot, 0.5)},
                                 {"tpot_p90_ape_pct", percentile(gr.tpot, 0.9)},
                                 {"ttft_median_ape_pct", percentile(gr.ttft, 0.5)},
                                 {"ttft_p90_ape_pct", percentile(gr.ttft, 0.9)}});
  };
  for (const auto& [k, gr] : groups) add(k, gr);
  add("all, no speculative decoding", all_plain);
  add("all, MTP", all_mtp);
  r.tables.push_back(sum);
  r.tables.push_back(t);
  r.notes.push_back(
      "Rows: data/perf/measured-dsr1.yaml (InferenceX latest fixture, disagg = 0). The factors were fitted on these same rows "
      "(data/perf/efficiency.yaml), so the errors are in-sample; GPUs without rows (H100, B300, GB200/GB300, MI300X/MI325X/MI350X) "
      "use their family's factors.");
  r.assumptions.push_back(kModelAssumption);
  r.assumptions.push_back(
      "validation: request lengths at 0.9 x nominal (InferenceX draws 80-100%); KV cache fp8 for trt and bf16 otherwise; fp4 rows = routed "
      "experts in nvfp4 (NVIDIA) / mxfp4 (AMD)");
  std::set<std::string> seen;
  for (const auto& e : table.entries) add_lines(r, e.assumptions);
  r.data["assumptions"] = r.assumptions;
  return r;
}

// ---------------------------------------------------------------------------------------------
// k3plan plan

namespace {

double rental_rate(const Catalogue& cat, const Gpu& g, const std::string& kind, std::string& note) {
  if (kind == "on-demand") return g.price_usd_per_hour.value;
  std::vector<double> q;
  for (const auto& x : cat.prices().rental)
    if (x.gpu == g.id && x.kind == kind) q.push_back(x.usd_per_hour);
  if (q.empty()) {
    note = fmt::format("{}: no {} quote, on-demand price used", g.id, kind);
    return g.price_usd_per_hour.value;
  }
  std::sort(q.begin(), q.end());
  return q.size() % 2 ? q[q.size() / 2] : (q[q.size() / 2 - 1] + q[q.size() / 2]) / 2;
}

struct PrecOption {
  std::string uniform, experts, label;
  bool requantised = false;
};

std::vector<PrecOption> precision_options(const Model& m, const Gpu& g, const std::vector<std::string>& wanted) {
  std::vector<PrecOption> out;
  auto bitsof = [&](ParamGroup grp) { return precision_format(m.precision_of(grp)).bits_per_weight; };
  if (!wanted.empty()) {
    for (const auto& w : wanted) {
      if (w == "as-shipped" || w == "shipped")
        out.push_back({"", "", precision_label(m, "", ""), false});
      else if (w.rfind("experts-", 0) == 0)
        out.push_back({"", w.substr(8), "experts " + w.substr(8), true});
      else
        out.push_back({w, "", w, true});
    }
    return out;
  }
  out.push_back({"", "", precision_label(m, "", ""), false});
  const double main_bits = m.moe ? bitsof(ParamGroup::routed_experts) : bitsof(ParamGroup::dense_mlp);
  if (main_bits > 8.5 && g.runs_natively("fp8")) out.push_back({"fp8", "", "fp8", true});
  if (m.moe && main_bits > 4.6) {
    if (g.runs_natively("mxfp4") && g.tflops_fp4.value > 0)
      out.push_back({"", "mxfp4", "experts mxfp4", true});
    else if (g.runs_natively("nvfp4") && g.tflops_fp4.value > 0)
      out.push_back({"", "nvfp4", "experts nvfp4", true});
  }
  return out;
}

std::vector<int> gpu_counts(const Gpu& g, int max_gpus) {
  std::vector<int> out;
  for (int n = 1; n <= std::min(max_gpus, g.gpus_per_node); n *= 2) out.push_back(n);
  for (int nodes = 2; nodes * g.gpus_per_node <= max_gpus; nodes *= 2) out.push_back(nodes * g.gpus_per_node);
  return out;
}

struct Cand {
  int gpu_index = 0;
  int gpus = 0;
  int nodes = 1;
  std::string engine;
  Layout layout;
  int prec = 0;  // index into the GPU's precision options
  int conc = 1;
  PerfResult p;
  double usd_per_hour = 0;  // one instance
  double usd_per_m = 0;     // USD per million tokens (input + output)
  double replicas = 1;
  bool sla_ok = false;
  std::int64_t max_users = 0;
};

}  // namespace

Report run_plan(const Catalogue& cat, const PlanOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const Model base = resolve_model(cat, o.model);
  if (!(o.isl >= 1 && o.isl <= 1e7) || !(o.osl >= 1 && o.osl <= 1e7))
    throw InputError("--isl and --osl: must be between 1 and 10,000,000 tokens");
  if (o.max_gpus < 1 || o.max_gpus > 4096) throw InputError("--max-gpus: must be between 1 and 4096");
  if (o.rate_source != "on-demand" && o.rate_source != "reserved" && o.rate_source != "spot")
    throw InputError(fmt::format("--rate-source '{}': use on-demand, reserved or spot", o.rate_source));
  if (o.tpot_ms && o.interactivity) throw InputError("--tpot-ms and --interactivity set the same target; give one");
  if (o.users && o.requests_per_s) throw InputError("--users and --requests-per-s describe the load twice; give one");
  if (o.users && !(*o.users >= 1 && *o.users <= 1e9)) throw InputError("--users: must be between 1 and 1e9");
  if (o.requests_per_s && !(*o.requests_per_s > 0 && *o.requests_per_s <= 1e9)) throw InputError("--requests-per-s: must be positive");
  Report r;
  r.assumptions.push_back(kModelAssumption);

  // service level
  const Sla sla = o.sla_file.empty() ? embedded_sla() : parse_sla(read_file(o.sla_file, "--sla"), o.sla_file);
  double ttft_target = std::numeric_limits<double>::infinity(), tpot_target = std::numeric_limits<double>::infinity();
  std::string ttft_src = "none", tpot_src = "none";
  if (o.ttft_ms) {
    if (!(*o.ttft_ms > 0)) throw InputError("--ttft-ms: must be positive");
    ttft_target = *o.ttft_ms;
    ttft_src = "--ttft-ms";
  } else {
    for (const auto& [max_prompt, fig] : sla.ttft_tiers)
      if (o.isl <= max_prompt) {
        ttft_target = fig.value;
        ttft_src =
            fmt::format("tier up to {} prompt tokens ({})", fmt_int(max_prompt), o.sla_file.empty() ? "data/perf/sla.yaml" : o.sla_file);
        if (fig.assumed)
          r.assumptions.push_back(fmt::format("SLA TTFT {:g} ms for prompts up to {}: {}", fig.value, fmt_int(max_prompt), fig.reason));
        break;
      }
  }
  if (o.tpot_ms || o.interactivity) {
    const double v = o.tpot_ms ? *o.tpot_ms : 1000.0 / *o.interactivity;
    if (!(v > 0) || !std::isfinite(v)) throw InputError("--tpot-ms / --interactivity: must be positive");
    tpot_target = v;
    tpot_src = o.tpot_ms ? "--tpot-ms" : "--interactivity";
  } else {
    const auto it = sla.itl.find(o.workload);
    if (it == sla.itl.end()) {
      std::vector<std::string> names;
      for (const auto& [k, v] : sla.itl) names.push_back(k);
      throw InputError(fmt::format("--workload '{}': the SLA file has ITL targets for {}", o.workload, fmt::join(names, ", ")));
    }
    tpot_target = it->second.value;
    tpot_src = fmt::format("{} ITL ({})", o.workload, o.sla_file.empty() ? "data/perf/sla.yaml" : o.sla_file);
    if (it->second.assumed) r.assumptions.push_back(fmt::format("SLA {} ITL {:g} ms: {}", o.workload, it->second.value, it->second.reason));
  }

  // search space
  std::vector<const Gpu*> gpus;
  if (o.gpus_from.empty())
    for (const auto& g : cat.gpus()) gpus.push_back(&g);
  else
    for (const auto& id : o.gpus_from) gpus.push_back(&cat.gpu(id));
  std::vector<std::string> engines = o.engines.empty() ? std::vector<std::string>{"sglang", "vllm"} : o.engines;
  for (const auto& e : engines) layout_engine(e);
  const EfficiencyTable table =
      o.efficiency_file.empty() ? embedded_efficiency() : parse_efficiency(read_file(o.efficiency_file, "--efficiency"), o.efficiency_file);
  const auto context = static_cast<std::int64_t>(std::ceil(o.isl + o.osl));

  std::vector<Cand> cands;
  cands.reserve(1 << 15);
  std::vector<std::vector<PrecOption>> precs(gpus.size());
  std::map<std::string, std::string> no_fit;  // gpu -> first reason nothing fit
  std::map<std::string, PerfModel> pms;
  std::vector<std::string> price_notes;
  std::size_t evaluated = 0, fit_checks = 0;
  double perf_seconds = 0;
  for (std::size_t gi = 0; gi < gpus.size(); ++gi) {
    const Gpu& g = *gpus[gi];
    std::string pnote;
    const double rate = rental_rate(cat, g, o.rate_source, pnote);
    if (!pnote.empty()) price_notes.push_back(pnote);
    precs[gi] = precision_options(base, g, o.precisions);
    bool any_fit = false;
    for (std::size_t pi = 0; pi < precs[gi].size(); ++pi) {
      const PrecOption& po = precs[gi][pi];
      const Model m = with_precision(base, po.uniform, po.experts);
      const std::string pkey = po.uniform + "|" + po.experts;
      auto pit = pms.find(pkey);
      if (pit == pms.end()) pit = pms.emplace(pkey, prepare_perf_model(m, "auto")).first;
      const PerfModel& pm = pit->second;
      for (const auto& engine : engines) {
        const Engine le = layout_engine(engine);
        const PerfEfficiency eff = table.lookup(g, engine);
        EngineSettings s;
        s.engine = le;
        for (int n : gpu_counts(g, o.max_gpus)) {
          std::vector<Layout> layouts = candidate_layouts(m, g, le, n);
          if (le == Engine::sglang && m.moe && n > 1) {  // DP attention with experts spread over every GPU
            Layout d;
            d.tp = n;
            d.dp = n;
            d.ep = n;
            d.dp_attention = true;
            if (layout_refusals(m, g, le, d).empty()) layouts.push_back(d);
          }
          for (const auto& l : layouts) {
            MemCheck mc;
            try {
              mc = memory_check(m, g, l, s, o.isl, o.osl, 1.0, 1);
            } catch (const InputError& e) {  // e.g. the engine's default memory fraction leaves nothing
              mc.fits = false;
              mc.reasons = {e.what()};
            }
            const FitResult& f = mc.full;
            ++fit_checks;
            if (!mc.fits) {
              if (!no_fit.count(g.id) && !mc.reasons.empty())
                no_fit[g.id] = fmt::format("{} GPUs {}: {}", n, layout_text(l), mc.reasons.front());
              continue;
            }
            any_fit = true;
            const std::int64_t cap = std::min<std::int64_t>(mc.max_running, 4096);
            std::vector<int> concs;
            for (int c = 1; c <= cap; c *= 2) concs.push_back(c);
            if (concs.empty() || concs.back() != cap) concs.push_back(static_cast<int>(cap));
            PerfConfig pc;
            pc.layout = l;
            pc.engine = le;
            pc.isl = o.isl;
            pc.osl = o.osl;
            pc.max_running = mc.max_running;
            pc.prefill_chunk = f.max_num_batched_tokens > 0 ? f.max_num_batched_tokens : default_chunk(g, engine);
            const auto tp0 = std::chrono::steady_clock::now();
            const PerfSetup setup = prepare_perf(pm, g, eff, l, le);
            auto eval = [&](int c) {
              pc.concurrency = c;
              Cand x;
              x.p = estimate_perf(setup, pc);
              ++evaluated;
              x.gpu_index = static_cast<int>(gi);
              x.gpus = f.gpus;
              x.nodes = f.nodes;
              x.engine = engine;
              x.layout = l;
              x.prec = static_cast<int>(pi);
              x.conc = c;
              x.max_users = mc.max_running;
              x.usd_per_hour = rate * f.gpus;
              const double tok_s = x.p.tput_total_per_gpu * f.gpus;
              x.usd_per_m = x.usd_per_hour * 1e6 / (3600 * tok_s);
              if (o.users)
                x.replicas = std::ceil(*o.users / c);
              else if (o.requests_per_s)
                x.replicas = std::ceil(*o.requests_per_s / (c / x.p.e2e_s));
              x.sla_ok = x.p.ttft_s * 1000 <= ttft_target && x.p.tpot_ms <= tpot_target;
              cands.push_back(std::move(x));
              return cands.back().sla_ok;
            };
            int last_ok = 0, fail_after = 0;
            for (int c : concs) {
              const bool ok = eval(c);
              if (ok)
                last_ok = c;
              else if (last_ok > 0 && fail_after == 0)
                fail_after = c;
            }
            // the largest concurrency that still meets the SLA, between two powers of two
            int lo = last_ok, hi = fail_after;
            while (lo > 0 && hi > lo + std::max(1, lo / 32)) {
              const int mid = lo + (hi - lo) / 2;
              if (eval(mid))
                lo = mid;
              else
                hi = mid;
            }
            perf_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - tp0).count();
          }
        }
      }
    }
    if (!any_fit && !no_fit.count(g.id)) no_fit[g.id] = fmt::format("no engine-valid layout up to {} GPUs", o.max_gpus);
  }
  const double search_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  // the winner: cheapest per million tokens among those that meet the SLA
  const Cand* win = nullptr;
  // cost, then interactivity, then fewer GPUs, then compute headroom (ties come from memory-bound
  // decode on GPUs with the same bandwidth and price)
  auto cheaper = [&](const Cand& a, const Cand& b) {
    if (std::abs(a.usd_per_m - b.usd_per_m) > 1e-9 * b.usd_per_m) return a.usd_per_m < b.usd_per_m;
    if (std::abs(a.p.interactivity - b.p.interactivity) > 1e-9 * b.p.interactivity) return a.p.interactivity > b.p.interactivity;
    if (a.gpus != b.gpus) return a.gpus < b.gpus;
    return gpus[static_cast<std::size_t>(a.gpu_index)]->tflops_bf16.value > gpus[static_cast<std::size_t>(b.gpu_index)]->tflops_bf16.value;
  };
  for (const auto& c : cands)
    if (c.sla_ok && (!win || cheaper(c, *win))) win = &c;

  auto miss = [&](const Cand& c) {  // why the SLA is missed
    std::vector<std::string> m;
    if (c.p.ttft_s * 1000 > ttft_target) m.push_back(fmt::format("TTFT {:.0f} ms > {:g}", c.p.ttft_s * 1000, ttft_target));
    if (c.p.tpot_ms > tpot_target) m.push_back(fmt::format("TPOT {:.1f} ms > {:g}", c.p.tpot_ms, tpot_target));
    return fmt::format("{}", fmt::join(m, ", "));
  };
  auto cand_json = [&](const Cand& c) {
    const Gpu& g = *gpus[static_cast<std::size_t>(c.gpu_index)];
    PerfConfig pc;
    pc.isl = o.isl;
    pc.osl = o.osl;
    pc.concurrency = c.conc;
    nlohmann::json j = perf_json(base, g, c.engine, c.layout, pc, c.p,
                                 precs[static_cast<std::size_t>(c.gpu_index)][static_cast<std::size_t>(c.prec)].label);
    j["nodes"] = c.nodes;
    j["usd_per_hour"] = c.usd_per_hour;
    j["usd_per_million_tokens"] = c.usd_per_m;
    j["tok_s_per_usd_hour"] = c.p.tput_total_per_gpu * c.gpus / c.usd_per_hour;
    j["tok_s_per_node"] = c.p.tput_total_per_gpu * c.gpus / c.nodes;
    j["output_tok_s_per_node"] = c.p.tput_output_per_gpu * c.gpus / c.nodes;
    j["meets_sla"] = c.sla_ok;
    j["sla_miss"] = miss(c);
    j["max_running"] = c.max_users;
    j["replicas"] = c.replicas;
    return j;
  };
  auto launch = [&](const Cand& c) {
    const PrecOption& po = precs[static_cast<std::size_t>(c.gpu_index)][static_cast<std::size_t>(c.prec)];
    EngineSettings s;
    s.engine = layout_engine(c.engine);
    if (s.engine == Engine::vllm) s.max_num_seqs = c.conc;
    const FitResult f = evaluate_fit(with_precision(base, po.uniform, po.experts), *gpus[static_cast<std::size_t>(c.gpu_index)], c.layout,
                                     s, context, c.conc);
    const std::string repo = serve_model_path(base, o.model);
    return c.engine == "vllm" ? "vllm serve " + repo + " " + f.vllm_flags
                              : "python3 -m sglang.launch_server --model-path " + repo + " " + f.sglang_flags;
  };
  auto cfg_text = [&](const Cand& c) {
    return fmt::format("{} x {} {} {} {}", c.gpus, gpus[static_cast<std::size_t>(c.gpu_index)]->id, c.engine, layout_text(c.layout),
                       precs[static_cast<std::size_t>(c.gpu_index)][static_cast<std::size_t>(c.prec)].label);
  };

  r.data["model"] = base.id;
  r.data["isl"] = o.isl;
  r.data["osl"] = o.osl;
  r.data["sla"] = {{"ttft_ms", std::isfinite(ttft_target) ? nlohmann::json(ttft_target) : nlohmann::json(nullptr)},
                   {"ttft_source", ttft_src},
                   {"tpot_ms", std::isfinite(tpot_target) ? nlohmann::json(tpot_target) : nlohmann::json(nullptr)},
                   {"tpot_source", tpot_src},
                   {"workload", o.workload}};
  r.data["rate_source"] = o.rate_source;
  r.data["search"] = {{"candidates", evaluated},
                      {"fit_checks", fit_checks},
                      {"ms", search_ms},
                      {"perf_candidates_per_s", perf_seconds > 0 ? static_cast<double>(evaluated) / perf_seconds : 0.0}};

  Table head{fmt::format("{}: ISL {} / OSL {}; SLA TTFT <= {} ms ({}), TPOT <= {} ms ({}); ranked by USD per million tokens ({} prices)",
                         base.id, fmt_num(o.isl), fmt_num(o.osl), std::isfinite(ttft_target) ? fmt_num(ttft_target) : "-", ttft_src,
                         std::isfinite(tpot_target) ? fmt_num(tpot_target) : "-", tpot_src, o.rate_source),
             {"", ""},
             {},
             {false, false}};
  if (win) {
    const Gpu& g = *gpus[static_cast<std::size_t>(win->gpu_index)];
    const PrecOption& po = precs[static_cast<std::size_t>(win->gpu_index)][static_cast<std::size_t>(win->prec)];
    head.title = "Winner. " + head.title;
    head.rows.push_back({"configuration", cfg_text(*win) + fmt::format(" ({} node{})", win->nodes, win->nodes > 1 ? "s" : "")});
    head.rows.push_back({"concurrency", fmt::format("{} users per instance (the KV pool holds {})", win->conc,
                                                    fmt_int(static_cast<double>(win->max_users)))});
    head.rows.push_back(
        {"TTFT / TPOT", fmt::format("{:.3f} s / {:.2f} ms ({:.1f} tok/s per user)", win->p.ttft_s, win->p.tpot_ms, win->p.interactivity)});
    const int node = g.gpus_per_node;  // a node runs gpus_per_node / instance-size instances
    head.rows.push_back({"throughput", fmt::format("{} tok/s per GPU total ({} output); per {}-GPU node {} tok/s total, {} output",
                                                   fmt_num(win->p.tput_total_per_gpu), fmt_num(win->p.tput_output_per_gpu), node,
                                                   fmt_int(win->p.tput_total_per_gpu * node), fmt_int(win->p.tput_output_per_gpu * node))});
    head.rows.push_back({"cost", fmt::format("{:.3f} USD per million tokens; tok/s per USD/hour {:.1f} total, {:.1f} output; {:.2f} "
                                             "USD/hour per instance ({:.2f} per GPU-hour)",
                                             win->usd_per_m, win->p.tput_total_per_gpu * win->gpus / win->usd_per_hour,
                                             win->p.tput_output_per_gpu * win->gpus / win->usd_per_hour, win->usd_per_hour,
                                             win->usd_per_hour / win->gpus)});
    if (o.users || o.requests_per_s)
      head.rows.push_back(
          {"fleet", fmt::format("{:.0f} instance(s) = {:.0f} GPUs, {:.2f} USD/hour for {}", win->replicas, win->replicas * win->gpus,
                                win->replicas * win->usd_per_hour,
                                o.users ? fmt::format("{:g} users", *o.users) : fmt::format("{:g} requests/s", *o.requests_per_s))});
    head.rows.push_back({"bound", win->p.bound});
    head.rows.push_back({"launch", launch(*win)});
    if (po.requantised)
      head.rows.push_back(
          {"note", fmt::format("weights requantised to {}: needs a checkpoint in that format (not the one shipped)", po.label)});
    r.data["winner"] = cand_json(*win);
    r.data["winner"]["launch"] = launch(*win);
    r.data["winner"]["requantised"] = po.requantised;
    r.exit_code = 0;
  } else {
    head.title = "No configuration meets the SLA. " + head.title;
    head.rows.push_back({"result", cands.empty() ? "nothing fits" : "every configuration that fits misses the SLA; see the closest below"});
    r.data["winner"] = nullptr;
    r.exit_code = 1;
  }
  r.tables.push_back(head);

  // Pareto front: throughput per GPU against interactivity over every candidate that fits
  std::vector<const Cand*> order;
  for (const auto& c : cands) order.push_back(&c);
  std::sort(order.begin(), order.end(), [](const Cand* a, const Cand* b) {
    if (a->p.interactivity != b->p.interactivity) return a->p.interactivity > b->p.interactivity;
    return a->p.tput_total_per_gpu > b->p.tput_total_per_gpu;
  });
  std::vector<const Cand*> front;
  double best_tput = -1;
  for (const Cand* c : order)
    if (c->p.tput_total_per_gpu > best_tput) {
      front.push_back(c);
      best_tput = c->p.tput_total_per_gpu;
    }
  Table pt{"Pareto front: throughput per GPU against interactivity (every configuration that fits)",
           {"tok/s/user", "tok/s/GPU", "configuration", "conc", "TTFT s", "USD/M tok", "SLA"},
           {},
           {true, true, false, true, true, true, false}};
  r.data["pareto"] = nlohmann::json::array();
  const std::size_t max_rows = 16;
  for (std::size_t i = 0; i < front.size(); ++i) {
    const Cand& c = *front[i];
    r.data["pareto"].push_back(cand_json(c));
    const bool show = front.size() <= max_rows || i % ((front.size() + max_rows - 1) / max_rows) == 0 || i + 1 == front.size() || &c == win;
    if (show)
      pt.rows.push_back({fmt_num(c.p.interactivity), fmt_num(c.p.tput_total_per_gpu), cfg_text(c), std::to_string(c.conc),
                         fmt_num(c.p.ttft_s), fmt::format("{:.3f}", c.usd_per_m), c.sla_ok ? (&c == win ? "ok (winner)" : "ok") : miss(c)});
  }
  if (front.size() > max_rows) pt.title += fmt::format(" ({} of {} points shown; all in JSON)", pt.rows.size(), front.size());
  r.tables.push_back(pt);

  // why the runners-up lost: the best of every GPU type, then the next-cheapest configurations
  Table ru{"Runners-up: the best of each GPU and why it lost",
           {"gpu", "best configuration", "conc", "tok/s/GPU", "TPOT ms", "USD/M tok", "why it lost"},
           {},
           {false, false, true, true, true, true, false}};
  r.data["runners_up"] = nlohmann::json::array();
  struct Best {
    const Cand* ok = nullptr;
    const Cand* closest = nullptr;
    double closest_gap = 1e300;
  };
  std::vector<Best> best(gpus.size());
  for (const auto& c : cands) {
    Best& b = best[static_cast<std::size_t>(c.gpu_index)];
    if (c.sla_ok && (!b.ok || cheaper(c, *b.ok))) b.ok = &c;
    const double gap = std::max(c.p.ttft_s * 1000 / ttft_target, c.p.tpot_ms / tpot_target);
    if (gap < b.closest_gap) {
      b.closest_gap = gap;
      b.closest = &c;
    }
  }
  std::vector<std::size_t> gorder(gpus.size());
  for (std::size_t i = 0; i < gorder.size(); ++i) gorder[i] = i;
  std::stable_sort(gorder.begin(), gorder.end(), [&](std::size_t a, std::size_t b) {
    if ((best[a].ok && best[a].ok == win) != (best[b].ok && best[b].ok == win)) return best[a].ok && best[a].ok == win;
    const double ca = best[a].ok ? best[a].ok->usd_per_m : (best[a].closest ? 1e200 : 1e300);
    const double cb = best[b].ok ? best[b].ok->usd_per_m : (best[b].closest ? 1e200 : 1e300);
    return ca < cb;
  });
  for (std::size_t gi : gorder) {
    const Gpu& g = *gpus[gi];
    const Best& b = best[gi];
    std::string why;
    const Cand* c = b.ok ? b.ok : b.closest;
    if (b.ok && b.ok == win)
      why = "winner";
    else if (b.ok && win && std::abs(b.ok->usd_per_m / win->usd_per_m - 1) < 5e-4)
      why = fmt::format(
          "ties the winner on cost per token ({} tok/s/GPU at {:.2f} USD/GPU-h); ties go to more interactivity, fewer GPUs, then more "
          "compute",
          fmt_num(b.ok->p.tput_total_per_gpu), b.ok->usd_per_hour / b.ok->gpus);
    else if (b.ok && win)
      why = fmt::format("{:.0f}% more per million tokens ({} tok/s/GPU at {:.2f} USD/GPU-h vs {} at {:.2f})",
                        (b.ok->usd_per_m / win->usd_per_m - 1) * 100, fmt_num(b.ok->p.tput_total_per_gpu), b.ok->usd_per_hour / b.ok->gpus,
                        fmt_num(win->p.tput_total_per_gpu), win->usd_per_hour / win->gpus);
    else if (b.closest)
      why = "misses the SLA at every concurrency: " + miss(*b.closest);
    else
      why = "does not fit: " + (no_fit.count(g.id) ? no_fit[g.id] : std::string("no layout"));
    nlohmann::json j = c ? cand_json(*c) : nlohmann::json{{"gpu", g.id}};
    j["why"] = why;
    r.data["runners_up"].push_back(j);
    if (c)
      ru.rows.push_back({g.id, cfg_text(*c), std::to_string(c->conc), fmt_num(c->p.tput_total_per_gpu), fmt_num(c->p.tpot_ms),
                         fmt::format("{:.3f}", c->usd_per_m), why});
    else
      ru.rows.push_back({g.id, "-", "-", "-", "-", "-", why});
  }
  r.tables.push_back(ru);
  if (win) {
    std::vector<const Cand*> ok;
    for (const auto& c : cands)
      if (c.sla_ok && &c != win) ok.push_back(&c);
    std::sort(ok.begin(), ok.end(), [&](const Cand* a, const Cand* b) { return cheaper(*a, *b); });
    Table nx{"Next-cheapest configurations that meet the SLA",
             {"configuration", "conc", "tok/s/GPU", "TPOT ms", "TTFT s", "USD/M tok", "vs winner"},
             {},
             {false, true, true, true, true, true, true}};
    for (std::size_t i = 0; i < ok.size() && static_cast<int>(i) < o.top; ++i) {
      const Cand& c = *ok[i];
      nx.rows.push_back({cfg_text(c), std::to_string(c.conc), fmt_num(c.p.tput_total_per_gpu), fmt_num(c.p.tpot_ms), fmt_num(c.p.ttft_s),
                         fmt::format("{:.3f}", c.usd_per_m), fmt::format("+{:.1f}%", (c.usd_per_m / win->usd_per_m - 1) * 100)});
    }
    if (!nx.rows.empty()) r.tables.push_back(nx);
  }

  r.notes.push_back(fmt::format(
      "Searched {} GPU types x GPU counts up to {} x engine layouts (incl. DP attention) x precisions x concurrency: {} configurations "
      "({} memory checks) in {:.0f} ms; the estimate-and-record loop ran {:.2f} million configurations per second (k3plan_bench times the "
      "speed model alone).",
      gpus.size(), o.max_gpus, fmt_int(static_cast<double>(evaluated)), fit_checks, search_ms,
      perf_seconds > 0 ? static_cast<double>(evaluated) / perf_seconds / 1e6 : 0.0));
  r.notes.push_back(
      "USD per million tokens counts input + output tokens (InferenceX: USD per GPU-hour x 1e6 / (3600 x tok/s per GPU)); idle hours not "
      "included.");
  for (const auto& n : price_notes) r.notes.push_back(n);
  for (const Gpu* g : gpus) {
    for (const auto& e : engines) add_lines(r, table.lookup(*g, e).assumptions);
    gpu_assumptions(r, *g, true);
  }
  add_assumptions(r, base.assumptions);
  r.data["assumptions"] = r.assumptions;
  return r;
}

Sla parse_sla(const std::string& text, const std::string& origin) {
  YamlReader r(origin);
  const YAML::Node root = r.parse(text);
  r.check_keys(root, {"source", "ttft_tiers", "itl_ms"}, "");
  Sla s;
  s.source = r.str(root, "source", "", true);
  const YAML::Node tiers = root["ttft_tiers"];
  if (tiers.IsDefined()) {
    if (!tiers.IsSequence()) r.fail(tiers, "ttft_tiers", "expected a list");
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
