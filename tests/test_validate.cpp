// The engine-accuracy table (`k3plan validate`): real vLLM / SGLang start-up logs replayed through
// the budget. Every `pieces` case must come within 3 %; V3 within 0.1 %.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <k3plan/catalogue.hpp>
#include <k3plan/error.hpp>
#include <k3plan/validate.hpp>
#include <string>

using namespace k3plan;

namespace {

const Catalogue& catalogue() {
  static const Catalogue c = Catalogue::embedded();
  return c;
}

const Report& embedded_report() {
  static const Report r = run_validate(catalogue(), "");
  return r;
}

const nlohmann::json* find_case(const Report& r, const std::string& id) {
  for (const auto& c : r.data["cases"])
    if (c["id"] == id) return &c;
  return nullptr;
}

}  // namespace

TEST_CASE("validate: the embedded cases load and the catalogue skips them") {
  const Report& r = embedded_report();
  REQUIRE(r.data["cases"].size() >= 20);
  // the validation models are catalogue models too
  CHECK_NOTHROW(catalogue().model("qwen2.5-7b"));
  CHECK_NOTHROW(catalogue().model("deepseek-v2-lite"));
  CHECK_NOTHROW(catalogue().model("qwen3-coder-480b-a35b-fp8"));
  if (std::getenv("K3PLAN_PRINT_VALIDATE")) std::cout << render(r, Format::table) << "\n";
}

TEST_CASE("validate: every pieces case is within 3 percent") {
  const Report& r = embedded_report();
  int pieces = 0;
  for (const auto& c : r.data["cases"]) {
    if (c["mode"] != "pieces") continue;
    ++pieces;
    INFO(c["id"].get<std::string>() << ": measured " << c["measured_value"] << ", predicted " << c["predicted_value"] << ", " << c["note"]);
    CHECK(std::abs(c["error_pct"].get<double>()) <= kPiecesTolerancePct);
    CHECK(c["within_3pct"].get<bool>());
  }
  CHECK(pieces >= 10);
  CHECK(r.data["summary"]["pieces_within_3pct"] == pieces);
  CHECK(r.data["summary"]["pieces_total"] == pieces);
  CHECK(r.exit_code == 0);
}

TEST_CASE("validate: V3 (Llama-3.1-8B, H100, vLLM 0.19) from its logged pieces within 0.1 percent") {
  const auto* v3 = find_case(embedded_report(), "V3");
  REQUIRE(v3 != nullptr);
  CHECK((*v3)["measured_value"].get<double>() == 476016);
  CHECK(std::abs((*v3)["error_pct"].get<double>()) < 0.1);
  CHECK((*v3)["predicted"]["kv_bytes_per_token"][0].get<double>() == 131072);
  const auto* fp8 = find_case(embedded_report(), "V3-fp8");
  REQUIRE(fp8 != nullptr);
  CHECK(std::abs((*fp8)["error_pct"].get<double>()) < 0.1);
  CHECK((*fp8)["predicted"]["kv_bytes_per_token"][0].get<double>() == 65536);
}

TEST_CASE("validate: MLA per-token cost is not split by TP and PP takes the minimum stage (V14)") {
  const auto* v14 = find_case(embedded_report(), "V14");
  REQUIRE(v14 != nullptr);
  CHECK((*v14)["predicted"]["kv_bytes_per_token"][0].get<double>() == 14 * 576 * 2);
  CHECK((*v14)["predicted"]["kv_bytes_per_token"][1].get<double>() == 13 * 576 * 2);
  CHECK(std::abs((*v14)["error_pct"].get<double>()) < 0.1);
}

TEST_CASE("validate: predict cases report an error and a summary without a target") {
  const Report& r = embedded_report();
  int predicts = 0;
  for (const auto& c : r.data["cases"]) {
    if (c["mode"] != "predict") continue;
    ++predicts;
    CHECK(std::isfinite(c["error_pct"].get<double>()));
    CHECK(c["predicted_value"].get<double>() > 0);
  }
  CHECK(predicts >= 5);
  CHECK(r.data["summary"]["predict_total"] == predicts);
  CHECK(r.data["summary"]["predict_median_abs_error_pct"].get<double>() >= 0);
}

TEST_CASE("validate: a pieces case off by more than 3 percent fails the run") {
  const std::string text = R"(cases:
  - id: off
    source: test
    engine: vllm
    model: llama-3.1-8b
    gpu: h100
    layout: {tp: 1}
    flags: {gpu_memory_utilization: 0.95, max_model_len: 16384}
    measured: {kv_tokens: 400000, pool_gib: 58.11}
    mode: pieces
)";
  const Report r = run_validate_text(catalogue(), text, "inline");
  CHECK(r.exit_code == 1);
  CHECK(r.data["summary"]["pieces_within_3pct"] == 0);
  CHECK(r.data["cases"][0]["verdict"] == "MISS");
}

TEST_CASE("validate: malformed cases are input errors") {
  const std::string base = R"(cases:
  - id: x
    source: test
    engine: vllm
    model: llama-3.1-8b
    gpu: h100
    mode: pieces
)";
  // unknown key, with a suggestion
  CHECK_THROWS_AS(run_validate_text(catalogue(), base + "    measured: {kv_tokens: 1, pool_gb: 3}\n", "inline"), InputError);
  // pieces without anything to turn into a pool
  CHECK_THROWS_AS(run_validate_text(catalogue(), base + "    measured: {kv_tokens: 1}\n", "inline"), InputError);
  // SGLang flag on a vLLM case
  CHECK_THROWS_AS(
      run_validate_text(catalogue(), base + "    flags: {mem_fraction_static: 0.9}\n    measured: {kv_tokens: 1, pool_gib: 1}\n", "inline"),
      InputError);
  // unknown GPU
  CHECK_THROWS_AS(run_validate_text(catalogue(), R"(cases:
  - {id: y, source: t, engine: vllm, model: llama-3.1-8b, gpu: h1000, mode: predict, measured: {kv_tokens: 1}}
)",
                                    "inline"),
                  InputError);
}
