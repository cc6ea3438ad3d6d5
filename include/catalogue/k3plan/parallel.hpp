#pragma once
// The parallel layout of one engine instance, as a value (engines/ gives it meaning: layout.hpp,
// engine.hpp). Lives in the catalogue layer because deployment files and start-up logs carry one.
// Invariant: gpus() == tp * pp * dp for vLLM; for SGLang the instance is tp * pp GPUs and dp
// (DP-attention) partitions the TP group, so gpus() == tp * pp.
#include <nlohmann/json.hpp>
#include <string>

namespace k3plan {

enum class Engine { sglang, vllm };  // the engine models are in engine.hpp

struct Layout {
  int tp = 1;
  int ep = 1;  // expert-parallel degree (1 = experts TP-sharded or dense model)
  int dp = 1;
  int pp = 1;
  bool dp_attention = false;
  // decode context parallel: the MLA cache of each sequence is split over dcp ranks of the TP
  // group (SGLang --dcp-size, vLLM --decode-context-parallel-size); adds no GPUs
  int dcp = 1;
  // GPUs one instance occupies, as the engine counts them (engine_model(e).gpus); computed wide
  // and clamped: absurd degrees from user input must not overflow
  int gpus(Engine e) const;  // defined in src/engines/layout.cpp (the engine model decides)
  bool operator==(const Layout&) const = default;
};

// The one JSON shape of a layout, everywhere k3plan writes one: {tp, ep, dp, pp, dp_attention, dcp}.
nlohmann::json layout_json(const Layout& l);
// "TP8 EP8 DP2 PP2 DCP8 DP-attention": degrees above 1 only (TP always).
std::string layout_text(const Layout& l);

// A disaggregated pool as a user gives it: `workers` engine instances of `tp` GPUs each, or its
// GPU count beside either (`--decode-gpus 16 --decode-tp 8` is 2 workers of TP 8; `--decode-gpus 16`
// alone is one TP-16 worker, or 16 / workers GPUs each). 0 = not given. When `gpus` is given the
// result holds gpus == workers x tp; a count that does not divide, or that contradicts the workers
// given, is an InputError naming the --<side>-* flags.
struct PoolSize {
  int workers = 0, tp = 0;
};
// At most `max_workers` workers of at most limits.hpp kMaxDegree GPUs each.
PoolSize pool_size(const std::string& side, int workers, int tp, int gpus, int max_workers);

const char* to_string(Engine e);
// "sglang" | "vllm"; anything else is an InputError with a suggestion
Engine parse_engine(const std::string& s);

}  // namespace k3plan
