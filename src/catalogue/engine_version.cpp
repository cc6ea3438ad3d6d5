// Engine version windows: the reader of data/engines/<engine>.yaml (embedded) and the mapping of
// a release number as users write it to the window that covers it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <k3plan/compiled.hpp>
#include <k3plan/embedded.hpp>
#include <k3plan/engine_version.hpp>
#include <k3plan/error.hpp>
#include <k3plan/number_text.hpp>
#include <k3plan/yaml_reader.hpp>
#include <mutex>

namespace k3plan {

const char* to_string(Engine e) { return e == Engine::vllm ? "vllm" : "sglang"; }

Engine parse_engine(const std::string& s) {
  if (s == "sglang") return Engine::sglang;
  if (s == "vllm") return Engine::vllm;
  const auto hint = closest_match(s, {"sglang", "vllm"});
  throw InputError(
      fmt::format("unknown engine '{}'{}", s, hint.empty() ? " (use sglang or vllm)" : fmt::format("; did you mean '{}'?", hint)));
}

namespace {

// "v0.10.1.1", "0.5.8.post1", "0.11.0rc2" -> {0, 10, 1, 1}: the numeric release components.
std::vector<int> release_parts(const std::string& s) {
  std::vector<int> out;
  std::size_t i = (!s.empty() && (s[0] == 'v' || s[0] == 'V')) ? 1 : 0;
  while (i < s.size()) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) break;
    long v = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      v = v * 10 + (s[i] - '0');
      if (v > 100000) return {};
      ++i;
    }
    out.push_back(static_cast<int>(v));
    if (i < s.size() && s[i] == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))
      ++i;
    else
      break;
  }
  // SGLang's post releases ("0.4.7.post1") are one more part: 0.4.7 < 0.4.7.post1 < 0.4.8, and a
  // window may start at a post release (SGLang changed its memory default between 0.4.7 and
  // 0.4.7.post1)
  if (s.compare(i, 5, ".post") == 0 && i + 5 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 5]))) {
    long v = 0;
    for (i += 5; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && v <= 100000; ++i) v = v * 10 + (s[i] - '0');
    if (v > 100000) return {};
    out.resize(std::max<std::size_t>(out.size(), 3), 0);
    out.push_back(static_cast<int>(v));
  }
  return out;
}

// -1, 0, 1 comparing a against b on b's length (so "0.16" covers every 0.16.x when used as `last`).
int compare_prefix(const std::vector<int>& a, const std::vector<int>& b) {
  for (std::size_t i = 0; i < b.size(); ++i) {
    const int x = i < a.size() ? a[i] : 0;
    if (x != b[i]) return x < b[i] ? -1 : 1;
  }
  return 0;
}

