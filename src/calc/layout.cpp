#include <fmt/format.h>

#include <cmath>
#include <k3plan/error.hpp>
#include <k3plan/layout.hpp>

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
bool fp8_block(const std::string& p) { return p == "fp8-block"; }
int nodes_for(const Gpu& g, int gpus) { return gpus <= g.gpus_per_node ? 1 : (gpus + g.gpus_per_node - 1) / g.gpus_per_node; }
}  // namespace

std::vector<std::string> layout_refusals(const Model& m, const Gpu& gpu, Engine engine, const Layout& l,
                                         std::vector<std::string>* warnings) {
  std::vector<std::string> r;
  if (l.tp < 1 || l.ep < 1 || l.dp < 1 || l.pp < 1 || l.dcp < 1) {
    r.push_back("every parallel degree must be at least 1");
    return r;
  }
  if (l.tp > 4096 || l.ep > 4096 || l.dp > 4096 || l.pp > 4096 || l.dcp > 4096 || l.gpus(engine) > 100000) {
    r.push_back("parallel degrees beyond 4,096 (or more than 100,000 GPUs) are not a deployment");
    return r;
  }
  const int gpus = l.gpus(engine);
  const int heads = m.attention_heads();
  const int nodes = nodes_for(gpu, gpus);
  if (gpus > gpu.gpus_per_node && gpus % gpu.gpus_per_node != 0)
    r.push_back(fmt::format("{} GPUs do not fill whole {}-GPU {} nodes", gpus, gpu.gpus_per_node, gpu.id));
  if (l.pp > m.num_layers()) r.push_back(fmt::format("pipeline size {} exceeds the {} layers", l.pp, m.num_layers()));
  if (!m.moe && l.ep > 1) r.push_back("Number of experts in the model must be greater than 0 when expert parallelism is enabled.");
  if (m.moe && l.ep > 1 && m.moe->routed_experts % l.ep != 0)
    r.push_back(fmt::format("number of routed experts ({}) is not divisible by ep_size ({})", m.moe->routed_experts, l.ep));
  const bool moe_fp8_block = m.moe && fp8_block(m.precision_of(ParamGroup::routed_experts));
  if (l.dcp > 1) {
    bool mla = false;
    for (const auto& b : m.blocks) mla = mla || b.kind == AttnKind::mla;
    if (!mla) r.push_back("decode context parallel is modelled for MLA models only");
    if (l.tp % l.dcp != 0) r.push_back(fmt::format("tp_size={} must be divisible by dcp_size={}.", l.tp, l.dcp));
  }
  if (engine == Engine::sglang) {
    const int attn_tp = l.dp_attention ? l.tp / std::max(1, l.dp) : l.tp;
    if (l.dp_attention && l.tp % l.dp != 0)
      r.push_back(fmt::format("tp_size ({}) must be divisible by dp_size ({}) with DP attention", l.tp, l.dp));
    else if (attn_tp > 0 && heads % attn_tp != 0)
      r.push_back(fmt::format("number of attention heads ({}) must be divisible by the attention TP size ({})", heads, attn_tp));
    if (l.tp % l.ep != 0) r.push_back(fmt::format("tp_size {} must be divisible by ep_size {}", l.tp, l.ep));
    if (l.dp > 1 && nodes > 1 && !l.dp_attention) r.push_back("multi-node data parallel is not supported unless dp attention!");
    if (l.dp > 1 && !l.dp_attention)
      r.push_back("SGLang --dp-size without --enable-dp-attention runs separate replicas; plan them as separate instances");
    if ((l.tp * l.pp) % nodes != 0) r.push_back("tp_size must be divisible by number of nodes");
    if (moe_fp8_block && l.tp % l.ep == 0) {
      const int moe_tp = l.tp / l.ep;
      const auto inter = m.moe->expert_intermediate_size;
      if (inter % moe_tp != 0 || (inter / moe_tp) % 128 != 0)
        r.push_back(fmt::format(
            "For quantized MoE models, please make sure (moe_intermediate_size={} / moe_tp_size={}) % weight_block_size_n=128 == 0", inter,
            moe_tp));
    }
  } else {
    if (l.dp_attention)
      r.push_back("vLLM has no --enable-dp-attention flag (attention is data-parallel across --data-parallel-size ranks)");
    if (heads % l.tp != 0)
      r.push_back(fmt::format("Total number of attention heads ({}) must be divisible by tensor parallel size ({}).", heads, l.tp));
    if (m.moe && l.ep > 1 && l.ep != l.tp * l.dp)
      r.push_back(
          fmt::format("vLLM derives EP_SIZE = TP_SIZE x DP_SIZE = {}; an expert-parallel degree of {} cannot be set", l.tp * l.dp, l.ep));
    if (moe_fp8_block && l.ep == 1) {
      const int moe_tp = l.tp * l.dp;
      const auto inter = m.moe->expert_intermediate_size;
      if (inter % moe_tp != 0 || (inter / moe_tp) % 128 != 0)
        r.push_back(fmt::format("The output_size of gate's and up's weight = {} is not divisible by weight quantization block_n = 128.",
                                inter / std::max(1, moe_tp)));
    }
    if (fp8_block(m.precision_of(ParamGroup::dense_mlp)) && m.dense_intermediate_size > 0) {
      const auto inter = m.dense_intermediate_size;
      if (inter % l.tp != 0 || (inter / l.tp) % 128 != 0)
        r.push_back(fmt::format("The output_size of gate's and up's weight = {} is not divisible by weight quantization block_n = 128.",
                                inter / l.tp));
    }
  }
  if (warnings && l.tp > gpu.gpus_per_node && l.tp > gpu.scaleup_domain_gpus)
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

std::string sglang_parallel_flags(const Layout& l) {
  std::string f = fmt::format("--tp-size {}", l.tp);
  if (l.ep > 1) f += fmt::format(" --ep-size {}", l.ep);
  if (l.pp > 1) f += fmt::format(" --pp-size {}", l.pp);
  if (l.dp > 1) f += fmt::format(" --dp-size {}", l.dp);
  if (l.dp_attention) f += " --enable-dp-attention";
  if (l.dcp > 1) f += fmt::format(" --dcp-size {}", l.dcp);
  return f;
}

std::string vllm_parallel_flags(const Model& m, const Layout& l) {
  std::string f = fmt::format("--tensor-parallel-size {} --pipeline-parallel-size {} --data-parallel-size {}", l.tp, l.pp, l.dp);
  if (m.moe && l.ep > 1) f += " --enable-expert-parallel";
  if (l.dcp > 1) f += fmt::format(" --decode-context-parallel-size {}", l.dcp);
  return f;
}

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
