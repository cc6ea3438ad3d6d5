// Rent vs API: the seed's figures come out of the calculator.
#include <catch2/catch.hpp>
#include <k3plan/cost.hpp>
#include <k3plan/cost_plan.hpp>
#include <k3plan/report_html.hpp>
#include <nlohmann/json.hpp>

#include "support.hpp"

using namespace k3plan;

TEST_CASE("rental scenarios reproduce the seed table at 2.50 USD per GPU-hour") {
  CHECK(RentalScenario{1, 24, 30, 2.5}.usd_per_month() == Approx(1800));
  CHECK(RentalScenario{8, 4, 30, 2.5}.gpu_hours_per_month() == Approx(960));
  CHECK(RentalScenario{8, 4, 30, 2.5}.usd_per_month() == Approx(2400));
  CHECK(RentalScenario{8, 24, 30, 2.5}.usd_per_month() == Approx(14400));
  CHECK(RentalScenario{32, 24, 30, 2.5}.gpu_hours_per_month() == Approx(23040));
  CHECK(RentalScenario{32, 24, 30, 2.5}.usd_per_month() == Approx(57600));
}

TEST_CASE("8 GPUs always on break even with a 15 USD per million output API at 960 million tokens a month") {
  const ApiRates k3{15.0, 3.0, 0.30};
  CHECK(break_even_output_tokens(14400, k3, 0, 0) == Approx(960e6));
  // prompt-heavy cached traffic makes the API cheaper per output token than uncached traffic,
  // so the break-even needs more volume than the uncached case
  CHECK(break_even_output_tokens(14400, k3, 10, 0.9) > break_even_output_tokens(14400, k3, 10, 0));
}

TEST_CASE("the API bill is the sum of its parts") {
  const ApiBill b = api_bill({15.0, 3.0, 0.30}, 1e9, 5e9, 0.8);
  CHECK(b.total() == Approx(b.output_usd + b.input_hit_usd + b.input_miss_usd));
  CHECK(b.output_usd == Approx(15000));
  CHECK(b.input_hit_usd == Approx(4e9 / 1e6 * 0.30));
  CHECK(b.input_miss_usd == Approx(1e9 / 1e6 * 3.0));
}

TEST_CASE("952 tok/s on an 8-GPU node at 2.50 USD/h is 47.6 tok/s per USD/hour") {
  CHECK(tokens_per_s_per_usd_hour(952, 8, 2.5) == Approx(47.6));
  CHECK(usd_per_million_tokens(952, 8, 2.5) == Approx(2.5 * 1e6 / (3600 * 119)));
  CHECK(usd_per_million_tokens(952, 8, 2.5, 0.5) == Approx(2 * usd_per_million_tokens(952, 8, 2.5)));
}

TEST_CASE("downloading 1.5 TB at 1 GB/s takes about 25 minutes") { CHECK(download_seconds(1.5e12, 1e9) / 60 == Approx(25)); }

TEST_CASE("the tier-2 rule: a 70B model at 4 bits fits an 80 GB accelerator, not a 24 GB one") {
  CHECK(fits_single_accelerator(70e9 * 0.5, 5e9, 80e9));
  CHECK_FALSE(fits_single_accelerator(70e9 * 0.5, 5e9, 24e9));
  CHECK(fits_single_accelerator(7e9 * 0.5, 8e9, 16e9));
}

TEST_CASE("the rent-vs-API chart is a standalone SVG with the crossing marked") {
  const std::string svg = cost_chart_svg(14400, 15.0 / 1e6, "k3 <test> & co");
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("break-even 960M") != std::string::npos);
  CHECK(svg.find("&lt;test&gt; &amp;") != std::string::npos);
}

TEST_CASE("cost rejects negative hours, a zero rate and a cache-hit fraction of 1.5 with exit 2") {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"cost", "--hours-per-day", "-1"}, {"cost", "--rate", "0"}, {"cost", "--cache-hit", "1.5"}, {"cost", "--days", "40"}}) {
    const auto r = k3plan_test::run(args);
    INFO(r.cmdline << ": " << r.err);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("k3plan: error: ", 0) == 0);
  }
}

