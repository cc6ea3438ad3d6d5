// Hugging Face config.json -> Model. Handles the text model nested under `text_config`, the
// field-name variants across families, per-layer kinds (layer_types, linear_attn_config,
// full_attention_interval, hybrid_override_pattern, compress_ratios) and the precision given by
// quantization_config.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <k3plan/catalogue.hpp>
#include <k3plan/error.hpp>
#include <k3plan/input_file.hpp>
#include <nlohmann/json.hpp>
#include <set>

namespace k3plan {

using nlohmann::json;

namespace {

struct Cfg {
  const json& j;
  const std::string& origin;

  bool has(const char* k) const { return j.contains(k) && !j[k].is_null(); }
  std::int64_t integer(std::initializer_list<const char*> keys, std::int64_t fallback, bool required = false) const {
    for (const char* k : keys) {
      if (!has(k)) continue;
      const auto& v = j[k];
      if (!v.is_number()) throw InputError(fmt::format("{}: field '{}': expected a number", origin, k));
      const double x = v.get<double>();
      if (!std::isfinite(x) || x < 0 || x > 2147483647.0 || x != std::floor(x))  // every count is an int downstream (no wrap at 2^32)
        throw InputError(fmt::format("{}: field '{}': {} is not a valid size (a whole number in [0, 2147483647])", origin, k, v.dump()));
      return static_cast<std::int64_t>(x);
    }
    if (required) throw InputError(fmt::format("{}: field '{}': missing", origin, *keys.begin()));
    return fallback;
  }
  bool boolean(const char* k, bool fallback) const { return has(k) && j[k].is_boolean() ? j[k].get<bool>() : fallback; }
  std::string str(const char* k) const { return has(k) && j[k].is_string() ? j[k].get<std::string>() : std::string(); }
};

int as_int(std::int64_t v) { return static_cast<int>(v); }

std::string dtype_of(const std::string& s) {
  if (s == "float16") return "fp16";
  if (s == "float32") return "fp32";
  return "bf16";
}

void apply_quantization(Model& m, const json& q, const std::string& origin) {
  if (!q.is_object()) return;
  check_json_types(q,
                   {{"quant_method", JsonType::string},
                    {"format", JsonType::string},
                    {"quant_algo", JsonType::string},
                    {"bits", JsonType::integer},
                    {"group_size", JsonType::integer},
                    {"config_groups", JsonType::object},
                    {"ignore", JsonType::array},
                    {"modules_to_not_convert", JsonType::array},
                    {"weight_block_size", JsonType::array}},
                   origin, "quantization_config");
  const std::string method = q.value("quant_method", std::string());
  auto ignored = [&](const std::string& needle) {
    for (const char* key : {"ignore", "modules_to_not_convert", "ignored_layers"}) {
      if (!q.contains(key) || !q[key].is_array()) continue;
      for (const auto& x : q[key])
        if (x.is_string() && x.get<std::string>().find(needle) != std::string::npos) return true;
    }
    return false;
  };
  auto quantize_linear = [&](const std::string& f) {
    // Linear layers in format f except what the config keeps in high precision.
    m.default_precision = m.dtype;
    m.precision[ParamGroup::routed_experts] = f;
    if (!ignored("self_attn") && !ignored("attn")) m.precision[ParamGroup::attention] = f;
    if (!ignored("shared_expert")) m.precision[ParamGroup::shared_experts] = f;
    if (!ignored("mlp.") && !ignored("mlp\\.")) m.precision[ParamGroup::dense_mlp] = f;
    if (m.precision.count(ParamGroup::dense_mlp) && ignored("mlp\\.(gate")) m.precision.erase(ParamGroup::dense_mlp);
  };
  if (method == "fp8") {
    const bool block = q.contains("weight_block_size");
    quantize_linear(block ? "fp8-block" : "fp8");
    m.precision[ParamGroup::latent_proj] = block ? "fp8-block" : "fp8";
  } else if (method == "mxfp4") {  // gpt-oss: MoE experts in MXFP4, the rest bf16
    m.precision[ParamGroup::routed_experts] = "mxfp4";
  } else if (method == "compressed-tensors") {
    std::string f = "int4-g128";
    std::string fmt_name = q.value("format", std::string());
    int bits = 0, group = 128;
    std::string type;
    if (q.contains("config_groups") && q["config_groups"].is_object()) {
      for (const auto& [name, g] : q["config_groups"].items()) {
        if (!g.is_object()) continue;
        if (g.contains("format") && g["format"].is_string()) fmt_name = g["format"].get<std::string>();
        if (g.contains("weights") && g["weights"].is_object()) {
          const auto& w = g["weights"];
          if (w.contains("num_bits") && w["num_bits"].is_number_integer()) bits = w["num_bits"].get<int>();
          if (w.contains("type") && w["type"].is_string()) type = w["type"].get<std::string>();
          if (w.contains("group_size") && w["group_size"].is_number_integer()) group = w["group_size"].get<int>();
        }
      }
    }
    if (fmt_name.find("mxfp4") != std::string::npos)
      f = "mxfp4";
    else if (fmt_name.find("nvfp4") != std::string::npos)
      f = "nvfp4";
    else if (fmt_name.find("float-quantized") != std::string::npos || (bits == 8 && type == "float"))
      f = "fp8";
    else if (bits == 8)
      f = "int8";
    else if (bits == 4)
      f = group == 32 ? "int4-g32" : group == 64 ? "int4-g64" : "int4-g128";  // 16-bit scale per group
    quantize_linear(f);
    if (f == "mxfp4" || f == "nvfp4") {
      add_assumption(m.assumptions,
                     {m.id + " precision", "compressed-tensors ignore list read by substring; LatentMoE projections assumed bf16"});
    }
  } else if (method == "modelopt") {
    const std::string algo = q.value("quant_algo", std::string());
    auto format_of = [](const std::string& a) {
      return a.find("FP4") != std::string::npos ? "nvfp4" : a.find("INT4") != std::string::npos ? "int4-g128" : "fp8";
    };
    if (algo == "MIXED_PRECISION" && q.contains("quantized_layers") && q["quantized_layers"].is_object()) {
      // ModelOpt mixed precision: a format per module; the group of each module by its name
      m.default_precision = m.dtype;
      for (const auto& [name, v] : q["quantized_layers"].items()) {
        if (!v.is_object() || !v.contains("quant_algo") || !v["quant_algo"].is_string()) continue;
        const std::string f = format_of(v["quant_algo"].get<std::string>());
        if (name.find("shared_expert") != std::string::npos)
          m.precision[ParamGroup::shared_experts] = f;
        else if (name.find(".experts") != std::string::npos)
          m.precision[ParamGroup::routed_experts] = f;
        else if (name.find("attn") != std::string::npos)
          m.precision[ParamGroup::attention] = f;
        else if (name.find("lm_head") != std::string::npos)
          m.precision[ParamGroup::lm_head] = f;
        else if (name.find("mlp") != std::string::npos)
          m.precision[ParamGroup::dense_mlp] = f;
      }
    } else {
      quantize_linear(format_of(algo));
    }
  } else if (method == "awq" || method == "gptq") {
    quantize_linear(q.value("bits", 4) == 8 ? "int8" : "int4-g128");
  } else if (!method.empty()) {
    throw InputError(fmt::format(
        "{}: field 'quantization_config.quant_method': unsupported '{}' (known: fp8, mxfp4, compressed-tensors, modelopt, awq, gptq)",
        origin, method));
  }
}

}  // namespace

// Python's json writes Infinity / -Infinity / NaN (e.g. Nemotron-H's time_step_limit), which strict
// JSON rejects: read them as null outside strings, since no size we use is ever one of them.
std::string python_json_to_json(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size())
        out += text[++i];
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (text.compare(i, 9, "-Infinity") == 0) {
      out += "null";
      i += 8;
      continue;
    }
    if (text.compare(i, 8, "Infinity") == 0) {
      out += "null";
      i += 7;
      continue;
    }
    if (text.compare(i, 3, "NaN") == 0) {
      out += "null";
      i += 2;
      continue;
    }
    out += c;
  }
  return out;
}

