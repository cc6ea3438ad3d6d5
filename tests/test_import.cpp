// Hugging Face config.json import: layer kinds, MoE fields and precision across families.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <k3plan/catalogue.hpp>
#include <k3plan/error.hpp>
#include <k3plan/kv.hpp>
#include <k3plan/params.hpp>
#include <sstream>

using namespace k3plan;
namespace fs = std::filesystem;

namespace {
std::string slurp(const std::string& name) {
  std::ifstream in(std::string(K3PLAN_TEST_DATA) + "/" + name);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
Model load(const std::string& name) { return import_hf_config(slurp(name), name); }
int count_kind(const Model& m, AttnKind k) {
  int n = 0;
  for (int l : m.layers) n += m.blocks[static_cast<std::size_t>(l)].kind == k;
  return n;
}
}  // namespace

TEST_CASE("Kimi K3's config.json gives the same model as the catalogue entry") {
  const Model m = load("moonshotai--Kimi-K3_config.json");
  CHECK(m.num_layers() == 93);
  CHECK(count_kind(m, AttnKind::kda) == 69);
  CHECK(count_kind(m, AttnKind::mla) == 24);
  // 1-based full_attn_layers: 4, 8, ..., 92, 93 are MLA (0-based 3, 7, ..., 91, 92)
  CHECK(m.blocks[static_cast<std::size_t>(m.layers[3])].kind == AttnKind::mla);
  CHECK(m.blocks[static_cast<std::size_t>(m.layers[92])].kind == AttnKind::mla);
  CHECK(m.blocks[static_cast<std::size_t>(m.layers[0])].kind == AttnKind::kda);
  REQUIRE(m.moe);
  CHECK(m.moe->latent_size == 3584);
  CHECK(m.precision_of(ParamGroup::routed_experts) == "mxfp4");
  CHECK(m.precision_of(ParamGroup::attention) == "bf16");
  CHECK(m.precision_of(ParamGroup::shared_experts) == "bf16");
  const Catalogue cat = Catalogue::embedded();
  CHECK(count_params(m).total == Approx(count_params(cat.model("kimi-k3")).total).epsilon(0.001));
  CHECK(m.vision_params > 0);
}

TEST_CASE("DeepSeek-V3's fp8 block quantisation and MTP layer are read") {
  const Model m = load("deepseek-ai--DeepSeek-V3_config.json");
  CHECK(m.precision_of(ParamGroup::routed_experts) == "fp8-block");
  CHECK(m.precision_of(ParamGroup::embedding) == "bf16");
  CHECK(m.mtp_layers == 1);
  CHECK(m.moe->first_dense_layers == 3);
  CHECK(count_params(m).total == Approx(671e9).epsilon(0.01));
}

TEST_CASE("DeepSeek-V3.2's indexer makes the sparse fp8 cache of 656 + 132 B per layer") {
  const Model m = load("deepseek-ai--DeepSeek-V3.2_config.json");
  KvOptions o;
  CHECK(kv_profile(m, o).bytes_per_token == 61 * (656 + 132));
  o.kv_dtype = "bf16";
  CHECK(kv_profile(m, o).bytes_per_token == 61 * (576 * 2 + 132));
}

TEST_CASE("gpt-oss alternates sliding-window and full layers and ships MXFP4 experts") {
  const Model m = load("openai--gpt-oss-120b_config.json");
  int sliding = 0;
  for (int l : m.layers) sliding += m.blocks[static_cast<std::size_t>(l)].sliding_window > 0;
  CHECK(sliding == 18);
  CHECK(m.num_layers() == 36);
  CHECK(m.blocks[static_cast<std::size_t>(m.layers[0])].sliding_window == 128);  // starts with sliding
  CHECK(m.precision_of(ParamGroup::routed_experts) == "mxfp4");
  CHECK(m.precision_of(ParamGroup::attention) == "bf16");
  CHECK(count_params(m).total == Approx(116.8e9).epsilon(0.01));
}

TEST_CASE("DeepSeek V4 layers follow compress_ratios, the MTP entry excluded") {
  const Model m = load("deepseek-ai--DeepSeek-V4-Pro_config.json");
  CHECK(m.num_layers() == 61);
  int c4 = 0, c128 = 0;
  for (int l : m.layers) {
    const auto& b = m.blocks[static_cast<std::size_t>(l)];
    c4 += b.compress_ratio == 4;
    c128 += b.compress_ratio == 128;
  }
  CHECK(c4 == 30);
  CHECK(c128 == 31);
  KvOptions o;
  CHECK(kv_profile(m, o).bytes_per_sequence(1048576) / 1073741824.0 == Approx(9.62).epsilon(0.005));
}

TEST_CASE("Qwen3.5's layer_types give Gated DeltaNet layers with a fixed state") {
  const Model m = load("Qwen--Qwen3.5-35B-A3B_config.json");
  CHECK(count_kind(m, AttnKind::gdn) > 0);
  CHECK(count_kind(m, AttnKind::gqa) > 0);
  KvOptions o;
  CHECK(kv_profile(m, o).state_bytes_per_sequence > 0);
}

TEST_CASE("Nemotron-H's pattern gives Mamba2, attention and MLP-only layers, and Python's Infinity parses") {
  const Model m = load("nvidia--Nemotron-H-56B-Base-8K_config.json");
  CHECK(count_kind(m, AttnKind::mamba2) == 54);
  CHECK(count_kind(m, AttnKind::gqa) == 10);
  CHECK(count_kind(m, AttnKind::none) == 54);
  CHECK(count_params(m).total == Approx(56e9).epsilon(0.02));
}

TEST_CASE("a ModelOpt FP8 checkpoint directory reads hf_quant_config.json beside config.json") {
  char tmpl[] = "/tmp/k3plan-import-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const fs::path dir(tmpl);
  fs::copy_file(std::string(K3PLAN_TEST_DATA) + "/nvidia--Llama-3.1-70B-Instruct-FP8_config.json", dir / "config.json");
  fs::copy_file(std::string(K3PLAN_TEST_DATA) + "/nvidia--Llama-3.1-70B-Instruct-FP8_hf_quant_config.json", dir / "hf_quant_config.json");
  const Catalogue cat = Catalogue::embedded();
  const Model m = resolve_model(cat, dir.string());
  CHECK(m.precision_of(ParamGroup::dense_mlp) == "fp8");
  CHECK(weights_as_shipped(m, count_params(m)).bytes == Approx(72e9).epsilon(0.05));
  fs::remove_all(dir);
}

TEST_CASE("malformed and hostile config.json files are input errors") {
  CHECK_THROWS_AS(import_hf_config("{", "x.json"), InputError);
  CHECK_THROWS_AS(import_hf_config("[]", "x.json"), InputError);
  CHECK_THROWS_AS(import_hf_config(R"({"hidden_size": 8})", "x.json"), InputError);
  CHECK_THROWS_AS(
      import_hf_config(
          R"({"hidden_size": -8, "vocab_size": 8, "max_position_embeddings": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 8})",
          "x.json"),
      InputError);
  CHECK_THROWS_AS(
      import_hf_config(
          R"({"hidden_size": 8, "vocab_size": 8, "max_position_embeddings": 8, "num_hidden_layers": 1e9, "num_attention_heads": 2, "intermediate_size": 8})",
          "x.json"),
      InputError);
  CHECK_NOTHROW(import_hf_config(
      R"({"hidden_size": 8, "vocab_size": 8, "max_position_embeddings": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 8})",
      "x.json"));
}

TEST_CASE("Llama 4 Scout: shared expert, chunked local attention on the RoPE layers and KV capped at the chunk") {
  const Model m = load("meta-llama--Llama-4-Scout-17B-16E-Instruct_config.json");
  REQUIRE(m.moe);
  CHECK(m.moe->shared_experts == 1);
  int chunked = 0, global = 0;
  for (int l = 0; l < m.num_layers(); ++l) {
    const auto& b = m.blocks[static_cast<std::size_t>(m.layers[static_cast<std::size_t>(l)])];
    if (b.sliding_window == 8192)
      ++chunked;
    else if (b.sliding_window == 0)
      ++global;
    // no_rope_layers is empty in the config: Llama4TextConfig makes every 4th layer NoPE (global)
    CHECK((b.sliding_window == 0) == ((l + 1) % 4 == 0));
  }
  CHECK(chunked == 36);
  CHECK(global == 12);
  KvOptions o;
  o.kv_dtype = "bf16";
  const double per_token_layer = 8 * 128 * 2 * 2.0;  // 8 kv heads x 128 x (K + V) x 2 B
  const double at_128k = kv_profile(m, o).bytes_per_sequence(131072);
  CHECK(at_128k == Approx(12 * 131072 * per_token_layer + 36 * 8192 * per_token_layer));
  CHECK(at_128k < 0.31 * 48 * 131072 * per_token_layer);  // full attention everywhere would be 3.4x more
  // Maverick: MoE on every other layer (interleave_moe_layer_step 2), 400B total
  CHECK(count_params(load("meta-llama--Llama-4-Maverick-17B-128E-Instruct_config.json")).total == Approx(400e9).epsilon(0.02));
}

TEST_CASE("Nemotron 3 reads M, E and * layers, and Ultra's layers_block_type without num_hidden_layers") {
  const Model super = load("aiconfigurator/nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8_config.json");
  CHECK(super.num_layers() == 88);
  CHECK(count_kind(super, AttnKind::mamba2) == 40);
  CHECK(count_kind(super, AttnKind::gqa) == 8);
  CHECK(count_kind(super, AttnKind::none) == 40);  // the MoE layers
  REQUIRE(super.moe);
  CHECK(super.moe->latent_size == 1024);
  CHECK(!super.gated_mlp);  // relu^2 experts: up and down only
  const auto ps = count_params(super);
  CHECK(ps.total == Approx(120e9).epsilon(0.02));
  CHECK(ps.active == Approx(12e9).epsilon(0.05));
  const Model ultra = load("aiconfigurator/nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16_config.json");
  CHECK(ultra.num_layers() == 108);
  CHECK(count_kind(ultra, AttnKind::gqa) > 0);
  CHECK(count_params(ultra).total > 400e9);
  CHECK_THROWS_AS(import_hf_config(R"({"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "hidden_size": 64,
      "vocab_size": 10, "max_position_embeddings": 8, "num_attention_heads": 2, "intermediate_size": 8, "n_routed_experts": 4,
      "num_experts_per_tok": 1, "moe_intermediate_size": 8, "mamba_num_heads": 2, "mamba_head_dim": 8, "ssm_state_size": 4,
      "layers_block_type": ["mamba", "banana"]})",
                                   "x.json"),
                  InputError);
}

