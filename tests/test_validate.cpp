// `k3plan validate` with no options: the published engine-accuracy table, as users run it. It must
// show every band of data/validation/log-accuracy.yaml (which tests/test_validate_logs.cpp keeps in
// step with the log corpus), in table and JSON form, and exit 0.
#include <catch2/catch.hpp>
#include <cmath>
#include <k3plan/engine.hpp>
#include <k3plan/error.hpp>
#include <k3plan/log_check.hpp>
#include <string>

#include "support.hpp"

using namespace k3plan;

TEST_CASE("validate with no options prints every accuracy band of the committed table", "[validate]") {
  const auto res = k3plan_test::run({"validate", "--format", "json"});
  REQUIRE(res.code == 0);
  const auto j = nlohmann::json::parse(res.out);
  const auto& table = accuracy_table();
  REQUIRE(!table.empty());
  REQUIRE(j["bands"].size() == table.size());
  for (std::size_t i = 0; i < table.size(); ++i) {
    CHECK(j["bands"][i]["engine"] == table[i].engine);
    CHECK(j["bands"][i]["window"] == table[i].window);
    CHECK(j["bands"][i]["logs"] == table[i].logs);
    CHECK(j["bands"][i]["median_abs_error_pct"].get<double>() == Approx(table[i].median));
  }
}

TEST_CASE("validate's table names both engines and the any-version rows in words", "[validate]") {
  const auto res = k3plan_test::run({"validate"});
  REQUIRE(res.code == 0);
  CHECK(res.out.find("sglang") != std::string::npos);
  CHECK(res.out.find("vllm") != std::string::npos);
  CHECK(res.out.find(" any ") != std::string::npos);
  CHECK(res.out.find("validate --log FILE") != std::string::npos);
}

TEST_CASE("validate's -m without --log is a usage error", "[validate]") {
  const auto res = k3plan_test::run({"validate", "-m", "llama-3.1-8b"});
  CHECK(res.code == 2);
}

TEST_CASE("check_start_up_log is what validate --log prints", "[validate]") {
  const std::string path = std::string(K3PLAN_TEST_DATA) + "/logs/sglang/qwen3-0.6b-fp8-h100-tp1-v0.4.7.post1.log";
  const std::string config = std::string(K3PLAN_TEST_DATA) + "/Qwen--Qwen3-0.6B_config.json";
  LogCheckOptions o;
  o.model = config;
  o.gpu = "h100";
  o.engine_version = "0.4.7.post1";
  const LogCheck c = check_start_up_log(k3plan_test::cat(), k3plan_test::slurp(path), path, o);
  CHECK(c.gpu.id == "h100");
  CHECK(c.settings.engine == Engine::sglang);
  CHECK(c.layout.tp == 1);
  REQUIRE(c.logged_kv_tokens > 0);
  CHECK(c.kv_tokens_error_pct == Approx((static_cast<double>(c.predicted_kv_tokens) - static_cast<double>(c.logged_kv_tokens)) /
                                        static_cast<double>(c.logged_kv_tokens) * 100));
  REQUIRE(!c.terms.empty());
  if (c.explained_by >= 0) {  // the logged term with the largest effect on the pool
    const LogTerm& x = c.terms[static_cast<std::size_t>(c.explained_by)];
    CHECK(x.logged_bytes);
    for (const auto& t : c.terms)
      if (t.logged_bytes && t.term != "kv_pool") CHECK(std::abs(t.pool_effect_bytes) <= std::abs(x.pool_effect_bytes));
  }

  const auto res =
      k3plan_test::run({"validate", "--log", path, "-m", config, "-g", "h100", "--engine-version", "0.4.7.post1", "--format", "json"});
  REQUIRE(res.code == 0);
  const auto j = nlohmann::json::parse(res.out);
  CHECK(j["gpu"] == c.gpu.id);
  CHECK(j["logged"]["kv_cache_tokens"] == c.logged_kv_tokens);
  CHECK(j["predicted"]["kv_cache_tokens"] == c.predicted_kv_tokens);
  CHECK(j["kv_cache_tokens_error_pct"].get<double>() == Approx(c.kv_tokens_error_pct));
  CHECK(j["explained_by"] == (c.explained_by < 0 ? std::string() : c.terms[static_cast<std::size_t>(c.explained_by)].term));
  CHECK(j["terms"].size() == c.terms.size());

  // a log of the other engine than --engine says is refused with the file's name
  o.engine = "vllm";
  CHECK_THROWS_WITH(check_start_up_log(k3plan_test::cat(), k3plan_test::slurp(path), path, o), Catch::Contains("not vllm"));
}

