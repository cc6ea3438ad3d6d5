#include <fmt/format.h>

#include <k3plan/deploy_fit.hpp>
#include <k3plan/error.hpp>

namespace k3plan {

DeploymentFit fit_deployment(const Catalogue& cat, const Deployment& d) {
  DeploymentFit r;
  r.model = resolve_model(cat, d.model);
  r.gpu = &cat.gpu(d.gpu);
  const Gpu& g = *r.gpu;
  r.gpus = d.gpus > 0 ? d.gpus : d.nodes * g.gpus_per_node;
  r.nodes = d.nodes > 0 ? d.nodes : (r.gpus <= g.gpus_per_node ? 1 : (r.gpus + g.gpus_per_node - 1) / g.gpus_per_node);
  r.context = d.context > 0 ? d.context : r.model.max_context;
  EngineSettings s;
  s.engine = d.engine;
  s.engine_version = d.engine_version;
  if (d.mem_fraction_static) s.mem_fraction_static = *d.mem_fraction_static;
  if (d.gpu_memory_utilization) s.gpu_memory_utilization = *d.gpu_memory_utilization;
  if (d.max_num_batched_tokens) s.max_num_batched_tokens = *d.max_num_batched_tokens;
  if (d.chunked_prefill_size) s.chunked_prefill_size = *d.chunked_prefill_size;
  if (d.max_num_seqs) s.max_num_seqs = *d.max_num_seqs;
  if (d.cuda_graph_max_bs) s.cuda_graph_max_bs = *d.cuda_graph_max_bs;
  s.kv_dtype = d.kv_dtype;
  if (!d.layout_given) {
    r.fit = fit_on_gpus(r.model, g, s, r.gpus, r.context, d.users);  // the same choice as `fit -g GPU -n N`
    return r;
  }
  Layout l = d.layout;
  if (d.engine == Engine::vllm && r.model.moe && l.ep == 1 && d.where.count("parallel.ep") == 0 && l.tp * l.dp > 1) {
    l.ep = l.tp * l.dp;  // vLLM derives EP when expert parallel is on; the file may omit it
  }
  r.fit = evaluate_fit(r.model, g, l, s, r.context, d.users);
  return r;
}

}  // namespace k3plan
