#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <k3plan/ascii.hpp>
#include <k3plan/catalogue.hpp>
#include <k3plan/compiled.hpp>
#include <k3plan/embedded.hpp>
#include <k3plan/error.hpp>
#include <k3plan/input_file.hpp>
#include <k3plan/hub.hpp>
#include <sstream>

#include <k3plan/yaml_reader.hpp>

namespace k3plan {

namespace fs = std::filesystem;

namespace {


AttnKind parse_kind(const YamlReader& r, const YAML::Node& n, const std::string& field) {
  const std::string k = r.str(n, "kind", field, true);
  if (k == "gqa" || k == "mha") return AttnKind::gqa;
  if (k == "mla") return AttnKind::mla;
  if (k == "kda") return AttnKind::kda;
  if (k == "gdn") return AttnKind::gdn;
  if (k == "mamba2") return AttnKind::mamba2;
  if (k == "compressed") return AttnKind::compressed;
  if (k == "none") return AttnKind::none;
  const auto hint = closest_match(k, {"gqa", "mha", "mla", "kda", "gdn", "mamba2", "compressed", "none"});
  r.fail(n["kind"], field + ".kind",
         fmt::format("unknown attention kind '{}'{}", k, hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint)));
}

AttentionBlock parse_block(const YamlReader& r, const std::string& name, const YAML::Node& n, const std::string& ctx,
                           const std::string& src, std::vector<Assumption>* as, const std::string& owner) {
  r.check_keys(n, {"kind",        "num_heads",  "num_kv_heads", "head_dim",       "v_head_dim",       "sliding_window",
                   "qkv_bias",    "sinks",      "q_lora_rank",  "kv_lora_rank",   "qk_nope_head_dim", "qk_rope_head_dim",
                   "output_gate", "indexer",    "conv_kernel",  "full_rank_gate", "num_k_heads",      "num_v_heads",
                   "head_k_dim",  "head_v_dim", "state_size",   "n_groups",       "compress_ratio",   "o_lora_rank",
                   "o_groups",    "mlp"},
               ctx);
  AttentionBlock b;
  b.name = name;
  b.kind = parse_kind(r, n, ctx);
  auto i = [&](const char* key, bool required) { return static_cast<int>(r.figure(n, key, ctx, required, src, 0, 1e7, as, owner).value); };
  const bool attn = b.kind == AttnKind::gqa || b.kind == AttnKind::mla || b.kind == AttnKind::compressed;
  b.num_heads = i("num_heads", b.kind != AttnKind::gdn);
  b.num_kv_heads = i("num_kv_heads", b.kind == AttnKind::gqa || b.kind == AttnKind::compressed);
  b.head_dim =
      i("head_dim", b.kind == AttnKind::gqa || b.kind == AttnKind::kda || b.kind == AttnKind::compressed || b.kind == AttnKind::mamba2);
  b.v_head_dim = i("v_head_dim", b.kind == AttnKind::mla);
  if (b.kind == AttnKind::gqa && b.v_head_dim == 0) b.v_head_dim = b.head_dim;
  b.sliding_window = i("sliding_window", b.kind == AttnKind::compressed);
  b.qkv_bias = r.boolean(n, "qkv_bias", ctx, false);
  b.sinks = r.boolean(n, "sinks", ctx, false);
  b.q_lora_rank = i("q_lora_rank", false);
  b.kv_lora_rank = i("kv_lora_rank", b.kind == AttnKind::mla);
  b.qk_nope_head_dim = i("qk_nope_head_dim", b.kind == AttnKind::mla);
  b.qk_rope_head_dim = i("qk_rope_head_dim", b.kind == AttnKind::mla);
  b.output_gate = r.boolean(n, "output_gate", ctx, false);
  if (r.has(n, "indexer")) {
    const auto ix = n["indexer"];
    r.check_keys(ix, {"heads", "head_dim"}, ctx + ".indexer");
    b.indexer_heads = static_cast<int>(r.integer(ix, "heads", ctx + ".indexer", true, 0, 1, 4096));
    b.indexer_head_dim = static_cast<int>(r.integer(ix, "head_dim", ctx + ".indexer", true, 0, 1, 65536));
  }
  b.conv_kernel = i("conv_kernel", b.is_linear());
  b.full_rank_gate = r.boolean(n, "full_rank_gate", ctx, false);
  if (r.has(n, "full_rank_gate") && n["full_rank_gate"].IsMap()) r.figure(n, "full_rank_gate", ctx, false, src, 0, 1, as, owner);
  b.num_k_heads = i("num_k_heads", b.kind == AttnKind::gdn);
  b.num_v_heads = i("num_v_heads", b.kind == AttnKind::gdn);
  b.head_k_dim = i("head_k_dim", b.kind == AttnKind::gdn);
  b.head_v_dim = i("head_v_dim", b.kind == AttnKind::gdn);
  b.state_size = i("state_size", b.kind == AttnKind::mamba2);
  b.n_groups = i("n_groups", false);
  if (b.kind == AttnKind::mamba2 && b.n_groups == 0) b.n_groups = 1;
  b.compress_ratio = i("compress_ratio", false);
  b.o_lora_rank = i("o_lora_rank", false);
  b.o_groups = i("o_groups", false);
  b.has_mlp = r.boolean(n, "mlp", ctx, true);
  (void)attn;
  return b;
}

void parse_layers(const YamlReader& r, const YAML::Node& list, Model& m, const std::string& ctx) {
  r.require_list(list, ctx, "expected a list of block names or {repeat: N, of: [...]}");
  auto index_of = [&](const YAML::Node& item, const std::string& name) {
    for (std::size_t i = 0; i < m.blocks.size(); ++i)
      if (m.blocks[i].name == name) return static_cast<int>(i);
    std::vector<std::string> names;
    for (const auto& b : m.blocks) names.push_back(b.name);
    const auto hint = closest_match(name, names);
    r.fail(item, ctx, fmt::format("unknown attention block '{}'{}", name, hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint)));
  };
  for (const auto& item : list) {
    if (item.IsScalar()) {
      m.layers.push_back(index_of(item, item.Scalar()));
    } else if (item.IsMap()) {
      r.check_keys(item, {"repeat", "of"}, ctx);
      const auto n = r.integer(item, "repeat", ctx, true, 0, 1, 10000);
      const auto of = item["of"];
      r.require_list(of, ctx + ".of", "expected a non-empty list of block names");
      if (of.size() == 0) r.fail(item, ctx + ".of", "expected a non-empty list of block names");
      std::vector<int> group;
      for (const auto& x : of) {
        if (!x.IsScalar()) r.fail(x, ctx + ".of", "expected a block name");
        group.push_back(index_of(x, x.Scalar()));
      }
      for (std::int64_t k = 0; k < n; ++k) m.layers.insert(m.layers.end(), group.begin(), group.end());
      if (m.layers.size() > 10000) r.fail(item, ctx, "absurd layer count");
    } else {
      r.fail(item, ctx, "expected a block name or {repeat: N, of: [...]}");
    }
  }
}

