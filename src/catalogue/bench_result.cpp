// Readers of serving-benchmark result files (bench_result.hpp). Each reads the fields its tool
// writes, named as the tool names them; the tool's file and commit is cited once, at its reader.
#include <fmt/format.h>

#include <cmath>
#include <k3plan/ascii.hpp>
#include <k3plan/bench_result.hpp>
#include <k3plan/error.hpp>
#include <k3plan/input_file.hpp>
#include <k3plan/number_text.hpp>
#include <map>
#include <string_view>
#include <nlohmann/json.hpp>

namespace k3plan {

namespace {

using json = nlohmann::json;

[[noreturn]] void bad(const std::string& where, const std::string& field, const std::string& what) {
  throw InputError(fmt::format("{}: field '{}' {}", where, field, what));
}
const char* type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::null:
      return "null";
    default:
      return "a number";
  }
}

// The value at a dotted path (each step an object key), or nullptr.
const json* at_path(const json& root, const std::string& path) {
  const json* cur = &root;
  std::size_t i = 0;
  while (i <= path.size()) {
    const std::size_t dot = path.find('.', i);
    const std::string key = path.substr(i, dot == std::string::npos ? std::string::npos : dot - i);
    if (!cur->is_object()) return nullptr;
    const auto it = cur->find(key);
    if (it == cur->end()) return nullptr;
    cur = &*it;
    if (dot == std::string::npos) break;
    i = dot + 1;
  }
  return cur;
}

// A required number: present, a JSON number, finite, within [lo, hi].
double number(const json& o, const std::string& path, const std::string& where, double lo = 0, double hi = 1e12) {
  const json* v = at_path(o, path);
  if (!v) bad(where, path, "is missing (expected a number)");
  if (!v->is_number()) bad(where, path, fmt::format("expected a number, got {}", type_name(*v)));
  const double x = v->get<double>();
  if (!std::isfinite(x) || x < lo || x > hi) bad(where, path, fmt::format("{:g} is out of range [{:g}, {:g}]", x, lo, hi));
  return x;
}
// An optional whole number (absent or null: 0).
int opt_int(const json& o, const std::string& path, const std::string& where, int lo = 1, int hi = 1 << 20) {
  const json* v = at_path(o, path);
  if (!v || v->is_null()) return 0;
  if (v->is_number_float()) bad(where, path, fmt::format("expected a whole number in [{}, {}], got {:g}", lo, hi, v->get<double>()));
  if (!v->is_number_integer() && !v->is_number_unsigned()) bad(where, path, fmt::format("expected a whole number, got {}", type_name(*v)));
  const auto x = v->get<long long>();
  if (x < lo || x > hi) bad(where, path, fmt::format("{} is out of range [{}, {}]", x, lo, hi));
  return static_cast<int>(x);
}
std::string opt_str(const json& o, const std::string& path, const std::string& where) {
  const json* v = at_path(o, path);
  if (!v || v->is_null()) return "";
  if (!v->is_string()) bad(where, path, fmt::format("expected a string, got {}", type_name(*v)));
  return v->get<std::string>();
}
std::optional<bool> opt_bool(const json& o, const std::string& path, const std::string& where) {
  const json* v = at_path(o, path);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_boolean()) bad(where, path, fmt::format("expected a boolean, got {}", type_name(*v)));
  return v->get<bool>();
}

// vLLM `vllm bench serve --save-result`: vllm/benchmarks/serve.py @ v0.19.0
// (2a69949bdadf0e8942b7a1619b229cb475beef20) json.dump()s one object per run, into its own file, or
// with --append-result onto the end of the file after a newline (JSON lines, no final newline).
// result_json holds date ("%Y%m%d-%H%M%S"), backend,
// model_id, max_concurrency (null without --max-concurrency), then the benchmark result: completed,
// total_input_tokens, total_output_tokens, output_throughput, total_token_throughput (tok/s over the
// run), and per selected percentile metric mean_/median_/std_/p99_<metric>_ms (ttft, tpot, itl;
// TPOT excludes the first token).
constexpr const char* kVllmSource = "vllm/benchmarks/serve.py @ v0.19.0 (2a69949bdadf0e8942b7a1619b229cb475beef20)";
BenchPoint vllm_point(const json& o, const std::string& where) {
  BenchPoint p;
  p.where = where;
  const double done = number(o, "completed", where, 1);
  p.isl_tokens = number(o, "total_input_tokens", where, 1) / done;
  p.osl_tokens = number(o, "total_output_tokens", where, 1) / done;
  p.tput_total_tok_s = number(o, "total_token_throughput", where, 1e-9);
  p.ttft_ms = number(o, "median_ttft_ms", where, 1e-9);
  p.tpot_ms = number(o, "median_tpot_ms", where, 1e-9);
  p.concurrency = opt_int(o, "max_concurrency", where);
  p.concurrency_field = "max_concurrency";
  p.model = opt_str(o, "model_id", where);
  p.date = opt_str(o, "date", where);
  return p;
}