TEST_CASE("gpu_from_log takes the longest GPU name a log line holds", "[validate]") {
  EngineLog log;
  log.lines = {"INFO 06-24 GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1234)", "loading weights"};
  CHECK(gpu_from_log(k3plan_test::cat(), log) == "h100");
  log.lines = {"no device named here"};
  CHECK(gpu_from_log(k3plan_test::cat(), log).empty());
}

TEST_CASE("a log that names no GPU but prints its total memory takes the catalogue GPU of that capacity", "[validate]") {
  std::string why;
  EngineLog log;
  log.total_bytes = 139.72 * 1073741824.0;  // vLLM V0 "total_gpu_memory=139.72GiB"
  CHECK(gpu_from_engine_total(k3plan_test::cat(), log, why) == "h200");
  CHECK_THAT(why, Catch::Contains("139.72 GiB") && Catch::Contains("h200"));
  // parts whose totals the log cannot tell apart (L4 and A10G 22518 MiB, A10 22516): the closest
  // is taken and the others are named
  log.total_bytes = 21.99 * 1073741824.0;
  const std::string small = gpu_from_engine_total(k3plan_test::cat(), log, why);
  CHECK((small == "l4" || small == "a10g" || small == "a10"));
  CHECK_THAT(why, Catch::Contains("also matches"));

  // vLLM V1 prints the total in its DEBUG "worker init memory snapshot" line
  const std::string v1 = std::string(K3PLAN_TEST_DATA) + "/logs/vllm/gemma2-27b-it-h100-tp1-v0190.log";
  const EngineLog parsed = parse_engine_log(k3plan_test::slurp(v1), v1);
  REQUIRE(parsed.total_bytes);
  CHECK(*parsed.total_bytes / 1073741824.0 == Approx(79.19));
  // 79.19 GiB = 81091 MiB: H100 / H800 (81090) and both A100 80GB (81051, 81039) are within the
  // tolerance and their capacities differ by more than the log's 0.01 GiB step: ambiguous
  CHECK(gpu_from_engine_total(k3plan_test::cat(), parsed, why).empty());

  // end to end: the V0 log of 8 x 141 GB cards runs without -g, and says what it assumed
  const std::string path = std::string(K3PLAN_TEST_DATA) + "/logs/vllm/llama31-70b-instruct-141gb-tp8-v064post1.log";
  const std::string config = std::string(K3PLAN_TEST_DATA) + "/meta-llama--Meta-Llama-3.1-70B_config.json";
  const auto res = k3plan_test::run({"validate", "--log", path, "-m", config, "--format", "json"});
  REQUIRE(res.code == 0);
  const auto j = nlohmann::json::parse(res.out);
  CHECK(j["gpu"] == "h200");
  REQUIRE(!j["assumptions"].empty());
  CHECK_THAT(j["assumptions"][0].get<std::string>(), Catch::StartsWith("GPU inferred from the logged total memory 139.72 GiB: h200"));
  const auto text = k3plan_test::run({"validate", "--log", path, "-m", config, "--assumptions"});
  REQUIRE(text.code == 0);
  CHECK_THAT(text.out, Catch::Contains("GPU inferred from the logged total memory 139.72 GiB"));
  // -g still wins, and then nothing is inferred
  const auto named = k3plan_test::run({"validate", "--log", path, "-m", config, "-g", "h20", "--format", "json"});
  REQUIRE(named.code == 0);
  const auto jn = nlohmann::json::parse(named.out);
  CHECK(jn["gpu"] == "h20");
  for (const auto& a : jn["assumptions"]) CHECK_THAT(a.get<std::string>(), !Catch::Contains("GPU inferred"));
}

