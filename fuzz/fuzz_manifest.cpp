// libFuzzer target: a LeaderWorkerSet manifest (`check --manifest`), then every check rule.
#include <k3plan/check.hpp>
#include <k3plan/check_rules.hpp>
#include <k3plan/manifest.hpp>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string t = k3plan_fuzz::text(data, size);
  std::vector<k3plan::Finding> findings;
  k3plan_fuzz::expect_value_or_input_error([&] {
    for (const auto& g : k3plan::parse_lws_manifest(k3plan_fuzz::catalogue(), t, "fuzz-lws.yaml", "", findings)) {
      const k3plan::CheckTarget target{g.deployment, k3plan::InputKind::manifest, g.gpus_per_pod, g.group_size, g.replicas, g.anchor};
      if (!target.deployment.model.empty()) k3plan::check_target(k3plan_fuzz::catalogue(), target, findings, nullptr);
    }
  });
  for (const auto& f : findings) (void)k3plan::finding_line(f);
  return 0;
}
