// Per-GPU budgets, engine rules and the smallest layout: the fit calculator.
#include <catch2/catch.hpp>
#include <k3plan/budget.hpp>
#include <k3plan/engine.hpp>
#include <k3plan/engine_version.hpp>
#include <k3plan/catalogue.hpp>
#include <k3plan/error.hpp>
#include <k3plan/kv.hpp>
#include <k3plan/layout.hpp>
#include <k3plan/units.hpp>

#include "support.hpp"

using namespace k3plan;

namespace {
using k3plan_test::cat;
EngineSettings engine(Engine e) {
  EngineSettings s;
  s.engine = e;
  return s;
}
}  // namespace

TEST_CASE("every rank's budget sums exactly to the total memory the engine sees") {
  for (const char* model : {"kimi-k3", "deepseek-v3", "llama-3.1-70b", "qwen3-next-80b-a3b", "gpt-oss-120b"}) {
    for (const char* gpu : {"h100", "h200", "b300", "mi355x"}) {
      for (Engine e : {Engine::sglang, Engine::vllm}) {
        const Model& m = cat().model(model);
        const Gpu& g = cat().gpu(gpu);
        for (const auto& l : candidate_layouts(m, g, e, 8)) {
          const FitResult f = evaluate_fit(m, g, l, engine(e), 8192, 4);
          for (const auto& b : f.ranks) {
            INFO(model << " on " << gpu << " " << to_string(e) << " TP" << l.tp << " PP" << l.pp << " stage " << b.stage);
            CHECK(b.sum() == Approx(g.engine_bytes()).epsilon(1e-12));
          }
        }
      }
    }
  }
}

TEST_CASE("GPUs equal the product of the parallel degrees for every suggested layout") {
  const Model& m = cat().model("deepseek-v3");
  const Gpu& g = cat().gpu("h200");
  for (int n : {8, 16, 32}) {
    for (const auto& l : candidate_layouts(m, g, Engine::vllm, n)) CHECK(l.tp * l.pp * l.dp == n);
    for (const auto& l : candidate_layouts(m, g, Engine::sglang, n)) CHECK(l.tp * l.pp == n);
  }
}

TEST_CASE("one 8 x B200 node cannot hold Kimi K3, while 8 x B300 and 8 x MI355X hold four 128k users at TP8 without DCP") {
  // SGLang gives the KDA state pool 0.9 / 1.9 of the memory after weights (handle_max_mamba_cache)
  // and keeps the MLA cache whole on every rank without DCP: about 4.8 full-length users at bf16
  const Model& m = cat().model("kimi-k3");
  Layout tp8;
  tp8.tp = 8;
  tp8.ep = 8;
  for (Engine e : {Engine::sglang, Engine::vllm}) {
    CHECK_FALSE(evaluate_fit(m, cat().gpu("b200"), tp8, engine(e), 8192, 1).fits);
    const FitResult b300 = evaluate_fit(m, cat().gpu("b300"), tp8, engine(e), 131072, 4);
    CHECK(b300.fits);
    CHECK(b300.max_users >= 4);
    CHECK(evaluate_fit(m, cat().gpu("mi355x"), tp8, engine(e), 131072, 4).fits);
  }
}

TEST_CASE("the search never suggests a layout an engine would refuse") {
  for (const auto& m : cat().models()) {
    const FitResult f = search_fit(m, cat().gpu("h200"), engine(Engine::sglang), 8192, 1, 64);
    if (!f.fits) continue;
    INFO(m.id);
    CHECK(layout_refusals(m, cat().gpu("h200"), Engine::sglang, f.layout).empty());
  }
}