TEST_CASE("a logged total that matches no catalogue GPU or parts of different capacity leaves the GPU to -g", "[validate]") {
  std::string why;
  EngineLog log;
  CHECK(gpu_from_engine_total(k3plan_test::cat(), log, why).empty());  // no total printed
  log.total_bytes = 50.0 * 1073741824.0;                               // no such card
  CHECK(gpu_from_engine_total(k3plan_test::cat(), log, why).empty());
  CHECK(why.empty());
  // 79.17 GiB = 81070 MiB: within the tolerance of H100 / H800 (81090) and both A100 80GB (81051,
  // 81039), whose capacities differ by more than the log's 0.01 GiB step
  log.total_bytes = 79.17 * 1073741824.0;
  CHECK(gpu_from_engine_total(k3plan_test::cat(), log, why).empty());

  // end to end: the V0 log of 16 GB Turing cards prints 14.56 GiB, the T4 of the validation GPUs;
  // the same log with a total no card has is refused
  const std::string path = std::string(K3PLAN_TEST_DATA) + "/logs/vllm/gemma3-27b-it-16gb-x8-tp8-v082-v0engine.log";
  const std::string config = std::string(K3PLAN_TEST_DATA) + "/google--gemma-3-27b-it_config.json";
  const auto t4 = k3plan_test::run({"validate", "--log", path, "-m", config, "-f", "json"});
  REQUIRE(t4.code == 0);
  CHECK(nlohmann::json::parse(t4.out).at("gpu") == "t4");
  std::string text = k3plan_test::slurp(path);
  for (std::size_t p = text.find("(14.56GiB)"); p != std::string::npos; p = text.find("(14.56GiB)", p)) text.replace(p, 10, "(50.00GiB)");
  k3plan_test::TempDir dir;
  const auto res = k3plan_test::run({"validate", "--log", dir.write("odd-card.log", text), "-m", config});
  CHECK(res.code == 2);
  CHECK_THAT(res.err, Catch::Contains("does not name a catalogue GPU; pass -g"));
}

TEST_CASE("an SGLang log whose lines carry no DP rank is compared as the dp_size-1 run that printed it", "[validate]") {
  // the manifest says --tp 16 --dp 16 --enable-dp-attention, the KV line says "[... TP0]":
  // run_scheduler_process prefixes " DP{dp_rank}" whenever the scheduler has a DP rank (v0.4.6.post2)
  const std::string path = std::string(K3PLAN_TEST_DATA) + "/logs/sglang/deepseek-v3-0324-h100-2x8-tp16-dp16-dpattn-v0.4.6.post2.log";
  const std::string config = std::string(K3PLAN_TEST_DATA) + "/deepseek-ai--DeepSeek-V3_config.json";
  const auto res =
      k3plan_test::run({"validate", "--log", path, "-m", config, "-g", "h100", "--engine-version", "0.4.6.post2", "--format", "json"});
  REQUIRE(res.code == 0);
  const auto j = nlohmann::json::parse(res.out);
  CHECK(j["layout"]["tp"] == 16);
  CHECK(j["layout"]["dp"] == 1);
  CHECK(j["layout"]["dp_attention"] == false);
  REQUIRE(!j["assumptions"].empty());
  CHECK_THAT(j["assumptions"][0].get<std::string>(), Catch::Contains("with no \"DP<n>\"") && Catch::Contains("--dp-size 16"));
  CHECK(std::abs(j["kv_cache_tokens_error_pct"].get<double>()) < 3);

  // lines that do name a DP rank keep the command's DP attention
  std::string text = k3plan_test::slurp(path);
  for (std::size_t p = 0; (p = text.find(" TP0]", p)) != std::string::npos; p += 9) text.replace(p, 5, " DP0 TP0]");
  LogCheckOptions o;
  o.model = config;
  o.gpu = "h100";
  o.engine_version = "0.4.6.post2";
  const LogCheck c = check_start_up_log(k3plan_test::cat(), text, path, o);
  CHECK(c.layout.dp == 16);
  CHECK(c.layout.dp_attention);
}

TEST_CASE("SGLang's --max-total-tokens caps every DP-attention rank's pool", "[validate]") {
  // init_memory_pool: min(profiled, max_total_tokens) @ v0.4.9; the MI300X log prints 131072 on every DP rank
  const std::string path =
      std::string(K3PLAN_TEST_DATA) + "/logs/sglang/deepseek-r1-mi300x-2x8-tp16-dp16-dpattn-ep-maxtotal131072-v0.4.9.log";
  const std::string config = std::string(K3PLAN_TEST_DATA) + "/deepseek-ai--DeepSeek-R1_config.json";
  LogCheckOptions o;
  o.model = config;
  o.gpu = "mi300x";
  o.engine_version = "0.4.9";
  const LogCheck c = check_start_up_log(k3plan_test::cat(), k3plan_test::slurp(path), path, o);
  CHECK(c.settings.max_total_tokens == 131072);
  CHECK(c.layout.dp_attention);
  CHECK(c.predicted_kv_tokens == 131072);
  CHECK(c.logged_kv_tokens == 131072);
  // the cap, not the memory: without it the same ranks profile more tokens
  std::string text = k3plan_test::slurp(path);
  for (std::size_t p; (p = text.find(" --max-total-tokens 131072")) != std::string::npos;) text.erase(p, 26);
  const LogCheck u = check_start_up_log(k3plan_test::cat(), text, path, o);
  CHECK(u.predicted_kv_tokens > 131072);
}

