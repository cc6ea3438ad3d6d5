#pragma once
// Exact checkpoint bytes from safetensors files without reading tensor data: each shard starts
// with an 8-byte little-endian header length N, then N bytes of JSON naming every tensor's dtype,
// shape and data_offsets (https://github.com/huggingface/safetensors, "Format"). The sharded
// index, model.safetensors.index.json, gives metadata.total_size (the bytes of all tensors) and
// the weight_map from tensor name to shard file.
//
// Hostile input is an InputError naming the file: a file shorter than 8 bytes, a header length
// beyond the file or beyond kMaxHeaderBytes, JSON the input boundary refuses (parse_json_input:
// malformed, invalid UTF-8, duplicate tensor names, numbers beyond a double), a shape whose element
// count overflows, offsets not matching dtype x shape, and tensors that do not tile the data area
// (overlapping, leaving a gap, or ending before or beyond it), as the safetensors library's
// Metadata::validate refuses them: the bytes reported are then exactly the file's data area.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace k3plan {

inline constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;  // the safetensors library's own limit

struct SafetensorsTensor {
  std::string name;
  std::string dtype;  // as written: BF16, F8_E4M3, U8, ...
  std::vector<std::uint64_t> shape;
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;  // data_offsets end - begin
};

// The header length from a shard's first 8 bytes; checks it against the file size (the whole
// shard's, also when only its header was downloaded) and the limit.
std::uint64_t safetensors_header_length(const unsigned char first8[8], std::uint64_t file_size, const std::string& origin);
// The tensors of one header (the N bytes after the length), in offset order; `data_bytes` = file
// size - 8 - N, which the tensors must cover exactly.
std::vector<SafetensorsTensor> parse_safetensors_header(const std::string& header_json, std::uint64_t data_bytes,
                                                        const std::string& origin);

struct SafetensorsIndex {
  std::uint64_t total_size = 0;                   // metadata.total_size (0 when absent)
  std::map<std::string, std::string> weight_map;  // tensor -> shard file
  std::vector<std::string> shards() const;        // distinct shard files, sorted
};
SafetensorsIndex parse_safetensors_index(const std::string& json_text, const std::string& origin);

// What a checkpoint directory (or a Hub download of its headers) holds.
struct CheckpointBytes {
  std::string basis;                   // "safetensors-headers" or "index-total-size"
  std::uint64_t bytes = 0;             // the tensors' bytes (basis above)
  std::uint64_t index_total_size = 0;  // 0 when there is no index
  int shards = 0;
  std::uint64_t tensors = 0;
  std::map<std::string, std::uint64_t> bytes_by_dtype;
  std::map<std::string, std::uint64_t> bytes_by_group;  // ParamGroup names (embedding, attention, ...), scales included
};

// Parameter group of a tensor by its Hugging Face name (scales go with their weight).
std::string tensor_group(const std::string& name, int num_layers);

// Reads dir/model.safetensors.index.json and every *.safetensors header in dir (headers only).
// nullopt when dir holds neither. `num_layers` places layers past the decoder (MTP) in "mtp".
std::optional<CheckpointBytes> read_checkpoint_bytes(const std::string& dir, int num_layers);

}  // namespace k3plan
