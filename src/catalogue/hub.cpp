// Hugging Face Hub client (libcurl): config.json, hf_quant_config.json, the safetensors index and,
// on request, shard headers by range requests; a per-commit cache so later runs work offline.
#include <curl/curl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <k3plan/ascii.hpp>
#include <k3plan/error.hpp>
#include <k3plan/hub.hpp>
#include <k3plan/input_file.hpp>
#include <k3plan/number_text.hpp>
#include <k3plan/safetensors.hpp>
#include <nlohmann/json.hpp>
#include <set>

namespace k3plan {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool hub_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

bool valid_part(const std::string& s) {
  if (s.empty() || s.size() > 96 || s == "." || s == ".." || s.front() == '.' || s.front() == '-') return false;
  for (char c : s)
    if (!hub_name_char(c)) return false;
  return s.find("..") == std::string::npos;
}

std::string env(const char* k) {
  const char* v = std::getenv(k);
  return v ? std::string(v) : std::string();
}

std::string read_text(const fs::path& p) { return read_input_file(p.string(), "Hub cache file"); }

void write_atomic(const fs::path& p, const std::string& data) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  const fs::path tmp = p.string() + ".part" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << data;
    if (!out) throw InputError(fmt::format("{}: cannot write the Hub cache", tmp.string()));
  }
  fs::rename(tmp, p, ec);
  if (ec) throw InputError(fmt::format("{}: cannot write the Hub cache: {}", p.string(), ec.message()));
}

struct Response {
  long status = 0;
  std::string body;
  std::string content_range;
};

struct Progress {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::string what;
  bool shown = false;
};

int progress_cb(void* p, curl_off_t dltotal, curl_off_t dlnow, curl_off_t, curl_off_t) {
  auto* pr = static_cast<Progress*>(p);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - pr->start).count();
  if (s > 2.0) {  // only slow fetches say anything
    std::fprintf(stderr, "\rk3plan: fetching %s: %.1f MB%s", pr->what.c_str(), static_cast<double>(dlnow) / 1e6,
                 dltotal > 0 ? fmt::format(" of {:.1f} MB", static_cast<double>(dltotal) / 1e6).c_str() : "");
    pr->shown = true;
  }
  return 0;
}

size_t write_cb(char* data, size_t size, size_t n, void* user) {
  auto* r = static_cast<Response*>(user);
  if (r->body.size() + size * n > kMaxHeaderBytes + 16) return 0;  // nothing we fetch is larger
  r->body.append(data, size * n);
  return size * n;
}

size_t header_cb(char* data, size_t size, size_t n, void* user) {
  auto* r = static_cast<Response*>(user);
  std::string line(data, size * n);
  const std::string lower = ascii_lower(line);
  if (lower.rfind("content-range:", 0) == 0) {
    r->content_range = line.substr(14);
    while (!r->content_range.empty() && (r->content_range.back() == '\r' || r->content_range.back() == '\n')) r->content_range.pop_back();
  }
  return size * n;
}

Response http_get(const std::string& url, const HubSettings& s, const std::string& what, const std::string& range = "") {
  static const bool init = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
  if (!init) throw InputError("libcurl failed to initialise");
  CURL* c = curl_easy_init();
  if (!c) throw InputError("libcurl failed to initialise");
  Response r;
  Progress pr;
  pr.what = what;
  curl_slist* headers = nullptr;
  if (!s.token.empty()) headers = curl_slist_append(headers, ("Authorization: Bearer " + s.token).c_str());
  headers = curl_slist_append(headers, "User-Agent: k3plan");
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
  // the token goes only to the endpoint's own host, not to a CDN a redirect points at
  curl_easy_setopt(c, CURLOPT_UNRESTRICTED_AUTH, 0L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, std::min(10L, s.timeout_s));
  curl_easy_setopt(c, CURLOPT_TIMEOUT, s.timeout_s);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_cb);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header_cb);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &r);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, progress_cb);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &pr);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  if (!range.empty()) curl_easy_setopt(c, CURLOPT_RANGE, range.c_str());
  const CURLcode rc = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(c);
  if (pr.shown) std::fprintf(stderr, "\n");
  if (rc != CURLE_OK)
    throw InputError(
        fmt::format("{}: cannot fetch {}: {} (set HF_HUB_OFFLINE=1 to use the cache only)", what, url, curl_easy_strerror(rc)));
  return r;
}

[[noreturn]] void http_error(const Response& r, const std::string& url, const std::string& what, const HubSettings& s) {
  if (r.status == 401 || r.status == 403)
    throw InputError(fmt::format("{}: HTTP {} from {}: {}", what, r.status, url,
                                 s.token.empty() ? "gated or private repository; set HF_TOKEN" : "HF_TOKEN has no access to it"));
  if (r.status == 404) throw InputError(fmt::format("{}: HTTP 404 from {}: no such repository, revision or file on the Hub", what, url));
  throw InputError(fmt::format("{}: HTTP {} from {}", what, r.status, url));
}