// SGLang `python -m sglang.bench_serving --output-file F`: python/sglang/bench_serving.py @
// 5e7bf73757394309c4a1a38e0f326d178d3b555b appends one JSON object per run (one line): backend,
// max_concurrency, completed, total_input_tokens, total_output_tokens, output_throughput,
// total_throughput, median_ttft_ms, median_tpot_ms, ... and server_info, the server's /server_info
// (python/sglang/srt/entrypoints/http_server.py: its ServerArgs, e.g. tp_size, ep_size,
// enable_dp_attention, kv_cache_dtype, model_path, plus version), or null.
constexpr const char* kSglangSource = "python/sglang/bench_serving.py @ 5e7bf73757394309c4a1a38e0f326d178d3b555b";
BenchPoint sglang_point(const json& o, const std::string& where) {
  BenchPoint p;
  p.where = where;
  const double done = number(o, "completed", where, 1);
  p.isl_tokens = number(o, "total_input_tokens", where, 1) / done;
  p.osl_tokens = number(o, "total_output_tokens", where, 1) / done;
  p.tput_total_tok_s = number(o, "total_throughput", where, 1e-9);
  p.ttft_ms = number(o, "median_ttft_ms", where, 1e-9);
  p.tpot_ms = number(o, "median_tpot_ms", where, 1e-9);
  p.concurrency = opt_int(o, "max_concurrency", where);
  p.concurrency_field = "max_concurrency";
  // --dataset-name random draws each length uniformly from [max(1, ratio x L), L]
  // (bench_serving.py sample_random_requests): below ratio 1 the lengths spread
  const json* ratio = at_path(o, "random_range_ratio");
  if (opt_str(o, "dataset_name", where) == "random" && ratio && ratio->is_number() && ratio->get<double>() < 1)
    p.length_spread = fmt::format(
        "bench_serving drew each request's lengths uniformly from {:g} x to 1 x the nominal ones (random_range_ratio {:g}): the fit "
        "takes their means, and a median TPOT over requests of such mixed output lengths is not the TPOT of the mean one",
        ratio->get<double>(), ratio->get<double>());
  const json* si = at_path(o, "server_info");
  if (si && !si->is_null()) {
    if (!si->is_object()) bad(where, "server_info", fmt::format("expected an object, got {}", type_name(*si)));
    p.engine = "sglang";  // /server_info is SGLang's endpoint
    p.tp = opt_int(o, "server_info.tp_size", where);
    p.ep = opt_int(o, "server_info.ep_size", where);
    p.dp_attention = opt_bool(o, "server_info.enable_dp_attention", where);
    p.kv_dtype = opt_str(o, "server_info.kv_cache_dtype", where);
    p.engine_version = opt_str(o, "server_info.version", where);
    p.model = opt_str(o, "server_info.model_path", where);
    // --dp-size without DP attention launches dp_size copies of the TP group (tp_size GPUs each,
    // base_gpu_id += tp_size) and the controller dispatches requests over them round-robin, its
    // default load_balance_method (python/sglang/srt/managers/data_parallel_controller.py,
    // launch_dp_schedulers); with DP attention the dp ranks live inside the one TP group
    const int dp = opt_int(o, "server_info.dp_size", where);
    if (dp > 0) p.replicas = p.dp_attention.value_or(false) ? 1 : dp;
  }
  return p;
}

