#pragma once
// The model description every calculator works on. Loaded from a catalogue YAML or derived from a
// Hugging Face config.json; both paths produce this same struct.
#include <cstdint>
#include <k3plan/figure.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace k3plan {

enum class AttnKind { gqa, mla, kda, gdn, mamba2, compressed, none };  // none: an MLP-only layer (Nemotron-H "-")
const char* to_string(AttnKind k);

// Geometry of one attention block. Which fields matter depends on `kind`; see data/SCHEMA.md.
struct AttentionBlock {
  std::string name;  // catalogue name, e.g. "mla", "sliding"
  AttnKind kind = AttnKind::gqa;
  // gqa / mla / compressed
  int num_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int v_head_dim = 0;
  int sliding_window = 0;  // tokens; 0 = full attention
  // Llama 4 chunked local attention: sliding_window holds attention_chunk_size. vLLM keeps only the
  // chunk (ChunkedLocalAttentionSpec); SGLang caches every token unless --hybrid-kvcache-ratio.
  bool chunked = false;
  bool qkv_bias = false;
  bool sinks = false;
  // Gemma 4 global layers (attention_k_eq_v): no v_proj, the keys are the values. The engines
  // still cache K and V per token (a standard attention layer), so only the weights change.
  bool k_eq_v = false;
  // mla; gqa with q_lora_rank > 0: a low-rank query (Step-3's multi-matrix factorization
  // attention: hidden -> q_lora_rank, RMSNorm, -> num_heads x head_dim), the K/V heads unchanged
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  bool output_gate = false;
  // gqa: an output gate projected from the layer input, output_gate_width outputs per head
  // (Laguna g_proj: 1 = one softplus gate per head broadcast over head_dim, head_dim = per element)
  int output_gate_width = 0;
  int indexer_heads = 0;  // DeepSeek sparse attention (V3.2) / V4 lightning indexer
  int indexer_head_dim = 0;
  // kda / gdn / mamba2
  int conv_kernel = 0;
  bool full_rank_gate = false;
  int num_k_heads = 0;
  int num_v_heads = 0;
  int head_k_dim = 0;
  int head_v_dim = 0;
  int state_size = 0;
  int n_groups = 0;
  // compressed (DeepSeek V4)
  int compress_ratio = 0;
  int o_lora_rank = 0;
  int o_groups = 0;
  // false for layers that hold only a mixer (Nemotron-H "M" and "*" layers have no MLP)
  bool has_mlp = true;

  bool is_linear() const { return kind == AttnKind::kda || kind == AttnKind::gdn || kind == AttnKind::mamba2; }
};

struct MoE {
  int routed_experts = 0;
  int experts_per_token = 0;
  int shared_experts = 0;
  std::int64_t expert_intermediate_size = 0;
  std::int64_t shared_intermediate_size = 0;  // total width of all shared experts
  int first_dense_layers = 0;                 // layers [0, first_dense_layers) use the dense MLP
  int latent_size = 0;                        // LatentMoE width (0 = experts work on hidden_size)
  int layer_step = 1;                         // MoE on every layer_step-th layer (Llama 4 interleave_moe_layer_step)
  std::vector<int> dense_layers;              // further dense-MLP layers at or after first_dense_layers (0-based)
};

// The parser names one engine registers for the model's tool-call and reasoning output ("" = none).
struct ParserNames {
  std::string tool_call_parser;
  std::string reasoning_parser;
};

// What an engine needs to serve the model beyond its layout (data/models/*.yaml `engine:`). Parser
// names differ between the engines (vLLM llama3_json, SGLang llama3); engine_flags.hpp checks them
// against each engine's registry for the release asked for.
struct EngineHints {
  bool trust_remote_code = false;
  ParserNames sglang;
  ParserNames vllm;
};

// Parameter groups, each shipped in its own precision.
enum class ParamGroup { embedding, lm_head, attention, dense_mlp, shared_experts, routed_experts, router, latent_proj, norms, mtp, vision };
inline constexpr int kParamGroups = 11;
const char* to_string(ParamGroup g);