ParamGroup parse_group(const YamlReader& r, const YAML::Node& at, const std::string& name, const std::string& ctx) {
  for (int g = 0; g < kParamGroups; ++g)
    if (name == to_string(static_cast<ParamGroup>(g))) return static_cast<ParamGroup>(g);
  std::vector<std::string> names;
  for (int g = 0; g < kParamGroups; ++g) names.emplace_back(to_string(static_cast<ParamGroup>(g)));
  const auto hint = closest_match(name, names);
  r.fail(at, ctx + "." + name, hint.empty() ? "unknown parameter group" : fmt::format("unknown parameter group; did you mean '{}'?", hint));
}

}  // namespace

Model parse_model_yaml(const std::string& text, const std::string& origin) {
  YamlReader r(origin);
  const YAML::Node root = r.parse(text);
  r.check_keys(root, {"id", "name", "aliases", "hf_repo", "hf_architecture", "source", "date", "published", "engine", "architecture", "precision"},
               "");
  Model m;
  m.origin = origin;
  m.id = ascii_lower(r.str(root, "id", "", true));
  m.name = r.str(root, "name", "", true);
  m.aliases = r.strings(root, "aliases", "");
  m.hf_repo = r.str(root, "hf_repo", "", false);
  // the repository's config.json architectures[0], which engines dispatch on (SGLang's hybrid SWA
  // allowlist, vLLM's per-class rules); a config.json import reads it from the file
  m.architecture = r.str(root, "hf_architecture", "", false);
  m.source = r.str(root, "source", "", true);
  m.date = r.str(root, "date", "", false);
  const std::string owner = m.id;
  if (r.has(root, "published")) {
    const auto p = root["published"];
    r.check_keys(p, {"params_total", "params_active", "checkpoint_bytes", "source"}, "published");
    const std::string psrc = r.str(p, "source", "published", false, m.source);
    if (r.has(p, "params_total"))
      m.published_params_total = r.figure(p, "params_total", "published", true, psrc, 1, 1e14, &m.assumptions, owner);
    if (r.has(p, "params_active"))
      m.published_params_active = r.figure(p, "params_active", "published", true, psrc, 1, 1e14, &m.assumptions, owner);
    if (r.has(p, "checkpoint_bytes"))
      m.published_checkpoint_bytes = r.figure(p, "checkpoint_bytes", "published", true, psrc, 1, 1e15, &m.assumptions, owner);
  }
  if (r.has(root, "engine")) {
    const auto e = root["engine"];
    r.require_map(e, "engine");
    for (const char* flat : {"tool_call_parser", "reasoning_parser"})
      if (e[flat].IsDefined())
        r.fail(e[flat], std::string("engine.") + flat,
               "parser names differ between the engines: give them under engine.sglang and engine.vllm (see data/SCHEMA.md)");
    r.check_keys(e, {"trust_remote_code", "sglang", "vllm"}, "engine");
    m.engine.trust_remote_code = r.boolean(e, "trust_remote_code", "engine", false);
    for (const char* eng : {"sglang", "vllm"}) {
      if (!r.has(e, eng)) continue;
      const auto pe = e[eng];
      const std::string ctx = std::string("engine.") + eng;
      r.require_map(pe, ctx);
      r.check_keys(pe, {"tool_call_parser", "reasoning_parser"}, ctx);
      ParserNames& p = std::string(eng) == "vllm" ? m.engine.vllm : m.engine.sglang;
      p.tool_call_parser = r.str(pe, "tool_call_parser", ctx, false);
      p.reasoning_parser = r.str(pe, "reasoning_parser", ctx, false);
    }
  }
  const auto a = root["architecture"];
  if (!a.IsDefined()) r.fail(root, "architecture", "missing");
  r.check_keys(a,
               {"hidden_size", "vocab_size", "tie_word_embeddings", "max_context", "dtype", "dense_intermediate_size", "attention",
                "layers", "moe", "mtp_layers", "vision_params"},
               "architecture");
  const std::string A = "architecture";
  auto fig = [&](const YAML::Node& n, const char* key, const std::string& ctx, bool required, double lo, double hi) {
    return r.figure(n, key, ctx, required, m.source, lo, hi, &m.assumptions, owner).value;
  };
  m.hidden_size = static_cast<std::int64_t>(fig(a, "hidden_size", A, true, 1, 1e6));
  m.vocab_size = static_cast<std::int64_t>(fig(a, "vocab_size", A, true, 1, 1e8));
  m.tie_word_embeddings = r.boolean(a, "tie_word_embeddings", A, false);
  m.max_context = static_cast<std::int64_t>(fig(a, "max_context", A, true, 1, 1e10));
  m.dtype = r.str(a, "dtype", A, false, "bf16");
  if (m.dtype != "bf16" && m.dtype != "fp16" && m.dtype != "fp32") r.fail(a["dtype"], A + ".dtype", "expected bf16, fp16 or fp32");
  m.dense_intermediate_size = static_cast<std::int64_t>(fig(a, "dense_intermediate_size", A, false, 1, 1e7));
  const auto att = a["attention"];
  r.require_map(att, A + ".attention");
  for (const auto& kv : att) {
    const std::string name = kv.first.as<std::string>();
    for (const auto& b : m.blocks)
      if (b.name == name) r.fail(kv.first, A + ".attention." + name, "duplicate key");
    m.blocks.push_back(parse_block(r, name, kv.second, A + ".attention." + name, m.source, &m.assumptions, owner));
  }
  if (!a["layers"].IsDefined()) r.fail(a, A + ".layers", "missing");
  parse_layers(r, a["layers"], m, A + ".layers");
  if (r.has(a, "moe")) {
    const auto e = a["moe"];
    const std::string C = A + ".moe";
    r.check_keys(e,
                 {"routed_experts", "experts_per_token", "shared_experts", "expert_intermediate_size", "shared_intermediate_size",
                  "first_dense_layers", "latent_size"},
                 C);
    MoE moe;
    moe.routed_experts = static_cast<int>(fig(e, "routed_experts", C, true, 1, 1e5));
    moe.experts_per_token = static_cast<int>(fig(e, "experts_per_token", C, true, 1, 1e4));
    moe.shared_experts = static_cast<int>(fig(e, "shared_experts", C, false, 0, 1e3));
    moe.expert_intermediate_size = static_cast<std::int64_t>(fig(e, "expert_intermediate_size", C, true, 1, 1e7));
    moe.shared_intermediate_size = static_cast<std::int64_t>(fig(e, "shared_intermediate_size", C, false, 0, 1e7));
    if (!r.has(e, "shared_intermediate_size")) moe.shared_intermediate_size = moe.shared_experts * moe.expert_intermediate_size;
    moe.first_dense_layers = static_cast<int>(fig(e, "first_dense_layers", C, false, 0, 1e4));
    moe.latent_size = static_cast<int>(fig(e, "latent_size", C, false, 0, 1e6));
    m.moe = moe;
  }
  m.mtp_layers = static_cast<int>(fig(a, "mtp_layers", A, false, 0, 100));
  m.vision_params = fig(a, "vision_params", A, false, 0, 1e12);
  if (r.has(root, "precision")) {
    const auto p = root["precision"];
    r.require_map(p, "precision");
    for (const auto& kv : p) {
      const std::string key = kv.first.as<std::string>();
      if (!kv.second.IsScalar()) r.fail(kv.second, "precision." + key, "expected a format name");
      const std::string fmt_name = kv.second.Scalar();
      if (key == "default")
        m.default_precision = fmt_name;
      else
        m.precision[parse_group(r, kv.first, key, "precision")] = fmt_name;
    }
  }
  for (const auto& b : m.blocks) {
    bool used = false;
    for (int l : m.layers) used = used || m.blocks[static_cast<std::size_t>(l)].name == b.name;
    if (!used) r.fail(att, A + ".attention." + b.name, "block defined but not used in layers");
  }
  validate_model(m, origin);
  return m;
}

