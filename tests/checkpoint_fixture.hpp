#pragma once
// A Hugging Face checkpoint directory for the tests: the real Qwen3-0.6B config.json and a
// safetensors index plus shards whose headers list that model's tensors (names and shapes as
// transformers' Qwen3ForCausalLM saves them). The shards' data areas are sparse (never written),
// so the directory takes a few kilobytes of disk for 1.19 GB of "tensors".
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace k3plan_test {

struct FixtureTensor {
  std::string name;
  std::vector<std::uint64_t> shape;
  std::string dtype = "BF16";
};

// Qwen3-0.6B (hidden 1024, 28 layers, 16 q / 8 kv heads x 128, MLP 3072, vocab 151936, tied).
inline std::vector<FixtureTensor> qwen3_0_6b_tensors() {
  std::vector<FixtureTensor> t;
  t.push_back({"model.embed_tokens.weight", {151936, 1024}});
  for (int i = 0; i < 28; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    t.push_back({p + "input_layernorm.weight", {1024}});
    t.push_back({p + "post_attention_layernorm.weight", {1024}});
    t.push_back({p + "self_attn.q_proj.weight", {2048, 1024}});
    t.push_back({p + "self_attn.k_proj.weight", {1024, 1024}});
    t.push_back({p + "self_attn.v_proj.weight", {1024, 1024}});
    t.push_back({p + "self_attn.o_proj.weight", {1024, 2048}});
    t.push_back({p + "self_attn.q_norm.weight", {128}});
    t.push_back({p + "self_attn.k_norm.weight", {128}});
    t.push_back({p + "mlp.gate_proj.weight", {3072, 1024}});
    t.push_back({p + "mlp.up_proj.weight", {3072, 1024}});
    t.push_back({p + "mlp.down_proj.weight", {1024, 3072}});
  }
  t.push_back({"model.norm.weight", {1024}});
  return t;
}

inline std::uint64_t tensor_bytes(const FixtureTensor& t) {
  std::uint64_t n = t.dtype == "BF16" || t.dtype == "F16" ? 2 : t.dtype == "F32" ? 4 : 1;
  for (auto d : t.shape) n *= d;
  return n;
}

// Writes one safetensors shard: 8-byte LE header length, the JSON header, then a sparse data area.
inline std::uint64_t write_shard(const std::filesystem::path& p, const std::vector<FixtureTensor>& ts) {
  nlohmann::json h = nlohmann::json::object();
  h["__metadata__"] = {{"format", "pt"}};
  std::uint64_t off = 0;
  for (const auto& t : ts) {
    const std::uint64_t b = tensor_bytes(t);
    h[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {off, off + b}}};
    off += b;
  }
  std::string header = h.dump();
  while (header.size() % 8) header += ' ';  // the format pads the header to 8 bytes with spaces
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  const std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
  out << header;
  out.close();
  std::filesystem::resize_file(p, 8 + n + off);
  return off;
}

// The checkpoint directory: config.json (copied from tests/data), two shards and the index.
// Returns the index's total_size.
inline std::uint64_t write_qwen3_checkpoint(const std::filesystem::path& dir, bool with_shards = true) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  fs::copy_file(std::string(K3PLAN_TEST_DATA) + "/Qwen--Qwen3-0.6B_config.json", dir / "config.json", fs::copy_options::overwrite_existing);
  const auto all = qwen3_0_6b_tensors();
  std::vector<FixtureTensor> a(all.begin(), all.begin() + 1 + 11 * 14), b(all.begin() + 1 + 11 * 14, all.end());
  nlohmann::json ix;
  std::uint64_t total = 0;
  const std::pair<const char*, std::vector<FixtureTensor>*> shards[] = {{"model-00001-of-00002.safetensors", &a},
                                                                        {"model-00002-of-00002.safetensors", &b}};
  for (const auto& [name, ts] : shards) {
    std::uint64_t bytes = 0;
    for (const auto& t : *ts) {
      ix["weight_map"][t.name] = name;
      bytes += tensor_bytes(t);
    }
    if (with_shards) write_shard(dir / name, *ts);
    total += bytes;
  }
  ix["metadata"] = {{"total_size", total}};
  std::ofstream(dir / "model.safetensors.index.json") << ix.dump(2);
  return total;
}

}  // namespace k3plan_test
