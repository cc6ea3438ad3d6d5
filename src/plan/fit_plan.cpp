// The fit searches (see fit_plan.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <k3plan/engine.hpp>
#include <k3plan/engine_flags.hpp>
#include <k3plan/error.hpp>
#include <k3plan/fit_plan.hpp>
#include <k3plan/layout.hpp>
#include <k3plan/params.hpp>
#include <k3plan/units.hpp>
#include <limits>
#include <regex>

namespace k3plan {

Layout complete_layout(const Model& m, const EngineSettings& s, Layout l, bool ep_given) {
  if (!m.moe || ep_given || l.ep != 1 || l.tp * l.dp <= 1) return l;
  Layout ep = l;
  ep.ep = 2;  // ask the engine what EP it derives when expert parallel is on
  const Layout derived = s.model().effective_layout(m, ep, false);
  if (derived.ep == l.tp * l.dp) l.ep = derived.ep;
  return l;
}

FitResult fit_one_gpu(const Model& m, const Gpu& g, const EngineSettings& s, const FitRequest& r) {
  if (r.layout) {
    const Layout l = complete_layout(m, s, *r.layout, r.ep_given);
    const EngineModel& em = s.model();
    if (r.gpus > 0 && em.gpus(l) != r.gpus)
      throw InputError(
          fmt::format("-n {} contradicts the layout: {} needs {} GPUs ({})", r.gpus, em.gpu_product_text(), em.gpus(l), em.display_name()));
    return evaluate_fit(m, g, l, s, r.context, r.users);
  }
  if (r.gpus > 0) return fit_on_gpus(m, g, s, r.gpus, r.context, r.users);
  return search_fit(m, g, s, r.context, r.users);
}

std::vector<FitAlternative> fit_alternatives(const Model& m, const Gpu& g, const EngineSettings& s, const FitResult& f) {
  std::vector<FitAlternative> out;
  auto consider = [&](const std::string& flag, const Layout& l) {
    if (!s.model().refusals(m, g, l).empty()) return;  // the release would not start it
    FitResult alt = evaluate_fit(m, g, l, s, f.context, f.users);
    if (!alt.reasons.empty() && !alt.fits) return;
    if (alt.max_users == f.max_users) return;  // no change to the answer: not worth a line
    out.push_back({flag, std::move(alt)});
  };
  const Layout& l = f.layout;
  if (l.dcp > 1) {
    Layout x = l;
    x.dcp = 1;
    consider("no DCP", x);
  } else if (const auto x = with_dcp(m, l)) {
    consider(fmt::format("--dcp {}", x->dcp), *x);
  }
  if (s.model().has_setting("dp_attention")) {
    Layout x = l;
    if (l.dp_attention) {
      x.dp_attention = false;
      x.dp = 1;
      consider("no DP-attention", x);
    } else if (l.tp > 1 && l.dp == 1) {
      x.dp_attention = true;
      x.dp = l.tp;
      consider(fmt::format("--enable-dp-attention --dp {}", x.dp), x);
    }
  }
  return out;
}

std::vector<GpuFitRow> fit_every_gpu(const Catalogue& cat, const Model& m, const EngineSettings& s, double weights_bytes,
                                     std::int64_t context, std::int64_t users, bool weights_only) {
  std::vector<GpuFitRow> rows;
  for (const auto& g : cat.gpus()) {
    GpuFitRow row;
    row.gpu = &g;
    row.lower_bound = weights_lower_bound(m, g, weights_bytes);
    if (!weights_only) {
      row.fit = search_fit(m, g, s, context, users);
      if (row.fit->fits) row.usd_per_hour = row.fit->gpus * g.price_usd_per_hour.value;
    } else if (row.lower_bound.deployable_found) {
      row.usd_per_hour = row.lower_bound.gpus * g.price_usd_per_hour.value;
    }
    rows.push_back(std::move(row));
  }
  // the catalogue order for weights-only tables (a bound is not a price comparison); else cheapest
  // first, with GPUs that do not hold the load last
  if (!weights_only) {
    auto key = [](const GpuFitRow& x) { return x.usd_per_hour > 0 ? x.usd_per_hour : std::numeric_limits<double>::infinity(); };
    std::stable_sort(rows.begin(), rows.end(), [&](const GpuFitRow& a, const GpuFitRow& b) { return key(a) < key(b); });
  }
  return rows;
}

EngineSettings fit_settings(const FitOptions& o) {
  EngineSettings s;
  s.engine = parse_engine(o.engine);
  s.engine_version = o.engine_version;
  const EngineModel& em = s.model();  // an unknown version is a usage error listing the known ones
  auto engine_flag = [&](const char* setting, const char* flag) {
    if (!em.has_setting(setting))
      throw InputError(fmt::format("{} is not a {} flag (--engine {}); {} takes {}", flag, em.display_name(), to_string(s.engine),
                                   em.display_name(), em.memory_fraction_flag()));
  };
  if (o.gpu_memory_utilization && o.mem_fraction_static)
    throw InputError("--gpu-memory-utilization (vLLM) and --mem-fraction-static (SGLang) are contradictory; give the one for --engine");
  if (o.gpu_memory_utilization) {
    if (!(*o.gpu_memory_utilization > 0 && *o.gpu_memory_utilization <= 1)) throw InputError("--gpu-memory-utilization: must be in (0, 1]");
    engine_flag("gpu_memory_utilization", "--gpu-memory-utilization");
    s.gpu_memory_utilization = *o.gpu_memory_utilization;
  }
  if (o.mem_fraction_static) {
    if (!(*o.mem_fraction_static > 0 && *o.mem_fraction_static < 1)) throw InputError("--mem-fraction-static: must be in (0, 1)");
    engine_flag("mem_fraction_static", "--mem-fraction-static");
    s.mem_fraction_static = *o.mem_fraction_static;
  }
  if (o.max_num_batched_tokens) {
    if (*o.max_num_batched_tokens < 1 || *o.max_num_batched_tokens > (1 << 24)) throw InputError("--max-num-batched-tokens: out of range");
    s.max_num_batched_tokens = *o.max_num_batched_tokens;
  }
  if (o.max_num_seqs) {
    if (*o.max_num_seqs < 1 || *o.max_num_seqs > (1 << 20)) throw InputError("--max-num-seqs: out of range");
    s.max_num_seqs = *o.max_num_seqs;
  }
  if (o.cuda_graph_max_bs) {
    if (*o.cuda_graph_max_bs < 1 || *o.cuda_graph_max_bs > 65536) throw InputError("--cuda-graph-max-bs: out of range");
    s.cuda_graph_max_bs = *o.cuda_graph_max_bs;
  }
  const bool state_flags =
      o.mamba_full_memory_ratio || o.max_mamba_cache_size || !o.mamba_radix_cache_strategy.empty() || o.disable_radix_cache;
  if (state_flags && !em.has_setting("mamba_full_memory_ratio"))
    throw InputError(
        fmt::format("--mamba-full-memory-ratio, --max-mamba-cache-size, --mamba-radix-cache-strategy and "
                    "--disable-radix-cache are SGLang flags, not {} ones",
                    em.display_name()));
  if (o.mamba_full_memory_ratio) {
    if (!(*o.mamba_full_memory_ratio > 0 && *o.mamba_full_memory_ratio <= 100))
      throw InputError("--mamba-full-memory-ratio: must be in (0, 100]");
    s.mamba_full_memory_ratio = *o.mamba_full_memory_ratio;
  }
  if (o.max_mamba_cache_size) {
    if (*o.max_mamba_cache_size < 1 || *o.max_mamba_cache_size > (1 << 24)) throw InputError("--max-mamba-cache-size: out of range");
    s.max_mamba_cache_size = *o.max_mamba_cache_size;
  }
  if (!o.mamba_radix_cache_strategy.empty() && o.mamba_radix_cache_strategy != "auto" && o.mamba_radix_cache_strategy != "no_buffer" &&
      o.mamba_radix_cache_strategy != "extra_buffer" && o.mamba_radix_cache_strategy != "extra_buffer_lazy")
    throw InputError(fmt::format("--mamba-radix-cache-strategy {}: expected auto, no_buffer, extra_buffer or extra_buffer_lazy",
                                 o.mamba_radix_cache_strategy));
  s.mamba_radix_cache_strategy = o.mamba_radix_cache_strategy == "auto" ? "" : o.mamba_radix_cache_strategy;
  s.disable_radix_cache = o.disable_radix_cache;
  if (o.enable_prefix_caching && o.no_enable_prefix_caching)
    throw InputError("--enable-prefix-caching and --no-enable-prefix-caching: give one of them");
  if (o.enable_prefix_caching || o.no_enable_prefix_caching) {
    engine_flag("prefix_caching", o.enable_prefix_caching ? "--enable-prefix-caching" : "--no-enable-prefix-caching");
    s.prefix_caching = o.enable_prefix_caching ? 1 : 0;
  }
  if (o.max_total_tokens) {
    if (*o.max_total_tokens < 1 || *o.max_total_tokens > (std::int64_t{1} << 40)) throw InputError("--max-total-tokens: out of range");
    if (!em.has_setting("max_total_tokens"))
      throw InputError(fmt::format("--max-total-tokens is an SGLang flag, not a {} one (--engine {})", em.display_name(), to_string(s.engine)));
    s.max_total_tokens = *o.max_total_tokens;
  }
  if (!o.limit_mm_per_prompt.empty()) {
    if (!em.has_setting("limit_mm_per_prompt"))
      throw InputError(
          fmt::format("--limit-mm-per-prompt is a vLLM flag, not a {} one (--engine {})", em.display_name(), to_string(s.engine)));
    // the two spellings vLLM takes: JSON ('{"image": 4, "video": 1}') and key=value pairs
    static const std::regex kSpelling(R"([a-z_0-9"' :=,{}]+)");
    const char* expected = "expected the images per prompt as JSON ('{\"image\": 4}') or image=4";
    if (!std::regex_match(o.limit_mm_per_prompt, kSpelling)) throw InputError(fmt::format("--limit-mm-per-prompt: {}", expected));
    const auto images = limit_mm_images(o.limit_mm_per_prompt);
    if (!images) throw InputError(fmt::format("--limit-mm-per-prompt '{}': {}", o.limit_mm_per_prompt, expected));
    s.mm_images_per_prompt = *images;
    if (s.mm_images_per_prompt > 4096) throw InputError("--limit-mm-per-prompt: at most 4096 images per prompt");
  }
  s.gpu_p2p = !o.no_gpu_p2p;
  s.pp_layer_partition = o.pp_layer_partition;
  s.kv_dtype = o.kv_dtype;
  s.draft_layers = o.draft_layers;
  if (o.speculative_num_draft_tokens) {
    if (*o.speculative_num_draft_tokens < 1 || *o.speculative_num_draft_tokens > 64)
      throw InputError("--speculative-num-draft-tokens: must be between 1 and 64");
    if (!em.has_setting("speculative_num_draft_tokens"))
      throw InputError(fmt::format("--speculative-num-draft-tokens is an SGLang flag, not a {} one (--engine {})", em.display_name(),
                                   to_string(s.engine)));
    s.speculative_draft_tokens = *o.speculative_num_draft_tokens;
  }
  if (!o.precision.empty()) {
    precision_format(o.precision);
    s.precision = o.precision;
  }
  return s;
}

namespace {
// Only the GPU figures the every-GPU table uses: memory (bounds) and price (ranking).
std::vector<Assumption> table_assumptions(const Gpu& g, bool weights_only) {
  std::vector<Assumption> used;
  for (const auto& a : g.assumptions)
    if (a.what.find("hbm_gb") != std::string::npos || a.what.find("memory_reported") != std::string::npos ||
        (!weights_only && a.what.find("price") != std::string::npos))
      used.push_back(a);
  return used;
}
}  // namespace

FitPlan plan_fit(const Catalogue& cat, const FitOptions& o) {
  FitPlan p;
  p.model = resolve_model(cat, o.model);
  const Model& m = p.model;
  p.settings = fit_settings(o);
  const EngineSettings& s = p.settings;
  // a KV cache dtype the engine release has no name for is a usage error, not "does not fit"
  if (const KvDtypeArg kv = engine_kv_dtype(flag_release(s.engine, s.engine_version), s.kv_dtype, m.dtype); !kv.error.empty())
    throw InputError(kv.error);
  if (o.users < 1 || o.users > 10000000) throw InputError(fmt::format("--users {}: must be between 1 and 10,000,000", o.users));
  p.context = o.context.empty() ? std::min<std::int64_t>(m.max_context, 32768) : parse_context(o.context, "--context");
  const auto params = count_params(m);
  p.weights_bytes = o.precision.empty() ? weights_as_shipped(m, params).bytes : weights_uniform(params, o.precision).bytes;
  p.assumptions = m.assumptions;
  // a manual layer split gives the stage count; one the engine would refuse to start on is a usage
  // error here, where the model and PP are both the user's
  const int pp_given = o.pp ? o.pp : static_cast<int>(o.pp_layer_partition.size());
  if (!o.pp_layer_partition.empty())
    if (const std::string why = s.model().pp_partition_usage_error("--pp-layer-partition", o.pp_layer_partition, m.id, m.num_layers(),
                                                                   pp_given, fmt::format(", --pp {}", pp_given));
        !why.empty())
      throw InputError(why);
  const bool explicit_layout = o.tp || o.ep || o.dp || pp_given || o.dp_attention || o.dcp;
  if (o.gpus < 0 || o.gpus > 100000) throw InputError("--gpus: out of range");
  if (o.gpu.empty()) {
    if (explicit_layout) throw InputError("fit: --tp/--ep/--dp/--pp/--pp-layer-partition need a GPU (-g)");
    p.rows = fit_every_gpu(cat, m, s, p.weights_bytes, p.context, o.users, o.weights_only);
    for (const auto& row : p.rows)
      for (auto& a : table_assumptions(*row.gpu, o.weights_only)) p.assumptions.push_back(std::move(a));
    return p;
  }
  p.gpu = &cat.gpu(o.gpu);
  const Gpu& g = *p.gpu;
  p.assumptions.insert(p.assumptions.end(), g.assumptions.begin(), g.assumptions.end());
  FitRequest req;
  req.context = p.context;
  req.users = o.users;
  req.gpus = o.gpus;
  req.ep_given = o.ep != 0;
  if (explicit_layout) {
    Layout l;
    l.tp = o.tp ? o.tp : 1;
    l.ep = o.ep ? o.ep : 1;
    l.dp = o.dp ? o.dp : 1;
    l.pp = pp_given ? pp_given : 1;
    l.dcp = o.dcp ? o.dcp : 1;
    l.dp_attention = o.dp_attention;
    req.layout = l;
  }
  p.fit = fit_one_gpu(m, g, s, req);
  p.alternatives = fit_alternatives(m, g, s, *p.fit);
  return p;
}

}  // namespace k3plan
