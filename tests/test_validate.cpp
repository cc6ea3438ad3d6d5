// `k3plan validate` with no options: the published engine-accuracy table, as users run it. It must
// show every band of data/validation/log-accuracy.yaml (which tests/test_validate_logs.cpp keeps in
// step with the log corpus), in table and JSON form, and exit 0.
#include <catch2/catch.hpp>
#include <k3plan/engine.hpp>
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