TEST_CASE("engine rules refuse in the engine's own words") {
  const Model& llama = cat().model("llama-3.1-70b");
  const Gpu& h100 = cat().gpu("h100");
  Layout l;
  l.tp = 3;
  auto r = layout_refusals(llama, h100, Engine::vllm, l);
  REQUIRE_FALSE(r.empty());
  CHECK(r.front() == "Total number of attention heads (64) must be divisible by tensor parallel size (3).");
  Layout ep;
  ep.tp = 8;
  ep.ep = 8;
  CHECK_FALSE(layout_refusals(llama, h100, Engine::vllm, ep).empty());  // EP on a dense model
  const Model& ds = cat().model("deepseek-v3");
  Layout bad_ep;
  bad_ep.tp = 8;
  bad_ep.ep = 3;
  CHECK_FALSE(layout_refusals(ds, h100, Engine::sglang, bad_ep).empty());
  Layout dp;
  dp.tp = 16;
  dp.dp = 2;
  const auto r2 = layout_refusals(ds, h100, Engine::sglang, dp);
  CHECK(std::find(r2.begin(), r2.end(), "multi-node data parallel is not supported unless dp attention!") != r2.end());
  // fp8 block-quantised experts: 2048 / 32 = 64 is not a multiple of 128 without EP
  Layout tp32;
  tp32.tp = 32;
  tp32.ep = 1;
  CHECK_FALSE(layout_refusals(ds, h100, Engine::sglang, tp32).empty());
}

TEST_CASE("SGLang 0.5.3-0.5.9 default mem_fraction_static follows server_args for H200 TP8 (0.897) and H100 TP8 (0.818)") {
  Layout l;
  l.tp = 8;
  const Gpu& h200 = cat().gpu("h200");
  const Gpu& h100 = cat().gpu("h100");
  CHECK(sglang_default_mem_fraction(h200, l, sglang_default_chunked_prefill(h200), sglang_default_cuda_graph_max_bs(h200, 8), "0.5.5") ==
        Approx(0.897));
  CHECK(sglang_default_mem_fraction(h100, l, sglang_default_chunked_prefill(h100), sglang_default_cuda_graph_max_bs(h100, 8), "0.5.5") ==
        Approx(0.818));
  Layout dpa = l;
  dpa.dp = 8;
  dpa.dp_attention = true;
  CHECK(sglang_default_mem_fraction(h200, dpa, 8192, 512, "0.5.5") == Approx(0.769));
}

TEST_CASE("SGLang from 0.5.10 reserves the prefill CUDA graphs too: 58 sizes x 8 MiB at 8192 tokens") {
  Layout l;
  l.tp = 8;
  // 512 + 8192 x 1.5 + 512 x 2 + 1024 + 58 x 8 = 15,312 MiB of 143,771 (H200: 0.8935) and 81,559 (H100)
  CHECK(sglang_default_mem_fraction(cat().gpu("h200"), l, 8192, 512, "0.5.18") == Approx(0.893));
  CHECK(sglang_default_mem_fraction(cat().gpu("h100"), l, 8192, 512, "0.5.18") == Approx(0.812));
  // 0.4.0-0.4.5: a table by TP size
  CHECK(sglang_default_mem_fraction(cat().gpu("h100"), l, 8192, 512, "0.4.3") == Approx(0.81));
  // 0.4.7.post1 at TP1 on H100: the 0.874 an SGLang 0.4.7.post1 log prints as its
  // mem_fraction_static (tests/data/logs/sglang/qwen3-0.6b-fp8-h100-tp1-v0.4.7.post1.log)
  CHECK(sglang_default_mem_fraction(cat().gpu("h100"), Layout{}, 8192, 160, "0.4.7.post1") == Approx(0.874));
  // 0.4.8-0.5.2: 9.5 GiB + P/2 GiB on an 80 GB card
  CHECK(sglang_default_mem_fraction(cat().gpu("h100"), l, 8192, 512, "0.5.2") ==
        Approx(std::round((81559 - 13.5 * 1024) / 81559 * 1000) / 1000));
}