// guidellm's report (`guidellm benchmark --outputs json`, benchmarks.json):
// src/guidellm/benchmark/schemas/report.py, benchmark.py, metrics.py, schemas/statistics.py and
// scheduler/strategies.py @ v0.7.3 (39383552962841086d05e25c37b58a83ef06c758): benchmarks[] each with
// config.strategy {type_: synchronous | concurrent (streams) | throughput | constant | poisson ...}
// and metrics.<name>.<successful|incomplete|errored|total>.<mean|median|...>. Read: prompt_token_count
// and output_token_count (successful mean), tokens_per_second (total mean, the server throughput
// its console prints), time_to_first_token_ms and inter_token_latency_ms (successful median). Its
// time_per_output_token_ms includes the first token (request latency / output tokens), so the
// TPOT engines report, which excludes it, is its inter_token_latency_ms.
constexpr const char* kGuidellmSource =
    "guidellm src/guidellm/benchmark/schemas/metrics.py @ v0.7.3 (39383552962841086d05e25c37b58a83ef06c758)";
BenchPoint guidellm_point(const json& b, const std::string& where) {
  BenchPoint p;
  p.where = where;
  p.isl_tokens = number(b, "metrics.prompt_token_count.successful.mean", where, 1e-9);
  p.osl_tokens = number(b, "metrics.output_token_count.successful.mean", where, 1e-9);
  p.tput_total_tok_s = number(b, "metrics.tokens_per_second.total.mean", where, 1e-9);
  p.ttft_ms = number(b, "metrics.time_to_first_token_ms.successful.median", where, 1e-9);
  p.tpot_ms = number(b, "metrics.inter_token_latency_ms.successful.median", where, 1e-9);
  const std::string type = opt_str(b, "config.strategy.type_", where);
  if (type == "synchronous") {
    p.concurrency = 1;
  } else if (type == "concurrent") {
    p.concurrency = opt_int(b, "config.strategy.streams", where);
    if (p.concurrency == 0) bad(where, "config.strategy.streams", "is missing (a concurrent strategy states its streams)");
  }
  p.concurrency_field = "config.strategy.streams";
  return p;
}

// Python's json.dumps writes float('inf') and NaN as the bare words Infinity, -Infinity and NaN,
// which JSON does not have; bench_serving's default --request-rate inf puts one in every line. They
// become null outside strings (no field this reader uses can hold one).
std::string python_json(const std::string& line) {
  std::string out;
  out.reserve(line.size());
  bool in_string = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < line.size())
        out += line[++i];
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    bool replaced = false;
    for (const char* word : {"-Infinity", "Infinity", "NaN"}) {
      const std::string_view w(word);
      if (line.compare(i, w.size(), w) == 0) {
        out += "null";
        i += w.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

// `visit(line_number, text)` for each non-blank line (numbered from 1); a false return stops.
template <class Visit>
void for_each_nonblank_line(const std::string& text, Visit visit) {
  std::size_t start = 0;
  int line = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    ++line;
    const std::string_view one(text.data() + start, end - start);
    start = end + 1;
    if (one.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (!visit(line, one)) return;
  }
}

// Two or more non-blank lines, each one whole object ('{' ... '}'): JSON lines, as bench_serving and
// vLLM's --append-result write them. One object pretty-printed over many lines is not.
bool json_lines(const std::string& text) {
  int objects = 0;
  bool whole = true;
  for_each_nonblank_line(text, [&](int, std::string_view one) {
    whole = one[one.find_first_not_of(" \t\r")] == '{' && one[one.find_last_not_of(" \t\r")] == '}';
    objects += whole;
    return whole;
  });
  return whole && objects > 1;
}

// Each non-blank line one JSON object (Python's bare Infinity / NaN allowed), handed to `take` with
// "FILE:LINE"; a line that is not an object names its line.
template <class Take>
void for_each_json_line(const std::string& text, const std::string& origin, const char* writer, Take take) {
  int objects = 0;
  for_each_nonblank_line(text, [&](int line, std::string_view one) {
    const std::string where = fmt::format("{}:{}", origin, line);
    // the line's own number in a parse error: the JSON reader counts lines from the start of its text
    const json o = parse_json_input(std::string(static_cast<std::size_t>(line - 1), '\n') + python_json(std::string(one)), origin);
    if (!o.is_object()) throw InputError(fmt::format("{}: expected a JSON object per line ({})", where, writer));
    take(o, where);
    ++objects;
    return true;
  });
  if (objects == 0) throw InputError(fmt::format("{}: no JSON lines", origin));
}

// --- CSV (RFC 4180: quoted fields, doubled quotes, CRLF) --------------------------------------------

std::vector<std::vector<std::string>> csv_rows(const std::string& text, const std::string& origin) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string cell;
  bool quoted = false, any = false;
  int line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
        cell += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        cell += c, line += c == '\n';
      continue;
    }
    if (c == '"' && cell.empty())
      quoted = true, any = true;
    else if (c == ',')
      row.push_back(cell), cell.clear(), any = true;
    else if (c == '\r')
      continue;
    else if (c == '\n') {
      if (any || !cell.empty()) row.push_back(cell), rows.push_back(row);
      row.clear(), cell.clear(), any = false, ++line;
    } else
      cell += c, any = true;
  }
  if (quoted) throw InputError(fmt::format("{}:{}: unterminated quoted CSV field", origin, line));
  if (any || !cell.empty()) row.push_back(cell), rows.push_back(row);
  return rows;
}