namespace {
// Fields that published config.json files leave at the library default, per model_type, with
// the default of that transformers configuration class; and the per-layer pattern that family
// builds when the config gives no layer_types. Returns the names filled (for the assumption).
//  - gemma3_text: transformers models/gemma3/configuration_gemma3.py Gemma3TextConfig.__init__
//    (vocab_size 262208, num_attention_heads 8, num_key_value_heads 4, head_dim 256,
//    max_position_embeddings 131072, sliding_window 4096, sliding_window_pattern 6: every 6th layer
//    global, tie_word_embeddings true)
//  - gemma2: models/gemma2/configuration_gemma2.py / modeling_gemma2.py: every other layer (even
//    index) sliding, the odd ones global
std::vector<std::string> fill_family_defaults(nlohmann::json& t, const nlohmann::json& root) {
  std::vector<std::string> filled;
  std::string type = t.contains("model_type") && t["model_type"].is_string() ? t["model_type"].get<std::string>() : "";
  const std::string top = root.contains("model_type") && root["model_type"].is_string() ? root["model_type"].get<std::string>() : "";
  if (type.empty()) type = top;
  auto put = [&](const char* key, const nlohmann::json& v) {
    if (!t.contains(key) || t[key].is_null()) {
      t[key] = v;
      filled.push_back(key);
    }
  };
  const int layers = t.contains("num_hidden_layers") && t["num_hidden_layers"].is_number_integer() ? t["num_hidden_layers"].get<int>() : 0;
  if (type == "gemma3_text" || type == "gemma3") {
    put("vocab_size", 262208);
    put("num_attention_heads", 8);
    put("num_key_value_heads", 4);
    put("head_dim", 256);
    put("max_position_embeddings", 131072);
    put("sliding_window", 4096);
    put("tie_word_embeddings", true);
    if (!t.contains("layer_types") && layers > 0) {
      const int pattern = t.contains("sliding_window_pattern") && t["sliding_window_pattern"].is_number_integer()
                              ? std::max(1, t["sliding_window_pattern"].get<int>())
                              : 6;
      nlohmann::json lt = nlohmann::json::array();
      for (int i = 0; i < layers; ++i) lt.push_back((i + 1) % pattern == 0 ? "full_attention" : "sliding_attention");
      t["layer_types"] = lt;
      filled.push_back("layer_types (every 6th layer global)");
    }
  } else if (type == "gemma2") {
    if (!t.contains("layer_types") && layers > 0 && t.contains("sliding_window")) {
      nlohmann::json lt = nlohmann::json::array();
      for (int i = 0; i < layers; ++i) lt.push_back(i % 2 == 0 ? "sliding_attention" : "full_attention");
      t["layer_types"] = lt;
      filled.push_back("layer_types (even layers sliding)");
    }
  }
  return filled;
}
}  // namespace