EngineVersion parse_version(const YamlReader& r, const YAML::Node& n, Engine e, std::size_t i) {
  const std::string ctx = fmt::format("versions[{}]", i);
  r.check_keys(n,
               {"id",
                "first",
                "last",
                "source",
                "date",
                "gpu_memory_utilization",
                "profile",
                "cudagraph_in_profile",
                "cudagraph_sizes_follow_seqs",
                "sampler_bytes_per_entry",
                "sampler_native_bytes_per_entry",
                "kv_tokens_report",
                "kernel_block_alignment",
                "mla_hybrid_alignment",
                "group_size_factor",
                "cudagraph_estimate_gib",
                "hybrid_kv_groups",
                "non_torch_tp1_gib",
                "non_torch_tp_gib",
                "non_torch_pp_gib",
                "non_torch_context_gib",
                "nccl",
                "nccl_eager_comms",
                "rope_cache_full",
                "mxfp4_moe_pad",
                "moe_workspace_persistent",
                "batch_defaults_skip_a100",
                "batch_defaults",
                "mla_prefill_workspace_max_rows",
                "mamba_prefix_caching",
                "hybrid_prefix_caching_default",
                "mem_fraction_rule",
                "prefill_graph_reserve",
                "mamba_full_memory_ratio",
                "mamba_no_radix_default_slots",
                "mamba_padding_slot",
                "mamba_slots_per_request",
                "mamba_extra_buffer",
                "spec_verify_states",
                "latent_moe_replicated",
                "shared_experts_cloned",
                "dsa_fp8_656",
                "mla_copies_bf16_cuda",
                "vlm_mem_fraction_adjust",
                "hybrid_swa_archs",
                "vlm_runner_factor",
                "context_tp1_gib",
                "context_tp4_gib",
                "context_tp8_gib",
                "context_pcie_gib",
                "context_rocm_tp1_gib",
                "context_rocm_tp8_gib",
                "pp_layer_split",
                "notes"},
               ctx);
  EngineVersion v;
  v.engine = e;
  v.id = r.str(n, "id", ctx, true);
  v.first = r.str(n, "first", ctx, true);
  v.last = r.str(n, "last", ctx, false);
  v.source = r.str(n, "source", ctx, true);
  v.date = r.str(n, "date", ctx, true);
  v.gpu_memory_utilization = r.number(n, "gpu_memory_utilization", ctx, false, v.gpu_memory_utilization, 0.01, 1);
  v.profile = r.str(n, "profile", ctx, false, v.profile);
  if (v.profile != "v0" && v.profile != "v1") r.fail(n["profile"], ctx + ".profile", "expected v0 or v1");
  v.cudagraph_in_profile = r.boolean(n, "cudagraph_in_profile", ctx, v.cudagraph_in_profile);
  v.cudagraph_sizes_follow_seqs = r.boolean(n, "cudagraph_sizes_follow_seqs", ctx, v.cudagraph_sizes_follow_seqs);
  v.sampler_bytes_per_entry = r.number(n, "sampler_bytes_per_entry", ctx, false, v.sampler_bytes_per_entry, 1, 256);
  v.sampler_native_bytes_per_entry = r.number(n, "sampler_native_bytes_per_entry", ctx, false, v.sampler_native_bytes_per_entry, 0, 256);
  v.kv_tokens_report = r.str(n, "kv_tokens_report", ctx, false, v.kv_tokens_report);
  if (v.kv_tokens_report != "blocks" && v.kv_tokens_report != "per_group" && v.kv_tokens_report != "concurrency")
    r.fail(n["kv_tokens_report"], ctx + ".kv_tokens_report", "expected blocks, per_group or concurrency");
  v.mla_hybrid_alignment = static_cast<int>(r.integer(n, "mla_hybrid_alignment", ctx, false, v.mla_hybrid_alignment, 1, 4096));
  v.group_size_factor = r.number(n, "group_size_factor", ctx, false, v.group_size_factor, 0, 100);
  v.cudagraph_estimate_gib = r.number(n, "cudagraph_estimate_gib", ctx, false, v.cudagraph_estimate_gib, 0, 64);
  v.kernel_block_alignment = static_cast<int>(r.integer(n, "kernel_block_alignment", ctx, false, v.kernel_block_alignment, 1, 4096));
  v.hybrid_kv_groups = r.boolean(n, "hybrid_kv_groups", ctx, v.hybrid_kv_groups);
  v.non_torch_tp1_gib = r.number(n, "non_torch_tp1_gib", ctx, false, v.non_torch_tp1_gib, 0, 64);
  v.non_torch_tp_gib = r.number(n, "non_torch_tp_gib", ctx, false, v.non_torch_tp_gib, 0, 64);
  v.non_torch_pp_gib = r.number(n, "non_torch_pp_gib", ctx, false, v.non_torch_pp_gib, 0, 64);
  v.non_torch_context_gib = r.number(n, "non_torch_context_gib", ctx, false, v.non_torch_context_gib, 0, 8);
  v.nccl.release = r.str(n, "nccl", ctx, false);
  if (!v.nccl.release.empty()) {
    const auto parts = release_parts(v.nccl.release);
    if (parts.size() < 2 || parts[0] != 2) r.fail(n["nccl"], ctx + ".nccl", "expected an NCCL release such as 2.21.5");
    v.nccl.minor = parts[1];
  }
  v.nccl.eager_comms = static_cast<int>(r.integer(n, "nccl_eager_comms", ctx, false, v.nccl.eager_comms, 0, 8));
  if (v.nccl.eager_comms > 0 && v.nccl.release.empty())
    r.fail(n["nccl_eager_comms"], ctx + ".nccl_eager_comms", "needs the window's nccl release");
  v.rope_cache_full = r.boolean(n, "rope_cache_full", ctx, v.rope_cache_full);
  v.moe_workspace_persistent = r.boolean(n, "moe_workspace_persistent", ctx, v.moe_workspace_persistent);
  v.batch_defaults_skip_a100 = r.boolean(n, "batch_defaults_skip_a100", ctx, v.batch_defaults_skip_a100);
  v.batch_defaults = r.str(n, "batch_defaults", ctx, false, v.batch_defaults);
  v.mla_prefill_workspace_max_rows = r.integer(n, "mla_prefill_workspace_max_rows", ctx, false, v.mla_prefill_workspace_max_rows, 0, std::int64_t{1} << 30);
  if (v.batch_defaults != "memory" && v.batch_defaults != "name" && v.batch_defaults != "name_seqs_1024" && v.batch_defaults != "v0")
    r.fail(n["batch_defaults"], ctx + ".batch_defaults", "expected memory, name, name_seqs_1024 or v0");
  v.mamba_prefix_caching = r.str(n, "mamba_prefix_caching", ctx, false, v.mamba_prefix_caching);
  if (v.mamba_prefix_caching != "off" && v.mamba_prefix_caching != "all" && v.mamba_prefix_caching != "align" &&
      v.mamba_prefix_caching != "align_only")
    r.fail(n["mamba_prefix_caching"], ctx + ".mamba_prefix_caching", "expected off, all, align or align_only");
  v.hybrid_prefix_caching_default = r.boolean(n, "hybrid_prefix_caching_default", ctx, v.hybrid_prefix_caching_default);
  if (r.has(n, "mxfp4_moe_pad")) {
    const YAML::Node pads = n["mxfp4_moe_pad"];
    r.check_keys(pads, {"sm80", "sm90", "sm100", "sm120", "rocm"}, ctx + ".mxfp4_moe_pad");
    for (const auto& kv : pads) {
      const std::string cls = kv.first.Scalar(), f = ctx + ".mxfp4_moe_pad." + cls;
      if (!kv.second.IsSequence() || kv.second.size() != 2) r.fail(kv.second, f, "expected [intermediate multiple, hidden multiple]");
      EngineVersion::Pad p;
      for (std::size_t k = 0; k < 2; ++k) {
        const YAML::Node x = kv.second[k];
        const auto val = x.IsScalar() ? parse_uint(x.Scalar()) : std::nullopt;
        if (!val) r.fail(x, f, "expected a whole number");
        if (*val < 1 || *val > 4096) r.fail(x, f, "expected a multiple between 1 and 4096");
        (k == 0 ? p.intermediate : p.hidden) = static_cast<int>(*val);
      }
      v.mxfp4_moe_pad[cls] = p;
    }
  }
  v.mem_fraction_rule = r.str(n, "mem_fraction_rule", ctx, false, v.mem_fraction_rule);
  if (v.mem_fraction_rule != "reserved" && v.mem_fraction_rule != "by_tp" && v.mem_fraction_rule != "by_tp_large" &&
      v.mem_fraction_rule != "gpu_class")
    r.fail(n["mem_fraction_rule"], ctx + ".mem_fraction_rule", "expected by_tp, by_tp_large, gpu_class or reserved");
  v.prefill_graph_reserve = r.boolean(n, "prefill_graph_reserve", ctx, v.prefill_graph_reserve);
  v.mamba_full_memory_ratio = r.number(n, "mamba_full_memory_ratio", ctx, false, v.mamba_full_memory_ratio, 0.01, 100);
  v.mamba_no_radix_default_slots =
      static_cast<int>(r.integer(n, "mamba_no_radix_default_slots", ctx, false, v.mamba_no_radix_default_slots, 1, 1 << 20));
  v.mamba_padding_slot = r.boolean(n, "mamba_padding_slot", ctx, v.mamba_padding_slot);
  v.mamba_slots_per_request = static_cast<int>(r.integer(n, "mamba_slots_per_request", ctx, false, v.mamba_slots_per_request, 1, 64));
  v.mamba_extra_buffer = r.boolean(n, "mamba_extra_buffer", ctx, v.mamba_extra_buffer);
  v.spec_verify_states = r.str(n, "spec_verify_states", ctx, false, v.spec_verify_states);
  if (v.spec_verify_states != "per_slot" && v.spec_verify_states != "reserve_first" && v.spec_verify_states != "joint")
    r.fail(n["spec_verify_states"], ctx + ".spec_verify_states", "expected per_slot, reserve_first or joint");
  v.latent_moe_replicated = r.boolean(n, "latent_moe_replicated", ctx, v.latent_moe_replicated);
  v.shared_experts_cloned = r.boolean(n, "shared_experts_cloned", ctx, v.shared_experts_cloned);
  v.dsa_fp8_656 = r.boolean(n, "dsa_fp8_656", ctx, v.dsa_fp8_656);
  v.mla_copies_bf16_cuda = r.boolean(n, "mla_copies_bf16_cuda", ctx, v.mla_copies_bf16_cuda);
  v.vlm_mem_fraction_adjust = r.boolean(n, "vlm_mem_fraction_adjust", ctx, v.vlm_mem_fraction_adjust);
  v.hybrid_swa_archs = r.strings(n, "hybrid_swa_archs", ctx);
  v.vlm_runner_factor = r.number(n, "vlm_runner_factor", ctx, false, v.vlm_runner_factor, 0.5, 1.0);
  v.context_tp1_gib = r.number(n, "context_tp1_gib", ctx, false, v.context_tp1_gib, 0, 64);
  v.context_tp4_gib = r.number(n, "context_tp4_gib", ctx, false, v.context_tp4_gib, 0, 64);
  v.context_tp8_gib = r.number(n, "context_tp8_gib", ctx, false, v.context_tp8_gib, 0, 64);
  v.context_pcie_gib = r.number(n, "context_pcie_gib", ctx, false, v.context_pcie_gib, 0, 64);
  v.context_rocm_tp1_gib = r.number(n, "context_rocm_tp1_gib", ctx, false, v.context_rocm_tp1_gib, 0, 64);
  v.context_rocm_tp8_gib = r.number(n, "context_rocm_tp8_gib", ctx, false, v.context_rocm_tp8_gib, 0, 64);
  v.pp_layer_split = r.str(n, "pp_layer_split", ctx, false, v.pp_layer_split);
  if (v.pp_layer_split != "last_takes_rest" && v.pp_layer_split != "before_last" && v.pp_layer_split != "last_ranks")
    r.fail(n["pp_layer_split"], ctx + ".pp_layer_split", "expected last_takes_rest, before_last or last_ranks");
  if (release_parts(v.first).empty()) r.fail(n["first"], ctx + ".first", "expected a release number such as 0.11.0");
  if (!v.last.empty() && release_parts(v.last).empty()) r.fail(n["last"], ctx + ".last", "expected a release number such as 0.16");
  return v;
}