// vllm/engine/arg_utils.py _set_default_args_v1: from 0.9.0 an A100 gets the small batch defaults
// whatever its memory (tests/data/logs/vllm/gpt-oss-120b-a100-tp4-ray-v01011.log: 2048 tokens)
TEST_CASE("vLLM gives an 80 GB A100 the small batch defaults from 0.9.0 on and an H100 the large ones") {
  EngineSettings s;
  s.engine = Engine::vllm;
  auto d = [&](const char* version, const char* gpu) {
    return engine_model(Engine::vllm, version).defaults(Model{}, cat().validation_gpu(gpu), Layout{}, s, 1, 0);
  };
  CHECK(d("0.10.1.1", "a100-80gb").max_num_batched_tokens == 2048);
  CHECK(d("0.10.1.1", "a100-80gb").max_num_seqs == 256);
  CHECK(d("v0.9.0", "a100-80gb").max_num_batched_tokens == 2048);
  CHECK(d("main", "a100-80gb").max_num_seqs == 256);
  CHECK(d("0.8.5", "a100-80gb").max_num_batched_tokens == 8192);
  CHECK(d("0.10.1.1", "h100").max_num_batched_tokens == 8192);
  CHECK(d("0.10.1.1", "h100").max_num_seqs == 1024);
}

TEST_CASE("an engine release maps to the window that covers it, and an unknown one lists the windows") {
  CHECK(engine_model(Engine::vllm, "0.10.1.1").version().id == "0.9.1");
  CHECK(engine_model(Engine::vllm, "v0.9.0").version().id == "0.9.0");
  CHECK(engine_model(Engine::vllm, "0.8.3").version().id == "0.8");
  CHECK(engine_model(Engine::vllm, "0.8.4").version().id == "0.8.4");
  CHECK(engine_model(Engine::vllm, "0.8.5.post1").version().id == "0.8.5");
  CHECK(engine_model(Engine::vllm, "v0.9.2").version().id == "0.9.1");
  CHECK(engine_model(Engine::sglang, "0.5.8.post1").version().id == "0.5.8");
  CHECK(engine_model(Engine::sglang, "0.5.7").version().id == "0.5.6");
  CHECK(engine_model(Engine::sglang, "0.5.5.post3").version().id == "0.5.3");
  // the speculative verify states move to a reserve at v0.5.8 and into the joint solve at v0.5.13
  CHECK(engine_model(Engine::sglang, "0.5.7").version().spec_verify_states == "per_slot");
  CHECK(engine_model(Engine::sglang, "0.5.8").version().spec_verify_states == "reserve_first");
  CHECK(engine_model(Engine::sglang, "0.5.12").version().spec_verify_states == "reserve_first");
  CHECK(engine_model(Engine::sglang, "0.5.13").version().spec_verify_states == "joint");
  // SGLang's reserved-by-GPU-class default landed between the 0.4.7 and 0.4.7.post1 bumps
  CHECK(engine_model(Engine::sglang, "0.4.7").version().id == "0.4.7");
  CHECK(engine_model(Engine::sglang, "0.4.7.post1").version().id == "0.4.8");
  // post_load_weights keeps bf16 w_kc / w_vc on CUDA from 5e02330137, first in v0.4.6.post3
  CHECK(engine_model(Engine::sglang, "0.4.6.post2").version().id == "0.4.6");
  CHECK(engine_model(Engine::sglang, "0.4.6.post3").version().id == "0.4.6.post3");
  CHECK(engine_model(Engine::sglang, "0.4.6.post5").version().id == "0.4.6.post3");
  CHECK(engine_model(Engine::sglang, "main").version().id == "main");
  CHECK(engine_model(Engine::sglang).version().id == engine_versions(Engine::sglang).back().id);
  CHECK_THROWS_AS(engine_model(Engine::vllm, "0.1.0"), InputError);
  CHECK_THROWS_WITH(engine_model(Engine::sglang, "banana"), Catch::Contains("modelled:"));
}

TEST_CASE("vLLM floors the KV tokens to its block size") {
  const FitResult f = evaluate_fit(cat().model("llama-3.1-8b"), cat().gpu("h100"), Layout{}, engine(Engine::vllm), 16384, 1);
  CHECK(f.kv_cache_tokens % 16 == 0);
  CHECK(f.kv_cache_tokens > 0);
}

TEST_CASE("MLA KV is replicated on every TP rank, so TP does not raise the tokens per GPU") {
  const Model& ds = cat().model("deepseek-v3");
  KvOptions one, eight;
  eight.tp = 8;
  CHECK(kv_profile(ds, one).bytes_per_token == kv_profile(ds, eight).bytes_per_token);
  CHECK(kv_profile(ds, one).bytes_per_token == 70272);
}

