// Exact checkpoint bytes from safetensors headers and the sharded index, through `k3plan weights`,
// and hostile headers as input errors.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <k3plan/error.hpp>
#include <k3plan/safetensors.hpp>
#include <nlohmann/json.hpp>

#include "checkpoint_fixture.hpp"
#include "support.hpp"

using namespace k3plan;
using namespace k3plan_test;

namespace {
std::string le8(std::uint64_t n) {
  std::string s;
  for (int i = 0; i < 8; ++i) s += static_cast<char>((n >> (8 * i)) & 0xff);
  return s;
}
}  // namespace

TEST_CASE("weights reads a checkpoint directory's shard headers and matches the index total_size") {
  TempDir t;
  const auto dir = t.path() / "Qwen3-0.6B";
  const std::uint64_t total = write_qwen3_checkpoint(dir);
  const Run r = run({"weights", "-m", dir.string(), "--format", "json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& a = j["as_shipped"];
  CHECK(a["basis"] == "safetensors-headers");
  CHECK(a["shards"] == 2);
  CHECK(a["tensors"] == 1 + 28 * 11 + 1);
  CHECK(a["index_total_size_bytes"].get<double>() == static_cast<double>(total));
  // exact bytes equal the index's total_size (within 0.1%: here exactly)
  CHECK(a["bytes"].get<double>() == Approx(static_cast<double>(total)).epsilon(0.001));
  CHECK(a["bytes_by_dtype"]["BF16"].get<double>() == static_cast<double>(total));
  CHECK(a["bytes_by_group"]["embedding"].get<double>() == 151936.0 * 1024 * 2);
  CHECK(a["bytes_by_group"]["dense_mlp"].get<double>() == 28.0 * 3 * 3072 * 1024 * 2);
  // the config-geometry estimate agrees within 2% (no warning)
  CHECK(std::abs(a["estimate_error_pct"].get<double>()) < 2.0);
  CHECK(!a.contains("warnings"));
  const Run table = run({"weights", "-m", dir.string()});
  CHECK(table.out.find("exact (safetensors headers)") != std::string::npos);
}

TEST_CASE("weights falls back to the index total_size when the shards are absent") {
  TempDir t;
  const auto dir = t.path() / "Qwen3-0.6B";
  const std::uint64_t total = write_qwen3_checkpoint(dir, false);
  const Run r = run({"weights", "-m", dir.string(), "--format", "json"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["as_shipped"]["basis"] == "index-total-size");
  CHECK(j["as_shipped"]["bytes"].get<double>() == static_cast<double>(total));
  const Run bare = run({"weights", "-m", (std::string(K3PLAN_TEST_DATA) + "/Qwen--Qwen3-0.6B_config.json"), "--format", "json"});
  REQUIRE(bare.code == 0);
  CHECK(nlohmann::json::parse(bare.out)["as_shipped"]["basis"] == "config-geometry");
}

TEST_CASE("weights warns when the geometry estimate and the shard headers differ by more than 2 percent") {
  TempDir t;
  const auto dir = t.path() / "m";
  write_qwen3_checkpoint(dir);
  // a checkpoint that also ships an untied lm_head the config does not announce
  write_shard(dir / "model-00002-of-00002.safetensors", [] {
    auto all = qwen3_0_6b_tensors();
    std::vector<FixtureTensor> b(all.begin() + 1 + 11 * 14, all.end());
    b.push_back({"lm_head.weight", {151936, 1024}});
    return b;
  }());
  std::filesystem::remove(dir / "model.safetensors.index.json");
  const Run r = run({"weights", "-m", dir.string(), "--format", "json"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["as_shipped"]["basis"] == "safetensors-headers");
  CHECK(j["as_shipped"]["bytes_by_group"]["lm_head"].get<double>() == 151936.0 * 1024 * 2);
  REQUIRE(j["as_shipped"].contains("warnings"));
  CHECK(j["as_shipped"]["estimate_error_pct"].get<double>() < -2.0);
}

TEST_CASE("hostile safetensors headers are input errors") {
  unsigned char big[8] = {0, 0, 0, 0, 1, 0, 0, 0};                               // 2^32 B
  CHECK_THROWS_AS(safetensors_header_length(big, 1ull << 40, "x"), InputError);  // beyond 100 MB
  unsigned char n100[8] = {100, 0, 0, 0, 0, 0, 0, 0};
  CHECK_THROWS_AS(safetensors_header_length(n100, 50, "x"), InputError);  // beyond the file
  CHECK(safetensors_header_length(n100, 108, "x") == 100);
  CHECK_THROWS_AS(parse_safetensors_header("{\"a\": ", 0, "x"), InputError);
  CHECK_THROWS_AS(parse_safetensors_header("[1]", 0, "x"), InputError);
  // shapes whose element count overflows 64 bits
  CHECK_THROWS_AS(
      parse_safetensors_header(R"({"w": {"dtype": "BF16", "shape": [4294967296, 4294967296, 16], "data_offsets": [0, 0]}})", 0, "x"),
      InputError);
  CHECK_THROWS_AS(parse_safetensors_header(R"({"w": {"dtype": "BF16", "shape": [-1], "data_offsets": [0, 2]}})", 0, "x"), InputError);
  // offsets that do not match dtype x shape, or run past the data
  CHECK_THROWS_AS(parse_safetensors_header(R"({"w": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 4]}})", 0, "x"), InputError);
  CHECK_THROWS_AS(parse_safetensors_header(R"({"w": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]}})", 4, "x"), InputError);
  CHECK(parse_safetensors_header(R"({"w": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]}})", 8, "x").at(0).bytes == 8);
  CHECK_THROWS_AS(parse_safetensors_index(R"({"weight_map": {"w": "../../etc/passwd"}})", "ix"), InputError);
  CHECK_THROWS_AS(parse_safetensors_index(R"({"metadata": {"total_size": -5}})", "ix"), InputError);
}

TEST_CASE("a hostile shard in a model directory is one error line with exit 2") {
  TempDir t;
  const auto dir = t.path() / "m";
  write_qwen3_checkpoint(dir);
  std::filesystem::remove(dir / "model.safetensors.index.json");
  const auto shard = dir / "model-00001-of-00002.safetensors";
  SECTION("header length beyond the file") {
    std::ofstream(shard, std::ios::binary | std::ios::trunc) << le8(4096) << "{}";
    expect_usage_error({"weights", "-m", dir.string()}, {"model-00001-of-00002.safetensors", "beyond the file"});
  }
  SECTION("header length beyond 100 MB") {
    std::ofstream(shard, std::ios::binary | std::ios::trunc) << le8(200'000'000) << "{}";
    std::filesystem::resize_file(shard, 300'000'000);  // sparse
    expect_usage_error({"weights", "-m", dir.string()}, {"100000000 B limit"});
  }
  SECTION("malformed JSON") {
    const std::string h = "{\"w\": {\"dtype\": ";
    std::ofstream(shard, std::ios::binary | std::ios::trunc) << le8(h.size()) << h;
    expect_usage_error({"weights", "-m", dir.string()}, {"malformed JSON"});
  }
  SECTION("a shape that overflows") {
    const std::string h = R"({"w": {"dtype": "F32", "shape": [18446744073709551615, 2], "data_offsets": [0, 8]}})";
    std::ofstream(shard, std::ios::binary | std::ios::trunc) << le8(h.size()) << h << std::string(8, '\0');
    expect_usage_error({"weights", "-m", dir.string()}, {"overflows"});
  }
}

TEST_CASE("safetensors tensors tile the data area: overlaps and gaps are input errors") {
  // fuzz_safetensors: the same data_offsets under a second name counted the 16 bytes twice
  const std::string twice =
      R"({"a": {"dtype": "BF16", "shape": [4, 2], "data_offsets": [0, 16]}, "b": {"dtype": "BF16", "shape": [4, 2], "data_offsets": [0, 16]}})";
  CHECK_THROWS_WITH(parse_safetensors_header(twice, 16, "x"), Catch::Contains("tensor 'b': data_offsets begin 0 overlaps tensor 'a'"));
  // fuzz_safetensors: a dtype k3plan does not size, overlapping its neighbour by one byte
  const std::string unknown =
      R"({"a": {"dtype": "BF16", "shape": [8], "data_offsets": [0, 16]}, "b": {"dtype": "F4_E4M3", "shape": [8], "data_offsets": [15, 24]}})";
  CHECK_THROWS_WITH(parse_safetensors_header(unknown, 24, "x"), Catch::Contains("begin 15 overlaps"));
  CHECK_THROWS_WITH(parse_safetensors_header(R"({"a": {"dtype": "BF16", "shape": [2], "data_offsets": [4, 8]}})", 8, "x"),
                    Catch::Contains("begins at byte 4, not 0"));
  CHECK_THROWS_WITH(parse_safetensors_header(R"({"a": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}})", 8, "x"),
                    Catch::Contains("end at byte 4 of a 8 B data area"));
  // an empty data area bounds the offsets too (it used to mean "unknown": 2 TB from a 96-byte file)
  CHECK_THROWS_WITH(
      parse_safetensors_header(R"({"w": {"dtype": "BF16", "shape": [1000000, 1000000], "data_offsets": [0, 2000000000000]}})", 0, "x"),
      Catch::Contains("beyond the data (0 B)"));
  CHECK(parse_safetensors_header("{}", 0, "x").empty());
  // tensors come back in offset order, whatever the header's key order
  const auto t = parse_safetensors_header(
      R"({"z": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]}, "a": {"dtype": "U8", "shape": [3], "data_offsets": [2, 5]}})", 5,
      "x");
  REQUIRE(t.size() == 2);
  CHECK(t[0].name == "z");
  CHECK(t[1].bytes == 3);
}

TEST_CASE("safetensors headers go through the JSON input boundary") {
  // fuzz_safetensors: a number beyond a double threw nlohmann's out_of_range (exit 3) in both readers
  CHECK_THROWS_WITH(parse_safetensors_index("77E877", "ix"), Catch::Contains("out of range"));
  CHECK_THROWS_WITH(parse_safetensors_header(R"({"a": {"dtype": "BF16", "shape": [1e400], "data_offsets": [0, 4]}})", 4, "x"),
                    Catch::Contains("field 'shape': 1e400 is out of range"));
  CHECK_THROWS_WITH(
      parse_safetensors_header(
          R"({"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}, "a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}})", 1,
          "x"),
      Catch::Contains("duplicate key"));
  CHECK_THROWS_WITH(parse_safetensors_index(R"({"weight_map": {"a": "s1"}, "weight_map": {}})", "ix"), Catch::Contains("duplicate key"));
  CHECK_THROWS_AS(parse_safetensors_index(R"({"metadata": {"total_size": "99999999999999999999999"}})", "ix"), InputError);
  CHECK(parse_safetensors_index(R"({"metadata": {"total_size": "1234"}})", "ix").total_size == 1234);
}

TEST_CASE("safetensors bytes per shape are exact integers and whole bytes") {
  // 2^53 + 1 BF16 elements: 2^54 + 2 bytes; a double product (2^54) accepted 2^54 as well
  const std::uint64_t e = (std::uint64_t{1} << 53) + 1, right = 2 * e, wrong = std::uint64_t{1} << 54;
  auto header = [&](std::uint64_t end) {
    return fmt::format(R"({{"w": {{"dtype": "BF16", "shape": [{}], "data_offsets": [0, {}]}}}})", e, end);
  };
  CHECK(parse_safetensors_header(header(right), right, "x").at(0).bytes == right);
  CHECK_THROWS_WITH(parse_safetensors_header(header(wrong), wrong, "x"), Catch::Contains("B of data for BF16"));
  // sub-byte dtypes: 8 x F4 = 4 bytes, 4 x F6 = 3 bytes; 3 x F4 is not whole bytes (as the safetensors library refuses it)
  CHECK(parse_safetensors_header(R"({"w": {"dtype": "F4", "shape": [2, 4], "data_offsets": [0, 4]}})", 4, "x").at(0).bytes == 4);
  CHECK(parse_safetensors_header(R"({"w": {"dtype": "F6_E3M2", "shape": [4], "data_offsets": [0, 3]}})", 3, "x").at(0).bytes == 3);
  CHECK_THROWS_WITH(parse_safetensors_header(R"({"w": {"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}})", 2, "x"),
                    Catch::Contains("not a whole number of bytes"));
  // the largest shape: 2^62 F64 elements are 2^65 bytes, beyond any data area
  CHECK_THROWS_AS(parse_safetensors_header(R"({"w": {"dtype": "F64", "shape": [4611686018427387904], "data_offsets": [0, 8]}})", 8, "x"),
                  InputError);
}

TEST_CASE("a file shorter than 8 bytes never reaches the header length arithmetic") {
  const unsigned char two[8] = {2, 0, 0, 0, 0, 0, 0, 0};
  // a recorded size of 0 used to skip the bound, and size - 8 - n wrapped to 2^64 - 10
  CHECK_THROWS_WITH(safetensors_header_length(two, 0, "x"), Catch::Contains("shorter than its 8-byte header length"));
  CHECK_THROWS_AS(safetensors_header_length(two, 7, "x"), InputError);
  CHECK(safetensors_header_length(two, 10, "x") == 2);
}

TEST_CASE("a Hub download's recorded shard size is decimal digits and the header file holds what it announces") {
  TempDir t;
  const auto dir = t.path() / "m";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(std::string(K3PLAN_TEST_DATA) + "/Qwen--Qwen3-0.6B_config.json", dir / "config.json");
  const std::string h = R"({"w": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]}})";
  auto write = [&](const std::string& header_file, const std::string& size_file) {
    std::ofstream(dir / "model.safetensors.header", std::ios::binary | std::ios::trunc) << header_file;
    std::ofstream(dir / "model.safetensors.size", std::ios::binary | std::ios::trunc) << size_file;
  };
  write(le8(h.size()) + h, std::to_string(8 + h.size() + 8));
  const auto cb = read_checkpoint_bytes(dir.string(), 28);
  REQUIRE(cb);
  CHECK(cb->bytes == 8);
  write(le8(h.size()) + h, "-1");  // iostream extraction read this as 2^64 - 1
  CHECK_THROWS_WITH(read_checkpoint_bytes(dir.string(), 28), Catch::Contains("expected the shard's size in bytes"));
  write(le8(h.size()) + h, "0");
  CHECK_THROWS_WITH(read_checkpoint_bytes(dir.string(), 28), Catch::Contains("shorter than its 8-byte header length"));
  write(le8(h.size()) + h + "trailing", std::to_string(8 + h.size() + 8));
  CHECK_THROWS_WITH(read_checkpoint_bytes(dir.string(), 28), Catch::Contains("not the 8-byte length"));
  write(le8(h.size()) + h.substr(0, 10), std::to_string(8 + h.size() + 8));
  CHECK_THROWS_WITH(read_checkpoint_bytes(dir.string(), 28), Catch::Contains("cut short"));
}
