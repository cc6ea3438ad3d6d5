// libFuzzer target: a vLLM / SGLang command line or launch script (`check --command`), then every check rule.
#include <k3plan/check.hpp>
#include <k3plan/check_rules.hpp>
#include <k3plan/deploy.hpp>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string t = k3plan_fuzz::text(data, size);
  std::vector<k3plan::Finding> findings;
  k3plan_fuzz::expect_value_or_input_error([&] {
    k3plan::CheckTarget target;
    target.kind = k3plan::InputKind::command;
    target.deployment = k3plan::parse_launch_command(t, "fuzz.sh", findings);
    target.deployment.gpu = "h200";
    if (!target.deployment.model.empty()) k3plan::check_target(k3plan_fuzz::catalogue(), target, findings, nullptr);
  });
  for (const auto& f : findings) (void)k3plan::finding_line(f);
  return 0;
}
