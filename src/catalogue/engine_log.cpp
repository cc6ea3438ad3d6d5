#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <k3plan/ascii.hpp>
#include <k3plan/engine_log.hpp>
#include <k3plan/error.hpp>
#include <regex>
#include <sstream>
#include <string_view>

namespace k3plan {

namespace {

constexpr double kGiBd = 1073741824.0;

std::string trim(std::string s) {
  while (!s.empty() && ascii_is_space(s.back())) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && ascii_is_space(s[i])) ++i;
  return s.substr(i);
}

std::string unquote(std::string v) {
  v = trim(v);
  if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) return v.substr(1, v.size() - 2);
  return v;
}

// Bracket depth of a Python repr read piece by piece (an arguments line a paste may have wrapped),
// quotes and backslash escapes inside them respected. feed() returns the offset in the piece just
// past the bracket that closes the first one, or npos while it is still open.
struct BracketScan {
  int depth = 0;
  char quote = 0;
  bool escaped = false, closed = false;
  std::size_t feed(std::string_view s) {
    for (std::size_t i = 0; i < s.size() && !closed; ++i) {
      const char c = s[i];
      if (quote) {
        if (escaped)
          escaped = false;
        else if (c == '\\')
          escaped = true;
        else if (c == quote)
          quote = 0;
        continue;
      }
      if (c == '\'' || c == '"')
        quote = c;
      else if (c == '(' || c == '[' || c == '{')
        ++depth;
      else if ((c == ')' || c == ']' || c == '}') && --depth == 0) {
        closed = true;
        return i + 1;
      }
    }
    return std::string_view::npos;
  }
};

// Index just past the bracket that closes the one at `open` (or npos), quotes respected.
std::size_t match_close(const std::string& s, std::size_t open) {
  if (open >= s.size()) return std::string::npos;
  const std::size_t n = BracketScan{}.feed(std::string_view(s).substr(open));
  return n == std::string_view::npos ? std::string::npos : open + n;
}

// "1,234" and "1234" -> 1234
std::optional<std::int64_t> to_int(const std::string& s) {
  std::string d;
  for (char c : s)
    if (std::isdigit(static_cast<unsigned char>(c)))
      d += c;
    else if (c != ',')
      break;
  if (d.empty() || d.size() > 15) return std::nullopt;
  return std::stoll(d);
}

std::optional<double> to_double(const std::string& s) {
  std::istringstream in(s);
  in.imbue(std::locale::classic());
  double v = 0;
  if (!(in >> v) || !std::isfinite(v) || v < 0 || v > 1e7) return std::nullopt;
  return v;
}

// The number after `key` in `line` (GiB figures, "12.3GiB" or "12.3 GB")
std::optional<double> gib_after(const std::string& line, const std::string& key) {
  const auto p = line.find(key);
  if (p == std::string::npos) return std::nullopt;
  std::size_t i = p + key.size();
  while (i < line.size() && (line[i] == ' ' || line[i] == '=' || line[i] == ':' || line[i] == '(')) ++i;
  const auto v = to_double(line.substr(i, 24));
  if (!v) return std::nullopt;
  return *v * kGiBd;
}

std::optional<std::int64_t> int_after(const std::string& line, const std::string& key) {
  const auto p = line.find(key);
  if (p == std::string::npos) return std::nullopt;
  std::size_t i = p + key.size();
  while (i < line.size() && (line[i] == ' ' || line[i] == '=' || line[i] == ':')) ++i;
  return to_int(line.substr(i, 24));
}

template <class T>
void set_once(std::optional<T>& slot, const std::optional<T>& v) {
  if (!slot && v) slot = v;
}

}  // namespace

