// Hugging Face config.json -> Model. Handles the text model nested under `text_config`, the
// field-name variants across families, per-layer kinds (layer_types, linear_attn_config,
// full_attention_interval, hybrid_override_pattern, compress_ratios) and the precision given by
// quantization_config.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <k3plan/ascii.hpp>
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
                    {"weight_block_size", JsonType::array},
                    {"load_in_4bit", JsonType::boolean},
                    {"load_in_8bit", JsonType::boolean},
                    {"bnb_4bit_use_double_quant", JsonType::boolean},
                    {"bnb_4bit_quant_type", JsonType::string},
                    {"llm_int8_skip_modules", JsonType::array}},
                   origin, "quantization_config");
  const std::string method = q.value("quant_method", std::string());
  auto ignored = [&](const std::string& needle) {
    for (const char* key : {"ignore", "modules_to_not_convert", "ignored_layers", "llm_int8_skip_modules"}) {
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
  } else if (method == "bitsandbytes") {
    // transformers' BitsAndBytesConfig: every nn.Linear but lm_head and the skip list; 4-bit blocks
    // of 64 (fp4 and nf4 alike in size), 8-bit LLM.int8 with a per-row scale
    if (q.value("load_in_8bit", false))
      quantize_linear("int8");
    else
      quantize_linear(q.value("bnb_4bit_use_double_quant", false) ? "nf4-dq" : "nf4");
    if (!ignored("kv_b_proj") && !ignored("kv_a_proj")) m.precision[ParamGroup::latent_proj] = m.precision_of(ParamGroup::attention);
  } else if (!method.empty()) {
    throw InputError(
        fmt::format("{}: field 'quantization_config.quant_method': unsupported '{}' (known: fp8, mxfp4, compressed-tensors, modelopt, awq, "
                    "gptq, bitsandbytes)",
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
//  - opt: models/opt/configuration_opt.py OPTConfig (tie_word_embeddings left at true)
//  - gemma (Gemma 1): models/gemma/configuration_gemma.py GemmaConfig (tie_word_embeddings=True);
//    vLLM's GemmaForCausalLM asserts it and computes the logits from embed_tokens, no lm_head of
//    its own (model_executor/models/gemma.py @ v0.19.0)
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
  } else if (type == "opt") {
    // OPTConfig leaves tie_word_embeddings at the PretrainedConfig default (true); vLLM's
    // OPTForCausalLM then shares lm_head with embed_tokens (models/opt.py @ v0.19.0)
    put("tie_word_embeddings", true);
  } else if (type == "gemma") {
    put("tie_word_embeddings", true);
  } else if (type == "gemma2") {
    put("tie_word_embeddings", true);  // Gemma2Config default
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

namespace {
// ---- the architecture table -------------------------------------------------------------------
// One entry per family, matched on the config's `architectures[0]` (exact, or by prefix when the
// entry ends in '*') or, failing that, on `model_type` (of text_config, then the top level). The
// family decides the rules below (what each field means in that family); a config that matches no
// entry is read generically and says so in every output.
enum class Family {
  generic,
  llama,       // Llama 2/3/3.1/3.3: transformers models/llama/configuration_llama.py
  llama4,      // models/llama4/configuration_llama4.py (Llama4TextConfig, Llama4VisionConfig)
  deci,        // Llama-Nemotron NAS (DeciLMForCausalLM): per-layer block_configs (remote code configuration_decilm.py)
  nemotron_h,  // Nemotron-H / Nemotron 3: models/nemotron_h/configuration_nemotron_h.py
  gemma2,      // models/gemma2/configuration_gemma2.py
  gemma3,      // models/gemma3/configuration_gemma3.py
  gemma4,      // models/gemma4/modeling_gemma4.py (Gemma4TextAttention, Gemma4TextDecoderLayer, Gemma4VisionModel)
  mistral,     // Mistral / Ministral: models/mistral/configuration_mistral.py
  mixtral,     // models/mixtral/configuration_mixtral.py
  phi3,        // Phi-3 / Phi-4: models/phi3/configuration_phi3.py
  qwen2,       // Qwen2 / Qwen2.5: models/qwen2/configuration_qwen2.py
  qwen2_vl,    // Qwen2-VL / Qwen2.5-VL: models/qwen2_5_vl/configuration_qwen2_5_vl.py
  qwen3,       // models/qwen3/configuration_qwen3.py
  qwen2_moe,   // Qwen1.5-MoE / Qwen2-MoE: models/qwen2_moe/configuration_qwen2_moe.py (shared expert of shared_expert_intermediate_size)
  qwen3_moe,   // models/qwen3_moe/configuration_qwen3_moe.py
  qwen3_next,  // models/qwen3_next/configuration_qwen3_next.py
  qwen3_5,     // Qwen3.5 / 3.6 (dense and MoE, text_config + vision_config)
  qwen3_vl,    // models/qwen3_vl/configuration_qwen3_vl.py, qwen3_vl_moe
  qwen3_omni,  // models/qwen3_omni_moe/configuration_qwen3_omni_moe.py (thinker_config)
  glm4_moe,    // GLM 4.5 / 4.6 / 4.7: models/glm4_moe/configuration_glm4_moe.py
  glm_dsa,     // GLM 5.x: MLA + DeepSeek sparse attention (glm_moe_dsa)
  minimax,     // MiniMax M2 / M3 (minimax_m2, minimax_m3)
  deepseek,    // DeepSeek V2 / V3 / V3.1 / V3.2 / R1: models/deepseek_v3/configuration_deepseek_v3.py
  deepseek_v4,
  kimi,         // Kimi K2 / K2.5 / K2.6 (DeepSeek V3 geometry; K2.5 adds a MoonViT tower)
  kimi_linear,  // Kimi Linear / Kimi K3: KDA + MLA (linear_attn_config)
  gpt_oss,      // models/gpt_oss/configuration_gpt_oss.py
  step,         // StepFun Step 3.5 / 3.7 Flash: vllm/model_executor/models/step3p5.py (see the attention rules below)
  step3,        // StepFun Step-3 (MFA): vllm/model_executor/models/step3_text.py (see the attention rules below)
  mimo,         // Xiaomi MiMo-7B (MiMoForCausalLM: Qwen2 geometry + num_nextn_predict_layers MTP; remote-code modeling_mimo.py)
  mimo_v2,      // MiMo-V2-Flash: models/mimo_v2_flash/modeling_mimo_v2_flash.py (hybrid SWA/global, swa_* heads, sinks)
  laguna,       // Poolside Laguna: models/laguna/modeling_laguna.py (per-layer heads, g_proj gate; see the rules below)
};

struct FamilyRule {
  Family family;
  const char* name;
  std::vector<const char*> architectures;  // '*' suffix = prefix match
  std::vector<const char*> model_types;
};

const std::vector<FamilyRule>& family_table() {
  static const std::vector<FamilyRule> t = {
      {Family::llama4, "Llama 4", {"Llama4*"}, {"llama4", "llama4_text"}},
      {Family::llama, "Llama", {"LlamaForCausalLM"}, {"llama"}},
      {Family::deci, "Llama-Nemotron (NAS)", {"DeciLMForCausalLM"}, {"nemotron-nas"}},
      {Family::nemotron_h, "Nemotron-H / Nemotron 3", {"NemotronH*"}, {"nemotron_h"}},
      {Family::gemma2, "Gemma 2", {"Gemma2*"}, {"gemma2"}},
      {Family::gemma3, "Gemma 3", {"Gemma3*"}, {"gemma3", "gemma3_text"}},
      {Family::gemma4, "Gemma 4", {"Gemma4*"}, {"gemma4", "gemma4_text"}},
      {Family::mixtral, "Mixtral", {"MixtralForCausalLM"}, {"mixtral"}},
      {Family::mistral, "Mistral / Ministral", {"MistralForCausalLM", "Ministral*", "Mistral3*"}, {"mistral", "ministral", "mistral3"}},
      {Family::phi3, "Phi-3 / Phi-4", {"Phi3*"}, {"phi3"}},
      {Family::qwen2_vl, "Qwen2-VL / Qwen2.5-VL", {"Qwen2VL*", "Qwen2_5_VL*"}, {"qwen2_vl", "qwen2_5_vl"}},
      {Family::qwen2, "Qwen2 / Qwen2.5", {"Qwen2ForCausalLM"}, {"qwen2"}},
      {Family::qwen3_omni, "Qwen3-Omni", {"Qwen3OmniMoe*"}, {"qwen3_omni_moe"}},
      {Family::qwen3_vl, "Qwen3-VL", {"Qwen3VL*"}, {"qwen3_vl", "qwen3_vl_moe", "qwen3_vl_text", "qwen3_vl_moe_text"}},
      {Family::qwen3_next, "Qwen3-Next", {"Qwen3Next*"}, {"qwen3_next"}},
      {Family::qwen3_5, "Qwen3.5", {"Qwen3_5*"}, {"qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text"}},
      {Family::qwen2_moe, "Qwen1.5-MoE / Qwen2-MoE", {"Qwen2MoeForCausalLM"}, {"qwen2_moe"}},
      {Family::qwen3_moe, "Qwen3-MoE", {"Qwen3MoeForCausalLM"}, {"qwen3_moe"}},
      {Family::qwen3, "Qwen3", {"Qwen3ForCausalLM"}, {"qwen3"}},
      {Family::glm4_moe, "GLM 4.5 / 4.6 / 4.7", {"Glm4Moe*"}, {"glm4_moe", "glm4_moe_lite"}},
      {Family::glm_dsa, "GLM 5", {"GlmMoeDsa*"}, {"glm_moe_dsa"}},
      {Family::minimax, "MiniMax M2 / M3", {"MiniMaxM2*", "MiniMaxM3*"}, {"minimax_m2", "minimax_m3", "minimax_m3_vl"}},
      {Family::deepseek_v4, "DeepSeek V4", {"DeepseekV4*"}, {"deepseek_v4", "deepseek_ref"}},
      {Family::kimi_linear, "Kimi Linear / Kimi K3", {"KimiLinear*", "KimiK3*"}, {"kimi_linear", "kimi_k3"}},
      {Family::kimi, "Kimi K2 / K2.5", {"KimiK2*", "KimiVL*"}, {"kimi_k2", "kimi_k25", "kimi_vl"}},
      {Family::deepseek,
       "DeepSeek V2 / V3 / V3.2",
       {"DeepseekV2*", "DeepseekV3*", "DeepseekV32*"},
       {"deepseek_v2", "deepseek_v3", "deepseek_v32"}},
      {Family::gpt_oss, "gpt-oss", {"GptOss*"}, {"gpt_oss"}},
      {Family::step, "Step 3.x Flash", {"Step3p5*", "Step3p7*"}, {"step3p5", "step3p7"}},
      {Family::step3, "Step-3", {"Step3VL*", "Step3vForConditionalGeneration", "Step3TextForCausalLM"}, {"step3_vl", "step3_text"}},
      {Family::mimo, "MiMo", {"MiMoForCausalLM"}, {"mimo"}},
      {Family::mimo_v2, "MiMo-V2-Flash", {"MiMoV2*"}, {"mimo_v2_flash", "mimo_v2"}},
      {Family::laguna, "Laguna", {"LagunaForCausalLM"}, {"laguna"}},
  };
  return t;
}

bool name_matches(const std::string& value, const char* pattern) {
  const std::string p(pattern);
  if (!p.empty() && p.back() == '*') return value.rfind(p.substr(0, p.size() - 1), 0) == 0;
  return value == p;
}

const FamilyRule* find_family(const json& root, const json& text) {
  std::string arch;
  if (root.contains("architectures") && root["architectures"].is_array() && !root["architectures"].empty() &&
      root["architectures"][0].is_string())
    arch = root["architectures"][0].get<std::string>();
  auto type_of = [](const json& j) {
    return j.contains("model_type") && j["model_type"].is_string() ? j["model_type"].get<std::string>() : "";
  };
  const std::string types[2] = {type_of(text), type_of(root)};
  for (const auto& f : family_table())
    for (const char* a : f.architectures)
      if (!arch.empty() && name_matches(arch, a)) return &f;
  for (const auto& t : types)
    for (const auto& f : family_table())
      for (const char* mt : f.model_types)
        if (!t.empty() && t == mt) return &f;
  return nullptr;
}
}  // namespace

namespace {
// A ViT-style vision tower from its config: patch embedding (channels x patch^2 x temporal patch),
// learned position embeddings, per layer q/k/v/o + MLP (gated for SiLU towers, Qwen2.5-VL) + two
// norms, and the merger/projector into the language model's hidden size. Field names per family:
// SigLIP/CLIP/Llama 4 (hidden_size, num_hidden_layers, image_size), Qwen2.5-VL/Qwen3-VL/Qwen3.5
// (depth, out_hidden_size, spatial_merge_size, deepstack_visual_indexes), MoonViT in Kimi K2.5/K3
// (vt_* fields, merge_kernel_size), Gemma 4 (position_embedding_size).
double vision_tower_params(const json& vj, std::int64_t text_hidden, Family fam, const std::string& origin) {
  const Cfg v{vj, origin};
  const double h = static_cast<double>(v.integer({"vt_hidden_size", "hidden_size", "embed_dim"}, 0));
  const double inter = static_cast<double>(v.integer({"vt_intermediate_size", "intermediate_size"}, 0));
  const double layers = static_cast<double>(v.integer({"vt_num_hidden_layers", "num_hidden_layers", "depth"}, 0));
  if (h <= 0 || layers <= 0) return 0;
  if (fam == Family::gemma4) {
    // transformers models/gemma4/modeling_gemma4.py: Gemma4VisionPatchEmbedder (input_proj
    // 3 * patch^2 -> h without bias, a (2, position_embedding_size, h) position table), per layer
    // q/k/v/o without bias, q/k norms of head_dim, a gated MLP (gate/up/down) and four norms;
    // std_bias/std_scale when standardize; Gemma4MultimodalEmbedder: one h -> text hidden
    // projection (its norm has no scale)
    const double patch = static_cast<double>(v.integer({"patch_size"}, 16));
    const double heads = static_cast<double>(v.integer({"num_attention_heads"}, 0, true));
    const double hd = static_cast<double>(v.integer({"head_dim"}, static_cast<std::int64_t>(h / std::max(1.0, heads))));
    const double kvh = static_cast<double>(v.integer({"num_key_value_heads"}, static_cast<std::int64_t>(heads)));
    double p = 3 * patch * patch * h + 2 * static_cast<double>(v.integer({"position_embedding_size"}, 0)) * h;
    p += layers * (2 * h * heads * hd + 2 * h * kvh * hd + 2 * hd + 3 * h * inter + 4 * h);
    if (v.boolean("standardize", false)) p += 2 * h;
    return p + h * static_cast<double>(text_hidden);
  }
  std::string act = v.str("hidden_act");
  if (act.empty()) act = v.str("activation_func");
  const bool gated = act == "silu" || act == "swiglu";
  const double channels = static_cast<double>(v.integer({"in_channels", "in_chans", "num_channels"}, 3));
  const double patch = static_cast<double>(v.integer({"patch_size", "spatial_patch_size"}, 14));
  const double temporal = static_cast<double>(v.integer({"temporal_patch_size", "patch_temporal"}, 1));
  double p = channels * patch * patch * temporal * h + h;  // patch embedding + bias
  double positions = static_cast<double>(v.integer({"num_position_embeddings", "position_embedding_size"}, 0));
  if (positions <= 0 && v.has("image_size")) {
    const double side = std::floor(static_cast<double>(v.integer({"image_size"}, 0)) / patch);
    positions = side * side + 1;  // + class token position (CLIP, Llama 4)
  }
  if (positions <= 0 && v.has("init_pos_emb_height"))
    positions = static_cast<double>(v.integer({"init_pos_emb_height"}, 0)) * static_cast<double>(v.integer({"init_pos_emb_width"}, 0));
  if (positions <= 0 && v.has("pos_emb_height"))
    positions = static_cast<double>(v.integer({"pos_emb_height"}, 0)) * static_cast<double>(v.integer({"pos_emb_width"}, 0));
  p += positions * h;
  const double per_layer = 4 * h * h + 4 * h + (gated ? 3 : 2) * h * inter + inter + h + 4 * h;
  p += layers * per_layer + 2 * h;  // + final norm
  // merger / projector into the language model
  int merge = as_int(v.integer({"spatial_merge_size", "merge_size"}, 0));
  if (merge == 0 && v.has("merge_kernel_size") && v.j["merge_kernel_size"].is_array() && !v.j["merge_kernel_size"].empty() &&
      v.j["merge_kernel_size"][0].is_number_integer())
    merge = v.j["merge_kernel_size"][0].get<int>();
  const double out = static_cast<double>(v.integer({"out_hidden_size", "text_hidden_size", "projection_dim"}, text_hidden));
  if (fam == Family::llama4) {
    // Llama4VisionPixelShuffleMLP: (h / ratio^2) -> projector_input_dim -> projector_output_dim,
    // then the multi-modal projector vision_output_dim -> text hidden
    const double ratio =
        v.has("pixel_shuffle_ratio") && v.j["pixel_shuffle_ratio"].is_number() ? v.j["pixel_shuffle_ratio"].get<double>() : 0.5;
    const double in = h / (ratio * ratio);
    const double pin = static_cast<double>(v.integer({"projector_input_dim"}, 4096));
    const double pout = static_cast<double>(v.integer({"projector_output_dim"}, 4096));
    const double vout = static_cast<double>(v.integer({"vision_output_dim"}, 4096));
    p += in * pin + pin * pout + vout * static_cast<double>(text_hidden);
  } else if (merge > 1) {
    const double wide = h * merge * merge;
    double mergers = 1;
    if (v.has("deepstack_visual_indexes") && v.j["deepstack_visual_indexes"].is_array())
      mergers += static_cast<double>(v.j["deepstack_visual_indexes"].size());
    p += mergers * (2 * wide + wide * wide + wide + wide * out + out);
  } else {
    p += h * static_cast<double>(text_hidden) + 2 * h;  // linear projection + norm (Gemma 3 mm_input_projection)
  }
  return p;
}

// A Whisper-style audio encoder (Qwen2-Audio, Qwen3-Omni audio_config): two conv layers over the
// mel bins, encoder_layers x (attention + MLP + norms), projection to the language model.
double audio_tower_params(const json& aj, std::int64_t text_hidden, const std::string& origin) {
  const Cfg a{aj, origin};
  const double d = static_cast<double>(a.integer({"d_model", "hidden_size"}, 0));
  const double layers = static_cast<double>(a.integer({"encoder_layers", "num_hidden_layers"}, 0));
  const double ffn = static_cast<double>(a.integer({"encoder_ffn_dim", "intermediate_size"}, 0));
  if (d <= 0 || layers <= 0) return 0;
  const double mels = static_cast<double>(a.integer({"num_mel_bins"}, 128));
  const double out = static_cast<double>(a.integer({"output_dim"}, text_hidden));
  double p = mels * d * 3 + d + d * d * 3 + d;                        // conv1, conv2 (kernel 3)
  p += layers * (4 * d * d + 4 * d + 2 * d * ffn + ffn + d + 4 * d);  // encoder layers
  p += 2 * d + d * out + out;                                         // final norm + projection
  return p;
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
  // Qwen3-Omni nests the language model under thinker_config.text_config, with its towers beside it
  const json* towers = &root;
  if (root.contains("thinker_config") && root["thinker_config"].is_object()) towers = &root["thinker_config"];
  json tj = towers->contains("text_config") && (*towers)["text_config"].is_object() ? (*towers)["text_config"] : root;
  const FamilyRule* fam_rule = find_family(root, tj);
  const Family fam = fam_rule ? fam_rule->family : Family::generic;
  std::vector<std::string> filled = fill_family_defaults(tj, root);
  if (fam == Family::nemotron_h && !tj.contains("num_hidden_layers")) {
    // Nemotron 3 Ultra / Lightning name each layer in layers_block_type (no num_hidden_layers)
    if (tj.contains("layers_block_type") && tj["layers_block_type"].is_array()) {
      tj["num_hidden_layers"] = tj["layers_block_type"].size();
      filled.push_back("num_hidden_layers (length of layers_block_type)");
    } else if (tj.contains("hybrid_override_pattern") && tj["hybrid_override_pattern"].is_string()) {
      tj["num_hidden_layers"] = tj["hybrid_override_pattern"].get<std::string>().size();
      filled.push_back("num_hidden_layers (length of hybrid_override_pattern)");
    }
  }
  if (fam == Family::deci && tj.contains("block_configs") && tj["block_configs"].is_array() && !tj.contains("num_hidden_layers"))
    tj["num_hidden_layers"] = tj["block_configs"].size();
  // MiMo-V2-Flash (transformers models/mimo_v2_flash/modeling_mimo_v2_flash.py): the remote-code
  // config names each layer's attention in hybrid_layer_pattern (0 = global, 1 = sliding window)
  // and its MLP in moe_layer_freq (0 = dense, 1 = MoE); the transformers config spells them
  // layer_types and mlp_layer_types ("dense" / "sparse").
  int mimo_dense_layers = -1;
  bool mimo_dense_inside = false;
  if (fam == Family::mimo_v2) {
    if (!tj.contains("layer_types") && tj.contains("hybrid_layer_pattern") && tj["hybrid_layer_pattern"].is_array()) {
      json lt = json::array();
      for (const auto& x : tj["hybrid_layer_pattern"]) {
        if (!x.is_number_integer() || (x.get<int>() != 0 && x.get<int>() != 1))
          throw InputError(fmt::format("{}: field 'hybrid_layer_pattern': expected 0 (global) or 1 (sliding window) per layer", origin));
        lt.push_back(x.get<int>() == 1 ? "sliding_attention" : "full_attention");
      }
      tj["layer_types"] = lt;
    }
    const char* mlp_key = tj.contains("moe_layer_freq") ? "moe_layer_freq" : "mlp_layer_types";
    if (tj.contains(mlp_key) && tj[mlp_key].is_array()) {
      bool leading = true;
      mimo_dense_layers = 0;
      for (const auto& x : tj[mlp_key]) {
        const bool dense = (x.is_number_integer() && x.get<int>() == 0) || (x.is_string() && x.get<std::string>() == "dense");
        if (dense && leading) ++mimo_dense_layers;
        if (dense && !leading) mimo_dense_inside = true;
        if (!dense) leading = false;
      }
    }
  }
  // Poolside Laguna (LagunaForCausalLM / laguna), from transformers
  // src/transformers/models/laguna/modeling_laguna.py (huggingface/transformers commit
  // 0205eec1d869591488aa74eda3f2da23610c28d9: LagunaAttention, LagunaSparseMoeBlock,
  // LagunaDecoderLayer, and configuration_laguna.py's __post_init__ defaults), the cache as vLLM
  // vllm/model_executor/models/laguna.py allocates it (vllm-project/vllm commit
  // 038481da3a60c77e68feeacc4929d63e12bc08c8):
  //  - layer i has num_attention_heads_per_layer[i] query heads (default num_attention_heads) and
  //    always num_key_value_heads K/V heads of head_dim: q_proj / o_proj widths change per layer,
  //    the KV cache per token does not;
  //  - g_proj (hidden -> heads, no bias, for gating true or "per-head"; hidden -> heads x head_dim
  //    for "per-element"; none for gating false) gates the attention output with softplus;
  //  - mlp_layer_types[i] "dense": LagunaMLP of intermediate_size, "sparse": LagunaSparseMoeBlock
  //    (num_experts routed experts of moe_intermediate_size, a sigmoid router with
  //    e_score_correction_bias, one shared expert of shared_expert_intermediate_size); without the
  //    list layer 0 is dense (vLLM's LagunaConfig: mlp_only_layers [0], decoder_sparse_step 1);
  //  - layer_types (default: every layer full_attention): the sliding_attention layers attend and
  //    are cached within sliding_window (vLLM per_layer_sliding_window; the model clears
  //    cache_config.sliding_window so the full layers keep every token); a sink per head on them
  //    with swa_attention_sink_enabled.
  std::vector<int> laguna_heads;
  std::vector<bool> laguna_dense;
  if (fam == Family::laguna) {
    const long long nl =
        tj.contains("num_hidden_layers") && tj["num_hidden_layers"].is_number_integer() ? tj["num_hidden_layers"].get<long long>() : 0;
    const int n = nl > 0 && nl <= 10000 ? static_cast<int>(nl) : 0;  // out of range: refused below
    if (n > 0) {
      if (!tj.contains("layer_types")) tj["layer_types"] = std::vector<std::string>(static_cast<std::size_t>(n), "full_attention");
      if (tj.contains("num_attention_heads_per_layer") && !tj["num_attention_heads_per_layer"].is_null()) {
        const auto& v = tj["num_attention_heads_per_layer"];
        if (!v.is_array() || v.size() != static_cast<std::size_t>(n))
          throw InputError(fmt::format("{}: field 'num_attention_heads_per_layer': expected {} head counts, one per layer", origin, n));
        for (std::size_t i = 0; i < v.size(); ++i) {
          if (!v[i].is_number_integer() || v[i].get<long long>() <= 0 || v[i].get<long long>() > 1000000)
            throw InputError(fmt::format("{}: field 'num_attention_heads_per_layer[{}]': expected a positive head count", origin, i));
          laguna_heads.push_back(v[i].get<int>());
        }
      }
      laguna_dense.assign(static_cast<std::size_t>(n), false);
      if (tj.contains("mlp_layer_types") && !tj["mlp_layer_types"].is_null()) {
        const auto& v = tj["mlp_layer_types"];
        if (!v.is_array() || v.size() != static_cast<std::size_t>(n))
          throw InputError(fmt::format("{}: field 'mlp_layer_types': expected {} entries, one per layer", origin, n));
        for (std::size_t i = 0; i < v.size(); ++i) {
          const std::string t = v[i].is_string() ? v[i].get<std::string>() : "";
          if (t != "dense" && t != "sparse")
            throw InputError(fmt::format("{}: field 'mlp_layer_types[{}]': expected \"dense\" or \"sparse\"", origin, i));
          laguna_dense[i] = t == "dense";
        }
      } else {
        std::vector<long long> only = {0};
        if (tj.contains("mlp_only_layers") && tj["mlp_only_layers"].is_array()) {
          only.clear();
          for (const auto& x : tj["mlp_only_layers"])
            if (x.is_number_integer()) only.push_back(x.get<long long>());
        }
        for (long long i : only)
          if (i >= 0 && i < n) laguna_dense[static_cast<std::size_t>(i)] = true;
        const long long step =
            tj.contains("decoder_sparse_step") && tj["decoder_sparse_step"].is_number_integer() ? tj["decoder_sparse_step"].get<long long>() : 1;
        for (int i = 0; i < n; ++i)
          if (step > 1 && (i + 1) % step != 0) laguna_dense[static_cast<std::size_t>(i)] = true;
      }
    }
  }
  const Cfg c{tj, origin};
  const Cfg top{root, origin};
  Model m;
  m.origin = origin;
  m.source = origin;
  std::string repo = top.str("_name_or_path");
  if (repo.empty()) repo = c.str("_name_or_path");
  // a path on the machine that saved the checkpoint ("/opt/.../Llama-3.1-70B-Instruct/") names no
  // repository: the id falls back to the model_type
  if (!repo.empty() && (repo.front() == '/' || repo.front() == '.' || repo.front() == '~' || repo.find('\\') != std::string::npos))
    repo.clear();
  m.id = repo.empty() ? c.str("model_type") : repo;
  if (m.id.empty()) m.id = "config";
  m.id = ascii_lower(m.id);
  m.name = m.id;
  m.hf_repo = repo;
  if (top.has("architectures") && top.j["architectures"].is_array() && !top.j["architectures"].empty() &&
      top.j["architectures"][0].is_string())
    m.architecture = top.j["architectures"][0].get<std::string>();
  if (!fam_rule)
    add_assumption(m.assumptions,
                   {m.id + " architecture", fmt::format("unrecognised architecture: generic decoder assumptions (architectures '{}', "
                                                        "model_type '{}' are not in the architecture table)",
                                                        top.has("architectures") ? top.j["architectures"].dump() : "[]",
                                                        c.str("model_type").empty() ? top.str("model_type") : c.str("model_type"))});
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
  // Step-3's text_config spells it max_position_embedding (and max_seq_len)
  m.max_context = c.integer(
      {"max_position_embeddings", "max_sequence_length", "seq_length", "model_max_length", "max_position_embedding", "max_seq_len"}, 0,
      true);
  // vLLM's RoPE caches (model_executor/layers/rotary_embedding @ v0.19.0, the same since v0.8):
  // get_rope builds one cos/sin cache per distinct (head size, max position, rope parameters);
  // LinearScalingRotaryEmbedding and DynamicNTKScalingRotaryEmbedding size it
  // max_position_embeddings x factor (linear_scaling_rope.py _compute_cos_sin_cache), YaRN
  // original_max_position_embeddings x factor (= max_position_embeddings in the configs seen),
  // the others max_position_embeddings. Gemma 3 (models/gemma3.py Gemma3Attention) gives its
  // sliding layers a second, unscaled rope (rope_local_base_freq).
  {
    const json* rs = nullptr;
    for (const char* k : {"rope_scaling", "rope_parameters"})
      if (c.has(k) && c.j[k].is_object()) {
        rs = &c.j[k];
        break;
      }
    if (rs && rs->contains("full_attention") && (*rs)["full_attention"].is_object()) rs = &(*rs)["full_attention"];
    double factor = 1;
    if (rs) {
      const Cfg r{*rs, origin};
      std::string type = r.str("rope_type");
      if (type.empty()) type = r.str("type");
      if ((type == "linear" || type == "dynamic") && r.has("factor") && (*rs)["factor"].is_number())
        factor = std::max(1.0, (*rs)["factor"].get<double>());
    }
    const auto global = static_cast<std::int64_t>(std::floor(static_cast<double>(m.max_context) * factor));
    const bool local_rope = fam == Family::gemma3 && c.has("layer_types");
    if (factor != 1 || local_rope) m.rope_cache_positions = global + (local_rope ? m.max_context : 0);
  }
  const int layers = as_int(c.integer({"num_hidden_layers", "n_layer", "num_layers"}, 0, true));
  if (layers <= 0 || layers > 10000) throw InputError(fmt::format("{}: field 'num_hidden_layers': {} is out of range", origin, layers));
  const int heads = as_int(c.integer({"num_attention_heads", "n_head"}, 0, true));
  if (heads <= 0) throw InputError(fmt::format("{}: field 'num_attention_heads': must be positive", origin));
  const bool stepfun = fam == Family::step || fam == Family::step3;
  // StepFun configs name the KV heads num_attention_groups
  int kv_heads = as_int(stepfun ? c.integer({"num_key_value_heads", "num_attention_groups"}, heads)
                                : c.integer({"num_key_value_heads", "num_kv_heads", "multi_query_group_num"}, heads));
  if (fam == Family::step3) kv_heads = 1;  // Step3TextDecoderLayer builds its attention with num_kv_heads=1 (any other is refused)
  const int head_dim = as_int(c.integer({"head_dim", "kv_channels"}, m.hidden_size / heads));

  // ---- MoE geometry under its several names ---------------------------------------------------
  // Gemma 4 keeps num_experts beside enable_moe_block; only the latter builds the experts
  const bool no_moe_block = fam == Family::gemma4 && !c.boolean("enable_moe_block", false);
  const int experts = no_moe_block ? 0 : as_int(c.integer({"n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts"}, 0));
  if (experts > 0) {
    MoE e;
    e.routed_experts = experts;
    e.experts_per_token =
        as_int(c.integer({"num_experts_per_tok", "num_experts_per_token", "moe_topk", "top_k_experts", "moe_top_k"}, 0, true));
    e.shared_experts = as_int(c.integer({"n_shared_experts", "num_shared_experts"}, 0));
    // gpt-oss and MiniMax put the per-expert width in intermediate_size
    const bool expert_width_in_intermediate = c.has("num_local_experts") && !c.has("moe_intermediate_size");
    e.expert_intermediate_size =
        expert_width_in_intermediate ? c.integer({"intermediate_size"}, 0, true) : c.integer({"moe_intermediate_size"}, 0, true);
    e.shared_intermediate_size = c.integer(
        {"shared_expert_intermediate_size", "shared_intermediate_size", "moe_shared_expert_intermediate_size", "share_expert_dim"}, -1);
    if (e.shared_intermediate_size < 0)
      e.shared_intermediate_size = e.shared_experts * e.expert_intermediate_size;
    else if (e.shared_intermediate_size > 0 && e.shared_experts == 0)
      e.shared_experts = 1;
    e.first_dense_layers = as_int(c.integer({"first_k_dense_replace", "first_dense_layers"}, 0));
    if (fam != Family::laguna && c.has("mlp_only_layers") && c.j["mlp_only_layers"].is_array() && !c.j["mlp_only_layers"].empty())
      add_assumption(m.assumptions, {m.id + " mlp_only_layers", "non-leading dense layers counted as MoE"});
    e.latent_size = as_int(c.integer({"routed_expert_hidden_size", "moe_latent_size"}, 0));
    if (stepfun && (c.has("moe_layers_enum") || !c.has("first_k_dense_replace"))) {
      // StepFun (step3_text.py / step3p5.py Step3*DecoderLayer): MoE on the layers moe_layers_enum
      // lists ("3,4,...", 0-based), by default every layer but the first; the others are dense MLPs
      // of intermediate_size, not only leading ones (Step-3: layers 0-3 and 60)
      std::set<int> moe_at;
      if (c.has("moe_layers_enum")) {
        const auto& v = c.j["moe_layers_enum"];
        std::vector<std::string> items;
        if (v.is_string()) {
          std::string cur;
          for (char ch : v.get<std::string>() + ",") {
            if (ch == ',') {
              items.push_back(cur);
              cur.clear();
            } else if (ch != ' ') {
              cur += ch;
            }
          }
        } else if (v.is_array()) {
          for (const auto& x : v) items.push_back(x.is_number_integer() ? std::to_string(x.get<long long>()) : "?");
        } else {
          throw InputError(fmt::format("{}: field 'moe_layers_enum': expected a comma-separated string of layer indices", origin));
        }
        for (const auto& it : items) {
          if (it.empty()) continue;
          int idx = it.size() <= 6 ? 0 : -1;
          for (char ch : it) idx = idx >= 0 && ch >= '0' && ch <= '9' ? idx * 10 + (ch - '0') : -1;
          if (idx < 0 || idx >= layers)
            throw InputError(fmt::format("{}: field 'moe_layers_enum': '{}' is not a layer index below {}", origin, it, layers));
          moe_at.insert(idx);
        }
      } else {
        for (int i = 1; i < layers; ++i) moe_at.insert(i);
      }
      e.first_dense_layers = 0;
      while (e.first_dense_layers < layers && !moe_at.count(e.first_dense_layers)) ++e.first_dense_layers;
      for (int i = e.first_dense_layers; i < layers; ++i)
        if (!moe_at.count(i)) e.dense_layers.push_back(i);
    }
    if (fam == Family::mimo_v2 && mimo_dense_layers >= 0) {
      e.first_dense_layers = mimo_dense_layers;
      if (mimo_dense_inside) add_assumption(m.assumptions, {m.id + " moe_layer_freq", "non-leading dense layers counted as MoE"});
    }
    if (fam == Family::laguna && !laguna_dense.empty()) {
      // LagunaDecoderLayer: the dense layers (mlp_layer_types, see above) anywhere in the stack
      e.first_dense_layers = 0;
      while (e.first_dense_layers < layers && laguna_dense[static_cast<std::size_t>(e.first_dense_layers)]) ++e.first_dense_layers;
      for (int i = e.first_dense_layers; i < layers; ++i)
        if (laguna_dense[static_cast<std::size_t>(i)]) e.dense_layers.push_back(i);
    }
    if (fam == Family::gemma4) {
      // Gemma4TextDecoderLayer with enable_moe_block: every layer runs its dense MLP
      // (intermediate_size) and the routed experts side by side and adds the two: the dense MLP
      // is an always-active shared expert
      e.shared_experts = 1;
      e.shared_intermediate_size = c.integer({"intermediate_size"}, 0, true);
    }
    const bool llama4 = fam == Family::llama4;
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
  } else if (fam == Family::deci && c.has("block_configs")) {
    m.dense_intermediate_size = 0;  // per layer, from block_configs below
  } else {
    // OPT spells the MLP width ffn_dim (transformers models/opt/configuration_opt.py)
    m.dense_intermediate_size = c.integer({"intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim"}, 0, true);
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
  full.sinks = fam == Family::gpt_oss;
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
  // The sliding-window layers of a layer_types list: the same geometry as the global ones unless
  // the family gives them their own.
  AttentionBlock swa = full;
  if (fam == Family::gemma4) {
    // Gemma4TextAttention: global layers use global_head_dim and, with attention_k_eq_v,
    // num_global_key_value_heads and no v_proj (the keys are the values); sliding layers keep
    // head_dim and num_key_value_heads
    const int ghd = as_int(c.integer({"global_head_dim"}, 0));
    if (ghd > 0) full.head_dim = full.v_head_dim = ghd;
    if (c.boolean("attention_k_eq_v", false)) {
      full.k_eq_v = true;
      full.num_kv_heads = as_int(c.integer({"num_global_key_value_heads"}, kv_heads));
    }
    if (c.integer({"hidden_size_per_layer_input"}, 0) > 0)
      add_assumption(m.assumptions, {m.id + " hidden_size_per_layer_input",
                                     "Gemma 4 per-layer embeddings (embed_tokens_per_layer and the per-layer gates) are not counted"});
    if (c.integer({"num_kv_shared_layers"}, 0) > 0)
      add_assumption(m.assumptions,
                     {m.id + " num_kv_shared_layers",
                      "Gemma 4 KV sharing not modelled: the shared layers are counted with their own K/V weights and cache"});
  } else if (fam == Family::step3) {
    // Step-3 multi-matrix factorization attention (vLLM vllm/model_executor/models/step3_text.py
    // Step3TextAttention, commit 0169d396): qkv_proj (a ReplicatedLinear) maps hidden to share_q_dim
    // + one K and one V head of head_dim; the query passes inter_norm and wq (share_q_dim -> heads x
    // head_dim); o_proj. The engine caches the one K/V head of head_dim per layer.
    full.q_lora_rank = as_int(c.integer({"share_q_dim"}, 0, true));
    full.name = "mfa";
  } else if (fam == Family::step && c.has("attention_other_setting") && c.j["attention_other_setting"].is_object()) {
    // Step 3.5 (vLLM vllm/model_executor/models/step3p5.py Step3p5DecoderLayer, commit 01b50b9e): the
    // layers of layer_types equal to attention_other_setting.attention_type take its
    // num_attention_heads, num_attention_groups (KV heads) and head_dim (the sliding layers: 96 heads)
    const Cfg o{c.j["attention_other_setting"], origin};
    AttentionBlock& other = o.str("attention_type") == "full_attention" ? full : swa;
    other.num_heads = as_int(o.integer({"num_attention_heads"}, heads));
    other.num_kv_heads = as_int(o.integer({"num_attention_groups"}, kv_heads));
    other.head_dim = other.v_head_dim = as_int(o.integer({"head_dim"}, head_dim));
  } else if (fam == Family::laguna) {
    // LagunaAttention: the softplus output gate g_proj (per head unless gating is "per-element")
    std::string gating = "per-head";
    if (c.has("gating")) {
      const auto& g = c.j["gating"];
      if (g.is_boolean())
        gating = g.get<bool>() ? "per-head" : "none";
      else if (g.is_string())
        gating = g.get<std::string>();
      else if (!g.is_null())
        throw InputError(fmt::format("{}: field 'gating': expected true, false, \"per-head\" or \"per-element\"", origin));
    }
    if (gating != "per-head" && gating != "per-element" && gating != "none")
      throw InputError(fmt::format("{}: field 'gating': '{}' is not true, false, \"per-head\" or \"per-element\"", origin, gating));
    full.output_gate_width = gating == "per-head" ? 1 : gating == "per-element" ? head_dim : 0;
    swa = full;
    swa.sinks = c.boolean("swa_attention_sink_enabled", false);
  } else if (fam == Family::mimo_v2) {
    // MiMoV2FlashAttention: sliding layers have their own head counts and dimensions (swa_*),
    // v_head_dim differs from the q/k head_dim, and a learnable sink per head where
    // add_swa_attention_sink_bias / add_full_attention_sink_bias say so
    swa.num_heads = as_int(c.integer({"swa_num_attention_heads"}, heads));
    swa.num_kv_heads = as_int(c.integer({"swa_num_key_value_heads"}, kv_heads));
    swa.head_dim = as_int(c.integer({"swa_head_dim"}, head_dim));
    swa.v_head_dim = as_int(c.integer({"swa_v_head_dim"}, full.v_head_dim));
    swa.sinks = c.boolean("add_swa_attention_sink_bias", false);
    full.sinks = c.boolean("add_full_attention_sink_bias", false);
  }
  std::vector<AttentionBlock> blocks;
  std::vector<int> per_layer(static_cast<std::size_t>(layers), 0);
  auto add_block = [&](AttentionBlock b) {
    for (std::size_t i = 0; i < blocks.size(); ++i)
      if (blocks[i].name == b.name) return static_cast<int>(i);
    blocks.push_back(std::move(b));
    return static_cast<int>(blocks.size() - 1);
  };
  // Laguna: layer i's own query-head count; a layer kind whose layers differ in it gets one block
  // per count ("sliding", then "sliding_96h", ...)
  auto layer_heads = [&](AttentionBlock b, int i) {
    if (laguna_heads.empty()) return b;
    b.num_heads = laguna_heads[static_cast<std::size_t>(i)];
    for (const auto& x : blocks)
      if (x.name == b.name && x.num_heads != b.num_heads) b.name = fmt::format("{}_{}h", b.name, b.num_heads);
    return b;
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
  } else if (fam == Family::deci && c.has("block_configs")) {
    // Llama-Nemotron NAS: each layer's attention (GQA with n_heads_in_group, or no-op) and FFN
    // (ffn_mult, or no-op) from block_configs; FFN width = round_up(2 * ffn_mult * hidden / 3, 256)
    // (_ffn_mult_to_intermediate_size in the checkpoint's modeling_decilm.py). One dense width is
    // kept: the mean over the layers that have an FFN, which keeps the parameter count exact.
    const auto& bc = c.j["block_configs"];
    if (!bc.is_array() || bc.size() != static_cast<std::size_t>(layers))
      throw InputError(fmt::format("{}: field 'block_configs': expected {} entries (num_hidden_layers)", origin, layers));
    double ffn_sum = 0;
    int ffn_layers = 0;
    for (int i = 0; i < layers; ++i) {
      const auto& b = bc[static_cast<std::size_t>(i)];
      if (!b.is_object() || !b.contains("attention") || !b.contains("ffn") || !b["attention"].is_object() || !b["ffn"].is_object())
        throw InputError(fmt::format("{}: field 'block_configs[{}]': expected 'attention' and 'ffn' objects", origin, i));
      const Cfg a{b["attention"], origin};
      const Cfg f{b["ffn"], origin};
      if (a.boolean("replace_with_linear", false) || f.boolean("replace_with_linear", false))
        add_assumption(m.assumptions, {m.id + " block_configs", "replace_with_linear blocks counted as h x h linear layers"});
      const bool ffn = !f.boolean("no_op", false);
      if (ffn) {
        if (!f.has("ffn_mult") || !f.j["ffn_mult"].is_number())
          throw InputError(fmt::format("{}: field 'block_configs[{}].ffn.ffn_mult': missing", origin, i));
        const double mult = f.j["ffn_mult"].get<double>();
        if (!std::isfinite(mult) || mult <= 0 || mult > 1000)
          throw InputError(fmt::format("{}: field 'block_configs[{}].ffn.ffn_mult': {} is out of range", origin, i, mult));
        const auto width = static_cast<std::int64_t>(2 * mult * static_cast<double>(m.hidden_size) / 3);
        ffn_sum += static_cast<double>((width + 255) / 256 * 256);
        ++ffn_layers;
      }
      AttentionBlock b2;
      if (a.boolean("no_op", false)) {
        b2.kind = AttnKind::none;
        b2.name = "mlp";
      } else {
        b2 = full;
        const int group = std::max(1, as_int(a.integer({"n_heads_in_group"}, 1)));
        b2.num_kv_heads = std::max(1, heads / group);
        b2.name = fmt::format("gqa-kv{}", b2.num_kv_heads);
      }
      b2.has_mlp = ffn;
      if (!ffn) b2.name += "-noffn";
      per_layer[static_cast<std::size_t>(i)] = add_block(b2);
    }
    if (ffn_layers > 0) m.dense_intermediate_size = static_cast<std::int64_t>(std::llround(ffn_sum / ffn_layers));
    add_assumption(m.assumptions, {m.id + " block_configs",
                                   "FFN widths differ per layer; one mean width kept (the total is exact, per-stage splits approximate)"});
  } else if (c.has("hybrid_override_pattern") || (fam == Family::nemotron_h && c.has("layers_block_type"))) {
    // Nemotron-H / Nemotron 3: each layer is one mixer: M = Mamba2, * = attention, - = dense MLP,
    // E = MoE (configuration_nemotron_h.py); Nemotron 3 Ultra spells the same list as
    // layers_block_type: mamba / attention / mlp / moe
    AttentionBlock mb;
    mb.kind = AttnKind::mamba2;
    mb.name = "mamba2";
    mb.has_mlp = false;
    mb.num_heads = as_int(c.integer({"mamba_num_heads"}, 0, true));
    mb.head_dim = as_int(c.integer({"mamba_head_dim"}, 0, true));
    mb.state_size = as_int(c.integer({"ssm_state_size"}, 0, true));
    mb.n_groups = as_int(c.integer({"n_groups"}, 1));
    mb.conv_kernel = as_int(c.integer({"conv_kernel"}, 4));
    std::string pat;
    const char* field = "hybrid_override_pattern";
    if (c.has("hybrid_override_pattern")) {
      pat = c.str("hybrid_override_pattern");
    } else {
      field = "layers_block_type";
      const auto& lbt = c.j["layers_block_type"];
      if (!lbt.is_array()) throw InputError(fmt::format("{}: field 'layers_block_type': expected a list", origin));
      for (std::size_t i = 0; i < lbt.size(); ++i) {
        const std::string t = lbt[i].is_string() ? lbt[i].get<std::string>() : "";
        if (t == "mamba")
          pat += 'M';
        else if (t == "attention")
          pat += '*';
        else if (t == "mlp")
          pat += '-';
        else if (t == "moe")
          pat += 'E';
        else
          throw InputError(
              fmt::format("{}: field 'layers_block_type[{}]': unknown layer '{}' (expected mamba, attention, mlp or moe)", origin, i, t));
      }
    }
    if (pat.size() != static_cast<std::size_t>(layers))
      throw InputError(fmt::format("{}: field '{}': {} entries for {} layers", origin, field, pat.size(), layers));
    const bool has_dense = pat.find('-') != std::string::npos, has_moe = pat.find('E') != std::string::npos;
    if (has_moe && !m.moe) throw InputError(fmt::format("{}: field '{}': MoE layers (E) but no n_routed_experts", origin, field));
    if (has_dense && has_moe)
      throw InputError(fmt::format("{}: field '{}': both dense (-) and MoE (E) MLP layers are not supported", origin, field));
    AttentionBlock att = full;
    att.has_mlp = false;
    AttentionBlock mlp;
    mlp.kind = AttnKind::none;
    mlp.name = has_moe ? "moe" : "mlp";
    for (int i = 0; i < layers; ++i) {
      const char ch = pat[static_cast<std::size_t>(i)];
      if (ch == 'M')
        per_layer[static_cast<std::size_t>(i)] = add_block(mb);
      else if (ch == '*')
        per_layer[static_cast<std::size_t>(i)] = add_block(att);
      else if (ch == '-' || ch == 'E')
        per_layer[static_cast<std::size_t>(i)] = add_block(mlp);
      else
        throw InputError(fmt::format("{}: field '{}[{}]': unknown layer '{}' (expected M, *, - or E)", origin, field, i, ch));
    }
  } else if (c.has("layer_types") && c.j["layer_types"].is_array()) {
    const auto& lt = c.j["layer_types"];
    for (int i = 0; i < layers; ++i) {
      const std::string t = static_cast<std::size_t>(i) < lt.size() && lt[static_cast<std::size_t>(i)].is_string()
                                ? lt[static_cast<std::size_t>(i)].get<std::string>()
                                : "full_attention";
      if (t == "sliding_attention") {
        AttentionBlock b = swa;
        b.name = "sliding";
        b.sliding_window = as_int(c.integer({"sliding_window"}, 0, true));
        per_layer[static_cast<std::size_t>(i)] = add_block(layer_heads(b, i));
      } else if (t == "linear_attention") {
        per_layer[static_cast<std::size_t>(i)] = add_block(gated_deltanet());
      } else if (t == "full_attention" || t == "attention" || t == "deepseek_sparse_attention" || t == "global_attention") {
        per_layer[static_cast<std::size_t>(i)] = add_block(layer_heads(full, i));
      } else {
        throw InputError(fmt::format("{}: field 'layer_types[{}]': unknown layer type '{}'", origin, i, t));
      }
    }
  } else if (c.has("full_attention_interval")) {
    const int every = as_int(c.integer({"full_attention_interval"}, 4));
    const int gi = add_block(gated_deltanet());
    const int fi = add_block(full);
    for (int i = 0; i < layers; ++i) per_layer[static_cast<std::size_t>(i)] = ((i + 1) % std::max(1, every)) ? gi : fi;
  } else if (fam == Family::llama4 && c.integer({"attention_chunk_size"}, 0) > 0) {
    // Llama 4: RoPE layers attend within chunks of attention_chunk_size tokens, the NoPE layers
    // (no_rope_layers[i] == 0; by default every 4th layer, Llama4TextConfig's no_rope_layer_interval)
    // attend globally. The engines keep only the current chunk's KV for the chunked layers: vLLM
    // vllm/v1/kv_cache_interface.py ChunkedLocalAttentionSpec.max_memory_usage_bytes holds
    // min(attention_chunk_size + max_num_batched_tokens, max_model_len) tokens per request, the
    // sliding-window rule (window - 1 + max_num_batched_tokens) plus one token, so the chunk is
    // modelled as a window of attention_chunk_size. SGLang sizes a separate pool for them only
    // with --hybrid-kvcache-ratio (python/sglang/srt/configs/model_config.py is_hybrid_model).
    const int chunk = as_int(c.integer({"attention_chunk_size"}, 0));
    std::vector<int> rope(static_cast<std::size_t>(layers), 1);
    bool listed = false;
    if (c.has("no_rope_layers") && c.j["no_rope_layers"].is_array() && !c.j["no_rope_layers"].empty()) {
      const auto& nr = c.j["no_rope_layers"];
      if (nr.size() != static_cast<std::size_t>(layers))
        throw InputError(fmt::format("{}: field 'no_rope_layers': {} entries for {} layers", origin, nr.size(), layers));
      for (int i = 0; i < layers; ++i) {
        if (!nr[static_cast<std::size_t>(i)].is_number_integer())
          throw InputError(fmt::format("{}: field 'no_rope_layers[{}]': expected 0 or 1", origin, i));
        rope[static_cast<std::size_t>(i)] = nr[static_cast<std::size_t>(i)].get<int>();
      }
      listed = true;
    }
    if (!listed) {
      const int interval = std::max(1, as_int(c.integer({"no_rope_layer_interval"}, 4)));
      for (int i = 0; i < layers; ++i) rope[static_cast<std::size_t>(i)] = (i + 1) % interval != 0;
      filled.push_back(fmt::format("no_rope_layers (every {}th layer NoPE, global attention)", interval));
    }
    AttentionBlock chunked = full;
    chunked.name = "chunked";
    chunked.sliding_window = chunk;
    chunked.chunked = true;
    for (int i = 0; i < layers; ++i)
      per_layer[static_cast<std::size_t>(i)] = rope[static_cast<std::size_t>(i)] ? add_block(chunked) : add_block(full);
  } else {
    const int sw = as_int(c.integer({"sliding_window"}, 0));
    const bool use_sw = sw > 0 && c.boolean("use_sliding_window", true) && fam != Family::qwen3 && fam != Family::qwen3_moe;
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
    // Phi-1 / Phi-1.5 / Phi-2 (PhiForCausalLM): PhiMLP is fc1 (hidden -> n_inner) and fc2 (n_inner
    // -> hidden) with no gate (vllm/model_executor/models/phi.py PhiMLP @ v0.19.0 2a69949bd)
    if (m.architecture == "PhiForCausalLM") m.gated_mlp = false;
    // OPT (OPTForCausalLM): fc1 / fc2 with ReLU, no gate (vllm/model_executor/models/opt.py
    // OPTDecoderLayer @ v0.19.0 2a69949bd); its learned position embeddings (2,050 x hidden) are not counted
    if (m.architecture == "OPTForCausalLM") m.gated_mlp = false;
  }
  m.layers = per_layer;
  m.mtp_layers = as_int(c.integer({"num_nextn_predict_layers", "num_mtp_modules"}, 0));
  // MiMo-7B (vLLM vllm/model_executor/models/mimo_mtp.py MiMoMultiTokenPredictorLayer, commit
  // 0bb55d60): each MTP layer holds two input norms, input_proj (2h -> h), one Qwen2 decoder layer
  // and a final norm; the embedding and the LM head are the main model's
  if (fam == Family::mimo) m.mtp_own_embeddings = false;

  // ---- vision and audio towers, counted from their geometry, reported separately -------------
  if (towers->contains("vision_config") && (*towers)["vision_config"].is_object()) {
    m.vision_params = vision_tower_params((*towers)["vision_config"], m.hidden_size, fam, origin);
    // fixed-resolution ViT geometry (SigLIP in Gemma 3: image_size, patch_size) and the tokens
    // an image becomes in the language model (mm_tokens_per_image, top level)
    const Cfg vc{(*towers)["vision_config"], origin};
    if (vc.has("image_size") && vc.j["image_size"].is_number_integer() && towers->contains("mm_tokens_per_image") &&
        (*towers)["mm_tokens_per_image"].is_number_integer()) {
      m.vision.hidden = vc.integer({"hidden_size"}, 0);
      m.vision.intermediate = vc.integer({"intermediate_size"}, 0);
      m.vision.layers = vc.integer({"num_hidden_layers"}, 0);
      m.vision.image_size = vc.integer({"image_size"}, 0);
      m.vision.patch_size = vc.integer({"patch_size"}, 14);
      m.vision.tokens_per_image = (*towers)["mm_tokens_per_image"].get<std::int64_t>();
    } else if ((fam == Family::qwen3_5 || fam == Family::qwen3_vl) && vc.has("depth") && vc.has("hidden_size") && vc.has("patch_size")) {
      // Qwen3-VL's tower (vLLM models/qwen3_vl.py Qwen3_VisionTransformer; Qwen3.5 / 3.6 use it):
      // dynamic resolution up to the image processor's size.longest_edge pixels, which lives in
      // preprocessor_config.json, not here: the 16,777,216 that Qwen3-VL, Qwen3.5 and Qwen3.6
      // repositories ship is assumed (a 4096 x 4096 image: (4096 / 16)^2 = 65,536 patches, 16,384
      // tokens after the 2 x 2 merge)
      constexpr std::int64_t kQwenVlMaxPixels = 16777216;
      m.vision.qwen_vl = true;
      m.vision.hidden = vc.integer({"hidden_size"}, 0);
      m.vision.intermediate = vc.integer({"intermediate_size"}, 0);
      m.vision.layers = vc.integer({"depth"}, 0);
      m.vision.heads = vc.integer({"num_heads"}, 16);
      m.vision.patch_size = vc.integer({"patch_size"}, 16);
      m.vision.channels = vc.integer({"in_channels"}, 3);
      m.vision.temporal_patch = vc.integer({"temporal_patch_size"}, 2);
      m.vision.spatial_merge = vc.integer({"spatial_merge_size"}, 2);
      m.vision.out_hidden = vc.integer({"out_hidden_size"}, 0);
      if (vc.has("deepstack_visual_indexes") && vc.j["deepstack_visual_indexes"].is_array())
        m.vision.deepstack = static_cast<std::int64_t>(vc.j["deepstack_visual_indexes"].size());
      m.vision.image_size = static_cast<std::int64_t>(std::llround(std::sqrt(static_cast<double>(kQwenVlMaxPixels))));
      const std::int64_t merge = std::max<std::int64_t>(1, m.vision.spatial_merge);
      m.vision.tokens_per_image = m.vision.patches_per_image() / (merge * merge);
      add_assumption(m.assumptions, {m.id + " max image",
                                     "largest image 16,777,216 pixels (4096 x 4096: 65,536 ViT patches, 16,384 tokens), the "
                                     "preprocessor_config.json size.longest_edge of the Qwen3-VL / Qwen3.5 / Qwen3.6 repositories; "
                                     "config.json does not carry it"});
    }
    if (m.vision_params > 0)
      add_assumption(m.assumptions, {m.id + " vision_config",
                                     "vision tower counted from vision_config geometry (patch and position embeddings, ViT layers, "
                                     "merger/projector), biases assumed; not in the totals"});
  }
  if (towers->contains("audio_config") && (*towers)["audio_config"].is_object()) {
    m.audio_params = audio_tower_params((*towers)["audio_config"], m.hidden_size, origin);
    m.vision_params += m.audio_params;  // the engines load every encoder tower beside the language model
    if (m.audio_params > 0)
      add_assumption(m.assumptions, {m.id + " audio_config",
                                     "audio encoder counted from audio_config geometry (conv front end, encoder layers, "
                                     "projection); loaded with the vision tower, not in the totals"});
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