TEST_CASE("pipeline stages take the minimum over stages") {
  Layout pp;
  pp.tp = 4;
  pp.pp = 2;
  pp.ep = 1;
  const FitResult f = evaluate_fit(cat().model("llama-3.1-70b"), cat().gpu("h100"), pp, engine(Engine::vllm), 8192, 1);
  REQUIRE(f.ranks.size() == 2);
  CHECK(f.limiting.kv_tokens == std::min(f.ranks[0].kv_tokens, f.ranks[1].kv_tokens));
}

TEST_CASE("a CPU offload budget moves decoder layers only: embedding and lm_head stay on the GPU however large the budget") {
  const Model& m = cat().model("llama-3.1-8b");
  EngineSettings s = engine(Engine::sglang);
  const FitResult on_gpu = evaluate_fit(m, cat().gpu("h100"), Layout{}, s, 8192, 1);
  s.cpu_offload_bytes = 1000.0 * 1024 * 1024 * 1024;  // more than the whole model
  const FitResult offloaded = evaluate_fit(m, cat().gpu("h100"), Layout{}, s, 8192, 1);
  // Llama-3.1-8B: 128,256 x 4,096 embedding and an untied lm_head of the same size, bf16, plus the
  // final norm and the rotary cache where the engine keeps one
  const double embed_and_head = 2.0 * 128256 * 4096 * 2;
  CHECK(offloaded.limiting.weights_bytes >= embed_and_head);
  CHECK(offloaded.limiting.weights_bytes < embed_and_head * 1.05);
  CHECK(offloaded.limiting.weights_bytes < on_gpu.limiting.weights_bytes / 5);
  // a small budget takes exactly that much off
  s.cpu_offload_bytes = 4.0 * 1024 * 1024 * 1024;
  CHECK(evaluate_fit(m, cat().gpu("h100"), Layout{}, s, 8192, 1).limiting.weights_bytes ==
        Approx(on_gpu.limiting.weights_bytes - s.cpu_offload_bytes));
}

TEST_CASE("a context beyond the model maximum does not fit and says so") {
  const FitResult f =
      evaluate_fit(cat().model("qwen3-235b-a22b"), cat().gpu("b300"), Layout{8, 8, 1, 1, false}, engine(Engine::sglang), 1048576, 1);
  CHECK_FALSE(f.fits);
  bool named = false;
  for (const auto& r : f.reasons) named = named || r.find("maximum") != std::string::npos;
  CHECK(named);
}

TEST_CASE("decode context parallel splits the MLA cache over its ranks and is refused for GQA models") {
  const Model& k3 = cat().model("kimi-k3");
  KvOptions o;
  o.tp = 8;
  o.dcp = 8;
  CHECK(kv_profile(k3, o).bytes_per_token == 27648 / 8);
  Layout l;
  l.tp = 8;
  l.dcp = 8;
  CHECK_FALSE(layout_refusals(cat().model("llama-3.1-70b"), cat().gpu("h100"), Engine::vllm, l).empty());
  Layout bad = l;
  bad.dcp = 3;
  bad.ep = 8;
  CHECK_FALSE(layout_refusals(k3, cat().gpu("b300"), Engine::sglang, bad).empty());
}

TEST_CASE("Kimi K3 on one B300 node at 128k for 32 users: TP8 with DCP8, as the SGLang cookbook's balanced recipe") {
  EngineSettings s;
  const FitResult f = search_fit(cat().model("kimi-k3"), cat().gpu("b300"), s, 131072, 32);
  REQUIRE(f.fits);
  CHECK(f.gpus == 8);
  CHECK(f.layout.tp == 8);
  CHECK(f.layout.dcp == 8);
  CHECK(f.sglang_flags.find("--dcp-size 8") != std::string::npos);
  CHECK(f.vllm_flags.find("--decode-context-parallel-size 8") != std::string::npos);
}

