// `k3plan models`, `k3plan gpus`, `k3plan show ID`.
#include <k3plan/commands.hpp>
#include <k3plan/error.hpp>
#include <k3plan/model_summary.hpp>
#include <k3plan/params.hpp>
#include <k3plan/units.hpp>
#include <optional>

#include "common.hpp"

namespace k3plan {

Report run_models(const Catalogue& cat) {
  Report r;
  Table t{"Models (parameters derived from geometry; published in brackets)",
          {"id", "name", "layers", "params_total", "params_active", "as shipped", "weights GB", "max context"},
          {},
          {},
          {1}};  // the name goes first at 100 columns: the id says which model
  r.data["models"] = nlohmann::json::array();
  for (const auto& m : cat.models()) {
    const auto p = count_params(m);
    const auto w = weights_as_shipped(m, p);
    std::string total = fmt_params(p.total), active = fmt_params(p.active);
    if (m.published_params_total) total += fmt::format(" [{}]", fmt_params(m.published_params_total->value));
    if (m.published_params_active) active += fmt::format(" [{}]", fmt_params(m.published_params_active->value));
    t.rows.push_back({m.id, m.name, layer_summary(m), total, active, shipped_precision(m), fmt::format("{:.1f}", w.bytes / kGB),
                      format_context(m.max_context)});
    nlohmann::json j = {{"id", m.id},
                        {"name", m.name},
                        {"layers", m.num_layers()},
                        {"layer_kinds", layer_summary(m)},
                        {"params_total", p.total},
                        {"params_active", p.active},
                        {"weights_bytes_as_shipped", w.bytes},
                        {"max_context", m.max_context}};
    if (m.published_params_total) j["published_params_total"] = m.published_params_total->value;
    if (m.published_params_active) j["published_params_active"] = m.published_params_active->value;
    r.data["models"].push_back(j);
  }
  r.tables.push_back(t);
  return r;
}

Report run_gpus(const Catalogue& cat) {
  Report r;
  Table t{"Accelerators (GB = 1e9 B; GiB = 2^30 B)",
          {"id", "name", "HBM GB (sold)", "driver GiB", "TB/s", "BF16 TF", "FP8 TF", "FP4 TF", "node", "domain", "USD/h", "price date"},
          {},
          {}};
  r.data["gpus"] = nlohmann::json::array();
  for (const auto& g : cat.gpus()) {
    auto mark = [](const Figure& f, std::string s) { return f.assumed ? s + "*" : s; };
    t.rows.push_back({g.id, g.name, mark(g.hbm_gb, fmt::format("{:.0f}", g.hbm_gb.value)),
                      mark(g.memory_reported_mib, fmt::format("{:.2f}", g.reported_bytes() / kGiB)),
                      mark(g.hbm_bandwidth_tb_s, fmt::format("{:.2f}", g.hbm_bandwidth_tb_s.value)),
                      mark(g.tflops_bf16, fmt::format("{:.0f}", g.tflops_bf16.value)),
                      mark(g.tflops_fp8, fmt::format("{:.0f}", g.tflops_fp8.value)),
                      g.tflops_fp4.value > 0 ? mark(g.tflops_fp4, fmt::format("{:.0f}", g.tflops_fp4.value)) : "-",
                      std::to_string(g.gpus_per_node), std::to_string(g.scaleup_domain_gpus),
                      mark(g.price_usd_per_hour, fmt::format("{:.2f}", g.price_usd_per_hour.value)), g.price_date});
    r.data["gpus"].push_back({{"id", g.id},
                              {"name", g.name},
                              {"vendor", g.vendor},
                              {"hbm_bytes", g.nominal_bytes()},
                              {"memory_reported_bytes", g.reported_bytes()},
                              {"hbm_bandwidth_bytes_per_s", g.hbm_bandwidth_tb_s.value * 1e12},
                              {"tflops_dense", {{"bf16", g.tflops_bf16.value}, {"fp8", g.tflops_fp8.value}, {"fp4", g.tflops_fp4.value}}},
                              {"native_formats", g.native_formats},
                              {"scaleup_bytes_per_s", g.scaleup_gb_s.value * 1e9},
                              {"gpus_per_node", g.gpus_per_node},
                              {"scaleup_domain_gpus", g.scaleup_domain_gpus},
                              {"power_w", g.power_w.value},
                              {"usd_per_hour", g.price_usd_per_hour.value},
                              {"price_date", g.price_date}});
  }
  r.tables.push_back(t);
  r.notes.push_back("* = assumed or conflicting figure; `k3plan show ID` gives every source and reason.");
  return r;
}

Report run_show(const Catalogue& cat, const ShowOptions& o) {
  Report r;
  // whatever -m accepts: a catalogue id, a model YAML, a config.json, a model directory, a Hub id
  if (const std::optional<Model> found = find_model_spec(cat, o.id)) {
    const Model& m = *found;
    const auto p = count_params(m);
    const auto w = weights_as_shipped(m, p);
    Table info{fmt::format("{} ({})", m.name, m.id), {"field", "value"}, {}, {false, false}};
    info.rows.push_back({"hf_repo", m.hf_repo});
    info.rows.push_back({"source", m.source});
    info.rows.push_back({"date", m.date});
    info.rows.push_back({"loaded from", m.origin});
    info.rows.push_back({"layers", fmt::format("{} ({})", m.num_layers(), layer_summary(m))});
    info.rows.push_back({"hidden / vocab", fmt::format("{} / {}{}", m.hidden_size, m.vocab_size, m.tie_word_embeddings ? " (tied)" : "")});
    info.rows.push_back({"max context", fmt::format("{} tokens", fmt_int(static_cast<double>(m.max_context)))});
    if (m.moe)
      info.rows.push_back(
          {"MoE", fmt::format("{} routed ({} per token) + {} shared, expert width {}{}, first {} dense{}", m.moe->routed_experts,
                              m.moe->experts_per_token, m.moe->shared_experts, m.moe->expert_intermediate_size,
                              m.moe->latent_size ? fmt::format(", latent {}", m.moe->latent_size) : "", m.moe->first_dense_layers,
                              m.moe->dense_layers.empty() ? "" : fmt::format(", dense also at {}", fmt::join(m.moe->dense_layers, ", ")))});
    info.rows.push_back({"params total / active", fmt::format("{} / {} (derived)", fmt_params(p.total), fmt_params(p.active))});
    if (m.published_params_total)
      info.rows.push_back(
          {"published total", fmt::format("{} ({})", fmt_params(m.published_params_total->value), m.published_params_total->source)});
    if (m.published_params_active)
      info.rows.push_back(
          {"published active", fmt::format("{} ({})", fmt_params(m.published_params_active->value), m.published_params_active->source)});
    if (p.mtp > 0) info.rows.push_back({"MTP layers", fmt::format("{} ({} params, not in total)", m.mtp_layers, fmt_params(p.mtp))});
    if (p.vision > 0)
      info.rows.push_back(
          {"encoder towers", fmt::format("{} params (vision {}{}), not in total", fmt_params(p.vision), fmt_params(p.vision - p.audio),
                                         p.audio > 0 ? fmt::format(", audio {}", fmt_params(p.audio)) : "")});
    info.rows.push_back({"weights as shipped", fmt::format("{} = {}", human_decimal(w.bytes), human_binary(w.bytes))});
    if (m.published_checkpoint_bytes)
      info.rows.push_back({"published checkpoint", fmt::format("{} ({})", human_decimal(m.published_checkpoint_bytes->value),
                                                               m.published_checkpoint_bytes->source)});
    auto dash = [](const std::string& x) { return x.empty() ? std::string("-") : x; };
    info.rows.push_back({"parsers", fmt::format("SGLang tool-call {}, reasoning {}; vLLM tool-call {}, reasoning {}{}",
                                                dash(m.engine.sglang.tool_call_parser), dash(m.engine.sglang.reasoning_parser),
                                                dash(m.engine.vllm.tool_call_parser), dash(m.engine.vllm.reasoning_parser),
                                                m.engine.trust_remote_code ? "; --trust-remote-code" : "")});
    r.tables.push_back(info);
    Table blocks{"Attention blocks", {"block", "kind", "layers", "geometry"}, {}, {false, false, true, false}};
    const std::vector<int> counts = block_layer_counts(m);
    for (std::size_t i = 0; i < m.blocks.size(); ++i) {
      const auto& b = m.blocks[i];
      std::string g;
      switch (b.kind) {
        case AttnKind::gqa:
          g = fmt::format("{} q heads{}, {} kv heads x {}{}{}", b.num_heads,
                          b.q_lora_rank ? fmt::format(" (low-rank q {})", b.q_lora_rank) : "", b.num_kv_heads, b.head_dim,
                          b.sliding_window ? fmt::format(", window {}", b.sliding_window) : "",
                          b.output_gate_width == 1   ? ", gate per head"
                          : b.output_gate_width > 1 ? ", gate per element"
                                                    : "");
          break;
        case AttnKind::mla:
          g = fmt::format("{} heads, q_lora {}, kv_lora {} + rope {}{}{}", b.num_heads, b.q_lora_rank, b.kv_lora_rank, b.qk_rope_head_dim,
                          b.output_gate ? ", output gate" : "",
                          b.indexer_heads ? fmt::format(", indexer {}x{}", b.indexer_heads, b.indexer_head_dim) : "");
          break;
        case AttnKind::kda:
          g = fmt::format("{} heads x {}, conv {}", b.num_heads, b.head_dim, b.conv_kernel);
          break;
        case AttnKind::gdn:
          g = fmt::format("{} k / {} v heads x {}/{}, conv {}", b.num_k_heads, b.num_v_heads, b.head_k_dim, b.head_v_dim, b.conv_kernel);
          break;
        case AttnKind::mamba2:
          g = fmt::format("{} heads x {}, state {}, groups {}", b.num_heads, b.head_dim, b.state_size, b.n_groups);
          break;
        case AttnKind::compressed:
          g = fmt::format("{} heads, kv {} x {}, window {}, ratio {}", b.num_heads, b.num_kv_heads, b.head_dim, b.sliding_window,
                          b.compress_ratio);
          break;
        case AttnKind::none:
          g = "MLP only";
          break;
      }
      blocks.rows.push_back({b.name, to_string(b.kind), std::to_string(counts[i]), g});
    }
    r.tables.push_back(blocks);
    Table groups{"Parameter groups", {"group", "params", "precision", "bytes"}, {}, {}};
    for (int gi = 0; gi < kParamGroups; ++gi) {
      const auto g = static_cast<ParamGroup>(gi);
      if (p[g] <= 0) continue;
      const bool counted = g != ParamGroup::mtp && g != ParamGroup::vision;
      groups.rows.push_back({to_string(g), fmt_params(p[g]), m.precision_of(g),
                             counted ? human_decimal(w.by_group[static_cast<std::size_t>(gi)]) : "(separate)"});
    }
    r.tables.push_back(groups);
    add_assumptions(r, m.assumptions);
    r.data = {{"kind", "model"},
              {"id", m.id},
              {"name", m.name},
              {"hf_repo", m.hf_repo},
              {"source", m.source},
              {"params_total", p.total},
              {"params_active", p.active},
              {"params_mtp", p.mtp},
              {"params_vision", p.vision - p.audio},
              {"params_audio", p.audio},
              {"weights_bytes_as_shipped", w.bytes},
              {"max_context", m.max_context},
              {"layers", m.num_layers()}};
    if (m.published_params_total) r.data["published_params_total"] = figure_json(*m.published_params_total);
    if (m.published_params_active) r.data["published_params_active"] = figure_json(*m.published_params_active);
    if (m.published_checkpoint_bytes) r.data["published_checkpoint_bytes"] = figure_json(*m.published_checkpoint_bytes);
    r.data["assumptions"] = r.assumptions;
    return r;
  }
  const Gpu& g = cat.gpu(o.id);  // throws with a suggestion
  Table t{fmt::format("{} ({})", g.name, g.id), {"field", "value", "source"}, {}, {false, false, false}};
  auto row = [&](const std::string& name, const Figure& f, const std::string& unit) {
    t.rows.push_back(
        {name, fmt::format("{} {}{}", f.value, unit, f.assumed ? " (assumed)" : ""), f.assumed ? f.source + " -- " + f.reason : f.source});
  };
  row("HBM as sold", g.hbm_gb, "GB");
  row("memory the driver reports", g.memory_reported_mib, fmt::format("MiB = {:.2f} GiB", g.reported_bytes() / kGiB));
  row("HBM bandwidth", g.hbm_bandwidth_tb_s, "TB/s");
  row("BF16 dense", g.tflops_bf16, "TFLOPS");
  row("FP8 dense", g.tflops_fp8, "TFLOPS");
  row("FP4 dense", g.tflops_fp4, "TFLOPS");
  row("scale-up per GPU", g.scaleup_gb_s, "GB/s");
  row("power", g.power_w, "W");
  row("rental price", g.price_usd_per_hour, "USD/GPU-hour (" + g.price_date + ")");
  t.rows.push_back({"native formats", fmt::format("{}", fmt::join(g.native_formats, ", ")), ""});
  t.rows.push_back({"GPUs per node / scale-up domain", fmt::format("{} / {}", g.gpus_per_node, g.scaleup_domain_gpus), g.source});
  r.tables.push_back(t);
  add_assumptions(r, g.assumptions);
  r.data = {{"kind", "gpu"},
            {"id", g.id},
            {"name", g.name},
            {"hbm_gb", figure_json(g.hbm_gb)},
            {"memory_reported_mib", figure_json(g.memory_reported_mib)},
            {"hbm_bandwidth_tb_s", figure_json(g.hbm_bandwidth_tb_s)},
            {"tflops_bf16", figure_json(g.tflops_bf16)},
            {"tflops_fp8", figure_json(g.tflops_fp8)},
            {"tflops_fp4", figure_json(g.tflops_fp4)},
            {"scaleup_gb_s", figure_json(g.scaleup_gb_s)},
            {"power_w", figure_json(g.power_w)},
            {"usd_per_hour", figure_json(g.price_usd_per_hour)},
            {"price_date", g.price_date},
            {"native_formats", g.native_formats},
            {"gpus_per_node", g.gpus_per_node},
            {"scaleup_domain_gpus", g.scaleup_domain_gpus},
            {"assumptions", r.assumptions}};
  return r;
}

}  // namespace k3plan