// InferenceX rows: the columns of its published CSV, as in ../shared/measured/
// inferencex_dsr1_latest_fixture.csv (hardware, framework, model, precision, spec, disagg, multinode,
// decode_tp, decode_ep, decode_dp_attn, total_gpus, isl, osl, conc, image, date, tput_per_gpu,
// median_ttft_s, median_tpot_ms, ...). Throughput is per GPU; ISL/OSL are nominal (requests drawn at
// 80-100% of them); a disaggregated or multi-node row is read and marked, not usable here.
constexpr const char* kInferencexSource = "InferenceX CSV columns (../shared/measured/inferencex_dsr1_latest_fixture.csv header)";
std::vector<BenchPoint> inferencex_points(const std::string& text, const std::string& origin) {
  const auto rows = csv_rows(text, origin);
  if (rows.empty()) throw InputError(fmt::format("{}: empty CSV file (expected a header row naming 'hardware', 'framework', ...)", origin));
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < rows[0].size(); ++i) col[ascii_lower(rows[0][i])] = i;
  for (const char* need : {"hardware", "framework", "model", "precision", "isl", "osl", "conc", "tput_per_gpu", "median_ttft_s",
                           "median_tpot_ms", "decode_tp"})
    if (!col.count(need)) throw InputError(fmt::format("{}:1: field '{}' is missing from the CSV header", origin, need));
  std::vector<BenchPoint> out;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const auto& row = rows[r];
    const std::string where = fmt::format("{}:{}", origin, r + 1);
    auto cell = [&](const char* k) -> std::string {
      const auto it = col.find(k);
      return it == col.end() || it->second >= row.size() ? std::string() : row[it->second];
    };
    auto num = [&](const char* k, double lo, double hi, bool required) -> double {
      const std::string s = cell(k);
      if (s.empty()) {
        if (required) bad(where, k, "is empty (expected a number)");
        return 0;
      }
      const auto v = parse_real(s);
      if (!v || !std::isfinite(*v)) bad(where, k, fmt::format("'{}' is not a number", s));
      if (*v < lo || *v > hi) bad(where, k, fmt::format("{:g} is out of range [{:g}, {:g}]", *v, lo, hi));
      return *v;
    };
    auto whole = [&](const char* k, double lo, double hi, bool required) {
      const double v = num(k, lo, hi, required);
      if (v != std::floor(v)) bad(where, k, fmt::format("{:g} is not a whole number", v));
      return static_cast<int>(v);
    };
    BenchPoint p;
    p.where = where;
    p.gpu = ascii_lower(cell("hardware"));
    p.engine = ascii_lower(cell("framework"));
    p.model = cell("model");
    p.precision = ascii_lower(cell("precision"));
    p.spec = cell("spec").empty() ? "none" : ascii_lower(cell("spec"));
    if (p.gpu.empty()) bad(where, "hardware", "is empty (expected a GPU id)");
    if (p.engine.empty()) bad(where, "framework", "is empty (expected an engine)");
    p.tp = whole("decode_tp", 1, 4096, true);
    p.ep = whole("decode_ep", 1, 4096, false);
    if (!cell("decode_dp_attn").empty()) p.dp_attention = whole("decode_dp_attn", 0, 1, true) == 1;
    p.gpus = whole("total_gpus", 1, 1 << 20, false);
    p.isl_tokens = num("isl", 1, 1e7, true);
    p.osl_tokens = num("osl", 1, 1e7, true);
    p.nominal_lengths = true;
    p.concurrency = whole("conc", 1, 1 << 20, true);
    p.concurrency_field = "conc";
    p.tput_total_tok_s_per_gpu = num("tput_per_gpu", 1e-9, 1e9, true);
    p.ttft_ms = num("median_ttft_s", 1e-9, 1e6, true) * 1000;
    p.tpot_ms = num("median_tpot_ms", 1e-9, 1e6, true);
    p.date = cell("date");
    // the engine release from the image tag: lmsysorg/sglang:v0.5.12-cu130 -> 0.5.12
    const std::string image = cell("image");
    if (const auto c = image.find(":v"); c != std::string::npos) {
      std::size_t e = c + 2;
      while (e < image.size() && (ascii_is_digit(image[e]) || image[e] == '.')) ++e;
      p.engine_version = image.substr(c + 2, e - c - 2);
    }
    if (cell("disagg") == "1" || cell("multinode") == "1")
      p.exclude = "disaggregated or multi-node row: calibrate fits single-instance aggregated serving";
    out.push_back(p);
  }
  if (out.empty()) throw InputError(fmt::format("{}: the CSV holds a header and no rows", origin));
  return out;
}

