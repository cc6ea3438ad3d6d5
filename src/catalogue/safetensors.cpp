// safetensors headers and the sharded index: exact checkpoint bytes without tensor data.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <k3plan/error.hpp>
#include <k3plan/safetensors.hpp>
#include <nlohmann/json.hpp>
#include <set>

namespace k3plan {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Bytes per element of each safetensors dtype (safetensors/src/tensor.rs Dtype); 0 = sub-byte or
// unknown, checked only against the offsets.
double dtype_bytes(const std::string& d) {
  static const std::map<std::string, double> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},   {"F8_E5M2", 1}, {"F8_E4M3", 1},    {"F8_E8M0", 1},    {"I16", 2},
      {"U16", 2},  {"F16", 2}, {"BF16", 2}, {"I32", 4},     {"U32", 4},        {"F32", 4},        {"I64", 8},
      {"U64", 8},  {"F64", 8}, {"C64", 8},  {"F4", 0.5},    {"F6_E2M3", 0.75}, {"F6_E3M2", 0.75},
  };
  const auto it = sizes.find(d);
  return it == sizes.end() ? 0 : it->second;
}

std::uint64_t file_size_of(const fs::path& p) {
  std::error_code ec;
  const auto n = fs::file_size(p, ec);
  if (ec) throw InputError(fmt::format("{}: cannot read: {}", p.string(), ec.message()));
  return n;
}

}  // namespace

std::uint64_t safetensors_header_length(const unsigned char first8[8], std::uint64_t file_size, const std::string& origin) {
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | first8[i];
  if (n > kMaxHeaderBytes)
    throw InputError(fmt::format("{}: safetensors header length {} B is beyond the {} B limit", origin, n, kMaxHeaderBytes));
  if (file_size > 0 && (file_size < 8 || n > file_size - 8))
    throw InputError(fmt::format("{}: safetensors header length {} B is beyond the file ({} B)", origin, n, file_size));
  if (n < 2) throw InputError(fmt::format("{}: safetensors header length {} B is too short for a JSON object", origin, n));
  return n;
}

std::vector<SafetensorsTensor> parse_safetensors_header(const std::string& header_json, std::uint64_t data_bytes,
                                                        const std::string& origin) {
  json h;
  try {
    h = json::parse(header_json);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: safetensors header: malformed JSON at byte {}", origin, e.byte));
  }
  if (!h.is_object()) throw InputError(fmt::format("{}: safetensors header: expected a JSON object", origin));
  std::vector<SafetensorsTensor> out;
  for (const auto& item : h.items()) {
    // named copies, not structured bindings: clang before 16 cannot capture those in the lambda
    const std::string& name = item.key();
    const json& t = item.value();
    if (name == "__metadata__") continue;
    auto bad = [&](const std::string& why) {
      return InputError(fmt::format("{}: safetensors header: tensor '{}': {}", origin, name, why));
    };
    if (!t.is_object() || !t.contains("dtype") || !t["dtype"].is_string() || !t.contains("shape") || !t["shape"].is_array() ||
        !t.contains("data_offsets") || !t["data_offsets"].is_array() || t["data_offsets"].size() != 2)
      throw bad("expected dtype, shape and data_offsets [begin, end]");
    SafetensorsTensor x;
    x.name = name;
    x.dtype = t["dtype"].get<std::string>();
    constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 62;
    std::uint64_t elements = 1;
    for (const auto& d : t["shape"]) {
      if (!d.is_number_unsigned()) throw bad("shape entries must be non-negative integers");
      const std::uint64_t v = d.get<std::uint64_t>();
      x.shape.push_back(v);
      if (v != 0 && elements > kMaxElements / v) throw bad("shape overflows (more than 2^62 elements)");
      elements *= v;
    }
    x.elements = elements;
    const auto& off = t["data_offsets"];
    if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned()) throw bad("data_offsets must be non-negative integers");
    const std::uint64_t b = off[0].get<std::uint64_t>(), e = off[1].get<std::uint64_t>();
    if (e < b) throw bad("data_offsets end before begin");
    if (data_bytes > 0 && e > data_bytes) throw bad(fmt::format("data_offsets end {} beyond the data ({} B)", e, data_bytes));
    x.bytes = e - b;
    const double size = dtype_bytes(x.dtype);
    if (size > 0 && static_cast<double>(x.bytes) != std::ceil(static_cast<double>(x.elements) * size))
      throw bad(fmt::format("{} B of data for {} x {} elements", x.bytes, x.dtype, x.elements));
    out.push_back(std::move(x));
  }
  return out;
}

std::vector<std::string> SafetensorsIndex::shards() const {
  std::set<std::string> s;
  for (const auto& [k, v] : weight_map) s.insert(v);
  return {s.begin(), s.end()};
}