TEST_CASE("an argument repr cut before its closing bracket keeps only the arguments a comma closes", "[validate]") {
  // sglang#11830's stored excerpt ends the ServerArgs line inside chunked_prefill_size ("163 [...]"):
  // the cut value is not read as 163, and the complete arguments before it are kept
  const auto cut = parse_python_pairs("ServerArgs(model_path='Qwen/Qwen2.5-VL-7B-Instruct', mem_fraction_static=0.76, chunked_prefill_size=163 [...]");
  CHECK(cut.at("model_path") == "Qwen/Qwen2.5-VL-7B-Instruct");
  CHECK(cut.at("mem_fraction_static") == "0.76");
  CHECK(cut.count("chunked_prefill_size") == 0);
  const auto cut_dict = parse_python_pairs("{'model': 'm', 'max_model_len': 81");
  CHECK(cut_dict.at("model") == "m");
  CHECK(cut_dict.count("max_model_len") == 0);
  // a closed repr keeps its last argument
  const auto whole = parse_python_pairs("ServerArgs(tp_size=2, chunked_prefill_size=16384)");
  CHECK(whole.at("chunked_prefill_size") == "16384");
  CHECK(whole.at("tp_size") == "2");
}

TEST_CASE("a pasted vLLM V0 excerpt without logger prefixes is read as a V0 start-up with its blocks and weights", "[validate]") {
  // the lines as vllm#10517's comment pastes them (v0.6.4 worker.py / model_runner.py / gpu_executor.py
  // messages without the "INFO ... file.py:N]" prefix); the header lines before them stay comments
  const std::string text =
      "# a comment, as in the corpus header\n"
      "Loading model weights took 14.9888 GB\n"
      "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB peak_torch_memory=17.98GiB "
      "memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=2.89GiB gpu_memory_utilization=0.90\n"
      "# GPU blocks: 1478, # CPU blocks: 2048\n";
  const EngineLog log = parse_engine_log(text, "pasted.log");
  CHECK(log.v0_engine);
  REQUIRE(log.gpu_blocks);
  CHECK(*log.gpu_blocks == 1478);
  REQUIRE(log.weights_bytes);
  CHECK(*log.weights_bytes / 1073741824.0 == Approx(14.9888));
  REQUIRE(log.total_bytes);
  CHECK(*log.total_bytes / 1073741824.0 == Approx(23.58));
  // a V0 0.8 summary without the engine-config line is V0 too (vllm/worker/worker.py prints it, V1 does not)
  const EngineLog v08 = parse_engine_log(
      "INFO 04-09 14:25:03 [worker.py:267] model weights take 0.24GiB; non_torch_memory takes 0.04GiB; PyTorch activation peak "
      "memory takes 0.47GiB; the rest of the memory reserved for KV Cache is 19.00GiB.\n"
      "INFO 04-09 14:25:03 [executor_base.py:112] # cuda blocks: 34595, # CPU blocks: 7281\n",
      "v08.log");
  CHECK(v08.v0_engine);
  REQUIRE(v08.gpu_blocks);
  CHECK(*v08.gpu_blocks == 34595);
  // a V1 log is not
  const std::string v1 = std::string(K3PLAN_TEST_DATA) + "/logs/vllm/gemma2-27b-it-h100-tp1-v0190.log";
  CHECK_FALSE(parse_engine_log(k3plan_test::slurp(v1), v1).v0_engine);
}