std::string detect(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')) ++i;
  if (i < text.size() && text[i] != '{' && text[i] != '[') return "inferencex";
  const auto has = [&](const char* key) { return text.find(fmt::format("\"{}\"", key)) != std::string::npos; };
  if (has("benchmarks")) return "guidellm";
  if (has("total_throughput")) return "sglang";
  if (has("total_token_throughput")) return "vllm";
  return "";
}

}  // namespace

BenchFile parse_bench_text(const std::string& text, const std::string& origin, const std::string& format) {
  BenchFile f;
  f.format = format == "auto" ? detect(text) : format;
  if (f.format.empty())
    throw InputError(
        fmt::format("{}: not a benchmark result this reader knows: expected field 'total_token_throughput' (vLLM "
                    "--save-result), 'total_throughput' (SGLang bench_serving), 'benchmarks' (guidellm) or a CSV "
                    "header with 'hardware' (InferenceX); or give --input-format",
                    origin));
  if (f.format == "vllm") {
    f.fields_source = kVllmSource;
    if (json_lines(text)) {
      for_each_json_line(text, origin, "vllm bench serve --save-result --append-result",
                         [&](const json& o, const std::string& where) { f.points.push_back(vllm_point(o, where)); });
    } else {
      const json o = parse_json_input(python_json(text), origin);
      if (!o.is_object()) throw InputError(fmt::format("{}: expected one JSON object (vllm bench serve --save-result)", origin));
      f.points.push_back(vllm_point(o, origin));
    }
  } else if (f.format == "sglang") {
    f.fields_source = kSglangSource;
    for_each_json_line(text, origin, "sglang.bench_serving --output-file",
                       [&](const json& o, const std::string& where) { f.points.push_back(sglang_point(o, where)); });
  } else if (f.format == "guidellm") {
    f.fields_source = kGuidellmSource;
    const json o = parse_json_input(text, origin);
    const json* b = o.is_object() ? at_path(o, "benchmarks") : nullptr;
    if (!b) bad(origin, "benchmarks", "is missing (expected guidellm's report: an object with a benchmarks list)");
    if (!b->is_array() || b->empty()) bad(origin, "benchmarks", "expected a non-empty array");
    for (std::size_t i = 0; i < b->size(); ++i) {
      if (!(*b)[i].is_object()) bad(origin, fmt::format("benchmarks[{}]", i), "expected an object");
      f.points.push_back(guidellm_point((*b)[i], fmt::format("{}: benchmarks[{}]", origin, i)));
    }
  } else if (f.format == "inferencex") {
    f.fields_source = kInferencexSource;
    f.points = inferencex_points(text, origin);
  } else {
    throw InputError(fmt::format("--input-format {}: expected auto, vllm, sglang, guidellm or inferencex", format));
  }
  return f;
}

BenchFile read_bench_file(const std::string& path, const std::string& format) {
  return parse_bench_text(read_input_file(path, "benchmark result"), path, format);
}

}  // namespace k3plan