Model import_hf_config(const std::string& json_text, const std::string& origin, const std::string& hf_quant_config) {
  json root;
  try {
    root = parse_json_input(python_json_to_json(json_text), origin);  // duplicate keys, 1e400, nesting: located errors
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: malformed JSON at byte {}: {}", origin, e.byte, e.what()));
  }
  if (!root.is_object()) throw InputError(fmt::format("{}: expected a JSON object", origin));
  // field types the reader below relies on (wrong types: located input errors, not library exceptions)
  using T = JsonType;
  const auto config_types = {
      JsonField{"model_type", T::string},          JsonField{"torch_dtype", T::string},    JsonField{"dtype", T::string},
      JsonField{"_name_or_path", T::string},       JsonField{"text_config", T::object},    JsonField{"quantization_config", T::object},
      JsonField{"rope_scaling", T::object},        JsonField{"layer_types", T::array},     JsonField{"architectures", T::array},
      JsonField{"compress_ratios", T::array},      JsonField{"mlp_only_layers", T::array}, JsonField{"hybrid_override_pattern", T::string},
      JsonField{"tie_word_embeddings", T::boolean}};
  check_json_types(root, config_types, origin);
  if (root.contains("text_config")) check_json_types(root["text_config"], config_types, origin, "text_config");
  json tj = root.contains("text_config") && root["text_config"].is_object() ? root["text_config"] : root;
  const std::vector<std::string> filled = fill_family_defaults(tj, root);
  const Cfg c{tj, origin};
  const Cfg top{root, origin};
  Model m;
  m.origin = origin;
  m.source = origin;
  std::string repo = top.str("_name_or_path");
  if (repo.empty()) repo = c.str("_name_or_path");
  m.id = repo.empty() ? c.str("model_type") : repo;
  if (m.id.empty()) m.id = "config";
  for (auto& ch : m.id) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  m.name = m.id;
  m.hf_repo = repo;
  std::string dt = c.str("torch_dtype");
  if (dt.empty()) dt = c.str("dtype");
  if (dt.empty()) dt = top.str("torch_dtype");
  if (dt.empty()) dt = top.str("dtype");
  m.dtype = dtype_of(dt);
  m.default_precision = m.dtype;

  m.hidden_size = c.integer({"hidden_size", "d_model", "n_embd"}, 0, true);
  m.vocab_size = c.integer({"vocab_size", "padded_vocab_size"}, 0, true);
  m.tie_word_embeddings =
      c.has("tie_word_embeddings") ? c.boolean("tie_word_embeddings", false) : top.boolean("tie_word_embeddings", false);
  m.max_context = c.integer({"max_position_embeddings", "max_sequence_length", "seq_length", "model_max_length"}, 0, true);
  const int layers = as_int(c.integer({"num_hidden_layers", "n_layer", "num_layers"}, 0, true));
  if (layers <= 0 || layers > 10000) throw InputError(fmt::format("{}: field 'num_hidden_layers': {} is out of range", origin, layers));
  const int heads = as_int(c.integer({"num_attention_heads", "n_head"}, 0, true));
  if (heads <= 0) throw InputError(fmt::format("{}: field 'num_attention_heads': must be positive", origin));
  const int kv_heads = as_int(c.integer({"num_key_value_heads", "num_kv_heads", "multi_query_group_num"}, heads));
  const int head_dim = as_int(c.integer({"head_dim", "kv_channels"}, m.hidden_size / heads));

  // ---- MoE geometry under its several names ---------------------------------------------------
  const int experts = as_int(c.integer({"n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts"}, 0));
  if (experts > 0) {
    MoE e;
    e.routed_experts = experts;
    e.experts_per_token = as_int(c.integer({"num_experts_per_tok", "num_experts_per_token", "moe_topk", "top_k_experts"}, 0, true));
    e.shared_experts = as_int(c.integer({"n_shared_experts", "num_shared_experts"}, 0));
    // gpt-oss and MiniMax put the per-expert width in intermediate_size
    const bool expert_width_in_intermediate = c.has("num_local_experts") && !c.has("moe_intermediate_size");
    e.expert_intermediate_size =
        expert_width_in_intermediate ? c.integer({"intermediate_size"}, 0, true) : c.integer({"moe_intermediate_size"}, 0, true);
    e.shared_intermediate_size = c.integer({"shared_expert_intermediate_size", "shared_intermediate_size"}, -1);
    if (e.shared_intermediate_size < 0)
      e.shared_intermediate_size = e.shared_experts * e.expert_intermediate_size;
    else if (e.shared_intermediate_size > 0 && e.shared_experts == 0)
      e.shared_experts = 1;
    e.first_dense_layers = as_int(c.integer({"first_k_dense_replace", "first_dense_layers"}, 0));
    if (c.has("mlp_only_layers") && c.j["mlp_only_layers"].is_array() && !c.j["mlp_only_layers"].empty())
      add_assumption(m.assumptions, {m.id + " mlp_only_layers", "non-leading dense layers counted as MoE"});
    e.latent_size = as_int(c.integer({"routed_expert_hidden_size", "moe_latent_size"}, 0));
    const bool llama4 = c.str("model_type").rfind("llama4", 0) == 0;
    if (llama4) {
      // transformers models/llama4/modeling_llama4.py Llama4TextMoe: one shared expert of
      // intermediate_size beside the routed ones; MoE on every interleave_moe_layer_step-th layer,
      // the other layers a dense MLP of intermediate_size_mlp
      e.shared_experts = 1;
      e.shared_intermediate_size = e.expert_intermediate_size;
      e.layer_step = std::max(1, as_int(c.integer({"interleave_moe_layer_step"}, 1)));
    }
    m.moe = e;
    if (llama4)
      m.dense_intermediate_size = c.integer({"intermediate_size_mlp"}, 0);
    else if (!expert_width_in_intermediate)
      m.dense_intermediate_size = c.integer({"intermediate_size"}, 0);
  } else {
    m.dense_intermediate_size = c.integer({"intermediate_size", "ffn_hidden_size", "n_inner"}, 0, true);
  }

  // ---- attention blocks -------------------------------------------------------------------------
  AttentionBlock full;
  const bool mla = c.has("kv_lora_rank");
  if (c.has("compress_ratios")) {
    full.kind = AttnKind::compressed;
  } else if (mla) {
    full.kind = AttnKind::mla;
  }
  full.name = mla ? "mla" : "full";
  full.num_heads = heads;
  full.num_kv_heads = kv_heads;
  full.head_dim = head_dim;
  full.v_head_dim = as_int(c.integer({"v_head_dim"}, head_dim));
  full.qkv_bias = c.boolean("attention_bias", false) || c.boolean("qkv_bias", false);
  full.sinks = c.str("model_type") == "gpt_oss";
  if (mla) {
    full.q_lora_rank = as_int(c.integer({"q_lora_rank"}, 0));
    full.kv_lora_rank = as_int(c.integer({"kv_lora_rank"}, 0, true));
    full.qk_nope_head_dim = as_int(c.integer({"qk_nope_head_dim"}, 0, true));
    full.qk_rope_head_dim = as_int(c.integer({"qk_rope_head_dim"}, 0, true));
    full.output_gate = c.boolean("mla_use_output_gate", false);
    if (c.has("index_n_heads")) {
      full.indexer_heads = as_int(c.integer({"index_n_heads"}, 0));
      full.indexer_head_dim = as_int(c.integer({"index_head_dim"}, 0));
    }
  }
  std::vector<AttentionBlock> blocks;
  std::vector<int> per_layer(static_cast<std::size_t>(layers), 0);
  auto add_block = [&](AttentionBlock b) {
    for (std::size_t i = 0; i < blocks.size(); ++i)
      if (blocks[i].name == b.name) return static_cast<int>(i);
    blocks.push_back(std::move(b));
    return static_cast<int>(blocks.size() - 1);
  };

  // Gated DeltaNet (Qwen3-Next, Qwen3.5): linear_* fields
  auto gated_deltanet = [&]() {
    AttentionBlock g;
    g.kind = AttnKind::gdn;
    g.name = "gdn";
    g.num_k_heads = as_int(c.integer({"linear_num_key_heads"}, 0, true));
    g.num_v_heads = as_int(c.integer({"linear_num_value_heads"}, 0, true));
    g.head_k_dim = as_int(c.integer({"linear_key_head_dim"}, 0, true));
    g.head_v_dim = as_int(c.integer({"linear_value_head_dim"}, 0, true));
    g.conv_kernel = as_int(c.integer({"linear_conv_kernel_dim"}, 4));
    return g;
  };

  if (c.has("compress_ratios")) {
    // DeepSeek V4: every layer keeps a sliding window; ratio 4 layers add the lightning indexer.
    const auto& cr = c.j["compress_ratios"];
    if (!cr.is_array() || cr.size() < static_cast<std::size_t>(layers))
      throw InputError(fmt::format("{}: field 'compress_ratios': expected at least num_hidden_layers entries", origin));
    full.q_lora_rank = as_int(c.integer({"q_lora_rank"}, 0));
    full.o_lora_rank = as_int(c.integer({"o_lora_rank"}, 0));
    full.o_groups = as_int(c.integer({"o_groups"}, 0));
    full.qk_rope_head_dim = as_int(c.integer({"qk_rope_head_dim"}, 0));
    full.sliding_window = as_int(c.integer({"sliding_window"}, 128));
    full.sinks = true;
    for (int i = 0; i < layers; ++i) {
      if (!cr[static_cast<std::size_t>(i)].is_number_integer())
        throw InputError(fmt::format("{}: field 'compress_ratios[{}]': expected an integer", origin, i));
      const int r = cr[static_cast<std::size_t>(i)].get<int>();
      AttentionBlock b = full;
      b.compress_ratio = r;
      b.name = r == 0 ? "window" : fmt::format("c{}", r);
      if (r == 4) {
        b.indexer_heads = as_int(c.integer({"index_n_heads"}, 0));
        b.indexer_head_dim = as_int(c.integer({"index_head_dim"}, 0));
      }
      per_layer[static_cast<std::size_t>(i)] = add_block(b);
    }
  } else if (c.has("linear_attn_config") && c.j["linear_attn_config"].is_object()) {
    // Kimi Linear / Kimi K3: 1-based lists of KDA and full-attention (MLA) layers.
    const Cfg l{c.j["linear_attn_config"], origin};
    AttentionBlock kda;
    kda.kind = AttnKind::kda;
    kda.name = "kda";
    kda.num_heads = as_int(l.integer({"num_heads"}, 0, true));
    kda.head_dim = as_int(l.integer({"head_dim"}, 0, true));
    kda.conv_kernel = as_int(l.integer({"short_conv_kernel_size"}, 4));
    kda.full_rank_gate = l.boolean("use_full_rank_gate", false);
    if (kda.full_rank_gate)
      add_assumption(m.assumptions, {m.id + " linear_attn_config.use_full_rank_gate",
                                     "read as a full-rank forget gate; output gate low-rank (layer code unpublished)"});
    const int kda_i = add_block(kda);
    const int full_i = add_block(full);
    std::set<int> full_layers;
    if (l.has("full_attn_layers") && l.j["full_attn_layers"].is_array())
      for (const auto& x : l.j["full_attn_layers"])
        if (x.is_number_integer()) full_layers.insert(x.get<int>());
    for (int i = 0; i < layers; ++i) per_layer[static_cast<std::size_t>(i)] = full_layers.count(i + 1) ? full_i : kda_i;
  } else if (c.has("hybrid_override_pattern")) {
    // Nemotron-H: each layer is one of M = Mamba2 mixer, * = attention, - = MLP only
    AttentionBlock mb;
    mb.kind = AttnKind::mamba2;
    mb.name = "mamba2";
    mb.has_mlp = false;
    mb.num_heads = as_int(c.integer({"mamba_num_heads"}, 0, true));
    mb.head_dim = as_int(c.integer({"mamba_head_dim"}, 0, true));
    mb.state_size = as_int(c.integer({"ssm_state_size"}, 0, true));
    mb.n_groups = as_int(c.integer({"n_groups"}, 1));
    mb.conv_kernel = as_int(c.integer({"conv_kernel"}, 4));
    const std::string pat = c.str("hybrid_override_pattern");
    if (pat.size() != static_cast<std::size_t>(layers))
      throw InputError(fmt::format("{}: field 'hybrid_override_pattern': {} entries for {} layers", origin, pat.size(), layers));
    AttentionBlock att = full;
    att.has_mlp = false;
    AttentionBlock mlp;
    mlp.kind = AttnKind::none;
    mlp.name = "mlp";
    for (int i = 0; i < layers; ++i) {
      const char ch = pat[static_cast<std::size_t>(i)];
      if (ch == 'M')
        per_layer[static_cast<std::size_t>(i)] = add_block(mb);
      else if (ch == '*')
        per_layer[static_cast<std::size_t>(i)] = add_block(att);
      else if (ch == '-')
        per_layer[static_cast<std::size_t>(i)] = add_block(mlp);
      else
        throw InputError(fmt::format("{}: field 'hybrid_override_pattern[{}]': unknown layer '{}' (expected M, * or -)", origin, i, ch));
    }
  } else if (c.has("layer_types") && c.j["layer_types"].is_array()) {
    const auto& lt = c.j["layer_types"];
    for (int i = 0; i < layers; ++i) {
      const std::string t = static_cast<std::size_t>(i) < lt.size() && lt[static_cast<std::size_t>(i)].is_string()
                                ? lt[static_cast<std::size_t>(i)].get<std::string>()
                                : "full_attention";
      if (t == "sliding_attention") {
        AttentionBlock b = full;
        b.name = "sliding";
        b.sliding_window = as_int(c.integer({"sliding_window"}, 0, true));
        per_layer[static_cast<std::size_t>(i)] = add_block(b);
      } else if (t == "linear_attention") {
        per_layer[static_cast<std::size_t>(i)] = add_block(gated_deltanet());
      } else if (t == "full_attention" || t == "attention") {
        per_layer[static_cast<std::size_t>(i)] = add_block(full);
      } else {
        throw InputError(fmt::format("{}: field 'layer_types[{}]': unknown layer type '{}'", origin, i, t));
      }
    }
  } else if (c.has("full_attention_interval")) {
    const int every = as_int(c.integer({"full_attention_interval"}, 4));
    const int gi = add_block(gated_deltanet());
    const int fi = add_block(full);
    for (int i = 0; i < layers; ++i) per_layer[static_cast<std::size_t>(i)] = ((i + 1) % std::max(1, every)) ? gi : fi;
  } else {
    const int sw = as_int(c.integer({"sliding_window"}, 0));
    const bool use_sw =
        sw > 0 && c.boolean("use_sliding_window", true) && c.str("model_type") != "qwen3" && c.str("model_type") != "qwen3_moe";
    if (use_sw) full.sliding_window = sw;
    const int fi = add_block(full);
    for (int i = 0; i < layers; ++i) per_layer[static_cast<std::size_t>(i)] = fi;
  }
  m.blocks = blocks;
  if (!filled.empty())
    add_assumption(m.assumptions,
                   {m.id + " config defaults", fmt::format("fields the config.json leaves at the transformers defaults of its "
                                                           "model_type were filled: {}",
                                                           fmt::join(filled, ", "))});
  {
    std::string act = c.str("mlp_hidden_act");
    if (act.empty()) act = c.str("hidden_act");
    if (act == "relu2" || act == "relu_squared") m.gated_mlp = false;
  }
  m.layers = per_layer;
  m.mtp_layers = as_int(c.integer({"num_nextn_predict_layers", "num_mtp_modules"}, 0));

  // ---- vision tower, counted separately ------------------------------------------------------
  if (root.contains("vision_config") && root["vision_config"].is_object()) {
    const Cfg v{root["vision_config"], origin};
    const double vh = static_cast<double>(v.integer({"vt_hidden_size", "hidden_size"}, 0));
    const double vi = static_cast<double>(v.integer({"vt_intermediate_size", "intermediate_size"}, 0));
    const double vl = static_cast<double>(v.integer({"vt_num_hidden_layers", "num_hidden_layers", "depth"}, 0));
    m.vision_params = vl * (4 * vh * vh + 2 * vh * vi);
    if (m.vision_params > 0)
      add_assumption(m.assumptions,
                     {m.id + " vision_config", "vision tower estimated as layers x (4 h^2 + 2 h x intermediate), projector excluded"});
  }

  // ---- precision ---------------------------------------------------------------------------------
  const json* q = nullptr;
  if (tj.contains("quantization_config"))
    q = &tj["quantization_config"];
  else if (root.contains("quantization_config"))
    q = &root["quantization_config"];
  if (q) apply_quantization(m, *q, origin);
  if (!hf_quant_config.empty()) {
    try {
      const json hq = parse_json_input(hf_quant_config, origin + " (hf_quant_config.json)");
      if (hq.contains("quantization") && hq["quantization"].is_object()) {
        json qq = hq["quantization"];
        qq["quant_method"] = "modelopt";
        apply_quantization(m, qq, origin);
      }
    } catch (const json::parse_error& e) {
      throw InputError(fmt::format("{}: hf_quant_config.json: malformed JSON: {}", origin, e.what()));
    }
  }
  if (c.str("expert_dtype") == "fp4") m.precision[ParamGroup::routed_experts] = "mxfp4";
  validate_model(m, origin);
  return m;
}

}  // namespace k3plan
