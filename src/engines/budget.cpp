#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <k3plan/budget.hpp>
#include <k3plan/engine_flags.hpp>
#include <k3plan/error.hpp>
#include <k3plan/params.hpp>
#include <k3plan/units.hpp>
#include <optional>

namespace k3plan {

namespace {
Model no_model() { return Model{}; }
}  // namespace

// The defaults below are the engine models' (src/engines/), kept as free functions for callers
// that only need one figure.
std::int64_t sglang_default_chunked_prefill(const Gpu& gpu) {
  EngineSettings s;
  s.engine = Engine::sglang;
  return s.model().defaults(no_model(), gpu, Layout{}, s, 1, 0).max_num_batched_tokens;
}

int sglang_default_cuda_graph_max_bs(const Gpu& gpu, int tp) {
  EngineSettings s;
  s.engine = Engine::sglang;
  Layout l;
  l.tp = tp;
  return s.model().defaults(no_model(), gpu, l, s, 1, 0).cuda_graph_max_bs;
}

double sglang_default_mem_fraction(const Gpu& gpu, const Layout& l, std::int64_t chunked_prefill, int cgbs, const std::string& version) {
  EngineSettings s;
  s.engine = Engine::sglang;
  s.engine_version = version;
  s.chunked_prefill_size = chunked_prefill;
  s.cuda_graph_max_bs = cgbs;
  return s.model().defaults(no_model(), gpu, l, s, 1, 0).memory_fraction;
}

std::int64_t vllm_default_max_num_batched_tokens(const Gpu& gpu) {
  EngineSettings s;
  s.engine = Engine::vllm;
  return s.model().defaults(no_model(), gpu, Layout{}, s, 1, 0).max_num_batched_tokens;
}
std::int64_t vllm_default_max_num_seqs(const Gpu& gpu) {
  EngineSettings s;
  s.engine = Engine::vllm;
  return s.model().defaults(no_model(), gpu, Layout{}, s, 1, 0).max_num_seqs;
}
double vllm_default_utilization() { return engine_model(Engine::vllm).version().gpu_memory_utilization; }

FitResult evaluate_fit(const Model& m, const Gpu& gpu, const Layout& l, const EngineSettings& given, std::int64_t context,
                       std::int64_t users, FitCommands commands, StageCache* cache) {
  EngineSettings s = given;  // with the engine's own resolution of what was left at its default
  const EngineModel& em = s.model();
  FitResult r;
  r.model = m.id;
  r.gpu = gpu.id;
  r.settings = s;
  r.layout = l;
  r.engine_label = em.label();
  r.accuracy = accuracy_band(s.engine, em.version().id, model_kind(m));
  r.gpus = em.gpus(l);
  r.nodes = r.gpus <= gpu.gpus_per_node ? 1 : (r.gpus + gpu.gpus_per_node - 1) / gpu.gpus_per_node;
  r.context = context;
  r.users = users;
  r.reasons = layout_refusals(m, gpu, s.engine, l, &r.warnings, s.engine_version);
  if (context > m.max_context)
    r.reasons.push_back(
        fmt::format("context {} exceeds the model's maximum of {} tokens ({})", context, m.max_context, format_context(m.max_context)));

  if (const std::string why = em.pp_partition_refusal(s.pp_layer_partition, m.num_layers(), std::max(1, l.pp)); !why.empty())
    r.reasons.push_back(why);
  const int instances = em.kv_instances(l);
  const std::int64_t users_per_group = (users + instances - 1) / instances;
  const EngineDefaults d = em.defaults(m, gpu, l, s, users_per_group, context);
  if (!d.kv_dtype.empty()) r.settings.kv_dtype = s.kv_dtype = d.kv_dtype;
  r.max_num_batched_tokens = d.max_num_batched_tokens;
  r.max_num_seqs = d.max_num_seqs;
  r.cuda_graph_max_bs = d.cuda_graph_max_bs;
  r.utilization_used = d.memory_fraction;

  KvOptions ko;
  ko.tp = em.attention_tp(l);
  ko.dcp = l.dcp;
  ko.kv_dtype = s.kv_dtype;
  ko.state_dtype = s.state_dtype;

  const int L = m.num_layers();
  const int pp = std::max(1, std::min(l.pp, L));
  const double cap = em.capacity_bytes(gpu);
  bool first_rank = true;
  const bool bad_fraction = r.utilization_used <= 0 || r.utilization_used > 1;
  if (bad_fraction) {
    // a GPU too small for the engine's own reserve: the engine would compute a fraction <= 0
    r.reasons.push_back(fmt::format("{} x {:.1f} GiB leaves nothing after {}'s reserve (memory fraction {:.3f})", gpu.id, cap / kGiB,
                                    em.display_name(), r.utilization_used));
    r.utilization_used = std::clamp(r.utilization_used, 0.01, 1.0);
  }
  EngineDefaults dd = d;
  dd.memory_fraction = r.utilization_used;
  const bool reuse = cache && cache->model == &m && cache->gpu == &gpu && cache->settings == &given && cache->layout == l &&
                     cache->kv_dtype == s.kv_dtype && cache->weights_bytes.size() == static_cast<std::size_t>(pp);
  if (cache && !reuse) *cache = StageCache{&m, &gpu, &given, l, s.kv_dtype, {}, {}};
  for (int st = 0; st < pp; ++st) {
    const StageLayers sl = em.stage_layers(L, pp, st, s.pp_layer_partition);  // the engine's get_pp_indices
    const int start = sl.first, n = sl.count;
    RankBudget b;
    b.stage = st;
    b.layers = n;
    b.capacity_bytes = cap;
    StageInput in;
    in.model = &m;
    in.gpu = &gpu;
    in.layout = &l;
    in.settings = &s;
    in.stage = st;
    in.stages = pp;
    in.layers = sl;
    in.context = context;
    in.users_per_instance = users_per_group;
    if (reuse) {
      b.weights_bytes = cache->weights_bytes[static_cast<std::size_t>(st)];
      in.kv = cache->kv[static_cast<std::size_t>(st)];
    } else {
      b.weights_bytes = em.stage_weights_bytes(m, gpu, l, s, start, start + n, st == 0, st == pp - 1);
      // --cpu-offload-gb moves up to that many bytes of decoder-layer parameters to host memory:
      // both engines wrap only the layers make_layers builds (maybe_offload_to_cpu in vLLM
      // model_executor/models/utils.py and SGLang srt/utils.py), so the embedding, lm_head, final
      // norm and encoder towers stay on the GPU however large the budget
      if (s.cpu_offload_bytes > 0) {
        const double layers_only = em.stage_weights_bytes(m, gpu, l, s, start, start + n, false, false);
        b.weights_bytes -= std::min(layers_only, s.cpu_offload_bytes);
      }
      b.weights_bytes += em.weights_rounding_bytes(in);
      KvOptions kst = ko;
      kst.draft_layers = st == pp - 1 ? s.draft_layers : 0;
      kst.first_layer = start;  // the stage's own layers
      kst.last_layer = start + n;
      in.kv = kv_profile(m, kst);
      if (cache) {
        cache->weights_bytes.push_back(b.weights_bytes);
        cache->kv.push_back(in.kv);
      }
    }
    b.kv_bytes_per_token = in.kv.bytes_per_token;
    b.state_bytes_per_sequence = in.kv.state_bytes_per_sequence;
    b.bytes_per_sequence = in.kv.bytes_per_sequence(context);
    em.fill_stage(in, dd, b);
    r.ranks.push_back(b);
    if (first_rank || b.kv_tokens < r.limiting.kv_tokens) r.limiting = b;
    first_rank = false;
  }

  // capacity at the requested context, minimum over stages
  std::int64_t max_users = -1, best_ctx = -1;
  for (const auto& b : r.ranks) {
    const std::int64_t u = b.kv_pool_bytes + b.state_pool_bytes > 0 ? b.max_sequences : 0;
    max_users = max_users < 0 ? u : std::min(max_users, u);
    best_ctx = best_ctx < 0 ? b.max_context_one_user : std::min(best_ctx, b.max_context_one_user);
  }
  r.max_users = std::max<std::int64_t>(0, max_users) * instances;
  r.max_context_one_user = std::max<std::int64_t>(0, best_ctx);
  r.kv_cache_tokens = r.limiting.kv_tokens * instances;
  const double pool_l = r.limiting.kv_pool_bytes + r.limiting.state_pool_bytes + std::max(0.0, r.limiting.free_bytes);
  double capacity = -1;
  for (const auto& b : r.ranks) capacity = capacity < 0 ? b.sequence_capacity : std::min(capacity, b.sequence_capacity);
  r.headroom = pool_l > 0 && capacity > 0 ? 1.0 - static_cast<double>(users_per_group) / capacity
               : pool_l > 0               ? 1.0 - r.limiting.bytes_per_sequence * static_cast<double>(users_per_group) / pool_l
                                          : -1;

  if (r.limiting.kv_pool_bytes <= 0 && r.limiting.free_bytes < 0)
    r.reasons.push_back(fmt::format("weights and engine reserve exceed the memory: {} short per GPU on stage {} ({} of weights per GPU)",
                                    human_binary(-r.limiting.free_bytes), r.limiting.stage, human_binary(r.limiting.weights_bytes)));
  else if (r.max_users < users)
    r.reasons.push_back(
        fmt::format("the KV/state pool holds {} users at {} tokens, fewer than the {} requested (the pool holds {} tokens per GPU{})",
                    r.max_users, context, users, r.limiting.kv_tokens,
                    r.limiting.state_slots >= 0 ? fmt::format(", {} state slots", r.limiting.state_slots) : std::string()));
  if (s.engine == Engine::vllm && context > 0 && r.max_num_batched_tokens < r.max_num_seqs)
    r.warnings.push_back(fmt::format("max_num_batched_tokens ({}) must be greater than or equal to max_num_seqs ({}).",
                                     r.max_num_batched_tokens, r.max_num_seqs));
  if (!s.precision.empty() && s.precision.find("fp4") != std::string::npos && !gpu.runs_natively(s.precision))
    r.warnings.push_back(fmt::format("{} has no native {}: weight-only kernels (Marlin, triton) run it, slower", gpu.id, s.precision));
  r.fits = r.reasons.empty();

  // flags for both engines: the engine asked for with its resolved figures at its version, the
  // other with its defaults at its newest; one builder with launch (engines/flags.cpp)
  for (Engine e : kEngines) {
    EngineSettings se;
    se.engine = e;
    const bool asked = e == s.engine;
    if (commands == FitCommands::none || (commands == FitCommands::refusals && !asked)) continue;
    const EngineModel& other = asked ? em : se.model();
    const Layout le = other.effective_layout(m, l, true);
    const std::int64_t per = (users + other.kv_instances(le) - 1) / other.kv_instances(le);
    ServeRequest q;
    q.model = &m;
    q.engine = &other;
    q.engine_version = asked ? s.engine_version : "";
    q.layout = le;
    q.defaults = asked ? dd : other.defaults(m, gpu, le, se, per, context);
    q.context = context;
    q.max_running = std::max<std::int64_t>(per, 1);
    q.kv_dtype = given.kv_dtype;  // the engine resolves its own default again
    if (asked) q.settings = &given;
    q.refusal_only = commands == FitCommands::refusals;
    ServeArgs sa = serve_args(q);
    if (q.refusal_only) {
      if (!sa.error.empty()) r.reasons.push_back(sa.error);
      continue;
    }
    if (r.nodes > 1) {
      const std::size_t at = sa.args.size();
      sa.args.insert(sa.args.end(), {"--nnodes", std::to_string(r.nodes)});
      keep_accepted(sa.args, at, sa.release, sa.notes);
    }
    std::string joined;
    for (const auto& x : sa.args) joined += (joined.empty() ? "" : " ") + x;
    (e == Engine::sglang ? r.sglang_flags : r.vllm_flags) = joined;
    (e == Engine::sglang ? r.sglang_args : r.vllm_args) = sa.args;
    // the manual layer split travels in the engine's environment (digits and commas only)
    if (!s.pp_layer_partition.empty() && EngineModel::pp_partition_error(s.pp_layer_partition, m.num_layers(), std::max(1, le.pp)).empty())
      (e == Engine::sglang ? r.sglang_env : r.vllm_env).push_back(other.pp_partition_assignment(s.pp_layer_partition));
    const char* name = e == Engine::vllm ? "vLLM" : "SGLang";
    for (const auto& n : sa.notes) r.flag_notes.push_back(fmt::format("{} flags: {}", name, n));
    if (!sa.error.empty()) {
      if (asked)
        r.reasons.push_back(sa.error);
      else
        r.flag_notes.push_back(fmt::format("{} flags: {}", name, sa.error));
    }
  }
  r.fits = r.reasons.empty();

  for (auto& a : em.assumptions(m)) r.assumptions.push_back(std::move(a));
  if (!d.kv_dtype.empty())
    r.assumptions.push_back(fmt::format("KV cache {}: what {} picks for this model on {} when no KV dtype is given (the engine's own default)",
                                        d.kv_dtype, em.display_name(), gpu.id));
  if (m.moe)
    r.assumptions.push_back(
        "weights per GPU: experts split evenly over the expert-parallel group, attention by TP with MLA's low-rank input projections "
        "replicated");
  return r;
}

std::vector<Layout> candidate_layouts(const Model& m, const Gpu& gpu, Engine e, int gpus) {
  const EngineModel& em = engine_model(e);
  std::vector<Layout> out;
  for (const Layout& l : em.layout_candidates(m, gpus)) {
    if (em.gpus(l) != gpus) continue;
    bool dup = false;
    for (const auto& x : out)
      dup = dup || (x.tp == l.tp && x.ep == l.ep && x.dp == l.dp && x.pp == l.pp && x.dp_attention == l.dp_attention && x.dcp == l.dcp);
    if (!dup && layout_refusals(m, gpu, e, l).empty()) out.push_back(l);
  }
  const int node = gpu.gpus_per_node;
  // prefer TP within a node (no cross-node all-reduce), then larger TP
  std::stable_sort(out.begin(), out.end(), [&](const Layout& a, const Layout& b) {
    const bool ia = a.tp <= node || a.tp <= gpu.scaleup_domain_gpus, ib = b.tp <= node || b.tp <= gpu.scaleup_domain_gpus;
    if (ia != ib) return ia;
    return a.pp < b.pp;
  });
  return out;
}

namespace {
// candidates come in the engines' preferred order (TP inside a node, no PP, EP = TP): the first
// that fits wins; when none fits, the one that came closest. Empty when there is no candidate.
std::optional<FitResult> best_candidate_fit(const Model& m, const Gpu& gpu, const EngineSettings& s, int gpus, std::int64_t context,
                                            std::int64_t users) {
  std::optional<FitResult> best;
  for (const auto& l : candidate_layouts(m, gpu, s.engine, gpus)) {
    FitResult f = evaluate_fit(m, gpu, l, s, context, users);
    if (!best || f.fits || f.max_users > best->max_users) best = std::move(f);
    if (best->fits) break;
  }
  return best;
}
}  // namespace

FitResult fit_on_gpus(const Model& m, const Gpu& gpu, const EngineSettings& s, int gpus, std::int64_t context, std::int64_t users) {
  if (auto best = best_candidate_fit(m, gpu, s, gpus, context, users)) return *best;
  Layout guess;
  guess.tp = gpus;
  FitResult f = evaluate_fit(m, gpu, guess, s, context, users);
  f.fits = false;
  if (f.reasons.empty()) f.reasons.push_back(fmt::format("no engine-valid layout for {} x {}", gpus, gpu.id));
  return f;
}

FitResult search_fit(const Model& m, const Gpu& gpu, const EngineSettings& s, std::int64_t context, std::int64_t users, int max_gpus) {
  FitResult last;
  bool any = false;
  for (int n = 1; n <= max_gpus; ++n) {
    if (n <= gpu.gpus_per_node) {
      if ((n & (n - 1)) != 0) continue;
    } else if (n % gpu.gpus_per_node != 0) {
      continue;
    }
    const std::optional<FitResult> found = best_candidate_fit(m, gpu, s, n, context, users);
    if (!found) continue;
    const FitResult& best = *found;
    if (best.fits) return best;
    last = best;
    any = true;
  }
  if (!any) {
    last.model = m.id;
    last.gpu = gpu.id;
    last.reasons.push_back(fmt::format("no engine-valid layout up to {} GPUs", max_gpus));
  }
  last.fits = false;
  if (std::find_if(last.reasons.begin(), last.reasons.end(), [](const std::string& x) { return x.rfind("no layout", 0) == 0; }) ==
      last.reasons.end())
    last.reasons.insert(last.reasons.begin(), fmt::format("no layout up to {} GPUs fits; the largest tried is shown", max_gpus));
  return last;
}

nlohmann::json budget_json(const RankBudget& b) {
  return {{"stage", b.stage},
          {"layers", b.layers},
          {"capacity_bytes", b.capacity_bytes},
          {"reserved_bytes", b.reserved_bytes},
          {"weights_bytes", b.weights_bytes},
          {"activation_bytes", b.activation_bytes},
          {"overhead_bytes", b.overhead_bytes},
          {"kv_pool_bytes", b.kv_pool_bytes},
          {"state_pool_bytes", b.state_pool_bytes},
          {"free_bytes", b.free_bytes},
          {"kv_bytes_per_token", b.kv_bytes_per_token},
          {"state_bytes_per_sequence", b.state_bytes_per_sequence},
          {"bytes_per_sequence", b.bytes_per_sequence},
          {"kv_tokens", b.kv_tokens},
          {"reported_kv_tokens", b.reported_kv_tokens},
          {"block_size", b.block_size},
          {"kv_cache_groups", b.kv_groups},
          {"state_slots", b.state_slots},
          {"max_running_requests", b.running_cap}};
}

}  // namespace k3plan
