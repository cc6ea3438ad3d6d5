#pragma once
// The engines' argument tables: data/engines/sglang-flags.yaml and data/engines/vllm-flags.yaml
// (embedded), transcribed from each engine's own argument registration, one window per stretch of
// releases read. They answer: does flag F exist in release R; is value V accepted (argparse
// choices, vLLM's known values, the tool-call / reasoning parser registries, the KV cache dtypes).
//
// The flag windows are not the memory windows of engine.hpp: they follow where the argument
// parser changed. A release number maps to the window whose releases cover it; what every release
// of the window accepts is always accepted, and with a release number also what was added or
// removed mid-window (`partial`, `*_since` in the files). A window id ("0.5", "main") or no
// version (the newest window, "main") means "every release of the window".
//
// Also here: the one builder of an engine's command-line flags, used by `fit` (its printed flags),
// `launch`, `report` and `perf`, so that every name and value they emit is one the table accepts.
#include <cstdint>
#include <k3plan/engine.hpp>
#include <k3plan/model.hpp>
#include <optional>
#include <string>
#include <vector>

namespace k3plan {

// Where in an engine's table a --engine-version lands.
struct FlagRelease {
  Engine engine = Engine::sglang;
  std::string asked;    // as given ("" = newest)
  std::string window;   // flags window id ("0.5", "main"); empty = no window covers the release (flags unchecked)
  std::string release;  // the release number when one was given and lies inside the window ("0.5.8.post1"); else empty
  std::string note;     // set when the mapping is approximate (a release newer than, between or older than the windows read)
  bool known() const { return !window.empty(); }
  std::string label() const;  // "SGLang 0.5.8.post1", "vLLM main", "vLLM 0.11 window (0.11.0-0.16.0)"
};

// The accepted values of one of the registries a table lists.
enum class FlagRegistry { tool_call_parser, reasoning_parser, kv_cache_dtype };

class FlagTable {
 public:
  virtual ~FlagTable() = default;
  virtual Engine engine() const = 0;
  // Window ids, oldest first, and the release range each covers.
  virtual const std::vector<std::string>& windows() const = 0;
  virtual std::string window_range(const std::string& window) const = 0;  // "0.5.1-0.5.18"
  // Maps a release number, a window id, "main" or "" (newest) to a window.
  virtual FlagRelease resolve(const std::string& version) const = 0;
  // The flag (its name or an alias) exists in `r`. An unknown window accepts everything.
  virtual bool has_flag(const std::string& flag, const FlagRelease& r) const = 0;
  virtual bool takes_value(const std::string& flag, const FlagRelease& r) const = 0;
  // `value` is accepted for `flag` in `r`: the registries for the parsers and the KV cache dtype,
  // else the flag's choices / known values, else its type (int, float).
  virtual bool accepts(const std::string& flag, const std::string& value, const FlagRelease& r) const = 0;
  virtual bool in_registry(FlagRegistry reg, const std::string& value, const FlagRelease& r) const = 0;
  virtual std::vector<std::string> registry(FlagRegistry reg, const FlagRelease& r) const = 0;
  // The first release (in the window of `r`, or any later window) that accepts `value`; "" = none read.
  virtual std::string first_release_with(FlagRegistry reg, const std::string& value) const = 0;
};

const FlagTable& flag_table(Engine e);
inline FlagRelease flag_release(Engine e, const std::string& version) { return flag_table(e).resolve(version); }

// Checks a whole engine command line (`vllm serve MODEL ...` or `python3 -m sglang.launch_server
// ...`) against the table: one problem per flag the release does not have or value it does not
// accept. Empty = every option and value is in the table.
std::vector<std::string> unaccepted_flags(const std::vector<std::string>& argv, const FlagRelease& r);

// The --kv-cache-dtype value for k3plan's --kv-dtype (auto, bf16, fp16, fp8, fp8_e4m3, fp8_e5m2,
// fp4, or an engine's own name) in engine release `r`, for a model whose activations are
// `model_dtype`. `error` is set when the release has no such value.
struct KvDtypeArg {
  std::string value;
  std::string error;
};
KvDtypeArg engine_kv_dtype(const FlagRelease& r, const std::string& kv_dtype, const std::string& model_dtype);

// The model's parser names for engine `e` (data/models/*.yaml engine.sglang / engine.vllm).
inline const ParserNames& model_parsers(const Model& m, Engine e) { return e == Engine::vllm ? m.engine.vllm : m.engine.sglang; }

// What the engine loads for a model resolved from `spec`: a local config.json's directory
// (Model::local_path: the directory given, or the config file's), else the catalogue's or Hub's
// Hugging Face repo, else the path as given (a config.json file stands for its directory).
std::string serve_model_path(const Model& m, const std::string& spec);

// Inputs of the one flag builder.
struct ServeRequest {
  const Model* model = nullptr;
  const EngineModel* engine = nullptr;  // engine and memory window (parallel and memory flags)
  std::string engine_version;           // as the user gave it (the flag table's release)
  Layout layout;                        // as the engine runs it (effective_layout)
  EngineDefaults defaults;              // memory fraction
  std::int64_t context = 0;
  std::int64_t max_running = 1;  // SGLang --max-running-requests, vLLM --max-num-seqs
  std::string kv_dtype = "auto";
  std::optional<std::int64_t> chunked_prefill_size;    // SGLang
  std::optional<int> cuda_graph_max_bs;                // SGLang
  std::optional<std::int64_t> max_num_batched_tokens;  // vLLM
  std::string served_model_name;
  // SGLang's linear-attention state pool settings the plan was made with (fit --mamba-*,
  // --max-mamba-cache-size, --disable-radix-cache); nullptr = the engine's defaults
  const EngineSettings* settings = nullptr;
  // only what decides ServeArgs::error (the parallel and memory flags and the KV dtype): the
  // planner's search asks whether the engine would refuse a layout, not for its command
  bool refusal_only = false;
};

struct ServeArgs {
  FlagRelease release;
  std::vector<std::string> args;   // flags after the model (no program, no model path, no node / host flags)
  std::vector<std::string> notes;  // what was left out and why
  std::string error;               // a setting this release cannot express (the command would not run as planned)
};

// Parallel and memory flags (EngineModel), the KV cache dtype, then --trust-remote-code and the
// model's parsers for this engine; every flag and value checked against the table of the release,
// and left out with a note when the release lacks it.
ServeArgs serve_args(const ServeRequest& req);

// Removes from `args` (from index `from` on) the flags `r` lacks and the values it refuses, with
// a note each. Used for the flags appended after serve_args (node ranks, addresses, host, port).
void keep_accepted(std::vector<std::string>& args, std::size_t from, const FlagRelease& r, std::vector<std::string>& notes);

// vLLM --limit-mm-per-prompt: the images per prompt its value gives, in the spellings the engine
// takes and logs ('{"image": 4, "video": 1}', {'image': 4}, image=4,video=1); nullopt when it names
// no image count. serve_args() writes the flag back in the release's spelling.
std::optional<int> limit_mm_images(const std::string& value);

}  // namespace k3plan
