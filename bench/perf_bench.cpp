// k3plan_bench: how fast the speed model and the planner search run on one core.
//  1. estimate_perf: every catalogue model x GPU x layout of 8 GPUs x concurrency 1..1024, each
//     deployment prepared once (prepare_perf, as the planner does), every configuration evaluated in
//     a tight loop; prints candidate configurations per second.
//  2. run_plan for Kimi K3 at 1024/400 and for every catalogue model: wall time of the whole search,
//     memory checks included.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <k3plan/budget.hpp>
#include <k3plan/catalogue.hpp>
#include <k3plan/perf.hpp>
#include <k3plan/perf_cmd.hpp>
#include <vector>

using namespace k3plan;

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
// CPU time of this thread: on a shared machine the wall clock counts other processes' turns too
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}
}  // namespace

int main() {
  const Catalogue cat = Catalogue::embedded();
  const EfficiencyTable& table = embedded_efficiency();
  struct Item {
    PerfSetup setup;
    PerfConfig cfg;
  };
  std::vector<PerfEfficiency> effs;
  effs.reserve(cat.gpus().size());
  for (const auto& g : cat.gpus()) effs.push_back(table.lookup(g, "sglang"));
  std::vector<PerfModel> models;
  models.reserve(cat.models().size());
  for (const auto& m : cat.models()) models.push_back(prepare_perf_model(m));
  std::vector<Item> items;
  for (std::size_t mi = 0; mi < cat.models().size(); ++mi) {
    const Model& m = cat.models()[mi];
    for (std::size_t gi = 0; gi < cat.gpus().size(); ++gi) {
      const Gpu& g = cat.gpus()[gi];
      for (const auto& l : candidate_layouts(m, g, Engine::sglang, 8)) {
        const PerfSetup setup = prepare_perf(models[mi], g, effs[gi], l, Engine::sglang);
        for (int c = 1; c <= 1024; c *= 2) {
          PerfConfig cfg;
          cfg.layout = l;
          cfg.isl = 1024;
          cfg.osl = 400;
          cfg.concurrency = c;
          items.push_back({setup, cfg});
        }
      }
    }
  }
  double sink = 0;
  std::size_t n = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = cpu_seconds();
  double elapsed = 0;
  do {
    for (const auto& it : items) {
      sink += estimate_perf(it.setup, it.cfg).tput_total_per_gpu;
      ++n;
    }
    elapsed = cpu_seconds() - c0;
  } while (elapsed < 1.0);
  std::printf(
      "estimate_perf: %zu distinct configurations, %zu evaluations in %.3f s CPU (%.3f s wall) = %.2f million candidate configurations "
      "per second per core\n",
      items.size(), n, elapsed, seconds_since(t0), static_cast<double>(n) / elapsed / 1e6);

  PlanOptions o;
  o.model = "kimi-k3";
  o.isl = 1024;
  o.osl = 400;
  auto t1 = std::chrono::steady_clock::now();
  double c1 = cpu_seconds();
  const Report r = run_plan(cat, o);
  std::printf("plan kimi-k3 1024/400: %.0f ms CPU (%.0f ms wall), %d configurations, estimate-and-record loop %.2f million/s\n",
              (cpu_seconds() - c1) * 1e3, seconds_since(t1) * 1e3, r.data["search"]["candidates"].get<int>(),
              r.data["search"]["perf_candidates_per_s"].get<double>() / 1e6);
  t1 = std::chrono::steady_clock::now();
  c1 = cpu_seconds();
  int total = 0;
  for (const auto& m : cat.models()) {
    PlanOptions p;
    p.model = m.id;
    p.isl = 1024;
    p.osl = 400;
    total += run_plan(cat, p).data["search"]["candidates"].get<int>();
  }
  std::printf("plan, every catalogue model: %.0f ms CPU (%.0f ms wall) for %d configurations\n", (cpu_seconds() - c1) * 1e3,
              seconds_since(t1) * 1e3, total);
  return sink > 0 ? 0 : 1;
}