TEST_CASE("cost with no arguments prints the seed's rental table and the Kimi K3 break-even, with price dates and sources") {
  const auto r = k3plan_test::run({"cost", "-f", "json"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["rental"].size() == 4);
  CHECK(j["rental"][0]["usd_per_month"] == 1800.0);
  CHECK(j["rental"][1]["gpu_hours_per_month"] == 960.0);
  CHECK(j["rental"][2]["usd_per_month"] == 14400.0);
  CHECK(j["rental"][3]["usd_per_month"] == 57600.0);
  CHECK(j["break_even"]["output_tokens_per_month"].get<double>() == Approx(960e6));
  CHECK(j["break_even"]["output_tokens_per_day"].get<double>() == Approx(32e6));
  CHECK(j["api_usd_per_million"]["source"].get<std::string>().find("2026") != std::string::npos);
  const auto t = k3plan_test::run({"cost", "--throughput", "952", "--gpus", "8", "-f", "json"});
  REQUIRE(t.code == 0);
  CHECK(nlohmann::json::parse(t.out)["tokens_per_s_per_usd_hour"].get<double>() == Approx(47.6));
}

TEST_CASE("the break-even table has the output-only row and the input mix with and without cache hits") {
  const ApiRates k3{15.0, 3.0, 0.30};
  const auto only = break_even_table(14400, k3, 0, 0.9, 30);
  REQUIRE(only.size() == 1);
  CHECK(only[0].kind == BreakEven::output_only);
  CHECK(only[0].output_tokens_per_month == Approx(960e6));
  CHECK(only[0].output_tokens_per_day == Approx(32e6));
  const auto mix = break_even_table(14400, k3, 10, 0.9, 30);
  REQUIRE(mix.size() == 3);
  CHECK(mix[1].kind == BreakEven::input_mix);
  CHECK(mix[1].cache_hit_fraction == 0.9);
  CHECK(mix[2].kind == BreakEven::input_mix_no_cache);
  CHECK(mix[2].cache_hit_fraction == 0);
  for (const auto& b : mix) {
    // at the break-even the API bill for that many output tokens (and their input) is the rent
    const ApiBill bill = api_bill(k3, b.output_tokens_per_month, b.output_tokens_per_month * b.input_per_output, b.cache_hit_fraction);
    CHECK(bill.total() == Approx(14400));
    CHECK(b.output_tokens_per_month * api_usd_per_output_token(k3, b.input_per_output, b.cache_hit_fraction) == Approx(14400));
    CHECK(b.output_tokens_per_day == Approx(b.output_tokens_per_month / 30));
  }
  CHECK(mix[1].output_tokens_per_month > mix[2].output_tokens_per_month);  // cached input is cheaper at the API
  // a free API: renting never pays
  CHECK(std::isinf(break_even_table(14400, ApiRates{}, 0, 0, 30)[0].output_tokens_per_month));
}

TEST_CASE("plan_cost: the seed's 8-GPU node unless -n is given and the rate from --rate then -g then the default") {
  const Catalogue& cat = k3plan_test::cat();
  CostOptions o;
  const CostPlan seed = plan_cost(cat, o);
  CHECK(seed.model.id == "kimi-k3");
  REQUIRE(seed.scenarios.size() == 4);
  CHECK(seed.base.gpus == 8);
  CHECK(seed.base.hours_per_day == 24);
  CHECK(seed.usd_per_gpu_hour == cat.prices().default_usd_per_gpu_hour.value);
  CHECK(seed.break_even.size() == 1);
  CHECK_FALSE(seed.bill);
  CHECK(seed.flip_output_tokens_per_month == seed.break_even[0].output_tokens_per_month);

  o.gpu = "h100";
  CHECK(plan_cost(cat, o).usd_per_gpu_hour == cat.gpu("h100").price_usd_per_hour.value);
  o.rate_usd_per_gpu_hour = 3.25;
  o.gpus = 16;
  o.output_tokens_per_month = 1e9;
  o.input_tokens_per_month = 4e9;
  o.cache_hit = 0.5;
  const CostPlan p = plan_cost(cat, o);
  CHECK(p.usd_per_gpu_hour == 3.25);
  REQUIRE(p.scenarios.size() == 1);
  CHECK(p.base.gpus == 16);
  CHECK(p.rent_usd_per_month() == Approx(16 * 24 * p.days_per_month * 3.25));
  CHECK(p.input_per_output == 4);
  REQUIRE(p.break_even.size() == 3);
  CHECK(p.flip_output_tokens_per_month == p.break_even[1].output_tokens_per_month);
  REQUIRE(p.bill);
  CHECK(p.bill->total() == Approx(p.bill->output_usd + p.bill->input_hit_usd + p.bill->input_miss_usd));
  CHECK(p.bill->total() == Approx(1e9 * p.api_usd_per_output_token()));
}