TEST_CASE("an arguments line a paste wrapped at a fixed width is read whole, up to the next record", "[validate]") {
  // vllm#5569's paste: the Namespace line cut every 250 columns, inside tokens
  const EngineLog log = parse_engine_log(
      "INFO 06-15 14:33:24 api_server.py:178] args: Namespace(host=None, port=8000, model='/models/M', tr\n"
      "ust_remote_code=False, dtype='half', quantiza\n"
      "tion='bitsandbytes', max_num_seqs=256)\n"
      "WARNING 06-15 14:33:24 config.py:1222] Casting torch.bfloat16 to torch.float16.\n"
      "INFO 06-15 14:34:17 gpu_executor.py:83] # GPU blocks: 2595, # CPU blocks: 2048\n",
      "wrapped.log");
  CHECK(log.arg("quantization", "") == "bitsandbytes");
  CHECK(log.arg("dtype", "") == "half");
  CHECK(log.arg("max_num_seqs", "") == "256");
  REQUIRE(log.gpu_blocks);
  CHECK(*log.gpu_blocks == 2595);
  // an unclosed line stops at the next record: what follows is read as its own line
  const EngineLog cut = parse_engine_log(
      "INFO 06-15 14:33:24 api_server.py:178] args: Namespace(host=None, max_num_seqs=128, dtype='ha\n"
      "INFO 06-15 14:34:17 gpu_executor.py:83] # GPU blocks: 77, # CPU blocks: 2048\n",
      "cut.log");
  CHECK(cut.arg("max_num_seqs", "") == "128");
  REQUIRE(cut.gpu_blocks);
  CHECK(*cut.gpu_blocks == 77);
}

TEST_CASE("V1's start-up summary after the CUDA graphs gives weights, peak activation and non-torch memory", "[validate]") {
  // gpu_worker.py @ v0.10.2, as the Qwen3-235B L40S log prints it
  const EngineLog log = parse_engine_log(
      "(Worker_TP0_EP0 pid=2078) INFO 09-24 20:54:36 [gpu_worker.py:391] Free memory on device (43.93/44.42 GiB) on startup. Desired GPU "
      "memory utilization is (0.9, 39.98 GiB). Actual usage is 27.72 GiB for weight, 1.4 GiB for peak activation, 0.18 GiB for non-torch "
      "memory, and 3.45 GiB for CUDAGraph memory.\n",
      "summary.log");
  REQUIRE(log.weights_bytes);
  REQUIRE(log.activation_bytes);
  REQUIRE(log.non_torch_bytes);
  CHECK(*log.weights_bytes / 1073741824.0 == Approx(27.72));
  CHECK(*log.activation_bytes / 1073741824.0 == Approx(1.4));
  CHECK(*log.non_torch_bytes / 1073741824.0 == Approx(0.18));
  CHECK_FALSE(log.sampler_native);
  // the sampler's fallback warning (topk_topp_sampler.py @ v0.10.2) marks the native sort
  CHECK(parse_engine_log("WARNING 09-24 20:46:11 [topk_topp_sampler.py:69] FlashInfer is not available. Falling back to the PyTorch-native "
                         "implementation of top-p & top-k sampling. For the best performance, please install FlashInfer.\n"
                         "INFO 09-24 20:53:41 [kv_cache_utils.py:864] GPU KV cache size: 238,208 tokens\n",
                         "w.log")
            .sampler_native);
}

TEST_CASE("a vLLM log whose args line is missing takes gpu_memory_utilization from the CUDA-graph advisory line", "[validate]") {
  // the wording of v1/worker/gpu_worker.py determine_available_memory @ v0.19.0 (profiling off) and of
  // the 0.21+ line (profiling on); both quote cache_config.gpu_memory_utilization
  const EngineLog v019 = parse_engine_log(
      "INFO 04-07 15:59:02 [gpu_worker.py:470] In v0.19, CUDA graph memory profiling will be enabled by default "
      "(VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1) ... increase --gpu-memory-utilization from 0.9500 to 0.9526 to maintain "
      "the same effective KV cache size.\n"
      "INFO 04-07 15:59:03 [kv_cache_utils.py:1319] GPU KV cache size: 307,184 tokens\n",
      "advisory.log");
  CHECK(v019.arg("gpu_memory_utilization") == "0.9500");
  CHECK(v019.args_from == "CUDA-graph advisory line");
  const EngineLog v024 = parse_engine_log(
      "(EngineCore pid=1878) INFO 07-09 21:29:51 [gpu_worker.py:523] CUDA graph memory profiling is enabled (default since "
      "v0.21.0). The current --gpu-memory-utilization=0.8500 is equivalent to --gpu-memory-utilization=0.8299 without CUDA "
      "graph memory profiling.\n"
      "(EngineCore pid=1878) INFO 07-09 21:29:51 [kv_cache_utils.py:2146] GPU KV cache size: 223,152 tokens\n",
      "advisory24.log");
  CHECK(v024.arg("gpu_memory_utilization") == "0.8500");
  // an args line wins over the advisory
  const EngineLog both = parse_engine_log(
      "(APIServer pid=1) INFO 04-22 00:52:29 [utils.py:233] non-default args: {'model': 'm', 'gpu_memory_utilization': 0.95}\n"
      "INFO 04-07 15:59:02 [gpu_worker.py:470] In v0.19, CUDA graph memory profiling will be enabled by default ... increase "
      "--gpu-memory-utilization from 0.9000 to 0.9526 to maintain the same effective KV cache size.\n"
      "INFO 04-07 15:59:03 [kv_cache_utils.py:1319] GPU KV cache size: 307,184 tokens\n",
      "both.log");
  CHECK(both.arg("gpu_memory_utilization") == "0.95");
  CHECK(both.args_from == "non-default args");
}