std::vector<EngineVersion> load_versions(Engine e) {
  const std::string path = fmt::format("engines/{}.yaml", to_string(e));
  for (const auto& f : embedded_files()) {
    if (path != f.path) continue;
    YamlReader r("data/" + path);
    const YAML::Node root = r.parse(std::string(f.text));
    r.check_keys(root, {"engine", "versions"}, "");
    if (r.str(root, "engine", "", true) != to_string(e)) r.fail(root["engine"], "engine", "does not match the file name");
    r.require_list(root["versions"], "versions");
    std::vector<EngineVersion> out;
    std::size_t i = 0;
    for (const auto& n : root["versions"]) out.push_back(parse_version(r, n, e, i++));
    if (out.empty()) r.fail(root["versions"], "versions", "empty");
    return out;
  }
  throw InputError(fmt::format("data/{}: missing from the embedded catalogue", path));
}

}  // namespace

bool EngineVersion::covers(const std::string& release) const {
  if (release == id) return true;
  const auto v = release_parts(release);
  if (v.empty()) return false;
  if (compare_prefix(v, release_parts(first)) < 0) return false;
  return last.empty() || compare_prefix(v, release_parts(last)) <= 0;
}

const std::vector<EngineVersion>& engine_versions(Engine e) {
  static std::once_flag once;
  static std::vector<EngineVersion> versions[2];
  std::call_once(once, [] {
    for (Engine x : {Engine::sglang, Engine::vllm})  // compiled at build time (compiled.hpp)
      compiled::load_or_read(fmt::format("engines/{}", to_string(x)), versions[static_cast<std::size_t>(x)],
                             [x](std::vector<EngineVersion>& v) { v = load_versions(x); });
  });
  return versions[static_cast<std::size_t>(e)];
}

const EngineVersion& engine_version_for(Engine e, const std::string& version) {
  const auto& windows = engine_versions(e);
  if (version.empty() || version == "latest") return windows.back();
  // a release number maps to the newest window that covers it ("main" matches by id)
  for (auto it = windows.rbegin(); it != windows.rend(); ++it)
    if (it->covers(version)) return *it;
  std::vector<std::string> known;
  for (const auto& w : windows)
    known.push_back(w.last.empty() ? fmt::format("{} ({} and later)", w.id, w.first) : fmt::format("{} ({}-{})", w.id, w.first, w.last));
  throw InputError(fmt::format("unknown {} version '{}'; modelled: {}", to_string(e), version, fmt::join(known, ", ")));
}

}  // namespace k3plan
