// The forms of a layout value (parallel.hpp).
#include <fmt/format.h>

#include <k3plan/error.hpp>
#include <k3plan/limits.hpp>
#include <k3plan/parallel.hpp>

namespace k3plan {

nlohmann::json layout_json(const Layout& l) {
  return {{"tp", l.tp}, {"ep", l.ep}, {"dp", l.dp}, {"pp", l.pp}, {"dp_attention", l.dp_attention}, {"dcp", l.dcp}};
}

std::string layout_text(const Layout& l) {
  std::string s = fmt::format("TP{}", l.tp);
  if (l.ep > 1) s += fmt::format(" EP{}", l.ep);
  if (l.dp > 1) s += fmt::format(" DP{}", l.dp);
  if (l.pp > 1) s += fmt::format(" PP{}", l.pp);
  if (l.dcp > 1) s += fmt::format(" DCP{}", l.dcp);
  if (l.dp_attention) s += " DP-attention";
  return s;
}

PoolSize pool_size(const std::string& side, int workers, int tp, int gpus, int max_workers) {
  if (gpus <= 0) return {workers, tp};
  PoolSize z;
  if (tp > 0) {
    if (gpus % tp != 0)
      throw InputError(fmt::format("--{0}-gpus {1} is not a multiple of --{0}-tp {2}: a pool is workers x TP GPUs", side, gpus, tp));
    if (workers > 0 && workers * tp != gpus)
      throw InputError(
          fmt::format("--{0}-gpus {1} with --{0}-tp {2} is {3} workers, not --{0}-workers {4}", side, gpus, tp, gpus / tp, workers));
    z = {gpus / tp, tp};
  } else {
    const int w = workers > 0 ? workers : 1;
    if (gpus % w != 0) throw InputError(fmt::format("--{0}-gpus {1} does not split into --{0}-workers {2} equal workers", side, gpus, w));
    z = {w, gpus / w};
  }
  if (z.workers > max_workers)
    throw InputError(
        fmt::format("--{0}-gpus {1} is {2} workers of TP {3}: at most {4} workers per pool", side, gpus, z.workers, z.tp, max_workers));
  if (z.tp > limits::kMaxDegree)
    throw InputError(fmt::format("--{0}-gpus {1} makes a worker of TP {2}: at most {3} (give --{0}-tp or --{0}-workers)", side, gpus, z.tp,
                                 limits::kMaxDegree));
  return z;
}

}  // namespace k3plan