TEST_CASE("Llama-Nemotron NAS block_configs: per-layer attention and FFN widths") {
  const Model m = load("aiconfigurator/nvidia--Llama-3_3-Nemotron-Super-49B-v1_config.json");
  CHECK(m.num_layers() == 80);
  CHECK(count_kind(m, AttnKind::none) == 31);  // no-op attention layers
  CHECK(count_params(m).total == Approx(49.9e9).epsilon(0.02));
}

TEST_CASE("Qwen3-Omni nests the language model under thinker_config and counts its audio encoder apart") {
  // the layout of Qwen3-Omni-30B-A3B's config.json (transformers models/qwen3_omni_moe/
  // configuration_qwen3_omni_moe.py: thinker_config.{text_config, vision_config, audio_config})
  const Model m = import_hf_config(R"({"architectures": ["Qwen3OmniMoeForConditionalGeneration"], "model_type": "qwen3_omni_moe",
    "thinker_config": {
      "text_config": {"model_type": "qwen3_omni_moe_text", "hidden_size": 2048, "intermediate_size": 768, "moe_intermediate_size": 768,
        "num_experts": 128, "num_experts_per_tok": 8, "num_hidden_layers": 48, "num_attention_heads": 32, "num_key_value_heads": 4,
        "head_dim": 128, "vocab_size": 152064, "max_position_embeddings": 65536},
      "vision_config": {"depth": 27, "hidden_size": 1152, "intermediate_size": 4304, "out_hidden_size": 2048, "patch_size": 16,
        "spatial_merge_size": 2, "temporal_patch_size": 2, "num_position_embeddings": 2304, "deepstack_visual_indexes": [8, 16, 24]},
      "audio_config": {"d_model": 1280, "encoder_layers": 32, "encoder_ffn_dim": 5120, "num_mel_bins": 128, "output_dim": 2048}}})",
                                   "omni.json");
  CHECK(m.num_layers() == 48);
  REQUIRE(m.moe);
  CHECK(m.moe->routed_experts == 128);
  const auto p = count_params(m);
  CHECK(p.total == Approx(30.5e9).epsilon(0.02));  // the Qwen3-30B-A3B language model
  CHECK(p.audio == Approx(32 * (4.0 * 1280 * 1280 + 2.0 * 1280 * 5120)).epsilon(0.05));
  CHECK(p.vision > p.audio);  // the vision tower plus the audio encoder
  bool generic = false;
  for (const auto& a : m.assumptions) generic = generic || a.reason.find("unrecognised architecture") != std::string::npos;
  CHECK(!generic);
}

