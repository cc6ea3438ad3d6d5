// `k3plan kv`: KV cache and recurrent state per token, per sequence and for N users.
#include <cmath>
#include <k3plan/commands.hpp>
#include <k3plan/error.hpp>
#include <k3plan/kv.hpp>
#include <k3plan/units.hpp>

#include "common.hpp"

namespace k3plan {

Report run_kv(const Catalogue& cat, const KvCommandOptions& o) {
  Model m;
  const bool what_if = o.layers > 0 || o.kv_heads > 0 || o.head_dim > 0;
  if (what_if && !o.model.empty())
    throw InputError("kv: give either --model or the what-if geometry (--layers, --kv-heads, --head-dim), not both");
  if (what_if) {
    if (o.layers <= 0 || o.kv_heads <= 0 || o.head_dim <= 0)
      throw InputError("kv: the what-if needs all of --layers, --kv-heads and --head-dim, each positive");
    m.id = fmt::format("what-if ({} layers, {} KV heads x {})", o.layers, o.kv_heads, o.head_dim);
    m.name = m.id;
    m.hidden_size = 1;
    m.vocab_size = 1;
    m.max_context = std::int64_t{1} << 34;
    m.dense_intermediate_size = 1;
    AttentionBlock b;
    b.name = "full";
    b.num_heads = o.kv_heads;
    b.num_kv_heads = o.kv_heads;
    b.head_dim = o.head_dim;
    b.v_head_dim = o.head_dim;
    m.blocks.push_back(b);
    m.layers.assign(static_cast<std::size_t>(o.layers), 0);
  } else {
    if (o.model.empty()) throw InputError("kv: --model is required (or the what-if flags --layers --kv-heads --head-dim)");
    m = resolve_model(cat, o.model);
  }
  if (o.users < 1 || o.users > 100000000) throw InputError(fmt::format("--users {}: must be between 1 and 100,000,000", o.users));
  KvOptions ko;
  ko.tp = o.tp;
  ko.kv_dtype = o.kv_dtype;
  ko.state_dtype = o.state_dtype;
  ko.draft_layers = o.draft_layers;
  const KvProfile p = kv_profile(m, ko);
  std::vector<std::int64_t> contexts;
  std::vector<std::string> ctx_text = o.contexts;
  if (ctx_text.empty()) ctx_text = {"8k", "32k", "128k", "1M"};
  for (const auto& c : ctx_text) contexts.push_back(parse_context(c, "--context"));
  Report r;
  for (auto c : contexts)
    if (!what_if && c > m.max_context)
      r.notes.push_back(fmt::format("warning: context {} exceeds {}'s maximum of {} tokens ({}); shown for comparison only",
                                    format_context(c), m.id, fmt_int(static_cast<double>(m.max_context)), format_context(m.max_context)));
  Table layers{fmt::format("{}: cache per GPU at TP{}, KV dtype {}{}", m.id, o.tp, p.kv_dtype,
                           p.state_bytes_per_sequence > 0 ? ", state dtype " + o.state_dtype : ""),
               {"layers", "kind", "count", "B/token", "window", "state/seq"},
               {},
               {false, false, true, true, true, true}};
  nlohmann::json jl = nlohmann::json::array();
  for (const auto& l : p.layers) {
    std::string per_token = fmt_int(l.bytes_per_token);
    if (l.compress_ratio > 0) per_token = fmt::format("{} per {} tokens", fmt_int(l.compressed_entry_bytes), l.compress_ratio);
    std::string kind = to_string(l.kind);
    layers.rows.push_back({l.block, kind, std::to_string(l.count), per_token,
                           l.window ? fmt::format("{} tok x {} B", l.window, fmt_int(l.window_bytes_per_token)) : "-",
                           l.state_bytes_per_sequence > 0 ? human_binary(l.state_bytes_per_sequence) : "-"});
    nlohmann::json j = {{"kind", kind},
                        {"block", l.block},
                        {"count", l.count},
                        {"bytes_per_token", l.bytes_per_token + (l.compress_ratio ? l.compressed_entry_bytes / l.compress_ratio : 0.0)},
                        {"state_bytes_per_sequence", l.state_bytes_per_sequence}};
    if (l.window) {
      j["window_tokens"] = l.window;
      j["window_bytes_per_token"] = l.window_bytes_per_token;
    }
    if (l.compress_ratio) {
      j["compress_ratio"] = l.compress_ratio;
      j["compressed_entry_bytes"] = l.compressed_entry_bytes;
    }
    if (l.draft) j["draft"] = true;
    jl.push_back(j);
  }
  layers.rows.push_back({"total", "", std::to_string(m.num_layers() + o.draft_layers), fmt_int(p.bytes_per_token), "",
                         p.state_bytes_per_sequence > 0 ? human_binary(p.state_bytes_per_sequence) : "-"});
  r.tables.push_back(layers);
  Table rows{
      fmt::format("Per user and for {} user{} (per GPU at TP{})", fmt_int(static_cast<double>(o.users)), o.users == 1 ? "" : "s", o.tp),
      {"context", "tokens", "per user GiB", "per user GB", fmt::format("{} user{} GiB", o.users, o.users == 1 ? "" : "s"),
       fmt::format("{} user{} GB", o.users, o.users == 1 ? "" : "s")},
      {},
      {}};
  nlohmann::json jr = nlohmann::json::array();
  for (auto c : contexts) {
    const double per = p.bytes_per_sequence(c);
    const double all = per * static_cast<double>(o.users);
    rows.rows.push_back({format_context(c), fmt_int(static_cast<double>(c)), fmt::format("{:.3f}", per / kGiB),
                         fmt::format("{:.3f}", per / kGB), fmt::format("{:.2f}", all / kGiB), fmt::format("{:.2f}", all / kGB)});
    jr.push_back({{"context", c}, {"bytes_per_user", per}, {"bytes_all_users", all}});
  }
  r.tables.push_back(rows);
  if (o.csv_curve) {
    Table curve{"Curve: bytes per user against context (per GPU)", {"context"}, {}, {}};
    for (const auto& l : p.layers) curve.headers.push_back(fmt::format("{}_{}_bytes", l.block, to_string(l.kind)));
    curve.headers.push_back("total_bytes");
    for (std::int64_t c = 1024; c <= std::max<std::int64_t>(contexts.back(), 1024); c *= 2) {
      std::vector<std::string> row{std::to_string(c)};
      for (const auto& l : p.layers) row.push_back(fmt::format("{:.0f}", l.bytes_per_sequence(c)));
      row.push_back(fmt::format("{:.0f}", p.bytes_per_sequence(c)));
      curve.rows.push_back(row);
    }
    r.tables.push_back(curve);
  }
  for (const auto& n : p.notes) r.notes.push_back(n);
  const std::int64_t max_ctx = *std::max_element(contexts.begin(), contexts.end());
  const std::string engine_dtype = p.kv_dtype == "bf16" || p.kv_dtype == "fp16" ? "auto" : p.kv_dtype;
  r.notes.push_back(fmt::format(
      "Per GPU at TP{}: {} B/token{}; {} user{} at {} need{} {} = {} per GPU.", o.tp, fmt_int(p.bytes_per_token),
      p.state_bytes_per_sequence > 0 ? fmt::format(" + {} fixed state per sequence", human_binary(p.state_bytes_per_sequence)) : "",
      o.users, o.users == 1 ? "" : "s", format_context(max_ctx), o.users == 1 ? "s" : "",
      human_binary(p.bytes_per_sequence(max_ctx) * static_cast<double>(o.users)),
      human_decimal(p.bytes_per_sequence(max_ctx) * static_cast<double>(o.users))));
  r.notes.push_back(fmt::format("Flags: SGLang --kv-cache-dtype {} --context-length {}; vLLM --kv-cache-dtype {} --max-model-len {}",
                                engine_dtype, max_ctx, engine_dtype, max_ctx));
  r.notes.push_back("GiB = 2^30 B, GB = 1e9 B; k = 1,024 and M = 1,048,576 tokens.");
  // only the geometry this calculation uses (not, say, a published checkpoint size)
  std::vector<Assumption> used;
  for (const auto& a : m.assumptions)
    if (a.what.find("architecture") != std::string::npos || a.what.find("config") != std::string::npos ||
        a.what.find("linear_attn") != std::string::npos || a.what.find("hybrid") != std::string::npos)
      used.push_back(a);
  add_assumptions(r, used);
  r.data = {{"model", m.id},
            {"tp", o.tp},
            {"kv_dtype", p.kv_dtype},
            {"state_dtype", o.state_dtype},
            {"users", o.users},
            {"bytes_per_token", p.bytes_per_token},
            {"state_bytes_per_sequence", p.state_bytes_per_sequence},
            {"layers", jl},
            {"rows", jr},
            {"notes", p.notes},
            {"assumptions", r.assumptions}};
  return r;
}

}  // namespace k3plan
