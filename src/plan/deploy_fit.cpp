#include <fmt/format.h>

#include <k3plan/deploy_fit.hpp>
#include <k3plan/error.hpp>
#include <k3plan/fit_plan.hpp>

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
  // a split set through another engine's variable is not read: the engine uses its own split
  if (d.pp_layer_partition_env.empty() || d.pp_layer_partition_env == s.model().pp_partition_env())
    s.pp_layer_partition = d.pp_layer_partition;
  if (!d.layout_given) {
    r.fit = fit_on_gpus(r.model, g, s, r.gpus, r.context, d.users);  // the same choice as `fit -g GPU -n N`
    return r;
  }
  // the engine derives EP when expert parallel is on and the file omits it (vLLM: TP x DP)
  const Layout l = complete_layout(r.model, s, d.layout, d.where.count("parallel.ep") > 0);
  r.fit = evaluate_fit(r.model, g, l, s, r.context, d.users);
  return r;
}

}  // namespace k3plan