namespace {

Gpu parse_gpu(const YamlReader& r, const YAML::Node& n, const std::string& ctx) {
  r.check_keys(n,
               {"id", "name", "vendor", "aliases", "source", "hbm_gb", "memory_reported_mib", "memory_engine_total_mib",
                "hbm_bandwidth_tb_s", "tflops_dense", "native_formats", "compute_capability", "isa", "nvlink_multicast", "nccl_channels",
                "scaleup_gb_s", "gpus_per_node", "scaleup_domain_gpus", "power_w", "price"},
               ctx);
  Gpu g;
  g.origin = r.origin();
  g.id = ascii_lower(r.str(n, "id", ctx, true));
  const std::string c = ctx + "[" + g.id + "]";
  g.name = r.str(n, "name", c, true);
  g.vendor = r.str(n, "vendor", c, true);
  g.aliases = r.strings(n, "aliases", c);
  g.source = r.str(n, "source", c, true);
  auto f = [&](const YAML::Node& node, const char* key, const std::string& cc, bool req, double lo, double hi) {
    return r.figure(node, key, cc, req, g.source, lo, hi, &g.assumptions, g.id);
  };
  g.hbm_gb = f(n, "hbm_gb", c, true, 1, 1e5);
  g.memory_reported_mib = f(n, "memory_reported_mib", c, true, 1, 1e8);
  g.memory_engine_total_mib = f(n, "memory_engine_total_mib", c, false, 1, 1e8);
  g.hbm_bandwidth_tb_s = f(n, "hbm_bandwidth_tb_s", c, true, 0.01, 1e3);
  const auto t = n["tflops_dense"];
  r.check_keys(t, {"bf16", "fp8", "fp4"}, c + ".tflops_dense");
  g.tflops_bf16 = f(t, "bf16", c + ".tflops_dense", true, 1, 1e6);
  g.tflops_fp8 = f(t, "fp8", c + ".tflops_dense", false, 0, 1e6);
  g.tflops_fp4 = f(t, "fp4", c + ".tflops_dense", false, 0, 1e6);
  g.native_formats = r.strings(n, "native_formats", c);
  g.compute_capability = r.number(n, "compute_capability", c, false, 0, 1, 99);
  if (g.compute_capability > 0 && g.vendor != "nvidia") r.fail(n["compute_capability"], c + ".compute_capability", "only NVIDIA GPUs have a CUDA compute capability");
  g.isa = ascii_lower(r.str(n, "isa", c, false));
  if (!g.isa.empty() && (g.vendor != "amd" || g.isa.rfind("gfx", 0) != 0))
    r.fail(n["isa"], c + ".isa", "an AMD GPU's gfx instruction set (gfx942, gfx950)");
  if (r.has(n, "nvlink_multicast")) {
    const YAML::Node mc = n["nvlink_multicast"];
    if (mc.IsMap()) {
      r.check_keys(mc, {"value", "source"}, c + ".nvlink_multicast");
      g.nvlink_multicast = r.boolean(mc, "value", c + ".nvlink_multicast", false);
      g.nvlink_multicast_source = r.str(mc, "source", c + ".nvlink_multicast", true);
    } else {
      g.nvlink_multicast = r.boolean(n, "nvlink_multicast", c, false);
      g.nvlink_multicast_source = g.source;
    }
    if (g.nvlink_multicast && g.vendor != "nvidia") r.fail(mc, c + ".nvlink_multicast", "NVLink multicast is an NVIDIA NVSwitch feature");
  }
  g.nccl_channels = f(n, "nccl_channels", c, false, 1, 64);
  g.scaleup_gb_s = f(n, "scaleup_gb_s", c, true, 1, 1e6);
  g.gpus_per_node = static_cast<int>(r.integer(n, "gpus_per_node", c, true, 8, 1, 1024));
  g.scaleup_domain_gpus = static_cast<int>(r.integer(n, "scaleup_domain_gpus", c, true, 8, 1, 100000));
  g.power_w = f(n, "power_w", c, false, 1, 1e5);
  if (r.has(n, "price")) {
    const auto p = n["price"];
    r.check_keys(p, {"usd_per_hour", "date", "source"}, c + ".price");
    const std::string psrc = r.str(p, "source", c + ".price", false, g.source);
    g.price_usd_per_hour = r.figure(p, "usd_per_hour", c + ".price", true, psrc, 0.001, 1e4, &g.assumptions, g.id);
    g.price_date = r.str(p, "date", c + ".price", true);
  }
  if (g.reported_bytes() > g.nominal_bytes() * 1.2)
    r.fail(n["memory_reported_mib"], c + ".memory_reported_mib", "larger than the memory as sold");
  return g;
}

}  // namespace

