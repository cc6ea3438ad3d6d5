// Start-up benchmark (issue 12): `k3plan fit -m kimi-k3` must take at most twice the time of
// `k3plan --version`, each as a whole process (exec, dynamic loading, catalogue, computation,
// output). Runs both commands alternately (so machine load hits both alike), reports the median
// wall time and the median CPU time (user + system, from wait4) of each and their ratios, and exits
// 1 when the wall-time ratio of the medians exceeds the limit.
//   cmake --build build --target k3plan_startup_bench && ./build/bench/k3plan_startup_bench [runs] [limit] [binary]
// (binary: another k3plan to measure, e.g. an older build; default: this build's)
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

extern char** environ;

namespace {

struct Sample {
  double wall_ms = 0;
  double cpu_ms = 0;
};

Sample run(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) != 0) {
    std::perror("posix_spawn");
    std::exit(2);
  }
  int status = 0;
  rusage ru{};
  wait4(pid, &status, 0, &ru);
  const auto t1 = std::chrono::steady_clock::now();
  posix_spawn_file_actions_destroy(&fa);
  if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) {
    std::fprintf(stderr, "%s exited with status %d\n", args[1].c_str(), status);
    std::exit(2);
  }
  Sample s;
  s.wall_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  auto ms = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) * 1e3 + static_cast<double>(tv.tv_usec) / 1e3; };
  s.cpu_ms = ms(ru.ru_utime) + ms(ru.ru_stime);
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 50;
  const double limit = argc > 2 ? std::atof(argv[2]) : 2.0;
  const std::string bin = argc > 3 ? argv[3] : K3PLAN_BINARY;
  const std::vector<std::string> version = {bin, "--version"};
  const std::vector<std::string> fit = {bin, "fit", "-m", "kimi-k3"};
  // informational: the same start-up (catalogue, engine windows, SGLang flag table) with one layout
  // to evaluate instead of the search over every GPU, to tell loading from computing
  const std::vector<std::string> one = {bin, "fit", "-m", "kimi-k3", "-g", "b300", "-n", "8"};
  run(version);  // warm the page cache
  run(fit);
  std::vector<double> vw, vc, fw, fc, ow, oc;
  for (int i = 0; i < runs; ++i) {
    const Sample v = run(version), f = run(fit), o = run(one);
    vw.push_back(v.wall_ms);
    vc.push_back(v.cpu_ms);
    fw.push_back(f.wall_ms);
    fc.push_back(f.cpu_ms);
    ow.push_back(o.wall_ms);
    oc.push_back(o.cpu_ms);
  }
  const double ratio = median(fw) / median(vw), cpu_ratio = median(fc) / median(vc);
  std::printf("%d runs each, medians\n", runs);
  std::printf("  k3plan --version        wall %7.2f ms   cpu %7.2f ms\n", median(vw), median(vc));
  std::printf("  k3plan fit -m kimi-k3   wall %7.2f ms   cpu %7.2f ms\n", median(fw), median(fc));
  std::printf("  ratio fit / --version   wall %7.2f      cpu %7.2f      (limit %.1f on wall time)\n", ratio, cpu_ratio, limit);
  std::printf("  informational: fit -m kimi-k3 -g b300 -n 8 (one layout, no search)\n");
  std::printf("                          wall %7.2f ms   cpu %7.2f ms   ratio wall %.2f cpu %.2f\n", median(ow), median(oc),
              median(ow) / median(vw), median(oc) / median(vc));
  std::printf("%s\n", ratio <= limit ? "PASS" : "FAIL");
  return ratio <= limit ? 0 : 1;
}