std::map<std::string, std::string> parse_python_pairs(const std::string& text) {
  std::map<std::string, std::string> out;
  std::string s = trim(text);
  char close = 0;
  bool dict = false;
  std::size_t begin = 0, end = s.size();
  if (!s.empty() && s.front() == '{') {
    dict = true;
    close = '}';
    begin = 1;
  } else {
    const auto paren = s.find('(');
    const auto eq = s.find('=');
    if (paren != std::string::npos && (eq == std::string::npos || paren < eq)) {
      begin = paren + 1;
      close = ')';
    }
  }
  // A repr whose closing bracket is missing was cut (a pasted or stored excerpt ends inside it,
  // "... chunked_prefill_size=163 [...]"): its last item may have lost part of its value, so only
  // the items a comma closes are read.
  bool cut = false;
  if (close) {
    const auto stop = match_close(s, begin - 1);
    cut = stop == std::string::npos;
    end = cut ? s.size() : stop - 1;
  }
  // split on commas at depth 0 of the inner text
  std::vector<std::string> items;
  int depth = 0;
  char quote = 0;
  std::string cur;
  for (std::size_t i = begin; i < end; ++i) {
    const char c = s[i];
    if (quote) {
      cur += c;
      if (c == '\\' && i + 1 < end) {
        cur += s[++i];
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '\'' || c == '"') quote = c;
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      items.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (!cut && !trim(cur).empty()) items.push_back(cur);
  for (const auto& it : items) {
    // key and value split at the first ':' (dict) or '=' (kwargs) outside quotes
    char q = 0;
    std::size_t split = std::string::npos;
    for (std::size_t i = 0; i < it.size(); ++i) {
      const char c = it[i];
      if (q) {
        if (c == q) q = 0;
        continue;
      }
      if (c == '\'' || c == '"') {
        q = c;
        continue;
      }
      if ((dict && c == ':') || (!dict && c == '=')) {
        split = i;
        break;
      }
    }
    if (split == std::string::npos) continue;
    const std::string key = unquote(it.substr(0, split));
    if (key.empty() || key.size() > 80) continue;
    out.emplace(key, unquote(it.substr(split + 1)));
  }
  return out;
}

std::string EngineLog::arg(const std::string& key, const std::string& fallback) const {
  const auto it = args.find(key);
  return it == args.end() ? fallback : it->second;
}

std::int64_t EngineLog::int_arg(const std::string& key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) const {
  if (!has(key)) return fallback;
  const std::string v = arg(key);
  if (v == "None" || v.empty()) return fallback;
  try {
    std::size_t used = 0;
    const long long x = std::stoll(v, &used);
    if (used != v.size() || x < lo || x > hi) throw std::out_of_range(v);
    return x;
  } catch (const std::exception&) {
    throw InputError(fmt::format("{}: argument {}={}: expected an integer between {} and {}", origin, key, v, lo, hi));
  }
}

double EngineLog::num_arg(const std::string& key, double fallback, double lo, double hi) const {
  if (!has(key)) return fallback;
  const std::string v = arg(key);
  if (v == "None" || v.empty()) return fallback;
  std::istringstream in(v);
  in.imbue(std::locale::classic());
  double x = 0;
  if (!(in >> x) || !std::isfinite(x) || x < lo || x > hi)
    throw InputError(fmt::format("{}: argument {}={}: expected a number between {} and {}", origin, key, v, lo, hi));
  return x;
}

bool EngineLog::flag_arg(const std::string& key) const {
  const std::string v = arg(key);
  return v == "True" || v == "true" || v == "1";
}

namespace {

// A line that starts a log record (or a prompt / comment), not the continuation of a wrapped one:
// a level word, a logger or process prefix ("(EngineCore pid=1)", "[2026-...", a docker-compose
// "svc-1  | "), a date, a prompt or comment character, or a level word near its start (NCCL and
// journald prefixes). Only the first 64 characters are looked at (std::regex recurses per character).
bool starts_record(std::string_view t) {
  static const std::regex record(
      R"(^(INFO |WARNING |WARN |DEBUG |ERROR |CRITICAL |[(\[#$]|[0-9]{2}-[0-9]{2} |[0-9]{4}-[0-9]{2}-[0-9]{2}|\S+\s+\| ))");
  if (t.empty()) return true;
  const std::string head(t.substr(0, 64));
  if (std::regex_search(head, record)) return true;
  for (const char* level : {" INFO ", " WARNING ", " DEBUG ", " ERROR "})
    if (head.find(level) != std::string::npos) return true;
  return false;
}

bool blank(std::string_view s) { return s.find_first_not_of(" \t\r\f\v") == std::string_view::npos; }

// The log's non-blank lines, with an arguments line that a paste wrapped at a fixed width joined
// again: a line whose "args: Namespace(", "non-default args: {" or "ServerArgs(" bracket does not
// close takes the lines after it, as they are (a fixed-width wrap cuts inside a token), until the
// bracket closes, a blank line, or a line that starts a new record (GitHub issue pastes of vLLM 0.5
// logs, e.g. vllm#5569). Each piece is scanned once; at most 256 lines are joined to one.
std::vector<std::string> logical_lines(const std::string& text) {
  constexpr std::size_t kMaxJoined = 256;
  const std::string_view all(text);
  std::vector<std::string> out;
  std::size_t pos = 0;
  auto next_line = [&]() {
    const std::size_t end = std::min(all.find('\n', pos), all.size());
    std::string_view line = all.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = end + 1;
    return line;
  };
  while (pos < all.size()) {
    const std::string_view raw = next_line();
    if (blank(raw)) continue;
    std::string line(raw);
    const std::size_t first = raw.find_first_not_of(" \t");
    std::size_t open = std::string::npos;
    if (raw[first] != '#')
      for (const char* key : {"args: Namespace(", "non-default args: {", "ServerArgs("})
        if (const auto p = raw.find(key); p != std::string_view::npos) {
          open = p + std::string_view(key).size() - 1;
          break;
        }
    if (open != std::string::npos) {
      BracketScan scan;
      scan.feed(raw.substr(open));
      for (std::size_t joined = 0; !scan.closed && joined < kMaxJoined && pos < all.size(); ++joined) {
        const std::size_t save = pos;
        const std::string_view piece = next_line();
        const std::size_t lead = piece.find_first_not_of(" \t");
        if (lead == std::string_view::npos || starts_record(piece.substr(lead))) {
          pos = save;  // a blank line or the next record: read on its own
          break;
        }
        line += piece;
        scan.feed(piece);
      }
    }
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace

EngineLog parse_engine_log(const std::string& text, const std::string& origin) {
  EngineLog log;
  log.origin = origin;
  bool vllm = false, sglang = false;
  const std::regex vllm_version(R"(vLLM API server version v?([0-9]+\.[0-9]+(\.[0-9]+)*(\.post[0-9]+|rc[0-9]+)?))");
  const std::regex engine_version(R"(LLM engine \(v([0-9]+\.[0-9]+(\.[0-9]+)*[^)]*)\))");
  const std::regex sglang_version(R"((?:sglang|SGLang)[ =:_-]*(?:version)?[ =:]*v?([0-9]+\.[0-9]+\.[0-9]+(\.post[0-9]+)?))");
  // vLLM's CUDA-graph advisory quotes the utilization in force, cache_config.gpu_memory_utilization:
  // "increase --gpu-memory-utilization from %.4f to %.4f" / "The current --gpu-memory-utilization=%.4f
  // is equivalent" (v1/worker/gpu_worker.py determine_available_memory @ v0.19.0); read when no
  // arguments line gives it
  const std::regex util_advisory(R"(--gpu-memory-utilization(?: from |=)([01]\.[0-9]+))");
  std::string advisory_util;
  bool in_command = false;
  for (const std::string& line : logical_lines(text)) {
    const std::string t = trim(line);
    // '#' lines are comments (a corpus header, a shell prompt), except V0's own "# GPU blocks: N" /
    // "# cuda blocks: N" line when a paste has lost the logger prefix in front of it
    if (t.empty() || (t[0] == '#' && t.rfind("# GPU blocks", 0) != 0 && t.rfind("# cuda blocks", 0) != 0)) continue;
    log.lines.push_back(t);
    // a launch command (the args line is missing in many pasted logs)
    if (in_command) {
      log.command += "\n" + t;
      in_command = !t.empty() && t.back() == '\\';
      continue;
    }
    if (log.command.empty() &&
        (t.find("vllm serve") != std::string::npos || t.find("sglang.launch_server") != std::string::npos ||
         t.find("vllm.entrypoints.openai.api_server") != std::string::npos) &&
        t.find("INFO") == std::string::npos) {
      log.command = t;
      in_command = t.back() == '\\';
      if (t.find("sglang") != std::string::npos)
        sglang = true;
      else
        vllm = true;
      continue;
    }
    std::smatch m;
    // --- arguments
    if (const auto p = t.find("non-default args:"); p != std::string::npos && log.args.empty()) {
      log.args = parse_python_pairs(t.substr(t.find('{', p) == std::string::npos ? p + 17 : t.find('{', p)));
      log.args_from = "non-default args";
      vllm = true;
    } else if (const auto q = t.find("args: Namespace("); q != std::string::npos && log.args.empty()) {
      log.args = parse_python_pairs(t.substr(q + 6));
      log.args_from = "args: Namespace";
      vllm = true;
    } else if (const auto r = t.find("server_args=ServerArgs("); r != std::string::npos && log.args.empty()) {
      log.args = parse_python_pairs(t.substr(r + 12));
      log.args_from = "server_args";
      sglang = true;
    }
    if (const auto c = t.find(" with config: "); c != std::string::npos && t.find("LLM engine") != std::string::npos) {
      // engine config line: fills what the args line did not give (V0 logs have no args line)
      for (auto& [k, v] : parse_python_pairs(t.substr(c + 14))) log.args.emplace(k, v);
      if (log.args_from.empty()) log.args_from = "engine config";
      vllm = true;
      if (std::regex_search(t, m, engine_version) && log.version.empty()) log.version = m[1];
      if (t.find("Initializing an LLM engine") != std::string::npos || t.find("Initializing a V0 LLM engine") != std::string::npos)
        log.v0_engine = true;
    }
    // the custom all-reduce's P2P check (vllm/distributed/device_communicators/custom_all_reduce.py,
    // gpu_p2p_access_check) failed: the GPUs of the group cannot map each other's memory
    if (t.find("Custom allreduce is disabled because your platform lacks GPU P2P capability") != std::string::npos) log.no_gpu_p2p = true;
    // vLLM V1's sampler without FlashInfer (v1/sample/ops/topk_topp_sampler.py TopKTopPSampler.__init__
    // @ v0.10.2: the two warnings that select forward_native)
    if (t.find("Falling back to the PyTorch-native implementation of top-p & top-k sampling") != std::string::npos ||
        t.find("FlashInfer version >= 0.2.3 required. Falling back to default sampling implementation") != std::string::npos)
      log.sampler_native = true;
    if (std::regex_search(t, m, vllm_version) && log.version.empty()) {
      log.version = m[1];
      vllm = true;
    }
    // --- vLLM memory lines
    // "Loading model weights took X GB" up to 0.6 (vllm/worker/model_runner.py load_model @ v0.6.4.post1:
    // the figure is model_memory_usage / 2**30, GiB despite the unit), "Model loading took" after
    if (t.find("Loading model weights took") != std::string::npos) {
      set_once(log.weights_bytes, gib_after(t, "Loading model weights took"));
      vllm = true;
    }
    if (t.find("Model loading took") != std::string::npos) {
      set_once(log.weights_bytes, gib_after(t, "Model loading took"));
      vllm = true;
    }
    // the profile's one-line summaries: V1 (gpu_worker.py, DEBUG from 0.11) and V0 0.7-0.8
    // (vllm/worker/worker.py determine_num_available_blocks, after "the current vLLM instance can
    // use total_gpu_memory (X) x gpu_memory_utilization"); nullptr = the line has no such figure
    struct ProfileLine {
      const char *marker, *non_kv, *activation, *non_torch, *kv_pool, *weights;
    };
    static constexpr ProfileLine kProfileLines[] = {
        {"Total non KV cache memory", "Total non KV cache memory", "torch peak memory increase", "non-torch forward increase memory",
         nullptr, "weights memory"},
        {"PyTorch activation peak memory takes", nullptr, "PyTorch activation peak memory takes", "non_torch_memory takes",
         "reserved for KV Cache is", "model weights take"},
    };
    if (t.find("Memory profiling takes") != std::string::npos) vllm = true;
    // Only the V0 worker prints the "PyTorch activation peak memory takes" summary
    // (vllm/worker/worker.py determine_num_available_blocks @ v0.8.3 296c6572d; the V1 gpu_worker.py
    // prints "Available KV cache memory"), so an excerpt without the engine-config line is still
    // read as a V0 start-up
    if (t.find("PyTorch activation peak memory takes") != std::string::npos) log.v0_engine = true;
    // likewise the 0.6.4 V0 summary "Memory profiling results: total_gpu_memory=..." (vllm/worker/worker.py
    // determine_num_available_blocks @ v0.6.4.post1 a6221a144; no V1 file prints it)
    if (t.find("Memory profiling results") != std::string::npos) log.v0_engine = true;
    for (const ProfileLine& pl : kProfileLines) {
      if (t.find(pl.marker) == std::string::npos) continue;
      auto figure = [&](const char* key) { return key ? gib_after(t, key) : std::nullopt; };
      set_once(log.non_kv_bytes, figure(pl.non_kv));
      set_once(log.activation_bytes, figure(pl.activation));
      set_once(log.non_torch_bytes, figure(pl.non_torch));
      set_once(log.kv_pool_bytes, figure(pl.kv_pool));
      if (auto w = figure(pl.weights)) log.weights_bytes = w;  // the profile's figure wins over "Model loading took"
      vllm = true;
    }
    // V1's start-up summary after the CUDA graphs (gpu_worker.py compile_or_warm_up_model @ v0.10.2:
    // "Actual usage is %.2f GiB for weight, %.2f GiB for peak activation, %.2f GiB for non-torch
    // memory, and %.2f GiB for CUDAGraph memory"): the figures stand before their names
    static const std::regex actual_usage(
        R"(Actual usage is ([0-9.]+) GiB for weight, ([0-9.]+) GiB for peak activation, ([0-9.]+) GiB for non-torch memory)");
    if (const auto a = t.find("Actual usage is"); a != std::string::npos) {
      const std::string part = t.substr(a, 160);  // the summary only: std::regex recurses per character
      if (std::smatch u; std::regex_search(part, u, actual_usage)) {
        const auto gib = [](const std::string& x) -> std::optional<double> {
          const auto v = to_double(x);
          return v ? std::optional<double>(*v * kGiBd) : std::nullopt;
        };
        set_once(log.weights_bytes, gib(u[1]));
        set_once(log.activation_bytes, gib(u[2]));
        set_once(log.non_torch_bytes, gib(u[3]));
        vllm = true;
      }
    }
    if (t.find("Memory profiling results") != std::string::npos) {
      set_once(log.total_bytes, gib_after(t, "total_gpu_memory"));
      // every rank prints its own line; the executor sizes the cache by the smallest
      // (distributed_gpu_executor.py determine_num_available_blocks: min over the workers'
      // num_gpu_blocks @ v0.6.4.post1), so the terms are that rank's: the driver's, which also
      // samples and gathers the logits
      const auto kv = gib_after(t, "kv_cache_size");
      if (!log.kv_pool_bytes || (kv && *kv < *log.kv_pool_bytes)) {
        log.kv_pool_bytes = kv;
        log.non_torch_bytes = gib_after(t, "non_torch_memory");
        // V0: the peak includes the weights
        const auto peak = gib_after(t, "peak_torch_memory");
        if (peak && log.weights_bytes) log.activation_bytes = *peak - *log.weights_bytes;
      }
      vllm = true;
    }
    // V1 DEBUG "worker init memory snapshot: torch_peak=..., free_memory=X GiB, total_memory=Y GiB, ..."
    // (vllm/v1/worker/gpu_worker.py logs MemorySnapshot's repr, vllm/utils/mem_utils.py at v0.19.0
    // 2a69949b: total_memory = the total of current_platform.mem_get_info)
    if (t.find("memory snapshot") != std::string::npos && t.find("total_memory=") != std::string::npos) {
      set_once(log.total_bytes, gib_after(t, "total_memory"));
      vllm = true;
    }
    if (t.find("the current vLLM instance can use total_gpu_memory") != std::string::npos) {
      set_once(log.total_bytes, gib_after(t, "total_gpu_memory"));
      vllm = true;
    }
    if (t.find("Initial free memory") != std::string::npos) {
      set_once(log.initial_free_bytes, gib_after(t, "Initial free memory"));
      const auto p2 = t.find("(util),");
      if (p2 != std::string::npos) set_once(log.requested_bytes, gib_after(t, "(util),"));
      vllm = true;
    }
    if (t.find("Available KV cache memory") != std::string::npos) {
      set_once(log.kv_pool_bytes, gib_after(t, "Available KV cache memory"));
      vllm = true;
    }
    if (t.find("GPU KV cache size") != std::string::npos) {
      set_once(log.kv_cache_tokens, int_after(t, "GPU KV cache size"));
      vllm = true;
    }
    if (t.find("Maximum concurrency for") != std::string::npos) {
      set_once(log.concurrency_tokens, int_after(t, "Maximum concurrency for"));
      const auto p3 = t.find("per request:");
      if (p3 != std::string::npos) set_once(log.max_concurrency, to_double(t.substr(p3 + 12, 24)));
      vllm = true;
    }
    if (t.find("# GPU blocks") != std::string::npos || t.find("# cuda blocks") != std::string::npos) {
      // "# GPU blocks: N, # CPU blocks: M" up to 0.7; "# cuda blocks: N" (the platform's name) in 0.8 V0
      set_once(log.gpu_blocks, int_after(t, t.find("# GPU blocks") != std::string::npos ? "# GPU blocks" : "# cuda blocks"));
      vllm = true;
    }
    if (t.find("Graph capturing finished") != std::string::npos) set_once(log.cudagraph_bytes, gib_after(t, "took"));
    // --- SGLang lines
    if (t.find("Load weight begin") != std::string::npos) {
      set_once(log.load_begin_avail_bytes, gib_after(t, "avail mem"));
      sglang = true;
    }
    if (t.find("Load weight end") != std::string::npos) {
      set_once(log.load_end_avail_bytes, gib_after(t, "avail mem"));
      set_once(log.weights_usage_bytes, gib_after(t, "mem usage"));
      sglang = true;
    }
    if (t.find("KV Cache is allocated") != std::string::npos) {
      set_once(log.kv_allocated_tokens, int_after(t, "#tokens"));
      set_once(log.kv_k_bytes, gib_after(t, "K size"));
      set_once(log.kv_v_bytes, gib_after(t, "V size"));
      if (t.find("K size") == std::string::npos) set_once(log.kv_bytes, gib_after(t, "KV size"));
      sglang = true;
    }
    if (t.find("Mamba Cache is allocated") != std::string::npos) {
      set_once(log.mamba_cache_size, int_after(t, "max_mamba_cache_size"));
      set_once(log.mamba_conv_bytes, gib_after(t, "conv_state size"));
      set_once(log.mamba_ssm_bytes, gib_after(t, "ssm_state size"));
      sglang = true;
    }
    if (t.find("max_total_num_tokens=") != std::string::npos) {
      set_once(log.max_total_num_tokens, int_after(t, "max_total_num_tokens"));
      set_once(log.max_running_requests, int_after(t, "max_running_requests"));
      set_once(log.context_len, int_after(t, "context_len"));
      sglang = true;
    }
    if (t.find("Memory pool end") != std::string::npos) set_once(log.pool_end_avail_bytes, gib_after(t, "avail mem"));
    if (sglang && log.version.empty() && std::regex_search(t, m, sglang_version)) log.version = m[1];
    if (advisory_util.empty() && t.find("CUDA graph memory profiling") != std::string::npos && std::regex_search(t, m, util_advisory)) {
      advisory_util = m[1];
      vllm = true;
    }
  }
  if (!advisory_util.empty() && !log.has("gpu_memory_utilization")) {
    log.args["gpu_memory_utilization"] = advisory_util;
    log.args_from += log.args_from.empty() ? "CUDA-graph advisory line" : " + CUDA-graph advisory line";
  }
  if (vllm && !sglang) log.engine = Engine::vllm;
  if (sglang && !vllm) log.engine = Engine::sglang;
  if (vllm && sglang) {
    // both kinds of line: the arguments decide
    log.engine = log.args_from == "server_args" ? Engine::sglang : Engine::vllm;
  }
  if (!log.engine)
    throw InputError(fmt::format("{}: not a vLLM or SGLang start-up log (no arguments line and no KV cache line found)", origin));
  if (vllm && sglang && log.args_from.empty() && !log.command.empty())
    log.engine = log.command.find("sglang") != std::string::npos ? Engine::sglang : Engine::vllm;
  return log;
}

}  // namespace k3plan