void Catalogue::put_model(Model m) {
  for (auto& x : models_)
    if (x.id == m.id) {
      x = std::move(m);
      return;
    }
  models_.push_back(std::move(m));
}

void Catalogue::put_gpu(Gpu g) {
  for (auto& x : gpus_)
    if (x.id == g.id) {
      x = std::move(g);
      return;
    }
  gpus_.push_back(std::move(g));
}

void Catalogue::add_text(const std::string& text, const std::string& origin) {
  YamlReader r(origin);
  const YAML::Node root = r.parse(text);
  if (!root.IsMap()) r.fail(root, "<root>", "expected a mapping");
  if (root["entries"].IsDefined() && root["families"].IsDefined()) {  // efficiency factors: read by the planner
    efficiency_files_.push_back({origin, text});
    return;
  }
  if (root["gpus"].IsDefined()) {
    r.check_keys(root, {"gpus"}, "");
    r.require_list(root["gpus"], "gpus");
    const bool validation = origin == "data/validation/gpus.yaml";
    for (const auto& g : root["gpus"]) {
      if (validation)
        validation_gpus_.push_back(parse_gpu(r, g, "gpus"));
      else
        put_gpu(parse_gpu(r, g, "gpus"));
    }
    return;
  }
  if (root["rental"].IsDefined() || root["api"].IsDefined() || root["default_usd_per_gpu_hour"].IsDefined()) {
    r.check_keys(root, {"default_usd_per_gpu_hour", "hours_per_month", "rental", "api"}, "");
    Prices p = prices_;
    if (r.has(root, "default_usd_per_gpu_hour"))
      p.default_usd_per_gpu_hour = r.figure(root, "default_usd_per_gpu_hour", "", true, "", 0.001, 1e4, nullptr, "prices");
    p.hours_per_month = r.number(root, "hours_per_month", "", false, p.hours_per_month, 1, 745);
    if (r.has(root, "rental")) {
      for (const auto& q : root["rental"]) {
        r.check_keys(q, {"gpu", "kind", "usd_per_hour", "date", "source", "verified"}, "rental");
        RentalQuote rq;
        rq.gpu = ascii_lower(r.str(q, "gpu", "rental", true));
        rq.kind = r.str(q, "kind", "rental", true);
        if (rq.kind != "on-demand" && rq.kind != "spot" && rq.kind != "reserved" && rq.kind != "tco")
          r.fail(q["kind"], "rental.kind", "expected on-demand, spot, reserved or tco");
        rq.usd_per_hour = r.number(q, "usd_per_hour", "rental", true, 0, 0.001, 1e4);
        rq.date = r.str(q, "date", "rental", true);
        rq.source = r.str(q, "source", "rental", true);
        rq.verified = r.boolean(q, "verified", "rental", true);
        p.rental.push_back(rq);
      }
    }
    if (r.has(root, "api")) {
      for (const auto& q : root["api"]) {
        r.check_keys(q, {"model", "provider", "input_cache_hit", "input_cache_miss", "output", "date", "source", "verified"}, "api");
        ApiPrice ap;
        ap.model = ascii_lower(r.str(q, "model", "api", true));
        ap.provider = r.str(q, "provider", "api", true);
        ap.input_cache_hit = r.number(q, "input_cache_hit", "api", false, 0, 0, 1e4);
        ap.input_cache_miss = r.number(q, "input_cache_miss", "api", true, 0, 0, 1e4);
        ap.output = r.number(q, "output", "api", true, 0, 0, 1e4);
        ap.date = r.str(q, "date", "api", true);
        ap.source = r.str(q, "source", "api", true);
        ap.verified = r.boolean(q, "verified", "api", true);
        p.api.push_back(ap);
      }
    }
    prices_ = std::move(p);
    return;
  }
  put_model(parse_model_yaml(text, origin));
}

