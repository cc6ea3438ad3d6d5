// safetensors headers and the sharded index: exact checkpoint bytes without tensor data.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <k3plan/error.hpp>
#include <k3plan/input_file.hpp>
#include <k3plan/number_text.hpp>
#include <k3plan/safetensors.hpp>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

namespace k3plan {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Bits per element of each safetensors dtype (safetensors/src/tensor.rs Dtype::bitsize); 0 =
// unknown to k3plan: its bytes are then not checked against the shape, only placed by the offsets.
std::uint64_t dtype_bits(const std::string& d) {
  static const std::map<std::string, std::uint64_t> bits = {
      {"BOOL", 8}, {"U8", 8},   {"I8", 8},    {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"I16", 16},
      {"U16", 16}, {"F16", 16}, {"BF16", 16}, {"I32", 32},    {"U32", 32},    {"F32", 32},    {"I64", 64},
      {"U64", 64}, {"F64", 64}, {"C64", 64},  {"F4", 4},      {"F6_E2M3", 6}, {"F6_E3M2", 6},
  };
  const auto it = bits.find(d);
  return it == bits.end() ? 0 : it->second;
}

// The size of a shard as a Hub download records it (<shard>.size: decimal digits, as written by
// hub_fetch), read through the input boundary.
std::uint64_t recorded_shard_size(const fs::path& p) {
  std::string t = read_input_file(p.string(), "shard size file", 64);
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
  const auto v = parse_uint(t);
  if (!v) throw InputError(fmt::format("{}: expected the shard's size in bytes (decimal digits), got '{}'", p.string(), t));
  return *v;
}

}  // namespace

std::uint64_t safetensors_header_length(const unsigned char first8[8], std::uint64_t file_size, const std::string& origin) {
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | first8[i];
  if (file_size < 8)
    throw InputError(fmt::format("{}: safetensors file of {} B is shorter than its 8-byte header length", origin, file_size));
  if (n > kMaxHeaderBytes)
    throw InputError(fmt::format("{}: safetensors header length {} B is beyond the {} B limit", origin, n, kMaxHeaderBytes));
  if (n > file_size - 8)
    throw InputError(fmt::format("{}: safetensors header length {} B is beyond the file ({} B)", origin, n, file_size));
  if (n < 2) throw InputError(fmt::format("{}: safetensors header length {} B is too short for a JSON object", origin, n));
  return n;
}

std::vector<SafetensorsTensor> parse_safetensors_header(const std::string& header_json, std::uint64_t data_bytes,
                                                        const std::string& origin) {
  const std::string where = origin + ": safetensors header";
  // the input boundary: UTF-8, nesting, duplicate tensor names, numbers beyond a double
  const json h = parse_json_input(header_json, where);
  if (!h.is_object()) throw InputError(fmt::format("{}: expected a JSON object", where));
  std::vector<SafetensorsTensor> out;
  std::vector<std::pair<std::uint64_t, std::size_t>> begins;  // data_offsets begin -> index in out
  for (const auto& item : h.items()) {
    // named copies, not structured bindings: clang before 16 cannot capture those in the lambda
    const std::string& name = item.key();
    const json& t = item.value();
    if (name == "__metadata__") continue;
    auto bad = [&](const std::string& why) { return InputError(fmt::format("{}: tensor '{}': {}", where, name, why)); };
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
    if (e > data_bytes) throw bad(fmt::format("data_offsets end {} beyond the data ({} B)", e, data_bytes));
    x.bytes = e - b;
    // the format's rule (safetensors Metadata::validate): elements x bits is whole bytes, and those
    // bytes are the tensor's; in integers (2^62 elements x 64 bits does not fit: compare per byte)
    if (const std::uint64_t bits = dtype_bits(x.dtype); bits > 0) {
      const std::uint64_t whole = x.elements / 8 * bits, rest = x.elements % 8 * bits;  // bits = whole * 8 + rest
      if (rest % 8 != 0) throw bad(fmt::format("{} x {} elements is not a whole number of bytes", x.dtype, x.elements));
      if (x.elements / 8 > (std::numeric_limits<std::uint64_t>::max() - rest / 8) / bits || x.bytes != whole + rest / 8)
        throw bad(fmt::format("{} B of data for {} x {} elements", x.bytes, x.dtype, x.elements));
    }
    begins.emplace_back(b, out.size());
    out.push_back(std::move(x));
  }
  // The tensors tile the data area: in offset order each begins where the previous one ended, the
  // first at 0 and the last at its end (the same rule), so no byte is counted twice or left out.
  std::sort(begins.begin(), begins.end());
  std::vector<SafetensorsTensor> tiled;
  tiled.reserve(out.size());
  std::uint64_t at = 0;
  for (const auto& [b, i] : begins) {
    const SafetensorsTensor& x = out[i];
    if (b != at) {
      if (tiled.empty()) throw InputError(fmt::format("{}: tensor '{}': the first tensor begins at byte {}, not 0", where, x.name, b));
      throw InputError(fmt::format("{}: tensor '{}': data_offsets begin {} {} tensor '{}' (which ends at {})", where, x.name, b,
                                   b < at ? "overlaps" : "leaves a gap after", tiled.back().name, at));
    }
    at = b + x.bytes;
    tiled.push_back(x);
  }
  if (at != data_bytes)
    throw InputError(
        fmt::format("{}: the tensors end at byte {} of a {} B data area (the rest belongs to no tensor)", where, at, data_bytes));
  return tiled;
}

std::vector<std::string> SafetensorsIndex::shards() const {
  std::set<std::string> s;
  for (const auto& [k, v] : weight_map) s.insert(v);
  return {s.begin(), s.end()};
}

SafetensorsIndex parse_safetensors_index(const std::string& json_text, const std::string& origin) {
  const json j = parse_json_input(json_text, origin);
  if (!j.is_object()) throw InputError(fmt::format("{}: expected a JSON object", origin));
  SafetensorsIndex ix;
  if (j.contains("metadata") && j["metadata"].is_object() && j["metadata"].contains("total_size")) {
    const auto& t = j["metadata"]["total_size"];
    if (t.is_number_unsigned())
      ix.total_size = t.get<std::uint64_t>();
    else if (const auto v = t.is_string() ? parse_uint(t.get<std::string>()) : std::nullopt)
      ix.total_size = *v;
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
    ix = parse_safetensors_index(read_input_file(index_path.string(), "safetensors index"), index_path.string());
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
    InputFileHead in(p.string(), "safetensors shard");
    // a Hub download keeps the length and header (<shard>.header) and the shard's size (<shard>.size)
    const bool download = p.extension() == ".header";
    const std::uint64_t size = download ? recorded_shard_size(fs::path(p).replace_extension(".size")) : in.size();
    const std::string first8 = in.read(8);
    if (first8.size() < 8)
      throw InputError(fmt::format("{}: safetensors file of {} B is shorter than its 8-byte header length", p.string(), first8.size()));
    const std::uint64_t n = safetensors_header_length(reinterpret_cast<const unsigned char*>(first8.data()), size, p.string());
    const std::string header = in.read(static_cast<std::size_t>(n));
    if (header.size() != n) throw InputError(fmt::format("{}: safetensors header cut short ({} of {} B)", p.string(), header.size(), n));
    if (download && in.size() != 8 + n)
      throw InputError(fmt::format("{}: {} B, not the 8-byte length and the {} B header it announces", p.string(), in.size(), n));
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
