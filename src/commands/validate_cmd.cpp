// `k3plan validate`: replays real vLLM / SGLang start-up logs through the memory budget and prints
// how close the KV capacity comes (the engine-accuracy table). Cases live in
// data/validation/engine-logs.cases.yaml; see include/k3plan/validate.hpp for the two modes.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <k3plan/budget.hpp>
#include <k3plan/embedded.hpp>
#include <k3plan/error.hpp>
#include <k3plan/kv.hpp>
#include <k3plan/units.hpp>
#include <k3plan/validate.hpp>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include <k3plan/yaml_reader.hpp>
#include "common.hpp"

namespace k3plan {

namespace {

constexpr const char* kEmbeddedCases = "validation/engine-logs.cases.yaml";

struct Measured {
  std::optional<std::int64_t> kv_tokens, gpu_blocks;
  std::optional<double> concurrency;
  std::vector<double> pool_gib;  // empty, one value, or one per pipeline stage
  std::optional<double> total_gib, requested_gib, weights_gib, activation_gib, non_torch_gib;
  std::optional<double> free_at_init_gib, free_after_weights_gib;
};

struct Case {
  std::string id, source, version, model_spec, gpu_label, mode, note;
  Gpu gpu;
  bool gpu_inline = false;
  std::string gpu_like;
  Layout layout;
  EngineSettings settings;
  std::int64_t max_model_len = 0;
  Measured measured;
};

// ---------------------------------------------------------------------------------------------
// parsing

std::optional<double> opt_number(const YamlReader& r, const YAML::Node& n, const char* key, const std::string& ctx, double lo, double hi) {
  if (!r.has(n, key)) return std::nullopt;
  return r.number(n, key, ctx, true, 0, lo, hi);
}

std::optional<std::int64_t> opt_integer(const YamlReader& r, const YAML::Node& n, const char* key, const std::string& ctx, std::int64_t lo,
                                        std::int64_t hi) {
  if (!r.has(n, key)) return std::nullopt;
  return r.integer(n, key, ctx, true, 0, lo, hi);
}

double list_number(const YamlReader& r, const YAML::Node& n, const std::string& field, double lo, double hi) {
  if (!n.IsScalar()) r.fail(n, field, "expected a number");
  double v = 0;
  try {
    v = n.as<double>();
  } catch (const YAML::Exception&) {
    r.fail(n, field, fmt::format("expected a number, got '{}'", n.Scalar()));
  }
  if (!std::isfinite(v) || v < lo || v > hi) r.fail(n, field, fmt::format("must be between {} and {}", lo, hi));
  return v;
}

Gpu parse_gpu_ref(const YamlReader& r, const Catalogue& cat, const YAML::Node& n, const std::string& ctx, Case& c) {
  if (!n.IsDefined() || n.IsNull()) r.fail(n, ctx, "missing");
  if (n.IsScalar()) {
    c.gpu_label = n.Scalar();
    return cat.gpu(n.Scalar());
  }
  r.check_keys(n, {"name", "memory_reported_gib", "like"}, ctx);
  c.gpu_inline = true;
  c.gpu_like = r.str(n, "like", ctx, false, "h100");
  Gpu g = cat.gpu(c.gpu_like);
  const std::string name = r.str(n, "name", ctx, true);
  const double gib = r.number(n, "memory_reported_gib", ctx, true, 0, 1, 4096);
  g.id = name;
  g.name = name;
  g.aliases.clear();
  g.memory_reported_mib = Figure{gib * 1024, fmt::format("engine-logs case {}: total memory the engine reported", c.id), false, ""};
  g.memory_engine_total_mib = Figure{};  // the logged total is what the engine saw
  c.gpu_label = name;
  return g;
}

Case parse_case(const YamlReader& r, const Catalogue& cat, const YAML::Node& n, std::size_t index) {
  const std::string ctx0 = fmt::format("cases[{}]", index);
  r.check_keys(n, {"id", "source", "engine", "version", "model", "gpu", "layout", "flags", "measured", "mode", "note"}, ctx0);
  Case c;
  c.id = r.str(n, "id", ctx0, true);
  const std::string ctx = fmt::format("cases[{}] ({})", index, c.id);
  c.source = r.str(n, "source", ctx, true);
  c.version = r.str(n, "version", ctx, false);
  c.model_spec = r.str(n, "model", ctx, true);
  c.note = r.str(n, "note", ctx, false);
  c.mode = r.str(n, "mode", ctx, true);
  if (c.mode != "pieces" && c.mode != "predict") r.fail(n["mode"], ctx + ".mode", "expected pieces or predict");
  const std::string eng = r.str(n, "engine", ctx, true);
  if (eng != "vllm" && eng != "sglang") r.fail(n["engine"], ctx + ".engine", "expected vllm or sglang");
  c.settings.engine = parse_engine(eng);
  const bool vllm = c.settings.engine == Engine::vllm;
  c.gpu = parse_gpu_ref(r, cat, n["gpu"], ctx + ".gpu", c);

  if (r.has(n, "layout")) {
    const auto l = n["layout"];
    const std::string lc = ctx + ".layout";
    r.check_keys(l, {"tp", "pp", "dp", "ep", "dp_attention"}, lc);
    c.layout.tp = static_cast<int>(r.integer(l, "tp", lc, false, 1, 1, 4096));
    c.layout.pp = static_cast<int>(r.integer(l, "pp", lc, false, 1, 1, 4096));
    c.layout.dp = static_cast<int>(r.integer(l, "dp", lc, false, 1, 1, 4096));
    c.layout.ep = static_cast<int>(r.integer(l, "ep", lc, false, 1, 1, 4096));
    c.layout.dp_attention = r.boolean(l, "dp_attention", lc, false);
  }

  if (r.has(n, "flags")) {
    const auto f = n["flags"];
    const std::string fc = ctx + ".flags";
    r.check_keys(f,
                 {"gpu_memory_utilization", "mem_fraction_static", "max_model_len", "kv_dtype", "max_num_batched_tokens", "max_num_seqs",
                  "block_size", "precision", "chunked_prefill_size", "cuda_graph_max_bs"},
                 fc);
    if (r.has(f, "gpu_memory_utilization")) {
      if (!vllm) r.fail(f["gpu_memory_utilization"], fc + ".gpu_memory_utilization", "a vLLM flag; SGLang uses mem_fraction_static");
      c.settings.gpu_memory_utilization = r.number(f, "gpu_memory_utilization", fc, true, 0, 0.01, 1);
    }
    if (r.has(f, "mem_fraction_static")) {
      if (vllm) r.fail(f["mem_fraction_static"], fc + ".mem_fraction_static", "an SGLang flag; vLLM uses gpu_memory_utilization");
      c.settings.mem_fraction_static = r.number(f, "mem_fraction_static", fc, true, 0, 0.01, 0.999);
    }
    c.max_model_len = r.integer(f, "max_model_len", fc, false, 0, 1, std::int64_t{1} << 34);
    c.settings.kv_dtype = r.str(f, "kv_dtype", fc, false, "auto");
    c.settings.max_num_batched_tokens = r.integer(f, "max_num_batched_tokens", fc, false, 0, 1, std::int64_t{1} << 34);
    c.settings.max_num_seqs = r.integer(f, "max_num_seqs", fc, false, 0, 1, 1 << 24);
    c.settings.block_size = static_cast<int>(r.integer(f, "block_size", fc, false, 16, 1, 4096));
    c.settings.precision = r.str(f, "precision", fc, false);
    c.settings.chunked_prefill_size = r.integer(f, "chunked_prefill_size", fc, false, 0, 1, std::int64_t{1} << 34);
    c.settings.cuda_graph_max_bs = static_cast<int>(r.integer(f, "cuda_graph_max_bs", fc, false, 0, 1, 1 << 20));
  }
  if (!vllm) c.settings.block_size = 1;  // SGLang's default page size: no block rounding

  const auto m = n["measured"];
  const std::string mc = ctx + ".measured";
  if (!m.IsDefined()) r.fail(n, mc, "missing");
  r.check_keys(m,
               {"kv_tokens", "gpu_blocks", "concurrency", "pool_gib", "total_gib", "requested_gib", "weights_gib", "activation_gib",
                "non_torch_gib", "free_at_init_gib", "free_after_weights_gib"},
               mc);
  Measured& ms = c.measured;
  ms.kv_tokens = opt_integer(r, m, "kv_tokens", mc, 1, std::int64_t{1} << 40);
  ms.gpu_blocks = opt_integer(r, m, "gpu_blocks", mc, 1, std::int64_t{1} << 40);
  ms.concurrency = opt_number(r, m, "concurrency", mc, 1e-6, 1e9);
  if (r.has(m, "pool_gib")) {
    const auto p = m["pool_gib"];
    if (p.IsSequence()) {
      for (std::size_t i = 0; i < p.size(); ++i) ms.pool_gib.push_back(list_number(r, p[i], fmt::format("{}.pool_gib[{}]", mc, i), 0, 1e5));
      if (ms.pool_gib.empty()) r.fail(p, mc + ".pool_gib", "empty list");
      if (ms.pool_gib.size() != 1 && static_cast<int>(ms.pool_gib.size()) != c.layout.pp)
        r.fail(p, mc + ".pool_gib", fmt::format("{} values for {} pipeline stages", ms.pool_gib.size(), c.layout.pp));
    } else {
      ms.pool_gib.push_back(r.number(m, "pool_gib", mc, true, 0, 0, 1e5));
    }
  }
  ms.total_gib = opt_number(r, m, "total_gib", mc, 0.1, 1e5);
  ms.requested_gib = opt_number(r, m, "requested_gib", mc, 0.1, 1e5);
  ms.weights_gib = opt_number(r, m, "weights_gib", mc, 0, 1e5);
  ms.activation_gib = opt_number(r, m, "activation_gib", mc, 0, 1e5);
  ms.non_torch_gib = opt_number(r, m, "non_torch_gib", mc, 0, 1e5);
  ms.free_at_init_gib = opt_number(r, m, "free_at_init_gib", mc, 0, 1e5);
  ms.free_after_weights_gib = opt_number(r, m, "free_after_weights_gib", mc, 0, 1e5);
  if (ms.gpu_blocks && !vllm) r.fail(m["gpu_blocks"], mc + ".gpu_blocks", "a vLLM line; give kv_tokens for SGLang");
  if (ms.concurrency && c.max_model_len <= 0) r.fail(m["concurrency"], mc + ".concurrency", "needs flags.max_model_len");
  const bool has_tokens = ms.kv_tokens || ms.gpu_blocks || ms.concurrency;
  if (c.mode == "pieces" && !has_tokens) r.fail(m, mc, "pieces mode compares tokens: give kv_tokens, gpu_blocks or concurrency");
  if (!has_tokens && ms.pool_gib.empty()) r.fail(m, mc, "nothing to compare: give kv_tokens, gpu_blocks, concurrency or pool_gib");
  if (c.mode == "pieces") {
    const bool vllm_pieces = ms.weights_gib && ms.activation_gib && ms.non_torch_gib && (ms.total_gib || ms.requested_gib);
    const bool sglang_pieces = ms.free_at_init_gib && ms.free_after_weights_gib;
    if (!(vllm ? vllm_pieces : sglang_pieces) && ms.pool_gib.empty())
      r.fail(m, mc,
             vllm ? "pieces mode needs the pool: pool_gib, or weights_gib + activation_gib + non_torch_gib + total_gib (or requested_gib)"
                  : "pieces mode needs the pool: pool_gib, or free_at_init_gib + free_after_weights_gib");
    if (!vllm && sglang_pieces && c.settings.mem_fraction_static <= 0)
      r.fail(n, ctx + ".flags.mem_fraction_static", "the SGLang pool formula needs the logged mem_fraction_static");
  }
  return c;
}

std::vector<Case> parse_cases(const Catalogue& cat, const std::string& text, const std::string& origin) {
  YamlReader r(origin);
  const YAML::Node root = r.parse(text);
  r.check_keys(root, {"cases"}, "");
  const auto list = root["cases"];
  if (!list.IsSequence()) r.fail(list, "cases", "expected a list");
  std::vector<Case> out;
  std::set<std::string> ids;
  for (std::size_t i = 0; i < list.size(); ++i) {
    Case c = parse_case(r, cat, list[i], i);
    if (!ids.insert(c.id).second) r.fail(list[i]["id"], fmt::format("cases[{}].id", i), fmt::format("duplicate case id '{}'", c.id));
    out.push_back(std::move(c));
  }
  if (out.empty()) r.fail(list, "cases", "no cases");
  return out;
}

// ---------------------------------------------------------------------------------------------
// evaluation

struct Outcome {
  std::int64_t measured_tokens = -1;
  std::string measured_from;
  std::int64_t predicted_tokens = -1;
  std::vector<double> predicted_pool_bytes;  // per stage
  std::vector<double> bytes_per_token;       // per stage
  std::string pool_from;
  std::string compared;  // kv_tokens | pool_gib
  double measured_value = 0, predicted_value = 0;
  double error_pct = 0;
  bool within = true;
  std::string verdict;
  std::vector<std::string> diagnostics;
  nlohmann::json predicted = nlohmann::json::object();
};

std::int64_t measured_tokens(const Case& c, std::string* from) {
  const Measured& m = c.measured;
  if (m.kv_tokens) {
    *from = "kv_tokens";
    return *m.kv_tokens;
  }
  if (m.gpu_blocks) {
    *from = fmt::format("gpu_blocks x {}", c.settings.block_size);
    return *m.gpu_blocks * c.settings.block_size;
  }
  if (m.concurrency) {
    *from = fmt::format("concurrency x {}", c.max_model_len);
    return static_cast<std::int64_t>(std::llround(*m.concurrency * static_cast<double>(c.max_model_len)));
  }
  return -1;
}

int attention_tp(const Case& c) {
  const Layout& l = c.layout;
  return (c.settings.engine == Engine::sglang && l.dp_attention) ? std::max(1, l.tp / std::max(1, l.dp)) : l.tp;
}

// Layers per pipeline stage, as vLLM get_pp_indices splits them (the extra layers go first).
std::vector<int> stage_layers(int layers, int pp) {
  pp = std::max(1, std::min(pp, layers));
  std::vector<int> n;
  for (int s = 0; s < pp; ++s) n.push_back(layers / pp + (s < layers % pp ? 1 : 0));
  return n;
}

std::int64_t tokens_for(double pool_bytes, double per_token, int block) {
  if (pool_bytes <= 0 || per_token <= 0) return 0;
  const auto t = static_cast<std::int64_t>(std::floor(pool_bytes / per_token));
  return block > 1 ? t / block * block : t;
}

double pct(double predicted, double measured) { return measured != 0 ? (predicted - measured) / measured * 100.0 : 0.0; }

void evaluate_pieces(const Case& c, const Model& m, Outcome& o) {
  const Measured& ms = c.measured;
  const bool vllm = c.settings.engine == Engine::vllm;
  const auto counts = stage_layers(m.num_layers(), c.layout.pp);
  // the pool from the logged pieces, else the logged pool
  double pieces_pool = std::numeric_limits<double>::quiet_NaN();
  if (vllm && ms.weights_gib && ms.activation_gib && ms.non_torch_gib && (ms.total_gib || ms.requested_gib)) {
    const double util = c.settings.gpu_memory_utilization > 0 ? c.settings.gpu_memory_utilization : vllm_default_utilization();
    const double requested = ms.requested_gib ? *ms.requested_gib : util * *ms.total_gib;
    pieces_pool = requested - *ms.weights_gib - *ms.activation_gib - *ms.non_torch_gib;
    o.pool_from =
        fmt::format("{} - weights {} - activation {} - non-torch {} = {:.2f} GiB",
                    ms.requested_gib ? fmt::format("requested {}", *ms.requested_gib) : fmt::format("{} x total {}", util, *ms.total_gib),
                    *ms.weights_gib, *ms.activation_gib, *ms.non_torch_gib, pieces_pool);
  } else if (!vllm && ms.free_at_init_gib && ms.free_after_weights_gib) {
    const double mfs = c.settings.mem_fraction_static;
    pieces_pool = *ms.free_after_weights_gib - *ms.free_at_init_gib * (1 - mfs);
    o.pool_from = fmt::format("free after weights {} - free at init {} x (1 - {}) = {:.3f} GiB", *ms.free_after_weights_gib,
                              *ms.free_at_init_gib, mfs, pieces_pool);
  } else {
    o.pool_from = ms.pool_gib.size() == 1 ? fmt::format("logged pool {} GiB", ms.pool_gib[0]) : "logged pool per stage";
  }
  int start = 0;
  o.predicted_tokens = -1;
  for (std::size_t s = 0; s < counts.size(); ++s) {
    Model sub = m;
    sub.layers.assign(m.layers.begin() + start, m.layers.begin() + start + counts[s]);
    start += counts[s];
    KvOptions ko;
    ko.tp = attention_tp(c);
    ko.kv_dtype = c.settings.kv_dtype;
    const KvProfile kv = kv_profile(sub, ko);
    if (kv.state_bytes_per_sequence > 0)
      throw InputError(
          fmt::format("case {}: pieces mode handles models whose cache grows per token only ({} has recurrent state)", c.id, m.id));
    for (const auto& l : kv.layers)
      if (l.window > 0 || l.compress_ratio > 0)
        throw InputError(fmt::format(
            "case {}: pieces mode handles full-attention and MLA models only ({} has windowed or compressed layers)", c.id, m.id));
    const double pool_gib = !std::isnan(pieces_pool) ? pieces_pool : (ms.pool_gib.size() == 1 ? ms.pool_gib[0] : ms.pool_gib[s]);
    const double pool = pool_gib * kGiB;
    const std::int64_t t = tokens_for(pool, kv.bytes_per_token, c.settings.block_size);
    o.bytes_per_token.push_back(kv.bytes_per_token);
    o.predicted_pool_bytes.push_back(pool);
    o.predicted_tokens = o.predicted_tokens < 0 ? t : std::min(o.predicted_tokens, t);
  }
  o.compared = "kv_tokens";
  o.measured_value = static_cast<double>(o.measured_tokens);
  o.predicted_value = static_cast<double>(o.predicted_tokens);
  o.error_pct = pct(o.predicted_value, o.measured_value);
  o.within = std::abs(o.error_pct) <= kPiecesTolerancePct;
  o.verdict = o.within ? "ok" : "MISS";
  if (!o.within)
    o.diagnostics.push_back(fmt::format("{} B/token against the logged pool; the engine's implies {:.0f}",
                                        fmt_int(o.bytes_per_token.front()),
                                        o.predicted_pool_bytes.front() / std::max<double>(1.0, o.measured_value)));
  if (!std::isnan(pieces_pool) && !ms.pool_gib.empty() && std::abs(pieces_pool - ms.pool_gib[0]) > 0.02)
    o.diagnostics.push_back(fmt::format("pieces give {:.2f} GiB, the log printed {:.2f}", pieces_pool, ms.pool_gib[0]));
  std::vector<double> pools_gib;
  for (double p : o.predicted_pool_bytes) pools_gib.push_back(p / kGiB);
  o.predicted = {
      {"kv_tokens", o.predicted_tokens}, {"pool_gib", pools_gib}, {"kv_bytes_per_token", o.bytes_per_token}, {"pool_from", o.pool_from}};
}

void evaluate_predict(const Case& c, const Model& m, Outcome& o, std::vector<std::string>& fit_assumptions) {
  const Measured& ms = c.measured;
  const bool vllm = c.settings.engine == Engine::vllm;
  const std::int64_t context = c.max_model_len > 0 ? c.max_model_len : m.max_context;
  const FitResult f = evaluate_fit(m, c.gpu, c.layout, c.settings, context, 1);
  for (const auto& a : f.assumptions) fit_assumptions.push_back(a);
  o.predicted_tokens = f.limiting.kv_tokens;
  std::size_t lim = 0;
  for (std::size_t s = 0; s < f.ranks.size(); ++s) {
    const auto& b = f.ranks[s];
    o.predicted_pool_bytes.push_back(b.kv_pool_bytes + b.state_pool_bytes + b.free_bytes);
    o.bytes_per_token.push_back(b.kv_bytes_per_token);
    if (b.stage == f.limiting.stage) lim = s;
  }
  const RankBudget& b = f.limiting;
  const double pool_gib = o.predicted_pool_bytes[lim] / kGiB;
  if (o.measured_tokens >= 0) {
    o.compared = "kv_tokens";
    o.measured_value = static_cast<double>(o.measured_tokens);
    o.predicted_value = static_cast<double>(o.predicted_tokens);
  } else {
    o.compared = "pool_gib";
    o.measured_value = ms.pool_gib.size() == 1 ? ms.pool_gib[0] : ms.pool_gib[std::min(lim, ms.pool_gib.size() - 1)];
    o.predicted_value = pool_gib;
  }
  o.error_pct = pct(o.predicted_value, o.measured_value);
  o.verdict = "n/a";

  // where the pool differs from the log: each logged piece against ours, as its effect on the pool
  struct Gap {
    std::string what;
    double pool_effect_gib;
    double ours, logged;
  };
  std::vector<Gap> gaps;
  const double cap = b.capacity_bytes / kGiB;
  const double util = f.utilization_used;
  if (vllm) {
    std::optional<double> total = ms.total_gib;
    if (!total && ms.requested_gib) total = *ms.requested_gib / util;
    if (total) gaps.push_back({"capacity", util * (cap - *total), cap, *total});
    if (ms.weights_gib) gaps.push_back({"weights", -(b.weights_bytes / kGiB - *ms.weights_gib), b.weights_bytes / kGiB, *ms.weights_gib});
    if (ms.activation_gib)
      gaps.push_back({"activation", -(b.activation_bytes / kGiB - *ms.activation_gib), b.activation_bytes / kGiB, *ms.activation_gib});
    if (ms.non_torch_gib)
      gaps.push_back({"non-torch", -(b.overhead_bytes / kGiB - *ms.non_torch_gib), b.overhead_bytes / kGiB, *ms.non_torch_gib});
  } else {
    const double init = cap - b.overhead_bytes / kGiB;
    if (ms.free_at_init_gib) gaps.push_back({"free at init", util * (init - *ms.free_at_init_gib), init, *ms.free_at_init_gib});
    if (ms.free_at_init_gib && ms.free_after_weights_gib) {
      const double w = *ms.free_at_init_gib - *ms.free_after_weights_gib;
      gaps.push_back({"weights", -(b.weights_bytes / kGiB - w), b.weights_bytes / kGiB, w});
    }
  }
  std::stable_sort(gaps.begin(), gaps.end(),
                   [](const Gap& x, const Gap& y) { return std::abs(x.pool_effect_gib) > std::abs(y.pool_effect_gib); });
  if (!ms.pool_gib.empty()) {
    const double logged = ms.pool_gib.size() == 1 ? ms.pool_gib[0] : ms.pool_gib[std::min(lim, ms.pool_gib.size() - 1)];
    std::string s = fmt::format("pool {:+.2f} GiB", pool_gib - logged);
    std::vector<std::string> parts;
    for (const auto& g : gaps)
      if (std::abs(g.pool_effect_gib) >= 0.05) parts.push_back(fmt::format("{} {:+.2f}", g.what, g.pool_effect_gib));
    if (!parts.empty()) s += " (" + fmt::format("{}", fmt::join(parts, ", ")) + ")";
    o.diagnostics.push_back(s);
  } else if (o.measured_tokens > 0 && !o.bytes_per_token.empty() && o.bytes_per_token[lim] > 0) {
    o.diagnostics.push_back(fmt::format("our pool {:.2f} GiB; the log implies {:.2f} GiB at our {} B/token", pool_gib,
                                        static_cast<double>(o.measured_tokens) * o.bytes_per_token[lim] / kGiB,
                                        fmt_int(o.bytes_per_token[lim])));
  }
  nlohmann::json pieces = nlohmann::json::array();
  for (const auto& g : gaps)
    pieces.push_back({{"piece", g.what}, {"ours_gib", g.ours}, {"logged_gib", g.logged}, {"pool_effect_gib", g.pool_effect_gib + 0.0}});
  std::vector<double> pools_gib;
  for (double p : o.predicted_pool_bytes) pools_gib.push_back(p / kGiB);
  o.predicted = {{"kv_tokens", o.predicted_tokens},
                 {"pool_gib", pools_gib},
                 {"kv_bytes_per_token", o.bytes_per_token},
                 {"capacity_gib", cap},
                 {"memory_fraction", util},
                 {"weights_gib", b.weights_bytes / kGiB},
                 {"activation_gib", b.activation_bytes / kGiB},
                 {"overhead_gib", b.overhead_bytes / kGiB},
                 {"max_num_batched_tokens", f.max_num_batched_tokens},
                 {"max_num_seqs", f.max_num_seqs},
                 {"pieces_against_log", pieces},
                 {"fit_reasons", f.reasons}};
}

std::string layout_text(const Case& c) {
  const Layout& l = c.layout;
  std::string s = fmt::format("TP{}", l.tp);
  if (l.pp > 1) s += fmt::format(" PP{}", l.pp);
  if (l.dp > 1) s += fmt::format(" DP{}", l.dp);
  if (l.ep > 1) s += fmt::format(" EP{}", l.ep);
  if (l.dp_attention) s += " DPA";
  return s;
}

std::string value_text(const std::string& compared, double v) {
  return compared == "kv_tokens" ? fmt_int(v) : fmt::format("{:.2f} GiB", v);
}

nlohmann::json measured_json(const Case& c, const Outcome& o) {
  const Measured& m = c.measured;
  nlohmann::json j = nlohmann::json::object();
  if (o.measured_tokens >= 0) {
    j["kv_tokens"] = o.measured_tokens;
    j["kv_tokens_from"] = o.measured_from;
  }
  if (!m.pool_gib.empty()) j["pool_gib"] = m.pool_gib;
  auto put = [&](const char* k, const std::optional<double>& v) {
    if (v) j[k] = *v;
  };
  put("total_gib", m.total_gib);
  put("requested_gib", m.requested_gib);
  put("weights_gib", m.weights_gib);
  put("activation_gib", m.activation_gib);
  put("non_torch_gib", m.non_torch_gib);
  put("free_at_init_gib", m.free_at_init_gib);
  put("free_after_weights_gib", m.free_after_weights_gib);
  put("concurrency", m.concurrency);
  if (m.gpu_blocks) j["gpu_blocks"] = *m.gpu_blocks;
  return j;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

Report run_validate_text(const Catalogue& cat, const std::string& text, const std::string& origin) {
  const std::vector<Case> cases = parse_cases(cat, text, origin);
  Report r;
  Table t{
      fmt::format("Engine accuracy: {} start-up logs replayed through the fit budget (KV tokens per GPU, limiting stage)", cases.size()),
      {"id", "engine", "model", "gpu", "layout", "measured", "predicted", "error", "mode", "verdict", "note"},
      {},
      {false, false, false, false, false, true, true, true, false, false, false}};
  nlohmann::json jc = nlohmann::json::array();
  int pieces_total = 0, pieces_ok = 0;
  std::vector<double> predict_errors;
  std::vector<std::string> misses;
  std::vector<std::string> fit_assumptions;
  for (const auto& c : cases) {
    const Model m = resolve_model(cat, c.model_spec);
    add_assumptions(r, m.assumptions);
    Outcome o;
    o.measured_tokens = measured_tokens(c, &o.measured_from);
    if (c.mode == "pieces") {
      evaluate_pieces(c, m, o);
      ++pieces_total;
      if (o.within)
        ++pieces_ok;
      else
        misses.push_back(c.id);
    } else {
      evaluate_predict(c, m, o, fit_assumptions);
      predict_errors.push_back(std::abs(o.error_pct));
    }
    std::string note = c.note;
    for (const auto& d : o.diagnostics) note += (note.empty() ? "" : "; ") + d;
    t.rows.push_back({c.id, to_string(c.settings.engine), m.id, c.gpu_label, layout_text(c), value_text(o.compared, o.measured_value),
                      value_text(o.compared, o.predicted_value), fmt::format("{:+.2f}%", o.error_pct), c.mode, o.verdict, note});
    nlohmann::json flags = {{"kv_dtype", c.settings.kv_dtype}, {"block_size", c.settings.block_size}};
    if (c.settings.gpu_memory_utilization > 0) flags["gpu_memory_utilization"] = c.settings.gpu_memory_utilization;
    if (c.settings.mem_fraction_static > 0) flags["mem_fraction_static"] = c.settings.mem_fraction_static;
    if (c.max_model_len > 0) flags["max_model_len"] = c.max_model_len;
    if (c.settings.max_num_batched_tokens > 0) flags["max_num_batched_tokens"] = c.settings.max_num_batched_tokens;
    if (c.settings.max_num_seqs > 0) flags["max_num_seqs"] = c.settings.max_num_seqs;
    if (!c.settings.precision.empty()) flags["precision"] = c.settings.precision;
    nlohmann::json j = {
        {"id", c.id},
        {"source", c.source},
        {"engine", to_string(c.settings.engine)},
        {"version", c.version},
        {"model", m.id},
        {"gpu", c.gpu_label},
        {"gpu_memory_gib", c.gpu.reported_bytes() / kGiB},
        {"layout",
         {{"tp", c.layout.tp}, {"pp", c.layout.pp}, {"dp", c.layout.dp}, {"ep", c.layout.ep}, {"dp_attention", c.layout.dp_attention}}},
        {"flags", flags},
        {"mode", c.mode},
        {"measured", measured_json(c, o)},
        {"predicted", o.predicted},
        {"compared", o.compared},
        {"measured_value", o.measured_value},
        {"predicted_value", o.predicted_value},
        {"error_pct", o.error_pct},
        {"abs_error_pct", std::abs(o.error_pct)},
        {"verdict", o.verdict},
        {"note", note}};
    if (c.mode == "pieces") j["within_3pct"] = o.within;
    jc.push_back(j);
    if (c.gpu_inline) {
      const std::string a = fmt::format("{}: not in the catalogue; {:.2f} GiB total from the case, every other property copied from {}",
                                        c.gpu_label, c.gpu.reported_bytes() / kGiB, c.gpu_like);
      if (std::find(r.assumptions.begin(), r.assumptions.end(), a) == r.assumptions.end()) r.assumptions.push_back(a);
    }
  }
  for (const auto& a : fit_assumptions)
    if (std::find(r.assumptions.begin(), r.assumptions.end(), a) == r.assumptions.end()) r.assumptions.push_back(a);
  r.tables.push_back(t);
  const double med = median(predict_errors);
  const double worst = predict_errors.empty() ? 0 : *std::max_element(predict_errors.begin(), predict_errors.end());
  r.notes.push_back(fmt::format(
      "pieces: {}/{} within {:.0f}% (the logged weights, activation and non-torch memory, or the logged pool, through the engine's "
      "pool formula; checks the per-token KV bytes and the block rounding){}",
      pieces_ok, pieces_total, kPiecesTolerancePct, misses.empty() ? "" : fmt::format("; MISS: {}", fmt::join(misses, ", "))));
  r.notes.push_back(fmt::format(
      "predict: median |error| {:.2f}%, worst {:.2f}% over {} cases (our weights, activation and overhead model, as `k3plan fit` "
      "computes it; capacity from the catalogue unless the case gives the GPU inline)",
      med, worst, predict_errors.size()));
  r.notes.push_back("note: pool gaps are ours minus the log, split by piece (positive = we leave more for KV). GiB = 2^30 B.");
  r.data = {{"cases", jc},
            {"summary",
             {{"pieces_within_3pct", pieces_ok},
              {"pieces_total", pieces_total},
              {"predict_total", predict_errors.size()},
              {"predict_median_abs_error_pct", med},
              {"predict_max_abs_error_pct", worst}}},
            {"assumptions", r.assumptions}};
  r.exit_code = misses.empty() ? 0 : 1;
  return r;
}

Report run_validate(const Catalogue& cat, const std::string& cases_path) {
  if (!cases_path.empty()) return run_validate_text(cat, read_text_file(cases_path), cases_path);
  for (const auto& f : embedded_files())
    if (std::string(f.path) == kEmbeddedCases) return run_validate_text(cat, std::string(f.text), std::string("data/") + kEmbeddedCases);
  throw InputError(fmt::format("data/{} is not embedded in this build", kEmbeddedCases));
}

}  // namespace k3plan
