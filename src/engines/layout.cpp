#include <fmt/format.h>

#include <cmath>
#include <k3plan/engine.hpp>
#include <k3plan/error.hpp>
#include <k3plan/layout.hpp>

namespace k3plan {

namespace {
int nodes_for(const Gpu& g, int gpus) { return gpus <= g.gpus_per_node ? 1 : (gpus + g.gpus_per_node - 1) / g.gpus_per_node; }
}  // namespace

int Layout::gpus(Engine e) const { return engine_model(e).gpus(*this); }

std::vector<std::string> layout_refusals(const Model& m, const Gpu& gpu, Engine engine, const Layout& l, std::vector<std::string>* warnings,
                                         const std::string& engine_version) {
  std::vector<std::string> r;
  for (const auto& x : engine_model(engine, engine_version).refusals(m, gpu, l)) r.push_back(x.message);
  if (warnings && l.tp >= 1 && l.tp <= 4096 && l.tp > gpu.gpus_per_node && l.tp > gpu.scaleup_domain_gpus)
    warnings->push_back(
        fmt::format("tensor parallel {} spans {} nodes: its all-reduces cross the scale-out network (slow); "
                    "prefer TP within a node with PP or DP across nodes",
                    l.tp, (l.tp + gpu.gpus_per_node - 1) / gpu.gpus_per_node));
  return r;
}

Layout vllm_layout_for(const Model& m, const Gpu& gpu, int gpus) {
  // TP inside a node (largest power of two that divides the heads), PP across nodes.
  Layout l;
  int tp = 1;
  for (int t = 1; t <= std::min(gpus, gpu.gpus_per_node); t *= 2)
    if (gpus % t == 0 && m.attention_heads() % t == 0) tp = t;
  l.tp = tp;
  l.pp = gpus / tp;
  l.dp = 1;
  l.ep = m.moe ? tp : 1;
  return l;
}

std::string sglang_parallel_flags(const Layout& l) { return engine_model(Engine::sglang).parallel_flags(Model{}, l); }

std::string vllm_parallel_flags(const Model& m, const Layout& l) { return engine_model(Engine::vllm).parallel_flags(m, l); }

EngineFlags parallel_flags(const Model& m, const Gpu& gpu, const Layout& s, int gpus) {
  EngineFlags f;
  const int nodes = nodes_for(gpu, gpus);
  const std::string node_flags = nodes > 1 ? fmt::format(" --nnodes {}", nodes) : "";
  f.sglang = sglang_parallel_flags(s) + node_flags;
  f.vllm = vllm_parallel_flags(m, vllm_layout_for(m, gpu, gpus)) + node_flags;
  return f;
}

LowerBound weights_lower_bound(const Model& m, const Gpu& gpu, double weights_bytes) {
  LowerBound b;
  b.gpu = gpu.id;
  b.weights_bytes = weights_bytes;
  b.lower_bound_gpus = static_cast<int>(std::ceil(weights_bytes / gpu.nominal_bytes() - 1e-12));
  b.lower_bound_gpus_usable = static_cast<int>(std::ceil(weights_bytes / gpu.reported_bytes() - 1e-12));
  b.lower_bound_gpus = std::max(1, b.lower_bound_gpus);
  b.lower_bound_gpus_usable = std::max(1, b.lower_bound_gpus_usable);
  const int heads = m.attention_heads();
  for (int n = b.lower_bound_gpus_usable; n <= 4096; ++n) {
    if (n <= gpu.gpus_per_node) {
      if ((n & (n - 1)) != 0) continue;  // within a node: powers of two
    } else if (n % gpu.gpus_per_node != 0) {
      continue;  // whole nodes
    }
    // SGLang: tensor parallel over all GPUs when the heads allow it, else TP x PP
    Layout s;
    bool found = false;
    for (int tp = n; tp >= 1 && !found; --tp) {
      if (n % tp != 0 || (tp & (tp - 1)) != 0 || heads % tp != 0) continue;
      s.tp = tp;
      s.pp = n / tp;
      s.ep = 1;
      if (m.moe)
        for (int ep = tp; ep >= 1; --ep)
          if (tp % ep == 0 && m.moe->routed_experts % ep == 0) {
            s.ep = ep;
            break;
          }
      found =
          layout_refusals(m, gpu, Engine::sglang, s).empty() && layout_refusals(m, gpu, Engine::vllm, vllm_layout_for(m, gpu, n)).empty();
    }
    if (!found) continue;
    b.deployable_found = true;
    b.gpus = n;
    b.nodes = nodes_for(gpu, n);
    b.layout = s;
    b.vllm_layout = vllm_layout_for(m, gpu, n);
    b.weights_bytes_per_gpu = weights_bytes / n;
    b.flags = parallel_flags(m, gpu, s, n);
    break;
  }
  return b;
}

}  // namespace k3plan