namespace {
// stepfun-ai/step3's config.json as huggingface.co shows it
// (https://huggingface.co/stepfun-ai/step3/blob/refs%2Fpr%2F2/config.json): the top-level fields and
// text_config as published; its vision_config is left out (not retrieved), so no vision tower.
const char* kStep3Config = R"({
  "architectures": ["Step3VLForConditionalGeneration"],
  "auto_map": {"AutoConfig": "configuration_step3.Step3VLConfig", "AutoModelForCausalLM": "modeling_step3.Step3vForConditionalGeneration"},
  "model_type": "step3_vl",
  "im_end_token": "<im_end>", "im_patch_token": "<im_patch>", "im_start_token": "<im_start>",
  "image_token_len": 169, "patch_token_len": 81, "understand_projector_stride": 2, "projector_bias": false,
  "image_token_id": 128001, "bos_token_id": 0, "eos_token_id": 128805,
  "text_config": {
    "architectures": ["Step3TextForCausalLM"],
    "model_type": "step3_text",
    "hidden_size": 7168,
    "intermediate_size": 18432,
    "num_hidden_layers": 61,
    "max_seq_len": 65536,
    "max_position_embedding": 65536,
    "vocab_size": 128815,
    "torch_dtype": "bfloat16",
    "moe_layers_enum": "4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59",
    "num_attention_heads": 64,
    "num_attention_groups": 1,
    "head_dim": 256,
    "share_q_dim": 2048,
    "moe_num_experts": 48,
    "moe_top_k": 3,
    "moe_intermediate_size": 5120,
    "share_expert_dim": 5120,
    "norm_expert_weight": false,
    "rope_theta": 500000
  }
})";
}  // namespace

