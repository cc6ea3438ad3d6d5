// libFuzzer target: the deployment YAML parser (`launch FILE`, `check FILE`) must turn any input
// into a Deployment, findings or an InputError (exit 2) and nothing else: no crash, no sanitizer
// report, no other exception, no hang. (Command lines and manifests: fuzz_command, fuzz_manifest.)
#include <cstddef>
#include <cstdint>
#include <k3plan/catalogue.hpp>
#include <k3plan/check.hpp>
#include <k3plan/check_rules.hpp>
#include <k3plan/deploy.hpp>
#include <k3plan/error.hpp>
#include <string>
#include <vector>

namespace {

const k3plan::Catalogue& catalogue() {
  static const k3plan::Catalogue cat = k3plan::Catalogue::embedded();
  return cat;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<k3plan::Finding> findings;

  // the deployment parser on its own (what `k3plan launch FILE` calls)
  try {
    const k3plan::Deployment d = k3plan::parse_deployment(text, "fuzz.yaml", findings);
    (void)d.pos("model");
  } catch (const k3plan::InputError&) {
  }

  // the `check` path: size/depth/binary guard, parse, then every rule
  findings.clear();
  try {
    k3plan::check_yaml_limits(text, "fuzz.yaml");
    k3plan::CheckTarget t;
    t.deployment = k3plan::parse_deployment(text, "fuzz.yaml", findings);
    t.anchor = {"fuzz.yaml", 1, 1};
    if (!t.deployment.model.empty()) k3plan::check_target(catalogue(), t, findings, nullptr);
  } catch (const k3plan::InputError&) {
  }

  for (const auto& f : findings) (void)k3plan::finding_line(f);
  return 0;
}