namespace {
// A vLLM V1 start-up excerpt with only the engine-config line and the KV lines, as pasted in
// issues and documents: `head` goes before the engine-config line, `compilation` is its
// compilation_config, `extra` sits among its other fields.
std::string v1_excerpt(const std::string& version, const std::string& head, const std::string& compilation, const std::string& extra = "") {
  return head + "(EngineCore pid=1) INFO 04-07 15:56:59 [core.py:105] Initializing a V1 LLM engine (v" + version +
         ") with config: model='meta-llama/Llama-3.1-8B-Instruct', dtype=torch.bfloat16, max_seq_len=8192, tensor_parallel_size=1, " +
         extra + "kv_cache_dtype=auto, compilation_config=" + compilation +
         "\n(EngineCore pid=1) INFO 04-07 15:59:03 [kv_cache_utils.py:1319] GPU KV cache size: 476,016 tokens\n";
}
LogCheck check_excerpt(const std::string& text, const std::string& version) {
  LogCheckOptions o;
  o.model = "llama-3.1-8b";
  o.gpu = "h100";
  o.engine_version = version;
  return check_start_up_log(k3plan_test::cat(), text, "excerpt.log", o);
}
bool says(const LogCheck& c, const std::string& what) {
  for (const auto& a : c.assumptions)
    if (a.find(what) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST_CASE("a vLLM log without an args line takes max_num_seqs from the CUDA-graph capture sizes it prints", "[validate]") {
  // vllm/config/vllm.py _set_cudagraph_sizes: with no sizes given the largest is min(2 x max_num_seqs, 512),
  // so a largest size of 16 (the next size of the list being 24) means max_num_seqs 8-11
  const std::string sizes = "{\"level\": 3, \"cudagraph_capture_sizes\": [16, 8, 4, 2, 1], \"max_cudagraph_capture_size\": 16}";
  const LogCheck small = check_excerpt(v1_excerpt("0.19.0", "", sizes), "0.19.0");
  CHECK(small.settings.max_num_seqs == 11);
  CHECK(small.fit.max_num_seqs == 11);
  CHECK(says(small, "max_num_seqs 11 from the logged CUDA-graph capture sizes"));
  // a paste that cut the dict keeps the bare list
  CHECK(check_excerpt(v1_excerpt("0.19.0", "", "{...}, ", "cudagraph_capture_sizes=[1, 2, 4], "), "0.19.0").settings.max_num_seqs == 3);
  // the default sizes (up to 512) bound nothing: the H100 default of 1024 sequences stays
  const std::string full = "{\"cudagraph_capture_sizes\": [512, 496, 480], \"max_cudagraph_capture_size\": 512}";
  const LogCheck dflt = check_excerpt(v1_excerpt("0.19.0", "", full), "0.19.0");
  CHECK(dflt.settings.max_num_seqs == 0);
  CHECK(dflt.fit.max_num_seqs == 1024);
  // the smaller profile batch leaves a larger pool: the sampler's logits of 11 sequences, not 1024
  CHECK(small.predicted_kv_tokens > dflt.predicted_kv_tokens);
}

TEST_CASE("the capture sizes say nothing of max_num_seqs where an args line, speculative decoding or the version rules it out",
          "[validate]") {
  const std::string sizes = "{\"cudagraph_capture_sizes\": [1, 2, 4, 8, 16]}";
  // an args line gives max_num_seqs or leaves the default, and small sizes there were set by hand
  const LogCheck args = check_excerpt(
      v1_excerpt("0.19.0", "(APIServer pid=1) INFO 04-07 15:56:49 [utils.py:233] non-default args: {'model': 'm', 'cuda_graph_sizes': [16]}\n",
                 sizes),
      "0.19.0");
  CHECK(args.settings.max_num_seqs == 0);
  CHECK(args.fit.max_num_seqs == 1024);
  CHECK_FALSE(says(args, "CUDA-graph capture sizes"));
  // speculative decoding multiplies the largest size by its query length
  CHECK(check_excerpt(v1_excerpt("0.19.0", "", sizes, "speculative_config=SpeculativeConfig(method='mtp', num_spec_tokens=3), "), "0.19.0")
            .settings.max_num_seqs == 0);
  // 0.9.1 and 0.9.2 capture up to 512 whatever max_num_seqs is (PR #20628 came with 0.10.0); their window does not infer
  CHECK(check_excerpt(v1_excerpt("0.9.2", "", sizes), "0.9.2").settings.max_num_seqs == 0);
}

TEST_CASE("a pasted launch script's variables are expanded from the assignments the log shows, and an unset one is refused", "[validate]") {
  // the shape of sgl-project/sglang issue #7212: the script is pasted with its variables, then its output
  const std::string script =
      "GPU_NUM=4\n"
      "export FRACTION=\"0.6\"\n"
      "python -m sglang.launch_server --model-path /m/Qwen3-30B-A3B --tp-size $GPU_NUM --mem-fraction-static ${FRACTION} "
      "--host '$HOST'\n";
  const std::string output =
      "[2025-06-12 22:41:36 TP0] Load weight begin. avail mem=46.74 GB\n"
      "[2025-06-12 22:42:10 TP0] max_total_num_tokens=600317, chunked_prefill_size=8192, max_prefill_tokens=16384, "
      "max_running_requests=128, context_len=40960, available_gpu_mem=16.84 GB\n";
  LogCheckOptions o;
  o.model = "llama-3.1-8b";
  o.gpu = "h100";
  o.engine_version = "0.4.7";
  const LogCheck c = check_start_up_log(k3plan_test::cat(), script + output, "script.log", o);
  CHECK(c.layout.tp == 4);
  // without the assignment the flag's value is unknown: a usage error naming it, not the default TP1
  std::string message;
  try {
    (void)check_start_up_log(k3plan_test::cat(), script.substr(script.find('\n') + 1) + output, "script.log", o);
  } catch (const k3plan::InputError& e) {
    message = e.what();
  }
  CHECK_THAT(message, Catch::Contains("script.log") && Catch::Contains("--tp-size $GPU_NUM"));
  // a default in the expansion, a variable SGLang's pool cap reads, a flag that does not change the
  // memory left unset (--port: not refused), and an apostrophe inside double quotes
  const std::string more =
      "MAXT=100000\n"
      "python -m sglang.launch_server --model-path /m --tp-size ${TP:-2} --max-total-tokens $MAXT --port $PORT "
      "--served-model-name \"it's\"\n";
  const LogCheck c2 = check_start_up_log(k3plan_test::cat(), more + output, "script2.log", o);
  CHECK(c2.layout.tp == 2);
  CHECK(c2.predicted_kv_tokens <= 100000);
  // with the engine's own arguments line the command only fills in: an unreadable value there is not a guess
  const std::string with_args =
      "python -m sglang.launch_server --model-path /m --tp-size $UNSET\n"
      "[2025-06-12 22:41:30] server_args=ServerArgs(model_path='/m', tp_size=4, mem_fraction_static=0.6)\n" +
      output;
  CHECK(check_start_up_log(k3plan_test::cat(), with_args, "script3.log", o).layout.tp == 4);
  // a hostile script: a 500-character value used 5,000 times would make a 2.5 MB command; refused, not built
  std::string bomb = "X=" + std::string(500, 'a') + "\npython -m sglang.launch_server --model-path /m";
  for (int i = 0; i < 5000; ++i) bomb += " $X";
  std::string refused;
  try {
    (void)check_start_up_log(k3plan_test::cat(), bomb + "\n" + output, "bomb.log", o);
  } catch (const k3plan::InputError& e) {
    refused = e.what();
  }
  CHECK_THAT(refused, Catch::Contains("bomb.log") && Catch::Contains("expands beyond 1 MiB"));
}