TEST_CASE("an expert-parallel degree above TP on an fp8-block model is refused, not a crash") {
  Layout l;
  l.tp = 4;
  l.ep = 8;
  const auto r = layout_refusals(cat().model("deepseek-v3"), cat().gpu("h200"), Engine::sglang, l);
  CHECK_FALSE(r.empty());
  Layout huge;
  huge.tp = 65536;
  huge.pp = 65536;
  huge.dp = 65536;
  CHECK_FALSE(layout_refusals(cat().model("deepseek-v3"), cat().gpu("h200"), Engine::vllm, huge).empty());
}

TEST_CASE("SGLang 0.4.6 puts the whole DeepSeek V3 shared expert on every rank and 0.4.7 its TP share") {
  // models/deepseek_v2.py @ v0.4.6.post2: n_share_experts_fusion = tp_size on compute capability
  // >= 9.0 clones the shared expert into the TP-split MoE; v0.4.7 fuses one expert
  const Model m =
      import_hf_config(k3plan_test::slurp(k3plan_test::fs::path(K3PLAN_TEST_DATA) / "deepseek-ai--DeepSeek-V3_config.json"), "v3.json");
  Layout l;
  l.tp = 8;
  l.ep = 1;
  EngineSettings s;
  s.engine = Engine::sglang;
  Gpu sm80 = cat().gpu("h100");
  sm80.compute_capability = 8.0;
  auto weights = [&](const char* version, const Gpu& gpu) {
    return engine_model(Engine::sglang, version).stage_weights_bytes(m, gpu, l, s, 0, m.num_layers(), true, true);
  };
  const double whole_minus_share = 3.0 * 7168 * 2048 * 58 * 7 / 8;  // fp8 bytes, block scales aside
  // (0.4.6.post3 on CUDA: the w_kc / w_vc copies are bf16 there as in 0.4.7)
  CHECK(weights("0.4.6.post3", cat().gpu("h100")) - weights("0.4.7", cat().gpu("h100")) == Approx(whole_minus_share).epsilon(0.001));
  CHECK(weights("0.4.6.post2", cat().gpu("mi300x")) - weights("0.4.7", cat().gpu("mi300x")) == Approx(whole_minus_share).epsilon(0.001));
  CHECK(weights("0.4.6.post3", sm80) == Approx(weights("0.4.7", sm80)));  // below SM90: no fusion
}

TEST_CASE("SGLang keeps w_kc and w_vc of a block-fp8 kv_b_proj in fp8 up to 0.4.6.post2 and in bf16 on CUDA from 0.4.6.post3") {
  // models/deepseek_v2.py post_load_weights: block_quant_to_tensor_quant / DeepGEMM (fp8) @
  // v0.4.6.post2; block_quant_dequant to bf16 on CUDA from 5e02330137 (PR #5662); ROCm stays fp8
  const Model m =
      import_hf_config(k3plan_test::slurp(k3plan_test::fs::path(K3PLAN_TEST_DATA) / "deepseek-ai--DeepSeek-V3_config.json"), "v3.json");
  EngineSettings s;
  s.engine = Engine::sglang;
  auto weights = [&](const char* version, const Gpu& gpu, const Layout& l) {
    return engine_model(Engine::sglang, version).stage_weights_bytes(m, gpu, l, s, 0, m.num_layers(), true, true);
  };
  Layout tp8;
  tp8.tp = 8;
  Layout dpa = tp8;  // DP attention with dp = tp: kv_b_proj whole on every rank
  dpa.dp = 8;
  dpa.dp_attention = true;
  const double kv_b = 512.0 * 128 * (128 + 128);  // kv_lora_rank x heads x (qk_nope + v) per layer
  CHECK(weights("0.4.6.post3", cat().gpu("h100"), tp8) - weights("0.4.6.post2", cat().gpu("h100"), tp8) == Approx(kv_b / 8 * 61));
  CHECK(weights("0.4.6.post3", cat().gpu("h100"), dpa) - weights("0.4.6.post2", cat().gpu("h100"), dpa) == Approx(kv_b * 61));
  CHECK(weights("0.4.6.post3", cat().gpu("mi300x"), dpa) == Approx(weights("0.4.6.post2", cat().gpu("mi300x"), dpa)));
}