std::string repo_cache_dir(const HubId& id, const HubSettings& s) {
  std::string name = id.repo;
  for (auto& c : name)
    if (c == '/') c = '+';
  return (fs::path(s.cache_dir) / name).string();
}

// A revision such as refs/pr/1 is one path segment in the Hub's URLs
std::string encode_revision(const std::string& rev) {
  std::string out;
  for (char c : rev) out += c == '/' ? std::string("%2F") : std::string(1, c);
  return out;
}

std::string url_of(const HubSettings& s, const HubId& id, const std::string& file) {
  return fmt::format("{}/{}/resolve/{}/{}", s.endpoint, id.repo, encode_revision(id.revision), file);
}

}  // namespace

std::optional<HubId> parse_hub_id(const std::string& spec) {
  HubId id;
  std::string repo = spec;
  const auto at = spec.find('@');
  if (at != std::string::npos) {
    repo = spec.substr(0, at);
    id.revision = spec.substr(at + 1);
    if (id.revision.empty() || id.revision.size() > 128) return std::nullopt;
    for (char c : id.revision)
      if (!hub_name_char(c) && c != '/') return std::nullopt;
    if (id.revision.find("..") != std::string::npos) return std::nullopt;
  }
  const auto slash = repo.find('/');
  if (slash == std::string::npos || repo.find('/', slash + 1) != std::string::npos) return std::nullopt;
  if (!valid_part(repo.substr(0, slash)) || !valid_part(repo.substr(slash + 1))) return std::nullopt;
  const std::string tail = repo.substr(slash + 1);
  for (const char* ext : {".json", ".yaml", ".yml"})
    if (tail.size() > std::string(ext).size() && tail.compare(tail.size() - std::string(ext).size(), std::string::npos, ext) == 0)
      return std::nullopt;
  id.repo = repo;
  return id;
}

HubSettings hub_settings_from_env() {
  HubSettings s;
  s.endpoint = env("HF_ENDPOINT");
  if (s.endpoint.empty()) s.endpoint = "https://huggingface.co";
  while (!s.endpoint.empty() && s.endpoint.back() == '/') s.endpoint.pop_back();
  s.token = env("HF_TOKEN");
  // huggingface_hub's HF_HUB_DOWNLOAD_TIMEOUT (seconds) bounds every request
  const std::string t = env("HF_HUB_DOWNLOAD_TIMEOUT");
  if (!t.empty()) {
    char* end = nullptr;
    const long v = std::strtol(t.c_str(), &end, 10);
    if (end == t.c_str() || *end != '\0' || v <= 0 || v > 86400)
      throw InputError(fmt::format("HF_HUB_DOWNLOAD_TIMEOUT: '{}' is not a number of seconds", t));
    s.timeout_s = v;
  }
  const std::string off = env("HF_HUB_OFFLINE");
  s.offline = !off.empty() && off != "0" && off != "false" && off != "False" && off != "no";
  const std::string hf_home = env("HF_HOME");
  if (!hf_home.empty()) {
    s.cache_dir = (fs::path(hf_home) / "k3plan").string();
  } else {
    const std::string xdg = env("XDG_CACHE_HOME"), home = env("HOME");
    s.cache_dir =
        !xdg.empty() ? (fs::path(xdg) / "k3plan").string() : (fs::path(home.empty() ? "/tmp" : home) / ".cache" / "k3plan").string();
  }
  return s;
}

