#pragma once
// Plausibility limits shared by every input: the command line (CLI11 validators in src/cli/cli.cpp)
// and the files (deployment files, command lines, manifests). A value outside them is unreadable
// input (exit 2, naming the option or field), never a computed "does not fit". They bound the work
// a search can be asked to do, and keep every product of parallel degrees inside an int.
#include <cstddef>
#include <cstdint>

namespace k3plan::limits {

inline constexpr int kMaxGpus = 100000;                     // GPUs in one deployment (-n, gpus:)
inline constexpr int kMaxDegree = 4096;                     // any one parallel degree (--tp, --ep, --dp, --pp, --dcp)
inline constexpr int kMaxNodes = 10000;                     // nodes in one deployment
inline constexpr int kMaxLaunchWorkers = 64;                // engine instances per disaggregated pool that launch writes
inline constexpr std::int64_t kMaxUsers = 10'000'000;       // concurrent users / sequences
inline constexpr double kMaxTokens = 1e7;                   // tokens in one request (--isl, --osl)
inline constexpr std::int64_t kMaxBatchTokens = 1LL << 24;  // --max-num-batched-tokens
inline constexpr int kMaxLayers = 4096;                     // what-if layers (kv --layers)
inline constexpr int kMaxHeads = 65536;                     // what-if KV heads, head dimension
inline constexpr std::size_t kMaxInputBytes = 64u << 20;    // any one text input file (64 MiB)
inline constexpr std::size_t kMaxLogBytes = 256u << 20;     // an engine start-up log (256 MiB)
inline constexpr std::size_t kMaxYamlNodes = 250'000;       // YAML nodes after alias expansion (the largest data file, sglang-flags.yaml, has ~13,300)

}  // namespace k3plan::limits