TEST_CASE("the KV and state of a model's pipeline stages add up to the whole model's for every catalogue model") {
  for (const auto& m : cat().models()) {
    const int n = static_cast<int>(m.layers.size());
    if (n < 2) continue;
    KvOptions whole;
    const KvProfile all = kv_profile(m, whole);
    // three uneven stages
    KvOptions a, b, c;
    a.last_layer = b.first_layer = n / 3 + 1;
    b.last_layer = c.first_layer = std::max(b.first_layer + 1, 2 * n / 3);
    if (c.first_layer >= n) continue;
    double per_token = 0, state = 0;
    for (const KvOptions* o : {&a, &b, &c}) {
      const KvProfile s = kv_profile(m, *o);
      per_token += s.bytes_per_token;
      state += s.state_bytes_per_sequence;
    }
    INFO(m.id);
    CHECK(per_token == Approx(all.bytes_per_token));
    CHECK(state == Approx(all.state_bytes_per_sequence));
  }
  KvOptions empty;
  empty.first_layer = 3;
  empty.last_layer = 3;
  CHECK_THROWS_AS(kv_profile(cat().model("llama-3.1-8b"), empty), InputError);
  KvOptions past_the_end;
  past_the_end.first_layer = 1000;
  past_the_end.draft_layers = 1;
  CHECK_THROWS_AS(kv_profile(cat().model("llama-3.1-8b"), past_the_end), InputError);
}

namespace {
std::vector<int> stage_counts(Engine e, const std::string& version, int layers, int stages) {
  std::vector<int> out;
  const EngineModel& em = engine_model(e, version);
  for (int st = 0; st < stages; ++st) out.push_back(em.stage_layers(layers, stages, st).count);
  return out;
}
}  // namespace

TEST_CASE("pipeline stages split the layers as each engine version's get_pp_indices does") {
  // vLLM 0.8 on (PR #13839 and tests/distributed/test_pipeline_partition.py): the rest goes to the
  // stages before the last, from the second last backwards
  CHECK(stage_counts(Engine::vllm, "", 61, 4) == std::vector<int>{15, 15, 16, 15});
  CHECK(stage_counts(Engine::vllm, "", 22, 4) == std::vector<int>{5, 6, 6, 5});
  CHECK(stage_counts(Engine::vllm, "", 5, 3) == std::vector<int>{2, 2, 1});
  CHECK(stage_counts(Engine::vllm, "", 3, 2) == std::vector<int>{2, 1});
  CHECK(stage_counts(Engine::vllm, "0.19", 61, 8) == std::vector<int>{7, 7, 8, 8, 8, 8, 8, 7});
  // vLLM before 0.8 and SGLang up to 0.5.5: the last stage takes the rest (SGLang issue #9798:
  // 94 layers at PP8 are 11 x 7 + 17; PR #6666: 61 layers are 7 x 7 + 12)
  CHECK(stage_counts(Engine::vllm, "0.6.4", 61, 4) == std::vector<int>{15, 15, 15, 16});
  CHECK(stage_counts(Engine::sglang, "0.5.2", 94, 8) == std::vector<int>{11, 11, 11, 11, 11, 11, 11, 17});
  CHECK(stage_counts(Engine::sglang, "0.5.5", 61, 8) == std::vector<int>{7, 7, 7, 7, 7, 7, 7, 12});
  // SGLang 0.5.6 on (PR #13977): one extra layer on each of the last L % pp stages
  CHECK(stage_counts(Engine::sglang, "0.5.6", 61, 8) == std::vector<int>{7, 7, 7, 8, 8, 8, 8, 8});
  CHECK(stage_counts(Engine::sglang, "", 93, 2) == std::vector<int>{46, 47});
}

TEST_CASE("the stages of every engine window hold every layer once and in order") {
  for (Engine e : kEngines)
    for (const auto& v : engine_versions(e)) {
      const EngineModel& em = engine_model(e, v.id);
      for (int layers : {1, 2, 7, 61, 93, 94})
        for (int stages = 1; stages <= 16; ++stages) {
          int next = 0, most = 0, least = layers;
          for (int st = 0; st < stages; ++st) {
            const StageLayers s = em.stage_layers(layers, stages, st);
            INFO(to_string(e) << " " << v.id << " " << layers << " layers, stage " << st << " of " << stages);
            CHECK(s.first == next);
            CHECK(s.count >= 0);
            next += s.count;
            most = std::max(most, s.count);
            least = std::min(least, s.count);
          }
          CHECK(next == layers);
          // only the last-takes-the-rest rule leaves stages more than one layer apart
          if (v.pp_layer_split != "last_takes_rest" && layers >= stages) CHECK(most - least <= 1);
        }
      CHECK(em.stage_layers(10, 2, 2).count == 0);
    }
}