Catalogue Catalogue::embedded() {
  Catalogue c;
  // compiled at build time from the readers below (compiled.hpp); the YAML is read only by the
  // generator and when a binary carries no compiled form
  compiled::load_or_read(
      "catalogue", c,
      [](Catalogue& x) {
        const YamlReader::TrustedInput trusted;  // compiled-in data: the input limits are tested, not paid at every read
        // catalogue entries only; other embedded files (validation cases, perf calibration) are
        // read by the commands that use them
        for (const auto& f : embedded_files()) {
          const std::string path = f.path;
          const bool entry = path == "gpus.yaml" || path == "prices.yaml" || path.rfind("models/", 0) == 0 ||
                             path.rfind("validation/models/", 0) == 0 ||
                             path == "validation/gpus.yaml";  // GPUs of the public start-up logs (A100, L4, RTX ...): validation only
          if (entry) x.add_text(std::string(f.text), "data/" + path);
        }
      },
      [](Catalogue& x) { return std::tie(x.gpus_, x.validation_gpus_, x.models_, x.prices_); });
  return c;
}

namespace {
std::string read_file(const fs::path& p, const char* what = "catalogue file") { return read_input_file(p.string(), what); }

constexpr int kMaxDataDepth = 16;             // sub-directory levels under a --data directory
constexpr std::size_t kMaxDataFiles = 10000;  // YAML files under one --data directory

// The YAML files under dir, sorted; symbolic links to files are read (as files), links to
// directories are not followed (no loops); every unreadable entry is an error naming it.
void collect_yaml(const fs::path& dir, int depth, std::vector<fs::path>& files) {
  if (depth > kMaxDataDepth) throw InputError(fmt::format("--data {}: nested deeper than {} directories", dir.string(), kMaxDataDepth));
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  if (ec) throw InputError(fmt::format("--data {}: cannot read directory: {}", dir.string(), ec.message()));
  for (; it != end; it.increment(ec)) {
    if (ec) throw InputError(fmt::format("--data {}: cannot read directory: {}", dir.string(), ec.message()));
    const fs::path p = it->path();
    const auto lst = it->symlink_status(ec);
    if (ec) throw InputError(fmt::format("--data {}: {}", p.string(), ec.message()));
    if (fs::is_directory(lst)) {
      collect_yaml(p, depth + 1, files);
      continue;
    }
    const auto ext = p.extension().string();
    if (ext != ".yaml" && ext != ".yml") continue;
    if (fs::is_symlink(lst)) {
      const auto st = fs::status(p, ec);
      if (ec || !fs::exists(st)) throw InputError(fmt::format("--data {}: broken or looping symbolic link", p.string()));
      if (fs::is_directory(st)) continue;  // a link to a directory named *.yaml: not followed
    }
    files.push_back(p);  // read_input_file refuses FIFOs, devices and sockets by name
    if (files.size() > kMaxDataFiles) throw InputError(fmt::format("--data {}: more than {} YAML files", dir.string(), kMaxDataFiles));
  }
}
}  // namespace