TEST_CASE("Step-3: multi-matrix factorization attention with one K/V head and MoE on the layers moe_layers_enum lists") {
  const Model m = import_hf_config(kStep3Config, "step3 config.json");
  for (const auto& a : m.assumptions) CHECK(a.reason.find("unrecognised architecture") == std::string::npos);
  REQUIRE(m.num_layers() == 61);
  REQUIRE(m.blocks.size() == 1);
  const auto& b = m.blocks[0];
  CHECK(b.name == "mfa");
  CHECK(b.kind == AttnKind::gqa);
  CHECK(b.num_heads == 64);
  CHECK(b.num_kv_heads == 1);
  CHECK(b.head_dim == 256);
  CHECK(b.q_lora_rank == 2048);
  CHECK(m.max_context == 65536);
  // qkv_proj 7168 -> 2048 + 256 + 256, inter_norm 2048, wq 2048 -> 64 x 256, o_proj 64 x 256 -> 7168
  CHECK(attention_params(m, b) == 7168.0 * (2048 + 512) + 2048 + 2048.0 * 16384 + 16384.0 * 7168);
  CHECK(attention_replicated_params(m, b) == 7168.0 * (2048 + 512) + 2048);
  // the card's five dense layers: 0-3 and 60 (moe_layers_enum stops at 59)
  REQUIRE(m.moe);
  CHECK(m.moe->first_dense_layers == 4);
  CHECK(m.moe->dense_layers == std::vector<int>{60});
  CHECK(m.moe->routed_experts == 48);
  CHECK(m.moe->experts_per_token == 3);
  CHECK(m.moe->shared_intermediate_size == 5120);
  CHECK(!m.is_moe_layer(3));
  CHECK(m.is_moe_layer(4));
  CHECK(m.is_moe_layer(59));
  CHECK(!m.is_moe_layer(60));
  // huggingface.co/stepfun-ai/step3 model card: Total Parameters (LLM) 316B, Activated Params per Token 38B
  const ParamCounts p = count_params(m);
  CHECK(p.total == Approx(316e9).epsilon(0.02));
  CHECK(p.active == Approx(38e9).epsilon(0.05));
  // the engine caches one K and one V head of 256 per layer, whole on every TP rank
  KvOptions o;
  CHECK(kv_profile(m, o).bytes_per_token == 61 * 2 * 256 * 2);
  o.tp = 8;
  CHECK(kv_profile(m, o).bytes_per_token == 61 * 2 * 256 * 2);
}