TEST_CASE("a fit reusing the stage cache of another context gives what a fresh fit gives for every catalogue model") {
  const Gpu& g = cat().gpu("h200");
  for (Engine e : kEngines)
    for (const auto& m : cat().models()) {
      EngineSettings s;
      s.engine = e;
      Layout l;
      l.tp = 8;
      l.pp = m.num_layers() >= 3 ? 3 : 1;  // an uneven split for most models
      if (m.moe) l.ep = 8;
      StageCache cache;
      const FitResult first = evaluate_fit(m, g, l, s, 32768, 4, FitCommands::none, &cache);
      const FitResult reused = evaluate_fit(m, g, l, s, 2048, 16, FitCommands::none, &cache);
      const FitResult fresh = evaluate_fit(m, g, l, s, 2048, 16, FitCommands::none);
      INFO(to_string(e) << " " << m.id);
      CHECK(cache.weights_bytes.size() == static_cast<std::size_t>(l.pp));
      REQUIRE(reused.ranks.size() == fresh.ranks.size());
      for (std::size_t i = 0; i < fresh.ranks.size(); ++i) {
        CHECK(reused.ranks[i].weights_bytes == fresh.ranks[i].weights_bytes);
        CHECK(reused.ranks[i].kv_pool_bytes == fresh.ranks[i].kv_pool_bytes);
        CHECK(reused.ranks[i].max_sequences == fresh.ranks[i].max_sequences);
      }
      CHECK(reused.max_users == fresh.max_users);
      CHECK(first.ranks.size() == fresh.ranks.size());
    }
}

namespace {
double activation_of(const Model& m, const Gpu& g, const std::string& window, std::int64_t max_seqs, std::int64_t batched, int images,
                     std::int64_t context) {
  EngineSettings s = engine(Engine::vllm);
  s.engine_version = window;
  s.max_num_seqs = max_seqs;
  s.max_num_batched_tokens = batched;
  s.mm_images_per_prompt = images;
  Layout l;
  return evaluate_fit(m, g, l, s, context, 1).limiting.activation_bytes;
}
}  // namespace

TEST_CASE("vLLM V1's profile feeds the largest dummy images through the vision tower: Qwen3.6's 4096 x 4096 image sets the peak") {
  // v1/worker/gpu_model_runner.py profile_run: one encoder batch of budget / item-token images
  // (budget = max(max_num_batched_tokens, item tokens)), capped by max_num_seqs x the per-prompt
  // limit; the peak is max(encoder, language model + pixel values and outputs still held)
  const Model m = resolve_model(cat(), std::string(K3PLAN_TEST_DATA) + "/nvidia--Qwen3.6-35B-A3B-NVFP4_config.json");
  REQUIRE(m.vision.qwen_vl);
  CHECK(m.vision.patches_per_image() == 65536);  // 4096 x 4096 pixels (the assumed max) in 16 x 16 patches
  CHECK(m.vision.tokens_per_image == 16384);     // after the 2 x 2 merge
  const Gpu& g = cat().validation_gpu("rtx-5090");
  const double graphs = engine_model(Engine::vllm, "main").version().cudagraph_estimate_gib * kGiB;
  // per patch: pixel row 3 x 2 x 16 x 16, position embedding 1152 and rotary 72 through the
  // forward, 11 x 1152 at the attention of one block (residual, norm, qkv, q / k copies, rotary
  // outputs, attention and proj outputs), 2 B each: 30,864 B
  const double one_image = 65536.0 * 2 * (1536 + 1152 + 72 + 11 * 1152);
  CHECK(one_image == 65536.0 * 30864);
  // the logged run (max_num_seqs 1, 8192 batched tokens, image limit 2): one image, whose encoder peak sets the activation
  CHECK(activation_of(m, g, "main", 1, 8192, 2, 131072) == Approx(one_image + graphs));
  // a larger budget profiles more images, up to max_num_seqs x the per-prompt limit
  CHECK(activation_of(m, g, "main", 1, 65536, 2, 131072) == Approx(2 * one_image + graphs));
  CHECK(activation_of(m, g, "main", 8, 65536, 2, 131072) == Approx(4 * one_image + graphs));
  // and a context shorter than two images leaves one per prompt
  // (one image, whose encoder phase is then smaller than the language model's 32k-token dummy run)
  CHECK(activation_of(m, g, "main", 1, 32768, 2, 20000) < 2 * one_image + graphs - 0.25 * one_image);
  CHECK(activation_of(m, g, "main", 1, 32768, 2, 131072) == Approx(2 * one_image + graphs));
  // the text-only model: no encoder profile
  Model text = m;
  text.vision = {};
  CHECK(activation_of(text, g, "main", 1, 8192, 2, 131072) < 0.5 * one_image + graphs);
}