void Catalogue::add_directory(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(fmt::format("--data {}: not a directory", dir));
  std::vector<fs::path> files;
  collect_yaml(dir, 0, files);
  std::sort(files.begin(), files.end());
  for (const auto& f : files) add_text(read_file(f), f.string());
}

const Gpu& Catalogue::validation_gpu(const std::string& id_or_alias) const {
  const std::string key = ascii_lower(id_or_alias);
  for (const auto& g : validation_gpus_) {
    if (g.id == key) return g;
    for (const auto& a : g.aliases)
      if (ascii_lower(a) == key) return g;
  }
  return gpu(id_or_alias);
}

const Gpu& Catalogue::gpu(const std::string& id_or_alias) const {
  const std::string key = ascii_lower(id_or_alias);
  std::vector<std::string> names;
  for (const auto& g : gpus_) {
    if (g.id == key) return g;
    for (const auto& a : g.aliases)
      if (ascii_lower(a) == key) return g;
    names.push_back(g.id);
  }
  const auto hint = closest_match(key, names);
  throw InputError(
      fmt::format("unknown GPU '{}'{}", id_or_alias,
                  hint.empty() ? fmt::format(" (known: {})", fmt::join(names, ", ")) : fmt::format("; did you mean '{}'?", hint)));
}

const Model* Catalogue::find_model(const std::string& id_or_alias) const {
  const std::string key = ascii_lower(id_or_alias);
  for (const auto& m : models_) {
    if (m.id == key || ascii_lower(m.hf_repo) == key) return &m;
    for (const auto& a : m.aliases)
      if (ascii_lower(a) == key) return &m;
  }
  return nullptr;
}