TEST_CASE("a Step moe_layers_enum naming no layer is an input error") {
  std::string cfg = kStep3Config;
  cfg.replace(cfg.find("\"4,5,6,"), 7, "\"4,x,6,");
  CHECK_THROWS_AS(import_hf_config(cfg, "step3 config.json"), InputError);
  cfg = kStep3Config;
  cfg.replace(cfg.find("\"4,5,6,"), 7, "\"4,99,6");
  CHECK_THROWS_AS(import_hf_config(cfg, "step3 config.json"), InputError);
}

TEST_CASE("Step 3.5 Flash: 96 heads on the sliding layers, 64 on the full ones, 8 KV heads and MoE from layer 3") {
  const Model m = load("stepfun-ai--Step-3.5-Flash_config.json");
  REQUIRE(m.num_layers() == 45);
  int sliding = 0, full = 0;
  for (int l : m.layers) {
    const auto& b = m.blocks[static_cast<std::size_t>(l)];
    if (b.sliding_window > 0) {
      ++sliding;
      CHECK(b.num_heads == 96);
      CHECK(b.sliding_window == 512);
    } else {
      ++full;
      CHECK(b.num_heads == 64);
    }
    CHECK(b.num_kv_heads == 8);
    CHECK(b.head_dim == 128);
  }
  CHECK(full == 12);  // every 4th layer from 0
  CHECK(sliding == 33);
  REQUIRE(m.moe);
  CHECK(m.moe->first_dense_layers == 3);
  CHECK(m.moe->dense_layers.empty());
  CHECK(m.moe->routed_experts == 288);
  CHECK(m.moe->experts_per_token == 8);
  CHECK(m.mtp_layers == 3);
  // KV: 12 full layers x 8 heads x (128 + 128) x 2 B; the 33 sliding layers the same within 512 tokens
  KvOptions o;
  const KvProfile k = kv_profile(m, o);
  CHECK(k.bytes_per_token == 12 * 8 * 256 * 2);
  double window = 0;
  for (const auto& l : k.layers) window += l.window_bytes_per_token;
  CHECK(window == 33 * 8 * 256 * 2);
}

TEST_CASE("MiMo-7B's MTP layer holds norms, input_proj and one Qwen2 layer, no embedding or head of its own") {
  const Model m = load("aiconfigurator/XiaomiMiMo--MiMo-7B-Base_config.json");
  CHECK(m.mtp_layers == 1);
  CHECK(!m.mtp_own_embeddings);
  const double h = 4096, q = 32 * 128, kv = 8 * 128;
  const double layer = h * q + 2 * h * kv + q * h + (q + 2 * kv + h) + 3 * h * 11008 + 2 * h;  // attention (+ biases), MLP, 2 norms
  const ParamCounts p = count_params(m);
  CHECK(p.mtp == 2 * h * h + 3 * h + layer);
  // DeepSeek V3 keeps its own embedding and head in its MTP layer
  const Model ds = load("deepseek-ai--DeepSeek-V3_config.json");
  CHECK(ds.mtp_own_embeddings);
  CHECK(count_params(ds).mtp == Approx(14e9).epsilon(0.05));
}