TEST_CASE("Gemma 3 at vLLM 0.19's defaults: the sampler sets the peak and the encoder's dummy images and outputs add to it") {
  // 8192 batched tokens / 256 tokens an image = 32 dummy images through SigLIP: a smaller peak than
  // the sampler's logits of 1,024 sequences, but their pixel values and embeddings are still
  // allocated while the language model and the sampler run
  const Model m = resolve_model(cat(), std::string(K3PLAN_TEST_DATA) + "/google--gemma-3-27b-it_config.json");
  REQUIRE(m.vision.known());
  REQUIRE_FALSE(m.vision.qwen_vl);
  Model text = m;
  text.vision = {};
  const Gpu& g = cat().gpu("h100");
  const double with = activation_of(m, g, "0.18", 0, 0, 0, 8192), without = activation_of(text, g, "0.18", 0, 0, 0, 8192);
  const double carry = 32.0 * (3 * 896 * 896 * 2 + 256.0 * static_cast<double>(m.hidden_size) * 2);
  CHECK(with - without == Approx(carry));
  // with 64 sequences the sampler is small and SigLIP's peak (32 x 4,096 patches, 2 x 1152 + 2 x 4304
  // live per patch at the MLP, plus the pixels) is the activation
  const double siglip = 32.0 * 4096 * 2 * (3 * 14 * 14 + 2 * 1152 + 2 * 4304);
  CHECK(activation_of(m, g, "0.18", 64, 0, 0, 8192) == Approx(siglip));
}

TEST_CASE("vLLM's dummy sampler holds what each release's top-k / top-p path allocates per sequence and vocabulary entry") {
  // v1/sample/ops/topk_topp_sampler.py: FlashInfer's sampler in 0.10.x (14 B: bf16 logits, fp32 copy,
  // masked logits, probs), the native sort from 0.11.1 (PR #26859) to 0.16 (38 B: + sorted values,
  // int64 indices, torch's reverse indices, CUB's buffers), Triton in place from 0.17 (PR #33538;
  // the 15 B fitted on the 0.19 logs); 1,024 dummy sequences on an H100 at the default 8192 tokens
  const Model& m = cat().model("llama-3.1-8b");
  const Gpu& g = cat().gpu("h100");
  auto act = [&](const std::string& version) { return activation_of(m, g, engine_model(Engine::vllm, version).version().id, 0, 0, 0, 8192); };
  const double entries = 1024.0 * static_cast<double>(m.vocab_size);
  CHECK(act("0.10.1.1") - act("0.19.0") == Approx(-1 * entries));
  CHECK(act("0.11.0") - act("0.19.0") == Approx(-1 * entries));
  CHECK(act("0.11.1") - act("0.19.0") == Approx(23 * entries));
  CHECK(act("0.13.0") - act("0.19.0") == Approx(23 * entries));
  CHECK(act("0.16.0") - act("0.19.0") == Approx(23 * entries));
  CHECK(act("0.17.1") - act("0.19.0") == Approx(0).margin(1));
}
