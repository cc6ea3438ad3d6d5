// Engine models against what the engines print for configurations nobody tuned for. The published
// figures are test expectations only; src/ holds the mechanisms (src/engines/).
#include <nlohmann/json.hpp>

#include "support.hpp"

using namespace k3plan_test;
using json = nlohmann::json;

namespace {
json fit_json(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"fit", "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const Run r = run(args);
  INFO(r.err);
  REQUIRE((r.code == 0 || r.code == 1));
  return json::parse(r.out);
}
}  // namespace

// KempnerInstitute/hpc-agentic-recipes recipes/Kimi-K3/h200-4-nodes4-sglang/README.md (@19fd5152):
// SGLang 0.5.16, 16 x H200, TP16 EP16, --kv-cache-dtype bf16, --context-length 262144.
//   default (--mem-fraction-static 0.88):                                 67 requests, 383,223 tokens
//   WIDE=1 (0.90, --mamba-full-memory-ratio 3.2, extra_buffer_lazy):     156 requests, 198,936 tokens
// The recipe measured 102.75 GB (GiB) of weights per GPU; k3plan predicts about 1.3 GiB less, which
// accounts for most of the remaining gap (see the closing note of the engine-models issue).
TEST_CASE("Kimi K3 on 16 x H200 with SGLang 0.5.16: the request cap and token pool the recipe printed, within 5 percent",
          "[engines][sglang][k3]") {
  const std::vector<std::string> base = {
      "-m",   "kimi-k3",          "-g",    "h200", "-n", "16", "--tp", "16", "--ep", "16", "-c", "256k", "--kv-dtype",
      "bf16", "--engine-version", "0.5.16"};
  SECTION("default") {
    auto args = base;
    args.insert(args.end(), {"--mem-fraction-static", "0.88"});
    const json j = fit_json(args);
    CHECK(j.at("engine_version") == "0.5.14");
    CHECK(j.at("per_gpu").at("reported_kv_tokens").get<double>() == Approx(383223).epsilon(0.05));
    CHECK(j.at("per_gpu").at("max_running_requests").get<double>() == Approx(67).epsilon(0.05));
  }
  SECTION("WIDE: more state slots, fewer tokens") {
    auto args = base;
    args.insert(args.end(),
                {"--mem-fraction-static", "0.90", "--mamba-full-memory-ratio", "3.2", "--mamba-radix-cache-strategy", "extra_buffer_lazy"});
    const json j = fit_json(args);
    CHECK(j.at("per_gpu").at("reported_kv_tokens").get<double>() == Approx(198936).epsilon(0.05));
    CHECK(j.at("per_gpu").at("max_running_requests").get<double>() == Approx(156).epsilon(0.05));
  }
}

// sgl-project/sglang docs_new/src/snippets/configs/moonshotai/kimi-k3.jsx @7dafacca49 (the Kimi-K3
// serving cookbook, 2026-07-27), H200 "high-throughput" unified recipe: 2 x 8 H200, --tp-size 16
// --ep-size 16 --mem-fraction-static 0.90 --mamba-radix-cache-strategy extra_buffer_lazy, graph
// batch 256, "-> max_running 98". Out of sample: no constant was set from it. k3plan derives 389
// state slots // 4 (kv_cache_configurator.py _calculate_mamba_ratio: 3 + 1 with the lazy extra
// buffer) = 97 requests; the 1 % gap (about 4 slots of state memory) is not traced.
TEST_CASE("Kimi K3 on 16 x H200 with SGLang main at the cookbook's throughput flags: the request cap it printed within 3 percent",
          "[engines][sglang][k3]") {
  const json j = fit_json({"-m", "kimi-k3", "-g", "h200", "-n", "16", "--tp", "16", "--ep", "16", "--engine", "sglang",
                           "--mem-fraction-static", "0.90", "--mamba-radix-cache-strategy", "extra_buffer_lazy", "--cuda-graph-max-bs", "256"});
  CHECK(j.at("engine_version") == "main");
  CHECK(j.at("per_gpu").at("max_running_requests").get<double>() == Approx(98).epsilon(0.03));
  CHECK(j.at("per_gpu").at("max_running_requests").get<int>() == j.at("per_gpu").at("state_slots").get<int>() / 4);
}

