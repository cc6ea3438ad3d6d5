// The shipped catalogue: every entry loads, required fields are present, parameter counts derived
// from geometry agree with the published totals.
#include <catch2/catch.hpp>
#include <cmath>
#include <k3plan/catalogue.hpp>
#include <k3plan/error.hpp>
#include <k3plan/model_summary.hpp>
#include <k3plan/params.hpp>

#include "support.hpp"

using namespace k3plan;

namespace {
using k3plan_test::cat;
}  // namespace

TEST_CASE("the embedded catalogue holds every GPU and model the issues name") {
  for (const char* g : {"h100", "h200", "b200", "b300", "gb200", "gb300", "mi300x", "mi325x", "mi350x", "mi355x"})
    REQUIRE_NOTHROW(cat().gpu(g));
  for (const char* m :
       {"kimi-k3", "kimi-k2", "deepseek-v3", "deepseek-r1", "deepseek-v3.2", "kimi-linear-48b-a3b", "qwen3-next-80b-a3b", "qwen3-235b-a22b",
        "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "gpt-oss-120b", "glm-4.5", "minimax-m2", "deepseek-v4-pro", "deepseek-v4-flash"})
    REQUIRE_NOTHROW(cat().model(m));
}

TEST_CASE("GPU aliases resolve case-insensitively") {
  CHECK(cat().gpu("H100").id == "h100");
  CHECK(cat().gpu("h100-sxm").id == "h100");
  CHECK(cat().model("deepseek-r1").id == "deepseek-v3");
}

TEST_CASE("an unknown GPU suggests the closest id") {
  try {
    cat().gpu("h20");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("did you mean 'h200'") != std::string::npos);
  }
}

TEST_CASE("every GPU figure carries a source and every assumed one a reason") {
  for (const auto& g : cat().gpus()) {
    INFO(g.id);
    CHECK(!g.source.empty());
    CHECK(g.reported_bytes() > 0.8 * g.nominal_bytes() * 0.9);
    CHECK(g.reported_bytes() <= g.nominal_bytes() * 1.2);
    CHECK(!g.price_date.empty());
    for (const auto& a : g.assumptions) CHECK(!a.reason.empty());
  }
}

TEST_CASE("derived parameter totals are within 2% of the published ones") {
  for (const auto& m : cat().models()) {
    if (!m.published_params_total) continue;
    const auto p = count_params(m);
    const double pub = m.published_params_total->value;
    // "1T" (Kimi K2) and "48B" (Kimi Linear, in its name) are rounded figures; the geometry gives
    // 1.026T and 49.1B
    const double tol = m.id == "kimi-k2" || m.id == "kimi-linear-48b-a3b" ? 0.03 : 0.02;
    INFO(m.id << " derived " << p.total << " published " << pub);
    CHECK(std::abs(p.total - pub) / pub < tol);
  }
}

TEST_CASE("derived active parameters are within 10% of the published ones for MoE models") {
  for (const auto& m : cat().models()) {
    if (!m.published_params_active || !m.moe) continue;
    const auto p = count_params(m);
    const double pub = m.published_params_active->value;
    INFO(m.id << " derived " << p.active << " published " << pub);
    // Qwen3-Next "A3B" is a name, not a count: 3.5B derived
    CHECK(std::abs(p.active - pub) / pub < (m.id == "qwen3-next-80b-a3b" ? 0.2 : 0.1));
  }
}

TEST_CASE("Kimi K3's geometry gives about 2.78T total, 104B active and the measured 1,561 GB checkpoint") {
  const Model& m = cat().model("kimi-k3");
  const auto p = count_params(m);
  CHECK(p.total == Approx(2.78e12).epsilon(0.005));
  CHECK(p.active == Approx(104e9).epsilon(0.02));
  CHECK(p[ParamGroup::routed_experts] == Approx(3.0 * 3072 * 3584 * 896 * 92));
  const double shipped = weights_as_shipped(m, p).bytes + p.vision * 2;
  CHECK(shipped == Approx(1561.0e9).epsilon(0.01));
  CHECK(shipped / 8 / 1e9 == Approx(195).epsilon(0.01));  // about 195 GB per GPU over 8
}

TEST_CASE("DeepSeek-V3 comes out at 671B total and 37B active, Llama-3.1-70B at 70.6B") {
  const auto ds = count_params(cat().model("deepseek-v3"));
  CHECK(ds.total == Approx(671e9).epsilon(0.01));
  CHECK(ds.active == Approx(37e9).epsilon(0.02));
  CHECK(ds.mtp == Approx(14e9).epsilon(0.15));  // HF upload 685B = 671B + 14B MTP
  CHECK(count_params(cat().model("llama-3.1-70b")).total == Approx(70.6e9).epsilon(0.01));
}

TEST_CASE("weight bytes per precision include block scales") {
  const auto p = count_params(cat().model("kimi-k3"));
  CHECK(weights_uniform(p, "mxfp4").bytes == Approx(p.total * 4.25 / 8));
  CHECK(weights_uniform(p, "nvfp4").bytes == Approx(p.total * 4.5 / 8));
  CHECK(weights_uniform(p, "int4-g128").bytes == Approx(p.total * 4.125 / 8));
  CHECK(weights_uniform(p, "fp8-block").bytes > weights_uniform(p, "fp8").bytes);
  CHECK_THROWS_AS(precision_format("fp5"), InputError);
}

TEST_CASE("a model YAML with an unknown key names the file, the line and the field") {
  const std::string yaml =
      "id: x\nname: X\nsource: s\narchitecture:\n  hidden_size: 8\n  vocab_size: 8\n  max_context: 8\n  dense_intermediate_size: 8\n"
      "  attention: {full: {kind: gqa, num_heads: 2, num_kv_heads: 1, head_dim: 4}}\n  layers: [full]\n  hiden_size: 3\n";
  try {
    parse_model_yaml(yaml, "m.yaml");
    FAIL("no error");
  } catch (const InputError& e) {
    const std::string w = e.what();
    CHECK(w.find("m.yaml:11") != std::string::npos);
    CHECK(w.find("architecture.hiden_size") != std::string::npos);
    CHECK(w.find("did you mean 'hidden_size'") != std::string::npos);
  }
}

TEST_CASE("zero, negative and NaN geometry are errors, not crashes") {
  const std::string head =
      "id: x\nname: X\nsource: s\narchitecture:\n  vocab_size: 8\n  max_context: 8\n  dense_intermediate_size: 8\n"
      "  attention: {full: {kind: gqa, num_heads: 2, num_kv_heads: 1, head_dim: 4}}\n  layers: [full]\n";
  CHECK_THROWS_AS(parse_model_yaml(head + "  hidden_size: -8\n", "m.yaml"), InputError);
  CHECK_THROWS_AS(parse_model_yaml(head + "  hidden_size: 0\n", "m.yaml"), InputError);
  CHECK_THROWS_AS(parse_model_yaml(head + "  hidden_size: .nan\n", "m.yaml"), InputError);
  CHECK_THROWS_AS(parse_model_yaml(head + "  hidden_size: 8\n  hidden_size: 9\n", "m.yaml"), InputError);
  CHECK_THROWS_AS(parse_model_yaml("id: [unclosed\n", "m.yaml"), InputError);
  CHECK_NOTHROW(parse_model_yaml(head + "  hidden_size: 8\n", "m.yaml"));
}

TEST_CASE("find_model_spec names a catalogue model or a model file and nothing else", "[catalogue]") {
  const auto k = find_model_spec(k3plan_test::cat(), "kimi-k3");
  REQUIRE(k);
  CHECK(k->id == "kimi-k3");
  CHECK_FALSE(find_model_spec(k3plan_test::cat(), "h100"));  // a GPU id: `show` looks it up next
  const auto imported = find_model_spec(k3plan_test::cat(), std::string(K3PLAN_TEST_DATA) + "/Qwen--Qwen3-8B_config.json");
  REQUIRE(imported);
  CHECK(imported->num_layers() == 36);
  CHECK_THROWS_AS(find_model_spec(k3plan_test::cat(), "no-such-dir/config.json"), InputError);
}

TEST_CASE("layer_summary counts the layers of each attention block", "[catalogue]") {
  const Model& m = k3plan_test::cat().model("llama-3.1-8b");
  CHECK(layer_summary(m) == "32 gqa");
  const std::vector<int> counts = block_layer_counts(m);
  REQUIRE(counts.size() == m.blocks.size());
  int total = 0;
  for (int c : counts) total += c;
  CHECK(total == m.num_layers());
  CHECK(shipped_precision(m) == m.default_precision);
}

TEST_CASE("figure_json carries the reason only for an assumed figure", "[catalogue]") {
  CHECK(figure_json(Figure{80, "datasheet", false, ""}) == nlohmann::json{{"value", 80.0}, {"source", "datasheet"}});
  const nlohmann::json a = figure_json(Figure{1.5, "seed", true, "no published value"});
  CHECK(a["assumed"] == true);
  CHECK(a["reason"] == "no published value");
}
