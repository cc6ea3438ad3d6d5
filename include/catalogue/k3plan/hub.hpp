#pragma once
// Hugging Face Hub: `-m org/name[@revision]` for a model not in the catalogue. Fetches config.json
// (and hf_quant_config.json and model.safetensors.index.json when the repository has them) with
// libcurl, through the Hub's public URL layout:
//   GET {endpoint}/api/models/{org}/{name}/revision/{rev}   -> {"sha": ..., "siblings": [{"rfilename": ...}]}
//   GET {endpoint}/{org}/{name}/resolve/{rev}/{file}        (Range: bytes=a-b for shard headers)
// Environment (the names huggingface_hub uses): HF_ENDPOINT (default https://huggingface.co),
// HF_TOKEN (Authorization: Bearer), HF_HUB_OFFLINE=1 (cache only), HF_HOME (cache in
// $HF_HOME/k3plan, else ~/.cache/k3plan), HF_HUB_DOWNLOAD_TIMEOUT (seconds per request, default
// 30). Files are cached per commit, so a second run works offline: with HF_HUB_OFFLINE, or when
// the Hub cannot be reached (a note on stderr). Errors (401/403/404, timeouts, no network with
// nothing cached, a file missing from the cache offline) are InputErrors: one line, exit 2.
#include <optional>
#include <string>

namespace k3plan {

struct HubId {
  std::string repo;  // org/name
  std::string revision = "main";
};

// org/name or org/name@revision (Hub naming: letters, digits, '-', '_', '.'); nullopt otherwise.
std::optional<HubId> parse_hub_id(const std::string& spec);

struct HubSettings {
  std::string endpoint;  // no trailing '/'
  std::string token;
  bool offline = false;
  std::string cache_dir;
  long timeout_s = 30;
};
HubSettings hub_settings_from_env();

// The local directory holding the repository's config.json (+ hf_quant_config.json, index) at
// that revision, downloading what the cache lacks. With `shard_headers`, also each safetensors
// shard's header (two range requests per shard, no tensor data), stored as <shard>.header with
// the shard's size in <shard>.size.
std::string hub_fetch(const HubId& id, const HubSettings& s, bool shard_headers = false);

// The directory a -m value names, for reading safetensors next to its config: the directory
// itself, or, for a Hub id the model was fetched for (`origin` = the cached config.json), its cache
// directory (with `shard_headers`, fetching them); "" for catalogue ids and single files.
std::string model_directory(const std::string& spec, const std::string& origin, bool shard_headers = false);

}  // namespace k3plan