SafetensorsIndex parse_safetensors_index(const std::string& json_text, const std::string& origin) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: malformed JSON at byte {}", origin, e.byte));
  }
  if (!j.is_object()) throw InputError(fmt::format("{}: expected a JSON object", origin));
  SafetensorsIndex ix;
  if (j.contains("metadata") && j["metadata"].is_object() && j["metadata"].contains("total_size")) {
    const auto& t = j["metadata"]["total_size"];
    if (t.is_number_unsigned())
      ix.total_size = t.get<std::uint64_t>();
    else if (t.is_string() && !t.get<std::string>().empty() &&
             std::all_of(t.get<std::string>().begin(), t.get<std::string>().end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
      ix.total_size = std::stoull(t.get<std::string>());
    else
      throw InputError(fmt::format("{}: field 'metadata.total_size': expected a non-negative integer", origin));
  }
  if (j.contains("weight_map")) {
    if (!j["weight_map"].is_object()) throw InputError(fmt::format("{}: field 'weight_map': expected an object", origin));
    for (const auto& [k, v] : j["weight_map"].items()) {
      if (!v.is_string()) throw InputError(fmt::format("{}: field 'weight_map.{}': expected a file name", origin, k));
      const std::string f = v.get<std::string>();
      if (f.find('/') != std::string::npos || f.find('\\') != std::string::npos || f == ".." || f.empty())
        throw InputError(fmt::format("{}: field 'weight_map.{}': '{}' is not a file name in the model directory", origin, k, f));
      ix.weight_map[k] = f;
    }
  }
  return ix;
}

std::string tensor_group(const std::string& name, int num_layers) {
  auto has = [&](const char* s) { return name.find(s) != std::string::npos; };
  if (has("visual") || has("vision") || has("vit.") || has("patch_embed") || has("mm_projector") || has("multi_modal_projector"))
    return "vision";
  if (has("audio")) return "vision";  // encoder towers are one group (Model::vision_params)
  if (has("mtp") || has(".nextn")) return "mtp";
  // decoder layer index beyond the decoder: DeepSeek-style MTP layers (model.layers.61.* of 61)
  const auto pos = name.find("layers.");
  if (pos != std::string::npos && num_layers > 0) {
    std::size_t i = pos + 7;
    long long idx = 0;
    bool digits = false;
    while (i < name.size() && name[i] >= '0' && name[i] <= '9' && idx < 1'000'000) {
      idx = idx * 10 + (name[i++] - '0');
      digits = true;
    }
    if (digits && idx >= num_layers) return "mtp";
  }
  if (has("embed_tokens") || has("wte") || has("word_embeddings") || has("tok_embeddings")) return "embedding";
  if (has("lm_head") || has("output.weight")) return "lm_head";
  if (has("shared_expert")) return "shared_experts";
  if (has(".experts.") || has("block_sparse_moe.experts") || has(".experts_")) return "routed_experts";
  if (has("e_score_correction") || has("router") || has(".gate.weight") || has("mlp.gate.") || has(".gate.bias")) return "router";
  if (has("norm") || has("ln_")) return "norms";
  if (has("self_attn") || has(".attn.") || has("mixer") || has("attention") || has("linear_attn")) return "attention";
  if (has("mlp") || has("feed_forward") || has("ffn")) return "dense_mlp";
  return "other";
}

std::optional<CheckpointBytes> read_checkpoint_bytes(const std::string& dir_s, int num_layers) {
  const fs::path dir(dir_s);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::nullopt;
  CheckpointBytes cb;
  // a shard is the file itself, or (a Hub download of its header) <shard>.header + <shard>.size
  auto locate = [&](const std::string& f) -> std::optional<fs::path> {
    if (fs::exists(dir / f, ec)) return dir / f;
    if (fs::exists(dir / (f + ".header"), ec) && fs::exists(dir / (f + ".size"), ec)) return dir / (f + ".header");
    return std::nullopt;
  };
  std::vector<fs::path> shards;
  const fs::path index_path = dir / "model.safetensors.index.json";
  SafetensorsIndex ix;
  const bool have_index = fs::exists(index_path, ec);
  std::size_t expected = 0;
  if (have_index) {
    std::ifstream in(index_path, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ix = parse_safetensors_index(text, index_path.string());
    cb.index_total_size = ix.total_size;
    expected = ix.shards().size();
    for (const auto& f : ix.shards())
      if (auto p = locate(f)) shards.push_back(*p);
  }
  if (!have_index || ix.weight_map.empty()) {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string n = e.path().filename().string();
      if (e.path().extension() == ".safetensors") names.insert(n);
      if (n.size() > 19 && n.compare(n.size() - 19, 19, ".safetensors.header") == 0) names.insert(n.substr(0, n.size() - 7));
    }
    for (const auto& n : names)
      if (auto p = locate(n)) shards.push_back(*p);
    expected = shards.size();
  }
  if (shards.empty() || shards.size() != expected) {
    if (!have_index || ix.total_size == 0) return std::nullopt;
    cb.basis = "index-total-size";
    cb.bytes = ix.total_size;
    return cb;
  }
  cb.basis = "safetensors-headers";
  for (const auto& p : shards) {
    std::uint64_t size = file_size_of(p);
    if (p.extension() == ".header") {
      fs::path sp = p;
      sp.replace_extension(".size");
      std::ifstream sf(sp);
      unsigned long long v = 0;
      if (!(sf >> v)) throw InputError(fmt::format("{}: expected the shard's size in bytes", sp.string()));
      size = v;
    }
    std::ifstream in(p, std::ios::binary);
    unsigned char first8[8] = {};
    if (!in.read(reinterpret_cast<char*>(first8), 8))
      throw InputError(fmt::format("{}: safetensors file shorter than its 8-byte header length", p.string()));
    const std::uint64_t n = safetensors_header_length(first8, size, p.string());
    std::string header(static_cast<std::size_t>(n), '\0');
    if (!in.read(header.data(), static_cast<std::streamsize>(n)))
      throw InputError(fmt::format("{}: safetensors header cut short", p.string()));
    for (const auto& t : parse_safetensors_header(header, size - 8 - n, p.string())) {
      cb.bytes += t.bytes;
      cb.bytes_by_dtype[t.dtype] += t.bytes;
      cb.bytes_by_group[tensor_group(t.name, num_layers)] += t.bytes;
      ++cb.tensors;
    }
    ++cb.shards;
  }
  return cb;
}

}  // namespace k3plan