std::string hub_fetch(const HubId& id, const HubSettings& settings, bool shard_headers) {
  HubSettings s = settings;
  const fs::path base = repo_cache_dir(id, s);
  const fs::path ref = base / "refs" / id.revision;
  std::error_code ec;
  std::string sha;
  json info;
  const std::string what = id.repo + (id.revision == "main" ? "" : "@" + id.revision);
  if (!s.offline) {
    const std::string url = fmt::format("{}/api/models/{}/revision/{}", s.endpoint, id.repo, encode_revision(id.revision));
    std::optional<Response> r;
    try {
      r = http_get(url, s, what);
    } catch (const InputError& e) {
      // no network (or a timeout): a revision fetched before is served from the cache
      if (!fs::exists(ref, ec)) throw;
      std::fprintf(stderr, "k3plan: note: %s; using the cached snapshot\n", e.what());
      s.offline = true;
    }
    if (r) {
      if (r->status != 200) http_error(*r, url, what, s);
      try {
        info = json::parse(r->body);
      } catch (const json::parse_error&) {
        throw InputError(fmt::format("{}: {}: malformed JSON from the Hub", what, url));
      }
      sha = info.is_object() && info.contains("sha") && info["sha"].is_string() ? info["sha"].get<std::string>() : id.revision;
    }
  }
  if (s.offline) {
    if (!fs::exists(ref, ec)) throw InputError(fmt::format("{}: not in the Hub cache {} and HF_HUB_OFFLINE is set", what, base.string()));
    sha = read_text(ref);
  }
  bool ok = !sha.empty() && sha.size() <= 128;
  for (char c : sha) ok = ok && (hub_name_char(c) && c != '.');
  if (!ok) throw InputError(fmt::format("{}: commit id '{}' from the Hub (or its cache {}) is not valid", what, sha, ref.string()));
  const fs::path dir = base / "snapshots" / sha;
  std::set<std::string> listed;
  if (info.is_object() && info.contains("siblings") && info["siblings"].is_array())
    for (const auto& x : info["siblings"])
      if (x.is_object() && x.contains("rfilename") && x["rfilename"].is_string()) listed.insert(x["rfilename"].get<std::string>());
  auto fetch = [&](const std::string& file, bool required) {
    const fs::path p = dir / file;
    if (fs::exists(p, ec)) return true;
    const fs::path missing = dir / (file + ".absent");
    if (fs::exists(missing, ec)) return false;
    if (s.offline) {
      if (required) throw InputError(fmt::format("{}: {} is not in the Hub cache and HF_HUB_OFFLINE is set", what, file));
      return false;
    }
    if (!listed.empty() && !listed.count(file)) {
      if (required) throw InputError(fmt::format("{}: the repository has no {}", what, file));
      write_atomic(missing, "");
      return false;
    }
    const std::string url = url_of(s, {id.repo, sha}, file);
    const Response r = http_get(url, s, what + " " + file);
    if (r.status == 404 && !required) {
      write_atomic(missing, "");
      return false;
    }
    if (r.status != 200) http_error(r, url, what, s);
    write_atomic(p, r.body);
    return true;
  };
  fetch("config.json", true);
  fetch("hf_quant_config.json", false);
  const bool have_index = fetch("model.safetensors.index.json", false);
  if (shard_headers) {
    std::vector<std::string> shards;
    if (have_index) {
      shards = parse_safetensors_index(read_text(dir / "model.safetensors.index.json"), (dir / "model.safetensors.index.json").string())
                   .shards();
    } else if (listed.count("model.safetensors") || fs::exists(dir / "model.safetensors.header", ec)) {
      shards = {"model.safetensors"};
    } else if (listed.empty() && !s.offline) {
      shards = {"model.safetensors"};  // no listing: try the single-file layout
    }
    for (const auto& f : shards) {
      const fs::path hp = dir / (f + ".header"), sp = dir / (f + ".size");
      if (fs::exists(hp, ec) && fs::exists(sp, ec)) continue;
      if (s.offline) throw InputError(fmt::format("{}: the header of {} is not in the Hub cache and HF_HUB_OFFLINE is set", what, f));
      const std::string url = url_of(s, {id.repo, sha}, f);
      const Response a = http_get(url, s, what + " " + f, "0-7");
      if (a.status != 206 || a.body.size() != 8)
        throw InputError(fmt::format("{}: {}: expected 206 Partial Content with 8 bytes for the header length, got HTTP {} with {} B", what,
                                     url, a.status, a.body.size()));
      // Content-Range: bytes 0-7/TOTAL
      const auto slash = a.content_range.rfind('/');
      if (slash == std::string::npos || a.content_range.substr(slash + 1) == "*")
        throw InputError(fmt::format("{}: {}: no file size in Content-Range '{}'", what, url, a.content_range));
      const auto size = parse_uint(a.content_range.substr(slash + 1));  // not stoull: "-1" would wrap
      if (!size) throw InputError(fmt::format("{}: {}: malformed Content-Range '{}'", what, url, a.content_range));
      const std::uint64_t total = *size;
      unsigned char first8[8];
      for (int i = 0; i < 8; ++i) first8[i] = static_cast<unsigned char>(a.body[static_cast<std::size_t>(i)]);
      const std::uint64_t n = safetensors_header_length(first8, total, url);
      const Response b = http_get(url, s, what + " " + f, fmt::format("8-{}", 8 + n - 1));
      if (b.status != 206 || b.body.size() != n)
        throw InputError(fmt::format("{}: {}: expected {} B of header, got HTTP {} with {} B", what, url, n, b.status, b.body.size()));
      parse_safetensors_header(b.body, total - 8 - n, url);  // reject a hostile header before caching it
      write_atomic(hp, a.body + b.body);
      write_atomic(sp, std::to_string(total));
    }
  }
  if (!s.offline) write_atomic(ref, sha);
  return dir.string();
}

std::string model_directory(const std::string& spec, const std::string& origin, bool shard_headers) {
  std::error_code ec;
  if (fs::is_directory(spec, ec)) return spec;
  if (fs::exists(spec, ec)) return "";
  const auto id = parse_hub_id(spec);
  if (!id) return "";
  const fs::path o(origin);
  if (o.filename() != "config.json") return "";  // a catalogue model
  if (shard_headers) return hub_fetch(*id, hub_settings_from_env(), true);
  return o.parent_path().string();
}

}  // namespace k3plan
