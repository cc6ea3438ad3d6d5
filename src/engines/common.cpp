// What both engine models share: the refusals every engine applies and the per-kind layer specs.
#include <fmt/format.h>

#include <algorithm>
#include <k3plan/budget.hpp>

#include "engines_impl.hpp"

namespace k3plan {

bool has_mla(const Model& m) {
  for (const auto& b : m.blocks)
    if (b.kind == AttnKind::mla) return true;
  return false;
}

bool has_dsa(const Model& m) {
  for (const auto& b : m.blocks)
    if (b.kind == AttnKind::mla && b.indexer_heads > 0) return true;
  return false;
}

double model_dtype_bytes(const Model& m) { return m.dtype == "fp32" ? 4.0 : 2.0; }

std::vector<int> tp_degrees(int gpus) {
  std::vector<int> out;
  int top = 1;
  while (top <= gpus / 2) top *= 2;
  for (int tp = top; tp >= 1; tp /= 2)
    if (gpus % tp == 0) out.push_back(tp);
  return out;
}

std::optional<Layout> with_dcp(const Model& m, Layout l) {
  if (!has_mla(m) || l.tp < 2) return std::nullopt;
  l.dcp = l.tp;
  return l;
}

std::vector<Refusal> common_refusals(const Model& m, const Gpu& gpu, const Layout& l, int gpus) {
  std::vector<Refusal> r;
  if (l.tp < 1 || l.ep < 1 || l.dp < 1 || l.pp < 1 || l.dcp < 1) {
    r.push_back({"layout/degree", "parallel", "every parallel degree must be at least 1"});
    return r;
  }
  if (l.tp > 4096 || l.ep > 4096 || l.dp > 4096 || l.pp > 4096 || l.dcp > 4096 || gpus > 100000) {
    r.push_back({"layout/degree", "parallel", "parallel degrees beyond 4,096 (or more than 100,000 GPUs) are not a deployment"});
    return r;
  }
  if (gpus > gpu.gpus_per_node && gpus % gpu.gpus_per_node != 0)
    r.push_back({"layout/whole-nodes", "gpus", fmt::format("{} GPUs do not fill whole {}-GPU {} nodes", gpus, gpu.gpus_per_node, gpu.id)});
  if (l.pp > m.num_layers())
    r.push_back({"engine/pp-layers", "parallel.pp", fmt::format("pipeline size {} exceeds the {} layers", l.pp, m.num_layers())});
  if (!m.moe && l.ep > 1)
    r.push_back(
        {"engine/ep-dense", "parallel.ep", "Number of experts in the model must be greater than 0 when expert parallelism is enabled."});
  if (m.moe && l.ep > 1 && m.moe->routed_experts % l.ep != 0)
    r.push_back({"engine/ep-experts", "parallel.ep",
                 fmt::format("number of routed experts ({}) is not divisible by ep_size ({})", m.moe->routed_experts, l.ep)});
  if (l.dcp > 1) {
    if (!has_mla(m)) r.push_back({"engine/dcp-kind", "parallel.dcp", "decode context parallel is modelled for MLA models only"});
    if (l.tp % l.dcp != 0)
      r.push_back({"engine/dcp-tp", "parallel.dcp", fmt::format("tp_size={} must be divisible by dcp_size={}.", l.tp, l.dcp)});
  }
  return r;
}

std::vector<LayerSpec> layer_specs(const KvProfile& kv) {
  std::vector<LayerSpec> out;
  for (const auto& l : kv.layers) {
    if (l.count <= 0) continue;
    LayerSpec s;
    s.layers = l.count;
    if (l.state_bytes_per_sequence > 0) {
      s.kind = LayerSpec::Kind::mamba;
      s.state_bytes_per_layer = l.state_bytes_per_sequence / l.count;
    } else if (l.window > 0) {
      s.kind = l.chunked ? LayerSpec::Kind::chunked : LayerSpec::Kind::sliding;
      s.window = l.window;
      s.bytes_per_token_per_layer = l.window_bytes_per_token / l.count;
    } else {
      s.kind = LayerSpec::Kind::full;
      // compressed layers (DeepSeek V4) count at their average cost per token
      s.bytes_per_token_per_layer =
          (l.bytes_per_token + (l.compress_ratio > 0 ? l.compressed_entry_bytes / l.compress_ratio : 0.0)) / l.count;
    }
    // one spec per kind and cost: merge equal ones (the KV managers group by spec)
    bool merged = false;
    for (auto& o : out)
      if (o.kind == s.kind && o.window == s.window && o.bytes_per_token_per_layer == s.bytes_per_token_per_layer &&
          o.state_bytes_per_layer == s.state_bytes_per_layer) {
        o.layers += s.layers;
        merged = true;
      }
    if (!merged) out.push_back(s);
  }
  return out;
}

std::optional<double> nvls_buffer_bytes(int minor, const Gpu& gpu, int local_ranks) {
  if (!gpu.nvlink_multicast || local_ranks <= 2) return 0.0;
  if (minor < 18) return 0.0;  // NVLS first shipped in NCCL 2.17; not read before 2.18
  constexpr double kMiB = 1048576.0;
  const double heads = local_ranks;
  if (minor <= 19) return 16 * 2 * (4 + 2) * kMiB * heads;
  const int channels = static_cast<int>(gpu.nccl_channels.value);
  if (minor <= 22) {
    if (channels <= 0) return std::nullopt;
    return channels * 2 * (minor == 20 ? 4.0 + 2.0 : 1.0 + 2.0) * kMiB * heads;
  }
  int nvls_channels = 16;
  if (minor >= 27 && gpu.compute_capability >= 10 && gpu.compute_capability < 12) nvls_channels = gpu.scaleup_domain_gpus > 8 ? 24 : 32;
  return nvls_channels * 2 * 1.0 * kMiB * heads;
}

}  // namespace k3plan