const Model& Catalogue::model(const std::string& id_or_alias) const {
  if (const Model* m = find_model(id_or_alias)) return *m;
  std::vector<std::string> names;
  for (const auto& m : models_) names.push_back(m.id);
  const auto hint = closest_match(id_or_alias, names);
  throw InputError(fmt::format(
      "unknown model '{}'{}", id_or_alias,
      hint.empty() ? " (run `k3plan models`, or pass a model YAML or a config.json)" : fmt::format("; did you mean '{}'?", hint)));
}

namespace {
// A config.json whose field has the wrong JSON type (a string where a number belongs) is bad input,
// not an internal error.
Model import_checked(const std::string& text, const std::string& origin, const std::string& quant) {
  try {
    return import_hf_config(text, origin, quant);
  } catch (const nlohmann::json::exception& e) {
    std::string msg = e.what();
    if (const auto at = msg.find("] "); at != std::string::npos) msg = msg.substr(at + 2);
    throw InputError(fmt::format("{}: a field has the wrong JSON type: {}", origin, msg));
  }
}
}  // namespace

Model resolve_model(const Catalogue& cat, const std::string& spec) {
  if (spec.empty()) throw InputError("--model: empty value");
  if (const Model* m = cat.find_model(spec)) return *m;
  std::error_code ec;
  fs::path p(spec);
  if (fs::exists(p, ec)) {
    if (fs::is_directory(p, ec)) {
      const auto cfg = p / "config.json";
      if (!fs::exists(cfg, ec)) throw InputError(fmt::format("{}: directory holds no config.json", spec));
      const auto q = p / "hf_quant_config.json";
      Model m = import_checked(read_file(cfg, "config.json"), cfg.string(), fs::exists(q, ec) ? read_file(q, "hf_quant_config.json") : "");
      m.local_path = spec;  // the engine loads the directory given
      return m;
    }
    const std::string text = read_file(p, "model file");
    const auto ext = p.extension().string();
    if (ext == ".json") {
      auto q = p.parent_path() / "hf_quant_config.json";
      // a flat copy named <org>--<name>_config.json keeps its quant config as <org>--<name>_hf_quant_config.json
      const std::string stem = p.filename().string();
      if (stem.size() > 12 && stem.compare(stem.size() - 12, 12, "_config.json") == 0) {
        const auto sib = p.parent_path() / (stem.substr(0, stem.size() - 12) + "_hf_quant_config.json");
        if (fs::exists(sib, ec)) q = sib;
      }
      Model m = import_checked(text, p.string(), fs::exists(q, ec) && q != p ? read_file(q, "hf_quant_config.json") : "");
      // an engine loads a directory (config.json and the weights), not one file: the config's own
      m.local_path = p.has_parent_path() ? p.parent_path().string() : std::string(".");
      add_assumption(m.assumptions, {m.id + " model path",
                                     p.filename() == "config.json"
                                         ? fmt::format("{} is a config file: engine commands load its directory {}", spec, m.local_path)
                                         : fmt::format("{} is a config file: engine commands load its directory {}, where the engine reads "
                                                       "config.json (not {}) and the weights",
                                                       spec, m.local_path, p.filename().string())});
      return m;
    }
    return parse_model_yaml(text, p.string());
  }
  if (const auto hub = parse_hub_id(spec)) {  // org/name[@revision], not in the catalogue: the Hugging Face Hub
    const fs::path dir = hub_fetch(*hub, hub_settings_from_env());
    const auto q = dir / "hf_quant_config.json";
    Model m = import_hf_config(read_file(dir / "config.json"), (dir / "config.json").string(), fs::exists(q, ec) ? read_file(q) : "");
    m.hf_repo = hub->repo;
    m.id = ascii_lower(spec);
    m.name = spec;
    m.source = "Hugging Face Hub " + spec + " (" + dir.filename().string() + ")";
    return m;
  }
  const bool looks_like_path = spec.find('/') != std::string::npos && (spec.front() == '/' || spec.front() == '.' || spec.size() > 5) &&
                               (spec.find(".json") != std::string::npos || spec.find(".yaml") != std::string::npos ||
                                spec.find(".yml") != std::string::npos || spec.front() == '/' || spec.front() == '.');
  if (looks_like_path) throw InputError(fmt::format("{}: no such file or directory", spec));
  return cat.model(spec);  // throws with a suggestion
}

}  // namespace k3plan