struct Model {
  std::string id;
  std::string name;
  std::vector<std::string> aliases;
  std::string hf_repo;
  std::string source;
  std::string date;
  std::string origin;  // where it was loaded from (embedded path, file path)
  // the local directory an engine loads when the model came from a config.json on disk (the
  // directory given, or the config file's directory); empty for catalogue and Hub models
  std::string local_path;
  std::string architecture;  // config.json architectures[0] ("" for catalogue YAML models)

  std::optional<Figure> published_params_total;
  std::optional<Figure> published_params_active;
  std::optional<Figure> published_checkpoint_bytes;
  EngineHints engine;

  std::int64_t hidden_size = 0;
  std::int64_t vocab_size = 0;
  bool tie_word_embeddings = false;
  std::int64_t max_context = 0;
  // positions of the RoPE cos/sin caches vLLM builds, summed over the model's distinct rotary
  // embeddings (linear / dynamic scaling: max_position_embeddings x factor; Gemma 3's local layers
  // one more cache); 0 = one cache of max_context positions
  std::int64_t rope_cache_positions = 0;
  std::string dtype = "bf16";
  std::int64_t dense_intermediate_size = 0;
  bool gated_mlp = true;  // gate, up, down (SwiGLU); false = up, down (Nemotron-H relu^2)
  double mlp_matrices() const { return gated_mlp ? 3.0 : 2.0; }
  std::vector<AttentionBlock> blocks;
  std::vector<int> layers;  // per decoder layer (0-based), index into `blocks`
  std::optional<MoE> moe;
  int mtp_layers = 0;
  // each MTP layer stores its own embedding and output head (DeepSeek V3: 685B on disk = 671B + 14B
  // MTP); false where the MTP layers use the main model's (MiMo-7B)
  bool mtp_own_embeddings = true;
  double vision_params = 0;  // every encoder tower the engine loads beside the language model (vision + audio)
  double audio_params = 0;   // the audio encoder's part of vision_params
  // A fixed-resolution ViT vision tower's geometry (vision_config: SigLIP / CLIP style, an image
  // is (image_size / patch_size)^2 patches) and the language-model tokens one image becomes
  // (mm_tokens_per_image); all 0 when the config has no such tower (dynamic-resolution towers).
  // Used for the activation of a profile run that feeds dummy images through the tower.
  // Qwen-VL-style towers (Qwen3-VL, Qwen3.5 / 3.6: qwen_vl) resize an image to at most the image
  // processor's max pixels; image_size is then the side of the square of that many pixels, the
  // largest image the engine profiles, each patch carries temporal_patch frames, and
  // spatial_merge^2 patches become one language-model token of out_hidden.
  struct VisionTower {
    std::int64_t hidden = 0, intermediate = 0, layers = 0, image_size = 0, patch_size = 0, tokens_per_image = 0;
    std::int64_t heads = 0, channels = 3, temporal_patch = 1, spatial_merge = 1, out_hidden = 0;  // out_hidden 0 = the text hidden size
    bool qwen_vl = false;  // rotary ViT blocks (qwen3_vl.py Qwen3_VisionBlock), dynamic resolution
    std::int64_t deepstack = 0;  // Qwen3-VL deepstack_visual_indexes: merger outputs kept to the end of the forward
    std::int64_t patches_per_image() const { return patch_size > 0 ? (image_size / patch_size) * (image_size / patch_size) : 0; }
    bool known() const { return hidden > 0 && layers > 0 && patches_per_image() > 0 && tokens_per_image > 0; }
  };
  VisionTower vision;

  // precision per group; groups absent here take `default_precision`
  std::string default_precision = "bf16";
  std::map<ParamGroup, std::string> precision;

  std::vector<Assumption> assumptions;

  int num_layers() const { return static_cast<int>(layers.size()); }
  bool is_moe_layer(int layer) const {
    if (!moe || layer < moe->first_dense_layers || (moe->layer_step > 1 && (layer + 1) % moe->layer_step != 0)) return false;
    for (int d : moe->dense_layers)
      if (d == layer) return false;
    return true;
  }
  const std::string& precision_of(ParamGroup g) const;  // a reference into the model: no copy per lookup
  // Query heads used for the TP-divisibility rule: the first full-attention block's heads.
  int attention_heads() const;
};

// Checks geometry: positive sizes, layer references, MoE sanity. Throws InputError naming `where`.
void validate_model(const Model& m, const std::string& where);

}  // namespace k3plan
