#pragma once
// `k3plan validate --log`'s comparison (src/engines/log_check.cpp): a vLLM or SGLang start-up log
// read back into the serving context it ran (model, GPU, layout, memory flags; what the log does not
// say comes from -m / -g / --engine-version), the fit budget for that context and the engine
// model's reading of the log's memory lines, term by term, with the term that explains the
// difference. The command (src/commands/validate_log_cmd.cpp) reads the file and lays it out.
#include <cstdint>
#include <k3plan/budget.hpp>
#include <k3plan/catalogue.hpp>
#include <k3plan/engine.hpp>
#include <k3plan/engine_log.hpp>
#include <string>
#include <vector>

namespace k3plan {

struct LogCheckOptions {
  std::string model;           // -m: overrides the log's model argument
  std::string gpu;             // -g: when the log does not name the GPU
  std::string engine;          // optional: must match the log
  std::string engine_version;  // when the log does not print it (default: newest window)
};

struct LogCheck {
  EngineLog log;                        // with the arguments of its launch command when it has no arguments line
  const EngineModel* engine = nullptr;  // the version window the log follows
  Model model;                          // with the log's --dtype and load-time fp8 quantization
  Gpu gpu;
  Layout layout;
  EngineSettings settings;
  std::int64_t context = 0;
  FitResult fit;                         // one user at `context`
  std::int64_t predicted_kv_tokens = 0;  // as the engine prints it
  std::int64_t logged_kv_tokens = 0;
  std::string logged_kv_from;  // the line the logged count came from
  std::vector<LogTerm> terms;
  int explained_by = -1;           // index into terms: the logged term with the largest effect on the KV pool (over 0.02 GiB), -1 = none
  double kv_tokens_error_pct = 0;  // (predicted - logged) / logged x 100
  std::vector<std::string> assumptions;  // what the comparison assumed beyond the log (a GPU inferred from its capacity)
};

// The log `text` (read from `origin`) against the plan. InputError (naming `origin`) when it is not
// a start-up log, names another engine than `o.engine`, or lacks the model, the GPU or the KV size.
LogCheck check_start_up_log(const Catalogue& cat, const std::string& text, const std::string& origin, const LogCheckOptions& o);

// The catalogue GPU (or validation GPU) a log names (nvidia-smi, device names), longest name
// first; "" when it names none.
std::string gpu_from_log(const Catalogue& cat, const EngineLog& log);

// The catalogue GPU whose engine total (memory_engine_total_mib, the torch total an engine sizes
// its pools from) is the total the log prints (`total_bytes`: vLLM V1 "total_memory=X GiB", V0
// "total_gpu_memory=X GiB"), for a log that names no GPU. Matches are GPUs with a recorded engine
// total within kEngineTotalToleranceMiB of the logged one; when they all have the same capacity
// (within the log's printing step, 0.01 GiB) the closest is returned with `assumption` set to the
// line that says so and which others matched; "" when none matches, the capacities differ, or the
// log prints no total.
inline constexpr double kEngineTotalToleranceMiB = 64;
std::string gpu_from_engine_total(const Catalogue& cat, const EngineLog& log, std::string& assumption);

}  // namespace k3plan
