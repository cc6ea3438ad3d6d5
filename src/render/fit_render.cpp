// How one fit reads (fit_render.hpp).
#include <fmt/format.h>

#include <k3plan/deploy.hpp>
#include <k3plan/engine.hpp>
#include <k3plan/fit_render.hpp>
#include <k3plan/units.hpp>

namespace k3plan {

std::vector<std::string> shell_lines(const std::string& program, const std::vector<std::string>& words, const std::vector<std::string>& env) {
  // NAME=value words on lines of their own before the program (`A=1 \` + newline + `cmd` is `A=1 cmd`),
  // so the first line stays short enough not to wrap
  std::vector<std::string> out;
  for (const auto& e : env) out.push_back("  " + shell_word(e));
  out.push_back("  " + program);
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string l = "    " + shell_word(words[i]);
    if (i + 1 < words.size() && words[i + 1].rfind("--", 0) != 0) l += " " + shell_word(words[++i]);
    out.push_back(l);
  }
  for (std::size_t i = 0; i + 1 < out.size(); ++i) out[i] += " \\";
  return out;
}

std::string shell_command(const std::string& program, const std::vector<std::string>& words, const std::vector<std::string>& env) {
  std::string out;
  for (const auto& e : env) out += shell_word(e) + " ";
  out += program;
  for (const auto& w : words) out += " " + shell_word(w);
  return out;
}

nlohmann::json fit_json(const FitResult& f) {
  nlohmann::json j = {{"model", f.model},
                      {"gpu", f.gpu},
                      {"engine", to_string(f.settings.engine)},
                      {"engine_version", f.settings.model().version().id},
                      {"engine_label", f.engine_label},
                      {"accuracy",
                       {{"validated", f.accuracy.validated},
                        {"scope", f.accuracy.scope},
                        {"logs", f.accuracy.logs},
                        {"median_abs_error_pct", f.accuracy.median_abs_error_pct},
                        {"max_abs_error_pct", f.accuracy.max_abs_error_pct},
                        {"text", f.accuracy.text()}}},
                      {"gpus", f.gpus},
                      {"nodes", f.nodes},
                      {"layout", layout_json(f.layout)},
                      {"per_gpu", budget_json(f.limiting)},
                      {"stages", nlohmann::json::array()},
                      {"kv_cache_tokens", f.kv_cache_tokens},
                      {"max_users", f.max_users},
                      {"max_context_one_user", f.max_context_one_user},
                      {"context", f.context},
                      {"users", f.users},
                      {"headroom", f.headroom},
                      {"memory_fraction", f.utilization_used},
                      {"kv_dtype", f.settings.kv_dtype},
                      {"max_num_batched_tokens", f.max_num_batched_tokens},
                      {"max_num_seqs", f.max_num_seqs},
                      {"fits", f.fits},
                      {"reasons", f.reasons},
                      {"warnings", f.warnings},
                      {"flags", {{"sglang", f.sglang_flags}, {"vllm", f.vllm_flags}}},
                      {"env", {{"sglang", f.sglang_env}, {"vllm", f.vllm_env}}},
                      {"flag_notes", f.flag_notes},
                      {"assumptions", f.assumptions}};
  for (const auto& b : f.ranks) j["stages"].push_back(budget_json(b));
  return j;
}

Table budget_table(const FitResult& f) {
  Table t{fmt::format("Per-GPU memory budget ({}, stage {} of {}; GiB = 2^30 B)", f.engine_label, f.limiting.stage + 1, f.ranks.size()),
          {"item", "GiB", "GB", "share"},
          {},
          {false, true, true, true}};
  const auto& b = f.limiting;
  auto row = [&](const std::string& name, double v) {
    t.rows.push_back(
        {name, fmt::format("{:.2f}", v / kGiB), fmt::format("{:.2f}", v / kGB), fmt::format("{:.1f}%", v / b.capacity_bytes * 100)});
  };
  const bool vllm = f.settings.engine == Engine::vllm;
  row(vllm ? fmt::format("reserved (1 - gpu_memory_utilization {:.2f})", f.utilization_used)
           : fmt::format("reserved (1 - mem_fraction_static {:.3f}): activations, CUDA graphs", f.utilization_used),
      b.reserved_bytes);
  row("weights", b.weights_bytes);
  if (vllm) row(fmt::format("activation peak ({} batched tokens)", f.max_num_batched_tokens), b.activation_bytes);
  row(vllm ? "non-torch (NCCL, all-reduce buffers)" : "CUDA context, NCCL", b.overhead_bytes);
  row(fmt::format("KV pool ({} tokens)", fmt_int(static_cast<double>(b.kv_tokens))), b.kv_pool_bytes);
  if (b.state_pool_bytes > 0) row("state pool (linear attention)", b.state_pool_bytes);
  row(b.free_bytes < 0 ? "SHORTFALL" : "free (block rounding)", b.free_bytes);
  row("= total memory the engine sees (torch)", b.capacity_bytes);
  return t;
}

}  // namespace k3plan