TEST_CASE("vLLM's RoPE caches grow with linear scaling and Gemma 3 holds a second one for its sliding layers") {
  // linear_scaling_rope.py: max_position_embeddings x factor rows for the global layers (131,072 x 8),
  // plus the unscaled local rope of the sliding layers (models/gemma3.py)
  CHECK(load("google--gemma-3-4b-it_config.json").rope_cache_positions == 131072 * 8 + 131072);
  CHECK(load("google--gemma-3-27b-it_config.json").rope_cache_positions == 131072 * 8 + 131072);
  // Llama 3 scaling and YaRN keep one cache of max_position_embeddings rows (0 = that default)
  CHECK(load("meta-llama--Llama-3.1-8B-Instruct_config.json").rope_cache_positions == 0);
  CHECK(load("deepseek-ai--DeepSeek-V3_config.json").rope_cache_positions == 0);
}

TEST_CASE("Gemma 1 ties lm_head to the embedding when its config.json gives no tie_word_embeddings") {
  // transformers GemmaConfig defaults tie_word_embeddings to true, and vLLM's GemmaForCausalLM
  // asserts it (model_executor/models/gemma.py @ v0.19.0); the stored Gemma 7B config omits the field
  const Model m = load("google--gemma-7b_config.json");
  CHECK(m.tie_word_embeddings);
  CHECK(m.num_layers() == 28);
  // 8.54 B with the head shared (28 layers of 16 x 256 attention and a 24,576 GeGLU, 256,000 x 3,072
  // embedding); an untied head would add 0.79 B
  CHECK(count_params(m).total == Approx(8.538e9).epsilon(0.002));
}

TEST_CASE("a bitsandbytes 4-bit checkpoint keeps its embeddings and head and stores its linear layers at 4 bits per block of 64") {
  // transformers' BitsAndBytesConfig in the config.json of a pre-quantised checkpoint
  std::string text = slurp("meta-llama--Meta-Llama-3-8B-Instruct_config.json");
  const std::string dq = R"("quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": true, "bnb_4bit_quant_type": "nf4",
      "bnb_4bit_use_double_quant": true, "llm_int8_skip_modules": null}, )";
  const Model m = import_hf_config(std::string(text).insert(text.find('{') + 1, dq), "bnb.json");
  CHECK(m.precision_of(ParamGroup::attention) == "nf4-dq");
  CHECK(m.precision_of(ParamGroup::dense_mlp) == "nf4-dq");
  CHECK(m.precision_of(ParamGroup::embedding) == m.dtype);
  CHECK(m.precision_of(ParamGroup::lm_head) == m.dtype);
  // 4 bits + an 8-bit absmax per 64 + an fp32 one per 256 blocks; without double quantisation fp32 per 64
  CHECK(precision_format("nf4-dq").bits_per_weight == Approx(4.127).epsilon(1e-3));
  const std::string plain = R"("quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": true}, )";
  CHECK(import_hf_config(std::string(text).insert(text.find('{') + 1, plain), "bnb.json").precision_of(ParamGroup::attention) == "nf4");
  const std::string eight = R"("quantization_config": {"quant_method": "bitsandbytes", "load_in_8bit": true}, )";
  CHECK(import_hf_config(std::string(text).insert(text.find('{') + 1, eight), "bnb.json").precision_of(ParamGroup::dense_mlp) == "int8");
  // a skip list that keeps the attention in 16 bits: the attention (and MLA's projections) stay in the model dtype
  const std::string skip =
      R"("quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": true, "llm_int8_skip_modules": ["model.layers.0.self_attn"]}, )";
  const Model s = import_hf_config(std::string(text).insert(text.find('{') + 1, skip), "bnb.json");
  CHECK(s.precision_of(ParamGroup::attention) == s.dtype);
  CHECK(s.precision_of(ParamGroup::latent_proj) == s.dtype);
  CHECK(s.precision_of(ParamGroup::dense_mlp) == "nf4");
  CHECK(weights_as_shipped(s, count_params(s)).bytes > 0);
  const std::string wrong = R"("quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": "yes"}, )";
  CHECK_THROWS_WITH(import_hf_config(std::string(text).insert(text.find('{') + 1, wrong), "bnb.json"),
                    Catch::Contains("quantization_config.load_in_4bit"));
}