TEST_CASE("SGLang's state pool is the mamba_full_memory_ratio share of the memory left after weights", "[engines][sglang]") {
  // ratio r: state : KV = r : 1 of `rest`; doubling the ratio moves memory from KV to state
  const std::vector<std::string> base = {"-m", "kimi-k3", "-g", "b300", "-n", "8", "--tp", "8", "--ep", "8", "-c", "128k"};
  auto a = base, b = base;
  a.insert(a.end(), {"--mamba-full-memory-ratio", "0.9"});
  b.insert(b.end(), {"--mamba-full-memory-ratio", "1.8"});
  const json ja = fit_json(a), jb = fit_json(b);
  const double rest_a = ja.at("per_gpu").at("kv_pool_bytes").get<double>() + ja.at("per_gpu").at("state_pool_bytes").get<double>();
  CHECK(ja.at("per_gpu").at("state_pool_bytes").get<double>() / rest_a == Approx(0.9 / 1.9).epsilon(0.01));
  CHECK(jb.at("per_gpu").at("state_slots").get<int>() > ja.at("per_gpu").at("state_slots").get<int>());
  CHECK(jb.at("per_gpu").at("kv_tokens").get<long long>() < ja.at("per_gpu").at("kv_tokens").get<long long>());
  // without the radix cache one slot per request, and the slots default to 512 (or the request cap)
  auto c = base;
  c.insert(c.end(), {"--disable-radix-cache"});
  CHECK(fit_json(c).at("per_gpu").at("state_slots") == 512);
}

TEST_CASE("vLLM hybrid models: the attention block grows until one page holds a state, and the groups share one pool", "[engines][vllm]") {
  const json j = fit_json({"-m", "qwen3-next-80b-a3b", "-g", "h100", "-n", "4", "--tp", "4", "--engine", "vllm", "-c", "32k"});
  const json& g = j.at("per_gpu");
  CHECK(g.at("block_size").get<int>() > 16);
  CHECK(g.at("block_size").get<int>() % 16 == 0);
  CHECK(g.at("kv_cache_groups").get<int>() >= 2);
  // a block of the attention page holds at least one state page
  CHECK(g.at("block_size").get<double>() * g.at("kv_bytes_per_token").get<double>() / 12 >=
        g.at("state_bytes_per_sequence").get<double>() / 36 * 0.999);
}

TEST_CASE("fit states the error band of its engine window and model kind, or that none validates it", "[engines][accuracy]") {
  // no vLLM start-up log of a DeepSeek-sparse-attention model in the corpus yet
  const json k3 = fit_json({"-m", "deepseek-v3.2", "-g", "h200", "-n", "8", "--engine", "vllm", "-c", "32k"});
  CHECK(k3.at("accuracy").at("validated") == false);
  CHECK(k3.at("accuracy").at("text").get<std::string>().find("not validated") == 0);
  // dense models on vLLM 0.18-0.19: several out-of-sample logs
  const json llama = fit_json({"-m", "llama-3.1-8b", "-g", "h100", "-n", "1", "--engine", "vllm", "--engine-version", "0.19.0"});
  CHECK(llama.at("accuracy").at("validated") == true);
  CHECK(llama.at("accuracy").at("scope").get<std::string>().find("0.18, dense") != std::string::npos);
  CHECK(llama.at("accuracy").at("logs").get<int>() >= 2);
  CHECK(llama.at("engine_label").get<std::string>().find("vLLM 0.18") == 0);
}

TEST_CASE("SGLang gives DeepSeek sparse attention an fp8 KV cache on Blackwell and 64-token pages when none is given",
          "[engines][sglang][dsa]") {
  // python/sglang/srt/server_args.py (efbc687c2; _set_default_dsa_kv_cache_dtype on main): fp8_e4m3
  // from compute capability 10, the model dtype below it; page_size 64 on CUDA
  const json b200 = fit_json({"-m", "deepseek-v3.2", "-g", "b200", "-n", "8", "-c", "128k"});
  CHECK(b200.at("kv_dtype") == "fp8_e4m3");
  CHECK(b200.at("per_gpu").at("block_size") == 64);
  CHECK(b200.at("kv_cache_tokens").get<long long>() % 64 == 0);
  const json h200 = fit_json({"-m", "deepseek-v3.2", "-g", "h200", "-n", "8", "-c", "128k"});
  CHECK(h200.at("kv_dtype") == "auto");
  CHECK(h200.at("per_gpu").at("block_size") == 64);
  // an explicit dtype wins, and the fp8 cell is about half the bf16 one
  const json bf16 = fit_json({"-m", "deepseek-v3.2", "-g", "b200", "-n", "8", "-c", "128k", "--kv-dtype", "bf16"});
  CHECK(bf16.at("kv_dtype") == "bf16");
  CHECK(b200.at("per_gpu").at("kv_bytes_per_token").get<double>() < 0.7 * bf16.at("per_gpu").at("kv_bytes_per_token").get<double>());
}
